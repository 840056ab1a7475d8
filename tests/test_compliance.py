"""autograph.schema.compliance and enforce.py: every rule, the fixes, the score.

Issue 3 ("enforce.py"): a compliance report per rule and per note with line
numbers; fixes only with ``--apply`` and only as surgical edits (type
aliases, field fixes, missing required fields the schema gives a default
for, tags normalised: ``#`` dropped, empty items dropped); a status outside
its type's enum is reported, never replaced unless ``field_fixes`` maps it;
a type is never replaced by an inferred one; invalid frontmatter is reported
and left alone; the score does not depend on output flags.

Each rule of ``compliance.RULES`` has a test that triggers it (rule,
severity, 1-based file line, key, message, fixable or not) and one on a note
it must leave quiet.  Fixes go through ``compliance.plan_fixes`` and
``store.apply`` on a vault in a temporary folder; bytes are compared line by
line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.read import frontmatter
from autograph.read.note import BOM, Note
from autograph.read.vault import Vault
from autograph.schema import compliance
from autograph.schema.model import load_schema, validate
from autograph.write import store
from autograph.write.changes import Result
from conftest import SCRIPTS

ENFORCE = SCRIPTS / "enforce.py"

# A schema every rule can fire against.  person lives in people/, requires a
# status (no default) ; company requires a role that has a default.
BASE = {
    "node_types": {
        "person": {"folder": "people", "required": ["status"], "status": ["active", "inactive", "superseded"]},
        "company": {"folder": "companies", "required": ["role"], "status": [], "defaults": {"role": "client"}},
    },
    "type_aliases": {"contact": "person", "client": "company"},
    "path_type_hints": {"people": "person"},
    "properties": {"due": "date", "age": "number", "tags": "tags"},
}


# ---------------------------------------------------------------------------
# Helpers


def schema_of(tmp_path: Path, data: dict):
    """``data`` written as a schema file and loaded (so it is validated too)."""
    assert validate(data) == []
    path = tmp_path / "schema-under-test.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_schema(path=path)


def findings(tmp_path: Path, path: str, content: str | bytes, data: dict | None = None) -> list:
    """The findings of one note ``path`` holding ``content`` under schema ``data``."""
    schema = schema_of(tmp_path, BASE if data is None else data)
    raw = content.encode("utf-8") if isinstance(content, str) else content
    return compliance.check_note(Note.from_bytes(path, raw), schema)


def rows(found) -> list[tuple]:
    """(rule, severity, line, key, fixable) of each finding."""
    return [(f.rule, f.severity, f.line, f.key, f.fix is not None) for f in found]


def of_rule(found, rule: str) -> list:
    return [f for f in found if f.rule == rule]


def make(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return root


def fix(root: Path, schema) -> Result:
    """Check the vault at ``root``, plan the fixes and write them."""
    vault = Vault.open(root)
    report = compliance.check(vault, schema)
    return store.apply(root, compliance.plan_fixes(vault, report)[0])


def lines_of(data: bytes) -> list[bytes]:
    """Lines with their endings, so a changed ending shows on its line."""
    return data.splitlines(keepends=True)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".graph"
    }


def enforce(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ENFORCE), *map(str, args)], capture_output=True, text=True, timeout=60)


def enforce_json(*args) -> dict:
    proc = enforce(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_rules_are_the_ones_tested_here():
    """RULES holds exactly the rules this file triggers one by one."""
    assert set(compliance.RULES) == {
        "unreadable", "invalid-frontmatter", "no-frontmatter", "missing-type", "type-alias", "unknown-type",
        "field-fix", "status-not-allowed", "missing-required", "tags-format", "yaml-comment", "property-type",
        "misplaced", "quoted-date", "tab-in-value",
    }  # fmt: skip


COMPLIANT = "---\ntype: person\nstatus: active\ntags:\n  - team\ndue: 2024-05-01\nage: 41\n---\nBody #not-a-tag\n"


def test_a_compliant_note_has_no_findings(tmp_path):
    """A person card in people/ with every value right gives no finding at all."""
    assert findings(tmp_path, "people/ada.md", COMPLIANT) == []


# ---------------------------------------------------------------------------
# unreadable


def test_unreadable_note(tmp_path):
    """A note that is not UTF-8 is an error on line 1, not fixable."""
    found = findings(tmp_path, "people/x.md", b"---\ntype: person\nstatus: \xff\n---\n")
    assert rows(found) == [("unreadable", "error", 1, None, False)]
    assert "not valid UTF-8" in found[0].message


def test_unreadable_quiet_on_utf8_with_bom(tmp_path):
    """A UTF-8 note with a BOM is readable."""
    assert of_rule(findings(tmp_path, "people/x.md", BOM + COMPLIANT.encode()), "unreadable") == []


def test_unreadable_note_is_never_rewritten(tmp_path):
    """enforce --apply leaves a non-UTF-8 note's bytes alone even when a fix would apply."""
    data = b"---\ntype: contact\nstatus: caf\xe9\n---\n"
    root = make(tmp_path / "v", {"people/x.md": data})
    fix(root, schema_of(tmp_path, BASE))
    assert (root / "people/x.md").read_bytes() == data


