"""card.py and autograph/cards.py (issue 13): the update-in-place protocol.

The main test plays an agent over a stream of 520 generated facts about 50
people (updates, repeats, contradictions, names in other letter case, emails
in other case): every person ends with one card, every field with the latest
value, every earlier value in ``## History`` in order, and a repeat writes no
byte.  Then: surgical edits, refusals and exit codes, links, retire, and
hypothesis properties of ``field=value`` parsing and file names."""

from __future__ import annotations

import datetime
import difflib
import json
import os
import random
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from conftest import CORPORA, REPO, SCRIPTS, copy_tree, require
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

from autograph import cli
from autograph.memory import cards, names
from autograph.read import frontmatter as fm  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.schema.model import load_schema  # noqa: E402
from autograph.write import sections  # noqa: E402

CARD = SCRIPTS / "card.py"
DAY = datetime.date(2026, 12, 1)


def make_vault(tmp_path: Path, keep_days: float | None = None) -> Path:
    """A vault with the example schema; ``keep_days`` 0 keeps only the last
    journaled run (each run otherwise adds to every later write's pruning)."""
    root = tmp_path / "vault"
    root.mkdir()
    schema = json.loads((REPO / "schema.example.json").read_text(encoding="utf-8"))
    if keep_days is not None:
        schema["journal"]["keep_days"] = keep_days
    (root / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return root


def opened(root: Path):
    return Vault.open(root), load_schema(root)


def write(root: Path, plan) -> dict:
    assert plan.refused is None, plan.refused
    outcome = cli.carry_out(root, plan.edits, True, command="test_card", schema=load_schema(root))
    assert not outcome["conflicts"] and not outcome["failed"], outcome
    return outcome


def run_card(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CARD), *args, "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )


# ---------------------------------------------------------------------------
# The stream of facts

ROLES = ["CTO", "CEO", "VP, Sales", "Engineer", "Advisor: board", "yes", "01234"]
CITIES = ["Berlin", "München", "São Paulo", "東京", "New York", "Zürich #2"]
TAGS = ["team", "berlin", "investor", "friend", "ops"]


def fact_text(field: str, value) -> str:
    """The ``field=value`` an agent would type for a value."""
    if field == "tags":
        return "tags=[" + ", ".join(value) + "]"
    if field == "age":
        return f"age={value}"
    text = fm.format_scalar(value)
    return f"{field}={text}"


def random_value(rng: random.Random, field: str, person: int, serial: int):
    if field == "role":
        return rng.choice(ROLES)
    if field == "city":
        return rng.choice(CITIES)
    if field == "age":
        return rng.randint(20, 70)
    if field == "tags":
        return sorted(rng.sample(TAGS, rng.randint(1, 3)))
    if field == "phone":
        return f"+49 30 {person:03d} {serial:04d}"  # unique: a phone is an identity key
    return f"{rng.choice(['Acme', 'Globex', 'Initech'])} {rng.randint(1, 4)}"  # company


def stream(seed: int = 13, people: int = 50, facts: int = 520):
    """``(person, field, value)`` facts; about a third repeat the current value."""
    rng = random.Random(seed)
    current: dict[tuple[int, str], object] = {}
    out = []
    for serial in range(facts):
        person = rng.randrange(people) if serial >= people else serial
        field = rng.choice(["role", "city", "age", "tags", "phone", "company"])
        if (person, field) in current and rng.random() < 0.35:
            value = current[(person, field)]  # a repeat
        else:
            value = random_value(rng, field, person, serial)
        current[(person, field)] = value
        out.append((person, field, value))
    return out


def name_of(person: int, rng: random.Random) -> str:
    name = f"Person{person:02d} Example"
    return rng.choice([name, name.lower(), name.upper()])


def email_of(person: int, rng: random.Random) -> str:
    email = f"p{person:02d}@example.com"
    return rng.choice([email, email.upper(), " " + email.title()])


def test_stream_of_facts_leaves_one_card_and_one_current_value_each(tmp_path, monkeypatch):
    # what is tested is the cards, not the disk: the in-process writes skip
    # fsync (the store's durability has its own tests), the CLI runs keep it
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    root = make_vault(tmp_path, keep_days=0)
    rng = random.Random(7)
    facts = stream()
    expected: dict[int, dict] = {}
    history: dict[int, list[str]] = {}
    writes: dict[int, int] = {}
    paths: dict[int, str] = {}
    repeats = 0
    via_cli = set(range(5, len(facts), int(os.environ.get("CLI_EVERY", "60"))))  # a handful through the command line
    for serial, (person, field, value) in enumerate(facts):
        today = DAY + datetime.timedelta(days=serial // 12)
        words = [f"email={email_of(person, rng)}", "description=Someone we work with", fact_text(field, value)]
        name = name_of(person, rng)
        before = expected.get(person, {}).get(field)
        if serial in via_cli:
            proc = run_card(root, "new", "person", name, *words, "--today", today.isoformat())
            data = json.loads(proc.stdout)
            if proc.returncode == 1:
                assert person in paths and data["refused"]["matches"][0]["path"] == paths[person]
                old_bytes = (root / paths[person]).read_bytes()
                proc = run_card(root, "set", name, fact_text(field, value), "--today", today.isoformat())
                assert proc.returncode == 0, proc.stderr
                data = json.loads(proc.stdout)
                if before == value:
                    assert data["edits"] == [] and (root / paths[person]).read_bytes() == old_bytes
            else:
                assert proc.returncode == 0 and person not in paths, proc.stderr
                paths[person] = data["path"]
        else:
            vault, schema = opened(root)
            plan = cards.plan_new(vault, schema, "person", name, [cards.parse_assignment(w) for w in words], today)
            if plan.refused is None:
                assert person not in paths
                paths[person] = plan.path
                write(root, plan)
            else:
                assert plan.refused["reason"] == "identity-match"
                assert {m["path"] for m in plan.refused["matches"]} == {paths[person]}
                old_bytes = (root / paths[person]).read_bytes()
                plan = cards.plan_set(
                    vault, schema, paths[person], [cards.parse_assignment(fact_text(field, value))], today
                )
                if before == value:
                    assert plan.edits == [] and plan.changes == []
                    write(root, plan)
                    assert (root / paths[person]).read_bytes() == old_bytes  # no byte written, no touch
                else:
                    write(root, plan)
        if person not in expected:
            expected[person] = {}
            history[person] = []
            writes[person] = 1
        elif before != value:
            writes[person] += 1
            if before is not None:
                history[person].append(sections.history_line(today.isoformat(), field, before, value))
        if before == value:
            repeats += 1
        expected[person][field] = value

    assert repeats >= 50  # the stream holds repeats as well as contradictions
    assert sum(len(lines) for lines in history.values()) >= 150
    vault, schema = opened(root)
    people = [p for p in vault.notes if p.startswith("people/")]
    assert len(people) == 50 == len(set(paths.values()))
    for person, path in paths.items():
        note = vault.note(path)
        props = note.properties
        for field, value in expected[person].items():
            assert props[field] == value, (path, field)
        assert props["access_count"] == writes[person], path  # one touch per write, none for a repeat
        assert sections.items(note.text, "History") == history[person]
        assert note.text.count("## History") <= 1 and note.text.count("\n---\n") == 1


# ---------------------------------------------------------------------------
# set: surgical, equal values, lists

CARD_TEXT = (
    "\ufeff---\r\n"
    "type: person   # kept\r\n"
    "role: 'CTO'\r\n"
    "tags: [team, berlin]\r\n"
    "description: >-\r\n"
    "  Folded text\r\n"
    "  here\r\n"
    "# a comment line\r\n"
    "updated: 2026-01-01\r\n"
    "---\r\n"
    "# Alex\r\n"
    "\r\n"
    "Body stays.  \r\n"
)


def card_vault(tmp_path: Path, text: str = CARD_TEXT) -> Path:
    root = make_vault(tmp_path)
    (root / "people").mkdir()
    (root / "people" / "Alex.md").write_bytes(text.encode("utf-8"))
    return root


def test_set_changes_only_that_key_history_updated_and_touch(tmp_path):
    root = card_vault(tmp_path)
    vault, schema = opened(root)
    plan = cards.plan_set(vault, schema, "people/Alex.md", [("role", "CEO")], DAY)
    write(root, plan)
    after = (root / "people" / "Alex.md").read_bytes()
    assert after.startswith(b"\xef\xbb\xbf---\r\n") and b"\n" not in after.replace(b"\r\n", b"")
    old_lines = CARD_TEXT.lstrip("\ufeff").split("\r\n")
    new_lines = after.decode("utf-8").lstrip("\ufeff").split("\r\n")
    removed = [line for line in difflib.ndiff(old_lines, new_lines) if line.startswith("- ")]
    added = [line[2:] for line in difflib.ndiff(old_lines, new_lines) if line.startswith("+ ")]
    assert removed == ["- role: 'CTO'", "- updated: 2026-01-01"]
    keys = ("role:", "updated:", "access_count:", "tier:", "last_accessed:")
    body_added = [line for line in added if not line.startswith(keys)]
    assert body_added in (
        ["", "## History", "- 2026-12-01: role: CTO → CEO"],
        ["## History", "- 2026-12-01: role: CTO → CEO", ""],
    )
    props = vault.note("people/Alex.md").properties  # the cached read: before
    assert props["role"] == "CTO"
    fresh, _ = opened(root)
    props = fresh.note("people/Alex.md").properties
    assert props["role"] == "CEO" and props["updated"] == "2026-12-01" and props["access_count"] == 1
    assert props["tier"] == "active" and props["last_accessed"] == "2026-12-01"


def test_set_equal_values_write_nothing(tmp_path):
    root = card_vault(tmp_path)
    vault, schema = opened(root)
    same = [cards.parse_assignment(w) for w in ("role=CTO", "tags=[team, berlin]", "type=person", "ROLE=CTO")]
    plan = cards.plan_set(vault, schema, "people/Alex.md", same, DAY)
    assert plan.edits == [] and plan.changes == [] and plan.refused is None
    before = (root / "people" / "Alex.md").read_bytes()
    proc = run_card(root, "set", "alex", "role=CTO", "tags=[team, berlin]")
    assert proc.returncode == 0 and json.loads(proc.stdout)["written"] == []
    assert (root / "people" / "Alex.md").read_bytes() == before
    # typed comparison: 3 is not "3"
    write(root, cards.plan_set(vault, schema, "people/Alex.md", [("n", 3)], DAY))
    vault, schema = opened(root)
    assert cards.plan_set(vault, schema, "people/Alex.md", [cards.parse_assignment("n=3")], DAY).edits == []
    assert cards.plan_set(vault, schema, "people/Alex.md", [cards.parse_assignment('n="3"')], DAY).edits


def test_a_list_stays_a_list_and_empty_values_record_the_old_one(tmp_path):
    root = card_vault(tmp_path)
    vault, schema = opened(root)
    write(root, cards.plan_set(vault, schema, "people/Alex.md", [cards.parse_assignment("tags=ops")], DAY))
    vault, schema = opened(root)
    note = vault.note("people/Alex.md")
    assert note.properties["tags"] == ["ops"]
    assert sections.items(note.text, "History") == ["- 2026-12-01: tags: [team, berlin] → [ops]"]
    write(root, cards.plan_set(vault, schema, "people/Alex.md", [cards.parse_assignment("role=")], DAY))
    vault, schema = opened(root)
    note = vault.note("people/Alex.md")
    assert note.properties["role"] is None
    assert sections.items(note.text, "History")[-1] == "- 2026-12-01: role: CTO"


FOLDED_KEYS = ("role:", "updated:", "access_count:", "tier:", "last_accessed:", "relevance:")


@pytest.mark.parametrize("corpus", ["dendron-site", "kepano-obsidian"])
def test_set_log_link_on_real_notes_change_only_their_lines(tmp_path, corpus, monkeypatch):
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    root = copy_tree(require(CORPORA / corpus), tmp_path / corpus)
    vault, schema = opened(root)
    notes = [
        p
        for p in vault.cards(schema)
        if (n := vault.note(p)).text is not None and not (n.frontmatter and n.frontmatter.error)
    ]
    picked = random.Random(corpus).sample(notes, min(40, len(notes)))
    other = picked[0]
    plans = [cards.plan_set(vault, schema, path, [("role", "Tester")], DAY) for path in picked[1:]]
    plans += [cards.plan_log(vault, schema, path, "seen in the corpus test", DAY) for path in picked[1:6]]
    done = 0
    for plan in plans:
        if plan.refused is not None:  # a value with comments on its lines, a section left in open code
            assert plan.refused["reason"] == "not-editable"
            continue
        (edit,) = plan.edits
        old = edit.before.decode("utf-8").lstrip("\ufeff").splitlines()
        new = edit.after.decode("utf-8").lstrip("\ufeff").splitlines()
        diff = list(difflib.ndiff(old, new))
        removed = [line[2:] for line in diff if line.startswith("- ")]
        added = [line[2:] for line in diff if line.startswith("+ ")]
        assert all(line.lstrip().lower().startswith(FOLDED_KEYS) for line in removed), (plan.path, removed)
        body = [line for line in added if not line.lower().startswith(FOLDED_KEYS)]
        allowed = {"", "## Log", "- 2026-12-01: seen in the corpus test"}
        if not old or old[0] != "---":
            allowed.add("---")  # a note without frontmatter gets a block
        assert set(body) <= allowed, (plan.path, body)
        done += 1
    assert done >= len(plans) - 3
    vault, schema = opened(root)
    plan = cards.plan_link(vault, schema, picked[1], [other], DAY)
    if plan.refused is None:
        write(root, plan)
        again, schema = opened(root)
        assert cards.plan_link(again, schema, picked[1], [other], DAY).edits == []


# ---------------------------------------------------------------------------
# new: placement, defaults, refusals


def test_new_places_the_card_with_defaults_and_refuses_duplicates(tmp_path):
    root = make_vault(tmp_path)
    proc = run_card(root, "new", "contact", 'Dana: "R" [x]/y', "description=Ops lead", "email=Dana@Example.com")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["path"] == "people/Dana R x y.md" and data["written"] == ["people/Dana R x y.md"]
    props = Vault.open(root).note(data["path"]).properties
    assert props["type"] == "person" and props["status"] == "active"  # type alias, type default
    assert props["aliases"] == ['Dana: "R" [x]/y'] and props["created"] == props["updated"]
    assert props["access_count"] == 1 and props["tier"] == "active"
    # the same identity under another name
    proc = run_card(root, "new", "person", "Dana Reyes", "description=x", "email= mailto:dana@EXAMPLE.com")
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and data["refused"]["reason"] == "identity-match"
    assert data["refused"]["matches"][0]["path"] == "people/Dana R x y.md" and data["written"] == []
    # the same name in another letter case
    proc = run_card(root, "new", "person", "dana r x y", "description=x")
    data = json.loads(proc.stdout)
    assert (
        proc.returncode == 1
        and data["refused"]["reason"] == "exists"
        and "tells them apart" in data["refused"]["message"]
    )
    # --force allows another identity holder, never an existing file
    assert (
        run_card(root, "new", "person", "Dana Two", "description=x", "email=dana@example.com", "--force").returncode
        == 0
    )
    assert run_card(root, "new", "person", "DANA TWO", "description=x", "--force").returncode == 1
    # a required field without a value
    proc = run_card(root, "new", "project", "Atlas")
    data = json.loads(proc.stdout)
    assert proc.returncode == 2 and data["refused"]["missing"] == ["description"]
    assert not (root / "projects").exists()
    # an unknown type, a bad value
    assert run_card(root, "new", "planet", "Mars", "description=x").returncode == 2
    assert run_card(root, "new", "person", "Eve", "description=[unclosed").returncode == 2


def test_identity_shared_by_many_cards_is_no_identity(tmp_path):
    root = make_vault(tmp_path)
    for k in range(8):
        vault, schema = opened(root)
        plan = cards.plan_new(
            vault, schema, "person", f"Staff {k}", [("description", "x"), ("phone", "030 1234")], DAY, force=k > 0
        )
        write(root, plan)
    vault, schema = opened(root)
    plan = cards.plan_new(vault, schema, "person", "Staff new", [("description", "x"), ("phone", "+49 30 1234")], DAY)
    assert plan.refused is None  # 8 cards hold the switchboard number (max_shared 8)
    plan = cards.plan_new(vault, schema, "company", "Staff Co", [("description", "x"), ("phone", "030 1234")], DAY)
    assert plan.refused is None  # same_type_only: a company may share a person's number


def test_set_names_another_card_holding_the_identity(tmp_path):
    root = make_vault(tmp_path)
    for title, email in (("Alex", "alex@example.com"), ("Bob", "bob@example.com")):
        vault, schema = opened(root)
        write(root, cards.plan_new(vault, schema, "person", title, [("description", "x"), ("email", email)], DAY))
    vault, schema = opened(root)
    plan = cards.plan_set(vault, schema, "people/Bob.md", [("email", "ALEX@example.com")], DAY)
    assert not plan.edits and plan.refused["reason"] == "identity-taken"  # issue 30: refused unless forced
    assert "people/Alex.md" in plan.refused["message"]
    plan = cards.plan_set(vault, schema, "people/Bob.md", [("email", "ALEX@example.com")], DAY, force=True)
    assert plan.edits and any("people/Alex.md" in note and "dedup.py" in note for note in plan.notes)


def test_set_refuses_a_status_the_type_does_not_allow(tmp_path):
    root = card_vault(tmp_path)
    assert run_card(root, "set", "Alex", "status=dreaming").returncode == 2
    proc = run_card(root, "set", "Alex", "status=inactive")
    assert proc.returncode == 0 and json.loads(proc.stdout)["written"] == ["people/Alex.md"]


def test_two_agents_adding_one_person_at_once_leave_one_card(tmp_path):
    root = make_vault(tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, str(CARD), "new", "person", title, "description=x", "email=kim@example.com"]
            + ["--vault", str(root), "--json", "--wait", "30"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for title in ("Kim Lee", "K. Lee")
    ]
    codes = sorted(proc.wait(timeout=60) for proc in procs)
    for proc in procs:
        proc.stdout.close()
    assert codes == [0, 1]  # the second read the vault after the first wrote, under the writer lock
    assert len(list((root / "people").glob("*.md"))) == 1


def test_dry_run_writes_nothing(tmp_path):
    root = make_vault(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            str(CARD),
            "new",
            "person",
            "Zed",
            "description=x",
            "--vault",
            str(root),
            "--dry-run",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["edits"] and data["written"] == [] and not (root / "people").exists()


# ---------------------------------------------------------------------------
# log, link, retire


def test_log_link_and_retire(tmp_path):
    root = make_vault(tmp_path)
    for kind, title in (("person", "Alex"), ("person", "Alex Old"), ("company", "Acme")):
        vault, schema = opened(root)
        write(root, cards.plan_new(vault, schema, kind, title, [("description", "x")], DAY))
    (root / "projects").mkdir()
    (root / "projects" / "Acme.md").write_text("---\ntype: project\n---\n")  # makes [[Acme]] ambiguous
    vault, schema = opened(root)
    plan = cards.plan_link(vault, schema, "people/Alex.md", ["companies/Acme.md", "people/Alex.md"], DAY)
    write(root, plan)
    vault, schema = opened(root)
    text = vault.note("people/Alex.md").text
    assert sections.items(text, "Related") == ["- [[companies/Acme]]"]  # the short name would be ambiguous
    # a link there in another form counts: nothing to add, nothing written
    (root / "people" / "Alex.md").write_text(text.replace("[[companies/Acme]]", "[[companies/acme.md|Acme Inc]]"))
    vault, schema = opened(root)
    plan = cards.plan_link(vault, schema, "people/Alex.md", ["companies/Acme.md"], DAY)
    assert plan.edits == [] and plan.notes
    proc = run_card(root, "link", "Alex", "Nobody")
    assert proc.returncode == 2 and "Nobody" in proc.stderr

    proc = run_card(root, "log", "Alex", "Met", "at", "the", "offsite", "--today", "2026-12-02")
    assert proc.returncode == 0
    again = run_card(root, "log", "Alex", "Met at the offsite", "--today", "2026-12-02")
    assert again.returncode == 0 and json.loads(again.stdout)["written"] == []
    vault, schema = opened(root)
    assert sections.items(vault.note("people/Alex.md").text, "Log") == ["- 2026-12-02: Met at the offsite"]

    proc = run_card(root, "retire", "Alex Old", "--by", "Alex", "--today", "2026-12-03")
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(proc.stdout)["written"]) == ["people/Alex Old.md", "people/Alex.md"]
    vault, schema = opened(root)
    old = vault.note("people/Alex Old.md")
    assert old.properties["status"] == "superseded" and old.properties["superseded_by"] == "[[Alex]]"
    assert sections.items(old.text, "History") == [
        "- 2026-12-03: status: active → superseded",
        '- 2026-12-03: superseded_by: null → "[[Alex]]"',
    ]
    assert sections.items(old.text, "Related") == ["- [[Alex]]"]
    assert "- [[Alex Old]]" in sections.items(vault.note("people/Alex.md").text, "Related")
    # again: all in place
    proc = run_card(root, "retire", "Alex Old", "--by", "Alex")
    assert proc.returncode == 0 and json.loads(proc.stdout)["written"] == []


def test_retire_refuses_a_type_that_cannot_be_superseded(tmp_path):
    """F6: daily has "status": [] (no status at all): no status written, refused."""
    root = make_vault(tmp_path)
    (root / "daily").mkdir()
    (root / "daily" / "2026-12-01.md").write_text("---\ntype: daily\n---\nnotes\n")
    (root / "daily" / "2026-12-02.md").write_text("---\ntype: daily\n---\nnotes\n")
    vault, schema = opened(root)
    plan = cards.plan_retire(vault, schema, "daily/2026-12-01.md", "daily/2026-12-02.md", DAY)
    assert plan.refused["reason"] == "not-supersedable" and plan.edits == []
    proc = run_card(root, "retire", "daily/2026-12-01", "--by", "daily/2026-12-02")
    assert proc.returncode == 2 and json.loads(proc.stdout)["refused"]["reason"] == "not-supersedable"
    assert (root / "daily" / "2026-12-01.md").read_text() == "---\ntype: daily\n---\nnotes\n"


def test_retire_refuses_cycles_chains_and_itself(tmp_path):
    """F6: A by B, then B by A left both superseded (nobody current)."""
    root = make_vault(tmp_path)
    for title in ("Ann", "Bea", "Cy"):
        vault, schema = opened(root)
        write(root, cards.plan_new(vault, schema, "person", title, [("description", "x")], DAY))
    assert run_card(root, "retire", "Ann", "--by", "Bea").returncode == 0
    before = {p.name: p.read_bytes() for p in (root / "people").glob("*.md")}
    for note, by, why in (("Bea", "Ann", "by-superseded"), ("Cy", "Ann", "by-superseded"), ("Cy", "Cy", "by-itself")):
        proc = run_card(root, "retire", note, "--by", by)
        refused = json.loads(proc.stdout)["refused"]
        assert proc.returncode == 1 and refused["reason"] == why, proc.stdout
        assert refused["matches"][0]["path"] == f"people/{by}.md"
    assert {p.name: p.read_bytes() for p in (root / "people").glob("*.md")} == before


def test_unparsable_frontmatter_and_templates_are_never_written(tmp_path):
    root = make_vault(tmp_path)
    (root / "people").mkdir()
    (root / "people" / "Bad.md").write_text("---\na: [unclosed\n---\nbody\n")
    (root / "Templates").mkdir()
    (root / "Templates" / "person.md").write_text("---\ntype: person\n---\n")
    for note in ("people/Bad.md", "Templates/person.md"):
        proc = run_card(root, "set", note, "role=CEO")
        assert proc.returncode == 4 and json.loads(proc.stdout)["refused"]["reason"] == "not-editable"
    assert (root / "people" / "Bad.md").read_text() == "---\na: [unclosed\n---\nbody\n"


def test_help_lists_the_commands():
    proc = subprocess.run([sys.executable, str(CARD), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    for word in ("new", "set", "log", "link", "retire", "JSON keys", "Exit codes"):
        assert word in proc.stdout


# ---------------------------------------------------------------------------
# field=value and file names


SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.sampled_from([1.5, -0.25, 3.0]),
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=20),
)
VALUE = st.one_of(SCALAR, st.lists(SCALAR.filter(lambda v: v is not None), max_size=4))


@settings(max_examples=400, deadline=None)
@given(VALUE)
def test_a_value_written_as_yaml_reads_back(value):
    text = fm.format_flow(value) if value is not None else ""
    parsed = cards.parse_value(text)
    assert fm.same_value(parsed, value) or (value == "" and parsed is None), (text, parsed)


@settings(max_examples=400, deadline=None)
@given(
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="=\n\r\t#:"), min_size=1).filter(
        lambda s: s.strip() and not s.strip().startswith(("-", "[", "{", "'", '"'))
    ),
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\n\r"), max_size=30),
)
def test_assignment_splits_at_the_first_equals_sign(name, value):
    try:
        expected = cards.parse_value(value)
    except cards.BadRequest:
        with pytest.raises(cards.BadRequest):
            cards.parse_assignment(f"{name}={value}")
        return
    got_name, got_value = cards.parse_assignment(f"{name}={value}")
    assert got_name == name.strip() and fm.same_value(got_value, expected)
    if value.strip(" \t")[:1] not in ("'", '"', "[", "{"):
        assert fm.same_value(got_value, fm.resolve_plain(value.strip(" \t")))  # unquoted text is taken whole


