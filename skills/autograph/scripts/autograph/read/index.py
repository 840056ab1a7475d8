"""The note index: what each note holds, parsed once and cached in ``.graph/``.

A :class:`Summary` is what whole-vault operations need from a note without
reading it again: its typed properties, its frontmatter error, its links,
and (on demand) its headings and block ids.  :class:`NoteIndex` builds
summaries from the notes and keeps them in ``.graph/cache/notes.jsonl`` keyed
by path, size, modification and change time (nanoseconds; the change time
moves on every write and cannot be set back), so a nightly run reads only
the notes that changed.  The cache is plain JSON (never pickle: a vault
may come from someone else) and is discarded when its format or the Python
version differs; a damaged cache is ignored, never trusted.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import zlib
from dataclasses import dataclass, field

from . import jsonfile, parallel
from .links import Link, anchor_key, property_links, scan, scan_body
from .parallel import gc_paused
from .vault import GRAPH_DIR, Vault

__all__ = ["NoteIndex", "Summary", "note_links"]

CACHE_NAME = "cache/notes.jsonl"
DELTA_NAME = "cache/notes-delta.jsonl"
DELTA_SHARE = 0.1  # notes.jsonl is written whole once the delta holds this share of the notes
DELTA_MIN = 50
ANCHORS_KEPT = 4096
PARALLEL_MIN = 2000  # notes to parse before a second process pays for its start
CACHE_FORMAT = 6  # 6: JSON Lines; every note's outline and block ids, parsed with its links
_PAIRED = jsonfile.PAIRED_SURROGATES


def note_links(note) -> list[Link]:
    """Every link of a note: frontmatter values first, then the body.

    A link in a property gets the line of the list item or value that holds
    it (the key's line when it cannot be told, as in a flow list)."""
    return _property_links(note) + scan(note.text, note.body_offset, note.body_line)


def _property_links(note) -> list[Link]:
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
    return found


@dataclass(slots=True)
class Summary:
    """What a note holds, for whole-vault operations.

    ``frontmatter`` is ``"none"``, ``"valid"`` or ``"invalid"``; ``error`` is
    ``(line, column, reason)`` for invalid frontmatter; ``unreadable`` the
    reason a note could not be decoded (then everything else is empty).
    ``outline`` holds the headings in document order as one string, a line
    ``level<TAB>text`` per heading (compact: a large vault keeps every
    note's); ``blocks`` the note's block ids, lower-cased and sorted.
    """

    path: str
    properties: dict = field(default_factory=dict)
    frontmatter: str = "none"
    error: tuple[int, int, str] | None = None
    unreadable: str | None = None
    links: list[Link] = field(default_factory=list)
    outline: str = ""
    blocks: tuple = ()
    # where each link resolves, (path, candidates, ambiguous) per link; kept
    # only while the vault's file list is the one it was computed for
    targets: list[tuple] | None = None

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.endswith(".md") else name


def summarize(vault: Vault, path: str) -> Summary:
    """Read and parse one note into a :class:`Summary`: frontmatter, links,
    headings and block ids, with the note's code regions found once.  The
    note's text is not kept."""
    note = vault.note(path, keep=False)
    if note.text is None:
        return Summary(path, unreadable=note.error or "unreadable")
    block = note.frontmatter
    links, outline, blocks = scan_body(note.text, note.body_offset, note.body_line)
    heads = "\n".join(f"{level}\t{title}" for level, title in outline)
    summary = Summary(path, links=_property_links(note) + links, outline=heads, blocks=tuple(sorted(blocks)))
    if block is not None:
        summary.properties = block.properties
        summary.frontmatter = "valid" if block.valid else "invalid"
        if block.error is not None:
            summary.error = (block.error.line, block.error.column, block.error.reason)
    return summary


def _encode(summary: Summary, stamp: list[int]) -> list:
    links = [list(link) for link in summary.links]
    anchors = [summary.outline, list(summary.blocks)]
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
            and isinstance(anchors, list)
            and len(anchors) == 2
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
            anchors[0] if isinstance(anchors[0], str) else "",
            tuple(anchors[1]),
            _decode_targets(targets, len(links)) if with_targets else None,
        )
    except (TypeError, ValueError):
        return None


