"""Index caps: size an always-loaded index as its host does, and judge a write.

An agent host loads one index file into every session and silently drops
what does not fit: Claude Code loads "the first 200 lines of MEMORY.md, or
the first 25KB, whichever comes first" (code.claude.com/docs/en/memory).
This module holds everything the cap depends on, and nothing else, so that
``guard.py`` (run before every write) imports only ``os`` and ``json``:

* **Counting** (:mod:`size`, in read/): lines and bytes as the host
  counts them (BR-35), and files opened so that a FIFO or a device never
  hangs the guard.
* **Caps** (:class:`Caps`, :func:`caps_from`): soft and hard caps for lines
  and bytes, and the compaction target, from the schema's ``index`` section,
  overridden by environment variables (:data:`ENV`) for hosts that load
  more.  Hard: over when *greater* than the cap (exactly 200 lines is loaded
  whole).  Soft: a warning once the size *reaches* the cap.  Target: the size
  every warning and deny asks the model to compact to.  The defaults are
  Claude Code's own (CLI 2.1.332): it loads 200 lines / 25KB, warns after a
  write from 160 lines or about 20,000 bytes, and asks for "under 140 lines",
  so the model gets one warning threshold and one target from both.
* **The file after a tool call** (:func:`after_call`): ``Write``, ``Edit``
  and ``MultiEdit`` (Claude Code) and the ``create``, ``str_replace`` and
  ``insert`` commands of a text-editor tool, applied to the current bytes.
  Each replacement's result size is worked out before it is built, so an
  edit that would grow the text past a limit raises :class:`TooLarge`
  instead of building it (40 ``replace_all`` edits can ask for gigabytes).
  Input the host itself rejects (a ``replace_all`` that is not a boolean,
  an ``insert_line`` that is not a line of the file, text that is not a
  string) raises :class:`InvalidCall`: the guard lets such a call through
  with a note, since it fails in the host anyway.
* **Codex's apply_patch**: a patch that may add, update, move and delete
  several files in one call; :mod:`patch` (imported only when such a call
  is seen) parses and applies it as Codex does, and the guard judges every
  index the patch would leave.  Codex's hook protocol is Claude Code's
  (same input fields, ``tool_name`` ``"apply_patch"`` with the patch text
  in ``tool_input.command``; it honours the same deny object), so there is
  one answer shape for both.
* **The decision** (:func:`judge`, :func:`review`): deny only when the
  result is over a hard cap **and** larger than the current file in that
  dimension, so compaction in steps is always allowed.  What the model
  should know (a soft cap reached, an index still over its cap, a schema
  that could not be used) goes back as ``additionalContext``.
* **Where it runs** (:func:`find_schema`, :func:`plugin_enabled`): the
  project's ``schema.json`` (given, else ``$CLAUDE_PROJECT_DIR``, else the
  hook's ``cwd``), and whether the autograph plugin is enabled (init.py
  then installs no hooks of its own).
"""

from __future__ import annotations

import json
import os

from ..read.size import (
    MEASURE_LIMIT,
    NotRegular,
    Size,
    loaded_lines,
    measure,
    measure_fd,
    measure_file,
    open_regular,
    read_regular,
)

__all__ = [
    "DEFAULT_FILES",
    "DEFAULT_HARD",
    "DEFAULT_SOFT",
    "DEFAULT_TARGET",
    "ENV",
    "ENV_FILES",
    "PREFIX",
    "UNREADABLE",
    "Caps",
    "CapsError",
    "InvalidCall",
    "Verdict",
    "TooLarge",
    "after_call",
    "caps_from",
    "check_file",
    "deny_reason",
    "find_schema",
    "index_names",
    "judge",
    "plugin_enabled",
    "read_current",
    "review",
    "tool_target",
]


# Claude Code's loader: 200 lines or 25 KB of MEMORY.md, whichever comes
# first (code.claude.com/docs/en/memory).  25,000 bytes is the stricter
# reading of "25KB".  The soft caps and the target are Claude Code's own
# (CLI 2.1.332): after a write to its memory index it says, from 160 lines or
# about 20,000 bytes, "Compact it to under 140 lines now"; 17,500 bytes is
# 140 lines' share of 20,000 bytes at 160 lines.
DEFAULT_SOFT = {"lines": 160, "bytes": 20000}
DEFAULT_HARD = {"lines": 200, "bytes": 25000}
DEFAULT_TARGET = {"lines": 140, "bytes": 17500}
DEFAULT_FILES = ["MEMORY.md"]

# Environment variables that override the schema, for hosts that load more.
ENV = {
    ("soft", "lines"): "AUTOGRAPH_INDEX_SOFT_LINES",
    ("soft", "bytes"): "AUTOGRAPH_INDEX_SOFT_BYTES",
    ("hard", "lines"): "AUTOGRAPH_INDEX_HARD_LINES",
    ("hard", "bytes"): "AUTOGRAPH_INDEX_HARD_BYTES",
    ("target", "lines"): "AUTOGRAPH_INDEX_TARGET_LINES",
    ("target", "bytes"): "AUTOGRAPH_INDEX_TARGET_BYTES",
}
# File names (base names, separated by commas) the guard treats as indexes.
ENV_FILES = "AUTOGRAPH_INDEX_FILES"

# Files larger than this are sized by streaming; an edit of one is not
# simulated (the guard then lets the call through and says why).
EDIT_LIMIT = 32 << 20


