"""Body sections: find a section by its heading, list its items, append lines.

The one writer of the body sections autograph maintains (``## History``,
``## Log``, ``## Related``): ``card.py``, ``enrich.py`` and ``dedup.py``
write through :func:`append`, and every ``## History`` line is made by
:func:`history_line`, so that an update and a merge leave the same format.

A section is the text from its heading line to just before the next
heading of the same or a higher level (or the end of the note).  Headings
are found as :mod:`links` finds them (ATX and setext, never inside code,
comments or math) and only in the body: a ``# comment`` in the frontmatter
is no heading.  A section is looked up by an ATX heading's text, compared
case-insensitively after trimming.  Appending changes nothing but the
inserted lines: every other byte (CRLF line ends, trailing spaces, the
frontmatter) stays.
"""

from __future__ import annotations

import re

from ..read import frontmatter as fm
from ..read.links import heading_lines
from ..read.regions import code_regions, inside

__all__ = ["append", "find", "flow_text", "headings", "history_line", "items", "newline_of"]

# a list item: "-", "*" or "+", or "1." / "1)", then a space, a tab or the line end
_ITEM = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]|\r?$)")


def newline_of(text: str) -> str:
    """``"\\r\\n"`` when the first line of ``text`` ends in CRLF, else ``"\\n"``."""
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def _body_offset(text: str) -> int:
    block = fm.parse(text)
    return block.body if block is not None else 0


def _headings(text: str) -> list[tuple[int, int, str, bool]]:
    """``(offset in text, level, title, is ATX)`` of the body's headings
    outside code, in order."""
    offset = _body_offset(text)
    return [(offset + s, lv, t, atx) for s, lv, t, atx in heading_lines(text[offset:])]


def headings(text: str) -> list[tuple[int, int, str, bool]]:
    """``(offset in text, level, title, is ATX)`` of every heading of the
    note ``text`` (or a body) outside code and the frontmatter, in order;
    titles trimmed.  What :func:`find` reads."""
    return _headings(text)


