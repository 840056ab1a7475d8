"""Rows for many keys at once: one ``SELECT ... IN (?, ?, ...)`` per few
hundred keys, instead of one statement per key (a thousand notes changed
at 100k: about 12 µs saved per statement, measured) and without passing
SQLite's bound on a statement's parameters (999 before 3.32)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

__all__ = ["CHUNK", "execute_in", "rows_in"]

CHUNK = 500  # keys per statement: well under SQLite's bound on parameters


def rows_in(con: sqlite3.Connection, sql: str, keys, args: tuple = ()) -> Iterator[tuple]:
    """The rows of ``sql`` for every key of ``keys`` (an iterable), chunk
    by chunk: ``sql`` holds ``{marks}`` where the chunk's ``?`` marks go
    (``... WHERE path IN ({marks})``); ``args`` are bound after them.
    Rows come in the order SQLite gives each chunk's.  Raises
    sqlite3.Error as ``con.execute`` does."""
    keys = list(keys)
    for start in range(0, len(keys), CHUNK):
        part = keys[start : start + CHUNK]
        yield from con.execute(sql.format(marks=", ".join("?" * len(part))), [*part, *args])


def execute_in(con: sqlite3.Connection, sql: str, keys, args: tuple = ()) -> None:
    """Run ``sql`` (an ``UPDATE`` or ``DELETE`` holding ``{marks}``, as for
    :func:`rows_in`) for every key of ``keys``, chunk by chunk."""
    for _ in rows_in(con, sql, keys, args):
        pass
