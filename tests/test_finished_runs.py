"""Issue 30, points 2, 3 and two of point 6: a run that exited 0 is never
rolled back later; ``graph.py mv`` on a full disk is taken back whole (and
a rollback removes the folders the run made); recovery does not report
autograph's own empty temporary file as a person's save; ``enforce
--apply`` journals only the files it writes.

The full disk is a small tmpfs mounted in the test's folder (root only;
CI runs as root).  Where the machine cannot mount one, those tests are
skipped and a fallback runs the same commands with a disk budget emulated
in the process (``sitecustomize``): creating a file and writing past a
file's end spend the budget, then fail with ENOSPC, while bytes rewritten
in place cost nothing, as on a real file system.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SCRIPTS

CARD = SCRIPTS / "card.py"
GRAPH = SCRIPTS / "graph.py"
UNDO = SCRIPTS / "undo.py"
ENFORCE = SCRIPTS / "enforce.py"
PAGE = 4096

SCHEMA = {
    "node_types": {
        "person": {"folder": "people", "required": ["description"], "status": ["active", "superseded"]},
        "project": {"folder": "projects", "required": ["description"], "status": ["active", "superseded"]},
    },
    "field_fixes": {"status": {"Active": "active"}},
}


def note(kind: str, title: str, body: str) -> bytes:
    return f"---\ntype: {kind}\ndescription: {title}\nstatus: active\n---\n# {title}\n\n{body}\n".encode()


def build_vault(root: Path, linked: int = 6, padding: int = 60) -> Path:
    """A vault: a project ``Atlas`` linked from ``linked`` people notes
    (each ``padding`` lines long, so rewriting them needs room), and two
    more projects."""
    root.mkdir(parents=True)
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    files = {
        "projects/Atlas.md": note("project", "Atlas", "The Atlas project.\n" + "plan line\n" * padding),
        "projects/Beacon.md": note("project", "Beacon", "See [[Atlas]].\n" + "plan line\n" * padding),
        "projects/Comet.md": note("project", "Comet", "Alone.\n" + "plan line\n" * padding),
    }
    for n in range(linked):
        body = "Works on [[Atlas]] and [[Atlas|the atlas]].\n" + f"note {n}\n" * padding
        files[f"people/Person {n}.md"] = note("person", f"Person {n}", body)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def snapshot(root: Path) -> dict[str, str]:
    """Every file of the vault (``.graph/`` and ``.trash/`` left out) by
    its hash, and every folder (``path/``)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".graph", ".trash")]
        rel = os.path.relpath(folder, root)
        if rel != ".":
            found[rel + "/"] = "folder"
        for name in files:
            found[os.path.relpath(os.path.join(folder, name), root)] = hashlib.sha256(
                Path(folder, name).read_bytes()
            ).hexdigest()
    return found


