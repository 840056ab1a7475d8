"""The index file, ``.graph/index.sqlite``: the one index every command reads.

One SQLite file (standard library; FTS5 for search) holds, per note, its
stamp, title, names, type, status, properties, summary (links, headings,
block ids, frontmatter state) and where its links resolve, with the
full-text columns search ranks.  :func:`open_index` opens it and brings it
up to date (:func:`index_update.refresh`: a stat walk, changed notes parsed
once); :func:`note_index` gives whole-vault operations a
:class:`index.NoteIndex` over it.  It is derived data: deleting it loses
nothing; the files it replaced (``search.sqlite``, ``cache/notes.jsonl``)
are removed on first use.

Hardening: the file and SQLite's files beside it (``-wal``, ``-shm``,
``-journal``) are never opened when one is not a regular file with one
name (:func:`unusable`); an index never filled is never answered from; a
damaged file, or one of another :data:`INDEX_VERSION`, is rebuilt (with a
warning when damaged); a ``.graph/`` that cannot be written is served from
a copy in memory; two processes updating at once rely on SQLite's locking
(WAL): one writes, the other waits up to :data:`BUSY_SECONDS`, plus
:data:`index_update.WRITER_WAIT` when it has notes to update, then answers
from the index as it was (``stale``).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import stat
import sys

from ..read.index import changed_stamps, read_stamp_text
from ..read.searchdoc import COLUMNS
from .index_update import (
    files_key,
    refresh,
    schema_stamp,
    stamp_text,
    stamps_of,
    start_reading,
    take_written,
    walk_stamp_text,
)
from .index_update import locked as _locked
from .sqlrows import rows_in

__all__ = [
    "INDEX_NAME",
    "INDEX_VERSION",
    "MIN_SQLITE",
    "Index",
    "SearchUnavailable",
    "check_sqlite",
    "close_all",
    "describe",
    "discard_damaged",
    "lookup",
    "note_index",
    "open_index",
    "open_vault",
    "record_written",
    "unusable",
]

INDEX_NAME = "index.sqlite"
RETIRED = (
    "search.sqlite",
    "search.sqlite-wal",
    "search.sqlite-shm",
    "search.sqlite-journal",
    "cache/notes.jsonl",
    "cache/notes-delta.jsonl",
)  # the files this one replaced, removed on first use

# 3: links resolved by links.Resolver, in-link counts stored; 4: superseded 2 = a superseded_by;
# 5: a note that is not UTF-8 indexed with U+FFFD, one too large to read by its name; 6: docs.unreadable;
# 7: docs.names (exact-name matches rank first); 8: index.sqlite, each note's summary beside its search row;
# 9: probe, digits and history (look-ups by identity)
INDEX_VERSION = 12
MIN_SQLITE = (3, 27, 0)  # FTS5's unicode61 remove_diacritics 2

BUSY_SECONDS = 5.0


class SearchUnavailable(Exception):
    """This Python's SQLite cannot hold the index (too old, or no FTS5)."""


def check_sqlite() -> None:
    """Raise :class:`SearchUnavailable` unless SQLite is 3.27+ with FTS5."""
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise SearchUnavailable(
            f"search needs SQLite {'.'.join(map(str, MIN_SQLITE))} or later with FTS5; "
            f"this Python has SQLite {sqlite3.sqlite_version}"
        )
    try:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize='unicode61 remove_diacritics 2')")
        con.close()
    except sqlite3.Error as exc:
        raise SearchUnavailable(f"search needs SQLite with FTS5, which this Python's SQLite lacks ({exc})") from None


_CREATE = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE docs (
  id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER, mtime INTEGER, ctime INTEGER,
  title TEXT, names TEXT, type TEXT, status TEXT, hub INTEGER, superseded INTEGER, props TEXT, body_line INTEGER,
  unreadable TEXT, inlinks INTEGER NOT NULL DEFAULT 0, near_hub INTEGER NOT NULL DEFAULT 0,
  summary TEXT, targets TEXT, probe TEXT, digits TEXT, history TEXT, vkeys TEXT);
