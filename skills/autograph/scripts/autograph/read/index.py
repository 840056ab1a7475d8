"""The note index: what each note holds, for whole-vault operations.

A :class:`Summary` is what whole-vault operations need from a note without
reading it again: its typed properties, its frontmatter error, its links,
and its headings and block ids.  :class:`NoteIndex` serves summaries from
the index file (``.graph/index.sqlite``, kept up to date by
:mod:`autograph.write.index_file`: each note parsed once per change,
whichever command sees it first), and parses here a note the file does not
hold as it is now.  Rows are plain JSON (never pickle: a vault may come
from someone else); a row that does not decode is never trusted.
"""

from __future__ import annotations

import bisect
import json
import os
import struct
import sys
from array import array
from itertools import chain

from . import parallel
from .jsonfile import dumps_storable
from .links import Link, anchor_key, property_links, scan, scan_body
from .parallel import gc_paused
from .regions import code_regions
from .vault import Vault

__all__ = [
    "NoteIndex",
    "Summary",
    "decode_anchors",
    "decode_summary",
    "encode_summary",
    "encode_targets",
    "note_links",
    "outline_keys",
    "patch_stamp_text",
    "read_stamp_text",
    "same_paths",
    "stamp_cut",
    "stamp_paths",
    "stamp_writes",
    "unknown_stamps",
    "changed_stamps",
    "summarize_note",
    "summarize_parts",
]

ANCHORS_KEPT = 4096
PARALLEL_MIN = 2000  # notes to parse before a second process pays for its start
CHUNK = 2000  # notes a pass (NoteIndex.each) holds at once
SHARED_MOST = 1 << 16  # places links lead to, shared between decoded summaries (_decode_targets)


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


class Summary:
    """What a note holds, for whole-vault operations.

    ``frontmatter`` is ``"none"``, ``"valid"`` or ``"invalid"``; ``error`` is
    ``(line, column, reason)`` for invalid frontmatter; ``unreadable`` the
    reason a note could not be decoded (then everything else is empty).
    ``outline`` holds the headings in document order as one string, a line
    ``level<TAB>text`` per heading (compact: a large vault keeps every
    note's); ``blocks`` the note's block ids, lower-cased and sorted;
    ``targets`` where each link resolves, ``(path, candidates, ambiguous)``
    per link, kept only while the vault's file list is the one it was
    computed for.  A plain class, not a dataclass: ``dataclasses`` imports
    ``inspect``, 4 ms of every command's start.
    """

    __slots__ = ("path", "properties", "frontmatter", "error", "unreadable", "links", "outline", "blocks", "targets")

    def __init__(
        self,
        path: str,
        properties: dict | None = None,
        frontmatter: str = "none",
        error: tuple[int, int, str] | None = None,
        unreadable: str | None = None,
        links: list[Link] | None = None,
        outline: str = "",
        blocks: tuple = (),
        targets: list[tuple] | None = None,
    ):
        self.path = path
        self.properties = {} if properties is None else properties
        self.frontmatter, self.error, self.unreadable = frontmatter, error, unreadable
        self.links = [] if links is None else links
        self.outline, self.blocks, self.targets = outline, blocks, targets

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return self._fields() == other._fields() if isinstance(other, Summary) else NotImplemented

    __hash__ = None  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return "Summary(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__) + ")"

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.endswith(".md") else name


def summarize(vault: Vault, path: str) -> Summary:
    """Read and parse one note into a :class:`Summary` (:func:`summarize_note`)."""
    return summarize_note(vault.note(path, keep=False))


def summarize_note(note) -> Summary:
    """A :class:`Summary` of a read :class:`note.Note`: frontmatter, links,
    headings and block ids, with the note's code regions found once.  The
    note's text is not kept."""
    return summarize_parts(note)[0]


