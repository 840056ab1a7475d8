"""Frontmatter: find the block, parse its YAML subset, edit one key surgically.

A frontmatter block exists only when the text's first line is ``---`` and a
later line is ``---`` or ``...`` (Obsidian's rule; the caller strips a UTF-8
BOM first).  Its content is parsed with the YAML 1.2 core schema restricted
to what vaults use:

* block and flow mappings and sequences, including sequences at the same
  indentation as their key;
* plain, single-quoted and double-quoted scalars (with every YAML escape),
  multi-line scalars folded by the YAML rules;
* literal (``|``) and folded (``>``) block scalars with chomping and
  indentation indicators;
* comments and empty values;
* template placeholders written unquoted as a whole value, a block-list item
  or a flow-list item: ``created: {{date}}``, ``- {{title}}``,
  ``[{{date:YYYY-MM-DD}}]`` (``{{``, text without braces, line breaks or a
  `` #`` comment, ``}}``).  YAML reads such a value as a flow mapping whose
  key is a mapping, which Obsidian's YAML library accepts (BR-41); autograph
  reads it as the text it shows, a :class:`Placeholder` (a ``str``).
  Templater's ``<% tp.file.title %>`` is a plain scalar already.
  :func:`is_placeholder` tells any placeholder text, quoted or not, from a
  value: consumers infer nothing from placeholders and no command rewrites
  them.

Typing follows the core schema with two restrictions that keep the text the
truth: ``yes``/``no``/``on``/``off`` are strings, and a number-like plain
scalar becomes a number only if it reads back as the same text (``01234``,
``1.10``, ``+44`` and ``1e3`` stay strings).  Dates and times are strings.

Anchors, aliases, tags, directives, complex keys, tabs in indentation,
duplicate keys and anything that is not YAML raise :class:`FrontmatterError`
with the 1-based line and column in the file.

Edits (:func:`set_property`, :func:`delete_property`) splice text: only the
lines of the key being changed are replaced; every other byte of the file,
the body included, stays as it was.  A multi-line string is written as a
literal block scalar (``|``, ``|-`` or ``|+`` by its trailing line breaks,
with an indentation indicator when its first line starts with white space),
folded (``>``) only when the key's old value was folded; a value no block
scalar holds exactly (control characters, CR, NEL, U+2028/2029, a BOM) is
double-quoted with escapes.  A :class:`Placeholder` is written back as it
was read, unquoted.  The replaced lines keep their own line
endings and the key line its comment; a value that holds comments on its
other lines is refused, never rewritten without them.  A key is found as
Obsidian finds a property, ignoring letter case when no key is written
exactly so.
"""

from __future__ import annotations

import datetime
import math
import re
from typing import NamedTuple

__all__ = [
    "Entry",
    "Frontmatter",
    "FrontmatterError",
    "Placeholder",
    "delete_property",
    "double_quote",
    "edit_problem",
    "format_flow",
    "format_property",
    "format_scalar",
    "is_placeholder",
    "loads",
    "parse",
    "same_value",
    "set_property",
]


class FrontmatterError(ValueError):
    """The frontmatter block is not valid YAML, or uses YAML outside the subset.

    ``line`` and ``column`` are 1-based positions in the file (the opening
    ``---`` is line 1); ``reason`` is the message without the position.
    """

    def __init__(self, reason: str, line: int, column: int = 1):
        super().__init__(f"{reason} at line {line}, column {column}")
        self.reason = reason
        self.line = line
        self.column = column


