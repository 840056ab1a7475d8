"""The enforce and init parts of ``shared/cases`` as tests.

Each test asserts one fact of a case's ``expected.md`` (quoted in its
docstring) for ``enforce.py`` (report, ``--apply``, ``--repair``) and
``engine.py init``.  Everything runs on a temporary copy of the case
(fixture ``case``); schemas are written beside the copied vault, outside
it; bytes are compared as bytes.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.read import frontmatter
from autograph.read.note import BOM, Note
from conftest import SCRIPTS

ENFORCE = SCRIPTS / "enforce.py"
ENGINE = SCRIPTS / "engine.py"
GRAPH = SCRIPTS / "graph.py"

# a noon, so that the local calendar date is the same in every time zone's reading
MTIME = datetime.datetime(2024, 3, 5, 12, 0).timestamp()


def run(script: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=60)


def run_json(script: Path, *args) -> dict:
    proc = run(script, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def with_schema(folder: Path, data: dict) -> Path:
    """Write ``data`` as ``folder/../<name>.schema.json`` (outside the vault) and return its path."""
    path = folder.parent / f"{folder.name}.schema.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def findings_of(report: dict, path: str) -> list[dict]:
    return [f for f in report["findings"] if f["path"] == path]


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".graph"
    }


def parse_file(path: Path) -> frontmatter.Frontmatter | None:
    return Note.from_bytes(path.name, path.read_bytes()).frontmatter


def age(root: Path) -> None:
    """Give every file of ``root`` the modification time MTIME (init's ``created`` fallback)."""
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (MTIME, MTIME))


# ---------------------------------------------------------------------------
# BR-02: a UTF-8 BOM before the opening ---

PERSON = {"node_types": {"person": {"required": ["status"], "status": ["active", "superseded"]}}}


def test_br02_bom_note_counts_as_a_person(case):
    """BR-02 2: "enforce: the BOM'd note counts as a person" - no missing-type or unknown-type."""
    vault = case("BR-02") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, PERSON))
    rules = [f["rule"] for f in findings_of(report, "Samuel Example.md")]
    assert "missing-type" not in rules and "unknown-type" not in rules
    assert rules == []


def test_br02_bom_note_reads_like_the_copy_without_bom(case):
    """BR-02 2: the BOM'd note has the same findings as the BOM-less copy (none)."""
    vault = case("BR-02") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, PERSON))
    assert findings_of(report, "Samuel Example.md") == findings_of(report, "Samuel Example (no BOM).md") == []


# ---------------------------------------------------------------------------
# BR-04: YAML 1.1 implicit typing


@pytest.mark.parametrize(
    "properties",
    [{"country": "string"}, {"country": "text"}, {"done": "bool"}, {"done": "checkbox"}],
    ids=["country-string", "country-text", "done-bool", "done-checkbox"],
)
def test_br04_enforce_passes(case, properties):
    """BR-04: "enforce with a schema that says country: string must pass; with done: bool must pass"."""
    vault = case("BR-04") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, {"properties": properties}))
    assert report["findings"] == []
    assert report["score"] == 100.0


def test_br04_country_string_and_done_bool_together(case):
    """BR-04: both property types in one schema, still no finding."""
    vault = case("BR-04") / "vault"
    schema = with_schema(vault, {"properties": {"country": "string", "done": "bool", "count": "number"}})
    assert run_json(ENFORCE, vault, "--schema", schema)["findings"] == []


# ---------------------------------------------------------------------------
# BR-05: #tag in frontmatter starts a YAML comment

BR05_MESSAGE = 'value is a YAML comment; quote it as "{}" or drop the #'


def test_br05_inline_hashtags_warning(case):
    """BR-05 4: a warning at line 2 of inline-hashtags.md with the stated message."""
    report = run_json(ENFORCE, case("BR-05") / "vault")
    rows = [
        (f["path"], f["line"], f["severity"], f["message"]) for f in report["findings"] if f["rule"] == "yaml-comment"
    ]
    assert ("inline-hashtags.md", 2, "warning", BR05_MESSAGE.format("#project")) in rows


