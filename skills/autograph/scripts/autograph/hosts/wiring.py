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

__all__ = [
    "Action",
    "apply",
    "BEGIN",
    "DEFER_FLAG",
    "END",
    "guard_command",
    "GUARD_MARK",
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

BEGIN = "<!-- autograph:begin -->"
END = "<!-- autograph:end -->"
GUARD_MARK = "autograph/scripts/guard.py"  # a hook command holding this runs an autograph guard
DEFER_FLAG = "--defer-to-plugin"  # the guard stays silent while the autograph plugin is enabled
RECORD = ".autograph-install.json"
MATCHER = "Write|Edit|MultiEdit"
HOOK_TIMEOUT = 10  # seconds; the guard answers in well under one
SKIP_NAMES = {"__pycache__"}


class HostError(ValueError):
    """A file to edit is not in a shape we can edit safely (exit code 2)."""


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


BOM_CHAR = "\ufeff"


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
) -> Layout:
    """The :class:`Layout` for ``host`` (``claude``/``codex``) in ``project``
    or, with ``user``, the home folder.  ``store_dir`` overrides the store
    (default: ``project/<memory_folder>``; none for ``--user``)."""
    environ = os.environ if environ is None else environ
    home = Path(environ.get("HOME") or Path.home())
    if user:
        if host == "claude":
            base = Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
            skill, config = base / "skills" / "autograph", base / "settings.json"
        else:
            skill = home / ".agents" / "skills" / "autograph"
            config = Path(environ.get("CODEX_HOME") or home / ".codex") / "AGENTS.md"
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
        else:
            skill, config = root / ".agents" / "skills" / "autograph", root / "AGENTS.md"
        store_path = Path(store_dir).absolute() if store_dir else root / memory_folder if memory_folder else root
        skill_ref = os.path.relpath(skill, root).replace(os.sep, "/")
        store_ref = _ref(store_path, root)
    return Layout(host, "user" if user else "project", root, skill, config, store_path, skill_ref, store_ref)


def _ref(path: Path, root: Path) -> str:
    try:
        rel = path.relative_to(root).as_posix()
        return rel or "."
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------
# JSON located in text: spans of values, so an edit touches only its own bytes

_WS = " \t\r\n"


class _Node:
    __slots__ = ("kind", "start", "end", "items", "value")

    def __init__(self, kind: str, start: int):
        self.kind, self.start, self.end = kind, start, start
        self.items: list = []  # object: (key, key_start, node); array: node
        self.value = None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _parse_value(text: str, i: int) -> _Node:
    from json.decoder import scanstring

    i = _skip(text, i)
    if i >= len(text):
        raise ValueError("unexpected end")
    ch = text[i]
    node = _Node("object" if ch == "{" else "array" if ch == "[" else "scalar", i)
    if ch in "{[":
        close = "}" if ch == "{" else "]"
        j = _skip(text, i + 1)
        if text[j : j + 1] == close:
            node.end = j + 1
            return node
        while True:
            if ch == "{":
                j = _skip(text, j)
                if text[j : j + 1] != '"':
                    raise ValueError("expected a key")
                key, after = scanstring(text, j + 1)
                k = _skip(text, after)
                if text[k : k + 1] != ":":
                    raise ValueError("expected ':'")
                child = _parse_value(text, k + 1)
                node.items.append((key, j, child))
            else:
                child = _parse_value(text, j)
                node.items.append(child)
            j = _skip(text, child.end)
            if text[j : j + 1] == ",":
                j += 1
                continue
            if text[j : j + 1] == close:
                node.end = j + 1
                return node
            raise ValueError(f"expected ',' or '{close}'")
    decoder = json.JSONDecoder()
    node.value, node.end = decoder.raw_decode(text, i)
    return node


def _member(node: _Node, key: str):
    for name, key_start, child in node.items:
        if name == key:
            return key_start, child
    return None


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _indent_unit(text: str) -> str:
    for line in text.replace("\r\n", "\n").split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _render(value, unit: str, level: int, newline: str) -> str:
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", newline + unit * level)


def _insert_child(text: str, container: _Node, rendered: str, unit: str, level: int, newline: str) -> str:
    """``text`` with ``rendered`` (a member ``"key": value`` or an array
    item) added as the last child of ``container``."""
    if container.items:
        last = container.items[-1]
        end = (last[2] if isinstance(last, tuple) else last).end
        return text[:end] + "," + newline + unit * level + rendered + text[end:]
    inner = newline + unit * level + rendered + newline + unit * (level - 1)
    return text[: container.start + 1] + inner + text[container.end - 1 :]


