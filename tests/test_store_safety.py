"""What a write may never do (issue 7, items 1-4): replace a file it may not
write, change a file's owner, group or mode, split hard links, write through
a symlink, replace a device or FIFO, create folders for an output, run two
writers at once, or leave temporary files after a kill.

Some cases need root (to give a file another owner) and use ``os.setuid`` in
a child process to act as another user; CI runs as root.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from autograph.read.vault import walk
from autograph.write import merge, replace
from autograph.write.changes import Edit
from autograph.write.confine import TargetError
from autograph.write.derived import write_output
from autograph.write.merge import merge3
from autograph.write.store import apply, writer_lock
from conftest import SCRIPTS
from hypothesis import given
from hypothesis import strategies as st

ENFORCE = SCRIPTS / "enforce.py"
GRAPH = SCRIPTS / "graph.py"
GENERATE = SCRIPTS / "generate_schema.py"
OTHER_UID = 4321
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file another owner needs root (CI runs as root)")

SCHEMA = {
    "node_types": {"person": {"folder": "people", "status": ["active", "superseded"]}},
    "field_fixes": {"status": {"Active": "active"}},
}
CARD = b"---\ntype: person\nstatus: Active\n---\nbody\n"
FIXED = b"---\ntype: person\nstatus: active\n---\nbody\n"


def vault_with(tmp_path: Path, notes: dict[str, bytes]) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    for rel, data in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def become(user: int):
    def change():
        os.setgid(user)
        os.setgroups([])
        os.setuid(user)

    return change


@functools.cache
def python_for(user: int) -> str:
    """An interpreter another user may run: this one, unless it lives in a
    folder only root can enter (pyenv under /root), then the system's."""
    for candidate in (sys.executable, shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")):
        if candidate:
            probe = [candidate, "-c", "import sys; assert sys.version_info >= (3, 11)"]
            try:
                if subprocess.run(probe, preexec_fn=become(user), capture_output=True).returncode == 0:
                    return candidate
            except OSError:
                continue
    pytest.fail(f"no Python 3.11+ that uid {user} may run; install one outside /root")


@pytest.fixture
def tmp_path(tmp_path_factory):
    """A temporary folder every user may enter (pytest's own are root-only)."""
    folder = Path(tempfile.mkdtemp(prefix="autograph-safety-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run(script: Path, *args, user: int | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python_for(user) if user is not None else sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=become(user) if user is not None else None,
    )


def enforce_apply(root: Path, *extra, user: int | None = None) -> tuple[int, dict]:
    proc = run(ENFORCE, root, "--apply", "--json", *extra, user=user)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else {}


# ---------------------------------------------------------------------------
# Permissions, owners, modes (item 3)


def test_a_note_without_a_write_bit_is_reported_not_written(tmp_path):
    root = vault_with(tmp_path, {"people/ro.md": CARD, "people/rw.md": CARD})
    (root / "people" / "ro.md").chmod(0o444)
    code, report = enforce_apply(root)
    assert code == 4
    assert report["written"] == ["people/rw.md"]
    assert [f["path"] for f in report["failed"]] == ["people/ro.md"]
    assert "read-only" in report["failed"][0]["error"]
    assert (root / "people" / "ro.md").read_bytes() == CARD
    assert stat.S_IMODE((root / "people" / "ro.md").stat().st_mode) == 0o444
    assert (root / "people" / "rw.md").read_bytes() == FIXED


def test_the_human_report_lists_what_was_not_written_and_counts_only_written(tmp_path):
    root = vault_with(tmp_path, {"people/ro.md": CARD, "people/rw.md": CARD})
    (root / "people" / "ro.md").chmod(0o444)
    proc = run(ENFORCE, root, "--apply")
    assert proc.returncode == 4
    assert "1 note changed" in proc.stdout
    assert "1 note not written:" in proc.stdout and "people/ro.md: is read-only" in proc.stdout


@needs_root
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664, 0o2644])
def test_root_keeps_a_notes_owner_group_and_mode(tmp_path, mode):
    root = vault_with(tmp_path, {"people/theirs.md": CARD})
    path = root / "people" / "theirs.md"
    os.chown(path, OTHER_UID, OTHER_UID + 1)
    path.chmod(mode)
    code, report = enforce_apply(root)
    assert code == 0 and report["written"] == ["people/theirs.md"]
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (OTHER_UID, OTHER_UID + 1, mode)
    assert path.read_bytes() == FIXED


@needs_root
def test_another_user_cannot_replace_a_note_it_may_not_write(tmp_path):
    """The folder is writable by everyone (a rename would succeed), the note is not."""
    root = vault_with(tmp_path, {"people/roots.md": CARD, "people/mine.md": CARD})
    for folder in (tmp_path, root, root / "people"):
        folder.chmod(0o777)
    os.chown(root / "people" / "mine.md", OTHER_UID, OTHER_UID)
    (root / "people" / "roots.md").chmod(0o644)
    code, report = enforce_apply(root, user=OTHER_UID)
    assert code == 4, report
    assert [f["path"] for f in report["failed"]] == ["people/roots.md"]
    assert (root / "people" / "roots.md").read_bytes() == CARD
    assert (root / "people" / "roots.md").stat().st_uid == 0
    assert (root / "people" / "mine.md").read_bytes() == FIXED


