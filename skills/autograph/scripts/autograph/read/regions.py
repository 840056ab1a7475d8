"""Code and comments: the regions of a note where nothing is a link.

:func:`code_regions` gives the sorted, disjoint ``(start, end)`` offsets of
fenced code, indented code, inline code, ``%% comments %%``, ``<!-- HTML
comments -->`` and math.  Code follows CommonMark 0.31 (fences, indented
blocks, code spans); comments and math are Obsidian's extensions.  Every
command that reads links or headings skips these regions.

tests/test_commonmark_oracle.py checks the code part against a CommonMark
parser (markdown-it-py) on every note of the real corpora.
"""

from __future__ import annotations

import re
from bisect import bisect_right

__all__ = ["code_regions", "inside"]

# Speed matters here (every note of every vault, every run), so constructs
# are found with str.find, which is many times faster than a regex scan, and
# regexes only run where a construct was found.

_PARAGRAPH_END = re.compile(r"\n[ \t>]*\n")
_fence_close_cache: dict[tuple[str, int], re.Pattern] = {}


def _fence_close(char: str, length: int) -> re.Pattern:
    """A candidate closing fence line; group 1 is its prefix (spaces, tabs,
    ``>``), which :func:`_fence` checks against the fence's container."""
    key = (char, length)
    pattern = _fence_close_cache.get(key)
    if pattern is None:
        pattern = re.compile(rf"^([ \t>]*){re.escape(char)}{{{length},}}[ \t]*\r?$", re.M)
        _fence_close_cache[key] = pattern
    return pattern


def _escaped(text: str, index: int) -> bool:
    """Whether text[index] follows an odd number of backslashes."""
    count = 0
    while index > count and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _run_end(text: str, start: int, char: str) -> int:
    end = start + 1
    size = len(text)
    while end < size and text[end] == char:
        end += 1
    return end


_leaves_item_cache: dict[int, re.Pattern] = {}


def _leaves_item(column: int) -> re.Pattern:
    """A line that ends a list item whose content starts at ``column``."""
    pattern = _leaves_item_cache.get(column)
    if pattern is None:
        pattern = re.compile(rf"\n(?=[ ]{{0,{column - 1}}}[^ \t\r\n])")
        _leaves_item_cache[column] = pattern
    return pattern


def _list_column(text: str, line_start: int, indent: int) -> int:
    """Content column of the list item holding the line at ``line_start``
    (indented ``indent`` columns), or 0 outside lists."""
    pos = line_start
    while pos > 0:
        end = pos - 1
        pos = text.rfind("\n", 0, end) + 1
        line = text[pos:end]
        stripped = line.lstrip(" \t")
        if not stripped.strip():
            continue
        width = _width(line[: len(line) - len(stripped)])
        if width >= indent:
            continue  # more of the same container
        item = _LIST_ITEM.match(line)
        if item is None or _RULE.match(line):
            return 0
        column = _item_column(line, item)
        return column if column <= indent else 0
    return 0


# What may stand before a fence on its line: block quote markers, then
# indentation and list item markers (``- ```js`` opens a fence in the item).
_FENCE_PREFIX = re.compile(r"((?:[ \t]*>)*)([ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*)")


def _fence(text: str, start: int, end: int) -> int:
    """If the run text[start:end] opens a fenced code block, the offset where
    the block ends, else -1.

    The fence closes at a closing run of the same character at least as long
    on a line of the same container: outside containers a line indented at
    most 3 spaces with no ``>`` (a quoted fence line inside a top-level fence
    is code), in a block quote a line with as many ``>`` markers, in a list item
    a line indented 0-3 columns beyond the item's content.  Else it closes
    where its container ends: a block quote at the first line with fewer
    ``>`` markers, a list item at the first line indented less than its
    content (blank lines stay inside; a fence opened on the item's own line,
    ``- ```js``, too); else at the end of the text (CommonMark).  A fence
    indented 4+ columns beyond its container is indented code, not a fence.
    """
    size = len(text)
    if end - start < 3:
        return -1
    line_start = text.rfind("\n", 0, start) + 1
    prefix = _FENCE_PREFIX.fullmatch(text, line_start, start)
    if prefix is None:
        return -1
    line_end = text.find("\n", end)
    line_end = size if line_end < 0 else line_end
    char = text[start]
    if char == "`" and "`" in text[end:line_end]:
        return -1
    quotes = prefix.group(1).count(">")
    indent_text = prefix.group(2)
    if quotes and indent_text[:1] == " ":
        indent_text = indent_text[1:]  # the space after ">" belongs to the marker
    indent = _width(indent_text)
    item = _LIST_ITEM.match(indent_text) if indent_text else None
    if item is not None:
        # the fence starts the item's content, unless 5+ spaces follow the
        # marker (then it is indented code inside the item)
        if _width(indent_text[: item.end()]) - _width(indent_text[: item.end(2)]) > 4:
            return -1
        column = indent
    elif quotes or not indent:
        column = 0
    else:
        column = _list_column(text, line_start, indent)
        if indent - column >= 4:
            return -1
    if quotes:
        return _quoted_fence_end(text, line_end, quotes, column, char, end - start)
    limit = size
    if column:
        leave = _leaves_item(column).search(text, line_end)
        limit = leave.start() if leave else size
    close = _fence_close(char, end - start)
    pos = line_end
    while True:
        found = close.search(text, pos, limit)
        if found is None:
            return limit
        lead = found.group(1)
        if ">" not in lead and column <= _width(lead) <= column + 3:
            return found.end()
        pos = found.end()


