"""Links: scanning wikilinks, embeds and Markdown links; Obsidian's resolution.

Scanning (:func:`scan`) finds ``[[target]]``, ``[[target|alias]]``,
``[[target#heading]]``, ``[[target#^block]]``, ``[[#heading]]``, embeds
``![[...]]``, ``\\|`` inside tables and Markdown links ``[text](path%20x.md)``.
Nothing inside code is a link: fenced code (backticks or tildes, any length,
also unclosed: it runs to the end of the note), indented code blocks, inline
code, ``%% comments %%`` and ``<!-- HTML comments -->``.  Links inside
frontmatter string values count too (:func:`property_links`).

Resolution (:class:`Resolver`) follows Obsidian's resolver: link and paths
are compared lower-cased after Unicode NFC normalisation, with ``.md``
optional, and letter case is never preferred (BR-18); the candidates are the
files whose path ends with the link path; an exact vault path wins, then
paths that start with the linking note's folder (subfolders included,
BR-40), then the shortest path (BR-19).  ``./`` and ``../`` paths are joined
to the linking note's folder and stop at the vault root.  Other files
(images, PDFs, ``.canvas``, ``.base``) resolve by their full name.  A bare
``[[Alias]]`` does not resolve through ``aliases``, as in Obsidian.

Heading anchors compare as Obsidian's ``stripHeading`` does
(:func:`anchor_key`), and ``#A#B`` walks the outline (:func:`find_heading`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple
from urllib.parse import unquote

from .regions import code_regions
from .regions import inside as _inside

__all__ = [
    "Link",
    "Resolution",
    "Resolver",
    "anchor_key",
    "block_ids",
    "block_lines",
    "find_heading",
    "code_regions",
    "heading_lines",
    "headings",
    "outline",
    "property_links",
    "scan_body",
    "scan",
    "targets",
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


def scan(text: str, offset: int = 0, first_line: int = 1, regions: list[tuple[int, int]] | None = None) -> list[Link]:
    """All links in ``text[offset:]`` outside code and comments, in order.

    ``first_line`` is the file line number at ``offset``.  Markdown links
    with a URL scheme (``https:``, ``mailto:``, ``obsidian:``) are not vault
    links and are skipped.  ``regions`` are the code regions of
    ``text[offset:]`` when already known (:func:`regions.code_regions`).
    """
    body = text[offset:] if offset else text
    links: list[Link] = []
    line = first_line
    counted = 0
    count = body.count
    for start, end, kind, target, fragment, alias in _found(body, regions):
        embed = start > 0 and body[start - 1] == "!"
        line += count("\n", counted, start)
        counted = start
        links.append(Link(target, fragment, alias, embed, kind, line, start + offset - embed, end + offset))
    return links


def targets(body: str, regions: list[tuple[int, int]] | None = None) -> set[str]:
    """The distinct non-empty targets of the links :func:`scan` finds in
    ``body``, without building each :class:`Link` (the search index needs
    no more; measured: a third of scan's time on obsidian-hub)."""
    return {found[3] for found in _found(body, regions) if found[3]}


def _found(body: str, regions: list[tuple[int, int]] | None) -> list[tuple]:
    """``(start, end, kind, target, fragment, alias or label)`` of the links
    in ``body`` outside ``regions`` (code and comments; found when None), in
    order, without a Markdown link inside a wikilink's text."""
    has_wiki = "[[" in body
    has_md = "](" in body
    if not (has_wiki or has_md):
        return []
    if regions is None:
        regions = code_regions(body)
    starts = [start for start, _ in regions] if regions else []
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
            kept, last_end = [], 0
            for item in found:
                if item[0] >= last_end:  # else a Markdown link inside a wikilink's text
                    kept.append(item)
                    last_end = item[1]
            found = kept
    return found


def property_links(properties: dict, lines: dict[str, int] | None = None) -> list[Link]:
    """Wikilinks inside frontmatter string values (``company: "[[Acme]]"``).

    Obsidian reads links only from string values, so an unquoted
    ``key: [[Acme]]`` (a nested YAML list) holds no link.  ``lines`` maps a
    top-level key to the file line of its entry; links get that line.
    Offsets are -1: they point into values, not into the text.
    """
    found: list[Link] = []
    for key, value in properties.items():
        _walk_value(value, key, (lines or {}).get(key, 1), found)
    return found


def _walk_value(value, key: str, line: int, found: list[Link]) -> None:
    # a module-level function, not a closure: a recursive closure is a
    # reference cycle, kept per note while the garbage collector is paused
    if isinstance(value, str):
        if "[[" in value:
            for match in _WIKILINK.finditer(value):
                target, fragment, alias = _split_inner(match.group(1))
                embed = match.start() > 0 and value[match.start() - 1] == "!"
                found.append(Link(target, fragment, alias, embed, "property", line, -1, -1, key))
    elif isinstance(value, list):
        for item in value:
            _walk_value(item, key, line, found)
    elif isinstance(value, dict):
        for item in value.values():
            _walk_value(item, key, line, found)


# ---------------------------------------------------------------------------
# Headings and block ids: targets of ``#heading`` and ``#^block`` links

# Each is matched only where a cheap str.find says it could start: a regex
# anchored by "^" under re.M is tried at every character of the text.
_ATX = re.compile(r"[ ]{0,3}(#{1,6})")  # at a line start; the rest of the line by _atx_title
_UNDERLINE = re.compile(r"\n[ ]{0,3}([=-])\1*[ \t]*\r?$", re.M)  # a setext underline, from the "\n" before it
_SETEXT_TEXT = re.compile(r"[ ]{0,3}(\S[^\n]*)")  # the line above it (fullmatch)
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*\r?$", re.M)  # after a space, a tab or a line start


def _atx_headings(text: str) -> list[tuple[int, int, str]]:
    """``(line start, level, text)`` of ATX headings: lines of at most three
    spaces, then 1-6 ``#``, found from each ``#`` rather than each line."""
    found = []
    find = text.find
    pos = find("#")
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        end = find("\n", pos)
        if pos - start <= 3 and text.count(" ", start, pos) == pos - start:
            match = _ATX.match(text, start)
            rest = text[match.end() : end if end >= 0 else len(text)]
            if rest.endswith("\r"):
                rest = rest[:-1]
            if not rest or rest[0] in " \t":
                found.append((start, len(match.group(1)), _atx_title(rest)))
        if end < 0:
            break
        pos = find("#", end)
    return found


def _atx_title(rest: str) -> str:
    """An ATX heading's text from what follows its ``#`` run: trimmed, and
    without a closing run of ``#`` that follows a space or tab (``# a ##`` is
    ``a``; ``# ##`` and ``# a\\#`` keep theirs)."""
    title = rest.strip(" \t")
    core = title.rstrip("#")
    if core and len(core) < len(title) and core[-1] in " \t":
        return core.rstrip(" \t")
    return title


def _setext_headings(text: str) -> list[tuple[int, int, str]]:
    """``(line start, level, text)`` of setext headings (a line of text, then
    a line of ``=`` or ``-``), found from each underline."""
    found = []
    taken = 0  # end of the last heading: its underline is no text line
    for match in _UNDERLINE.finditer(text):
        end = match.start()
        start = text.rfind("\n", 0, end) + 1
        if start < taken:
            continue
        line = _SETEXT_TEXT.fullmatch(text, start, end)
        if line is None:
            continue
        title = line.group(1)
        taken = match.end()  # also when refused below: such a line pair is no heading, and no text line
        if not title.lstrip().startswith(("#", "-", "*", "+", ">", "|")):
            found.append((start, 1 if match.group(1) == "=" else 2, title))
    return found


def heading_lines(text: str, regions: list[tuple[int, int]] | None = None) -> list[tuple[int, int, str, bool]]:
    """``(line start offset, level, text, is ATX)`` of every heading of a
    note body, in document order, outside code (``regions``, found when
    None): ATX headings (level = number of ``#``) and setext headings
    (``===`` level 1, ``---`` level 2), as CommonMark reads them."""
    found = [(*h, True) for h in _atx_headings(text)] if "#" in text else []
    if "\n=" in text or "\n-" in text or "\n " in text:
        found += [(*h, False) for h in _setext_headings(text)]
    if not found:
        return []
    regions = code_regions(text) if regions is None else regions
    starts = [start for start, _ in regions]
    return [
        (start, level, title.strip(), atx)
        for start, level, title, atx in sorted(found)
        if not _inside(regions, starts, start)
    ]


def outline(text: str, regions: list[tuple[int, int]] | None = None) -> list[tuple[int, str]]:
    """``(level, text)`` of every heading of a note body, in document order,
    outside code (:func:`heading_lines`)."""
    return [(level, title) for _, level, title, _ in heading_lines(text, regions)]


def headings(text: str, regions: list[tuple[int, int]] | None = None) -> list[str]:
    """Heading texts of a note body (ATX and setext), outside code, in order."""
    return [title for _, title in outline(text, regions)]


def block_ids(text: str, regions: list[tuple[int, int]] | None = None) -> set[str]:
    """Block ids (``^id`` at the end of a line) of a note body, lower-cased."""
    return {key for key, _ in block_lines(text, regions)}


def block_lines(text: str, regions: list[tuple[int, int]] | None = None) -> list[tuple[str, str]]:
    """``(id, line)`` of each block id (``^id`` at the end of a line, after
    a space, a tab or nothing) of a note body outside code, in order: the
    id lower-cased, its whole line stripped."""
    if "^" not in text:
        return []
    found = [
        (m.start(1), m.group(1).lower())
        for m in _BLOCK_ID.finditer(text)
        if m.start() == 0 or text[m.start() - 1] in " \t\n"
    ]
    if not found:
        return []
    regions = code_regions(text) if regions is None else regions
    starts = [start for start, _ in regions]
    lines = []
    for start, key in found:
        if not _inside(regions, starts, start):
            end = text.find("\n", start)
            lines.append((key, text[text.rfind("\n", 0, start) + 1 : len(text) if end < 0 else end].strip()))
    return lines


def scan_body(text: str, offset: int = 0, first_line: int = 1, regions: list | None = None):
    """Links, outline and block ids of ``text[offset:]`` in one pass: the
    code regions are found once (only when something needs them) and shared.

    Returns ``(links, outline, block_ids)`` as :func:`scan`, :func:`outline`
    and :func:`block_ids` give them.  ``regions``: the body's code regions,
    when the caller found them.
    """
    body = text[offset:] if offset else text
    regions = code_regions(body) if regions is None else regions
    return scan(text, offset, first_line, regions), outline(body, regions), block_ids(body, regions)


# Obsidian's stripHeading: these ASCII characters and line breaks become
# spaces; "-", "'", "_" and every non-ASCII character are kept.
_HEADING_PUNCTUATION = str.maketrans({ch: " " for ch in '!"#$%&()*+,.:;<=>?@^`{|}~/[]\\\r\n'})
# JavaScript's \s: ASCII whitespace, NBSP, the Unicode space separators, the
# line and paragraph separators and the BOM
_JS_SPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")


def anchor_key(heading: str) -> str:
    """Comparison key of a heading or of a link's ``#heading`` part.

    Obsidian's ``stripHeading`` (obsidian-api ``obsidian.d.ts``): the ASCII
    characters ``! " # $ % & ( ) * + , . : ; < = > ? @ ^ ` { | } ~ / [ ] \\``
    and line breaks become spaces, runs of whitespace (JavaScript's ``\\s``)
    shrink to one space, the ends are trimmed; the comparison then ignores
    letter case.  ``-``, ``'``, ``_`` and every non-ASCII character are kept,
    so the slug ``mcp-server`` does not match ``MCP Server`` (BR-39).  Both
    sides are NFC-normalised first (our addition, as for link paths: a
    heading typed on macOS may be stored decomposed).
    """
    if not heading.isascii():
        heading = unicodedata.normalize("NFC", heading)
    return _JS_SPACE.sub(" ", heading.translate(_HEADING_PUNCTUATION)).strip(" ").lower()


def find_heading(keys: list[tuple[int, str]], fragment: str) -> int | None:
    """Index in ``keys`` of the heading a ``#A#B`` fragment names, or None.

    ``keys`` is a note's outline as ``(level, anchor_key(text))``.  Obsidian
    walks the headings in document order: ``A`` is the first heading whose
    key matches; each next part is the first heading after the previous
    match that is deeper (a higher level number) and matches; sections do
    not contain it (BR-39).  Empty parts (``A##B``) are skipped.
    """
    index, level, found = 0, 0, None
    for part in fragment.split("#"):
        key = anchor_key(part)
        if not key:
            continue
        while index < len(keys) and not (keys[index][0] > level and keys[index][1] == key):
            index += 1
        if index == len(keys):
            return None
        found, level = index, keys[index][0]
        index += 1
    return found


# ---------------------------------------------------------------------------
# Resolution


def _key(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.lower()


def names_meant(target: str, source: str) -> tuple[str, ...]:
    """The file names (last path part, lower-cased, NFC) that ``target``
    written in note ``source`` can resolve to, with and without ``.md``
    (a note is looked up by its name without it, any other file with its
    extension); none for an empty target (the source itself)."""
    if not target:
        return ()
    if target.startswith(("./", "../")):
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        key = _key(_join_relative(folder, target))
    else:
        key = _key(target.replace("\\", "/"))
    name = key[key.rfind("/") + 1 :]
    return (name, name + ".md")


def _named(files, names: set[str]) -> list[str]:
    """The paths of ``files`` whose name is one of ``names`` (lower-cased,
    NFC), with every path that is not ASCII (told apart by the resolver)."""
    found = []
    for path in files:  # (rpartition: one call, a third faster at 100k files)
        if path.rpartition("/")[2].lower() in names or not path.isascii():
            found.append(path)
    return found


def _join_relative(folder: str, target: str) -> str:
    """``target`` (starting ``./`` or ``../``) joined to ``folder``: each
    ``..`` drops one folder, and at the vault root drops nothing, so a path
    never climbs out of the vault (Obsidian, BR-40)."""
    parts = folder.split("/") if folder else []
    for part in target.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/".join(parts)


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
        # name -> path, or -> [paths] when several files share it: lean, as a
        # large vault's index is large; the lower-cased paths of a name's
        # files are computed when a lookup needs them.  Notes are indexed by
        # name without ".md", other files by their full name.
        self._notes: dict[str, str | list[str]] = {}
        self._files: dict[str, str | list[str]] = {}
        self._paths: dict[str, str] = {}
        self._cache: dict[tuple[str, str], Resolution] = {}
        self._candidates: dict[str, object] = {}
        self._names: set[str] | None = None  # made for the links of these names alone (for_links)
        for path in files:
            key = _key(path)
            if key == path:
                key = path  # one string, not two equal ones
            self._paths[key] = path
            name = key[key.rfind("/") + 1 :]
            if path.endswith(".md"):  # as Vault.notes: "Note.MD" is an attachment
                index, name = self._notes, name[:-3]
            else:
                index = self._files
            found = index.get(name)
            if found is None:
                index[name] = path
            elif isinstance(found, str):
                index[name] = [found, path]
            else:
                found.append(path)

    @classmethod
    def for_links(cls, files, links) -> Resolver:
        """A resolver over only those of ``files`` that ``links`` (``(target,
        source)`` pairs) can mean: the files whose name (:func:`names_meant`)
        one of them names, and every file whose path is not ASCII (its
        name's key needs normalising to tell).  Each answer for those links
        is the whole vault's resolver's (the candidates of a link are files
        of its name, nothing else counts), at a fraction of the build on a
        large vault: one pass over the paths, no key made for a file of
        another name (100k files: 19 ms against 90).  Asked of a link whose
        names it lacks, it is a resolver over every file from then on."""
        names = set()
        for target, source in links:
            names.update(names_meant(target, source))
        found = cls(_named(files, names))
        found._all, found._names = files, names
        return found

    def covers(self, target: str, source: str) -> bool:
        """Whether this resolver answers ``target`` in ``source`` as the
        whole vault's would (always, unless made by :meth:`for_links`)."""
        return self._names is None or self._names.issuperset(names_meant(target, source))

    def resolve(self, target: str, source: str) -> Resolution:
        """Resolve ``target`` (a link's path part) written in note ``source``.

        An empty target means the source itself (``[[#heading]]``).  A target
        starting with ``./`` or ``../`` is relative to the source's folder.
        Returns a :class:`Resolution`; never consults search or aliases.
        """
        if not target:
            return Resolution(source, (source,))
        if self._names is not None and not self.covers(target, source):
            self.__init__(self._all)  # a name it was not made for: every file from now on
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
        key = _key(_join_relative(folder, target))
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
            candidates = self._match(self._notes, key[:-3], 3)
            if candidates:
                typed, key = typed[:-3], key[:-3]
            else:
                candidates = self._match(self._files, key)
        elif "." in key.rsplit("/", 1)[-1]:
            # "img.png": a file by its full name first, then a note "img.png.md"
            candidates = self._match(self._files, key) or self._match(self._notes, key, 3)
        else:
            candidates = self._match(self._notes, key, 3) or self._match(self._files, key)
        if not candidates:
            return Resolution(None)
        if len(candidates) == 1:
            path = candidates[0][1]
            return Resolution(path, (path,))
        return typed, key, candidates

    @staticmethod
    def _rank(found, folder: str) -> Resolution:
        """Obsidian's order (``getLinkpathDest``), on lower-cased paths: an
        exact vault path, then paths that start with the source's folder (a
        plain string prefix, so ``projects/alpha`` also favours
        ``projects/alphabet/``, and subfolders count, BR-40), then the
        shortest path in UTF-16 code units (an emoji counts 2).  No letter
        case preference (BR-18); a full tie goes by code-point order of the
        path as written (ours: Obsidian's depends on load order)."""
        _, key, candidates = found
        folder_key = _key(folder)

        def rank(item: tuple[str, str]):
            ckey, path = item
            length = len(path) if path.isascii() else len(path.encode("utf-16-le")) // 2
            return (ckey != key, not ckey.startswith(folder_key), length, path)

        ordered = sorted(candidates, key=rank)
        paths = tuple(path for _, path in ordered)
        ambiguous = not ("/" in key and ordered[0][0] == key)
        return Resolution(paths[0], paths, ambiguous)

    @staticmethod
    def _match(index: dict[str, str | list[str]], key: str, strip: int = 0) -> list[tuple[str, str]]:
        """``(lower-cased path, path)`` of the files of ``index`` whose path
        ends with ``key`` (``strip``: the length of ".md", left off notes)."""
        found = index.get(key[key.rfind("/") + 1 :])
        if found is None:
            return []
        paths = [found] if isinstance(found, str) else found
        entries = [((ckey[:-strip] if strip else ckey), path) for path in paths for ckey in (_key(path),)]
        if "/" not in key:
            return entries
        suffix = "/" + key
        return [entry for entry in entries if entry[0] == key or entry[0].endswith(suffix)]
