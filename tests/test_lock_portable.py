"""The writer lock without ``fcntl`` (issue 30, Windows).

Windows' Python has no ``fcntl``: the lock is taken with ``msvcrt.locking``
there, and with an owner file made with ``O_EXCL`` where neither module
exists.  Each is tried here by running the writers as they run, with
``fcntl`` made unavailable by a ``sitecustomize`` on ``PYTHONPATH`` (a module
of ``None`` in ``sys.modules`` makes ``import fcntl`` fail), and for the
Windows case an ``msvcrt`` module that locks as Windows does (one holder per
open file, released when the holder ends).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

NO_FCNTL = """\
import sys
sys.modules["fcntl"] = None  # import fcntl raises ImportError, as on Windows
"""

# msvcrt.locking as Windows behaves for one byte locked by one open file:
# a second holder is refused at once with EACCES (LK_NBLCK), the lock goes
# with LK_UNLCK or when its holder ends.  Built on the real flock, taken
# before fcntl is made unavailable to the script.
FAKE_MSVCRT = """\
import errno, os, sys, types
import fcntl as _fcntl

msvcrt = types.ModuleType("msvcrt")
msvcrt.LK_UNLCK, msvcrt.LK_LOCK, msvcrt.LK_NBLCK, msvcrt.LK_RLCK, msvcrt.LK_NBRLCK = 0, 1, 2, 3, 4


def locking(fd, mode, nbytes):
    with open(os.environ["FAKE_MSVCRT_LOG"], "a") as log:
        log.write(f"{os.getpid()} {mode}\\n")
    if mode == msvcrt.LK_UNLCK:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
        return
    try:
        _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
    except BlockingIOError:
        raise OSError(errno.EACCES, "Permission denied") from None


msvcrt.locking = locking
sys.modules["msvcrt"] = msvcrt
sys.modules["fcntl"] = None
"""

PLATFORMS = {"no-fcntl": NO_FCNTL, "msvcrt": FAKE_MSVCRT}


@pytest.fixture(params=sorted(PLATFORMS))
def platform(request, tmp_path):
    """The environment that runs a script on that platform: ``(name, env)``."""
    site = tmp_path / f"site-{request.param}"
    site.mkdir()
    (site / "sitecustomize.py").write_text(PLATFORMS[request.param], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRAPH_VAULT"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["FAKE_MSVCRT_LOG"] = str(tmp_path / "msvcrt.log")
    probe = subprocess.run([sys.executable, "-c", "import fcntl"], env=env, capture_output=True, text=True)
    assert probe.returncode != 0, "the sitecustomize did not take fcntl away"
    return request.param, env


def run(env: dict, script: str, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def used_msvcrt(name: str, env: dict) -> None:
    """The Windows case went through msvcrt.locking (not the owner file)."""
    if name == "msvcrt":
        assert Path(env["FAKE_MSVCRT_LOG"]).read_text().strip(), "msvcrt.locking was never called"


# a writer of one card (its access count and day)
TOUCH = ("engine.py", "touch", "Dana Reyes", "--today", "2026-12-05")


def lock_state(vault: Path) -> dict:
    return json.loads((vault / ".graph" / "writer.lock").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# Every writer runs, and lets the lock go


# (script, arguments, a check of what it wrote); each on its own copy of the example vault
WRITERS = [
    ("card.py", ["new", "person", "Zoe Tester", "description=A tester", "status=active"], "people/Zoe Tester.md"),
    ("card.py", ["set", "Dana Reyes", "role=COO"], "people/Dana Reyes.md"),
    ("card.py", ["log", "Dana Reyes", "Met", "again"], "people/Dana Reyes.md"),
    ("graph.py", ["fix", "--apply"], None),
    ("graph.py", ["mv", "people/Ben Carter.md", "people/Ben C.md", "--apply"], "people/Ben C.md"),
    ("enforce.py", ["--apply"], None),
    ("engine.py", ["decay", "--today", "2026-12-05"], None),
    ("engine.py", ["touch", "Dana Reyes", "--today", "2026-12-05"], "people/Dana Reyes.md"),
    ("moc.py", ["generate"], None),
    ("dedup.py", ["--apply"], None),
    ("supersede.py", ["--apply"], None),
]


@pytest.mark.parametrize("script, args, written", WRITERS, ids=lambda v: v if isinstance(v, str) else None)
def test_a_writer_runs_without_fcntl(platform, tmp_path, script, args, written):
    name, env = platform
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    before = (vault / written).read_bytes() if written and (vault / written).exists() else None
    proc = run(env, script, *args, "--vault", vault)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    if written:
        assert (vault / written).read_bytes() != before
    # the lock is let go: done, or taken away with .graph/ by a run that wrote nothing
    left = sorted(p.name for p in (vault / ".graph").glob("writer.*"))
    assert left in ([], ["writer.lock"]) and (not left or lock_state(vault)["state"] == "done")
    used_msvcrt(name, env)


def test_an_undo_runs_without_fcntl(platform, tmp_path):
    _, env = platform
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    card = vault / "people" / "Dana Reyes.md"
    before = card.read_bytes()
    assert run(env, *TOUCH, "--vault", vault).returncode == 0
    proc = run(env, "undo.py", "undo", "last", "--apply", "--vault", vault)
    assert proc.returncode == 0, proc.stderr
    assert card.read_bytes() == before


# ---------------------------------------------------------------------------
# Two writers at once still exclude each other

HOLD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from autograph.write import store
    with store.writer_lock(Path(sys.argv[2]), command="holder"):
        print("held", flush=True)
        sys.stdin.read()
    """
)

