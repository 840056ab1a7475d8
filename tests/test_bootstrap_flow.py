"""The bootstrap workflow on a copy of every corpus (issue 3, "Done when").

discover.py --json -> generate_schema.py -> enforce.py --json ->
enforce.py --apply --json -> enforce.py --json, then a second --apply.
Each corpus runs the whole chain once (module fixture ``flow``); the tests
read what it recorded:

* the last run reports nothing left to auto-fix, and the second --apply
  writes nothing and changes no byte;
* across the apply, every body is byte-identical, every typed frontmatter
  value is unchanged except the keys the applied findings' ``fix.key`` name
  for that note, and notes that were not edited keep every byte;
* the draft schema validates with autograph and against
  ``skills/autograph/schema.schema.json`` (jsonschema, a dev dependency).

Plus generate_schema.py's refusal to overwrite without --force.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from autograph.read import frontmatter
from autograph.read.note import Note
from autograph.read.vault import Vault
from autograph.schema import bootstrap
from autograph.schema.model import load_schema, validate
from conftest import CORPORA, CORPUS_NAMES, REPO, SCRIPTS, copy_tree, require

DISCOVER = SCRIPTS / "discover.py"
GENERATE = SCRIPTS / "generate_schema.py"
ENFORCE = SCRIPTS / "enforce.py"
ENGINE = SCRIPTS / "engine.py"
JSON_SCHEMA = REPO / "skills" / "autograph" / "schema.schema.json"


def run(script: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=300)


def run_json(script: Path, *args) -> dict:
    proc = run(script, *args, "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault outside .graph/, with its bytes."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink() and path.relative_to(root).parts[0] != ".graph"
    }


def typed(value):
    """``value`` with each scalar paired with its type (so ``True != 1``)."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def properties(rel: str, data: bytes) -> dict:
    note = Note.from_bytes(rel, data)
    block = frontmatter.parse(note.text) if note.text is not None else None
    return block.properties if block is not None else {}


@dataclass
class Flow:
    name: str
    root: Path
    discovery: dict
    schema: dict
    first: dict  # enforce --json
    applied: dict  # enforce --apply --json
    last: dict  # enforce --json after the apply
    second: dict  # the second enforce --apply --json
    before: dict[str, bytes]  # files before the apply
    after: dict[str, bytes]  # files after the apply
    after_second: dict[str, bytes]  # files after the second apply


@pytest.fixture(scope="module", params=CORPUS_NAMES)
def flow(request, fast_tmp_factory) -> Flow:
    name = request.param
    work = fast_tmp_factory.mktemp(name)
    root = copy_tree(require(CORPORA / name), work / "vault")
    discovery = run_json(DISCOVER, root)
    (work / "discovery.json").write_text(json.dumps(discovery), encoding="utf-8")
    proc = run(GENERATE, work / "discovery.json", "-o", root / "schema.json")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads((root / "schema.json").read_text(encoding="utf-8"))
    first = run_json(ENFORCE, root)
    before = snapshot(root)
    applied = run_json(ENFORCE, root, "--apply")
    after = snapshot(root)
    last = run_json(ENFORCE, root)
    second = run_json(ENFORCE, root, "--apply")
    after_second = snapshot(root)
    return Flow(name, root, discovery, schema, first, applied, last, second, before, after, after_second)


pytestmark = pytest.mark.corpus


def test_nothing_left_to_fix(flow):
    """The enforce run after --apply reports fixable == 0."""
    assert flow.last["fixable"] == 0, flow.last["by_rule"]


def test_apply_reports_nothing_left_to_fix(flow):
    """--apply's own ``after`` agrees: 0 fixable once the writes are done."""
    assert flow.applied["after"]["fixable"] == 0


def test_apply_had_no_conflicts(flow):
    assert flow.applied["conflicts"] == []


def test_apply_writes_every_planned_edit(flow):
    """Every planned edit is written, and only those files changed."""
    changed = sorted(path for path in flow.before if flow.before[path] != flow.after.get(path))
    assert sorted(flow.applied["written"]) == sorted(edit["path"] for edit in flow.applied["edits"]) == changed


