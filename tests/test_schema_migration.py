"""A schema.json written for the earlier autograph project loads (issue 9, item 6).

DESIGN.md ("Schema"): the earlier project's schemas load: ``status_order``
as an object, ``decay.domain_rates`` read as ``type_rates``, and its keys
autograph does not read (``region_fixes``, ``identity.fuzzy_name``, ...)
with a warning naming each.  Every other unknown key is still an error.

``fixtures/earlier-schema.json`` has the shape of the earlier project's
documented example (its keys, value types and nesting) with values of our
own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autograph.schema.model import DEFAULTS, EARLIER_KEYS, Schema, SchemaError, load_schema, validate
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "earlier-schema.json"
JSON_SCHEMA = REPO / "skills" / "autograph" / "schema.schema.json"

PERSON = {"description": "Someone", "folder": "people", "required": ["description"], "status": ["active", "superseded"]}

# every key of the earlier project's documented example schema.json ("*": each node type)
EARLIER_EXAMPLE_KEYS = {
    "description_max_chars",
    "node_types",
    "node_types.*.description",
    "node_types.*.required",
    "node_types.*.status",
    "type_aliases",
    "field_fixes",
    "region_fixes",
    "domain_inference",
    "path_type_hints",
    "status_order",
    "status_defaults",
    "status_defaults.default",
    "richness_fields",
    "richness_fields.bonus_fields",
    "conflict_fields",
    "conflict_fields.fields",
    "identity",
    "identity.match_fields",
    "identity.same_domain_only",
    "identity.same_type_only",
    "identity.fuzzy_name",
    "identity.ignore_values",
    "identity.max_shared",
    "entity_extraction",
    "entity_extraction.noise_words",
    "decay",
    "decay.rate",
    "decay.floor",
    "decay.tiers",
    "decay.tiers.active",
    "decay.tiers.warm",
    "decay.tiers.cold",
    "decay.domain_rates",
    "ignore_tags",
}
# of these, the keys whose objects hold names chosen by the user, not keys of the format
FREE_FORM = {
    "type_aliases",
    "field_fixes",
    "region_fixes",
    "domain_inference",
    "path_type_hints",
    "status_order",
    "decay.domain_rates",
}


def write_schema(folder: Path, data) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "schema.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def load(tmp_path: Path, data) -> Schema:
    write_schema(tmp_path, data)
    return load_schema(tmp_path)


def problems(tmp_path: Path, data) -> list[str]:
    write_schema(tmp_path, data)
    with pytest.raises(SchemaError) as raised:
        load_schema(tmp_path)
    return raised.value.problems


def key_paths(data: dict, prefix: str = "") -> set[str]:
    found = set()
    for key, value in data.items():
        if key.startswith("_"):
            continue
        path = f"{prefix}{key}"
        found.add(path)
        if path == "node_types":
            for spec in (v for k, v in value.items() if not k.startswith("_")):
                found |= key_paths(spec, "node_types.*.")
        elif isinstance(value, dict) and path not in FREE_FORM:
            found |= key_paths(value, path + ".")
    return found


# ---------------------------------------------------------------------------
# The earlier project's example schema


@pytest.fixture(scope="module")
def earlier() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_the_fixture_has_the_earlier_example_s_keys(earlier):
    assert key_paths(earlier) == EARLIER_EXAMPLE_KEYS


def test_the_earlier_example_schema_loads(earlier, capsys):
    schema = load_schema(path=FIXTURE)
    assert schema.source == FIXTURE
    assert list(schema.node_types) == ["paper", "researcher", "grant"]
    # status_order: by rank, "rejected" (8) after "alumni" (7) although written before it
    assert schema.status_order == [
        "current",
        "drafting",
        "submitted",
        "funded",
        "reading",
        "read",
        "cited",
        "alumni",
        "rejected",
        "superseded",
    ]
    assert schema.data["status_order"] == schema.status_order
    # decay.domain_rates is read as decay.type_rates
    rates = {"researcher": 0.004, "grant": 0.01, "paper": 0.008, "seminar": 0.03}
    assert schema.type_rates == rates
    assert {k: v for k, v in schema.section("decay")["type_rates"].items() if not k.startswith("_")} == rates
    assert "domain_rates" not in schema.section("decay")
    assert schema.decay_rate("researcher") == 0.004
    assert schema.decay_rate("note") == 0.02  # a type without a rate of its own: decay.rate
    # the keys autograph does not read: one warning each, naming it; left out of the data
    assert [w.split(": ")[1] for w in schema.warnings] == [
        "$.description_max_chars",
        "$.region_fixes",
        "$.identity.fuzzy_name",
    ]
    for warning in schema.warnings:
        assert warning.startswith(f"{FIXTURE}: $.")
        assert "earlier autograph" in warning and "ignored" in warning
    assert "region_fixes" not in schema.data and "description_max_chars" not in schema.data
    assert "fuzzy_name" not in schema.section("identity")
    assert schema.section("identity")["max_shared"] == 5
    # everything else is read as written
    assert schema.infer_type("people/Ada.md") == "researcher"
    assert schema.infer_domain("grants/2024/ERC.md") == "funding"
    assert schema.default_for("researcher", "status") == "current"
    assert schema.section("decay")["tiers"] == {"active": 10, "warm": 30, "cold": 90}
    # the loader itself prints nothing: commands print the warnings on stderr
    assert capsys.readouterr() == ("", "")


def test_the_earlier_example_validates(earlier):
    assert validate(earlier) == []


def test_the_earlier_example_passes_the_json_schema(earlier):
    validator = Draft202012Validator(json.loads(JSON_SCHEMA.read_text(encoding="utf-8")))
    assert [error.message for error in validator.iter_errors(earlier)] == []


def test_validate_does_not_change_its_argument(earlier):
    before = json.dumps(earlier)
    validate(earlier)
    assert json.dumps(earlier) == before


# ---------------------------------------------------------------------------
# status_order as an object of status -> rank


@pytest.mark.parametrize(
    "order, expected",
    [
        pytest.param({"done": 2, "active": 1}, ["active", "done"], id="by-rank-not-as-written"),
        pytest.param({"b": 1, "a": 1, "c": 0}, ["c", "b", "a"], id="ties-in-the-order-written"),
        pytest.param({"x": 0.5, "y": -3, "z": 1e3}, ["y", "x", "z"], id="any-finite-number"),
        pytest.param({"_comment": "ranks", "open": 3, "closed": 9}, ["open", "closed"], id="comment-keys-skipped"),
        pytest.param({}, [], id="empty"),
        pytest.param(["done", "active"], ["done", "active"], id="a-list-is-kept-as-written"),
    ],
)
def test_status_order_object_by_rank(tmp_path, order, expected):
    schema = load(tmp_path, {"status_order": order})
    assert schema.status_order == expected
    assert schema.data["status_order"] == expected
    assert schema.warnings == ()


def test_status_order_object_on_a_schema_built_from_data():
    assert Schema({"status_order": {"late": 5, "early": 1}}).status_order == ["early", "late"]
    assert Schema({}).status_order == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"status_order": {"active": 0, "done": "1"}}', id="a-string"),
        pytest.param('{"status_order": {"active": 0, "done": true}}', id="a-bool"),
        pytest.param('{"status_order": {"active": 0, "done": null}}', id="null"),
        pytest.param('{"status_order": {"active": 0, "done": [1]}}', id="a-list"),
        pytest.param('{"status_order": {"active": 0, "done": NaN}}', id="nan"),
        pytest.param('{"status_order": {"active": 0, "done": Infinity}}', id="infinity"),
    ],
)
def test_status_order_bad_rank(tmp_path, text):
    found = problems(tmp_path, text)
    assert len(found) == 1, found
    assert found[0].startswith("$.status_order.done: expected a number")
    assert "rank" in found[0]


@pytest.mark.parametrize("value", ["active", 3, None, [1, "a"]])
def test_status_order_neither_list_nor_object(tmp_path, value):
    found = problems(tmp_path, {"status_order": value})
    assert len(found) == 1, found
    assert found[0].startswith("$.status_order: expected a list of strings")
    assert "status -> rank" in found[0]


def test_the_json_schema_agrees_on_status_order():
    validator = Draft202012Validator(json.loads(JSON_SCHEMA.read_text(encoding="utf-8")))
    assert list(validator.iter_errors({"status_order": {"_c": "x", "active": 1, "done": 2.5}})) == []
    assert list(validator.iter_errors({"status_order": {"done": "1"}})) != []
    assert list(validator.iter_errors({"status_order": "active"})) != []


# ---------------------------------------------------------------------------
# decay.domain_rates read as decay.type_rates


def test_domain_rates_are_read_as_type_rates(tmp_path):
    schema = load(tmp_path, {"decay": {"domain_rates": {"_comment": "x", "person": 0.005, "daily": 0.02}}})
    assert schema.type_rates == {"person": 0.005, "daily": 0.02}
    assert schema.section("decay")["type_rates"] == {"_comment": "x", "person": 0.005, "daily": 0.02}
    assert schema.section("decay")["rate"] == DEFAULTS["decay"]["rate"]  # the rest of decay keeps its defaults
    assert schema.decay_rate("person") == 0.005
    assert schema.decay_rate("project") == DEFAULTS["decay"]["rate"]
    assert schema.decay_rate(None) == DEFAULTS["decay"]["rate"]
    assert schema.warnings == ()


def test_domain_rates_and_type_rates_merge(tmp_path):
    schema = load(
        tmp_path,
        {"decay": {"rate": 0.01, "domain_rates": {"person": 0.005, "daily": 0.02}, "type_rates": {"daily": 0.02}}},
    )
    assert schema.type_rates == {"person": 0.005, "daily": 0.02}
    assert schema.section("decay")["type_rates"] == {"person": 0.005, "daily": 0.02}
    assert schema.decay_rate("unknown") == 0.01


def test_domain_rates_disagreeing_with_type_rates_is_an_error(tmp_path):
    found = problems(tmp_path, {"decay": {"domain_rates": {"person": 0.005}, "type_rates": {"person": 0.01}}})
    assert len(found) == 1, found
    assert found[0].startswith("$.decay.domain_rates.person: 0.005 disagrees with $.decay.type_rates.person (0.01)")
    assert "type_rates" in found[0].split(";")[1]


def test_domain_rates_out_of_range_is_an_error(tmp_path):
    found = problems(tmp_path, {"decay": {"domain_rates": {"person": 5}}})
    assert len(found) == 1 and found[0].startswith("$.decay.domain_rates: expected type -> rate between 0 and 1")


def test_domain_rates_on_a_schema_built_from_data():
    schema = Schema({"decay": {"rate": 0.1, "domain_rates": {"a": 0.2, "b": 0.3}, "type_rates": {"b": 0.4}}})
    assert schema.type_rates == {"a": 0.2, "b": 0.4}
    assert schema.decay_rate("b") == 0.4


# ---------------------------------------------------------------------------
# The earlier project's keys autograph does not read: a warning naming each


LEGACY = [
    pytest.param({"region_fixes": {"emea": "EMEA"}}, "$.region_fixes", "field_fixes.region", id="region_fixes"),
    pytest.param({"description_max_chars": 500}, "$.description_max_chars", "remove it", id="description_max_chars"),
    pytest.param({"dedup_policy": {"path_rules": []}}, "$.dedup_policy", "remove it", id="dedup_policy"),
    pytest.param(
        {"identity": {"match_fields": ["email"], "fuzzy_name": True}},
        "$.identity.fuzzy_name",
        "never matched by name alone",
        id="identity.fuzzy_name",
    ),
]
LEGACY += [
    pytest.param(
        {"node_types": {"person": {**PERSON, key: ["high", "low"]}}},
        f"$.node_types.person.{key}",
        "field_fixes",
        id=f"node_types.person.{key}",
    )
    for key in ("priority", "potential", "source")
]


def test_every_earlier_key_has_a_test():
    tested = {param.id.replace("node_types.person.", "node_types.*.") for param in LEGACY}
    listed = {f"{where}.{key}" if where else key for where, keys in EARLIER_KEYS.items() for key in keys}
    assert tested == listed


@pytest.mark.parametrize("data, path, hint", LEGACY)
def test_each_earlier_key_loads_with_a_warning_naming_it(tmp_path, capsys, data, path, hint):
    source = write_schema(tmp_path, data)
    schema = load_schema(tmp_path)
    assert len(schema.warnings) == 1, schema.warnings
    warning = schema.warnings[0]
    assert warning.startswith(f"{source}: {path}: ")
    assert "earlier autograph" in warning and "ignored" in warning and hint in warning
    assert validate(data) == []
    assert capsys.readouterr() == ("", "")
    key = path.rsplit(".", 1)[1]
    assert key not in json.dumps(schema.data)


@pytest.mark.parametrize("data, path, hint", LEGACY)
def test_the_json_schema_accepts_each_earlier_key(data, path, hint):
    validator = Draft202012Validator(json.loads(JSON_SCHEMA.read_text(encoding="utf-8")))
    assert [error.message for error in validator.iter_errors(data)] == []


def test_earlier_keys_are_ignored_whatever_their_value(tmp_path):
    schema = load(tmp_path, {"region_fixes": 7, "identity": {"fuzzy_name": "yes"}, "description_max_chars": None})
    assert [w.split(": ")[1] for w in schema.warnings] == [
        "$.region_fixes",
        "$.identity.fuzzy_name",
        "$.description_max_chars",
    ]


def test_no_warnings_without_earlier_keys(tmp_path):
    assert load_schema(tmp_path).warnings == ()
    assert load(tmp_path, {"node_types": {"person": PERSON}, "status_order": ["active"]}).warnings == ()
    assert load_schema(path=REPO / "schema.example.json").warnings == ()


def test_earlier_keys_next_to_a_real_error_still_fail(tmp_path):
    found = problems(tmp_path, {"region_fixes": {}, "decay": {"rate": 3}})
    assert found == ["$.decay.rate: expected a number between 0 and 1"]


# ---------------------------------------------------------------------------
# Every other unknown key is still an error


@pytest.mark.parametrize(
    "data, path",
    [
        pytest.param({"regions_fixes": {}}, "$.regions_fixes", id="near-miss-top-level"),
        pytest.param({"fuzzy_name": False}, "$.fuzzy_name", id="fuzzy-name-at-the-top"),
        pytest.param({"identity": {"region_fixes": {}}}, "$.identity.region_fixes", id="region-fixes-in-identity"),
        pytest.param({"identity": {"fuzzy_names": False}}, "$.identity.fuzzy_names", id="near-miss-in-identity"),
        pytest.param({"node_types": {"person": {**PERSON, "colour": "blue"}}}, "$.node_types.person.colour",
                     id="unknown-key-in-a-type"),
        pytest.param({"decay": {"domain_rate": {"person": 0.1}}}, "$.decay.domain_rate", id="near-miss-in-decay"),
        pytest.param({"decay": {"fuzzy_name": True}}, "$.decay.fuzzy_name", id="fuzzy-name-in-decay"),
        pytest.param({"dedup": {}}, "$.dedup", id="dedup"),
    ],
)  # fmt: skip
def test_other_unknown_keys_are_still_errors(tmp_path, data, path):
    found = problems(tmp_path, data)
    assert len(found) == 1, found
    assert found[0].startswith(f"{path}: unknown key; known keys are")


def test_commands_print_each_warning_on_stderr_and_keep_json_clean(tmp_path):
    """A vault command run with the earlier schema names each ignored key on
    stderr; stdout stays one JSON object."""
    import subprocess
    import sys

    (tmp_path / "schema.json").write_bytes((Path(__file__).parent / "fixtures" / "earlier-schema.json").read_bytes())
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    graph = REPO / "skills" / "autograph" / "scripts" / "graph.py"
    proc = subprocess.run(
        [sys.executable, str(graph), "health", str(tmp_path), "--json", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout)
    for key in ("$.region_fixes", "$.identity.fuzzy_name"):
        assert any(line.startswith("warning: ") and key in line for line in proc.stderr.splitlines())


# ---------------------------------------------------------------------------
# A type listing statuses without "superseded" (the earlier project had no "supersedable")


def test_a_type_without_superseded_loads_as_not_supersedable_with_a_warning(tmp_path, capsys):
    """Issue 24: read as ``"supersedable": false`` with one warning naming
    the key and the fix; ``card.py retire`` refuses the type (exit 2) and
    ``supersede.py`` does not stamp it."""
    import subprocess
    import sys

    from autograph.memory import supersede
    from autograph.read.vault import Vault

    person = {"description": "Someone", "folder": "people", "status": ["active", "inactive"]}
    root = tmp_path / "vault"
    source = write_schema(root, {"node_types": {"person": person, "paper": {"status": ["read", "superseded"]}}})
    card = "---\ntype: person\nemail: {email}\nrole: {role}\nupdated: {updated}\n---\nBody.\n"
    (root / "people").mkdir()
    (root / "people/Alex Old.md").write_text(card.format(email="alex@acme.example", role="CTO", updated="2025-01-01"))
    (root / "people/Alex New.md").write_text(card.format(email="ALEX@acme.example", role="CEO", updated="2026-06-01"))
    before = {p: p.read_bytes() for p in (root / "people").iterdir()}

    schema = load_schema(root)
    assert len(schema.warnings) == 1, schema.warnings
    [warning] = schema.warnings
    assert warning.startswith(f"{source}: $.node_types.person.status: ")
    assert 'add "superseded" to the list, or set "supersedable": false' in warning
    assert schema.supersedable("person") is False and schema.supersedable("paper") is True
    assert schema.node_types["person"]["supersedable"] is False
    assert capsys.readouterr() == ("", "")
    # said explicitly, either way, it warns of nothing or is still an error
    assert load(tmp_path / "explicit", {"node_types": {"person": {**person, "supersedable": False}}}).warnings == ()
    found = problems(tmp_path / "contradiction", {"node_types": {"person": {**person, "supersedable": True}}})
    assert [p.split(":")[0] for p in found] == ["$.node_types.person.status"]

    scripts = REPO / "skills" / "autograph" / "scripts"
    proc = subprocess.run(
        [sys.executable, str(scripts / "card.py"), "retire", "Alex Old", "--by", "Alex New", "--vault", str(root)]
        + ["--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert json.loads(proc.stdout)["refused"]["reason"] == "not-supersedable"
    assert [line for line in proc.stderr.splitlines() if "$.node_types.person.status" in line] == [
        f"warning: {warning}"
    ]

    vault = Vault.open(root)
    findings = supersede.find(vault, schema)
    edits, refused = supersede.plan(vault, schema, findings)
    assert edits == [] and refused == [{"path": "people/Alex Old.md", "reason": supersede.NOT_SUPERSEDABLE}]
    assert {p: p.read_bytes() for p in (root / "people").iterdir()} == before