# ---------------------------------------------------------------------------
# invalid-frontmatter


def test_invalid_frontmatter(tmp_path):
    """A block that does not parse is an error at the parse error's line, not fixable."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\ntitle: a: b\nstatus: active\n---\n")
    assert rows(found) == [("invalid-frontmatter", "error", 3, None, False)]
    assert "': ' inside an unquoted value" in found[0].message


def test_invalid_frontmatter_quiet_on_valid_block(tmp_path):
    """A quoted ': ' parses; no invalid-frontmatter."""
    text = '---\ntype: person\ntitle: "a: b"\nstatus: active\n---\n'
    assert of_rule(findings(tmp_path, "people/x.md", text), "invalid-frontmatter") == []


def test_invalid_frontmatter_is_never_rewritten_by_apply(tmp_path):
    """enforce --apply leaves a note whose block does not parse byte-identical."""
    data = b"---\ntype: contact\nstatus: ongoing\ntitle: a: b\n---\nBody\n"
    root = make(tmp_path / "v", {"people/x.md": data})
    fix(root, schema_of(tmp_path, {**BASE, "field_fixes": {"status": {"ongoing": "active"}}}))
    assert (root / "people/x.md").read_bytes() == data


# ---------------------------------------------------------------------------
# no-frontmatter


def test_no_frontmatter(tmp_path):
    """A bare note under a schema with types is a warning on line 1, not fixable (engine.py init is)."""
    found = findings(tmp_path, "people/x.md", "Just text.\n")
    assert rows(found) == [("no-frontmatter", "warning", 1, None, False)]
    assert "no frontmatter" in found[0].message


def test_no_frontmatter_quiet_without_node_types(tmp_path):
    """A schema without types asks for no frontmatter."""
    assert findings(tmp_path, "x.md", "Just text.\n", {"properties": {"due": "date"}}) == []


# ---------------------------------------------------------------------------
# missing-type


def test_missing_type_with_a_folder_hint_is_fixable(tmp_path):
    """No type in people/ (path_type_hints) : error on line 1, fixed to person."""
    found = of_rule(findings(tmp_path, "people/x.md", "---\nstatus: active\n---\n"), "missing-type")
    assert rows(found) == [("missing-type", "error", 1, "type", True)]
    assert found[0].fix == {"key": "type", "value": "person"}
    assert "missing required field type" in found[0].message


def test_missing_type_without_a_hint_is_reported_only(tmp_path):
    """No type in a folder nothing hints: reported, not fixable."""
    found = findings(tmp_path, "misc/x.md", "---\nstatus: active\n---\n")
    assert rows(found) == [("missing-type", "error", 1, "type", False)]


def test_empty_type_is_missing_at_its_line(tmp_path):
    """``type:`` with no value is a missing type, on the type line."""
    found = of_rule(findings(tmp_path, "misc/x.md", "---\nstatus: active\ntype:\n---\n"), "missing-type")
    assert rows(found) == [("missing-type", "error", 3, "type", False)]


def test_missing_type_quiet_when_typed(tmp_path):
    """A note with a schema type has no missing-type."""
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "missing-type") == []


# ---------------------------------------------------------------------------
# type-alias


def test_type_alias(tmp_path):
    """``type: contact`` (alias of person) is an error at the type line, fixed to person."""
    found = of_rule(findings(tmp_path, "people/x.md", "---\nstatus: active\ntype: contact\n---\n"), "type-alias")
    assert rows(found) == [("type-alias", "error", 3, "type", True)]
    assert found[0].fix == {"key": "type", "value": "person"}
    assert "'contact'" in found[0].message and "'person'" in found[0].message


def test_type_alias_wins_over_the_folder(tmp_path):
    """An alias is fixed to its own target, not to the type the folder hints."""
    found = of_rule(findings(tmp_path, "people/x.md", "---\ntype: client\nrole: vendor\n---\n"), "type-alias")
    assert [f.fix for f in found] == [{"key": "type", "value": "company"}]


def test_type_alias_quiet_on_the_real_type(tmp_path):
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "type-alias") == []


# ---------------------------------------------------------------------------
# unknown-type


def test_unknown_type(tmp_path):
    """A type not in node_types is an error at its line and is not fixable."""
    found = findings(tmp_path, "misc/x.md", "---\ntype: robot\n---\n")
    assert rows(found) == [("unknown-type", "error", 2, "type", False)]
    assert "'robot'" in found[0].message


def test_unknown_type_is_never_replaced_by_the_folders_type(tmp_path):
    """In people/ (hint: person) an unknown type is still reported only: no inferred replacement."""
    found = of_rule(findings(tmp_path, "people/x.md", "---\ntype: robot\nstatus: active\n---\n"), "unknown-type")
    assert rows(found) == [("unknown-type", "error", 2, "type", False)]


def test_non_string_type_is_never_replaced(tmp_path):
    """``type: [person]`` in people/ is reported, not replaced by the folder's type."""
    found = findings(tmp_path, "people/x.md", "---\ntype: [person]\nstatus: active\n---\n")
    assert rows(of_rule(found, "unknown-type")) == [("unknown-type", "error", 2, "type", False)]
    assert [f for f in found if f.key == "type" and f.fix is not None] == []


