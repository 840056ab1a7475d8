"""search.Prefetch: a query ranked in a thread while the vault is walked,
its rows used only when they are what the index answers now."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from autograph.memory import search
from autograph.schema.model import load_schema
from conftest import CORPORA, SCRIPTS, copy_tree, require

SEARCH = str(SCRIPTS / "search.py")


def _vault(make_vault):
    notes = {f"n{i}.md": f"# Note {i}\n\napple {'banana ' * (i % 5)}cedar {i}\n" for i in range(60)}
    notes["people/Ann Lee.md"] = "---\ntype: person\n---\napple pie\n"
    vault = make_vault(notes)
    search.open_index(*_opened(vault)).close()  # the index file, filled
    (vault / "n0.md").unlink()  # its id left unused: a rebuild numbers the notes otherwise
    search.open_index(*_opened(vault)).close()
    return vault


def _opened(vault, prefetch=None):
    vault_obj, _stamps = search.open_vault(vault, prefetch.start if prefetch is not None else None)
    if prefetch is not None:
        prefetch.join()
    return vault_obj, load_schema(vault)


def _search(vault, text: str, prefetch=None) -> tuple[list, int]:
    """(hits as (path, score, fields), ranked FTS queries the index's own connection ran)."""
    v, schema = _opened(vault, prefetch)
    index = search.open_index(v, schema)
    ranked = []
    index.con.set_trace_callback(lambda sql: ranked.append(sql) if "MATCH" in sql and "bm25" in sql else None)
    try:
        hits = search.search(index, v, schema, text, prefetch=prefetch)
        return [(h.path, h.score, h.fields) for h in hits], len(ranked)
    finally:
        if prefetch is not None:
            prefetch.close()
        index.close()


@pytest.mark.parametrize("text", ["apple", "banana cedar", "Ann Lee", "cedar 7", "nothing-like-it"])
def test_on_an_unchanged_vault_the_rows_ranked_meanwhile_answer(make_vault, text):
    vault = _vault(make_vault)
    alone, ranked_alone = _search(vault, text)
    both, ranked_both = _search(vault, text, search.Prefetch(text, 10))
    assert both == alone
    assert ranked_alone >= 1 and ranked_both == 0  # ranked once, in the thread


def test_a_note_changed_before_the_walk_is_ranked_from_the_notes_as_they_are(make_vault):
    vault = _vault(make_vault)
    prefetch = search.Prefetch("zebra", 10)
    prefetch.start(vault)  # ranks the index as it was: no note holds the word
    prefetch.join()
    (vault / "n3.md").write_text("zebra\n", encoding="utf-8")
    v, schema = _opened(vault)
    index = search.open_index(v, schema)
    try:
        assert [h.path for h in search.search(index, v, schema, "zebra", prefetch=prefetch)] == ["n3.md"]
    finally:
        prefetch.close()
        index.close()


def _indexed_elsewhere(vault) -> None:
    """Another process edited a note and brought the index up to date: the
    walk after it finds every note as the index holds it."""
    (vault / "n3.md").write_text("apple banana banana banana zebra\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, SEARCH, "apple", "--vault", str(vault)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def _rebuilt_elsewhere(vault) -> None:
    """Another process set the file aside and built it again (a new file, the same notes)."""
    for suffix in ("", "-wal", "-shm"):
        path = vault / ".graph" / f"index.sqlite{suffix}"
        if path.exists():
            path.unlink()
    search.open_index(*_opened(vault)).close()


def _rebuilt_in_place(vault) -> None:
    """Another process rebuilt the file in place (an index of an older
    version): the same file, the same notes, each under a new id."""
    con = sqlite3.connect(vault / ".graph" / "index.sqlite")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'version'")
    con.commit()
    con.close()
    proc = subprocess.run([sys.executable, SEARCH, "apple", "--vault", str(vault)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("meanwhile", [_indexed_elsewhere, _rebuilt_elsewhere, _rebuilt_in_place])
def test_rows_of_an_index_another_process_wrote_since_are_not_used(make_vault, meanwhile):
    vault = _vault(make_vault)
    prefetch = search.Prefetch("apple banana", 10)
    prefetch.start(vault)  # ranks the index as it is now
    prefetch.join()
    meanwhile(vault)
    alone, _ = _search(vault, "apple banana")
    v, schema = _opened(vault)  # the walk: every note as the index holds it now
    index = search.open_index(v, schema)
    ranked = []
    index.con.set_trace_callback(lambda sql: ranked.append(sql) if "bm25" in sql else None)
    try:
        assert index.reread == 0
        hits = search.search(index, v, schema, "apple banana", prefetch=prefetch)
        assert [(h.path, h.score, h.fields) for h in hits] == alone
        assert ranked  # ranked again, here
    finally:
        prefetch.close()
        index.close()


def test_search_py_leaves_no_wal_beside_the_index(make_vault):
    vault = _vault(make_vault)
    runs = (
        (["apple"], 0),
        (["apple", "--type", "person"], 0),
        (["--identity", "email=a@b.c"], 0),
        (["apple", "--dry-run"], 0),
        (["apple", "--schema", str(vault / "no such schema.json")], 2),  # refused after the walk
    )
    for argv, code in runs:
        proc = subprocess.run(
            [sys.executable, SEARCH, *argv, "--vault", str(vault), "--json"], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == code, proc.stderr
        assert sorted(os.listdir(vault / ".graph")) == ["cache", "index.sqlite"] or sorted(
            os.listdir(vault / ".graph")
        ) == ["index.sqlite"], argv


def test_the_prefetched_answer_is_the_answer_on_a_corpus(tmp_path):
    vault = copy_tree(require(CORPORA / "obsidian-hub"), tmp_path / "hub")
    search.open_index(*_opened(vault)).close()
    for text in ("daily notes template", "plugin", "obsidian notes", "graph view css", "Zettelkasten"):
        alone, ranked_alone = _search(vault, text)
        both, ranked_both = _search(vault, text, search.Prefetch(text, 10))
        assert both == alone and ranked_both == 0 < ranked_alone, text
