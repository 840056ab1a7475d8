"""The health report's base in the index file: what a later report patches.

``graph.py health`` keeps, beside the notes' rows in ``.graph/index.sqlite``,
what each note added to its last report (``health_facts``: a JSON list per
note, :mod:`graph.health_facts`) and, in ``health_base``, what that report
was computed from: the stored stamps of the notes (:func:`index.stamp_text`)
as of then, a key of everything else it depends on (``context``), the key
of the report in ``.graph/cache/health.json`` and the counts no list of the
report holds (``state``).  A later run whose context is the same reads the
facts of only the notes whose stamps moved since, and the notes that link to
them.  Derived data, as the rest of the file: rebuilt with it, never trusted
beyond what decodes.
"""

from __future__ import annotations

import json
import sqlite3

from ..read.index import stamp_cut
from .sqlrows import rows_in

__all__ = ["Base", "Pending", "facts_of", "linked_from", "load_base", "save_base", "sharing_a_name"]

_TABLES = (
    "CREATE TABLE IF NOT EXISTS health_facts (path TEXT PRIMARY KEY, facts TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS health_base (key TEXT PRIMARY KEY, value BLOB)",
)


class Base:
    """A stored base: ``context`` (str), ``report_key`` (str), ``stamps``
    (bytes, :func:`index.stamp_text`) and ``state`` (a JSON-ready dict)."""

    __slots__ = ("context", "report_key", "stamps", "state")

    def __init__(self, context: str, report_key: str, stamps: bytes, state: dict):
        self.context, self.report_key, self.stamps, self.state = context, report_key, stamps, state


