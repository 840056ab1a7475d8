"""Bringing the index file up to date: a stat walk, and each changed note parsed once.

:func:`refresh` compares every note's stamp (size, modification and change
time, nanoseconds) with the one stored; only notes whose stamp moved are
read, each once, into everything any command asks of it: the search row and
columns (:func:`searchdoc.document`), the summary whole-vault operations
read (:func:`index.summarize_note`), and its links resolved as Obsidian
would (:class:`links.Resolver`).  With many notes they are read by forked
children, one per core the process may use, while this process writes
the rows that arrive.  A note added, deleted or renamed (or another file)
re-resolves the stored links its name can capture; a changed schema
re-derives the columns it governs (hubs) from the stored properties,
without reading a note.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

from ..read.identity import NOT_DIGITS
from ..read.index import changed_stamps, patch_stamp_text, same_paths, stamp_paths, stamp_text, stamp_writes
from ..read.namekeys import nicknames_of, nicknames_stamp, stored_keys
from ..read.searchdoc import COLUMNS, document, name_key
from .sqlrows import execute_in, rows_in

__all__ = [
    "PARALLEL_MIN",
    "files_key",
    "locked",
    "refresh",
    "schema_stamp",
    "stamp_text",
    "stamps_of",
    "start_reading",
    "state_of",
    "take_written",
    "walk_stamp_text",
]


def locked(exc: Exception) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


# made after the first rows are in (an index built from sorted rows at once
# costs less than one kept up to date row by row while a vault is written);
# a changed note's rows are deleted by its id, each through an index (without
# one, a thousand notes changed scanned the names and variants a thousand times)
_LINK_INDEXES = """
CREATE INDEX IF NOT EXISTS links_src ON links(src);
CREATE INDEX IF NOT EXISTS links_dst ON links(dst);
CREATE INDEX IF NOT EXISTS links_name ON links(name);
CREATE INDEX IF NOT EXISTS names_name ON names(name);
CREATE INDEX IF NOT EXISTS names_id ON names(id);
CREATE INDEX IF NOT EXISTS docs_unreadable ON docs(unreadable) WHERE unreadable IS NOT NULL;
CREATE INDEX IF NOT EXISTS variants_key ON variants(key);
CREATE INDEX IF NOT EXISTS variants_id ON variants(id);
CREATE INDEX IF NOT EXISTS docs_no_vkeys ON docs(id) WHERE vkeys IS NULL;
"""


def schema_stamp(schema) -> str:
    """What of the schema the index's derived columns depend on (the hub
    names and types): when it changes, :func:`refresh` derives them again."""
    return json.dumps([sorted(schema.hub_names), sorted(schema.hub_types), nicknames_stamp(schema)], ensure_ascii=True)


def _rederive(con, schema) -> None:
    """Derive every note's ``hub`` and name keys again from its stored
    properties (a changed schema), and then which notes a hub links to.
    A note whose keys were not stored (frontmatter that does not parse,
    a note that cannot be read) keeps none: a look-up reads it."""
    rows = con.execute("SELECT id, path, props, hub, vkeys FROM docs").fetchall()
    table = nicknames_of(schema)
    updates, names = [], []
    for doc_id, path, props, hub, vkeys in rows:
        name = path.rsplit("/", 1)[-1]
        stem = name[:-3] if name.endswith(".md") else name
        found = json.loads(props) if props else {}
        now = 1 if schema.is_hub(stem, found) else 0
        if now != hub:
            updates.append((now, doc_id))
        if vkeys is not None:
            names.append((stored_keys(stem, found, table), doc_id))
    con.executemany("UPDATE docs SET vkeys = ? WHERE id = ?", names)
    con.execute("DELETE FROM variants")
    con.executemany(
        "INSERT INTO variants VALUES (?, ?)", [row for text, doc_id in names for row in _variants(text, doc_id)]
    )
    if updates:
        con.executemany("UPDATE docs SET hub = ? WHERE id = ?", updates)
        con.execute(
            "UPDATE docs SET near_hub = EXISTS (SELECT 1 FROM links JOIN docs h ON h.id = links.src "
            "WHERE links.dst = docs.id AND links.src != docs.id AND h.hub = 1)"
        )


def walk_stamp_text(vault) -> bytes:
    """:func:`stamp_text` of :func:`stamps_of` ``vault``: for the stamps the
    walk took, made once per walk (a look-up compares it, then a write
    compares it again: 20 ms each at 100,000 notes)."""
    taken = vault.on_disk.get("stamps")
    if taken is None:
        return stamp_text(stamps_of(vault))
    known = vault.on_disk.get("stamp text")
    if known is None or known[0] is not taken:
        known = vault.on_disk["stamp text"] = (taken, stamp_text(taken))
    return known[1]


def stamps_of(vault) -> dict[str, tuple[int, int, int]]:
    """``{path: (size, mtime_ns, ctime_ns)}`` of every note: as the walk
    took them when it did (``vault.on_disk["stamps"]``), else stat'ed now."""
    taken = vault.on_disk.get("stamps")
    if taken is not None:
        return taken
    root = str(vault.root).rstrip(os.sep) + os.sep
    found = {}
    stat_of = os.stat
    for path in vault.notes:
        try:
            st = stat_of(root + path)
        except OSError:
            continue
        found[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


def _attachments(vault) -> str:
    """The vault's other files (not notes), NUL-separated (a name may hold a
    line break, none a NUL): a link can resolve to one instead of a note
    (``[[x.png]]``), so their set is kept."""
    return "\0".join(path for path in vault.files if not path.endswith(".md"))


PARALLEL_MIN = 1000  # notes to read before forked readers pay for their start
# Seconds an update waits for another process's, past the connection's busy
# timeout (index_file.BUSY_SECONDS), before it answers from the index as it
# was: a search during a night's health of a large vault (an update of 30,000
# notes at 100k takes about 8 s) answers from the notes as they are, not from
# rows of notes deleted since; a process stopped while it holds the index
# (^Z) costs each command this wait, not more.
WRITER_WAIT = 25.0
UNKNOWN = (-1, -1, -1)  # a stamp no file has: the note is read again by the next update
# How long after a change the same stamp may still be given to another
# change of the same size: a file system that keeps whole seconds (FAT two),
# else the kernel's clock tick (up to 10 ms before Linux 6.13).  A note read
# within it is not trusted by its stamp (git's "racily clean" entries).
RACY_COARSE_NS = 2_000_000_000
RACY_FINE_NS = 20_000_000


def racy(stamp, now_ns: int) -> int:
    """Nanoseconds from ``now_ns`` until a change of the note ``stamp``
    (``(size, mtime_ns, ctime_ns)``, or None) could no longer carry the
    same stamp; 0 when none could."""
    if stamp is None:
        return 0
    _, mtime, ctime = stamp
    window = RACY_COARSE_NS if mtime % 1_000_000_000 == 0 and ctime % 1_000_000_000 == 0 else RACY_FINE_NS
    left = max(mtime, ctime) + window - now_ns
    # a time ahead of the clock by more than a window (a file from another machine, touch -d) is
    # never given to a change made now
    return 0 if left > 2 * window else max(0, left)


def _reader(vault, schema, known: dict, resolver):
    """The function that reads one note: ``path -> (path, row, [(target,
    name_key, resolved path)], stamp, summary, racy)`` (:func:`document`; ``stamp`` as it
    was read, else as stat'ed, None when the note is gone; ``summary``
    :func:`index.encode_summary`; ``racy``: read within a clock tick of its
    change, :func:`racy`): :func:`_parts`' two steps, its links resolved
    with ``resolver``."""
    parse, finish = _parts(vault, schema, known)
    return lambda path: finish(parse(path), resolver)


def _parts(vault, schema, known: dict):
    """``(parse, finish)``: ``parse(path)`` reads and parses one note,
    ``finish(parsed, resolver)`` resolves its links and gives what
    :func:`_reader` gives.  Links are resolved with ``resolver``, but for
    those in ``known`` (``(path, target)`` -> resolved path, as stored
    before the note changed, when no file of that name came or went): an
    edit that keeps its links needs no resolver.  :func:`_links_of` a
    parsed note: the links ``finish`` will resolve."""
    from ..read.index import encode_summary, encode_targets, summarize_parts

    hubs = schema.is_hub
    table = nicknames_of(schema)
    names: dict[str, str] = {}
    root = str(vault.root).rstrip(os.sep) + os.sep

    def parse(path):
        note = vault.note(path, keep=False)
        stamp = note.stamp
        if stamp is None:  # not read: stat'ed, as the walk would have
            try:
                info = os.stat(root + path)
                stamp = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            except OSError:
                stamp = None
        left = racy(stamp, time.time_ns())
        if 0 < left <= RACY_FINE_NS:  # written a moment ago: that moment waited out, the note read again
            time.sleep(left / 1e9)
            note = vault.note(path, keep=False)
            stamp = note.stamp
            left = racy(stamp, time.time_ns())
        summary, regions = summarize_parts(note)
        row, targets = document(note, hubs, ({link.target for link in summary.links if link.target}, regions))
        kept = summary.frontmatter == "invalid" or row[5] != "{}" or not summary.properties
        vkeys = None
        if summary.unreadable is None and summary.frontmatter != "invalid":
            vkeys = stored_keys(summary.stem, summary.properties, table)
        return path, note, stamp, summary, row, targets, kept, vkeys, left > 0

    def finish(parsed, resolver):
        path, note, stamp, summary, row, targets, kept, vkeys, shaky = parsed
        if kept and summary.unreadable is None:  # where each link leads, as the link graph asks (no second pass)
            summary.targets = [resolver.resolve(link.target, path) for link in summary.links]
        texts = (encode_summary(summary), encode_targets(summary)) if kept else (None, None)
        summary = (*texts, *_probe(note), vkeys)  # a summary no JSON reads back is parsed where it is needed
        edges = []
        for target in targets:
            name = names.get(target)
            if name is None:
                name = names[target] = name_key(target)
            dst = known.get((path, target), names)  # names: a marker, never a path
            if dst is names:
                dst = resolver.resolve(target, path).path
            edges.append((target, name, dst))
        return path, row, edges, stamp, summary, shaky

    return parse, finish


def _links_of(parsed, known: dict):
    """``(target, source)`` of every link ``finish`` (:func:`_parts`)
    resolves for a parsed note."""
    path, _, _, summary, _, targets, kept, _, _ = parsed
    found = [(link.target, path) for link in summary.links] if kept and summary.unreadable is None else []
    return found + [(target, path) for target in targets if (path, target) not in known]


def _probe(note) -> tuple[str | None, str | None, str | None]:
    """``(probe, digits, history)`` of a note, for look-ups by identity
    without reading every card: ``probe`` the frontmatter's text and the
    ``## History`` section, lower-cased (a value a card holds, now or
    before, is in it, or a YAML escape's backslash is); ``digits`` the
    digits of it alone (a phone number written with any separators);
    ``history`` the section's text.  Nones for a note that is not text."""
    text = note.text
    if text is None:
        return None, None, None
    head = text[: note.body_offset]
    history = None
    if "istory" in text:
        from .sections import find

        found = find(text, "History")
        if found is not None:
            history = text[found[0] : found[1]]
    head, history = _masked(head, history)  # a secret a card holds is never kept beside it
    probe = (head + "\n" + history if history else head).lower()
    digits = probe.encode("utf-8", "surrogatepass").translate(None, NOT_DIGITS).decode("ascii")
    return probe, digits, history


def _variants(vkeys: str | None, doc_id: int) -> list[tuple[str, int]]:
    """``(key, doc id)`` for each distinct name key of a note's stored keys
    (:func:`namekeys.stored_keys`, ``kind<TAB>key`` a line), for the
    ``variants`` table's index: a look-up by variant reads the notes
    sharing a key, not every row."""
    if not vkeys:
        return []
    return [(key, doc_id) for key in {line.partition("\t")[2] for line in vkeys.split("\n") if line}]


def _masked(head: str, history: str | None) -> tuple[str, str | None]:
    """``(head, history)`` with each secret hidden (:func:`secrets.mask`,
    one pass over both: a NUL line between them)."""
    from ..read.secrets import mask

    whole = head if history is None else head + "\n\0\n" + history
    masked = mask(whole)
    if masked is whole:
        return head, history
    if history is None:
        return masked, None
    found = masked.split("\n\0\n")
    return (found[0], found[1]) if len(found) == 2 else (mask(head), mask(history))


def start_reading(vault, paths: list[str], schema, known: dict):
    """Forked readers of ``paths`` (:func:`parallel.stream`), started now,
    or None when there are too few notes to pay for them.  They resolve
    links with a resolver built before the fork: of every file, or, when
    ``known`` holds the stored links of notes read again, of the files
    those links can mean (:meth:`links.Resolver.for_links`; at 100k notes
    with 1% of them edited, 25 ms against 70 before any reader starts).  A
    reader that meets a link of another name makes its own of every file,
    once, and answers it as the whole one would."""
    if len(paths) < PARALLEL_MIN:
        return None
    from ..read import note, parallel  # noqa: F401 - imported once, before the fork, not in each reader
    from ..read.links import Resolver

    if known:
        resolver = Resolver.for_links(vault.files, [(target, path) for path, target in known])
    else:
        resolver = vault.resolver
    started = parallel.stream(_reader(vault, schema, known, resolver), paths)
    vault.forget_resolver()  # the readers have theirs; this process's would only hold memory through the build
    started.paths = paths
    return started


def _documents(vault, paths: list[str], schema, known: dict, started=None, also: list | None = None):
    """``(resolver, results)``: what :func:`_reader` gives for each of
    ``paths``, not in order, as an iterator; with many notes they are read
    by forked children (``started`` already, or now) while this process
    writes what arrives, and ``resolver`` is None.  Few notes are parsed
    first, so that one pass finds the files their links, and ``also``
    (``(target, source)`` pairs the caller resolves too), can mean: that
    ``resolver`` answers them all."""
    if started is None:
        started = start_reading(vault, paths, schema, known)
    if started is None:
        parse, finish = _parts(vault, schema, known)
        parsed = [parse(path) for path in paths]
        links = [link for item in parsed for link in _links_of(item, known)]
        resolver = vault.resolver_for(links + (also or []))
        return resolver, (finish(item, resolver) for item in parsed)
    return None, _arrivals(vault, started)


def _arrivals(vault, started):
    """The results of forked readers as they arrive, each counted on the
    vault's progress bar."""
    bar, vault.progress = vault.progress, None  # each note counted as it arrives, whichever process read it
    try:
        with started:
            for result in started:
                if bar is not None:
                    bar.step()
                yield result
    finally:
        vault.progress = bar


def _begin_writing(con, warnings: list[str]) -> None:
    """``BEGIN IMMEDIATE`` on ``con``; when another process is writing the
    index past the connection's busy timeout, wait up to
    :data:`WRITER_WAIT` seconds more for it to end (then a warning says how
    long this took); raises the ``database is locked`` error after that."""
    try:
        con.execute("BEGIN IMMEDIATE")
        return
    except sqlite3.OperationalError as exc:
        if not locked(exc) or WRITER_WAIT <= 0:
            raise
    started = time.monotonic()
    (busy,) = con.execute("PRAGMA busy_timeout").fetchone()
    con.execute(f"PRAGMA busy_timeout = {int(WRITER_WAIT * 1000)}")
    try:
        con.execute("BEGIN IMMEDIATE")
    finally:
        con.execute(f"PRAGMA busy_timeout = {int(busy)}")
    waited = busy / 1000 + time.monotonic() - started
    warnings.append(f"waited {waited:.0f} s for another process to finish updating the index")


def refresh(index, vault, schema, stamps) -> None:
    """Bring the index up to date with the notes' ``stamps``.

    Fresh (the common case) when the walk's stamps, written out as one
    string (:func:`stamp_text`), equal the one stored by the last update,
    and the other files are the same: one ``SELECT`` of one row.  Else, in
    one write transaction: notes that left are removed, changed notes re-read
    under their ids, new ones added; their links are resolved with
    :class:`links.Resolver` against every file.  A note added, deleted or
    renamed (or another file) can change where other notes' links lead, so
    the stored links whose name it shares are resolved again; then the
    in-link counts of every note that gained or lost a link are counted
    again."""
    con = index.con
    pending = stamps is None  # no index file at the walk: stamps taken as the notes are read
    if pending:
        stamps = {}
    index.notes = len(vault.notes if pending else stamps)
    index.stamps = stamps
    files = _attachments(vault)
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('stamps', 'files', 'schema', 'state')"))
    derived = schema_stamp(schema)
    text = stamp_text(stamps) if meta.get("stamps") is not None and not pending else None
    index.stamp_bytes = text
    if text is not None and meta["stamps"] == text and meta.get("files") == files and meta.get("schema") == derived:
        state = meta.get("state")
        index.state = state if isinstance(state, str) else state_of(text, files)
        return
    try:
        _begin_writing(con, index.warnings)
    except sqlite3.OperationalError as exc:
        if not locked(exc) or meta.get("stamps") is None:  # never filled yet: no answer to give from it
            raise
        index.stale = True
        index.warnings.append("another process is updating the search index; answered from the index as it was")
        return
    delta = None
    try:
        if pending:
            current = [(path, None, None, None) for path in vault.notes]
            _update(index, vault, schema, current, files, stamps)
            index.notes = len(stamps)
        else:
            # the stored stamps as of this transaction: those read above unless another process moved them
            state_now = con.execute("SELECT value FROM meta WHERE key = 'state'").fetchone()
            if state_now is not None and state_now[0] == meta.get("state") and meta.get("stamps") is not None:
                stored = (meta["stamps"],)
            else:
                stored = con.execute("SELECT value FROM meta WHERE key = 'stamps'").fetchone()
            delta = _delta(stored[0], text) if stored is not None and text is not None else None
            if delta is not None:
                _update(index, vault, schema, None, files, delta=delta[:2])
            else:
                current = [(path, *stamps[path]) for path in vault.notes if path in stamps]
                _update(index, vault, schema, current, files)
        if index.racy:  # read within a clock tick of a change: stored under no stamp a file has
            text = stamp_text({**stamps, **dict.fromkeys(index.racy, UNKNOWN)})
        key = files_key(vault)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('targets', ?)", (key,))
        if meta.get("schema") != derived:
            _rederive(con, schema)
            con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (derived,))
        text = index.stamp_bytes = stamp_text(stamps) if text is None else text
        if pending or delta is None or delta[1] or len(stored[0]) != len(text):
            con.execute("INSERT OR REPLACE INTO meta VALUES ('stamps', ?)", (text,))
        else:  # the same notes: the stamps that moved written in place (a few pages, not the whole text)
            _write_in_place(con, text, delta[2])
        index.state = state_of(text, files)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('state', ?)", (index.state,))
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def take_written(index, vault, schema, paths: list[str], text: bytes, added: bool) -> bytes:
    """Within ``index``'s open write transaction: the rows of ``paths``,
    notes one run of this process wrote, each read and parsed once here,
    in place of their old ones; ``text``, the stored stamps (the rows'
    before), with theirs put in (:func:`patch_stamp_text`; a note gone
    meanwhile under a stamp no file has, as :func:`refresh` keeps one), and
    the ``state`` and the file list's key with it.  ``vault`` is the vault
    the stored rows hold, with the notes the run added among its files
    (``added``: whether it added any).  Returns the new stamp text."""
    con = index.con
    taken: dict = {}
    files = _attachments(vault)
    _update(index, vault, schema, None, files, taken=taken, delta=(paths, []))
    if added:  # links elsewhere were resolved against the list with the new notes (_update)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('targets', ?)", (files_key(vault),))
    taken.update(dict.fromkeys(index.racy, UNKNOWN))  # as their rows: read again by the next update
    writes = stamp_writes(text, taken)
    if writes is None:
        text = patch_stamp_text(text, taken)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('stamps', ?)", (text,))
    else:  # no note came or went: their stamps written in place (a page of the file, not all of the text)
        (rowid,) = con.execute("SELECT rowid FROM meta WHERE key = 'stamps'").fetchone()
        patched = bytearray(text)
        with con.blobopen("meta", "value", rowid) as blob:
            for offset, data in writes:
                blob.seek(offset)
                blob.write(data)
                patched[offset : offset + 24] = data
        text = bytes(patched)
    index.state = state_of(text, files)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('state', ?)", (index.state,))
    return text


