"""A careless agent's month, generated deterministically, with a ledger of the truth.

Thirty people, each with the names an agent hears them by (letter case,
accents left out, a nickname heard together with an email), identity
values in several spellings (``Dana@ACME.com``, ``030 1234567`` and ``+49 30
1234567``), a role and a company that change during the month, Cyrillic and
Chinese names, and same-named strangers (two Maria Garcias, two Alex Kims)
told apart only by their email or phone.

Each day a daily note is written, and the agent records the day's facts
from it with one ``card.py batch`` of ``remember`` lines (``--source`` the
note), without searching first.  Every seventh day it also re-reads an old
note (older roles and companies).  When a line is ambiguous the agent does
what the message says: it tries again, then creates the card under
``suggested_title`` with ``--new``.  :class:`Ledger` records which entity
each written card received facts about.

A person is met first by full name with an email; a nickname comes with an
email the first time it is heard.  A card made from a variant that shares
nothing with the person's card (``Bob`` alone, before anything else) is
left to the name-variant issue.
"""

from __future__ import annotations

import datetime
import json
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

FIRST_DAY = datetime.date(2026, 11, 1)
DAYS = 30


@dataclass
class Person:
    key: str
    title: str
    names: list[str]  # what the agent may call them with no identity value
    emails: list[str]  # spellings of one address
    phones: list[str] = field(default_factory=list)  # spellings of one number
    nickname: str | None = None  # heard only with an email the first time
    roles: list[tuple[int, str]] = field(default_factory=list)  # (from day, role)
    companies: list[tuple[int, str]] = field(default_factory=list)
    stranger: bool = False  # shares a name with another person: always given with an identity value

    def value(self, timeline: list[tuple[int, str]], day: int) -> str | None:
        current = None
        for start, value in timeline:
            if start <= day:
                current = value
        return current


ROLES = ["Engineer", "Lead", "Manager", "Director", "VP", "CTO", "Advisor"]
COMPANIES = ["Acme", "Initech", "Hooli", "Globex", "Umbrella", "Stark", "Wayne"]


def people(seed: int = 25) -> list[Person]:
    """The month's thirty people (deterministic for a seed)."""
    rng = random.Random(seed)
    base = [
        ("Dana Reyes", ["dana reyes", "DANA REYES"], None),
        ("José García", ["Jose Garcia", "josé garcía", "JOSE GARCIA"], None),
        ("Robert Smith", ["robert smith"], "Bob"),
        ("Katherine Lee", ["katherine lee"], "Kate"),
        ("Anna-Lena Schäfer", ["Anna-Lena Schafer", "anna-lena schäfer"], None),
        ("Мария Иванова", ["мария иванова", "МАРИЯ ИВАНОВА"], None),
        ("陈伟", ["陈伟"], None),
        ("Søren Kierkegaard", ["Soren Kierkegaard"], None),
        ("Zoë Brooks", ["Zoe Brooks", "zoë brooks"], None),
        ("Ngozi Okafor", ["ngozi okafor"], None),
        ("Léa Dubois", ["Lea Dubois"], None),
        ("Hiroshi Tanaka", ["hiroshi tanaka"], None),
        ("Priya Natarajan", ["PRIYA NATARAJAN"], None),
        ("Tom Lindqvist", ["tom lindqvist"], None),
        ("Omar Haddad", ["omar haddad"], None),
        ("Grace Liu", ["grace liu"], None),
        ("William Turner", ["william turner"], "Bill"),
        ("Fatima Zahra", ["fatima zahra"], None),
        ("Ivan Petrov", ["ivan petrov"], None),
        ("Chloé Martin", ["Chloe Martin"], None),
        ("Dmitri Volkov", ["dmitri volkov"], None),
        ("Aiko Sato", ["aiko sato"], None),
        ("Lars Eriksen", ["lars eriksen"], None),
        ("Nina Park", ["nina park"], None),
        ("Ben Carter", ["ben carter"], None),
        ("Sofia Marchetti", ["sofia marchetti"], None),
    ]
    found = []
    for number, (title, names, nickname) in enumerate(base):
        local = title.split()[0].lower().encode("ascii", "ignore").decode() or f"p{number}"
        address = f"{local}.{number}@example.org"
        found.append(
            Person(
                key=f"p{number}",
                title=title,
                names=[title, *names],
                emails=[address, address.upper(), address.capitalize()],
                phones=[f"+49 30 55{number:05d}", f"030 55{number:05d}", f"0049 30 55{number:05d}"],
                nickname=nickname,
            )
        )
    strangers = [
        ("Maria Garcia", "maria@acme.example", "Acme"),
        ("Maria Garcia", "maria@hooli.example", "Hooli"),
        ("Alex Kim", "alex@globex.example", "Globex"),
        ("Alex Kim", "akim@wayne.example", "Wayne"),
    ]
    for number, (title, address, company) in enumerate(strangers, start=len(base)):
        found.append(
            Person(
                key=f"p{number}",
                title=title,
                names=[title],
                emails=[address, address.upper()],
                companies=[(1, company)],
                stranger=True,
            )
        )
    for person in found:  # a role (and for most a company) that changes once or twice in the month
        changes = sorted(rng.sample(range(2, DAYS), rng.randint(1, 2)))
        person.roles = [(1, rng.choice(ROLES))] + [(day, rng.choice(ROLES)) for day in changes]
        if not person.companies:
            person.companies = [(1, rng.choice(COMPANIES))] + [(changes[-1], rng.choice(COMPANIES))]
    return found


