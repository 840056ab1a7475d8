"""Issue 30, point 4 and the card.py item of point 6.

4. One agent mistake, one unattended destructive merge: ``card.py set
   "people/Ben Carter.md" email=<Dana's email>`` was written with a note
   only, and the nightly ``dedup.py --apply`` merged Ben into Dana.  Now
   ``set`` (and ``remember``, ``batch``) refuses an identity value another
   live card holds (exit 2, naming it) unless ``--force``; a forced one
   leaves a ``## Log`` line, and ``dedup.py --apply`` lists such a pair for
   review instead of merging it (a reviewed manifest still merges it).
6. ``card.py set access_count=-5`` / ``relevance=`` / ``last_accessed=``
   reported changes the touch of the same write overwrote: refused, naming
   engine.py; ``updated=2020-01-01`` was written as a quoted string: now a
   YAML date, as Obsidian's date property writes it.
"""

from __future__ import annotations

import datetime
import json
import sys

import pytest
import yaml
from conftest import REPO, SCRIPTS, vault_bytes
from conftest import run_in_vault as run
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

from autograph.memory import cards, dedup  # noqa: E402

BEN = "people/Ben Carter.md"
DANA = "people/Dana Reyes.md"


@pytest.fixture
def vault(make_vault):
    """Ben and Dana, two people with their own emails, and a note linking Ben."""
    schema = (REPO / "schema.example.json").read_text(encoding="utf-8")
    card = "---\ntype: person\nemail: {email}\ndescription: x\nstatus: active\nupdated: 2026-11-01\n---\n\n{body}\n"
    return make_vault(
        {
            "schema.json": schema,
            BEN: card.format(email="ben@example.com", body="Ben runs the Berlin office."),
            DANA: card.format(email="dana@acme.com", body="Dana is the COO of Acme."),
            "notes/Offsite.md": "Met [[Ben Carter]] at the offsite.\n",
        }
    )


def test_set_refuses_another_cards_identity_naming_it(vault):
    before = vault_bytes(vault)
    proc = run("card.py", vault, "set", BEN, "email=Dana@Acme.com", "--json")
    assert proc.returncode == 2, proc.stderr
    data = json.loads(proc.stdout)
    assert data["refused"]["reason"] == "identity-taken"
    assert DANA in data["refused"]["message"] and "--force" in data["refused"]["message"]
    assert [m["path"] for m in data["refused"]["matches"]] == [DANA]
    assert data["written"] == [] and vault_bytes(vault) == before
    human = run("card.py", vault, "set", BEN, "email=dana@acme.com")
    assert human.returncode == 2 and DANA in human.stdout


def test_forced_identity_is_listed_for_review_never_merged_unattended(vault, tmp_path):
    """The scenario of point 4: the mistaken set, then the nightly dedup."""
    proc = run("card.py", vault, "set", BEN, "email=dana@acme.com", "--force", "--json")
    assert proc.returncode == 0, proc.stderr
    text = (vault / BEN).read_text(encoding="utf-8")
    assert "email: dana@acme.com" in text and dedup.FORCED in text and "[[Dana Reyes]]" in text
    assert dedup.forced_values(text) == [("email", "dana@acme.com")]
    before = vault_bytes(vault)
    nightly = run("dedup.py", vault, "--apply", "--json")
    assert nightly.returncode == 1, nightly.stderr  # a group this run did not merge
    data = json.loads(nightly.stdout)
    assert data["merged"] == [] and data["written"] == []
    assert any("--force" in item["reason"] and BEN in item["reason"] for item in data["not_merged"])
    assert vault_bytes(vault) == before and (vault / BEN).exists()
    # a person reviews the pair and merges it from the manifest: that still works
    manifest = tmp_path / "groups.json"
    assert run("dedup.py", vault, "--manifest", str(manifest)).returncode == 1
    merged = run("dedup.py", vault, "--apply-manifest", str(manifest), "--apply", "--json")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert len(json.loads(merged.stdout)["merged"]) == 1


def test_a_card_created_with_force_is_held_back_as_a_forced_set_is(vault):
    """card.py new --force with Dana's email: the new card says so in its
    Log, and the nightly dedup lists the pair for review, never merges it."""
    proc = run("card.py", vault, "new", "person", "Dana R", "email=dana@acme.com", "description=x", "--force", "--json")
    assert proc.returncode == 0, proc.stderr
    created = json.loads(proc.stdout)["path"]
    text = (vault / created).read_text(encoding="utf-8")
    assert dedup.forced_values(text) == [("email", "dana@acme.com")] and "[[Dana Reyes]]" in text
    assert any(DANA in note and "--force" in note for note in json.loads(proc.stdout)["notes"])
    before = vault_bytes(vault)
    data = json.loads(run("dedup.py", vault, "--apply", "--json").stdout)
    assert data["merged"] == [] and any("--force" in item["reason"] for item in data["not_merged"])
    assert vault_bytes(vault) == before