_quote_markers_cache: dict[int, re.Pattern] = {}


def _quoted_fence_end(text: str, line_end: int, quotes: int, column: int, char: str, length: int) -> int:
    """End of a fence inside ``quotes`` nested block quotes (content column
    ``column`` after the markers, for a fence in a list item there): at a
    closing line with as many ``>`` markers, else before the first line with
    fewer markers (the quote ends) or, in a list item, the first line
    indented less than the item's content."""
    markers = _quote_markers_cache.get(quotes)
    if markers is None:
        markers = _quote_markers_cache[quotes] = re.compile(rf"(?:[ \t]*>[ ]?){{{quotes}}}")
    size = len(text)
    pos = line_end
    while pos < size:
        start = pos + 1
        end = text.find("\n", start)
        end = size if end < 0 else end
        found = markers.match(text, start, end)
        if found is None:
            return pos
        rest = text[found.end() : end].rstrip("\r")
        content = rest.lstrip(" \t")
        if content:
            indent = _width(rest[: len(rest) - len(content)])
            if indent < column:
                return pos
            if indent <= column + 3 and content.startswith(char * length) and not content.rstrip(" \t").strip(char):
                return end
        pos = end
    return size


def _code_span_end(text: str, start: int, end: int) -> int:
    """End of the inline code opened by the backtick run text[start:end],
    or -1: the closing run has the same length and lies in the same block
    (a paragraph, a heading, a list item's line: see :func:`_crosses_block`)."""
    run = text[start:end]
    length = len(run)
    k = text.find(run, end)
    while k >= 0:
        if _crosses_block(text, start, k):
            return -1
        close_end = _run_end(text, k, "`")
        if close_end - k == length:
            return close_end
        k = text.find(run, close_end)
    return -1


# A line that starts a new block, so that no code span continues onto it: a
# blank line, an ATX heading, a list item, a fence, a setext underline or a
# thematic break (after any block quote markers and indentation).
_BLOCK_START = re.compile(
    r"\n(?=[ \t]*(?:>[ \t]*)*(?:\r?$|#{1,6}(?:[ \t]|\r?$)|(?:[-+*]|\d{1,9}[.)])(?:[ \t]|\r?$)|`{3}|~{3}"
    r"|(?:=+|-+)[ \t]*\r?$|(?:\*[ \t]*){3,}\r?$|(?:_[ \t]*){3,}\r?$))",
    re.M,
)
_ATX_LINE = re.compile(r"(?:[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)])(?=[ \t])))*[ \t]*#{1,6}(?:[ \t]|\r?$)", re.M)
_QUOTE_MARKERS = re.compile(r"[ \t]*((?:>[ \t]*)*)")


def _crosses_block(text: str, start: int, k: int) -> bool:
    """Whether a block ends between the opening backticks at ``start`` and
    the closing run at ``k``: CommonMark pairs backticks only within one
    paragraph or heading, so not across two list items, into a heading or
    out of one, or across a blank line."""
    nl = text.find("\n", start, k)
    if nl < 0:
        return False  # the usual case: both on one line
    line_start = text.rfind("\n", 0, start) + 1
    if _ATX_LINE.match(text, line_start):
        return True  # a heading is one line
    line_end = text.find("\n", k)
    if _BLOCK_START.search(text, nl, len(text) if line_end < 0 else line_end):
        return True
    if ">" in text[line_start:k]:
        # a block quote deeper than the paragraph's starts a new block; a
        # shallower line is a lazy continuation of the paragraph
        depth = _QUOTE_MARKERS.match(text, line_start).group(1).count(">")
        while nl >= 0:
            if _QUOTE_MARKERS.match(text, nl + 1).group(1).count(">") > depth:
                return True
            nl = text.find("\n", nl + 1, k)
    return False


