"""Templates are not cards (issue 7, item 13): notes in the vault's templates
folders (Obsidian's core Templates plugin, Templater) and the schema's
``ignore_folders`` are read for links but never checked, fixed or given
frontmatter; a note made from a template would inherit autograph's fields."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from autograph.read.vault import Vault
from autograph.schema.model import SchemaError, load_schema
from conftest import SCRIPTS

SCHEMA = {
    "node_types": {"person": {"folder": "people", "status": ["active", "superseded"]}},
    "path_type_hints": {"people/": "person", "Templates/": "person", "tpl/": "person", "Archive/": "person"},
    "field_fixes": {"status": {"Active": "active"}},
}
TEMPLATE = "---\ntype: person\nstatus: Active\n---\n# {{title}}\n[[people/Ann]]\n"


def vault_with(make_vault, settings: dict[str, dict], schema: dict = SCHEMA):
    files = {
        "people/Ann.md": "---\ntype: person\nstatus: Active\n---\n",
        "people/Bare.md": "Met Bob.\n",
        "Templates/Person.md": TEMPLATE,
        "Templates/Bare.md": "# {{title}}\n",
        "tpl/Meeting.md": TEMPLATE,
        "Archive/Old.md": TEMPLATE,
        "schema.json": json.dumps(schema),
    }
    files.update({f".obsidian/{name}": json.dumps(data) for name, data in settings.items()})
    return make_vault(files)


def run_json(*args) -> dict:
    proc = subprocess.run([sys.executable, *map(str, args), "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(
    "settings, folders",
    [
        ({}, []),
        ({"templates.json": {"folder": "Templates"}}, ["Templates"]),
        ({"templates.json": {"folder": "/Templates/"}}, ["Templates"]),
        ({"plugins/templater-obsidian/data.json": {"templates_folder": "tpl"}}, ["tpl"]),
        (
            {
                "templates.json": {"folder": "Templates"},
                "plugins/templater-obsidian/data.json": {"templates_folder": "tpl"},
            },
            ["Templates", "tpl"],
        ),
        ({"templates.json": {"folder": ""}}, []),
        ({"templates.json": {"folder": "../outside"}}, []),
        ({"templates.json": {"folder": 7}}, []),
        ({"templates.json": ["Templates"]}, []),
    ],
)
def test_template_folders_come_from_the_vaults_settings(make_vault, settings, folders):
    assert Vault.open(vault_with(make_vault, settings)).template_folders == folders


def test_damaged_settings_name_no_templates_folder(make_vault):
    root = vault_with(make_vault, {"app.json": {}})
    (root / ".obsidian" / "templates.json").write_bytes(b"{not json")
    assert Vault.open(root).template_folders == []


def test_enforce_and_init_leave_templates_and_ignored_folders_alone(make_vault):
    schema = {**SCHEMA, "ignore_folders": ["Archive"]}
    root = vault_with(
        make_vault,
        {
            "templates.json": {"folder": "Templates"},
            "plugins/templater-obsidian/data.json": {"templates_folder": "tpl"},
        },
        schema,
    )
    before = {
        p: (root / p).read_bytes()
        for p in ("Templates/Person.md", "Templates/Bare.md", "tpl/Meeting.md", "Archive/Old.md")
    }
    report = run_json(SCRIPTS / "enforce.py", root, "--apply")
    assert report["notes"] == 2 and report["written"] == ["people/Ann.md"]
    assert not [f for f in report["findings"] if not f["path"].startswith("people/")]
    init = run_json(SCRIPTS / "engine.py", "init", root, "--apply")
    assert init["written"] == ["people/Bare.md"]
    assert {p: (root / p).read_bytes() for p in before} == before


def test_templates_are_still_read_for_links(make_vault):
    root = vault_with(make_vault, {"templates.json": {"folder": "Templates"}})
    backlinks = run_json(SCRIPTS / "graph.py", "backlinks", root, "people/Ann")
    assert "Templates/Person.md" in json.dumps(backlinks)


@pytest.mark.parametrize("bad", [["../x"], ["/abs"], "Templates", [""], [3]])
def test_ignore_folders_is_validated(tmp_path, bad):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"ignore_folders": bad}))
    with pytest.raises(SchemaError, match=r"\$\.ignore_folders"):
        load_schema(None, path)


def test_health_counts_templates_as_notes_but_not_as_cards(make_vault):
    """Issue 9, item 8: templates are read (their links count) but are not
    cards: never orphans, not in the description coverage."""
    root = vault_with(make_vault, {"templates.json": {"folder": "Templates"}}, dict(SCHEMA, ignore_folders=["Archive"]))
    report = run_json(SCRIPTS / "graph.py", "health", root, "--dry-run")
    assert report["notes"] == 6
    orphans = set(report["orphans"])
    assert not orphans & {"Templates/Person.md", "Templates/Bare.md", "Archive/Old.md"}
    assert "tpl/Meeting.md" in orphans  # no Templater settings here: an ordinary note
    # the template's link to people/Ann counts: Ann is no orphan
    assert "people/Ann.md" not in orphans
    # cards: people/Ann, people/Bare, tpl/Meeting; none has a description
    assert report["description_coverage"] == 0.0