@dataclass
class Fact:
    """One fact the agent takes from the note of ``day`` about ``person``."""

    day: int
    person: Person
    name: str
    fields: dict


def facts_of_day(persons: list[Person], day: int, rng: random.Random, known: set[str]) -> list[Fact]:
    """The facts the note of ``day`` gives (``known``: the people the agent
    has met, and the nicknames it has heard with an email already)."""
    chosen = rng.sample(persons, 8)
    found = []
    for person in chosen:
        fields = {"role": person.value(person.roles, day), "company": f"[[{person.value(person.companies, day)}]]"}
        name = rng.choice(person.names)
        if person.nickname and rng.random() < 0.4:
            name = person.nickname
        first = person.key not in known  # met for the first time: the full name and an address
        if first:
            name = person.title
            known.add(person.key)
        with_identity = (
            first or person.stranger or rng.random() < 0.6 or (name == person.nickname and name not in known)
        )
        if with_identity:
            if rng.random() < 0.7:
                fields["email"] = rng.choice(person.emails)
            elif person.phones:
                fields["phone"] = rng.choice(person.phones)
            else:
                fields["email"] = rng.choice(person.emails)
            if name == person.nickname:
                fields["email"] = rng.choice(person.emails)  # a nickname first comes with the address
                known.add(name)
        if day == 1 or rng.random() < 0.2:
            fields["description"] = f"Met through {person.value(person.companies, day)}"
        found.append(Fact(day, person, name, fields))
    return found


class Ledger:
    """Which entity each card received facts about, and what the agent saw."""

    def __init__(self):
        self.cards: dict[str, set[str]] = {}  # card path -> entity keys written there
        self.entity_cards: dict[str, set[str]] = {}  # entity key -> card paths
        self.ambiguous = 0
        self.unresolved: list[Fact] = []
        self.processes = 0
        self.last_day: dict[str, int] = {}  # entity key -> the newest day a fact about it was given

    def wrote(self, fact: Fact, path: str) -> None:
        self.cards.setdefault(path, set()).add(fact.person.key)
        self.entity_cards.setdefault(fact.person.key, set()).add(path)
        self.last_day[fact.person.key] = max(self.last_day.get(fact.person.key, 0), fact.day)


def _line(fact: Fact, source: str) -> dict:
    fields = {"description": f"{fact.person.title}", "status": "active", **fact.fields}
    return {"op": "remember", "type": "person", "title": fact.name, "fields": fields, "source": source}


def run_month(vault: Path, card: Path, seed: int = 25) -> tuple[list[Person], Ledger]:
    """Play the month on ``vault`` (a vault with the example schema); the
    people and the ledger."""
    rng = random.Random(seed)
    persons = people(seed)
    ledger = Ledger()
    known: set[str] = set()
    notes: dict[int, list[Fact]] = {}
    for day in range(1, DAYS + 1):
        date = FIRST_DAY + datetime.timedelta(days=day - 1)
        source = date.isoformat()
        (vault / "daily").mkdir(exist_ok=True)
        (vault / "daily" / f"{source}.md").write_text(f"# {source}\n", encoding="utf-8")
        facts = facts_of_day(persons, day, rng, known)
        notes[day] = facts
        todo = [(fact, source) for fact in facts]
        if day % 7 == 0:  # an old note read again: older roles and companies
            old = rng.randint(1, day - 3)
            todo += [(fact, (FIRST_DAY + datetime.timedelta(days=old - 1)).isoformat()) for fact in notes[old]]
        ops = "\n".join(json.dumps(_line(fact, src), ensure_ascii=False) for fact, src in todo) + "\n"
        data = _card(card, vault, date, ["batch"], ops, ledger)
        for (fact, src), result in zip(todo, data["results"], strict=True):
            if result.get("action") in ("created", "updated", "unchanged"):
                ledger.wrote(fact, result["path"])
            elif result.get("action") == "ambiguous":
                ledger.ambiguous += 1
                _resolve(card, vault, date, fact, src, ledger)
            else:
                raise AssertionError(f"day {day}: {fact.name}: {result}")
    return persons, ledger


def _resolve(card: Path, vault: Path, date, fact: Fact, source: str, ledger: Ledger) -> None:
    """What an agent does with ``ambiguous``, as the message says: once
    more as it was, then ``--new`` under ``suggested_title``."""
    line = _line(fact, source)
    words = [f"{k}={v}" for k, v in line["fields"].items()]
    data = _card(card, vault, date, ["remember", "person", fact.name, *words, "--source", source], None, ledger)
    if data["action"] == "ambiguous" and data["suggested_title"]:
        title = data["suggested_title"]
        data = _card(
            card, vault, date, ["remember", "person", title, *words, "--source", source, "--new"], None, ledger
        )
    if data["action"] in ("created", "updated", "unchanged"):
        ledger.wrote(fact, data["path"])
    else:
        ledger.unresolved.append(fact)


def _card(card: Path, vault: Path, date, args: list[str], stdin: str | None, ledger: Ledger) -> dict:
    ledger.processes += 1
    proc = subprocess.run(
        [sys.executable, str(card), *args, "--vault", str(vault), "--json", "--today", date.isoformat()],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return json.loads(proc.stdout)