def test_unknown_type_file_unchanged_by_apply(tmp_path):
    """enforce --apply writes nothing into a note whose only problem is an unknown type."""
    data = b"---\ntype: robot\nstatus: active\n---\n"
    root = make(tmp_path / "v", {"people/x.md": data})
    assert fix(root, schema_of(tmp_path, BASE)).written == []
    assert (root / "people/x.md").read_bytes() == data


def test_unknown_type_quiet_on_known_type(tmp_path):
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "unknown-type") == []


# ---------------------------------------------------------------------------
# field-fix and status-not-allowed


FIXES = {**BASE, "field_fixes": {"status": {"ongoing": "active"}}}


def test_field_fix(tmp_path):
    """A value that field_fixes maps is an error at its line, fixed to the mapped value."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: ongoing\n---\n", FIXES)
    assert rows(found) == [("field-fix", "error", 3, "status", True)]
    assert found[0].fix == {"key": "status", "value": "active"}
    assert "'ongoing'" in found[0].message and "'active'" in found[0].message


def test_field_fix_on_another_property(tmp_path):
    """field_fixes works for any property, not only status."""
    data = {**BASE, "field_fixes": {"priority": {"hi": "high"}}}
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: active\npriority: hi\n---\n", data)
    assert rows(found) == [("field-fix", "error", 4, "priority", True)]
    assert found[0].fix == {"key": "priority", "value": "high"}


def test_field_fix_quiet_on_a_value_it_does_not_map(tmp_path):
    assert findings(tmp_path, "people/x.md", COMPLIANT, FIXES) == []


def test_field_fix_chain_resolved_to_its_end(tmp_path):
    """a -> b -> c: the finding fixes straight to c."""
    data = {**BASE, "field_fixes": {"status": {"ongoing": "current", "current": "active"}}}
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: ongoing\n---\n", data)
    assert [f.fix for f in found] == [{"key": "status", "value": "active"}]


def test_field_fix_chain_fixed_in_one_apply(tmp_path):
    """One --apply turns ongoing into active through current; nothing is left to fix."""
    data = {**BASE, "field_fixes": {"status": {"ongoing": "current", "current": "active"}}}
    root = make(tmp_path / "v", {"people/x.md": "---\ntype: person\nstatus: ongoing\n---\nBody\n"})
    schema = schema_of(tmp_path, data)
    fix(root, schema)
    assert (root / "people/x.md").read_bytes() == b"---\ntype: person\nstatus: active\n---\nBody\n"
    assert compliance.check(Vault.open(root), schema).findings == []


def test_field_fix_cycle_never_offers_a_fix_that_changes_nothing(tmp_path):
    """field_fixes done <-> Done: the schema is refused (exit 2 naming $.field_fixes.status) or a note
    already saying ``done`` gets no fix to ``done``; never a fixable finding that changes nothing."""
    data = {
        "node_types": {"task": {"status": ["done", "superseded"]}},
        "field_fixes": {"status": {"done": "Done", "Done": "done"}},
    }
    root = make(tmp_path / "v", {"x.md": "---\ntype: task\nstatus: done\n---\n"})
    (tmp_path / "cycle.json").write_text(json.dumps(data), encoding="utf-8")
    proc = enforce(root, "--schema", tmp_path / "cycle.json", "--json")
    if proc.returncode == 2:
        assert "$.field_fixes.status" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        noop = [f for f in json.loads(proc.stdout)["findings"] if f["fixable"] and f["fix"]["value"] == "done"]
        assert noop == []


def test_status_not_allowed(tmp_path):
    """A status outside the type's list is an error at its line, not fixable."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: weird\n---\n")
    assert rows(found) == [("status-not-allowed", "error", 3, "status", False)]
    assert "'weird'" in found[0].message
    assert "active, inactive, superseded" in found[0].message