def state_of(text: bytes, files: str) -> str:
    """A digest (hex) of every note's stamp (:func:`stamp_text`) and the
    vault's other files: what a stored result is keyed by.  Kept in the
    index file with them, so an unchanged vault's run reads it instead of
    hashing every stamp again."""
    import hashlib

    digest = hashlib.blake2b(text, digest_size=20)
    digest.update(b"\0files\0" + files.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def files_key(vault) -> str:
    """The vault's file list as one short key (its length and 128 bits of
    a SHA-256 digest of the paths, NUL-separated): where links resolve holds while it
    is the same, and a health report is patched only on the list it was
    made on.  Taken once per file list (a vault's is never changed in
    place; a view with a file added has its own): an update and a health
    report both ask."""
    global _FILES_KEY
    if _FILES_KEY is not None and _FILES_KEY[0] is vault.files:
        return _FILES_KEY[1]
    import hashlib

    listing = "\0".join(vault.files).encode("utf-8", "surrogateescape")
    key = f"{len(vault.files)}:{hashlib.sha256(listing).hexdigest()[:32]}"  # (SHA-256: twice BLAKE2's speed here)
    _FILES_KEY = (vault.files, key)
    return key


_FILES_KEY: tuple | None = None  # (a file list, its key)


def _write_in_place(con, text: bytes, positions: list[int]) -> None:
    """Make the stored stamps ``text`` (a :func:`stamp_text` of the same
    paths as the stored one) by writing the stamps at ``positions`` (in
    path order) in place, through SQLite's blob I/O."""
    (rowid,) = con.execute("SELECT rowid FROM meta WHERE key = 'stamps'").fetchone()
    start = text.index(b"\0\0") + 2
    with con.blobopen("meta", "value", rowid) as blob:
        for at in positions:
            offset = start + 24 * at
            blob.seek(offset)
            blob.write(text[offset : offset + 24])


def _delta(stored, text: bytes) -> tuple[list[str], list[str], list[int]] | None:
    """``(changed, gone, positions)``: the notes whose stamps differ between
    the stamps the last update stored (:func:`stamp_text`, the rows' own)
    and ``text`` (the walk's), or that are new, the notes gone, and the
    changed notes' positions in ``text``, found by comparing the two texts
    (:func:`changed_stamps`) instead of every row; None when they do not
    line up that way (many notes came or went, a damaged text): then every
    row is compared."""
    if not isinstance(stored, bytes):
        return None
    positions = changed_stamps(stored, text)
    if positions is None:
        return None
    paths_now = stamp_paths(text)
    same = same_paths(stored, text)
    gone = [] if same else sorted(set(stamp_paths(stored)).difference(paths_now))
    changed = [paths_now[at] for at in positions]
    decoded = [p.decode("utf-8", "surrogatepass") for p in changed]
    return decoded, [p.decode("utf-8", "surrogatepass") for p in gone], positions


def _update(
    index, vault, schema, current: list[tuple] | None, files: str, taken: dict | None = None, delta=None
) -> None:
    """See :func:`_refresh`.  ``taken``: stamps unknown in ``current``, each
    note's put there as it is read (a note gone meanwhile is left out).
    ``delta``: ``(changed, gone)`` already known (:func:`_delta`; then
    ``current`` is None and the rows are not all read).  Forked readers it
    started are stopped and reaped if anything fails before they are done."""
    readers: list = []
    try:
        _update_rows(index, vault, schema, current, files, taken, delta, readers)
    except BaseException:
        for started in readers:
            started.close()
        raise


def _update_rows(index, vault, schema, current, files: str, taken, delta, readers: list) -> None:
    """:func:`_update`'s work; each reader it starts goes to ``readers``."""
    con = index.con
    if delta is None:
        before = {row[0]: row for row in con.execute("SELECT path, size, mtime, ctime FROM docs")}
        now = {row[0]: row[1:] for row in current}
        changed = [path for path, row in now.items() if before.get(path, (None,))[1:] != row]
        gone = [path for path in before if path not in now]
        built = bool(before)
    else:  # the rows held: only the changed ones looked up, by path
        changed, gone = delta
        now = index.stamps
        held = dict(rows_in(con, "SELECT path, id FROM docs WHERE path IN ({marks})", changed + gone))
        before = dict.fromkeys([path for path in changed if path in held] + gone)
        built = True  # an update stored its stamps: not built from nothing
    changed = [path for path in changed if path.isascii() or _encodes(path)]
    ids: dict[str, int | None] = {}  # path -> doc id, looked up when needed (None: not a note indexed)
    if delta is not None:
        ids.update(held)

    def id_of(path: str | None) -> int | None:
        if path is None:
            return None
        found = ids.get(path, 0)
        if found == 0:
            row = con.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
            found = ids[path] = row[0] if row else None
        return found

    old = [(id_of(path),) for path in changed + gone if path in before]
    next_id = max((key for (key,) in old), default=0)  # never an id of a note gone: links may still name it
    next_id = max(next_id, con.execute("SELECT MAX(id) FROM docs").fetchone()[0] or 0) + 1
    for path in changed:
        if path not in before:
            ids[path], next_id = next_id, next_id + 1
    affected = {ids[path] for path in changed if path not in before}  # notes whose in-links may have changed
    # names whose resolution may have moved: of notes added or gone, and of other files added or gone
    stored_files = con.execute("SELECT value FROM meta WHERE key = 'files'").fetchone()[0]
    moved = set()  # built from nothing: no stored link to resolve again
    if built:
        moved = {name_key(path) for path in changed if path not in before} | {name_key(path) for path in gone}
        if stored_files != files:
            was, is_ = set(stored_files.split("\0")) - {""}, set(files.split("\0")) - {""}
            moved |= {name_key(path) for path in was ^ is_}
    if stored_files != files:
        con.execute("UPDATE meta SET value = ? WHERE key = 'files'", (files,))
    known = {}  # (path, target) -> resolved path, of the links a changed note had, still valid
    lost = (
        "SELECT l.src, l.target, l.name, l.dst, d.path FROM links l LEFT JOIN docs d ON d.id = l.dst"
        " WHERE l.src IN ({marks}) ORDER BY l.src, l.rowid"
    )
    # what a note read again had: the notes it linked to, whether it was a hub, its own in-link counts
    # (kept: only the notes whose in-links a link that came or went, or a hub that changed, moves are counted again)
    linked: dict[int, set] = {}
    was: dict[int, tuple] = {}
    # where no name's place moved, a note read again whose links are the ones
    # stored keeps their rows (an edit of its text alone rewrites no link)
    lazy = built and not moved
    stored_links: dict[int, list] = {}
    stored_names: dict[int, list] = {}
    stored_keys: dict[int, list] = {}
    # each read for every note at once (a statement per note cost 12 µs each, five per note)
    old_ids = [key for (key,) in old]
    path_of = dict(zip(old_ids, [p for p in changed + gone if p in before], strict=True))
    for src, target, name, dst, dst_path in rows_in(con, lost, old_ids):
        if dst is not None:
            linked.setdefault(src, set()).add(dst)
            if dst_path is not None:  # the note it leads to: asked by path when the note's links come back
                ids.setdefault(dst_path, dst)
        if name not in moved:
            known[path_of[src], target] = dst_path
        if lazy:
            stored_links.setdefault(src, []).append((target, name, -1 if dst is None else dst))
    # the readers start now: they need only which notes to read and where their stored links lead;
    # what follows (the rows of this process to read and delete: a tenth of a second at 100k notes,
    # 1% of them edited) is done while they read
    started, index.early = index.early, None
    if started is not None and (known or started.paths != changed):
        started.close()  # the readers started early read other notes than these (another process built the index)
        started = None
    if started is None:
        started = start_reading(vault, changed, schema, known)
    if started is not None:
        readers.append(started)
    held_counts = "SELECT id, hub, inlinks, near_hub FROM docs WHERE id IN ({marks})"
    for doc_id, *held_row in rows_in(con, held_counts, old_ids):
        was[doc_id] = tuple(held_row)
    if lazy:  # their names and name keys, kept too when they are the same
        for table, column, into in (("names", "name", stored_names), ("variants", "key", stored_keys)):
            for value, doc_id in rows_in(con, f"SELECT {column}, id FROM {table} WHERE id IN ({{marks}})", old_ids):
                into.setdefault(doc_id, []).append((value, doc_id))
        for into in (stored_names, stored_keys):
            for rows in into.values():
                rows.sort()
    con.executemany("DELETE FROM docs WHERE id = ?", old)
    gone_ids = [(ids[path],) for path in gone if path in before]
    con.executemany("DELETE FROM links WHERE src = ?", gone_ids if lazy else old)
    con.executemany("DELETE FROM fts WHERE rowid = ?", old)
    con.executemany("DELETE FROM names WHERE id = ?", gone_ids if lazy else old)
    con.executemany("DELETE FROM variants WHERE id = ?", gone_ids if lazy else old)
    for path in gone:
        ids[path] = None
    index.removed = len(gone)
    if built:
        # where the links of the notes not read again lead: still true unless
        # a file of a name they use came or went (then resolved when asked)
        # ("targets": the file list they were resolved against; every update and save sets it)
        if con.execute("SELECT value FROM meta WHERE key = 'targets'").fetchone() is None:
            con.execute("UPDATE docs SET targets = NULL WHERE targets IS NOT NULL")
        elif moved:
            forget = "UPDATE docs SET targets = NULL WHERE id IN (SELECT src FROM links WHERE name IN ({marks}))"
            execute_in(con, forget, sorted(moved))
    rows = []  # links of other notes whose name a file that came or went has
    if moved and built:
        query = "SELECT l.rowid, s.path, l.target, l.dst FROM links l JOIN docs s ON s.id = l.src WHERE l.name IN"
        rows = list(rows_in(con, query + " ({marks})", sorted(moved)))
    relinks = [(target, source) for _, source, target, _ in rows]
    resolver, results = _documents(vault, changed, schema, known, started, relinks)
    if rows:
        resolver = resolver or vault.resolver_for(relinks)
        updates = []
        for rowid, source, target, dst in rows:
            new = id_of(resolver.resolve(target, source).path)
            if new != dst:
                updates.append((new, rowid))
                affected.update(d for d in (dst, new) if d is not None)
        con.executemany("UPDATE links SET dst = ? WHERE rowid = ?", updates)
        index.relinked = len(updates)
    columns = (
        "id, path, size, mtime, ctime, title, type, status, hub, superseded, props, body_line, unreadable, names, "
        "summary, targets, probe, digits, history, vkeys"
    )
    add_doc = f"INSERT INTO docs ({columns}) VALUES ({', '.join('?' * 20)})"
    add_text = f"INSERT INTO fts (rowid, {', '.join(COLUMNS)}) VALUES ({', '.join('?' * 9)})"
    add_link = "INSERT INTO links VALUES (?, ?, ?, ?)"
    add_name = "INSERT INTO names VALUES (?, ?)"
    add_variant = "INSERT INTO variants VALUES (?, ?)"
    docs, fts, edges, named, variants = [], [], [], [], []
    # (doc id,) of notes read again whose stored links, names, name keys go (lazy: deleted batch by batch)
    unlinked, unnamed, unkeyed = [], [], []
    drop_links = "DELETE FROM links WHERE src = ?"
    drop_names = "DELETE FROM names WHERE id = ?"
    drop_keys = "DELETE FROM variants WHERE id = ?"
    batches = (  # in this order: a note's old rows go before its new ones come
        (drop_links, unlinked),
        (drop_names, unnamed),
        (drop_keys, unkeyed),
        (add_text, fts),
        (add_doc, docs),
        (add_link, edges),
        (add_name, named),
        (add_variant, variants),
    )
    hubs, pairs = set(), set()  # built from nothing: the hubs, and (src, dst) of the links between notes
    links_now: dict[int, set] = {}  # a note read again -> the notes it links to now
    bulk = len(changed) >= PARALLEL_MIN
    if bulk:  # FTS5 does not merge its segments while a whole vault arrives (measured: 30 ms less, queries as fast)
        con.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 0)")
    with _gc_paused():
        for path, row, found, stamp, summary, shaky in results:
            if taken is not None:
                # a note gone since the walk is kept, empty, under a stamp no
                # file has: the next query finds it gone and takes it out with
                # its links, as for any deleted note (its id stays known)
                stamp = taken[path] = stamp if stamp is not None else UNKNOWN
            row_stamp = now[path] if taken is None else stamp
            if shaky:  # its row under a stamp no file has (the stored text too): read again next time
                row_stamp = UNKNOWN
                index.racy.append(path)
            doc_id = ids[path]
            docs.append((doc_id, path, *row_stamp, *row[:9], *summary))
            fts.append((doc_id, *row[9]))
            names_now = [(name, doc_id) for name in row[8].split("\n") if name]  # each name folded, indexed
            keys_now = _variants(summary[-1], doc_id)
            if not lazy:
                named += names_now
                variants += keys_now
            else:
                _keep_or_replace(stored_names.get(doc_id, []), names_now, doc_id, unnamed, named)
                _keep_or_replace(stored_keys.get(doc_id, []), keys_now, doc_id, unkeyed, variants)
            if row[3]:
                hubs.add(doc_id)
            mine = []
            for target, name, dst in found:
                dst = id_of(dst)
                mine.append((doc_id, target, name, dst))
                if dst is not None:
                    if built:  # (built from nothing, the pairs count: no set per note for a whole vault)
                        links_now.setdefault(doc_id, set()).add(dst)
                    elif dst != doc_id:
                        pairs.add((doc_id, dst))
            if not lazy:
                edges += mine
            else:
                held = stored_links.get(doc_id, [])
                _keep_or_replace(
                    held, mine, doc_id, unlinked, edges, [(t, n, -1 if d is None else d) for _, t, n, d in mine]
                )
            if len(fts) >= WRITE_BATCH:  # written while the readers read on
                _write(con, *batches)
        _write(con, *batches)
    if bulk:
        con.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 4)")  # FTS5's default, for later updates
    for statement in _LINK_INDEXES.split(";"):
        if statement.strip():
            con.execute(statement)
    if built:
        # a note read again keeps its counts (its row is new), then every note whose in-links moved is counted
        kept = [(inlinks, near, doc_id) for doc_id, (_hub, inlinks, near) in was.items()]  # a gone note's: no row
        con.executemany("UPDATE docs SET inlinks = ?, near_hub = ? WHERE id = ?", kept)
        for doc_id in linked.keys() | links_now.keys() | was.keys():
            before_links, now_links = linked.get(doc_id, set()), links_now.get(doc_id, set())
            affected |= before_links ^ now_links
            if bool(was.get(doc_id, (0,))[0]) != (doc_id in hubs):
                affected |= before_links | now_links
        _count_inlinks(con, affected)
    else:  # built from nothing: every note's count from the links at hand
        counts: dict[int, int] = {}
        near = set()
        for src, dst in pairs:
            counts[dst] = counts.get(dst, 0) + 1
            if src in hubs:
                near.add(dst)
        con.executemany(
            "UPDATE docs SET inlinks = ?, near_hub = ? WHERE id = ?",
            [(counts.get(doc_id, 0), 1 if doc_id in near else 0, doc_id) for doc_id in counts.keys() | near],
        )
    index.reread = len(changed)