def test_an_unforced_duplicate_is_still_merged_unattended(vault):
    """The review rule holds back only a pair joined by a forced value."""
    (vault / "people/D Reyes.md").write_text(
        "---\ntype: person\nemail: dana@acme.com\nupdated: 2026-10-01\n---\nD.\n", encoding="utf-8"
    )
    data = json.loads(run("dedup.py", vault, "--apply", "--json").stdout)
    assert len(data["merged"]) == 1 and not (vault / "people/D Reyes.md").exists()


def test_remember_into_and_batch_are_guarded_too(vault):
    (vault / "people/Sam Lee.md").write_text("---\ntype: person\ndescription: x\n---\n", encoding="utf-8")
    before = vault_bytes(vault)
    into = ("remember", "person", "Sam Lee", "email=dana@acme.com", "--into", "people/Sam Lee.md", "--json")
    proc = run("card.py", vault, *into)
    assert proc.returncode == 2 and json.loads(proc.stdout)["refused"]["reason"] == "identity-taken"
    assert DANA in json.loads(proc.stdout)["refused"]["message"]
    line = {"op": "set", "note": BEN, "fields": {"email": "dana@acme.com"}}
    batch = run("card.py", vault, "batch", "--json", stdin=json.dumps(line) + "\n")
    assert batch.returncode == 2 and json.loads(batch.stdout)["failed"] == [1]
    assert vault_bytes(vault) == before
    forced = run("card.py", vault, "batch", "--json", stdin=json.dumps({**line, "force": True}) + "\n")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert dedup.FORCED in (vault / BEN).read_text(encoding="utf-8")
    bad = run("card.py", vault, "batch", "--json", stdin=json.dumps({**line, "force": "yes"}) + "\n")
    assert bad.returncode == 2 and "force" in json.loads(bad.stdout)["results"][0]["error"]
    forced = run("card.py", vault, *into, "--force")
    assert forced.returncode == 0, forced.stdout + forced.stderr


def test_a_value_only_a_retired_card_holds_is_written(vault):
    """An old address moves on: a retired card's identity is no refusal."""
    (vault / "people/Old Dana.md").write_text(
        "---\ntype: person\nemail: old@acme.com\nstatus: superseded\n---\n", encoding="utf-8"
    )
    proc = run("card.py", vault, "set", BEN, "email=old@acme.com", "--json")
    assert proc.returncode == 0, proc.stdout
    assert any("Old Dana" in note for note in json.loads(proc.stdout)["notes"])


@pytest.mark.parametrize("field", ["access_count=-5", "relevance=0.9", "last_accessed=2020-01-01", "tier=hot"])
def test_set_refuses_autographs_own_fields(vault, field):
    before = vault_bytes(vault)
    proc = run("card.py", vault, "set", BEN, field, "--json")
    assert proc.returncode == 2
    assert "engine.py" in proc.stderr and proc.stdout == ""
    assert vault_bytes(vault) == before


def test_updated_is_written_as_a_date(vault):
    proc = run("card.py", vault, "set", BEN, "updated=2020-01-01", "--json")
    assert proc.returncode == 0, proc.stderr
    text = (vault / BEN).read_text(encoding="utf-8")
    assert "\nupdated: 2020-01-01\n" in text
    assert yaml.safe_load(text.split("---")[1])["updated"] == datetime.date(2020, 1, 1)  # a date, not text
    assert [c["new"] for c in json.loads(proc.stdout)["changes"] if c.get("field") == "updated"] == ["2020-01-01"]
    again = run("card.py", vault, "set", BEN, "updated=2020-01-01", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["written"] == []  # the same day: no change
    quoted = run("card.py", vault, "set", BEN, 'note="2020-02-02"', "--json")
    assert quoted.returncode == 0 and 'note: "2020-02-02"' in (vault / BEN).read_text(encoding="utf-8")


@settings(max_examples=60, deadline=None)
@given(st.dates(min_value=datetime.date(1, 1, 1)))
def test_an_unquoted_day_is_a_date_and_equals_its_text(day):
    value = cards.parse_value(day.isoformat())
    assert value == day
    assert cards._same(day.isoformat(), value) and cards._same(value, day.isoformat())
    assert cards.parse_value(f'"{day.isoformat()}"') == day.isoformat()  # quoted: text, as YAML reads it