def test_apply_creates_and_removes_no_file(flow):
    assert sorted(flow.after) == sorted(flow.before)


def test_second_apply_writes_nothing(flow):
    assert flow.second["written"] == []
    assert flow.second["edits"] == []


def test_second_apply_changes_no_byte(flow):
    assert flow.after_second == flow.after


def test_notes_not_edited_are_byte_identical(flow):
    """Every file the apply did not write keeps every byte."""
    written = set(flow.applied["written"])
    changed = [path for path in flow.before if path not in written and flow.before[path] != flow.after[path]]
    assert changed == []


def test_bodies_byte_identical(flow):
    """The body (everything after the frontmatter block) of every note is byte-identical."""
    changed = []
    for rel, data in flow.before.items():
        if rel.endswith(".md") and data != flow.after[rel]:
            body_before = Note.from_bytes(rel, data).body.encode("utf-8")
            body_after = Note.from_bytes(rel, flow.after[rel]).body.encode("utf-8")
            if body_before != body_after:
                changed.append(rel)
    assert changed == [], changed[:10]


def test_only_targeted_values_change(flow):
    """Every typed frontmatter value is unchanged except the keys named by that note's applied fixes."""
    targeted: dict[str, set[str]] = {}
    for finding in flow.applied["findings"]:
        if finding["fixable"]:
            targeted.setdefault(finding["path"], set()).add(finding["fix"]["key"])
    problems = []
    for rel, data in flow.before.items():
        if not rel.endswith(".md") or data == flow.after[rel]:
            continue
        old, new = properties(rel, data), properties(rel, flow.after[rel])
        keys = targeted.get(rel, set())
        untouched_old = {k: typed(v) for k, v in old.items() if k not in keys}
        untouched_new = {k: typed(v) for k, v in new.items() if k not in keys}
        if untouched_old != untouched_new:
            problems.append(rel)
    assert problems == [], problems[:10]


def test_targeted_values_are_the_fix_values(flow):
    """Each fixed key reads back as the value its finding stated (the last fix of a key wins)."""
    expected: dict[str, dict] = {}
    for finding in flow.applied["findings"]:
        if finding["fixable"]:
            expected.setdefault(finding["path"], {})[finding["fix"]["key"]] = finding["fix"]["value"]
    problems = []
    for rel, fixes in expected.items():
        new = properties(rel, flow.after[rel])
        for key, value in fixes.items():
            if typed(new.get(key)) != typed(value):
                problems.append((rel, key, value, new.get(key)))
    assert problems == [], problems[:10]


def test_score_does_not_drop(flow):
    """Fixes only remove findings: the score after --apply is at least the score before."""
    assert flow.last["score"] >= flow.first["score"]


def test_draft_validates_with_autograph(flow):
    assert validate(flow.schema) == []


def test_draft_validates_against_the_json_schema(flow):
    schema = json.loads(JSON_SCHEMA.read_text(encoding="utf-8"))
    errors = [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(flow.schema)]
    assert errors == []


def test_enforce_used_the_vaults_schema(flow):
    """enforce found VAULT/schema.json on its own (no --schema)."""
    assert Path(flow.first["schema"]) == flow.root / "schema.json"


# The templates folders each corpus's settings name, read by hand.
TEMPLATES = {"kepano-obsidian": ["Templates"], "tasks-demo": ["_meta/templates"], "tasks-docs": ["_meta/templates"]}


def test_discovery_counts_every_note(flow):
    """discover counts every note; enforce every note outside the templates folders
    (Obsidian's and Templater's settings), which it never checks nor writes."""
    notes = [p for p in flow.before if p.endswith(".md")]
    templates = TEMPLATES.get(flow.name, [])
    assert Vault.open(flow.root).template_folders == templates
    cards = [p for p in notes if not any(p.startswith(folder + "/") for folder in templates)]
    assert flow.discovery["notes"] == len(notes)
    assert flow.first["notes"] == len(cards)
    assert (len(cards) < len(notes)) == bool(templates)


