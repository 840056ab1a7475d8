"""Codex's ``apply_patch``: its envelope parsed, and applied to text as Codex applies it.

Codex (the OpenAI CLI) edits files with one tool, ``apply_patch``, whose
input is a patch in its own envelope::

    *** Begin Patch
    *** Add File: PATH          every following line starts with "+"
    *** Delete File: PATH
    *** Update File: PATH
    *** Move to: NEWPATH        optional, right after Update File
    @@ optional context line    a hunk: " " context, "-" removed, "+" added
    *** End of File             optional: the hunk ends the file
    *** End Patch

The index guard (:mod:`caps`) imports this module only when a hook input
is an ``apply_patch`` call, to work out what every index would hold after
it.  Everything here mirrors Codex's own crate, ``codex-rs/apply-patch`` of
github.com/openai/codex: ``parser.rs`` (the grammar and its leniencies),
``lib.rs`` (``compute_replacements``, ``maybe_parse_apply_patch``),
``seek_sequence.rs`` (how a hunk is found: exact, then ignoring trailing
whitespace, then trimmed, then with typographic punctuation folded to
ASCII) and ``text_file.rs`` (each line keeps its own LF or CRLF, new lines
take the file's first ending, the result always ends with one); and it was
checked against the ``apply_patch`` of ``@openai/codex`` 0.171.0 itself
(``codex --codex-run-as-apply-patch PATCH`` in a scratch folder).

* :func:`invocation`: the patch text of a hook input (``tool_input.command``
  of ``apply_patch``, or of ``Bash`` running ``apply_patch <<'EOF' ...``).
* :func:`parse`: the patch as :class:`FileOp` s, or :class:`PatchError`
  (Codex rejects the call and writes nothing).
* :func:`apply_update`: an Update's hunks applied to a file's text.
* :func:`simulate`: the whole patch run over the files that matter, in
  order, as Codex writes them.

Standard library only; no file is read here (:func:`simulate` gets a
reader).  A hostile patch cannot make it build a large text or search for
ever: results are sized before they are built (:class:`Oversize`) and hunk
searches spend a :class:`Budget` (:class:`TooCostly`).
"""

from __future__ import annotations

import bisect
import os
import re

__all__ = [
    "PATCH_TOOLS",
    "SHELL_TOOLS",
    "Budget",
    "Chunk",
    "FileOp",
    "Oversize",
    "PatchError",
    "TooCostly",
    "apply_update",
    "invocation",
    "parse",
    "simulate",
]

# The hook's tool_name for Codex's patch tool, and for its shell tools (every
# shell-like tool is "Bash" in hook input: codex-rs/core/src/tools/hook_names.rs).
PATCH_TOOLS = ("apply_patch",)
SHELL_TOOLS = ("Bash",)
# The commands Codex recognises as apply_patch (lib.rs APPLY_PATCH_COMMANDS).
COMMANDS = ("apply_patch", "applypatch")

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARKER = "*** End of File"

# Rust's char::is_whitespace (Unicode White_Space), which str::trim uses;
# Python's str.strip() also strips \x1c-\x1f, which Rust keeps.
WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

# seek_sequence.rs, last pass: dashes, quotes and odd spaces folded to ASCII.
_FOLD = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000",
            " ",
        ),
    }
)

# Line comparisons one guard run may spend locating hunks (each candidate
# position costs the hunk's length).  A real index (a few hundred lines)
# needs thousands; a hostile patch is stopped long before a second passes.
DEFAULT_BUDGET = 5_000_000


class PatchError(ValueError):
    """A patch Codex rejects without writing anything: it does not parse
    (the message is Codex's own ``invalid patch: ...`` / ``invalid hunk at
    line N, ...``), or an Update's hunk is not in the file (``Failed to find
    expected lines in PATH``), or the file to update or delete is missing
    or not UTF-8."""