CREATE TABLE links (src INTEGER NOT NULL, target TEXT NOT NULL, name TEXT NOT NULL, dst INTEGER);
CREATE TABLE names (name TEXT NOT NULL, id INTEGER NOT NULL);
CREATE TABLE variants (key TEXT NOT NULL, id INTEGER NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5({", ".join(COLUMNS)}, tokenize='unicode61 remove_diacritics 2');
"""


class Index:
    """The open index file and what bringing it up to date did (a plain
    class: defined faster than a dataclass, on every start)."""

    def __init__(self, con: sqlite3.Connection, path: str | None, warnings: list[str] | None = None):
        self.con = con
        self.path = path  # None: in memory
        self.notes = 0
        self.reread = 0
        self.removed = 0
        self.rebuilt: str | None = None  # why it was built from nothing, if it was
        self.stale = False  # another process held the index: answered from the last good one
        self.warnings: list[str] = warnings if warnings is not None else []
        self.readonly = False  # .graph/ could not be written: a copy of its index, in memory, brought up to date
        self.relinked = 0  # links of other notes resolved again (a note was added, deleted or renamed)
        self.racy: list[str] = []  # notes read within a clock tick of a change: their stamps not trusted
        self.early = None  # readers started before the index was opened (_early), until _update takes them
        self.stamps: dict | None = None  # path -> (size, mtime_ns, ctime_ns) of every note, once brought up to date
        self.stamp_bytes: bytes | None = None  # the same as one text (index_update.stamp_text)
        self.state: str | None = None  # a digest of the stamps and the other files (index_update.state_of)

    def close(self) -> None:
        """Close the index (the last connection folds the WAL into the file)."""
        try:
            self.con.close()
        except sqlite3.Error:
            pass

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "notes": self.notes,
            "parsed": self.reread,
            "reread": self.reread,
            "removed": self.removed,
            "rebuilt": self.rebuilt,
            "stale": self.stale,
            "memory": self.path is None or self.readonly,
            "readonly": self.readonly,
        }


_SHAPE = (
    "SELECT key, value FROM meta LIMIT 0",
    "SELECT id, path, size, mtime, ctime, title, names, type, status, hub, superseded, props, body_line, unreadable, "
    "inlinks, near_hub, summary, targets, probe, digits, history, vkeys "
    "FROM docs LIMIT 0",
    "SELECT src, target, name, dst FROM links LIMIT 0",
    "SELECT name, id FROM names LIMIT 0",
    "SELECT key, id FROM variants LIMIT 0",
    f"SELECT rowid, {', '.join(COLUMNS)} FROM fts WHERE fts MATCH 'x' LIMIT 0",
    # FTS5's shadow tables: a query reads them, a prepared MATCH does not
    "SELECT id, block FROM fts_data LIMIT 0",
    "SELECT segid, term, pgno FROM fts_idx LIMIT 0",
    "SELECT id, sz FROM fts_docsize LIMIT 0",
    "SELECT k, v FROM fts_config LIMIT 0",
    f"SELECT id, {', '.join(f'c{n}' for n in range(len(COLUMNS)))} FROM fts_content LIMIT 0",
)
_TABLES = ("meta", "docs", "links", "names", "variants")  # ours (fts is a virtual table)


def _create(con: sqlite3.Connection, schema) -> None:
    for statement in _CREATE.split(";"):
        if statement.strip():
            con.execute(statement)
    con.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [
            ("version", str(INDEX_VERSION)),
            ("schema", schema_stamp(schema)),
            ("sqlite", sqlite3.sqlite_version),
            ("files", ""),
        ],
    )


def _why_rebuild(con: sqlite3.Connection, schema) -> str | None:
    """Why the open file must be built again (``"new"``, ``"incomplete"``,
    ``"index version"``), else None.  Raises :class:`sqlite3.DatabaseError`
    for a damaged file (:func:`_damaged`), which is then replaced."""
    kinds = dict(con.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')"))
    if not kinds:
        return "new"
    if not {"meta", "docs", "links", "fts"} <= kinds.keys():
        return "incomplete"
    views = sorted(name for name in _TABLES if kinds.get(name) == "view")
    if views:  # read like the table, refused at the first write
        raise sqlite3.DatabaseError(f"{', '.join(views)} is a view, not a table")
    # every column a query reads, and FTS5's own tables: a damaged or foreign
    # table raises here, where the file is rebuilt, not in the query
    for statement in _SHAPE:
        con.execute(statement).fetchall()
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('version', 'files')"))
    if meta.get("version") != str(INDEX_VERSION):
        return "index version"
    if not isinstance(meta.get("files"), str):  # made with the tables, always text
        raise sqlite3.DatabaseError("the index's list of files is missing")
    return None


def _drop_all(con: sqlite3.Connection) -> None:
    found = con.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND sql IS NOT NULL")
    for name, kind in found.fetchall():
        if not name.startswith("fts_"):  # the FTS5 shadow tables go with fts
            con.execute(f'DROP {kind.upper()} IF EXISTS "' + name.replace('"', '""') + '"')


PRIVATE = ""  # SQLite's private temporary database: on disk once its page cache is full, gone when closed
CACHE_KB = 8192  # SQLite's page cache (KB): measured, a build at 100k is no slower than with 64 MB
# notes from which a dry run on a vault without an index file builds a private
# one (bounded memory; about 4x the time of parsing every note in memory at 100k)
PRIVATE_MIN = 20000


def _connect(path: str) -> sqlite3.Connection:
    """A connection to the index file at ``path``, or to :data:`PRIVATE` (an
    index in no file of the vault: a large vault's would not fit in memory,
    so SQLite spills it to a temporary file of its own, removed on close)."""
    con = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    con.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
    con.execute(f"PRAGMA cache_size = -{CACHE_KB}")  # the OS caches the file too
    if path not in (PRIVATE, ":memory:"):
        con.execute("PRAGMA journal_mode = WAL")
    else:  # no other process sees it: its rollback journal need not be a file
        con.execute("PRAGMA journal_mode = MEMORY")
    con.execute("PRAGMA synchronous = OFF")  # derived data: an OS crash at worst damages it, then it is rebuilt
    return con


def _remove(root) -> None:
    """Discard a damaged index file and SQLite's files beside it (derived
    data, rebuilt next), through store."""
    from . import derived

    for suffix in SUFFIXES:
        derived.discard_derived(root, INDEX_NAME + suffix)


def _existing(root) -> str | None:
    """``.graph/index.sqlite`` when it is there as a regular file in a real
    ``.graph`` folder (neither a symlink), else None: the warm query opens it
    without loading the write machinery (store) that makes the folder."""
    folder = os.path.join(os.path.realpath(root), ".graph")
    path = os.path.join(folder, INDEX_NAME)
    try:
        if stat.S_ISDIR(os.lstat(folder).st_mode) and stat.S_ISREG(os.lstat(path).st_mode):
            return path
    except OSError:
        pass
    return None


SUFFIXES = ("", "-wal", "-shm", "-journal")  # the index file and the files SQLite keeps beside it
# How a command that writes nothing opens the file: immutable, so SQLite makes
# no -wal or -shm beside it and folds no WAL into it (a read, a dry run and a
# look-up leave .graph/ byte for byte as it was).  What it reads is the file
# as its last writer left it; rows that do not hold a note as it is now are
# read again by the caller.
READ_ONLY = "?mode=ro&immutable=1"


def unusable(root) -> str | None:
    """Why ``.graph/index.sqlite`` and its ``-wal``, ``-shm`` and
    ``-journal`` files cannot be used, else None (absent ones are fine).

    SQLite writes these files in place, so a hard link (another name for a
    note, say) would have that file overwritten with pages of the index; it
    opens the journal blocking, so a FIFO there would hang every query; a
    symlink would take its writes elsewhere."""
    folder = os.path.join(os.path.realpath(root), ".graph")
    for suffix in SUFFIXES:
        name = INDEX_NAME + suffix
        try:
            info = os.lstat(os.path.join(folder, name))
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f".graph/{name}: {exc.strerror}"
        if not stat.S_ISREG(info.st_mode):
            from ..read.jsonfile import file_kind

            kind = file_kind(info.st_mode)
        elif info.st_nlink > 1:
            kind = f"a file with {info.st_nlink} names (hard links), which the index would overwrite"
        else:
            continue
        return f".graph/{name} is {kind}; remove it and the index is made again"
    return None


def _index_path(root) -> str:
    """Where the index lives, ``.graph/`` made if need be (:func:`derived.derived_path`,
    which refuses symlinks and a file in place of the folder).  Run as root,
    the file and the ones SQLite keeps beside it are made first, as the
    folder's owner's (:func:`derived.open_derived`), so the person whose vault
    it is can still open them."""
    path = _existing(root)
    if path is None:
        from . import derived
        from .confine import PathError, TargetError

        path = str(derived.derived_path(root, INDEX_NAME))
        for name in RETIRED:  # derived data this file replaces: its first use takes them away
            try:
                derived.discard_derived(root, name)
            except (OSError, PathError, TargetError):
                pass  # a symlink or special file of that name is left alone
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        from pathlib import Path

        from .derived import open_derived

        for suffix in ("", "-wal", "-shm"):
            os.close(open_derived(Path(path + suffix), os.O_RDWR))
    return path


def open_index(vault, schema, use_disk: bool = True, stamps: dict | None = None) -> Index:
    """The vault's search index, brought up to date (see the module
    docstring).  When ``.graph/`` cannot be written (or ``use_disk=False``),
    an index file already there is copied into memory and brought up to
    date there (``readonly``; nothing is written); without one, the index is
    built in memory.  ``stamps`` are the notes' stamps from
    :func:`open_vault` (else each note is stat'ed)."""
    check_sqlite()
    warnings: list[str] = []
    early = None
    if _existing(vault.root) is not None:
        stamps = stamps_of(vault) if stamps is None else stamps
    else:  # built from nothing: readers start now, each note's stamp taken as it is read
        early = _early(vault, schema, stamps)
    try:
        index = _open(vault, schema, use_disk, stamps, warnings, early)
    finally:
        if early is not None:
            early.close()
    if index.path is not None and not (index.readonly or index.stale) and index.stamp_bytes is not None:
        vault.on_disk[FRESH] = (index.path, index.state, index.stamp_bytes)  # the file holds the walk's notes
    return index


def _early(vault, schema, stamps):
    """Readers of every note started before the index is opened, when it
    will be built from nothing (no index file yet; :func:`_start_reading`),
    so that making the file and its tables overlaps with reading; None for
    a small vault.  :func:`_update` uses them if it is to read just those notes."""
    paths = vault.notes if stamps is None else [path for path in vault.notes if path in stamps]
    return start_reading(vault, paths, schema, {})


def _open(vault, schema, use_disk, stamps, warnings, early) -> Index:
    root = os.path.realpath(vault.root)
    found = _FOUND_DAMAGED.pop(root, None)
    if found is not None:
        warnings.append(found)
    if root in _DISTRUSTED:  # damaged, and not set aside: never read again by this process
        index = _private(vault, schema, warnings, stamps, early)
    else:
        index = _open_file(vault, schema, use_disk, stamps, warnings, early)
        _USED[root] = index.path is not None and not index.readonly
    if found is not None:  # built again because of it (from nothing, as the file was set aside)
        index.rebuilt = "damaged"
    return index


def _open_file(vault, schema, use_disk, stamps, warnings, early) -> Index:
    why = unusable(vault.root)
    if why is not None:  # neither opened in place nor copied: SQLite would write, or wait, there
        warnings.append(f"{why}; searched with an index in memory")
        use_disk = False
    elif use_disk:
        con = None
        try:
            path = _index_path(vault.root)
            try:
                con = _open_disk(path)
                index = _prepare(con, path, vault, schema, warnings, stamps, early)
            except sqlite3.DatabaseError as exc:
                if _locked(exc) or not _damaged(exc):
                    raise
                if con is not None:
                    con.close()
                warnings.append(f".graph/{INDEX_NAME}: damaged index ({exc}); rebuilt it")
                _remove(vault.root)
                con = _open_disk(path)
                index = _prepare(con, path, vault, schema, warnings, stamps)
                index.rebuilt = "damaged"
            return index
        except Exception as exc:
            if not _cannot_write(exc):
                raise
            if con is not None:
                con.close()
            if isinstance(exc, sqlite3.OperationalError) and _locked(exc):
                warnings.append("another process is writing the search index; searched with an index in memory")
            else:
                copied = _readonly_copy(vault, schema, warnings, stamps)
                if copied is not None:
                    copied.warnings.insert(
                        0,
                        f".graph/ cannot be written ({exc}); answered from a copy of .graph/{INDEX_NAME} in memory, "
                        f"brought up to date ({copied.reread} notes read again)",
                    )
                    return copied
                warnings.append(f".graph/ cannot hold the search index ({exc}); searched with an index in memory")
    else:
        copied = _readonly_copy(vault, schema, warnings, stamps)
        if copied is not None:
            return copied
    return _private(vault, schema, warnings, stamps, early)


_USED: dict[str, bool] = {}  # vault (real path) -> its index file was opened in place (else a copy was read)
_FOUND_DAMAGED: dict[str, str] = {}  # vault -> the warning the next opening of its index gives
_DISTRUSTED: set[str] = set()  # vaults whose damaged index file could not be set aside


def discard_damaged(exc: BaseException) -> bool:
    """Whether ``exc`` (raised by a command) says an index file this
    process read is damaged where opening it does not look: a page of
    garbage that only a query reads, a note's row missing (SQLite's
    ``DatabaseError`` itself, or an ``OperationalError`` of :func:`_damaged`;
    never a subclass that says a statement is wrong).  If so, every index
    file this process opened in place is closed and removed (derived data),
    so that the command, run again, builds it afresh; one it read as a copy
    (a dry run, a ``.graph/`` it may not write) or cannot remove is left as
    it is and not opened again by this process (an index in memory
    instead).  The next opening warns, as for damage found on opening
    (``rebuilt: "damaged"``)."""
    kind = type(exc)
    if kind not in (sqlite3.DatabaseError, sqlite3.OperationalError) or _locked(exc) or not _damaged(exc):
        return False
    if not _USED:
        return False
    from pathlib import Path

    close_all()
    for root, in_place in _USED.items():
        # a copy was read (a dry run, a .graph/ it may not write): the file is left as it is
        if in_place and _set_aside(Path(root)):
            done = "rebuilt it"
        else:
            _DISTRUSTED.add(root)
            done = "built one in memory"
        _FOUND_DAMAGED[root] = f".graph/{INDEX_NAME}: damaged index ({exc}); {done}"
    _USED.clear()
    return True


def _set_aside(root) -> bool:
    """:func:`_remove`; whether it could be done."""
    try:
        _remove(root)
    except Exception:  # noqa: BLE001 - whatever stops it, the file is not read again
        return False
    return True


def _private(vault, schema, warnings, stamps, early=None) -> Index:
    """An index built in SQLite's private temporary database; in memory
    alone (``:memory:``) when SQLite cannot spill it to its temporary folder
    (none it may write, or full), with a warning."""
    try:
        return _prepare(_connect(PRIVATE), None, vault, schema, warnings, stamps, early)
    except sqlite3.OperationalError as exc:
        warnings.append(f"SQLite's temporary folder cannot take the index ({exc}); built it in memory")
        return _prepare(_connect(":memory:"), None, vault, schema, warnings, stamps)


def _cannot_write(exc: Exception) -> bool:
    """Whether ``exc`` says the index file cannot be made, opened or written
    (a folder without write access, a file in place of ``.graph/``, a symlink
    refused by store, a lock held too long), not a bug."""
    confine = sys.modules.get(__package__.rsplit(".", 1)[0] + ".write.confine")  # loaded only if it was used
    return isinstance(exc, (OSError, sqlite3.OperationalError)) or (
        confine is not None and isinstance(exc, confine.PathError)
    )


def _open_disk(path: str) -> sqlite3.Connection:
    """A read-write connection to the index file (a seam: tests make it fail
    as a read-only ``.graph/`` would, which root's runs cannot show).  It is
    closed when the process ends, so SQLite folds its ``-wal`` file back into
    the index and removes it."""
    con = _connect(path)
    if not _OPEN:
        import atexit

        atexit.register(close_all)
    _OPEN.append(con)
    return con


_OPEN: list[sqlite3.Connection] = []  # read-write connections of this process, closed at its end


def close_all() -> None:
    """Close every read-write connection to an index file this process
    opened (SQLite folds each ``-wal`` file back and removes it): at exit,
    and by :func:`cli.exit_now` before it leaves without the interpreter's
    teardown."""
    while _OPEN:
        try:
            _OPEN.pop().close()
        except sqlite3.Error:
            pass


def _readonly_copy(vault, schema, warnings, stamps) -> Index | None:
    """The index file opened as it is (:data:`READ_ONLY`), copied into
    memory and brought up to date there; None when there is no file, it is
    unreadable, or it was built for another index version."""
    path = _existing(vault.root)
    if path is None:
        return None
    from urllib.parse import quote

    source = memory = None
    try:
        source = sqlite3.connect(
            "file:" + quote(path) + READ_ONLY, uri=True, timeout=BUSY_SECONDS, isolation_level=None
        )
        if _why_rebuild(source, schema) is not None:
            source.close()
            return None
        try:
            memory = _connect(PRIVATE)
            source.backup(memory)
        except sqlite3.OperationalError as exc:  # no temporary folder SQLite may write: in memory alone
            if memory is not None:
                memory.close()
            warnings.append(f"SQLite's temporary folder cannot take the index ({exc}); copied it into memory")
            memory = _connect(":memory:")
            source.backup(memory)
        source.close()
        index = _prepare(memory, path, vault, schema, warnings, stamps)
        index.readonly = True
        return index
    except sqlite3.Error:
        for con in (source, memory):
            if con is not None:
                con.close()
    return None


def _damaged(exc: Exception) -> bool:
    """True for the errors of a file that is not (or no longer) a sound
    SQLite database, as opposed to one that cannot be opened or written."""
    if isinstance(exc, sqlite3.OperationalError):
        return "malformed" in str(exc) or "no such" in str(exc)
    return isinstance(exc, sqlite3.DatabaseError)


def _prepare(con, path, vault, schema, warnings, stamps, early=None) -> Index:
    index = Index(con, path, warnings=warnings)
    index.early = early
    why = _why_rebuild(con, schema)
    rollback_journal = why == "new" and path is not None and _journal(con, "DELETE")
    try:
        _build(index, con, why, vault, schema, stamps)
    finally:
        if rollback_journal:
            _journal(con, "WAL")
    return index


def _journal(con, mode: str) -> bool:
    """Switch the index file's journal to ``mode`` if that can be done at
    once; whether it was.  A new file is filled with a rollback journal
    (``DELETE``): WAL would write each page twice, to the WAL and then back
    (measured on obsidian-hub: 70 ms CPU and 170 ms wall more).  Another
    process using the file keeps it in WAL (the switch needs the file to
    itself, and is not waited for); one that opens it meanwhile waits for
    the build, as for any writer, and it is WAL again when the build ends."""
    try:
        con.execute("PRAGMA busy_timeout = 0")
        now = con.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0]
    except sqlite3.Error:  # busy, or a file that is not sound: the caller's own error says more
        now = None
    finally:
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
    return isinstance(now, str) and now.lower() == mode.lower()