def summarize_parts(note) -> tuple[Summary, list]:
    """``(summary, code regions of the body)``: :func:`summarize_note`, and
    the regions it found, for the search columns of the same read."""
    path = note.path
    if note.text is None:
        return Summary(path, unreadable=note.error or "unreadable"), []
    block = note.frontmatter
    body = note.text[note.body_offset :] if note.body_offset else note.text
    regions = code_regions(body)
    links, outline, blocks = scan_body(note.text, note.body_offset, note.body_line, regions)
    heads = "\n".join(f"{level}\t{title}" for level, title in outline)
    summary = Summary(path, links=_property_links(note) + links, outline=heads, blocks=tuple(sorted(blocks)))
    if block is not None:
        summary.properties = block.properties
        summary.frontmatter = "valid" if block.valid else "invalid"
        if block.error is not None:
            summary.error = (block.error.line, block.error.column, block.error.reason)
    return summary, regions


def encode_summary(summary: Summary) -> str | None:
    """A summary as the index file stores it: one line of JSON, ``[properties,
    frontmatter, error, unreadable, links, outline, blocks]``.  ``properties``
    is null unless the frontmatter is invalid: otherwise they are the ones
    the index keeps for search (``docs.props``), stored once.  None when
    it cannot be stored as it is (:func:`jsonfile.dumps_storable`): the note
    is then parsed wherever it is needed."""
    props = summary.properties if summary.frontmatter == "invalid" else None
    row = [props, summary.frontmatter, summary.error, summary.unreadable, [list(link) for link in summary.links]]
    return dumps_storable([*row, summary.outline, list(summary.blocks)], separators=(",", ":"))


def decode_summary(path: str, text: str, props_text: str | None, targets_text: str | None) -> Summary | None:
    """The :class:`Summary` of an :func:`encode_summary` row (``targets_text``:
    :func:`encode_targets` of where its links resolve, or None), or None
    when the row is not one (a damaged or foreign file is never trusted)."""
    try:
        row = json.loads(text)
        if not (isinstance(row, list) and len(row) == 7):
            return None
        props, state, error, unreadable, links, outline, blocks = row
        if props is None:
            props = json.loads(props_text) if props_text else {}
        ok = (
            isinstance(props, dict)
            and state in ("none", "valid", "invalid")
            and (error is None or (isinstance(error, list) and len(error) == 3))
            and (unreadable is None or isinstance(unreadable, str))
            and isinstance(links, list)
            and isinstance(blocks, list)
        )
        if not ok:
            return None
        return Summary(
            path,
            {_intern(key): value for key, value in props.items()},  # the same few keys in every note: one string each
            state,
            tuple(error) if error else None,
            unreadable,
            [_make_link((_intern(t), f, a, e, _intern(k), *rest)) for t, f, a, e, k, *rest in links],
            outline if isinstance(outline, str) else "",
            tuple(blocks),
            _decode_targets(json.loads(targets_text), len(links)) if targets_text else None,
        )
    except (TypeError, ValueError, RecursionError):
        return None


def decode_anchors(text: str) -> tuple[str, tuple] | None:
    """``(outline, block ids)`` of an :func:`encode_summary` row, without
    decoding its links and properties (what an anchor is checked against),
    or None when the row is not one."""
    try:
        row = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(row, list) and len(row) == 7 and isinstance(row[5], str) and isinstance(row[6], list)):
        return None
    return row[5], tuple(row[6])


def encode_targets(summary: Summary) -> str | None:
    """Where a summary's links resolve, as the index file stores it (JSON:
    ``[path, candidates, ambiguous]`` per link, the candidates null when
    they are the path alone, the usual case), or None."""
    if summary.targets is None:
        return None
    targets = [
        [path, None if candidates == ((path,) if path else ()) else list(candidates), ambiguous]
        for path, candidates, ambiguous in summary.targets
    ]
    return dumps_storable(targets, separators=(",", ":"))


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
        found = (path, candidates, bool(ambiguous))
        if len(_shared) >= SHARED_MOST:
            _shared.clear()  # a bound: a pass that keeps no summary would otherwise keep every place
        decoded.append(_shared.setdefault(found, found))  # many links lead to one note: one tuple for them
    return decoded