class Oversize(Exception):
    """A result would be at least ``size`` characters, past the caller's
    limit; it was not built.  ``path`` is the file as the patch names it."""

    def __init__(self, size: int, path: str = ""):
        super().__init__(f"the result would be at least {size:,} characters")
        self.size = size
        self.path = path


class TooCostly(Exception):
    """Locating the hunks would take more line comparisons than the
    :class:`Budget` allows; ``path`` is the file being searched."""

    def __init__(self, spent: int, path: str = ""):
        super().__init__(f"locating its hunks needs more than {spent:,} line comparisons")
        self.spent = spent
        self.path = path


class Budget:
    """Line comparisons left for locating hunks (:func:`apply_update`);
    :meth:`spend` raises :class:`TooCostly` once they run out."""

    __slots__ = ("left", "total")

    def __init__(self, total: int = DEFAULT_BUDGET):
        self.total = total
        self.left = total

    def spend(self, amount: int) -> None:
        self.left -= amount
        if self.left < 0:
            raise TooCostly(self.total)


class Chunk:
    """One hunk of an Update (parser.rs ``UpdateFileChunk``): ``context``
    (the text after ``@@ ``, or None), ``old`` and ``new`` (lists of lines,
    context lines in both), ``eof`` (``*** End of File``: the old lines
    must end the file), ``kept`` (``(old_index, new_index)`` of each context
    line: Codex keeps the file's own line there, text and ending).  Built
    without ``kept``, every line in both ``old`` and ``new`` at the same
    place is not a context line."""

    __slots__ = ("context", "old", "new", "eof", "kept")

    def __init__(
        self,
        context: str | None,
        old: list[str],
        new: list[str],
        eof: bool = False,
        kept: list[tuple[int, int]] | None = None,
    ):
        self.context = context
        self.old = old
        self.new = new
        self.eof = eof
        self.kept = kept if kept is not None else []

    def __repr__(self) -> str:
        return f"Chunk({self.context!r}, {self.old!r}, {self.new!r}, eof={self.eof})"


class FileOp:
    """One file operation: ``kind`` ``"add"`` (``contents``, the text it
    writes), ``"delete"``, or ``"update"`` (``chunks``, and ``move_to``, the
    new path, or None).  ``path`` as the patch writes it."""

    __slots__ = ("kind", "path", "move_to", "contents", "chunks")

    def __init__(
        self,
        kind: str,
        path: str,
        *,
        move_to: str | None = None,
        contents: str = "",
        chunks: list[Chunk] | None = None,
    ):
        self.kind = kind
        self.path = path
        self.move_to = move_to
        self.contents = contents
        self.chunks = chunks or []

    def __repr__(self) -> str:
        extra = f" -> {self.move_to!r}" if self.move_to else ""
        return f"FileOp({self.kind}, {self.path!r}{extra})"


# ---------------------------------------------------------------------------
# The invocation


_HEREDOC = re.compile(
    r"""\A[ \t\n]*
    (?:cd[ \t]+(?P<cd>'[^']*'|"[^"\\$`]*"|[^\s'"&|;<>()$`\\]+)[ \t]*&&[ \t]*)?
    (?:apply_patch|applypatch)[ \t]*<<[ \t]*(?P<q>['"]?)(?P<tag>[A-Za-z_][A-Za-z0-9_]*)(?P=q)[ \t]*\n
    (?P<body>(?:.*\n)*?)
    (?P=tag)[ \t\n]*\Z""",
    re.VERBOSE,
)

# Shells whose script Codex reads for an apply_patch heredoc (lib.rs
# classify_shell): bash/zsh/sh -c or -lc; pwsh/powershell -Command; cmd /c.
_UNIX_SHELLS = ("bash", "zsh", "sh")


def _heredoc(script: str) -> tuple[str, str | None] | None:
    """``(body, cd_path)`` of ``[cd PATH && ]apply_patch <<'EOF' ... EOF``
    as the only statement of a shell script, else None.  Codex matches this
    with a tree-sitter query (lib.rs ``extract_apply_patch_from_bash``); this
    is the same shape for the forms a model writes: one heredoc, any tag,
    quoted or not, and nothing before or after but an optional ``cd``."""
    match = _HEREDOC.match(script)
    if match is None:
        return None
    cd = match.group("cd")
    if cd is not None and cd[:1] in "'\"":
        cd = cd[1:-1]
    return match.group("body").rstrip("\n"), cd