@needs_root
def test_a_group_the_writer_is_not_in_is_never_dropped(tmp_path):
    """A group-writable note of another group: replacing it would change its group, so it is not written."""
    root = vault_with(tmp_path, {"people/shared.md": CARD})
    for folder in (tmp_path, root, root / "people"):
        folder.chmod(0o777)
    path = root / "people" / "shared.md"
    os.chown(path, OTHER_UID + 5, OTHER_UID + 6)
    path.chmod(0o666)
    code, report = enforce_apply(root, user=OTHER_UID)
    assert code == 4
    assert "owned by another user or group" in report["failed"][0]["error"]
    assert path.read_bytes() == CARD and (path.stat().st_uid, path.stat().st_gid) == (OTHER_UID + 5, OTHER_UID + 6)


def test_a_hard_linked_note_is_not_split(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    os.link(root / "people" / "a.md", tmp_path / "elsewhere.md")
    code, report = enforce_apply(root)
    assert code == 4 and "hard links" in report["failed"][0]["error"]
    assert os.path.samefile(root / "people" / "a.md", tmp_path / "elsewhere.md")
    assert (tmp_path / "elsewhere.md").read_bytes() == CARD


def test_a_note_that_is_a_symlink_is_not_written_through(tmp_path):
    """A note reached through a symlink to a file the walk does not otherwise see."""
    root = vault_with(tmp_path, {".hidden/real.md": CARD})
    (root / "people").mkdir()
    (root / "people" / "link.md").symlink_to("../.hidden/real.md")
    code, report = enforce_apply(root)
    assert code == 4 and "symlink" in report["failed"][0]["error"]
    assert (root / "people" / "link.md").is_symlink()
    assert (root / ".hidden" / "real.md").read_bytes() == CARD


def test_apply_goes_on_after_a_vanished_folder(tmp_path):
    root = vault_with(tmp_path, {"a/x.md": b"x", "b/y.md": b"y"})
    os.rename(root / "a", tmp_path / "moved")
    result = apply(root, [Edit("a/x.md", b"x", b"X"), Edit("b/y.md", b"y", b"Y")])
    assert result.written == ["b/y.md"]
    assert [c.path for c in result.conflicts] == ["a/x.md"] and "folder was moved" in result.conflicts[0].error
    assert not (root / "a").exists()  # never made again, empty


# ---------------------------------------------------------------------------
# Only regular files are written (item 4)


def special_files(folder: Path) -> dict[str, Path]:
    folder.mkdir(exist_ok=True)
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    out = {"fifo": fifo}
    if os.geteuid() == 0:
        device = folder / "null"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        out["device"] = device
    return out


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_apply_refuses_a_fifo_or_device_at_a_notes_path(tmp_path, kind):
    root = vault_with(tmp_path, {})
    special = special_files(root / "people").get(kind)
    if special is None:
        pytest.skip("device nodes need root (CI runs as root)")
    result = apply(root, [Edit(f"people/{special.name}", b"", b"new")])
    assert not result.written and "not a regular file" in result.failed[0].error
    assert not special.is_file()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_generate_schema_refuses_a_special_file_as_output(tmp_path, kind):
    special = special_files(tmp_path / "out").get(kind)
    if special is None:
        pytest.skip("device nodes need root (CI runs as root)")
    discovery = tmp_path / "d.json"
    discovery.write_text(run(SCRIPTS / "discover.py", vault_with(tmp_path, {}), "--json").stdout)
    proc = run(GENERATE, discovery, "-o", special, "--force", timeout=20)
    assert proc.returncode == 2, proc.stderr
    assert "not a regular file" in proc.stderr
    mode = special.lstat().st_mode
    assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISCHR(mode)


def test_generate_schema_refuses_a_symlink_and_a_missing_folder(tmp_path):
    discovery = tmp_path / "d.json"
    discovery.write_text(run(SCRIPTS / "discover.py", vault_with(tmp_path, {}), "--json").stdout)
    real = tmp_path / "real.json"
    real.write_text("{}\n")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    proc = run(GENERATE, discovery, "-o", link, "--force")
    assert proc.returncode == 2 and "symlink" in proc.stderr
    assert link.is_symlink() and real.read_text() == "{}\n"
    proc = run(GENERATE, discovery, "-o", tmp_path / "no" / "such" / "schema.json")
    assert proc.returncode == 2 and "create it first" in proc.stderr
    assert not (tmp_path / "no").exists()


def test_write_output_follows_a_symlink_only_when_asked(tmp_path):
    real = tmp_path / "settings.json"
    real.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(TargetError):
        write_output(link, b"new", overwrite=True)
    write_output(link, b"new", overwrite=True, follow_symlinks=True)
    assert link.is_symlink() and real.read_bytes() == b"new"
    with pytest.raises(TargetError):
        write_output(real, b"newer")  # exists, overwrite not given


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_the_vault_walk_skips_a_symlink_to_a_special_file(tmp_path, kind):
    root = vault_with(tmp_path, {"a.md": b"[[b]]\n"})
    special = special_files(tmp_path / "specials").get(kind)
    if special is None:
        pytest.skip("device nodes need root (CI runs as root)")
    os.rename(special, root / "specials-target")  # inside the vault, so only its kind can exclude it
    (root / "b.md").symlink_to("specials-target")
    files, warnings = walk(root)
    assert files == ["a.md", "schema.json"]
    assert any("b.md" in w and "not a regular file or folder" in w for w in warnings)
    proc = run(GRAPH, "health", root, "--json", timeout=20)  # used to hang on the FIFO
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------
# One writer per vault (item 1)

HOLD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from autograph.write import replace, store
    with store.writer_lock(Path(sys.argv[2]), command="holder"):
        print("held", flush=True)
        sys.stdin.read()
    """
)


def hold_lock(root: Path) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(SCRIPTS), str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_second_writer_exits_with_a_clear_message_and_writes_nothing(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    holder = hold_lock(root)
    try:
        proc = run(ENFORCE, root, "--apply")
        assert proc.returncode == 3
        assert "another autograph run is writing to this vault" in proc.stderr and "holder" in proc.stderr
        assert "--wait" in proc.stderr and "Traceback" not in proc.stderr
        assert (root / "people" / "a.md").read_bytes() == CARD
        # a dry run needs no lock
        assert run(ENFORCE, root).returncode == 0
    finally:
        holder.stdin.close()
        holder.wait()
    assert run(ENFORCE, root, "--apply").returncode == 0
    assert (root / "people" / "a.md").read_bytes() == FIXED


def test_wait_gets_the_lock_once_the_other_run_ends(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    holder = hold_lock(root)
    waiter = subprocess.Popen(
        [sys.executable, str(ENFORCE), str(root), "--apply", "--wait", "30"], stdout=subprocess.PIPE, text=True
    )
    holder.stdin.close()
    holder.wait()
    assert waiter.wait(timeout=60) == 0
    assert (root / "people" / "a.md").read_bytes() == FIXED


def test_the_lock_dies_with_a_killed_holder(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    holder = hold_lock(root)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert run(ENFORCE, root, "--apply").returncode == 0


def test_the_lock_is_reentrant_in_one_process(tmp_path):
    with writer_lock(tmp_path, command="outer"):
        with writer_lock(tmp_path, command="inner"):
            result = apply(tmp_path, [Edit("a.md", None, b"a")])
    assert result.written == ["a.md"]


@needs_root
def test_a_vault_without_graph_still_serves_read_only_commands(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    (root / "people").chmod(0o755)
    root.chmod(0o555)  # OTHER_UID may read but not create .graph/
    tmp_path.chmod(0o755)
    for args in (["health"], ["orphans"]):
        proc = run(GRAPH, *args, root, user=OTHER_UID)
        assert proc.returncode == 0, proc.stderr
    assert run(ENFORCE, root, user=OTHER_UID).returncode == 0
    proc = run(ENFORCE, root, "--apply", user=OTHER_UID)
    assert proc.returncode == 3 and "writer lock" in proc.stderr and "Traceback" not in proc.stderr


KILL_AT = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, sys.argv[1])
    from autograph.write import replace, store
    seen = []
    def hook(stage, path):
        if stage == sys.argv[2] and "/.graph/" not in path:
            seen.append(path)
            if len(seen) == int(sys.argv[3]):
                os.kill(os.getpid(), signal.SIGKILL)
    replace._test_hook = hook
    import importlib.util
    spec = importlib.util.spec_from_file_location("enforce", sys.argv[4])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.exit(module.main(sys.argv[5:]))
    """
)