# The most the guard reads of a settings file (enabledPlugins).
SETTINGS_LIMIT = 16 << 20

# An edit is simulated only while its result stays within this many times
# the hard byte cap (or the current size, if larger); past that it is
# denied without being built.
SIMULATION_FACTOR = 10

# Every line the guard writes (the deny reason, additionalContext, stderr)
# starts with this, so the model and the user can tell it from the host's own
# notes about the index.
PREFIX = "autograph guard: "

# The Claude Code plugin that registers this guard too (enabledPlugins
# keys are "name@marketplace").
PLUGIN_NAME = "autograph"

DIMENSIONS = ("lines", "bytes")
DEFAULTS = {"soft": DEFAULT_SOFT, "hard": DEFAULT_HARD, "target": DEFAULT_TARGET}


class CapsError(ValueError):
    """A cap from the environment is not a positive whole number."""


# ---------------------------------------------------------------------------
# Caps


class Caps:
    """Soft and hard caps and the compaction target, in lines and bytes.

    ``soft``, ``hard``, ``target``: ``{"lines": int, "bytes": int}`` (bytes
    are UTF-8 bytes on disk).  ``over(size)`` names the dimensions over a hard
    cap (greater than it); ``near(size)`` those at or over a soft cap;
    ``target`` is the size to compact to once a soft cap is reached (default
    :data:`DEFAULT_TARGET`).  A soft cap above its hard cap is lowered to it,
    and a target above its soft cap to that: always target <= soft <= hard.
    ``sources`` maps ``"level.dimension"`` to the environment variable that
    set it.  Raises KeyError for a mapping without ``lines`` or ``bytes``,
    ValueError for a value that is not a whole number.
    """

    __slots__ = ("soft", "hard", "target", "sources")

    def __init__(self, soft: dict, hard: dict, sources: dict | None = None, target: dict | None = None):
        target = DEFAULT_TARGET if target is None else target
        self.hard = {d: int(hard[d]) for d in DIMENSIONS}
        self.soft = {d: min(int(soft[d]), self.hard[d]) for d in DIMENSIONS}
        self.target = {d: min(int(target[d]), self.soft[d]) for d in DIMENSIONS}
        self.sources = sources or {}

    def over(self, size: Size) -> list[str]:
        return [d for d in DIMENSIONS if size.get(d) > self.hard[d]]

    def near(self, size: Size) -> list[str]:
        return [d for d in DIMENSIONS if size.get(d) >= self.soft[d]]

    def target_text(self) -> str:
        """The target as the messages name it: ``"140 lines / 17,500 bytes"``."""
        return _pair(self.target)

    def as_dict(self) -> dict:
        """``{"soft": {"lines", "bytes"}, "hard": {...}, "target": {...},
        "sources": {...}}``; sources name an environment variable per
        overridden cap or target (``"target.lines"``: ...)."""
        return {
            "soft": dict(self.soft),
            "hard": dict(self.hard),
            "target": dict(self.target),
            "sources": dict(self.sources),
        }

    def __repr__(self) -> str:
        return f"Caps(soft={self.soft}, hard={self.hard}, target={self.target})"


def _pair(caps: dict) -> str:
    """``{"lines": 140, "bytes": 17500}`` as ``"140 lines / 17,500 bytes"``."""
    lines = caps["lines"]
    return f"{lines:,} line{'' if lines == 1 else 's'} / {caps['bytes']:,} bytes"


def _env_int(environ, name: str, example: int = 200) -> int | None:
    """The positive whole number in ``environ[name]``; None when unset or
    blank.  Raises :class:`CapsError` for anything else, suggesting
    ``example``."""
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise CapsError(
            f"{name}={raw!r} is not a positive whole number; set it to a number such as {example}, or unset it"
        )
    return value


def caps_from(section: dict | None = None, environ=None, strict: bool = True) -> tuple[Caps, list[str]]:
    """The caps in force: the environment (:data:`ENV`) over ``section`` (the
    schema's ``index`` object: ``soft`` and ``hard`` objects of ``lines`` and
    ``bytes``, and the flat ``target_lines`` and ``target_bytes``) over the
    defaults (soft 160 lines / 20,000 bytes, hard 200 / 25,000, target 140 /
    17,500).  A target above the soft cap is lowered to it (:class:`Caps`).

    Returns ``(caps, warnings)``, warnings a list of sentences.  A variable
    that is set but not a positive whole number raises :class:`CapsError`
    when ``strict``; otherwise it is ignored and named in ``warnings`` (the
    guard never blocks on a typo).
    """
    environ = os.environ if environ is None else environ
    section = section or {}
    values = {
        level: {**defaults, **{d: v for d, v in (section.get(level) or {}).items() if d in DIMENSIONS}}
        for level, defaults in (("soft", DEFAULT_SOFT), ("hard", DEFAULT_HARD))
    }
    values["target"] = {d: section.get(f"target_{d}", DEFAULT_TARGET[d]) for d in DIMENSIONS}
    sources: dict[str, str] = {}
    warnings: list[str] = []
    for (level, dimension), name in ENV.items():
        try:
            value = _env_int(environ, name, DEFAULTS[level][dimension])
        except CapsError as exc:
            if strict:
                raise
            warnings.append(f"{exc}; using {values[level][dimension]}")
            continue
        if value is not None:
            values[level][dimension] = value
            sources[f"{level}.{dimension}"] = name
    return Caps(values["soft"], values["hard"], sources, values["target"]), warnings


