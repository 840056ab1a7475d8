"""search.py (issue 25): a note whose name (file name, ``title`` or an alias)
equals the query ranks first, above notes that only mention the name.

Each ordering test also ranks the vault with the rule switched off
(``_named`` finding nothing) and asserts that the mention then wins: the
vault really tests the rule, not BM25's luck."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import unicodedata

import pytest
from autograph.memory import search
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from conftest import SCRIPTS

SEARCH = str(SCRIPTS / "search.py")

# notes that share no word with the queries: they give the query words a
# positive IDF, as in a real vault
FILLER = {f"misc/filler {i}.md": f"Groceries, weather and tomatoes, note {i}.\n" for i in range(80)}


def hits(vault, text: str, **kw) -> list[search.Hit]:
    v = Vault.open(vault)
    schema = load_schema(vault)
    index = search.open_index(v, schema)
    try:
        return search.search(index, v, schema, text, **kw)
    finally:
        index.close()


def paths(vault, text: str, **kw) -> list[str]:
    return [hit.path for hit in hits(vault, text, **kw)]


def without_rule(monkeypatch, vault, text: str, **kw) -> list[str]:
    """The ranking with the exact-name rule off (no note is named as the query)."""
    with monkeypatch.context() as patch:
        patch.setattr(search, "_named", lambda *args: set())
        return paths(vault, text, **kw)


def mentions(name: str, times: int) -> str:
    return "".join(f"{name} said the plan is fine. " for _ in range(times)) + "\n"


def meeting(title: str, name: str, times: int = 5, linked: int = 4) -> dict[str, str]:
    """A meeting note that says ``name`` everywhere but is not named so
    (its title holds more words), updated today and linked from ``linked``
    daily notes: without the rule it outscores the card named ``name``."""
    today = datetime.date.today().isoformat()
    tag = "-".join(name.split())
    note = (
        f"---\ntype: meeting\ndescription: {name} and the plan\ntags: [{tag}]\nattendees: [{name}]\n"
        f"updated: {today}\n---\n# {name}\n\n" + mentions(name, times)
    )
    return {f"meetings/{title}.md": note, **{f"daily/{title} {i}.md": f"[[{title}]]\n" for i in range(linked)}}


def test_a_card_named_as_the_query_ranks_above_a_note_that_mentions_it_often(make_vault, monkeypatch):
    vault = make_vault(
        {
            **FILLER,
            "people/Maria Garcia.md": "---\ntype: person\n---\nWorks at Hooli.\n",
            **meeting("Sync with Maria Garcia", "Maria Garcia"),
            "meetings/2026-03-09.md": mentions("Maria Garcia", 1),
        }
    )
    off = without_rule(monkeypatch, vault, "Maria Garcia")
    assert off[0] == "meetings/Sync with Maria Garcia.md"  # the rule is needed
    found = hits(vault, "Maria Garcia")
    assert found[0].path == "people/Maria Garcia.md" and found[0].exact
    assert not any(hit.exact for hit in found[1:])
    # the rest keep the order the score gives them
    assert [hit.path for hit in found[1:]] == [path for path in off if path != "people/Maria Garcia.md"]
    assert [hit.score for hit in found[1:]] == sorted((hit.score for hit in found[1:]), reverse=True)
    assert found[0].score < found[1].score  # the score is the formula's: the rule orders, it does not rescore


def test_an_alias_equal_to_the_query_ranks_first(make_vault, monkeypatch):
    vault = make_vault(
        {
            **FILLER,
            "people/Robert Miller.md": "---\ntype: person\naliases:\n  - Bob\n  - Bobby M\n---\nEngineer.\n",
            **meeting("Standup with Bob", "Bob"),
        }
    )
    assert without_rule(monkeypatch, vault, "bob")[0] == "meetings/Standup with Bob.md"
    found = hits(vault, "bob")
    assert found[0].path == "people/Robert Miller.md" and found[0].exact
    assert paths(vault, "BOBBY   m")[0] == "people/Robert Miller.md"
    # an alias is one name: "Bobby", a part of one, is no exact match
    assert not any(hit.exact for hit in hits(vault, "bobby"))


def test_letter_case_accents_and_unicode_form_are_folded(make_vault, monkeypatch):
    nfd = unicodedata.normalize("NFD", "Renée Müller")
    vault = make_vault(
        {
            **FILLER,
            "people/José García.md": "---\ntype: person\n---\nLawyer.\n",
            **meeting("Lunch with Jose Garcia", "Jose Garcia"),
            f"people/{nfd}.md": "---\ntype: person\n---\nDesigner.\n",  # a name as macOS writes it
            **meeting("Review with Renee Muller", "Renee Muller"),
        }
    )
    assert without_rule(monkeypatch, vault, "jose garcia")[0] == "meetings/Lunch with Jose Garcia.md"
    for query in ("jose garcia", "JOSÉ GARCÍA", unicodedata.normalize("NFD", "José García"), "  José   García "):
        found = hits(vault, query)
        assert found[0].path == "people/José García.md" and found[0].exact, query
    assert without_rule(monkeypatch, vault, "renee muller")[0] == "meetings/Review with Renee Muller.md"
    for query in ("renée müller", "RENEE MULLER"):
        first = hits(vault, query)[0]
        assert first.exact and unicodedata.normalize("NFC", first.path) == "people/Renée Müller.md", query


def test_a_cjk_name_ranks_its_card_first(make_vault, monkeypatch):
    vault = make_vault(
        {
            **FILLER,
            "people/陈伟.md": "---\ntype: person\n---\n工程师。\n",
            **meeting("与陈伟的周会", "陈伟"),
            "notes/陈伟的项目.md": "项目记录。\n",
        }
    )
    assert without_rule(monkeypatch, vault, "陈伟")[0] == "meetings/与陈伟的周会.md"
    found = hits(vault, "陈伟")
    assert found[0].path == "people/陈伟.md" and found[0].exact
    assert "notes/陈伟的项目.md" in [hit.path for hit in found]
    assert not any(hit.exact for hit in found[1:])
    # a part of the name is not the name
    assert not any(hit.exact for hit in hits(vault, "陈"))


def test_a_title_property_is_a_name(make_vault, monkeypatch):
    vault = make_vault(
        {
            **FILLER,
            "orgs/org-0042.md": "---\ntype: company\ntitle: Acme Corp\n---\nA client.\n",
            **meeting("Kickoff with Acme Corp", "Acme Corp"),
        }
    )
    assert without_rule(monkeypatch, vault, "acme corp")[0] == "meetings/Kickoff with Acme Corp.md"
    assert paths(vault, "acme corp")[0] == "orgs/org-0042.md"
    assert paths(vault, "ORG-0042")[0] == "orgs/org-0042.md"  # the file name still is one


def test_several_exact_matches_keep_their_score_order_and_come_before_the_rest(make_vault):
    vault = make_vault(
        {
            **FILLER,
            # both named Alex Kim; the one with in-links scores higher
            "people/Alex Kim.md": "---\ntype: person\n---\nDesigner.\n",
            "contacts/card-7.md": "---\ntype: person\naliases: [Alex Kim]\n---\nAccountant.\n",
            **meeting("Call with Alex Kim", "Alex Kim"),
            "notes/a.md": "[[card-7]]\n",
            "notes/b.md": "[[card-7]]\n",
        }
    )
    found = hits(vault, "alex kim")
    assert [hit.exact for hit in found[:3]] == [True, True, False]
    assert not any(hit.exact for hit in found[2:])
    assert [hit.path for hit in found[:2]] == ["contacts/card-7.md", "people/Alex Kim.md"]
    assert found[0].score > found[1].score  # its in-links lift it, as for any two notes


def test_a_live_exact_match_ranks_above_a_retired_one_and_a_retired_one_above_mentions(make_vault, monkeypatch):
    old = '---\ntype: person\ntitle: Dana Lee\nsuperseded_by: "[[p-18]]"\n---\nDesigner.\n'
    files = {
        **FILLER,
        "people/p-17.md": old,  # retired: Dana Lee married, her card is now p-18
        "people/p-18.md": "---\ntype: person\ntitle: Dana Novak\naliases: [Dana Lee, D. N.]\n---\nDesigner.\n",
        **meeting("Sync with Dana Lee", "Dana Lee"),
        **{f"notes/n{i}.md": "See [[p-17]].\n" for i in range(10)},
    }
    vault = make_vault(files)
    off = without_rule(monkeypatch, vault, "dana lee")
    assert off[0] == "meetings/Sync with Dana Lee.md"
    assert off.index("daily/Sync with Dana Lee 0.md") < off.index("people/p-17.md")
    found = hits(vault, "dana lee")
    assert [(hit.path, hit.exact) for hit in found[:3]] == [
        ("people/p-18.md", True),
        ("people/p-17.md", True),
        ("meetings/Sync with Dana Lee.md", False),
    ]
    # the retired card's score is halved as before: the same card, live (the same
    # words and links, under a key that retires nothing), scores twice as much
    files["people/p-17.md"] = old.replace("superseded_by:", "see_also:")
    live = {hit.path: hit.score for hit in hits(make_vault(files, name="live"), "dana lee")}
    assert found[1].score == pytest.approx(live["people/p-17.md"] / 2, rel=1e-3)


def test_a_live_exact_match_ranks_above_a_retired_one_that_scores_higher(make_vault):
    """The tiers in :func:`search.rerank` itself: BM25 rows where the retired
    card, even halved, outscores the live one."""
    vault = make_vault(
        {
            **FILLER,
            "people/Dana Lee.md": "---\ntype: person\nstatus: superseded\n---\nx\n",
            "people/Dana Novak.md": "---\ntype: person\naliases: [Dana Lee]\n---\nx\n",
            "meetings/m.md": "Dana Lee\n",
        }
    )
    v = Vault.open(vault)
    schema = load_schema(vault)
    index = search.open_index(v, schema)
    try:
        ids = dict(index.con.execute("SELECT path, id FROM docs"))
        retired, live, mention = ids["people/Dana Lee.md"], ids["people/Dana Novak.md"], ids["meetings/m.md"]
        rows = [(retired, -10.0), (live, -1.0), (mention, -50.0)]
        assert [row[0] for row in search.rerank(index, schema, rows, v)] == [mention, retired, live]
        ranked = search.rerank(index, schema, rows, v, {retired, live})
        assert [row[0] for row in ranked] == [live, retired, mention]
        scores = {row[0]: row[1] for row in ranked}
        assert scores[retired] > scores[live]  # the order is the tier's, the score the formula's
    finally:
        index.close()


def test_retired_exact_matches_keep_their_order_among_themselves(make_vault):
    vault = make_vault(
        {
            **FILLER,
            "people/Lee Park.md": "---\ntype: person\nstatus: superseded\n---\nx\n",
            "people/lee park 2.md": "---\ntype: person\nstatus: superseded\naliases: [Lee Park]\n---\nx\n",
            "notes/a.md": "[[lee park 2]]\n",
            "notes/b.md": "[[lee park 2]]\n",
            **meeting("Sync with Lee Park", "Lee Park"),
        }
    )
    found = hits(vault, "lee park")
    assert [hit.exact for hit in found[:3]] == [True, True, False]
    assert [hit.path for hit in found[:2]] == ["people/lee park 2.md", "people/Lee Park.md"]
    assert found[0].score > found[1].score  # its in-links and its second name lift it


def test_part_of_a_name_gets_no_boost(make_vault, monkeypatch):
    vault = make_vault(
        {
            **FILLER,
            "people/Maria Garcia.md": "---\ntype: person\n---\nWorks at Hooli.\n",
            **meeting("Sync with Maria", "Maria"),
        }
    )
    off = without_rule(monkeypatch, vault, "Maria")
    found = hits(vault, "Maria")
    assert [hit.path for hit in found] == off
    assert found[0].path == "meetings/Sync with Maria.md"
    assert "people/Maria Garcia.md" in off
    assert not any(hit.exact for hit in found)
    # nor does a query holding the name and more
    assert not any(hit.exact for hit in hits(vault, "Maria Garcia Hooli"))


def test_an_exact_match_past_the_rows_reranked_still_comes_first(make_vault, monkeypatch):
    files = {**FILLER, "people/Sam Rivera.md": "---\ntype: person\n---\nx\n"}
    for i in range(5):
        files.update(meeting(f"Call {i}", "Sam Rivera"))
    vault = make_vault(files)
    off = without_rule(monkeypatch, vault, "sam rivera", limit=8)
    assert off.index("people/Sam Rivera.md") >= search.RERANK_DEPTH  # past the rows a limit of 1 reranks
    assert "people/Sam Rivera.md" not in without_rule(monkeypatch, vault, "sam rivera", limit=1)
    found = hits(vault, "sam rivera", limit=1)
    assert [hit.path for hit in found] == ["people/Sam Rivera.md"] and found[0].exact and found[0].bm25 > 0
    assert paths(vault, "sam rivera", limit=3)[0] == "people/Sam Rivera.md"


def test_filters_apply_to_exact_matches(make_vault):
    vault = make_vault(
        {
            **FILLER,
            "people/Nova.md": "---\ntype: person\n---\nx\n",
            "projects/Nova.md": "---\ntype: project\n---\ny\n",
            "meetings/m.md": mentions("Nova", 3),
        }
    )
    assert paths(vault, "nova", kind="project") == ["projects/Nova.md"]
    assert paths(vault, "nova", folder="meetings") == ["meetings/m.md"]
    assert not any(hit.exact for hit in hits(vault, "nova", folder="meetings"))
    assert set(paths(vault, "nova")[:2]) == {"people/Nova.md", "projects/Nova.md"}


def test_names_follow_edits_to_the_note(make_vault):
    vault = make_vault(
        {
            **FILLER,
            "people/Robert Miller.md": "---\ntype: person\n---\nEngineer.\n",
            **meeting("Standup with Bob", "Bob"),
        }
    )
    card = vault / "people/Robert Miller.md"
    assert not hits(vault, "bob")[0].exact
    card.write_text("---\ntype: person\naliases: [Bob]\n---\nEngineer.\n", encoding="utf-8")
    assert paths(vault, "bob")[0] == "people/Robert Miller.md"
    card.write_text("---\ntype: person\naliases: [Rob]\n---\nEngineer.\n", encoding="utf-8")
    assert paths(vault, "bob")[0] == "meetings/Standup with Bob.md"
    card.rename(vault / "people/Bob.md")
    assert paths(vault, "bob")[0] == "people/Bob.md"


def test_a_raw_fts_query_is_ranked_by_score_alone(make_vault):
    vault = make_vault({**FILLER, "people/Sam.md": "x\n", **meeting("Sam sync", "Sam")})
    found = hits(vault, "sam", raw=True)
    assert found[0].path == "meetings/Sam sync.md" and not any(hit.exact for hit in found)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("José García", "jose garcia"),
        (unicodedata.normalize("NFD", "José García"), "JOSE GARCIA"),
        ("  Maria \t Garcia\n", "maria garcia"),
        ("ＢＯＢ", "bob"),  # full width, folded by NFKD
        ("Straße", "STRASSE"),  # case-folded, not just lower-cased
        ("Καλημέρα", "καλημερα"),
        ("陈伟", "陈伟"),
        ("한국어", unicodedata.normalize("NFD", "한국어")),
    ],
)
def test_name_fold_equates(a, b):
    assert search.name_fold(a) == search.name_fold(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("かぎ", "かき"),  # a voiced kana is another letter, not an accent
        ("Maria", "Maria Garcia"),
        ("陈伟", "陈"),
    ],
)
def test_name_fold_keeps_apart(a, b):
    assert search.name_fold(a) != search.name_fold(b)


def test_the_cli_marks_exact_hits_and_documents_the_key(make_vault):
    vault = make_vault({**FILLER, "people/Robert.md": "---\naliases: [Bob]\n---\nx\n", **meeting("Bob 1-1", "Bob")})
    proc = subprocess.run(
        [sys.executable, SEARCH, "bob", "--vault", str(vault), "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [(h["path"], h["exact"]) for h in data["hits"][:2]] == [
        ("people/Robert.md", True),
        ("meetings/Bob 1-1.md", False),
    ]
    help_text = subprocess.run(
        [sys.executable, SEARCH, "--help"], capture_output=True, text=True, encoding="utf-8", timeout=60
    ).stdout
    assert "exact" in help_text