class Placeholder(str):
    """A template placeholder written unquoted (``created: {{date}}``): its
    text, marked.  The parser returns one for each such value; the emitter
    writes it back unquoted, as it was.  The mark does not survive a copy
    through JSON (the note index caches plain strings): test values with
    :func:`is_placeholder`, which also knows quoted and Templater ones."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Placeholder({str.__repr__(self)})"


# an unquoted placeholder: "{{", no braces, line breaks or " #", "}}"
_PLACEHOLDER = re.compile(r"\{\{[^{}\r\n]*\}\}")
_ANY_PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}|<%.*%>", re.S)


def is_placeholder(value) -> bool:
    """True for a string that is entirely one template placeholder: a core
    Templates or Periodic Notes ``{{date}}``, ``{{date:YYYY-MM-DD}}``,
    ``{{title}}`` (quoted or not), or a Templater ``<% tp.date.now() %>``.
    Such a value is a template's text, not data: nothing is inferred from it
    (no date, status or type) and no fix rewrites it."""
    if not isinstance(value, str):
        return False
    match = _ANY_PLACEHOLDER.fullmatch(value)
    return match is not None and (match.group(1) is None or bool(match.group(1).strip()))


def _unquoted_placeholder(text: str, pos: int = 0) -> re.Match | None:
    """The placeholder written unquoted at ``text[pos:]``, if one is."""
    match = _PLACEHOLDER.match(text, pos)
    if match is None:
        return None
    inner = match.group()[2:-2]
    if not inner.strip(" \t") or re.search(r"[ \t]#", inner):
        return None
    return match


class Entry(NamedTuple):
    """One top-level key of a block mapping and the lines that hold it.

    ``start`` and ``end`` index the block's content lines (0 = the line after
    the opening ``---``), ``end`` exclusive.  The span runs from the key's line
    to the last non-blank line of its value, so comments and blank lines after
    a value belong to no key; the blank lines that end a keep-chomped block
    scalar (``|+``, ``>+``) are its value and belong to it.
    """

    key: str
    start: int
    end: int
    prefix: str  # the key as written, up to and including its colon


class Frontmatter(NamedTuple):
    """A frontmatter block located in a note's text (BOM already removed).

    Offsets index the text: ``start`` is the first character after the
    opening line, ``end`` the first character of the closing line, ``body``
    the first character after the closing line.  ``properties`` is ``{}``
    when ``error`` is set; ``entries`` is empty for a flow-style mapping.
    """

    start: int
    end: int
    body: int
    properties: dict
    entries: tuple[Entry, ...]
    error: FrontmatterError | None
    newline: str

    @property
    def valid(self) -> bool:
        return self.error is None


# ---------------------------------------------------------------------------
# Locating the block


def _line_end(text: str, pos: int) -> tuple[int, int]:
    """Return (end of line content, start of next line) for the line at pos."""
    nl = text.find("\n", pos)
    if nl < 0:
        return len(text), len(text)
    end = nl - 1 if nl > pos and text[nl - 1] == "\r" else nl
    return end, nl + 1


_DELIMITER = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.M)


def _locate(text: str) -> tuple[int, int, int, str] | None:
    """Find (content start, closing line start, body start, newline) or None."""
    if not text.startswith("---"):
        return None
    first_end, content = _line_end(text, 0)
    if text[3:first_end].strip(" \t") or content == len(text):
        return None
    newline = "\r\n" if text[first_end:content] == "\r\n" else "\n"
    match = _DELIMITER.search(text, content)
    if match is None:
        return None
    _, body = _line_end(text, match.start())
    return content, match.start(), body, newline


def parse(text: str) -> Frontmatter | None:
    """Locate and parse the frontmatter of ``text`` (a note without its BOM).

    Returns None when the note has no frontmatter block (Obsidian's rule: line
    1 is ``---`` and a later line closes it).  A block that is present but
    invalid is returned with ``error`` set and empty ``properties``; it never
    raises for bad YAML.
    """
    located = _locate(text)
    if located is None:
        return None
    start, end, body, newline = located
    try:
        properties, entries = loads(text[start:end], first_line=2)
        error = None
    except FrontmatterError as exc:
        properties, entries, error = {}, (), exc
    return Frontmatter(start, end, body, properties, tuple(entries), error, newline)


# ---------------------------------------------------------------------------
# The parser

_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")

_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}

_FLOW_INDICATORS = ",[]{}"


def resolve_plain(text: str):
    """Type a plain scalar: YAML 1.2 core schema, kept only if it round-trips.

    Returns None, a bool, an int, a float or the text itself.  ``yes``/``no``
    are strings; ``01234`` and ``1.10`` stay strings because the number would
    not read back as the same text.
    """
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    first = text[0]
    if first.isdigit() or first in "-+.":
        if _INT.match(text):
            number = int(text)
            if str(number) == text:
                return number
        elif _FLOAT.match(text):
            number = float(text)
            if math.isfinite(number) and repr(number) == text:
                return number
    return text


class _Parser:
    """Recursive-descent parser over the block's lines (no line endings).

    Methods return ``(value, end)`` where ``end`` is the index just past the
    node's last non-blank line.  ``comments`` maps the index of every line
    that holds a YAML comment (a whole line, or after a value) to the column
    of its ``#``; text inside block and quoted scalars is never a comment.
    """

    def __init__(self, source: str, first_line: int):
        self.lines = [line[:-1] if line.endswith("\r") else line for line in source.split("\n")]
        if self.lines and self.lines[-1] == "" and source.endswith("\n"):
            self.lines.pop()
        self.first_line = first_line
        self.n = len(self.lines)
        self.comments: dict[int, int] = {}

    # -- errors and line classes -------------------------------------------

    def error(self, reason: str, i: int, col: int = 0) -> FrontmatterError:
        return FrontmatterError(reason, self.first_line + i, col + 1)

    def is_blank(self, i: int) -> bool:
        stripped = self.lines[i].lstrip(" \t")
        return not stripped or stripped.startswith("#")

    def next_content(self, i: int) -> int:
        while i < self.n and self.is_blank(i):
            line = self.lines[i]
            stripped = line.lstrip(" \t")
            if stripped:
                self.comments[i] = len(line) - len(stripped)
            i += 1
        return i

    def indent(self, i: int) -> int:
        line = self.lines[i]
        width = len(line) - len(line.lstrip(" "))
        if width < len(line) and line[width] == "\t":
            raise self.error("tab used for indentation", i, width)
        return width

    # -- documents -------------------------------------------------------

    def document(self) -> tuple[object, list[Entry]]:
        i = self.next_content(0)
        if i == self.n:
            return {}, []
        col = self.indent(i)
        line = self.lines[i]
        if col == 0 and line.startswith("%"):
            raise self.error("YAML directives are not supported in frontmatter", i)
        entries: list[Entry] = []
        value, end = self.block_node(i, col, -1, entries)
        rest = self.next_content(end)
        if rest < self.n:
            raise self.error("unexpected content after the frontmatter value", rest, self.indent(rest))
        return value, entries

    # -- block nodes -----------------------------------------------------

    def block_node(self, i: int, col: int, parent: int, entries: list | None = None):
        text = self.lines[i][col:]
        if _is_dash(text):
            return self.sequence(i, col)
        key = self.mapping_key(i, col)
        if key is not None:
            return self.mapping(i, col, entries)
        return self.inline_value(i, col, parent)

    def mapping_key(self, i: int, col: int):
        """If a mapping entry starts at (i, col), return (key, prefix_end, value_col)."""
        line = self.lines[i]
        first = line[col] if col < len(line) else ""
        if first in ("'", '"'):
            try:
                key, j, close = self.quoted(i, col, single_line=True)
            except FrontmatterError:
                return None
            if close != i:
                return None
            k = j
            while k < len(line) and line[k] in " \t":
                k += 1
            if k < len(line) and line[k] == ":" and (k + 1 == len(line) or line[k + 1] in " \t"):
                return key, k + 1, _skip_space(line, k + 1)
            return None
        if not first or first in "[]{}#&*!|>%@`," or _is_dash(line[col:]):
            return None
        if first in "?:" and (col + 1 >= len(line) or line[col + 1] in " \t"):
            return None
        pos = col
        while True:
            pos = line.find(":", pos + 1)
            if pos < 0:
                return None
            comment = line.find(" #", col, pos)
            if comment >= 0:
                return None
            if pos + 1 == len(line) or line[pos + 1] in " \t":
                key = line[col:pos].rstrip(" \t")
                return key, pos + 1, _skip_space(line, pos + 1)

    def mapping(self, i: int, col: int, entries: list | None):
        result: dict = {}
        while True:
            found = self.mapping_key(i, col)
            if found is None:
                raise self.error("expected a 'key: value' line", i, col)
            key, prefix_end, value_col = found
            if key in result:
                raise self.error(f"duplicate key {key!r}", i, col)
            value, end = self.mapping_value(i, value_col, col)
            result[key] = value
            if entries is not None:
                entries.append(Entry(key, i, end, self.lines[i][:prefix_end]))
            i = self.next_content(end)
            if i == self.n:
                return result, end
            ind = self.indent(i)
            if ind < col:
                return result, end
            if ind > col:
                raise self.error("bad indentation: this line is indented more than its key", i, ind)

    def mapping_value(self, i: int, value_col: int, col: int):
        line = self.lines[i]
        if value_col >= len(line) or line[value_col] == "#":
            if value_col < len(line):
                self.comments[i] = value_col
            j = self.next_content(i + 1)
            if j < self.n:
                ind = self.indent(j)
                if ind > col:
                    return self.block_node(j, ind, col)
                if ind == col and _is_dash(self.lines[j][ind:]):
                    return self.sequence(j, col)
            return None, i + 1
        return self.inline_value(i, value_col, col)

    def sequence(self, i: int, col: int):
        items: list = []
        while True:
            line = self.lines[i]
            item_col = _skip_space(line, col + 1)
            if item_col >= len(line) or line[item_col] == "#":
                if item_col < len(line):
                    self.comments[i] = item_col
                j = self.next_content(i + 1)
                if j < self.n and self.indent(j) > col:
                    value, end = self.block_node(j, self.indent(j), col)
                else:
                    value, end = None, i + 1
            elif _is_dash(line[item_col:]):
                value, end = self.sequence(i, item_col)
            elif self.mapping_key(i, item_col) is not None:
                value, end = self.mapping(i, item_col, None)
            else:
                value, end = self.inline_value(i, item_col, col)
            items.append(value)
            i = self.next_content(end)
            if i == self.n:
                return items, end
            ind = self.indent(i)
            if ind < col or (ind == col and not _is_dash(self.lines[i][ind:])):
                return items, end
            if ind > col:
                raise self.error("bad indentation of a sequence entry", i, ind)

    def inline_value(self, i: int, col: int, parent: int):
        line = self.lines[i]
        c = line[col]
        if c in ("'", '"'):
            value, j, end_line = self.quoted(i, col)
            self.expect_line_end(end_line, j)
            return value, end_line + 1
        if c in "[{":
            flow = _Flow(self, i, col)
            value = flow.node()
            end_line, j = flow.i, flow.col
            self.expect_line_end(end_line, j)
            return value, end_line + 1
        if c in "|>":
            return self.block_scalar(i, col, parent)
        if c == "&":
            raise self.error("YAML anchors (&) are not supported in frontmatter", i, col)
        if c == "*":
            raise self.error("YAML aliases (*) are not supported in frontmatter", i, col)
        if c == "!":
            raise self.error("YAML tags (!) are not supported in frontmatter", i, col)
        if c in "@`%,]}":
            raise self.error(f"a plain value cannot start with {c!r}; quote the value", i, col)
        if c == "?" and (col + 1 == len(line) or line[col + 1] in " \t"):
            raise self.error("complex keys (?) are not supported in frontmatter", i, col)
        if _is_dash(line[col:]):
            raise self.error("a list item cannot start here; put it on its own line", i, col)
        return self.plain(i, col, parent)

    def expect_line_end(self, i: int, j: int) -> None:
        line = self.lines[i]
        k = _skip_space(line, j)
        if k < len(line):
            if line[k] == "#" and k > j:
                self.comments[i] = k
                return
            if line[k] == ":":
                raise self.error("a value cannot be used as a key here", i, k)
            raise self.error("unexpected text after the value", i, k)

    def plain(self, i: int, col: int, parent: int):
        parts: list[str] = []
        blanks = 0
        end = i + 1
        j = i
        start_col = col
        while True:
            line = self.lines[j]
            segment, commented = self.plain_segment(j, start_col)
            if parts:
                parts.append("\n" * blanks if blanks else " ")
            parts.append(segment)
            end = j + 1
            if commented:
                break
            j += 1
            blanks = 0
            while j < self.n and not self.lines[j].strip(" \t"):
                blanks += 1
                j += 1
            if j >= self.n:
                break
            line = self.lines[j]
            stripped = line.lstrip(" \t")
            if stripped.startswith("#"):
                break
            ind = len(line) - len(line.lstrip(" "))
            if ind <= parent:
                break
            self.indent(j)
            start_col = ind
        return resolve_plain("".join(parts)), end

    def plain_segment(self, i: int, col: int) -> tuple[str, bool]:
        line = self.lines[i]
        stop = len(line)
        commented = False
        for match in _PLAIN_STOP.finditer(line, col):
            if match.group(0)[-1] == "#":
                stop = match.start()
                commented = True
                self.comments[i] = match.end() - 1
                break
            raise self.error("': ' inside an unquoted value; quote the whole value", i, match.start())
        return line[col:stop].strip(" \t"), commented

    def quoted(self, i: int, col: int, single_line: bool = False):
        """Parse a quoted scalar at (i, col); return (value, column after, last line)."""
        line = self.lines[i]
        quote = line[col]
        out: list[str] = []
        j = col + 1
        start_line = i
        while True:
            if j >= len(line):
                if single_line or i + 1 >= self.n:
                    raise self.error(f"unclosed {quote} quote", start_line, col)
                # fold: trailing spaces trimmed, a line break becomes a space,
                # empty lines become line breaks
                while out and out[-1] in (" ", "\t"):
                    out.pop()
                i += 1
                blanks = 0
                while i < self.n and not self.lines[i].strip(" \t"):
                    blanks += 1
                    i += 1
                if i >= self.n:
                    raise self.error(f"unclosed {quote} quote", start_line, col)
                out.append("\n" * blanks if blanks else " ")
                line = self.lines[i]
                j = _skip_space(line, 0)
                continue
            c = line[j]
            if quote == "'":
                if c == "'":
                    if j + 1 < len(line) and line[j + 1] == "'":
                        out.append("'")
                        j += 2
                        continue
                    return "".join(out), j + 1, i
                out.append(c)
                j += 1
                continue
            if c == '"':
                return "".join(out), j + 1, i
            if c != "\\":
                out.append(c)
                j += 1
                continue
            if j + 1 >= len(line):
                # escaped line break: join without a space
                if single_line or i + 1 >= self.n:
                    raise self.error('unclosed " quote', start_line, col)
                i += 1
                line = self.lines[i]
                j = _skip_space(line, 0)
                continue
            e = line[j + 1]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                j += 2
            elif e in _HEX_ESCAPES:
                width = _HEX_ESCAPES[e]
                digits = line[j + 2 : j + 2 + width]
                if (
                    len(digits) != width
                    or not all(d in "0123456789abcdefABCDEF" for d in digits)
                    or int(digits, 16) > 0x10FFFF  # past Unicode: YAML (and Obsidian) refuse it
                ):
                    raise self.error(f"bad escape \\{e} in a double-quoted value", i, j)
                out.append(chr(int(digits, 16)))
                j += 2 + width
            else:
                raise self.error(f"unknown escape \\{e} in a double-quoted value", i, j)

    def block_scalar(self, i: int, col: int, parent: int):
        line = self.lines[i]
        style = line[col]
        chomp = None  # None: clip, "-": strip, "+": keep
        explicit = 0
        j = col + 1
        while j < len(line) and line[j] not in " \t":
            c = line[j]
            if c in "+-" and chomp is None:
                chomp = c
            elif c in "123456789" and not explicit:
                explicit = int(c)
            else:
                raise self.error(f"bad block scalar header {line[col:].split()[0]!r}", i, j)
            j += 1
        k = _skip_space(line, j)
        if k < len(line) and line[k] != "#":
            raise self.error("text after a block scalar indicator; start the text on the next line", i, k)
        if k < len(line):
            self.comments[i] = k
        indent = max(parent, 0) + explicit if explicit else 0
        if not indent:
            k = i + 1
            while k < self.n and not self.lines[k].strip(" \t"):
                k += 1
            if k < self.n:
                text = self.lines[k]
                indent = len(text) - len(text.lstrip(" "))
            if indent <= parent:
                indent = parent + 1
        lines: list[str] = []
        k = i + 1
        last = i
        while k < self.n:
            text = self.lines[k]
            width = len(text) - len(text.lstrip(" "))
            if width >= indent and len(text) > indent:
                lines.append(text[indent:])  # spaces beyond the indentation are content
                last = k
            elif not text.strip(" \t"):
                lines.append("")
            else:
                break
            k += 1
        content = lines[: last - i]
        trailing = len(lines) - len(content)
        # the blank lines a keep-chomped scalar ends with are its value: they belong to its entry
        end = k if chomp == "+" else last + 1
        return _fold_block(content, trailing, style == ">", chomp), end


_PLAIN_STOP = re.compile(r"[ \t]#|:(?=[ \t]|$)")


def _fold_block(lines: list[str], trailing: int, folded: bool, chomp: str | None) -> str:
    """Join block scalar content lines by YAML's literal or folded rules."""
    chunks: list[str] = []
    breaks: list[str] = []
    line_break = ""
    index = 0
    while index < len(lines) and lines[index] == "":
        breaks.append("\n")
        index += 1
    while index < len(lines):
        line = lines[index]
        chunks.extend(breaks)
        leading_text = line[:1] not in (" ", "\t")
        chunks.append(line)
        line_break = "\n"
        index += 1
        breaks = []
        while index < len(lines) and lines[index] == "":
            breaks.append("\n")
            index += 1
        if index < len(lines):
            if folded and leading_text and lines[index][:1] not in (" ", "\t"):
                if not breaks:
                    chunks.append(" ")
            else:
                chunks.append(line_break)
    if chomp != "-":
        chunks.append(line_break)
    if chomp == "+":
        chunks.extend(breaks)
        chunks.extend("\n" * trailing)
    return "".join(chunks)


