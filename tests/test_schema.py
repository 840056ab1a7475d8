"""autograph.schema.model: where the schema comes from, what a broken one reports, hubs.

DESIGN.md ("Schema", "Command-line conventions"): ``--schema PATH``, else
``VAULT/schema.json``, else built-in defaults; unknown top-level keys, wrong
types, a status enum missing ``superseded`` when the type can be superseded
and folders that escape the vault are errors naming the JSON path of the
problem and the fix.  ``schema.example.json`` at the repository root must
validate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autograph.schema.model import Schema, SchemaError, load_schema, validate

REPO = Path(__file__).resolve().parents[1]

PERSON = {"description": "Someone", "folder": "people", "required": ["description"], "status": ["active", "superseded"]}


def write_schema(folder: Path, data, name: str = "schema.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def schema_error(tmp_path: Path, data) -> SchemaError:
    """The SchemaError that loading ``data`` as VAULT/schema.json raises."""
    vault = tmp_path / "vault"
    write_schema(vault, data)
    with pytest.raises(SchemaError) as raised:
        load_schema(vault)
    return raised.value


# ---------------------------------------------------------------------------
# Where the schema comes from


def test_built_in_defaults_without_any_schema(tmp_path):
    schema = load_schema(tmp_path)
    assert schema.source is None
    assert schema.node_types == {}
    # the hub defaults documented in graph.py health --help
    assert schema.hub_names == {"memory", "index", "_index"}
    assert schema.hub_types == {"moc", "index", "hub"}


def test_defaults_when_no_vault_is_given():
    assert load_schema().source is None


def test_vault_schema_json_is_used(tmp_path):
    path = write_schema(tmp_path, {"node_types": {"person": PERSON}})
    schema = load_schema(tmp_path)
    assert schema.source == path
    assert list(schema.node_types) == ["person"]


def test_schema_path_wins_over_the_vaults_schema(tmp_path):
    write_schema(tmp_path / "vault", {"node_types": {"person": PERSON}})
    other = write_schema(tmp_path / "elsewhere", {"node_types": {"company": {"folder": "companies"}}}, "custom.json")
    schema = load_schema(tmp_path / "vault", other)
    assert schema.source == other
    assert list(schema.node_types) == ["company"]


def test_schema_path_that_does_not_exist_is_an_error(tmp_path):
    write_schema(tmp_path, {"node_types": {}})
    with pytest.raises(SchemaError) as raised:
        load_schema(tmp_path, tmp_path / "missing.json")
    assert "missing.json" in str(raised.value)
    assert "not found" in str(raised.value)


def test_schema_with_a_utf8_bom_loads(tmp_path):
    (tmp_path / "schema.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"version": 1}).encode())
    assert load_schema(tmp_path).source == tmp_path / "schema.json"


def test_a_vault_schema_keeps_the_defaults_it_does_not_set(tmp_path):
    write_schema(tmp_path, {"node_types": {"person": PERSON}})
    schema = load_schema(tmp_path)
    assert schema.hub_names == {"memory", "index", "_index"}
    assert schema.data["decay"]["rate"] == 0.015


def test_repository_schema_example_validates():
    path = REPO / "schema.example.json"
    assert path.is_file(), "schema.example.json at the repository root is the documented template (DESIGN.md §1)"
    schema = load_schema(REPO, path)
    assert schema.source == path
    assert schema.node_types


def test_example_vault_schema_validates():
    schema = load_schema(REPO / "examples" / "vault")
    assert schema.source == REPO / "examples" / "vault" / "schema.json"
    assert {"person", "project", "meeting"} <= set(schema.node_types)


# ---------------------------------------------------------------------------
# Broken schemas: each names the JSON path and the fix

BROKEN = [
    # (schema, text the message must contain: the JSON path, then words of the fix)
    pytest.param({"nodetypes": {}}, ["$.nodetypes", "unknown key", "node_types"], id="unknown-top-level-key"),
    pytest.param({"node_types": []}, ["$.node_types", "expected an object"], id="node-types-not-an-object"),
    pytest.param(
        {"node_types": {"person": "Someone"}}, ["$.node_types.person", "expected an object"], id="type-not-an-object"
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, folders="people")}},
        ["$.node_types.person.folders", "unknown key", "folder"],
        id="unknown-key-in-a-type",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, status="active")}},
        ["$.node_types.person.status", "list of strings"],
        id="status-a-string",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, status=["active", 2])}},
        ["$.node_types.person.status", "list of strings"],
        id="status-with-a-number",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, required="description")}},
        ["$.node_types.person.required", "list of strings"],
        id="required-a-string",
    ),
    pytest.param(
        # said supersedable, yet no "superseded" status: an error (without "supersedable" it is read
        # as false, with a warning: test_schema_migration)
        {"node_types": {"person": dict(PERSON, status=["active", "inactive"], supersedable=True)}},
        ["$.node_types.person.status", '"superseded"'],
        id="status-lacks-superseded",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, supersedable="no")}},
        ["$.node_types.person.supersedable", "true or false"],
        id="supersedable-not-a-bool",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, folder="../people")}},
        ["$.node_types.person.folder", ".."],
        id="folder-dot-dot",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, folder="people/../../x")}},
        ["$.node_types.person.folder", ".."],
        id="folder-dot-dot-inside",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, folder="..\\people")}},
        ["$.node_types.person.folder", ".."],
        id="folder-backslash-dot-dot",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, folder="/people")}},
        ["$.node_types.person.folder", "absolute"],
        id="folder-absolute",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, folder="C:\\people")}},
        ["$.node_types.person.folder", "absolute"],
        id="folder-windows-drive",
    ),
    pytest.param(
        {"node_types": {"person": dict(PERSON, folder=3)}},
        ["$.node_types.person.folder", "string"],
        id="folder-not-a-string",
    ),
    pytest.param({"decay": {"rate": 1.5}}, ["$.decay.rate", "between 0 and 1"], id="decay-rate-above-1"),
    pytest.param({"decay": {"rate": -0.01}}, ["$.decay.rate", "between 0 and 1"], id="decay-rate-negative"),
    pytest.param({"decay": {"rate": "0.1"}}, ["$.decay.rate", "number"], id="decay-rate-a-string"),
    pytest.param({"decay": {"rate": True}}, ["$.decay.rate", "number"], id="decay-rate-a-bool"),
    pytest.param({"decay": {"floor": 2}}, ["$.decay.floor", "between 0 and 1"], id="decay-floor-above-1"),
    pytest.param(
        {"decay": {"type_rates": {"person": 3}}}, ["$.decay.type_rates", "between 0 and 1"], id="type-rate-above-1"
    ),
    pytest.param({"decay": {"tiers": {"active": -1}}}, ["$.decay.tiers", "days"], id="tier-negative"),
    pytest.param('{"decay": {"rate": NaN}}', ["$.decay.rate", "between 0 and 1"], id="decay-rate-nan"),
    pytest.param({"decay": {"half_life": 3}}, ["$.decay.half_life", "unknown key"], id="decay-unknown-key"),
    pytest.param({"hubs": ["MEMORY"]}, ["$.hubs", "names"], id="hubs-a-list"),
    pytest.param({"hubs": {"names": "MEMORY"}}, ["$.hubs.names", "list of strings"], id="hub-names-a-string"),
    pytest.param({"hubs": {"types": [1]}}, ["$.hubs.types", "list of strings"], id="hub-types-numbers"),
    pytest.param({"hubs": {"name": ["MEMORY"]}}, ["$.hubs.name", "unknown key", "names"], id="hubs-unknown-key"),
    pytest.param(
        {"node_types": {"person": PERSON}, "type_aliases": {"contact": "persn"}},
        ["$.type_aliases.contact", "persn", "node_types"],
        id="alias-to-an-unknown-type",
    ),
    pytest.param({"type_aliases": ["contact"]}, ["$.type_aliases", "strings"], id="type-aliases-a-list"),
    pytest.param({"version": 2}, ["$.version", "1"], id="version-2"),
    pytest.param({"version": "1"}, ["$.version", "1"], id="version-a-string"),
    pytest.param({"version": True}, ["$.version", "1"], id="version-true"),
    pytest.param({"domain_inference": {"../out": "work"}}, ["$.domain_inference", ".."], id="domain-folder-escapes"),
    pytest.param({"status_order": "active"}, ["$.status_order", "list of strings"], id="status-order-a-string"),
    pytest.param({"field_fixes": {"status": "active"}}, ["$.field_fixes"], id="field-fixes-wrong-shape"),
    pytest.param([], ["$", "object"], id="a-list-not-an-object"),
    pytest.param("null", ["$", "object"], id="null"),
]


@pytest.mark.parametrize("data, words", BROKEN)
def test_broken_schema(tmp_path, data, words):
    error = schema_error(tmp_path, data)
    message = str(error)
    assert message.startswith(str(tmp_path / "vault" / "schema.json"))
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert len(error.problems) == 1, error.problems


@pytest.mark.parametrize(
    "text, line, column",
    [
        pytest.param('{\n  "version": 1,\n  "hubs": {"names": ["a",]}\n}\n', 3, 26, id="trailing-comma"),
        pytest.param('{"version": 1\n"hubs": {}}', 2, 1, id="missing-comma"),
        pytest.param("{'version': 1}", 1, 2, id="single-quotes"),
        pytest.param("", 1, 1, id="empty-file"),
    ],
)
def test_invalid_json_names_line_and_column(tmp_path, text, line, column):
    error = schema_error(tmp_path, text)
    assert f"line {line}, column {column}" in str(error)
    assert "JSON" in str(error)


def test_every_problem_is_reported_at_once(tmp_path):
    error = schema_error(
        tmp_path,
        {
            "versio": 1,
            "decay": {"rate": 9},
            "node_types": {"person": dict(PERSON, folder="/abs", status=["active"], supersedable=True)},
        },
    )
    paths = sorted(problem.split(":")[0] for problem in error.problems)
    assert paths == ["$.decay.rate", "$.node_types.person.folder", "$.node_types.person.status", "$.versio"]
    for path in paths:
        assert path in str(error)


def test_supersedable_false_allows_a_status_without_superseded(tmp_path):
    write_schema(
        tmp_path, {"node_types": {"daily": {"folder": "daily", "status": ["open", "done"], "supersedable": False}}}
    )
    assert list(load_schema(tmp_path).node_types) == ["daily"]


def test_an_empty_status_list_needs_no_superseded():
    assert validate({"node_types": {"daily": {"status": []}}}) == []


@pytest.mark.parametrize("folder", ["people", "work/people", "", "a..b", "people/a.b", "people/archive."])
def test_folders_inside_the_vault_are_accepted(folder):
    assert validate({"node_types": {"person": dict(PERSON, folder=folder)}}) == []


def test_comment_keys_are_ignored_everywhere():
    data = {
        "_comment": "top",
        "$schema": "./schema.schema.json",
        "version": 1,
        "node_types": {"_comment": "types", "person": dict(PERSON, _comment="a person", _note=3)},
        "type_aliases": {"_comment": "aliases", "contact": "person"},
        "field_fixes": {"_comment": "fixes", "status": {"_comment": "x", "ongoing": "active"}},
        "domain_inference": {"_comment": "folders", "people": "work"},
        "decay": {
            "_comment": "decay",
            "rate": 0.01,
            "tiers": {"_comment": "days", "active": 7},
            "type_rates": {"_c": "x", "person": 0.005},
        },
        "hubs": {"_comment": "hubs", "names": ["Home"]},
    }
    assert validate(data) == []


def test_comment_keys_are_not_node_types(tmp_path):
    write_schema(tmp_path, {"node_types": {"_comment": "types", "person": PERSON}})
    assert list(load_schema(tmp_path).node_types) == ["person"]


def test_schema_error_is_a_value_error_with_its_problems(tmp_path):
    error = schema_error(tmp_path, {"version": 2})
    assert isinstance(error, ValueError)
    assert error.source == str(tmp_path / "vault" / "schema.json")
    assert error.problems[0].startswith("$.version:")


# ---------------------------------------------------------------------------
# Hubs: index and Map-of-Content notes, by file name or by type


@pytest.mark.parametrize(
    "stem, properties, hub",
    [
        ("MEMORY", {}, True),
        ("memory", {}, True),
        ("index", {"type": "person"}, True),
        ("_index", {}, True),
        ("Project Atlas", {}, False),
        ("Project Atlas", {"type": "moc"}, True),
        ("Project Atlas", {"type": "MOC"}, True),
        ("Project Atlas", {"type": "hub"}, True),
        ("Project Atlas", {"type": "project"}, False),
        ("Project Atlas", {"type": ["moc"]}, False),
        ("Project Atlas", {"type": None}, False),
        ("MEMORY notes", {}, False),
    ],
)
def test_default_hubs(stem, properties, hub):
    assert load_schema().is_hub(stem, properties) is hub


def test_hubs_from_the_schema(tmp_path):
    write_schema(tmp_path, {"hubs": {"names": ["Home"], "types": ["overview"]}})
    schema = load_schema(tmp_path)
    assert schema.is_hub("Home", {}) is True
    assert schema.is_hub("home", {}) is True
    assert schema.is_hub("Note", {"type": "Overview"}) is True
    assert schema.is_hub("MEMORY", {}) is False
    assert schema.is_hub("Note", {"type": "moc"}) is False


def test_schema_object_from_data():
    schema = Schema({"node_types": {"_c": "x", "a": {}}, "hubs": {"names": [], "types": []}})
    assert schema.node_types == {"a": {}}
    assert schema.is_hub("MEMORY", {}) is False


def test_supersedable_follows_the_type_entry():
    """F6: ``"status": []`` (a type with no status, like daily) and
    ``supersedable: false`` cannot be superseded; no status list can."""
    schema = Schema(
        {
            "node_types": {
                "daily": {"status": []},
                "person": {"status": ["active", "superseded"]},
                "fixed": {"status": ["active"], "supersedable": False},
                "note": {},
            }
        }
    )
    assert [schema.supersedable(k) for k in ("daily", "person", "fixed", "note", None)] == [
        False,
        True,
        False,
        True,
        True,
    ]


@pytest.mark.parametrize(
    "data, where",
    [
        ({"node_types": {"idea": {"folder": ".obsidian"}}}, "$.node_types.idea.folder"),
        ({"node_types": {"idea": {"folder": "notes/.drafts"}}}, "$.node_types.idea.folder"),
        ({"moc": {"group_by": "type", "folder": ".maps"}}, "$.moc.folder"),
        ({"path_type_hints": {".hidden/people": "person"}}, "$.path_type_hints..hidden/people"),
    ],
)
def test_a_hidden_folder_is_refused_where_notes_are_written(tmp_path, data, where):
    """F13: Obsidian never indexes a folder whose name starts with '.':
    card.py new wrote cards into .obsidian/ that nobody could see."""
    error = schema_error(tmp_path, data)
    assert where in str(error) and "hidden folder" in str(error)


def test_a_hidden_folder_may_be_ignored_or_hold_the_memory_store(tmp_path):
    write_schema(tmp_path, {"ignore_folders": [".trash", "Templates"], "memory": {"folder": ".memory"}})
    assert load_schema(tmp_path).memory["folder"] == ".memory"