def test_br05_list_hashtags_warning(case):
    """BR-05 4: a warning at line 3 of list-hashtags.md (``  - #alpha``)."""
    report = run_json(ENFORCE, case("BR-05") / "vault")
    rows = [
        (f["path"], f["line"], f["severity"], f["message"]) for f in report["findings"] if f["rule"] == "yaml-comment"
    ]
    assert ("list-hashtags.md", 3, "warning", BR05_MESSAGE.format("#alpha")) in rows


def test_br05_exactly_two_comment_warnings(case):
    """BR-05 4: one warning per file, nothing else read as a comment."""
    report = run_json(ENFORCE, case("BR-05") / "vault")
    rows = [(f["path"], f["line"]) for f in report["findings"] if f["rule"] == "yaml-comment"]
    assert rows == [("inline-hashtags.md", 2), ("list-hashtags.md", 3)]


def test_br05_human_report_names_file_and_line(case):
    """BR-05 4: "The warning carries the file path and 1-based line number" in the human report too."""
    proc = run(ENFORCE, case("BR-05") / "vault")
    assert proc.returncode == 0, proc.stderr
    assert "inline-hashtags.md:2" in proc.stdout
    assert "list-hashtags.md:3" in proc.stdout


def test_br05_apply_never_rewrites_the_inline_comment_line(case):
    """BR-05 5: "The tool never silently rewrites these lines" - enforce --apply keeps line 2 of inline-hashtags.md."""
    vault = case("BR-05") / "vault"
    run_json(ENFORCE, vault, "--apply")
    assert (vault / "inline-hashtags.md").read_bytes().splitlines(keepends=True)[1] == b"tags: #project #urgent\n"


def test_br05_apply_never_rewrites_the_list_comment_line(case):
    """BR-05 5: enforce --apply keeps line 3 of list-hashtags.md (``  - #alpha``): the tag alpha is not lost."""
    vault = case("BR-05") / "vault"
    run_json(ENFORCE, vault, "--apply")
    assert (vault / "list-hashtags.md").read_bytes().splitlines(keepends=True)[2] == b"  - #alpha\n"


def test_br05_repair_inline_hashtags(case):
    """BR-05 5: the explicit repair turns line 2 into ``tags:``, ``  - project``, ``  - urgent``."""
    vault = case("BR-05") / "vault"
    run_json(ENFORCE, vault, "--repair", "--apply")
    assert (vault / "inline-hashtags.md").read_bytes() == b"---\ntags:\n  - project\n  - urgent\n---\nBody.\n"


def test_br05_repair_list_hashtags(case):
    """BR-05 5: the explicit repair turns line 3 into ``  - alpha``; nothing else changes."""
    vault = case("BR-05") / "vault"
    run_json(ENFORCE, vault, "--repair", "--apply")
    assert (vault / "list-hashtags.md").read_bytes() == b'---\ntags:\n  - alpha\n  - beta\n  - "#gamma"\n---\nBody.\n'


def test_br05_repair_without_apply_writes_nothing(case):
    """BR-05 5: --repair alone shows the diff and writes nothing."""
    vault = case("BR-05") / "vault"
    before = snapshot(vault)
    proc = run(ENFORCE, vault, "--repair")
    assert proc.returncode == 0, proc.stderr
    assert "+  - project" in proc.stdout
    assert snapshot(vault) == before


# ---------------------------------------------------------------------------
# BR-06: unquoted value containing ': '

TYPED = {"node_types": {"feedback": {}}}


def test_br06_listed_as_invalid_frontmatter(case):
    """BR-06 2: enforce lists spec-rules.md as invalid frontmatter (line 3), not missing type."""
    vault = case("BR-06") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, TYPED))
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("invalid-frontmatter", 3)]


def test_br06_apply_leaves_it_alone(case):
    """BR-06 3: without --repair, --apply leaves the file's bytes unchanged."""
    vault = case("BR-06") / "vault"
    before = snapshot(vault)
    run_json(ENFORCE, vault, "--apply", "--schema", with_schema(vault, TYPED))
    assert snapshot(vault) == before


def test_br06_repair_gives_the_expected_bytes(case):
    """BR-06 4: ``enforce.py --repair --apply`` produces exactly expected-after-repair/spec-rules.md."""
    root = case("BR-06")
    run_json(ENFORCE, root / "vault", "--repair", "--apply")
    expected = (root / "expected-after-repair" / "spec-rules.md").read_bytes()
    assert (root / "vault" / "spec-rules.md").read_bytes() == expected