def _build(index: Index, con, why, vault, schema, stamps) -> None:
    if why is not None:
        try:
            con.execute("BEGIN IMMEDIATE")
            why = _why_rebuild(con, schema)  # another process may have built it while this one waited
            if why is not None:
                _drop_all(con)
                _create(con, schema)
            con.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise sqlite3.OperationalError(f"cannot prepare the index: {exc}") from None
        index.rebuilt = why
    refresh(index, vault, schema, stamps)


# vault.on_disk's key for (index file, its state, its stamp text) when the file
# held every note as this process's walk found them: a run's writes then go in
# as rows (record_written); the state None when a look-up read it (compared
# again by the writer)
FRESH = "index fresh"


def record_written(vault, schema, changes, written: list[str]) -> None:
    """Give the index file the rows of the notes a run of this process
    wrote (``written``, of ``changes``), each read and parsed once, here:
    the next command finds the file up to date and parses none of them
    (:func:`index_update.take_written`).

    Done only when it can be done exactly, else left to the next
    command's update, as for an edit made by hand: the file held every
    note as this process's walk found them (``vault.on_disk[FRESH]``,
    recorded by the update that compared them; by a look-up, or else from
    the stamps the walk took, compared here) and no process changed it
    since (its ``state`` the same); every change was an edit of
    a note or of a file already there (a note trashed or moved, or another
    file made, changes where links lead); the schema's derived columns the
    same; the file free to write at once.  Never raises for the index
    (derived data): a failure leaves it as it was."""
    from .changes import Edit

    fresh = vault.on_disk.get(FRESH)
    walked = vault.on_disk.get("stamps")
    if fresh is None and walked is not None and written:  # the walk's stamps, compared with the file's below
        existing = _existing(vault.root)
        fresh = None if existing is None else (existing, None, walk_stamp_text(vault))
    if fresh is None or not written or not all(isinstance(change, Edit) for change in changes) or vault.given:
        return  # (a view's files hold the notes planned on it, written or not)

    path, state, text = fresh
    files = vault.files
    paths = list(dict.fromkeys(p for p in written if p.endswith(".md")))
    if any(_absent(files, p) for p in written if not p.endswith(".md")):
        return  # another file made: where links lead is the next update's to find
    if not paths or _existing(vault.root) != path or unusable(vault.root) is not None:
        return
    try:
        con = _open_disk(path)
    except (OSError, sqlite3.Error):
        return
    index = Index(con, path)
    try:
        con.execute("PRAGMA busy_timeout = 0")  # a process updating it now reads the notes anyway
        con.execute("BEGIN IMMEDIATE")
        meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('state', 'schema')"))
        if state is None:  # not compared yet: the stored stamps must be the walk's
            stored = con.execute("SELECT value FROM meta WHERE key = 'stamps'").fetchone()
            state = meta.get("state") if stored is not None and stored[0] == text else None
        held = "SELECT 1 FROM docs WHERE path = ?"
        added = [p for p in paths if con.execute(held, (p,)).fetchone() is None]
        if (
            state is None
            or meta.get("state") != state
            or meta.get("schema") != schema_stamp(schema)
            or _why_rebuild(con, schema)
            or any(part.startswith(".") for p in added for part in p.split("/"))  # not a note the walk lists
        ):
            con.execute("ROLLBACK")
            vault.on_disk.pop(FRESH, None)  # the file moved on: the next update reads what changed
            return
        from ..read.vault import Vault

        if added:
            files = sorted(files + added)
        text = take_written(index, Vault(vault.root, files), schema, paths, text, bool(added))
        con.execute("COMMIT")
        if added:  # this vault's files lack them: a run after this one leaves the file to the next update
            vault.on_disk.pop(FRESH, None)
        else:
            vault.on_disk[FRESH] = (path, index.state, text)
    except (OSError, sqlite3.Error, ValueError, UnicodeError):
        if con.in_transaction:
            con.execute("ROLLBACK")
    finally:
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")


