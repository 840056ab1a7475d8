"""The note index: what each note holds, parsed once and cached in ``.graph/``.

A :class:`Summary` is what whole-vault operations need from a note without
reading it again: its typed properties, its frontmatter error, its links,
and (on demand) its headings and block ids.  :class:`NoteIndex` builds
summaries from the notes and keeps them in ``.graph/cache/notes.json`` keyed
by path, size, modification and change time (nanoseconds; the change time
moves on every write and cannot be set back), so a nightly run reads only
the notes that changed.  The cache is plain JSON (never pickle: a vault
may come from someone else) and is discarded when its format or the Python
version differs; a damaged cache is ignored, never trusted.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import zlib
from dataclasses import dataclass, field

from . import jsonfile, store
from .links import Link, anchor_key, block_ids, code_regions, outline, property_links, scan
from .vault import Vault

__all__ = ["NoteIndex", "Summary", "note_links"]

CACHE_NAME = "cache/notes.json"
CACHE_FORMAT = 5  # 5: anchors are the outline (level, key), keys as Obsidian's stripHeading
_PAIRED = re.compile("[\ud800-\udbff][\udc00-\udfff]")  # two lone surrogates that JSON would join


def note_links(note) -> list[Link]:
    """Every link of a note: frontmatter values first, then the body.

    A link in a property gets the line of the list item or value that holds
    it (the key's line when it cannot be told, as in a flow list)."""
    found: list[Link] = []
    block = note.frontmatter
    if block is not None and block.valid and block.properties:
        lines = note.text[block.start : block.end].split("\n")
        spans = {entry.key: (entry.start, entry.end) for entry in block.entries}
        cursor: dict[str, tuple[int, int]] = {}  # key -> (line, column) after the last link found
        for link in property_links(block.properties, {key: start + 2 for key, (start, _) in spans.items()}):
            start, end = spans.get(link.key, (0, 0))
            line, column = cursor.get(link.key, (start, 0))
            while line < end:
                at = lines[line].find("[[" + link.target, column)
                if at >= 0:
                    cursor[link.key] = (line, at + 2)
                    link = link._replace(line=line + 2)
                    break
                line, column = line + 1, 0
            found.append(link)
    found.extend(scan(note.text, note.body_offset, note.body_line))
    return found


@dataclass(slots=True)
class Summary:
    """What a note holds, for whole-vault operations.

    ``frontmatter`` is ``"none"``, ``"valid"`` or ``"invalid"``; ``error`` is
    ``(line, column, reason)`` for invalid frontmatter; ``unreadable`` the
    reason a note could not be decoded (then everything else is empty).
    ``anchors`` is ``(outline, block ids)`` once computed: the outline as
    ``(level, anchor_key)`` per heading in document order.
    """

    path: str
    properties: dict = field(default_factory=dict)
    frontmatter: str = "none"
    error: tuple[int, int, str] | None = None
    unreadable: str | None = None
    links: list[Link] = field(default_factory=list)
    anchors: tuple[tuple, frozenset] | None = None
    # where each link resolves, (path, candidates, ambiguous) per link; kept
    # only while the vault's file list is the one it was computed for
    targets: list[tuple] | None = None

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.endswith(".md") else name


def summarize(vault: Vault, path: str) -> Summary:
    """Read and parse one note into a :class:`Summary`."""
    note = vault.note(path)
    if note.text is None:
        return Summary(path, unreadable=note.error or "unreadable")
    block = note.frontmatter
    summary = Summary(path, links=note_links(note))
    if block is not None:
        summary.properties = block.properties
        summary.frontmatter = "valid" if block.valid else "invalid"
        if block.error is not None:
            summary.error = (block.error.line, block.error.column, block.error.reason)
    return summary


def _anchors(vault: Vault, path: str) -> tuple[tuple, frozenset]:
    body = vault.note(path).body
    regions = code_regions(body)
    keys = tuple((level, anchor_key(title)) for level, title in outline(body, regions))
    return keys, frozenset(block_ids(body, regions))


def _encode(summary: Summary, stamp: list[int]) -> list:
    links = [list(link) for link in summary.links]
    anchors = [summary.anchors[0], sorted(summary.anchors[1])] if summary.anchors is not None else None
    targets = None
    if summary.targets is not None:
        # a single candidate equal to the target (the usual case) is left out
        targets = [
            [path, None if candidates == ((path,) if path else ()) else list(candidates), ambiguous]
            for path, candidates, ambiguous in summary.targets
        ]
    return [stamp, summary.properties, summary.frontmatter, summary.error, summary.unreadable, links, anchors, targets]


def _decode_targets(targets, count: int) -> list[tuple] | None:
    if not isinstance(targets, list) or len(targets) != count:
        return None
    decoded = []
    for item in targets:
        if not (isinstance(item, list) and len(item) == 3 and (item[0] is None or isinstance(item[0], str))):
            return None
        path, candidates, ambiguous = item
        if candidates is None:
            candidates = (path,) if path else ()
        elif isinstance(candidates, list) and all(isinstance(c, str) for c in candidates):
            candidates = tuple(candidates)
        else:
            return None
        decoded.append((path, candidates, bool(ambiguous)))
    return decoded


_make_link = Link._make


def _decode(path: str, row: list, with_targets: bool) -> Summary | None:
    """A summary from a cache row, or None when the row is not what
    :func:`_encode` writes (a damaged or foreign cache is never trusted).
    ``with_targets``: the file list is unchanged, so link targets still hold."""
    try:
        _, properties, state, error, unreadable, links, anchors, targets = row
        ok = (
            isinstance(properties, dict)
            and state in ("none", "valid", "invalid")
            and (error is None or (isinstance(error, list) and len(error) == 3))
            and (unreadable is None or isinstance(unreadable, str))
            and isinstance(links, list)
            and (anchors is None or (isinstance(anchors, list) and len(anchors) == 2))
        )
        if not ok:
            return None
        return Summary(
            path,
            properties,
            state,
            tuple(error) if error else None,
            unreadable,
            [_make_link(item) for item in links],
            (tuple((level, key) for level, key in anchors[0]), frozenset(anchors[1])) if anchors else None,
            _decode_targets(targets, len(links)) if with_targets else None,
        )
    except (TypeError, ValueError):
        return None


class NoteIndex:
    """Summaries of every note of a vault, from the cache where still valid.

    ``use_cache=False`` neither reads nor writes ``.graph/cache``.  Call
    :meth:`save` after use to store what was parsed (it writes only when
    something changed).
    """

    def __init__(self, vault: Vault, use_cache: bool = True):
        self.vault = vault
        self.use_cache = use_cache
        self._summaries: dict[str, Summary] = {}
        self._stamps: dict[str, list[int]] = {}
        self._root = str(vault.root)
        listing = "\n".join(vault.files).encode("utf-8", "surrogateescape")
        self._files_key = f"{len(vault.files)}:{zlib.crc32(listing):08x}"  # hashlib costs more to import
        self._targets_hold = False
        self._cached: dict[str, list] = self._load() if use_cache else {}
        self._dirty = False

    def _header(self) -> dict:
        return {"format": CACHE_FORMAT, "python": list(sys.version_info[:2]), "vault": str(self.vault.root.resolve())}

    def _load(self) -> dict[str, list]:
        try:
            # never a FIFO or device put there (it would hang the run); no size
            # limit, as the cache of a large vault is large
            raw = jsonfile.read_bytes(self.vault.root / store.GRAPH_DIR / CACHE_NAME, limit=sys.maxsize)
            data = json.loads(raw.decode("utf-8", "surrogateescape"))  # an older cache wrote raw path bytes
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict) or data.get("header") != self._header():
            return {}
        self._targets_hold = data.get("files") == self._files_key
        notes = data.get("notes")
        return notes if isinstance(notes, dict) else {}

    def _stamp(self, path: str) -> list[int]:
        stamp = self._stamps.get(path)
        if stamp is None:
            try:
                st = os.stat(os.path.join(self._root, path))
                stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
            except OSError:
                stamp = [-1, -1, -1]
            self._stamps[path] = stamp
        return stamp

    def summary(self, path: str) -> Summary:
        """The summary of note ``path`` (cached, or parsed now)."""
        summary = self._summaries.get(path)
        if summary is not None:
            return summary
        row = self._cached.get(path)
        if isinstance(row, list) and row and row[0] == self._stamp(path):
            summary = _decode(path, row, self._targets_hold)
        if summary is None:
            self._stamp(path)  # before reading, so a change while reading shows next run
            summary = summarize(self.vault, path)
            self._dirty = True
        self._summaries[path] = summary
        return summary

    def set_targets(self, path: str, targets: list[tuple]) -> None:
        """Record where the links of note ``path`` resolve (cached with it)."""
        self.summary(path).targets = targets
        self._dirty = True

    def anchors(self, path: str) -> tuple[tuple, frozenset]:
        """A note's outline as ``(level, anchor_key(text))`` per heading in
        document order (:func:`links.find_heading` walks it), and its block ids."""
        summary = self.summary(path)
        if summary.anchors is None:
            summary.anchors = _anchors(self.vault, path) if summary.unreadable is None else ((), frozenset())
            self._dirty = True
        return summary.anchors

    def save(self) -> None:
        """Write the cache if anything was parsed or computed since loading."""
        if not self.use_cache or not self._dirty:
            return
        notes = {path: _encode(s, self._stamp(path)) for path, s in self._summaries.items()}
        files = set(self.vault.files)
        for path, row in self._cached.items():
            if path not in notes and path in files:
                if not self._targets_hold and isinstance(row, list) and len(row) == 8:
                    row = row[:7] + [None]  # its targets were for another file list
                notes[path] = row
        data = self._dump(notes)
        if _PAIRED.search(data):
            # JSON cannot tell a lone high and low surrogate apart from the
            # character they pair into; such notes are parsed again each run
            notes = {path: row for path, row in notes.items() if not _PAIRED.search(_dumps([path, row]))}
            data = self._dump(notes)
        try:
            mode = os.lstat(self.vault.root / store.GRAPH_DIR / CACHE_NAME).st_mode
        except OSError:
            mode = stat.S_IFREG  # absent (or unreadable: write_derived says)
        if not stat.S_ISREG(mode):
            return  # a FIFO or device in its place is left alone (reading it to replace it would hang)
        try:
            # a lone surrogate (a "\ud800" escape in a value, a non-UTF-8
            # vault path) is written as its JSON escape: the file stays UTF-8
            # and reads back as the same string
            encoded = data.encode("utf-8", "backslashreplace")
            store.write_derived(self.vault.root, CACHE_NAME, encoded, durable=False)
        except (OSError, store.Conflict, store.PathError, store.TargetError):
            pass  # a cache that cannot be written only costs time next run
        self._dirty = False

    def _dump(self, notes: dict) -> str:
        return _dumps({"header": self._header(), "files": self._files_key, "notes": notes})


def _dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
