"""Template placeholders in frontmatter (BR-41): read, kept, never inferred from.

Obsidian's YAML library accepts ``created: {{date}}`` (YAML: a flow mapping
whose key is a mapping).  autograph reads an unquoted ``{{...}}`` that is a
whole value, a block-list item or a flow-list item as the text it shows, a
``frontmatter.Placeholder`` (a ``str``); ``frontmatter.is_placeholder`` is
true for any string that is entirely ``{{...}}`` or ``<% ... %>``, quoted or
not.  discover lists placeholders as their own kind, drafting infers nothing
from them, no fix rewrites them, and an edit of another key leaves their
lines byte-identical.

The BR-41 expectations about parsing (items 1, 3 and the edit part of 4) are
tested here on the case's own notes; the health-level ones (score, broken
link count, decay) belong to the commands' tests.
"""

from __future__ import annotations

import json

import pytest
import yaml
from autograph.read import frontmatter
from autograph.read.frontmatter import Placeholder, is_placeholder
from autograph.read.linkgraph import build
from autograph.read.note import Note
from autograph.read.vault import Vault
from autograph.schema import compliance, discovery, drafting
from autograph.schema.model import load_schema, validate
from autograph.schema.repair import repair
from conftest import CASES, require

CITY = "Templates/City Template.md"
PERSON = "Templates/Person Template.md"


def br41_text(name: str) -> str:
    return (require(CASES / "BR-41" / "vault") / name).read_bytes().decode("utf-8")


def parsed(text: str) -> frontmatter.Frontmatter:
    fm = frontmatter.parse(text)
    assert fm is not None
    assert fm.error is None, str(fm.error)
    return fm


# ---------------------------------------------------------------------------
# BR-41 items 1 and 3: valid frontmatter, placeholders read as their text


def test_br41_city_template_is_valid_and_reads_the_placeholder_text():
    props = parsed(br41_text(CITY)).properties
    assert props == {
        "created": "{{date}}",
        "modified": "{{date:YYYY-MM-DD}}",
        "type": ["[[Cities]]"],
        "tags": ["template"],
    }
    assert type(props["created"]) is Placeholder and type(props["modified"]) is Placeholder
    assert type(props["type"][0]) is str  # a quoted link is a plain string


def test_br41_person_template_is_valid():
    props = parsed(br41_text(PERSON)).properties
    assert props == {
        "created": "<% tp.file.creation_date() %>",
        "company": "[[Acme]]",
        "aliases": ["{{title}}"],
    }
    assert type(props["created"]) is str  # Templater's tag is a plain scalar already
    assert type(props["aliases"][0]) is Placeholder
    # PyYAML agrees on the Templater tag (it rejects the unquoted {{...}}: test_yaml_oracle)
    assert yaml.safe_load("created: <% tp.file.creation_date() %>\n") == {"created": "<% tp.file.creation_date() %>"}


def test_br41_property_links_count(case):
    """Item 2's links are read: [[Cities]] is broken, [[Acme]] resolves."""
    graph = build(Vault.open(case("BR-41") / "vault"))
    links = {(e.source, e.link.target, e.target) for e in graph.edges if e.link.kind == "property"}
    assert links == {(CITY, "Cities", None), (PERSON, "Acme", "Acme.md")}


def test_br41_discover_lists_placeholders_as_their_own_kind(case):
    """Item 3: without a templates setting these notes are cards, and discover
    lists their placeholders as placeholders, not dates, lists or mappings."""
    data = discovery.discover(Vault.open(case("BR-41") / "vault"))
    assert data["frontmatter"] == {"valid": 2, "invalid": 0, "none": 1}
    assert data["invalid_frontmatter"] == []
    keys = data["keys"]
    assert keys["created"]["kinds"] == {"placeholder": 2}
    assert keys["modified"]["kinds"] == {"placeholder": 1}
    assert keys["aliases"]["kinds"] == {"list": 1}
    assert "{{date}}" in keys["created"]["examples"]
    draft = drafting.draft_schema(data)
    assert "created" not in draft.get("properties", {}) and "modified" not in draft.get("properties", {})


