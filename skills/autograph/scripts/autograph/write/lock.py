"""The vault's one writer lock.

``flock`` on ``.graph/writer.lock``: the kernel releases it when the process
ends, however it ends.  The lock file also holds the holder's state as
JSON (``running`` with pid, command and start; ``done`` when it ended), so
the next holder knows when the previous one was killed mid-run
(:func:`hold` tells its ``taken`` callback) and the store rolls that run
back first (:func:`store.writer_lock`).  Re-entrant within one process.  The store
registers each run it begins (:data:`open_runs`): a run that stopped on an
exception leaves the state ``running``, for the next writer to roll back.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from ..read.vault import GRAPH_DIR
from .changes import utc_now
from .derived import derived_path, open_derived

__all__ = ["LOCK_NAME", "LockBusy", "hold", "intact"]


LOCK_NAME = "writer.lock"


class LockBusy(Exception):
    """Another autograph run holds the vault's writer lock."""


_held: dict[str, int] = {}  # real vault path -> nesting depth (this process)
open_runs: dict[str, set[str]] = {}  # real vault path -> runs begun under the lock and not finished
_lock_files: dict[str, tuple[int, Path]] = {}  # real vault path -> (locked descriptor, its path)


@contextlib.contextmanager
def hold(root: Path, wait: float = 0.0, command: str = "", taken=None):
    """Hold the vault's one writer lock: ``flock`` on ``.graph/writer.lock``.

    Waits up to ``wait`` seconds for another run to finish, then raises
    :class:`LockBusy` naming that run.  Re-entrant within one process.
    ``taken(killed)`` is called when this process takes the lock (not when
    it already holds it), before this holder's state is written: ``killed``
    is True when the previous holder did not finish (killed mid-run), so its
    run can be rolled back first; a kill during that leaves the lock as the
    killed holder left it, for the next writer.  Raises OSError when
    ``.graph/`` cannot be created (a read-only vault: reading commands still
    work without it).  Use :func:`store.writer_lock`, which rolls a killed
    run back; only the store holds the lock bare.
    """
    import fcntl  # writers only; POSIX

    key = os.path.realpath(root)
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    deadline = time.monotonic() + max(0.0, wait)
    while True:
        try:
            lock_path = derived_path(root, LOCK_NAME)
            fd = open_derived(lock_path, os.O_RDWR)
        except FileNotFoundError:
            # .graph/ taken away between its making and the open (a run that wrote nothing): again
            if time.monotonic() >= deadline + 5:
                raise
            time.sleep(0.01)
            continue
        except OSError as exc:
            raise OSError(
                exc.errno, f"cannot take the vault's writer lock in {GRAPH_DIR}/ ({exc.strerror}); nothing was written"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                message = _busy_message(fd, wait)
                os.close(fd)
                raise LockBusy(message) from None
            os.close(fd)
            time.sleep(0.05)
            continue
        if _is_at(fd, lock_path):
            break
        os.close(fd)  # its holder took the file away (a run that made .graph/ and left nothing): open anew
    try:
        previous = _read_state(fd)
        _held[key] = 1
        _lock_files[key] = (fd, lock_path)
        try:
            if taken is not None:
                taken(previous.get("state") == "running")  # "running": its holder was killed
            _write_state(fd, {"state": "running", "pid": os.getpid(), "command": command, "since": utc_now()})
            yield
        finally:
            del _held[key]
            del _lock_files[key]
            stopped = sorted(open_runs.pop(key, ()))
            if not previous and not stopped and _tidy(fd, lock_path):
                pass  # a new lock, and nothing else in .graph/: both taken away
            elif stopped:  # a run stopped half way (an exception): the next writer rolls it back
                state = {"state": "running", "pid": os.getpid(), "command": command, "stopped": stopped}
                _write_state(fd, {**state, "until": utc_now()})
            else:
                _write_state(fd, {"state": "done", "pid": os.getpid(), "command": command, "until": utc_now()})
    finally:
        os.close(fd)  # releases the flock


def _is_at(fd: int, path: Path) -> bool:
    """True when the open lock ``fd`` is still the file at ``path``."""
    try:
        there, mine = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


def _tidy(fd: int, lock_path: Path) -> bool:
    """Take away a lock file that was new when this holder took it, and
    its ``.graph/`` folder, when nothing else is there (the runs that held
    it were refused or wrote nothing): a call that wrote nothing leaves
    nothing in a folder that was not yet a vault.  Done while the lock is
    held; a run waiting on the old file finds it gone and opens a new one
    (:func:`hold`).  False when anything else is there, or the removal
    fails (then the lock stays)."""
    folder = lock_path.parent
    try:
        if os.listdir(folder) != [LOCK_NAME] or not _is_at(fd, lock_path):
            return False
        os.unlink(lock_path)
        os.rmdir(folder)
    except OSError:
        return False
    return True


def intact(root: Path) -> bool:
    """The lock this process holds is still the file at its path (someone
    deleting ``.graph/`` mid-run would let a second writer take a new one)."""
    held = _lock_files.get(os.path.realpath(root))
    if held is None:
        return True
    try:
        there, mine = os.lstat(held[1]), os.fstat(held[0])
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


def _read_state(fd: int) -> dict:
    try:
        data = os.pread(fd, 4096, 0)
        state = json.loads(data.decode("utf-8")) if data.strip() else {}
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {"state": "running"}  # damaged: sweep, to be safe


def _write_state(fd: int, state: dict) -> None:
    data = (json.dumps(state) + "\n").encode("utf-8")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def _busy_message(fd: int, wait: float) -> str:
    state = _read_state(fd)
    who = f"pid {state.get('pid', '?')}"
    if state.get("command"):
        who += f", {state['command']}"
    waited = f" for {wait:g} s" if wait > 0 else ""
    return (
        f"another autograph run is writing to this vault ({who}); waited{waited or ' not at all'}. "
        "Run again when it ends, or pass --wait SECONDS"
    )
