"""The index file damaged where opening it does not look (issue 29's
hardening, found by a helper who broke it): a command that meets the damage
while it reads sets the file aside, builds it again and answers as a fresh
index would, with a warning; it never crashes, and never answers from it."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys

import pytest
from autograph import cli
from autograph.memory import search
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from autograph.write import index_file, store
from conftest import SCRIPTS

SEARCH = str(SCRIPTS / "search.py")
GRAPH = str(SCRIPTS / "graph.py")
WORDS = "apple banana cedar delta ember fjord garnet harbor iris juniper".split()
VOLATILE = ("vault", "previous", "warnings", "index")


def _notes(count: int = 400) -> dict[str, str]:
    rng = random.Random(29)
    notes = {}
    for n in range(count):
        words = " ".join(rng.choice(WORDS) for _ in range(60))
        link = f"[[note {rng.randrange(count)}]]"
        head = f"---\ntype: idea\ntags: [t{n % 5}]\n---\n"
        notes[f"folder {n % 7}/note {n}.md"] = f"{head}# Note {n}\n\n{words}\n{link}\n"
    return notes


def _run(script: str, *argv) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, script, *argv], capture_output=True, text=True, encoding="utf-8", timeout=120
    )


def _json(script: str, *argv) -> tuple[dict, str]:
    proc = _run(script, *argv, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def _hits(data: dict) -> list[tuple]:
    return [(h["path"], h["score"], h["line"], h["snippet"]) for h in data["hits"]]


def _report(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in VOLATILE}


def _garbage_over(path, table: str) -> None:
    """Random bytes over the leaf pages of ``table`` (``dbstat``, where this
    SQLite has it), else over the middle third of the file: damage only a
    read of those rows meets."""
    con = sqlite3.connect(path)
    size = con.execute("PRAGMA page_size").fetchone()[0]
    try:
        pages = [p for (p,) in con.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (table,))]
    except sqlite3.Error:
        count = con.execute("PRAGMA page_count").fetchone()[0]
        pages = list(range(count // 3, 2 * count // 3))
    con.close()
    rng = random.Random(table)
    with open(path, "r+b") as handle:
        for page in pages[1:]:  # the first leaf left: the table still opens
            handle.seek((page - 1) * size)
            handle.write(rng.randbytes(size))


DAMAGE = {
    "FTS5's fts_idx dropped": "DROP TABLE fts_idx",
    "FTS5's fts_docsize dropped": "DROP TABLE fts_docsize",
    "docs without the vkeys column": "DROP INDEX IF EXISTS docs_no_vkeys; ALTER TABLE docs DROP COLUMN vkeys",
    "docs a view": "ALTER TABLE docs RENAME TO old_docs; CREATE VIEW docs AS SELECT * FROM old_docs",
    "the list of files NULL": "UPDATE meta SET value = NULL WHERE key = 'files'",
    "the list of files gone": "DELETE FROM meta WHERE key = 'files'",
    "every FTS row gone": "DELETE FROM fts",
    "garbage over the rows of docs": "docs",
    "garbage over FTS5's data": "fts_data",
}


def _damage(index_path, how: str) -> None:
    if " " not in DAMAGE[how]:
        _garbage_over(index_path, DAMAGE[how])
        return
    con = sqlite3.connect(index_path)
    con.executescript(DAMAGE[how])
    con.commit()
    con.close()


@pytest.mark.parametrize("how", DAMAGE)
def test_a_search_meets_damage_and_answers_as_a_fresh_index(make_vault, tmp_path, how):
    vault = make_vault(_notes())
    fresh = tmp_path / "fresh"
    shutil.copytree(vault, fresh)
    queries = (["note 17"], ["cedar", "ember", "--limit", "30"], ["t3"])
    expected = [_hits(_json(SEARCH, *q, "--vault", str(fresh))[0]) for q in queries]
    _json(SEARCH, "apple", "--vault", str(vault))
    _damage(vault / ".graph" / "index.sqlite", how)
    data, err = _json(SEARCH, *queries[0], "--vault", str(vault))
    assert "damaged index" in err and "rebuilt it" in err
    assert data["index"]["rebuilt"] == "damaged" and data["index"]["memory"] is False
    assert _hits(data) == expected[0]
    for query, hits in zip(queries[1:], expected[1:], strict=True):
        data, err = _json(SEARCH, *query, "--vault", str(vault))
        assert err == "" and data["index"]["parsed"] == 0 and data["index"]["rebuilt"] is None
        assert _hits(data) == hits


@pytest.mark.parametrize(
    "table, then",
    [
        ("docs", "notes edited"),
        ("links", "notes edited"),
        ("fts_data", "notes edited"),
        ("docs", "the stored report gone"),  # the rows a whole report reads (not links, not FTS5's)
    ],
)
def test_health_meets_damage_while_it_reads_and_reports_as_fresh(make_vault, tmp_path, table, then):
    vault = make_vault(_notes())
    _json(GRAPH, "health", "--vault", str(vault))
    _garbage_over(vault / ".graph" / "index.sqlite", table)
    if then == "notes edited":  # their stored rows are read and replaced
        for n in range(0, 400, 9):
            path = vault / f"folder {n % 7}" / f"note {n}.md"
            path.write_text(path.read_text(encoding="utf-8") + "\n[[note 3]] more words\n", encoding="utf-8")
    else:  # the report computed whole: every note's stored summary read
        (vault / ".graph" / "cache" / "health.json").unlink()
    fresh = tmp_path / "fresh"
    shutil.copytree(vault, fresh, ignore=shutil.ignore_patterns(".graph"))
    expected = _report(_json(GRAPH, "health", "--vault", str(fresh))[0])
    data, err = _json(GRAPH, "health", "--vault", str(vault))
    assert "damaged index" in err
    assert data["index"]["rebuilt"] == "damaged"
    assert _report(data) == expected
    again, err = _json(GRAPH, "health", "--vault", str(vault))
    assert err == "" and again["index"]["parsed"] == 0 and _report(again) == expected


def test_a_dry_run_meets_damage_and_leaves_the_file_as_it_was(make_vault, tmp_path):
    vault = make_vault(_notes())
    fresh = tmp_path / "fresh"
    shutil.copytree(vault, fresh)
    expected = _hits(_json(SEARCH, "cedar", "--limit", "40", "--vault", str(fresh))[0])
    _json(SEARCH, "apple", "--vault", str(vault))
    index_path = vault / ".graph" / "index.sqlite"
    _damage(index_path, "garbage over FTS5's data")
    before = {p.name: p.read_bytes() for p in (vault / ".graph").iterdir() if p.is_file()}
    data, err = _json(SEARCH, "cedar", "--limit", "40", "--vault", str(vault), "--dry-run")
    assert "damaged index" in err and "in memory" in err
    assert data["index"]["memory"] is True and _hits(data) == expected
    assert {p.name: p.read_bytes() for p in (vault / ".graph").iterdir() if p.is_file()} == before


def test_a_dry_run_health_meets_damage_and_reports_as_fresh(make_vault, tmp_path):
    vault = make_vault(_notes())
    _json(GRAPH, "health", "--vault", str(vault))
    _garbage_over(vault / ".graph" / "index.sqlite", "docs")
    path = vault / "folder 2" / "note 9.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n[[note 3]]\n", encoding="utf-8")
    fresh = tmp_path / "fresh"
    shutil.copytree(vault, fresh, ignore=shutil.ignore_patterns(".graph"))
    expected = _report(_json(GRAPH, "health", "--vault", str(fresh))[0])
    before = {p.name: p.read_bytes() for p in (vault / ".graph").iterdir() if p.is_file()}
    data, err = _json(GRAPH, "health", "--vault", str(vault), "--dry-run")
    assert "damaged index" in err
    assert _report(data) == expected
    assert {p.name: p.read_bytes() for p in (vault / ".graph").iterdir() if p.is_file()} == before


def _opened(vault) -> None:
    v, schema = Vault.open(vault), load_schema(vault)
    search.open_index(v, schema).close()


def test_a_command_that_wrote_is_not_run_again_after_damage(make_vault, monkeypatch, capsys):
    vault = make_vault({"a.md": "apple\n"})
    calls = []

    def command(args):
        calls.append(1)
        _opened(vault)
        if len(calls) == 1:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return 0

    monkeypatch.setattr(store, "_APPLIED", [])  # as in a new process (another test may have written)
    assert cli._call(command, None) == 0 and len(calls) == 2  # read only: run again, on a new file
    calls.clear()
    monkeypatch.setattr(store, "_APPLIED", ["a run"])
    assert cli._call(command, None, "card.py") == cli.EXIT_CRASH and len(calls) == 1
    assert "was set aside; run the command again" in capsys.readouterr().err
    assert not (vault / ".graph" / "index.sqlite").exists()  # the next command builds it


@pytest.mark.parametrize(
    "error",
    [
        sqlite3.ProgrammingError("Incorrect number of bindings supplied"),
        sqlite3.IntegrityError("UNIQUE constraint failed: docs.path"),
        sqlite3.OperationalError("database is locked"),
        sqlite3.OperationalError('near "x": syntax error'),
        ValueError("malformed"),
    ],
)
def test_errors_that_say_nothing_of_damage_leave_the_file(make_vault, error):
    vault = make_vault({"a.md": "apple\n"})
    _opened(vault)
    assert index_file.discard_damaged(error) is False
    assert (vault / ".graph" / "index.sqlite").is_file()