# A read-modify-write of one file under the lock, slow enough that two
# runs inside the lock at once would lose an increment.
COUNT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from autograph.write import store
    root = Path(sys.argv[2])
    with store.writer_lock(root, wait=120, command="count"):
        counter = root / "counter.txt"
        n = int(counter.read_text())
        time.sleep(0.03)
        counter.write_text(str(n + 1))
    """
)


def hold_lock(env: dict, vault: Path) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(SCRIPTS), str(vault)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_second_writer_is_refused_while_one_holds_the_lock_and_waits_for_it(platform, tmp_path):
    name, env = platform
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    card = vault / "people" / "Zoe Tester.md"
    new = ["card.py", "new", "person", "Zoe Tester", "description=A tester", "status=active", "--vault", vault]
    holder = hold_lock(env, vault)
    try:
        proc = run(env, *new)
        assert proc.returncode == 3, proc.stderr
        assert "another autograph run is writing to this vault" in proc.stderr and "holder" in proc.stderr
        assert "Traceback" not in proc.stderr and not card.exists()
        waiter = subprocess.Popen(
            [sys.executable, str(SCRIPTS / new[0]), *map(str, new[1:]), "--wait", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        time.sleep(0.5)
        assert waiter.poll() is None and not card.exists()  # waiting, not writing
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    _, err = waiter.communicate(timeout=120)
    assert waiter.returncode == 0, err
    assert card.exists()
    used_msvcrt(name, env)


def counters(env: dict, vault: Path, n: int) -> list[subprocess.Popen]:
    return [
        subprocess.Popen(
            [sys.executable, "-c", COUNT, str(SCRIPTS), str(vault)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(n)
    ]


def finish(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err


def test_writers_started_together_take_turns(platform, tmp_path):
    name, env = platform
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "counter.txt").write_text("0")
    finish(counters(env, vault, 8))
    assert (vault / "counter.txt").read_text() == "8"  # no increment lost: never two inside at once
    used_msvcrt(name, env)


def test_a_killed_holder_lets_the_waiting_writers_in_one_at_a_time(platform, tmp_path):
    """kill -9 of the holder: the writers that wait take the lock in turn
    (without fcntl, the owner file the killed run left is taken away once:
    never while another run holds the lock)."""
    _, env = platform
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "counter.txt").write_text("0")
    holder = hold_lock(env, vault)
    waiting = counters(env, vault, 6)
    time.sleep(0.5)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    finish(waiting)
    assert (vault / "counter.txt").read_text() == "6"
    assert lock_state(vault)["state"] == "done"


def test_a_killed_writer_is_rolled_back_by_the_next_one(platform, tmp_path):
    _, env = platform
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    holder = hold_lock(env, vault)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    assert lock_state(vault)["state"] == "running"  # killed mid-run
    proc = run(env, *TOUCH, "--vault", vault)
    assert proc.returncode == 0, proc.stderr
    assert lock_state(vault)["state"] == "done"


# ---------------------------------------------------------------------------
# The owner file (no fcntl, no msvcrt): taken away only when its holder is gone


@pytest.fixture
def bare(tmp_path):
    """The environment of a Python with neither fcntl nor msvcrt, and a vault."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_FCNTL, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRAPH_VAULT"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    (vault / ".graph").mkdir(exist_ok=True)
    return env, vault