@pytest.mark.parametrize("stage", ["temp-written", "checked"])
def test_temporary_files_of_a_killed_run_are_swept_by_the_next(tmp_path, stage):
    root = vault_with(tmp_path, {f"people/p{i}.md": CARD for i in range(5)})
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AT, str(SCRIPTS), stage, "3", str(ENFORCE), str(root), "--apply"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL
    left = [p for p in (root / "people").iterdir() if p.name.startswith(".autograph-")]
    assert len(left) == 1
    for note in (root / "people").glob("*.md"):
        assert note.read_bytes() in (CARD, FIXED)  # never partial
    assert run(ENFORCE, root, "--apply").returncode == 0
    assert not [p for p in (root / "people").iterdir() if p.name.startswith(".autograph-")]
    assert all(note.read_bytes() == FIXED for note in (root / "people").glob("*.md"))


# ---------------------------------------------------------------------------
# The three-way merge that keeps a late write


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\r\n", "e"]), max_size=8)


@given(lines, lines)
def test_merge_with_an_unchanged_side_is_the_other_side(base, other):
    base_b, other_b = "".join(base).encode(), "".join(other).encode()
    assert merge3(base_b, base_b, other_b) == other_b
    assert merge3(base_b, other_b, base_b) == other_b


def test_merge_keeps_both_changes_when_they_are_apart():
    base = b"---\nstatus: Active\n---\nbody\nmore\n"
    ours = b"---\nstatus: active\n---\nbody\nmore\n"
    theirs = base + b"appended\n"
    assert merge3(base, ours, theirs) == ours + b"appended\n"


