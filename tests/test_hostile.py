"""graph.py against hostile vaults: symlinks in .graph/, notes that cannot be
read, a damaged history, control characters in names, a path that is not
UTF-8, a full disk, and a stray .graph/ in the example vault.

CLI runs are subprocesses (``sys.executable graph.py ...``) on temporary
vaults, except where a failure has to be simulated inside the process (a
note that cannot be read, as root can read any file): there ``graph.main``
runs in-process with the failure monkeypatched in.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import autograph.read.vault
import pytest
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

GRAPH = SCRIPTS / "graph.py"
HISTORY = Path(".graph") / "health-history.jsonl"
PAIR = {"a.md": "[[b]]\n", "b.md": "[[a]]\n"}


def graph(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(GRAPH), *map(str, args)], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def graph_bytes(*args) -> subprocess.CompletedProcess:
    """``graph`` with stdout and stderr as bytes (no newline translation, so a raw CR shows)."""
    return subprocess.run([sys.executable, str(GRAPH), *args], capture_output=True, timeout=60)


def _reject(constant: str):
    raise ValueError(f"not strict JSON: {constant}")


def strict_json(text: str) -> dict:
    """Parse ``text`` as strict JSON: NaN and Infinity are refused."""
    return json.loads(text, parse_constant=_reject)


def listing(folder: Path) -> list[str]:
    """Every file and symlink under ``folder`` (relative, sorted), dot files included."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink())


