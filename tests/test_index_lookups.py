"""card.py's look-ups by identity and by name answered from the index file
(issue 29): with ``.graph/index.sqlite`` they name exactly the cards they
name reading every card, also for a card changed since the file was brought
up to date, one planned in a batch and not written, one whose frontmatter
does not parse, one that is not UTF-8, a YAML escape, an old value in
``## History`` and a phone written with other separators; and a look-up
writes nothing, not even under ``.graph/``."""

from __future__ import annotations

import json
import os

import pytest
from autograph.memory import cards, names, variants
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from autograph.write import index_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCHEMA = {
    "node_types": {"person": {"folder": "people", "required": [], "status": ["active", "superseded"]}},
    "identity": {"match_fields": {"email": "email", "phone": "phone", "telegram": "handle"}, "default_country": "+49"},
}

CARDS = {
    "people/Dana Reyes.md": '---\ntype: person\nemail: "dana@acme.io"\naliases: [Dee]\n---\n',
    "people/Ben Carter.md": "---\ntype: person\nphone: +49 30 1234-5678\n---\n",
    "people/Old Mail.md": (
        "---\ntype: person\nemail: new@x.org\n---\n## History\n- 2026-11-01: email: old@x.org \u2192 new@x.org\n"
    ),
    "people/Escaped.md": '---\ntype: person\nemail: "esc\\x40x.org"\ntitle: "Esc\\u00e9"\n---\n',
    "people/Broken.md": "---\nemail: [broken@x.org\n---\nbroken@x.org\n",
    "people/Maria Garcia (Hooli).md": "---\ntype: person\ntelegram: '@maria_g'\n---\n",
    "people/José García.md": "---\ntype: person\ntitle: Pepe\n---\n",
    "notes/Mentions.md": "dana@acme.io and @maria_g in the body only\n",
}