def index_names(files: list[str] | None = None, environ=None) -> set[str]:
    """Lower-cased base names of the index files: ``$AUTOGRAPH_INDEX_FILES``
    (comma-separated) if set, else ``files`` (the schema's ``index.files``),
    else ``MEMORY.md``."""
    environ = os.environ if environ is None else environ
    raw = environ.get(ENV_FILES, "")
    names = [part.strip() for part in raw.split(",") if part.strip()] or files or DEFAULT_FILES
    return {name.replace("\\", "/").rsplit("/", 1)[-1].lower() for name in names}


# ---------------------------------------------------------------------------
# The file after a tool call

WRITE_TOOLS = ("Write", "Edit", "MultiEdit")
EDITOR_COMMANDS = ("create", "str_replace", "insert")
# Codex: its patch tool, and its shell tools (all "Bash" in hook input), which
# it runs as a patch when the command is ``apply_patch <<'EOF' ... EOF``
# (codex-rs/core/src/tools/hook_names.rs, codex-rs/apply-patch/src/lib.rs).
PATCH_TOOLS = ("apply_patch",)
SHELL_TOOLS = ("Bash",)


def tool_target(tool_name, tool_input) -> tuple[str, str] | None:
    """``(path, operation)`` of a call that writes a file, else None.

    Operations: ``write``, ``edit``, ``multiedit`` (Claude Code's ``Write``,
    ``Edit``, ``MultiEdit``, path in ``file_path``), and ``create``,
    ``str_replace``, ``insert`` (a text-editor tool: any tool whose input has
    one of those ``command``\\ s and a ``path``).  Reads (``view``), undo and
    every other tool give None.  A write tool without a text path gives
    ``("", operation)``.

    ``("", "apply_patch")``: Codex's ``apply_patch`` tool (the patch text in
    ``tool_input.command``; the files are in the patch), or a ``Bash``
    command that runs ``apply_patch``/``applypatch`` on a ``*** Begin
    Patch`` text (Codex applies it as a patch); :mod:`patch` reads it.
    """
    if not isinstance(tool_input, dict):
        return None
    if tool_name in PATCH_TOOLS:
        return ("", "apply_patch")
    if tool_name in SHELL_TOOLS:
        command = tool_input.get("command")
        if isinstance(command, list):
            command = " ".join(part for part in command if isinstance(part, str))
        if isinstance(command, str) and "*** Begin Patch" in command and "apply" in command:
            if "apply_patch" in command or "applypatch" in command:
                return ("", "apply_patch")
    if tool_name in WRITE_TOOLS:
        path = tool_input.get("file_path")
        return (path if isinstance(path, str) else "", tool_name.lower())
    command = tool_input.get("command")
    if isinstance(command, str) and command in EDITOR_COMMANDS and "path" in tool_input:
        path = tool_input.get("path")
        return (path if isinstance(path, str) else "", command)
    return None


class InvalidCall(ValueError):
    """Tool input the host rejects before it writes anything (Claude Code
    validates every call against the tool's schema; the text-editor tool
    refuses a line number that is not in the file): the message says which
    field is wrong."""


def _field(tool_input: dict, *names: str) -> str:
    """The text of the first of ``names`` present in ``tool_input`` (``""``
    when none is); a value of another type (a number, null, a list) is an
    :class:`InvalidCall`."""
    for name in names:
        if name in tool_input:
            value = tool_input[name]
            if isinstance(value, str):
                return value
            raise InvalidCall(f"{name} is {_shown(value)}, not a string")
    return ""


def _replace_all(tool_input: dict) -> bool:
    """Only the JSON boolean ``true`` replaces every occurrence; absent is
    false; anything else (``"false"``, ``1``, null) is an invalid call, which
    Claude Code rejects ("expected boolean") before the edit runs."""
    value = tool_input.get("replace_all", False)
    if isinstance(value, bool):
        return value
    raise InvalidCall(f"replace_all is {_shown(value)}, not true or false")


def _shown(value) -> str:
    """A wrong value as a note shows it, short."""
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"a number of {len(str(abs(value)))} digits"
    text = json.dumps(value[:40] if isinstance(value, str) else value, ensure_ascii=False)
    return f"the string {text}" + ("..." if len(value) > 40 else "") if isinstance(value, str) else text


class TooLarge(Exception):
    """An edit's result would be at least ``size`` characters (so at least
    that many UTF-8 bytes), past the simulation limit; ``step`` is the
    1-based number of the edit in a MultiEdit (0 for a single edit)."""

    def __init__(self, size: int, step: int = 0):
        super().__init__(f"the result would be at least {size:,} bytes")
        self.size = size
        self.step = step


def _check_size(size: int, limit: int | None) -> None:
    if limit is not None and size > limit:
        raise TooLarge(size)