def test_status_not_allowed_in_a_list(tmp_path):
    """A status list holding one unknown value is reported with that value."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus:\n  - active\n  - weird\n---\n")
    assert rows(found) == [("status-not-allowed", "error", 3, "status", False)]
    assert "'weird'" in found[0].message


def test_status_not_allowed_is_not_replaced_by_the_default(tmp_path):
    """Even with a status default in the schema, a wrong status is reported, never replaced."""
    data = {**BASE, "status_defaults": {"person": "active"}}
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: weird\n---\n", data)
    assert rows(found) == [("status-not-allowed", "error", 3, "status", False)]


def test_status_not_allowed_file_unchanged_by_apply(tmp_path):
    """enforce --apply leaves a wrong status as it is when field_fixes does not map it."""
    data = b"---\ntype: person\nstatus: weird\n---\nBody\n"
    root = make(tmp_path / "v", {"people/x.md": data})
    fix(root, schema_of(tmp_path, {**BASE, "status_defaults": {"default": "active"}}))
    assert (root / "people/x.md").read_bytes() == data


def test_status_not_allowed_quiet_on_allowed_status(tmp_path):
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "status-not-allowed") == []


def test_status_mapped_by_field_fixes_is_fixed_not_reported(tmp_path):
    """A status outside the list that field_fixes maps into it is a field-fix, and no status-not-allowed."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: ongoing\n---\n", FIXES)
    assert of_rule(found, "status-not-allowed") == []


# ---------------------------------------------------------------------------
# missing-required


def test_missing_required_without_default_is_reported(tmp_path):
    """person requires status and the schema gives no default: error on line 1, not fixable."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\n---\n")
    assert rows(found) == [("missing-required", "error", 1, "status", False)]
    assert "missing required field status" in found[0].message


def test_missing_required_with_type_default_is_fixable(tmp_path):
    """company requires role with defaults.role = client: fixable to client."""
    found = findings(tmp_path, "companies/x.md", "---\ntype: company\n---\n")
    assert rows(found) == [("missing-required", "error", 1, "role", True)]
    assert found[0].fix == {"key": "role", "value": "client"}


def test_missing_required_status_from_status_defaults(tmp_path):
    """status_defaults.default gives the missing status (it is in the type's list)."""
    found = findings(
        tmp_path, "people/x.md", "---\ntype: person\n---\n", {**BASE, "status_defaults": {"default": "active"}}
    )
    assert [f.fix for f in found] == [{"key": "status", "value": "active"}]


def test_missing_required_status_default_outside_the_list_is_not_used(tmp_path):
    """A status_defaults.default that the type does not allow is no default for it."""
    data = {**BASE, "status_defaults": {"default": "open"}}
    found = findings(tmp_path, "people/x.md", "---\ntype: person\n---\n", data)
    assert rows(found) == [("missing-required", "error", 1, "status", False)]


def test_missing_required_empty_value_at_its_line(tmp_path):
    """``status:`` left empty counts as missing, reported at its own line."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus:\n---\n")
    assert rows(found) == [("missing-required", "error", 3, "status", False)]


def test_missing_required_quiet_when_present(tmp_path):
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "missing-required") == []


def test_missing_required_default_fixed_in_place(tmp_path):
    """An empty ``role:`` is filled on its own line; a missing one is appended last in the block."""
    root = make(
        tmp_path / "v",
        {
            "companies/a.md": "---\ntype: company\nrole:\nname: A\n---\nBody\n",
            "companies/b.md": "---\ntype: company\nname: B\n---\nBody\n",
        },
    )
    fix(root, schema_of(tmp_path, BASE))
    assert lines_of((root / "companies/a.md").read_bytes()) == [
        b"---\n",
        b"type: company\n",
        b"role: client\n",
        b"name: A\n",
        b"---\n",
        b"Body\n",
    ]
    assert lines_of((root / "companies/b.md").read_bytes()) == [
        b"---\n",
        b"type: company\n",
        b"name: B\n",
        b"role: client\n",
        b"---\n",
        b"Body\n",
    ]


def test_missing_type_and_its_required_default_fixed_together(tmp_path):
    """A note without type in a hinted folder gets the type and that type's default in one go."""
    data = {**BASE, "path_type_hints": {"people": "person", "companies": "company"}}
    root = make(tmp_path / "v", {"companies/x.md": "---\nname: X\n---\n"})
    fix(root, schema_of(tmp_path, data))
    assert (root / "companies/x.md").read_bytes() == b"---\nname: X\ntype: company\nrole: client\n---\n"


# ---------------------------------------------------------------------------
# tags-format


def test_tags_format(tmp_path):
    """Tags with '#' and empty items: a warning at the tags line, fixed to the clean list."""
    text = '---\ntype: person\nstatus: active\ntags:\n  - "#team"\n  -\n  - lead\n---\n'
    found = findings(tmp_path, "people/x.md", text)
    assert rows(found) == [("tags-format", "warning", 4, "tags", True)]
    assert found[0].fix == {"key": "tags", "value": ["team", "lead"]}


def test_tags_format_quiet_on_clean_tags(tmp_path):
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "tags-format") == []


