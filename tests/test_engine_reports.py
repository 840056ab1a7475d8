"""The reports of engine.py and card.py built in the library, reached without a subprocess.

tests/test_decay.py, test_card.py and test_bootstrap_flow.py run the
scripts as a person does; these call the memory/ and schema/ functions the
scripts print from: the JSON objects, the human lines, the exit codes.
"""

from __future__ import annotations

import argparse
import datetime

import pytest
from autograph import cli
from autograph.memory import cards, commands, decay, decay_report
from autograph.read.vault import Vault
from autograph.schema import bootstrap
from autograph.schema.model import load_schema

TODAY = datetime.date(2026, 1, 31)


def test_a_refused_card_exits_as_card_py_documents():
    plan = cards.Plan("new", "people/A.md")
    assert cards.exit_code(plan, cli.EXIT_SKIPPED) == cli.EXIT_SKIPPED  # not refused: what was written says
    for reason in ("identity-match", "exists", "by-itself", "by-superseded"):
        plan.refused = {"reason": reason, "message": "", "matches": []}
        assert cards.exit_code(plan, cli.EXIT_OK) == cli.EXIT_FOUND
    for reason in ("missing-required", "not-supersedable"):
        plan.refused = {"reason": reason, "message": "", "matches": []}
        assert cards.exit_code(plan, cli.EXIT_OK) == cli.EXIT_USAGE
    plan.refused = {"reason": "not-editable", "message": "", "matches": []}
    assert cards.exit_code(plan, cli.EXIT_OK) == cli.EXIT_SKIPPED


def test_a_refused_plan_is_reported_in_one_line():
    plan = cards.Plan("retire", "people/A.md", refused={"reason": "by-itself", "message": "no\x1b", "matches": []})
    assert cards.report_lines(plan) == ["refused (by-itself): no\\x1b"]
    data = cards.report(plan, TODAY, cli.outcome_of([], None))
    assert list(data)[:6] == ["command", "path", "today", "refused", "changes", "notes"]
    assert data["command"] == "retire" and data["today"] == "2026-01-31"


def test_a_change_is_reported_with_dates_as_text():
    change = {"path": "people/A.md", "field": "created", "old": None, "new": TODAY}
    plan = cards.Plan("set", "people/A.md", changes=[change], notes=["n"])
    assert cards.report_lines(plan) == [
        "nothing to change: people/A.md already says it",
        "  people/A.md: created: (none) → 2026-01-31",
        "note: n",
    ]
    assert cards.report(plan, TODAY, {})["changes"][0]["new"] == "2026-01-31"


def test_a_note_is_named_or_refused_with_why(make_vault):
    root = make_vault({"people/Dana Reyes.md": "---\naliases: [Dee]\n---\n", "x/Dup.md": "", "y/Dup.md": ""})
    vault, schema = Vault.open(root), load_schema(root)
    assert cards.named_card(vault, schema, "Dana Reyes") == "people/Dana Reyes.md"
    assert cards.find_cards(vault, schema, ["[[Dana Reyes]]", "people/Dana Reyes.md"]) == ["people/Dana Reyes.md"] * 2
    with pytest.raises(cards.BadRequest, match="NOTE is empty"):
        cards.named_card(vault, schema, " ")
    assert cards.named_card(vault, schema, "Dee") == "people/Dana Reyes.md"  # an alias is a name of the card
    with pytest.raises(cards.BadRequest, match="no note named 'Nobody'"):
        cards.named_card(vault, schema, "Nobody")
    with pytest.raises(cards.Ambiguous):
        cards.find_cards(vault, schema, ["Dup"])
    with pytest.raises(cards.BadRequest, match="no note named 'a', 'b' in the vault"):
        cards.find_cards(vault, schema, ["a", "Dana Reyes", "b"])