def test_br06_repair_then_parses(case):
    """BR-06 4: after the repair, parse gives name, description and type."""
    vault = case("BR-06") / "vault"
    run_json(ENFORCE, vault, "--repair", "--apply")
    assert parse_file(vault / "spec-rules.md").properties == {
        "name": "spec rules",
        "description": "Rules for writing spec artifacts (REQ/DESIGN/TASK): read the schema first",
        "type": "feedback",
    }


def test_br06_repair_reports_what_it_did(case):
    """BR-06 4: the JSON report lists the repair of spec-rules.md."""
    vault = case("BR-06") / "vault"
    report = run_json(ENFORCE, vault, "--repair", "--apply")
    assert [r["path"] for r in report["repairs"]] == ["spec-rules.md"]
    assert report["written"] == ["spec-rules.md"]


# ---------------------------------------------------------------------------
# BR-09: a quoted date


def test_br09_quoted_date_is_info(case):
    """BR-09 2: enforce with ``quoted`` typed date reports "quoted date" as info only (line 4)."""
    vault = case("BR-09") / "vault"
    schema = with_schema(vault, {"properties": {"date": "date", "published": "datetime", "quoted": "date"}})
    report = run_json(ENFORCE, vault, "--schema", schema)
    rows = [(f["rule"], f["severity"], f["line"], f["key"]) for f in report["findings"]]
    assert rows == [("quoted-date", "info", 4, "quoted")]
    assert "quoted date" in report["findings"][0]["message"]


def test_br09_quoted_date_does_not_lower_the_score(case):
    """BR-09 2: info only, so the compliance score stays 100."""
    vault = case("BR-09") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, {"properties": {"quoted": "date"}}))
    assert report["score"] == 100.0


# ---------------------------------------------------------------------------
# BR-12: empty or comment-only frontmatter

BR12 = ["comment-only.md", "empty.md", "frontmatter-only.md", "no-trailing-newline.md"]


def test_br12_missing_type_for_all_four(case):
    """BR-12 2: with node_types, "missing required field type" for all four notes."""
    vault = case("BR-12") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, {"node_types": {"note": {}}}))
    rows = [(f["path"], f["rule"]) for f in report["findings"]]
    assert rows == [(name, "missing-type") for name in BR12]
    assert all("missing required field type" in f["message"] for f in report["findings"])


def test_br12_not_invalid_frontmatter(case):
    """BR-12 2: none of the four is "invalid frontmatter"; enforce exits 0 (no crash)."""
    vault = case("BR-12") / "vault"
    proc = run(ENFORCE, vault, "--json", "--schema", with_schema(vault, {"node_types": {"note": {}}}))
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr
    assert [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "invalid-frontmatter"] == []


# ---------------------------------------------------------------------------
# BR-14: a --- block that is valid YAML but not a mapping


def test_br14_invalid_frontmatter_not_missing_type(case):
    """BR-14 4: enforce lists both as invalid frontmatter (not "missing type")."""
    vault = case("BR-14") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, {"node_types": {"note": {}}}))
    rows = [(f["path"], f["rule"], f["line"]) for f in report["findings"]]
    assert rows == [("letterhead.md", "invalid-frontmatter", 2), ("list-preamble.md", "invalid-frontmatter", 2)]


def test_br14_messages_name_string_and_list(case):
    """BR-14 1/4: the findings say "is a string" and "is a list"."""
    vault = case("BR-14") / "vault"
    report = run_json(ENFORCE, vault, "--schema", with_schema(vault, {"node_types": {"note": {}}}))
    messages = [f["message"] for f in report["findings"]]
    assert "frontmatter is a string, expected key: value pairs" in messages[0]
    assert "frontmatter is a list, expected key: value pairs" in messages[1]


# ---------------------------------------------------------------------------
# BR-15: tabs used for indentation


def test_br15_tab_in_value_info(case):
    """BR-15 2: info "tab inside value, line 2" for tab-in-value.md."""
    report = run_json(ENFORCE, case("BR-15") / "vault")
    rows = [(f["rule"], f["severity"], f["line"], f["message"]) for f in findings_of(report, "tab-in-value.md")]
    assert rows == [("tab-in-value", "info", 2, "tab inside value, line 2")]