def test_tags_format_fix_drops_hash_and_empty_items(tmp_path):
    """After --apply the tags lines read ``- team`` and ``- lead`` in the file's list indentation."""
    text = '---\ntype: person\ntags:\n  - "#team"\n  -\n  - lead\nstatus: active\n---\nBody\n'
    root = make(tmp_path / "v", {"people/x.md": text})
    fix(root, schema_of(tmp_path, BASE))
    assert lines_of((root / "people/x.md").read_bytes()) == [
        b"---\n",
        b"type: person\n",
        b"tags:\n",
        b"  - team\n",
        b"  - lead\n",
        b"status: active\n",
        b"---\n",
        b"Body\n",
    ]


def test_tags_format_fix_drops_every_hash_of_a_string(tmp_path):
    """``tags: "#a #b"`` is fixed to tags without any '#': Obsidian reads the tags a and b."""
    root = make(tmp_path / "v", {"x.md": '---\ntags: "#a #b"\n---\n'})
    fix(root, schema_of(tmp_path, {}))
    value = Note.from_bytes("x.md", (root / "x.md").read_bytes()).properties["tags"]
    assert "#" not in json.dumps(value)


# ---------------------------------------------------------------------------
# yaml-comment


def test_yaml_comment_value(tmp_path):
    """``tags: #project #urgent`` is a warning at line 2 with BR-05's message, not fixable."""
    found = findings(tmp_path, "x.md", "---\ntags: #project #urgent\n---\n", {})
    assert rows(found) == [("yaml-comment", "warning", 2, None, False)]
    assert found[0].message == 'value is a YAML comment; quote it as "#project" or drop the #'


def test_yaml_comment_list_item(tmp_path):
    """``  - #alpha`` is a warning at its line."""
    found = of_rule(findings(tmp_path, "x.md", "---\naliases:\n  - A\n  - #alpha\n---\n", {}), "yaml-comment")
    assert rows(found) == [("yaml-comment", "warning", 4, None, False)]
    assert found[0].message == 'value is a YAML comment; quote it as "#alpha" or drop the #'


@pytest.mark.parametrize(
    "line",
    ['tags: "#project"', "# a comment line", "title: a#b", "url: https://example.org/#frag", "tags: []"],
)
def test_yaml_comment_quiet(tmp_path, line):
    """Quoted '#', a comment line, '#' without a space before it: no yaml-comment."""
    assert of_rule(findings(tmp_path, "x.md", f"---\n{line}\n---\n", {}), "yaml-comment") == []


def test_yaml_comment_quiet_inside_block_scalar(tmp_path):
    """``#`` lines inside a ``|`` block scalar are text, not comments."""
    text = "---\nquery: |\n  - #task\n  key: #x\n---\n"
    assert of_rule(findings(tmp_path, "x.md", text, {}), "yaml-comment") == []


# ---------------------------------------------------------------------------
# property-type


def test_property_type(tmp_path):
    """``age: old`` where properties says number: a warning at its line, not fixable."""
    found = findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: active\nage: old\n---\n")
    assert rows(found) == [("property-type", "warning", 4, "age", False)]
    assert "age should be number" in found[0].message


def test_property_type_string_number_is_not_a_number(tmp_path):
    """``age: '41'`` (quoted) is text, not a number."""
    found = of_rule(
        findings(tmp_path, "people/x.md", "---\ntype: person\nstatus: active\nage: '41'\n---\n"), "property-type"
    )
    assert rows(found) == [("property-type", "warning", 4, "age", False)]


@pytest.mark.parametrize(
    "kind,value",
    [
        ("checkbox", "false"),
        ("number", "7"),
        ("number", "2.5"),
        ("date", "2024-01-31"),
        ("text", "hello"),
        ("multitext", "[a, b]"),
        ("datetime", "2024-01-31T10:00:00"),
    ],
)
def test_property_type_quiet_when_the_value_fits(tmp_path, kind, value):
    """Each Obsidian property type accepts its own kind of value."""
    assert findings(tmp_path, "x.md", f"---\np: {value}\n---\n", {"properties": {"p": kind}}) == []


@pytest.mark.parametrize("alias,value", [("string", "NO"), ("bool", "false"), ("int", "7"), ("list", "[a]")])
def test_property_type_aliases(tmp_path, alias, value):
    """The aliases string/bool/int/list stand for text/checkbox/number/multitext."""
    assert findings(tmp_path, "x.md", f"---\np: {value}\n---\n", {"properties": {"p": alias}}) == []


def test_property_type_checkbox_rejects_yes(tmp_path):
    """``yes`` is a string (YAML 1.2), so a checkbox property holding it is reported."""
    found = findings(tmp_path, "x.md", "---\ndone: yes\n---\n", {"properties": {"done": "bool"}})
    assert rows(found) == [("property-type", "warning", 2, "done", False)]