def _absent(files: list[str], path: str) -> bool:
    """Whether sorted ``files`` lack ``path``."""
    import bisect

    at = bisect.bisect_left(files, path)
    return at == len(files) or files[at] != path


def open_vault(root, meanwhile=None):
    """``(vault.Vault, stamps)``: the vault walked once, each note's
    ``(size, mtime_ns, ctime_ns)`` taken during the walk, for
    :func:`open_index` (the warm query's freshness check).  ``stamps`` is
    None when the vault has no index file: it is built from nothing, and
    each note's stamp is taken as it is read (a stat of every note in the
    walk costs a fifth of reading them all).  ``meanwhile(folder)``, when
    the vault has an index file, is called with the vault's folder just
    before the walk (a search's :class:`search.Prefetch` starts there)."""
    from ..read.vault import Vault

    path = Vault.check_folder(root)
    stamps = {} if _existing(path) is not None else None
    if stamps is not None and meanwhile is not None:
        meanwhile(path)
    return Vault.walked(path, stamps), stamps


class _Rows:
    """The index file as a :class:`index.NoteIndex` reads it: each note's
    summary, and where its links resolve while the vault's file list is the
    one they were resolved against."""

    def __init__(self, opener, vault):
        self._opener = opener  # opens the file on first use: a call refused before it writes nothing
        self._index: Index | None = None
        self._stamps_now: dict | None = None
        self.vault = vault

    @functools.cached_property
    def files_key(self) -> str:
        """:func:`index_update.files_key` of the vault (taken when first
        needed: a run that finds the report stored never needs it)."""
        return files_key(self.vault)

    @property
    def index(self) -> Index:
        """The index file, opened (and brought up to date) on first use."""
        if self._index is None:
            self._index = self._opener()
        return self._index

    @property
    def warnings(self) -> list[str]:
        """What opening the file said (a damaged file rebuilt, another
        process writing it, a .graph/ that cannot be written); none before
        it is opened."""
        return list(self._index.warnings) if self._index is not None else []

    @property
    def reread(self) -> int:
        """Notes the file's update parsed (none before it is opened)."""
        return self._index.reread if self._index is not None else 0

    def summaries(self):
        """``(path, Summary)`` of each note the file holds as it is now."""
        query = "SELECT path, size, mtime, ctime, summary, props, targets FROM docs WHERE summary IS NOT NULL"
        return self._decoded(self.index.con.execute(query), set(self.vault.notes))

    def summaries_of(self, paths: list[str], anchors: bool = False) -> dict:
        """``{path: Summary}`` of those of ``paths`` (notes of the vault) the
        file holds as they are now, found through its index on ``path``:
        a part of the vault, in the memory of that part.  ``anchors``:
        ``{path: (outline, block ids)}`` instead (:func:`index.decode_anchors`,
        no link decoded)."""
        query = "SELECT path, size, mtime, ctime, summary, props, targets FROM docs WHERE path IN ({marks})"
        return dict(self._decoded(rows_in(self.index.con, query, paths), None, anchors))

    def _decoded(self, rows, notes: set | None, anchors: bool = False):
        """``(path, Summary)`` of the ``rows`` (path, stamp, summary, props,
        targets) that hold a note of the vault (``notes``; None: the rows
        were asked for by path) as it is now (``anchors``: as in
        :meth:`summaries_of`)."""
        from ..read.index import decode_anchors, decode_summary

        hold = self._targets_hold()
        # the stamps the rows must hold: the notes as they are now where another process held the file,
        # else those this process's update brought them to (a row another process wrote since, between
        # two chunks of a pass, is parsed here rather than mixed in)
        current = self._current() if self.index.stale else self.index.stamps
        for path, size, mtime, ctime, text, props, targets in rows:
            if text is None or (notes is not None and path not in notes):
                continue
            if current is not None and current.get(path) != (size, mtime, ctime):
                continue
            found = decode_anchors(text) if anchors else decode_summary(path, text, props, targets if hold else None)
            if found is not None:
                yield path, found

    def _targets_hold(self) -> bool:
        """Whether the stored link targets were resolved against the vault's
        file list as it is now (asked each time: a save may have moved it on)."""
        row = self.index.con.execute("SELECT value FROM meta WHERE key = 'targets'").fetchone()
        return row is not None and row[0] == self.files_key

    def _current(self) -> dict:
        """Every note's stamp now (:func:`stamps_of`), taken once."""
        if self._stamps_now is None:
            self._stamps_now = stamps_of(self.vault)
        return self._stamps_now

    def save(self, resolved: list) -> None:
        """Store where the links of ``resolved`` (``(path, Summary)``) lead.
        A file that cannot take it only costs time next run."""
        if not resolved or self.index.stale:  # resolved against a file list another process may have moved on from
            return
        from ..read.index import encode_targets

        con = self.index.con
        try:
            con.execute("BEGIN IMMEDIATE")
            row = con.execute("SELECT value FROM meta WHERE key = 'targets'").fetchone()
            if row is None or row[0] != self.files_key:
                con.execute("UPDATE docs SET targets = NULL WHERE targets IS NOT NULL")
                con.execute("INSERT OR REPLACE INTO meta VALUES ('targets', ?)", (self.files_key,))
            con.executemany(
                "UPDATE docs SET targets = ? WHERE path = ?",
                [(encode_targets(summary), path) for path, summary in resolved],
            )
            con.execute("COMMIT")
        except (sqlite3.Error, UnicodeEncodeError):
            if con.in_transaction:
                con.execute("ROLLBACK")


