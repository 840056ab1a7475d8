"""search.py (issue 11): the index, safe queries, every language, identity lookup."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import unicodedata

import pytest
from autograph.memory import search
from autograph.read import folding, identity
from autograph.read.vault import Vault
from autograph.schema.model import SchemaError, load_schema
from autograph.write import index_file, index_update
from conftest import SCRIPTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEARCH = str(SCRIPTS / "search.py")


def run(*argv, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, SEARCH, *argv], capture_output=True, text=True, encoding="utf-8", cwd=cwd, timeout=60
    )


def found(vault, text: str, **kw) -> list[str]:
    v = Vault.open(vault)
    schema = load_schema(vault)
    index = search.open_index(v, schema)
    try:
        return [hit.path for hit in search.search(index, v, schema, text, **kw)]
    finally:
        index.con.close()


def query_json(vault, *argv) -> dict:
    proc = run(*argv, "--vault", str(vault), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ---------------------------------------------------------------------------
# BR-27 and every language


def test_br27_nfd_text_is_found_by_nfc_and_nfd_queries(case):
    vault = case("BR-27") / "vault"
    nfc_word = unicodedata.normalize("NFC", "한국어")
    nfd_word = unicodedata.normalize("NFD", "한국어")
    # the case's notes really hold NFD text
    assert unicodedata.normalize("NFD", "한국어").encode() in (vault / "회의록.md").read_bytes()
    assert sorted(found(vault, nfc_word)) == ["nfc-note.md", "회의록.md"]
    assert sorted(found(vault, nfd_word)) == ["nfc-note.md", "회의록.md"]
    for cafe in (unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")):
        assert found(vault, cafe) == ["latin.md"]
    # what the user is shown is NFC, never broken jamo
    data = query_json(vault, nfd_word)
    for hit in data["hits"]:
        for text in (hit["title"], hit["snippet"]):
            assert text == unicodedata.normalize("NFC", text)
    titles = {hit["path"]: hit["title"] for hit in data["hits"]}
    assert titles[unicodedata.normalize("NFC", "회의록.md")] == "회의 메모"


@pytest.fixture
def languages(make_vault):
    return make_vault(
        {
            "ru.md": "---\ntitle: Заметка\n---\nПривет, мир! Встреча с командой в среду.\n",
            "fr.md": "Le ménage à trois du café crème.\n",
            "de.md": "Die Straße nach Müllheim.\n",
            "zh.md": "我们讨论了会议记录和下周的计划。\n",
            "ja.md": "東京で会いましょう。\n",
            "ko.md": "다음 주 회의록을 정리했습니다.\n",
            "el.md": "Καλημέρα κόσμε.\n",
            "en.md": "Nothing to see here, plain English words.\n",
        }
    )


@pytest.mark.parametrize(
    "query, path",
    [
        ("мир", "ru.md"),
        ("МИР", "ru.md"),
        ("встреча", "ru.md"),
        ("заметка", "ru.md"),
        ("menage", "fr.md"),
        ("ménage", "fr.md"),
        ("CAFE", "fr.md"),
        ("mullheim", "de.md"),
        ("会议", "zh.md"),
        ("计划", "zh.md"),
        ("会议记录", "zh.md"),
        ("东京" if False else "東京", "ja.md"),
        ("회의록", "ko.md"),
        ("회의", "ko.md"),
        ("καλημερα", "el.md"),
    ],
)
def test_words_of_every_language_are_found(languages, query, path):
    assert found(languages, query)[:1] == [path]


def test_a_single_cjk_character_is_a_safe_query(languages):
    assert isinstance(found(languages, "会"), list)


# ---------------------------------------------------------------------------
# Safe queries

HOSTILE = [
    "POL-358",
    '"unbalanced',
    "AND",
    "OR",
    "NOT",
    "NEAR(",
    "NEAR(a b",
    "*",
    "-",
    "tags:x",
    "title:",
    "🙂🙂",
    "a AND OR NOT b",
    "^",
    "{title}: x",
    "'",
    "\\",
    "\x00",
    "( ) ( )",
    "col:umn:",
    "",
    "   ",
    "a\udcff",  # a byte of a non-UTF-8 command line
]


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    (root / "POL-358.md").write_text("Policy POL-358: tags:x and NEAR( things. café 会议\n", encoding="utf-8")
    (root / "other.md").write_text("---\ntags: [x]\n---\nAND OR NOT words\n", encoding="utf-8")
    v = Vault.open(root)
    schema = load_schema(root)
    index = search.open_index(v, schema)
    yield index, v, schema
    index.con.close()


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_answer_cleanly(hostile_index, text):
    index, v, schema = hostile_index
    hits = search.search(index, v, schema, text)
    assert isinstance(hits, list)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_raw_queries_answer_or_say_what_is_wrong(hostile_index, text):
    index, v, schema = hostile_index
    try:
        hits = search.search(index, v, schema, text, raw=True, kind="\udcfe")
    except search.QueryError as exc:
        assert "bad FTS5 query" in str(exc)
    else:
        assert hits == []


def test_pol_358_is_found_as_one_word(hostile_index):
    index, v, schema = hostile_index
    assert [h.path for h in search.search(index, v, schema, "POL-358")][:1] == ["POL-358.md"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from(list("\"*-^():{}+NEARORANDNOT \t\n'\\.,;#[]|@!?")), st.characters(codec="utf-8")
        ),
        max_size=40,
    )
)
def test_200_hostile_queries_never_raise(hostile_index, text):
    index, v, schema = hostile_index
    hits = search.search(index, v, schema, text)
    assert all(isinstance(h.path, str) for h in hits)


def test_raw_fts_mode_works_and_bad_syntax_is_a_clear_error(hostile_index, tmp_path):
    index, v, schema = hostile_index
    assert [h.path for h in search.search(index, v, schema, "policy AND café", raw=True)] == ["POL-358.md"]
    with pytest.raises(search.QueryError, match="bad FTS5 query"):
        search.search(index, v, schema, "NEAR(", raw=True)
    proc = run("NEAR(", "--fts", "--vault", str(v.root))
    assert proc.returncode == 2 and "bad FTS5 query" in proc.stderr and "Traceback" not in proc.stderr


def test_a_limit_out_of_range_is_a_usage_error_not_a_traceback(make_vault):
    vault = make_vault({"a.md": "alpha\n"})
    for limit in ("0", "-1", "9223372036854775807", "1e3", "x"):
        proc = run("alpha", "--vault", str(vault), "--limit", limit)
        assert proc.returncode == 2 and "--limit" in proc.stderr and "Traceback" not in proc.stderr, limit
    assert found(vault, "alpha", limit=2**70) == ["a.md"]


def test_cli_no_hits_is_exit_0_with_an_empty_list(make_vault):
    vault = make_vault({"a.md": "alpha\n"})
    data = query_json(vault, "zzzz")
    assert data["hits"] == [] and data["count"] == 0
    proc = run('"', "AND", "--vault", str(vault))
    assert proc.returncode == 0 and "no results" in proc.stdout


# ---------------------------------------------------------------------------
# Ranking, fields, snippets, filters


def test_fields_weights_snippet_line_and_rerank(make_vault):
    vault = make_vault(
        {
            "people/Alice Smith.md": "---\ntype: person\nstatus: active\naliases: [Ally]\nupdated: 2026-01-01\n---\n"
            "# Alice\n\n"
            "Works on the zebra project.\n",
            "notes/mention.md": "Some text.\nA long note that mentions alice once.\n",
            "notes/old.md": "---\nstatus: superseded\n---\nalice alice\n",
            "hub.md": "---\ntype: moc\n---\n[[Alice Smith]] [[mention]]\n",
        }
    )
    data = query_json(vault, "alice")
    paths = [h["path"] for h in data["hits"]]
    assert paths[0] == "people/Alice Smith.md"
    first = data["hits"][0]
    assert "title" in first["fields"] and "headings" in first["fields"]
    assert first["inlinks"] == 1 and first["type"] == "person"
    assert 0.1 <= first["relevance"] <= 1 and data["hits"][1]["relevance"] is None
    mention = next(h for h in data["hits"] if h["path"] == "notes/mention.md")
    assert mention["line"] == 2 and "alice" in mention["snippet"] and mention["fields"] == ["body"]
    assert query_json(vault, "ally")["hits"][0]["fields"] == ["aliases"]
    assert [h["path"] for h in query_json(vault, "alice", "--type", "person")["hits"]] == ["people/Alice Smith.md"]
    assert [h["path"] for h in query_json(vault, "alice", "--folder", "notes")["hits"]] == [
        "notes/mention.md",
        "notes/old.md",
    ] or sorted(h["path"] for h in query_json(vault, "alice", "--folder", "notes")["hits"]) == [
        "notes/mention.md",
        "notes/old.md",
    ]
    assert [h["path"] for h in query_json(vault, "alice", "--status", "superseded")["hits"]] == ["notes/old.md"]
    assert query_json(vault, "alice", "--limit", "1")["count"] == 1


def test_a_word_half_the_notes_hold_still_fills_the_hits_when_too_few_notes_hold_the_others(make_vault):
    files = {f"n{k}.md": f"notes about day {k}\n" for k in range(6)}
    files["rare.md"] = "zebra notes\n"
    files["other.md"] = "nothing here\n"
    vault = make_vault(files)
    paths = found(vault, "zebra notes")
    assert paths[0] == "rare.md" and sorted(paths[1:]) == [f"n{k}.md" for k in range(6)]
    assert found(vault, "zebra notes", limit=1) == ["rare.md"]


def test_words_half_the_notes_hold_leave_the_best_hits_as_they_were(monkeypatch):
    """bm25 gives a word in half the notes or more an IDF of 1e-6; leaving
    it out of the ranking query (it is still shown, and counted in fields)
    gives the same hits in the same order on a real corpus, but for notes
    whose scores tie within a millionth (which that IDF told apart)."""
    import math

    from conftest import CORPORA, require

    root = require(CORPORA / "obsidian-hub")
    v = Vault.open(root)
    schema = load_schema(root)
    index = search.open_index(v, schema, use_disk=False)
    queries = ["daily notes template", "how to make notes", "obsidian notes plugin", "plugin for notes", "notes"]
    queries += ["obsidian notes", "notes obsidian", "of the", "the notes of obsidian"]  # every word common
    sizes = (3, 10, 60)

    def hits():
        return {(q, n): search.search(index, v, schema, q, n) for q in queries for n in sizes}

    def tied(a, b) -> bool:
        return math.isclose(a, b, rel_tol=1e-5)

    try:
        narrowed = hits()
        monkeypatch.setattr(search, "_without_common", lambda con, text: None)
        for key, whole in hits().items():
            mine = narrowed[key]
            assert len(mine) == len(whole), key
            for k, (a, b) in enumerate(zip(mine, whole, strict=True)):
                assert tied(a.score, b.score), (key, k)
                neighbours = [h.score for h in whole[max(k - 1, 0) : k + 2] if h is not b]
                last = k == len(whole) - 1  # may tie with a note after it, left out of both
                if not last and not any(tied(b.score, other) for other in neighbours):
                    assert (a.path, a.fields, a.line, a.snippet) == (b.path, b.fields, b.line, b.snippet), (key, k)
    finally:
        index.close()


@pytest.mark.parametrize("limit", [1, 2])
def test_notes_that_tie_come_by_path_whatever_the_index_went_through(make_vault, limit):
    # ten notes with the same text, and an eleventh made after the index:
    # it has the highest id, and a LIMIT took tied rows by id
    vault = make_vault({f"z{k}.md": "meeting notes about alpha\n" for k in range(10)})
    for k in range(4):
        (vault / f"other{k}.md").write_text(f"unrelated {k}\n", encoding="utf-8")
    query_json(vault, "alpha")
    (vault / "z3.md").rename(vault / "a.md")  # renamed: a new id, last of all
    kept = query_json(vault, "alpha", "--limit", str(limit))
    fresh = vault.parent / "fresh"
    shutil.copytree(vault, fresh, ignore=shutil.ignore_patterns(".graph"))
    built = query_json(fresh, "alpha", "--limit", str(limit))
    assert kept["index"]["reread"] == 1 and built["index"]["rebuilt"] == "new"
    want = ["a.md", "z0.md"][:limit]
    assert [h["path"] for h in kept["hits"]] == [h["path"] for h in built["hits"]] == want


def test_a_note_search_cannot_read_as_text_is_found_by_its_name_and_words(make_vault, monkeypatch):
    # not UTF-8: indexed as Obsidian shows it, U+FFFD for a byte that does
    # not decode; too large to read: by its name.  Both were in the index
    # with every column empty, so nothing found them.
    from autograph.read import vault as vault_mod

    vault = make_vault({"other.md": "nothing here\n"})
    (vault / "Dana Reyes.md").write_bytes(b"\xef\xbb\xbfRole: CTO at Acme\nCaf\xe9 meeting on Monday\n")
    (vault / "Huge Export.md").write_bytes(b"word " * 400)
    monkeypatch.setattr(vault_mod, "MAX_NOTE_BYTES", 1000)
    v, schema = Vault.open(vault), load_schema(vault)
    index = search.open_index(v, schema, use_disk=False)
    try:
        assert [h.path for h in search.search(index, v, schema, "dana")] == ["Dana Reyes.md"]
        (hit,) = search.search(index, v, schema, "meeting monday")
        assert (hit.path, hit.line, hit.snippet) == ("Dana Reyes.md", 2, "Caf\ufffd meeting on Monday")
        assert [h.path for h in search.search(index, v, schema, "huge export")] == ["Huge Export.md"]
        assert search.search(index, v, schema, "word") == []  # not read: its words are unknown
    finally:
        index.close()


def test_a_build_from_nothing_stamps_each_note_as_read_and_the_next_query_reads_none(make_vault):
    # no index file: the walk stats nothing, each note's stamp comes from
    # reading it (a note that is not UTF-8 too)
    vault = make_vault({f"n{i}.md": f"apple {i}\n" for i in range(5)})
    (vault / "latin1.md").write_bytes(b"caf\xe9 apple\n")
    first = query_json(vault, "apple")
    assert first["index"]["rebuilt"] == "new" and first["index"]["reread"] == 6 and first["count"] == 6
    again = query_json(vault, "apple")
    assert again["index"]["reread"] == 0 and again["count"] == 6
    (vault / "n1.md").write_text("apple pie\n")
    assert query_json(vault, "apple")["index"]["reread"] == 1


def test_a_note_gone_between_the_walk_and_its_read_leaves_at_the_next_query(make_vault):
    vault = make_vault({f"n{i}.md": f"apple {i}\n" for i in range(5)})
    opened, stamps = search.open_vault(vault)
    assert stamps is None  # no index yet: stamps come from the reads
    (vault / "n3.md").unlink()
    index = search.open_index(opened, load_schema(vault), stamps=stamps)
    index.close()
    again = query_json(vault, "apple")
    assert again["index"]["removed"] == 1 and again["count"] == 4
    assert "n3.md" not in [h["path"] for h in again["hits"]]
    assert query_json(vault, "apple")["index"]["reread"] == 0


def test_only_a_superseded_by_naming_another_card_ranks_a_card_down(make_vault):
    body = "kiwi kiwi kiwi\n"
    vault = make_vault(
        {
            "a.md": "---\nsuperseded_by: TBD\n---\n" + body,
            "b.md": '---\nsuperseded_by: "[[c]]"\n---\n' + body,
            "c.md": "---\ntitle: other\n---\nnothing here\n",
            "d.md": '---\nsuperseded_by: "[[Nobody]]"\n---\n' + body,
        }
    )
    hits = {h["path"]: h["score"] for h in query_json(vault, "kiwi")["hits"]}
    assert hits["a.md"] == pytest.approx(hits["d.md"]) == pytest.approx(2 * hits["b.md"])


# ---------------------------------------------------------------------------
# The index


def test_index_is_incremental_and_notes_leave_it(make_vault):
    vault = make_vault({f"n{i}.md": f"note number {i} apple\n" for i in range(20)})
    first = query_json(vault, "apple")["index"]
    assert first["rebuilt"] == "new" and first["reread"] == 20 and first["notes"] == 20
    assert query_json(vault, "apple")["index"]["reread"] == 0
    (vault / "n3.md").write_text("now about banana\n", encoding="utf-8")
    (vault / "n4.md").unlink()
    (vault / "n5.md").rename(vault / "renamed.md")
    data = query_json(vault, "banana")
    assert data["index"]["reread"] == 2 and data["index"]["removed"] == 2
    assert [h["path"] for h in data["hits"]] == ["n3.md"]
    apple = {h["path"] for h in query_json(vault, "apple", "--limit", "50")["hits"]}
    assert "n4.md" not in apple and "n5.md" not in apple and "renamed.md" in apple and "n3.md" not in apple


def test_schema_change_and_index_version_rebuild(make_vault, monkeypatch):
    vault = make_vault({"a.md": "apple\n"})
    query_json(vault, "apple")
    (vault / "schema.json").write_text('{"hubs": {"names": ["a"]}}', encoding="utf-8")
    index = query_json(vault, "apple")["index"]
    assert index["rebuilt"] is None and index["reread"] == 0  # the hub column derived again, no note read
    v = Vault.open(vault)
    index = search.open_index(v, load_schema(vault))
    assert index.con.execute("SELECT path FROM docs WHERE hub = 1").fetchall() == [("a.md",)]
    index.con.close()
    monkeypatch.setattr(index_file, "INDEX_VERSION", index_file.INDEX_VERSION + 1)
    v = Vault.open(vault)
    index = search.open_index(v, load_schema(vault))
    assert index.rebuilt == "index version" and index.reread == 1
    index.con.close()


def test_a_damaged_index_is_rebuilt_with_a_warning(make_vault):
    vault = make_vault({"a.md": "apple\n"})
    query_json(vault, "apple")
    path = vault / ".graph" / "index.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    proc = run("apple", "--vault", str(vault), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "damaged index" in proc.stderr
    assert json.loads(proc.stdout)["hits"][0]["path"] == "a.md"
    assert query_json(vault, "apple")["index"]["reread"] == 0


def _zero_page_of(path, table: str) -> None:
    import sqlite3

    con = sqlite3.connect(path)
    page = con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(path, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(bytes(size))


@pytest.mark.parametrize("damage", ["fts_config page zeroed", "docs of another shape"])
def test_an_index_damaged_where_only_a_query_reads_is_rebuilt_before_it(make_vault, damage):
    import sqlite3

    vault = make_vault({"a.md": "apple\n", "b.md": "banana\n"})
    query_json(vault, "apple")
    path = vault / ".graph" / "index.sqlite"
    if damage.startswith("fts_config"):
        _zero_page_of(path, "fts_config")
    else:
        con = sqlite3.connect(path)
        con.executescript("DROP TABLE docs; CREATE TABLE docs (path TEXT, other TEXT);")
        con.close()
    proc = run("apple", "--vault", str(vault), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "damaged index" in proc.stderr and "rebuilt it" in proc.stderr
    assert [h["path"] for h in json.loads(proc.stdout)["hits"]] == ["a.md"]
    again = query_json(vault, "banana")
    assert again["index"]["reread"] == 0 and again["hits"][0]["path"] == "b.md"


def test_an_index_another_process_is_still_filling_is_not_answered_from(make_vault, monkeypatch):
    # a build makes the tables, then fills them in a second transaction: a
    # query meanwhile found them empty and answered "no results"
    vault = make_vault({"a.md": "apple\n", "b.md": "banana\n"})
    v, schema = Vault.open(vault), load_schema(vault)
    (vault / ".graph").mkdir()
    builder = index_file._connect(str(vault / ".graph" / "index.sqlite"))
    builder.execute("BEGIN IMMEDIATE")
    index_file._create(builder, schema)
    builder.execute("COMMIT")
    builder.execute("BEGIN IMMEDIATE")  # filling
    monkeypatch.setattr(index_file, "BUSY_SECONDS", 0.2)
    monkeypatch.setattr(index_update, "WRITER_WAIT", 0.2)
    try:
        index = search.open_index(v, schema)
        try:
            assert [h.path for h in search.search(index, v, schema, "apple")] == ["a.md"]
            assert index.as_dict()["memory"] is True and not index.stale
            assert any("another process is writing the search index" in w for w in index.warnings)
        finally:
            index.close()
    finally:
        builder.execute("ROLLBACK")
        builder.close()


def _held(vault):
    """A connection holding the index file's write lock, as another process's update does."""
    writer = index_file._connect(str(vault / ".graph" / "index.sqlite"))
    writer.execute("BEGIN IMMEDIATE")
    return writer


def test_an_update_waits_for_another_process_to_finish_its_own(make_vault, monkeypatch):
    # a search during a long health of a large vault answered from the rows of
    # notes deleted since (found by a helper who broke the index)
    import threading

    vault = make_vault({"a.md": "apple\n", "b.md": "banana\n"})
    query_json(vault, "apple")
    (vault / "b.md").write_text("banana apple\n", encoding="utf-8")
    monkeypatch.setattr(index_file, "BUSY_SECONDS", 0.2)
    writer = _held(vault)
    done = threading.Timer(1.0, lambda: writer.execute("ROLLBACK"))
    done.start()
    try:
        v, schema = Vault.open(vault), load_schema(vault)
        index = search.open_index(v, schema)
        try:
            assert sorted(h.path for h in search.search(index, v, schema, "apple")) == ["a.md", "b.md"]
            assert not index.stale and index.reread == 1
            assert any(w.startswith("waited 1 s for another process") for w in index.warnings), index.warnings
        finally:
            index.close()
    finally:
        done.join()
        writer.close()


def test_an_update_that_waited_long_enough_answers_from_the_index_as_it_was(make_vault, monkeypatch):
    vault = make_vault({"a.md": "apple\n", "b.md": "banana\n"})
    query_json(vault, "apple")
    (vault / "b.md").write_text("banana apple\n", encoding="utf-8")
    monkeypatch.setattr(index_file, "BUSY_SECONDS", 0.2)
    monkeypatch.setattr(index_update, "WRITER_WAIT", 0.3)
    writer = _held(vault)
    try:
        v, schema = Vault.open(vault), load_schema(vault)
        index = search.open_index(v, schema)
        try:
            assert [h.path for h in search.search(index, v, schema, "apple")] == ["a.md"]
            assert index.stale and any("answered from the index as it was" in w for w in index.warnings)
        finally:
            index.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_unwritable_graph_folder_searches_in_memory(make_vault):
    vault = make_vault({"a.md": "apple\n"})
    (vault / ".graph").write_text("a file where the folder should be", encoding="utf-8")
    proc = run("apple", "--vault", str(vault), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["index"]["memory"] is True and data["hits"][0]["path"] == "a.md"
    assert "in memory" in proc.stderr
    assert (vault / ".graph").read_text(encoding="utf-8") == "a file where the folder should be"


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_note_hard_linked_into_graph_is_never_written(make_vault, suffix, dry_run):
    # SQLite writes its files in place: through a hard link that would be the note
    vault = make_vault({"a.md": "apple\n", "b.md": "banana notes\n"})
    query_json(vault, "apple")
    for extra in ("-wal", "-shm", "-journal"):
        (vault / ".graph" / f"index.sqlite{extra}").unlink(missing_ok=True)
    target = vault / ".graph" / f"index.sqlite{suffix}"
    target.unlink(missing_ok=True)
    os.link(vault / "b.md", target)
    before = (vault / "b.md").read_bytes()
    for _ in range(2):
        proc = run("apple", "--vault", str(vault), "--json", *(["--dry-run"] if dry_run else []))
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert data["index"]["memory"] is True and [h["path"] for h in data["hits"]] == ["a.md"]
        assert f"index.sqlite{suffix} is a file with 2 names (hard links)" in proc.stderr
        assert "remove it" in proc.stderr
    assert (vault / "b.md").read_bytes() == before
    target.unlink()
    assert query_json(vault, "banana")["hits"][0]["path"] == "b.md"  # removed: an index on disk again


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_fifo_or_symlink_beside_the_index_neither_hangs_nor_is_followed(make_vault, tmp_path, suffix, kind):
    vault = make_vault({"a.md": "apple\n"})
    query_json(vault, "apple")
    target = vault / ".graph" / f"index.sqlite{suffix}"
    target.unlink(missing_ok=True)
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep")
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(outside)
    proc = run("apple", "--vault", str(vault), "--json")  # a FIFO opened blocking would hang: run's timeout
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hits"][0]["path"] == "a.md"
    assert f"index.sqlite{suffix} is a {'FIFO' if kind == 'fifo' else 'symlink'}" in proc.stderr
    assert outside.read_bytes() == b"keep"


def test_folder_is_matched_as_the_vault_spells_it(make_vault):
    nfd = unicodedata.normalize("NFD", "Réunions")  # as macOS writes a folder name
    vault = make_vault(
        {
            f"{nfd}/lundi.md": "apple pie\n",
            "people/ann.md": "apple tart\n",
            "peoplex/bob.md": "apple cake\n",  # "people" is not a prefix of its folder
            "top.md": "apple\n",
        }
    )

    def paths(*argv):
        proc = run("apple", "--vault", str(vault), "--json", *argv)
        assert proc.returncode == 0, proc.stderr
        return sorted(h["path"] for h in json.loads(proc.stdout)["hits"]), proc.stderr

    assert paths("--folder", "Réunions") == ([f"{nfd}/lundi.md"], "")
    assert paths("--folder", nfd + "/") == ([f"{nfd}/lundi.md"], "")
    assert paths("--folder", "./people/") == (["people/ann.md"], "")
    assert paths("--folder", "people//") == (["people/ann.md"], "")
    assert paths("--folder", ".")[0] == sorted(
        f"{p}" for p in (f"{nfd}/lundi.md", "people/ann.md", "peoplex/bob.md", "top.md")
    )
    assert paths("--folder", str(vault / "people"))[0] == ["people/ann.md"]  # as a shell completes it
    hits, err = paths("--folder", "nowhere")
    assert hits == [] and "--folder 'nowhere': no note is in that folder" in err
    assert paths("--folder", str(vault.parent))[0] == []  # outside the vault
    hits, err = paths("--type", "people", "--status", "activ")
    assert hits == [] and "--type 'people': no note has that type" in err and "--status 'activ'" in err


def test_a_pasted_page_is_searched_by_its_first_words(make_vault):
    vault = make_vault({"a.md": "alpha beta\n", "b.md": "omega\n"})
    words = ["alpha"] + [f"w{k}" for k in range(search.MAX_QUERY_WORDS + 500)] + ["omega"]
    proc = run("--vault", str(vault), "--json", *words)
    assert proc.returncode == 0, proc.stderr
    assert [h["path"] for h in json.loads(proc.stdout)["hits"]] == ["a.md"]  # omega is past the first 64
    assert f"the query has {len(words):,} words; searched with the first {search.MAX_QUERY_WORDS}" in proc.stderr


def test_query_words_that_look_like_options(make_vault):
    vault = make_vault({"a.md": "the --dry flag and -v2 of apple\n"})
    proc = run("--dry", "--vault", str(vault))  # not a prefix of --dry-run: an answer with no query was silent
    assert proc.returncode == 2 and "unrecognized arguments: --dry" in proc.stderr
    proc = run("--vault", str(vault), "--json", "--", "--dry", "-v2")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [h["path"] for h in data["hits"]] == ["a.md"] and data["query"] == "--dry -v2"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--identity", "email="], "give FIELD=VALUE"),
        (["--identity", "email=  "], "give FIELD=VALUE"),
        (["--identity", "email=a@b.c", "dana"], "leave out the query words"),
        (["--identity", "email=a@b.c", "--identity", "telegram=@x"], "give one --identity a run"),
        (["--identity", "email=a@b.c", "--type", "person", "--fts"], "--identity takes no --type, --fts"),
    ],
)
def test_identity_without_a_value_or_with_query_words_is_a_usage_error(make_vault, argv, message):
    vault = make_vault({"a.md": "apple\n"})
    proc = run(*argv, "--vault", str(vault))
    assert proc.returncode == 2 and message in proc.stderr and not proc.stdout


def test_dry_run_writes_nothing(make_vault):
    vault = make_vault({"a.md": "apple\n"})
    assert query_json(vault, "apple", "--dry-run")["index"]["memory"] is True
    assert not (vault / ".graph").exists()


def test_concurrent_queries_never_corrupt_the_index(make_vault):
    vault = make_vault({f"n{i}.md": f"word{i % 7} shared text {i}\n" for i in range(300)})
    procs = [
        subprocess.Popen(
            [sys.executable, SEARCH, "shared", "--vault", str(vault), "--json", "--limit", "400"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        data = json.loads(out)
        assert data["count"] == 300 or data["index"]["stale"]
    assert query_json(vault, "shared", "--limit", "400")["count"] == 300
    assert query_json(vault, "shared")["index"]["reread"] == 0


def test_sqlite_version_is_checked(monkeypatch):
    monkeypatch.setattr(index_file.sqlite3, "sqlite_version_info", (3, 20, 0))
    with pytest.raises(search.SearchUnavailable, match="3.27"):
        search.check_sqlite()


# ---------------------------------------------------------------------------
# Identity


@pytest.mark.parametrize(
    "value, kind, country, expected",
    [
        ("  Alice@Example.COM ", "email", None, "alice@example.com"),
        ("mailto:Bob@x.org", "email", None, "bob@x.org"),
        ("Race <Race@Example.com>", "email", None, "race@example.com"),  # F17
        (" <race@example.com> ", "email", None, "race@example.com"),
        ("<mailto:race@example.com>", "email", None, "race@example.com"),
        ("Smith, Jo <jo@x.com>", "email", None, "jo@x.com"),
        ("@Alice_Dev", "handle", None, "alice_dev"),
        (" alice_dev ", "handle", None, "alice_dev"),
        ("+49 (30) 1234-567", "phone", None, "+49301234567"),
        ("0049 30 1234567", "phone", None, "+49301234567"),
        ("030 1234567", "phone", "+49", "+49301234567"),
        ("030 1234567", "phone", "DE", "+49301234567"),
        ("030 1234567", "phone", None, "0301234567"),
        ("Ünïcode ", "exact", None, unicodedata.normalize("NFC", "Ünïcode")),
        ("n/a", "email", None, None),
        ("", "handle", None, None),
        (True, "exact", None, None),
        (4930123, "phone", None, "4930123"),
        # spellings of one number a card and an agent write differently
        ("+49 (0)30 1234567", "phone", None, "+49301234567"),  # the home-only trunk 0 after +49/+43/+41/+44
        ("0044 (0)20 7946 0000", "phone", None, "+442079460000"),
        ("tel:+15551234567", "phone", None, "+15551234567"),
        ("1 555 123 4567", "phone", "+1", "+15551234567"),  # North America's trunk prefix is 1
        ("555 123 4567", "phone", "US", "+15551234567"),
        ("06 1234 5678", "phone", "IT", "+390612345678"),  # Italian numbers keep their 0
        ("8 495 123-45-67", "phone", "RU", "+74951234567"),
        ("+49 30 1234567 ext. 12", "phone", None, "+49301234567;ext=12"),  # not the digits 4930123456712
        ("+49 30 1234567;ext=12", "phone", None, "+49301234567;ext=12"),
        ("+49 30 1234567 x12", "phone", None, "+49301234567;ext=12"),
        ("dana@acme.com\u200b", "email", None, "dana@acme.com"),  # a zero-width space pasted along
        ("@dana\u200b", "handle", None, "dana"),
        ("a\u200db", "exact", None, "a\u200db"),  # exact: as written
    ],
)
def test_identity_normaliser(value, kind, country, expected):
    assert identity.normalise(value, kind, country) == expected


def test_identity_values_split_a_text_of_several_addresses():
    """F17: "a@x, b@y" is two addresses; a comma elsewhere splits nothing."""
    assert identity.values_of({"Email": "a@x.com, B@y.org"}, "email") == ["a@x.com", "B@y.org"]
    assert identity.values_of({"email": ["a@x.com; b@y.org", "c@z.net"]}, "email") == ["a@x.com", "b@y.org", "c@z.net"]
    assert identity.values_of({"email": "Smith, Jo <jo@x.com>"}, "email") == ["Smith, Jo <jo@x.com>"]
    assert identity.values_of({"phone": "+49 30 1, ext. 2"}, "phone") == ["+49 30 1, ext. 2"]
    two = "+49 30 1234567, +1 (555) 123-4567"
    assert identity.values_of({"phone": two}, "phone") == ["+49 30 1234567", "+1 (555) 123-4567"]
    assert identity.values_of({"id": "12, 34"}, "id") == ["12, 34"]  # too short for phone numbers


def test_identity_lookup_reads_the_spellings_of_an_address(make_vault):
    """F17: an address written "Name <address>" or in a list text is found."""
    vault = make_vault(
        {
            "people/Race.md": "---\nemail: Race <race@example.com>\n---\n",
            "people/Duo.md": "---\nemail: 'one@example.com, Two@Example.com'\n---\n",
        }
    )
    v = Vault.open(vault)
    schema = load_schema(vault)
    index = search.open_index(v, schema)
    for value, path in (
        ("race@example.com", "people/Race.md"),
        ("<RACE@example.com>", "people/Race.md"),
        ("two@example.com", "people/Duo.md"),
        ("Two <two@example.com>", "people/Duo.md"),
    ):
        found = search.lookup_identity(index, v, schema, "email", value)
        assert [m["path"] for m in found["matches"]] == [path], value


def test_identity_kinds_from_list_and_object():
    assert identity.field_kinds({"match_fields": ["Email", "telegram", "badge"]}) == {
        "email": "email",
        "telegram": "handle",
        "badge": "exact",
    }
    assert identity.field_kinds({"match_fields": {"work_mail": "email"}}) == {"work_mail": "email"}
    assert identity.field_kinds(None)["phone"] == "phone"


def test_identity_schema_keys_are_validated(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps({"identity": {"match_fields": {"email": "email", "mobile": "phone"}, "default_country": "DE"}})
    )
    assert load_schema(None, good).section("identity")["default_country"] == "DE"
    for bad, where in (
        ({"identity": {"match_fields": {"email": "mail"}}}, "$.identity.match_fields.email"),
        ({"identity": {"default_country": "Narnia"}}, "$.identity.default_country"),
        ({"identity": {"default_country": 49}}, "$.identity.default_country"),
    ):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(SchemaError, match=where.replace("$", r"\$")):
            load_schema(None, path)


def test_identity_lookup_lists_the_live_card_before_a_retired_one(make_vault):
    # both keep the address after a retire; the retired card sorted first by
    # path, and an agent taking matches[0] wrote into it
    vault = make_vault(
        {
            "people/A Reyes.md": '---\nstatus: superseded\nsuperseded_by: "[[Z Reyes]]"\nemail: d@x.com\n---\n',
            "people/B Reyes.md": '---\nsuperseded_by: "[[Z Reyes]]"\nemail: d@x.com\n---\n',
            "people/Z Reyes.md": "---\nstatus: active\nemail: d@x.com\n---\n",
        }
    )
    matches = query_json(vault, "--identity", "email=d@x.com")["matches"]
    assert [(m["path"], m["status"], m["retired"]) for m in matches] == [
        ("people/Z Reyes.md", "active", False),
        ("people/A Reyes.md", "superseded", True),
        ("people/B Reyes.md", None, True),
    ]
    from autograph.memory import cards

    found = cards.identity_matches(Vault.open(vault), load_schema(vault), None, {"email": "D@x.com"})
    assert [(m["path"], m["retired"]) for m in found] == [
        ("people/Z Reyes.md", False),
        ("people/A Reyes.md", True),
        ("people/B Reyes.md", True),
    ]


def test_identity_lookup_names_the_cards_it_cannot_read(make_vault):
    # a card that is not UTF-8, or whose frontmatter does not parse, may hold
    # the identity: "0 cards" with no word made agents write a second card
    vault = make_vault({"people/Bad Front.md": "---\nrole: [unclosed\nemail: bad@acme.com\n---\n"})
    latin1 = "---\ndescription: José\nemail: jose@acme.com\n---\n".encode("latin-1")
    (vault / "people" / "José.md").write_bytes(latin1)
    proc = run("--identity", "email=jose@acme.com", "--vault", str(vault), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["count"] == 0
    assert [(u["path"], u["error"].split(" (")[0]) for u in data["unreadable"]] == [
        (
            "people/Bad Front.md",
            "frontmatter: unclosed flow collection; close it or quote the value at line 2, column 7",
        ),
        ("people/José.md", "not valid UTF-8"),
    ]
    assert "2 cards cannot be read and may hold this identity: people/Bad Front.md" in proc.stderr
    card = subprocess.run(
        [sys.executable, str(SCRIPTS / "card.py"), "new", "person", "Jose Two", "email=jose@acme.com"]
        + ["--vault", str(vault), "--json", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    notes = json.loads(card.stdout)["notes"]
    assert [n.split(" cannot be read")[0] for n in notes] == ["people/José.md"]  # its bytes hold the address


def test_identity_lookup_finds_the_card_that_carries_it(make_vault):
    vault = make_vault(
        {
            "schema.json": json.dumps(
                {"identity": {"match_fields": {"email": "email", "phone": "phone", "tg": "handle"}}}
                | {"identity": {"match_fields": {"email": "email", "phone": "phone", "tg": "handle"}}}["identity"]
                and {
                    "identity": {
                        "match_fields": {"email": "email", "phone": "phone", "tg": "handle"},
                        "default_country": "+49",
                    },
                    "ignore_folders": ["Templates"],
                }
            ),
            "people/Alice.md": "---\nemail: Alice@Example.com\nphone: 030 1234567\ntg: '@alice'\n---\nAlice.\n",
            "people/Bob.md": "---\nemail: [bob@example.com, bob@work.org]\n---\nBob.\n",
            "people/Other.md": "---\nemail: n/a\n---\n",
            "Templates/person.md": "---\nemail: alice@example.com\n---\n",
        }
    )
    data = query_json(vault, "--identity", "email= ALICE@example.com")
    assert [m["path"] for m in data["matches"]] == ["people/Alice.md"]
    assert data["identity"]["kind"] == "email" and data["identity"]["normalised"] == "alice@example.com"
    assert [m["path"] for m in query_json(vault, "--identity", "email=bob@work.org")["matches"]] == ["people/Bob.md"]
    assert [m["path"] for m in query_json(vault, "--identity", "phone=+49 30 1234567")["matches"]] == [
        "people/Alice.md"
    ]
    assert [m["path"] for m in query_json(vault, "--identity", "tg=Alice")["matches"]] == ["people/Alice.md"]
    assert query_json(vault, "--identity", "email=n/a")["matches"] == []
    proc = run("--identity", "email", "--vault", str(vault))
    assert proc.returncode == 2 and "FIELD=VALUE" in proc.stderr


def test_help_documents_the_json_keys():
    proc = run("--help")
    assert proc.returncode == 0
    for key in ("hits[", "fields[]", "snippet", "line", "inlinks", "stale", "matches[", "normalised"):
        assert key in proc.stdout


def test_no_fts_error_reaches_the_user_from_the_cli(make_vault):
    vault = make_vault({"a.md": "alpha\n"})
    for text in HOSTILE[:12]:
        proc = run(text, "--vault", str(vault), "--json")
        assert proc.returncode == 0, (text, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert os.path.exists(vault / ".graph" / "index.sqlite")


def test_a_locked_index_is_answered_without_a_traceback(make_vault):
    import sqlite3

    vault = make_vault({"a.md": "apple\n"})
    query_json(vault, "apple")
    (vault / "b.md").write_text("apple pie\n", encoding="utf-8")
    holder = sqlite3.connect(vault / ".graph" / "index.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        env = dict(os.environ)
        proc = subprocess.run(
            [sys.executable, "-c", LOCKED, SEARCH, str(vault)], capture_output=True, text=True, env=env, timeout=60
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert sorted(h["path"] for h in data["hits"]) == ["a.md", "b.md"] or data["index"]["stale"]
    assert "Traceback" not in proc.stderr


# search.py with a short wait for the lock, so the test does not take 5 seconds
LOCKED = """
import runpy, sys
script, vault = sys.argv[1], sys.argv[2]
sys.path.insert(0, script.rsplit("/", 1)[0])
from autograph.write import index_file
index_file.BUSY_SECONDS = 0.2
sys.argv = [script, "apple", "--vault", vault, "--json"]
runpy.run_path(script, run_name="__main__")
"""


# ---------------------------------------------------------------------------
# In-links: links.Resolver's edges, kept up to date


def inlinks_of(vault) -> dict[str, tuple[int, bool]]:
    """``path: (in-links, a hub links to it)`` as the index stores them."""
    v = Vault.open(vault)
    schema = load_schema(vault)
    index = search.open_index(v, schema)
    try:
        rows = index.con.execute("SELECT path, inlinks, near_hub FROM docs")
        return {path: (count, bool(hub)) for path, count, hub in rows}
    finally:
        index.close()


def inlinks_truth(vault) -> dict[str, tuple[int, bool]]:
    """The same from linkgraph (every link resolved by links.Resolver now)."""
    from autograph.read import linkgraph

    v = Vault.open(vault)
    schema = load_schema(vault)
    graph = linkgraph.build(v)
    hubs = {p for p in v.notes if schema.is_hub(v.note(p).stem, v.note(p).properties)}
    truth = {}
    for path in v.notes:
        sources = {edge.source for edge in graph.backlinks(path)}
        truth[path] = (len(sources), bool(sources & hubs))
    return truth


def test_br21_a_path_qualified_link_credits_only_its_target(case):
    vault = case("BR-21") / "vault"
    assert inlinks_of(vault) == {"hub.md": (0, False), "concepts/dup.md": (1, False), "summaries/dup.md": (0, False)}
    hits = {h["path"]: h["inlinks"] for h in query_json(vault, "dup")["hits"]}
    assert hits["concepts/dup.md"] == 1 and hits["summaries/dup.md"] == 0


def test_inlinks_count_distinct_notes_that_resolve_there(make_vault):
    vault = make_vault(
        {
            "a/Alice.md": "alice\n",
            "b/Alice.md": "the other alice\n",
            "a/x.md": "[[Alice]] [[Alice]] [[Alice|twice]]\n",  # same folder wins: a/Alice
            "b/y.md": "[[Alice]]\n",  # b/Alice
            "z.md": "[[b/Alice]] `[[a/Alice]]` [text](a/Alice.md)\n",  # in code: no link
            "p.md": '---\nrelated: "[[a/Alice]]"\n---\nbody\n',
            "self.md": "[[self]]\n",
            "hub.md": "---\ntype: moc\n---\n[[b/Alice]]\n",
        }
    )
    got = inlinks_of(vault)
    assert got["a/Alice.md"] == (3, False)  # a/x.md, z.md (markdown link), p.md (property)
    assert got["b/Alice.md"] == (3, True)  # b/y.md, z.md, hub.md
    assert got["self.md"] == (0, False)
    assert got == inlinks_truth(vault)
    (vault / "a" / "Alice.md").write_text("alice, edited: [[b/Alice]]\n", encoding="utf-8")  # keeps its own in-links
    got = inlinks_of(vault)
    assert got["a/Alice.md"] == (3, False) and got["b/Alice.md"] == (4, True) and got == inlinks_truth(vault)


def test_renames_deletes_and_adds_move_other_notes_inlinks(make_vault):
    vault = make_vault(
        {
            "people/Bob.md": "bob\n",
            "x.md": "[[Bob]]\n",
            "people/y.md": "[[Bob]] [[Carol]]\n",
            "notes/z.md": "[[people/Bob]]\n",
        }
    )
    assert inlinks_of(vault)["people/Bob.md"] == (3, False)
    (vault / "Bob.md").write_text("a second bob, at the root\n", encoding="utf-8")  # the exact path: [[Bob]] means it
    (vault / "x.md").write_text("[[Bob]], edited in the same refresh\n", encoding="utf-8")  # resolved again too
    got = inlinks_of(vault)
    assert got["Bob.md"] == (2, False) and got["people/Bob.md"] == (1, False) and got == inlinks_truth(vault)
    (vault / "people" / "Bob.md").rename(vault / "people" / "Robert.md")  # both [[Bob]] go to the root one
    got = inlinks_of(vault)
    assert got["Bob.md"] == (2, False) and got["people/Robert.md"] == (0, False) and got == inlinks_truth(vault)
    (vault / "Carol.md").write_text("carol\n", encoding="utf-8")  # a broken link now resolves
    assert inlinks_of(vault)["Carol.md"] == (1, False)
    (vault / "Bob.md").unlink()
    (vault / "people" / "y.md").write_text("no links now\n", encoding="utf-8")
    got = inlinks_of(vault)
    assert got["Carol.md"] == (0, False) and got == inlinks_truth(vault)


NAMES = ["a/Ann.md", "b/Ann.md", "Ann.md", "a/Bo.md", "Bo.md", "c/Hub.md", "c/d/Cy.md"]
TARGETS = ["Ann", "a/Ann", "b/Ann", "Bo", "a/Bo.md", "Cy", "c/d/Cy", "../Ann", "./Bo", "Nobody"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["write", "delete", "rename"]),
            st.sampled_from(NAMES),
            st.lists(st.sampled_from(TARGETS), max_size=4),
            st.sampled_from(NAMES),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_stored_inlinks_always_equal_a_fresh_resolution(tmp_path_factory, steps):
    """After any sequence of writes, deletes and renames, the counts kept up
    to date incrementally equal those of every link resolved afresh."""
    vault = tmp_path_factory.mktemp("steps")
    (vault / "schema.json").write_text('{"hubs": {"names": ["hub"]}}', encoding="utf-8")
    for name in NAMES[:3]:
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text("[[Bo]]\n", encoding="utf-8")
    inlinks_of(vault)
    for number, (op, name, targets, other) in enumerate(steps):
        path, dest = vault / name, vault / other
        if op == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"step {number} " + " ".join(f"[[{t}]]" for t in targets) + "\n", encoding="utf-8")
        elif op == "delete" and path.exists():
            path.unlink()
        elif op == "rename" and path.exists() and not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            path.rename(dest)
        assert inlinks_of(vault) == inlinks_truth(vault)


# ---------------------------------------------------------------------------
# A .graph/ that cannot be written


def digest(path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def changed_vault(make_vault):
    vault = make_vault({f"n{i}.md": f"note {i} apple\n" for i in range(12)} | {"hub.md": "[[n1]] [[n2]]\n"})
    assert query_json(vault, "apple")["index"]["reread"] == 13
    before = digest(vault / ".graph" / "index.sqlite")
    (vault / "n3.md").write_text("now about banana [[n1]]\n", encoding="utf-8")
    (vault / "new.md").write_text("banana bread\n", encoding="utf-8")
    (vault / "n4.md").unlink()
    return vault, before


def test_readonly_graph_answers_from_a_copy_of_its_index_brought_up_to_date(make_vault, monkeypatch):
    """The read-write open fails as on a read-only .graph/ (root ignores
    permissions, so the failure comes through the seam)."""
    import sqlite3

    vault, before = changed_vault(make_vault)

    def refuse(path):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(index_file, "_open_disk", refuse)
    v = Vault.open(vault)
    schema = load_schema(vault)
    index = search.open_index(v, schema)
    try:
        info = index.as_dict()
        assert info["readonly"] and info["memory"] and not info["stale"] and info["rebuilt"] is None
        assert info["reread"] == 2 and info["removed"] == 1 and info["notes"] == 13  # only what changed
        assert any("cannot be written" in w and "copy" in w for w in index.warnings)
        assert sorted(h.path for h in search.search(index, v, schema, "banana")) == ["n3.md", "new.md"]
        assert "n4.md" not in [h.path for h in search.search(index, v, schema, "apple", limit=50)]
        assert index.con.execute("SELECT inlinks FROM docs WHERE path = 'n1.md'").fetchone()[0] == 2
    finally:
        index.close()
    assert digest(vault / ".graph" / "index.sqlite") == before


def test_dry_run_uses_the_index_file_without_writing_it(make_vault):
    vault, before = changed_vault(make_vault)
    data = query_json(vault, "banana", "--dry-run")
    assert data["index"]["readonly"] and data["index"]["reread"] == 2
    assert sorted(h["path"] for h in data["hits"]) == ["n3.md", "new.md"]
    assert digest(vault / ".graph" / "index.sqlite") == before
    assert query_json(vault, "banana")["index"]["reread"] == 2  # the file itself still to update


def test_readonly_copy_of_another_index_version_is_rebuilt_in_memory(make_vault, monkeypatch):
    vault, before = changed_vault(make_vault)
    monkeypatch.setattr(index_file, "INDEX_VERSION", index_file.INDEX_VERSION + 1)
    v = Vault.open(vault)
    index = search.open_index(v, load_schema(vault), use_disk=False)
    assert index.path is None and not index.readonly and index.reread == 13
    index.close()
    assert digest(vault / ".graph" / "index.sqlite") == before


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="root writes through chmod; the seam test covers it"
)
def test_readonly_graph_folder_for_real(make_vault):
    vault, before = changed_vault(make_vault)
    graph = vault / ".graph"
    for path in graph.iterdir():
        path.chmod(0o444)
    graph.chmod(0o555)
    try:
        proc = run("banana", "--vault", str(vault), "--json")
    finally:
        graph.chmod(0o755)
        for path in graph.iterdir():
            path.chmod(0o644)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["index"]["readonly"] and sorted(h["path"] for h in data["hits"]) == ["n3.md", "new.md"]
    assert "cannot be written" in proc.stderr
    assert digest(graph / "index.sqlite") == before


# ---------------------------------------------------------------------------
# Reading in two processes


def test_stream_yields_every_result_once_even_when_a_child_fails():
    from autograph.read import parallel

    items = list(range(1000))
    assert sorted(parallel.stream(lambda x: x * x, items, chunk=64)) == [x * x for x in items]
    parent = os.getpid()

    def fragile(x):
        if os.getpid() != parent and x > 900:
            raise RuntimeError("a child fails part way")
        return -x

    assert sorted(parallel.stream(fragile, items, chunk=16)) == sorted(-x for x in items)
    assert list(parallel.stream(str, [])) == []
    assert sorted(parallel.stream(str, items[:10])) == sorted(map(str, items[:10]))  # too few: computed here


def test_a_stream_closed_early_leaves_no_child_behind():
    from autograph.read import parallel

    def slow(x):
        time.sleep(0.01)
        return x

    started = parallel.stream(slow, list(range(2000)), workers=2, chunk=4)
    pids = list(started.pids)
    assert len(pids) == 2
    results = iter(started)
    assert next(results) is not None
    results.close()  # the caller stopped (an error while writing, say)
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: neither running nor a zombie
    with parallel.stream(slow, list(range(2000)), workers=2, chunk=4) as unread:
        pids = list(unread.pids)
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def index_rows(vault) -> tuple:
    v = Vault.open(vault)
    index = search.open_index(v, load_schema(vault), use_disk=False)
    try:
        con = index.con
        docs = con.execute("SELECT path, title, type, status, hub, superseded, props, body_line, inlinks FROM docs")
        texts = con.execute(
            f"SELECT d.path, {', '.join('f.' + c for c in search.COLUMNS)} FROM fts f JOIN docs d ON d.id = f.rowid"
        )
        edges = con.execute(
            "SELECT s.path, l.target, l.name, d.path FROM links l "
            "JOIN docs s ON s.id = l.src LEFT JOIN docs d ON d.id = l.dst"
        )
        return sorted(docs), sorted(texts), sorted(edges, key=repr)
    finally:
        index.close()


def test_the_index_read_in_two_processes_equals_the_one_read_in_one(make_vault, monkeypatch):
    notes = {
        f"f{i % 3}/n{i}.md": f"---\ntitle: Note {i}\ntags: [t{i % 4}]\n---\n# Head {i}\n[[n{i * 7 % 40}]] café #x{i}\n"
        for i in range(40)
    }
    vault = make_vault(notes | {"f0/MOC.md": "---\ntype: moc\n---\n[[n1]] [[f2/n2]]\n"})
    monkeypatch.setattr(index_update, "PARALLEL_MIN", 10**9)
    alone = index_rows(vault)
    monkeypatch.setattr(index_update, "PARALLEL_MIN", 2)
    assert index_rows(vault) == alone
    assert len(alone[0]) == 41 and sum(row[-1] for row in alone[0]) > 30


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(make_vault):
    """The change time moves on every write and cannot be set back: the
    freshness check sees an edit of the same length with the old mtime."""
    vault = make_vault({"a.md": "apple pie\n", "b.md": "other\n"})
    assert query_json(vault, "apple")["index"]["reread"] == 2
    info = (vault / "a.md").stat()
    (vault / "a.md").write_text("melon pie\n", encoding="utf-8")
    os.utime(vault / "a.md", ns=(info.st_atime_ns, info.st_mtime_ns))
    data = query_json(vault, "melon")
    assert data["index"]["reread"] == 1 and [h["path"] for h in data["hits"]] == ["a.md"]
    assert query_json(vault, "melon")["index"]["reread"] == 0


def test_progress_counts_every_note_whichever_process_read_it(make_vault, monkeypatch):
    class Bar:
        steps = 0

        def step(self):
            self.steps += 1

    vault = make_vault({f"n{i}.md": f"note {i} [[n{i + 1}]]\n" for i in range(30)})
    monkeypatch.setattr(index_update, "PARALLEL_MIN", 2)
    v = Vault.open(vault)
    v.progress = bar = Bar()
    index = search.open_index(v, load_schema(vault), use_disk=False)
    index.close()
    assert bar.steps == 30 and v.progress is bar


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ae\u0301\u0308éÉήйñ\n \r\u4e2d\U0001f600'\u2019x"), max_size=40))
def test_marks_are_stripped_alike_line_by_line_and_whole(text):
    # strip_marks works on the lines that are not ASCII only; no combining
    # sequence spans a line break, so that must equal the whole text's
    assert search.strip_marks(text) == folding.strip_line(text)
    assert search.fold(text) == folding.strip_line(text).casefold()
    assert search.has_cjk(text) == ("\u4e2d" in text)
    assert "\u0301" not in search.strip_marks(text) and "\u0308" not in search.strip_marks(text)
