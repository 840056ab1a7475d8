"""A note as the index holds its text: the searched columns, its names, its link targets.

:func:`document` turns a :class:`note.Note` into the row the index stores
for full-text search (FTS5 columns :data:`COLUMNS`: title, aliases,
description, tags, headings, other property values, body, and CJK
bigrams) and the link targets it names.  Text is NFC and without the
diacritics :func:`folding.strip_marks` drops, so queries folded the same
way find it; a note's names are kept folded by :func:`folding.fold_name`.
"""

from __future__ import annotations

import json
import re

from .folding import fold_name, nfc, strip_marks

__all__ = ["COLUMNS", "bigrams", "document", "has_cjk", "name_key"]

name_fold = fold_name

COLUMNS = ("title", "aliases", "description", "tags", "headings", "props", "body", "cjk")

# CJK runs: compiled on first use through re's cache (this class alone
# takes about 4 ms to compile, a query in ASCII never needs it)
_CJK_RUN = "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"


def has_cjk(text: str) -> bool:
    if text.isascii():
        return False
    if "\n" not in text:
        return re.search(_CJK_RUN, text) is not None
    # the regex on the lines that are not ASCII only: a scan by class is slow
    return any(not line.isascii() and re.search(_CJK_RUN, line) for line in text.split("\n"))


_BOM = b"\xef\xbb\xbf"  # note.BOM, here so that a query need not import note

# a tag starts a line or follows a space, as in Obsidian (not a URL's or a link's #fragment)
# (the "#" first, so that re searches for it rather than trying every offset)
_TAG = r"#(?<![^ \t\n]#)(\w[\w/-]*)"

# ATX headings for the headings column (those inside code are dropped by
# their offset; the closing #s are stripped); cheaper than links.outline,
# which also finds setext headings
_HEADING = r"\n {0,3}#{1,6}[ \t]+([^\n]+)"

_HEADING_START = r" {0,3}#{1,6}[ \t]+([^\n]+)"

_HASH_PATTERNS: tuple | None = None  # these three compiled, on first use: a warm query needs none

_SKIP_PROPS = {"title", "aliases", "alias", "description", "summary", "tags", "tag", "cssclasses"}


def bigrams(text: str) -> str:
    """The overlapping character bigrams of each CJK run of ``text``,
    space-separated (a run of one character is itself)."""
    grams = []
    for run in re.findall(_CJK_RUN, text) if not text.isascii() else ():
        if len(run) == 1:
            grams.append(run)
        else:
            grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return " ".join(grams)


_JSON = json.JSONEncoder(ensure_ascii=False, default=str)  # json.dumps makes an encoder per call for these options


def _props_text(props: dict) -> str:
    """The properties as the index stores them: JSON, a lone surrogate as
    its escape (a value SQLite could not take); ``{}`` when not even that
    reads back the same (:func:`jsonfile.dumps_storable`)."""
    text = _JSON.encode(props)
    if text.isascii():
        return text
    from .jsonfile import dumps_storable

    stored = dumps_storable(props, default=str)
    return "{}" if stored is None else stored


def _links():
    """:mod:`autograph.read.links`, imported on first use (a warm query never
    needs it), then without an import statement's cost per note."""
    global _LINKS
    if _LINKS is None:
        from . import links

        _LINKS = links
    return _LINKS


_LINKS = None


def _outside(items: list[tuple], regions) -> list[tuple]:
    """The ``(offset, ...)`` items, in offset order, that lie in none of
    ``regions`` (sorted, disjoint ``(start, end)``): one pass over both."""
    kept, k, count = [], 0, len(regions)
    for item in items:
        at = item[0]
        while k < count and regions[k][1] <= at:
            k += 1
        if k == count or regions[k][0] > at:
            kept.append(item)
    return kept