@pytest.mark.parametrize("name", [CITY, PERSON])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_br41_edit_of_another_key_leaves_placeholder_lines_byte_identical(name, newline):
    """Item 4: setting, adding or deleting another key keeps every placeholder line."""
    text = br41_text(name).replace("\n", newline)
    placeholder_lines = [line for line in text.splitlines(keepends=True) if "{{" in line or "<%" in line]
    assert placeholder_lines
    other = "tags" if name == CITY else "company"
    for new in (
        frontmatter.set_property(text, other, ["x", "y"]),
        frontmatter.set_property(text, other, "multi\nline\n"),
        frontmatter.set_property(text, "status", "active"),
        frontmatter.delete_property(text, other),
    ):
        kept = new.splitlines(keepends=True)
        assert all(line in kept for line in placeholder_lines), new
        fm = parsed(new)
        for key, value in parsed(text).properties.items():
            if key != other:
                assert fm.properties[key] == value and type(fm.properties[key]) is type(value)


@pytest.mark.parametrize("name", [CITY, PERSON])
def test_br41_notes_are_never_repaired(name):
    """Item 4: the explicit repair (enforce --repair) has nothing to do on
    these notes, so it never quotes their placeholders."""
    assert repair(br41_text(name)) is None


# ---------------------------------------------------------------------------
# Reading


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("k: {{date}}\n", Placeholder("{{date}}")),
        ("k: {{date:YYYY-MM-DD}}\n", Placeholder("{{date:YYYY-MM-DD}}")),
        ("k: {{ date }}  # when\n", Placeholder("{{ date }}")),
        ("k: {{VALUE:name, other}}\n", Placeholder("{{VALUE:name, other}}")),
        ("k:\n  - {{title}}\n  - x\n", [Placeholder("{{title}}"), "x"]),
        ("k:\n- {{title}}\n", [Placeholder("{{title}}")]),
        ("k: [{{title}}, x]\n", [Placeholder("{{title}}"), "x"]),
        ("k: [[{{date}}]]\n", [[Placeholder("{{date}}")]]),  # unquoted [[...]] is a nested list, as ever
        ("k: {a: {{date}}}\n", {"a": Placeholder("{{date}}")}),
        ("k: '{{date}}'\n", "{{date}}"),
        ('k: "{{date}}"\n', "{{date}}"),
        ("k: <% tp.date.now('YYYY') %>\n", "<% tp.date.now('YYYY') %>"),
        ("k: x{{date}}\n", "x{{date}}"),  # a plain scalar that merely holds braces
    ],
)
def test_placeholder_values(source, expected):
    value = frontmatter.loads(source)[0]["k"]
    assert value == expected

    def types(v):
        if isinstance(v, dict):
            return {k: types(x) for k, x in v.items()}
        if isinstance(v, list):
            return [types(x) for x in v]
        return type(v)

    assert types(value) == types(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{{date}}", True),
        (Placeholder("{{date}}"), True),
        ("{{date:YYYY-MM-DD}}", True),
        ("{{ title }}", True),
        ("<% tp.file.creation_date() %>", True),
        ("<%* tR += 'x' %>", True),
        ("{{}}", False),
        ("{{ }}", False),
        ("{{a}} {{b}}", False),
        ("x {{date}}", False),
        ("{date}", False),
        ("2024-01-02", False),
        ("", False),
        (None, False),
        (3, False),
        (["{{date}}"], False),
    ],
)
def test_is_placeholder(value, expected):
    assert is_placeholder(value) is expected


def test_value_kind_of_placeholders():
    assert discovery.value_kind(Placeholder("{{date}}")) == "placeholder"
    assert discovery.value_kind("{{date}}") == "placeholder"  # quoted, or read back from the JSON cache
    assert discovery.value_kind("<% tp.file.creation_date() %>") == "placeholder"
    assert discovery.value_kind([Placeholder("{{title}}")]) == "list"


# ---------------------------------------------------------------------------
# Writing: a placeholder is written back as it was read


def test_placeholder_is_written_unquoted_and_a_string_quoted():
    assert frontmatter.format_scalar(Placeholder("{{date}}")) == "{{date}}"
    assert frontmatter.format_scalar("{{date}}") == '"{{date}}"'
    assert frontmatter.format_property("k", [Placeholder("{{t}}"), ["x", Placeholder("{{u}}")]]) == (
        "k:\n  - {{t}}\n  - [x, {{u}}]\n"
    )
    assert frontmatter.format_property(Placeholder("{{k}}"), 1) == '"{{k}}": 1\n'  # never a key