def note_index(vault, schema, use_disk: bool = True, stamps: dict | None = None, create: bool = True):
    """A :class:`index.NoteIndex` of ``vault`` served from the index file,
    brought up to date first (:func:`open_index`; ``use_disk=False``: the
    file opened read-only, its rows checked against the notes, or without
    one, from :data:`PRIVATE_MIN` notes, an index built in SQLite's private
    temporary database: nothing written in the vault).  Without SQLite's FTS5 every note is
    parsed in this process instead.  ``create=False``: a vault without an
    index file gets none (a call that may yet be refused writes nothing)."""
    from ..read.index import NoteIndex

    if not create and _existing(vault.root) is None:
        return NoteIndex(vault)

    if not use_disk:  # opened at once: a read-only open writes nothing
        index = _read_only(vault)
        if index is not None:
            return NoteIndex(vault, store=_Rows(lambda: index, vault))
        if len(vault.notes) < PRIVATE_MIN:  # no index file: each note parsed here, its summary kept
            return NoteIndex(vault, warnings=_told(vault))
        try:
            check_sqlite()
        except SearchUnavailable:
            return NoteIndex(vault, warnings=_told(vault))
        # no index file, and too many notes to keep their summaries in memory:
        # an index built in SQLite's private temporary database, no file of the vault

        def private() -> Index:
            index = open_index(vault, schema, use_disk=False, stamps=stamps)
            index.readonly = True  # a dry run's: nothing kept from it (no stored report either)
            return index

        return NoteIndex(vault, store=_Rows(private, vault))
    try:
        check_sqlite()
    except SearchUnavailable:
        return NoteIndex(vault)
    return NoteIndex(vault, store=_Rows(lambda: open_index(vault, schema, use_disk=True, stamps=stamps), vault))


