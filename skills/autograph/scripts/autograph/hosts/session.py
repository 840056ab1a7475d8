"""Session hooks: what an agent is told when a session starts, and the checkpoint before it stops.

Two Claude Code hooks (``session.py start`` and ``session.py stop``), both
run as a fresh process with the hook's JSON on stdin, so this module imports
little (``os``, ``json``, ``re``, ``time`` and the readers of read/); what
writes ``.graph/`` is imported when a record is written.

* **Start** (:func:`start`, a ``SessionStart`` hook): the vault (found as
  every command finds it: ``--vault``, ``$AUTOGRAPH_VAULT``, upward from the
  hook's ``cwd`` or ``$CLAUDE_PROJECT_DIR``) and the memory store
  (``--store``, else the vault's ``memory.folder``), then a few lines for
  the model (:func:`context_lines`): the vault's path, the index's size
  against its caps and compaction target (:mod:`caps`), the last health
  score and its change (read from the tail of
  ``.graph/health-history.jsonl`` only), and the rule to look a subject up
  before writing (``card.py remember``).  The lines are fitted to a budget
  (:func:`fit`, ``session.budget_tokens`` of the schema, default
  :data:`DEFAULT_BUDGET_TOKENS` tokens of :data:`BYTES_PER_TOKEN` UTF-8
  bytes).  It appends ``export AUTOGRAPH_VAULT=...`` to
  ``$CLAUDE_ENV_FILE`` (once) and records the session's start in
  ``.graph/sessions/<session_id>.json`` (:func:`record_of`): the time, the
  newest journaled run and the index's ``stat``.
* **Stop** (:func:`stop`, a ``Stop`` hook, the completion checkpoint): when
  journaled runs wrote to the vault, or the index changed, since the start,
  it asks the agent once per session to report what it added, updated and
  retired and to check the index (``{"decision": "block", "reason": ...}``),
  and marks the record so it never asks twice.

Neither ever fails the hook: a vault that cannot be found means no output,
a record that cannot be written (a read-only ``.graph/``) is a note on
stderr, and only regular files are read or appended to (a FIFO is never
waited on).  Every line either writes starts ``autograph:`` (for the model)
or ``session.py:`` (stderr).
"""

from __future__ import annotations

import json
import os
import re
import stat
import time

from ..read.location import ENVIRONMENT, find_vault
from ..read.size import open_regular, read_regular
from . import caps as capsmod

__all__ = [
    "BYTES_PER_TOKEN",
    "DEFAULT_BUDGET_TOKENS",
    "KEEP_DAYS",
    "PLUGIN_OPTION",
    "SESSIONS",
    "HookInputError",
    "Place",
    "context_lines",
    "fit",
    "health_tail",
    "hook_input",
    "locate",
    "record_of",
    "session_id",
    "shell_quote",
    "start",
    "stop",
]

DEFAULT_BUDGET_TOKENS = 150
BYTES_PER_TOKEN = 4  # a token counted as 4 UTF-8 bytes: 150 tokens are 600 bytes
KEEP_DAYS = 7  # session records older than this are removed when a session starts
SESSIONS = "sessions"  # .graph/sessions/<session_id>.json
PLUGIN_OPTION = "CLAUDE_PLUGIN_OPTION_CHECKPOINT"  # the plugin's userConfig option "checkpoint"

_GRAPH = ".graph"  # read.vault.GRAPH_DIR, not imported: read.vault costs more than this whole hook
_HISTORY = "health-history.jsonl"  # graph.health.HISTORY
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SMALL = 1 << 20  # the most read of a record, an env file
_SCHEMA_LIMIT = 4 << 20
_TAIL = 1 << 16  # the health history is read from its end, this much at a time
_TAIL_LIMIT = 1 << 20  # and never more than this
_SCAN_LIMIT = 1000  # at most this many new journal runs are read at a stop
_SHOWN = 5  # paths named in the checkpoint's reason
_CUT = " …"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class HookInputError(ValueError):
    """The hook's stdin is not a JSON object (the hook then answers nothing)."""


# ---------------------------------------------------------------------------
# Input


