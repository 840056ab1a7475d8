"""The vault's one writer lock.

``.graph/writer.lock`` is the lock, taken in the strongest way the platform
offers (:func:`mechanism`): ``flock`` where ``fcntl`` exists (Linux, macOS,
the BSDs), ``msvcrt.locking`` on one byte of it on Windows; with neither,
an owner file ``.graph/writer.owner`` made with ``O_CREAT | O_EXCL`` and
holding the holder's pid.  The first two the kernel releases when the
process ends, however it ends; an owner file a killed run left is taken
away by the next run once it is sure its holder is gone (same host, the
pid not running, or running as another process since; never on a guess:
see :func:`_owner_gone`).

The lock file also holds the holder's state as JSON (``running`` with pid,
command and start; ``done`` when it ended), so the next holder knows when
the previous one was killed mid-run (:func:`hold` tells its ``taken``
callback) and the store rolls that run back first (:func:`store.writer_lock`).
Re-entrant within one process.  The store registers each run it begins
(:data:`open_runs`): a run that stopped on an exception leaves the state
``running``, for the next writer to roll back.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..read.vault import GRAPH_DIR
from .changes import utc_now
from .derived import derived_path, open_derived

__all__ = ["LOCK_NAME", "OWNER_NAME", "LockBusy", "hold", "intact", "mechanism"]


def _host() -> str:
    """This machine's host name: ``uname``'s node name, which is what
    ``socket.gethostname`` gives on POSIX systems (without importing
    ``socket``, 3 ms of every write's start); ``socket`` where there is no
    ``uname`` (Windows)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


LOCK_NAME = "writer.lock"
OWNER_NAME = "writer.owner"  # the owner file, where neither flock nor msvcrt locking exists
_BREAKER_NAME = "writer.owner.breaking"  # held while a stale owner file is taken away: one run at a time
_LOCKED_BYTE = 1 << 20  # msvcrt locks a byte range; this one is far past the state, which others read
_EMPTY_STALE = 10.0  # s: an owner file still empty this long was left by a run killed as it made it
_BREAKER_STALE = 30.0  # s: taking an owner file away takes milliseconds; one held longer was killed
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class LockBusy(Exception):
    """Another autograph run holds the vault's writer lock."""


_held: dict[str, int] = {}  # real vault path -> nesting depth (this process)
open_runs: dict[str, set[str]] = {}  # real vault path -> runs begun under the lock and not finished
_lock_files: dict[str, tuple[int, Path]] = {}  # real vault path -> (locked descriptor, its path)
_owners: dict[str, _Owner] = {}  # real vault path -> the owner file this process made (the "file" mechanism)
_made: set[tuple[int, int]] = set()  # (device, inode) of the owner files this process made and holds


def mechanism() -> str:
    """How this platform takes the writer lock: ``"flock"`` (``fcntl``),
    ``"msvcrt"`` (Windows' byte-range locking) or ``"file"`` (an owner file
    made with ``O_EXCL``, where Python has neither module)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        pass
    else:
        return "flock"
    try:
        import msvcrt  # noqa: F401
    except ImportError:
        return "file"
    return "msvcrt"


@contextlib.contextmanager
def hold(root: Path, wait: float = 0.0, command: str = "", taken=None):
    """Hold the vault's one writer lock on ``.graph/writer.lock`` (module docstring).

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
    key = os.path.realpath(root)
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    kind = mechanism()
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
            claim = _take(kind, fd, lock_path, command)
        except FileNotFoundError:
            # the owner file's folder taken away as the lock file was opened: again
            os.close(fd)
            if time.monotonic() >= deadline + 5:
                raise
            time.sleep(0.01)
            continue
        except OSError as exc:
            os.close(fd)
            raise OSError(
                exc.errno, f"cannot take the vault's writer lock in {GRAPH_DIR}/ ({exc.strerror}); nothing was written"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        if claim is None:
            if time.monotonic() >= deadline:
                message = _busy_message(fd, wait, _owner_record(lock_path) if kind == "file" else None)
                os.close(fd)
                raise LockBusy(message) from None
            os.close(fd)
            time.sleep(0.05)
            continue
        if _is_at(fd, lock_path):
            break
        _release(kind, fd, claim)
        os.close(fd)  # its holder took the file away (a run that made .graph/ and left nothing): open anew
    try:
        previous = _read_state(fd)
        _held[key] = 1
        _lock_files[key] = (fd, lock_path)
        if isinstance(claim, _Owner):
            _owners[key] = claim
        try:
            if taken is not None:
                taken(previous.get("state") == "running")  # "running": its holder was killed
            _write_state(fd, {"state": "running", "pid": os.getpid(), "command": command, "since": utc_now()})
            yield
        finally:
            del _held[key]
            del _lock_files[key]
            _owners.pop(key, None)
            stopped = sorted(open_runs.pop(key, ()))
            if not previous and not stopped and _tidy(fd, lock_path, claim):
                pass  # a new lock, and nothing else in .graph/: both taken away
            elif stopped:  # a run stopped half way (an exception): the next writer rolls it back
                state = {"state": "running", "pid": os.getpid(), "command": command, "stopped": stopped}
                _write_state(fd, {**state, "until": utc_now()})
            else:
                _write_state(fd, {"state": "done", "pid": os.getpid(), "command": command, "until": utc_now()})
    finally:
        _release(kind, fd, claim)
        os.close(fd)  # releases a flock


# ---------------------------------------------------------------------------
# Taking and releasing the lock, per mechanism


def _take(kind: str, fd: int, lock_path: Path, command: str):
    """The lock taken on the open lock file ``fd``: a true value to hand
    to :func:`_release`, or None when another run holds it."""
    if kind == "flock":
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        return True
    if kind == "msvcrt":
        import msvcrt

        os.lseek(fd, _LOCKED_BYTE, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EDEADLK):  # what Windows answers for a byte locked elsewhere
                return None
            raise
        return True
    return _take_owner(lock_path.with_name(OWNER_NAME), command)


def _release(kind: str, fd: int, claim) -> None:
    """Let the lock go (a flock goes with the descriptor's close)."""
    if kind == "msvcrt":
        import msvcrt

        with contextlib.suppress(OSError):  # closing the descriptor releases it too
            os.lseek(fd, _LOCKED_BYTE, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    elif isinstance(claim, _Owner):
        claim.release()


@dataclass
class _Owner:
    """The owner file this process made: its path and its identity (device,
    inode), so that it removes only that file, never one another run made
    after it."""

    path: Path
    ident: tuple[int, int]

    def mine(self) -> bool:
        return _ident(self.path) == self.ident

    def release(self) -> None:
        if self.mine():
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        _made.discard(self.ident)


def _take_owner(owner: Path, command: str) -> _Owner | None:
    """Make the owner file (``O_CREAT | O_EXCL``: one run succeeds) holding
    this process's pid, host, start and command; None while a live run
    holds it.  One a killed run left is taken away first (:func:`_break`).
    Raises FileNotFoundError when ``.graph/`` went away meanwhile."""
    record = {
        "pid": os.getpid(),
        "host": _host(),
        "started": _started(os.getpid()),
        "command": command,
        "since": utc_now(),
    }
    data = (json.dumps(record) + "\n").encode("utf-8")
    for _ in range(3):  # a stale owner file taken away: make ours at once
        try:
            fd = os.open(owner, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o644)
        except FileExistsError:
            found, info = _read_owner(owner)
            if info is None:
                continue  # its holder let it go as we looked
            if not _owner_gone(found, info):
                return None
            _break(owner, (info.st_dev, info.st_ino))
            continue
        try:
            os.write(fd, data)
            info = os.fstat(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(owner)
            raise
        os.close(fd)
        _made.add((info.st_dev, info.st_ino))
        return _Owner(owner, (info.st_dev, info.st_ino))
    return None


def _read_owner(owner: Path) -> tuple[dict | None, os.stat_result | None]:
    """The owner file's record (None when empty or not JSON) and its stat
    (None when it is gone)."""
    try:
        fd = os.open(owner, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return None, None
    try:
        info = os.fstat(fd)
        data = os.read(fd, 4096)
    except OSError:
        return None, None
    finally:
        os.close(fd)
    try:
        found = json.loads(data.decode("utf-8"))
    except ValueError:
        return None, info
    return (found if isinstance(found, dict) else None), info


def _owner_gone(found: dict | None, info: os.stat_result) -> bool:
    """Whether the run that made an owner file is certainly gone, so the
    file may be taken away.  A wrong True would let two writers in; a wrong
    False only keeps the lock busy (its message names the file), so every
    doubt answers False: a file of another host (a vault on a shared or
    synced folder: its pid means nothing here) is never taken; an empty or
    unreadable one only when it stayed so for :data:`_EMPTY_STALE` seconds
    (its maker was killed between making and writing it)."""
    if not isinstance(found, dict) or not isinstance(found.get("pid"), int):
        return time.time() - info.st_mtime > _EMPTY_STALE
    if found.get("host") != _host():
        return False
    pid = found["pid"]
    if pid == os.getpid():
        return (info.st_dev, info.st_ino) not in _made  # not ours: left by an earlier process of this pid
    return not _running(pid, found.get("started"))


def _running(pid: int, started) -> bool:
    """Whether process ``pid`` runs, and is still the one that started at
    ``started`` (Linux's start time; None where not known)."""
    if pid <= 0:
        return False
    if os.name == "nt":
        return True  # os.kill there ends the process; Windows uses msvcrt, never this path
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (another user's), or we cannot tell
    now = _stat_fields(pid)
    if now is None:
        return True
    if now[0] == "Z":
        return False  # killed, not yet reaped by its parent: it holds nothing
    return started is None or now[19] == started


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux, clock ticks since boot):
    with the pid, it names one process even when pids are reused."""
    fields = _stat_fields(pid)
    return fields[19] if fields is not None else None


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (state first), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = data[data.rfind(")") + 2 :].split()
    return fields if len(fields) > 19 else None


def _break(owner: Path, ident: tuple[int, int]) -> None:
    """Take away the owner file ``ident`` (judged left by a run that is
    gone).  Done by one run at a time, under a breaker file made with
    ``O_EXCL``: the judged file is looked at again under it, then renamed
    aside and removed.  Nothing else removes a file whose maker is gone, so
    between the look and the rename it stays the same file, and no live
    run's owner file is ever taken away.  Returns without doing anything
    while another run is breaking it."""
    breaker = owner.with_name(_BREAKER_NAME)
    try:
        os.close(os.open(breaker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o644))
    except FileExistsError:
        _clear_breaker(breaker)
        return
    except OSError:
        return
    made = _ident(breaker)
    try:
        found, info = _read_owner(owner)
        if info is None or (info.st_dev, info.st_ino) != ident or not _owner_gone(found, info):
            return
        aside = owner.with_name(f"{OWNER_NAME}.{os.getpid()}.{secrets.token_hex(4)}.gone")
        os.rename(owner, aside)
        if _ident(aside) != ident:  # cannot happen while breakers take turns; put a live one back
            with contextlib.suppress(OSError):
                os.link(aside, owner)
        os.unlink(aside)
    except OSError:
        pass  # left for the next run to judge
    finally:
        if _ident(breaker) == made:
            with contextlib.suppress(OSError):
                os.unlink(breaker)


def _clear_breaker(breaker: Path) -> None:
    """Remove a breaker file left by a run killed while breaking (older than
    :data:`_BREAKER_STALE` seconds); a younger one is another run at work."""
    try:
        info = os.stat(breaker)
    except OSError:
        return
    if time.time() - info.st_mtime <= _BREAKER_STALE:
        return
    aside = breaker.with_name(f"{_BREAKER_NAME}.{os.getpid()}.{secrets.token_hex(4)}.gone")
    try:
        os.rename(breaker, aside)
        if _ident(aside) != (info.st_dev, info.st_ino):  # another run's, made meanwhile: back
            with contextlib.suppress(OSError):
                os.link(aside, breaker)
        os.unlink(aside)
    except OSError:
        pass


def _ident(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _owner_record(lock_path: Path) -> dict | None:
    found, _ = _read_owner(lock_path.with_name(OWNER_NAME))
    return found


# ---------------------------------------------------------------------------
# The lock file's state


def _is_at(fd: int, path: Path) -> bool:
    """True when the open lock ``fd`` is still the file at ``path``."""
    try:
        there, mine = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


def _tidy(fd: int, lock_path: Path, claim) -> bool:
    """Take away a lock file that was new when this holder took it, and
    its ``.graph/`` folder, when nothing else is there (the runs that held
    it were refused or wrote nothing): a call that wrote nothing leaves
    nothing in a folder that was not yet a vault.  Done while the lock is
    held (the owner file goes after the lock file, before the folder); a
    run waiting on the old file finds it gone and opens a new one
    (:func:`hold`).  False when anything else is there, or the removal
    fails (then the lock stays)."""
    folder = lock_path.parent
    mine = {LOCK_NAME, OWNER_NAME} if isinstance(claim, _Owner) else {LOCK_NAME}
    try:
        if set(os.listdir(folder)) != mine or not _is_at(fd, lock_path):
            return False
        os.unlink(lock_path)
        if isinstance(claim, _Owner):
            claim.release()
        os.rmdir(folder)
    except OSError:
        return False
    return True


def intact(root: Path) -> bool:
    """The lock this process holds is still the file at its path (someone
    deleting ``.graph/`` mid-run would let a second writer take a new one),
    and so is its owner file where the lock is one."""
    key = os.path.realpath(root)
    held = _lock_files.get(key)
    if held is None:
        return True
    owner = _owners.get(key)
    if owner is not None and not owner.mine():
        return False
    try:
        there, mine = os.lstat(held[1]), os.fstat(held[0])
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


def _read_state(fd: int) -> dict:
    try:
        data = _read_at_start(fd)
        state = json.loads(data.decode("utf-8")) if data.strip() else {}
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {"state": "running"}  # damaged: sweep, to be safe


def _read_at_start(fd: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 4096, 0)
    os.lseek(fd, 0, os.SEEK_SET)  # Windows has no pread; only this process moves this descriptor
    return os.read(fd, 4096)


def _write_state(fd: int, state: dict) -> None:
    data = (json.dumps(state) + "\n").encode("utf-8")
    os.ftruncate(fd, 0)
    if hasattr(os, "pwrite"):
        os.pwrite(fd, data, 0)
    else:
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, data)


def _busy_message(fd: int, wait: float, owner: dict | None = None) -> str:
    """Who holds the lock: the run the lock file names, or, for an owner
    file, the run that made it (then how to clear one nobody holds)."""
    state = owner if owner else _read_state(fd)
    who = f"pid {state.get('pid', '?')}"
    if owner and owner.get("host") not in (None, _host()):
        who += f" on {owner['host']}"
    if state.get("command"):
        who += f", {state['command']}"
    waited = f" for {wait:g} s" if wait > 0 else ""
    clear = f"; if no autograph run is that process, delete {GRAPH_DIR}/{OWNER_NAME}" if owner else ""
    return (
        f"another autograph run is writing to this vault ({who}); waited{waited or ' not at all'}. "
        f"Run again when it ends, or pass --wait SECONDS{clear}"
    )
