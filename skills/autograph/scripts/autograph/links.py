"""Links: scanning wikilinks, embeds and Markdown links; Obsidian's resolution.

Scanning (:func:`scan`) finds ``[[target]]``, ``[[target|alias]]``,
``[[target#heading]]``, ``[[target#^block]]``, ``[[#heading]]``, embeds
``![[...]]``, ``\\|`` inside tables and Markdown links ``[text](path%20x.md)``.
Nothing inside code is a link: fenced code (backticks or tildes, any length,
also unclosed: it runs to the end of the note), indented code blocks, inline
code, ``%% comments %%`` and ``<!-- HTML comments -->``.  Links inside
frontmatter string values count too (:func:`property_links`).

Resolution (:class:`Resolver`) follows Obsidian: compare case-insensitively
after Unicode NFC normalisation with ``.md`` optional; the candidates are the
files whose path ends with the link path; an exact vault path wins, then a
match in the linking note's own folder, then the shortest path (exact letter
case first, BR-18).  Other files (images, PDFs, ``.canvas``, ``.base``)
resolve by their full name.  A bare ``[[Alias]]`` does not resolve through
``aliases``, as in Obsidian.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from bisect import bisect_right
from typing import NamedTuple
from urllib.parse import unquote

__all__ = [
    "Link",
    "Resolution",
    "Resolver",
    "anchor_key",
    "block_ids",
    "code_regions",
    "headings",
    "property_links",
    "scan",
]


class Link(NamedTuple):
    """One link occurrence.

    ``target`` is the path part as written (unescaped; ``%``-decoded for
    Markdown links), ``''`` for a link into the same note.  ``fragment`` is
    the text after the first ``#`` (``Heading``, ``H1#H2`` or ``^block``).
    ``alias`` is the display text (an image size for embeds) or None.
    ``line`` is the 1-based line in the file; ``start``/``end`` are offsets
    in the scanned text.  ``kind`` is ``"wikilink"``, ``"markdown"`` or
    ``"property"`` (a wikilink in a frontmatter value, ``key`` naming it).
    """

    target: str
    fragment: str
    alias: str | None
    embed: bool
    kind: str
    line: int
    start: int
    end: int
    key: str | None = None

    @property
    def text(self) -> str:
        """The link as a reader would write it: target plus ``#fragment``."""
        return self.target + ("#" + self.fragment if self.fragment else "")


# ---------------------------------------------------------------------------
# Code and comments: regions where nothing is a link
#
# Speed matters here (every note of every vault, every run), so constructs
# are found with str.find, which is many times faster than a regex scan, and
# regexes only run where a construct was found.

_PARAGRAPH_END = re.compile(r"\n[ \t>]*\n")
_fence_close_cache: dict[tuple[str, int], re.Pattern] = {}


def _fence_close(char: str, length: int) -> re.Pattern:
    key = (char, length)
    pattern = _fence_close_cache.get(key)
    if pattern is None:
        pattern = re.compile(rf"^[ \t>]*{re.escape(char)}{{{length},}}[ \t]*\r?$", re.M)
        _fence_close_cache[key] = pattern
    return pattern


def _run_end(text: str, start: int, char: str) -> int:
    end = start + 1
    size = len(text)
    while end < size and text[end] == char:
        end += 1
    return end


_LEAVES_QUOTE = re.compile(r"\n(?![ \t]*>)")
_leaves_item_cache: dict[int, re.Pattern] = {}


def _leaves_item(column: int) -> re.Pattern:
    """A line that ends a list item whose content starts at ``column``."""
    pattern = _leaves_item_cache.get(column)
    if pattern is None:
        pattern = re.compile(rf"\n(?=[ ]{{0,{column - 1}}}[^ \t\n])")
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
        if item is None:
            return 0
        column = _item_column(line, item)
        return column if column <= indent else 0
    return 0