_make_link = Link._make
_intern = sys.intern  # a link's target and kind: the same few strings in every note that links there
_shared: dict[tuple, tuple] = {}  # where links lead, one tuple for each place (see _decode_targets)


class NoteIndex:
    """Summaries of every note of a vault: from the index file where it holds
    the note as it is now, else parsed here.

    ``store`` is the opened index file (:func:`index_file.note_index`, the
    write layer, which brought it up to date: every changed note parsed
    once); without one, every note is parsed here (dry runs of library
    calls, tests).  Where links resolve (:meth:`set_targets`) is kept with
    a note while the vault's file list is the one it was computed for;
    :func:`derived.save_index` stores what this run resolved.
    """

    def __init__(self, vault: Vault, store=None, warnings: list[str] | None = None):
        self.vault = vault
        self.store = store
        self._warnings = warnings or []  # without a store: what the command is to show
        self._summaries: dict[str, Summary] = {}
        # anchors of the notes looked at last: links to one note come in runs,
        # and keeping every note's keys would cost a large vault much memory
        self._anchors: dict[str, tuple[tuple, frozenset]] = {}
        self._loaded = store is None
        self._parsed: set[str] = set()  # notes parsed here
        self._resolved: set[str] = set()  # notes whose link targets were computed here
        self._stamps: dict | None = None

    @property
    def use_cache(self) -> bool:
        """Whether results may be stored and reused: served from an index
        file that this run may write."""
        return self.store is not None and not self.store.index.readonly

    def stamps(self) -> list[list[int]]:
        """``[size, mtime_ns, ctime_ns]`` of every note, in ``vault.notes``
        order (``[-1, -1, -1]`` for a note that cannot be stat'ed): what
        tells whether anything changed since a result was stored.  Taken
        once, by the index file's update where there was one."""
        known = self.store.index.stamps if self.store is not None else None
        if known is None:
            known = self._stamps = self._stamps if self._stamps is not None else _stat_all(self.vault)
        return [list(known.get(path, (-1, -1, -1))) for path in self.vault.notes]

    def size(self, path: str) -> int:
        """Note ``path``'s size in bytes as its stamp gives it (-1 when it
        could not be stat'ed): the stamps :meth:`stamps` holds."""
        known = self.store.index.stamps if self.store is not None else None
        if known is None:
            known = self._stamps = self._stamps if self._stamps is not None else _stat_all(self.vault)
        return known.get(path, (-1,))[0]

    def state(self) -> bytes:
        """What a stored result is keyed by: a digest of every note's stamp
        and the vault's other files, kept in the index file (taken by its
        update, when it holds the vault as it is), else :meth:`stamp_bytes`
        with the file list."""
        known = self.store.index.state if self.store is not None and not self.store.index.stale else None
        if known is not None:
            return known.encode("ascii") + b"\0" + str(len(self.vault.notes)).encode("ascii")
        return self.stamp_bytes() + b"\0files\0" + "\n".join(self.vault.files).encode("utf-8", "surrogatepass")

    def stamp_bytes(self) -> bytes:
        """Every note's path and stamp as one text (path order,
        NUL-separated): what a stored result is keyed by, taken by the index
        file's update where there was one."""
        known = self.store.index.stamp_bytes if self.store is not None else None
        if known is not None:
            return known
        stamps = self._stamps = self._stamps if self._stamps is not None else _stat_all(self.vault)
        return stamp_text(stamps)

    @property
    def warnings(self) -> list[str]:
        """What the index file said when it was opened (see
        :func:`index_file.open_index`): for the command to show."""
        return self.store.warnings if self.store is not None else self._warnings

    @property
    def parsed(self) -> int:
        """How many notes this call parsed: by the index file's update, and here."""
        return (self.store.reread if self.store is not None else 0) + len(self._parsed)

    def _load(self) -> None:
        """The summaries the index file holds for the notes as they are now
        (a row whose stamp is not the note's, as when another process held
        the file, is left to be parsed here)."""
        self._loaded = True
        with gc_paused():
            for path, summary in self.store.summaries():
                self._summaries[path] = summary

    def summary(self, path: str) -> Summary:
        """The summary of note ``path`` (from the index file, or parsed now)."""
        summary = self._summaries.get(path)
        if summary is not None:
            return summary
        if not self._loaded:
            self._load()
            summary = self._summaries.get(path)
            if summary is not None:
                return summary
        summary = self._summaries[path] = summarize(self.vault, path)
        self._parsed.add(path)
        return summary

    def prefetch(self, paths: list[str]) -> None:
        """Make the summaries of ``paths`` ready: from the index file where it
        holds them, the rest parsed, by two processes when there are at
        least :data:`PARALLEL_MIN` of them and a second core."""
        if not self._loaded:
            self._load()
        todo = [path for path in paths if path not in self._summaries]
        if todo:
            self._summaries.update(self._part(todo))

    def each(self, paths: list[str], targets: bool = False):
        """``(path, Summary)`` of each of ``paths`` (notes of the vault), in
        their order, :data:`CHUNK` at a time: from the index file where it
        holds the note as it is now, else parsed here (by two processes
        for a large part, as :meth:`prefetch`).  Nothing is kept: a pass
        over the whole vault in the memory of one chunk.  ``targets``: each
        summary's ``targets`` filled, resolved here where the file does not
        hold them, and stored in the index file after each chunk.  Without
        an index file, the notes parsed are kept (a later pass parses none)."""
        size = CHUNK if self.store is not None else max(CHUNK, PARALLEL_MIN * 4)
        for start in range(0, len(paths), size):
            part = paths[start : start + size]
            with gc_paused():
                found = self._part(part)
            resolved = []
            for path in part:
                summary = found[path]
                if targets and summary.targets is None:
                    summary.targets = [self.vault.resolver.resolve(link.target, path) for link in summary.links]
                    resolved.append((path, summary))
                yield path, summary
            if resolved and self.store is not None:
                self.store.save(resolved)
            _shared.clear()  # shared within a chunk: a pass keeps no note's targets

    def each_anchors(self, paths: list[str]):
        """``(path, outline keys, block ids)`` of each of ``paths`` (as
        :meth:`anchors`), :data:`CHUNK` at a time, in their order: only the
        outline and the block ids decoded where the index file holds the
        note as it is now."""
        for start in range(0, len(paths), CHUNK):
            part = paths[start : start + CHUNK]
            found = {}
            if self.store is not None and not self._loaded:
                found = self.store.summaries_of([path for path in part if path not in self._summaries], anchors=True)
            for path in part:
                outline, blocks = found.get(path) or (None, ())
                if outline is not None:
                    try:
                        yield path, outline_keys(outline), frozenset(blocks)
                        continue
                    except ValueError:
                        pass  # a damaged row: read the note again
                yield (path, *self.anchors(path, one=True))

    def one(self, path: str) -> Summary:
        """The summary of note ``path``, asked of the index file alone
        (:meth:`summary` reads every row the first time): for a few
        notes of a pass made with :meth:`each`."""
        summary = self._summaries.get(path)
        if summary is None and not self._loaded:
            summary = self._part([path])[path]
        return summary if summary is not None else self.summary(path)

    def _part(self, paths: list[str]) -> dict[str, Summary]:
        """``{path: Summary}`` of ``paths``: those this index holds, those
        the index file holds, the rest parsed here (counted in :attr:`parsed`)."""
        found = {path: self._summaries[path] for path in paths if path in self._summaries}
        if len(found) < len(paths) and self.store is not None and not self._loaded:
            found.update(self.store.summaries_of([path for path in paths if path not in found]))
        todo = [path for path in paths if path not in found]
        if len(todo) >= PARALLEL_MIN and parallel.can_fork():
            vault = self.vault

            def quiet() -> None:  # in the child: its notes are counted here when they arrive
                vault.progress = None

            summaries = parallel.map_in_two(lambda path: summarize(vault, path), todo, in_child=quiet)
            if vault.progress is not None:
                vault.progress.step(len(todo[1::2]))
        else:
            summaries = [summarize(self.vault, path) for path in todo]
        parsed = dict(zip(todo, summaries, strict=True))
        if self.store is None:  # no index file to ask again: each note is parsed once, and kept
            self._summaries.update(parsed)
        found.update(parsed)
        self._parsed.update(todo)
        return found

    def set_targets(self, path: str, targets: list[tuple]) -> None:
        """Record where the links of note ``path`` resolve (stored with it)."""
        self.summary(path).targets = targets
        self._resolved.add(path)

    def resolved(self) -> list[tuple[str, Summary]]:
        """``(path, summary)`` of the notes whose link targets were computed
        since the last call: what :func:`derived.save_index` stores."""
        found = [(path, self._summaries[path]) for path in sorted(self._resolved) if path in self._summaries]
        self._resolved = set()
        return found

    def anchors(self, path: str, one: bool = False) -> tuple[tuple, frozenset]:
        """A note's outline as ``(level, anchor_key(text))`` per heading in
        document order (:func:`links.find_heading` walks it), and its block
        ids.  ``one``: the note asked of the index file alone (:meth:`one`)."""
        found = self._anchors.get(path)
        if found is None:
            summary = self.one(path) if one else self.summary(path)
            try:
                keys = outline_keys(summary.outline)
            except ValueError:  # a damaged row: read the note again
                summary = self._summaries[path] = summarize(self.vault, path)
                self._parsed.add(path)
                keys = outline_keys(summary.outline)
            if len(self._anchors) >= ANCHORS_KEPT:
                self._anchors.pop(next(iter(self._anchors)))  # the oldest
            found = self._anchors[path] = (keys, frozenset(summary.blocks))
        return found