def owner_file(vault: Path, record: dict | None, age: float = 0) -> Path:
    path = vault / ".graph" / "writer.owner"
    path.write_text(json.dumps(record) if record is not None else "", encoding="utf-8")
    if age:
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))
    return path


def gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_an_owner_file_of_a_running_process_keeps_the_lock(bare):
    env, vault = bare
    import socket

    path = owner_file(vault, {"pid": os.getpid(), "host": socket.gethostname(), "command": "card.py set"})
    proc = run(env, *TOUCH, "--vault", vault, "--wait", "0")
    assert proc.returncode == 3 and "another autograph run" in proc.stderr and str(os.getpid()) in proc.stderr
    assert "writer.owner" in proc.stderr  # how to clear one nobody holds
    assert path.exists()


def test_an_owner_file_of_another_host_is_never_taken_away(bare):
    env, vault = bare
    path = owner_file(vault, {"pid": gone_pid(), "host": "another-machine.invalid", "command": "moc.py"})
    proc = run(env, *TOUCH, "--vault", vault, "--wait", "0")
    assert proc.returncode == 3 and "another-machine.invalid" in proc.stderr
    assert path.exists()


def test_an_owner_file_of_a_process_that_ended_is_taken_away(bare):
    env, vault = bare
    import socket

    owner_file(vault, {"pid": gone_pid(), "host": socket.gethostname(), "command": "card.py set"})
    proc = run(env, *TOUCH, "--vault", vault)
    assert proc.returncode == 0, proc.stderr
    assert "last_accessed: 2026-12-05" in (vault / "people" / "Dana Reyes.md").read_text(encoding="utf-8")
    assert not (vault / ".graph" / "writer.owner").exists()


def test_an_empty_owner_file_is_taken_away_only_once_it_is_old(bare):
    """An owner file is written right after it is made: an empty one is a
    run at that instant, or one killed there (then it stays empty)."""
    env, vault = bare
    owner_file(vault, None)
    assert run(env, *TOUCH, "--vault", vault, "--wait", "0").returncode == 3
    owner_file(vault, None, age=60)
    proc = run(env, *TOUCH, "--vault", vault)
    assert proc.returncode == 0, proc.stderr


def test_a_run_that_wrote_nothing_leaves_no_lock_behind(bare, tmp_path):
    """A run that took the lock in a folder that was no vault and wrote
    nothing takes its .graph/ away again, owner file and all."""
    env, _ = bare
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.md").write_text("# a\n", encoding="utf-8")
    code = (
        f"import sys; sys.path.insert(0, {str(SCRIPTS)!r})\n"
        "from pathlib import Path\n"
        "from autograph.write import store\n"
        f"with store.writer_lock(Path({str(folder)!r}), 0, 'nothing'):\n"
        "    pass\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["a.md"]