def test_br15_tabbed_is_invalid(case):
    """BR-15 1: tabbed.md is invalid frontmatter at line 4 ("tab used for indentation")."""
    report = run_json(ENFORCE, case("BR-15") / "vault")
    rows = [(f["rule"], f["line"]) for f in findings_of(report, "tabbed.md")]
    assert rows == [("invalid-frontmatter", 4)]
    assert "tab used for indentation" in findings_of(report, "tabbed.md")[0]["message"]


def test_br15_repair_gives_the_expected_bytes(case):
    """BR-15 3: --repair --apply produces exactly expected-after-repair/tabbed.md."""
    root = case("BR-15")
    run_json(ENFORCE, root / "vault", "--repair", "--apply")
    expected = (root / "expected-after-repair" / "tabbed.md").read_bytes()
    assert (root / "vault" / "tabbed.md").read_bytes() == expected


def test_br15_repair_leaves_tab_in_value_alone(case):
    """BR-15 2/3: the repair touches only leading tabs; tab-in-value.md parses and keeps its bytes."""
    vault = case("BR-15") / "vault"
    before = (vault / "tab-in-value.md").read_bytes()
    run_json(ENFORCE, vault, "--repair", "--apply")
    assert (vault / "tab-in-value.md").read_bytes() == before


def test_br15_normal_apply_refuses_tabbed(case):
    """BR-15 3: "normal rewrites of tabbed.md are refused" - enforce --apply with a fix to make leaves it."""
    vault = case("BR-15") / "vault"
    # the title would be fixed if the block parsed
    schema = with_schema(vault, {"field_fixes": {"title": {"Reading list": "Reading List"}}})
    before = (vault / "tabbed.md").read_bytes()
    report = run_json(ENFORCE, vault, "--apply", "--schema", schema)
    assert "tabbed.md" not in report["written"]
    assert (vault / "tabbed.md").read_bytes() == before


def test_br15_set_property_refuses_tabbed(case):
    """BR-15 3: the surgical edit itself refuses tabbed.md."""
    path = case("BR-15") / "vault" / "tabbed.md"
    with pytest.raises(frontmatter.FrontmatterError):
        Note.from_bytes("tabbed.md", path.read_bytes()).with_property("status", "active")


# ---------------------------------------------------------------------------
# engine.py init: never a second block (BR-02, BR-12, BR-14)


def test_init_br02_bom_note_untouched(case):
    """BR-02: init finds the block behind the BOM; the BOM'd note keeps every byte."""
    vault = case("BR-02") / "vault"
    before = (vault / "Samuel Example.md").read_bytes()
    run_json(ENGINE, "init", "--apply", vault)
    assert (vault / "Samuel Example.md").read_bytes() == before


def test_init_br02_writes_only_the_bare_note(case):
    """BR-02: only log.md (no frontmatter) is written."""
    vault = case("BR-02") / "vault"
    assert run_json(ENGINE, "init", "--apply", vault)["written"] == ["log.md"]


def test_init_br02_bare_note_gets_one_block(case):
    """BR-02: log.md gets a block with created (its modification date) before its text."""
    vault = case("BR-02") / "vault"
    age(vault)
    run_json(ENGINE, "init", "--apply", vault)
    assert (vault / "log.md").read_bytes() == b"---\ncreated: 2024-03-05\n---\nLunch with [[Samuel Example|Sam]].\n"


def test_init_bom_bare_note_keeps_bom_first(case):
    """BR-02: a bare note with a BOM keeps the BOM as its first 3 bytes, the new block right after."""
    vault = case("BR-02") / "vault"
    (vault / "bare.md").write_bytes(BOM + b"Just text.\n")
    age(vault)
    run_json(ENGINE, "init", "--apply", vault)
    assert (vault / "bare.md").read_bytes() == BOM + b"---\ncreated: 2024-03-05\n---\nJust text.\n"


def test_init_br12_empty_block_filled_in_place(case):
    """BR-12: ``---``/``---`` gets created inside that block, no second block."""
    vault = case("BR-12") / "vault"
    age(vault)
    run_json(ENGINE, "init", "--apply", vault)
    assert (vault / "empty.md").read_bytes() == b"---\ncreated: 2024-03-05\n---\nBody\n"