def find(text: str, heading: str) -> tuple[int, int] | None:
    """``(start, end)`` character offsets in ``text`` of the first section
    whose ATX heading (any level 1-6) is ``heading`` (compared
    case-insensitively, trimmed): from the heading line's start to just
    before the next heading of the same or a higher level, or the end of
    the text.  None when there is none.  ``text`` is a whole note (its
    frontmatter is skipped) or a body."""
    wanted = heading.strip().casefold()
    found = _headings(text)
    for k, (start, level, title, atx) in enumerate(found):
        if atx and title.casefold() == wanted:
            end = next((s for s, lv, _, _ in found[k + 1 :] if lv <= level), len(text))
            return start, end
    return None


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``(line start, line end without its line break)`` of the lines of
    ``text[start:end]`` (``start`` at a line start)."""
    spans = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        content_end = stop - 1 if stop > pos and text[stop - 1] == "\r" else stop
        spans.append((pos, content_end))
        pos = end if nl < 0 else nl + 1
    return spans


def append(text: str, heading: str, lines: list[str], level: int = 2) -> str:
    """``text`` with ``lines`` (each without its line break) appended at the
    end of section ``heading``: right after its last non-blank line, before
    any blank lines that follow it.  When the note has no such section,
    ``#``×``level`` ``heading`` is created at the end of the note, after one
    blank line.  Line breaks are the text's own (CRLF stays CRLF); every
    other byte of ``text`` stays.  ``lines`` empty: ``text`` unchanged.
    Raises ValueError for a line that holds a line break or only ``-``
    and ``=`` (an empty list item ``- `` would make the line above a
    setext heading), and when the
    lines would land inside code or a comment the note never closes (they
    would be no section lines; nothing is closed for the writer)."""
    if not lines:
        return text
    if any("\n" in line or "\r" in line for line in lines):
        raise ValueError("a section line cannot hold a line break")
    if any(line.strip() and not line.strip(" \t=-") for line in lines):
        # "=" or "-" alone under a line of text would make that text a heading
        raise ValueError("a section line of only '-' or '=' would turn the line above into a heading")
    nl = newline_of(text)
    added = "".join(line + nl for line in lines)
    section = find(text, heading)
    if section is not None:
        start, end = section
        spans = _lines(text, start, end)
        last = next(span for span in reversed(spans) if text[span[0] : span[1]].strip() or span[0] == start)
        at = last[1]
        lead = ""
        if text.startswith("\r\n", at):
            at += 2
        elif text.startswith("\n", at):
            at += 1
        else:  # the last line of the note had no line break
            lead, added = nl, added.removesuffix(nl)
        after = text[at:].split("\n", 1)[0]
        if after.strip() and not after.lstrip(" ").startswith("#"):
            # the next section's heading is a setext one (its text line
            # follows at once): without a blank line our last line would
            # take that text in as its continuation, and the heading is gone
            added += nl
        new, at = text[:at] + lead + added + text[at:], at + len(lead)
    else:
        lead = ""
        if text and not text.endswith("\n"):
            lead = nl + nl
        elif text and not (text.endswith("\n\n") or text.endswith("\n\r\n")) and text.strip():
            lead = nl
        new, at = text + lead + "#" * level + " " + heading.strip() + nl + added, len(text) + len(lead)
    if _in_code(new, at):
        raise ValueError(
            f"the lines for '{heading.strip()}' would land inside code or a comment that is never closed "
            "(a fence, %%, <!--, $$); close it first"
        )
    return new


def _in_code(text: str, offset: int) -> bool:
    """Whether ``offset`` of the whole note ``text`` lies in code, a comment
    or math of its body."""
    body = _body_offset(text)
    regions = code_regions(text[body:])
    return inside(regions, [s for s, _ in regions], offset - body)


def items(text: str, heading: str) -> list[str]:
    """The list-item lines (``- ...``, ``* ...``, ``+ ...``, ``1. ...``,
    nested ones too) of section ``heading``, stripped, in order, leaving out
    lines inside code; ``[]`` when there is no such section."""
    section = find(text, heading)
    if section is None:
        return []
    start, end = section
    chunk = text[start:end]
    regions = code_regions(chunk)
    starts = [s for s, _ in regions]
    found = []
    for line_start, line_end in _lines(chunk, 0, len(chunk))[1:]:
        if _ITEM.match(chunk, line_start) and not inside(regions, starts, line_start):
            found.append(chunk[line_start:line_end].strip())
    return found


def flow_text(value) -> str:
    """One value as YAML flow text on one line: ``[a, b]``, ``"a: b"``,
    ``null`` for None, line breaks escaped inside double quotes."""
    if value is None:
        return "null"
    return fm.format_flow(value)


def _history_value(value) -> str:
    """:func:`flow_text`, but text holding the arrow is double-quoted, so
    the line splits into its old and new value in one way only."""
    text = flow_text(value)
    if " → " in text and isinstance(value, str) and not text.startswith(('"', "'")):
        return fm.double_quote(value)
    return text


def history_line(day: str, field: str, old, new=None, source: str | None = None) -> str:
    """The one ``## History`` line format, shared by ``card.py set`` and
    dedup's merge: ``- 2026-12-01: role: CTO → CEO``; with ``new`` None
    ``- 2026-12-01: role: CTO``; with ``source`` `` (from [[source]])`` is
    appended.  ``day`` is an ISO date (``YYYY-MM-DD``); values are written
    as YAML flow text (lists as ``[a, b]``, text quoted only where YAML
    needs it, line breaks escaped), so the line is one line."""
    line = f"- {day}: {field}: {_history_value(old)}"
    if new is not None:
        line += f" → {_history_value(new)}"
    if source is not None:
        line += f" (from [[{source}]])"
    return line