def _shell_script(argv: list) -> str | None:
    """The script of ``[shell, flag, script]`` (or ``[pwsh, -NoProfile,
    -Command, script]``) when Codex would read it for a heredoc."""
    if not all(isinstance(part, str) for part in argv):
        return None
    if len(argv) == 4 and argv[1].lower() == "-noprofile":
        argv = [argv[0], argv[2], argv[3]]
    if len(argv) != 3:
        return None
    shell, flag, script = argv
    name = os.path.splitext(shell.replace("\\", "/").rsplit("/", 1)[-1])[0].lower()
    if (
        (name in _UNIX_SHELLS and flag in ("-c", "-lc"))
        or (name in ("pwsh", "powershell") and flag.lower() == "-command")
        or (name == "cmd" and flag.lower() == "/c")
    ):
        return script
    return None


def invocation(tool_name, tool_input) -> tuple[str, str | None] | None:
    """The patch a hook input asks Codex to apply: ``(patch_text, workdir)``,
    or None when the call is not an ``apply_patch`` (a shell command that
    runs something else, another tool).

    Codex's hook input (codex-rs/hooks ``PreToolUseCommandInput``; the
    apply_patch handler's ``pre_tool_use_payload``): ``tool_name``
    ``"apply_patch"`` with ``tool_input`` ``{"command": PATCH}``, PATCH the
    patch text as the model wrote it (a string); or ``tool_name`` ``"Bash"``
    with ``{"command": "apply_patch <<'EOF'\\n...\\nEOF"}`` (Codex runs such a
    shell command as a patch).  An argv list (``["apply_patch", PATCH]``,
    ``["bash", "-lc", SCRIPT]``) is read too.  ``workdir`` is the ``cd PATH``
    before a heredoc, relative to the hook's cwd.  An ``apply_patch`` call
    whose command is not text gives ``("", None)``, which :func:`parse`
    rejects, as Codex does."""
    if not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command")
    if isinstance(command, list):
        if len(command) == 2 and isinstance(command[0], str) and isinstance(command[1], str):
            name = command[0].replace("\\", "/").rsplit("/", 1)[-1]
            if name in COMMANDS:
                return command[1], None
        script = _shell_script(command)
        found = _heredoc(script) if script is not None else None
        if found is not None:
            return found
        return ("", None) if tool_name in PATCH_TOOLS else None
    if not isinstance(command, str):
        return ("", None) if tool_name in PATCH_TOOLS else None
    if tool_name in PATCH_TOOLS:
        # The freeform tool's input is the patch itself; a heredoc-wrapped
        # shell form here is read too (judging more than Codex applies only
        # ever denies a call Codex would reject anyway).
        stripped = command.lstrip()
        if stripped.startswith(COMMANDS):
            found = _heredoc(command)
            if found is not None:
                return found
        return command, None
    if tool_name in SHELL_TOOLS:
        return _heredoc(command)
    return None


# ---------------------------------------------------------------------------
# Parsing (parser.rs, lenient mode)


def _rust_lines(text: str) -> list[str]:
    """``str::lines`` of Rust: split at ``\\n``, a ``\\r`` before it dropped,
    no empty line after a final newline."""
    parts = text.split("\n")
    last = parts.pop()
    lines = [part[:-1] if part.endswith("\r") else part for part in parts]
    if last:
        lines.append(last)
    return lines


def _check_boundaries(lines: list[str]) -> None:
    first = lines[0].strip(WHITESPACE) if lines else None
    last = lines[-1].strip(WHITESPACE) if lines else None
    if first == BEGIN and last == END and len(lines) >= 2:
        return
    if first != BEGIN:
        raise PatchError("invalid patch: The first line of the patch must be '*** Begin Patch'")
    raise PatchError("invalid patch: The last line of the patch must be '*** End Patch'")