def test_parse_value_examples():
    assert cards.parse_value("[a, b]") == ["a", "b"]
    assert cards.parse_value("3") == 3 and cards.parse_value('"3"') == "3"
    assert cards.parse_value("a: b # c") == "a: b # c"
    assert cards.parse_value("01234") == "01234" and cards.parse_value("yes") == "yes"
    assert cards.parse_value("") is None and cards.parse_value("true") is True
    assert cards.parse_assignment("url=https://x.org/?a=b") == ("url", "https://x.org/?a=b")
    for bad in ("novalue", "=x", "[a]=b"):
        with pytest.raises(cards.BadRequest):
            cards.parse_assignment(bad)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=300))
def test_file_names_hold_no_forbidden_character(title):
    try:
        name = cards.file_name(title)
    except cards.BadRequest:  # only when nothing but forbidden, control and format characters, spaces and dots
        assert all(
            ch in names.FORBIDDEN or ord(ch) < 32 or ch in ".\x7f" or ch.isspace() or unicodedata.category(ch) == "Cf"
            for ch in title
        )
        return
    assert not any(ch in names.FORBIDDEN or ord(ch) < 32 for ch in name)
    assert name == name.strip(". ") and len(name.encode("utf-8")) <= names.MAX_NAME_BYTES


def test_a_wikilink_value_is_a_link_not_a_nested_list():
    """`company="[[Acme]]"` reaches card.py without its quotes (the shell
    eats them); YAML would read `[[Acme]]` as a list in a list."""
    assert cards.parse_value("[[Acme]]") == "[[Acme]]"
    assert cards.parse_value('"[[Acme]]"') == "[[Acme]]"
    assert cards.parse_value("[[[A]], [[B|b]]]") == ["[[A]]", "[[B|b]]"]
    assert cards.parse_value("[[1, 2]]") == [[1, 2]]  # a real nested list stays one