def test_merge_refuses_changes_that_touch():
    base = b"a\nb\nc\n"
    assert merge3(base, b"a\nB\nc\n", b"a\nb2\nc\n") is None
    assert merge3(base, b"a\nB\nc\n", b"a\nb\nC\n") is None  # adjacent: context lost


def test_a_late_write_that_cannot_be_merged_is_saved_and_reported(tmp_path):
    root = vault_with(tmp_path, {"n.md": b"one\n"})
    target = root / "n.md"

    def hook(stage, path):
        if stage == "checked" and path == str(target):
            with open(target, "r+b") as handle:
                handle.write(b"ONE\n")

    replace._test_hook = hook
    try:
        result = apply(root, [Edit("n.md", b"one\n", b"uno\n")])
    finally:
        replace._test_hook = None
    assert result.written == ["n.md"] and target.read_bytes() == b"uno\n"
    (conflict,) = result.conflicts
    assert conflict.copy.startswith(f".graph/conflicts/{result.run_id}/")
    assert (root / conflict.copy).read_bytes() == b"ONE\n"


# ---------------------------------------------------------------------------
# Found by trying to break it: every version another writer makes is kept


def hooked(stage_actions: dict, root: Path, edits: list[Edit]):
    """apply() with ``replace._test_hook`` running ``stage_actions[stage]`` (a
    list of callables, one used per call) at each stage."""

    def hook(stage, path):
        actions = stage_actions.get(stage)
        if actions and "/.graph/" not in path:  # notes only, not the run's journal
            actions.pop(0)(path)

    replace._test_hook = hook
    try:
        return apply(root, edits)
    finally:
        replace._test_hook = None


def append(text: bytes):
    def act(path):
        with open(path, "ab") as handle:
            handle.write(text)

    return act


def rename_over(text: bytes):
    def act(path):
        data = Path(path).read_bytes()
        Path(path + ".editor").write_bytes(data + text)
        os.rename(path + ".editor", path)

    return act


def kept_everywhere(root: Path, result, rel: str) -> bytes:
    copies = b"".join((root / c.copy).read_bytes() for c in result.conflicts if c.copy)
    return (root / rel).read_bytes() + copies


@pytest.mark.parametrize("writer", [append, rename_over], ids=["append", "rename-over"])
def test_a_write_landing_during_the_merge_is_kept_too(tmp_path, writer):
    """A second late write, landing while our edit is merged on top of the first, is kept."""
    root = vault_with(tmp_path, {"n.md": b"head\nbody\n"})
    result = hooked(
        {"checked": [writer(b"AGENT line 1\n"), writer(b"AGENT line 2\n")]},
        root,
        [Edit("n.md", b"head\nbody\n", b"HEAD\nbody\n")],
    )
    everything = kept_everywhere(root, result, "n.md")
    assert b"AGENT line 1" in everything and b"AGENT line 2" in everything
    assert [c.path for c in result.conflicts] == ["n.md"] and result.written == ["n.md"]
    assert (root / "n.md").read_bytes().startswith(b"HEAD\nbody\nAGENT line ")


@pytest.mark.parametrize("writer", [append, rename_over], ids=["append", "rename-over"])
def test_a_late_version_that_cannot_be_saved_is_put_back(tmp_path, writer):
    """No place for a conflict copy (.graph/conflicts is a file): the other writer's
    version becomes the note again, ours is given up and reported."""
    root = vault_with(tmp_path, {"n.md": b"status: x\n"})
    (root / ".graph").mkdir()
    (root / ".graph" / "conflicts").write_bytes(b"not a folder")
    result = hooked({"checked": [writer(b"AGENT\n")]}, root, [Edit("n.md", b"status: x\n", b"status: y\n")])
    assert (root / "n.md").read_bytes() == b"status: x\nAGENT\n"
    assert result.written == [] and "left as the other writer made it" in result.conflicts[0].error
    assert not [p for p in root.iterdir() if p.name.startswith(".autograph-")]


def test_an_editor_saving_over_a_written_note_is_not_counted_as_written(tmp_path):
    root = vault_with(tmp_path, {"n.md": b"a\n"})

    def editor(path):  # read before our swap, saved after it
        data = b"a\nedited\n"
        Path(path + ".editor").write_bytes(data)
        os.rename(path + ".editor", path)

    result = hooked({"swapped": [editor]}, root, [Edit("n.md", b"a\n", b"A\n")])
    assert result.written == [] and "changed again after it was written" in result.conflicts[0].error
    assert (root / "n.md").read_bytes() == b"a\nedited\n"


