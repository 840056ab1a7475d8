"""Faults a tester found in what autograph reads, each pinned at the shell.

1. A frontmatter value holding a lone surrogate (the YAML escape
   ``"\\ud800"``) crashed ``graph.py health`` and ``discover.py`` on every
   run: the parsed-note cache could not be encoded.  The cache stores and
   loads such values; discover, generate_schema and enforce work with them.
2. ``--schema`` and generate_schema's DISCOVERY read whatever they were
   given: a FIFO hung for ever, a character device filled memory.  Only a
   regular file of at most 64 MiB is read (``jsonfile.read_bytes``); so are
   ``.obsidian/types.json`` and the note cache.
3. generate_schema.py ``-o`` said "exists; pass --force" for a FIFO, device,
   socket or symlink and then refused with --force; ``-o ''`` said ". is a
   folder".  The real reason is given first.

Every run has a timeout, so a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import autograph.read.index
import pytest
from autograph.read import jsonfile
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from autograph.write.derived import save_index
from autograph.write.index_file import note_index
from conftest import SCRIPTS

GRAPH = SCRIPTS / "graph.py"
DISCOVER = SCRIPTS / "discover.py"
GENERATE = SCRIPTS / "generate_schema.py"
ENFORCE = SCRIPTS / "enforce.py"

# the YAML escapes, written literally with a backslash
LONE = '---\nname: "\\ud800"\ntype: "p\\udc00"\nstatus: "s\\ud800"\n---\nSee [[b]].\n'
PAIRED = '---\n"k\\ud800\\udc00": x\n---\n'


def run(script: Path, *args, stdin=None, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        stdin=stdin,
        input=input,
        timeout=60,
    )


def char_device(folder: Path) -> Path:
    """A /dev/zero twin in ``folder`` (root only; the machine's /dev is never touched)."""
    path = folder / "zero"
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except (PermissionError, AttributeError, OSError):
        pytest.skip("making a character device needs root")
    return path


# ---------------------------------------------------------------------------
# 1. lone surrogates in values


def test_lone_surrogate_value_never_crashes_health_or_discover(make_vault):
    root = make_vault({"a.md": LONE, "b.md": "# b\n"})
    for _ in range(2):  # the second run reads the cache the first wrote
        health = run(GRAPH, "health", root)
        assert health.returncode == 0, health.stderr
        human = run(DISCOVER, root)
        assert human.returncode == 0, human.stderr
        assert "p\\udc00: 1 explicit" in human.stdout
        found = run(DISCOVER, root, "--json")
        assert found.returncode == 0, found.stderr
        data = json.loads(found.stdout)
        assert data["keys"]["name"]["examples"] == ["\ud800"]
        assert list(data["types"]) == ["p\udc00"]
    import sqlite3

    con = sqlite3.connect(root / ".graph" / "index.sqlite")
    props = dict(con.execute("SELECT path, props FROM docs"))
    con.close()
    assert json.loads(props["a.md"])["name"] == "\ud800"  # stored as a JSON escape, read back the same
    for line in (root / ".graph" / "health-history.jsonl").read_text(encoding="utf-8").splitlines():
        json.loads(line)


def test_cache_gives_back_the_values_it_stored(make_vault, monkeypatch):
    """A summary read from the cache equals the one parsed from the note:
    lone surrogates in values and a non-UTF-8 file name included."""
    root = make_vault({"a.md": LONE, "b.md": "# b\n"})
    (root / os.fsdecode(b"caf\xe9.md")).write_text('---\nx: "\\udfff!"\n---\n', encoding="utf-8")
    vault = Vault.open(root)
    first = note_index(vault, load_schema(root))
    parsed = {path: first.summary(path) for path in vault.notes}
    save_index(first)
    assert (root / ".graph" / "index.sqlite").is_file()
    second = note_index(Vault.open(root), load_schema(root))

    def must_not_parse(*args):
        raise AssertionError(f"{args} was parsed although the index file holds it")

    monkeypatch.setattr(autograph.read.index, "summarize_parts", must_not_parse)  # every row was stored
    for path, summary in parsed.items():
        cached = second.summary(path)
        assert (cached.properties, cached.links) == (summary.properties, summary.links), path
    assert second.summary("a.md").properties["name"] == "\ud800"


def test_surrogates_json_would_pair_are_not_cached_as_one_character(make_vault):
    """JSON reads "\\ud800\\udc00" back as one character; a note with two
    such lone surrogates is parsed every run, so every run reports the same."""
    root = make_vault({"a.md": PAIRED})
    outputs = [run(DISCOVER, root) for _ in range(2)]
    for proc in outputs:
        assert proc.returncode == 0, proc.stderr
        assert "k\\ud800\\udc00: 1" in proc.stdout
    assert outputs[0].stdout.split("\n", 1)[1] == outputs[1].stdout.split("\n", 1)[1]


def test_surrogate_values_flow_through_generate_schema_and_enforce(make_vault, tmp_path):
    root = make_vault({"a.md": LONE, "b.md": '---\ntype: "p\\udc00"\n---\n'})
    found = run(DISCOVER, root, "--json")
    assert found.returncode == 0, found.stderr
    to_stdout = run(GENERATE, "-", input=found.stdout)
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert '"p\\udc00"' in to_stdout.stdout
    (tmp_path / "discovery.json").write_text(found.stdout, encoding="utf-8")
    written = run(GENERATE, tmp_path / "discovery.json", "-o", root / "schema.json")
    assert written.returncode == 0, written.stderr
    draft = json.loads((root / "schema.json").read_bytes().decode("utf-8"))
    assert "p\udc00" in draft["node_types"]
    enforce = run(ENFORCE, root, "--json")
    assert enforce.returncode in (0, 1), enforce.stderr
    assert "Traceback" not in enforce.stderr


# ---------------------------------------------------------------------------
# 2. reading only regular files, and not too much


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", [(GRAPH, "health"), (ENFORCE,)], ids=["health", "enforce"])
def test_schema_fifo_is_a_bad_schema(make_vault, fifo, command):
    root = make_vault({"a.md": "# a\n"})
    proc = run(*command, root, "--schema", fifo)
    assert proc.returncode == 2, proc.stderr
    assert "bad schema" in proc.stderr and "FIFO" in proc.stderr


def test_schema_device_is_a_bad_schema(make_vault, tmp_path):
    root = make_vault({"a.md": "# a\n"})
    proc = run(GRAPH, "health", root, "--schema", char_device(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert "character device" in proc.stderr


def test_vault_schema_json_fifo_is_a_bad_schema(make_vault):
    """A FIFO named schema.json is an error, never read and never taken for "no schema"."""
    root = make_vault({"a.md": "# a\n"})
    os.mkfifo(root / "schema.json")
    proc = run(GRAPH, "health", root)
    assert proc.returncode == 2, proc.stderr
    assert "schema.json" in proc.stderr and "FIFO" in proc.stderr


def test_schema_over_the_limit_is_refused(make_vault, tmp_path):
    root = make_vault({"a.md": "# a\n"})
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(jsonfile.MAX_BYTES + 1)  # sparse: costs no disk
    proc = run(ENFORCE, root, "--schema", big)
    assert proc.returncode == 2, proc.stderr
    assert "larger than 64 MiB" in proc.stderr


def test_discovery_fifo_is_a_usage_error(fifo):
    proc = run(GENERATE, fifo)
    assert proc.returncode == 2, proc.stderr
    assert "FIFO" in proc.stderr and "discover.py --json" in proc.stderr


def test_discovery_device_is_a_usage_error(tmp_path):
    proc = run(GENERATE, char_device(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert "character device" in proc.stderr


def test_discovery_over_the_limit_is_refused(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(jsonfile.MAX_BYTES + 1)
    assert "larger than 64 MiB" in run(GENERATE, big).stderr
    with open(big, "rb") as stdin:  # endless standard input is cut off too
        proc = run(GENERATE, "-", stdin=stdin)
    assert proc.returncode == 2, proc.stderr
    assert "larger than 64 MiB" in proc.stderr


def test_discovery_from_stdin_still_works(make_vault):
    found = run(DISCOVER, make_vault({"a.md": "---\ntype: person\n---\n"}), "--json")
    proc = run(GENERATE, "-", input=found.stdout)
    assert proc.returncode == 0, proc.stderr
    assert "person" in json.loads(proc.stdout)["node_types"]


@pytest.mark.parametrize("name", [".obsidian/types.json", ".graph/index.sqlite", ".graph/cache/notes.jsonl"])
def test_fifo_among_the_files_discover_and_health_read(make_vault, name):
    """A FIFO where Obsidian's property types, the index file or a file it
    replaced belong is passed over: both commands finish."""
    root = make_vault({"a.md": "# a\n"})
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / name)
    for command in ((DISCOVER,), (GRAPH, "health")):
        proc = run(*command, root)
        assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.lstat(root / name).st_mode)  # left as it was


def test_read_bytes_only_regular_files_up_to_the_limit(tmp_path, fifo):
    data = tmp_path / "data.json"
    data.write_bytes(b"12345")
    (tmp_path / "link.json").symlink_to(data)
    assert jsonfile.read_bytes(tmp_path / "link.json", limit=5) == b"12345"
    with pytest.raises(jsonfile.NotAFile, match="larger than"):
        jsonfile.read_bytes(data, limit=4)
    with pytest.raises(jsonfile.NotAFile, match="FIFO"):
        jsonfile.read_bytes(fifo)
    with pytest.raises(IsADirectoryError):
        jsonfile.read_bytes(tmp_path)
    assert jsonfile.read_text(data) == "12345"


# ---------------------------------------------------------------------------
# 3. generate_schema.py -o says the real reason


@pytest.fixture
def discovery_file(tmp_path) -> Path:
    path = tmp_path / "discovery.json"
    path.write_text(json.dumps({"types": {}, "keys": {}, "folders": {}}), encoding="utf-8")
    return path


@pytest.fixture
def short_dir():
    """A folder with a short path (a socket's path must fit in about 100 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="ag"))
    yield folder
    shutil.rmtree(folder)


def _target(kind: str, folder: Path) -> tuple[Path, str]:
    path = folder / "schema.json"
    if kind == "fifo":
        os.mkfifo(path)
        return path, "FIFO"
    if kind == "device":
        return char_device(folder), "character device"
    if kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
        return path, "socket"
    (folder / "real.json").write_text("{}", encoding="utf-8")
    path.symlink_to(folder / "real.json")
    return path, "symlink"


@pytest.mark.parametrize("kind", ["fifo", "device", "socket", "symlink"])
@pytest.mark.parametrize("extra", [[], ["--force"], ["--dry-run"], ["--force", "--dry-run"]])
def test_output_that_is_no_regular_file_says_so(discovery_file, short_dir, kind, extra):
    target, reason = _target(kind, short_dir)
    before = os.lstat(target)
    proc = run(GENERATE, discovery_file, "-o", target, *extra)
    assert proc.returncode == 2, proc.stderr
    assert reason in proc.stderr
    assert "exists" not in proc.stderr and "--force" not in proc.stderr
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


def test_output_existing_file_still_needs_force(discovery_file, tmp_path):
    target = tmp_path / "schema.json"
    target.write_text("{}", encoding="utf-8")
    proc = run(GENERATE, discovery_file, "-o", target)
    assert proc.returncode == 2 and "exists" in proc.stderr and "--force" in proc.stderr
    assert run(GENERATE, discovery_file, "-o", target, "--force").returncode == 0
    assert "node_types" in json.loads(target.read_text(encoding="utf-8"))


def test_output_empty_name_is_a_usage_error(discovery_file):
    proc = run(GENERATE, discovery_file, "-o", "")
    assert proc.returncode == 2, proc.stderr
    assert "empty file name" in proc.stderr and "is a folder" not in proc.stderr


def test_output_name_ending_in_a_slash(discovery_file, tmp_path):
    proc = run(GENERATE, discovery_file, "-o", f"{tmp_path}/new/")
    assert proc.returncode == 2, proc.stderr
    assert "slash" in proc.stderr
    assert not (tmp_path / "new").exists()


def test_output_dash_is_stdout(discovery_file, tmp_path):
    proc = subprocess.run(
        [sys.executable, str(GENERATE), str(discovery_file), "-o", "-"], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "node_types" in json.loads(proc.stdout)
    assert not (tmp_path / "-").exists()