def _fence(text: str, start: int, end: int) -> int:
    """If the run text[start:end] opens a fenced code block, the offset where
    the block ends, else -1.

    The fence closes at a closing run of the same character at least as long,
    or where its container ends: a block quote at the first line without
    ``>``, a list item at the first line indented less than its content; else
    at the end of the text (CommonMark).  A fence indented 4+ columns beyond
    its container is indented code, not a fence.
    """
    size = len(text)
    if end - start < 3:
        return -1
    line_start = text.rfind("\n", 0, start) + 1
    prefix = text[line_start:start]
    if prefix.strip(" \t>"):
        return -1
    line_end = text.find("\n", end)
    line_end = size if line_end < 0 else line_end
    char = text[start]
    if char == "`" and "`" in text[end:line_end]:
        return -1
    limit = size
    if ">" in prefix:
        leave = _LEAVES_QUOTE.search(text, line_end)
        limit = leave.start() if leave else size
    elif prefix:
        indent = _width(prefix)
        column = _list_column(text, line_start, indent)
        if indent - column >= 4:
            return -1
        if column:
            leave = _leaves_item(column).search(text, line_end)
            limit = leave.start() if leave else size
    close = _fence_close(char, end - start).search(text, line_end, limit)
    return close.end() if close else limit


def _code_span_end(text: str, start: int, end: int) -> int:
    """End of the inline code opened by the backtick run text[start:end],
    or -1: the closing run has the same length and lies in the same paragraph."""
    run = text[start:end]
    length = len(run)
    k = text.find(run, end)
    while k >= 0:
        close_end = _run_end(text, k, "`")
        if _PARAGRAPH_END.search(text, end, k):
            return -1
        if close_end - k == length:
            return close_end
        k = text.find(run, close_end)
    return -1


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
    unclosed fence runs to the end, as in CommonMark), indented code blocks,
    inline code (closed within its paragraph, else the backticks are
    literal), ``%%`` comments and ``<!-- -->`` comments (both run to the end
    when unclosed), and math (``$...$``, ``$$...$$``; see :func:`_math_end`).
    Whichever construct starts first wins.
    """
    regions: list[tuple[int, int]] = []
    size = len(text)
    find = text.find
    # next occurrence of each marker (size = none left); a tight loop because
    # real vaults hold tens of thousands of comments
    tick, tilde, pct, html, dollar = (find(m) for m in ("`", "~~~", "%%", "<!--", "$"))
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
            # comments often come in runs: take each one before the next
            # other marker in an inner loop
            opener, closer = ("%%", "%%") if start == pct else ("<!--", "-->")
            limit = min(tick, tilde, dollar, html if start == pct else pct)
            at = start
            while at < limit:
                close = find(closer, at + len(opener))
                pos = size if close < 0 else close + len(closer)
                regions.append((at, pos))
                at = find(opener, pos)
                if at < 0:
                    at = size
            if start == pct:
                pct = at
            else:
                html = at
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
_BLOCK_END = re.compile(r"[ ]{0,3}(?:#{1,6}(?:[ \t]|$)|([-*_])(?:[ \t]*\1){2,}[ \t]*$|`{3,}|~{3,})")


def _has_indented_candidate(text: str) -> bool:
    """Cheap test: could some line start an indented code block (indented 4+
    columns after a blank line, a heading, a thematic break or a fence)?"""
    if text.startswith(("    ", "\t")):
        return True
    for marker in ("\n    ", "\n\t"):
        i = text.find(marker)
        while i >= 0:
            previous = text[text.rfind("\n", 0, i) + 1 : i].rstrip("\r")
            if not previous.strip() or _BLOCK_END.match(previous):
                return True
            i = text.find(marker, i + 1)
    return False


_LIST_ITEM = re.compile(r"([ \t]*)([-+*]|\d{1,9}[.)])([ \t]+|$)")


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
    Continuation lines of list items are therefore not code."""
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
        if _inside(regions, starts, pos):
            blank_before, in_code = True, False
        elif not stripped.strip():
            blank_before = True
        else:
            col = _width(line[: len(line) - len(stripped)])
            while lists and col < lists[-1] and blank_before:
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
                if item:
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