def test_new_refuses_what_dedup_would_merge_across_types(tmp_path):
    """BR-28: a `company` card (no type alias makes it a person) holding an
    email is the same entity as a new person with that email, by dedup's
    default (identity.same_type_only false); the schema can narrow it."""
    root = make_vault(tmp_path)
    vault, schema = opened(root)
    write(
        root, cards.plan_new(vault, schema, "company", "Alex Ltd", [("description", "x"), ("email", "alex@x.io")], DAY)
    )
    vault, schema = opened(root)
    plan = cards.plan_new(vault, schema, "person", "Alex", [("description", "x"), ("email", " ALEX@x.io")], DAY)
    assert plan.refused is not None and [m["path"] for m in plan.refused["matches"]] == ["companies/Alex Ltd.md"]
    data = json.loads((root / "schema.json").read_text())
    data.setdefault("identity", {})["same_type_only"] = True
    (root / "schema.json").write_text(json.dumps(data))
    vault, schema = opened(root)
    assert (
        cards.plan_new(vault, schema, "person", "Alex", [("description", "x"), ("email", "alex@x.io")], DAY).refused
        is None
    )


def test_dry_run_options_may_come_before_the_fields_and_say_how_to_write(tmp_path):
    """F11: field=value after --dry-run is accepted by every command (argparse
    gave new's nargs='*' nothing before the option), and the dry run says to
    drop --dry-run (card.py has no --apply)."""
    root = make_vault(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(CARD), "new", "person", "Zed", "--dry-run", "description=x", "--vault", str(root)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "description: (none) → x" in proc.stdout
    assert "without --dry-run" in proc.stdout and "--apply" not in proc.stdout
    assert not (root / "people").exists()
    proc = subprocess.run(
        [sys.executable, str(CARD), "new", "person", "Zed", "--dry-run", "--bogus", "description=x"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "unrecognized arguments" in proc.stderr


def person_card(description: str) -> str:
    return f"---\ntype: person\ndescription: {description}\nstatus: active\n---\n"


@pytest.mark.parametrize("other", ["people/dana reyes.md", "Dana Reyes.md", "archive/Dana Reyes.md"])
def test_a_name_that_fits_several_notes_is_refused_with_the_candidates(tmp_path, other):
    """F19: set/log/link/retire on a name Obsidian finds in several notes
    (a case twin, a stray root note, another folder) wrote to one silently;
    now refused (exit 2) naming both; the exact path still works."""
    root = make_vault(tmp_path)
    for path in ("people/Dana Reyes.md", other):
        (root / path).parent.mkdir(exist_ok=True)
        (root / path).write_text(person_card(path))
    (root / "people" / "Grace.md").write_text(person_card("g"))
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    for args in (
        ["set", "Dana Reyes", "role=X"],
        ["set", "[[dana reyes]]", "role=X"],
        ["log", "DANA REYES", "met"],
        ["link", "Grace", "Dana Reyes"],
        ["retire", "Grace", "--by", "Dana Reyes"],
    ):
        proc = run_card(root, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "people/Dana Reyes.md" in proc.stderr and other in proc.stderr, proc.stderr
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before
    for path in (other, other[:-3]) if "/" in other else (other,):
        proc = run_card(root, "set", path, "role=X")
        assert proc.returncode == 0 and json.loads(proc.stdout)["path"] == other, proc.stderr


def test_new_refuses_a_title_that_is_another_cards_alias(tmp_path):
    """F10: dedup keeps a merged card's old name in the canonical's aliases;
    new must not bring the duplicate back, and set names the alias holder."""
    root = make_vault(tmp_path)
    (root / "people").mkdir()
    (root / "people" / "Dana Reyes.md").write_text(
        '---\ntype: person\ndescription: d\nstatus: active\naliases: [Dana R., "D. Reyes"]\n---\n'
    )
    for title in ("D. Reyes", "d. reyes", "DANA R."):
        proc = run_card(root, "new", "person", title, "description=again")
        data = json.loads(proc.stdout)
        assert proc.returncode == 1 and data["refused"]["reason"] == "exists", proc.stdout
        assert data["refused"]["matches"][0]["path"] == "people/Dana Reyes.md"
    assert sorted(p.name for p in (root / "people").iterdir()) == ["Dana Reyes.md"]
    proc = run_card(root, "set", "D. Reyes", "role=x", "--json")  # an alias is a name of the card (issue 25)
    assert proc.returncode == 0 and json.loads(proc.stdout)["path"] == "people/Dana Reyes.md", proc.stderr
    assert run_card(root, "new", "person", "D. Reyes", "description=again", "--force").returncode == 0
    proc = run_card(root, "set", "D. Reyes", "role=y")  # now a name of two cards: refused with both
    assert proc.returncode == 2 and "people/D. Reyes.md" in proc.stderr and "people/Dana Reyes.md" in proc.stderr


def test_card_names_from_the_testers_notes(tmp_path):
    """F18: one suggestion said twice; a file named with '|' not found;
    a title Foo.md gave Foo.md.md; a title that is an attachment's name."""
    root = make_vault(tmp_path)
    (root / "companies").mkdir()
    (root / "companies" / "Acme.md").write_text("---\ntype: company\ndescription: c\n---\n")
    proc = run_card(root, "new", "company", "Acme", "description=x")
    message = json.loads(proc.stdout)["refused"]["message"]
    assert message.count("'Acme (company)'") == 1, message
    (root / "misc").mkdir()
    (root / "misc" / "Pipe | Name.md").write_text("x\n")
    (root / "people").mkdir()
    (root / "people" / "Alex.md").write_text(person_card("a"))
    proc = run_card(root, "link", "Alex", "Pipe | Name")
    assert proc.returncode == 2 and "no note named" not in proc.stderr and "wikilink cannot hold" in proc.stderr
    assert run_card(root, "set", "Pipe | Name", "k=v").returncode == 0
    proc = run_card(root, "new", "idea", "Foo.md", "description=x")
    assert proc.returncode == 0 and json.loads(proc.stdout)["path"] == "ideas/Foo.md", proc.stdout
    (root / "decisions").write_text("a file where the decision folder should be\n")
    proc = run_card(root, "new", "decision", "Pick", "description=x")
    assert proc.returncode == 2 and "is a file, not a folder" in proc.stderr, proc.stderr
    (root / "atlas.png").write_bytes(b"\x89PNG")
    proc = run_card(root, "new", "idea", "atlas.png", "description=x")
    assert proc.returncode == 1 and json.loads(proc.stdout)["refused"]["matches"][0]["path"] == "atlas.png"


@pytest.mark.parametrize(
    "held, given",
    [
        ("race@example.com", "<race@example.com>"),
        ("race@example.com", "Race <Race@example.com>"),
        ("race@example.com", "race@example.com, other@x.com"),
        ("'Race <race@example.com>'", "race@example.com"),
        ("'a@x.com; race@example.com'", "RACE@example.com"),
    ],
)
def test_new_refuses_an_address_in_another_spelling(tmp_path, held, given):
    """F17: the spellings of one address are one identity (autograph/identity.py)."""
    root = make_vault(tmp_path)
    (root / "people").mkdir()
    (root / "people" / "Racer.md").write_text(f"---\ntype: person\nemail: {held}\n---\n")
    proc = run_card(root, "new", "person", "Racer Two", f"email={given}", "description=d")
    assert proc.returncode == 1 and json.loads(proc.stdout)["refused"]["reason"] == "identity-match", proc.stdout


def test_the_skill_s_card_commands_run_on_the_example_vault(tmp_path):
    """SKILL.md's ADD, UPDATE and LINK commands, as an agent copies them,
    on a copy of the example vault without the card they name: the ADD
    example failed there (the example schema requires a status)."""
    import re
    import shlex

    from conftest import EXAMPLE_VAULT

    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    (vault / "people" / "Dana Reyes.md").unlink()  # the table's subject, so that ADD has no card to find
    skill = (REPO / "skills" / "autograph" / "SKILL.md").read_text(encoding="utf-8")
    commands = re.findall(r"\| (?:ADD|UPDATE|LINK) \| `(card\.py [^`]+)` \|", skill)
    assert [c.split()[1] for c in commands] == ["new", "set", "link"], commands
    for command in commands:
        argv = [a if a != "VAULT" else str(vault) for a in shlex.split(command)]
        proc = subprocess.run(
            [sys.executable, str(SCRIPTS / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, (command, proc.stdout[-500:], proc.stderr[-500:])


def test_set_on_a_retired_card_notes_the_card_that_replaced_it(tmp_path):
    from conftest import EXAMPLE_VAULT

    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    card = str(SCRIPTS / "card.py")

    def run_card(*argv):
        proc = subprocess.run([sys.executable, card, *argv, "--vault", str(vault), "--json"], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    run_card("new", "person", "D. Reyes", "email=d@x.org", "status=active", "description=old", "--force")
    run_card("retire", "D. Reyes", "--by", "Dana Reyes")
    notes = run_card("set", "people/D. Reyes.md", "role=COO", "--dry-run")["notes"]
    assert "people/D. Reyes.md is retired: people/Dana Reyes.md replaced it (superseded_by)" in " ".join(notes)
    assert not any("retired" in n for n in run_card("set", "Dana Reyes", "role=COO", "--dry-run")["notes"])