class NoteIndex:
    """Summaries of every note of a vault, from the cache where still valid.

    ``use_cache=False`` neither reads nor writes ``.graph/cache``.  After
    use, :func:`derived.save_index` (the write layer) stores what was parsed
    (:meth:`unsaved`: nothing when nothing changed).

    The cache is two files of JSON Lines: ``notes.jsonl`` (every note) and
    ``notes-delta.jsonl`` (the notes parsed since ``notes.jsonl`` was written,
    for the same file list).  A run that parsed a few notes writes only the
    small delta; once the delta holds more than :data:`DELTA_SHARE` of the
    notes, or the vault's file list changed, ``notes.jsonl`` is written whole
    and the delta no longer applies (it names the ``notes.jsonl`` it extends).
    """

    def __init__(self, vault: Vault, use_cache: bool = True):
        self.vault = vault
        self.use_cache = use_cache
        self._summaries: dict[str, Summary] = {}
        # anchors of the notes looked at last: links to one note come in runs,
        # and keeping every note's keys would cost a large vault much memory
        self._anchors: dict[str, tuple[tuple, frozenset]] = {}
        self._stamps: dict[str, list[int]] = {}
        self._root = str(vault.root)
        listing = "\n".join(vault.files).encode("utf-8", "surrogateescape")
        self._files_key = f"{len(vault.files)}:{zlib.crc32(listing):08x}"  # hashlib costs more to import
        self._targets_hold = False
        self._loaded = not use_cache
        self._base_id: str | None = None  # "id" of the notes.jsonl loaded
        self._known: set[str] = set()  # the notes it holds
        self._delta: dict[str, list] = {}  # rows of the delta loaded
        self._parsed: set[str] = set()  # notes parsed (or resolved) in this run
        self._dirty = False

    def _header(self) -> dict:
        return {"format": CACHE_FORMAT, "python": list(sys.version_info[:2]), "vault": str(self.vault.root.resolve())}

    def _lines(self, name: str):
        """The header and an iterator of the rows of a cache file, or None
        when it is absent, not a regular file (a FIFO there would hang the
        run) or not of this format.  One JSON value per line: the header,
        then ``[path, row]`` per note, so a large vault's cache is read a row
        at a time, never whole."""
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.vault.root / GRAPH_DIR / name, flags)
        except OSError:
            return None
        handle = open(fd, "rb")  # noqa: SIM115 - closed by the caller, or below
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ValueError("not a regular file")
            head = json.loads(handle.readline().decode("utf-8", "surrogateescape"))
            if not (isinstance(head, dict) and head.get("header") == self._header()):
                raise ValueError("another format")
        except (OSError, ValueError, RecursionError):
            handle.close()
            return None
        return head, handle

    def _load(self) -> None:
        """Summaries of the cached notes whose stamp still holds: the delta's
        rows over ``notes.json``'s, each decoded as it is read."""
        with gc_paused():
            opened = self._lines(CACHE_NAME)
            if opened is None:
                return
            head, handle = opened
            with handle:
                self._targets_hold = head.get("files") == self._files_key
                base = head.get("id")
                self._base_id = base if isinstance(base, str) else None
                delta: dict[str, list] = {}
                if self._targets_hold and self._base_id:
                    extra = self._lines(DELTA_NAME)
                    if extra is not None:
                        with extra[1]:
                            if extra[0].get("base") == self._base_id and extra[0].get("files") == self._files_key:
                                delta = dict(_rows_of(extra[1]))
                self._delta = dict(delta)
                notes = set(self.vault.notes)
                for path, row in _rows_of(handle):
                    self._known.add(path)
                    self._take(path, delta.pop(path, row), notes)
                for path, row in delta.items():  # notes the base does not hold
                    self._take(path, row, notes)

    def _take(self, path: str, row, notes: set[str]) -> None:
        if path in notes and isinstance(row, list) and row and row[0] == self._stamp(path):
            summary = _decode(path, row, self._targets_hold)
            if summary is not None:
                self._summaries[path] = summary

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

    def stamps(self) -> list[list[int]]:
        """``[size, mtime_ns, ctime_ns]`` of every note, in ``vault.notes``
        order (``[-1, -1, -1]`` for a note that cannot be stat'ed): what
        tells whether anything changed since a result was stored."""
        return [self._stamp(path) for path in self.vault.notes]

    def summary(self, path: str) -> Summary:
        """The summary of note ``path`` (cached, or parsed now)."""
        summary = self._summaries.get(path)
        if summary is not None:
            return summary
        if not self._loaded:
            self._loaded = True
            self._load()
            summary = self._summaries.get(path)
            if summary is not None:
                return summary
        self._stamp(path)  # before reading, so a change while reading shows next run
        summary = self._summaries[path] = summarize(self.vault, path)
        self._parsed.add(path)
        self._dirty = True
        return summary

    def prefetch(self, paths: list[str]) -> None:
        """Make the summaries of ``paths`` ready: from the cache where valid,
        the rest parsed, by two processes when there are at least
        :data:`PARALLEL_MIN` of them and a second core (a forked child parses
        every other note and sends its summaries back through a pipe)."""
        if not self._loaded:
            self._loaded = True
            self._load()
        todo = [path for path in paths if path not in self._summaries]
        if len(todo) >= PARALLEL_MIN and parallel.can_fork():
            for path in todo:
                self._stamp(path)  # before reading
            vault = self.vault

            def quiet() -> None:  # in the child: its notes are counted here when they arrive
                vault.progress = None

            summaries = parallel.map_in_two(lambda path: summarize(vault, path), todo, in_child=quiet)
            if vault.progress is not None:
                vault.progress.step(len(todo[1::2]))
            for path, summary in zip(todo, summaries, strict=True):
                self._summaries[path] = summary
                self._parsed.add(path)
                self._dirty = True

    def set_targets(self, path: str, targets: list[tuple]) -> None:
        """Record where the links of note ``path`` resolve (cached with it)."""
        self.summary(path).targets = targets
        self._parsed.add(path)
        self._dirty = True

    def anchors(self, path: str) -> tuple[tuple, frozenset]:
        """A note's outline as ``(level, anchor_key(text))`` per heading in
        document order (:func:`links.find_heading` walks it), and its block ids."""
        found = self._anchors.get(path)
        if found is None:
            summary = self.summary(path)
            try:
                keys = _outline_keys(summary.outline)
            except ValueError:  # a damaged cache row: read the note again
                summary = self._summaries[path] = summarize(self.vault, path)
                self._parsed.add(path)
                self._dirty = True
                keys = _outline_keys(summary.outline)
            if len(self._anchors) >= ANCHORS_KEPT:
                self._anchors.pop(next(iter(self._anchors)))  # the oldest
            found = self._anchors[path] = (keys, frozenset(summary.blocks))
        return found

    def unsaved(self) -> list[tuple[str, object]]:
        """What to store of what was parsed or computed since loading, as
        ``[(name under .graph/, chunks of bytes)]``: the delta when few notes
        changed, else the whole cache; ``[]`` when nothing changed, without
        ``use_cache``, or when a FIFO or device stands in the file's place
        (reading it to replace it would hang).  The write layer stores it
        (:func:`derived.save_index`); this layer never writes.  Taking it
        marks the index saved."""
        if not self.use_cache or not self._dirty:
            return []
        files = set(self.vault.files)
        notes = self.vault.notes
        delta = {path: row for path, row in self._delta.items() if path in files and path not in self._parsed}
        small = len(delta) + len(self._parsed) <= max(DELTA_MIN, DELTA_SHARE * len(notes))
        if self._targets_hold and self._base_id and small and self._known.issuperset(notes):
            rows = list(delta.items())
            rows += [(path, _encode(self._summaries[path], self._stamp(path))) for path in self._parsed]
            name, head = DELTA_NAME, {"header": self._header(), "base": self._base_id, "files": self._files_key}
        else:
            head = {"header": self._header(), "id": f"{time.time_ns():x}-{os.getpid()}", "files": self._files_key}
            rows = ((path, _encode(summary, self._stamp(path))) for path, summary in self._summaries.items())
            name = CACHE_NAME
        self._dirty = False
        try:
            mode = os.lstat(self.vault.root / GRAPH_DIR / name).st_mode
        except OSError:
            mode = stat.S_IFREG  # absent (or unreadable: the write says)
        if not stat.S_ISREG(mode):
            return []  # a FIFO or device in its place is left alone
        return [(name, _chunks(head, rows))]


