#!/usr/bin/env python3
"""A month of an agent's memory, three ways, measured against the truth.

A deterministic generator writes a month (30 days) of facts about 30
entities with a ground-truth ledger: people met by full name and email,
then heard of by name variants (``Bob`` for Robert Smith, ``R. Smith``,
``Anna-Lena Schaefer`` for Schäfer, ``Maria Ivanova`` for Мария Иванова,
accents left out), identity values in several spellings, job and phone
changes, two pairs of same-named strangers told apart by their email, a
project renamed half way, and a decision replaced by another.  Each day a
daily note is written and an agent records the day's facts through the
CLI, by one of three policies:

* **legacy**: ``card.py new``; on a refusal, ``card.py set`` on the first
  card the refusal names (what SKILL.md used to say);
* **careful**: looks up first (``search.py --identity`` for each identity
  value, then ``search.py NAME`` for a card whose name is exactly it), then
  ``set`` or ``new``;
* **careless**: only ``card.py remember`` with ``--source`` (one
  ``card.py batch`` a day); on ``ambiguous`` it takes ``--into`` the first
  match when that match lists no conflicts, else ``--new`` with
  ``suggested_title``; ``dedup.py --apply`` every seventh day (identity
  groups only).

Printed per policy: entities on exactly one live card, false merges (a card
holding facts of two entities), current values right, History lines right
(every earlier value of a field is in the card's ``## History``), facts
lost, the health score, and the duplicates ``dedup.py`` suggests at the end
against those left.

Usage: python3 bench/memory_loop.py [--policy NAME ...] [--seed N] [--keep DIR]
Never run in CI (whole processes, minutes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "skills" / "autograph" / "scripts"
FIRST = datetime.date(2026, 11, 1)
DAYS = 30


@dataclass
class Entity:
    key: str
    kind: str  # person, project, decision
    title: str
    variants: list[str] = field(default_factory=list)  # names heard later, with no identity value
    emails: list[str] = field(default_factory=list)
    phones: list[list[str]] = field(default_factory=list)  # [(day, spellings)] as (from day, [spellings])
    roles: list[tuple[int, str]] = field(default_factory=list)
    companies: list[tuple[int, str]] = field(default_factory=list)
    renamed: tuple[int, str] | None = None  # (day, new title) for a project
    replaced_by: tuple[int, str] | None = None  # (day, entity key) for a decision

    def at(self, timeline, day):
        value = None
        for start, item in timeline:
            if start <= day:
                value = item
        return value


PEOPLE = [
    ("Robert Smith", ["Bob", "R. Smith", "robert smith"]),
    ("Anna-Lena Schäfer", ["Anna-Lena Schaefer", "anna-lena schafer"]),
    ("Мария Иванова", ["Maria Ivanova", "мария иванова"]),
    ("José García", ["Jose Garcia", "Pepe García"]),
    ("Katherine Lee", ["Kate Lee", "K. Lee"]),
    ("Dmitri Volkov", ["Дмитрий Волков", "Dima Volkov"]),
    ("Søren Kierkegaard", ["Soren Kierkegaard"]),
    ("William Turner", ["Bill Turner", "W. Turner"]),
    ("陈伟", []),
    ("Zoë Brooks", ["Zoe Brooks"]),
    ("Ngozi Okafor", ["N. Okafor"]),
    ("Léa Dubois", ["Lea Dubois"]),
    ("Hiroshi Tanaka", ["hiroshi tanaka"]),
    ("Priya Natarajan", ["P. Natarajan"]),
    ("Tom Lindqvist", ["Thomas Lindqvist"]),
    ("Omar Haddad", ["omar haddad"]),
    ("Grace Liu", ["G. Liu"]),
    ("Fatima Zahra", ["fatima zahra"]),
    ("Ivan Petrov", ["Иван Петров"]),
    ("Chloé Martin", ["Chloe Martin"]),
    ("Aiko Sato", ["aiko sato"]),
    ("Lars Eriksen", ["L. Eriksen"]),
]
STRANGERS = [("Maria Garcia", "Acme"), ("Maria Garcia", "Hooli"), ("Alex Kim", "Globex"), ("Alex Kim", "Wayne")]
ROLES = ["Engineer", "Lead", "Manager", "Director", "VP", "CTO", "Advisor"]
COMPANIES = ["Acme", "Initech", "Hooli", "Globex", "Umbrella", "Stark", "Wayne"]


def entities(seed: int) -> list[Entity]:
    rng = random.Random(seed)
    found = []
    for n, (title, names) in enumerate(PEOPLE):
        local = re.sub(r"[^a-z]", "", title.split()[0].lower()) or f"p{n}"
        address = f"{local}.{n}@example.org"
        changes = sorted(rng.sample(range(4, DAYS), 2))
        phones = [[f"+49 30 55{n:05d}", f"030 55{n:05d}", f"0049 30 55{n:05d}"]]
        found.append(
            Entity(
                f"p{n}",
                "person",
                title,
                names,
                [address, address.upper(), address.capitalize()],
                [(1, phones[0]), (changes[1], [f"+49 40 77{n:05d}", f"040 77{n:05d}"])],
                [(1, rng.choice(ROLES)), (changes[0], rng.choice(ROLES))],
                [(1, rng.choice(COMPANIES)), (changes[1], rng.choice(COMPANIES))],
            )
        )
    for n, (title, company) in enumerate(STRANGERS, start=len(found)):
        address = f"{title.split()[0].lower()}@{company.lower()}.example"
        found.append(
            Entity(
                f"p{n}", "person", title, [], [address, address.upper()], [], [(1, rng.choice(ROLES))], [(1, company)]
            )  # fmt: skip
        )
    found.append(Entity("atlas", "project", "Project Atlas", renamed=(15, "Project Orion")))
    found.append(Entity("vega", "project", "Project Vega"))
    found.append(Entity("pg", "decision", "Use Postgres for events", replaced_by=(18, "kafka")))
    found.append(Entity("kafka", "decision", "Use Kafka for events"))
    return found


@dataclass
class Fact:
    day: int
    entity: Entity
    name: str
    fields: dict
    op: str = "fact"  # fact, rename, replace


def month(seed: int) -> dict[int, list[Fact]]:
    """The facts of each day (at least 10 a day)."""
    rng = random.Random(seed + 1)
    all_entities = entities(seed)
    people = [e for e in all_entities if e.kind == "person"]
    met: set[str] = set()
    days: dict[int, list[Fact]] = {}
    for day in range(1, DAYS + 1):
        facts = []
        for person in rng.sample(people, 10):
            fields = {"role": person.at(person.roles, day), "company": f"[[{person.at(person.companies, day)}]]"}
            if person.key not in met or not person.variants or rng.random() < 0.5:
                name = person.title  # met first by full name and an address
                fields["email"] = rng.choice(person.emails)
                met.add(person.key)
            else:
                name = rng.choice(person.variants)
            phones = person.at(person.phones, day)
            if phones and "email" in fields and rng.random() < 0.4:  # a new phone comes in a mail's signature
                fields["phone"] = rng.choice(phones)
            facts.append(Fact(day, person, name, fields))
        for entity in all_entities:
            if entity.kind == "project" and entity.renamed and day == entity.renamed[0]:
                facts.append(Fact(day, entity, entity.title, {"new_title": entity.renamed[1]}, "rename"))
            if entity.kind == "project" and (day == 1 or rng.random() < 0.3):
                title = entity.title if not entity.renamed or day < entity.renamed[0] else entity.renamed[1]
                facts.append(Fact(day, entity, title, {"status": "active"}))
            if entity.kind == "decision" and day in (2, 18):
                if entity.key == "pg" and day == 2 or entity.key == "kafka" and day == 18:
                    facts.append(Fact(day, entity, entity.title, {"status": "accepted"}))
                if entity.replaced_by and day == entity.replaced_by[0]:
                    facts.append(Fact(day, entity, entity.title, {"by": "Use Kafka for events"}, "replace"))
        days[day] = facts
    return days


DESCRIPTIONS = {"person": "Someone met at work", "project": "A project", "decision": "A decision"}


class Agent:
    """Runs the CLI on one vault and keeps the ledger: which card each
    entity's facts went to."""

    def __init__(self, vault: Path, policy: str):
        self.vault, self.policy = vault, policy
        self.cards: dict[str, set[str]] = {}  # entity key -> card paths written
        self.processes = 0
        self.moved: dict[str, str] = {}  # old path -> new path (rename, merge)

    def run(self, script: str, *args: str, stdin: str | None = None, date=None) -> tuple[int, dict]:
        self.processes += 1
        extra = ["--today", date.isoformat()] if date and script in ("card.py", "dedup.py") else []
        proc = subprocess.run(
            [sys.executable, str(SCRIPTS / script), *args, "--vault", str(self.vault), "--json", *extra],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )
        try:
            return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}
        except ValueError:
            return proc.returncode, {}

    def wrote(self, fact: Fact, path: str | None) -> None:
        if path:
            self.cards.setdefault(fact.entity.key, set()).add(path)

    def words(self, fact: Fact) -> list[str]:
        fields = {"description": DESCRIPTIONS[fact.entity.kind], **fact.fields}
        if fact.entity.kind in ("project", "decision"):
            fields.setdefault("status", "active" if fact.entity.kind == "project" else "accepted")
        else:
            fields.setdefault("status", "active")
        return [f"{k}={v}" for k, v in fields.items()]

    def special(self, fact: Fact, date, source: str) -> bool:
        if fact.op == "rename":
            old = next(iter(self.cards.get(fact.entity.key, [])), None)
            if old:
                new = str(Path(old).with_name(fact.fields["new_title"] + ".md"))
                self.run("graph.py", "mv", old, new, "--apply")
                self.run("card.py", "set", new, f"aliases=[{fact.entity.title}]", date=date)
                self.cards[fact.entity.key] = {new}
            return True
        if fact.op == "replace":
            self.run("card.py", "retire", fact.entity.title, "--by", fact.fields["by"], "--source", source, date=date)
            return True
        return False

    def day(self, day: int, facts: list[Fact]) -> None:
        date = FIRST + datetime.timedelta(days=day - 1)
        source = date.isoformat()
        (self.vault / "daily").mkdir(exist_ok=True)
        lines = [f"- {f.name}: {', '.join(self.words(f))}" for f in facts]
        (self.vault / "daily" / f"{source}.md").write_text(f"# {source}\n\n" + "\n".join(lines) + "\n", "utf-8")
        getattr(self, self.policy)(facts, date, source)
        if self.policy == "careless" and day % 7 == 0:
            code, data = self.run("dedup.py", "--apply", date=date)
            for merge in data.get("merged", []):
                for member in merge.get("members", []):
                    self.moved[member] = merge["canonical"]

    def legacy(self, facts, date, source):
        for fact in facts:
            if self.special(fact, date, source):
                continue
            kind = fact.entity.kind
            code, data = self.run("card.py", "new", kind, fact.name, *self.words(fact), date=date)
            refused = data.get("refused") or {}
            if code == 1 and refused.get("matches"):
                path = refused["matches"][0]["path"]
                self.run("card.py", "set", path, *[w for w in self.words(fact) if not w.startswith("description=")],
                         date=date)  # fmt: skip
                self.wrote(fact, path)
            else:
                self.wrote(fact, data.get("path") if code == 0 else None)

    def careful(self, facts, date, source):
        for fact in facts:
            if self.special(fact, date, source):
                continue
            path = None
            for key in ("email", "phone"):
                if key in fact.fields:
                    code, data = self.run("search.py", "--identity", f"{key}={fact.fields[key]}")
                    live = [m for m in data.get("matches", []) if not m.get("retired")]
                    if live:
                        path = live[0]["path"]
                        break
            if path is None:
                code, data = self.run("search.py", fact.name)
                exact = [h for h in data.get("hits", []) if h.get("exact") and h.get("type") == fact.entity.kind]
                path = exact[0]["path"] if exact else None
            words = [w for w in self.words(fact) if not w.startswith("description=")]
            if path:
                self.run("card.py", "set", path, *words, "--source", source, date=date)
                self.wrote(fact, path)
            else:
                code, data = self.run("card.py", "new", fact.entity.kind, fact.name, *self.words(fact),
                                      "--source", source, date=date)  # fmt: skip
                self.wrote(fact, data.get("path") if code == 0 else None)

    def careless(self, facts, date, source):
        chunk: list[Fact] = []
        for fact in facts:  # one batch for the facts between two renames or replacements
            if fact.op == "fact":
                chunk.append(fact)
                continue
            self.batch(chunk, date, source)
            chunk = []
            self.special(fact, date, source)
        self.batch(chunk, date, source)

    def batch(self, plain, date, source):
        if not plain:
            return
        lines = []
        for fact in plain:
            fields = dict(kv.split("=", 1) for kv in self.words(fact))
            lines.append({"op": "remember", "type": fact.entity.kind, "title": fact.name, "fields": fields,
                          "source": source})  # fmt: skip
        code, data = self.run("card.py", "batch", stdin="\n".join(json.dumps(x, ensure_ascii=False) for x in lines),
                              date=date)  # fmt: skip
        for fact, result in zip(plain, data.get("results", []), strict=False):
            if result.get("action") in ("created", "updated", "unchanged"):
                self.wrote(fact, result["path"])
            elif result.get("action") == "ambiguous":
                matches = result.get("matches") or []
                words = self.words(fact)
                if matches and not matches[0]["conflicts"]:
                    _, again = self.run("card.py", "remember", fact.entity.kind, fact.name, *words, "--into",
                                        matches[0]["path"], "--source", source, date=date)  # fmt: skip
                else:
                    title = result.get("suggested_title") or f"{fact.name} (2)"
                    _, again = self.run("card.py", "remember", fact.entity.kind, title, *words, "--new",
                                        "--source", source, date=date)  # fmt: skip
                self.wrote(fact, again.get("path") if again.get("action") in ("created", "updated", "unchanged")
                           else None)  # fmt: skip