@pytest.fixture(scope="module")
def graph_script():
    """graph.py imported as a module, to run ``main`` in-process."""
    spec = importlib.util.spec_from_file_location("graph_script", GRAPH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# Derived files are never written through symlinks


def test_cache_symlinked_onto_a_note_is_left_alone(make_vault):
    """.graph/cache/notes.jsonl -> ../../a.md: orphans, health and backlinks exit 0 and a.md keeps its bytes."""
    root = make_vault(PAIR)
    (root / ".graph" / "cache").mkdir(parents=True)
    (root / ".graph" / "cache" / "notes.jsonl").symlink_to("../../a.md")
    for args in (["orphans", root], ["health", root], ["backlinks", root, "a"]):
        proc = graph(*args)
        assert (proc.returncode, proc.stderr) == (0, ""), args
    assert (root / "a.md").read_bytes() == b"[[b]]\n"
    assert (root / ".graph" / "cache" / "notes.jsonl").is_symlink()


def test_history_symlinked_onto_a_note_is_not_appended_to(make_vault):
    """.graph/health-history.jsonl -> ../b.md: health exits 0, warns 'history not written', b.md unchanged."""
    root = make_vault(PAIR)
    (root / ".graph").mkdir()
    (root / HISTORY).symlink_to("../b.md")
    proc = graph("health", root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("health: ")
    assert [line for line in proc.stderr.splitlines() if line.startswith("warning: history not written")]
    assert "Traceback" not in proc.stderr
    proc = graph("health", root, "--json")
    assert proc.returncode == 0, proc.stderr
    strict_json(proc.stdout)
    assert (root / "b.md").read_bytes() == b"[[a]]\n"
    assert (root / HISTORY).is_symlink()


def test_dot_graph_symlinked_onto_a_folder_of_notes_gets_nothing(make_vault):
    """.graph -> notes: health, orphans and backlinks exit 0 and create nothing in notes/."""
    root = make_vault({"notes/a.md": "[[b]]\n", "notes/b.md": "[[a]]\n"})
    (root / ".graph").symlink_to("notes", target_is_directory=True)
    for args in (["health", root], ["health", root, "--json"], ["orphans", root], ["backlinks", root, "a"]):
        proc = graph(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert listing(root / "notes") == ["a.md", "b.md"]
    assert (root / "notes" / "a.md").read_bytes() == b"[[b]]\n"


# ---------------------------------------------------------------------------
# Notes that cannot be read


def test_note_that_cannot_be_read_does_not_crash_any_command(make_vault, monkeypatch, capsys, graph_script):
    """secret.md raising PermissionError: every command exits 0; health lists it under unreadable."""
    root = make_vault({"a.md": "[[secret]]\n", "secret.md": "[[a]]\n"})
    real = autograph.read.vault.read_note

    def refusing(folder, path, *limit):
        if path == "secret.md":
            raise PermissionError(13, "Permission denied")
        return real(folder, path, *limit)

    monkeypatch.setattr(autograph.read.vault, "read_note", refusing)
    assert graph_script.main(["health", str(root), "--json", "--dry-run"]) == 0
    report = strict_json(capsys.readouterr().out)
    assert report["unreadable"] == [{"path": "secret.md", "error": "cannot read: Permission denied"}]

    assert graph_script.main(["health", str(root)]) == 0
    assert "  secret.md  cannot read: Permission denied" in capsys.readouterr().out.splitlines()
    for args in (["orphans", str(root)], ["backlinks", str(root), "secret"], ["backlinks", str(root), "a"]):
        assert graph_script.main(args) == 0, args
    assert "Traceback" not in capsys.readouterr().err


def test_oversized_note_is_unreadable_in_the_report(make_vault, monkeypatch, capsys, graph_script):
    """MAX_NOTE_BYTES = 100 and a 300-byte note: health exits 0 and lists it as 'larger than ...'."""
    root = make_vault({"a.md": "[[big]]\n", "big.md": "[[a]]" + "x" * 295})
    monkeypatch.setattr(autograph.read.vault, "MAX_NOTE_BYTES", 100)
    assert graph_script.main(["health", str(root), "--json", "--dry-run"]) == 0
    report = strict_json(capsys.readouterr().out)
    assert [row["path"] for row in report["unreadable"]] == ["big.md"]
    assert report["unreadable"][0]["error"].startswith("larger than ")


# ---------------------------------------------------------------------------
# A damaged health history

GOOD_ENTRY = {"time": "2026-01-01T00:00:00+00:00", "score": 42.0, "notes": 2}
DAMAGED_LINES = [
    pytest.param("[" * 100_000, id="deeply-nested"),
    pytest.param('{"score": NaN}', id="nan"),
    pytest.param('{"score": 1e999}', id="overflow"),
    pytest.param('{"score": true}', id="bool"),
]


@pytest.mark.parametrize("damaged", DAMAGED_LINES)
def test_damaged_last_history_line_is_skipped(make_vault, damaged):
    """A good entry then a damaged line: exit 0, strict JSON, previous is the good entry."""
    root = make_vault(PAIR)
    (root / ".graph").mkdir()
    (root / HISTORY).write_text(json.dumps(GOOD_ENTRY) + "\n" + damaged + "\n", encoding="utf-8")
    proc = graph("health", root, "--json")  # the default run: reads, then appends
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert strict_json(proc.stdout)["previous"] == GOOD_ENTRY


@pytest.mark.parametrize("damaged", DAMAGED_LINES)
def test_history_of_only_a_damaged_line_gives_no_previous(make_vault, damaged):
    """Only a damaged line: exit 0, previous null, no trend in the human report."""
    root = make_vault(PAIR)
    (root / ".graph").mkdir()
    (root / HISTORY).write_text(damaged + "\n", encoding="utf-8")
    proc = graph("health", root, "--json", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert strict_json(proc.stdout)["previous"] is None
    proc = graph("health", root, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"health: [0-9.]+/100", proc.stdout.splitlines()[0])


# ---------------------------------------------------------------------------
# Control characters in names and link targets

CONTROL = {
    "esc\x1bcname.md": "x [[evil\x1bcx]] [[cr\rtarget]] [[nul\x00x]] [[car\rriage]]\n",
    "car\rriage.md": "[[esc\x1bcname]]\n",
    "lone\x1bc\r.md": "alone\n",
}
RAW = [b"\x1b", b"\r", b"\x00"]


def test_control_characters_are_escaped_in_health(make_vault):
    """ESC, CR and NUL in names and targets are shown as \\x1b, \\r, \\x00; none reaches stdout raw."""
    proc = graph_bytes("health", make_vault(CONTROL), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert [raw for raw in RAW if raw in proc.stdout] == []
    lines = proc.stdout.decode("utf-8").splitlines()
    assert "  esc\\x1bcname.md:1  evil\\x1bcx" in lines
    assert "  esc\\x1bcname.md:1  cr\\rtarget" in lines
    assert "  esc\\x1bcname.md:1  nul\\x00x" in lines
    assert "  lone\\x1bc\\r.md" in lines


def test_control_characters_are_escaped_in_orphans(make_vault):
    """orphans prints lone\\x1bc\\r.md escaped."""
    proc = graph_bytes("orphans", make_vault(CONTROL), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8").splitlines() == ["1 orphan", "  lone\\x1bc\\r.md"]


def test_control_characters_are_escaped_in_backlinks(make_vault):
    """backlinks of a note and of a broken name print their control characters escaped."""
    root = make_vault(CONTROL)
    proc = graph_bytes("backlinks", root, "esc\x1bcname", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8").splitlines() == [
        "esc\\x1bcname.md: 1 backlink from 1 note",
        "  car\\rriage.md:1  esc\\x1bcname",
    ]
    proc = graph_bytes("backlinks", root, "cr\rtarget", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8").splitlines() == [
        "cr\\rtarget (no such note; these links are broken): 1 backlink from 1 note",
        "  esc\\x1bcname.md:1  cr\\rtarget",
    ]


def test_json_keeps_control_characters_exactly(make_vault):
    """--json gives back the exact names and targets."""
    root = make_vault(CONTROL)
    report = strict_json(graph_bytes("health", root, "--json", "--dry-run").stdout.decode("utf-8"))
    assert [(r["source"], r["target"]) for r in report["broken_links"]] == [
        ("esc\x1bcname.md", "evil\x1bcx"),
        ("esc\x1bcname.md", "cr\rtarget"),
        ("esc\x1bcname.md", "nul\x00x"),
    ]
    assert report["orphans"] == ["lone\x1bc\r.md"]
    orphans = strict_json(graph_bytes("orphans", root, "--json", "--dry-run").stdout.decode("utf-8"))
    assert orphans == {"orphans": ["lone\x1bc\r.md"], "count": 1}
    backlinks = strict_json(graph_bytes("backlinks", root, "esc\x1bcname", "--json").stdout.decode("utf-8"))
    assert backlinks["note"] == "esc\x1bcname.md"
    assert backlinks["sources"] == ["car\rriage.md"]


# ---------------------------------------------------------------------------
# A vault path that is not UTF-8


def test_vault_path_that_is_not_utf8(tmp_path):
    """VAULT = .../bad\\xffvault: health (writing cache and history) and orphans exit 0 with JSON."""
    root = os.fsencode(tmp_path) + b"/bad\xffvault"
    os.mkdir(root)
    for name, text in {"a.md": "[[b]]\n", "b.md": "[[a]] [[c]]\n", "c.md": "x\n"}.items():
        with open(root + b"/" + name.encode(), "wb") as handle:
            handle.write(text.encode())
    vault = os.fsdecode(root)  # subprocess encodes it back to the same bytes
    proc = graph("health", vault, "--json")
    assert proc.returncode == 0, proc.stderr
    report = strict_json(proc.stdout)
    assert (report["notes"], [r["target"] for r in report["broken_links"]]) == (3, [])
    assert sorted(os.listdir(root + b"/.graph")) == [b"cache", b"health-history.jsonl", b"index.sqlite"]
    proc = graph("health", vault)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("health: ")
    proc = graph("orphans", vault, "--json")
    assert proc.returncode == 0, proc.stderr
    assert strict_json(proc.stdout) == {"orphans": [], "count": 0}


# ---------------------------------------------------------------------------
# Output that cannot be written


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [["health"], ["health", "--json"]])
def test_stdout_on_a_full_disk_exits_3(make_vault, args):
    """graph.py health VAULT > /dev/full: exit 3, one 'cannot complete' line, no traceback."""
    root = make_vault(PAIR)
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, str(GRAPH), args[0], str(root), *args[1:]],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "cannot complete" in lines[0]


# ---------------------------------------------------------------------------
# A .graph/ left in the example vault does not reach the tests


def test_copy_tree_leaves_out_dot_graph(tmp_path):
    """The README's command leaves .graph/ in the vault; copy_tree copies everything but it."""
    source = tmp_path / "source"
    shutil.copytree(EXAMPLE_VAULT, source, symlinks=True)
    proc = graph("health", source)  # README: graph.py health examples/vault
    assert proc.returncode == 0, proc.stderr
    (source / "people" / ".graph").mkdir()
    (source / "people" / ".graph" / "stray.json").write_text("{}")
    assert (source / ".graph" / "health-history.jsonl").is_file()

    dest = copy_tree(source, tmp_path / "dest")
    assert [p for p in dest.rglob("*") if p.name == ".graph"] == []
    assert listing(dest) == [p for p in listing(source) if ".graph" not in Path(p).parts]
    assert listing(dest) == [p for p in listing(EXAMPLE_VAULT) if ".graph" not in Path(p).parts]


def test_a_writing_run_and_its_undo_on_a_vault_path_that_is_not_utf8(tmp_path):
    """The journal keeps the run's arguments: a vault path that is not UTF-8
    is one of them (JSON escapes its lone surrogate), so enforce --apply
    writes, undo.py lists and takes it back."""
    root = os.fsencode(tmp_path) + b"/bad\xffvault"
    os.makedirs(root + b"/people")
    with open(root + b"/people/a.md", "wb") as handle:
        handle.write(b"---\ntype: person\nstatus: ongoing\n---\nx\n")
    with open(root + b"/schema.json", "wb") as handle:
        handle.write(b'{"field_fixes": {"status": {"ongoing": "active"}}}')
    vault = os.fsdecode(root)

    def run(script, *args):
        command = [sys.executable, str(SCRIPTS / script), *args]
        return subprocess.run(command, capture_output=True, text=True, errors="surrogateescape", timeout=120)

    proc = run("enforce.py", vault, "--apply", "--json")
    assert proc.returncode == 0, proc.stderr
    with open(root + b"/people/a.md", "rb") as handle:
        assert b"status: active" in handle.read()
    assert "enforce.py" in run("undo.py", "list", vault).stdout
    assert run("undo.py", "undo", "last", vault, "--apply").returncode == 0
    with open(root + b"/people/a.md", "rb") as handle:
        assert handle.read() == b"---\ntype: person\nstatus: ongoing\n---\nx\n"
