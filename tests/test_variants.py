"""Name variants (issue 26): a card made from another spelling of a name is
found, suggested, and never merged by its name alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO, SCRIPTS
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

from autograph.memory import variants  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.schema.model import load_schema  # noqa: E402

DEDUP = SCRIPTS / "dedup.py"
CARD = SCRIPTS / "card.py"
ORCHESTRATE = SCRIPTS / "orchestrate.py"


def same(a: str, b: str, table=None):
    return variants.same_person(variants.keys(a, table), variants.keys(b, table))


@pytest.mark.parametrize(
    ("nickname", "full"),
    [
        ("Bob", "Robert"),
        ("Bill", "William"),
        ("Kate", "Katherine"),
        ("Katie", "Catherine"),
        ("Pepe", "José"),
        ("Mike", "Michael"),
        ("Jim", "James"),
        ("Liz", "Elizabeth"),
        ("Sasha", "Alexander"),
        ("Dima", "Dmitri"),
        ("Masha", "Мария"),
        ("Paco", "Francisco"),
    ],
)
def test_a_nickname_meets_its_full_name(nickname, full):
    assert same(f"{nickname} Okafor", f"{full} Okafor")[0] == "full"
    assert same(nickname, f"{full} Okafor")[0] == "given"


@pytest.mark.parametrize(
    ("latin", "written"),
    [
        ("Maria Ivanova", "Мария Иванова"),
        ("Dmitri Volkov", "Дмитрий Волков"),
        ("Alexei Petrov", "Алексей Петров"),
        ("Yulia Orlova", "Юлия Орлова"),
        ("Sergei Shchukin", "Сергей Щукин"),
        ("Olena Kovalenko", "Олена Коваленко"),
        ("Nikos Papadopoulos", "Νίκος Παπαδόπουλος"),
        ("Anna-Lena Schaefer", "Anna-Lena Schäfer"),
        ("Jurgen Muller", "Jürgen Müller"),
        ("Juergen Mueller", "Jürgen Müller"),
        ("Soren Kierkegaard", "Søren Kierkegaard"),
        ("R. Smith", "Robert Smith"),
    ],
)
def test_a_name_meets_its_transliteration(latin, written):
    assert same(latin, written) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Rachel Smith", "Robert Smith"),
        ("Maria Garcia", "Maria Lopez"),
        ("陈伟", "陈伟明"),
        ("Robert Smith", "Roberta Smith"),
        ("R. Smith", "R. Jones"),
    ],
)
def test_other_names_stay_apart(a, b):
    assert same(a, b) is None


def test_chinese_names_match_only_as_written():
    assert same("陈伟", "陈伟") is not None and same("陈伟", "Chen Wei") is None


def test_the_schema_adds_nicknames(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    schema = json.loads((REPO / "schema.example.json").read_text(encoding="utf-8"))
    schema["identity"]["nicknames"] = {"Chuy": ["Jesús"]}
    (root / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    table = variants.nicknames_of(load_schema(root))
    assert same("Chuy Lopez", "Jesús López", table)[0] == "full"
    assert same("Chuy Lopez", "Jesús López") is None  # not in the built-in table
    schema["identity"]["nicknames"] = {"Chuy": 3}
    (root / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(DEDUP), "--vault", str(root)], capture_output=True, text=True)
    assert proc.returncode == 2 and "nicknames.Chuy" in proc.stderr


@given(st.text(min_size=1, max_size=30))
def test_keys_never_fail_and_a_name_meets_itself(name):
    found = variants.keys(name)
    if any(kind in ("full", "given") for kind, _ in found):
        assert variants.same_person(found, variants.keys(name)) is not None


# ---------------------------------------------------------------------------
# In a vault


def card(props: dict) -> str:
    return "---\n" + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in props.items()) + "---\n"


def vault(tmp_path, notes: dict) -> object:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "schema.json").write_text((REPO / "schema.example.json").read_text(encoding="utf-8"), encoding="utf-8")
    for path, props in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(card({"type": "person", "description": "d", "status": "active", **props}), "utf-8")
    return root


def test_dedup_suggests_variants_with_evidence_and_never_merges_them(tmp_path):
    root = vault(
        tmp_path,
        {
            "people/Robert Smith.md": {"company": "[[Acme]]", "email": "rob@acme.com"},
            "people/Bob.md": {"company": "[[Acme]]"},
            "people/R. Smith.md": {},
            "people/Мария Иванова.md": {},
            "people/Maria Ivanova.md": {},
            "people/Maria Garcia.md": {"email": "m@acme.com"},
            "people/María García.md": {"email": "m@hooli.com"},  # a stranger: another email
        },
    )
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    proc = subprocess.run(
        [sys.executable, str(DEDUP), "--vault", str(root), "--apply", "--json"], capture_output=True, text=True
    )
    data = json.loads(proc.stdout)
    pairs = {tuple(s["cards"]): s for s in data["suggestions"]}
    assert ("people/Bob.md", "people/Robert Smith.md") in pairs
    assert pairs[("people/Bob.md", "people/Robert Smith.md")]["evidence"] == [
        {"kind": "field", "field": "company", "value": "acme"}
    ]
    assert ("people/R. Smith.md", "people/Robert Smith.md") in pairs
    assert ("people/Maria Ivanova.md", "people/Мария Иванова.md") in pairs
    assert not any("people/Maria Garcia.md" in s["cards"] for s in data["suggestions"])
    assert all(set(s) == {"cards", "name_key", "evidence", "confidence"} for s in data["suggestions"])
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before  # --apply merges identity groups only


def test_a_reviewed_manifest_merges_a_suggestion(tmp_path):
    root = vault(
        tmp_path,
        {
            "people/Robert Smith.md": {"company": "[[Acme]]"},
            "people/Bob.md": {"company": "[[Acme]]"},  # a one-word name is suggested only with evidence
            "people/R. Smith.md": {},
        },
    )
    manifest = tmp_path / "m.json"
    subprocess.run([sys.executable, str(DEDUP), "--vault", str(root), "--manifest", str(manifest)], check=False)
    groups = json.loads(manifest.read_text(encoding="utf-8"))["groups"]
    assert len(groups) == 1 and groups[0]["suggested"] and groups[0]["canonical"] == "people/Robert Smith.md"
    assert {m["path"] for m in groups[0]["members"]} == {
        "people/Robert Smith.md",
        "people/Bob.md",
        "people/R. Smith.md",
    }
    proc = subprocess.run(
        [sys.executable, str(DEDUP), "--vault", str(root), "--apply-manifest", str(manifest), "--apply"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert sorted(p.name for p in (root / "people").iterdir()) == ["Robert Smith.md"]
    text = (root / "people/Robert Smith.md").read_text(encoding="utf-8")
    assert "Bob" in text and "R. Smith" in text  # the old names kept as aliases


def test_remember_asks_about_a_variant_and_never_writes_it_by_name(tmp_path):
    root = vault(tmp_path, {"people/Robert Smith.md": {"email": "rob@acme.com"}})
    before = (root / "people/Robert Smith.md").read_bytes()
    proc = subprocess.run(
        [sys.executable, str(CARD), "remember", "person", "Bob", "role=CTO", "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
    )
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and data["action"] == "ambiguous"
    assert data["matches"][0]["why"][0]["by"] == "variant" and data["suggested_title"]
    assert (root / "people/Robert Smith.md").read_bytes() == before
    proc = subprocess.run(  # with the email it is the card, and the nickname becomes its alias
        [sys.executable, str(CARD), "remember", "person", "Bob", "email=ROB@acme.com", "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
    )
    assert json.loads(proc.stdout)["path"] == "people/Robert Smith.md"
    assert "Bob" in (root / "people/Robert Smith.md").read_text(encoding="utf-8")


def test_a_variant_whose_identity_conflicts_is_another_person(tmp_path):
    root = vault(tmp_path, {"people/Robert Smith.md": {"email": "rob@acme.com"}})
    proc = subprocess.run(
        [sys.executable, str(CARD), "remember", "person", "Bob Smith", "email=bob@other.org", "description=d",
         "--vault", str(root), "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert json.loads(proc.stdout)["action"] == "created"


def test_dedup_prepare_sees_variants(tmp_path):
    root = vault(tmp_path, {"people/Robert Smith.md": {}, "people/R. Smith.md": {}})
    proc = subprocess.run(
        [sys.executable, str(ORCHESTRATE), "dedup-prepare", "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
    )
    assert "variant" in proc.stdout and "people/R. Smith.md" in proc.stdout, proc.stdout + proc.stderr


def test_suggestions_are_deterministic_and_unordered_pairs(tmp_path):
    root = vault(tmp_path, {"people/Robert Smith.md": {}, "people/R. Smith.md": {}, "people/Bob.md": {"x": 1}})
    first = variants.suggest(Vault.open(root), load_schema(root))
    again = variants.suggest(Vault.open(root), load_schema(root))
    assert [s.as_dict() for s in first] == [s.as_dict() for s in again]
    assert all(s.cards == sorted(s.cards) for s in first)


def test_a_manifest_never_joins_cards_whose_identities_conflict(tmp_path):
    """Sasha names both an Alexander and an Alexandra with two handles: two
    suggestions, never one group holding both."""
    root = vault(
        tmp_path,
        {
            "people/Sasha Ivanov.md": {"company": "[[Acme]]"},
            "people/Alexander Ivanov.md": {"telegram": "@alex", "company": "[[Acme]]"},
            "people/Alexandra Ivanov.md": {"telegram": "@alexa", "company": "[[Acme]]"},
        },
    )
    manifest = tmp_path / "m.json"
    proc = subprocess.run(
        [sys.executable, str(DEDUP), "--vault", str(root), "--manifest", str(manifest)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr  # suggestions are never merged: nothing "left", exit 0
    groups = json.loads(manifest.read_text(encoding="utf-8"))["groups"]
    for group in groups:
        paths = {m["path"] for m in group["members"]}
        assert not {"people/Alexander Ivanov.md", "people/Alexandra Ivanov.md"} <= paths


def test_remember_lists_the_strongest_match_first(tmp_path):
    root = vault(tmp_path, {"people/Aaron Bob.md": {}, "people/Bob.md": {"email": "b@x.com"}})
    proc = subprocess.run(
        [sys.executable, str(CARD), "remember", "person", "Bob", "email=b@x.com", "--vault", str(root), "--json",
         "--dry-run"],
        capture_output=True, text=True,
    )  # fmt: skip
    data = json.loads(proc.stdout)
    assert data["matches"][0]["path"] == "people/Bob.md"


def _joined_by_rule(suggestions, apart=None):
    """join's rule, written out as it reads: each suggestion joins every
    group it shares a card with (kept in the order made, a joined group
    going to the end), unless the cards of the result include two that
    may never be one."""
    joined = []
    for item in suggestions:
        touching = [j for j in joined if set(j.cards) & set(item.cards)]
        cards = sorted(set(item.cards).union(*(j.cards for j in touching)))
        if apart is not None and any(apart(a, b) for i, a in enumerate(cards) for b in cards[i + 1 :]):
            joined.append(item)
            continue
        keys = " + ".join(dict.fromkeys([*(j.name_key for j in touching), item.name_key]))
        evidence = [e for j in touching for e in j.evidence] + item.evidence
        order = ("low", "medium", "high")
        level = min([item.confidence, *(j.confidence for j in touching)], key=order.index)
        joined = [j for j in joined if all(j is not t for t in touching)] + [
            variants.Suggestion(cards, keys, evidence, level)
        ]
    return joined


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from("abcdefg"), min_size=2, max_size=2, unique=True),
            st.sampled_from(["full:x", "given:y", "initial:z"]),
            st.sampled_from(["low", "medium", "high"]),
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_join_groups_suggestions_that_share_a_card(rows, with_apart):
    """A suggestion joins the groups it shares a card with, in the order
    they were made, unless two of the cards may never be one."""
    suggestions = [
        variants.Suggestion(sorted(cards), key, [{"kind": "field", "n": n}], level)
        for n, (cards, key, level) in enumerate(rows)
    ]
    apart = (lambda a, b: {a, b} == {"a", "g"}) if with_apart else None
    got = variants.join(
        [variants.Suggestion(list(s.cards), s.name_key, list(s.evidence), s.confidence) for s in suggestions], apart
    )
    assert [s.as_dict() for s in got] == [s.as_dict() for s in _joined_by_rule(suggestions, apart)]
    assert sorted({c for s in suggestions for c in s.cards}) == sorted({c for s in got for c in s.cards})