def stamp_text(stamps: dict) -> bytes:
    """Every note's path and stamp (``{path: (size, mtime_ns, ctime_ns)}``)
    as bytes, compared or hashed whole (cheaper than a row per note): the
    paths in path order, NUL-separated (no path holds a NUL, none is empty),
    two NULs, then the stamps in the same order as signed 64-bit integers,
    little-endian (:func:`read_stamp_text` reads it back)."""
    paths = sorted(stamps)
    values = list(chain.from_iterable(map(stamps.__getitem__, paths)))
    numbers = struct.pack(f"<{len(values)}q", *values)  # half the time of an array built from the iterator
    try:
        # each path encoded alone: one emoji would make a joined text four bytes a character (twice the time)
        head = b"\0".join(map(str.encode, paths))
    except UnicodeEncodeError:  # a name that is not UTF-8
        head = "\0".join(paths).encode("utf-8", "surrogatepass")
    text = head + b"\0\0" + numbers
    _kept(text, len(head))  # where its halves meet, for the comparison that follows (not found again in 6 MB)
    return text


# The last few stamp texts' cuts (text, where its two NULs are or -1, its
# paths split or None), by identity: an update and a health patch each cut
# the same 100k notes' texts (6 MB: finding the two NULs among the paths'
# NULs takes 6 ms a time).  The halves are not kept (sliced when asked):
# a large vault's peak memory is health's bound.
_CUTS: list[list] = []
_CUTS_KEPT = 3


