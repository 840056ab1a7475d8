"""Faults a tester found in surgical frontmatter edits (``enforce.py --apply``).

1. A rewrite never drops a YAML comment inside the value it replaces: such an
   edit is refused (``FrontmatterError``), ``check`` offers no fix for it, and
   ``plan_fixes`` reports it as skipped.  Block scalar lines are text, not
   comments; the key line's own comment stays.
2. Mixed line endings: the edited key's lines keep the ending they had.
3. A fix reaches its final value in one step: fixing a fixed note plans
   nothing (tags ``"# spaced"``, defaults and types that ``field_fixes`` or
   ``type_aliases`` map further).
4. Obsidian reads property names that differ only in letter case as one
   property (its All properties view lists ``URL`` and ``url`` once, and
   ``Tags`` is read as ``tags``): a fix edits the note's ``Status`` and never
   adds a second ``status``.

The general rules are Hypothesis properties here and in test_properties.py
(``test_setting_one_key_changes_only_its_lines``,
``test_an_edit_keeps_the_line_endings_of_mixed_lines``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from autograph.read import frontmatter
from autograph.read.frontmatter import FrontmatterError
from autograph.read.note import Note
from autograph.read.vault import Vault
from autograph.schema import compliance
from autograph.schema.model import load_schema, validate
from conftest import SCRIPTS
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

ENFORCE = SCRIPTS / "enforce.py"
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def schema_of(folder: Path, data: dict):
    assert validate(data) == [], validate(data)
    path = folder / "schema-under-test.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_schema(path=path)


def enforce(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ENFORCE), *map(str, args)], capture_output=True, text=True, timeout=60)


def apply_fixes(root: Path, schema) -> tuple[list, list]:
    """Plan the fixes of the vault at ``root`` and write them; (edits, skipped)."""
    vault = Vault.open(root)
    edits, skipped = compliance.plan_fixes(vault, compliance.check(vault, schema))
    for edit in edits:
        (root / edit.path).write_bytes(edit.after)
    return edits, skipped


# ---------------------------------------------------------------------------
# 1. Comments inside a value

REPRO = (
    '---\ntags:\n  - "#project" # added by Bob, keep until Q3\n'
    '  # - "#old" (disabled on purpose)\n  - idea\n---\nbody\n'
)


def test_repro_tags_fix_keeps_the_comments_of_the_list(tmp_path):
    """The tester's note: enforce --apply leaves it byte for byte and says why."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text(REPRO, encoding="utf-8")
    proc = enforce(root, "--apply", "--json")
    assert proc.returncode == 0, proc.stderr
    assert (root / "a.md").read_text(encoding="utf-8") == REPRO
    report = json.loads(proc.stdout)
    [finding] = [f for f in report["findings"] if f["rule"] == "tags-format"]
    assert finding["fixable"] is False and "holds YAML comments" in finding["message"]
    assert report["written"] == []
    human = enforce(root, "--apply")
    assert "holds YAML comments" in human.stdout and "edit it by hand" in human.stdout


