"""Installing autograph into an agent host, and removing exactly what it wrote.

Hosts and where things go (``--project DIR`` / ``--user``):

============  ==========================================  ==============================================
host          project                                     user
============  ==========================================  ==============================================
``claude``    skill ``DIR/.claude/skills/autograph/``,    ``~/.claude/skills/autograph/``,
              hook in ``DIR/.claude/settings.json``       ``~/.claude/settings.json`` ($CLAUDE_CONFIG_DIR)
``codex``     skill ``DIR/.agents/skills/autograph/``,    ``~/.agents/skills/autograph/``,
              rules block in ``DIR/AGENTS.md``            ``~/.codex/AGENTS.md`` ($CODEX_HOME)
============  ==========================================  ==============================================

(Claude Code: code.claude.com/docs/en/skills, /hooks, /settings; Codex:
developers.openai.com/codex/skills and AGENTS.md.)

The hook is merged into ``settings.json`` as text: the group
``{"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command",
"command": "python3 .../guard.py [--schema S] --defer-to-plugin",
"timeout": 10}]}`` is appended to ``hooks.PreToolUse`` (created when
missing) in the file's own indentation and line endings; every other byte
stays.  ``--schema`` names the project's ``schema.json`` (the one given to
init, or the project's own), so the hook enforces the caps the schema sets;
``--defer-to-plugin`` makes this registration stay silent while the
autograph Claude Code plugin, which registers the same guard, is enabled.  The Codex rules go between the
lines ``<!-- autograph:begin -->`` and ``<!-- autograph:end -->``.  The store
gets an index from ``assets/MEMORY.md`` when it has none.

What was installed is recorded in ``<skill>/.autograph-install.json``: the
skill files with their SHA-256, the folders created, the hook command, and
for each edited file its bytes before and a digest of the bytes written.
Uninstalling restores such a file byte for byte when nobody changed it
since, and otherwise removes only our hook group or block; skill files
changed since are kept.  The store (the index and its notes) is never
touched.

Nothing init did not write is overwritten or removed (:class:`HostError`,
nothing written): a file at a skill path that differs from ours and that
no install record names (a user's file, another skill called
``autograph``, an installed file edited since); a symbolic link at or
inside the skill folder (never written or removed through); a hook that
runs an ``autograph/scripts/guard.py`` other than the one recorded; a
``settings.json`` that holds a key twice (JSON readers keep only the last
one, so an edit of the first would be lost), or is nested too deeply to
parse; a ``settings.json`` or ``AGENTS.md`` that is not a regular file (a
FIFO, a device: opened without blocking, never waited on) or is a symbolic
link into a folder that does not exist (init never creates folders where
a link points).  A UTF-8 byte order mark at the start of ``settings.json``
is kept byte for byte (Claude Code's CLI reads such a file).

The install record is data that may arrive with a clone (``.claude/`` is
often committed), so it is checked before anything is planned
(:func:`_checked_record`): every skill file it names must be a relative
path inside the skill folder (no ``..``, nothing absolute), every folder
one init could have created (the skill folder, a folder in it, or one on
the way to it or to the settings file), the index path without ``..``; a
record that names anything else is refused (HostError), nothing removed.

Every write goes through :func:`replace.replace_file` (atomic, change-checked,
mode kept); only ``settings.json`` and ``AGENTS.md`` are written through a
symlink, at their real path, so the link stays.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..read import jsonfile
from ..write import replace
from ..write.confine import TargetError
from ..write.replace import Conflict
from . import caps, claude_memory
from .rules_hosts import BEGIN, END, HOSTS, rules_text
from .settings_text import (
    BOM_CHAR,
    HostError,
    hook_commands,
    settings_with_hook,
    settings_with_key,
    settings_without_hook,
    settings_without_key,
)
from .toml_text import feature_state, toml_with_flag, toml_without_flag

__all__ = [
    "Action",
    "apply",
    "BEGIN",
    "DEFER_FLAG",
    "END",
    "guard_command",
    "GUARD_MARK",
    "HOSTS",
    "HostError",
    "Layout",
    "layout",
    "plan_install",
    "plan_uninstall",
    "RECORD",
    "removable_dirs",
    "schema_ref",
    "settings_with_hook",
    "settings_without_hook",
]

GUARD_MARK = "autograph/scripts/guard.py"  # a hook command holding this runs an autograph guard
DEFER_FLAG = "--defer-to-plugin"  # the guard stays silent while the autograph plugin is enabled
RECORD = ".autograph-install.json"
MATCHER = "Write|Edit|MultiEdit"
HOOK_TIMEOUT = 10  # seconds; the guard answers in well under one
SKIP_NAMES = {"__pycache__"}


@dataclass
class Layout:
    """Where an install goes.  ``config`` is ``settings.json`` (claude) or
    ``AGENTS.md`` (codex); ``store`` the memory store (None: none);
    ``skill_ref`` the skill's folder as commands and rules name it."""

    host: str
    scope: str  # "project" or "user"
    root: Path
    skill: Path
    config: Path
    store: Path | None
    skill_ref: str
    store_ref: str | None
    # claude only: where autoMemoryDirectory goes (settings.local.json of a
    # project, the user's settings.json) and its value (None: not written,
    # as with --host-store, whose folder Claude Code uses anyway)
    memory_settings: Path | None = None
    memory_dir: str | None = None
    # claude only: the settings file that enables the autograph plugin (None:
    # not enabled); the plugin then provides the skill and the hooks
    plugin: str | None = None
    checkpoint: bool = False  # claude only: register session.py stop (the completion checkpoint)
    # --reader: the host reads a store another agent writes (no index created, no guard, read-only rules)
    reader: bool = False
    # the rules: "block" (a marked block in a shared file) or "file" (a file of ours, ``frontmatter`` first);
    # None for claude's settings.json
    rules_kind: str | None = None
    frontmatter: str = ""
    # codex only: its hooks file (hooks.json) and the config.toml whose [features] turn hooks on
    hooks_file: Path | None = None
    features_file: Path | None = None