class _Flow:
    """Parser for flow collections (``[a, b]``, ``{k: v}``) that may span lines."""

    def __init__(self, parser: _Parser, i: int, col: int):
        self.p = parser
        self.i = i
        self.col = col
        self.opened: list[tuple[int, int]] = []  # where each open bracket is

    @property
    def line(self) -> str:
        return self.p.lines[self.i]

    def error(self, reason: str) -> FrontmatterError:
        return self.p.error(reason, self.i, self.col)

    def skip(self) -> None:
        """Skip spaces, line breaks and comments inside a flow collection."""
        while True:
            line = self.line
            while self.col < len(line) and line[self.col] in " \t":
                self.col += 1
            if self.col < len(line) and line[self.col] == "#" and (self.col == 0 or line[self.col - 1] in " \t"):
                self.p.comments[self.i] = self.col
                self.col = len(line)
            if self.col < len(line):
                return
            if self.i + 1 >= self.p.n:
                at = self.opened[-1] if self.opened else (self.i, self.col)
                raise self.p.error("unclosed flow collection; close it or quote the value", *at)
            self.i += 1
            self.col = 0

    def peek(self) -> str:
        self.skip()
        return self.line[self.col]

    def node(self):
        c = self.peek()
        if c == "[":
            return self.sequence()
        if c == "{":
            match = _unquoted_placeholder(self.line, self.col)
            if match is not None:  # [{{title}}]: the text, as a block value is read
                self.col = match.end()
                return Placeholder(match.group())
            return self.mapping()
        if c in ("'", '"'):
            value, self.col, self.i = self.p.quoted(self.i, self.col)
            return value
        return self.plain()

    def sequence(self):
        self.opened.append((self.i, self.col))
        self.col += 1
        items: list = []
        while True:
            c = self.peek()
            if c == "]":
                self.col += 1
                self.opened.pop()
                return items
            if c == ",":
                raise self.error("empty entry in a flow list")
            item = self.node()
            if self.peek() == ":":
                self.col += 1
                value = None if self.peek() in ",]" else self.node()
                item = {self.key(item): value}
            items.append(item)
            c = self.peek()
            if c == ",":
                self.col += 1
            elif c != "]":
                raise self.error("expected ',' or ']' in a flow list")

    def mapping(self):
        self.opened.append((self.i, self.col))
        self.col += 1
        result: dict = {}
        while True:
            c = self.peek()
            if c == "}":
                self.col += 1
                self.opened.pop()
                return result
            if c == ",":
                raise self.error("empty entry in a flow mapping")
            at = (self.i, self.col)
            key = self.key(self.node())
            if key in result:
                raise self.p.error(f"duplicate key {key!r}", *at)
            value = None
            if self.peek() == ":":
                self.col += 1
                if self.peek() not in ",}":
                    value = self.node()
            result[key] = value
            c = self.peek()
            if c == ",":
                self.col += 1
            elif c != "}":
                raise self.error("expected ',' or '}' in a flow mapping")

    def key(self, value) -> str:
        if isinstance(value, (dict, list, Placeholder)):
            raise self.error("a list or mapping cannot be a key (unquoted '{{' or '[[' in a value?)")
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value) if not isinstance(value, str) else value

    def plain(self):
        line = self.line
        c = line[self.col]
        if c in "&*!|>%@`" or (c in "-?:" and (self.col + 1 >= len(line) or line[self.col + 1] in " \t,[]{}")):
            raise self.error(f"a plain value cannot start with {c!r} here; quote it")
        parts: list[str] = []
        while True:
            line = self.line
            j = self.col
            while j < len(line):
                ch = line[j]
                if ch in _FLOW_INDICATORS:
                    break
                if ch == ":" and (j + 1 >= len(line) or line[j + 1] in " \t,[]{}"):
                    break
                if ch == "#" and line[j - 1] in " \t":
                    break
                j += 1
            parts.append(line[self.col : j].strip(" \t"))
            self.col = j
            if j < len(line) or self.i + 1 >= self.p.n:
                break
            # at the end of the line the value may go on: fold into one space
            following = self.p.lines[self.i + 1].lstrip(" \t")
            if not following or following[0] in _FLOW_INDICATORS or following[0] in "#:":
                break
            self.i += 1
            self.col = len(self.p.lines[self.i]) - len(following)
        return resolve_plain(" ".join(part for part in parts if part))


