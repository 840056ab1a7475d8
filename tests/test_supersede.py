"""supersede.py: cards of one entity with conflicting values; retired cards still current (issue 13)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from autograph.memory import supersede
from autograph.read.frontmatter import parse
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from autograph.write import sections
from conftest import SCRIPTS


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name[:-3]}", SCRIPTS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SUPERSEDE = load_script("supersede.py")


def run_json(capsys, *args) -> tuple[int, dict]:
    capsys.readouterr()
    code = SUPERSEDE.main([*map(str, args), "--json"])
    return code, json.loads(capsys.readouterr().out)


def card(fields: dict, body: str = "Body.") -> str:
    lines = ["---", *(f"{k}: {json.dumps(v)}" for k, v in fields.items()), "---", body]
    return "\n".join(lines) + "\n"


def props(root: Path, path: str) -> dict:
    return parse((root / path).read_text()).properties


OLD = {"type": "person", "email": "alex@acme.example", "role": "CTO", "company": "Acme", "updated": "2025-01-01"}
NEW = {"type": "person", "email": "ALEX@acme.example", "role": "CEO", "company": "Acme", "updated": "2026-06-01"}


def test_candidate_newest_is_current(make_vault, capsys):
    root = make_vault({"people/Alex Old.md": card(OLD), "people/Alex New.md": card(NEW)})
    code, report = run_json(capsys, root)
    assert code == 1
    [candidate] = report["candidates"]
    assert candidate["current"] == "people/Alex New.md"
    assert candidate["retired"] == ["people/Alex Old.md"]
    assert candidate["conflicts"] == {"role": {"CEO": ["people/Alex New.md"], "CTO": ["people/Alex Old.md"]}}
    assert candidate["strong"] is True and candidate["reason"] is None
    assert report["written"] == []


def test_apply_stamps_and_links_both_ways_once(make_vault, capsys):
    root = make_vault({"people/Alex Old.md": card(OLD), "people/Alex New.md": card(NEW)})
    code, report = run_json(capsys, root, "--apply")
    assert code == 0, report
    old = props(root, "people/Alex Old.md")
    assert old["status"] == "superseded" and old["superseded_by"] == "[[Alex New]]"
    assert old["role"] == "CTO"  # its own value stays, as history
    assert sections.items((root / "people/Alex Old.md").read_text(), "Related") == ["- [[Alex New]]"]
    assert sections.items((root / "people/Alex New.md").read_text(), "Related") == ["- [[Alex Old]]"]
    assert "status" not in props(root, "people/Alex New.md")
    before = {p: (root / p).read_bytes() for p in ("people/Alex Old.md", "people/Alex New.md")}
    code, again = run_json(capsys, root, "--apply")
    assert code == 0 and again["candidates"] == [] and again["edits"] == []
    assert {p: (root / p).read_bytes() for p in before} == before


def test_related_line_already_there_is_not_repeated(make_vault, capsys):
    root = make_vault(
        {
            "people/Alex Old.md": card(OLD),
            "people/Alex New.md": card(NEW, "Body.\n\n## Related\n- [[Alex Old]]"),
        }
    )
    run_json(capsys, root, "--apply")
    assert sections.items((root / "people/Alex New.md").read_text(), "Related") == ["- [[Alex Old]]"]


def test_equal_dates_are_undecided(make_vault, capsys):
    root = make_vault({"a.md": card({**OLD, "updated": "2026-01-01"}), "b.md": card({**NEW, "updated": "2026-01-01"})})
    before = {p: (root / p).read_bytes() for p in ("a.md", "b.md")}
    code, report = run_json(capsys, root, "--apply")
    [candidate] = report["candidates"]
    assert candidate["current"] is None and candidate["retired"] == []
    assert candidate["reason"].startswith("no card is strictly newer")
    assert code == 1 and {p: (root / p).read_bytes() for p in before} == before


def test_weak_group_is_reported_not_applied(make_vault, capsys):
    old = {"handle": "@alex", "role": "CTO", "updated": "2025-01-01"}
    new = {"handle": "Alex", "role": "CEO", "updated": "2026-01-01"}
    root = make_vault({"a.md": card(old), "b.md": card(new)})
    code, report = run_json(capsys, root, "--apply")
    [candidate] = report["candidates"]
    assert candidate["strong"] is False and candidate["current"] == "b.md"
    assert "handle" in candidate["reason"] and report["edits"] == [] and code == 1


def test_values_compare_without_case_and_lists_as_sets(make_vault):
    root = make_vault(
        {
            "a.md": card({**OLD, "role": "cto ", "tags": ["x", "y"], "company": ["Acme", "Beta"]}),
            "b.md": card({**NEW, "role": "CTO", "company": ["beta", "acme"]}),
        }
    )
    findings = supersede.find(Vault.open(root), load_schema(root))
    assert findings.candidates == []


def test_still_current_retired_card(make_vault, capsys):
    root = make_vault({"x.md": card({"superseded_by": "[[y]]", "status": "active"}), "y.md": "y"})
    code, report = run_json(capsys, root)
    assert report["still_current"] == [{"path": "x.md", "status": "active", "superseded_by": "[[y]]"}]
    assert code == 1
    code, report = run_json(capsys, root, "--apply")
    assert code == 0 and props(root, "x.md")["status"] == "superseded"
    assert (root / "x.md").read_text().startswith('---\nsuperseded_by: "[[y]]"\nstatus: superseded\n---')


def test_type_without_superseded_is_refused(make_vault, capsys):
    schema = {"node_types": {"person": {"status": ["active"], "supersedable": False}}}
    root = make_vault(
        {"schema.json": json.dumps(schema), "a.md": card(OLD), "b.md": card(NEW)},
    )
    code, report = run_json(capsys, root, "--apply")
    assert report["refused"] == [{"path": "a.md", "reason": supersede.NOT_SUPERSEDABLE}]
    assert "status" not in props(root, "a.md") and code == 1


def test_cards_with_different_emails_are_no_candidates(make_vault):
    """Supersede reads dedup's grouping: two people are never one entity."""
    root = make_vault({"a.md": card(OLD), "b.md": card({**NEW, "email": "alex@beta.example"})})
    assert supersede.find(Vault.open(root), load_schema(root)).candidates == []