def _keep_or_replace(held: list, rows: list, doc_id: int, drop: list, add: list, compared=None) -> None:
    """A note read again: its stored rows ``held`` (sorted) stay when they
    are its ``rows`` now (``compared``: the rows as ``held`` holds them),
    else ``(doc_id,)`` goes to ``drop`` (when it had any) and ``rows`` to
    ``add``."""
    if held == sorted(rows if compared is None else compared):
        return
    if held:
        drop.append((doc_id,))
    add += rows


def _gc_paused():
    from ..read.parallel import gc_paused

    return gc_paused()


WRITE_BATCH = 200  # notes per executemany into the FTS table


def _write(con, *batches) -> None:
    """Run each ``(statement, rows)`` of ``batches`` over its rows, then empty
    them.  A lone surrogate (a YAML escape such as ``"\\ud800"`` in a
    property, which SQLite cannot take) is stored as U+FFFD in the searched
    text; the properties and summaries are JSON, where it is an escape."""
    for statement, rows in batches:
        if rows:
            con.execute("SAVEPOINT batch")  # the rows before the one SQLite cannot take are undone, not doubled
            try:
                con.executemany(statement, rows)
            except UnicodeEncodeError:
                con.execute("ROLLBACK TO batch")
                con.executemany(statement, [tuple(_storable(value) for value in row) for row in rows])
            con.execute("RELEASE batch")
            rows.clear()


def _storable(value):
    if isinstance(value, str):
        import re

        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    return value


def _encodes(path: str) -> bool:
    """Whether a note's path can be stored (a file name that is not UTF-8 is
    kept as lone surrogates: such a note is parsed wherever it is needed)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _count_inlinks(con, ids: set) -> None:
    """Count again the in-links of the notes ``ids``: how many other notes
    link to each, and whether a hub does."""
    count = (
        "UPDATE docs SET inlinks = (SELECT COUNT(DISTINCT src) FROM links WHERE dst = docs.id AND src != docs.id), "
        "near_hub = EXISTS (SELECT 1 FROM links JOIN docs h ON h.id = links.src "
        "WHERE links.dst = docs.id AND links.src != docs.id AND h.hub = 1)"
    )
    con.executemany(count + " WHERE id = ?", [(doc_id,) for doc_id in ids])
