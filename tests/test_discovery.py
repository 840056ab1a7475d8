"""discover.py on a small vault whose every count is known, and the drafting rules.

Issue 3: discover reports folders and note counts, explicit and inferred
types, statuses per type, every frontmatter key with its count, value kinds
and examples, tags, link statistics, notes without frontmatter and notes
whose frontmatter does not parse.  generate_schema drafts types (only from
explicit ``type`` values), required fields above a coverage threshold,
status enums (plus ``superseded``), folder-to-domain and folder-to-type
hints, and the default decay; the draft validates.

The expected values for ``VAULT`` below were counted by hand from its files
(see the comment above it).  The drafting rules are tested with
``drafting.draft_schema`` on small hand-made discoveries.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.read.vault import Vault
from autograph.schema import discovery, drafting
from autograph.schema.model import DEFAULTS, validate
from conftest import SCRIPTS

DISCOVER = SCRIPTS / "discover.py"

# 8 notes in 4 folders ("" 1, notes 2, people 3, projects 2); 5 valid blocks,
# 1 invalid (notes/broken.md line 2, column 9: the second ':'), 2 without.
# Types: person explicit in alice and bob, inferred for carol (people/ has
# persons); project explicit in Atlas, inferred for draft (no frontmatter,
# projects/ has a project).  notes/list.md's list type is no explicit type and
# notes/ has none to infer.  Links: README -> alice, alice -> bob and ->
# nobody (broken), bob -> ![[pic.png]] (embed) and [Atlas](Atlas.md)
# (markdown), Atlas's owner "[[alice]]" (property): 6, 5 resolved, 0.75/note.
VAULT = {
    "README.md": "# Readme\nStart at [[alice]].\n",
    "people/alice.md": (
        '---\ntype: person\nstatus: active\nemail: a@example.org\ntags:\n  - team\n  - "#lead"\n---\n'
        "Works with [[bob]] and [[nobody]].\n"
    ),
    "people/bob.md": "---\ntype: person\nstatus: Active\nage: 41\n---\nSee ![[pic.png]] and [Atlas](Atlas.md).\n",
    "people/carol.md": "---\nstatus: inactive\nemail:\n---\nNo type.\n",
    "projects/Atlas.md": (
        '---\ntype: project\nstatus: done\ndue: 2024-05-01\nowner: "[[alice]]"\ndone: true\n---\nBody\n'
    ),
    "projects/draft.md": "Draft.\n",
    "notes/broken.md": "---\ntitle: a: b\n---\nBroken.\n",
    "notes/list.md": "---\ntype: [a, b]\n---\nList.\n",
    "pic.png": b"\x89PNG",
    ".obsidian/types.json": '{"types": {"due": "date", "owner": "text", "bad": 5}}',
}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DISCOVER), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture
def vault(make_vault) -> Path:
    return make_vault(VAULT)


@pytest.fixture
def found(vault) -> dict:
    proc = run(vault, "--json", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ---------------------------------------------------------------------------
# discover.py on VAULT


def test_json_keys(found):
    """The keys discover.py --help documents, no more."""
    assert set(found) == {
        "vault", "scanned", "notes", "templates", "folders", "frontmatter", "without_frontmatter",
        "invalid_frontmatter", "unreadable", "types", "keys", "obsidian_types", "tags", "links",
    }  # fmt: skip


def test_note_count(found):
    assert found["notes"] == 8


def test_folders(found):
    assert found["folders"] == {"": 1, "notes": 2, "people": 3, "projects": 2}


def test_frontmatter_states(found):
    assert found["frontmatter"] == {"valid": 5, "invalid": 1, "none": 2}


def test_without_frontmatter(found):
    assert found["without_frontmatter"] == ["README.md", "projects/draft.md"]


def test_invalid_frontmatter(found):
    rows = [(r["path"], r["line"], r["column"]) for r in found["invalid_frontmatter"]]
    assert rows == [("notes/broken.md", 2, 9)]
    assert "': ' inside an unquoted value" in found["invalid_frontmatter"][0]["error"]


def test_unreadable(found):
    assert found["unreadable"] == []


def test_type_names(found):
    """Only string ``type`` values are types; the list type of notes/list.md is none."""
    assert list(found["types"]) == ["person", "project"]


def test_explicit_and_inferred_counts(found):
    """person: alice, bob explicit, carol inferred; project: Atlas explicit, draft inferred."""
    counts = {name: (t["explicit"], t["inferred"]) for name, t in found["types"].items()}
    assert counts == {"person": (2, 1), "project": (1, 1)}


def test_type_folders(found):
    assert {name: t["folders"] for name, t in found["types"].items()} == {
        "person": {"people": 2},
        "project": {"projects": 1},
    }


def test_statuses_per_type(found):
    """Statuses of explicit notes only (carol's inactive is not counted), most used then by name."""
    assert {name: list(t["statuses"].items()) for name, t in found["types"].items()} == {
        "person": [("Active", 1), ("active", 1)],
        "project": [("done", 1)],
    }


def test_keys_per_type(found):
    assert found["types"]["person"]["keys"] == {"status": 2, "type": 2, "age": 1, "email": 1, "tags": 1}
    assert found["types"]["project"]["keys"] == {"done": 1, "due": 1, "owner": 1, "status": 1, "type": 1}


def test_key_order(found):
    """Keys by count (most first), then by name."""
    assert list(found["keys"]) == ["status", "type", "email", "age", "done", "due", "owner", "tags"]


def test_key_counts(found):
    assert {key: info["count"] for key, info in found["keys"].items()} == {
        "status": 4, "type": 4, "email": 2, "age": 1, "done": 1, "due": 1, "owner": 1, "tags": 1,
    }  # fmt: skip


def test_key_kinds(found):
    assert {key: info["kinds"] for key, info in found["keys"].items()} == {
        "status": {"text": 4},
        "type": {"text": 3, "list": 1},
        "email": {"empty": 1, "text": 1},
        "age": {"number": 1},
        "done": {"checkbox": 1},
        "due": {"date": 1},
        "owner": {"text": 1},
        "tags": {"list": 1},
    }


def test_key_examples(found):
    """Examples in note order, without repeats or empty values; lists and numbers as JSON."""
    assert {key: info["examples"] for key, info in found["keys"].items()} == {
        "status": ["active", "Active", "inactive", "done"],
        "type": ['["a", "b"]', "person", "project"],
        "email": ["a@example.org"],
        "age": ["41"],
        "done": ["true"],
        "due": ["2024-05-01"],
        "owner": ["[[alice]]"],
        "tags": ['["team", "#lead"]'],
    }


def test_obsidian_types(found):
    """.obsidian/types.json entries with string types (``bad: 5`` is left out)."""
    assert found["obsidian_types"] == {"due": "date", "owner": "text"}


def test_tags(found):
    """Tags as Obsidian reads them: "#lead" is lead."""
    assert found["tags"] == {"lead": 1, "team": 1}


def test_links(found):
    assert found["links"] == {
        "total": 6, "resolved": 5, "broken": 1, "embeds": 1, "markdown": 1, "in_properties": 1, "per_note": 0.75,
    }  # fmt: skip


def test_dry_run_writes_nothing(vault):
    before = snapshot(vault)
    assert run(vault, "--json", "--dry-run").returncode == 0
    assert snapshot(vault) == before


def test_without_dry_run_only_the_cache_is_written(vault):
    """discover never writes a note; only .graph/ may appear."""
    before = snapshot(vault)
    assert run(vault, "--json").returncode == 0
    after = {path: data for path, data in snapshot(vault).items() if not path.startswith(".graph")}
    assert after == before


def test_cached_run_gives_the_same_discovery(vault):
    """A second run (from the cache) reports the same, apart from the scan time."""
    first = json.loads(run(vault, "--json").stdout)
    second = json.loads(run(vault, "--json").stdout)
    first.pop("scanned")
    second.pop("scanned")
    assert second == first


def test_human_report_headline(vault):
    proc = run(vault, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "8 notes in 4 folders · frontmatter: 5 valid, 1 invalid, 2 none"
    assert "notes/broken.md:2:9" in proc.stdout


def test_library_and_cli_agree(vault, found):
    """discovery.discover on the vault gives the counts the CLI printed."""
    data = discovery.discover(Vault.open(vault))
    for key in ("notes", "folders", "frontmatter", "types", "keys", "tags", "links", "obsidian_types"):
        assert data[key] == found[key], key


def test_unreadable_note_listed(make_vault):
    """A note that is not UTF-8 is listed as unreadable, with no frontmatter state."""
    root = make_vault({"bad.md": b"---\ntitle: caf\xe9\n---\n", "ok.md": "text\n"})
    data = json.loads(run(root, "--json", "--dry-run").stdout)
    assert [r["path"] for r in data["unreadable"]] == ["bad.md"]
    assert data["frontmatter"] == {"valid": 0, "invalid": 0, "none": 1}


def test_templates_are_left_out_of_what_drafts_the_schema(make_vault):
    """Notes in the templates folders count in ``notes`` and ``links`` only:
    their placeholders would spoil the kinds, types and folders the draft
    takes from the report, and enforce never checks them."""
    root = make_vault(
        {
            ".obsidian/templates.json": '{"folder": "Templates"}',
            ".obsidian/plugins/templater-obsidian/data.json": '{"templates_folder": "_meta/tpl"}',
            "Templates/Book.md": "---\ntype: book\ncreated: '{{date}}'\nrating:\n---\nSee [[Books]].\n",
            "_meta/tpl/Meeting.md": "---\ntype: <% tp.file.title %>\n---\n",
            "books/Dune.md": "---\ntype: book\ncreated: 2024-01-02\nrating: 5\n---\n",
            "Books.md": "# Books\n",
        }
    )
    data = json.loads(run(root, "--json", "--dry-run").stdout)
    assert data["notes"] == 4
    assert data["templates"] == {"folders": ["Templates", "_meta/tpl"], "notes": 2}
    assert data["folders"] == {"": 1, "books": 1}
    assert data["frontmatter"] == {"valid": 1, "invalid": 0, "none": 1}
    assert list(data["types"]) == ["book"] and data["types"]["book"]["explicit"] == 1
    assert data["keys"]["created"]["kinds"] == {"date": 1}
    assert data["links"]["total"] == 1 and data["links"]["resolved"] == 1  # the template's link still counts
    assert "Templates" not in drafting.draft_schema(data)["domain_inference"]
    human = run(root, "--dry-run").stdout
    assert "templates: 2 notes in Templates, _meta/tpl" in human


def test_no_templates_folder(found):
    assert found["templates"] == {"folders": [], "notes": 0}


@pytest.mark.parametrize(
    "value,kind",
    [(None, "empty"), (True, "checkbox"), (3, "number"), (2.5, "number"), ("2024-05-01", "date"),
     ("2024-05-01T10:00", "datetime"), ("2024-05-01 10:00:00", "datetime"), ("hello", "text"), ([1], "list"),
     ({"a": 1}, "mapping"), ("2024-5-1", "text")],
)  # fmt: skip
def test_value_kind(value, kind):
    assert discovery.value_kind(value) == kind


# ---------------------------------------------------------------------------
# drafting.draft_schema on hand-made discoveries


def type_info(explicit: int, folders=None, statuses=None, keys=None, inferred: int = 0) -> dict:
    return {
        "explicit": explicit,
        "inferred": inferred,
        "folders": folders or {},
        "statuses": statuses or {},
        "keys": {"type": explicit, **(keys or {})},
    }


def disc(types: dict, keys: dict | None = None, folders: dict | None = None, obsidian_types=None) -> dict:
    if folders is None:
        folders = {}
        for info in types.values():
            for folder, n in info["folders"].items():
                folders[folder] = folders.get(folder, 0) + n
    return {"types": types, "keys": keys or {}, "folders": folders, "obsidian_types": obsidian_types or {}}


def test_draft_types_only_from_explicit_types():
    """A type only ever inferred (explicit 0) is no node type."""
    draft = drafting.draft_schema(disc({"person": type_info(3), "ghost": type_info(0, inferred=4)}))
    assert list(draft["node_types"]) == ["person"]


def test_draft_skips_type_names_read_as_comments():
    """A type named ``_draft`` would be a comment key in schema.json; it is left out."""
    draft = drafting.draft_schema(disc({"_draft": type_info(5), "note": type_info(3)}))
    assert list(draft["node_types"]) == ["note"]


def test_draft_descriptions_are_todos():
    draft = drafting.draft_schema(disc({"person": type_info(3)}))
    assert draft["node_types"]["person"]["description"].startswith("TODO")


@pytest.mark.parametrize(
    "types,folder",
    [
        ({"person": type_info(3, folders={"people": 3})}, "people"),
        ({"person": type_info(2, folders={"people": 2})}, None),  # fewer than 3 notes
        ({"person": type_info(7, folders={"a": 3, "b": 2, "c": 2})}, None),  # under half of the type
        ({"person": type_info(7, folders={"a": 4, "b": 3})}, "a"),  # over half of the type
        ({"person": type_info(4, folders={"mix": 4}), "company": type_info(2, folders={"mix": 2})}, None),  # 4/6
        ({"person": type_info(4, folders={"mix": 4}), "company": type_info(1, folders={"mix": 1})}, "mix"),  # 4/5
    ],
    ids=["all-in-one", "too-few", "under-half", "over-half", "shared-folder", "dominant-in-folder"],
)
def test_draft_folder_only_on_evidence(types, folder):
    """A type gets a folder when 3+ notes, half its notes and 80% of that folder's typed notes say so."""
    assert drafting.draft_schema(disc(types))["node_types"]["person"].get("folder") == folder


@pytest.mark.parametrize(
    "coverage,required",
    [(0.9, ["email", "status"]), (0.8, ["email", "phone", "status"]), (1.0, ["status"]),
     (0.0, ["email", "phone", "status"])],
)  # fmt: skip
def test_draft_required_by_coverage(coverage, required):
    """Keys at least ``coverage`` of the type's notes have are required; ``type`` never is."""
    types = {"person": type_info(10, keys={"status": 10, "email": 9, "phone": 8})}
    assert drafting.draft_schema(disc(types), coverage)["node_types"]["person"]["required"] == required


def test_draft_status_enum_plus_superseded():
    """Statuses in use, most used first (ties by name), then superseded."""
    types = {"task": type_info(9, statuses={"active": 5, "done": 2, "archived": 2})}
    assert drafting.draft_schema(disc(types))["node_types"]["task"]["status"] == [
        "active", "archived", "done", "superseded"]  # fmt: skip


def test_draft_superseded_not_doubled():
    types = {"task": type_info(4, statuses={"active": 3, "superseded": 1})}
    assert drafting.draft_schema(disc(types))["node_types"]["task"]["status"] == ["active", "superseded"]


def test_draft_no_status_enum_without_statuses():
    assert "status" not in drafting.draft_schema(disc({"task": type_info(4)}))["node_types"]["task"]


def test_draft_case_and_spacing_fixes():
    """Active/ACTIVE -> active and 'In  Progress' -> 'in progress' (the most used spelling)."""
    types = {"task": type_info(12, statuses={"active": 5, "Active": 2, "ACTIVE": 1, "in progress": 2,
                                             "In  Progress": 1, "activ": 1})}  # fmt: skip
    draft = drafting.draft_schema(disc(types))
    assert draft["field_fixes"] == {"status": {"Active": "active", "ACTIVE": "active", "In  Progress": "in progress"}}


def test_draft_case_variants_left_out_of_the_enum():
    types = {"task": type_info(12, statuses={"active": 5, "Active": 2, "ACTIVE": 1, "in progress": 2,
                                             "In  Progress": 1, "activ": 1})}  # fmt: skip
    assert drafting.draft_schema(disc(types))["node_types"]["task"]["status"] == [
        "active", "in progress", "activ", "superseded"]  # fmt: skip


def test_draft_never_maps_similar_words():
    """'activ' is not a spelling of 'active' by case or spacing: no field_fixes at all."""
    draft = drafting.draft_schema(disc({"task": type_info(4, statuses={"active": 3, "activ": 1})}))
    assert "field_fixes" not in draft


def test_draft_fixes_never_map_away_a_status_another_type_allows():
    """task uses Done, goal uses done: neither type's own status is rewritten by the other's fix."""
    types = {
        "task": type_info(3, statuses={"Done": 2, "done": 1}),
        "goal": type_info(3, statuses={"done": 2, "Done": 1}),
    }
    draft = drafting.draft_schema(disc(types))
    fixes = draft.get("field_fixes", {}).get("status", {})
    allowed = {status for spec in draft["node_types"].values() for status in spec.get("status", [])}
    assert sorted(set(fixes) & allowed) == []


def test_draft_status_default_when_status_is_required():
    types = {"task": type_info(4, statuses={"open": 3, "done": 1}, keys={"status": 4})}
    assert drafting.draft_schema(disc(types))["status_defaults"] == {"task": "open"}


def test_draft_no_status_default_when_status_is_optional():
    types = {"task": type_info(10, statuses={"open": 3, "done": 1}, keys={"status": 4})}
    assert "status_defaults" not in drafting.draft_schema(disc(types))


@pytest.mark.parametrize(
    "types,hints",
    [
        ({"person": type_info(3, folders={"people": 3})}, {"people": "person"}),
        ({"person": type_info(2, folders={"people": 2})}, None),
        ({"person": type_info(5, folders={"": 5})}, None),  # the root is no hint
        ({"person": type_info(4, folders={"mix": 4}), "company": type_info(2, folders={"mix": 2})}, None),
        ({"person": type_info(4, folders={"mix": 4}), "company": type_info(1, folders={"mix": 1})}, {"mix": "person"}),
    ],
    ids=["one-type", "too-few", "root", "shared", "dominant"],
)
def test_draft_path_hints(types, hints):
    """Folders (not the root) whose typed notes are 80%+ one type, 3+ notes."""
    assert drafting.draft_schema(disc(types)).get("path_type_hints") == hints


def test_draft_domains_are_slugs_of_top_level_folders():
    folders = {"": 2, "Work/Projects": 2, "Work": 1, "Café Notes": 1, "Private/Health": 3}
    draft = drafting.draft_schema(disc({}, folders=folders))
    assert draft["domain_inference"] == {"Work": "work", "Café Notes": "cafe-notes", "Private": "private"}


def test_draft_properties():
    """types.json entries first (valid types only), then a kind every value shares (3+ values)."""
    keys = {
        "n": {"kinds": {"number": 3}},
        "m": {"kinds": {"number": 2}},
        "mixed": {"kinds": {"number": 3, "text": 1}},
        "d": {"kinds": {"empty": 5, "date": 3}},
        "tags": {"kinds": {"list": 5}},
        "aliases": {"kinds": {"list": 5}},
        "flag": {"kinds": {"checkbox": 4}},
        "people": {"kinds": {"list": 3}},
        "title": {"kinds": {"text": 9}},
        "due": {"kinds": {"text": 5}},
        "at": {"kinds": {"datetime": 3}},
    }
    draft = drafting.draft_schema(disc({}, keys=keys, obsidian_types={"due": "date", "x": "weird"}))
    assert draft["properties"] == {
        "at": "datetime", "d": "date", "due": "date", "flag": "checkbox", "n": "number", "people": "multitext",
    }  # fmt: skip


def test_draft_decay_and_hubs_are_the_defaults():
    draft = drafting.draft_schema(disc({"person": type_info(3)}))
    assert (draft["decay"], draft["hubs"], draft["version"]) == (DEFAULTS["decay"], DEFAULTS["hubs"], 1)


def test_draft_validates():
    types = {
        "person": type_info(5, folders={"people": 5}, statuses={"active": 4, "Active": 1}, keys={"status": 5}),
        "project": type_info(3, folders={"projects": 3}, statuses={"done": 3}),
    }
    assert validate(drafting.draft_schema(disc(types, folders={"people": 5, "projects": 3, "../x": 1}))) == []


@pytest.mark.parametrize("coverage", [-0.1, 1.5])
def test_draft_coverage_out_of_range(coverage):
    with pytest.raises(ValueError):
        drafting.draft_schema(disc({}), coverage)


@pytest.mark.parametrize("data", [{}, {"types": {}}, [], "x"])
def test_draft_refuses_what_is_not_a_discovery(data):
    with pytest.raises(ValueError):
        drafting.draft_schema(data)


def test_draft_from_the_fixture_vault(found):
    """From VAULT's discovery: person and project, no folders (too few notes), Active and active folded."""
    draft = drafting.draft_schema(found)
    assert list(draft["node_types"]) == ["person", "project"]
    assert [spec.get("folder") for spec in draft["node_types"].values()] == [None, None]
    fixes = draft["field_fixes"]["status"]
    assert len(fixes) == 1 and sorted([*fixes, *fixes.values()]) == ["Active", "active"]
    assert draft["properties"] == {"due": "date", "owner": "text"}


def test_bootstrap_converges_when_types_spell_a_status_differently(make_vault):
    """discover -> generate -> enforce --apply on tasks saying Done and goals saying done: nothing left to fix."""
    files = {f"t{i}.md": "---\ntype: task\nstatus: Done\n---\n" for i in (1, 2)}
    files |= {f"g{i}.md": "---\ntype: goal\nstatus: done\n---\n" for i in (1, 2)}
    files |= {"t3.md": "---\ntype: task\nstatus: done\n---\n", "g3.md": "---\ntype: goal\nstatus: Done\n---\n"}
    root = make_vault(files)
    discovery_file = root.parent / "discovery.json"
    discovery_file.write_text(run(root, "--json", "--dry-run").stdout, encoding="utf-8")
    generate = [
        sys.executable,
        str(SCRIPTS / "generate_schema.py"),
        str(discovery_file),
        "-o",
        str(root / "schema.json"),
    ]
    assert subprocess.run(generate, capture_output=True, timeout=60).returncode == 0
    enforce = [sys.executable, str(SCRIPTS / "enforce.py"), str(root), "--apply", "--json"]
    applied = json.loads(subprocess.run(enforce, capture_output=True, text=True, timeout=60).stdout)
    assert applied["after"]["fixable"] == 0