def _cut_of(text: bytes, like: bytes | None = None) -> list:
    """``[text, cut, paths or None]`` of a stamp text, from the kept ones
    when it is one.  ``like``: another stamp text, whose paths are likely
    this one's too (the stored stamps, and the walk's): when ``text``
    starts with them and then the two NULs, that is where they are (no
    path is empty: two NULs cannot come earlier, nor straddle the end of
    them)."""
    for entry in _CUTS:
        if entry[0] is text:
            return entry
    cut = -1
    if like is not None:
        k = _cut_of(like)[1]
        if k >= 0 and text.startswith(b"\0\0", k) and text.startswith(memoryview(like)[:k]):
            cut = k
    return _kept(text, text.find(b"\0\0") if cut < 0 else cut)


def _kept(text: bytes, cut: int) -> list:
    entry = [text, cut, None]
    _CUTS.insert(0, entry)
    del _CUTS[_CUTS_KEPT:]
    return entry


def stamp_cut(text: bytes) -> int:
    """Where a :func:`stamp_text`'s paths end (the offset of its two NULs;
    its stamps start two bytes on), or -1 when it has none."""
    return _cut_of(text)[1]


def same_paths(old: bytes, new: bytes) -> bool:
    """Whether two stamp texts hold the same paths (compared in place: the
    paths are 4 MB at 100k notes)."""
    cut, cut_now = _cut_of(old, new)[1], _cut_of(new)[1]
    return cut == cut_now >= 0 and old.startswith(memoryview(new)[:cut])