def _body(lines: list[str]) -> tuple[int, int]:
    """The ``[start, end)`` of the lines between the markers; lenient mode
    also takes the patch inside ``<<EOF`` / ``<<'EOF'`` / ``<<"EOF"`` ...
    ``EOF`` (a heredoc passed as the argument itself)."""
    try:
        _check_boundaries(lines)
        return 1, len(lines) - 1
    except PatchError:
        if len(lines) >= 4 and lines[0] in ("<<EOF", "<<'EOF'", '<<"EOF"') and lines[-1].endswith("EOF"):
            inner = lines[1:-1]
            try:
                _check_boundaries(inner)
            except PatchError:
                pass
            else:
                return 2, len(lines) - 2
        raise


def _chunk(lines: list[str], at: int, end: int, line_number: int, first: bool) -> tuple[Chunk, int]:
    head = lines[at]
    if head == "@@":
        context, start = None, at + 1
    elif head.startswith("@@ "):  # a blank context is none (Codex 0.171)
        context, start = (head[3:] if head[3:].strip(WHITESPACE) else None), at + 1
    elif first:
        context, start = None, at
    else:
        raise PatchError(
            f"invalid hunk at line {line_number}, Expected update hunk to start with a @@ context marker, got: '{head}'"
        )
    if start >= end:
        raise PatchError(f"invalid hunk at line {line_number + 1}, Update hunk does not contain any lines")
    chunk = Chunk(context, [], [])
    parsed = 0
    index = start
    while index < end:
        line = lines[index]
        if line == EOF_MARKER:
            if parsed == 0:
                raise PatchError(f"invalid hunk at line {line_number + 1}, Update hunk does not contain any lines")
            chunk.eof = True
            parsed += 1
            break
        sign = line[:1]
        if sign in ("", " "):  # a context line (an empty line is one too)
            chunk.kept.append((len(chunk.old), len(chunk.new)))
            chunk.old.append(line[1:])
            chunk.new.append(line[1:])
        elif sign == "+":
            chunk.new.append(line[1:])
        elif sign == "-":
            chunk.old.append(line[1:])
        else:
            if parsed == 0:
                raise PatchError(
                    f"invalid hunk at line {line_number + 1}, Unexpected line found in update hunk: '{line}'. "
                    "Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
                )
            break
        parsed += 1
        index += 1
    return chunk, parsed + (start - at)