def _inside(regions: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    index = bisect_right(starts, offset) - 1
    return index >= 0 and regions[index][1] > offset


# ---------------------------------------------------------------------------
# Scanning

# A wikilink target may hold a single "]" (Obsidian: [[Sq]uare]] -> "Sq]uare")
# but no "[" and no line break.
_WIKILINK = re.compile(r"\[\[([^\[\]\n]*(?:\][^\[\]\n]+)*)\]\]")
# Markdown links are found by their "](" and only when the destination has no
# URL scheme; the label is then found by walking back to its "[".
_MD_OPEN = re.compile(r"\]\((?![ \t]*<?[A-Za-z][A-Za-z0-9+.-]*:)")
_MD_DEST = re.compile(r"\([ \t]*(<[^<>\n]*>|(?:[^\s()]|\([^\s()]*\))*)(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ \t]*\)")


def _escaped(text: str, index: int) -> bool:
    """Whether text[index] follows an odd number of backslashes."""
    count = 0
    while index > count and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _split_inner(inner: str) -> tuple[str, str, str | None]:
    """Split ``target#fragment|alias`` (``\\|`` is a table-escaped pipe)."""
    bar = inner.find("|")
    alias = None
    if bar >= 0:
        alias = inner[bar + 1 :].replace("\\|", "|")
        inner = inner[: bar - 1] if bar > 0 and inner[bar - 1] == "\\" else inner[:bar]
    target, _, fragment = inner.partition("#")
    return target.strip(), fragment.strip(), alias


def _label_start(text: str, close: int) -> int:
    """Offset of the "[" that opens the Markdown link label ending at ``close``."""
    depth = 0
    k = close - 1
    while k >= 0:
        ch = text[k]
        if ch == "\n":
            return -1
        if ch == "]":
            depth += 1
        elif ch == "[":
            if depth == 0:
                return k
            depth -= 1
        k -= 1
    return -1


def _markdown_links(body: str):
    """Yield (start, end, label, target, fragment) of Markdown links to files."""
    for match in _MD_OPEN.finditer(body):
        dest = _MD_DEST.match(body, match.start() + 1)
        if dest is None:
            continue
        start = _label_start(body, match.start())
        if start < 0:
            continue
        raw = dest.group(1)
        if raw.startswith("<"):
            raw = raw[1:-1]
        target, _, fragment = raw.partition("#")
        target, fragment = unquote(target).strip(), unquote(fragment).strip()
        if target or fragment:
            yield start, dest.end(), body[start + 1 : match.start()], target, fragment


def scan(text: str, offset: int = 0, first_line: int = 1) -> list[Link]:
    """All links in ``text[offset:]`` outside code and comments, in order.

    ``first_line`` is the file line number at ``offset``.  Markdown links
    with a URL scheme (``https:``, ``mailto:``, ``obsidian:``) are not vault
    links and are skipped.
    """
    body = text[offset:] if offset else text
    has_wiki = "[[" in body
    has_md = "](" in body
    if not (has_wiki or has_md):
        return []
    regions = code_regions(body)
    starts = [start for start, _ in regions]
    found: list[tuple] = []
    if has_wiki:
        for match in _WIKILINK.finditer(body):
            start = match.start()
            if regions and _inside(regions, starts, start):
                continue
            if start and body[start - 1] == "\\" and _escaped(body, start):
                continue  # \[[x]] is literal text
            target, fragment, alias = _split_inner(match.group(1))
            found.append((start, match.end(), "wikilink", target, fragment, alias))
    if has_md:
        md = [
            (start, end, "markdown", target, fragment, label)
            for start, end, label, target, fragment in _markdown_links(body)
            if not (regions and _inside(regions, starts, start))
        ]
        if md:
            found = sorted(found + md)
    links: list[Link] = []
    line = first_line
    counted = 0
    last_end = 0
    count = body.count
    for start, end, kind, target, fragment, alias in found:
        if start < last_end:
            continue  # a Markdown link inside a wikilink's text
        last_end = end
        embed = start > 0 and body[start - 1] == "!"
        line += count("\n", counted, start)
        counted = start
        links.append(Link(target, fragment, alias, embed, kind, line, start + offset - embed, end + offset))
    return links


def property_links(properties: dict, lines: dict[str, int] | None = None) -> list[Link]:
    """Wikilinks inside frontmatter string values (``company: "[[Acme]]"``).

    Obsidian reads links only from string values, so an unquoted
    ``key: [[Acme]]`` (a nested YAML list) holds no link.  ``lines`` maps a
    top-level key to the file line of its entry; links get that line.
    Offsets are -1: they point into values, not into the text.
    """
    found: list[Link] = []

    def walk(value, key: str, line: int) -> None:
        if isinstance(value, str):
            if "[[" in value:
                for match in _WIKILINK.finditer(value):
                    target, fragment, alias = _split_inner(match.group(1))
                    embed = match.start() > 0 and value[match.start() - 1] == "!"
                    found.append(Link(target, fragment, alias, embed, "property", line, -1, -1, key))
        elif isinstance(value, list):
            for item in value:
                walk(item, key, line)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item, key, line)

    for key, value in properties.items():
        walk(value, key, (lines or {}).get(key, 1))
    return found