def _skip_space(line: str, j: int) -> int:
    while j < len(line) and line[j] in " \t":
        j += 1
    return j


def _is_dash(text: str) -> bool:
    return text.startswith("-") and (len(text) == 1 or text[1] in " \t")


# The fast path: most vault frontmatter is flat "key: value" lines and block
# lists of simple items.  _simple parses exactly that shape and returns None
# for anything else, which then goes to the full parser.  Tests check that
# both give the same result on every input _simple accepts.

_SIMPLE_KEY = re.compile(r"([^\s:#'\"\[\]{},&*!|>%@`?-][^:#\t]*?)[ ]*:(?: +|$)")
_NOT_SIMPLE_START = frozenset("#'\"[]{},&*!|>%@`?:-")
_NO = object()


def _simple_scalar(text: str):
    if not text:
        return None
    first = text[0]
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            return _NO
        return inner
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner:
            return _NO
        return inner
    if text == "[]":
        return []
    if first in _NOT_SIMPLE_START or ": " in text or " #" in text or text[-1] == ":":
        return _NO
    return resolve_plain(text)


def _simple(source: str) -> tuple[dict, list[Entry]] | None:
    """Parse flat frontmatter quickly; None when the full parser is needed.

    A key's entry is made once its last line is known (the next key, or
    the end), not again at each item of its list."""
    if "\t" in source:
        return None
    result: dict = {}
    entries: list[Entry] = []
    key = None  # the last key: its entry spans lines start to end, key as written in prefix
    start = end = 0
    prefix = ""
    items: list | None = None  # the list a "key:" line may open
    item_indent = -1
    lines = source.split("\n")
    if "\r" in source:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        if stripped[0] == "-":
            if items is None or not (stripped == "-" or stripped[1] == " "):
                return None
            indent = len(line) - len(stripped)
            if item_indent < 0:
                item_indent = indent
            elif indent != item_indent:
                return None
            value = _simple_scalar(stripped[2:].strip(" "))
            if value is _NO:
                return None
            if not items:
                result[key] = items
            items.append(value)
            end = i + 1
            continue
        if line is not stripped and line[0] == " ":
            return None
        match = _SIMPLE_KEY.match(line)
        if match is None:
            return None
        if key is not None:
            entries.append(Entry(key, start, end, prefix))
        key = match.group(1)
        if key in result:
            return None
        rest = line[match.end() :].rstrip(" ")
        value = _simple_scalar(rest)
        if value is _NO:
            return None
        result[key] = value
        start, end, prefix = i, i + 1, line[: line.index(":", len(key)) + 1]
        items, item_indent = ([] if not rest else None), -1
    if key is not None:
        entries.append(Entry(key, start, end, prefix))
    return result, entries


