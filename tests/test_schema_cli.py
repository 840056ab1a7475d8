"""Broken schema.json files as a person meets them at the shell, and the JSON Schema.

DESIGN.md: exit 2 for a bad schema "with a message naming the key and the
fix", never a traceback; issue 3: at least ten kinds of broken schema.json.
Each kind runs through ``enforce.py VAULT --schema BAD`` and ``graph.py
health VAULT --schema BAD`` as subprocesses.

``skills/autograph/schema.schema.json`` (draft 2020-12) must be a valid JSON
Schema, accept ``schema.example.json`` and ``examples/vault/schema.json``,
and reject the broken examples it can express.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.schema.model import validate
from conftest import EXAMPLE_VAULT, REPO, SCRIPTS
from jsonschema import Draft202012Validator

ENFORCE = SCRIPTS / "enforce.py"
GRAPH = SCRIPTS / "graph.py"
JSON_SCHEMA_PATH = REPO / "skills" / "autograph" / "schema.schema.json"
EXAMPLES = [REPO / "schema.example.json", EXAMPLE_VAULT / "schema.json"]

PERSON = {"description": "Someone", "folder": "people", "required": ["status"], "status": ["active", "superseded"]}


def with_person(**spec) -> dict:
    return {"node_types": {"person": {**PERSON, **spec}}}


# (id, schema.json text or data, what the message must name (the JSON path), what it must say to do)
BROKEN = [
    ("invalid-json", '{\n  "version": 1,\n  "node_types": {\n}', "line 4, column 2", "not valid JSON"),
    ("trailing-comma", '{\n  "version": 1,\n}\n', "line 3, column 1", "not valid JSON"),
    ("not-an-object", [1, 2], "$:", "expected a JSON object"),
    ("unknown-top-level-key", {"nodes": {}}, "$.nodes", "known keys are"),
    ("node-types-not-object", {"node_types": ["person"]}, "$.node_types", "expected an object"),
    ("type-not-object", {"node_types": {"person": "someone"}}, "$.node_types.person", "expected an object"),
    ("unknown-key-in-type", with_person(colour="blue"), "$.node_types.person.colour", "known keys are"),
    ("status-not-list", with_person(status="active"), "$.node_types.person.status", "expected a list of strings"),
    ("status-not-strings", with_person(status=["active", 3, "superseded"]), "$.node_types.person.status",
     "expected a list of strings"),
    ("status-lacks-superseded", with_person(status=["active"], supersedable=True), "$.node_types.person.status",
     '"superseded"'),
    ("folder-dotdot", with_person(folder="../outside"), "$.node_types.person.folder", "give a folder inside the vault"),
    ("folder-absolute", with_person(folder="/etc"), "$.node_types.person.folder", "relative to the vault"),
    ("folder-windows-absolute", with_person(folder="C:\\Users"), "$.node_types.person.folder", "relative to the vault"),
    ("decay-rate-above-1", {"decay": {"rate": 1.5}}, "$.decay.rate", "between 0 and 1"),
    ("decay-rate-negative", {"decay": {"rate": -0.1}}, "$.decay.rate", "between 0 and 1"),
    ("decay-type-rate", {"decay": {"type_rates": {"person": 7}}}, "$.decay.type_rates", "between 0 and 1"),
    ("hubs-not-object", {"hubs": ["MEMORY"]}, "$.hubs", "expected an object like"),
    ("hubs-names-not-list", {"hubs": {"names": "MEMORY"}}, "$.hubs.names", "expected a list of strings"),
    ("type-alias-unknown", {**with_person(), "type_aliases": {"contact": "human"}}, "$.type_aliases.contact",
     "add the type or fix the entry"),
    ("path-hint-unknown", {**with_person(), "path_type_hints": {"people": "human"}}, "$.path_type_hints.people",
     "add the type or fix the entry"),
    ("path-hint-folder-dotdot", {**with_person(), "path_type_hints": {"../x": "person"}}, "$.path_type_hints",
     "give a folder inside the vault"),
    ("status-default-outside-enum", {**with_person(), "status_defaults": {"person": "archived"}},
     "$.status_defaults.person", "pick one of its statuses"),
    ("status-default-unknown-type", {**with_person(), "status_defaults": {"human": "active"}},
     "$.status_defaults.human", "use a type name"),
    ("unknown-property-type", {"properties": {"due": "time"}}, "$.properties.due", "use one of"),
    ("identity-match-fields-not-list", {"identity": {"match_fields": "email"}}, "$.identity.match_fields",
     "a list of property names"),
    ("version-2", {"version": 2}, "$.version", "expected 1"),
    ("version-string", {"version": "1"}, "$.version", "expected 1"),
    ("field-fixes-not-map", {"field_fixes": {"status": ["ongoing"]}}, "$.field_fixes", "expected field ->"),
    ("domain-folder-absolute", {"domain_inference": {"/people": "work"}}, "$.domain_inference",
     "relative to the vault"),
]  # fmt: skip


def write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def vault(tmp_path) -> Path:
    return write(tmp_path / "vault" / "a.md", "---\ntype: person\nstatus: active\n---\nSee [[b]].\n").parent


def run(script: Path, *args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def test_at_least_ten_kinds():
    """Issue 3: "At least ten kinds of broken schema.json"."""
    assert len({kind for kind, *_ in BROKEN}) >= 10


@pytest.mark.parametrize("kind,content,where,fix", BROKEN, ids=[b[0] for b in BROKEN])
def test_enforce_refuses_broken_schema(vault, tmp_path, kind, content, where, fix):
    """enforce.py VAULT --schema BAD: exit 2, stderr names the JSON path and the fix, no traceback."""
    bad = write(tmp_path / "bad.json", content)
    proc = run(ENFORCE, vault, "--schema", bad)
    assert proc.returncode == 2, proc.stderr
    assert where in proc.stderr
    assert fix in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("kind,content,where,fix", BROKEN, ids=[b[0] for b in BROKEN])
def test_health_refuses_broken_schema(vault, tmp_path, kind, content, where, fix):
    """graph.py health VAULT --schema BAD: exit 2, the same message, no traceback."""
    bad = write(tmp_path / "bad.json", content)
    proc = run(GRAPH, "health", vault, "--schema", bad, "--dry-run")
    assert proc.returncode == 2, proc.stderr
    assert where in proc.stderr
    assert fix in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("kind,content,where,fix", BROKEN[:8], ids=[b[0] for b in BROKEN[:8]])
def test_vault_schema_json_broken_too(vault, kind, content, where, fix):
    """The same refusal when the broken file is VAULT/schema.json (found without --schema)."""
    write(vault / "schema.json", content)
    proc = run(ENFORCE, vault)
    assert proc.returncode == 2, proc.stderr
    assert where in proc.stderr and fix in proc.stderr
    assert "Traceback" not in proc.stderr


def test_message_names_the_schema_file(vault, tmp_path):
    """The message starts with the script and names the schema file it read."""
    bad = write(tmp_path / "my-schema.json", {"version": 2})
    proc = run(ENFORCE, vault, "--schema", bad)
    assert proc.stderr.startswith("enforce.py: bad schema: ")
    assert "my-schema.json" in proc.stderr


def test_every_problem_is_listed(vault, tmp_path):
    """Three problems in one file: all three JSON paths in one message."""
    bad = write(tmp_path / "bad.json", {"version": 2, "hubs": [], "node_types": {"person": {"colour": 1}}})
    proc = run(ENFORCE, vault, "--schema", bad)
    assert proc.returncode == 2
    for where in ("$.version", "$.hubs", "$.node_types.person.colour"):
        assert where in proc.stderr, where


def test_missing_schema_file(vault, tmp_path):
    """--schema pointing to a missing file: exit 2 naming the file and what to do."""
    proc = run(ENFORCE, vault, "--schema", tmp_path / "missing.json")
    assert proc.returncode == 2
    assert "missing.json" in proc.stderr
    assert "give the path of a schema.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_schema_file_health(vault, tmp_path):
    proc = run(GRAPH, "health", vault, "--schema", tmp_path / "missing.json", "--dry-run")
    assert proc.returncode == 2
    assert "missing.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_schema_path_is_a_folder(vault, tmp_path):
    """--schema pointing to a folder: exit 2 naming it and saying to give a schema.json file, no traceback."""
    folder = tmp_path / "schemas"
    folder.mkdir()
    proc = run(ENFORCE, vault, "--schema", folder)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "schemas" in proc.stderr
    assert "schema.json" in proc.stderr.split("schemas", 1)[1]


def test_schema_not_utf8(vault, tmp_path):
    """A schema file that is not UTF-8: exit 2, no traceback."""
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"description": "caf\xe9"}')
    proc = run(ENFORCE, vault, "--schema", bad)
    assert proc.returncode == 2
    assert "bad.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_empty_schema_file(vault, tmp_path):
    """An empty file is invalid JSON at line 1, column 1."""
    bad = write(tmp_path / "bad.json", "")
    proc = run(ENFORCE, vault, "--schema", bad)
    assert proc.returncode == 2
    assert "line 1, column 1" in proc.stderr


def test_a_good_schema_passes(vault, tmp_path):
    """The control: a valid schema gives exit 0."""
    good = write(tmp_path / "good.json", with_person())
    assert run(ENFORCE, vault, "--schema", good).returncode == 0


# ---------------------------------------------------------------------------
# The JSON Schema


@pytest.fixture(scope="module")
def json_schema() -> dict:
    return json.loads(JSON_SCHEMA_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator(json_schema) -> Draft202012Validator:
    return Draft202012Validator(json_schema)


def errors(validator, data) -> list[str]:
    return [error.message for error in validator.iter_errors(data)]


def test_json_schema_is_a_valid_draft_2020_12_schema(json_schema):
    Draft202012Validator.check_schema(json_schema)


def test_json_schema_declares_draft_2020_12(json_schema):
    assert json_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("path", EXAMPLES, ids=["schema.example.json", "examples-vault"])
def test_examples_validate_with_autograph(path):
    assert validate(json.loads(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=["schema.example.json", "examples-vault"])
def test_examples_validate_against_json_schema(validator, path):
    assert errors(validator, json.loads(path.read_text(encoding="utf-8"))) == []


def test_example_points_to_the_json_schema():
    """schema.example.json's ``$schema`` names the JSON Schema file (relative to the repository)."""
    example = json.loads((REPO / "schema.example.json").read_text(encoding="utf-8"))
    assert (REPO / example["$schema"]).resolve() == JSON_SCHEMA_PATH.resolve()


