"""The journal of applied runs and undo.py (issue 8): every run that writes is
journaled before it writes, can be undone byte for byte, and a run killed
mid-way is rolled back by the next writer or ``undo.py recover``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from autograph.write import journal, replace, store
from autograph.write.changes import Edit, Move, Trash
from autograph.write.confine import PathError, TargetError
from autograph.write.journal import PRUNE_INTERVAL
from autograph.write.store import apply
from autograph.write.undo import plan_undo
from conftest import CORPORA, SCRIPTS, copy_tree, require

ENFORCE = SCRIPTS / "enforce.py"
ENGINE = SCRIPTS / "engine.py"
UNDO = SCRIPTS / "undo.py"
DISCOVER = SCRIPTS / "discover.py"
GENERATE = SCRIPTS / "generate_schema.py"

SCHEMA = {
    "node_types": {"person": {"folder": "people", "status": ["active", "superseded"]}},
    "field_fixes": {"status": {"Active": "active"}},
    "path_type_hints": {"people/": "person"},
}
CARD = b"---\ntype: person\nstatus: Active\n---\nbody\n"
FIXED = b"---\ntype: person\nstatus: active\n---\nbody\n"


def run(script: Path, *args, check: int | None = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    if check is not None:
        assert proc.returncode == check, proc.stderr
    return proc


def run_json(script: Path, *args, check: int | None = 0) -> dict:
    return json.loads(run(script, *args, "--json", check=check).stdout)


def fingerprint(root: Path) -> dict[str, str]:
    """The hash of every file of the vault outside .graph/ (dot folders included)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (Path(folder) == root and d == ".graph")]
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def vault_with(tmp_path: Path, notes: dict[str, bytes], name: str = "vault") -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    for rel, data in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


# ---------------------------------------------------------------------------
# Undo on a real vault


@pytest.mark.corpus
def test_undo_after_enforce_and_init_gives_back_every_byte_of_obsidian_hub(fast_tmp):
    root = copy_tree(require(CORPORA / "obsidian-hub"), fast_tmp / "vault")
    discovery = fast_tmp / "d.json"
    discovery.write_text(run(DISCOVER, root, "--json").stdout)
    run(GENERATE, discovery, "-o", root / "schema.json")
    (root / "people").mkdir(exist_ok=True)
    (root / "people" / "Bare note.md").write_bytes(b"Met someone.\n")
    original = fingerprint(root)

    enforced = run_json(ENFORCE, root, "--apply")
    assert len(enforced["written"]) > 1000
    inited = run_json(ENGINE, "init", root, "--apply")
    assert inited["written"]
    assert fingerprint(root) != original

    for report in (inited, enforced):  # newest first
        undone = run_json(UNDO, "undo", report["run"], root, "--apply")
        assert undone["conflicts"] == [] and undone["failed"] == []
        assert sorted(undone["written"]) == sorted(report["written"])
    assert fingerprint(root) == original