def loads(source: str, first_line: int = 1) -> tuple[dict, list[Entry]]:
    """Parse the content of a frontmatter block into typed properties.

    ``source`` is the text between the delimiters; ``first_line`` is the file
    line number of its first line (2 for a block after the opening ``---``).
    Returns ``(properties, entries)``; entries locate each top-level key.
    Raises :class:`FrontmatterError` for invalid YAML, YAML outside the
    subset, or a document that is not a mapping (BR-14: "frontmatter is a
    string, expected key: value pairs").
    """
    fast = _simple(source)
    if fast is not None:
        return fast
    parser = _Parser(source, first_line)
    try:
        value, entries = parser.document()
    except RecursionError:
        raise FrontmatterError("frontmatter is nested too deeply", first_line, 1) from None
    if isinstance(value, dict):
        return value, entries
    kind = {list: "a list", bool: "a boolean", int: "a number", float: "a number"}
    start = parser.next_content(0)
    name = "a string" if isinstance(value, str) else kind.get(type(value), "not a mapping")
    raise FrontmatterError(
        f"frontmatter is {name}, expected key: value pairs",
        first_line + start,
        1,
    )


# ---------------------------------------------------------------------------
# Writing values in the style Obsidian writes them

_NEEDS_QUOTES_START = set("[]{},&*!|>'\"%@`#")
# Characters YAML does not allow unescaped (outside c-printable), plus line
# separators and the BOM, which other readers treat as breaks or markers.
_NOT_PRINTABLE = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029\ufeff"
_SPECIAL = re.compile(rf": |:$| #|[\n\r\t{_NOT_PRINTABLE}]")
_ESCAPE = re.compile(rf'[\\"\n\r\t{_NOT_PRINTABLE}\x85]')


def format_scalar(value) -> str:
    """Return the YAML text for a scalar, quoted only when YAML needs it.

    Strings are double-quoted (escaping ``\\`` and ``"``) when they contain
    ``: `` or `` #``, have leading or trailing spaces, start with ``- ``,
    ``? ``, ``: `` or a YAML indicator (``[ ] { } , & * ! | > ' " % @ ` #``),
    contain control characters, or would read back as a bool, null, number
    (BR-06's writer rule).  A wikilink is therefore written ``"[[Link]]"``.
    Raises TypeError for values that are not scalars.
    """
    if value is None:
        return ""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()  # Obsidian's Date and Date & time, unquoted
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("frontmatter numbers must be finite")
        return repr(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} as a frontmatter scalar")
    if isinstance(value, Placeholder) and _whole_placeholder(value):
        return str(value)  # written back as it was read: {{date}}
    if _plain_ok(value):
        return value
    return double_quote(value)