# broken examples the JSON Schema can express: it must reject each, as autograph does
EXPRESSIBLE = [
    ("status-lacks-superseded", with_person(status=["active"])),
    ("status-lacks-superseded-supersedable-true", with_person(status=["active"], supersedable=True)),
    ("unknown-top-level-key", {"nodes": {}}),
    ("unknown-key-in-type", with_person(colour="blue")),
    ("folder-dotdot", with_person(folder="../outside")),
    ("folder-dotdot-inside", with_person(folder="people/../../outside")),
    ("folder-absolute", with_person(folder="/etc")),
    ("folder-windows-absolute", with_person(folder="C:\\Users")),
    ("path-hint-folder-dotdot", {"path_type_hints": {"../x": "person"}}),
    ("domain-folder-absolute", {"domain_inference": {"/people": "work"}}),
    ("not-an-object", [1, 2]),
    ("node-types-not-object", {"node_types": ["person"]}),
    ("type-not-object", {"node_types": {"person": "someone"}}),
    ("status-not-list", with_person(status="active")),
    ("decay-rate-above-1", {"decay": {"rate": 1.5}}),
    ("hubs-not-object", {"hubs": ["MEMORY"]}),
    ("unknown-property-type", {"properties": {"due": "time"}}),
    ("identity-match-fields-not-list", {"identity": {"match_fields": "email"}}),
    ("version-2", {"version": 2}),
]


@pytest.mark.parametrize("kind,data", EXPRESSIBLE, ids=[e[0] for e in EXPRESSIBLE])
def test_json_schema_rejects_broken(validator, kind, data):
    assert errors(validator, data) != []


@pytest.mark.parametrize("kind,data", EXPRESSIBLE, ids=[e[0] for e in EXPRESSIBLE])
def test_autograph_rejects_the_same(kind, data):
    """autograph's own validation agrees with the JSON Schema on each broken example."""
    assert validate(data) != []


ACCEPTED = [
    ("supersedable-false", with_person(status=["active"], supersedable=False)),
    ("empty-status", with_person(status=[])),
    ("root-folder", with_person(folder="")),
    ("nested-folder", with_person(folder="work/people")),
    ("comment-keys", {"_comment": "x", "node_types": {"_comment": "y", "person": {**PERSON, "_note": 1}}}),
    ("property-alias", {"properties": {"country": "string", "done": "bool"}}),
]


@pytest.mark.parametrize("kind,data", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_json_schema_and_autograph_accept_the_same(validator, kind, data):
    """Valid schemas pass both checks."""
    assert errors(validator, data) == []
    assert validate(data) == []