def test_setting_a_placeholder_to_its_own_text_changes_nothing():
    text = "---\ncreated: {{date}}\nq: '{{date}}'\n---\n"
    assert frontmatter.set_property(text, "created", "{{date}}") == text
    assert frontmatter.set_property(text, "q", Placeholder("{{date}}")) == text


def test_a_list_edit_keeps_its_placeholder_items_unquoted():
    text = "---\naliases:\n  - {{title}}\n---\n"
    value = frontmatter.parse(text).properties["aliases"] + ["Other"]
    assert frontmatter.set_property(text, "aliases", value) == "---\naliases:\n  - {{title}}\n  - Other\n---\n"


# ---------------------------------------------------------------------------
# discover and drafting infer nothing from placeholders


def test_discover_counts_no_placeholder_as_type_status_or_tag(make_vault):
    root = make_vault(
        {
            "a.md": "---\ntype: book\nstatus: read\ncreated: 2024-01-02\ntags: [x, {{tag}}]\n---\n",
            "b.md": "---\ntype: book\nstatus: {{status}}\ncreated: {{date}}\n---\n",
            "c.md": "---\ntype: {{type}}\nstatus: '<% tp.system.suggester() %>'\ncreated: 2024-02-03\n---\n",
            "d.md": "---\ntype: book\nstatus: [read, {{status}}]\ncreated: 2024-03-04\n---\n",
        }
    )
    data = discovery.discover(Vault.open(root))
    assert list(data["types"]) == ["book"]
    assert data["types"]["book"]["explicit"] == 3 and data["types"]["book"]["inferred"] == 0
    assert data["types"]["book"]["statuses"] == {"read": 2}
    assert data["tags"] == {"x": 1}
    assert data["keys"]["created"]["kinds"] == {"date": 3, "placeholder": 1}
    assert data["keys"]["status"]["kinds"] == {"text": 1, "placeholder": 2, "list": 1}
    draft = drafting.draft_schema(data)
    assert draft["node_types"]["book"]["status"] == ["read", "superseded"]
    assert draft["properties"]["created"] == "date"  # the placeholder is no evidence against it


def test_drafting_ignores_placeholders_in_an_older_discovery():
    data = {
        "types": {
            "{{type}}": {"explicit": 4, "folders": {"t": 4}, "statuses": {}, "keys": {"type": 4}},
            "book": {"explicit": 3, "folders": {"books": 3}, "statuses": {"{{status}}": 2, "read": 1}, "keys": {}},
        },
        "keys": {
            "created": {"kinds": {"placeholder": 5}},
            "due": {"kinds": {"placeholder": 5, "date": 3}},
        },
        "folders": {"books": 3, "t": 4},
    }
    draft = drafting.draft_schema(data)
    assert list(draft["node_types"]) == ["book"]
    assert draft["node_types"]["book"]["status"] == ["read", "superseded"]
    assert draft["properties"] == {"due": "date"}
    assert "t" not in draft.get("path_type_hints", {})


# ---------------------------------------------------------------------------
# No fix rewrites a placeholder


def _schema(tmp_path, data):
    assert validate(data) == []
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_schema(path=path)


def test_compliance_fixes_leave_placeholders_alone(tmp_path):
    schema = _schema(
        tmp_path,
        {
            "node_types": {"book": {"required": ["status"], "status": ["read", "superseded"]}},
            "type_aliases": {"{{type}}": "book"},
            "field_fixes": {"status": {"{{status}}": "read"}},
            "properties": {"created": "date", "tags": "tags"},
        },
    )
    text = "---\ntype: book\nstatus: {{status}}\ncreated: {{date}}\ntags:\n  - '#a'\n  - {{title}}\n---\n"
    found = compliance.check_note(Note.from_bytes("b.md", text.encode()), schema)
    fixes = {f.key: f.fix["value"] for f in found if f.fix is not None}
    assert fixes == {"tags": ["a", "{{title}}"]}  # '#a' loses its '#'; nothing else is fixed
    assert not any(f.fix for f in found if f.key in ("status", "created"))
    new = frontmatter.set_property(text, "tags", fixes["tags"])
    assert new == text.replace("  - '#a'\n", "  - a\n")  # the placeholder item stays unquoted

    typed = "---\ntype: {{type}}\n---\n"
    found = compliance.check_note(Note.from_bytes("c.md", typed.encode()), schema)
    assert [f.fix for f in found if f.key == "type"] == [None]