def test_init_br12_comment_only_block_keeps_its_comment(case):
    """BR-12: the comment-only block gets created after the comment, inside the block."""
    vault = case("BR-12") / "vault"
    age(vault)
    run_json(ENGINE, "init", "--apply", vault)
    assert (vault / "comment-only.md").read_bytes() == b"---\n# draft, fill in later\ncreated: 2024-03-05\n---\nBody\n"


def test_init_br12_notes_with_properties_untouched(case):
    """BR-12: frontmatter-only.md and no-trailing-newline.md have properties; init leaves their bytes."""
    vault = case("BR-12") / "vault"
    before = {name: (vault / name).read_bytes() for name in ("frontmatter-only.md", "no-trailing-newline.md")}
    run_json(ENGINE, "init", "--apply", vault)
    assert {name: (vault / name).read_bytes() for name in before} == before


def test_init_br12_written(case):
    """BR-12: init writes exactly the empty and the comment-only note."""
    assert sorted(run_json(ENGINE, "init", "--apply", case("BR-12") / "vault")["written"]) == [
        "comment-only.md",
        "empty.md",
    ]


def test_init_br14_skipped_and_reported(case):
    """BR-14: both non-mapping blocks are skipped and reported with the parse error."""
    report = run_json(ENGINE, "init", "--apply", case("BR-14") / "vault")
    assert report["written"] == []
    assert [(s["path"], "is a string" in s["reason"] or "is a list" in s["reason"]) for s in report["skipped"]] == [
        ("letterhead.md", True),
        ("list-preamble.md", True),
    ]


def test_init_br14_bytes_unchanged(case):
    """BR-14 3: no writer adds a second block in front or replaces the preamble."""
    vault = case("BR-14") / "vault"
    before = snapshot(vault)
    run_json(ENGINE, "init", "--apply", vault)
    assert snapshot(vault) == before


def test_init_br14_human_report_names_the_skipped(case):
    """BR-14: without --json, init prints each skipped note."""
    proc = run(ENGINE, "init", case("BR-14") / "vault")
    assert proc.returncode == 0, proc.stderr
    assert "skipped letterhead.md" in proc.stdout
    assert "skipped list-preamble.md" in proc.stdout


@pytest.mark.parametrize("name", ["BR-02", "BR-12", "BR-14"])
def test_init_twice_changes_nothing_more(case, name):
    """A second init writes nothing."""
    vault = case(name) / "vault"
    run_json(ENGINE, "init", "--apply", vault)
    before = snapshot(vault)
    assert run_json(ENGINE, "init", "--apply", vault)["written"] == []
    assert snapshot(vault) == before


@pytest.mark.parametrize("name", ["BR-02", "BR-12", "BR-14"])
def test_init_never_leaves_two_blocks(case, name):
    """After init every note that parses has one block: its body does not start with another."""
    vault = case(name) / "vault"
    run_json(ENGINE, "init", "--apply", vault)
    for path in sorted(vault.glob("*.md")):
        note = Note.from_bytes(path.name, path.read_bytes())
        if note.frontmatter is not None and note.frontmatter.error is None:
            assert frontmatter.parse(note.body) is None or note.body == "", path.name


def test_init_dry_run_writes_nothing(case):
    vault = case("BR-12") / "vault"
    before = snapshot(vault)
    report = run_json(ENGINE, "init", vault, "--dry-run")
    assert sorted(e["path"] for e in report["edits"]) == ["comment-only.md", "empty.md"]
    assert snapshot(vault) == before


def test_init_type_and_status_from_the_schema(case):
    """init with path hints gives a bare note in a hinted folder its type and that type's default status."""
    vault = case("BR-02") / "vault"
    (vault / "people").mkdir()
    (vault / "people" / "Ann.md").write_bytes(b"Met Ann.\n")
    age(vault)
    schema = with_schema(vault, {
        "node_types": {"person": {"folder": "people", "status": ["active", "superseded"]}},
        "status_defaults": {"person": "active"},
    })  # fmt: skip
    run_json(ENGINE, "init", "--apply", vault, "--schema", schema)
    assert (vault / "people" / "Ann.md").read_bytes() == (
        b"---\ntype: person\nstatus: active\ncreated: 2024-03-05\n---\nMet Ann.\n"
    )


