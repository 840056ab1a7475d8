"""The reports of graph.py built in the library, reached without a subprocess.

tests/test_graph_cli.py, test_fix.py, test_mv.py and test_report.py run the
script as a person does; these call the graph/ functions it prints from:
the lists cut short, the backlinks and orphans, the texts of fix and mv.
"""

from __future__ import annotations

import pytest
from autograph.graph import backlinks, linkfix, listing, moves
from autograph.read.index import NoteIndex
from autograph.read.vault import Vault
from autograph.schema.model import load_schema


def test_a_long_list_is_cut_short_and_counted():
    rows = [f"note {i}" for i in range(listing.SHOWN + 3)]
    lines = listing.shown(rows)
    assert len(lines) == listing.SHOWN + 1
    assert lines[0] == "  note 0"
    assert lines[-1] == "  ... 3 more (--json lists all)"
    assert listing.section("Orphans", []) == []
    assert listing.section("Orphans", ["a\x1bb.md"]) == ["Orphans (1):", "  a\\x1bb.md"]
    assert listing.listed(list("abcdefg")) == "a; b; c; d; e; and 2 more"


def test_a_note_is_named_as_a_path_a_name_or_a_link(make_vault):
    vault = Vault.open(make_vault({"people/Dana Reyes.md": "x"}))
    assert backlinks.note_name(vault, "[[Dana Reyes#Role|Dana]]") == "Dana Reyes"
    assert backlinks.note_name(vault, "./people/Dana Reyes") == "people/Dana Reyes"
    assert backlinks.note_name(vault, str(vault.root / "people" / "Dana Reyes.md")) == "people/Dana Reyes.md"
    with pytest.raises(backlinks.NoteError, match="NOTE is empty"):
        backlinks.note_name(vault, "  ")


def test_backlinks_and_orphans(make_vault):
    root = make_vault({"a.md": "[[b]] [[gone]]", "b.md": "x", "c.md": "[[gone|g]]"})
    vault = Vault.open(root)
    found = backlinks.find(vault, NoteIndex(vault), "b")
    assert backlinks.backlinks_json(found) == {
        "note": "b.md",
        "backlinks": [{"source": "a.md", "line": 1, "target": "b", "kind": "wikilink"}],
        "sources": ["a.md"],
    }
    assert backlinks.backlinks_text(found) == "b.md: 1 backlink from 1 note\n  a.md:1  b"
    broken = backlinks.find(vault, NoteIndex(vault), "gone")
    assert broken.path is None and broken.sources == ["a.md", "c.md"]
    with pytest.raises(backlinks.NoteError, match="no note matches"):
        backlinks.find(vault, NoteIndex(vault), "nothing")
    orphans = backlinks.orphan_notes(vault, load_schema(root), NoteIndex(vault))
    assert backlinks.orphans_json(orphans) == {"orphans": ["a.md", "c.md"], "count": 2}
    assert backlinks.orphans_text(orphans) == "2 orphans\n  a.md\n  c.md"


def test_the_fix_text_names_repairs_and_what_is_left(make_vault):
    root = make_vault({"a.md": "[[old/b]] [[gone]]", "new/b.md": "x"})
    vault = Vault.open(root)
    plan = linkfix.plan_fix(vault, load_schema(root), NoteIndex(vault))
    text = linkfix.fix_text(plan, applied=False)
    assert text.splitlines()[0] == "1 broken link to repair in 1 note"
    assert "1 broken link left (no certain target):" in text
    assert list(linkfix.fix_json(root, plan, {"run": None})) == ["vault", "planned", "ambiguous", "unfixable", "run"]


def test_a_dry_run_move_is_told_and_rolls_nothing_back(make_vault):
    root = make_vault({"a.md": "[[b]]", "b.md": "x", "c.md": "y"})
    vault = Vault.open(root)
    mapping = moves.paths_of(vault, "c.md", "d.md")
    plan = moves.plan_move(vault, mapping, load_schema(root), NoteIndex(vault))
    outcome = {"edits": [], "written": [], "conflicts": [], "failed": [], "run": None}
    assert moves.roll_back_unfinished(root, plan, outcome) is None
    assert (outcome["rolled_back"], outcome["not_rolled_back"], outcome["not_moved"]) == (None, [], [])
    told = moves.move_text(plan, outcome, done=False)
    assert told == "would move 1 file:\n  c.md -> d.md\n0 links in 0 notes to rewrite"
    data = moves.move_json(root, plan, outcome, [])
    assert data["moves"] == [{"from": "c.md", "to": "d.md"}] and data["links"] == []
    assert {row["op"] for row in data["changes"]} <= {"create", "rename", "trash"}
    assert moves.diff_text(plan.changes) == ""
