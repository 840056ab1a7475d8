"""A labelled vault of people cards with known duplicates, for dedup tests.

:func:`build` writes, under a folder, cards of ``people`` entities: each
has a main card and, for a share of them, one or two duplicate cards under
other file names, whose identity values are written in other forms (email
in other case, with spaces or ``mailto:``; handle with or without ``@`` and
in other case; phone in national or international form, with other
separators).  A duplicate never holds a different value for a field its
original holds (that would be two people, BR-28), and shares at least one
identity key with it; some duplicates share only a handle (weak evidence),
and five hold no identity value at all (found by name only: they must stay
apart, so they are the misses that bound recall below 100%).

Traps that must not merge:

* same-named different people: cards whose file name (in another folder)
  and aliases equal another entity's name, with their own email;
* shared company numbers: employees of a company whose cards hold the
  company's switchboard under ``phone``, more cards than ``max_shared``;
* small offices: three people sharing one number (under ``max_shared``)
  whose emails differ, so the conflict rule keeps them apart.

Notes under ``meetings/`` link to cards by file name, some with an alias,
so backlinks decide canonical cards and links must follow a merge.

:func:`build` returns a :class:`Labels`: ``entity`` (path -> entity id),
``true_pairs`` (unordered pairs of paths of one entity).  :func:`score`
gives precision and recall of predicted groups against them.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = {
    "node_types": {
        "person": {"folder": "people", "status": ["active", "superseded"]},
        "contact": {"folder": "contacts", "status": ["active", "superseded"]},
    },
    "identity": {
        "match_fields": {"email": "email", "phone": "phone", "handle": "handle", "telegram": "handle"},
        "default_country": "+49",
        "max_shared": 8,
    },
    "conflict_fields": {"fields": ["company", "role"]},
}

FIRST = [
    "Alex", "Sam", "Jordan", "Taylor", "Morgan", "Casey", "Robin", "Jamie", "Avery", "Riley", "Quinn", "Drew",
    "Kim", "Lee", "Noor", "Ines", "Mara", "Jonas", "Lena", "Paul", "Ada", "Omar", "Yuki", "Zoe", "Ivan", "Olga",
    "Chen", "Priya", "Rafael", "Sofia", "Tomas", "Elif",
]  # fmt: skip
LAST = [
    "Example", "Smith", "Meyer", "Schmidt", "Novak", "Garcia", "Rossi", "Kowalski", "Tanaka", "Nguyen", "Okafor",
    "Larsen", "Dubois", "Silva", "Cohen", "Weber", "Fischer", "Wagner", "Becker", "Hoffmann", "Keller", "Berg",
    "Lund", "Costa", "Moreau", "Haas", "Vogel", "Ito",
]  # fmt: skip
ROLES = ["engineer", "designer", "manager", "analyst", "founder", "researcher", "sales", "support"]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"]


@dataclass
class Person:
    id: int
    first: str
    last: str
    email: str
    handle: str
    phone: str  # national digits after the trunk 0, e.g. "30 5551234"
    role: str
    company: str


@dataclass
class Labels:
    """What the generator knows: ``entity`` maps each card's vault path to
    its entity id; ``true_pairs`` holds every unordered pair of paths of one
    entity (frozensets); ``links`` maps each link-holding note to the card
    paths its links point to."""

    entity: dict[str, int] = field(default_factory=dict)
    links: dict[str, list[str]] = field(default_factory=dict)

    @property
    def true_pairs(self) -> set[frozenset]:
        by_entity: dict[int, list[str]] = {}
        for path, eid in self.entity.items():
            by_entity.setdefault(eid, []).append(path)
        return {frozenset(p) for paths in by_entity.values() for p in itertools.combinations(sorted(paths), 2)}


def score(groups: list[list[str]], labels: Labels) -> tuple[float, float, set, set]:
    """``(precision, recall, false pairs, missed pairs)`` of predicted
    ``groups`` (lists of paths) against ``labels.true_pairs``."""
    predicted = {frozenset(p) for g in groups for p in itertools.combinations(sorted(g), 2)}
    truth = labels.true_pairs
    hits = predicted & truth
    precision = len(hits) / len(predicted) if predicted else 1.0
    recall = len(hits) / len(truth) if truth else 1.0
    return precision, recall, predicted - truth, truth - predicted


def _email_variant(rng: random.Random, email: str) -> str:
    choice = rng.randrange(4)
    if choice == 0:
        return email.upper()
    if choice == 1:
        local, domain = email.split("@")
        return f"{local.title()}@{domain.upper()}"
    if choice == 2:
        return f"  {email}  "
    return f"mailto:{email}"


def _handle_variant(rng: random.Random, handle: str) -> str:
    return rng.choice([f"@{handle}", handle.upper(), f"@{handle.title()}", f" {handle} "])


def _phone_form(rng: random.Random, phone: str) -> str:
    area, number = phone.split(" ")
    return rng.choice(
        [
            f"+49 {area} {number}",
            f"0{area} {number}",
            f"0049 {area} {number}",
            f"(0{area}) {number[:3]}-{number[3:]}",
            f"+49-{area}-{number}",
            f"0{area}/{number}",
        ]
    )


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _card(kind: str, fields: dict[str, str], body: list[str]) -> str:
    lines = ["---", f"type: {kind}"]
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{key}:")
            lines.extend(f"  - {_quote(item)}" for item in value)
        else:
            lines.append(f"{key}: {_quote(value)}")
    lines.append("---")
    return "\n".join(lines + body) + "\n"


def _body(rng: random.Random, person: Person, tag: str) -> list[str]:
    lines = [f"{person.first} works as {person.role} ({tag})."]
    if rng.random() < 0.6:
        lines += ["", "## Notes", f"- met {person.first} at event {rng.randrange(1000)} ({tag})"]
    if rng.random() < 0.4:
        lines += ["", "## Log", f"- 2026-0{rng.randrange(1, 10)}-1{rng.randrange(10)}: call about {tag}"]
    return lines


def build(root: Path, people: int = 320, seed: int = 7) -> Labels:
    """Write the labelled vault under ``root`` (created) and its
    ``schema.json``; return the :class:`Labels`.  Deterministic per seed."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "schema.json").write_text(json.dumps(SCHEMA, indent=2), encoding="utf-8")
    labels = Labels()
    used: set[str] = set()

    def write(path: str, text: str, eid: int | None) -> None:
        assert path.lower() not in used, path
        used.add(path.lower())
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        if eid is not None:
            labels.entity[path] = eid

    persons = []
    for i in range(people):
        first, last = FIRST[i % len(FIRST)], LAST[(i * 7 + i // len(FIRST)) % len(LAST)]
        persons.append(
            Person(
                i,
                first,
                last,
                f"{first.lower()}.{last.lower()}{i}@example.org",
                f"{first.lower()}{last.lower()[:3]}{i}",
                f"{rng.choice(['30', '40', '89', '221', '711'])} {5550000 + i * 13}",
                rng.choice(ROLES),
                rng.choice(COMPANIES),
            )
        )

    names: dict[int, str] = {}
    cards_of: dict[int, list[str]] = {}
    for p in persons:
        name = f"{p.first} {p.last} {p.id}" if f"{p.first} {p.last}".lower() in used_names(used) else None
        name = name or f"{p.first} {p.last}"
        fields: dict = {}
        present = rng.sample(["email", "handle", "phone"], k=rng.randrange(2, 4))
        if "email" in present:
            fields["email"] = p.email
        if "handle" in present:
            fields[rng.choice(["handle", "telegram"])] = p.handle
        if "phone" in present:
            fields["phone"] = _phone_form(rng, p.phone)
        fields["role"] = p.role
        path = f"people/{name}.md"
        write(path, _card("person", fields, _body(rng, p, "main")), p.id)
        names[p.id] = name
        cards_of[p.id] = [path]
        if rng.random() < 0.45:
            for n in range(rng.choice([1, 1, 2])):
                dup: dict = {}
                shared = [k for k in ("email", "phone") if k in present]
                weak = [k for k in fields if k in ("handle", "telegram")]
                pick = rng.choice(shared + weak) if shared or weak else None
                if pick == "email":
                    dup["email"] = _email_variant(rng, p.email)
                elif pick == "phone":
                    dup["phone"] = _phone_form(rng, p.phone)
                elif pick is not None:
                    dup[pick] = _handle_variant(rng, p.handle)
                if rng.random() < 0.5 and pick in ("email", "phone") and weak:
                    dup[weak[0]] = _handle_variant(rng, p.handle)
                if rng.random() < 0.3:
                    dup["role"] = rng.choice(ROLES)  # a conflicting scalar: goes to History
                folder = rng.choice(["people", "contacts"])
                stem = [f"{p.first[0]}. {p.last}", f"{p.first} {p.last[0]}", f"{p.first.lower()}.{p.last.lower()}"][n]
                stem = f"{stem} {p.id}"
                dpath = f"{folder}/{stem}.md"
                write(dpath, _card(rng.choice(["person", "contact"]), dup, _body(rng, p, f"dup{n}")), p.id)
                cards_of[p.id].append(dpath)

    # duplicates found by nothing but a name: no identity value at all, so
    # never grouped (BR-30); they count as true pairs, and as misses
    for p in rng.sample(persons, 5):
        path = f"contacts/{p.first} {p.last} (name only) {p.id}.md"
        write(path, _card("contact", {"role": p.role}, [f"{p.first} again, no contact details."]), p.id)
        cards_of[p.id].append(path)

    # same-named different people: another card with the same file name in
    # another folder (and the name as an alias), their own identity values
    eid = people
    for p in rng.sample(persons, 25):
        other = {
            "email": f"{p.first.lower()}.{p.last.lower()}@other{eid}.example",
            "aliases": [names[p.id]],
            "role": rng.choice(ROLES),
        }
        path = f"contacts/{names[p.id]}.md"
        if path.lower() in used:
            continue
        write(path, _card("contact", other, [f"A different {p.first} {p.last}."]), eid)
        eid += 1

    # shared company numbers: a switchboard held by more cards than max_shared
    for c, company in enumerate(COMPANIES[:3]):
        switchboard = f"{30 + c} 9990000"
        for k in range(12):
            fields = {
                "email": f"staff{k}@{company.lower()}.example",
                "phone": _phone_form(rng, switchboard),
                "company": company,
            }
            write(f"contacts/{company} staff {k}.md", _card("contact", fields, [f"Works at {company}."]), eid)
            eid += 1
    # a small office: three people, one number (under max_shared), own emails
    for k in range(3):
        fields = {"email": f"desk{k}@smalloffice.example", "phone": "+49 40 7770000"}
        write(f"contacts/Small office {k}.md", _card("contact", fields, ["Small office desk."]), eid)
        eid += 1

    # notes that link to cards by file name, some with an alias
    for m in range(60):
        chosen = rng.sample(persons, 4)
        lines, targets = [f"# Meeting {m}", ""], []
        for p in chosen:
            path = rng.choice(cards_of[p.id])
            stem = path.rsplit("/", 1)[-1][:-3]
            folder = path.split("/")[0]
            link = f"[[{folder}/{stem}]]" if stem == names[p.id] else f"[[{stem}]]"
            if rng.random() < 0.3:
                link = link[:-2] + f"|{p.first}]]"
            lines.append(f"- talked to {link}")
            targets.append(path)
        note = f"meetings/Meeting {m}.md"
        write(note, "\n".join(lines) + "\n", None)
        labels.links[note] = targets
    return labels


def used_names(used: set[str]) -> set[str]:
    """File names (lower case, without folder and ``.md``) written so far."""
    return {path.rsplit("/", 1)[-1][:-3] for path in used}