# ---------------------------------------------------------------------------
# Headings and block ids: targets of ``#heading`` and ``#^block`` links

_ATX = re.compile(r"^[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$", re.M)
_SETEXT = re.compile(r"^[ ]{0,3}(\S[^\n]*)\r?\n[ ]{0,3}(?:=+|-+)[ \t]*\r?$", re.M)
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*\r?$", re.M)


def headings(text: str, regions: list[tuple[int, int]] | None = None) -> list[str]:
    """Heading texts of a note body (ATX and setext), outside code."""
    regions = code_regions(text) if regions is None else regions
    starts = [start for start, _ in regions]
    found = [(m.start(), m.group(2) or "") for m in _ATX.finditer(text)]
    found += [
        (m.start(), m.group(1))
        for m in _SETEXT.finditer(text)
        if not m.group(1).lstrip().startswith(("#", "-", "*", "+", ">", "|"))
    ]
    return [title.strip() for start, title in sorted(found) if not _inside(regions, starts, start)]


def block_ids(text: str, regions: list[tuple[int, int]] | None = None) -> set[str]:
    """Block ids (``^id`` at the end of a line) of a note body, lower-cased."""
    if "^" not in text:
        return set()
    regions = code_regions(text) if regions is None else regions
    starts = [start for start, _ in regions]
    return {m.group(1).lower() for m in _BLOCK_ID.finditer(text) if not _inside(regions, starts, m.start(1))}


def anchor_key(heading: str) -> str:
    """Comparison key for heading anchors: NFC, lower case, letters and
    digits only, single spaces.  Lenient on purpose: Obsidian drops
    characters such as ``: # | ^ [ ]`` when it writes a heading link."""
    text = unicodedata.normalize("NFC", heading).lower()
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text).split())


# ---------------------------------------------------------------------------
# Resolution


