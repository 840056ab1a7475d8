"""Rows for many keys in one statement per chunk (``write/sqlrows.rows_in``):
every key's rows, whatever the chunking, with the arguments after the keys
bound where they belong."""

from __future__ import annotations

import sqlite3

import pytest
from autograph.write.sqlrows import CHUNK, rows_in


@pytest.mark.parametrize("count", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7])
def test_every_keys_rows_come_once_across_chunks(count):
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (k INTEGER, v TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(k, f"{k}-{side}") for k in range(3000) for side in "ab"])
    keys = list(range(0, 2 * count, 2))  # every other key: the odd ones must not come
    rows = list(rows_in(con, "SELECT k, v FROM t WHERE k IN ({marks}) AND v LIKE ?", keys, ("%-a",)))
    assert sorted(rows) == [(k, f"{k}-a") for k in keys]