def _replace(text: str, old: str, new: str, replace_all: bool, limit: int | None = None) -> str:
    """One Edit: replace ``old`` (every occurrence with ``replace_all``, else the
    first).  An ``old`` that is not in the text leaves it unchanged (the host
    refuses such an edit).  On a CRLF file an ``old`` written with LF matches
    the CRLF text, as Claude Code's Edit does, and the result keeps CRLF.

    With ``limit`` (characters), the result's length is counted first
    (occurrences times the growth of each) and :class:`TooLarge` raised,
    without building it, when it would be longer."""
    if not old:
        return new if text == "" else text  # an empty old_string creates a new file
    if old in text:
        count = text.count(old) if replace_all else 1
        _check_size(len(text) + count * (len(new) - len(old)), limit)
        return text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if "\r\n" in text and "\n" in old and "\r\n" not in old:
        flat = text.replace("\r\n", "\n")
        if old in flat:
            count = flat.count(old) if replace_all else 1
            # the CRLF result is at least as long as the flat one, and at most twice
            _check_size(len(flat) + count * (len(new) - len(old)), limit)
            flat = flat.replace(old, new) if replace_all else flat.replace(old, new, 1)
            return flat.replace("\r\n", "\n").replace("\n", "\r\n")
    return text


def _line_number(value) -> int | None:
    """``insert_line`` as a whole number: an int, a float without a
    fraction (JSON ``3.0``) or a short string of digits; None for anything
    else (NaN, Infinity, 1.5, true, null, other text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None  # False for NaN and the infinities
    if isinstance(value, str) and len(value) < 20 and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


def _insert(text: str, value, new: str) -> str:
    """A text-editor ``insert``: ``new`` as whole lines after line ``value``
    (0 = before the first).  A line number that is not a whole number from
    0 to the file's line count raises :class:`InvalidCall` (the tool
    refuses it and writes nothing)."""
    lines = text.split("\n")
    line = _line_number(value)
    if line is None:
        raise InvalidCall(f"insert_line is {_shown(value)}, not a line number")
    if not 0 <= line <= len(lines):
        raise InvalidCall(f"insert_line is {_shown(line)}, not a line of the file (0 to {len(lines):,})")
    return "\n".join(lines[:line] + new.split("\n") + lines[line:])


def after_call(operation: str, tool_input: dict, current: bytes, limit: int | None = None) -> bytes:
    """The file's bytes after the call, from its ``current`` bytes (``b""``
    for a file that does not exist yet).

    ``write``/``create``: the new content (``content``, or ``file_text``).
    ``edit``: ``old_string`` -> ``new_string``, the first occurrence or all
    with ``replace_all`` (BR-35).  ``multiedit``: the ``edits`` in order, each
    on the result of the one before; an edit that cannot apply is skipped and
    the rest still judged (the larger prediction is the safe one).
    ``str_replace``: ``old_str`` -> ``new_str``.  ``insert``: ``new_str`` (or
    ``insert_text``) after line ``insert_line``.  Text that is not UTF-8 is
    kept byte for byte (surrogate escapes), so the byte count stays true.

    ``limit`` (characters): an edit whose result would be longer raises
    :class:`TooLarge` before it is built (``step`` says which edit of a
    MultiEdit); so simulating never needs more than a few times ``limit``
    of memory, whatever the edits ask for.

    Input the host rejects raises :class:`InvalidCall`: a text field that
    is there but not a string, a ``replace_all`` that is not a boolean,
    ``edits`` that are not a list of objects, an ``insert_line`` that is not
    a line number of the file.  (Only the boolean ``true`` replaces all.)
    """
    if operation in ("write", "create"):
        return _encode(_field(tool_input, "content", "file_text"))
    text = current.decode("utf-8", "surrogateescape")
    if operation == "edit":
        old, new, every = _field(tool_input, "old_string"), _field(tool_input, "new_string"), _replace_all(tool_input)
        text = _replace(text, old, new, every, limit)
    elif operation == "multiedit":
        edits = tool_input.get("edits", [])
        if not isinstance(edits, list) or not all(isinstance(edit, dict) for edit in edits):
            raise InvalidCall(f"edits is {_shown(edits)}, not a list of edits")
        steps = [
            (step, _field(edit, "old_string"), _field(edit, "new_string"), _replace_all(edit))
            for step, edit in enumerate(edits, 1)
        ]  # the whole input is checked before any edit is simulated, as the host does
        for step, old, new, every in steps:
            try:
                text = _replace(text, old, new, every, limit)
            except TooLarge as exc:
                exc.step = step
                raise
    elif operation == "str_replace":
        text = _replace(text, _field(tool_input, "old_str"), _field(tool_input, "new_str"), False, limit)
    elif operation == "insert":
        text = _insert(text, tool_input.get("insert_line"), _field(tool_input, "new_str", "insert_text"))
    return _encode(text)


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate from a JSON \ud800 escape
        return text.encode("utf-8", "replace")


# ---------------------------------------------------------------------------
# The decision


class _Unreadable:
    """Marker: the current file exists but cannot be read (or is too large to
    simulate an edit on)."""

    __slots__ = ("reason", "special")

    def __init__(self, reason: str, special: bool = False):
        self.reason = reason
        self.special = special  # not a regular file (a FIFO, a device) or too large to size

    def __repr__(self) -> str:
        return f"UNREADABLE({self.reason!r})"


UNREADABLE = _Unreadable


def read_current(path: str, need_bytes: bool) -> bytes | Size | _Unreadable:
    """What the guard needs of the current file at ``path``.

    ``need_bytes`` (an edit is simulated on the text): its bytes, or an
    :data:`UNREADABLE` marker when it is over 32 MiB.  Otherwise (a whole
    file write) its :class:`Size`, streamed.  A file that does not exist is
    ``b""`` (a new index, size 0); one that exists but cannot be read (a
    folder, no permission) is an :data:`UNREADABLE` marker, and so is one
    that is not a regular file (a FIFO, a device: never read, so never
    waited on) or too large to size, with ``special`` set.
    """
    try:
        if not need_bytes:
            return measure_file(path)
        size = os.stat(path).st_size
        if size > EDIT_LIMIT:
            return _Unreadable(f"it is {size:,} bytes, too large to simulate an edit on")
        return read_regular(path, EDIT_LIMIT)
    except (FileNotFoundError, NotADirectoryError):
        return b""  # no such file yet (or a parent is a file: the write itself will fail)
    except NotRegular as exc:
        return _Unreadable(f"it {exc}", special=True)
    except (OSError, MemoryError) as exc:
        return _Unreadable(getattr(exc, "strerror", None) or exc.__class__.__name__)


class Verdict:
    """What the guard decides about one call.

    ``deny`` is True when the result is over a hard cap and larger than the
    current file in that dimension; ``grown`` names those dimensions;
    ``over`` the result's dimensions over a hard cap; ``near`` those at or
    over a soft cap; ``before`` and ``after`` are :class:`Size` (``before``
    None when the current file could not be read).
    """

    __slots__ = ("deny", "grown", "over", "near", "before", "after")

    def __init__(self, before: Size | None, after: Size, caps: Caps):
        self.before = before
        self.after = after
        self.over = caps.over(after)
        self.near = caps.near(after)
        self.grown = [] if before is None else [d for d in self.over if after.get(d) > before.get(d)]
        self.deny = bool(self.grown)


def judge(before: Size | None, after: Size, caps: Caps) -> Verdict:
    """Deny only a result over a hard cap **and** larger than ``before`` in
    that dimension; ``before = None`` (current file unreadable) never denies.
    Shrinking, or keeping the size, is always allowed, over the cap or not."""
    return Verdict(before, after, caps)


def _amount(size: Size, dimension: str) -> str:
    value = size.get(dimension)
    return f"{value:,} line{'' if value == 1 else 's'}" if dimension == "lines" else f"{value:,} bytes"


_HOW = (
    "keep one short line per entry (- [Title](note.md) — hook), move detail into the topic file, "
    "merge related entries, move retired ones to archive/"
)


def _compact(caps: Caps) -> str:
    """How to compact, with the target (the deny's advice)."""
    return (
        f"Compact it first, to under {caps.target_text()}: {_HOW}. "
        "Edits that shrink the index are always allowed, so compact in steps."
    )


def _now(before: Size) -> str:
    if before == (0, 0):
        return "it does not exist yet"
    return f"it has {_amount(before, 'lines')} and {_amount(before, 'bytes')} now"


def _tail(name: str, caps: Caps) -> str:
    return (
        f"The host loads only the first {caps.hard['lines']:,} lines or {caps.hard['bytes']:,} bytes "
        f"of this index and silently drops the rest. {_compact(caps)} "
        f'(If {name} is not an always-loaded index, list the index names in schema.json "index.files", '
        f"or set {ENV_FILES}.)"
    )


def deny_reason(name: str, verdict: Verdict, caps: Caps) -> str:
    """The reason shown to the agent, one line starting ``autograph guard:``:
    which cap (lines or bytes), the counts after the call and now, the caps,
    the target to compact to (:attr:`Caps.target`) and how."""
    parts = [f"{_amount(verdict.after, d)} (limit {caps.hard[d]:,})" for d in verdict.grown]
    verb = "have" if verdict.grown[0] == "lines" else "be"
    return f"{PREFIX}{name} would {verb} {' and '.join(parts)}; {_now(verdict.before)}. {_tail(name, caps)}"


def too_large_reason(name: str, error: TooLarge, before: Size, caps: Caps, operation: str) -> str:
    """The reason for an edit denied without building its result, one line
    starting ``autograph guard:``."""
    where = f"edit {error.step} of this MultiEdit" if error.step else f"this {operation}"
    return (
        f"{PREFIX}{name} would be at least {error.size:,} bytes (limit {caps.hard['bytes']:,}) after {where}, "
        f"more than {SIMULATION_FACTOR} times its byte cap; {_now(before)}. "
        f"Check the edits (a replace_all whose new text holds its old text grows on every run). "
        f"{_tail(name, caps)}"
    )


def find_schema(environ, cwd: str | None = None) -> str | None:
    """The project's ``schema.json``: ``$CLAUDE_PROJECT_DIR/schema.json``,
    else ``cwd/schema.json`` (the hook input's ``cwd``), if it is a file."""
    for folder in (environ.get("CLAUDE_PROJECT_DIR"), cwd):
        if isinstance(folder, str) and folder:
            candidate = os.path.join(folder, "schema.json")
            if os.path.isfile(candidate):
                return candidate
    return None


def plugin_enabled(environ, project: str | None = None) -> str | None:
    """The settings file that enables the autograph Claude Code plugin
    (``enabledPlugins`` holds ``"autograph@<marketplace>": true``), or None.

    Read as Claude Code merges them: ``project/.claude/settings.local.json``
    over ``project/.claude/settings.json`` over the user's
    ``$CLAUDE_CONFIG_DIR/settings.json`` (``~/.claude/settings.json``); the
    first that names the plugin decides.  ``project``:
    ``$CLAUDE_PROJECT_DIR`` when set.  Unreadable files (and a FIFO or
    device of that name) are passed over."""
    project = environ.get("CLAUDE_PROJECT_DIR") or project
    paths = []
    if project:
        paths += [
            os.path.join(project, ".claude", "settings.local.json"),
            os.path.join(project, ".claude", "settings.json"),
        ]
    home = environ.get("HOME") or os.path.expanduser("~")
    paths.append(os.path.join(environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "settings.json"))
    for path in paths:
        try:  # never blocks on a FIFO; a BOM is skipped, as Claude Code's CLI does
            data = json.loads(read_regular(path, SETTINGS_LIMIT).decode("utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            continue
        plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
        if not isinstance(plugins, dict):
            continue
        named = [on for key, on in plugins.items() if isinstance(key, str) and key.split("@", 1)[0] == PLUGIN_NAME]
        if named:
            return path if any(on is True for on in named) else None
    return None


def _answer(reason: str | None, context: list[str]) -> str:
    """The hook's stdout: nothing, or one ``hookSpecificOutput`` object with
    a deny and/or ``additionalContext`` (never an allow: that would skip the
    user's own permission rules)."""
    if reason is None and not context:
        return ""
    spec: dict = {"hookEventName": "PreToolUse"}
    if reason is not None:
        spec["permissionDecision"] = "deny"
        spec["permissionDecisionReason"] = reason
    if context:
        spec["additionalContext"] = "\n".join(context)
    return json.dumps({"hookSpecificOutput": spec})


def _invalid_note(name: str, tool: str, exc: InvalidCall) -> str:
    return (
        f"{PREFIX}this {tool} call on {name} is not valid input ({exc}); the host rejects it without writing, "
        f"so it is allowed without a size check"
    )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 400 else text[:400] + "..."


def review(
    payload: bytes,
    environ=None,
    files: list[str] | None = None,
    section: dict | None = None,
    *,
    schema: str | None = None,
    load=None,
) -> tuple[str, list[str]]:
    """Review one PreToolUse hook input (the JSON Claude Code writes to the
    hook's stdin) and return ``(stdout, stderr_lines)``.

    ``stdout`` is ``""`` to allow silently (the call goes ahead as if there
    were no hook), or one JSON object (Claude Code 2.1.9+)::

        {"hookSpecificOutput": {"hookEventName": "PreToolUse",
          "permissionDecision": "deny", "permissionDecisionReason": "...",
          "additionalContext": "..."}}

    with ``permissionDecision``/``permissionDecisionReason`` only to deny
    and ``additionalContext`` only when there is something the model should
    know: a soft cap reached by a write that grows the index, an index that
    stays over its hard cap, a size that could not be checked, a schema that
    could not be used.  It never says ``allow`` (that would skip the user's
    own permission rules).  The stderr lines say the same for the user.
    Every message (the deny reason, each line of ``additionalContext``, each
    stderr line) is one line starting :data:`PREFIX` (``autograph guard:``);
    the soft-cap note, the over-cap note and the deny name the target to
    compact to (:attr:`Caps.target`).

    Reads, other tools and files that are not an index (base name, or the
    base name of what the path resolves to through symlinks and ``..``, in
    :func:`index_names`, case-insensitive) pass silently.  Malformed input
    passes with one line on stderr.  A missing index is sized as empty; an
    unreadable one never blocks.

    The index names and caps: ``files``/``section`` when given; else, with a
    ``load`` function (path -> ``(files, section)``), the schema at
    ``schema``, else the project's (:func:`find_schema`).  A schema that
    cannot be loaded never blocks: the built-in names and caps are used and
    the output says so.  Environment variables override them.
    """
    environ = os.environ if environ is None else environ
    notes: list[str] = []
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return "", [f"{PREFIX}hook input is not JSON ({exc.__class__.__name__}); the call is allowed unchecked"]
    if not isinstance(data, dict):
        return "", [f"{PREFIX}hook input is not a JSON object; the call is allowed unchecked"]
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        if data.get("tool_name") in WRITE_TOOLS:
            return "", [f"{PREFIX}hook input has no tool_input object; the call is allowed unchecked"]
        return "", []
    target = tool_target(data.get("tool_name"), tool_input)
    if target is None:
        return "", []
    path, operation = target
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) and data.get("cwd") else None
    if operation == "apply_patch":
        files, section = _index_settings(files, section, environ, cwd, schema, load, notes)
        return _review_patch(data, tool_input, cwd, files, section, environ, notes)
    if not path:
        return "", [f"{PREFIX}{data.get('tool_name')} input names no file path; the call is allowed unchecked"]
    files, section = _index_settings(files, section, environ, cwd, schema, load, notes)
    full = path if os.path.isabs(path) else os.path.join(cwd or os.getcwd(), path)
    real = os.path.realpath(full)
    name = _index_display(path, real, index_names(files, environ))
    if name is None:
        return _answer(None, notes), notes
    caps, warnings = caps_from(section, environ, strict=False)
    notes += [PREFIX + w for w in warnings]
    whole = operation not in ("write", "create")
    tool = data.get("tool_name") if isinstance(data.get("tool_name"), str) else operation
    current = read_current(real, need_bytes=whole)
    if isinstance(current, _Unreadable):
        if whole:
            notes.append(
                f"{PREFIX}{name} cannot be read ({current.reason}); the {operation} is allowed without checking "
                f"its size; run check.py on it"
            )
            return _answer(None, notes), notes
        try:
            after = measure(after_call(operation, tool_input, b""))
        except InvalidCall as exc:
            notes.append(_invalid_note(name, tool, exc))
            return _answer(None, notes), notes
        verdict = judge(None, after, caps)
        if verdict.over:
            notes.append(
                f"{PREFIX}{name} cannot be read ({current.reason}); the write is allowed unchecked, "
                f"but its result is over the hard cap ({_amount(after, 'lines')}, {_amount(after, 'bytes')})"
            )
        elif current.special:
            notes.append(f"{PREFIX}{name} cannot be read ({current.reason}); the write is allowed unchecked")
        return _answer(None, notes), notes
    before = current if isinstance(current, Size) else measure(current)
    limit = max(SIMULATION_FACTOR * caps.hard["bytes"], before.bytes)
    try:
        after = measure(after_call(operation, tool_input, current if isinstance(current, bytes) else b"", limit))
    except TooLarge as exc:
        return _answer(too_large_reason(name, exc, before, caps, tool), notes), notes
    except InvalidCall as exc:
        notes.append(_invalid_note(name, tool, exc))
        return _answer(None, notes), notes
    verdict = judge(before, after, caps)
    if verdict.deny:
        return _answer(deny_reason(name, verdict, caps), notes), notes
    notes += _allowed_notes(name, verdict, caps)
    return _answer(None, notes), notes


def _index_settings(files, section, environ, cwd, schema, load, notes: list[str]):
    """The index names and ``index`` section in force: ``files``/``section``
    when given, else the schema's (through ``load``), else the built-in
    ones; a schema that cannot be used adds a note (never blocks)."""
    if files is None and section is None and load is not None:
        found = schema or find_schema(environ, cwd)
        if found:
            try:
                files, section = load(found)
            except Exception as exc:  # any failure: the built-in caps, never a blocked write
                notes.append(
                    f"{PREFIX}the schema {found} cannot be used ({_one_line(exc)}); the index guard uses the "
                    f"built-in index names ({', '.join(DEFAULT_FILES)}) and caps ({DEFAULT_HARD['lines']} lines / "
                    f"{DEFAULT_HARD['bytes']:,} bytes) until it is fixed"
                )
    return files, section


def _index_display(path: str, real: str, names: set[str], as_written: bool = False) -> str | None:
    """How the messages name the file at ``path`` (resolved to ``real``)
    when it is an index (its base name, or the base name of what it
    resolves to, in ``names``), else None.  The base name, or with
    ``as_written`` the path as the call wrote it (a patch may name two
    indexes of one name)."""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    shown = path if as_written else name
    if name.lower() in names:
        return shown
    real_name = os.path.basename(real)
    if real_name.lower() in names:
        return f"{shown} (the index {real_name})"
    return None


def _allowed_notes(name: str, verdict: Verdict, caps: Caps) -> list[str]:
    """What the model should know about an allowed call: the index stays
    over its hard cap, or it grew to its soft cap."""
    after, before = verdict.after, verdict.before
    hard = f"{caps.hard['lines']:,} lines / {caps.hard['bytes']:,} bytes"
    if verdict.over:
        return [
            f"{PREFIX}{name} stays over its hard cap ({hard}) after this call, at {_amount(after, 'lines')} and "
            f"{_amount(after, 'bytes')}: the host drops everything past the cap. Allowed because it does not "
            f"grow; keep compacting, to under {caps.target_text()}: {_HOW}."
        ]
    if [d for d in verdict.near if after.get(d) > before.get(d)]:
        return [
            f"{PREFIX}{name} is at its soft cap after this call, at {_amount(after, 'lines')} and "
            f"{_amount(after, 'bytes')} (soft cap {caps.soft['lines']:,} lines / {caps.soft['bytes']:,} bytes, "
            f"hard cap {hard}); compact it to under {caps.target_text()} now: {_HOW}."
        ]
    return []


# ---------------------------------------------------------------------------
# Codex's apply_patch


class _Unchecked(Exception):
    """A file the patch needs cannot be read: the call passes unchecked."""

    def __init__(self, name: str, reason: str):
        super().__init__(reason)
        self.name = name
        self.reason = reason


def _rejected_note(error: Exception) -> str:
    return (
        f"{PREFIX}this apply_patch call cannot be applied ({_one_line(error)}); the host rejects it without "
        "writing, so it is allowed without a size check"
    )


def _review_patch(data: dict, tool_input: dict, cwd, files, section, environ, notes: list[str]):
    """Judge every index a Codex ``apply_patch`` call would leave
    (:func:`review`'s answer for it): an index grown past a hard cap (by an
    Update, an Add, or a file moved onto it, judged against the index there
    now) is denied; one that shrinks, stays or is deleted passes; a patch
    that touches no index passes silently; a patch Codex rejects (it does
    not parse, a hunk is not in its file) passes with a note unless what
    comes before the failing operation already grows an index past its cap.
    Results are sized before they are built (:data:`SIMULATION_FACTOR`) and
    hunk searches are bounded (:class:`patch.Budget`): past either, deny."""
    from . import patch  # only when an apply_patch call is seen: the guard stays light

    found = patch.invocation(data.get("tool_name"), tool_input)
    if found is None:  # a shell command that is not a patch after all
        return _answer(None, notes), notes
    text, workdir = found
    names = index_names(files, environ)
    try:
        ops = patch.parse(text)
    except patch.PatchError as exc:
        if not text.strip() or any(name in text.lower() for name in names):  # no text, or it may name an index
            notes.append(_rejected_note(exc))
        return _answer(None, notes), notes
    base = cwd or os.getcwd()
    if workdir:
        base = os.path.join(base, workdir)
    keys: dict[str, str] = {}
    shown: dict[str, str] = {}  # resolved path of each index the patch touches -> its name in messages

    def key(path: str) -> str:
        if path not in keys:
            full = path if os.path.isabs(path) else os.path.join(base, path)
            keys[path] = real = os.path.realpath(full)
            display = _index_display(path, real, names, as_written=True)
            if display is not None:
                shown.setdefault(real, display)
        return keys[path]

    for op in ops:
        key(op.path)
        if op.move_to is not None:
            key(op.move_to)
    if not shown:
        return _answer(None, notes), notes
    caps, warnings = caps_from(section, environ, strict=False)
    notes += [PREFIX + w for w in warnings]
    disk: dict[str, bytes | _Unreadable | None] = {}

    def load(k: str):
        if k not in disk:
            disk[k] = read_current(k, need_bytes=True) if os.path.exists(k) else None
        return disk[k]

    def read(k: str) -> str | None:
        raw = load(k)
        if isinstance(raw, _Unreadable):
            raise _Unchecked(shown.get(k, k), raw.reason)
        if raw is None:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise patch.PatchError(f"{shown.get(k, k)} is not UTF-8 text, which the host cannot update") from None

    def limit() -> int:
        sizes = [len(raw) for raw in disk.values() if isinstance(raw, bytes)]
        return max([SIMULATION_FACTOR * caps.hard["bytes"], *sizes])

    def before_of(k: str) -> Size | None:
        raw = disk[k] if k in disk else (read_current(k, need_bytes=False) if os.path.exists(k) else b"")
        if isinstance(raw, _Unreadable):
            return None
        return raw if isinstance(raw, Size) else measure(raw or b"")

    try:
        after, error = patch.simulate(ops, key, shown.__contains__, read, limit)
    except _Unchecked as exc:
        notes.append(
            f"{PREFIX}{exc.name} cannot be read ({exc.reason}); the apply_patch is allowed without checking its "
            "size; run check.py on it"
        )
        return _answer(None, notes), notes
    except patch.Oversize as exc:
        k = key(exc.path)
        name = shown.get(k, exc.path)
        too_large = TooLarge(exc.size)
        return _answer(too_large_reason(name, too_large, before_of(k) or Size(0, 0), caps, "apply_patch"), notes), notes
    except patch.TooCostly as exc:
        name = shown.get(key(exc.path), exc.path)
        reason = (
            f"{PREFIX}this apply_patch call on {name} is too costly to check: {exc}. The guard denies it rather "
            "than let it through unchecked; send the change as smaller patches, each hunk with a few lines of "
            f"context. {_tail(name, caps)}"
        )
        return _answer(reason, notes), notes
    reasons = []
    for k, new in after.items():
        if new is None:  # deleted, or moved away: nothing is loaded from it any more
            continue
        name, before = shown[k], before_of(k)
        result = measure(_encode(new))
        verdict = judge(before, result, caps)
        if verdict.deny:
            reasons.append(deny_reason(name, verdict, caps))
        elif before is None:
            if verdict.over:
                notes.append(
                    f"{PREFIX}{name} cannot be read now; the apply_patch is allowed unchecked, but its result is over "
                    f"the hard cap ({_amount(result, 'lines')}, {_amount(result, 'bytes')})"
                )
        else:
            notes += _allowed_notes(name, verdict, caps)
    if reasons:
        return _answer(" ".join(reasons), notes), notes
    if error is not None:
        notes.append(_rejected_note(error))
    return _answer(None, notes), notes


# ---------------------------------------------------------------------------
# Checking an index file (check.py, doctor.py)


def check_file(path: str | os.PathLike, caps: Caps) -> dict:
    """Size one index file against ``caps``.

    Returns ``{"lines", "bytes", "loaded_lines", "status", "over", "near"}``:
    ``status`` is ``"over"`` (a hard cap exceeded: the host drops the rest),
    ``"soft"`` (at or over a soft cap) or ``"ok"``; ``over``/``near`` name
    the dimensions; ``loaded_lines`` is how many whole lines the host loads
    (all of them unless over).  The file is streamed, and only its first
    ``hard bytes`` are read to find ``loaded_lines``.  Raises OSError when the
    file cannot be read, :class:`NotRegular` (an OSError naming what it is)
    for a FIFO, a device or a file over :data:`MEASURE_LIMIT` bytes: it is
    opened without blocking and never read without end.
    """
    fd = open_regular(path)
    try:
        size = measure_fd(fd, 1 << 20, MEASURE_LIMIT)
        head = os.pread(fd, caps.hard["bytes"] + 1, 0)
    finally:
        os.close(fd)
    over, near = caps.over(size), caps.near(size)
    loaded = loaded_lines(head, caps.hard["lines"], caps.hard["bytes"]) if over else size.lines
    return {
        "lines": size.lines,
        "bytes": size.bytes,
        "loaded_lines": loaded,
        "status": "over" if over else "soft" if near else "ok",
        "over": over,
        "near": near,
    }