VALUES = [
    {"email": "DANA@acme.io"},
    {"phone": "030 12345678"},
    {"email": "old@x.org"},
    {"email": "esc@x.org"},
    {"email": "broken@x.org"},
    {"telegram": "maria_g"},
    {"email": "nobody@x.org"},
]
NAMES = [["Dee"], ["dana reyes"], ["Maria Garcia"], ["jose garcia"], ["Pepe"], ["Escé"], ["Nobody"], ["D. Reyes"]]


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    for path, text in CARDS.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    (root / "people" / "Latin1.md").write_bytes(b"---\nemail: latin@x.org\n---\ncaf\xe9\n")
    (root / "schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    return root


def answers(root, view=None) -> dict:
    vault = view or Vault.open(root)
    schema = load_schema(root)
    found = {}
    for values in VALUES:
        unread: list = []
        matches = cards.identity_matches(vault, schema, "person", values, unreadable=unread)
        found[json.dumps(values)] = (matches, unread)
    for wanted in NAMES:
        found[json.dumps(wanted)] = (
            names.name_matches(vault, schema, wanted),
            names.name_matches(vault, schema, wanted, qualified=True),
            variants.matches(vault, schema, wanted[0]),
            cards.alias_matches(vault, schema, wanted[0]),
        )
    return found


def build_index(root) -> None:
    vault = Vault.open(root)
    index_file.open_index(vault, load_schema(root)).close()


def files_under(root) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_index_names_the_cards_reading_every_card_names(vault):
    expected = answers(vault)
    assert expected[json.dumps({"email": "old@x.org"})][0][0]["old"] is True
    assert [m["path"] for m in expected[json.dumps({"phone": "030 12345678"})][0]] == ["people/Ben Carter.md"]
    assert {u["path"] for u in expected[json.dumps({"email": "broken@x.org"})][1]} == {"people/Broken.md"}
    assert [m["path"] for m in expected[json.dumps(["D. Reyes"])][2]] == ["people/Dana Reyes.md"]  # a variant
    assert [m["path"] for m in expected[json.dumps(["Dee"])][3]] == ["people/Dana Reyes.md"]  # an alias
    build_index(vault)
    before = files_under(vault)
    assert answers(vault) == expected
    assert files_under(vault) == before  # a look-up writes nothing, not even the index


def test_a_nickname_the_schema_adds_later_re_derives_the_stored_name_keys(vault):
    """The index keeps each card's name keys with the schema's nicknames;
    when a nickname is added, the next update derives them again from the
    stored properties (no note read), and a variant look-up finds it."""
    build_index(vault)
    assert variants.matches(Vault.open(vault), load_schema(vault), "Pepito Garcia") == []
    # "José" now also stands for "Pepito": José García's own keys gain "pepito garcia" (no key of
    # "Pepito Garcia" was José García's before, so only keys derived again find it)
    schema = dict(SCHEMA, identity={**SCHEMA["identity"], "nicknames": {"Jose": ["Pepito"]}})
    (vault / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    expected = answers(vault)  # with the new schema, every card read
    view = Vault.open(vault, stamps=True)
    index = index_file.open_index(view, load_schema(vault))
    assert index.reread == 0  # derived again, no note parsed
    index.close()
    assert [m["path"] for m in variants.matches(Vault.open(vault), load_schema(vault), "Pepito Garcia")] == [
        "people/José García.md"
    ]
    assert answers(vault) == expected


def test_a_card_changed_since_the_index_is_read_as_it_is_now(vault):
    build_index(vault)
    path = vault / "people" / "Ben Carter.md"
    path.write_text("---\ntype: person\nemail: dana@acme.io\naliases: [Benji]\n---\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    (vault / "people" / "New One.md").write_text("---\ntype: person\nphone: '030 1234 5678'\n---\n", encoding="utf-8")
    now = answers(vault)
    assert {m["path"] for m in now[json.dumps({"email": "DANA@acme.io"})][0]} == {
        "people/Dana Reyes.md",
        "people/Ben Carter.md",
    }
    assert [m["path"] for m in now[json.dumps({"phone": "030 12345678"})][0]] == ["people/New One.md"]
    os.remove(vault / ".graph" / "index.sqlite")
    assert answers(vault) == now


def test_a_card_planned_in_a_batch_is_seen_as_planned(vault):
    build_index(vault)
    view = Vault.open(vault).with_text("people/Planned.md", b"---\ntype: person\nemail: planned@x.org\n---\n")
    view = view.with_text("people/Dana Reyes.md", b"---\ntype: person\naliases: [Dana R]\n---\n")
    schema = load_schema(vault)
    assert [m["path"] for m in cards.identity_matches(view, schema, "person", {"email": "planned@x.org"})] == [
        "people/Planned.md"
    ]
    assert cards.identity_matches(view, schema, "person", {"email": "dana@acme.io"}) == []
    assert [m["path"] for m in names.name_matches(view, schema, ["Dana R"])] == ["people/Dana Reyes.md"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Ann", "Ann Lee", "ann lee", "Ánn Lée", "Bo (Acme)", "Bo"]),
            st.sampled_from(["a@x.org", "A@X.org", "b@x.org", None]),
            st.sampled_from(["+49 30 111", "030-111", None]),
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["a@x.org", "030 111", "ann lee", "Bo"]),
)
def test_any_cards_give_the_same_answers_with_and_without_the_index(tmp_path_factory, cards_made, asked):
    root = tmp_path_factory.mktemp("vault")
    (root / "schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    (root / "people").mkdir()
    for k, (title, email, phone) in enumerate(cards_made):
        lines = ["---", "type: person", f"aliases: ['{title}']"]
        lines += [f"email: {email}"] if email else []
        lines += [f"phone: '{phone}'"] if phone else []
        (root / "people" / f"c{k}.md").write_text("\n".join([*lines, "---", ""]), encoding="utf-8")
    schema = load_schema(root)

    def ask():
        vault = Vault.open(root)
        values = {"email": asked} if "@" in asked else {"phone": asked} if asked[0].isdigit() else {}
        return (
            cards.identity_matches(vault, schema, "person", values) if values else [],
            names.name_matches(vault, schema, [asked], qualified=True),
            variants.matches(vault, schema, asked),
            cards.alias_matches(vault, schema, asked),
        )

    without = ask()
    build_index(root)
    assert ask() == without