def _whole_placeholder(value: str) -> bool:
    match = _unquoted_placeholder(value)
    return match is not None and match.end() == len(value)


def _plain_ok(value: str) -> bool:
    if not value or value != value.strip(" \t") or value[0] in _NEEDS_QUOTES_START:
        return False
    if value[:2] in ("- ", "? ", ": ") or value in ("-", "?", ":"):
        return False
    if _SPECIAL.search(value):
        return False
    return resolve_plain(value) == value and not _looks_typed(value)


_LOOKS_NUMERIC = re.compile(
    r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z|0[xXoObB]|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)\Z"
)
_YAML11 = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"}


_LOOKS_DATE = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::?[0-9]{2})?))?)?\Z"
)
_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")


def _looks_typed(value: str) -> bool:
    """True for strings other YAML readers would type: numbers, YAML 1.1
    booleans, dates and times (BR-06's writer rule).  Write a real date as a
    ``datetime.date`` to get it unquoted."""
    return (
        bool(_LOOKS_NUMERIC.match(value) or _LOOKS_DATE.match(value) or _SEXAGESIMAL.match(value)) or value in _YAML11
    )


_NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    ch = match.group()
    named = _NAMED_ESCAPES.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def double_quote(value: str) -> str:
    """``value`` as a YAML double-quoted scalar, every character a plain
    or single-quoted scalar cannot hold escaped (``a"b`` -> ``"a\\"b"``)."""
    return '"' + _ESCAPE.sub(_escape, value) + '"'


def _flow_scalar(value) -> str:
    """A scalar inside ``[...]`` or ``{...}``: flow indicators need quotes too."""
    text = format_scalar(value)
    if isinstance(value, Placeholder) and text == value:
        return text  # [{{title}}] reads back as the placeholder
    # ": " and "?" read differently in flow context for some YAML 1.1 readers
    if isinstance(value, str) and not text.startswith('"') and any(c in text for c in ",[]{}?:"):
        return double_quote(value)
    return text