# ---------------------------------------------------------------------------
# BR-43: an empty flow mapping as the whole frontmatter


def test_br43_empty_flow_mapping_is_valid_and_empty(case):
    """BR-43 1: parse gives {}; health does not list the note as invalid."""
    vault = case("BR-43") / "vault"
    note = Note.from_bytes("people/New Contact.md", (vault / "people" / "New Contact.md").read_bytes())
    assert note.frontmatter.valid and note.frontmatter.properties == {}
    report = run_json(GRAPH, "health", vault)
    assert report["invalid_frontmatter"] == []


def test_br43_enforce_apply_gives_the_expected_bytes(case):
    """BR-43 2: enforce --apply replaces '{}' with the type from the folder hint, in block style."""
    folder = case("BR-43")
    report = run_json(ENFORCE, folder / "vault", "--apply")
    assert report["written"] == ["people/New Contact.md"]
    expected = (folder / "expected-after" / "people" / "New Contact.md").read_bytes()
    assert (folder / "vault" / "people" / "New Contact.md").read_bytes() == expected


def test_br43_two_keys_into_an_empty_flow_mapping(case):
    """BR-43 2, 4: with a schema asking for two keys both land in block style (this crashed the run)."""
    vault = case("BR-43") / "vault"
    schema = with_schema(vault, {
        "node_types": {"person": {"folder": "people", "required": ["status"], "status": ["active", "superseded"]}},
        "path_type_hints": {"people/": "person"},
        "status_defaults": {"person": "active"},
    })  # fmt: skip
    report = run_json(ENFORCE, vault, "--apply", "--schema", schema)
    assert report["written"] == ["people/New Contact.md"]
    assert (vault / "people" / "New Contact.md").read_bytes() == b"---\ntype: person\nstatus: active\n---\nbody\n"


def test_br43_engine_init_replaces_the_empty_flow_mapping(case):
    """BR-43 2: engine init also replaces the '{}' line with block-style keys."""
    vault = case("BR-43") / "vault"
    age(vault)
    run_json(ENGINE, "init", "--apply", vault)
    assert (vault / "people" / "New Contact.md").read_bytes() == (
        b"---\ntype: person\ncreated: 2024-03-05\n---\nbody\n"
    )


@pytest.mark.parametrize("block", ["[]", "just a string", "- a\n- b", "42"])
def test_br43_a_block_that_is_not_a_mapping_is_invalid_and_never_rewritten(case, block):
    """BR-43 3: an empty flow sequence, a scalar or any other non-mapping is invalid and left alone."""
    vault = case("BR-43") / "vault"
    path = vault / "people" / "New Contact.md"
    data = f"---\n{block}\n---\nbody\n".encode()
    path.write_bytes(data)
    assert path.relative_to(vault).as_posix() in [
        p["path"] for p in run_json(GRAPH, "health", vault)["invalid_frontmatter"]
    ]
    run_json(ENFORCE, vault, "--apply")
    run_json(ENGINE, "init", "--apply", vault)
    assert path.read_bytes() == data


def test_br43_a_note_that_cannot_be_edited_never_stops_the_run(case):
    """BR-43 4: a flow mapping with keys is read, reported as not editable, and every other note is fixed."""
    vault = case("BR-43") / "vault"
    flow = b"---\n{type: contact, status: active}\n---\nbody\n"
    (vault / "people" / "Flow.md").write_bytes(flow)
    (vault / "people" / "Other.md").write_bytes(b"---\nname: Other\n---\nbody\n")
    schema = with_schema(vault, {
        "node_types": {"person": {"folder": "people", "status": ["active", "superseded"]}},
        "type_aliases": {"contact": "person"},
        "path_type_hints": {"people/": "person"},
    })  # fmt: skip
    report = run_json(ENFORCE, vault, "--apply", "--schema", schema)
    assert sorted(report["written"]) == ["people/New Contact.md", "people/Other.md"]
    (finding,) = [f for f in report["findings"] if f["path"] == "people/Flow.md"]
    assert finding["rule"] == "type-alias" and not finding["fixable"] and "flow mapping" in finding["message"]
    assert (vault / "people" / "Flow.md").read_bytes() == flow