# ---------------------------------------------------------------------------
# generate_schema.py never overwrites without --force

DISCOVERY = {
    "notes": 3,
    "folders": {"people": 3},
    "types": {"person": {"explicit": 3, "inferred": 0, "folders": {"people": 3}, "statuses": {"active": 3},
                         "keys": {"type": 3, "status": 3}}},
    "keys": {"type": {"count": 3, "kinds": {"text": 3}, "examples": ["person"]}},
}  # fmt: skip


@pytest.fixture
def discovery_file(tmp_path) -> Path:
    path = tmp_path / "discovery.json"
    path.write_text(json.dumps(DISCOVERY), encoding="utf-8")
    return path


def test_generate_refuses_to_overwrite(tmp_path, discovery_file):
    """An existing -o file without --force: exit 2, a message, the file unchanged."""
    target = tmp_path / "schema.json"
    target.write_bytes(b'{"mine": true}\n')
    proc = run(GENERATE, discovery_file, "-o", target)
    assert proc.returncode == 2
    assert "--force" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert target.read_bytes() == b'{"mine": true}\n'


def test_generate_overwrites_with_force(tmp_path, discovery_file):
    """With --force the draft replaces the file."""
    target = tmp_path / "schema.json"
    target.write_bytes(b'{"mine": true}\n')
    proc = run(GENERATE, discovery_file, "-o", target, "--force")
    assert proc.returncode == 0, proc.stderr
    assert list(json.loads(target.read_text(encoding="utf-8"))["node_types"]) == ["person"]


def test_generate_writes_a_new_file(tmp_path, discovery_file):
    target = tmp_path / "new" / "schema.json"
    target.parent.mkdir()
    proc = run(GENERATE, discovery_file, "-o", target)
    assert proc.returncode == 0, proc.stderr
    assert validate(json.loads(target.read_text(encoding="utf-8"))) == []


def test_generate_dry_run_writes_nothing(tmp_path, discovery_file):
    target = tmp_path / "schema.json"
    proc = run(GENERATE, discovery_file, "-o", target, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert not target.exists()


def test_generate_to_stdout_is_the_draft(discovery_file):
    """Without -o the draft goes to stdout as JSON."""
    proc = run(GENERATE, discovery_file)
    assert proc.returncode == 0, proc.stderr
    draft = json.loads(proc.stdout)
    assert draft["node_types"]["person"]["status"] == ["active", "superseded"]


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"notes": 3}'])
def test_generate_refuses_what_is_not_a_discovery(tmp_path, content):
    """Invalid JSON or JSON that is not a discovery: exit 2 naming the file, no traceback."""
    path = tmp_path / "discovery.json"
    path.write_text(content, encoding="utf-8")
    proc = run(GENERATE, path)
    assert proc.returncode == 2
    assert "discovery.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_generate_refuses_a_folder_as_output(tmp_path, discovery_file):
    proc = run(GENERATE, discovery_file, "-o", tmp_path)
    assert proc.returncode == 2
    assert "folder" in proc.stderr


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_templates_are_never_written(tmp_path, name):
    """Issue 7, item 13: engine init --apply and enforce --apply leave every note in a
    templates folder byte for byte, though init would give some of them frontmatter."""
    root = copy_tree(require(CORPORA / name), tmp_path / "vault")
    folders = tuple(folder + "/" for folder in TEMPLATES[name])
    vault = Vault.open(root)
    vault.template_folders = []  # as if the settings named no templates folder
    would = [e.path for e in bootstrap.plan_init(vault, load_schema(root))[0] if e.path.startswith(folders)]
    assert would, "the test needs a template that init would otherwise change"
    before = snapshot(root)
    init = run_json(ENGINE, "init", root, "--apply")
    assert init["written"] and not [p for p in init["written"] if p.startswith(folders)]
    run_json(ENFORCE, root, "--apply")
    after = snapshot(root)
    templates = [p for p in before if p.startswith(folders)]
    assert templates and all(after[p] == before[p] for p in templates)