# ---------------------------------------------------------------------------
# misplaced


def test_misplaced(tmp_path):
    """A person card outside people/ is a warning at the type line, never fixed (moves belong elsewhere)."""
    found = findings(tmp_path, "notes/x.md", "---\nstatus: active\ntype: person\n---\n")
    assert rows(found) == [("misplaced", "warning", 3, "type", False)]
    assert "people/" in found[0].message


@pytest.mark.parametrize("path", ["people/x.md", "people/team/x.md"])
def test_misplaced_quiet_in_the_types_folder(tmp_path, path):
    """people/ and its subfolders are the person type's home."""
    assert of_rule(findings(tmp_path, path, COMPLIANT), "misplaced") == []


def test_misplaced_in_a_folder_that_only_starts_alike(tmp_path):
    """people-archive/ is not people/: the card there is misplaced."""
    found = of_rule(findings(tmp_path, "people-archive/x.md", COMPLIANT), "misplaced")
    assert rows(found) == [("misplaced", "warning", 2, "type", False)]


# ---------------------------------------------------------------------------
# quoted-date


def test_quoted_date(tmp_path):
    """``due: "2024-05-01"`` with due a date: info at its line, not fixable."""
    found = findings(tmp_path, "people/x.md", '---\ntype: person\nstatus: active\ndue: "2024-05-01"\n---\n')
    assert rows(found) == [("quoted-date", "info", 4, "due", False)]
    assert "quoted date" in found[0].message


def test_quoted_date_quiet_when_unquoted(tmp_path):
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "quoted-date") == []


def test_quoted_date_quiet_without_a_date_property(tmp_path):
    """A quoted date in a property the schema does not type as a date is fine."""
    assert findings(tmp_path, "x.md", '---\nseen: "2024-05-01"\n---\n', {}) == []


# ---------------------------------------------------------------------------
# tab-in-value


def test_tab_in_value(tmp_path):
    """A tab inside a plain value is info "tab inside value, line 2"."""
    found = findings(tmp_path, "x.md", "---\ntitle: Tab\tinside value\n---\n", {})
    assert rows(found) == [("tab-in-value", "info", 2, None, False)]
    assert found[0].message == "tab inside value, line 2"


def test_tab_in_block_scalar_value(tmp_path):
    """A tab inside a ``|`` block scalar's text is reported at its own line."""
    found = findings(tmp_path, "x.md", "---\nnote: |\n  a\tb\n---\n", {})
    assert rows(found) == [("tab-in-value", "info", 3, None, False)]


def test_tab_in_value_quiet_without_tabs(tmp_path):
    assert of_rule(findings(tmp_path, "people/x.md", COMPLIANT), "tab-in-value") == []


def test_tab_in_value_quiet_in_a_comment_line(tmp_path):
    """A tab in a comment line is not inside any value."""
    assert findings(tmp_path, "x.md", "---\ntitle: x\n#\tnote to self\n---\n", {}) == []


def test_tab_in_value_quiet_after_the_value(tmp_path):
    """A trailing tab is not part of the plain value ``x`` (YAML drops it), so it is not inside it."""
    assert findings(tmp_path, "x.md", "---\ntitle: x\t\n---\n", {}) == []


# ---------------------------------------------------------------------------
# Surgical fixes

SURGICAL_SCHEMA = {
    "node_types": {
        "person": {"required": ["status", "role"], "status": ["active", "superseded"], "defaults": {"role": "member"}}
    },
    "type_aliases": {"contact": "person"},
    "field_fixes": {"status": {"ongoing": "active"}},
}
SURGICAL_BEFORE = (
    BOM
    + b"---\r\n"
    + b"# people card, kept by hand\r\n"
    + b"type: contact\r\n"
    + b"name: 'Ada Lovelace'\r\n"
    + b"status: ongoing\r\n"
    + b'aliases: [Ada, "The Countess"]\r\n'
    + b"tags:\r\n"
    + b'    - "#math"\r\n'
    + b"    -\r\n"
    + b"    - history\r\n"
    + b"\r\n"
    + b"born: 1815-12-10   # a comment\r\n"
    + b"---\r\n"
    + b"Body says type: contact and status: ongoing.\r\n"
    + b"---\r\n"
    + b"tags: #not-frontmatter\r\n"
)
SURGICAL_AFTER = [
    BOM + b"---\r\n",
    b"# people card, kept by hand\r\n",
    b"type: person\r\n",
    b"name: 'Ada Lovelace'\r\n",
    b"status: active\r\n",
    b'aliases: [Ada, "The Countess"]\r\n',
    b"tags:\r\n",
    b"    - math\r\n",
    b"    - history\r\n",
    b"\r\n",
    b"born: 1815-12-10   # a comment\r\n",
    b"role: member\r\n",
    b"---\r\n",
    b"Body says type: contact and status: ongoing.\r\n",
    b"---\r\n",
    b"tags: #not-frontmatter\r\n",
]