def _remove_child(text: str, container: _Node, index: int) -> str:
    """``text`` without the child at ``index`` of ``container``, and the comma
    and white space that joined it: the inverse of :func:`_insert_child`."""

    def span(i):
        item = container.items[i]
        return (item[1], item[2].end) if isinstance(item, tuple) else (item.start, item.end)

    count = len(container.items)
    if count == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    start, end = span(index)
    if index > 0:
        return text[: span(index - 1)[1]] + text[end:]
    return text[:start] + text[span(1)[0] :]


def _duplicate_key(node: _Node, path: str = "") -> str | None:
    """The dotted path of the first key an object holds twice, else None."""
    if node.kind == "object":
        seen: set[str] = set()
        for name, _, child in node.items:
            where = f"{path}.{name}" if path else name
            if name in seen:
                return where
            seen.add(name)
            found = _duplicate_key(child, where)
            if found:
                return found
    elif node.kind == "array":
        for index, child in enumerate(node.items):
            found = _duplicate_key(child, f"{path}[{index}]")
            if found:
                return found
    return None


def _guard_handlers(group: _Node) -> list[tuple[int, _Node, str]]:
    """``(index, command node, command)`` of each handler of a hook group
    whose command runs an ``autograph/scripts/guard.py``."""
    if group.kind != "object":
        return []
    hooks = _member(group, "hooks")
    if hooks is None or hooks[1].kind != "array":
        return []
    out = []
    for index, handler in enumerate(hooks[1].items):
        command = _member(handler, "command") if handler.kind == "object" else None
        if command and isinstance(command[1].value, str) and GUARD_MARK in command[1].value.replace("\\", "/"):
            out.append((index, command[1], command[1].value))
    return out


def _locate_settings(text: str, where: Path) -> tuple[_Node, tuple | None, tuple | None]:
    """(top object, hooks member, PreToolUse member); raises HostError for a
    file that is not a JSON object, holds a key twice, is nested too deeply
    to parse, or whose hooks are not the documented shape."""
    try:
        json.loads(text)
        top = _parse_value(text, 0)
        twice = _duplicate_key(top) if top.kind == "object" else None
    except RecursionError:
        raise HostError(
            f"{where}: nested too deeply to edit safely (hundreds of levels of lists or objects); "
            f"fix it, then run init again"
        ) from None
    except ValueError as exc:
        raise HostError(f"{where}: not valid JSON ({exc}); fix it, then run init again") from None
    if top.kind != "object":
        raise HostError(f"{where}: not a JSON object; fix it, then run init again")
    if twice is not None:
        raise HostError(
            f'{where}: the key "{twice}" is there more than once; Claude Code reads only the last one, so '
            f"merge them into one, then run init again"
        )
    hooks = _member(top, "hooks")
    if hooks is not None and hooks[1].kind != "object":
        raise HostError(f'{where}: "hooks" is not an object; fix it, then run init again')
    pre = _member(hooks[1], "PreToolUse") if hooks else None
    if pre is not None and pre[1].kind != "array":
        raise HostError(f'{where}: "hooks.PreToolUse" is not a list; fix it, then run init again')
    return top, hooks, pre