@dataclass
class Action:
    """One file change.  ``action``: create, update, remove, restore,
    unchanged, kept (left as it is, with ``note`` saying why).  ``before``
    the bytes the plan was made from (None: absent); ``after`` the bytes to
    write (None: delete)."""

    path: Path
    action: str
    what: str
    before: bytes | None = None
    after: bytes | None = None
    mode: int | None = None
    note: str = ""
    conflict: str = field(default="", repr=False)
    follow: bool = False  # written through a symlink (settings.json, AGENTS.md); never for skill files
    failed: str = field(default="", repr=False)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    """The bytes of ``path`` (None: it does not exist), read only when it is
    a regular file (symlinks followed) of at most :data:`jsonfile.MAX_BYTES`:
    it is opened without blocking and checked first, so a FIFO or a device
    never hangs init.  Anything else raises HostError naming it."""
    try:
        return jsonfile.read_bytes(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise HostError(f"{path}: is a folder; move it away, this file is written here") from None
    except jsonfile.NotAFile as exc:
        raise HostError(
            f"{path}: {exc}; init reads and writes only regular files: move it away (or replace it with a "
            f"file), then run init again"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise HostError(f"{path}: a loop of symbolic links; fix or remove it, then run init again") from None
        raise


def layout(
    host: str,
    project: str | os.PathLike | None,
    user: bool,
    store_dir: str | os.PathLike | None,
    memory_folder: str = "memory",
    environ=None,
    *,
    host_store: bool = False,
    checkpoint: bool = False,
    reader: bool = False,
) -> Layout:
    """The :class:`Layout` for ``host`` (``claude`` or one of :data:`HOSTS`)
    in ``project`` or, with ``user``, the home folder.  ``store_dir``
    overrides the store (default: ``project/<memory_folder>``; none for
    ``--user``); ``host_store`` (claude, a project) makes it the folder
    Claude Code itself uses for the project
    (:func:`claude_memory.project_memory_dir`).  For claude,
    ``autoMemoryDirectory`` is the store (absolute), written to the
    project's ``.claude/settings.local.json`` or, with ``user``, the user's
    ``settings.json`` (Claude Code reads it only from the user's, the local
    and policy settings); and the plugin's state is read
    (:func:`caps.plugin_enabled`).  ``reader`` (needs ``store_dir``): the
    host only reads the store, so its rules say so and nothing else is
    wired (claude's rules then go to ``.claude/rules/autograph.md``).
    Raises HostError for ``host_store`` with ``store_dir``, with ``user`` or
    for another host, for ``reader`` without a store, and for ``user`` with
    a host that keeps no rules file for the user (Cursor)."""
    environ = os.environ if environ is None else environ
    spec = HOSTS.get(host)
    if host != "claude" and spec is None:
        raise HostError(f"{host}: not a host init knows (claude, {', '.join(HOSTS)})")
    if user and not os.path.isabs(environ.get("HOME") or str(Path.home())):
        raise HostError(
            f"HOME is {environ.get('HOME')!r}, not an absolute folder; --user installs into the home folder: "
            f"set HOME to it, or use --project"
        )
    if host_store and (host != "claude" or user or store_dir or reader):
        raise HostError(
            "--host-store names the folder Claude Code keeps a project's memory in: use it with claude and "
            "--project, without --store, --user or --reader"
        )
    if reader and not store_dir:
        raise HostError("--reader needs --store: the folder of the store another agent writes, which this one reads")
    home = Path(environ.get("HOME") or Path.home())
    kind, frontmatter, hooks_file, features_file = None, "", None, None
    if user:
        if host == "claude":
            base = Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
            skill, config = base / "skills" / "autograph", base / "settings.json"
            if reader:
                config, kind = base / "rules" / "autograph.md", "file"
        else:
            if spec.user_rules is None:
                raise HostError(
                    f"{spec.title} keeps no rules file for the user (its User Rules live in its settings); "
                    f"install into a project with --project"
                )
            skill, config, kind = spec.user_skill(environ), spec.user_rules(environ), spec.user_rules_kind
            frontmatter = spec.frontmatter if kind == "file" else ""
            if spec.hooks:  # a reader's install registers none, and takes back a writer's
                codex_home = Path(environ.get("CODEX_HOME") or home / ".codex")
                hooks_file, features_file = codex_home / "hooks.json", codex_home / "config.toml"
        root = home
        store_path = Path(store_dir).absolute() if store_dir else None
        skill_ref = str(skill)
        store_ref = str(store_path) if store_path else None
    else:
        root = Path(project or ".").absolute()
        if not root.is_dir():
            raise HostError(f"{project}: not a folder; give the project's folder with --project")
        if host == "claude":
            skill, config = root / ".claude" / "skills" / "autograph", root / ".claude" / "settings.json"
            if reader:
                config, kind = root / ".claude" / "rules" / "autograph.md", "file"
        else:
            skill, config, kind = root / spec.project_skill, root / spec.project_rules, spec.rules
            frontmatter = spec.frontmatter if kind == "file" else ""
            if spec.hooks:
                hooks_file, features_file = root / ".codex" / "hooks.json", root / ".codex" / "config.toml"
        if host_store:
            store_path = claude_memory.project_memory_dir(root, environ)
        else:
            store_path = Path(store_dir).absolute() if store_dir else root / memory_folder if memory_folder else root
        skill_ref = os.path.relpath(skill, root).replace(os.sep, "/")
        store_ref = _ref(store_path, root)
    out = Layout(host, "user" if user else "project", root, skill, config, store_path, skill_ref, store_ref)
    out.reader, out.rules_kind, out.frontmatter = reader, kind, frontmatter
    out.hooks_file, out.features_file = hooks_file, features_file
    if host == "claude" and not reader:
        out.memory_settings = config if user else config.parent / "settings.local.json"
        out.memory_dir = str(store_path) if store_path is not None and not host_store else None
        out.plugin = caps.plugin_enabled({**environ, "CLAUDE_PROJECT_DIR": ""}, None if user else str(root))
        out.checkpoint = checkpoint
        if host_store:
            _host_store_problem(out, environ)
    return out


def _host_store_problem(layout: Layout, environ) -> None:
    """Raise HostError when an ``autoMemoryDirectory`` the project's local
    settings or the user's set moves Claude Code's memory away from its own
    folder: ``--host-store`` would then guard a folder Claude Code never
    loads."""
    written = _load_record(layout.skill).get("memory_dir")  # an earlier install's: taken back out
    for path, value in claude_memory.auto_memory_settings(environ, str(layout.root)):
        if not (path == str(layout.memory_settings) and value == written):
            raise HostError(
                f"{path}: autoMemoryDirectory is {value!r}, so Claude Code keeps memory there, not in its own "
                f"folder; pass --store {shlex.quote(value)} instead of --host-store (or remove that setting)"
            )


def _ref(path: Path, root: Path) -> str:
    try:
        rel = path.relative_to(root).as_posix()
        return rel or "."
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------
# The AGENTS.md block


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _marker_lines(lines: list[str]) -> tuple[list[int], list[int]]:
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    return begins, ends


def _block_span(text: str, where: Path) -> tuple[int, int] | None:
    """Offsets of our block, from its BEGIN line to the end of its END line
    (newline included); None without markers.  Raises HostError for markers
    that do not pair up (the file is then never edited)."""
    lines = text.split("\n")
    begins, ends = _marker_lines(lines)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        numbers = ", ".join(str(i + 1) for i in sorted(begins + ends))
        raise HostError(
            f"{where}: autograph markers on lines {numbers} do not pair up "
            f"(one {BEGIN} line, then one {END} line); fix or remove them, then run init again"
        )
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    return offsets[begins[0]], min(offsets[ends[0] + 1], len(text))


def rules_block(layout: Layout, python: str = "python3") -> str:
    """The text between and including the markers (``\\n`` line ends);
    ``python`` is the interpreter command the rules tell the agent to use
    (:func:`rules_hosts.rules_text`)."""
    return rules_text(layout.skill_ref, layout.store_ref, python, reader=layout.reader)


def rules_file(layout: Layout, python: str = "python3") -> bytes:
    """The bytes of a rules file of our own (``rules_kind`` "file"): the
    host's frontmatter, then the rules block."""
    return (layout.frontmatter + rules_block(layout, python) + "\n").encode("utf-8")


def rules_with_block(text: str | None, block: str, where: Path) -> str:
    """``AGENTS.md`` text with ``block`` in place of ours, or appended after
    one blank line; the file's line endings are kept."""
    if text is None or text == "":
        return block + "\n"
    newline = _newline(text)
    block = block.replace("\n", newline)
    span = _block_span(text, where)
    if span is not None:
        start, end = span
        ending = newline if text[start:end].endswith("\n") else ""
        return text[:start] + block + ending + text[end:]
    separator = ("" if text.endswith("\n") else newline) + newline
    return text + separator + block + newline


def rules_without_block(text: str, where: Path) -> str:
    """``AGENTS.md`` text without our block and the blank line that
    separated it from what came before."""
    span = _block_span(text, where)
    if span is None:
        return text
    start, end = span
    before, after = text[:start], text[end:]
    newline = _newline(text)
    if not after and before.endswith(newline + newline):
        before = before[: -len(newline)]
    return before + after


# ---------------------------------------------------------------------------
# Plans


def _skill_files(source: Path) -> dict[str, Path]:
    """The skill's files by path relative to its folder: everything except
    caches (``__pycache__``, ``*.pyc``) and dot files (our install record)."""
    out: dict[str, Path] = {}
    for folder, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_NAMES and not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name.endswith(".pyc"):
                continue
            path = Path(folder) / name
            out[path.relative_to(source).as_posix()] = path
    return out


def _load_record(skill: Path) -> dict:
    """The install record as read (unchecked: see :func:`_checked_record`);
    ``{}`` when there is none or it cannot be read as a JSON object.  A FIFO
    or device there is never waited on."""
    path = skill / RECORD
    if _link_at(skill, path) is not None:
        return {}  # never read (or trust) a record through a link
    try:
        data = json.loads(jsonfile.read_bytes(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _bad_part(rel: str) -> str | None:
    """Why a path from the record is not a plain relative path, else None."""
    if not rel or "\x00" in rel:
        return "an empty name" if not rel else "a NUL byte in the name"
    if os.path.isabs(rel) or rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":"):
        return "an absolute path"
    if ".." in rel.replace("\\", "/").split("/"):
        return "a '..' that leaves the folder"
    return None


def _inside(path: Path, folder: Path) -> bool:
    """``path`` resolved (symlinks and all) is ``folder`` resolved or below it."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _creatable_dirs(layout: Layout) -> list[Path]:
    """The folders outside the skill folder an install may create: those on
    the way to the skill folder, to the settings or rules file and to
    Codex's hooks and config files."""
    out: list[Path] = []
    extra = [path.parent for path in (layout.hooks_file, layout.features_file) if path is not None]
    for start in (layout.skill, layout.config.parent, *extra):
        for folder in [start, *start.parents]:
            if folder == layout.root or folder == folder.parent:
                break
            if folder not in out:
                out.append(folder)
    return out


def _checked_record(layout: Layout) -> dict:
    """The install record, every path in it confined: a skill file must be
    a relative path in the skill folder (no ``..``, not absolute, not
    resolving out of it); a folder must be the skill folder, one in it, or
    one on the way to it or to the config file; the index path has no
    ``..``; an edit's ``original`` is text.  A record that breaks any of this
    (it may come with a clone, and a hand-made one could name any file)
    raises HostError listing what it names, so nothing is planned or
    removed."""
    record = _load_record(layout.skill)
    where = _ref(layout.skill / RECORD, layout.root)
    problems: list[str] = []
    files = record.get("files")
    if isinstance(files, dict):
        for rel in files:
            why = _bad_part(rel) if isinstance(rel, str) else "not a path"
            target = layout.skill / rel if why is None else None
            if target is not None and _link_at(layout.skill, target) is None and not _inside(target, layout.skill):
                why = "outside the skill folder"
            if why is not None:
                problems.append(f"files: {json.dumps(rel, ensure_ascii=False)[:200]} ({why})")
    dirs = record.get("dirs")
    if isinstance(dirs, list):
        allowed = _creatable_dirs(layout)
        for rel in dirs:
            why = None
            if not isinstance(rel, str) or not rel or "\x00" in rel:
                why = "not a path"
            elif ".." in rel.replace("\\", "/").split("/"):
                why = "a '..' that leaves the folder"
            else:
                folder = Path(os.path.normpath(layout.root / rel))
                inside = folder == layout.skill or layout.skill in folder.parents
                if not inside and folder not in allowed:
                    why = "not a folder init creates"
                elif inside and not _inside(folder, layout.skill) and _link_at(layout.skill, folder) is None:
                    why = "outside the skill folder"
            if why is not None:
                problems.append(f"dirs: {json.dumps(rel, ensure_ascii=False)[:200]} ({why})")
    index = record.get("index")
    if index is not None and (not isinstance(index, str) or not index or ".." in index.replace("\\", "/").split("/")):
        problems.append(f"index: {json.dumps(index, ensure_ascii=False)[:200]} (not the path of the store's index)")
    edits = record.get("edits")
    if isinstance(edits, dict):
        for key, edit in edits.items():
            if not isinstance(edit, dict) or not isinstance(edit.get("original", ""), (str, type(None))):
                problems.append(f"edits: {json.dumps(key, ensure_ascii=False)[:200]} (not a recorded edit)")
    if problems:
        shown = problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
        raise HostError(
            f"{where}: the install record names what init never writes, so init changed nothing:\n"
            + "".join(f"  {line}\n" for line in shown)
            + f"init removes only files and folders it wrote in {_ref(layout.skill, layout.root)} and on the way "
            "to it; delete the record (or those entries), then run init again"
        )
    return record


def _link_at(top: Path, target: Path) -> Path | None:
    """``top``, or the first path below it on the way to ``target``, that is
    a symbolic link; None when there is none."""
    current = top
    if current.is_symlink():
        return current
    for part in target.relative_to(top).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def _skill_path_problem(layout: Layout, target: Path) -> str | None:
    """Why init must not write ``target`` in the skill folder: a symbolic
    link on the way (it would write into what the link points to, such as
    the index), or a file where a folder goes."""
    link = _link_at(layout.skill, target)
    if link is not None:
        return f"{_ref(link, layout.root)}: is a symbolic link; init never writes through one in the skill folder"
    current = layout.skill
    for part in target.relative_to(layout.skill).parts[:-1]:
        if os.path.lexists(current) and not current.is_dir():
            return f"{_ref(current, layout.root)}: is a file where init puts a folder"
        current = current / part
    if os.path.lexists(current) and not current.is_dir():
        return f"{_ref(current, layout.root)}: is a file where init puts a folder"
    try:
        mode = os.lstat(target).st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = jsonfile.file_kind(mode)
        return f"{_ref(target, layout.root)}: is {kind}, not a regular file; init writes only regular files"
    return None


def _config_problem(layout: Layout) -> None:
    """Raise HostError when the settings or rules file cannot be written
    where it is without creating a folder outside the project: a symbolic
    link whose target's folder does not exist (init never creates folders
    where a link points), or a link that does not resolve on the way to
    the file or to the skill folder."""
    configs = {layout.config, layout.memory_settings or layout.config}
    configs |= {path for path in (layout.hooks_file, layout.features_file) if path is not None}
    for config in configs:
        _link_problem(layout, config)


def _link_problem(layout: Layout, config: Path) -> None:
    """:func:`_config_problem` for one settings or rules file."""
    for path in (layout.skill, config.parent):
        for folder in [*reversed(path.parents), path]:
            if os.path.islink(folder) and not os.path.exists(folder):
                raise HostError(
                    f"{folder}: a symbolic link to {os.readlink(folder)}, which does not exist; init never creates "
                    f"folders where a link points: create that folder (or remove the link), then run init again"
                )
    if os.path.islink(config):
        real = Path(os.path.realpath(config))
        if not real.parent.is_dir():
            raise HostError(
                f"{config}: a symbolic link to {real}, whose folder {real.parent} does not exist; init never "
                f"creates folders where a link points: create that folder (or replace the link with a file), "
                f"then run init again"
            )


def _missing_dirs(path: Path, stop: Path) -> list[Path]:
    """Folders between ``stop`` and ``path`` (inclusive) that do not exist."""
    out = []
    current = path
    while current != stop and current != current.parent and not current.exists():
        out.append(current)
        current = current.parent
    return out


def _script_token(layout: Layout, script: str) -> str:
    """A hook script's path as the hook command names it: the project's
    copy through ``$CLAUDE_PROJECT_DIR`` (so the settings file works on any
    checkout), or the absolute path for ``--user``."""
    if layout.scope == "project":
        return f'"$CLAUDE_PROJECT_DIR/{_escaped(layout.skill_ref)}/scripts/{script}"'
    return shlex.quote(str(layout.skill / "scripts" / script))


def _guard_token(layout: Layout) -> str:
    """The guard's path as the hook command names it."""
    return _script_token(layout, "guard.py")


def _escaped(text: str) -> str:
    """``text`` safe inside double quotes of a POSIX shell."""
    return "".join("\\" + ch if ch in '\\"$`' else ch for ch in text)


def schema_ref(layout: Layout, schema: str | os.PathLike) -> str:
    """``schema`` (or any path) as a hook command names it: through
    ``$CLAUDE_PROJECT_DIR`` when it is in the project (so the settings file
    works on any checkout), else its absolute path."""
    path = Path(schema).absolute()
    if layout.scope == "project":
        try:
            rel = path.relative_to(layout.root).as_posix()
        except ValueError:
            pass
        else:
            return f'"$CLAUDE_PROJECT_DIR/{_escaped(rel)}"' if rel != "." else '"$CLAUDE_PROJECT_DIR"'
    return shlex.quote(str(path))


def guard_command(layout: Layout, python: str, schema: str | os.PathLike | None = None) -> str:
    """The guard hook's command line, with ``--schema`` when a schema is
    given, so it enforces that schema's index names and caps."""
    command = f"{python} {_guard_token(layout)}"
    if schema is not None:
        command += f" --schema {schema_ref(layout, schema)}"
    return command


def session_command(layout: Layout, python: str, which: str, schema: str | os.PathLike | None = None) -> str:
    """``session.py start`` (``which``: "start") or ``session.py stop``
    ("stop") as a hook runs it, naming the store (``--store``) and, for
    start, the schema."""
    command = f"{python} {_script_token(layout, 'session.py')} {which}"
    if layout.store is not None:
        command += f" --store {schema_ref(layout, layout.store)}"
    if schema is not None and which == "start":
        command += f" --schema {schema_ref(layout, schema)}"
    return command


SESSION_MATCHER = "startup|resume|clear|compact"


def claude_hooks(
    layout: Layout, python: str, schema: str | os.PathLike | None = None
) -> list[tuple[str, str | None, str]]:
    """``(event, matcher, command)`` of the hooks init registers for Claude
    Code: the guard before writes, ``session.py start`` at session start
    and, with the checkpoint, ``session.py stop``; none while the autograph
    plugin is enabled (it registers the same)."""
    if layout.plugin:
        return []
    hooks = [
        ("PreToolUse", MATCHER, guard_command(layout, python, schema)),
        ("SessionStart", SESSION_MATCHER, session_command(layout, python, "start", schema)),
    ]
    if layout.checkpoint:
        hooks.append(("Stop", None, session_command(layout, python, "stop")))
    return hooks


def _hook_test(record: dict, layout: Layout, commands: list[str], installing: bool):
    """Which hook commands in settings.json are ours: those the install
    record names; without a record, only the exact commands init writes now;
    with a record of an earlier init that named none, a command running this
    skill's guard (as that init wrote it).  Installing, the commands init
    writes now are ours too."""
    now = set(commands)
    if not record:
        return lambda found: found in now
    known = {c for c in record.get("hooks") or [] if isinstance(c, str)}
    if isinstance(record.get("hook"), str):
        known.add(record["hook"])
    if "hook" in record or "hooks" in record:
        return lambda found: (installing and found in now) or found in known
    token = " " + _guard_token(layout)
    return lambda found: found in now or found.endswith(token) or found.endswith(token + " " + DEFER_FLAG)


def _mode(path: Path) -> int:
    umask = os.umask(0)
    os.umask(umask)
    return path.stat().st_mode & 0o777 & ~umask


def _text(data: bytes | None, where: Path) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise HostError(f"{where}: not UTF-8 text; autograph edits only UTF-8 files") from None


def _refuse(layout: Layout, problems: list[str]) -> None:
    shown = problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
    raise HostError(
        f"{layout.skill}: holds what init did not write, so init changed nothing:\n"
        + "".join(f"  {line}\n" for line in shown)
        + "Move them away (or the whole folder, if it is another skill), then run init again; "
        "init never overwrites or removes a file it did not write."
    )


def _shared_block_problem(layout: Layout, record: dict) -> None:
    """Raise HostError when the rules file already holds an autograph block
    this host's install did not write: two hosts that read one file (Codex
    and OpenCode both read ``AGENTS.md``) would each take the other's block
    for their own, and uninstalling one would silently leave the other
    without rules."""
    key = _ref(layout.config, layout.root)
    if key in (record.get("edits") or {}):
        return
    try:
        text = _text(_read(layout.config), layout.config)
    except HostError:
        return  # refused, with its own reason, when it is edited
    if text is not None and _block_span(text, layout.config) is not None:
        raise HostError(
            f"{layout.config}: holds autograph's rules block already, from another host's install (or a copy); "
            f"hosts that read this one file share it, so one install is enough: uninstall the other first, "
            f"or remove the block, then run init again"
        )


def plan_install(
    layout: Layout,
    source: Path,
    python: str = "python3",
    template: Path | None = None,
    schema: str | os.PathLike | None = None,
) -> list[Action]:
    """The changes that install autograph as ``layout`` says, from the skill
    folder ``source``: skill files, the hook (its command naming ``schema``)
    or the rules block, the index (from ``template``, only when the store
    has none) and the install record.  Files already as they should be give
    ``unchanged`` actions.  Raises :class:`HostError`, planning nothing, for
    a settings or rules file we cannot edit safely and for anything at a
    skill path init did not write (see the module's notes)."""
    actions: list[Action] = []
    record = _checked_record(layout)
    _config_problem(layout)
    recorded = record.get("files") if isinstance(record.get("files"), dict) else {}
    dirs = record.get("dirs") if isinstance(record.get("dirs"), list) else []
    created_dirs = {d for d in dirs if isinstance(d, str)}
    same_skill = os.path.realpath(source) == os.path.realpath(layout.skill)
    files: dict[str, str] = {}
    problems: list[str] = []
    if layout.plugin and not same_skill:  # the plugin provides the skill: take back an earlier install's copy
        actions += _skill_removals(layout, recorded)
    for rel, path in [] if layout.plugin else _skill_files(source).items():
        data = path.read_bytes()
        files[rel] = _sha(data)
        target = layout.skill / rel
        if same_skill:
            continue
        problem = _skill_path_problem(layout, target)
        if problem is not None:
            if problem not in problems:
                problems.append(problem)
            continue
        before = _read(target)
        if before is not None and before != data and recorded.get(rel) != _sha(before):
            why = (
                "changed since init wrote it"
                if rel in recorded
                else "differs from autograph's, and no install record names it"
            )
            problems.append(f"{_ref(target, layout.root)}: not written by init ({why})")
            continue
        for folder in _missing_dirs(target.parent, layout.root):
            created_dirs.add(_ref(folder, layout.root))
        kind = "unchanged" if before == data else "create" if before is None else "update"
        actions.append(Action(target, kind, "skill", before, data, _mode(path)))
    if not same_skill and (problem := _skill_path_problem(layout, layout.skill / RECORD)) and problem not in problems:
        problems.append(problem)
    if problems:
        _refuse(layout, problems)
    edits = dict(record.get("edits") or {})
    hooks: list[str] = []
    owned: dict = {}
    if layout.host == "claude" and not layout.reader:
        changes = _claude_changes(layout, python, schema, record, installing=True, hooks=hooks, owned=owned)
        for path, what, change in changes:
            actions.append(_config_action(layout, path, what, change, edits, created_dirs))
    elif layout.rules_kind == "block":
        _shared_block_problem(layout, record)
        block = rules_block(layout, python)
        change = lambda text: rules_with_block(text, block, layout.config)  # noqa: E731
        actions.append(_config_action(layout, layout.config, _rules_what(layout), change, edits, created_dirs))
    else:
        actions.append(_file_rules_action(layout, python, edits, created_dirs))
    if layout.hooks_file is not None:
        actions += _codex_actions(layout, python, schema, record, edits, created_dirs, hooks)
    index_ref = record.get("index") if isinstance(record.get("index"), str) else None  # created by us earlier
    if layout.store is not None and not layout.reader:
        index = layout.store / "MEMORY.md"
        if os.path.lexists(index):
            actions.append(Action(index, "kept", "index", note="the store already has an index"))
        else:
            template = template or source / "assets" / "MEMORY.md"
            actions.append(Action(index, "create", "index", None, template.read_bytes(), 0o644 & ~_umask()))
            index_ref = _ref(index, layout.root)
    data = {
        "version": 1,
        "host": layout.host,
        "scope": layout.scope,
        "files": files if not same_skill else {},
        "dirs": sorted(created_dirs),
        "edits": dict(sorted(edits.items())),
        "hook": next((c for c in hooks if GUARD_MARK in c), None),
        "hooks": hooks,
        "memory_dir": owned.get("memory_dir"),
        "index": index_ref,
    }
    record_path = layout.skill / RECORD
    for folder in _missing_dirs(record_path.parent, layout.root):  # no skill files (the plugin's): still a record
        created_dirs.add(_ref(folder, layout.root))
    data["dirs"] = sorted(created_dirs)
    record_bytes = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
    before = _read(record_path)
    kind = "unchanged" if before == record_bytes else "create" if before is None else "update"
    actions.append(Action(record_path, kind, "install record", before, record_bytes, 0o644 & ~_umask()))
    return actions


def _config_action(layout: Layout, path: Path, what: str, change, edits: dict, created_dirs: set) -> Action:
    """The action that edits the settings or rules file ``path`` with
    ``change`` (text or None -> text), recording in ``edits`` the bytes
    before the first install and a digest of those written, so uninstall
    can give them back byte for byte."""
    before = _read(path)
    text = _text(before, path)
    after_text = change(text)
    if after_text is None:
        return Action(path, "unchanged", what, None, None, note="nothing to write", follow=True)
    after = after_text.encode("utf-8")
    for folder in _missing_dirs(path.parent, layout.root):
        created_dirs.add(_ref(folder, layout.root))
    key = _ref(path, layout.root)
    if after != before:
        previous = edits.get(key)  # an earlier install's record keeps the bytes from before it
        original = previous["original"] if isinstance(previous, dict) and "original" in previous else text
        edits[key] = {"original": original, "written": _sha(after)}
    kind = "unchanged" if after == before else "create" if before is None else "update"
    note = "its UTF-8 byte order mark is kept" if (text or "").startswith(BOM_CHAR) else ""
    return Action(path, kind, what, before, after, note=note, follow=True)


def _claude_changes(
    layout: Layout,
    python: str,
    schema,
    record: dict,
    installing: bool,
    hooks: list[str] | None = None,
    owned: dict | None = None,
):
    """``(path, what, change)`` for each Claude Code settings file init
    edits: the hooks in ``settings.json`` (:func:`claude_hooks`; removed
    while the plugin is enabled, or when uninstalling) and
    ``autoMemoryDirectory`` (the project's ``settings.local.json``, or the
    user's ``settings.json``).  ``hooks`` collects the commands this install
    owns (those it adds, and those an earlier install owned); ``owned``
    gets ``memory_dir`` when the autoMemoryDirectory it leaves is ours (it
    wrote it, now or earlier; a value the person had set is never ours)."""
    wanted = claude_hooks(layout, python, schema) if installing else []
    commands = [command for _, _, command in wanted]
    current = claude_hooks(Layout(**{**vars(layout), "plugin": None, "checkpoint": True}), python, schema)
    ours = _hook_test(record, layout, [c for _, _, c in current] if not installing else commands, installing)
    recorded_dir = record.get("memory_dir") if isinstance(record.get("memory_dir"), str) else None
    mine_dir = (lambda value: value == recorded_dir) if recorded_dir else (lambda value: False)  # noqa: E731
    if not installing and not record:
        mine_dir = lambda value: value == layout.memory_dir  # noqa: E731

    def hooks_change(text):
        if text is None and not wanted:
            return None
        for event, matcher, command in wanted:
            text = settings_with_hook(text, command, layout.config, ours, event, matcher)
        # ours that are not wanted now (the checkpoint turned off, the plugin enabled) go
        text = settings_without_hook(text, layout.config, lambda found: ours(found) and found not in commands)
        if hooks is not None:  # a command init writes runs the scripts it installs and removes: ours
            present = {command for _, command in hook_commands(text, layout.config)}
            hooks.extend(command for command in commands if command in present)
        return text

    def memory_change(text):
        path = layout.memory_settings
        if installing and layout.memory_dir is not None:
            after = settings_with_key(text, "autoMemoryDirectory", layout.memory_dir, path, mine_dir, same=_same_folder)
            if owned is not None and (after != text or recorded_dir is not None):
                owned["memory_dir"] = layout.memory_dir
            return after
        return settings_without_key(text, "autoMemoryDirectory", path, mine_dir) if text is not None else None

    if layout.memory_settings == layout.config:
        yield (
            layout.config,
            "hooks and autoMemoryDirectory in settings.json",
            _keep_absent(lambda text: memory_change(hooks_change(text))),
        )
        return
    yield layout.config, "hooks in settings.json", _keep_absent(hooks_change)
    yield layout.memory_settings, "autoMemoryDirectory in settings.local.json", _keep_absent(memory_change)


def _same_folder(written: str, wanted: str) -> bool:
    """A folder setting names ``wanted`` however it is spelled (``~/``, a
    trailing slash, ``..``): the person's spelling is then kept."""
    if not isinstance(written, str):
        return False
    return os.path.normpath(os.path.expanduser(written)) == os.path.normpath(wanted)


def _keep_absent(change):
    """``change`` that leaves an absent file absent when it has nothing to add."""

    def wrapped(text):
        after = change(text)
        return after if after is not None else text

    return wrapped


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _rules_what(layout: Layout) -> str:
    """How a report names the rules init writes for ``layout``."""
    name = layout.config.name
    return f"rules block in {name}" if layout.rules_kind == "block" else f"rules in {name}"


def _folder_problem(layout: Layout, path: Path) -> None:
    """Raise HostError when something that is not a folder stands on the
    way to ``path`` (a legacy ``.clinerules`` file where the folder goes)."""
    for folder in reversed(path.parents):
        if folder == layout.root or layout.root in folder.parents or folder in layout.root.parents:
            if os.path.lexists(folder) and not folder.is_dir():
                raise HostError(
                    f"{folder}: is a file where init puts a folder ({_ref(path, layout.root)} goes in it); move "
                    f"that file's rules into the folder (or move it away), then run init again"
                )


def _file_rules_action(layout: Layout, python: str, edits: dict, created_dirs: set) -> Action:
    """The action that writes the rules file of our own: created when
    absent, unchanged when as it should be, updated when it holds what an
    earlier install wrote; a file there that init did not write (or that
    was edited since) is refused (HostError), never overwritten."""
    path = layout.config
    _folder_problem(layout, path)
    after = rules_file(layout, python)
    before = _read(path)
    key = _ref(path, layout.root)
    edit = edits.get(key) if isinstance(edits.get(key), dict) else None
    if before is not None and before != after and not (edit and edit.get("written") == _sha(before)):
        why = "changed since init wrote it" if edit else "a file init did not write"
        raise HostError(
            f"{path}: {why}, where init puts the autograph rules; init never overwrites it: move it away (or "
            f"merge it elsewhere), then run init again"
        )
    for folder in _missing_dirs(path.parent, layout.root):
        created_dirs.add(_ref(folder, layout.root))
    edits[key] = {"original": None, "written": _sha(after)}
    kind = "unchanged" if before == after else "create" if before is None else "update"
    return Action(path, kind, _rules_what(layout), before, after, 0o644 & ~_umask(), follow=True)


def _file_rules_removal(layout: Layout, python: str, record: dict) -> list[Action]:
    """Remove the rules file of our own when it holds what init wrote (the
    record's digest, or the bytes init would write now); else keep it."""
    path = layout.config
    before = _read(path)
    if before is None:
        return []
    edit = (record.get("edits") or {}).get(_ref(path, layout.root))
    if (isinstance(edit, dict) and edit.get("written") == _sha(before)) or before == rules_file(layout, python):
        return [Action(path, "remove", _rules_what(layout), before, None, follow=True)]
    note = "changed since init wrote it" if isinstance(edit, dict) else "not written by init"
    return [Action(path, "kept", _rules_what(layout), before, None, note=note)]


# Codex names its file edits apply_patch (Edit, Write: aliases); its shell tool reaches hooks as Bash, and a
# heredoc `apply_patch <<'EOF'` run there is applied as a patch too
CODEX_MATCHER = "apply_patch|Edit|Write|Bash"
CODEX_SESSION_MATCHER = "startup|resume|clear"


def codex_hooks(
    layout: Layout, python: str, schema: str | os.PathLike | None = None
) -> list[tuple[str, str | None, str]]:
    """``(event, matcher, command)`` of the hooks init registers for Codex:
    the guard before ``apply_patch`` and ``session.py start`` at session
    start, each naming its script, the schema and the store by absolute
    path (Codex sets no project variable for hook commands); none for a
    reader."""
    if layout.reader:
        return []
    scripts = layout.skill / "scripts"
    guard = f"{python} {shlex.quote(str(scripts / 'guard.py'))}"
    session = f"{python} {shlex.quote(str(scripts / 'session.py'))} start"
    if layout.store is not None:
        session += f" --store {shlex.quote(str(layout.store))}"
    if schema is not None:
        named = shlex.quote(str(Path(schema).absolute()))
        guard += f" --schema {named}"
        session += f" --schema {named}"
    return [("PreToolUse", CODEX_MATCHER, guard), ("SessionStart", CODEX_SESSION_MATCHER, session)]


def _codex_actions(
    layout: Layout, python: str, schema, record: dict, edits: dict, created_dirs: set, hooks: list[str]
) -> list[Action]:
    """The edits of Codex's hooks file (our two hook groups; a reader's
    install takes them back) and of its ``config.toml`` (``[features]
    hooks = true`` where the file does not set the flag; a ``false`` there
    is the person's and is kept, with a note)."""
    wanted = codex_hooks(layout, python, schema)
    commands = [command for _, _, command in wanted]
    ours = _hook_test(record, layout, commands, installing=True)
    where = layout.hooks_file

    def hooks_change(text):
        if text is None and not wanted:
            return None
        for event, matcher, command in wanted:
            text = settings_with_hook(text, command, where, ours, event, matcher)
        text = settings_without_hook(text, where, lambda found: ours(found) and found not in commands)
        present = {command for _, command in hook_commands(text, where)}
        hooks.extend(command for command in commands if command in present)
        return text

    what = f"hooks in {_ref(where, layout.root)}"
    if layout.reader:  # a reader runs no guard: a writer's install before it is taken back
        return _codex_removals(layout, python, schema, record, features=False)
    actions = [_config_action(layout, where, what, _keep_absent(hooks_change), edits, created_dirs)]
    config = layout.features_file
    what = f"hooks feature in {_ref(config, layout.root)}"
    if feature_state(_text(_read(config), config), config) is False:
        note = "it sets hooks = false: Codex runs no hooks (guard, session start) until that is true"
        actions.append(Action(config, "kept", what, note=note))
    else:
        change = lambda text: toml_with_flag(text, config)  # noqa: E731
        actions.append(_config_action(layout, config, what, change, edits, created_dirs))
    return actions


def _codex_removals(layout: Layout, python: str, schema, record: dict, features: bool = True) -> list[Action]:
    """Take our hooks out of Codex's hooks file and, with ``features``, our
    flag out of its ``config.toml`` (each file restored byte for byte when
    nobody changed it since)."""
    writer = Layout(**{**vars(layout), "reader": False})
    current = [command for _, _, command in codex_hooks(writer, python, schema)]
    ours = _hook_test(record, layout, current, installing=False)
    where = layout.hooks_file
    change = lambda text: settings_without_hook(text, where, ours)  # noqa: E731
    actions = _config_removal(layout, where, f"hooks in {_ref(where, layout.root)}", change, record)
    if not features:
        return actions
    config = layout.features_file
    edit = (record.get("edits") or {}).get(_ref(config, layout.root))
    if isinstance(edit, dict):
        original = edit.get("original")
        drop = original is None or not any(
            line.strip().replace(" ", "") == "[features]" for line in original.split("\n")
        )
        change = lambda text: toml_without_flag(text, config, drop_table=drop)  # noqa: E731
    else:
        change = lambda text: text  # noqa: E731
    actions += _config_removal(layout, config, f"hooks feature in {_ref(config, layout.root)}", change, record)
    return actions


def _skill_removals(layout: Layout, recorded: dict) -> list[Action]:
    """Remove the skill files ``recorded`` (path -> SHA-256) names that are
    unchanged since; changed ones, links and what is not a regular file are
    kept, with a note."""
    actions: list[Action] = []
    for rel, digest in sorted(recorded.items()):
        target = layout.skill / rel
        if not os.path.lexists(target):
            continue
        link = _link_at(layout.skill, target)
        if link is not None:
            note = "a symbolic link" if link == target else f"inside {_ref(link, layout.root)}, a symbolic link"
            actions.append(Action(target, "kept", "skill", note=f"{note}; init never removes through a link"))
            continue
        mode = os.lstat(target).st_mode
        if not stat.S_ISREG(mode):
            note = f"{jsonfile.file_kind(mode)}, not a regular file; init removes only files it wrote"
            actions.append(Action(target, "kept", "skill", note=note))
            continue
        before = _read(target)
        if before is None:
            continue
        if _sha(before) == digest:
            actions.append(Action(target, "remove", "skill", before, None))
        else:
            actions.append(Action(target, "kept", "skill", before, None, note="changed since it was installed"))
    return actions


def plan_uninstall(
    layout: Layout, source: Path, python: str = "python3", schema: str | os.PathLike | None = None
) -> list[Action]:
    """The changes that remove what :func:`plan_install` wrote: skill files
    unchanged since install, our hook or block (the whole file restored byte
    for byte when nobody changed it since), the install record and the
    folders it created once empty.  The store is never touched, and nothing
    is removed through a symbolic link in the skill folder.  ``python`` and
    ``schema`` give the hook command to look for when there is no record."""
    actions: list[Action] = []
    record = _checked_record(layout)
    recorded = record.get("files") if isinstance(record.get("files"), dict) else None
    same_skill = os.path.realpath(source) == os.path.realpath(layout.skill)
    if recorded is None:  # no record: our files are the ones equal to the source's
        recorded = {} if same_skill else {rel: _sha(p.read_bytes()) for rel, p in _skill_files(source).items()}
    actions += _skill_removals(layout, recorded)
    if layout.host == "claude" and not layout.reader:
        for path, what, change in _claude_changes(layout, python, schema, record, installing=False):
            actions += _config_removal(layout, path, what, change, record)
    elif layout.rules_kind == "block":
        change = lambda text: rules_without_block(text, layout.config)  # noqa: E731
        actions += _config_removal(layout, layout.config, _rules_what(layout), change, record)
    else:
        actions += _file_rules_removal(layout, python, record)
    if layout.hooks_file is not None:
        actions += _codex_removals(layout, python, schema, record)
    record_path = layout.skill / RECORD
    if os.path.lexists(record_path):
        link = _link_at(layout.skill, record_path)
        mode = os.lstat(record_path).st_mode
        if link is not None:
            actions.append(
                Action(record_path, "kept", "install record", note="a symbolic link; init never removes through one")
            )
        elif not stat.S_ISREG(mode):
            note = f"{jsonfile.file_kind(mode)}, not a regular file; init removes only files it wrote"
            actions.append(Action(record_path, "kept", "install record", note=note))
        else:
            actions.append(Action(record_path, "remove", "install record", _read(record_path), None))
    index_ref = record.get("index")
    if isinstance(index_ref, str) and os.path.lexists(layout.root / index_ref):
        actions.append(Action(layout.root / index_ref, "kept", "index", note="the store is never touched"))
    elif layout.store is not None and os.path.lexists(layout.store / "MEMORY.md"):
        actions.append(Action(layout.store / "MEMORY.md", "kept", "index", note="the store is never touched"))
    return actions


def _config_removal(layout: Layout, path: Path, what: str, change, record: dict) -> list[Action]:
    """The action that takes our part out of the settings or rules file
    ``path``: the bytes from before the install when nobody changed the file
    since (the file removed when init created it), else ``change`` (text ->
    text without ours); a file init created that is left empty is removed."""
    before = _read(path)
    if before is None:
        return []
    edit = (record.get("edits") or {}).get(_ref(path, layout.root))
    if isinstance(edit, dict) and edit.get("written") == _sha(before):
        original = edit.get("original")
        after = None if original is None else original.encode("utf-8")
        return [Action(path, "restore" if after is not None else "remove", what, before, after, follow=True)]
    after_text = change(_text(before, path))
    after = after_text.encode("utf-8")
    if after == before:
        return [Action(path, "unchanged", what, before, after, note="nothing of ours in it", follow=True)]
    if isinstance(edit, dict) and edit.get("original") is None and not after_text.strip(BOM_CHAR + " \t\r\n{}"):
        return [Action(path, "remove", what, before, None, follow=True)]
    return [Action(path, "update", what, before, after, follow=True)]


def removable_dirs(layout: Layout) -> list[Path]:
    """Folders to remove after an uninstall, deepest first, if empty then:
    the skill folder and its subfolders, and the folders the install created.
    Nothing inside a symbolic link."""
    record = _checked_record(layout)  # every folder it names is one init creates
    out = []
    if layout.skill.is_dir() and not layout.skill.is_symlink():
        for folder, _dirs, _files in os.walk(layout.skill, topdown=False):
            out.append(Path(folder))
    dirs = record.get("dirs") if isinstance(record.get("dirs"), list) else []
    for rel in sorted((d for d in dirs if isinstance(d, str)), key=lambda r: -len(Path(r).parts)):
        out.append(Path(os.path.normpath(layout.root / rel)))
    seen: list[Path] = []
    for path in out:
        if path not in seen:
            seen.append(path)
    return seen


# ---------------------------------------------------------------------------
# Applying

_REFUSED = (OSError, TargetError, HostError)


def apply(actions: list[Action], cleanup: list[Path] | None = None) -> list[Action]:
    """Carry out ``actions`` (create, update, restore, remove) and then
    remove the ``cleanup`` folders that are empty.  Each write is atomic and
    change-checked: a file changed since the plan (or become a symbolic
    link, where links are not followed) is skipped with ``conflict`` saying
    why; one that cannot be written (permissions, I/O) is skipped with
    ``failed`` saying why, and the rest go on.  An existing file keeps its
    mode, a new one gets ``mode``.  Only actions with ``follow`` write
    through a symlink, at its real path.  Returns the skipped actions."""
    skipped = []
    for action in actions:
        if action.action not in ("create", "update", "restore", "remove") or action.before == action.after:
            continue
        if action.follow:
            real = Path(os.path.realpath(action.path))
        elif os.path.islink(action.path):
            action.conflict = f"{action.path}: became a symbolic link; init never writes or removes through one"
            skipped.append(action)
            continue
        else:
            real = Path(action.path)
        try:
            if action.after is None:
                current = _read(real)
                if current != action.before:
                    raise Conflict(f"{action.path}: changed since it was read; not removed")
                real.unlink()
            else:
                # skill files are copies that a re-run restores: atomic, but not fsynced one by one;
                # no folder is created where a symbolic link points (settings.json, AGENTS.md)
                replace.replace_file(
                    real,
                    action.before,
                    action.after,
                    durable=action.what != "skill",
                    make_folders=not (action.follow and os.path.islink(action.path)),
                )
                if action.before is None and action.mode is not None:
                    os.chmod(real, action.mode)
        except Conflict as exc:
            action.conflict = str(exc)
            skipped.append(action)
        except _REFUSED as exc:
            action.failed = getattr(exc, "strerror", None) or str(exc)
            skipped.append(action)
    for folder in cleanup or []:
        try:
            folder.rmdir()
        except OSError:
            pass  # not empty (someone else's files) or already gone
    return skipped