def hook_input(payload: bytes | None) -> dict:
    """The hook's JSON object; ``{}`` for no input (``None``, or only
    whitespace: a person running the command by hand).  Raises
    :class:`HookInputError` for bytes that are not UTF-8 JSON or not an
    object."""
    if payload is None or not payload.strip():
        return {}
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise HookInputError(f"the hook input is not JSON ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    return data


def session_id(data: dict, environ) -> tuple[str | None, str | None]:
    """``(id, problem)``: the hook input's ``session_id`` (else
    ``$CLAUDE_CODE_SESSION_ID``) when it is a safe file name (letters,
    digits, ``.``, ``_`` and ``-``, at most 128, not starting with a dot:
    no path separator ever), else ``(None, why)``; ``(None, None)`` when
    there is none."""
    value = data.get("session_id")
    if value is None:
        value = environ.get("CLAUDE_CODE_SESSION_ID") or None
    if value is None:
        return None, None
    if isinstance(value, str) and _SESSION_ID.fullmatch(value):
        return value, None
    shown = repr(value)[:60] if isinstance(value, str) else type(value).__name__
    return None, f"session.py: the session id {shown} is not a safe file name; the session is not recorded"


def _cwd(data: dict) -> str:
    cwd = data.get("cwd")
    if isinstance(cwd, str) and cwd and os.path.isabs(cwd):
        return cwd
    return os.getcwd()


def shell_quote(text: str) -> str:
    """``text`` as one POSIX shell word (``shlex.quote``'s rule, without its
    import): as it is when it holds only safe characters, else in single
    quotes."""
    if text and re.fullmatch(r"[\w@%+=:,./-]+", text, re.ASCII):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


# ---------------------------------------------------------------------------
# Where: the vault, the schema, the store and its index


class Place:
    """Where a session works.

    ``vault``: the vault's absolute path, or None; ``how``: ``"named"``
    (``--vault``), ``"environment"`` (``$AUTOGRAPH_VAULT``), ``"found"``
    (upward from a folder) or ``"none"``.  ``store``: the memory store's
    folder (absolute) or None; ``store_named``: given with ``--store``.
    ``index``: the store's index file (absolute) or None.  ``root``: where
    the session record lives (the vault, else the store).  ``section``:
    the schema's ``index`` object (cleaned for :func:`caps.caps_from`);
    ``budget``: ``session.budget_tokens``.  ``notes``: lines for stderr.
    """

    __slots__ = ("vault", "how", "store", "store_named", "index", "section", "budget", "notes")

    def __init__(self):
        self.vault: str | None = None
        self.how = "none"
        self.store: str | None = None
        self.store_named = False
        self.index: str | None = None
        self.section: dict = {}
        self.budget = DEFAULT_BUDGET_TOKENS
        self.notes: list[str] = []

    @property
    def root(self) -> str | None:
        return self.vault or self.store

    def shown(self, path: str) -> str:
        """``path`` relative to the vault (else the store) when inside it,
        else as it is."""
        if self.root:
            rel = os.path.relpath(path, self.root)
            if rel != ".." and not rel.startswith(".." + os.sep):
                return rel.replace(os.sep, "/")
        return path


def _folder(text: str) -> str:
    return os.path.abspath(os.path.expanduser(text))


def _vaults(vault: str | None, environ, cwd: str, notes: list[str]):
    """The vault candidates in order, ``(path, how)``: a named one alone."""
    if vault is not None:
        folder = _folder(vault) if vault.strip() else ""
        if folder and os.path.isdir(folder):
            yield folder, "named"
        else:
            notes.append(f"session.py: --vault {vault} is not a folder")
        return
    named = environ.get(ENVIRONMENT)
    if named:
        folder = _folder(named)
        if os.path.isdir(folder):
            yield folder, "environment"
            return
        notes.append(f"session.py: {ENVIRONMENT}={named} is not a folder; looking for the vault upward instead")
    seen = set()
    for start in (cwd, environ.get("CLAUDE_PROJECT_DIR")):
        if isinstance(start, str) and start and os.path.isabs(start):
            try:
                found = find_vault(start)
            except OSError:
                found = None
            if found is not None and str(found) not in seen:
                seen.add(str(found))
                yield str(found), "found"


def _schema(path: str, named: bool, notes: list[str]) -> dict:
    """The raw object of a ``schema.json`` (not validated: only the keys this
    hook reads are checked, where they are read); ``{}`` when there is none
    or it cannot be used (a note, unless an unnamed file is just missing)."""
    try:
        data = json.loads(read_regular(path, _SCHEMA_LIMIT).decode("utf-8-sig"))
    except FileNotFoundError:
        if named:
            notes.append(f"session.py: --schema {path} does not exist; using the built-in caps and store")
        return {}
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        notes.append(f"session.py: the schema {path} cannot be used ({_reason(exc)}); using the built-in defaults")
        return {}
    if not isinstance(data, dict):
        notes.append(f"session.py: the schema {path} is not a JSON object; using the built-in defaults")
        return {}
    return data


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__
    return " ".join(str(text).split())[:200]


def _positive(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _index_section(section) -> dict:
    """The schema's ``index`` object with only what :func:`caps.caps_from`
    can use: positive whole numbers, alone or in ``{lines, bytes}`` objects."""
    clean: dict = {}
    for key, value in section.items() if isinstance(section, dict) else ():
        if isinstance(value, dict):
            kept = {d: v for d, v in value.items() if d in ("lines", "bytes") and _positive(v)}
            if kept:
                clean[key] = kept
        elif _positive(value):
            clean[key] = value
    return clean


def _memory(section, notes: list[str]) -> tuple[str, str]:
    """``(folder, index)`` of the schema's ``memory`` object, each checked as
    the schema's validation does (a relative folder without ``..``, a file
    name); a bad one is the default, with a note."""
    folder, index = "memory", "MEMORY.md"
    if not isinstance(section, dict):
        return folder, index
    value = section.get("folder", folder)
    parts = value.replace("\\", "/").split("/") if isinstance(value, str) else None
    if parts is None or value.startswith(("/", "\\", "~")) or ".." in parts or re.match(r"[A-Za-z]:", value):
        notes.append(f"session.py: schema memory.folder {value!r} is not a folder in the vault; using {folder!r}")
    else:
        folder = value.strip("/")
    value = section.get("index", index)
    if not isinstance(value, str) or not value.strip() or "/" in value or "\\" in value:
        notes.append(f"session.py: schema memory.index {value!r} is not a file name; using {index!r}")
    else:
        index = value
    return folder, index


def _claude_store(environ, cwd: str, own: str | None, index: str) -> str | None:
    """The memory store when none is named: the folder Claude Code loads
    its memory from (``autoMemoryDirectory``, which init.py writes), else
    the vault's own store when it holds its index, else Claude Code's own
    folder for the project when that holds one, else the vault's (None
    without a vault)."""
    from .claude_memory import auto_memory_settings, project_memory_dir

    project = environ.get("CLAUDE_PROJECT_DIR") or cwd
    settings = auto_memory_settings(environ, project)
    if settings and os.path.isdir(settings[0][1]):
        return settings[0][1]
    if own is not None and os.path.exists(os.path.join(own, index)):
        return own
    if project and os.path.isabs(project):
        claude = str(project_memory_dir(project, environ))
        if os.path.exists(os.path.join(claude, index)):
            return claude
    return own


def locate(
    vault: str | None = None,
    store: str | None = None,
    schema: str | None = None,
    environ=None,
    cwd: str | None = None,
    want=None,
) -> Place:
    """Where the session works (:class:`Place`).

    The vault: ``vault`` (``--vault``; a name that is no folder means none,
    with a note), else ``$AUTOGRAPH_VAULT``, else the nearest vault upward
    from ``cwd`` (the hook input's) and then from ``$CLAUDE_PROJECT_DIR``
    (:func:`location.find_vault`).  ``want(root) -> bool`` picks the first
    candidate it accepts (the stop hook: the vault that holds the session's
    record).  The schema: ``schema``, else the vault's ``schema.json``; its
    ``memory``, ``index`` and ``session`` keys are read raw.  The store:
    ``store``, else ``VAULT/<memory.folder>`` (default ``memory``; ``""``
    the vault itself); its index ``<store>/<memory.index>`` (default
    ``MEMORY.md``).  Never raises for a missing or broken file: the notes
    say what was passed over."""
    environ = os.environ if environ is None else environ
    place = Place()
    cwd = cwd or os.getcwd()
    for folder, how in _vaults(vault, environ, cwd, place.notes):
        if want is None or want(folder):
            place.vault, place.how = folder, how
            break
    data: dict = {}
    if schema is not None:
        data = _schema(_folder(schema), True, place.notes)
    elif place.vault is not None:
        data = _schema(os.path.join(place.vault, "schema.json"), False, place.notes)
    folder, index = _memory(data.get("memory"), place.notes)
    if store is not None:
        place.store, place.store_named = _folder(store), True
    else:
        own = None if place.vault is None else os.path.join(place.vault, folder) if folder else place.vault
        place.store = _claude_store(environ, cwd, own, index)
    if place.store is not None:
        place.index = os.path.join(place.store, index)
    place.section = _index_section(data.get("index"))
    budget = data["session"].get("budget_tokens") if isinstance(data.get("session"), dict) else None
    if budget is not None and not _positive(budget):
        place.notes.append(
            f"session.py: schema session.budget_tokens {budget!r} is not a positive whole number; "
            f"using {DEFAULT_BUDGET_TOKENS}"
        )
    elif budget is not None:
        place.budget = budget
    return place


# ---------------------------------------------------------------------------
# What the model is told


def fit(lines: list[tuple[int, str]], budget: int) -> list[str]:
    """The lines that fit in ``budget`` UTF-8 bytes, joined by ``"\\n"``.

    ``lines``: ``(importance, text)`` in the order shown; a lower
    importance is more important (ties: the earlier line).  Lines are
    dropped whole, least important first, until the rest fit; the kept
    lines keep their order.  When even the most important line alone does
    not fit, it is cut after the last whole word that fits, marked ``" …"``
    (kept only when it holds at least two words); nothing fits: ``[]``.
    A word is never cut."""
    ranked = sorted(range(len(lines)), key=lambda i: (lines[i][0], i))

    def size(chosen) -> int:
        return sum(len(lines[i][1].encode("utf-8")) for i in chosen) + max(len(chosen) - 1, 0)

    for count in range(len(ranked), 0, -1):
        chosen = sorted(ranked[:count])
        if size(chosen) <= budget:
            return [lines[i][1] for i in chosen]
    if not ranked:
        return []
    words = lines[ranked[0]][1].split(" ")
    for count in range(len(words) - 1, 1, -1):
        text = " ".join(words[:count]) + _CUT
        if len(text.encode("utf-8")) <= budget and len(text.split()) > 2:
            return [text]
    return []


def _number(value: int) -> str:
    return f"{value:,}"


def _lines(value: int) -> str:
    return f"{value:,} line" + ("" if value == 1 else "s")


def _index_line(place: Place, environ) -> tuple[int, str] | None:
    """``(importance, line)`` of the index's headroom, or None when there is
    no index to speak of (no store given and the store's folder absent)."""
    if place.index is None:
        return None
    try:
        caps, warnings = capsmod.caps_from(place.section, environ, strict=False)
    except (KeyError, TypeError, ValueError) as exc:
        place.notes.append(f"session.py: the schema's index caps cannot be used ({_reason(exc)}); using the defaults")
        caps, warnings = capsmod.caps_from(None, environ, strict=False)
    place.notes += [f"session.py: {w}" for w in warnings]
    name = place.shown(place.index)
    soft, hard = caps.soft, caps.hard
    target = getattr(caps, "target", None) or soft
    compact = f"compact it to under {_lines(target['lines'])} / {_number(target['bytes'])} bytes"
    try:
        row = capsmod.check_file(place.index, caps)
    except FileNotFoundError:
        if not place.store_named and not os.path.isdir(place.store or ""):
            return None
        return 3, f"autograph: index {name} does not exist yet (soft cap {_number(soft['lines'])} lines)"
    except (OSError, ValueError) as exc:
        return 1, f"autograph: index {name} cannot be sized ({_reason(exc)})"
    now = f"{_lines(row['lines'])} / {_number(row['bytes'])} bytes"
    hard_text = f"hard {_number(hard['lines'])} / {_number(hard['bytes'])}"
    soft_text = f"soft {_number(soft['lines'])} / {_number(soft['bytes'])}"
    if row["status"] == "over":
        drops = f"{hard_text}; the host drops the rest"
        return 1, f"autograph: index {name} is over its hard cap: {now} ({drops}); {compact} now"
    if row["status"] == "soft":
        return 1, f"autograph: index {name} reached its soft cap: {now} ({soft_text}, {hard_text}); {compact}"
    goal = f"{_number(target['lines'])} / {_number(target['bytes'])}"
    return 3, f"autograph: index {name}: {now} ({soft_text}, {hard_text}, compact to under {goal})"


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) < 1e300


def health_tail(root: str, count: int = 2) -> list[dict]:
    """The last ``count`` well-formed lines of ``.graph/health-history.jsonl``
    in ``root``, newest first (``[]`` without a history).  Only the file's
    end is read, :data:`_TAIL` bytes at a time up to :data:`_TAIL_LIMIT`,
    so a history of years costs what a short one does; a line that is not
    a JSON object with a finite ``score`` is skipped (as
    :func:`health.previous_entry` does).  Never raises: an unreadable
    history (a FIFO, no permission) is no history."""
    try:
        fd = open_regular(os.path.join(root, _GRAPH, _HISTORY))
    except (OSError, ValueError):
        return []
    found: list[dict] = []
    try:
        end = os.fstat(fd).st_size
        want = min(_TAIL, end)
        while True:
            data = os.pread(fd, want, end - want)
            lines = data.split(b"\n")
            if want < end:
                lines = lines[1:]  # the first may be the end of a longer line
            found = []
            for line in reversed(lines):
                entry = _entry(line)
                if entry is not None:
                    found.append(entry)
                    if len(found) == count:
                        return found
            if want >= end or want >= _TAIL_LIMIT:
                return found
            want = min(want * 4, end, _TAIL_LIMIT)
    except OSError:
        return found
    finally:
        os.close(fd)


def _entry(line: bytes) -> dict | None:
    if not line.strip():
        return None
    try:
        entry = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if isinstance(entry, dict) and _finite(entry.get("score")) and isinstance(entry.get("time", ""), str):
        return entry
    return None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


def _score(value: float) -> str:
    return f"{round(value, 1):g}"


def _health_line(root: str | None) -> tuple[int, str] | None:
    if root is None:
        return None
    entries = health_tail(root)
    if not entries:
        return 4, "autograph: no health run yet (graph.py health gives the vault a score)"
    last = entries[0]
    when = last.get("time")
    day = when[:10] if isinstance(when, str) and re.match(r"\d{4}-\d\d-\d\d", when) else None
    text = f"autograph: health {_score(last['score'])}/100" + (f" on {day}" if day else "")
    if len(entries) > 1:
        text += f", {last['score'] - entries[1]['score']:+.1f} since the run before"
    counts = [
        f"{label} {_number(int(last[key]))}"
        for key, label in (("broken_links", "broken links"), ("invalid_frontmatter", "invalid frontmatter"))
        if _finite(last.get(key))
    ]
    return 4, text + ("; " + ", ".join(counts) if counts else "")


def _twice_line(scripts: str, environ, cwd: str) -> tuple[int, str] | None:
    """When this is init.py's hook (not the plugin's: no
    ``$CLAUDE_PLUGIN_ROOT``) and the autograph plugin is enabled too, the
    line that says how to leave one install: the plugin's hooks step aside
    for init's, but Claude Code lists both skills."""
    if environ.get("CLAUDE_PLUGIN_ROOT") or not capsmod.plugin_enabled(environ, cwd):
        return None
    project = environ.get("CLAUDE_PROJECT_DIR") or cwd
    inside = bool(project) and os.path.abspath(scripts).startswith(os.path.join(os.path.abspath(project), ""))
    where = f"--project {shell_quote(project)}" if inside else "--user"
    init = shell_quote(os.path.join(scripts, "init.py"))
    return (
        1,
        "autograph: installed twice (the plugin and init.py), so the skill is listed twice; to keep the "
        f"plugin's alone, run: python3 {init} claude {where}",
    )


def context_lines(place: Place, scripts: str, exported: bool, environ=None, cwd: str = "") -> list[tuple[int, str]]:
    """The lines a session starts with, in the order shown, each with its
    importance for :func:`fit` (lower is kept longer): the rule to look a
    subject up (0), an index at or over a cap or that cannot be sized, and
    a second install beside the plugin (1), the vault (2), the index's
    headroom (3), the last health run (4).  ``scripts``: the scripts folder
    (``card.py``'s); ``exported``: whether ``AUTOGRAPH_VAULT`` reaches the
    session's shell commands; ``cwd``: the hook's."""
    environ = os.environ if environ is None else environ
    lines: list[tuple[int, str]] = []
    if place.vault is not None:
        tail = f"set as {ENVIRONMENT} in your shell" if exported else "pass it to scripts as --vault"
        lines.append((2, f"autograph: vault {shell_quote(place.vault)} ({tail})"))
    elif place.store is not None:
        lines.append((2, f"autograph: memory store {shell_quote(place.store)} (no vault)"))
    index = _index_line(place, environ)
    if index is not None:
        lines.append(index)
    health = _health_line(place.vault)
    if health is not None:
        lines.append(health)
    card = shell_quote(os.path.join(scripts, "card.py"))
    rule = f"autograph: look a subject up before writing: python3 {card} remember TYPE TITLE field=value"
    lines.append((0, rule))
    twice = _twice_line(scripts, environ, cwd)
    if twice is not None:
        lines.append(twice)
    # a path holding a newline must not start a line of its own: control characters are shown escaped
    return [(rank, _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", line)) for rank, line in lines]


# ---------------------------------------------------------------------------
# The session record and the environment file


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _stat(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "ino": info.st_ino, "dev": info.st_dev}


def _runs(root: str) -> list[str]:
    """The journaled runs' ids (folder names, which sort by time), oldest first."""
    try:
        with os.scandir(os.path.join(root, _GRAPH, "journal")) as entries:
            return sorted(e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def record_of(place: Place, sid: str, source: str | None) -> dict:
    """A new session record: ``{"version": 1, "session", "started" (UTC,
    ISO 8601), "source", "root", "vault", "store", "index": {"path",
    "stat": {"size", "mtime_ns", "ino", "dev"} or null}, "journal":
    {"newest": run id or null, "runs": count}, "checkpoint": null}``."""
    runs = _runs(place.root) if place.root else []
    return {
        "version": 1,
        "session": sid,
        "started": _utc(),
        "source": source if isinstance(source, str) else None,
        "root": place.root,
        "vault": place.vault,
        "store": place.store,
        "index": {"path": place.index, "stat": _stat(place.index)},
        "journal": {"newest": runs[-1] if runs else None, "runs": len(runs)},
        "checkpoint": None,
    }


def _record_path(root: str, sid: str) -> str:
    return os.path.join(root, _GRAPH, SESSIONS, f"{sid}.json")


def _read_record(root: str, sid: str) -> tuple[dict | None, bytes | None]:
    """``(record, its bytes)``; ``(None, bytes)`` for a damaged one,
    ``(None, None)`` when there is none."""
    try:
        data = read_regular(_record_path(root, sid), _SMALL)
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError):
        return None, b""
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, data
    return (record if isinstance(record, dict) and record.get("session") == sid else None), data


def _encode(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _save(root: str, sid: str, record: dict, before: bytes | None) -> None:
    """Replace the record atomically, only while it still holds ``before``
    (None: it must not exist).  Raises OSError, ``PathError``,
    ``TargetError`` or ``Conflict``."""
    from pathlib import Path

    from ..write.derived import derived_path
    from ..write.replace import replace_file

    target = derived_path(Path(root), f"{SESSIONS}/{sid}.json")
    replace_file(target, before, _encode(record), durable=False)


def _prune(root: str, keep: str, now: float) -> None:
    """Remove session records older than :data:`KEEP_DAYS` (their mtime)."""
    folder = os.path.join(root, _GRAPH, SESSIONS)
    try:
        with os.scandir(folder) as entries:
            old = [
                e.name
                for e in entries
                if e.name.endswith(".json")
                and e.name != keep
                and _SESSION_ID.fullmatch(e.name[:-5])
                and e.is_file(follow_symlinks=False)
                and now - e.stat(follow_symlinks=False).st_mtime > KEEP_DAYS * 86400
            ]
    except OSError:
        return
    if not old:
        return
    from pathlib import Path

    from ..write.derived import discard_derived

    for name in old:
        try:
            discard_derived(Path(root), f"{SESSIONS}/{name}")
        except Exception:  # noqa: BLE001  another start removed it, or .graph/ is read-only: no matter
            pass


def _record_start(place: Place, sid: str, source) -> None:
    """Write the session's record (a resumed session's record is kept, its
    ``resumed`` list grown) and prune old ones; a failure is a note."""
    root = place.root
    try:
        record, before = _read_record(root, sid)
        if record is None:
            record = record_of(place, sid, source)
        else:
            resumed = record.get("resumed") if isinstance(record.get("resumed"), list) else []
            record["resumed"] = [*resumed, {"time": _utc(), "source": source}][-20:]
        _save(root, sid, record, before)
    except Exception as exc:  # a read-only .graph/, a symlink there: the session goes on unrecorded
        from ..write.replace import Conflict

        if isinstance(exc, Conflict) and _read_record(root, sid)[0] is not None:
            return  # another start of this session (a second registration) wrote it meanwhile
        place.notes.append(
            f"session.py: the session's start cannot be recorded under {os.path.join(root, _GRAPH)} "
            f"({_reason(exc)}); session.py stop will not ask for its checkpoint"
        )
        return
    _prune(root, f"{sid}.json", time.time())


def _export(place: Place, environ) -> bool:
    """Append ``export AUTOGRAPH_VAULT=<vault>`` to ``$CLAUDE_ENV_FILE``
    unless that file holds the line already; True when the session's shell
    commands get the variable (from the file, or already from the
    environment)."""
    path = environ.get("CLAUDE_ENV_FILE")
    vault = place.vault
    if vault is None:
        return False
    inherited = environ.get(ENVIRONMENT)
    if inherited and os.path.abspath(os.path.expanduser(inherited)) == vault:
        return True
    if not path:
        return False
    if any(ord(c) < 32 or c == "\x7f" for c in vault):
        place.notes.append(f"session.py: the vault's path holds a control character; {ENVIRONMENT} is not exported")
        return False
    line = f"export {ENVIRONMENT}={shell_quote(vault)}\n"
    try:
        current = read_regular(path, _SMALL)
    except FileNotFoundError:
        current = b""
    except (OSError, ValueError) as exc:
        place.notes.append(f"session.py: CLAUDE_ENV_FILE {path} cannot be used ({_reason(exc)})")
        return False
    if line[:-1].encode("utf-8") in current.split(b"\n"):
        return True  # written at an earlier start of this session (resume, compact)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)  # a FIFO without a reader fails here (ENXIO), never waits
    except OSError as exc:
        place.notes.append(f"session.py: CLAUDE_ENV_FILE {path} cannot be written ({_reason(exc)})")
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            place.notes.append(f"session.py: CLAUDE_ENV_FILE {path} is not a regular file; nothing written to it")
            return False
        separator = b"\n" if current and not current.endswith(b"\n") else b""
        os.write(fd, separator + line.encode("utf-8"))
    except OSError as exc:
        place.notes.append(f"session.py: CLAUDE_ENV_FILE {path} cannot be written ({_reason(exc)})")
        return False
    finally:
        os.close(fd)
    return True


# ---------------------------------------------------------------------------
# The hooks


def start(
    payload: bytes | None,
    *,
    vault: str | None = None,
    store: str | None = None,
    schema: str | None = None,
    scripts: str,
    environ=None,
) -> tuple[str, list[str]]:
    """Answer a ``SessionStart`` hook: ``(stdout, stderr_lines)``.

    ``payload``: the hook's stdin (None: no input, a person running it).
    ``stdout`` is ``""`` (no vault and no store; bad input; a budget too
    small for any line) or one JSON object and a newline::

        {"hookSpecificOutput": {"hookEventName": "SessionStart",
          "additionalContext": "autograph: ...\\nautograph: ..."}}

    The lines (:func:`context_lines`) fitted to ``session.budget_tokens``
    (:func:`fit`).  Side effects, each only where it applies and never an
    error: ``export AUTOGRAPH_VAULT=...`` appended to ``$CLAUDE_ENV_FILE``
    once; the record ``.graph/sessions/<session_id>.json`` written under
    the vault (else the store), and records older than :data:`KEEP_DAYS`
    removed.  Stderr lines start
    ``session.py:``."""
    environ = os.environ if environ is None else environ
    try:
        data = hook_input(payload)
    except HookInputError as exc:
        return "", [f"session.py: {exc}; nothing to say"]
    event = data.get("hook_event_name")
    if event is not None and event != "SessionStart":
        return "", [f"session.py: start answers SessionStart, not {str(event)[:40]!r}; nothing to say"]
    place = locate(vault, store, schema, environ, _cwd(data))
    if place.root is None:
        return "", place.notes
    exported = _export(place, environ)
    sid, problem = session_id(data, environ)
    if problem:
        place.notes.append(problem)
    lines = fit(context_lines(place, scripts, exported, environ, _cwd(data)), place.budget * BYTES_PER_TOKEN)
    if sid is not None:
        _record_start(place, sid, data.get("source"))
    if not lines:
        return "", place.notes
    answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "\n".join(lines)}}
    return json.dumps(answer, ensure_ascii=False) + "\n", place.notes


def _new_runs(root: str, newest: str | None) -> tuple[int, list[str], int]:
    """``(runs that wrote, the vault paths they wrote, runs not readable)``
    of the journal since the run ``newest`` (run ids sort by time)."""
    names = [name for name in _runs(root) if newest is None or name > newest][-_SCAN_LIMIT:]
    if not names:
        return 0, [], 0
    from pathlib import Path

    from ..write.journal import load

    wrote, paths, damaged = 0, [], 0
    for name in names:
        try:
            run = load(Path(root) / _GRAPH, name)
        except (OSError, ValueError, KeyError, TypeError):
            damaged += 1
            continue
        if run.changes:
            wrote += 1
            for change in run.changes:
                if change.path not in paths:
                    paths.append(change.path)
    return wrote, paths, damaged


def _reason_text(record: dict, place: Place, wrote: int, paths: list[str], changed: bool, scripts: str) -> str:
    what = []
    if wrote:
        named = ", ".join(paths[:_SHOWN]) + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")
        notes = f"{len(paths)} file{'' if len(paths) == 1 else 's'}" if paths else "the vault"
        what.append(
            f"{wrote} autograph run{'' if wrote == 1 else 's'} wrote {notes}" + (f" ({named})" if paths else "")
        )
    index = record.get("index", {}).get("path") if isinstance(record.get("index"), dict) else None
    if changed and isinstance(index, str):
        what.append(f"the index {place.shown(index)} changed")
    check = shell_quote(os.path.join(scripts, "check.py"))
    if isinstance(index, str) and os.path.exists(index):
        target = shell_quote(index)
    elif place.vault:
        target = f"--vault {shell_quote(place.vault)}"
    else:
        target = ""
    command = f"python3 {check} {target}" if target else f"python3 {check}"
    return (
        f"autograph: checkpoint before you finish: since this session started, {' and '.join(what)}. "
        "Report to the user what you added, updated and retired (each card or note by name), then check the "
        f"index: {command}. (Asked once per session.)"
    )


def stop(
    payload: bytes | None,
    *,
    vault: str | None = None,
    store: str | None = None,
    plugin: bool = False,
    scripts: str,
    environ=None,
) -> tuple[str, list[str]]:
    """Answer a ``Stop`` hook: ``(stdout, stderr_lines)``.

    ``stdout`` is ``""`` (nothing to ask) or, once per session, one JSON
    object and a newline::

        {"decision": "block", "reason": "autograph: checkpoint before you finish: ..."}

    It asks only for a ``Stop`` event (not ``SubagentStop``, not a missing
    event), not while ``stop_hook_active`` is true (the agent is already
    continuing because of a Stop hook), for a session whose start was
    recorded (:func:`start`) in the vault (else the store) found as
    :func:`locate` finds it, not answered before, and only when since the
    start journaled runs wrote to the vault or the index's ``stat`` (size,
    mtime, inode) differs.  The record is marked ``checkpoint`` before it
    answers; a record that cannot be marked means no answer (never the same
    question at every stop).  ``plugin``: answer only when
    ``$CLAUDE_PLUGIN_OPTION_CHECKPOINT`` is ``true`` or ``1`` (the plugin's
    user option)."""
    environ = os.environ if environ is None else environ
    if plugin and environ.get(PLUGIN_OPTION) not in ("true", "1"):  # as hooks/unless-init.sh reads it
        return "", []
    try:
        data = hook_input(payload)
    except HookInputError as exc:
        return "", [f"session.py: {exc}; nothing to say"]
    if data.get("hook_event_name") != "Stop" or data.get("stop_hook_active") is True:
        return "", []
    sid, problem = session_id(data, environ)
    if sid is None:
        return "", [problem] if problem else []
    place = locate(vault, store, None, environ, _cwd(data), want=lambda root: _read_record(root, sid)[0] is not None)
    root = place.root
    if root is None:
        return "", []
    record, before = _read_record(root, sid)
    if record is None or record.get("checkpoint"):
        return "", []
    journal = record.get("journal") if isinstance(record.get("journal"), dict) else {}
    newest = journal.get("newest") if isinstance(journal.get("newest"), str) else None
    wrote, paths, damaged = _new_runs(root, newest)
    wrote += damaged
    index = record.get("index") if isinstance(record.get("index"), dict) else {}
    path = index.get("path") if isinstance(index.get("path"), str) else None
    changed = path is not None and _stat(path) != index.get("stat")
    if not wrote and not changed:
        return "", []
    record["checkpoint"] = {"time": _utc(), "runs": wrote, "index_changed": changed}
    try:
        _save(root, sid, record, before)
    except Exception as exc:  # unmarked, it would ask at every stop: it asks at none
        return "", [f"session.py: the session record cannot be marked ({_reason(exc)}); no checkpoint asked"]
    reason = _reason_text(record, place, wrote, paths, changed, scripts)
    return json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False) + "\n", []