def stamp_paths(text: bytes) -> list[bytes]:
    """The paths of a :func:`stamp_text`, as UTF-8 bytes in its order (a
    new list each call: the caller may change it)."""
    entry = _cut_of(text)
    if entry[2] is None:
        head = text if entry[1] < 0 else text[: entry[1]]
        entry[2] = head.split(b"\0") if head else []
    return list(entry[2])


def changed_stamps(old: bytes, new: bytes, most: int = 64) -> list[int] | None:
    """The positions (in the path order of ``new``) of the notes whose
    stamps differ between two :func:`stamp_text`, or that ``old`` lacks,
    found by comparing the packed stamps in blocks (a few notes written
    since: every block but theirs is equal).  Between notes added or gone,
    the two lists run alike, so a note added (``card.py new``) costs no
    comparison note by note.  None when more than ``most`` notes came or
    went, or a text does not read as one (then compare
    :func:`read_stamp_text` of each).

    The last answer is kept: an index update, then the health report's
    patch, compare the stamps stored before the run with the walk's (12
    ms at 100k notes)."""
    last = _LAST_CHANGED
    if last and last[1] is new and (last[2] == most or last[3]) and (last[0] is old or last[0] == old):
        return None if last[4] is None else list(last[4])
    same = same_paths(old, new)  # ``most`` then does not matter
    found = _changed_stamps(old, new, most, same)
    _LAST_CHANGED[:] = [old, new, most, same, found]
    return None if found is None else list(found)


_LAST_CHANGED: list = []  # [old, new, most, the same notes in both, the answer]


def _changed_stamps(old: bytes, new: bytes, most: int, same: bool) -> list[int] | None:
    cut, cut_now = _cut_of(old)[1], _cut_of(new)[1]
    tail = old[cut + 2 :] if cut >= 0 else b""
    tail_now = new[cut_now + 2 :] if cut_now >= 0 else b""
    if same:
        paths = paths_now = None
        count = len(tail) // 24
    else:
        paths, paths_now = stamp_paths(old), stamp_paths(new)
        if abs(len(paths) - len(paths_now)) > most:
            return None
        came, went = set(paths_now).difference(paths), set(paths).difference(paths_now)
        if len(came) + len(went) > most:
            return None
        count = len(paths)
    if len(tail) != count * 24 or len(tail_now) != (count if paths is None else len(paths_now)) * 24:
        return None
    if paths is None:
        return _differing(tail, tail_now, 0, 0, count)
    added = sorted(bisect.bisect_left(paths_now, p) for p in came)  # positions in new (both lists sorted)
    gone = sorted(bisect.bisect_left(paths, p) for p in went)  # positions in old
    one, two = tail, tail_now
    changed: list[int] = []
    i = j = 0
    while i < len(paths_now):
        next_added = next((at for at in added if at >= i), len(paths_now))
        next_gone = next((at for at in gone if at >= j), len(paths))
        run = min(next_added - i, next_gone - j)
        if run and (paths[j] != paths_now[i] or paths[j + run - 1] != paths_now[i + run - 1]):
            return None  # the lists do not line up (a text not in path order): compared path by path
        changed += _differing(one, two, j, i, run)
        i, j = i + run, j + run
        if i == next_added and i < len(paths_now):
            changed.append(i)  # a note old lacks
            i += 1
        elif j == next_gone and j < len(paths):
            j += 1  # a note gone since
        elif run == 0:
            return None  # the lists do not line up (a damaged text): never a loop without end
    return changed