def _told(vault) -> list[str]:
    """The warning of damage this process found in ``vault``'s index file
    (:func:`discard_damaged`), for a command served without it."""
    found = _FOUND_DAMAGED.pop(os.path.realpath(vault.root), None)
    return [found] if found else []


def _read_only(vault) -> Index | None:
    """The index file opened as it is (:data:`READ_ONLY`: a dry run, a read
    and a look-up write nothing: its rows serve the notes whose stamps still
    match, the rest are parsed by the caller); None without a sound file of
    this version."""
    path = _existing(vault.root)
    root = os.path.realpath(vault.root)
    if path is None or unusable(vault.root) is not None or root in _DISTRUSTED:
        return None
    from urllib.parse import quote

    con = None
    try:
        con = sqlite3.connect("file:" + quote(path) + READ_ONLY, uri=True, timeout=BUSY_SECONDS, isolation_level=None)
        if _why_rebuild(con, None) is None:
            _USED.setdefault(root, False)  # read as it is: damage met in it is not removed (discard_damaged)
            index = Index(con, path)
            index.readonly = index.stale = True  # rows are checked against the notes' stamps
            return index
    except sqlite3.Error:
        pass
    if con is not None:
        con.close()
    return None


def describe(index) -> dict:
    """The ``index`` key of a command's JSON for a :class:`index.NoteIndex`:
    :meth:`Index.as_dict` of the file it was served from (``path`` null
    without one), ``parsed`` counting the notes parsed in this process too."""
    store = index.store
    if store is not None:
        found = store.index.as_dict()
    else:
        found = {"path": None, "notes": len(index.vault.notes), "reread": 0, "removed": 0, "rebuilt": None}
        found.update(stale=False, memory=True, readonly=False)
    found["parsed"] = index.parsed
    return found