def test_a_request_is_planned_by_its_command(make_vault):
    root = make_vault({"people/Dana Reyes.md": "---\ntype: person\n---\n"})
    vault, schema = Vault.open(root), load_schema(root)
    plan = commands.plan_command(vault, schema, "log", {"note": "Dana Reyes", "text": ["met", "her"]}, TODAY)
    assert plan.command == "log" and plan.path == "people/Dana Reyes.md"
    assert plan.changes[0]["line"] == "- 2026-01-31: met her"
    with pytest.raises(cards.BadRequest):
        commands.plan_command(vault, schema, "set", {"note": "Dana Reyes", "fields": ["x=[a,"]}, TODAY)


def test_today_is_a_date_written_in_full():
    assert cli.today_value(" 2026-01-31 ") == TODAY
    for text in ("20260131", "31.01.2026", "2026-02-30", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            cli.today_value(text)


def test_a_history_line_is_timed_by_what_was_given():
    now = datetime.datetime(2026, 1, 31, 9, 0, tzinfo=datetime.UTC)
    assert decay.history_time(TODAY, now) == "2026-01-31T09:00:00+00:00"
    assert decay.history_time(TODAY, TODAY) == "2026-01-31"
    assert datetime.datetime.fromisoformat(decay.history_time(TODAY)).tzinfo is not None


def test_skipped_cards_are_counted_then_listed_up_to_shown():
    skipped = [{"path": f"n{i}.md", "reason": "undated", "detail": "d"} for i in range(decay_report.SHOWN + 2)]
    skipped.append({"path": "b.md", "reason": "not-a-date", "detail": "x"})
    lines = decay_report.skipped_lines(skipped)
    assert lines[0] == f"skipped: undated {decay_report.SHOWN + 2}, not-a-date 1"
    assert lines[1] == "  n0.md: undated: d"
    assert lines[-1] == "  ... 3 more (--json lists all)"
    assert len(lines) == decay_report.SHOWN + 2
    assert decay_report.skipped_lines([]) == []


def test_decay_touch_and_stats_report_from_their_json(make_vault):
    root = make_vault({"a.md": "---\nlast_accessed: 2026-01-01\ntier: active\n---\n", "b.md": "---\n---\n"})
    vault, schema = Vault.open(root), load_schema(root)
    settings = decay.Settings.of(schema)
    plan = decay.plan_decay(vault, schema, TODAY)
    data = decay_report.decay_data(plan, settings, TODAY, cli.outcome_of(plan.edits, None))
    assert data["transitions"] == {"active->cold": 1} and data["skipped_by_reason"] == {"undated": 1}
    assert decay_report.decay_lines(data) == [
        "decay 2026-01-31: 2 cards · core 0 · active 0 · warm 0 · cold 1 · archive 0",
        "tier changes: active -> cold 1",
    ]
    touch = decay.plan_touch(vault, schema, ["a.md"], TODAY)
    data = decay_report.touch_data(touch, TODAY, cli.outcome_of(touch.edits, None))
    assert decay_report.touch_lines(data, applied=False) == [
        "touched a.md: active -> active, access_count 1, last_accessed 2026-01-31 (dry run)"
    ]
    stats = decay_report.stats_data(vault, schema, TODAY, settings)
    assert stats["today"] == "2026-01-31" and stats["undated"] == 1
    assert decay_report.stats_lines(stats)[0] == "stats 2026-01-31: 2 cards"


def test_a_pick_is_described_in_one_short_line(make_vault):
    root = make_vault({"ideas/Old idea.md": "---\nlast_accessed: 2025-01-01\n---\n"})
    vault, schema = Vault.open(root), load_schema(root)
    settings = decay.Settings.of(schema)
    data = decay_report.creative_data(vault, schema, TODAY, settings, 3)
    assert data["seed"] == "2026-01-31" and data["pool"] == 1
    assert data["picks"][0]["description"] == "Old idea"
    assert decay_report.creative_lines(data, applied=True)[1:] == [
        "  ideas/Old idea.md  [archive, 395 days]",
        "      Old idea",
    ]


def test_init_reports_the_notes_it_skipped():
    skipped = [{"path": "a\x1b.md", "reason": "cannot be read"}]
    assert bootstrap.init_data({"edits": []}, skipped) == {"edits": [], "skipped": skipped}
    assert bootstrap.skipped_lines(skipped) == ["skipped a\\x1b.md: cannot be read"]