def _differing(one: bytes, two: bytes, start_one: int, start_two: int, count: int) -> list[int]:
    """The positions ``start_two + k`` (``k < count``) where note
    ``start_one + k`` of ``one`` and ``start_two + k`` of ``two`` (packed
    stamps, 24 bytes each) differ, found by comparing blocks of 256 notes,
    then the blocks of 16 of each that differs, then the notes of those
    (1% of 100,000 notes changed, spread out: every block of 256 differs).
    Slices of bytes, not of a memoryview: a memoryview compares byte by
    byte (1% changed at 100k: 30 ms against 3)."""
    found = []
    for k in range(0, count, 256):
        n = min(256, count - k)
        a, b = (start_one + k) * 24, (start_two + k) * 24
        if one[a : a + n * 24] == two[b : b + n * 24]:
            continue
        for s in range(0, n, 16):
            m = min(16, n - s)
            sa, sb = a + s * 24, b + s * 24
            if one[sa : sa + m * 24] != two[sb : sb + m * 24]:
                found += [
                    start_two + k + s + i
                    for i in range(m)
                    if one[sa + i * 24 : sa + i * 24 + 24] != two[sb + i * 24 : sb + i * 24 + 24]
                ]
    return found


def patch_stamp_text(text: bytes, stamps: dict) -> bytes:
    """``text`` (:func:`stamp_text`) with the stamps of ``stamps`` (``{path:
    (size, mtime_ns, ctime_ns)}``, None for a note gone) put in: each
    replaced, or added where its path sorts, or taken out; the same bytes
    :func:`stamp_text` gives for the whole changed set.  Raises ValueError
    for a text that does not read as one."""
    cut = _cut(text)
    head, tail = text[:cut], text[cut + 2 :]
    if len(stamps) > 64:  # many: every entry read once and written again, not a search of the bytes each
        found = read_stamp_text(text)
        for path, stamp in stamps.items():
            key = path.encode("utf-8", "surrogatepass")  # as stamp_text: UTF-8 keeps the order of the paths
            if stamp is None:
                found.pop(key, None)
            else:
                found[key] = tuple(stamp)
        keys = sorted(found)
        values = list(chain.from_iterable(map(found.__getitem__, keys)))
        return b"\0".join(keys) + b"\0\0" + struct.pack(f"<{len(values)}q", *values)
    places = _places(head, stamps)
    whole = head + b"\0" if head else b""  # each path with its NUL after it: entries alike to cut and join
    heads, tails, done, done_at = [], [], 0, 0  # pieces of the new paths and numbers; done up to byte / entry
    for offset, at, held, key, stamp in places:
        heads.append(whole[done:offset])
        tails.append(tail[24 * done_at : 24 * at])
        done, done_at = offset, at
        if held:  # its old entry left out
            done, done_at = offset + len(key) + 1, at + 1
        if stamp is not None:
            heads.append(key + b"\0")
            tails.append(struct.pack("<3q", *stamp))
    heads.append(whole[done:])
    tails.append(tail[24 * done_at :])
    return b"".join(heads)[:-1] + b"\0\0" + b"".join(tails)


def stamp_writes(text: bytes, stamps: dict) -> list[tuple[int, bytes]] | None:
    """The writes ``(byte offset in text, 24 bytes)`` that put ``stamps``
    into ``text`` in place (:func:`patch_stamp_text`'s result, when every
    path is in ``text`` already and none is gone), else None."""
    if len(stamps) > 64 or any(stamp is None for stamp in stamps.values()):
        return None
    cut = _cut(text)
    writes = []
    for _, at, held, _, stamp in _places(text[:cut], stamps):
        if not held:
            return None
        writes.append((cut + 2 + 24 * at, struct.pack("<3q", *stamp)))
    return writes


