"""Robust edges (issue 7, item 11): JSON nested deeper than Python parses and
keys given twice are bad schemas (exit 2, no traceback); text output works
on consoles that cannot show '·' or '—'; a note whose lines end in a lone CR
is read line by line and never gets a second block."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.read import frontmatter
from autograph.read.note import Note
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

GRAPH = SCRIPTS / "graph.py"
ENFORCE = SCRIPTS / "enforce.py"
ENGINE = SCRIPTS / "engine.py"
GENERATE = SCRIPTS / "generate_schema.py"
DISCOVER = SCRIPTS / "discover.py"


def run(script: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [5_000, 200_000])
@pytest.mark.parametrize("script, args", [(ENFORCE, []), (GRAPH, ["health"]), (ENGINE, ["init"])])
def test_a_deeply_nested_schema_is_a_bad_schema(tmp_path, levels, script, args):
    (tmp_path / "v").mkdir()
    schema = tmp_path / "schema.json"
    schema.write_text(deep(levels))
    proc = run(script, *args, tmp_path / "v", "--schema", schema)
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr and b"nested too deeply" in proc.stderr


@pytest.mark.parametrize("levels", [5_000, 200_000])
def test_a_deeply_nested_discovery_is_refused(tmp_path, levels):
    discovery = tmp_path / "d.json"
    discovery.write_text(deep(levels))
    proc = run(GENERATE, discovery)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr and b"nested too deeply" in proc.stderr


def test_duplicate_keys_in_schema_json_name_the_key_and_both_lines(tmp_path):
    (tmp_path / "v").mkdir()
    schema = tmp_path / "schema.json"
    schema.write_text('{\n  "node_types": {},\n  "hubs": {"names": []},\n  "node_types": {"person": {}}\n}\n')
    for script, args in ((ENFORCE, []), (GRAPH, ["health"])):
        proc = run(script, *args, tmp_path / "v", "--schema", schema)
        assert proc.returncode == 2
        message = proc.stderr.decode()
        assert '"node_types" appears twice' in message and "lines 2, 4" in message, message


def test_duplicate_keys_in_a_nested_object_are_refused_too(tmp_path):
    (tmp_path / "v").mkdir()
    schema = tmp_path / "schema.json"
    schema.write_text('{"node_types": {"person": {"folder": "a", "folder": "b"}}}')
    proc = run(ENFORCE, tmp_path / "v", "--schema", schema)
    assert proc.returncode == 2 and b'"folder" appears twice' in proc.stderr


# ---------------------------------------------------------------------------
# Consoles that cannot show every character


@pytest.mark.parametrize("encoding", ["ascii", "cp437", "latin-1"])
@pytest.mark.parametrize(
    "script, args",
    [
        (GRAPH, ["health", "--dry-run"]),
        (GRAPH, ["orphans", "--dry-run"]),
        (ENFORCE, ["--diff"]),
        (ENGINE, ["init", "--diff"]),
        (DISCOVER, ["--dry-run"]),
    ],
)
def test_text_output_falls_back_to_ascii(tmp_path, encoding, script, args):
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    (vault / "Café — naïve.md").write_text("Links to [[Nowhere — at all]] and [[Ünïcode]].\n")
    sub, rest = (args[:1], args[1:]) if script in (GRAPH, ENGINE) else ([], args)
    proc = run(script, *sub, vault, *rest, env={"PYTHONIOENCODING": encoding})
    assert proc.returncode in (0, 1), proc.stderr
    assert b"Traceback" not in proc.stderr
    proc.stdout.decode(encoding)  # every byte is in the console's encoding
    if script is GRAPH and args[0] == "health":
        assert b"notes 43 " + ("·".encode(encoding) if encoding != "ascii" else b"-") in proc.stdout


def test_json_output_on_an_ascii_console_is_valid_json_with_escapes(tmp_path):
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    (vault / "Café.md").write_text("[[Nowhere — at all]]\n")
    proc = run(GRAPH, "health", vault, "--json", "--dry-run", env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0
    report = json.loads(proc.stdout.decode("ascii"))
    assert any(link["target"] == "Nowhere — at all" for link in report["broken_links"])


# ---------------------------------------------------------------------------
# Lone CR line endings

CR_NOTE = b"---\rtype: person\rstatus: Active\r---\r# Title\r\rSee [[Other]].\r"


def test_a_lone_cr_note_has_its_frontmatter_and_lines():
    note = Note.from_bytes("a.md", CR_NOTE)
    assert note.frontmatter.valid and note.properties == {"type": "person", "status": "Active"}
    assert note.body_line == 5
    assert note.encode(note.text) == CR_NOTE


def test_editing_a_lone_cr_note_keeps_its_line_ends():
    note = Note.from_bytes("a.md", CR_NOTE)
    assert note.with_property("status", "active") == CR_NOTE.replace(b"Active", b"active")
    assert note.with_property("tags", ["x"]) == CR_NOTE.replace(b"Active\r", b"Active\rtags:\r  - x\r")


def test_engine_init_never_gives_a_lone_cr_note_a_second_block(tmp_path):
    vault = tmp_path / "v"
    (vault / "people").mkdir(parents=True)
    (vault / "people" / "cr.md").write_bytes(CR_NOTE)
    (vault / "people" / "empty-cr.md").write_bytes(b"---\r---\rbody\r")
    (vault / "people" / "bare-cr.md").write_bytes(b"line one\rline two\r")
    proc = run(ENGINE, "init", vault, "--apply", "--json")
    assert proc.returncode == 0, proc.stderr
    assert (vault / "people" / "cr.md").read_bytes() == CR_NOTE
    for name in ("empty-cr.md", "bare-cr.md"):
        data = (vault / "people" / name).read_bytes()
        assert b"\n" not in data, data
        note = Note.from_bytes(name, data)
        assert note.frontmatter.valid and "created" in note.properties
        assert frontmatter.parse(note.body) is None
    assert (vault / "people" / "bare-cr.md").read_bytes().endswith(b"---\rline one\rline two\r")


def test_health_reports_links_of_a_lone_cr_note_on_their_lines(tmp_path):
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "cr.md").write_bytes(CR_NOTE)
    report = json.loads(run(GRAPH, "health", vault, "--json", "--dry-run").stdout)
    assert [(b["source"], b["line"]) for b in report["broken_links"]] == [("cr.md", 7)]