@pytest.fixture
def surgical(tmp_path) -> tuple[Path, Result]:
    root = make(tmp_path / "v", {"ada.md": SURGICAL_BEFORE})
    return root, fix(root, schema_of(tmp_path, SURGICAL_SCHEMA))


def test_surgical_fixes_change_only_the_fixed_keys_lines(surgical):
    """type, status, tags and the new role change; every other line keeps its bytes (BOM, CRLF, quotes, comments)."""
    root, _ = surgical
    assert lines_of((root / "ada.md").read_bytes()) == SURGICAL_AFTER


def test_surgical_fixes_keep_the_bom(surgical):
    root, _ = surgical
    assert (root / "ada.md").read_bytes()[:6] == BOM + b"---"


def test_surgical_fixes_keep_crlf_on_every_line(surgical):
    """No line of the fixed note ends in a bare LF."""
    root, _ = surgical
    assert re.findall(rb"(?<!\r)\n", (root / "ada.md").read_bytes()) == []


def test_surgical_fixes_keep_the_body(surgical):
    root, _ = surgical
    after = Note.from_bytes("ada.md", (root / "ada.md").read_bytes())
    assert after.body == Note.from_bytes("ada.md", SURGICAL_BEFORE).body


def test_surgical_fixes_leave_other_values_typed_the_same(surgical):
    """name, aliases and born read back exactly as before."""
    root, _ = surgical
    before = Note.from_bytes("ada.md", SURGICAL_BEFORE).properties
    after = Note.from_bytes("ada.md", (root / "ada.md").read_bytes()).properties
    for key in ("name", "aliases", "born"):
        assert after[key] == before[key], key
    assert set(after) == set(before) | {"role"}


def test_surgical_fixes_leave_nothing_to_fix(surgical, tmp_path):
    """Re-checking the fixed note finds nothing."""
    root, _ = surgical
    assert compliance.check(Vault.open(root), schema_of(tmp_path, SURGICAL_SCHEMA)).findings == []


def test_plan_fixes_is_one_edit_per_note_from_the_read_bytes(tmp_path):
    """plan_fixes returns one Edit per note, its ``before`` the bytes read, nothing written yet."""
    root = make(
        tmp_path / "v", {"ada.md": SURGICAL_BEFORE, "ok.md": "---\ntype: person\nstatus: active\nrole: x\n---\n"}
    )
    vault = Vault.open(root)
    edits, _ = compliance.plan_fixes(vault, compliance.check(vault, schema_of(tmp_path, SURGICAL_SCHEMA)))
    assert [(e.path, e.before) for e in edits] == [("ada.md", SURGICAL_BEFORE)]
    assert (root / "ada.md").read_bytes() == SURGICAL_BEFORE


# ---------------------------------------------------------------------------
# Flow-style frontmatter: findings, no fixes

FLOW = b"---\n{type: contact, status: ongoing, tags: ['#a', '']}\n---\nBody\n"


def test_flow_frontmatter_gets_findings(tmp_path):
    """A ``{...}`` block is checked like any other: alias, field fix, missing role, tags."""
    found = findings(tmp_path, "ada.md", FLOW, SURGICAL_SCHEMA)
    assert sorted(f.rule for f in found) == ["field-fix", "missing-required", "tags-format", "type-alias"]


def test_flow_frontmatter_gets_no_fixes(tmp_path):
    """None of the findings of a ``{...}`` block is fixable (it has no line per key)."""
    found = findings(tmp_path, "ada.md", FLOW, SURGICAL_SCHEMA)
    assert [f.rule for f in found if f.fix is not None] == []


def test_flow_frontmatter_unchanged_by_apply(tmp_path):
    root = make(tmp_path / "v", {"ada.md": FLOW})
    assert fix(root, schema_of(tmp_path, SURGICAL_SCHEMA)).written == []
    assert (root / "ada.md").read_bytes() == FLOW


# ---------------------------------------------------------------------------
# enforce.py: the score, --apply twice

MIXED = {
    "people/ada.md": "---\ntype: contact\nstatus: ongoing\n---\nBody\n",
    "people/bob.md": "---\ntype: person\nstatus: weird\ntags: [\"#x\", '']\n---\n",
    "people/cy.md": "---\nstatus: active\n---\n",
    "notes/bare.md": "No frontmatter.\n",
    "notes/tab.md": "---\ntype: person\nstatus: active\ntitle: a\tb\n---\n",
    "companies/acme.md": "---\ntype: company\n---\n",
    "companies/flow.md": "---\n{type: client}\n---\n",
    "broken.md": "---\ntitle: a: b\n---\n",
}


