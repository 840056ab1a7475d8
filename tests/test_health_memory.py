"""Memory quality in health (issue 26): probable duplicates, identity
conflicts, cards superseded but live and daily notes not processed, always
shown by ``graph.py health`` and the report, and lowering the score only when
the schema sets ``identity.health_weight``.

The complaint this answers: a careless agent's vault, full of duplicate
cards, scored above the careful agent's.  Every vault here is built by the
test; the example vault is copied.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import EXAMPLE_VAULT, REPO, SCRIPTS, copy_tree

sys.path.insert(0, str(SCRIPTS))

from autograph.graph import health, report  # noqa: E402
from autograph.memory import daily, dedup, quality, variants  # noqa: E402
from autograph.read import frontmatter  # noqa: E402
from autograph.read.index import NoteIndex  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.schema.model import load_schema, validate  # noqa: E402

GRAPH = SCRIPTS / "graph.py"


def schema(weight=None, **identity) -> dict:
    section = {"match_fields": {"email": "email", "phone": "phone"}, **identity}
    if weight is not None:
        section["health_weight"] = weight
    return {
        "node_types": {
            "person": {"folder": "people", "status": ["active", "inactive", "superseded"]},
            "project": {"folder": "projects", "status": ["active", "done", "superseded"]},
            "decision": {"folder": "decisions", "status": ["accepted", "superseded"]},
            "daily": {"folder": "daily"},
        },
        "identity": section,
    }


def card(fields: dict, body: str = "Body.") -> str:
    lines = ["---", *(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items()), "---", body]
    return "\n".join(lines) + "\n"


def person(**fields) -> str:
    return card({"type": "person", "description": "Someone", "status": "active", **fields})


def build(make_vault, files: dict, weight=None, name: str = "vault", **identity):
    files = {"schema.json": json.dumps(schema(weight, **identity)), **files}
    return make_vault(files, name)


def health_of(root) -> dict:
    vault = Vault.open(root)
    return health.health_report(vault, load_schema(root), NoteIndex(vault))


def memory_of(root) -> dict:
    return health_of(root)["memory"]


def graph(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(GRAPH), *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


# ---------------------------------------------------------------------------
# The four findings


def test_one_email_on_two_cards_is_a_probable_duplicate_and_an_identity_conflict(make_vault):
    root = build(
        make_vault,
        {
            "people/Ana Lima.md": person(email="ana@example.com"),
            "people/A. Lima (work).md": person(email="ANA@example.com"),
            "people/Other.md": person(email="other@example.com"),
        },
    )
    memory = memory_of(root)
    [duplicate] = memory["probable_duplicates"]
    assert duplicate["by"] == "identity"
    assert duplicate["key"] == "email:ana@example.com"
    assert duplicate["confidence"] == "high"  # joined by an email: dedup.py --apply merges it
    assert sorted(duplicate["cards"]) == ["people/A. Lima (work).md", "people/Ana Lima.md"]
    assert memory["identity_conflicts"] == [
        {"key": "email:ana@example.com", "cards": ["people/A. Lima (work).md", "people/Ana Lima.md"], "grouped": True}
    ]
    assert memory["counts"]["flagged"] == 2 and memory["counts"]["cards"] == 3


def test_a_name_variant_is_a_probable_duplicate_by_name(make_vault):
    root = build(
        make_vault,
        {
            "people/Anna-Lena Schäfer.md": person(company="Acme"),
            "people/Anna-Lena Schaefer.md": person(company="Acme"),
            "people/Maria Ivanova.md": person(),
            "people/Мария Иванова.md": person(),
            "people/Dana Reyes.md": person(),
        },
    )
    memory = memory_of(root)
    found = {tuple(item["cards"]): item for item in memory["probable_duplicates"]}
    assert set(found) == {
        ("people/Anna-Lena Schaefer.md", "people/Anna-Lena Schäfer.md"),
        ("people/Maria Ivanova.md", "people/Мария Иванова.md"),
    }
    for item in found.values():
        assert item["by"] == "name" and item["key"].startswith("full:")
    assert memory["identity_conflicts"] == []  # no identity value is shared
    assert memory["counts"]["probable_duplicates"] == 2 and memory["counts"]["flagged"] == 4


def test_name_variants_join_into_one_entry_and_an_identity_group_is_not_suggested_again(make_vault):
    root = build(
        make_vault,
        {
            "people/Robert Smith.md": person(company="Acme"),
            "people/R. Smith.md": person(company="Acme"),
            "people/Bob.md": person(company="Acme"),
            # one identity: listed once, by identity, never again by its names
            "people/Ivan Petrov.md": person(email="ivan@example.com"),
            "people/Иван Петров.md": person(email="ivan@example.com"),
        },
    )
    duplicates = memory_of(root)["probable_duplicates"]
    assert sorted((item["by"], tuple(sorted(item["cards"]))) for item in duplicates) == [
        ("identity", ("people/Ivan Petrov.md", "people/Иван Петров.md")),
        ("name", ("people/Bob.md", "people/R. Smith.md", "people/Robert Smith.md")),
    ]


def test_one_email_on_cards_dedup_refuses_to_join_is_a_conflict_for_a_person(make_vault):
    root = build(
        make_vault,
        {
            "people/Ana Lima.md": person(email="ana@example.com", phone="+49 30 1111111"),
            "people/Ana Costa.md": person(email="ana@example.com", phone="+49 30 2222222"),
        },
    )
    memory = memory_of(root)
    assert memory["probable_duplicates"] == []  # no group, and names that differ
    assert memory["identity_conflicts"] == [
        {"key": "email:ana@example.com", "cards": ["people/Ana Costa.md", "people/Ana Lima.md"], "grouped": False}
    ]
    assert memory["counts"]["flagged"] == 2


def test_identity_conflicts_follow_dedups_gates_and_shared_keys(make_vault):
    # max_shared 2: an address three cards hold is a team's, no identity
    files = {f"people/P{i}.md": person(email="team@example.com") for i in range(3)}
    root = build(make_vault, files, max_shared=2)
    assert memory_of(root)["identity_conflicts"] == []
    # same_domain_only (the default): one email in two domains is two subjects
    files = {
        "people/Ana.md": person(email="ana@example.com", domain="work"),
        "people/Ana Home.md": person(email="ana@example.com", domain="home"),
    }
    root = build(make_vault, files, name="domains")
    memory = memory_of(root)
    assert memory["identity_conflicts"] == [] and memory["probable_duplicates"] == []


def test_a_live_card_another_card_supersedes(make_vault):
    root = build(
        make_vault,
        {
            "decisions/Old plan.md": card(
                {"type": "decision", "description": "d", "status": "accepted", "superseded_by": "[[New plan]]"}
            ),
            "decisions/New plan.md": card({"type": "decision", "description": "d", "status": "accepted"}),
            "decisions/Stamped.md": card(
                {"type": "decision", "description": "d", "status": "superseded", "superseded_by": "[[New plan]]"}
            ),
            "decisions/Undecided.md": card(
                {"type": "decision", "description": "d", "status": "accepted", "superseded_by": "TBD"}
            ),
        },
    )
    memory = memory_of(root)
    assert memory["superseded_live"] == [
        {"path": "decisions/Old plan.md", "by": "decisions/New plan.md", "status": "accepted"}
    ]
    assert memory["counts"]["superseded_live"] == 1 and memory["counts"]["flagged"] == 1


def _mark(root, path: str) -> None:
    """Mark a daily note processed, as ``daily.py mark`` does."""
    note = Vault.open(root).note(path)
    (root / path).write_bytes(note.with_property(daily.KEY, daily.fingerprint(note)))


def test_daily_notes_not_processed_new_and_changed(make_vault):
    root = build(
        make_vault,
        {
            "daily/2026-11-20.md": "# Friday\nMet [[Ana Lima]].\n",
            "daily/2026-11-21.md": "# Saturday\nNothing.\n",
            "daily/2026-11-22.md": "# Sunday\nRead.\n",
            "people/Ana Lima.md": person(),
        },
    )
    _mark(root, "daily/2026-11-21.md")
    _mark(root, "daily/2026-11-22.md")
    with open(root / "daily/2026-11-22.md", "a", encoding="utf-8") as handle:
        handle.write("A person's line, written later.\n")
    memory = memory_of(root)
    assert memory["unprocessed_daily"] == [
        {"path": "daily/2026-11-20.md", "date": "2026-11-20", "state": "new"},
        {"path": "daily/2026-11-22.md", "date": "2026-11-22", "state": "changed"},
    ]
    assert memory["counts"]["daily_notes"] == 3 and memory["counts"]["unprocessed_daily"] == 2
    assert memory["counts"]["flagged"] == 2 and memory["share"] == 0.5


def test_a_daily_note_by_type_and_by_obsidians_daily_notes_setting(make_vault):
    root = build(
        make_vault,
        {
            "journal/2026-01-05.md": "# A day\n",
            "misc/Retro.md": card({"type": "daily", "date": "2026-01-06"}),
            "misc/Not daily.md": card({"type": "project", "description": "p"}),
            ".obsidian/daily-notes.json": json.dumps({"folder": "journal", "format": "YYYY-MM-DD"}),
        },
    )
    paths = [item["path"] for item in memory_of(root)["unprocessed_daily"]]
    assert paths == ["journal/2026-01-05.md", "misc/Retro.md"]


# ---------------------------------------------------------------------------
# Always shown


def test_the_memory_key_is_always_there(make_vault):
    root = make_vault({"a.md": "Just a note.\n"})
    memory = memory_of(root)
    assert memory == {
        "probable_duplicates": [],
        "identity_conflicts": [],
        "superseded_live": [],
        "unprocessed_daily": [],
        "counts": {
            "cards": 1,
            "daily_notes": 0,
            "probable_duplicates": 0,
            "identity_conflicts": 0,
            "superseded_live": 0,
            "unprocessed_daily": 0,
            "flagged": 0,
        },
        "share": 0.0,
    }
    empty = make_vault({}, "empty")
    assert memory_of(empty)["share"] == 0.0 and health_of(empty)["score"] == 100.0


def test_health_json_and_text_show_the_memory_section(make_vault):
    root = build(
        make_vault,
        {
            "people/Ana Lima.md": person(email="ana@example.com"),
            "people/Ana L.md": person(email="ana@example.com"),
            "daily/2026-11-20.md": "# Friday\n",
        },
    )
    proc = graph("health", root, "--json", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data["memory"]) == {*quality.KEYS, "counts", "share"}
    assert data["memory"]["counts"]["probable_duplicates"] == 1
    assert "memory" not in data["penalties"]  # no identity.health_weight: shown, not scored
    text = graph("health", root, "--dry-run").stdout.splitlines()
    [line] = [line for line in text if line.startswith("memory: ")]
    assert "probable duplicates 1" in line and "identity conflicts 1" in line
    assert "daily notes not processed 1 of 1" in line and "3 of 3 cards flagged (100%)" in line
    assert "Probable duplicates (1):" in text
    assert "Identity conflicts (1):" in text
    assert "Daily notes not processed (1):" in text
    assert "  daily/2026-11-20.md  (new)" in text


def test_the_report_page_shows_the_memory_section(make_vault, tmp_path):
    root = build(
        make_vault,
        {
            "people/Ana Lima.md": person(email="ana@example.com"),
            "people/Ana L.md": person(email="ana@example.com"),
            "decisions/Old <b>.md": card({"type": "decision", "status": "accepted", "superseded_by": "[[New]]"}),
            "decisions/New.md": card({"type": "decision", "status": "accepted"}),
        },
        weight=20,
    )
    vault = Vault.open(root)
    data = report.collect(vault, load_schema(root), NoteIndex(vault))
    page = report.render(data)
    assert '<section id="memory"><h2>Memory</h2>' in page
    assert "Probable duplicates (1)" in page and "Superseded but still live (1)" in page
    assert "decisions/Old &lt;b&gt;.md" in page and "<b>.md" not in page  # vault text is escaped
    assert "points off the health score" in page
    counts = report.counts(data)["memory"]
    assert counts == {
        "probable_duplicates": 1,
        "identity_conflicts": 1,
        "superseded_live": 1,
        "unprocessed_daily": 0,
        "flagged": 3,
        "share": 0.75,
    }
    out = tmp_path / "r.html"
    proc = graph("report", root, "--json", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sections"]["memory"] == counts


# ---------------------------------------------------------------------------
# The score


FLAGGED = {
    "people/Ana Lima.md": person(email="ana@example.com"),
    "people/Ana L.md": person(email="ana@example.com"),
    "people/Dana Reyes.md": person(),
    "people/Lee Park.md": person(),
    "MEMORY.md": "- [[Ana Lima]]\n- [[Ana L]]\n- [[Dana Reyes]]\n- [[Lee Park]]\n",
}


def test_the_score_is_lowered_only_with_identity_health_weight(make_vault):
    plain = health_of(build(make_vault, FLAGGED, name="plain"))
    zero = health_of(build(make_vault, FLAGGED, weight=0, name="zero"))
    weighted = health_of(build(make_vault, FLAGGED, weight=20, name="weighted"))
    assert "memory" not in plain["penalties"] and "memory" not in zero["penalties"]
    assert plain["score"] == zero["score"]
    share = weighted["memory"]["share"]
    assert weighted["memory"]["counts"]["cards"] == 4  # MEMORY, a hub, is no card
    assert share == plain["memory"]["share"] == 0.5  # Ana's two cards
    assert weighted["penalties"]["memory"] == pytest.approx(20 * share)
    assert weighted["score"] == pytest.approx(plain["score"] - 20 * share, abs=0.11)


def test_identity_health_weight_is_validated_and_set_in_the_example_schema():
    assert validate({"identity": {"health_weight": 10}}) == []
    assert validate({"identity": {"health_weight": 0.5}}) == []
    for bad in (101, -1, True, "10"):
        [problem] = validate({"identity": {"health_weight": bad}})
        assert problem.startswith("$.identity.health_weight: expected a number of score points from 0 to 100")
    example = load_schema(None, REPO / "schema.example.json")
    weight = example.section("identity")["health_weight"]
    assert isinstance(weight, (int, float)) and 0 < weight <= 100
    raw = json.loads((REPO / "schema.example.json").read_text(encoding="utf-8"))
    assert "health_weight" in raw["identity"]["_comment"]
    json_schema = json.loads((REPO / "skills/autograph/schema.schema.json").read_text(encoding="utf-8"))
    assert json_schema["properties"]["identity"]["properties"]["health_weight"]["maximum"] == 100


def _month(duplicates: int) -> dict:
    """A small work memory: ten people, a project and a daily note linking
    them, every card described; ``duplicates`` of the people also on a
    second card the careless way (a name variant, or the same email), each
    described and linked, so the link and description penalties favour the
    vault with more cards, as in the issue."""
    names = [
        ("Robert Smith", "Bob Smith"),
        ("Anna-Lena Schäfer", "Anna-Lena Schaefer"),
        ("Maria Ivanova", "Мария Иванова"),
        ("Katherine Olsen", "Kate Olsen"),
        ("William Grant", "Bill Grant"),
        ("José Ortega", "Pepe Ortega"),
        ("Dmitri Volkov", "Дмитрий Волков"),
        ("Jürgen Müller", "Juergen Mueller"),
        ("Michael Chen", "Mike Chen"),
        ("Elizabeth Hart", "Liz Hart"),
    ]
    files = {}
    linked = []
    for i, (name, variant) in enumerate(names):
        email = f"p{i}@example.com"
        files[f"people/{name}.md"] = person(email=email, company="Acme") + "Works on [[Apollo]].\n"
        linked.append(name)
        if i < duplicates:
            second = {"company": "Acme"} if i % 2 else {"email": email.upper()}
            files[f"people/{variant}.md"] = person(**second) + "Works on [[Apollo]].\n"
            linked.append(variant)
    body = "".join(f"- [[{name}]]\n" for name in linked)
    files["projects/Apollo.md"] = card({"type": "project", "description": "The project", "status": "active"}, body)
    files["daily/2026-11-20.md"] = "# Friday\n" + body
    files["MEMORY.md"] = body + "- [[Apollo]]\n- [[2026-11-20]]\n"
    return files


@pytest.mark.parametrize("more", [1, 4, 10])
def test_more_duplicates_score_lower(make_vault, more):
    weight = load_schema(None, REPO / "schema.example.json").section("identity")["health_weight"]
    careful = health_of(build(make_vault, _month(0), weight=weight, name="careful"))
    careless = health_of(build(make_vault, _month(more), weight=weight, name="careless"))
    assert careless["memory"]["counts"]["probable_duplicates"] == more
    assert careless["score"] < careful["score"], (careful["penalties"], careless["penalties"])
    fewer = health_of(build(make_vault, _month(more - 1), weight=weight, name="fewer"))
    assert careless["score"] < fewer["score"]


def test_without_the_weight_duplicates_do_not_lower_the_score(make_vault):
    """The issue's complaint, reproduced: without identity.health_weight the
    vault with ten duplicates scores at least as well as the careful one."""
    careful = health_of(build(make_vault, _month(0), name="careful"))
    careless = health_of(build(make_vault, _month(10), name="careless"))
    assert careless["memory"]["counts"]["probable_duplicates"] == 10
    assert careless["score"] >= careful["score"]


# ---------------------------------------------------------------------------
# The example vault


@pytest.fixture
def example(tmp_path):
    return copy_tree(EXAMPLE_VAULT, tmp_path / "example")


def test_the_example_vault_scores_as_before_with_its_own_schema(example):
    found = health_of(example)
    assert "memory" not in found["penalties"]  # its schema sets no identity.health_weight
    memory = found["memory"]
    assert memory["counts"]["daily_notes"] == 6 and memory["counts"]["unprocessed_daily"] == 6
    assert memory["probable_duplicates"] == [] and memory["superseded_live"] == []
    # the score is the six link and frontmatter penalties alone (test_graph_cli checks them one by one)
    assert set(found["penalties"]) == set(health.PENALTIES)
    assert found["score"] == pytest.approx(100 - sum(found["penalties"].values()), abs=0.06)


def test_the_example_vault_with_the_example_schema_gets_a_sensible_score(example):
    before = health_of(example)
    shutil.copy(REPO / "schema.example.json", example / "schema.json")
    after = health_of(example)
    weight = load_schema(example).section("identity")["health_weight"]
    assert after["penalties"]["memory"] == pytest.approx(weight * after["memory"]["share"])
    assert 0 < after["penalties"]["memory"] <= weight * 0.25  # a handful of daily notes, no duplicates
    assert 85 <= after["score"] < 100
    assert abs(after["score"] - before["score"]) < 5


# ---------------------------------------------------------------------------
# Read once: the index gives the properties


def test_the_groups_read_through_the_index_are_dedups_groups(make_vault):
    files = {
        "people/Ana Lima.md": person(email="ana@example.com", phone="+49 30 1111111"),
        "people/Ana L.md": person(email="ana@example.com"),
        "people/Ana Costa.md": person(email="ana@example.com", phone="+49 30 2222222"),
        "people/Lee.md": person(phone="+49 30 3333333"),
        "people/Lee Park.md": person(phone="030 3333333"),
        "people/Retired Lee.md": person(phone="+49 30 3333333", status="superseded"),
        "people/Solo.md": person(email="solo@example.com"),
    }
    root = build(make_vault, files, default_country="+49")
    vault = Vault.open(root)
    schema_ = load_schema(root)
    full = dedup.find_groups(vault, schema_)
    memory = quality.section(vault, schema_, NoteIndex(vault))
    identity = [item for item in memory["probable_duplicates"] if item["by"] == "identity"]
    assert [item["cards"] for item in identity] == [group.members for group in full.groups]
    assert len(identity) == 2
    refused = {tuple(sorted(r.paths)) for r in full.refused}
    assert refused and all(
        any(set(pair) <= set(item["cards"]) for item in memory["identity_conflicts"] if not item["grouped"])
        for pair in refused
    )


def test_name_suggestions_through_the_index_are_the_same(make_vault):
    root = build(
        make_vault,
        {
            "people/Robert Smith.md": person(company="Acme") + "See [[Apollo]].\n",
            "people/R. Smith.md": card({"type": "person", "related": "[[Apollo]]"}),
            "people/Bob.md": person(company="Acme"),
            "people/Maria Ivanova.md": person(aliases=["Masha"]),
            "people/Мария Иванова.md": person(),
            "people/Broken.md": "---\ntitle: [unclosed\n---\nRobert Smith\n",
            "projects/Apollo.md": card({"type": "project"}),
        },
    )
    vault = Vault.open(root)
    schema_ = load_schema(root)
    index = NoteIndex(vault)
    plain = [s.as_dict() for s in variants.suggest(vault, schema_)]
    indexed = [s.as_dict() for s in variants.suggest(vault, schema_, index=index)]
    assert plain == indexed and len(plain) >= 3


def test_a_changed_daily_notes_setting_is_not_served_from_the_cache(make_vault):
    root = build(make_vault, {"journal/2026-01-05.md": "# A day\n", "b.md": "[[2026-01-05]]\n"})
    vault = Vault.open(root)
    first = health.report_for(vault, load_schema(root), NoteIndex(vault))
    assert first["memory"]["counts"]["daily_notes"] == 0
    (root / ".obsidian").mkdir()
    (root / ".obsidian/daily-notes.json").write_text(json.dumps({"folder": "journal"}), encoding="utf-8")
    vault = Vault.open(root)
    second = health.report_for(vault, load_schema(root), NoteIndex(vault))
    assert second["memory"]["counts"]["daily_notes"] == 1


def test_a_daily_note_that_only_autograph_rewrote_stays_processed(make_vault):
    root = build(make_vault, {"daily/2026-11-20.md": "Met [[Ana]].\n", "people/Ana Lima.md": person()})
    _mark(root, "daily/2026-11-20.md")
    assert memory_of(root)["unprocessed_daily"] == []
    path = root / "daily/2026-11-20.md"
    text = path.read_text(encoding="utf-8")
    assert frontmatter.parse(text).properties[daily.KEY]
    path.write_text(text.replace("[[Ana]]", "[[Ana Lima|Ana]]"), encoding="utf-8")  # as graph.py fix would
    assert memory_of(root)["unprocessed_daily"] == []