def _operation(lines: list[str], at: int, end: int, line_number: int) -> tuple[FileOp, int]:
    head = lines[at].strip(WHITESPACE)
    if head.startswith(ADD):
        index = at + 1
        while index < end and lines[index].startswith("+"):
            index += 1
        contents = "".join(line[1:] + "\n" for line in lines[at + 1 : index])
        return FileOp("add", head[len(ADD) :], contents=contents), index - at
    if head.startswith(DELETE):
        return FileOp("delete", head[len(DELETE) :]), 1
    if head.startswith(UPDATE):
        path = head[len(UPDATE) :]
        index = at + 1
        move_to = None
        if index < end and lines[index].startswith(MOVE):
            move_to = lines[index][len(MOVE) :]
            index += 1
        chunks: list[Chunk] = []
        while index < end:
            line = lines[index]
            # Codex 0.171: blank lines after a hunk that ended at "*** End of
            # File" are skipped (anywhere else a blank line is a hunk line or
            # an error), so is "*** End of File" before the first hunk, and
            # only a file header ends the Update.
            if (chunks and chunks[-1].eof and not line.strip(WHITESPACE)) or (not chunks and line == EOF_MARKER):
                index += 1
                continue
            if line.startswith((ADD, DELETE, UPDATE)):
                break
            chunk, used = _chunk(lines, index, end, line_number + (index - at), not chunks)
            chunks.append(chunk)
            index += used
        if not chunks:
            raise PatchError(f"invalid hunk at line {line_number}, Update file hunk for path '{path}' is empty")
        return FileOp("update", path, move_to=move_to, chunks=chunks), index - at
    raise PatchError(
        f"invalid hunk at line {line_number}, '{head}' is not a valid hunk header. Valid hunk headers: "
        "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    )


def parse(text: str) -> list[FileOp]:
    """The file operations of a patch, in order, as Codex parses it (its
    lenient mode: markers may carry whitespace, the whole text may be a
    ``<<'EOF'`` heredoc, CRLF line ends are read as LF, blank lines after a
    hunk ending at ``*** End of File`` are skipped, the first hunk of an Update may omit ``@@``, a blank
    ``@@ `` context is none).  Where the stored source and Codex 0.171
    differ, this follows 0.171 (checked by running its apply_patch).

    Returns a list of :class:`FileOp`; raises :class:`PatchError` with
    Codex's message for a patch it rejects (no ``*** Begin Patch`` first or
    ``*** End Patch`` last, an unknown header, an Update without hunks, a
    hunk line that is not `` ``/``-``/``+``).  An empty patch parses to no
    operations (Codex then reports that nothing changed)."""
    if not isinstance(text, str):
        raise PatchError("invalid patch: the command is not a string")
    lines = _rust_lines(text.strip(WHITESPACE))
    index, end = _body(lines)
    ops = []
    line_number = 2
    while index < end:
        op, used = _operation(lines, index, end, line_number)
        ops.append(op)
        index += used
        line_number += used
    return ops


# ---------------------------------------------------------------------------
# Applying an Update (lib.rs compute_replacements, seek_sequence.rs, text_file.rs)


class _Lines:
    """A file's line texts, with the views each search pass compares and a
    first-line index per view (built once, when a pass first needs it)."""

    __slots__ = ("texts", "_views", "_where")

    PASSES = (
        None,
        lambda s: s.rstrip(WHITESPACE),
        lambda s: s.strip(WHITESPACE),
        lambda s: s.strip(WHITESPACE).translate(_FOLD),
    )

    def __init__(self, texts: list[str]):
        self.texts = texts
        self._views: dict[int, list[str]] = {}
        self._where: dict[int, dict[str, list[int]]] = {}

    def view(self, number: int) -> tuple[list[str], dict[str, list[int]]]:
        if number not in self._views:
            fold = self.PASSES[number]
            view = self.texts if fold is None else [fold(text) for text in self.texts]
            where: dict[str, list[int]] = {}
            for position, text in enumerate(view):
                where.setdefault(text, []).append(position)
            self._views[number], self._where[number] = view, where
        return self._views[number], self._where[number]


def _seek(lines: _Lines, pattern: list[str], start: int, eof: bool, budget: Budget) -> int | None:
    """seek_sequence.rs: the first position at or after ``start`` where
    ``pattern`` matches, trying exact, trailing whitespace ignored, trimmed,
    then punctuation folded; with ``eof``, only the position that ends the
    file.  An empty pattern matches at ``start``."""
    if not pattern:
        return start
    size, count = len(pattern), len(lines.texts)
    if size > count:
        return None
    first = count - size if eof else start
    last = count - size
    if first > last:
        return None
    for number, fold in enumerate(_Lines.PASSES):
        view, where = lines.view(number)
        wanted = pattern if fold is None else [fold(text) for text in pattern]
        candidates = where.get(wanted[0], ())
        for position in candidates[bisect.bisect_left(candidates, first) :]:
            if position > last:
                break
            budget.spend(size)
            if view[position : position + size] == wanted:
                return position
    return None


def _replacements(lines: _Lines, chunks: list[Chunk], path: str, budget: Budget) -> list[tuple[int, int, list[str]]]:
    """``(start, old_length, new_lines)`` per run of changed lines, sorted
    by start (lib.rs ``compute_replacements``): a hunk's context lines are
    left out, so the file keeps its own text and ending there (a line the
    hunk matched only with whitespace ignored stays as it was); a hunk
    without old lines adds its lines at the end.  :class:`PatchError` for a
    hunk or ``@@`` context line that is not in the file."""
    texts = lines.texts
    replacements = []
    line_index = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = _seek(lines, [chunk.context], line_index, False, budget)
            if found is None:
                raise PatchError(f"Failed to find context '{chunk.context}' in {path}")
            line_index = found + 1
        if not chunk.old:  # added at the end of the file
            replacements.append((len(texts), 0, chunk.new))
            continue
        pattern, new = chunk.old, chunk.new
        found = _seek(lines, pattern, line_index, chunk.eof, budget)
        if found is None and pattern[-1] == "":
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            found = _seek(lines, pattern, line_index, chunk.eof, budget)
        if found is None:
            raise PatchError(f"Failed to find expected lines in {path}:\n" + "\n".join(chunk.old))
        # Context lines stay the file's own (their text and ending): only
        # the runs between them are replaced.
        old_start = new_start = 0
        for old_at, new_at in chunk.kept:
            if old_at >= len(pattern) or new_at >= len(new):
                break
            if old_start != old_at or new_start != new_at:
                replacements.append((found + old_start, old_at - old_start, new[new_start:new_at]))
            old_start, new_start = old_at + 1, new_at + 1
        if old_start != len(pattern) or new_start != len(new):
            replacements.append((found + old_start, len(pattern) - old_start, new[new_start:]))
        line_index = found + len(pattern)
    replacements.sort(key=lambda item: item[0])
    return replacements


_LINE_END = re.compile(r"\r\n|\n|\r")


def _source(text: str) -> tuple[list[str], list[str], str]:
    """text_file.rs ``SourceFile::parse``: line texts, each line's ending
    (``"\\n"``, ``"\\r\\n"``, a lone ``"\\r"``, or ``""`` for a last line
    without one) and the preferred ending (the first line's; LF when there
    is none).  (Codex 0.171 ends a line at a lone CR too.)"""
    texts, endings = [], []
    position = 0
    for match in _LINE_END.finditer(text):
        texts.append(text[position : match.start()])
        endings.append(match.group())
        position = match.end()
    if position < len(text):
        texts.append(text[position:])
        endings.append("")
    return texts, endings, endings[0] if endings and endings[0] else "\n"


def _layout(count: int, replacements) -> list[tuple[int, int] | list[str]]:
    """The result as pieces: ``(a, b)`` for source lines ``a..b`` kept, a
    list for new lines; as text_file.rs ``apply_replacements`` walks one
    iterator over the source lines (a replacement starting before the end of
    the one before it takes every line left first, as Rust's wrapping
    ``start - source_index`` does)."""
    pieces: list = []
    position = source_index = 0
    for start, old_length, new in replacements:
        take = start - source_index
        end = count if take < 0 else min(count, position + take)
        if end > position:
            pieces.append((position, end))
        position = min(count, end + old_length)
        if new:
            pieces.append(new)
        source_index = start + old_length
    if position < count:
        pieces.append((position, count))
    return pieces


def apply_update(
    text: str, chunks: list[Chunk], path: str = "", limit: int | None = None, budget: Budget | None = None
) -> str:
    """The text after an Update's ``chunks``, as Codex writes it.

    Lines end at LF, CRLF or a lone CR (the ending is not part of the line,
    so a CRLF file is matched by an LF patch); each hunk is found
    after the one before it (first its ``@@`` context line, then its old
    lines: exact, trailing whitespace ignored, trimmed, punctuation folded;
    a hunk ending in an empty line is retried without it), a hunk without
    old lines is added at the end; lines kept (untouched or context) keep
    their text and ending, new lines take the first line's ending (LF for a
    file without one), and the result ends with a line ending.

    Raises :class:`PatchError` when a hunk is not in the text (Codex
    rejects the whole patch); :class:`Oversize` when the result would be
    longer than ``limit`` characters (counted before it is built);
    :class:`TooCostly` when locating the hunks would spend more than the
    ``budget`` (default :data:`DEFAULT_BUDGET` line comparisons)."""
    budget = Budget() if budget is None else budget
    texts, endings, preferred = _source(text)
    lines = _Lines(texts)
    try:
        replacements = _replacements(lines, chunks, path, budget)
    except TooCostly as exc:
        exc.path = path
        raise
    pieces = _layout(len(texts), replacements)
    if limit is not None:
        size = 0
        for piece in pieces:
            if isinstance(piece, tuple):
                a, b = piece
                size += sum(map(len, texts[a:b])) + sum(len(e or preferred) for e in endings[a:b])
            else:
                size += sum(map(len, piece)) + len(preferred) * len(piece)
            if size > limit:
                raise Oversize(size, path)
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, tuple):
            a, b = piece
            out.extend(t + (e or preferred) for t, e in zip(texts[a:b], endings[a:b], strict=True))
        else:
            out.extend(t + preferred for t in piece)
    return "".join(out)