def test_human_report(make_vault, capsys):
    root = make_vault({"people/Alex Old.md": card(OLD), "people/Alex New.md": card(NEW)})
    capsys.readouterr()
    assert SUPERSEDE.main([str(root), "--diff"]) == 1
    out = capsys.readouterr().out
    assert "current: people/Alex New.md; retired: people/Alex Old.md" in out
    assert '+superseded_by: "[[Alex New]]"' in out


def test_a_dry_run_of_a_command_with_apply_says_apply(tmp_path, capsys):
    """F11: the --apply hint stays for commands that write only with --apply."""
    (tmp_path / "people").mkdir()
    (tmp_path / "people" / "A.md").write_text("---\ntype: person\nstatus: active\nsuperseded_by: '[[B]]'\n---\n")
    (tmp_path / "people" / "B.md").write_text("---\ntype: person\nstatus: active\n---\n")
    capsys.readouterr()
    SUPERSEDE.main([str(tmp_path)])
    assert "run with --apply to write" in capsys.readouterr().out


def test_only_a_superseded_by_naming_another_card_retires_one(make_vault, capsys):
    """F15: a superseded_by that names no other card (TBD, 0, a missing note,
    a template, the card itself) is reported, never stamped; one that says nobody
    (false, none, -, n/a, empty) is left alone."""
    person = {"type": "person", "status": "active"}
    nobody = {
        f"people/N{i}.md": card({**person, "superseded_by": v}) for i, v in enumerate([False, "none", "-", "n/a", ""])
    }
    bogus = {
        "people/B0.md": card({**person, "superseded_by": 0}),
        "people/B1.md": card({**person, "superseded_by": "TBD"}),
        "people/B2.md": card({**person, "superseded_by": "[[Nobody Here]]"}),
        "people/B3.md": card({**person, "superseded_by": "[[Person Template]]"}),
        "people/B4.md": card({**person, "superseded_by": "[[B4]]"}),
    }
    real = {"people/Old.md": card({**person, "superseded_by": "[[New]]"}), "people/New.md": card(person)}
    template = {".obsidian/templates.json": '{"folder": "Templates"}', "Templates/Person Template.md": "x\n"}
    root = make_vault({**nobody, **bogus, **real, **template})
    before = {p: (root / p).read_bytes() for p in [*nobody, *bogus]}
    code, report = run_json(capsys, root, "--apply")
    assert code == 1, report
    assert [item["path"] for item in report["still_current"]] == ["people/Old.md"]
    assert sorted(item["path"] for item in report["unresolved"]) == sorted(bogus)
    assert props(root, "people/Old.md")["status"] == "superseded"
    assert {p: (root / p).read_bytes() for p in before} == before


def test_dates_compare_in_the_vault_time_zone_not_the_machines(make_vault, capsys, monkeypatch):
    """8 pm in Los Angeles on 1 March is 2 March in Tokyo: in a vault whose
    schema says Los Angeles, the card updated on 2 March is newer, on a
    machine in Tokyo as anywhere."""
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        root = make_vault(
            {
                "schema.json": json.dumps({"timezone": "America/Los_Angeles"}),
                "a.md": card({**OLD, "updated": "2026-03-01T20:00:00-08:00"}),
                "b.md": card({**NEW, "updated": "2026-03-02"}),
            }
        )
        code, report = run_json(capsys, root)
    finally:
        monkeypatch.undo()
        time.tzset()
    [candidate] = report["candidates"]
    assert candidate["current"] == "b.md" and candidate["retired"] == ["a.md"], candidate
    assert candidate["dates"] == {"a.md": "2026-03-01", "b.md": "2026-03-02"}