def _key(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.lower()


class Resolution(NamedTuple):
    """Where a link points: ``path`` (None when unresolved) and every
    candidate it could mean (more than one: ``ambiguous``)."""

    path: str | None
    candidates: tuple[str, ...] = ()
    ambiguous: bool = False


class Resolver:
    """Resolves link targets against the files of a vault, as Obsidian does.

    ``files`` are vault-relative paths with ``/`` of every file (notes and
    attachments).  Lookups are cached per (target, folder of the source).
    """

    def __init__(self, files):
        self._notes: dict[str, list[tuple[str, str]]] = {}
        self._files: dict[str, list[tuple[str, str]]] = {}
        self._paths: dict[str, str] = {}
        self._cache: dict[tuple[str, str], Resolution] = {}
        self._candidates: dict[str, object] = {}
        for path in files:
            key = _key(path)
            self._paths[key] = path
            name = key.rsplit("/", 1)[-1]
            if path.endswith(".md"):  # as Vault.notes: "Note.MD" is an attachment
                self._notes.setdefault(name[:-3], []).append((key[:-3], path))
            self._files.setdefault(name, []).append((key, path))

    def resolve(self, target: str, source: str) -> Resolution:
        """Resolve ``target`` (a link's path part) written in note ``source``.

        An empty target means the source itself (``[[#heading]]``).  A target
        starting with ``./`` or ``../`` is relative to the source's folder.
        Returns a :class:`Resolution`; never consults search or aliases.
        """
        if not target:
            return Resolution(source, (source,))
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        if target.startswith(("./", "../")):
            key = (target, folder)
            hit = self._cache.get(key)
            if hit is None:
                hit = self._cache[key] = self._relative(target, folder)
            return hit
        found = self._candidates.get(target)
        if found is None:
            found = self._candidates[target] = self._lookup(target)
        if isinstance(found, Resolution):  # the folder cannot matter
            return found
        key = (target, folder)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._rank(found, folder)
        return hit

    def _relative(self, target: str, folder: str) -> Resolution:
        joined = posixpath.normpath(posixpath.join(folder, target))
        if joined.startswith("../") or joined == "..":
            return Resolution(None)
        key = _key(joined)
        for candidate in ((key if key.endswith(".md") else key + ".md"), key):
            if candidate in self._paths:
                path = self._paths[candidate]
                return Resolution(path, (path,))
        return Resolution(None)

    def _lookup(self, target: str):
        """Candidates of a target: a final Resolution when there are fewer
        than two, else ``(typed, key, candidates)`` to rank per folder."""
        typed = target.replace("\\", "/").lstrip("/")
        if not typed.isascii():
            typed = unicodedata.normalize("NFC", typed)
        key = typed.lower()
        if key.endswith(".md"):
            # a note, else a file by its full name ("UP.MD" is not a note)
            candidates = self._match(self._notes, key[:-3])
            if candidates:
                typed, key = typed[:-3], key[:-3]
            else:
                candidates = self._match(self._files, key)
        elif "." in key.rsplit("/", 1)[-1]:
            # "img.png": a file by its full name first, then a note "img.png.md"
            candidates = self._match(self._files, key) or self._match(self._notes, key)
        else:
            candidates = self._match(self._notes, key) or self._match(self._files, key)
        if not candidates:
            return Resolution(None)
        if len(candidates) == 1:
            path = candidates[0][1]
            return Resolution(path, (path,))
        return typed, key, candidates

    @staticmethod
    def _rank(found, folder: str) -> Resolution:
        typed, key, candidates = found
        folder_key = _key(folder)

        def rank(item: tuple[str, str]):
            ckey, path = item
            parent = ckey.rsplit("/", 1)[0] if "/" in ckey else ""
            written = unicodedata.normalize("NFC", path)
            exact_case = written.endswith(typed) or written.endswith(typed + ".md")
            return (not exact_case, ckey != key, parent != folder_key, len(path), path)

        ordered = sorted(candidates, key=rank)
        paths = tuple(path for _, path in ordered)
        ambiguous = not ("/" in key and ordered[0][0] == key)
        return Resolution(paths[0], paths, ambiguous)

    @staticmethod
    def _match(index: dict[str, list[tuple[str, str]]], key: str) -> list[tuple[str, str]]:
        name = key.rsplit("/", 1)[-1]
        entries = index.get(name)
        if not entries or "/" not in key:
            return list(entries or ())
        suffix = "/" + key
        return [entry for entry in entries if entry[0] == key or entry[0].endswith(suffix)]