def run(script: Path, *args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


# ---------------------------------------------------------------------------
# The full disk: a tmpfs in the test's folder


class Disk:
    """A small tmpfs at ``path``: :meth:`fill` leaves ``pages`` pages
    free, :meth:`free` takes the filler away."""

    def __init__(self, path: Path):
        self.path = path
        self.filler = path / "filler"

    def fill(self, pages: int) -> None:
        self.free()
        info = os.statvfs(self.path)
        room = info.f_bavail * info.f_frsize
        with open(self.filler, "wb") as handle:
            handle.write(b"\0" * max(0, room - pages * PAGE))

    def free(self) -> None:
        if self.filler.exists():
            self.filler.unlink()


@pytest.fixture
def disk(tmp_path):
    """A 6 MB tmpfs mounted in the test's folder; skipped where this
    machine cannot mount one (not root, or no mount permission)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for a full disk needs root (CI runs as root); the fallback tests run")
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"this machine cannot mount a tmpfs ({done.stderr.decode().strip()}); the fallback tests run")
    try:
        yield Disk(where)
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def recover(root: Path) -> subprocess.CompletedProcess:
    proc = run(UNDO, "recover", "--vault", root, "--json")
    assert proc.returncode in (0, 4), proc.stderr
    return proc


def test_a_card_new_that_exited_0_is_never_rolled_back_on_a_full_disk(disk):
    """Point 2: at every amount of free space, ``card.py new`` either exits
    0 and its card stays through ``undo.py recover`` and a later writer's
    recovery, or it exits 3 and the card is not there once recovered."""
    seen = set()
    for pages in range(0, 12):
        root = disk.path / f"vault{pages}"
        build_vault(root, linked=1, padding=2)
        assert run(CARD, "new", "person", "Warm Up", "description=warm", "--vault", root).returncode == 0
        disk.fill(pages)
        proc = run(CARD, "new", "person", "Zed Quinn", "description=a person", "--vault", root, "--json")
        card = root / "people" / "Zed Quinn.md"
        written = card.read_bytes() if card.exists() else None
        disk.free()
        assert proc.returncode in (0, 3), proc.stderr
        seen.add(proc.returncode)
        recover(root)
        # a later writer after a killed run recovers every unfinished run too
        (root / ".graph" / "writer.lock").write_text('{"state": "running", "pid": 1}\n')
        assert run(CARD, "new", "person", "Later One", "description=later", "--vault", root).returncode == 0
        if proc.returncode == 0:
            assert written is not None and card.read_bytes() == written, (pages, proc.stderr)
        else:
            assert not card.exists(), (pages, proc.stderr)
        disk.free()
    assert seen == {0, 3}, "the sweep must cross from a full disk to enough room"


def test_a_card_set_that_exited_0_keeps_its_fact_on_a_full_disk(disk):
    """Point 2 for ``set``: the new value and its History line stay."""
    seen = set()
    for pages in range(0, 12):
        root = disk.path / f"vault{pages}"
        build_vault(root, linked=1, padding=2)
        disk.fill(pages)
        proc = run(CARD, "set", "people/Person 0.md", "status=superseded", "--vault", root, "--json")
        after = (root / "people" / "Person 0.md").read_bytes()
        disk.free()
        assert proc.returncode in (0, 3), proc.stderr
        seen.add(proc.returncode)
        recover(root)
        now = (root / "people" / "Person 0.md").read_bytes()
        if proc.returncode == 0:
            assert b"status: superseded" in now and now == after, (pages, proc.stderr)
        else:
            assert b"status: active" in now, (pages, proc.stderr)
    assert seen == {0, 3}


def links_to(root: Path, name: str) -> int:
    return sum(p.read_text().count(f"[[{name}") for p in root.rglob("*.md") if ".trash" not in p.parts)


def test_a_move_on_a_full_disk_is_taken_back_whole(disk):
    """Point 3: at every amount of free space, ``graph.py mv`` either moves
    the note with every link (exit 0), or leaves the vault as it was, at
    once (exit 4: rolled back) or after the next recovery (exit 3: the run
    does not count as done); never a moved file with broken links."""
    codes = set()
    for pages in range(0, 80, 3):
        root = disk.path / f"vault{pages}"
        build_vault(root)
        before = snapshot(root)
        disk.fill(pages)
        proc = run(GRAPH, "mv", "projects/Atlas.md", "projects/Atlas Program.md", "--apply", "--vault", root, "--json")
        codes.add(proc.returncode)
        assert proc.returncode in (0, 3, 4), proc.stderr
        if proc.returncode == 4:
            assert snapshot(root) == before, (pages, proc.stderr)
        disk.free()
        recover(root)
        if proc.returncode == 0:
            assert not (root / "projects" / "Atlas.md").exists() and (root / "projects" / "Atlas Program.md").exists()
            assert links_to(root, "Atlas]") == links_to(root, "Atlas|") == 0
            assert links_to(root, "Atlas Program") == 13
        else:
            assert snapshot(root) == before, (pages, proc.returncode, proc.stderr)
        disk.free()
    assert 0 in codes and codes - {0}, codes


def test_a_folder_move_taken_back_leaves_no_folder_and_a_retry_does_not_nest(disk):
    """Point 3: a folder move that fails on a full disk is taken back and
    the folders it made go; run again with room, it lands where asked."""
    codes = {}

    def attempt(pages: int) -> int:
        root = disk.path / f"vault{pages}"
        build_vault(root, linked=1, padding=400)
        before = snapshot(root)
        disk.fill(pages)
        proc = run(GRAPH, "mv", "projects", "archive/projects", "--apply", "--vault", root, "--json")
        disk.free()
        recover(root)
        codes[pages] = proc.returncode
        if proc.returncode != 0:
            assert snapshot(root) == before and not (root / "archive").exists(), (pages, proc.stderr)
            again = run(GRAPH, "mv", "projects", "archive/projects", "--apply", "--vault", root, "--json")
            assert again.returncode == 0, again.stderr
            assert (root / "archive" / "projects" / "Atlas.md").exists()
            assert not (root / "archive" / "projects" / "projects").exists()
        return proc.returncode

    # coarse steps up to the first amount of room that is enough, then each page before it: the
    # move fails half way (and is taken back) only in a narrow band of free space
    enough = next(pages for pages in range(0, 200, 4) if attempt(pages) == 0)
    for pages in range(max(0, enough - 3), enough):
        attempt(pages)
    assert 4 in codes.values(), f"no amount of free space made the move fail half way: {codes}"


# ---------------------------------------------------------------------------
# The fallback: a disk budget emulated in the process


SITECUSTOMIZE = textwrap.dedent(
    """
    import errno, os

    _budget = [int(os.environ["AUTOGRAPH_TEST_DISK_BUDGET"])]
    _open, _write, _pwrite = os.open, os.write, os.pwrite
    _fallocate = getattr(os, "posix_fallocate", None)


    def _spend(amount):
        if amount > _budget[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        _budget[0] -= amount


    def _grow(fd, end):
        try:
            size = os.fstat(fd).st_size
        except OSError:
            return
        if end > size:
            _spend(end - size)


    def open(path, flags, mode=0o777, *, dir_fd=None):
        if flags & os.O_CREAT and not os.path.lexists(path if dir_fd is None else "/nonexistent"):
            _spend(4096)
        return _open(path, flags, mode, dir_fd=dir_fd)


    def write(fd, data):
        if os.fstat(fd).st_mode & 0o170000 == 0o100000:
            _grow(fd, (os.lseek(fd, 0, os.SEEK_END) if os.get_blocking(fd) is not None else 0) + len(data))
        return _write(fd, data)


    def pwrite(fd, data, offset):
        _grow(fd, offset + len(data))
        return _pwrite(fd, data, offset)


    def posix_fallocate(fd, offset, length):
        _grow(fd, offset + length)
        return _fallocate(fd, offset, length)


    if os.environ.get("AUTOGRAPH_TEST_DISK_BUDGET"):
        os.open, os.write, os.pwrite = open, write, pwrite
        if _fallocate is not None:
            os.posix_fallocate = posix_fallocate
    """
)


def budget_env(tmp_path: Path, budget: int) -> dict:
    folder = tmp_path / "site"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return {"PYTHONPATH": str(folder), "AUTOGRAPH_TEST_DISK_BUDGET": str(budget)}


def test_fallback_a_card_that_exited_0_stays_at_every_budget(tmp_path):
    """Point 2 without a mount: at every disk budget ``card.py new`` exits
    0 and its card stays through recovery, or exits 3 or 4 and is gone."""
    seen = set()
    for budget in range(0, 15 * PAGE, 1024):
        root = build_vault(tmp_path / f"vault{budget}", linked=1, padding=2)
        assert run(CARD, "new", "person", "Warm Up", "description=warm", "--vault", root).returncode == 0
        env = budget_env(tmp_path, budget)
        proc = run(CARD, "new", "person", "Zed Quinn", "description=a person", "--vault", root, "--json", env=env)
        assert proc.returncode in (0, 3, 4), proc.stderr  # 4: the card itself could not be written
        seen.add(min(proc.returncode, 3))
        card = root / "people" / "Zed Quinn.md"
        written = card.read_bytes() if card.exists() else None
        recover(root)
        if proc.returncode == 0:
            assert written is not None and card.read_bytes() == written, (budget, proc.stderr)
        else:
            assert not card.exists(), (budget, proc.stderr)
    assert seen == {0, 3}


# ---------------------------------------------------------------------------
# A killed folder move, recovered


KILL_AT_SECOND_CREATE = textwrap.dedent(
    """
    import os, runpy, signal, sys
    made = []
    link = os.link

    def killing_link(src, dst, *args, **kwargs):  # a new note is made with os.link, never over a file
        link(src, dst, *args, **kwargs)
        if "/archive/" in str(dst):
            made.append(dst)
            if len(made) == 2:
                os.kill(os.getpid(), signal.SIGKILL)

    os.link = killing_link
    script = sys.argv[2]
    sys.argv = sys.argv[2:]
    runpy.run_path(script, run_name="__main__")
    """
)


def test_a_killed_folder_move_recovered_leaves_no_folder_it_made(tmp_path):
    """Point 3: recovery of a folder move killed half way removes the
    folders it made; the move run again lands where asked."""
    root = build_vault(tmp_path / "vault", linked=1, padding=2)
    before = snapshot(root)
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AT_SECOND_CREATE, str(SCRIPTS), str(GRAPH), "mv", "projects", "archive/projects"]
        + ["--apply", "--vault", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (root / "archive" / "projects").is_dir()
    recover(root)
    assert snapshot(root) == before
    assert not (root / "archive").exists()
    again = run(GRAPH, "mv", "projects", "archive/projects", "--apply", "--vault", root)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (root / "archive" / "projects").iterdir()) == ["Atlas.md", "Beacon.md", "Comet.md"]


# ---------------------------------------------------------------------------
# Point 6: autograph's own empty temporary file; enforce and read-only notes


def test_recovery_removes_its_own_empty_temporary_file_without_a_report(tmp_path):
    """A killed run's temporary file before its first byte is autograph's,
    not a save that landed: removed, nothing kept, exit 0."""
    root = build_vault(tmp_path / "vault", linked=1, padding=2)
    (root / ".graph").mkdir()
    (root / ".graph" / "writer.lock").write_text('{"state": "running", "pid": 1, "command": "card.py new"}\n')
    temp = root / "people" / ".autograph-k1ll3d_x.tmp"
    temp.write_bytes(b"")
    proc = run(UNDO, "recover", "--vault", root, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == {"recovered": []}
    assert not temp.exists()
    assert not (root / ".graph" / "conflicts").exists()


def test_recovery_still_keeps_a_save_that_landed_in_a_temporary_file(tmp_path):
    """The rule above is for empty files only: bytes no journal knows are kept."""
    root = build_vault(tmp_path / "vault", linked=1, padding=2)
    (root / ".graph").mkdir()
    (root / ".graph" / "writer.lock").write_text('{"state": "running", "pid": 1, "command": "card.py new"}\n')
    (root / "people" / ".autograph-k1ll3d_x.tmp").write_bytes(b"a person's text\n")
    proc = run(UNDO, "recover", "--vault", root, "--json")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    (kept,) = json.loads(proc.stdout)["recovered"][0]["conflicts"]
    assert (root / kept["copy"]).read_bytes() == b"a person's text\n"


def test_enforce_journals_only_the_files_it_writes(tmp_path):
    """``enforce --apply`` over read-only notes reports them as not written
    and keeps none of their bytes in the journal."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    (root / "people").mkdir()
    card = b"---\ntype: person\ndescription: x\nstatus: Active\n---\n" + b"body line\n" * 500
    for n in range(6):
        path = root / "people" / f"p{n}.md"
        path.write_bytes(card)
        if n:
            path.chmod(0o444)
    proc = run(ENFORCE, "--vault", root, "--apply", "--json")
    report = json.loads(proc.stdout)
    assert sorted(item["path"] for item in report["failed"]) == [f"people/p{n}.md" for n in range(1, 6)]
    assert all("read-only" in item["error"] for item in report["failed"])
    assert report["written"] == ["people/p0.md"]
    shown = json.loads(run(UNDO, "show", report["run"], "--vault", root, "--json").stdout)
    assert [change["path"] for change in shown["changes"]] == ["people/p0.md"]
    assert (root / ".graph" / "journal" / report["run"] / "before.bin").stat().st_size == len(card)