def test_plan_fixes_reports_a_value_with_comments_as_skipped(tmp_path):
    """A fix planned for such a value (the note changed since the check) is a
    per-note ``skipped`` entry, never an edit that drops the comments."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text(REPRO, encoding="utf-8")
    fix = {"key": "tags", "value": ["project", "idea"]}
    report = compliance.Report(1, [compliance.Finding("a.md", 2, "tags-format", "m", key="tags", fix=fix)])
    edits, skipped = compliance.plan_fixes(Vault.open(root), report)
    assert edits == []
    assert [s["path"] for s in skipped] == ["a.md"] and "holds YAML comments" in skipped[0]["reason"]


@pytest.mark.parametrize(
    ("block", "line"),
    [
        ("tags:\n  - a\n  # old\n  - b\n", 4),  # a whole-line comment between items
        ("tags:\n  - a # why\n  - b\n", 3),  # a comment after an item
        ("tags:\n- a\n- b  # why\n", 4),  # items at the key's indentation
        ("tags: # topics\n  - a\n  # old\n  - b\n", 4),  # the key line's comment is not the only one
        ("meta:\n  a: 1 # why\n  b: 2\n", 3),  # inside a nested mapping
        ("meta:\n  a: 1\n  # gone\n  b: 2\n", 4),
        ("tags: [a, # first\n  b]\n", None),  # a flow list over lines: the comment is on the key line
        ("tags: [a,\n  b] # after\n", 3),  # ... or after its last line
        ("tags: [a,\n  # inside\n  b]\n", 3),
        ('name: "a\n  b" # why\n', 3),  # after a quoted scalar over two lines
        ("text: |\n  x\n  # text\nkey: v # c\n", None),  # block scalar lines are text
    ],
)
def test_a_value_holding_comments_is_never_rewritten(block, line):
    text = "---\n" + block + "---\nbody\n"
    key = block.split(":", 1)[0]
    value = ["z"] if key == "tags" else "z"
    problem = frontmatter.edit_problem(text, key)
    if line is None:
        assert problem is None
        new = frontmatter.set_property(text, key, value)
        assert frontmatter.parse(new).properties[key] == value
        return
    assert problem is not None and problem.line == line and "holds YAML comments" in problem.reason
    with pytest.raises(FrontmatterError, match="holds YAML comments") as caught:
        frontmatter.set_property(text, key, value)
    assert caught.value.line == line
    assert frontmatter.set_property(text, key, frontmatter.parse(text).properties[key]) == text  # same value: no-op


@pytest.mark.parametrize(
    ("block", "value", "after"),
    [
        # the key line's comment stays; a comment after the value is no part of it
        ("tags: # topics\n  - a\n# after\nx: 1\n", ["b"], "tags: # topics\n  - b\n# after\nx: 1\n"),
        ("status: Active   # set by Bob\n", "active", "status: active   # set by Bob\n"),
        ("k: [a, b] # why\n", ["c"], "k: [c] # why\n"),  # a flow list stays one
        # '' inside single quotes is a quote: no comment follows it, none is invented
        ("k: 'it''s # x'\nname: x\n", "new", "k: new\nname: x\n"),
        ("k: 'it''s' # x\n", "new", "k: new # x\n"),
        ('k: "a \\" # b"\n', "new", "k: new\n"),
        # block scalar text that looks like a comment is text, and goes with the value
        ("text: | # why\n  # not a comment\n  x\n", "z", "text: z # why\n"),
    ],
)
def test_comments_outside_the_value_stay_where_they_are(block, value, after):
    assert frontmatter.set_property("---\n" + block + "---\n", block.split(":")[0], value) == "---\n" + after + "---\n"


# ---------------------------------------------------------------------------
# 2. Mixed line endings


@pytest.mark.parametrize(
    ("before", "key", "value", "after"),
    [
        (
            "---\nstatus: Active\r\nname: x\n---\r\n",
            "status",
            "active",
            "---\nstatus: active\r\nname: x\n---\r\n",
        ),
        ("---\r\nstatus: Active\nname: x\r\n---\r\n", "status", "active", "---\r\nstatus: active\nname: x\r\n---\r\n"),
        # each line of a list keeps its ending; extra lines take the last one's
        (
            "---\ntags:\r\n  - a\n  - b\r\n---\n",
            "tags",
            ["x", "w", "z"],
            "---\ntags:\r\n  - x\n  - w\r\n  - z\r\n---\n",
        ),
        # a new key takes the opening line's ending, as before
        ("---\r\na: 1\n---\n", "b", 2, "---\r\na: 1\nb: 2\r\n---\n"),
    ],
)
def test_repro_an_edited_key_keeps_its_line_endings(before, key, value, after):
    assert frontmatter.set_property(before, key, value) == after


def test_enforce_keeps_the_mixed_line_endings(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_bytes(b"---\ntype: task\nstatus: Active\r\nname: x\n---\r\n")
    schema = schema_of(tmp_path, {"node_types": {"task": {}}, "field_fixes": {"status": {"Active": "active"}}})
    apply_fixes(root, schema)
    assert (root / "x.md").read_bytes() == b"---\ntype: task\nstatus: active\r\nname: x\n---\r\n"


# ---------------------------------------------------------------------------
# 3. Fixes reach their final value in one step


@pytest.mark.parametrize(
    ("tags", "fixed"),
    [
        ('["# spaced"]', "tags: [spaced]\n"),  # a flow list stays one
        ('["# #x", "#a #b", " #c ", "#", "", "d"]', "tags: [x, a b, c, d]\n"),
        ("\n  - '# spaced'", "tags:\n  - spaced\n"),
        ('"# spaced, #two"', "tags: spaced, two\n"),
    ],
)
def test_repro_tags_fixed_in_one_apply(tmp_path, tags, fixed):
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_text(f"---\ntags: {tags}\n---\n", encoding="utf-8")
    schema = schema_of(tmp_path, {})
    edits, _ = apply_fixes(root, schema)
    assert len(edits) == 1
    assert (root / "x.md").read_text(encoding="utf-8") == f"---\n{fixed}---\n"
    assert apply_fixes(root, schema) == ([], [])


def test_a_default_that_field_fixes_maps_is_written_mapped(tmp_path):
    """defaults give priority 'hi', field_fixes map hi -> high: one apply writes high."""
    data = {
        "node_types": {"task": {"required": ["priority"], "defaults": {"priority": "hi"}}},
        "field_fixes": {"priority": {"hi": "high"}},
    }
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_text("---\ntype: task\n---\n", encoding="utf-8")
    schema = schema_of(tmp_path, data)
    apply_fixes(root, schema)
    assert (root / "x.md").read_text(encoding="utf-8") == "---\ntype: task\npriority: high\n---\n"
    assert apply_fixes(root, schema) == ([], [])


def test_a_type_alias_that_field_fixes_maps_further_is_fixed_at_once(tmp_path):
    data = {
        "node_types": {"person": {"required": ["role"], "defaults": {"role": "member"}}, "company": {}},
        "type_aliases": {"contact": "person"},
        "field_fixes": {"type": {"person": "company", "org": "contact"}},
    }
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("---\ntype: contact\n---\n", encoding="utf-8")
    (root / "b.md").write_text("---\ntype: org\n---\n", encoding="utf-8")
    schema = schema_of(tmp_path, data)
    apply_fixes(root, schema)
    assert (root / "a.md").read_text(encoding="utf-8") == "---\ntype: company\n---\n"
    assert (root / "b.md").read_text(encoding="utf-8") == "---\ntype: company\n---\n"
    assert apply_fixes(root, schema) == ([], [])


def test_a_loop_of_alias_and_field_fix_offers_no_fix(tmp_path):
    """contact -> person (alias) -> contact (field_fixes): no fix that the next run undoes."""
    data = {
        "node_types": {"person": {}},
        "type_aliases": {"contact": "person"},
        "field_fixes": {"type": {"person": "contact"}},
    }
    note_ = Note.from_bytes("a.md", b"---\ntype: contact\n---\n")
    assert [f for f in compliance.check_note(note_, schema_of(tmp_path, data)) if f.fix] == []


TYPES = ["person", "company"]
WORDS = ["active", "Active", "ongoing", "done", "hi", "high", "member", "person", "contact", "company", "org", "x"]
TAG_ITEMS = st.one_of(
    st.sampled_from(["#a", "# spaced", "# #x", "#", "", " b ", "a b", "#a #b", "c,#d", "2024", "##e"]),
    st.text(alphabet="#a ,\t", max_size=6),
    st.none(),
    st.integers(0, 3),
)


@st.composite
def schemas(draw) -> dict:
    keys = ["status", "priority", "role", "tags"]
    node_types = {}
    for name in TYPES:
        spec = {"status": draw(st.sampled_from([[], ["active", "done", "superseded"]]))}
        spec["required"] = draw(st.lists(st.sampled_from(keys), unique=True, max_size=3))
        defaults = draw(st.dictionaries(st.sampled_from(keys), st.sampled_from(WORDS), max_size=2))
        if "tags" in defaults:
            defaults["tags"] = draw(st.lists(TAG_ITEMS.filter(lambda t: isinstance(t, str)), max_size=2))
        spec["defaults"] = defaults
        spec["folder"] = draw(st.sampled_from([None, "people", "companies"]))
        node_types[name] = {k: v for k, v in spec.items() if v is not None}
    field_fixes = {
        key: draw(st.dictionaries(st.sampled_from(WORDS), st.sampled_from(WORDS), max_size=3))
        for key in draw(st.lists(st.sampled_from(["status", "priority", "type"]), unique=True))
    }
    data = {
        "node_types": node_types,
        "type_aliases": draw(st.dictionaries(st.sampled_from(["contact", "org", "client"]), st.sampled_from(TYPES))),
        "field_fixes": field_fixes,
        "path_type_hints": draw(st.dictionaries(st.sampled_from(["people", "companies"]), st.sampled_from(TYPES))),
    }
    if draw(st.booleans()):
        data["status_defaults"] = {"default": "active"}
    return data


@st.composite
def notes(draw) -> str:
    names = st.sampled_from(["type", "Type", "status", "Status", "tags", "Tags", "priority", "role", "name"])
    pairs = draw(st.lists(st.tuples(names, st.just(None)), unique_by=lambda kv: kv[0], max_size=5))
    lines = []
    for name, _ in pairs:
        if name.lower() == "tags":
            value = draw(st.one_of(st.lists(TAG_ITEMS, max_size=4), st.sampled_from(["#a #b", "# spaced", "a"])))
        else:
            value = draw(st.one_of(st.sampled_from(WORDS + ["", None]), st.sampled_from(WORDS).map(lambda w: [w])))
        lines.append(frontmatter.format_property(name, value))
    if draw(st.booleans()):  # a list whose comments no fix may drop
        lines.append("tags:\n  - '#kept' # why\n  # - old\n  - ''\n")
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = "---\n" + "".join(lines) + "---\nbody\n"
    return text.replace("\n", newline)


@SETTINGS
@given(schemas(), notes(), st.sampled_from(["people/a.md", "companies/b.md", "a.md"]))
def test_fixing_a_fixed_note_plans_nothing(data, text, path):
    """Applying the fixes twice gives the same bytes as once: the fixes of a
    fixed note are nothing, whatever the schema maps and the note holds."""
    assume(validate(data) == [])
    note(f"text={text!r}")
    assume(frontmatter.parse(text).error is None)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "v"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8", newline="")
        schema = schema_of(Path(folder), data)
        first, _ = apply_fixes(root, schema)
        once = (root / path).read_bytes()
        note(f"once={once!r}")
        vault = Vault.open(root)
        report = compliance.check(vault, schema)
        assert report.fixable() == [], [(f.rule, f.fix) for f in report.fixable()]
        assert compliance.plan_fixes(vault, report)[0] == []
        before = Note.from_bytes(path, text.encode("utf-8")).properties
        after = Note.from_bytes(path, once).properties
        # no key is added in another letter case of one the note has (Obsidian: one property)
        had = {k.lower() for k in before}
        assert [k for k in after if k not in before and k.lower() in had] == []


# ---------------------------------------------------------------------------
# 4. Property names that differ only in letter case


def test_repro_a_capitalised_key_is_fixed_in_place(tmp_path):
    data = {
        "node_types": {"task": {"required": ["status"], "status": ["active", "done", "superseded"]}},
        "field_fixes": {"status": {"Active": "active"}},
        "status_defaults": {"default": "active"},
    }
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_text("---\ntype: task\nStatus: Active\n---\n", encoding="utf-8")
    (root / "y.md").write_text("---\nType: task\nSTATUS: done\n---\n", encoding="utf-8")
    schema = schema_of(tmp_path, data)
    found = compliance.check(Vault.open(root), schema).findings
    assert [(f.path, f.rule, f.key, f.line, f.fix) for f in found] == [
        ("x.md", "field-fix", "Status", 3, {"key": "Status", "value": "active"})
    ]
    apply_fixes(root, schema)
    assert (root / "x.md").read_text(encoding="utf-8") == "---\ntype: task\nStatus: active\n---\n"
    assert (root / "y.md").read_text(encoding="utf-8") == "---\nType: task\nSTATUS: done\n---\n"


def test_set_property_edits_the_key_in_the_notes_letter_case():
    assert frontmatter.set_property("---\nStatus: A\n---\n", "status", "b") == "---\nStatus: b\n---\n"
    assert (
        frontmatter.set_property("---\nStatus: A\nstatus: B\n---\n", "status", "c")
        == "---\nStatus: A\nstatus: c\n---\n"
    )
    assert frontmatter.delete_property("---\nTags: [a]\nx: 1\n---\n", "tags") == "---\nx: 1\n---\n"
    with pytest.raises(FrontmatterError, match="differ only in letter case"):
        frontmatter.set_property("---\nStatus: A\nSTATUS: B\n---\n", "status", "c")
