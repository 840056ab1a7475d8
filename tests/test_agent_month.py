"""A careless agent's month through card.py remember and batch (issue 25).

The agent never searches: it hands each day's facts to ``card.py batch``
and follows the message of an ambiguous line.  At the end every person is
on one card, no card holds facts of two people (same-named strangers
included), and every card says each person's newest role and company,
though old notes were read again after newer ones."""

from __future__ import annotations

import json
import re

from agent_month import DAYS, run_month
from conftest import REPO, SCRIPTS

CARD = SCRIPTS / "card.py"


def _property(text: str, name: str) -> str | None:
    match = re.search(rf"^{name}: (.*)$", text.split("\n---", 1)[0], re.M)
    return match.group(1).strip().strip('"') if match else None


def test_a_careless_month_leaves_one_card_per_person_with_the_newest_facts(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "schema.json").write_text((REPO / "schema.example.json").read_text(encoding="utf-8"), encoding="utf-8")
    persons, ledger = run_month(vault, CARD)
    by_key = {p.key: p for p in persons}

    assert ledger.unresolved == []
    split = {key: sorted(paths) for key, paths in ledger.entity_cards.items() if len(paths) > 1}
    assert split == {}, "a person's facts went to several cards"
    mixed = {path: sorted(keys) for path, keys in ledger.cards.items() if len(keys) > 1}
    assert mixed == {}, "a card got facts of two people"
    assert len(ledger.entity_cards) == len(persons)

    wrong = []
    for key, (path,) in ledger.entity_cards.items():
        person, day = by_key[key], ledger.last_day[key]
        text = (vault / path).read_text(encoding="utf-8")
        want = (person.value(person.roles, day), f"[[{person.value(person.companies, day)}]]")
        got = (_property(text, "role"), _property(text, "company"))
        if got != want:
            wrong.append((path, got, want))
    assert wrong == [], "an old note overwrote a newer fact"
    # the same-named strangers are two cards each, told apart by a title
    maria = sorted(p for p, keys in ledger.cards.items() if any(by_key[k].title == "Maria Garcia" for k in keys))
    assert len(maria) == 2 and "people/Maria Garcia.md" in maria
    # a day is one process; the ambiguous lines (a stranger's first fact) a few more
    assert ledger.processes <= DAYS + 3 * ledger.ambiguous
    print(json.dumps({"processes": ledger.processes, "ambiguous": ledger.ambiguous, "cards": len(ledger.cards)}))