def format_flow(value) -> str:
    """A value (scalar, list or mapping, nested) as YAML flow text on one
    line, as Obsidian writes a list inline: ``[a, "b: c"]``, ``{k: v}``;
    None is ``null``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_format_key(k, flow=True)}: {format_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_flow(v) for v in value) + "]"
    text = _flow_scalar(value)
    return text if text else "null"


def _format_key(key: str, flow: bool = False) -> str:
    """A mapping key as YAML text; in flow context ``,[]{}`` need quotes too."""
    if not isinstance(key, str):
        raise TypeError("frontmatter keys must be strings")
    key = str(key)  # a Placeholder is never a key ({{x}}: is a mapping as a key)
    return (_flow_scalar(key) if flow else format_scalar(key)) or '""'


# Characters no block scalar holds as themselves: YAML allows only printable
# characters there (no escapes), and CR and NEL would read as line breaks.
_NOT_IN_BLOCK = re.compile(rf"[\r\x85{_NOT_PRINTABLE}]")
_STYLES = ("literal", "folded", "quoted", "flow")


def _block_scalar(value, style: str, indent: str, newline: str) -> str | None:
    """``value`` as a block scalar placed after a key or a dash at column
    ``len(indent)``: its header (``|``, ``|-``, ``|+``, ``>2-``...) and its
    content lines indented two spaces more, each ending in ``newline``.
    None when ``value`` is not a multi-line string, ``style`` is
    ``"quoted"``, or ``value`` holds a character no block scalar holds as
    itself (``_NOT_IN_BLOCK``: it needs an escape, or reads as a line break).
    Spaces and tabs anywhere, trailing ones included, are content.

    Chomping follows the trailing line breaks (none ``-``, one clip, more
    ``+``); an indentation indicator is written when the first line that is
    not empty starts with white space (it would be taken for indentation).
    Folded, a line break between two lines that do not start with white space
    is written as an empty line (a single one would read as a space), so the
    text reads back as the value without wrapping anything."""
    if style == "quoted" or not isinstance(value, str) or "\n" not in value or _NOT_IN_BLOCK.search(value):
        return None
    body = value.rstrip("\n")
    breaks = len(value) - len(body)
    chomp = "-" if not breaks else "" if breaks == 1 and body else "+"
    segments = body.split("\n") if body else []
    lines: list[str] = []
    previous = None  # the last line with text
    for segment in segments:
        if style == "folded" and segment and previous and segment[0] not in " \t" and previous[0] not in " \t":
            lines.append("")  # read as the line break, where no empty line would read as a space
        lines.append(segment)
        if segment:
            previous = segment
    if chomp == "+":
        lines.extend([""] * (breaks - 1 if body else breaks))
    first = next((segment for segment in segments if segment), "")
    indicator = "2" if first[:1] in (" ", "\t") else ""
    header = ("|" if style == "literal" else ">") + indicator + chomp
    content = indent + "  "
    return header + newline + "".join((content + line if line else "") + newline for line in lines)


def format_property(
    key: str,
    value,
    indent: str = "",
    list_indent: str = "  ",
    newline: str = "\n",
    prefix: str | None = None,
    style: str = "literal",
) -> str:
    """Return the lines (with ``newline`` endings) that write ``key: value``.

    Lists are block lists (``- item``) indented by ``list_indent`` relative
    to the key, an empty list is ``[]``, a mapping is a nested block mapping,
    ``None`` is an empty value (``key:``).  ``prefix`` reuses a key as it is
    already written (``"my key":``).  A multi-line string (the value, a list
    item or a nested value) is a literal block scalar; ``style`` ``"folded"``
    writes the value itself folded (``>``), ``"quoted"`` writes every string
    on one line, double-quoted (see :func:`_block_scalar`); ``"flow"`` writes
    a list of one-line values as a flow list (``[a, b]``).  Raises TypeError
    for unsupported types.
    """
    if style not in _STYLES:
        raise ValueError(f"style must be one of {', '.join(_STYLES)}")
    inner = "quoted" if style == "quoted" else "literal"
    head = prefix if prefix is not None else indent + _format_key(key) + ":"
    if style == "flow" and isinstance(value, (list, tuple)) and value and not _has_block_string(value):
        return f"{head} {format_flow(list(value))}{newline}"
    if isinstance(value, (list, tuple)):
        if not value:
            return f"{head} []{newline}"
        lines = [head + newline]
        for item in value:
            dash = f"{indent}{list_indent}-"
            if isinstance(item, (list, tuple, dict)):
                lines.append(f"{dash} {format_flow(item)}{newline}")
            elif (block := _block_scalar(item, inner, indent + list_indent, newline)) is not None:
                lines.append(f"{dash} {block}")
            else:
                text = format_scalar(item)
                lines.append(f"{dash}{' ' + text if text else ''}{newline}")
        return "".join(lines)
    if isinstance(value, dict):
        if not value:
            return f"{head} {{}}{newline}"
        lines = [head + newline]
        for k, v in value.items():
            lines.append(format_property(k, v, indent + "  ", list_indent, newline, style=inner))
        return "".join(lines)
    block = _block_scalar(value, style, indent, newline)
    if block is not None:
        return f"{head} {block}"
    text = format_scalar(value)
    return f"{head} {text}{newline}" if text else f"{head}{newline}"


# ---------------------------------------------------------------------------
# Surgical edits


def _list_indent(lines: list[str], entries: tuple[Entry, ...]) -> str:
    """The indentation this file uses for block-list items under a key."""
    for entry in entries:
        rest = lines[entry.start][len(entry.prefix) :].strip()
        if entry.end - entry.start > 1 and (not rest or rest.startswith("#")):
            item = lines[entry.start + 1]
            stripped = item.lstrip(" ")
            if stripped.startswith("- ") or stripped.rstrip("\r\n") == "-":
                key_indent = len(entry.prefix) - len(entry.prefix.lstrip(" "))
                return " " * max(0, len(item) - len(stripped) - key_indent)
    return "  "


def _editable(text: str) -> Frontmatter | None:
    fm = parse(text)
    if fm is not None and fm.error is not None:
        raise fm.error
    if fm is not None and fm.properties and not fm.entries:
        raise FrontmatterError("frontmatter is written as a flow mapping; edit it by hand", 2, 1)
    return fm


def _newline_of(text: str) -> str:
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def set_property(text: str, key: str, value) -> str:
    """Return ``text`` with property ``key`` set to ``value``; nothing else changes.

    ``text`` is a note without its BOM.  An existing key's lines are replaced
    in place (the key keeps its spelling and position, its lines their line
    endings, its line its trailing ``# comment``); a new key is appended as
    the last line of the block; a note without frontmatter gets a new block
    before its first byte (BR-10).  New lines use the block's newline style
    and list indentation; a list written as a flow list with items
    (``[a, b]``) stays one.  Setting a key to the value it already has returns ``text``
    unchanged.

    Obsidian treats property names that differ only in letter case as one
    property, so ``key`` names the key written exactly so, else the one key
    written in another case (``Status`` for ``status``); it is never added a
    second time in another case.

    Raises :class:`FrontmatterError` when the block does not parse (invalid
    notes are never rewritten), when several keys differ from ``key`` only in
    letter case, and when the old value holds YAML comments on its own lines
    (between list items, after an item): a rewrite would lose them, so such a
    value is for a person to edit.

    A multi-line string is written as a literal block scalar, or folded when
    the key's old value was folded (``>``); the result is read back, and
    when the block scalar does not give exactly ``value`` (a ``|+`` value
    that blank lines after the key would lengthen) the next style is used,
    down to a double-quoted one-line scalar (see :func:`format_property`).
    """
    fm = _editable(text)
    entry = _entry_of(fm, key) if fm is not None else None
    if entry is not None and same_value(fm.properties[entry.key], value):
        return text
    styles = ["literal", "quoted"] if _has_block_string(value) else ["literal"]
    if entry is not None and _written_folded(text, fm, entry):
        styles.insert(0, "folded")
    if entry is not None and isinstance(value, (list, tuple)) and _written_flow(text, fm, entry):
        styles.insert(0, "flow")  # "tags: [a, b]" stays a flow list, as the person wrote it
    for style in styles:
        new = _set(text, fm, entry, key, value, style)
        if style == styles[-1] or _reads_back(new, entry.key if entry is not None else key, value):
            return new
    raise AssertionError("unreachable")


def _set(text: str, fm: Frontmatter | None, entry: Entry | None, key: str, value, style: str) -> str:
    """:func:`set_property` writing multi-line strings in ``style``."""
    if fm is None:
        newline = _newline_of(text)
        return f"---{newline}{format_property(key, value, newline=newline, style=style)}---{newline}{text}"
    lines = _split_lines(text[fm.start : fm.end])
    if not fm.entries:
        lines, at = _drop_empty_flow(lines, fm.newline)
        if at is not None:  # '{}': the key takes its place, in block style (BR-43)
            lines.insert(at, format_property(key, value, newline=fm.newline, style=style))
            return text[: fm.start] + "".join(lines) + text[fm.end :]
    list_indent = _list_indent(lines, fm.entries)
    if entry is not None:
        block = text[fm.start : fm.end]
        lines[entry.start : entry.end] = [_rewrite_entry(block, lines, entry, value, list_indent, style)]
    else:
        indent = ""
        if fm.entries:
            first = fm.entries[0].prefix
            indent = first[: len(first) - len(first.lstrip(" "))]
        lines.append(format_property(key, value, indent, list_indent, fm.newline, style=style))
    return text[: fm.start] + "".join(lines) + text[fm.end :]


def _has_block_string(value) -> bool:
    """Whether writing ``value`` may use a block scalar (a multi-line string in it)."""
    if isinstance(value, str):
        return "\n" in value
    if isinstance(value, dict):
        return any(_has_block_string(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_block_string(v) for v in value if not isinstance(v, (list, tuple, dict)))
    return False


def _written_folded(text: str, fm: Frontmatter, entry: Entry) -> bool:
    """Whether ``entry``'s value is written as a folded block scalar (``>``)."""
    first = _content(_split_lines(text[fm.start : fm.end])[entry.start])
    return first[len(entry.prefix) :].lstrip(" \t").startswith(">")


def _written_flow(text: str, fm: Frontmatter, entry: Entry) -> bool:
    """Whether ``entry``'s value is written as a flow list with items
    (``[a, b]``; ``[]`` is how any empty list is written, and gets a block
    list as Obsidian writes one)."""
    first = _content(_split_lines(text[fm.start : fm.end])[entry.start])
    return bool(fm.properties.get(entry.key)) and first[len(entry.prefix) :].lstrip(" \t").startswith("[")


def _reads_back(text: str, key: str, value) -> bool:
    """Whether ``text`` parses and gives ``key`` exactly ``value``."""
    fm = parse(text)
    return fm is not None and fm.error is None and key in fm.properties and same_value(fm.properties[key], value)


def _entry_of(fm: Frontmatter, key: str) -> Entry | None:
    """The entry of ``key``: written exactly so, else the only key that
    differs from it in letter case alone (Obsidian's reading), else None."""
    for entry in fm.entries:
        if entry.key == key:
            return entry
    folded = key.lower()
    same = [entry for entry in fm.entries if entry.key.lower() == folded]
    if len(same) > 1:
        first = same[0]
        raise FrontmatterError(
            f"keys {', '.join(repr(e.key) for e in same)} differ only in letter case and Obsidian reads them "
            f"as one property {key!r}; merge them by hand",
            first.start + 2,
        )
    return same[0] if same else None


def _rewrite_entry(block: str, lines: list[str], entry: Entry, value, list_indent: str, style: str) -> str:
    """The new lines of ``entry`` holding ``value``: each line keeps the line
    ending of the old line at its place (the last old line's for extra lines),
    and the key line keeps its trailing comment.  Raises FrontmatterError when
    a comment sits inside the old value (after the key line)."""
    old = lines[entry.start : entry.end]
    comments = _value_comments(block, lines, entry)
    indent = entry.prefix[: len(entry.prefix) - len(entry.prefix.lstrip(" "))]
    new = format_property(entry.key, value, indent, list_indent, "\n", prefix=entry.prefix, style=style)
    new = new.split("\n")[:-1]
    if entry.start in comments:  # "key: v  # why" keeps its why
        content = _content(old[0])
        column = comments[entry.start]
        while column > len(entry.prefix) and content[column - 1] in " \t":
            column -= 1
        new[0] += content[column:]
    endings = [line[len(_content(line)) :] for line in old]
    return "".join(line + endings[min(n, len(endings) - 1)] for n, line in enumerate(new))


def _value_comments(block: str, lines: list[str], entry: Entry) -> dict[int, int]:
    """The comments of the block (see :func:`_comment_columns`) when none sits
    inside ``entry``'s value; raises FrontmatterError when one does (a whole
    line between its items, or after an item on a later line)."""
    if not any("#" in line for line in lines[entry.start : entry.end]):
        return {}
    comments = _comment_columns(block)
    inside = sorted(i for i in comments if entry.start < i < entry.end)
    if inside:
        at = inside[0]
        raise FrontmatterError(
            f"the value of {entry.key!r} holds YAML comments, which rewriting it would lose; edit it by hand",
            at + 2,
            comments[at] + 1,
        )
    return comments


def edit_problem(text: str, key: str) -> FrontmatterError | None:
    """Why :func:`set_property` would refuse to give ``key`` a new value in
    ``text`` (the block does not parse, is a flow mapping, has several keys
    that differ from ``key`` only in case, or the value holds comments), or
    None when it would write it."""
    try:
        fm = _editable(text)
        entry = _entry_of(fm, key) if fm is not None else None
        if entry is not None:
            block = text[fm.start : fm.end]
            _value_comments(block, _split_lines(block), entry)
    except FrontmatterError as exc:
        return exc
    return None


def _content(line: str) -> str:
    """A block line without its line ending (LF or CRLF), as the parser reads it."""
    if line.endswith("\n"):
        line = line[:-1]
    return line[:-1] if line.endswith("\r") else line


def _comment_columns(source: str) -> dict[int, int]:
    """Where the YAML comments of a frontmatter block's content are:
    line index (0 = the line after the opening ``---``) -> column of the
    ``#``.  Lines of block scalars and quoted scalars hold no comments.
    Raises :class:`FrontmatterError` when the content does not parse."""
    parser = _Parser(source, 2)
    parser.document()
    return parser.comments


def _drop_empty_flow(lines: list[str], newline: str) -> tuple[list[str], int | None]:
    """The block's lines without an empty flow mapping (``{}``, on one line
    or several), and the index where it stood (None if there was none).
    A comment on its lines stays, on a line of its own."""
    kept: list[str] = []
    at = None
    for line in lines:
        content = line.rstrip("\r\n")
        if not content.strip() or content.lstrip().startswith("#"):
            kept.append(line)
            continue
        if at is None:
            at = len(kept)
        comment = _trailing_comment(content).strip()
        if comment:
            kept.append(comment + newline)
    return kept, at


def _trailing_comment(rest: str) -> str:
    """The ``  # comment`` at the end of a line's value part, with the
    spaces before it, or ``""`` (quotes are skipped)."""
    quote = None
    i = 0
    while i < len(rest):
        ch = rest[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote == "'" and rest[i + 1 : i + 2] == "'":
                i += 1  # '' is a quote inside a single-quoted scalar
            elif ch == quote:
                quote = None
        elif ch in ("'", '"') and not rest[:i].strip():
            quote = ch
        elif ch == "#" and i > 0 and rest[i - 1] in " \t":
            start = i
            while start > 0 and rest[start - 1] in " \t":
                start -= 1
            return rest[start:]
        i += 1
    return ""


def delete_property(text: str, key: str) -> str:
    """Return ``text`` without property ``key`` (its lines removed), else unchanged.

    ``key`` names a key as :func:`set_property` does (letter case aside when
    no key is written exactly so).  Raises :class:`FrontmatterError` when the
    block does not parse or several keys differ from ``key`` only in case.
    """
    fm = _editable(text)
    if fm is None:
        return text
    entry = _entry_of(fm, key)
    if entry is None:
        return text
    lines = _split_lines(text[fm.start : fm.end])
    del lines[entry.start : entry.end]
    return text[: fm.start] + "".join(lines) + text[fm.end :]


def _split_lines(block: str) -> list[str]:
    """Split on ``\\n`` only (str.splitlines also splits on U+2028 and others)."""
    parts = block.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def same_value(old, new) -> bool:
    """Typed equality that does not confuse True with 1 or 1 with 1.0; a
    :class:`Placeholder` is the same as its text."""
    if isinstance(old, str) and isinstance(new, str):
        return old == new
    if type(old) is not type(new) and not (isinstance(new, tuple) and isinstance(old, list)):
        return False
    if isinstance(old, dict):
        return old.keys() == new.keys() and all(same_value(old[k], new[k]) for k in old)
    if isinstance(old, list):
        return len(old) == len(new) and all(same_value(a, b) for a, b in zip(old, new, strict=True))
    return old == new