def unknown_stamps(text: bytes) -> list[int]:
    """The positions (in path order) of the notes a :func:`stamp_text`
    holds under the unknown stamp ``(-1, -1, -1)``: read within a clock
    tick of a change (racily clean), so what was read of them may not be
    what they hold now, even while the stamp stays the same."""
    start = stamp_cut(text) + 2
    if start < 2:
        return []
    found, at = [], start
    mark = b"\xff" * 24
    while True:
        at = text.find(mark, at)
        if at < 0:
            return found
        if (at - start) % 24 == 0:
            found.append((at - start) // 24)
            at += 24
        else:
            at += 1


def _cut(text: bytes) -> int:
    """Where a stamp text's paths end (its two NULs)."""
    cut = text.find(b"\0\0")  # no path is empty: the first two NULs are the separator
    entries = text.count(b"\0", 0, cut) + 1 if cut > 0 else 0
    if cut < 0 or len(text) - cut - 2 != 24 * entries:
        raise ValueError("not a stamp text")
    return cut


def _places(head: bytes, stamps: dict) -> list[tuple]:
    """``(byte offset, entry index, held, path bytes, stamp)`` of each of
    ``stamps`` in the paths ``head`` of a stamp text, in path order: where
    its entry is, or would go (found by halving the bytes, not splitting
    them; the NULs before each counted once, from the one before it)."""
    found = []
    for offset, held, key, stamp in sorted(_offsets(head, stamps)):
        found.append([offset, 0, held, key, stamp])
    size, count, done = len(head), 0, 0
    for place in found:
        offset = min(place[0], size)
        count += head.count(b"\0", done, offset)
        done = offset
        place[1] = count + (1 if place[0] > size else 0)
    return [tuple(place) for place in found]


def _offsets(head: bytes, stamps: dict):
    size = len(head)
    for path, stamp in stamps.items():
        key = path.encode("utf-8", "surrogatepass")  # as stamp_text: UTF-8 keeps the order of the paths
        lo, hi = 0, size + 1  # entry starts (size + 1: past the last)
        while lo < hi:
            mid = (lo + hi) // 2
            if mid > size:
                mid = size
            start = head.rfind(b"\0", 0, mid) + 1
            end = head.find(b"\0", start)
            end = size if end < 0 else end
            if head[start:end] >= key:
                hi = start
            else:
                lo = end + 1
        offset = min(lo, size + 1)
        after = offset + len(key)
        held = offset <= size and head.startswith(key, offset) and (after == size or head[after] == 0)
        yield offset, held, key, stamp


def read_stamp_text(text: bytes) -> dict[bytes, tuple[int, int, int]]:
    """``{path (UTF-8 bytes): (size, mtime_ns, ctime_ns)}`` of a
    :func:`stamp_text`; as far as it goes for a text cut short or damaged
    (a stored text is never trusted further than it reads)."""
    cut = stamp_cut(text)
    tail = text[cut + 2 :] if cut >= 0 else b""
    numbers = array("q")
    numbers.frombytes(tail[: len(tail) - len(tail) % 8])
    if sys.byteorder == "big":
        numbers.byteswap()
    paths = stamp_paths(text)
    return dict(zip(paths, zip(numbers[0::3], numbers[1::3], numbers[2::3], strict=False), strict=False))


def _stat_all(vault: Vault) -> dict[str, tuple[int, int, int]]:
    root = str(vault.root).rstrip("/") + "/"
    found = {}
    for path in vault.notes:
        try:
            st = os.stat(root + path)
        except OSError:
            continue
        found[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


def outline_keys(outline: str) -> tuple[tuple[int, str], ...]:
    """``(level, anchor_key(text))`` per line of a summary's outline; raises
    ValueError for a line that is not ``level<TAB>text``."""
    if not outline:
        return ()
    keys = []
    for line in outline.split("\n"):
        level, title = line.split("\t", 1)
        keys.append((int(level), anchor_key(title)))
    return tuple(keys)