def test_a_conflict_copy_keeps_the_notes_mode_and_owner(tmp_path):
    root = vault_with(tmp_path, {"n.md": b"one\n"})
    (root / "n.md").chmod(0o600)
    if os.geteuid() == 0:
        os.chown(root / "n.md", OTHER_UID, OTHER_UID)
    result = hooked({"checked": [lambda p: Path(p).write_bytes(b"ONE\n")]}, root, [Edit("n.md", b"one\n", b"uno\n")])
    copy = root / result.conflicts[0].copy
    assert copy.read_bytes() == b"ONE\n"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    if os.geteuid() == 0:
        assert (copy.stat().st_uid, copy.stat().st_gid) == (OTHER_UID, OTHER_UID)


def test_a_folder_swapped_for_a_symlink_mid_run_never_takes_a_write_outside(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b/n.md": CARD})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "n.md").write_bytes(CARD)

    def swap_folder(path):
        if path.endswith("a.md"):
            os.rename(root / "people" / "b", tmp_path / "moved")
            (root / "people" / "b").symlink_to(outside)

    result = hooked(
        {"read": [swap_folder, lambda p: None]},
        root,
        [Edit("people/a.md", CARD, FIXED), Edit("people/b/n.md", CARD, FIXED)],
    )
    assert (outside / "n.md").read_bytes() == CARD
    assert result.written == ["people/a.md"]
    assert [s.path for s in result.conflicts + result.failed] == ["people/b/n.md"]


def test_a_backslash_is_part_of_a_file_name(tmp_path):
    """On POSIX 'a\\b.md' is one file, never the note a/b.md."""
    root = vault_with(tmp_path, {"people/a\\b.md": CARD, "people/a/b.md": b"other\n"})
    result = apply(root, [Edit("people/a\\b.md", CARD, FIXED)])
    assert result.written == ["people/a\\b.md"]
    assert (root / "people" / "a\\b.md").read_bytes() == FIXED
    assert (root / "people" / "a" / "b.md").read_bytes() == b"other\n"
    (tmp_path / "odd").mkdir()
    odd = vault_with(tmp_path / "odd", {"x\\..\\..\\y.md": CARD})
    assert apply(odd, [Edit("x\\..\\..\\y.md", CARD, FIXED)]).written == ["x\\..\\..\\y.md"]


def test_extended_attributes_and_acls_are_kept(tmp_path):
    root = vault_with(tmp_path, {"n.md": CARD})
    path = root / "n.md"
    try:
        os.setxattr(path, "user.autograph-test", b"kept")
    except OSError as exc:
        pytest.skip(f"this file system keeps no user attributes ({exc.strerror})")
    acl = shutil.which("setfacl")
    if acl:
        subprocess.run([acl, "-m", f"u:{OTHER_UID}:rw", str(path)], check=True)
        before_acl = os.getxattr(path, "system.posix_acl_access")
    assert apply(root, [Edit("n.md", CARD, FIXED)]).written == ["n.md"]
    assert os.getxattr(path, "user.autograph-test") == b"kept"
    if acl:
        assert os.getxattr(path, "system.posix_acl_access") == before_acl


def test_a_run_that_waited_plans_on_what_the_run_before_it_wrote(tmp_path):
    """--wait takes the lock before the vault is read: no note is a spurious conflict."""
    root = vault_with(tmp_path, {f"people/p{i}.md": CARD for i in range(50)})
    holder = hold_lock(root)
    waiter = subprocess.Popen(
        [sys.executable, str(ENFORCE), str(root), "--apply", "--wait", "60", "--json"],
        stdout=subprocess.PIPE,
        text=True,
    )
    for i in range(50):  # what the run before it wrote
        (root / "people" / f"p{i}.md").write_bytes(CARD.replace(b"body", b"changed by the first run"))
    holder.stdin.close()
    holder.wait()
    out, _ = waiter.communicate(timeout=60)
    report = json.loads(out)
    assert waiter.returncode == 0 and report["conflicts"] == [] and len(report["written"]) == 50


@needs_root
def test_after_a_root_run_the_vaults_owner_can_still_write(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b.md": CARD})
    for path in [root, *root.rglob("*")]:
        os.chown(path, OTHER_UID, OTHER_UID)
    assert run(GRAPH, "health", root).returncode == 0
    assert run(ENFORCE, root, "--apply").returncode == 0  # as root: lock, cache, history
    for path in (root / ".graph").rglob("*"):
        assert (path.stat().st_uid, path.stat().st_gid) == (OTHER_UID, OTHER_UID), path
    (root / "people" / "b.md").write_bytes(CARD)
    os.chown(root / "people" / "b.md", OTHER_UID, OTHER_UID)
    proc = run(ENFORCE, root, "--apply", user=OTHER_UID)
    assert proc.returncode == 0, proc.stderr
    assert run(GRAPH, "health", root, user=OTHER_UID).returncode == 0


def test_a_report_that_cannot_be_printed_keeps_the_exit_code(tmp_path):
    root = vault_with(tmp_path, {f"people/p{i}.md": CARD for i in range(200)})
    (root / "people" / "p0.md").chmod(0o444)
    closed = subprocess.run(
        [sys.executable, str(ENFORCE), root, "--apply"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert closed.returncode == 4 and b"Traceback" not in closed.stderr
    (root / "people" / "p1.md").write_bytes(CARD)
    piped = subprocess.run(
        f"{sys.executable} {ENFORCE} {root} --apply | head -c 10; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
    )
    assert piped.returncode == 4 and b"Traceback" not in piped.stderr
    for args in (["health"], []):
        script = GRAPH if args else ENFORCE
        proc = subprocess.run(f"{sys.executable} {script} {' '.join(args)} {root} >&-", shell=True, capture_output=True)
        assert proc.returncode in (0, 1) and b"Traceback" not in proc.stderr, proc.stderr


def test_temporary_files_a_killed_health_left_are_swept(tmp_path):
    root = vault_with(tmp_path, {"a.md": b"x\n"})
    assert run(GRAPH, "health", root).returncode == 0
    cache = root / ".graph" / "cache"
    stale = cache / ".autograph-deadbeef.tmp"
    stale.write_bytes(b"half a cache")
    os.utime(stale, (1, 1))
    fresh = cache / ".autograph-cafef00d.tmp"
    fresh.write_bytes(b"a run writing now")
    (root / "b.md").write_bytes(b"y\n")
    assert run(GRAPH, "health", root).returncode == 0
    assert not stale.exists() and fresh.exists()


@pytest.mark.parametrize("script, args", [(ENFORCE, ["--apply"]), (GRAPH, ["health"])])
def test_a_graph_that_is_a_file_is_a_clear_error(tmp_path, script, args):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    (root / ".graph").write_bytes(b"not a folder")
    sub, rest = (args[:1], args[1:]) if script is GRAPH else ([], args)
    proc = run(script, *sub, root, *rest)
    assert b"Traceback" not in proc.stderr.encode() if isinstance(proc.stderr, str) else True
    assert "is not a folder" in proc.stderr
    assert proc.returncode == (2 if script is ENFORCE else 0)
    assert (root / "people" / "a.md").read_bytes() == CARD


@pytest.mark.parametrize("name", ["health-history.jsonl", "writer.lock", "cache/notes.jsonl"])
def test_a_fifo_under_graph_never_hangs_a_run(tmp_path, name):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    (root / ".graph" / "cache").mkdir(parents=True)
    os.mkfifo(root / ".graph" / name)
    health = run(GRAPH, "health", root, timeout=30)
    assert health.returncode == 0 and "Traceback" not in health.stderr
    apply_run = run(ENFORCE, root, "--apply", timeout=30)
    assert "Traceback" not in apply_run.stderr
    if name == "writer.lock":
        assert apply_run.returncode == 2 and "not a regular file" in apply_run.stderr
        assert (root / "people" / "a.md").read_bytes() == CARD
    else:
        assert apply_run.returncode == 0 and (root / "people" / "a.md").read_bytes() == FIXED
    assert stat.S_ISFIFO((root / ".graph" / name).lstat().st_mode)


# ---------------------------------------------------------------------------
# Found by the second round of trying to break it


def replace_with(kind: str, tmp_path: Path):
    def act(path):
        os.rename(path, str(tmp_path / "displaced.md"))
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            os.mkdir(path)
            Path(path, "inside.md").write_bytes(b"theirs\n")
        elif kind == "symlink-to-device":
            if os.geteuid() != 0:
                pytest.skip("device nodes need root (CI runs as root)")
            os.mknod(tmp_path / "zero", 0o666 | stat.S_IFCHR, os.makedev(1, 5))
            os.symlink(tmp_path / "zero", path)

    return act


@pytest.mark.parametrize("kind", ["fifo", "folder", "symlink-to-device"])
def test_a_note_replaced_by_something_else_in_the_last_moment_gets_it_back(tmp_path, kind):
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b.md": CARD})
    script = textwrap.dedent(
        f"""
        import sys, os, json
        sys.path.insert(0, {str(SCRIPTS)!r})
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from autograph.write import replace, store
        from autograph.write.changes import Edit
        import test_store_safety as t
        act = t.replace_with({kind!r}, Path({str(tmp_path)!r}))
        done = []
        def hook(stage, path):
            if stage == "checked" and path.endswith("a.md") and not done:
                done.append(1)
                act(path)
        replace._test_hook = hook
        edits = [Edit(f"people/{{n}}.md", t.CARD, t.FIXED) for n in "ab"]
        r = store.apply(Path({str(root)!r}), edits)
        print(json.dumps([r.written, [c.error for c in r.conflicts], [f.error for f in r.failed]]))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    written, conflicts, failed = json.loads(proc.stdout)
    assert written == ["people/b.md"] and len(conflicts) == 1 and "left as it is" in conflicts[0] and not failed
    mode = (root / "people" / "a.md").lstat().st_mode
    expected = {"fifo": stat.S_ISFIFO, "folder": stat.S_ISDIR, "symlink-to-device": stat.S_ISLNK}[kind]
    assert expected(mode)
    assert not [p for p in (root / "people").iterdir() if p.name.startswith(".autograph-")]


@pytest.mark.parametrize("change", ["chmod", "hardlink"])
def test_permissions_or_links_changed_in_the_last_moment_put_the_note_back(tmp_path, change):
    root = vault_with(tmp_path, {"n.md": CARD})

    def act(path):
        if change == "chmod":
            os.chmod(path, 0o444)
        else:
            os.link(path, tmp_path / "other-link.md")

    result = hooked({"checked": [act]}, root, [Edit("n.md", CARD, FIXED)])
    assert result.written == [] and "permissions, owner or links changed" in result.conflicts[0].error
    assert (root / "n.md").read_bytes() == CARD
    if change == "chmod":
        assert stat.S_IMODE((root / "n.md").stat().st_mode) == 0o444
    else:
        assert os.path.samefile(root / "n.md", tmp_path / "other-link.md")


def test_a_merge_that_would_write_a_key_twice_is_refused(tmp_path):
    """The agent adds `type: contact` at the top while we add `type: person` at the end."""
    base = b"---\nname: Ann\n---\nbody\n"
    ours = b"---\nname: Ann\ntype: person\n---\nbody\n"
    theirs = b"---\ntype: contact\nname: Ann\n---\nbody\n"
    assert merge3(base, ours, theirs) is not None  # lines apart, so a line merge takes it
    assert merge.merge_note(base, ours, theirs) is None
    root = vault_with(tmp_path, {"n.md": base})
    result = hooked({"checked": [lambda p: Path(p).write_bytes(theirs)]}, root, [Edit("n.md", base, ours)])
    everything = kept_everywhere(root, result, "n.md")
    assert theirs in everything and "saved as" in result.conflicts[0].error


@pytest.mark.parametrize(
    "base, ours, theirs, merged",
    [
        # far apart, both mean what they meant: kept
        (
            b"---\na: 1\n---\nx\ny\n",
            b"---\na: 2\n---\nx\ny\n",
            b"---\na: 1\n---\nx\ny\nz\n",
            b"---\na: 2\n---\nx\ny\nz\n",
        ),
        # the agent removed the opening ---: our key would land in the body
        (b"---\na: 1\nb: 2\n---\nx\n", b"---\na: 1\nb: 3\n---\nx\n", b"a: 1\nb: 2\n---\nx\n", None),
        # init adds a block while the agent writes ---/--- after blank lines: that stays body, as in theirs
        (
            b"\n\nbody\n",
            b"---\ntype: x\n---\n\n\nbody\n",
            b"\n\n---\nk: v\n---\nbody\n",
            b"---\ntype: x\n---\n\n\n---\nk: v\n---\nbody\n",
        ),
        # both changed one key (a list), on lines apart
        (
            b"---\na:\n  - x\n  - y\n  - z\nb: 1\n---\n",
            b"---\na:\n  - X\n  - y\n  - z\nb: 1\n---\n",
            b"---\na:\n  - x\n  - y\n  - Z\nb: 1\n---\n",
            None,
        ),
    ],
    ids=["apart", "opening-removed", "block-after-blank-lines", "same-key"],
)
def test_a_note_merge_keeps_only_what_both_meant(base, ours, theirs, merged):
    assert merge.merge_note(base, ours, theirs) == merged


def test_a_run_never_writes_on_once_its_lock_is_gone(tmp_path):
    root = vault_with(tmp_path, {f"people/p{i}.md": CARD for i in range(4)})
    result = hooked(
        {"swapped": [lambda p: shutil.rmtree(root / ".graph", ignore_errors=True)]},
        root,
        [Edit(f"people/p{i}.md", CARD, FIXED) for i in range(4)],
    )
    assert result.written == ["people/p0.md"]
    assert len(result.failed) == 3 and all("writer lock was removed" in f.error for f in result.failed)
    assert any("journal" in w for w in result.warnings)  # and the run says its journal went with .graph/


def test_a_low_descriptor_limit_costs_no_write(tmp_path):
    root = vault_with(tmp_path, {f"people/p{i:03d}.md": CARD for i in range(300)})
    script = (
        "import resource, sys, runpy; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
        f"sys.argv = ['enforce.py', {str(root)!r}, '--apply', '--json']; "
        f"runpy.run_path({str(ENFORCE)!r}, run_name='__main__')"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["written"]) == 300


def test_a_save_left_in_a_temporary_file_by_a_killed_run_is_kept(tmp_path):
    """The agent's save lands in the swap window, then the run is killed before it
    settles it: the save sits in a temporary file, which the next run must not delete."""
    root = vault_with(tmp_path, {"people/a.md": CARD, "people/b.md": CARD})
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {str(SCRIPTS)!r})
        from autograph.write import replace, store
        def hook(stage, path):
            if "/.graph/" in path:
                return
            if stage == "checked" and path.endswith("a.md"):
                data = open(path, "rb").read() + b"AGENT-EDIT\\n"
                open(path + ".agent", "wb").write(data)
                os.rename(path + ".agent", path)
            if stage == "read" and path.endswith("b.md"):
                os.kill(os.getpid(), signal.SIGKILL)
        replace._test_hook = hook
        import runpy
        sys.argv = ["enforce.py", {str(root)!r}, "--apply"]
        replace._settle = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
        runpy.run_path({str(ENFORCE)!r}, run_name="__main__")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    left = [p for p in (root / "people").iterdir() if p.name.startswith(".autograph-")]
    assert any(b"AGENT-EDIT" in p.read_bytes() for p in left)
    rerun = run(ENFORCE, root, "--apply")
    assert rerun.returncode == 0 and "kept" in rerun.stderr
    kept = [p for p in (root / ".graph" / "conflicts").rglob("*") if p.is_file()]
    assert any(b"AGENT-EDIT" in p.read_bytes() for p in kept)
    assert not [p for p in (root / "people").iterdir() if p.name.startswith(".autograph-")]


def test_write_output_never_takes_a_notes_place_in_the_vault(tmp_path):
    """F16: an output (not journaled) is refused at a Markdown path of the
    vault even with overwrite; under .graph/ and outside it is written."""
    root = vault_with(tmp_path, {"people/a.md": CARD})
    for name in ("people/a.md", "people/A.MD", "new.md", ".trash/x.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        with pytest.raises(TargetError, match="outside the vault or under .graph/"):
            write_output(root / name, b"{}\n", overwrite=True, vault=root)
    link = tmp_path / "link.md"
    link.symlink_to(root / "people" / "a.md")
    with pytest.raises(TargetError, match="under .graph/"):
        write_output(link, b"{}\n", overwrite=True, follow_symlinks=True, vault=root)
    assert (root / "people" / "a.md").read_bytes() == CARD and not (root / "new.md").exists()
    (root / ".graph").mkdir()
    write_output(root / ".graph" / "out.md", b"{}\n", vault=root)
    write_output(root / "out.json", b"{}\n", vault=root)
    write_output(tmp_path / "out.md", b"{}\n", vault=root)
    assert (root / ".graph" / "out.md").read_bytes() == b"{}\n" and (tmp_path / "out.md").exists()


ORDER = textwrap.dedent(
    """
    import contextlib, runpy, sys
    script, log = sys.argv[1], sys.argv[2]
    sys.path.insert(0, script.rsplit("/", 1)[0])
    from autograph.memory import cards
    from autograph.write import store

    def note(word):
        with open(log, "a") as handle:
            handle.write(word + "\\n")

    real_lock, real_lookup = store.writer_lock, cards.identity_matches

    @contextlib.contextmanager
    def lock(*args, **kwargs):
        note("waits")
        with real_lock(*args, **kwargs):
            note("locked")
            yield

    def lookup(*args, **kwargs):
        note("lookup")
        return real_lookup(*args, **kwargs)

    store.writer_lock, cards.identity_matches = lock, lookup
    sys.argv = [script, *sys.argv[3:]]
    runpy.run_path(script, run_name="__main__")
    """
)


def test_card_py_looks_up_before_the_lock_and_plans_again_when_a_run_wrote_meanwhile(tmp_path):
    """card.py holds the writer lock only while it writes: it looks the card
    up while another writer holds the lock; when that writer's run is in the
    journal once the lock is free, it looks up and plans again on what that
    run wrote (here a card with the same email: refused, not a second card)."""
    root = vault_with(tmp_path, {"people/a.md": CARD})
    log = tmp_path / "order.log"
    holder = hold_lock(root)
    argv = ["new", "person", "Ann Lee", "email=ann@x.org", "description=d", "--vault", str(root), "--wait", "60"]
    waiter = subprocess.Popen(
        [sys.executable, "-c", ORDER, str(SCRIPTS / "card.py"), str(log), *argv, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while "waits" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.02)
        # the run that holds the lock writes a card with that email, journaled
        (root / "people" / "Ann.md").write_bytes(b"---\ntype: person\nemail: ann@x.org\n---\n")
        (root / ".graph" / "journal" / "99991231T000000.000000Z-1-holder").mkdir(parents=True)
    finally:
        holder.stdin.close()
        holder.wait()
    out, err = waiter.communicate(timeout=60)
    report = json.loads(out)
    words = log.read_text().split()
    assert words[:4] == ["lookup", "waits", "locked", "lookup"] and words.count("lookup") == 2, err
    assert [m["path"] for m in report["refused"]["matches"]] == ["people/Ann.md"], err
    assert not (root / "people" / "Ann Lee.md").exists()


def test_card_py_plans_once_when_no_run_wrote_meanwhile(tmp_path):
    root = vault_with(tmp_path, {"people/a.md": CARD})
    log = tmp_path / "order.log"
    argv = ["new", "person", "Ann Lee", "email=ann@x.org", "description=d", "--vault", str(root), "--json"]
    proc = subprocess.run(
        [sys.executable, "-c", ORDER, str(SCRIPTS / "card.py"), str(log), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    words = log.read_text().split()
    assert words[:3] == ["lookup", "waits", "locked"] and words.count("lookup") == 1
    assert (root / "people" / "Ann Lee.md").exists()