def _front(text: str) -> str:
    return text.split("\n---", 1)[0] if text.startswith("---") else ""


def measure(agent: Agent, days: dict[int, list[Fact]]) -> dict:
    vault = agent.vault

    def final(path: str) -> str:
        seen = set()
        while path in agent.moved and path not in seen:
            seen.add(path)
            path = agent.moved[path]
        return path

    owner: dict[str, set[str]] = {}
    one_card = 0
    entity_card: dict[str, str] = {}
    all_entities = {f.entity.key: f.entity for facts in days.values() for f in facts}
    for key in all_entities:
        live = {final(p) for p in agent.cards.get(key, set())}
        live = {p for p in live if (vault / p).exists()}
        for p in live:
            owner.setdefault(p, set()).add(key)
        if len(live) == 1:
            one_card += 1
            entity_card[key] = next(iter(live))
    false_merges = sum(1 for keys in owner.values() if len(keys) > 1)
    right = wrong = history_ok = history_bad = lost = 0
    for key, entity in all_entities.items():
        if entity.kind != "person" or key not in entity_card:
            continue
        text = (vault / entity_card[key]).read_text(encoding="utf-8")
        given = [(f.day, f.fields) for facts in days.values() for f in facts if f.entity.key == key]
        last = max(day for day, _ in given)
        for name, timeline in (("role", entity.roles), ("company", entity.companies)):
            want = entity.at(timeline, last)
            want = f"[[{want}]]" if name == "company" else want
            got = re.search(rf"^{name}: \"?(.*?)\"?$", _front(text), re.M)
            if got and got.group(1) == want:
                right += 1
            else:
                wrong += 1
            olds = {fields[name] for _, fields in given if name in fields} - {want}
            for old in olds:
                if old in text.split("## History", 1)[-1]:
                    history_ok += 1
                else:
                    history_bad += 1
        for _, fields in given:
            for name, value in fields.items():
                if str(value) not in text and name not in ("email", "phone"):
                    lost += 1
    code, health = agent.run("graph.py", "health")
    code, dedup = agent.run("dedup.py")
    suggested = {tuple(sorted(s["cards"])) for s in dedup.get("suggestions", [])} | {
        tuple(sorted(g["members"][i]["path"] for i in range(len(g["members"])))) for g in dedup.get("groups", [])
    }
    left = [sorted({final(p) for p in agent.cards.get(k, set())}) for k in all_entities]
    left = [paths for paths in left if len(paths) > 1]
    seen = sum(1 for paths in left if any(set(paths) & set(pair) and len(set(pair) & set(paths)) > 1
                                          for pair in suggested))  # fmt: skip
    return {
        "policy": agent.policy,
        "entities": len(all_entities),
        "on_one_card": one_card,
        "false_merges": false_merges,
        "values_right": right,
        "values_wrong": wrong,
        "history_right": history_ok,
        "history_missing": history_bad,
        "facts_lost": lost,
        "health": health.get("score"),
        "duplicates_left": len(left),
        "duplicates_suggested": seen,
        "processes": agent.processes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policy", action="append", choices=["legacy", "careful", "careless"])
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--keep", type=Path, help="keep the vaults in this folder")
    args = parser.parse_args(argv)
    days = month(args.seed)
    print(f"{sum(len(f) for f in days.values())} facts over {DAYS} days, seed {args.seed}")
    results = []
    with tempfile.TemporaryDirectory(prefix="autograph-loop-") as tmp:
        for policy in args.policy or ["legacy", "careful", "careless"]:
            vault = Path(tmp) / policy
            vault.mkdir()
            shutil.copy(REPO / "schema.example.json", vault / "schema.json")
            (vault / "companies").mkdir()
            for company in COMPANIES:  # the companies facts link to exist, as in a vault in use
                (vault / "companies" / f"{company}.md").write_text(
                    f"---\ntype: company\ndescription: {company}, a company\n---\n", encoding="utf-8"
                )
            agent = Agent(vault, policy)
            for day in range(1, DAYS + 1):
                agent.day(day, days[day])
            results.append(measure(agent, days))
            print(json.dumps(results[-1], ensure_ascii=False))
            if args.keep:
                shutil.copytree(vault, args.keep / policy, dirs_exist_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