def _chunks(head: dict, rows):
    """The cache file as pieces of UTF-8: ``head`` on the first line, then a
    line ``[path, row]`` per note.  A lone surrogate (a "\\ud800" escape in
    a value, a non-UTF-8 vault path) is written as its JSON escape, so the
    file stays UTF-8 and reads back as the same string; but JSON cannot tell
    a lone high and low surrogate apart from the character they pair into,
    so such a note is left out and parsed again each run."""
    yield (_dumps(head) + "\n").encode("utf-8", "backslashreplace")
    batch: list[str] = []
    for path, row in rows:
        line = _dumps([path, row])
        if _PAIRED.search(line):
            continue
        batch.append(line)
        if len(batch) >= 500:
            yield ("\n".join(batch) + "\n").encode("utf-8", "backslashreplace")
            batch = []
    if batch:
        yield ("\n".join(batch) + "\n").encode("utf-8", "backslashreplace")


def _rows_of(handle):
    """``(path, row)`` of each line after the header; a line that is not one
    (a damaged or cut-off file) is skipped, never trusted."""
    for line in handle:
        try:
            item = json.loads(line.decode("utf-8", "surrogateescape"))  # an older cache wrote raw path bytes
        except (ValueError, RecursionError):
            continue
        if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
            yield item[0], item[1]


def _outline_keys(outline: str) -> tuple[tuple[int, str], ...]:
    """``(level, anchor_key(text))`` per line of a summary's outline; raises
    ValueError for a line that is not ``level<TAB>text``."""
    if not outline:
        return ()
    keys = []
    for line in outline.split("\n"):
        level, title = line.split("\t", 1)
        keys.append((int(level), anchor_key(title)))
    return tuple(keys)


def _dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