# ---------------------------------------------------------------------------
# A whole patch


def simulate(ops: list[FileOp], key, wanted, read, limit, budget: Budget | None = None):
    """Run ``ops`` in order over the files that can reach a wanted file, as
    Codex writes them (lib.rs ``apply_hunks_to_files``): Add writes (or
    overwrites) its text, Delete removes, Update rewrites its file, or with
    ``Move to`` writes the new path and then removes the old one (so a move
    onto itself deletes the file, as Codex does).

    ``key(path)`` -> the file's identity (the caller's resolved path);
    ``wanted(key)`` -> whether its final state matters (an index);
    ``read(key)`` -> its current text, or None when it does not exist (the
    reader may raise :class:`PatchError`, e.g. for text that is not UTF-8,
    or its own exception, which passes through); ``limit()`` -> the most
    characters a built text may have (:class:`Oversize` past it, naming
    the path it would write; :class:`TooCostly` likewise).

    Returns ``(after, error)``: ``after`` maps each wanted key the patch
    touched, in order, to its text afterwards (None: deleted or moved away);
    ``error`` is the :class:`PatchError` that stopped the run (Codex
    rejects such a patch) or None, ``after`` then holding what came before
    it.  Operations on files that can reach no wanted file are skipped."""
    budget = Budget() if budget is None else budget
    relevant = {key(p) for op in ops for p in (op.path, op.move_to) if p is not None}
    relevant = {k for k in relevant if wanted(k)}
    for op in reversed(ops):  # a file moved onto a wanted one matters too
        if op.kind == "update" and op.move_to is not None and key(op.move_to) in relevant:
            relevant.add(key(op.path))
    state: dict = {}
    after: dict = {}

    def current(k):
        if k not in state:
            state[k] = read(k)
        return state[k]

    def put(k, value):
        state[k] = value
        if wanted(k):
            after[k] = value

    try:
        for op in ops:
            source = key(op.path)
            if op.kind == "add":
                if source in relevant:
                    if len(op.contents) > limit():
                        raise Oversize(len(op.contents), op.path)
                    put(source, op.contents)
            elif op.kind == "delete":
                if source in relevant:
                    if current(source) is None:
                        raise PatchError(f"Failed to delete file {op.path}: it does not exist")
                    put(source, None)
            else:
                target = key(op.move_to) if op.move_to is not None else source
                if source not in relevant and target not in relevant:
                    continue
                text = current(source)
                if text is None:
                    raise PatchError(f"Failed to read file to update {op.path}: it does not exist")
                try:
                    new = apply_update(text, op.chunks, op.path, limit(), budget)
                except (Oversize, TooCostly) as exc:
                    exc.path = op.move_to if op.move_to is not None else op.path  # the file it would write
                    raise
                put(target, new)
                if op.move_to is not None:  # the new path written, then the old one removed
                    put(source, None)
    except PatchError as exc:
        return after, exc
    return after, None