def hook_group(command: str) -> dict:
    """The ``PreToolUse`` group that runs the guard."""
    return {"matcher": MATCHER, "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]}


def _as_test(ours) -> callable:
    if callable(ours):
        return ours
    known = {ours} if isinstance(ours, str) else set(ours)
    return lambda command: command in known


def settings_with_hook(text: str | None, command: str, where: Path, ours=()) -> str:
    """``settings.json`` text with our hook group: unchanged if a handler
    runs ``command`` already, its command replaced in place when a handler
    runs an earlier command of ours (``ours``: commands, or a test of a
    command), else a new group appended to ``hooks.PreToolUse``.  A handler
    that runs another ``autograph/scripts/guard.py`` is someone else's: it is
    never rewritten, and since two guards would answer every call, the
    file is refused (HostError) naming it.  A UTF-8 byte order mark at the
    start stays there."""
    if text is not None and text.startswith(BOM_CHAR):
        return BOM_CHAR + settings_with_hook(text[1:], command, where, ours)
    if text is None or not text.strip():
        return json.dumps({"hooks": {"PreToolUse": [hook_group(command)]}}, indent=2) + "\n"
    earlier = _as_test(ours)
    newline, unit = _newline(text), _indent_unit(text)
    top, hooks, pre = _locate_settings(text, where)
    if pre is not None:
        exact = earlier_node = None
        for number, group in enumerate(pre[1].items):
            for _, node, value in _guard_handlers(group):
                if value == command:
                    exact = node
                elif earlier(value):
                    earlier_node = earlier_node or node
                else:
                    raise HostError(
                        f"{where}: hooks.PreToolUse[{number}] runs {value!r}, a guard init did not write "
                        f"(no install record names it); remove that hook (init registers its own guard), "
                        f"then run init again"
                    )
        if exact is not None:
            return text
        if earlier_node is not None:
            return text[: earlier_node.start] + json.dumps(command, ensure_ascii=False) + text[earlier_node.end :]
        return _insert_child(text, pre[1], _render(hook_group(command), unit, 3, newline), unit, 3, newline)
    if hooks is not None:
        rendered = '"PreToolUse": ' + _render([hook_group(command)], unit, 2, newline)
        return _insert_child(text, hooks[1], rendered, unit, 2, newline)
    rendered = '"hooks": ' + _render({"PreToolUse": [hook_group(command)]}, unit, 1, newline)
    return _insert_child(text, top, rendered, unit, 1, newline)


def settings_without_hook(text: str, where: Path, ours=()) -> str:
    """``settings.json`` text without our hook (``ours``: the commands init
    wrote, or a test of a command): the whole group when our handler is its
    only one, else just our handler; an emptied ``PreToolUse`` list and an
    emptied ``hooks`` object go too.  Other guards' hooks stay, and so
    does a byte order mark at the start."""
    if text.startswith(BOM_CHAR):
        return BOM_CHAR + settings_without_hook(text[1:], where, ours)
    mine = _as_test(ours)
    top, hooks, pre = _locate_settings(text, where)
    if pre is None:
        return text
    for index, group in enumerate(pre[1].items):
        handlers = [h for h in _guard_handlers(group) if mine(h[2])]
        if not handlers:
            continue
        members = _member(group, "hooks")[1]
        if len(members.items) > 1:
            return _remove_child(text, members, handlers[0][0])
        text = _remove_child(text, pre[1], index)
        break
    else:
        return text
    top, hooks, pre = _locate_settings(text, where)
    if not pre[1].items:
        text = _remove_child(text, hooks[1], [name for name, _, _ in hooks[1].items].index("PreToolUse"))
        top, hooks, _ = _locate_settings(text, where)
        if not hooks[1].items:
            text = _remove_child(text, top, [name for name, _, _ in top.items].index("hooks"))
    return text


# ---------------------------------------------------------------------------
# The AGENTS.md block


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
    ``python`` is the interpreter command the rules tell the agent to use."""
    skill = layout.skill_ref
    if layout.store_ref:
        index = f"{layout.store_ref}/MEMORY.md" if layout.store_ref != "." else "MEMORY.md"
        where = (
            f"Long-term memory lives in `{layout.store_ref}/`: one fact per note, and `{index}`, the index, "
            f"holds one pointer line per note."
        )
    else:
        index = "MEMORY.md"
        where = (
            "Long-term memory lives in a project's memory store (its `memory/` folder): one fact per note, "
            "and `MEMORY.md` in it, the index, holds one pointer line per note."
        )
    lines = [
        BEGIN,
        "## Memory (autograph)",
        "",
        where,
        f'How to keep it: `{skill}/SKILL.md`, section "Memory"; details in `{skill}/references/memory.md`.',
        "",
        f"- At the start of a task, read `{index}`; open a note only when its hook matters to the task.",
        "- Before writing a note, look for one that already holds the fact and update it instead.",
        f"- After every change to the index, run `{python} {skill}/scripts/check.py {index}`; on exit code 1",
        "  the index is over its cap (the host would drop the rest): compact it before anything else.",
        "- Never write secrets (keys, tokens, passwords) into memory; note only where they are kept.",
        END,
    ]
    return "\n".join(lines)


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
    the way to the skill folder and to the settings or rules file."""
    out: list[Path] = []
    for start in (layout.skill, layout.config.parent):
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
    config = layout.config
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


def _guard_token(layout: Layout) -> str:
    """The guard's path as the hook command names it."""
    if layout.scope == "project":
        return f'"$CLAUDE_PROJECT_DIR/{_escaped(layout.skill_ref)}/scripts/guard.py"'
    return shlex.quote(str(layout.skill / "scripts" / "guard.py"))


def _escaped(text: str) -> str:
    """``text`` safe inside double quotes of a POSIX shell."""
    return "".join("\\" + ch if ch in '\\"$`' else ch for ch in text)


def schema_ref(layout: Layout, schema: str | os.PathLike) -> str:
    """``schema`` as the hook command names it: through
    ``$CLAUDE_PROJECT_DIR`` when it is in the project (so the settings file
    works on any checkout), else its absolute path."""
    path = Path(schema).absolute()
    if layout.scope == "project":
        try:
            return f'"$CLAUDE_PROJECT_DIR/{_escaped(path.relative_to(layout.root).as_posix())}"'
        except ValueError:
            pass
    return shlex.quote(str(path))


def guard_command(layout: Layout, python: str, schema: str | os.PathLike | None = None) -> str:
    """The hook's command line: the project's copy through
    ``$CLAUDE_PROJECT_DIR`` (so the settings file works on any checkout), or
    the absolute path for ``--user``; ``--schema`` when a schema is given,
    and :data:`DEFER_FLAG`, so this registration stays silent while the
    autograph plugin (which registers the same guard) is enabled."""
    command = f"{python} {_guard_token(layout)}"
    if schema is not None:
        command += f" --schema {schema_ref(layout, schema)}"
    return f"{command} {DEFER_FLAG}"


def _hook_test(record: dict, layout: Layout, command: str, installing: bool):
    """Which hook commands in settings.json are ours: the one the install
    record names; without a record, only the exact command init writes now;
    with a record of an earlier init that did not name it, a command running
    this skill's guard (as that init wrote it).  Installing, the command
    init writes now is ours too."""
    if not record:
        return lambda found: found == command
    if "hook" in record:
        hook = record.get("hook") if isinstance(record.get("hook"), str) else None
        return lambda found: (installing and found == command) or found == hook
    token = " " + _guard_token(layout)
    return lambda found: found == command or found.endswith(token)


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
    for rel, path in _skill_files(source).items():
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
    key = _ref(layout.config, layout.root)
    config_before = _read(layout.config)
    config_text = _text(config_before, layout.config)
    hook = None
    if layout.host == "claude":
        command = guard_command(layout, python, schema)
        after_text = settings_with_hook(
            config_text, command, layout.config, _hook_test(record, layout, command, installing=True)
        )
        what = "hook in settings.json"
    else:
        after_text = rules_with_block(config_text, rules_block(layout, python), layout.config)
        what = "rules block in AGENTS.md"
    after = after_text.encode("utf-8")
    if layout.host == "claude":
        earlier = record.get("hook") if isinstance(record.get("hook"), str) else None
        legacy = bool(record) and "hook" not in record and key in edits
        hook = command if after != config_before or earlier or legacy else None
    for folder in _missing_dirs(layout.config.parent, layout.root):
        created_dirs.add(_ref(folder, layout.root))
    if after != config_before:
        previous = edits.get(key)  # an earlier install's record keeps the bytes from before it
        original = previous["original"] if isinstance(previous, dict) and "original" in previous else config_text
        edits[key] = {"original": original, "written": _sha(after)}
    kind = "unchanged" if after == config_before else "create" if config_before is None else "update"
    bom = layout.host == "claude" and (config_text or "").startswith(BOM_CHAR)
    note = "its UTF-8 byte order mark is kept" if bom else ""
    actions.append(Action(layout.config, kind, what, config_before, after, note=note, follow=True))
    index_ref = record.get("index") if isinstance(record.get("index"), str) else None  # created by us earlier
    if layout.store is not None:
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
        "hook": hook,
        "index": index_ref,
    }
    record_bytes = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
    record_path = layout.skill / RECORD
    before = _read(record_path)
    kind = "unchanged" if before == record_bytes else "create" if before is None else "update"
    actions.append(Action(record_path, kind, "install record", before, record_bytes, 0o644 & ~_umask()))
    return actions


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


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
    config_before = _read(layout.config)
    key = _ref(layout.config, layout.root)
    edit = (record.get("edits") or {}).get(key)
    what = "hook in settings.json" if layout.host == "claude" else "rules block in AGENTS.md"
    if config_before is not None:
        if isinstance(edit, dict) and edit.get("written") == _sha(config_before):
            original = edit.get("original")
            after = None if original is None else original.encode("utf-8")
            actions.append(
                Action(
                    layout.config,
                    "restore" if after is not None else "remove",
                    what,
                    config_before,
                    after,
                    follow=True,
                )
            )
        else:
            text = _text(config_before, layout.config)
            if layout.host == "claude":
                mine = _hook_test(record, layout, guard_command(layout, python, schema), installing=False)
                after_text = settings_without_hook(text, layout.config, mine)
            else:
                after_text = rules_without_block(text, layout.config)
            after = after_text.encode("utf-8")
            if after == config_before:
                actions.append(
                    Action(
                        layout.config,
                        "unchanged",
                        what,
                        config_before,
                        after,
                        note="nothing of ours in it",
                        follow=True,
                    )
                )
            elif isinstance(edit, dict) and edit.get("original") is None and not after_text.strip(" \t\r\n{}"):
                actions.append(Action(layout.config, "remove", what, config_before, None, follow=True))
            else:
                actions.append(Action(layout.config, "update", what, config_before, after, follow=True))
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