def _hashes(body: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``(headings, tags)`` of ``body``, code not left out: ``(offset of
    the line, text after the #s)`` of each ATX heading line and ``(offset of
    the "#", tag)`` of each tag, in order.

    The patterns are compiled once, not looked up in re's cache per note
    (measured: a sixth of this on obsidian-hub)."""
    global _HASH_PATTERNS
    if _HASH_PATTERNS is None:
        _HASH_PATTERNS = re.compile(_HEADING_START), re.compile(_HEADING), re.compile(_TAG)
    heading_start, heading, tag = _HASH_PATTERNS
    # ATX heading lines: one at the start, then each after a line break
    # (a regex led by "\n" is searched for, not tried at every offset)
    first = heading_start.match(body)
    headings = [(0, first.group(1))] if first else []
    headings += [(m.start() + 1, m.group(1)) for m in heading.finditer(body)]
    return headings, [(m.start(), m.group(1)) for m in tag.finditer(body)]


def _strings(value) -> list[str]:
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def name_key(path: str) -> str:
    """The file name a link target looks up, as :class:`links.Resolver`
    indexes it (NFC, lower case, without a final ``.md``): a link and a
    file that may resolve to each other share it (``Notes/Alice.md``,
    ``[[alice]]`` and ``[[people/Alice.md]]`` all give ``alice``)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if not name.isascii():
        name = nfc(name)
    name = name.lower()
    return name[:-3] if name.endswith(".md") else name


def document(note, hubs, parsed=None) -> tuple[tuple, list[str]]:
    """The indexed form of a :class:`note.Note`: ``(row, link targets)``,
    ``row`` being ``(title, type, status, hub, superseded, properties as
    JSON, body line, why its properties are unknown (None: they are
    known), its names as :func:`name_fold` gives them (each between line
    breaks), (the text of each of COLUMNS))``.

    ``parsed``: ``(link targets, code regions of the body)`` when the note's
    summary already found them (:func:`index.summarize_parts`), so the body
    is not scanned again.

    The targets are the distinct paths its links name (``links.scan``
    outside code and comments, and wikilinks in property values, as
    ``index.note_links`` finds them), resolved against every file later."""
    links = _links()
    stem = note.stem
    text = note.text
    if text is None:
        # not UTF-8, or too large to read: indexed as Obsidian shows such a
        # file (U+FFFD for each byte that does not decode), all body, so that
        # its name and words still find it
        text, props, offset = note.data.decode("utf-8", "replace"), {}, 0
        if note.data.startswith(_BOM):
            text = text[1:]
        unknown = note.error or "unreadable"
    else:
        block = note.frontmatter
        props = block.properties if block is not None and block.valid else {}
        offset = note.body_offset
        unknown = f"frontmatter: {block.error}" if block is not None and not block.valid else None
    body = text[offset:] if offset else text
    line = text.count("\n", 0, offset) + 1 if offset else 1
    regions = ()
    headings, tags = _hashes(body) if "#" in body else ([], [])
    if parsed is not None and note.text is not None:  # the note's summary found them: not scanned twice
        targets, regions = set(parsed[0]), parsed[1]
    elif headings or tags or "[[" in body or "](" in body:
        regions = links.code_regions(body)
        targets = links.targets(body, regions)
    else:
        targets = set()
    if regions:
        headings = _outside(headings, regions)
        tags = _outside(tags, regions)
    if parsed is None and props and "[[" in text[:offset]:  # a property value holds a wikilink
        targets.update(link.target for link in links.property_links(props) if link.target)
    low = {k.lower(): v for k, v in props.items() if isinstance(k, str)} if props else {}
    title = _strings(low["title"]) if "title" in low else []
    kind, status = low.get("type"), low.get("status")
    status = status.strip().lower() if isinstance(status, str) else None
    tags = _strings(low.get("tags", low.get("tag"))) + [t for _, t in tags if not t.isdigit()]
    aliases = _strings(low.get("aliases", low.get("alias"))) if low else []
    # the note's names, folded, one a line between line breaks: a query's
    # name is looked up as "\n" + name + "\n" (names hold no line break)
    names = sorted({name_fold(name) for name in [stem, *title, *aliases]} - {""})
    fields = [
        " ".join([stem, *(t for t in title if t != stem)]),
        " ".join(aliases),
        " ".join(_strings(low.get("description", low.get("summary")))) if low else "",
        " ".join(t.replace("/", " ") for t in tags),
        "\n".join(h.rstrip(" \t#\r") for _, h in headings),
        [(k, s) for k, v in low.items() if k not in _SKIP_PROPS for s in _strings(v)],
        body,
        "",
    ]
    from .secrets import REDACTED, mask  # here: a query never loads the detector's patterns

    # a secret a card holds (stored with --allow-secret, or by hand) is never searchable; a
    # property's value is judged with its name (password: hunter2).  The searched texts go
    # through the detector as one text, a NUL line between them (no secret spans a line)
    # The properties the index keeps (``props``) hold no secret either: such a value is stored as
    # [redacted] (the card itself keeps it, for whoever reads the card).
    pairs = fields[5]
    parts = [fields[2], fields[4], fields[6], "\n".join(f"{k}: {s}" for k, s in pairs)]
    whole = "\n\0\n".join(parts)
    masked = mask(whole)
    if masked is not whole:
        found = masked.split("\n\0\n")
        if len(found) != len(parts):  # a NUL line in a note: each text on its own
            found = [mask(part) for part in parts]
        secret = {"description", "summary"} if found[0] != parts[0] else set()
        fields[2], fields[4], fields[6] = found[:3]
        if found[3] != parts[3]:
            secret.update(k for k, s in pairs if mask(f"{k}: {s}") != f"{k}: {s}")
            pairs = [(k, "" if k in secret else s) for k, s in pairs]
        if secret:
            props = {k: REDACTED if isinstance(k, str) and k.lower() in secret else v for k, v in props.items()}
    fields[5] = " ".join(s for _, s in pairs)
    if not text.isascii():
        fields = [strip_marks(f) for f in fields]
        fields[-1] = bigrams(" ".join(fields)) if has_cjk(text) else ""
    row = (
        nfc(title[0]) if title else nfc(stem),
        kind.strip().lower() if isinstance(kind, str) else None,
        status,
        1 if hubs(stem, props) else 0,
        1 if status == "superseded" else 2 if low.get("superseded_by") else 0,  # 2: retired if it names a card
        _props_text(props) if props else "{}",
        line,
        unknown,
        "\n" + "\n".join(names) + "\n",
        tuple(fields),
    )
    return row, sorted(targets)