class Pending:
    """Every note's facts of a report being computed, kept in a temporary
    table of the index file's connection (SQLite's own temporary file once
    its page cache is full) rather than in memory: at 100,000 notes they
    are tens of megabytes.  :meth:`append` ``(path, facts as JSON text)``;
    :func:`save_base` takes them.  Without a temporary table (its folder
    cannot be written) the facts are not kept (:attr:`failed`)."""

    _BATCH = 2000

    def __init__(self, con: sqlite3.Connection):
        self.con, self._rows, self.failed = con, [], False
        try:
            con.execute("CREATE TEMP TABLE IF NOT EXISTS health_facts_new (path TEXT PRIMARY KEY, facts TEXT NOT NULL)")
            con.execute("DELETE FROM temp.health_facts_new")
        except sqlite3.Error:
            self.failed = True

    def append(self, row: tuple[str, str]) -> None:
        if self.failed:
            return
        self._rows.append(row)
        if len(self._rows) >= self._BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the rows held to the temporary table."""
        rows, self._rows = self._rows, []
        if rows and not self.failed:
            try:
                self.con.executemany("INSERT OR REPLACE INTO temp.health_facts_new VALUES (?, ?)", rows)
            except (sqlite3.Error, ValueError):  # a lone surrogate is a ValueError (UnicodeEncodeError)
                self.failed = True

    def close(self) -> None:
        """Drop the temporary table."""
        self._rows = []
        try:
            self.con.execute("DROP TABLE IF EXISTS temp.health_facts_new")
        except sqlite3.Error:
            pass


def load_base(con: sqlite3.Connection) -> Base | None:
    """The base stored in the index file of ``con``, or None (none stored,
    or it does not decode)."""
    try:
        rows = dict(con.execute("SELECT key, value FROM health_base"))
        state = json.loads(rows["state"])
        base = Base(rows["context"], rows["report_key"], rows["stamps"], state)
    except (sqlite3.Error, KeyError, TypeError, ValueError, RecursionError):
        return None
    ok = isinstance(base.context, str) and isinstance(base.report_key, str) and isinstance(base.stamps, bytes)
    return base if ok and isinstance(state, dict) else None


def facts_of(con: sqlite3.Connection, paths) -> dict[str, list]:
    """``{path: facts}`` of those of ``paths`` the file holds facts for.
    Raises ValueError (or sqlite3.Error) when a row does not decode."""
    found: dict[str, list] = {}
    for path, text in rows_in(con, "SELECT path, facts FROM health_facts WHERE path IN ({marks})", paths):
        try:
            facts = json.loads(text)
        except RecursionError:  # a damaged row nested too deep
            raise ValueError(f"facts of {path!r} do not decode") from None
        if not isinstance(facts, list):
            raise ValueError(f"facts of {path!r} are not a list")
        found[path] = facts
    return found


def linked_from(con: sqlite3.Connection, paths) -> dict[str, set[str]]:
    """``{path: the other notes with a link that resolves to it}`` for each
    of ``paths``, from the index file's stored links (a note's links to
    itself left out), as the notes' rows hold them now; a note that is not
    UTF-8 among them too (its row keeps the links of its text decoded with
    replacement characters, where health counts none)."""
    found: dict[str, set[str]] = {}
    query = (
        "SELECT t.path, s.path FROM docs t JOIN links l ON l.dst = t.id JOIN docs s ON s.id = l.src"
        " WHERE t.path IN ({marks}) AND l.src != l.dst"
    )
    for target, source in rows_in(con, query, paths):
        found.setdefault(target, set()).add(source)
    return found


def sharing_a_name(con: sqlite3.Connection, paths) -> set[str]:
    """Those of ``paths`` that share a name key (the ``variants`` table:
    :func:`namekeys.stored_keys`) with another note, as the notes' rows
    hold them now: the cards a name variant may pair."""
    query = (
        "SELECT DISTINCT d.path FROM docs d JOIN variants v ON v.id = d.id"
        " JOIN variants o ON o.key = v.key AND o.id != v.id WHERE d.path IN ({marks})"
    )
    return {path for (path,) in rows_in(con, query, paths)}


def save_base(con: sqlite3.Connection, base: Base, facts, whole: bool, stored: bytes, moved=None) -> bool:
    """Store ``base`` and ``facts`` (``(path, facts as JSON text)`` pairs, or
    a :class:`Pending`: every note's
    when ``whole``, else those that changed) in one write transaction, only
    while the file's stored stamps are still ``stored`` (its rows are those
    the facts were taken from) and no other process holds it.  Returns
    whether they were stored; a file that cannot take them keeps none
    (``whole``: the old base is dropped first, so a half-stored one is
    never read).  ``moved``: ``(positions, report key)``, the positions of
    the stamps that differ from those of the stored base of that report key
    (same notes), written in place rather than the whole text again while
    that base is still the one stored."""
    try:
        con.execute("BEGIN IMMEDIATE")
    except sqlite3.Error:
        return False
    try:
        for statement in _TABLES:
            con.execute(statement)
        row = con.execute("SELECT value FROM meta WHERE key = 'stamps'").fetchone()
        if row is None or row[0] != stored:
            con.execute("ROLLBACK")
            return False
        row = con.execute("SELECT rowid, length(value) FROM health_base WHERE key = 'stamps'").fetchone()
        held = con.execute("SELECT value FROM health_base WHERE key = 'report_key'").fetchone()
        if not whole and (moved is None or held is None or held[0] != moved[1]):
            # another process stored a base since this one was read (maybe of another context: another
            # schema, another day): the facts of the notes not changed here are its, so nothing is stored
            con.execute("ROLLBACK")
            return False
        in_place = moved is not None and not whole and row is not None and row[1] == len(base.stamps)
        con.execute("DELETE FROM health_base WHERE key != 'stamps'" if in_place else "DELETE FROM health_base")
        if whole:
            con.execute("DELETE FROM health_facts")
        if isinstance(facts, Pending):
            facts.flush()
            if facts.failed:
                raise ValueError("the facts could not be kept")
            con.execute("INSERT OR REPLACE INTO health_facts SELECT path, facts FROM temp.health_facts_new")
        else:
            con.executemany("INSERT OR REPLACE INTO health_facts VALUES (?, ?)", facts)
        if in_place:  # the same notes: the stamps that moved written in place (a few pages, not megabytes)
            start = stamp_cut(base.stamps) + 2
            if start < 2:
                raise ValueError("the base's stamps do not read as a stamp text")
            with con.blobopen("health_base", "value", row[0]) as blob:
                for at in moved[0]:
                    offset = start + 24 * at
                    blob.seek(offset)
                    blob.write(base.stamps[offset : offset + 24])
        else:
            con.execute("INSERT INTO health_base VALUES ('stamps', ?)", (base.stamps,))
        con.executemany(
            "INSERT INTO health_base VALUES (?, ?)",
            [
                ("context", base.context),
                ("report_key", base.report_key),
                ("state", json.dumps(base.state, separators=(",", ":"))),
            ],
        )
        con.execute("COMMIT")
        return True
    except (sqlite3.Error, ValueError, TypeError):  # a lone surrogate is a ValueError (UnicodeEncodeError)
        if con.in_transaction:
            con.execute("ROLLBACK")
        return False