def _math_end(text: str, start: int) -> int:
    """End of the math opened by the ``$`` at ``start``, or -1 (pandoc's
    rule, which Obsidian follows closely: ``$$ ... $$`` may span lines;
    inline ``$x$`` opens before a non-space, closes after a non-space, not
    before a digit, within its paragraph, so "$5 and $10" is not math)."""
    if start > 0 and text[start - 1] == "\\":
        return -1
    if text.startswith("$$", start):
        close = text.find("$$", start + 2)
        return close + 2 if close >= 0 else -1
    size = len(text)
    if start + 1 >= size or text[start + 1] in " \t\r\n":
        return -1
    para = _PARAGRAPH_END.search(text, start)
    limit = para.start() if para else size
    k = text.find("$", start + 1, limit)
    while k >= 0:
        if text[k - 1] not in " \t\r\n\\" and not (k + 1 < size and text[k + 1].isdigit()):
            return k + 1
        k = text.find("$", k + 1, limit)
    return -1


def code_regions(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint ``(start, end)`` offsets of code and comments in ``text``.

    Covers fenced code (backticks or tildes, also inside lists and quotes; an
    unclosed fence runs to the end of its container, as in CommonMark),
    indented code blocks, inline code (closed within its block, else the
    backticks are literal, as is a backtick after a backslash), ``%%``
    comments and ``<!-- -->`` comments (both run to the end when unclosed),
    and math (``$...$``, ``$$...$$``; see :func:`_math_end`).  Whichever
    construct starts first wins.
    """
    regions: list[tuple[int, int]] = []
    size = len(text)
    find = text.find
    # next occurrence of each marker (size = none left); a tight loop because
    # real vaults hold tens of thousands of comments
    tick, pct, html, dollar = find("`"), find("%%"), find("<!--"), find("$")
    tilde = find("~")  # finding one character is several times faster
    if tilde >= 0:
        tilde = find("~~~", tilde)
    tick = size if tick < 0 else tick
    tilde = size if tilde < 0 else tilde
    pct = size if pct < 0 else pct
    html = size if html < 0 else html
    dollar = size if dollar < 0 else dollar
    pos = 0
    while True:
        start = min(tick, tilde, pct, html, dollar)
        if start >= size:
            break
        end = -1
        if start == dollar:
            end = _math_end(text, start)
            if end < 0:
                pos = start + (2 if text.startswith("$$", start) else 1)
        elif start == pct or start == html:
            # comments often come in runs, of both kinds mixed (a template's
            # "%% ... %%" notes between "<!-- -->" blocks): take each one
            # before the next other marker in an inner loop
            limit = min(tick, tilde, dollar)
            while start < limit:
                if start == pct:
                    close = find("%%", start + 2)
                    pos = size if close < 0 else close + 2
                else:
                    close = find("-->", start + 4)
                    pos = size if close < 0 else close + 3
                regions.append((start, pos))
                if pct < pos:
                    pct = find("%%", pos)
                    pct = size if pct < 0 else pct
                if html < pos:
                    html = find("<!--", pos)
                    html = size if html < 0 else html
                start = pct if pct < html else html
        elif start and text[start - 1] == "\\" and _escaped(text, start):
            pos = start + 1  # \` is a literal backtick (or tilde); the rest of the run may open code
        else:
            char = text[start]
            run_end = _run_end(text, start, char)
            end = _fence(text, start, run_end)
            if end < 0 and char == "`":
                end = _code_span_end(text, start, run_end)
            if end < 0:
                pos = run_end
        if end >= 0:
            regions.append((start, end))
            pos = end
        if tick < pos:
            tick = find("`", pos)
            tick = size if tick < 0 else tick
        if tilde < pos:
            tilde = find("~~~", pos)
            tilde = size if tilde < 0 else tilde
        if pct < pos:
            pct = find("%%", pos)
            pct = size if pct < 0 else pct
        if html < pos:
            html = find("<!--", pos)
            html = size if html < 0 else html
        if dollar < pos:
            dollar = find("$", pos)
            dollar = size if dollar < 0 else dollar
    if _has_indented_candidate(text):
        regions = _merge(regions, _indented_code(text, regions))
    return regions


# A line after which an indented line starts code rather than continuing a
# paragraph: a heading, a thematic break, a fence line.
_BLOCK_END = re.compile(r"[ ]{0,3}(?:#{1,6}(?:[ \t]|\r?$)|([-*_])(?:[ \t]*\1){2,}[ \t]*\r?$|`{3,}|~{3,})")


def _has_indented_candidate(text: str) -> bool:
    """Cheap test: could some line start an indented code block (indented 4+
    columns after a blank line, a heading, a thematic break or a fence)?"""
    if text.startswith(("    ", "\t")):
        return True
    # few notes hold a tab at all, and finding one character is fast
    for marker in ("\n    ", "\n\t") if "\t" in text else ("\n    ",):
        i = text.find(marker)
        while i >= 0:
            previous = text[text.rfind("\n", 0, i) + 1 : i].rstrip("\r")
            if not previous.strip() or _BLOCK_END.match(previous):
                return True
            i = text.find(marker, i + 1)
    return False


_LIST_ITEM = re.compile(r"([ \t]*)([-+*]|\d{1,9}[.)])([ \t]+|$)")
_RULE = re.compile(r"[ ]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*\r?$")  # "- - -" is a thematic break, not an item


def _item_column(line: str, item: re.Match) -> int:
    """Column where a list item's content starts (CommonMark: after the marker
    and 1-4 spaces; 1 when more spaces follow, which start indented code)."""
    marker = _width(line[: item.end(2)])
    spaces = _width(line[: item.end(3)]) - marker
    return marker + (spaces if 1 <= spaces <= 4 else 1)


def _width(prefix: str) -> int:
    """Column width of leading whitespace (tabs to the next multiple of 4)."""
    col = 0
    for ch in prefix:
        col = col + 4 - col % 4 if ch == "\t" else col + 1
    return col


def _indented_code(text: str, regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Indented code blocks (CommonMark): lines indented 4+ columns beyond the
    open list item's content that do not continue a paragraph (they follow a
    blank line, a heading, a thematic break, a fenced block or more code).
    Continuation lines of list items are therefore not code.  A heading, rule
    or fence indented less than an item's content closes the item (only
    paragraph text continues an item lazily)."""
    found: list[tuple[int, int]] = []
    lists: list[int] = []  # content columns of the open list items
    starts = [start for start, _ in regions]
    blank_before = True  # no paragraph is open, so indentation starts code
    in_code = False
    pos = 0
    size = len(text)
    while pos < size:
        nl = text.find("\n", pos)
        end = size if nl < 0 else nl
        line = text[pos:end]
        stripped = line.lstrip(" \t")
        if inside(regions, starts, pos):
            if lists and text.startswith(("```", "~~~"), pos) and regions[bisect_right(starts, pos) - 1][0] == pos:
                lists.clear()  # a fence at column 0 closes every list
            blank_before, in_code = True, False
        elif not stripped.strip():
            blank_before = True
        else:
            col = _width(line[: len(line) - len(stripped)])
            if lists and col < lists[-1] and (blank_before or _BLOCK_END.match(stripped)):
                # after a blank line, or at a heading, a rule or a fence (no
                # lazy continuation), a less indented line closes the items
                while lists and col < lists[-1]:
                    lists.pop()
            base = lists[-1] if lists else 0
            if col - base >= 4 and (blank_before or in_code):
                if in_code:
                    found[-1] = (found[-1][0], end)
                else:
                    found.append((pos, end))
                in_code = True
            else:
                in_code = False
                item = _LIST_ITEM.match(line)
                if item and not _RULE.match(line):
                    while lists and lists[-1] > col:
                        lists.pop()
                    lists.append(_item_column(line, item))
                elif col < 4 and _BLOCK_END.match(line.rstrip("\r")):
                    blank_before = True  # a heading or rule closes no paragraph
                    pos = end + 1
                    continue
            blank_before = False
        pos = end + 1
    return found


def _merge(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(a + b):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def inside(regions: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    """Whether ``offset`` lies in one of ``regions`` (``starts``: their start offsets)."""
    index = bisect_right(starts, offset) - 1
    return index >= 0 and regions[index][1] > offset
