"""search.py (issue 11): the index, safe queries, every language, identity lookup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest
from autograph import cli, identity, search
from autograph.schema import SchemaError, load_schema
from autograph.vault import Vault
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
    except cli.UsageError as exc:
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
    with pytest.raises(cli.UsageError, match="bad FTS5 query"):
        search.search(index, v, schema, "NEAR(", raw=True)
    proc = run("NEAR(", "--fts", "--vault", str(v.root))
    assert proc.returncode == 2 and "bad FTS5 query" in proc.stderr and "Traceback" not in proc.stderr


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
    assert query_json(vault, "apple")["index"]["rebuilt"] == "schema changed"
    monkeypatch.setattr(search, "INDEX_VERSION", search.INDEX_VERSION + 1)
    v = Vault.open(vault)
    index = search.open_index(v, load_schema(vault))
    assert index.rebuilt == "index version" and index.reread == 1
    index.con.close()


def test_a_damaged_index_is_rebuilt_with_a_warning(make_vault):
    vault = make_vault({"a.md": "apple\n"})
    query_json(vault, "apple")
    path = vault / ".graph" / "search.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    proc = run("apple", "--vault", str(vault), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "damaged search index" in proc.stderr
    assert json.loads(proc.stdout)["hits"][0]["path"] == "a.md"
    assert query_json(vault, "apple")["index"]["reread"] == 0


def test_unwritable_graph_folder_searches_in_memory(make_vault):
    vault = make_vault({"a.md": "apple\n"})
    (vault / ".graph").write_text("a file where the folder should be", encoding="utf-8")
    proc = run("apple", "--vault", str(vault), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["index"]["memory"] is True and data["hits"][0]["path"] == "a.md"
    assert "in memory" in proc.stderr
    assert (vault / ".graph").read_text(encoding="utf-8") == "a file where the folder should be"


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
    monkeypatch.setattr(search.sqlite3, "sqlite_version_info", (3, 20, 0))
    with pytest.raises(search.SearchUnavailable, match="3.27"):
        search.check_sqlite()


# ---------------------------------------------------------------------------
# Identity


@pytest.mark.parametrize(
    "value, kind, country, expected",
    [
        ("  Alice@Example.COM ", "email", None, "alice@example.com"),
        ("mailto:Bob@x.org", "email", None, "bob@x.org"),
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
    ],
)
def test_identity_normaliser(value, kind, country, expected):
    assert identity.normalise(value, kind, country) == expected


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
    assert os.path.exists(vault / ".graph" / "search.sqlite")


def test_a_locked_index_is_answered_without_a_traceback(make_vault):
    import sqlite3

    vault = make_vault({"a.md": "apple\n"})
    query_json(vault, "apple")
    (vault / "b.md").write_text("apple pie\n", encoding="utf-8")
    holder = sqlite3.connect(vault / ".graph" / "search.sqlite", isolation_level=None)
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
from autograph import search
search.BUSY_SECONDS = 0.2
sys.argv = [script, "apple", "--vault", vault, "--json"]
runpy.run_path(script, run_name="__main__")
"""