def lookup(vault, sql: str, params=()) -> tuple[list[tuple], set[str]] | None:
    """``(rows, fresh)`` for a look-up that writes nothing (``card.py``'s by
    name, identity, alias and variant, a read like ``card.py show``
    included): the rows of ``sql`` over the index file opened as it is
    (:data:`READ_ONLY`), and the notes whose rows hold them as they are now
    (compared once per walk, ``vault.on_disk``), not the notes planned in
    this run and not written yet (``vault.given``): the caller reads the
    others.  None when there is no sound file of this version, or it cannot
    be read: the caller reads the notes."""
    index = _read_only(vault)
    if index is None:
        return None
    try:
        known = vault.on_disk.get("index current")  # every look-up of a command shares it
        if known is None or known[0] != index.path:
            known = vault.on_disk["index current"] = (index.path, _current(index.con, vault, index.path))
        rows = index.con.execute(sql, params).fetchall()
    except sqlite3.Error:
        return None
    finally:
        index.close()
    return rows, known[1] - set(vault.given)


def _current(con, vault, path: str) -> set[str]:
    """The notes whose rows in the index file (at ``path``) hold them as
    they are now; when that is every note, :data:`FRESH` is recorded,
    unconfirmed (no ``state``): :func:`record_written` compares again."""
    stamps = stamps_of(vault)
    stored = con.execute("SELECT value FROM meta WHERE key = 'stamps'").fetchone()
    # the walk's text, made once per walk; else of these stamps (stat'ed once: a second stat of
    # every note could see another note gone, and the positions below would not line up)
    now = walk_stamp_text(vault) if vault.on_disk.get("stamps") is stamps else stamp_text(stamps)
    if stored is None or not isinstance(stored[0], bytes):
        return set()
    if stored[0] == now:
        # recorded without the state read here: the file read immutable is as a writer left it,
        # maybe before a commit still in its WAL (a change of the other files only keeps the
        # stamps); record_written compares the stamps again through a connection that sees it
        vault.on_disk[FRESH] = (path, None, now)
        return set(stamps)
    # the stored text is the rows' stamps as the last update wrote them, with
    # them: the notes whose entry is the same now hold as they are (compared
    # as the two texts' entries, far cheaper than reading every row)
    changed = changed_stamps(stored[0], now)
    if changed is not None:  # the stamps told apart where they differ, or a note is new
        paths = sorted(stamps)  # the order of the text's entries
        return set(stamps).difference(paths[at] for at in changed)
    kept = read_stamp_text(stored[0])  # notes added or gone since: compared path by path
    now_read = read_stamp_text(now).items()
    return {path.decode("utf-8", "surrogatepass") for path, stamp in now_read if kept.get(path) == stamp}