@pytest.fixture
def mixed(tmp_path) -> Path:
    root = make(tmp_path / "mixed", MIXED)
    (root / "schema.json").write_text(json.dumps({**BASE, "field_fixes": {"status": {"ongoing": "active"}}}))
    return root


def documented_score(report: dict) -> float:
    """``enforce.py --help``: mean over notes of 1 - the heaviest finding (error 1, warning 0.5, info 0), x100."""
    weight = {"error": 1.0, "warning": 0.5, "info": 0.0}
    worst: dict[str, float] = {}
    for finding in report["findings"]:
        worst[finding["path"]] = max(worst.get(finding["path"], 0.0), weight[finding["severity"]])
    return 100 * (1 - sum(worst.values()) / report["notes"])


def test_score_follows_the_documented_formula(mixed):
    report = enforce_json(mixed)
    assert report["score"] == pytest.approx(documented_score(report), abs=0.05)


def test_score_is_the_same_for_every_output_option(mixed):
    """Plain, --json, --diff, --json --diff, --dry-run: one score."""
    scores = {"--json": enforce_json(mixed)["score"], "--json --diff": enforce_json(mixed, "--diff")["score"]}
    for flags in ([], ["--diff"], ["--dry-run"]):
        proc = enforce(mixed, *flags)
        assert proc.returncode == 0, proc.stderr
        match = re.match(r"compliance: ([0-9.]+)/100", proc.stdout)
        assert match, proc.stdout
        scores[" ".join(flags) or "plain"] = float(match.group(1))
    assert len(set(scores.values())) == 1, scores


def test_report_does_not_write(mixed):
    """enforce.py without --apply (also with --diff) changes no byte."""
    before = snapshot(mixed)
    enforce(mixed, "--diff")
    enforce(mixed, "--json")
    assert snapshot(mixed) == before


def test_json_finding_keys(mixed):
    """Each JSON finding has path, line, rule, severity, message, key, fix, fixable."""
    report = enforce_json(mixed)
    assert report["findings"]
    for finding in report["findings"]:
        assert {"path", "line", "rule", "severity", "message", "key", "fix", "fixable"} <= set(finding)
        assert finding["fixable"] == (finding["fix"] is not None)
        assert finding["severity"] == compliance.RULES[finding["rule"]][0]


def test_apply_writes_exactly_the_fixable_notes(mixed):
    """--apply writes ada (alias, field fix), bob (tags), cy (missing type), acme (role) and nothing else."""
    report = enforce_json(mixed, "--apply")
    assert sorted(report["written"]) == ["companies/acme.md", "people/ada.md", "people/bob.md", "people/cy.md"]
    assert report["conflicts"] == []


def test_apply_leaves_reported_only_notes_alone(mixed):
    """The bare note, the tab note, the flow note and the broken note keep their bytes."""
    enforce_json(mixed, "--apply")
    for rel in ("notes/bare.md", "notes/tab.md", "companies/flow.md", "broken.md"):
        assert (mixed / rel).read_bytes() == MIXED[rel].encode(), rel


def test_apply_keeps_bobs_wrong_status(mixed):
    """bob's ``status: weird`` (no field_fixes entry) is still there after --apply."""
    enforce_json(mixed, "--apply")
    assert Note.from_bytes("b", (mixed / "people/bob.md").read_bytes()).properties["status"] == "weird"


def test_after_apply_nothing_is_fixable(mixed):
    """The run after --apply reports fixable 0, and --apply's own ``after`` says so too."""
    applied = enforce_json(mixed, "--apply")
    assert applied["after"]["fixable"] == 0
    assert enforce_json(mixed)["fixable"] == 0


def test_second_apply_changes_no_byte(mixed):
    enforce_json(mixed, "--apply")
    before = snapshot(mixed)
    second = enforce_json(mixed, "--apply")
    assert second["written"] == []
    assert snapshot(mixed) == before


def test_dry_run_wins_over_apply(mixed):
    """``--apply --dry-run`` writes nothing."""
    before = snapshot(mixed)
    report = enforce_json(mixed, "--apply", "--dry-run")
    assert report["written"] == []
    assert snapshot(mixed) == before


def test_fail_under(mixed):
    """--fail-under above the score exits 1; at or below it exits 0."""
    score = enforce_json(mixed)["score"]
    assert enforce(mixed, "--fail-under", min(100, score + 1)).returncode == 1
    assert enforce(mixed, "--fail-under", score).returncode == 0


def test_frontmatter_set_property_refuses_invalid_block():
    """The edit every fix goes through refuses a block that does not parse."""
    with pytest.raises(frontmatter.FrontmatterError):
        frontmatter.set_property("---\ntitle: a: b\n---\n", "type", "person")