def test_an_edit_after_the_run_is_kept_and_reported(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b.md": CARD})
    report = run_json(ENFORCE, root, "--apply")
    edited = FIXED + b"a line added after the run\n"
    (root / "people" / "b.md").write_bytes(edited)
    undone = run_json(UNDO, "undo", report["run"], root, "--apply", check=4)
    assert undone["written"] == ["people/a.md"]
    assert [c["path"] for c in undone["conflicts"]] == ["people/b.md"]
    assert "changed since the run" in undone["conflicts"][0]["error"]
    assert (root / "people" / "a.md").read_bytes() == CARD
    assert (root / "people" / "b.md").read_bytes() == edited


def test_undo_is_a_dry_run_unless_apply_and_is_itself_undone(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    report = run_json(ENFORCE, root, "--apply")
    preview = run_json(UNDO, "undo", "last", root)
    assert preview["edits"] == [{"path": "people/a.md", "reason": "undo"}] and preview["run"] is None
    assert (root / "people" / "a.md").read_bytes() == FIXED
    undo = run_json(UNDO, "undo", "last", root, "--apply")
    assert (root / "people" / "a.md").read_bytes() == CARD
    listed = run_json(UNDO, "list", root)["runs"]
    assert [r["run"] for r in listed] == [undo["run"], report["run"]]
    assert listed[0]["undoes"] == report["run"] and listed[1]["undone_by"] == [undo["run"]]
    run_json(UNDO, "undo", undo["run"], root, "--apply")  # redo
    assert (root / "people" / "a.md").read_bytes() == FIXED


def test_show_says_where_each_file_is_now(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b.md": CARD})
    report = run_json(ENFORCE, root, "--apply")
    (root / "people" / "b.md").write_bytes(b"edited\n")
    shown = run_json(UNDO, "show", report["run"], root)
    assert shown["run"]["command"] == "enforce.py" and "--apply" in shown["run"]["args"]
    assert {c["path"]: c["status"] for c in shown["changes"]} == {
        "people/a.md": "as the run left it",
        "people/b.md": "changed since",
    }
    assert all(c["op"] == "write" and c["result"] == "written" for c in shown["changes"])


def test_unknown_run_is_a_usage_error(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    proc = run(UNDO, "undo", "20200101T000000Z-1-abc", root, check=2)
    assert "no run" in proc.stderr and "undo.py list" in proc.stderr
    run(UNDO, "show", "last", root, check=2)
    run(UNDO, "undo", "../../etc", root, check=2)


# ---------------------------------------------------------------------------
# What the journal holds, and when


def test_the_journal_is_written_before_any_note_changes(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b.md": CARD})
    seen = []

    def hook(stage, path):
        if stage == "read" and "/.graph/" not in path and not seen:
            (run_dir,) = (root / ".graph" / "journal").iterdir()
            lines = (run_dir / "entries.jsonl").read_text().splitlines()
            seen.append(([json.loads(line)["path"] for line in lines], (run_dir / "before.bin").read_bytes()))

    replace._test_hook = hook
    try:
        apply(root, [Edit("people/a.md", CARD, FIXED), Edit("people/b.md", CARD, FIXED)], args=["test"])
    finally:
        replace._test_hook = None
    assert seen == [(["people/a.md", "people/b.md"], CARD + CARD)]


def test_created_files_go_to_the_trash_on_undo_and_trash_and_moves_come_back(tmp_path):
    root = vault_with(tmp_path, {"a.md": b"a\n", "b.md": b"b\n", "c.md": b"c\n"})
    result = apply(
        root,
        [Edit("new.md", None, b"new\n"), Trash("a.md", b"a\n"), Move("b.md", "moved/b.md", b"b\n")],
        command="test",
        args=["test"],
    )
    assert sorted(result.written) == ["a.md", "b.md", "new.md"]
    assert not (root / "a.md").exists() and (root / ".trash" / result.run_id / "a.md").read_bytes() == b"a\n"
    assert (root / "moved" / "b.md").read_bytes() == b"b\n" and not (root / "b.md").exists()
    graph = root / ".graph"
    changes, conflicts = plan_undo(root, journal.load(graph, result.run_id))
    assert conflicts == []
    undo = apply(root, changes, command="undo", args=["undo"], undoes=result.run_id)
    assert (root / "a.md").read_bytes() == b"a\n" and (root / "b.md").read_bytes() == b"b\n"
    assert not (root / "new.md").exists()
    assert (root / ".trash" / undo.run_id / "new.md").read_bytes() == b"new\n"  # never deleted
    assert not (root / "moved" / "b.md").exists()


def test_a_trash_entry_never_overwrites_an_earlier_one(tmp_path):
    root = vault_with(tmp_path, {"a.md": b"one\n"})
    first = apply(root, [Trash("a.md", b"one\n")])
    (root / "a.md").write_bytes(b"two\n")
    (root / ".trash" / first.run_id).mkdir(exist_ok=True)
    second = apply(root, [Trash("a.md", b"two\n")])
    assert (root / ".trash" / first.run_id / "a.md").read_bytes() == b"one\n"
    assert (root / ".trash" / second.run_id / "a.md").read_bytes() == b"two\n"


def test_a_move_never_goes_over_an_existing_file(tmp_path):
    root = vault_with(tmp_path, {"a.md": b"a\n", "b.md": b"b\n"})
    result = apply(root, [Move("a.md", "b.md", b"a\n")])
    assert result.written == [] and "exists" in result.conflicts[0].error
    assert (root / "a.md").read_bytes() == b"a\n" and (root / "b.md").read_bytes() == b"b\n"


def test_a_damaged_journal_is_reported_not_trusted(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    report = run_json(ENFORCE, root, "--apply")
    blob = root / ".graph" / "journal" / report["run"] / "before.bin"
    blob.write_bytes(b"X" * len(CARD))
    undone = run_json(UNDO, "undo", report["run"], root, "--apply", check=4)
    assert "damaged" in undone["conflicts"][0]["error"]
    assert (root / "people" / "a.md").read_bytes() == FIXED


def test_old_journals_are_pruned_never_the_newest(tmp_path):
    root = vault_with(tmp_path, {"a.md": b"0\n"})
    ids = []
    for i in range(4):
        ids.append(apply(root, [Edit("a.md", f"{i}\n".encode(), f"{i + 1}\n".encode())]).run_id)
    folder = root / ".graph" / "journal"
    old = time.time() - 40 * 86400
    for run_id in ids:
        os.utime(folder / run_id / "run.json", (old, old))
    assert sorted(journal.prunable(root / ".graph", keep_days=30, max_mb=200)) == sorted(ids[:3])
    assert journal.prunable(root / ".graph", keep_days=30, max_mb=200, now=old + 86400) == []
    assert sorted(journal.prunable(root / ".graph", keep_days=365, max_mb=0)) == sorted(ids[:3])
    (folder / ids[0] / "run.json").write_text(json.dumps({"state": "running"}))
    assert ids[0] not in journal.prunable(root / ".graph", keep_days=30, max_mb=200)  # unfinished stays
    journal.prune_journals(root, 30, 200)
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted([ids[0], ids[3]])


def test_the_schema_sets_how_long_journals_are_kept(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b.md": CARD})
    schema = json.loads((root / "schema.json").read_text())
    (root / "schema.json").write_text(json.dumps({**schema, "journal": {"keep_days": 0, "max_mb": 0}}))
    first = run_json(ENFORCE, root, "--apply")
    folder = root / ".graph" / "journal"
    stamp = folder / ".pruned"  # the last look for old journals: the next is due PRUNE_INTERVAL later
    assert stamp.is_file()
    old = time.time() - PRUNE_INTERVAL - 1
    os.utime(stamp, (old, old))
    (root / "people" / "a.md").write_bytes(CARD)
    second = run_json(ENFORCE, root, "--apply")
    assert [p.name for p in folder.iterdir() if p.is_dir()] == [second["run"]]
    assert first["run"] != second["run"]


def test_journals_are_looked_at_once_per_interval_not_after_every_write(tmp_path):
    """A look reads every run's folder: after every write it made each
    write slower the more runs were kept."""
    root = vault_with(tmp_path, {"a.md": b"0\n"})
    ids = [apply(root, [Edit("a.md", f"{i}\n".encode(), f"{i + 1}\n".encode())], keep=(0, 0)).run_id for i in range(3)]
    folder = root / ".graph" / "journal"
    # the first run looked (nothing older to prune); the next two within the interval did not
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(ids)
    old = time.time() - PRUNE_INTERVAL - 1
    os.utime(folder / ".pruned", (old, old))
    last = apply(root, [Edit("a.md", b"3\n", b"4\n")], keep=(0, 0)).run_id
    assert [p.name for p in folder.iterdir() if p.is_dir()] == [last]


@pytest.mark.parametrize("bad", [{"keep_days": -1}, {"max_mb": "a lot"}, {"keep": 3}, []])
def test_a_bad_journal_setting_is_a_bad_schema(tmp_path, bad):
    root = vault_with(tmp_path, {})
    (root / "schema.json").write_text(json.dumps({"journal": bad}))
    proc = run(ENFORCE, root, check=2)
    assert "$.journal" in proc.stderr


# ---------------------------------------------------------------------------
# Killed runs (kill -9 after each of the first writes)

KILL_AFTER = textwrap.dedent(
    """
    import os, signal, sys, importlib.util
    sys.path.insert(0, sys.argv[1])
    from autograph.write import replace, store
    count = [0]
    def hook(stage, path):
        if stage == "swapped" and "/.graph/" not in path:
            count[0] += 1
            if count[0] == int(sys.argv[2]):
                os.kill(os.getpid(), signal.SIGKILL)
    replace._test_hook = hook
    spec = importlib.util.spec_from_file_location("script", sys.argv[3])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.exit(module.main(sys.argv[4:]))
    """
)


# Where a run is killed: after the first writes, in the middle and near the
# end of the 24 notes, each place once recovered (odd) and once re-run (even).
# AUTOGRAPH_KILL_POINTS=all kills after each of the first 20 writes (by hand).
KILL_POINTS = range(1, 21) if os.environ.get("AUTOGRAPH_KILL_POINTS") == "all" else (1, 2, 3, 4, 11, 12, 19, 20)


def killed_after(n: int, script: Path, *args) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AFTER, str(SCRIPTS), str(n), str(script), *map(str, args)],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.parametrize(
    "script, args, before, after",
    [
        (ENFORCE, ["--apply"], CARD, FIXED),
        (ENGINE, ["init", "--apply"], b"Met them.\n", b"---\ntype: person\ncreated: 2024-03-05\n---\nMet them.\n"),
    ],
    ids=["enforce", "engine-init"],
)
def test_kill_after_each_of_the_first_writes_then_recover_or_rerun(tmp_path, script, args, before, after):
    noon = time.mktime((2024, 3, 5, 12, 0, 0, 0, 0, -1))
    for n in KILL_POINTS:
        root = vault_with(tmp_path, {f"people/p{i:02d}.md": before for i in range(24)}, name=f"v{n}")
        for note in (root / "people").iterdir():
            os.utime(note, (noon, noon))
        argv = [args[0], root, *args[1:]] if script is ENGINE else [root, *args]
        killed_after(n, script, *argv)
        notes = sorted((root / "people").glob("*.md"))
        states = [note.read_bytes() for note in notes]
        assert all(data in (before, after) for data in states), "a note is partial"
        assert sum(data == after for data in states) == n
        if n % 2:  # recover: everything as before
            recovered = run_json(UNDO, "recover", root)
            assert len(recovered["recovered"]) == 1 and len(recovered["recovered"][0]["written"]) == n
            assert all(note.read_bytes() == before for note in notes)
            assert not [p for p in root.rglob(".autograph-*.tmp")]
            run(script, *argv)
        else:  # a re-run: it rolls the dead run back first, then does the whole job
            proc = run(script, *argv)
            assert "did not finish; rolled back" in proc.stderr
        assert all(note.read_bytes() == after for note in notes)
        states = {r["state"] for r in run_json(UNDO, "list", root)["runs"]}
        assert "running" not in states and "rolled-back" in states


# ---------------------------------------------------------------------------
# A trash or move that goes with other changes of its run (dedup's merge)


def test_a_trash_waits_for_the_changes_it_goes_with(tmp_path):
    """F1/F2: a member is trashed only when its merge and its relinks were
    written; else it stays, reported like the change it waited for, and
    undo finds nothing of it to take back."""
    notes = {"keep.md": b"k\n", "ro.md": b"r\n", "gone.md": b"g\n", "link.md": b"l\n", "o.md": b"o\n"}
    root = vault_with(tmp_path, notes)
    (root / "ro.md").chmod(0o444)
    result = apply(
        root,
        [
            Edit("keep.md", b"k\n", b"k\nmerged\n"),
            Edit("ro.md", b"r\n", b"r2\n"),
            Edit("link.md", b"changed meanwhile\n", b"l2\n"),
            Edit("same.md", b"s\n", b"s\n"),  # changes nothing: nothing to wait for
            Trash("gone.md", b"g\n", "merged", after=("keep.md", "ro.md")),
            Trash("link.md", b"l\n", "merged", after=("link.md",)),
            Move("o.md", "moved/o.md", b"o\n", after=("keep.md", "same.md")),
        ],
        command="test",
    )
    assert (root / "gone.md").read_bytes() == b"g\n" and (root / "link.md").read_bytes() == b"l\n"
    assert (root / "moved" / "o.md").read_bytes() == b"o\n"
    failed = {item.path: item.error for item in result.failed}
    assert "the change of ro.md it goes with was not written" in failed["gone.md"]
    assert failed["gone.md"].startswith("not moved to .trash")
    assert [c.path for c in result.conflicts] == ["link.md", "link.md"]  # the trash is a conflict as its edit is
    assert result.written == ["keep.md", "o.md"]
    assert not (root / ".trash").exists()
    run_ = journal.load(root / ".graph", result.run_id)
    changes, conflicts = plan_undo(root, run_)
    assert conflicts == [] and [type(c).__name__ for c in changes] == ["Move", "Edit"]
    apply(root, changes, command="undo")
    assert (root / "keep.md").read_bytes() == b"k\n" and (root / "o.md").read_bytes() == b"o\n"


def test_a_trash_out_of_the_vault_raises_before_any_write(tmp_path):
    """F8: a .trash that is a symlink out of the vault (or a file) stops
    the run before its journal and its first write."""
    for kind in ("symlink", "file"):
        (tmp_path / kind).mkdir()
        root = vault_with(tmp_path / kind, {"keep.md": b"k\n", "gone.md": b"g\n"})
        if kind == "symlink":
            (tmp_path / kind / "out").mkdir()
            (root / ".trash").symlink_to(tmp_path / kind / "out")
        else:
            (root / ".trash").write_text("x\n")
        changes = [Edit("keep.md", b"k\n", b"k2\n"), Trash("gone.md", b"g\n", after=("keep.md",))]
        with pytest.raises(PathError if kind == "symlink" else TargetError):
            apply(root, changes, command="test")
        assert (root / "keep.md").read_bytes() == b"k\n" and (root / "gone.md").read_bytes() == b"g\n"
        assert journal.runs(root / ".graph") == []
        assert not (root / ".graph").exists()  # refused before a write: not even the lock it took stays


def test_a_run_stopped_by_an_exception_is_rolled_back_by_the_next_writer(tmp_path):
    """F8: an exception half way leaves the run recoverable (lock state
    running), even when the caller catches it; the next writer rolls the
    written file back."""
    root = vault_with(tmp_path, {"a.md": b"a\n", "b.md": b"b\n"})

    def hook(stage, path):
        if stage == "read" and path.endswith("b.md"):
            raise RuntimeError("stopped half way")

    replace._test_hook = hook
    try:
        with store.writer_lock(root, command="test"):
            with pytest.raises(RuntimeError):
                apply(root, [Edit("a.md", b"a\n", b"A\n"), Edit("b.md", b"b\n", b"B\n")], command="test")
    finally:
        replace._test_hook = None
    assert (root / "a.md").read_bytes() == b"A\n"
    assert json.loads((root / ".graph" / "writer.lock").read_text())["state"] == "running"
    with store.writer_lock(root, command="next"):
        recovered = list(store.last_recovery)
    assert len(recovered) == 1 and recovered[0][1].written == ["a.md"]
    assert (root / "a.md").read_bytes() == b"a\n" and (root / "b.md").read_bytes() == b"b\n"
    assert json.loads((root / ".graph" / "writer.lock").read_text())["state"] == "done"


def test_undo_changes_nothing_when_a_trashed_file_is_gone(tmp_path):
    """F20: .trash/ emptied after a merge: undoing the merge would leave
    the member's text nowhere, so nothing is undone and each file is
    reported."""
    root = vault_with(tmp_path, {"keep.md": b"k\n", "gone.md": b"member text\n"})
    result = apply(
        root,
        [Edit("keep.md", b"k\n", b"k\nmember text\n"), Trash("gone.md", b"member text\n", after=("keep.md",))],
        command="test",
    )
    assert result.written == ["keep.md", "gone.md"]
    shutil.rmtree(root / ".trash")
    changes, conflicts = plan_undo(root, journal.load(root / ".graph", result.run_id))
    assert changes == []
    assert {c["path"] for c in conflicts} == {"keep.md", "gone.md"}
    assert all("went away since the run" in c["error"] for c in conflicts)
    proc = run(UNDO, "undo", result.run_id, root, "--apply", check=None)
    assert (root / "keep.md").read_bytes() == b"k\nmember text\n"
    assert proc.returncode == 4


def test_an_unknown_run_is_a_usage_error_that_leaves_no_graph_folder(tmp_path):
    """'undo.py undo VAULT' (the run left out): a folder is no run id, so
    exit 2 pointing at --vault, and no .graph/ made anywhere."""
    folder = tmp_path / "not a vault"
    folder.mkdir()
    proc = subprocess.run(
        [sys.executable, str(UNDO), "undo", str(tmp_path)], capture_output=True, text=True, cwd=folder, timeout=60
    )
    assert proc.returncode == 2 and "is a folder; to name the vault give --vault" in proc.stderr
    assert list(folder.iterdir()) == [] and not (tmp_path / ".graph").exists()
