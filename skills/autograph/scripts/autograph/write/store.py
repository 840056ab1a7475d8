"""Every write autograph makes: atomic, change-checked, confined, one writer.

Operations never write files themselves.  They return :class:`Edit` objects
(the bytes a file held when it was read and the bytes it should hold) and
hand them to :func:`apply`, which, holding the vault's writer lock
(:func:`writer_lock`), does for each edit:

1. confine the path to the vault (no ``..``, no absolute path, no folder
   symlink that leads outside);
2. refuse what must not be replaced: a symlink, anything but a regular file,
   a file with several hard links, a file without a write bit or that the
   current user may not write, a file whose owner and group cannot be kept;
3. open the file, check that it still holds the bytes the plan was made
   from, write a temporary file beside it (flush, fsync, the old file's mode,
   owner and group);
4. right before the swap, check again through the open descriptor (bytes,
   size, mtime, ctime, inode) and by path (the same inode is still there);
5. swap the temporary file in atomically, then look at the old file once
   more: POSIX has no compare-and-rename, so another writer can still land a
   write in the old file (or rename its own file over the path) between the
   check and the swap.  Such a write is never lost silently: our edit is
   merged on top of it when the two touch different lines (a three-way line
   merge), else the other version is saved under
   ``.graph/conflicts/<run-id>/`` and reported.

Every skipped edit is reported (:class:`Result`), never forced.  Derived files
(reports, history, caches) live under ``.graph/`` and are written with
:func:`write_derived` and :func:`append_line`; files named on the command
line (``-o``) with :func:`write_output`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..read.jsonfile import file_kind
from . import journal as journal_mod
from .journal import digest

__all__ = [
    "append_line",
    "apply",
    "confine",
    "Conflict",
    "diff",
    "Edit",
    "GRAPH_DIR",
    "last_recovery",
    "LockBusy",
    "mark_run",
    "merge3",
    "merge_note",
    "Move",
    "new_run_id",
    "PathError",
    "read_regular",
    "recover",
    "replace_file",
    "Result",
    "Skipped",
    "TargetError",
    "Trash",
    "would_refuse",
    "write_derived",
    "write_output",
    "writer_lock",
]

GRAPH_DIR = ".graph"
TRASH_DIR = ".trash"
LOCK_NAME = "writer.lock"
CONFLICTS_DIR = "conflicts"
_TMP_PREFIX = ".autograph-"
_TMP_SUFFIX = ".tmp"
_TMP_NAME = re.compile(r"\.autograph-[A-Za-z0-9_]+\.tmp\Z")
# Old files kept open after their swap, to look for late writes once more at
# the end of the run (bounded: a process may hold only so many descriptors).
_WATCHED = 128


def _watch_limit() -> int:
    """At most :data:`_WATCHED`, and an eighth of the descriptors this
    process may open (``ulimit -n 64`` leaves room for the writes)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 16
    if soft == resource.RLIM_INFINITY:
        return _WATCHED
    return max(0, min(_WATCHED, soft // 8 - 4))


# A test seam, never set by the product: called as hook(stage, path) at
# "read" (the file opened and its bytes checked), "temp-written" (the new
# version written, before the last check), "checked" (after the last check,
# right before the swap) and "swapped" (before the old file is looked at
# again), so a test can land a concurrent write in each window without
# sleeping.
_test_hook = None


class PathError(ValueError):
    """A path from data would leave the vault (``..``, absolute, symlink out)."""


class TargetError(ValueError):
    """A file named for writing is not one autograph may replace (a device,
    a FIFO, a symlink where none is allowed, a folder that does not exist)."""


class Conflict(Exception):
    """The file changed since it was read; the edit was not written."""


class LockBusy(Exception):
    """Another autograph run holds the vault's writer lock."""


@dataclass(frozen=True)
class Edit:
    """One planned change of one file.

    ``path`` is vault-relative with ``/``; ``before`` is the file's bytes
    when the plan was made (None: the file must not exist yet); ``after`` the
    bytes to write.  ``reason`` says why, for reports.  ``mtime_ns`` sets
    the written file's modification time (undo gives a file back as it
    was); else it is the time of the write.
    """

    path: str
    before: bytes | None
    after: bytes
    reason: str = ""
    mtime_ns: int | None = None  # give the new file this modification time (an undo's)


@dataclass(frozen=True)
class Trash:
    """Move a file that holds ``before`` to ``.trash/<run-id>/<path>``:
    nothing autograph removes is deleted.

    ``after``: vault paths of changes earlier in the same run that must
    have been written first (a merge into another card, the notes whose
    links were pointed away from this file); when one of them was not
    (a conflict, a failure), the file stays where it is and is reported,
    so its text never ends up only in ``.trash/``."""

    path: str
    before: bytes
    reason: str = ""
    after: tuple[str, ...] = ()


@dataclass(frozen=True)
class Move:
    """Rename the file at ``path``, which holds ``before``, to ``to`` (a
    vault path that must not exist yet).  ``after`` as for :class:`Trash`."""

    path: str
    to: str
    before: bytes
    reason: str = ""
    after: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skipped:
    """A planned write that did not happen as planned.

    ``error`` says why in words a person can act on; ``copy`` is the
    vault-relative path of a saved conflict copy (another writer's version
    kept under ``.graph/conflicts/``), else None."""

    path: str
    error: str
    copy: str | None = None

    def as_dict(self) -> dict:
        return {"path": self.path, "error": self.error, "copy": self.copy}


@dataclass
class Result:
    """What :func:`apply` did.

    ``written``: paths that now hold the planned edit; ``conflicts``: paths
    another writer changed (left as that writer made them, or merged, or
    with the other version saved: see each ``error``); ``failed``: paths that
    could not be written (permissions, a symlink, a vanished folder, ...).
    ``run_id`` names the run (conflict copies are filed under it)."""

    run_id: str
    written: list[str] = field(default_factory=list)
    conflicts: list[Skipped] = field(default_factory=list)
    failed: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. the journal could not be finished

    @property
    def skipped(self) -> bool:
        """True when some planned write did not happen as planned (exit 4)."""
        return bool(self.conflicts or self.failed)


def new_run_id() -> str:
    """A run id that sorts by time: ``YYYYMMDDTHHMMSS.ffffffZ-<pid>-<random>``
    (UTC, microseconds, so runs of one second keep their order)."""
    now = time.time_ns()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 1_000_000_000))
    return f"{stamp}.{now // 1000 % 1_000_000:06d}Z-{os.getpid()}-{os.urandom(3).hex()}"


# ---------------------------------------------------------------------------
# Paths


def confine(root: Path, path: str) -> Path:
    """The absolute path of vault-relative ``path``; raises :class:`PathError`
    if it is absolute, climbs out with ``..``, or resolves (through symlinks)
    to a place outside the vault.  The result is the real path of the file."""
    _check_relative(path)
    full = root / path
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if not _inside(real, real_root):
        raise PathError(f"{path!r}: resolves outside the vault")
    return Path(real)


def _check_relative(path: str) -> None:
    if not path or os.path.isabs(path) or path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise PathError(f"{path!r}: expected a path inside the vault, relative to its folder")
    if ".." in path.replace("\\", "/").split("/"):
        raise PathError(f"{path!r}: '..' would leave the vault")


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _vault_target(root: Path, path: str) -> Path:
    """``path`` (a vault path as the walk gives it: ``/`` separates folders,
    and a backslash is part of a name, as POSIX file systems have it) with
    its folders resolved but not its last component, so a note that is
    itself a symlink is seen (and refused) as one.  Paths from data go
    through the stricter :func:`confine` first."""
    if not path or path.startswith("/") or ".." in path.split("/") or "\0" in path:
        raise PathError(f"{path!r}: expected a path inside the vault, relative to its folder")
    real_root = os.path.realpath(root)
    folder, _, name = path.rpartition("/")
    real_folder = os.path.realpath(os.path.join(real_root, folder)) if folder else real_root
    target = os.path.join(real_folder, name)
    if not _inside(real_folder, real_root) or not _inside(os.path.realpath(target), real_root):
        raise PathError(f"{path!r}: resolves outside the vault")
    return Path(target)


# ---------------------------------------------------------------------------
# The writer lock


_held: dict[str, int] = {}  # real vault path -> nesting depth (this process)
_open_runs: dict[str, set[str]] = {}  # real vault path -> runs begun under the lock and not finished
_lock_files: dict[str, tuple[int, Path]] = {}  # real vault path -> (locked descriptor, its path)
last_recovery: list = []  # (run id, Result) of the runs the last writer_lock rolled back


@contextlib.contextmanager
def writer_lock(root: Path, wait: float = 0.0, command: str = ""):
    """Hold the vault's one writer lock: ``flock`` on ``.graph/writer.lock``.

    The kernel releases it when the process ends, however it ends.  Waits up
    to ``wait`` seconds for another run to finish, then raises
    :class:`LockBusy` naming that run.  Re-entrant within one process.  When
    the previous holder did not finish (killed), temporary files it left in
    the vault are swept and its run is rolled back first (:func:`recover`).
    Raises OSError when ``.graph/`` cannot be created (a read-only vault:
    reading commands still work without it).
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
    try:
        lock_path = derived_path(root, LOCK_NAME)
        fd = _open_derived(lock_path, os.O_RDWR)
    except OSError as exc:
        raise OSError(
            exc.errno, f"cannot take the vault's writer lock in {GRAPH_DIR}/ ({exc.strerror}); nothing was written"
        ) from None
    try:
        deadline = time.monotonic() + max(0.0, wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(_busy_message(fd, wait)) from None
                time.sleep(0.05)
        previous = _read_state(fd)
        _held[key] = 1
        _lock_files[key] = (fd, lock_path)
        try:
            last_recovery.clear()
            if previous.get("state") == "running":  # its holder was killed
                kept = sweep_temporary_files(root)
                last_recovery.extend(recover(root))
                if kept:
                    last_recovery.append(("", Result("", conflicts=kept)))
            _write_state(fd, {"state": "running", "pid": os.getpid(), "command": command, "since": _now()})
            yield
        finally:
            del _held[key]
            del _lock_files[key]
            stopped = sorted(_open_runs.pop(key, ()))
            if stopped:  # a run stopped half way (an exception): the next writer rolls it back
                state = {"state": "running", "pid": os.getpid(), "command": command, "stopped": stopped}
                _write_state(fd, {**state, "until": _now()})
            else:
                _write_state(fd, {"state": "done", "pid": os.getpid(), "command": command, "until": _now()})
    finally:
        os.close(fd)  # releases the flock


def _lock_intact(root: Path) -> bool:
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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


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


def sweep_temporary_files(root: Path) -> list[Skipped]:
    """Clear the temporary files a killed run left in the vault (names
    ``.autograph-*.tmp``, regular files only).  Called under the writer
    lock, when no other run can own them.  One that holds bytes a journaled
    run wrote or replaced is removed (the journal keeps them); any other
    (another writer's save that landed during the killed run's swap) is
    kept under ``.graph/conflicts/recovered-<time>/`` and returned."""
    graph = Path(os.path.realpath(root)) / GRAPH_DIR
    known: set[str | None] = set()
    for run in journal_mod.unfinished(graph):
        for change in run.changes:
            known.update((change.before, change.after))
    kept: list[Skipped] = []
    derived = os.path.join(root, GRAPH_DIR)
    old = time.time() - 600
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".trash")]
        for name in files:
            if not _TMP_NAME.match(name):
                continue
            path = os.path.join(folder, name)
            try:
                if path.startswith(derived + os.sep):  # derived files are written without the lock
                    if stat.S_ISREG(os.lstat(path).st_mode) and os.lstat(path).st_mtime < old:
                        os.unlink(path)
                    continue
                data = read_regular(path)
                if digest(data) in known:
                    os.unlink(path)
                    continue
                rel = os.path.relpath(path, root)
                where = f"{CONFLICTS_DIR}/recovered-{stamp}/{os.path.dirname(rel) or '.'}/{name[1:]}"
                dest = derived_path(root, where)
                try:
                    os.rename(path, dest)
                except OSError:
                    replace_file(dest, None, data)
                    os.unlink(path)
                why = "a save that landed while a killed run was writing; kept"
                kept.append(Skipped(rel, why, f"{GRAPH_DIR}/{where}"))
            except (OSError, PathError, TargetError, Conflict):
                pass  # not ours to judge: left where it is
    return kept


# ---------------------------------------------------------------------------
# One file


def _signature(info: os.stat_result) -> tuple:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def would_refuse(path) -> str | None:
    """Why :func:`apply` would refuse to replace the existing file ``path``
    whatever it held (a symlink, not a regular file, several hard links, no
    write permission), or None.  For planning: a change of several files
    that must all be written can be refused whole, before any is written."""
    try:
        info = _check_target(Path(path), follow_symlinks=False)
    except TargetError as exc:
        return str(exc)
    if info is None:
        return None
    why = _refused(info)
    if why is None and _locked_by_flag(path):
        why = "is immutable or append-only (chattr +i or +a)"
    return why


def _refused(info: os.stat_result) -> str | None:
    """Why a file with ``info`` must not be replaced, by what stat shows."""
    if info.st_nlink > 1:
        return f"has {info.st_nlink} hard links; replacing it would split them"
    if not _may_write(info):
        return "is read-only (no write permission for this user)"
    return None


_FS_IOC_GETFLAGS = 0x80086601  # Linux's _IOR('f', 1, long)
_FS_NO_REPLACE = 0x10 | 0x20  # FS_IMMUTABLE_FL, FS_APPEND_FL


def _locked_by_flag(path) -> bool:
    """Whether Linux's file flags forbid replacing ``path`` (``chattr +i``
    or ``+a``): no mode bit shows them.  False where they cannot be read."""
    if not sys.platform.startswith("linux"):
        return False
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        flags = fcntl.ioctl(fd, _FS_IOC_GETFLAGS, bytes(8))
    except OSError:  # a file system without flags
        return False
    finally:
        os.close(fd)
    return bool(int.from_bytes(flags[:4], sys.byteorder) & _FS_NO_REPLACE)


def _may_write(info: os.stat_result) -> bool:
    """The permission bits allow the current user to write the file (root
    too: a file without any write bit is someone's "do not touch")."""
    bits = stat.S_IMODE(info.st_mode)
    if bits & 0o222 == 0:
        return False
    uid = os.geteuid()
    if uid == 0:
        return True
    if info.st_uid == uid:
        return bool(bits & 0o200)
    if info.st_gid == os.getegid() or info.st_gid in os.getgroups():
        return bool(bits & 0o020)
    return bool(bits & 0o002)


def _read_fd(fd: int, size_hint: int = 0) -> bytes:
    chunks = []
    offset = 0
    while True:
        chunk = os.pread(fd, max(size_hint + 1, 1 << 16), offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def read_regular(path) -> bytes:
    """The bytes of ``path`` if it is a regular file (never through a
    symlink, never waiting on a FIFO); else OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file ({file_kind(info.st_mode)})", str(path))
        return _read_fd(fd, info.st_size)
    finally:
        os.close(fd)


def _umask_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _owner_for_new(folder: Path) -> tuple[int, int] | None:
    """Run as root, a new file belongs to its folder's owner and group, so
    that the person whose vault it is can still edit and remove it."""
    if os.geteuid() != 0:
        return None
    info = os.stat(folder)
    return (info.st_uid, info.st_gid)


def _write_temporary(
    folder: Path,
    data: bytes | list[bytes] | object,
    durable: bool,
    mode: int,
    owner: tuple[int, int] | None,
    xattrs_from: int | None = None,
    mtime_ns: int | None = None,
) -> str:
    """A temporary file in ``folder`` holding ``data`` (bytes, or an iterable
    of bytes written one after the other), with ``mode``,
    ``owner`` (uid, gid) and the extended attributes (ACLs included) of the
    open file ``xattrs_from``.  Raises :class:`TargetError` when the owner
    or an attribute cannot be kept."""
    import tempfile  # imported here: most runs never write

    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                for chunk in data:
                    handle.write(chunk)
            handle.flush()
            if owner is not None:
                info = os.fstat(handle.fileno())
                if (info.st_uid, info.st_gid) != owner:
                    try:
                        os.fchown(handle.fileno(), *owner)
                    except PermissionError:
                        raise TargetError("owned by another user or group, which a new file could not keep") from None
            os.fchmod(handle.fileno(), mode)  # after fchown, which clears set-id bits
            if xattrs_from is not None:
                _copy_xattrs(xattrs_from, handle.fileno())
            if mtime_ns is not None:
                os.utime(handle.fileno(), ns=(time.time_ns(), mtime_ns))
            if durable:
                os.fsync(handle.fileno())
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _copy_xattrs(source: int, dest: int) -> None:
    """Give ``dest`` every extended attribute of ``source`` (POSIX ACLs are
    ``system.posix_acl_*`` attributes), or raise :class:`TargetError`:
    replacing a file must not silently revoke or widen anyone's access."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return  # the file system has none
    for name in names:
        try:
            os.setxattr(dest, name, os.getxattr(source, name))
        except OSError as exc:
            raise TargetError(
                f"has the extended attribute {name} (an ACL or a label), which a new file could not keep "
                f"({exc.strerror}); not written"
            ) from None


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


_RENAME_EXCHANGE = 2
_exchange_fn = None  # None: not tried yet; False: unavailable


def _renameat2():
    """Linux ``renameat2`` through ctypes, or False where there is none."""
    global _exchange_fn
    if _exchange_fn is None:
        _exchange_fn = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                fn.restype = ctypes.c_int
                _exchange_fn = fn
            except (ImportError, OSError, AttributeError):
                pass
    return _exchange_fn


def _exchange(a: str, b: str) -> bool:
    """Swap the files at ``a`` and ``b`` atomically (Linux ``renameat2``
    with ``RENAME_EXCHANGE``).  False when the system or file system cannot;
    the caller then uses ``os.replace``."""
    if not _renameat2():
        return False
    import ctypes

    at_fdcwd = -100
    if _exchange_fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), b)


@dataclass
class _Swap:
    """A replaced file whose old version is still open (``fd``) and, where
    the swap was an exchange, still linked at ``held`` (a temporary name
    beside it), to look for late writes."""

    target: Path
    fd: int
    before: bytes
    after: bytes
    held: str | None
    meta: tuple = ()  # (mode, uid, gid) of the old file when it was checked


class _LateWrite(Exception):
    """Another writer's version appeared after the last check: ``late``
    holds its bytes, ``held`` the temporary name its file is still linked
    at (or None), ``info`` its stat; ``meta``: what changed is its mode,
    owner or links, so it must go back in place whole.  Our ``after`` is in
    the file."""

    def __init__(self, target: Path, before: bytes, after: bytes, late: bytes, held: str | None, info, meta=False):
        super().__init__(str(target))
        self.target, self.before, self.after, self.late, self.held, self.info = target, before, after, late, held, info
        self.meta = meta


def _check_target(target: Path, follow_symlinks: bool) -> os.stat_result | None:
    """lstat ``target`` and refuse what must not be replaced; None if absent."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        if not follow_symlinks:
            raise TargetError("is a symlink; autograph does not write through it (edit the file it points to)")
        try:
            info = os.stat(target)
        except FileNotFoundError:
            raise TargetError("is a symlink to a file that does not exist") from None
    if not stat.S_ISREG(info.st_mode):
        raise TargetError(f"is not a regular file ({file_kind(info.st_mode)}); autograph writes only regular files")
    return info


def _check_folder(folder: Path, inside: str | None) -> None:
    """The folder still leads where it did: inside the vault (a folder
    swapped for a symlink during a run must not take a write elsewhere)."""
    if inside is not None and not _inside(os.path.realpath(folder), inside):
        raise TargetError(f"its folder {folder} now leads outside the vault (a symlink?); not written")


def _swap(
    target: Path,
    before: bytes | None,
    after: bytes,
    durable: bool = True,
    make_folders: bool = False,
    inside: str | None = None,
    mtime_ns: int | None = None,
) -> _Swap | None:
    """Replace ``target`` (see the module docstring, steps 2-5).

    Returns a :class:`_Swap` holding the old file (the caller looks at it
    again with :func:`_look_again`), or None for a new file.  ``inside``:
    the real path the folder must stay in.  Raises :class:`Conflict`,
    :class:`TargetError` or OSError, the file then as it was; or
    :class:`_LateWrite` when another writer renamed its file over the path
    during the swap (ours is in place, theirs in the exception)."""
    folder = target.parent
    if not folder.is_dir():
        if before is not None:
            raise Conflict("its folder was moved or deleted since it was read; not written")
        if not make_folders:
            raise TargetError(f"folder {folder} does not exist; create it first")
        folder.mkdir(parents=True, exist_ok=True)
    _check_folder(folder, inside)
    info = _check_target(target, follow_symlinks=False)
    if info is None:
        if before is not None:
            raise Conflict("deleted since it was read; not written")
        return _create(target, after, durable, mtime_ns)
    if before is None:
        raise Conflict("created by someone else since the plan was made; not written")
    why = _refused(info)
    if why is not None:
        raise TargetError(f"{why}; not written")
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino) or not stat.S_ISREG(opened.st_mode):
            raise Conflict("replaced by another file since it was read; not written")
        if _read_fd(fd, opened.st_size) != before:
            raise Conflict("changed since it was read; not written")
        if _test_hook:
            _test_hook("read", str(target))
        owner = (opened.st_uid, opened.st_gid)
        tmp = _write_temporary(folder, after, durable, stat.S_IMODE(opened.st_mode), owner, fd, mtime_ns)
        # the folder itself, so the temporary file is removed even if the folder moves meanwhile
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        tmp_name = os.path.basename(tmp)
        held = None
        try:
            if _test_hook:
                _test_hook("temp-written", str(target))
            now = os.fstat(fd)
            if _signature(now) != _signature(opened) or _read_fd(fd, now.st_size) != before:
                raise Conflict("changed while the new version was being written; not written")
            there = os.lstat(target)
            if (there.st_dev, there.st_ino) != (opened.st_dev, opened.st_ino):
                raise Conflict("replaced by another file while the new version was being written; not written")
            _check_folder(folder, inside)
            if _test_hook:
                _test_hook("checked", str(target))
            if _exchange(tmp, str(target)):
                held = tmp  # the old file, still linked: a late write to it can be moved, not copied
                swapped_in = os.lstat(tmp)  # what was at the path at the instant of the swap
                if (swapped_in.st_dev, swapped_in.st_ino) != (opened.st_dev, opened.st_ino):
                    if not stat.S_ISREG(swapped_in.st_mode):
                        # a folder, FIFO or link put in the note's place: it goes back there, ours goes
                        held = None if _exchange(tmp, str(target)) else tmp
                        raise Conflict(
                            f"replaced by {file_kind(swapped_in.st_mode)} while being written; left as it is"
                            + (f" (it is at {tmp})" if held else "")
                        )
                    # another writer renamed its file over the path after our last check
                    late = read_regular(tmp)
                    raise _LateWrite(target, before, after, late, tmp, swapped_in)
            else:
                os.replace(tmp, target)
        except _LateWrite:
            os.close(dir_fd)
            raise
        except BaseException:
            if held is None:
                try:
                    os.unlink(tmp_name, dir_fd=dir_fd)
                except FileNotFoundError:
                    pass
            os.close(dir_fd)
            raise
        os.close(dir_fd)
        if durable:
            _fsync_dir(folder)
        if _test_hook:
            _test_hook("swapped", str(target))
        swap, fd = _Swap(target, fd, before, after, held, (opened.st_mode, opened.st_uid, opened.st_gid)), -1
        return swap
    finally:
        if fd >= 0:
            os.close(fd)


def _create(target: Path, after: bytes, durable: bool, mtime_ns: int | None = None) -> None:
    """Create ``target`` with ``after``; a file that appears meanwhile is
    never replaced (``os.link`` fails on an existing name)."""
    owner = _owner_for_new(target.parent)
    tmp = _write_temporary(target.parent, after, durable, _umask_mode(), owner, mtime_ns=mtime_ns)
    try:
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise Conflict("created by someone else since the plan was made; not written") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
                raise
            # a file system without hard links: the narrowest check it allows
            if os.path.lexists(target):
                raise Conflict("created by someone else since the plan was made; not written") from None
            os.replace(tmp, target)
    finally:
        _unlink_quietly(tmp)
    if durable:
        _fsync_dir(target.parent)


def _look_again(swap: _Swap) -> _LateWrite | None:
    """The old file's late version, if another writer changed it after the
    swap; else None, and the old file is let go (closed, unlinked)."""
    try:
        now = os.fstat(swap.fd)
        late = _read_fd(swap.fd, now.st_size)
    finally:
        os.close(swap.fd)
    if late != swap.before:
        return _LateWrite(swap.target, swap.before, swap.after, late, swap.held, now)
    if swap.held is not None:
        _unlink_quietly(swap.held)
    return None


def _late_now(swap: _Swap) -> _LateWrite | None:
    """Look at the old file right after its swap: its late version (the old
    file let go), or None, and then only its descriptor stays open (its
    temporary name is removed) for :func:`_look_again` later.  A change of
    its mode, owner or links (a chmod 444, a new hard link) in the last
    moment counts too: then it goes back in place (``meta``)."""
    now = os.fstat(swap.fd)
    links = 1 if swap.held is not None else 0
    if (now.st_mode, now.st_uid, now.st_gid, now.st_nlink) != (*swap.meta, links) and swap.held is not None:
        late = _read_fd(swap.fd, now.st_size)
        os.close(swap.fd)
        return _LateWrite(swap.target, swap.before, swap.after, late, swap.held, now, meta=True)
    if _read_fd(swap.fd, now.st_size) != swap.before:
        return _look_again(swap)
    if swap.held is not None:
        _unlink_quietly(swap.held)
        swap.held = None
    return None


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace_file(
    target: Path,
    before: bytes | None,
    after: bytes,
    durable: bool = True,
    follow_symlinks: bool = False,
    make_folders: bool = True,
) -> None:
    """Atomically replace ``target`` with ``after`` if it still holds ``before``.

    ``before = None`` means the file must not exist (it is created, never
    over another).  The new file keeps the old one's mode, owner, group and
    extended attributes.  ``durable=False`` skips the fsyncs (for caches).
    ``follow_symlinks`` writes the file a symlink points to (only where a
    command says so); else a symlink is refused.  Raises :class:`Conflict`
    when the file changed (a change that lands during the swap is merged
    on top when it touches other lines, else that version is put back and
    Conflict raised), :class:`TargetError` for what must not be replaced
    (not a regular file, several hard links, no write permission), OSError
    for I/O failures.
    """
    target = Path(target)
    if follow_symlinks and os.path.islink(target):
        target = Path(os.path.realpath(target))
    try:
        swap = _swap(target, before, after, durable, make_folders)
        late = _look_again(swap) if swap is not None else None
    except _LateWrite as caught:
        late = caught
    if late is not None:
        outcome = _settle(late, save=None)
        if outcome.kept_ours is None:
            raise Conflict(outcome.message)


@dataclass
class _Settled:
    """How a late write was kept: ``message`` for the report, ``copies``
    (where other versions were saved), ``kept_ours``: the bytes of ours now
    in the file (merged or as written), or None when theirs was put back."""

    message: str
    copies: list[str]
    kept_ours: bytes | None


def _settle(late: _LateWrite, save) -> _Settled:
    """Keep every version another writer made during our swap.

    First our edit is merged on top of theirs (:func:`merge3`) and written,
    again checked; a write landing during that one is settled the same way
    (a few rounds at most).  A version that cannot be merged is saved with
    ``save(late) -> where`` (a conflict copy); when it cannot be saved, it
    is put back as the file, ours given up.  Only when even that fails is
    a version lost, and the message says so."""
    copies: list[str] = []
    current = late
    if late.meta:
        return _put_back(current, "its permissions, owner or links changed while it was being written", copies)
    for _ in range(3):
        merged = merge_note(current.before, current.after, current.late) if _is_note(current.target) else None
        if merged is None:
            break
        try:
            swap = _swap(current.target, current.after, merged)
            again = _look_again(swap)
        except _LateWrite as caught:
            again = caught
        except (Conflict, TargetError, OSError):
            break  # the file moved on again: its newest version is in it; ours and `current` are not
        if current.held is not None:
            _unlink_quietly(current.held)  # merged: the file holds both
        if again is None:
            return _Settled(_MERGED, copies, merged)
        current = again
    kept = current.after
    try:
        if save is None:
            raise OSError("no place for a copy")
        copies.append(save(current))
        if current.held is not None:
            _unlink_quietly(current.held)
        message = f"changed while being written; that version was saved as {copies[-1]}"
        if len(copies) > 1:
            message = f"changed while being written, more than once; those versions were saved as {', '.join(copies)}"
        return _Settled(message, copies, kept)
    except (OSError, TargetError, PathError, Conflict) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return _put_back(current, f"changed while being written ({why})", copies)


def _put_back(current: _LateWrite, what: str, copies: list[str]) -> _Settled:
    """The other writer's version goes back in place of ours (no copy, or
    its mode, owner or links changed)."""
    try:
        if current.held is not None and _exchange(current.held, str(current.target)):
            _unlink_quietly(current.held)
        else:
            _finish(_swap(current.target, current.after, current.late))
        return _Settled(f"{what}; left as the other writer made it", copies, None)
    except (OSError, TargetError, Conflict, _LateWrite) as exc:
        lost = current.held or "nowhere"
        message = f"{what}; the other version could not be put back ({exc}); it is at {lost}"
        return _Settled(message, copies, current.after)


def _is_note(path: Path) -> bool:
    return path.name.lower().endswith(".md")


def merge_note(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """:func:`merge3` for a note, kept only when the result means what both
    edits meant: its frontmatter parses (as theirs does), it has one block
    (a second would be body), its properties are theirs with our changed
    keys (a key both changed, or a key written twice, refuses the merge),
    and a body only one side changed is that side's body.  Else None: a
    line merge that is not a note merge (``type`` twice) is a conflict."""
    merged = merge3(base, ours, theirs)
    if merged is None:
        return None
    from ..read import frontmatter
    from ..read.note import Note

    notes = [Note.from_bytes("x.md", data) for data in (base, ours, theirs, merged)]
    if any(note.text is None for note in notes):
        return None
    blocks = [note.frontmatter for note in notes]
    b, o, t, m = blocks
    if any(block is not None and not block.valid for block in (o, t, m)):
        return None
    if (m is not None) != (t is not None or (o is not None and b is None)):
        return None
    props = [block.properties if block is not None else {} for block in blocks]
    pb, po, pt, pm = props
    changed = {k for k in pb.keys() | po.keys() if k not in pb or k not in po or not _same_value(pb[k], po[k])}
    expected = dict(pt)
    for key in changed:
        if key in pt and (key not in pb or not _same_value(pt[key], pb[key])):
            return None  # both changed it
        if key in po:
            expected[key] = po[key]
        else:
            expected.pop(key, None)
    if not _same_value(expected, pm):
        return None
    bodies = [note.body for note in notes]
    if bodies[1] == bodies[0] and bodies[3] != bodies[2]:
        return None
    if bodies[2] == bodies[0] and bodies[3] != bodies[1]:
        return None
    if frontmatter.parse(bodies[3]) is not None and frontmatter.parse(bodies[2]) is None:
        return None  # a second block at the top of the body
    return merged


def _same_value(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    return a == b


_MERGED = "changed while being written; that edit was kept and this one merged on top"


def _finish(swap: _Swap | None) -> None:
    if swap is not None:
        late = _look_again(swap)
        if late is not None:
            raise late


def merge3(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """Three-way line merge: ``ours`` and ``theirs`` both made from ``base``.

    Returns the merge when the two changed separate lines (neither overlapping
    nor touching, so each change keeps its context), else None.  Lines keep
    their endings; used to put an edit on top of a concurrent one."""
    import difflib

    base_lines = base.splitlines(keepends=True)

    def hunks(other: bytes) -> list[tuple[int, int, list[bytes]]]:
        lines = other.splitlines(keepends=True)
        matcher = difflib.SequenceMatcher(None, base_lines, lines, autojunk=False)
        return [(i1, i2, lines[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]

    mine, others = hunks(ours), hunks(theirs)
    for a1, a2, _ in mine:
        for b1, b2, _ in others:
            if a1 <= b2 and b1 <= a2:
                return None
    out: list[bytes] = []
    at = 0
    for i1, i2, lines in sorted(mine + others, key=lambda h: (h[0], h[1])):
        out.extend(base_lines[at:i1])
        out.extend(lines)
        at = i2
    out.extend(base_lines[at:])
    return b"".join(out)


# ---------------------------------------------------------------------------
# Batches of vault edits


def apply(
    root: Path,
    changes: list,
    wait: float = 0.0,
    command: str = "",
    make_folders: bool = True,
    args: list[str] | None = None,
    undoes: str | None = None,
    keep: tuple[float, float] | None = None,
) -> Result:
    """Carry out ``changes`` (:class:`Edit`, :class:`Trash`, :class:`Move`)
    whose files are unchanged since they were read, as one journaled run.

    Holds the vault's writer lock (:func:`writer_lock`; ``wait`` seconds,
    then :class:`LockBusy`).  Raises :class:`PathError` before writing
    anything if any path (a move's or a trash's destination too) would
    leave the vault, :class:`TargetError` if a folder on a move's way is
    a file.  A :class:`Move` or :class:`Trash` with ``after`` happens only
    when every change of those paths earlier in ``changes`` was written
    (or changes nothing); else it is reported like the change it waited
    for (a conflict or a failure).  A run that stops on an exception half
    way stays ``running`` in its journal and in the lock's state, so the
    next writer (or ``undo.py recover``) rolls it back.  Before any file changes,
    the run's journal (``.graph/journal/<run-id>/``: the command, ``args``
    (default ``sys.argv``), each change and the bytes before) is written and
    fsynced, so the run can be undone and, if it is killed, rolled back.
    ``undoes`` names the run an undo takes back; ``keep`` is ``(keep_days,
    max_mb)`` for pruning old journals (default 30 days, 200 MB).

    Each file that changed is a conflict and each file that cannot be
    written is a failure, reported in the :class:`Result`; the run goes on
    with the others.  A new note's folders are created inside the vault
    unless ``make_folders`` is False.  At the end every written note is
    read once more: one that no longer holds what was written (an editor
    saved over it) is reported as a conflict, not counted as written.
    """
    result = Result(new_run_id())
    planned = []
    unchanged: set[str] = set()  # edits that change nothing: nothing that waits for them need wait
    for change in changes:
        if not _changes_something(change):
            unchanged.add(change.path)
            continue
        target = _vault_target(root, change.path)
        if isinstance(change, Move):
            _vault_target(root, change.to)
        planned.append((change, target))
    if not planned:
        return result
    inside = os.path.realpath(root)
    holds: dict[str, bytes] = {}  # written path -> the bytes it should now hold
    watched: list[tuple[int, Edit, _Swap]] = []
    outcomes: dict[int, dict] = {}

    def settle(n: int, edit: Edit, late: _LateWrite) -> None:
        outcome = _settle(late, lambda late: _save_conflict(root, result.run_id, edit.path, late))
        result.conflicts.append(Skipped(edit.path, outcome.message, outcome.copies[-1] if outcome.copies else None))
        if outcome.kept_ours is None:
            holds.pop(edit.path, None)
            result.written.remove(edit.path)
            outcomes[n] = {"n": n, "result": "conflict", "now": digest(late.late)}
            return
        holds[edit.path] = outcome.kept_ours
        outcomes[n] = {"n": n, "result": "merged", "now": digest(outcome.kept_ours)}
        # what an undo puts back: the other writer's edit without ours (None: nothing safe)
        theirs = merge3(edit.after, outcome.kept_ours, edit.before) if outcome.copies == [] else edit.before
        if theirs is not None:
            outcomes[n]["restore"] = list(journal.keep(theirs))

    def look_again(n: int, edit: Edit, swap: _Swap) -> None:
        late = _look_again(swap)
        if late is not None:
            settle(n, edit, late)

    def unwritten(move: Move) -> Skipped | None:
        """Why ``move`` must not happen: a change it waits for was not
        written (None: go ahead).  Those changes' files are looked at once
        more first, so a write another writer undid meanwhile counts."""
        for item in [w for w in watched if w[1].path in move.after]:
            watched.remove(item)
            look_again(*item)
        for path in move.after:
            if path in result.written or path in unchanged:
                continue
            what = "moved to .trash" if move.reason == "trash" else f"moved to {move.to}"
            error = f"not {what}: the change of {path} it goes with was not written, so it stays where it is"
            return Skipped(move.path, error)
        return None

    key = os.path.realpath(root)
    with writer_lock(root, wait, command):
        # a trashed file is a move into .trash/<run-id>/, its place chosen before the journal names it
        planned = [(_as_move(root, result.run_id, c) if isinstance(c, Trash) else c, t) for c, t in planned]
        for change, _ in planned:  # every destination checked before the first write, not half way
            if isinstance(change, Move):
                _check_destination(root, change.to)
        journal = _JournalWriter.begin(root, result.run_id, command, sys.argv if args is None else args, undoes)
        _open_runs.setdefault(key, set()).add(result.run_id)
        journal.record(
            [(_journal_change(n, change, target), _before_of(change)) for n, (change, target) in enumerate(planned, 1)]
        )
        for n, (change, target) in enumerate(planned, 1):
            if not _lock_intact(root):
                result.failed.append(Skipped(change.path, _LOCK_GONE))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            try:
                if isinstance(change, Move):
                    held = unwritten(change) if change.after else None
                    if held is not None:
                        clash = any(c.path in change.after for c in result.conflicts)
                        (result.conflicts if clash else result.failed).append(held)
                        outcomes[n] = {"n": n, "result": "conflict" if clash else "failed"}
                        continue
                    _move(root, change, inside)
                    holds.pop(change.path, None)  # written earlier in this run: the move checked its bytes
                    result.written.append(change.path)
                    outcomes[n] = {"n": n, "result": "written", "now": digest(change.before)}
                    continue
                swap = _swap(target, change.before, change.after, True, make_folders, inside, change.mtime_ns)
            except Conflict as exc:
                result.conflicts.append(Skipped(change.path, str(exc)))
                outcomes[n] = {"n": n, "result": "conflict"}
                continue
            except _LateWrite as late:
                result.written.append(change.path)
                holds[change.path] = change.after
                settle(n, change, late)
                continue
            except TargetError as exc:
                result.failed.append(Skipped(change.path, str(exc)))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            except OSError as exc:
                result.failed.append(Skipped(change.path, _os_error(exc)))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            except PathError as exc:  # a folder made a symlink out of the vault since the check
                result.failed.append(Skipped(change.path, f"not written: {exc}"))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            result.written.append(change.path)
            holds[change.path] = change.after
            outcomes[n] = {"n": n, "result": "written", "now": digest(change.after)}
            if swap is not None:
                late = _late_now(swap)
                if late is not None:
                    settle(n, change, late)
                    continue
                watched.append((n, change, swap))  # looked at again at the end, by its descriptor alone
                if len(watched) > _watch_limit():
                    look_again(*watched.pop(0))
        for n, edit, swap in watched:
            look_again(n, edit, swap)
        for n, change, now in _changed_after(root, result, holds, planned):
            theirs = _edited_on_top(change, now)
            if theirs is not None:  # a person added to what we wrote: both are in the file
                holds[change.path] = now
                outcomes[n] = {"n": n, "result": "merged", "now": digest(now)}
                if change.before is not None:
                    outcomes[n]["restore"] = list(journal.keep(theirs))
                continue
            _call_changed_again(result, change.path)
            outcomes[n] = {"n": n, "result": "conflict", "now": None}
        _open_runs[key].discard(result.run_id)  # every change tried: nothing for a next writer to roll back
        try:
            journal.finish([outcomes[n] for n in sorted(outcomes)])
            if _prune_due(root):
                prune_journals(root, *(keep or (journal_mod.KEEP_DAYS, journal_mod.MAX_MB)))
        except (OSError, PathError, TargetError, Conflict) as exc:
            result.warnings.append(f"the run's journal could not be finished ({exc}); undo.py may not see this run")
    return result


def _check_destination(root: Path, path: str) -> None:
    """Raise :class:`PathError` when a move to ``path`` would leave the
    vault, :class:`TargetError` when a folder on its way exists as
    something else than a folder (a ``.trash`` file): called for every
    move of a run before its first write."""
    _vault_target(root, path)
    folder = Path(os.path.realpath(root))
    for part in path.split("/")[:-1]:
        folder = folder / part
        if not os.path.lexists(folder):
            return
        if not folder.is_dir():
            raise TargetError(
                f"{folder} is not a folder, so nothing can be moved to {path}; "
                "move it away and run again (nothing was written)"
            )


_LOCK_GONE = (
    "not written: the vault's writer lock was removed while this ran (was .graph/ deleted?), "
    "so another run could be writing; run again"
)


def _changes_something(change) -> bool:
    return not isinstance(change, Edit) or change.before != change.after


def _before_of(change) -> bytes | None:
    return change.before if isinstance(change, Edit) else None


def _as_move(root: Path, run_id: str, trash: Trash) -> Move:
    return Move(trash.path, _trash_path(root, run_id, trash.path), trash.before, "trash", trash.after)


def _trash_path(root: Path, run_id: str, path: str) -> str:
    """``.trash/<run-id>/<path>``, or with ``.2``, ``.3``... if taken."""
    candidate = f"{TRASH_DIR}/{run_id}/{path}"
    n = 2
    while os.path.lexists(os.path.join(root, candidate)):
        candidate = f"{TRASH_DIR}/{run_id}/{path}.{n}"
        n += 1
    return candidate


def _journal_change(n: int, change, target: Path) -> journal_mod.Change:
    if isinstance(change, Edit):
        entry = journal_mod.Change(n, "write", change.path, digest(change.before), digest(change.after))
        if change.before is not None:
            try:
                entry.mtime = os.lstat(target).st_mtime_ns
            except OSError:
                pass  # gone: the write will be a conflict
        return entry
    op = "trash" if change.reason == "trash" and change.to.startswith(TRASH_DIR + "/") else "move"
    return journal_mod.Change(n, op, change.path, digest(change.before), to=change.to)


_RENAME_NOREPLACE = 1


def _move(root: Path, move: Move, inside: str) -> None:
    """Rename ``move.path`` to ``move.to`` if it still holds ``move.before``
    and ``move.to`` does not exist (never over a file).  Raises
    :class:`Conflict`, :class:`TargetError` or OSError."""
    source = _vault_target(root, move.path)
    dest = _vault_target(root, move.to)
    _check_folder(source.parent, inside)
    info = _check_target(source, follow_symlinks=False)
    if info is None:
        raise Conflict("moved or deleted since it was read; not moved")
    with open(source, "rb") as handle:
        if handle.read() != move.before:
            raise Conflict("changed since it was read; not moved")
    if os.path.lexists(dest):
        raise Conflict(f"{move.to} exists; autograph never moves a file over another")
    folder = dest.parent
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        owner = _owner_for_new(Path(inside))
        if owner is not None:
            top = Path(inside)
            for part in Path(move.to).parent.parts:
                top = top / part
                if top.stat().st_uid != owner[0]:
                    os.chown(top, *owner)
    _check_folder(folder, inside)
    if not _rename_noreplace(str(source), str(dest)):
        if os.path.lexists(dest):
            raise Conflict(f"{move.to} exists; autograph never moves a file over another")
        os.rename(source, dest)
    _fsync_dir(folder)
    _fsync_dir(source.parent)
    with open(dest, "rb") as handle:
        moved = handle.read()
    if moved != move.before:  # changed during the move: it goes back, theirs
        if not os.path.lexists(source):
            os.rename(dest, source)
        raise Conflict("changed while being moved; left in place")


def _rename_noreplace(a: str, b: str) -> bool:
    """``renameat2(RENAME_NOREPLACE)``: rename unless ``b`` exists (then
    FileExistsError); False when the system cannot."""
    if not _renameat2():
        return False
    import ctypes

    at_fdcwd = -100
    if _exchange_fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_NOREPLACE) == 0:
        return True
    err = ctypes.get_errno()
    if err == errno.EEXIST:
        raise Conflict(f"{b} exists; autograph never moves a file over another")
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), a)


def _changed_after(root: Path, result: Result, holds: dict[str, bytes], planned) -> list[tuple]:
    """``(change number, change, bytes now or None)`` of every written path
    that no longer holds the bytes written (another writer came after)."""
    numbers = {change.path: (n, change) for n, (change, _) in enumerate(planned, 1)}
    found = []
    for path in list(result.written):
        if path not in holds:
            continue  # a move or a trash: checked as it was made
        try:
            now = read_regular(_vault_target(root, path))
        except (OSError, PathError):
            now = None
        if now != holds[path]:
            found.append((*numbers[path], now))
    return found


def _edited_on_top(change, now: bytes | None) -> bytes | None:
    """When ``now`` holds our edit with another writer's on top, their
    version without ours (what an undo puts back; ``b""`` for a file we
    created, which has none); else None (a conflict).

    Two cases are told apart with certainty: lines appended to what we
    wrote (the most common edit on top), and an edit on lines apart from
    ours, with a line of context between (:func:`merge3` both ways: taking
    ours out of ``now``, then putting it back, gives ``now``).  Anything
    closer is a conflict: with repeated lines a line diff can place their
    edit on the wrong line, and an undo must not change a line nobody
    edited."""
    if now is None or not isinstance(change, Edit) or not change.after:
        return None
    before, after = change.before, change.after
    if now.startswith(after):
        if before is None:
            return b""
        tail = now[len(after) :]
        if before and not before.endswith((b"\n", b"\r")) and after.endswith((b"\n", b"\r")):
            before += b"\r\n" if after.endswith(b"\r\n") else after[-1:]  # their line starts a line
        return before + tail
    if before is None or _slides(before, after) or _slides(after, now):
        return None
    theirs = merge3(after, before, now)
    if theirs is None or merge3(before, after, theirs) != now:
        return None
    return theirs


def _slides(old: bytes, new: bytes) -> bool:
    """Whether a change from ``old`` to ``new`` could be placed one line up
    or down (the lines it adds or removes repeat the line beside them, as
    blank lines do): a line diff then picks one place of several, and a
    merge built on it could move an edit to a line its writer never touched."""
    import difflib

    a, b = old.splitlines(True), new.splitlines(True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for lines, start, stop in ((a, i1, i2), (b, j1, j2)):
            if start < stop and (
                (start > 0 and lines[start - 1] == lines[stop - 1])
                or (stop < len(lines) and lines[stop] == lines[start])
            ):
                return True
    return False


def _call_changed_again(result: Result, path: str) -> None:
    """Move ``path`` from written to conflicts: another writer replaced what
    was written (an editor saving its own copy over it)."""
    result.written.remove(path)
    again = (
        "changed again after it was written, by another writer whose edit is not apart from ours; "
        "left as it is now (undo.py leaves it too)"
    )
    if path not in {item.path for item in result.conflicts}:
        result.conflicts.append(Skipped(path, again))
    else:
        result.conflicts[:] = [
            Skipped(c.path, f"{c.error}; then it {again}", c.copy) if c.path == path else c for c in result.conflicts
        ]


class _JournalWriter:
    """Writes one run's journal (the format is :mod:`journal`'s)."""

    def __init__(self, folder: Path, run: journal_mod.Run):
        self.folder, self.run, self.size = folder, run, 0

    @classmethod
    def begin(cls, root: Path, run_id: str, command: str, args: list[str], undoes: str | None) -> _JournalWriter:
        """Make ``.graph/journal/<run-id>/`` with ``run.json`` (running), fsynced."""
        folder = derived_path(root, f"{journal_mod.FOLDER}/{run_id}/run.json").parent  # made here, ids are unique
        run = journal_mod.Run(run_id, folder, command, [str(a) for a in args], _now(), None, "running", undoes)
        writer = cls(folder, run)
        writer._write_run()
        _fsync_dir(folder.parent)
        return writer

    def _write_run(self) -> None:
        replace_file(self.folder / "run.json", _read_or_none(self.folder / "run.json"), self._run_bytes())

    def _run_bytes(self) -> bytes:
        # ASCII: an argument that is not UTF-8 (a vault path) is a lone surrogate,
        # which json writes as \udcff and reads back as the same string
        return (json.dumps(self.run.summary(), ensure_ascii=True) + "\n").encode("ascii")

    def _append(self, name: str, data: bytes) -> tuple[int, int]:
        fd = _open_derived(self.folder / name, os.O_WRONLY | os.O_APPEND)
        try:
            offset = os.fstat(fd).st_size
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return offset, len(data)

    def record(self, changes: list[tuple[journal_mod.Change, bytes | None]]) -> None:
        """Write ahead: every change and the bytes before it, fsynced before
        any file of the run is touched."""
        blob = bytearray()
        for change, data in changes:
            if data is not None:
                change.offset, change.length = self.size + len(blob), len(data)
                blob += data
        if blob:
            self._append("before.bin", bytes(blob))
            self.size += len(blob)
        lines = "".join(json.dumps(c.as_dict(), ensure_ascii=False) + "\n" for c, _ in changes)
        self._append("entries.jsonl", lines.encode("utf-8"))
        self.run.changes.extend(change for change, _ in changes)
        self._write_run()

    def keep(self, data: bytes) -> tuple[int, int]:
        """Keep more bytes (what an undo puts back); returns where."""
        where = self._append("before.bin", data)
        self.size += len(data)
        return where

    def finish(self, outcomes: list[dict]) -> None:
        """What happened to each change; the run is done."""
        lines = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in outcomes)
        if lines:
            self._append("entries.jsonl", lines.encode("utf-8"))
        self.run.finished = _now()
        self.run.state = "done"
        self._write_run()


def _read_or_none(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def mark_run(root: Path, run_id: str, state: str) -> None:
    """Set a journaled run's ``state`` (``rolled-back`` after a recovery)."""
    path = derived_path(root, f"{journal_mod.FOLDER}/{run_id}/run.json")
    before = _read_or_none(path)
    data = json.loads(before.decode("utf-8")) if before else {}
    data["state"] = state
    replace_file(path, before, (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8"))


# Seconds between two looks for old journals.  A look reads every run's
# folder, so doing it after every write made a write cost grow with the runs
# kept (111 ms at 600 runs); an agent writing cards all day would pay that
# hundreds of times.
PRUNE_INTERVAL = 600.0
_PRUNED_STAMP = ".pruned"  # in .graph/journal/: its mtime is the last look


def _prune_due(root: Path) -> bool:
    """True when no run looked for old journals in the last
    :data:`PRUNE_INTERVAL` seconds (the stamp's mtime)."""
    stamp = Path(os.path.realpath(root)) / GRAPH_DIR / journal_mod.FOLDER / _PRUNED_STAMP
    try:
        return time.time() - stamp.stat().st_mtime >= PRUNE_INTERVAL
    except OSError:
        return True


def prune_journals(root: Path, keep_days: float, max_mb: float) -> list[str]:
    """Remove old journals (:func:`journal.prunable`); returns their run ids.
    Sets the stamp :func:`apply` reads to look again only after
    :data:`PRUNE_INTERVAL` seconds."""
    import shutil

    graph = Path(os.path.realpath(root)) / GRAPH_DIR
    removed = journal_mod.prunable(graph, keep_days, max_mb)
    for run_id in removed:
        shutil.rmtree(graph / journal_mod.FOLDER / run_id, ignore_errors=True)
    # the time as its text: a stamp whose bytes never change might not be rewritten
    write_derived(root, f"{journal_mod.FOLDER}/{_PRUNED_STAMP}", f"{time.time()}\n".encode(), durable=False)
    return removed


def recover(root: Path) -> list[tuple[str, Result]]:
    """Roll back every run that did not finish (killed mid-way): each file
    it changed goes back to its bytes before, unless someone changed it
    since (then it is reported, left alone).  Each rollback is itself a
    journaled run (``undoes`` names the run).  Call under the writer lock
    (:func:`writer_lock` calls it when its previous holder died)."""
    graph = Path(os.path.realpath(root)) / GRAPH_DIR
    done = []
    for run in journal_mod.unfinished(graph):
        from .undo import plan_undo  # undo plans with store's own kinds of change

        changes, _ = plan_undo(root, run, partial=True)
        result = apply(root, changes, command="recover", args=["recover", run.id], undoes=run.id)
        mark_run(root, run.id, "rolled-back")
        done.append((run.id, result))
    return done


def _os_error(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"not written: {reason.lower() if reason else exc.__class__.__name__}"


def _save_conflict(root: Path, run_id: str, path: str, late: _LateWrite) -> str:
    """Keep another writer's version of ``path`` as
    ``.graph/conflicts/<run-id>/<path>`` (a second one of the same run gets
    ``.2``...); returns that vault path.  Its file is moved there when it is
    still linked and on the same file system (no space needed, mode, owner
    and attributes kept), else copied with the note's mode and owner."""
    name = f"{CONFLICTS_DIR}/{run_id}/{path}"
    target = derived_path(root, name)
    for n in range(2, 100):
        if not os.path.lexists(target):
            break
        name = f"{CONFLICTS_DIR}/{run_id}/{path}.{n}"
        target = derived_path(root, name)
    if late.held is not None:
        try:
            os.link(late.held, target)  # never over an existing name
            _unlink_quietly(late.held)
            return f"{GRAPH_DIR}/{name}"
        except OSError:
            pass
    tmp = _write_temporary(
        target.parent, late.late, True, stat.S_IMODE(late.info.st_mode), (late.info.st_uid, late.info.st_gid)
    )
    try:
        os.link(tmp, target)
    finally:
        _unlink_quietly(tmp)
    return f"{GRAPH_DIR}/{name}"


def diff(edit: Edit | Trash | Move) -> str:
    """A unified diff of one edit (``a/PATH`` → ``b/PATH``); binary-safe.
    A :class:`Move` or :class:`Trash` changes no byte: one line names where
    the file goes."""
    import difflib  # only diffs need it; keep start-up fast

    if isinstance(edit, Move):
        return f"rename {edit.path} -> {edit.to}\n"
    if isinstance(edit, Trash):
        return f"move {edit.path} -> {TRASH_DIR}/<run-id>/{edit.path}\n"
    before = _diff_lines(edit.before or b"")
    after = _diff_lines(edit.after)
    return "".join(difflib.unified_diff(before, after, f"a/{edit.path}", f"b/{edit.path}"))


def _diff_lines(data: bytes) -> list[str]:
    """Lines for a diff; a last line without a newline gets git's marker."""
    lines = data.decode("utf-8", "replace").split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1] + "\n\\ No newline at end of file\n")
    return out


# ---------------------------------------------------------------------------
# Files outside the vault's notes: outputs named on the command line, and
# derived files under .graph/


def write_output(
    path: str | os.PathLike,
    data: bytes,
    overwrite: bool = False,
    follow_symlinks: bool = False,
    vault: str | os.PathLike | None = None,
) -> Path:
    """Write a file named on the command line (``-o FILE``).

    Only a regular file is replaced (and only with ``overwrite``), or a new
    file created in a folder that exists; a device, FIFO, socket or folder
    is refused, and so is a symlink unless ``follow_symlinks`` (then the
    file it points to is written).  ``vault``: the root of the vault the
    command reads; a Markdown path (``.md``, any case) inside it and
    outside its ``.graph/`` is refused, even with ``overwrite``: an output
    is not journaled, so it must never take a note's place.  Raises
    :class:`TargetError` with a message that says what to do,
    :class:`Conflict` if the file changes while it is written, OSError for
    I/O failures.
    """
    target = Path(path)
    if os.path.islink(target) and not follow_symlinks:
        raise TargetError(f"{target} is a symlink; give the file it points to, or another name")
    real = Path(os.path.realpath(target)) if follow_symlinks else target
    if not real.parent.is_dir():
        raise TargetError(f"{real.parent} is not an existing folder; create it first")
    if vault is not None and _note_of(vault, real):
        raise TargetError(
            f"{target} is a note's place in the vault, and an output is not journaled (undo.py could not "
            f"bring the note back); write it outside the vault or under {GRAPH_DIR}/"
        )
    try:
        info = _check_target(real, follow_symlinks=False)
    except TargetError as exc:
        raise TargetError(f"{target} {exc}") from None
    current = None
    if info is not None:
        if not overwrite:
            raise TargetError(f"{target} exists; review it, or pass --force to replace it")
        with open(real, "rb") as handle:
            current = handle.read()
    try:
        replace_file(real, current, data, make_folders=False)
    except TargetError as exc:
        raise TargetError(f"{target} {exc}") from None
    return real


def _note_of(vault: str | os.PathLike, path: Path) -> bool:
    """Whether ``path`` (its folder resolved) is a Markdown file's place in
    ``vault``, outside its ``.graph/``."""
    real_root = os.path.realpath(vault)
    real = os.path.join(os.path.realpath(path.parent), path.name)
    if not _inside(real, real_root) or not path.name.lower().endswith(".md"):
        return False
    return not _inside(real, os.path.join(real_root, GRAPH_DIR))


def derived_path(root: Path, name: str, create: bool = True) -> Path:
    """The path of ``.graph/<name>`` in the vault, its folders created.

    Raises :class:`PathError` if ``.graph`` or any folder or file below it is a
    symlink, or a folder on the way is not a folder: a derived file is
    written only inside the vault's own ``.graph/``, never through a link
    onto a note or out of the vault.  Folders made by root belong to the
    vault folder's owner, so that person's own runs can write there next.
    """
    parts = [GRAPH_DIR, *name.split("/")]
    if ".." in parts or any(not part for part in parts):
        raise PathError(f"{name!r}: not a file name under {GRAPH_DIR}/")
    path = Path(os.path.realpath(root))
    for index, part in enumerate(parts):
        owner = _owner_for_new(path) if create else None
        path = path / part
        if path.is_symlink():
            raise PathError(f"{path}: is a symlink; autograph writes only inside the vault's own {GRAPH_DIR}/ folder")
        if index < len(parts) - 1:
            if os.path.lexists(path) and not path.is_dir():
                raise PathError(f"{path}: is not a folder; move it away so autograph can keep its files there")
            if create and not path.is_dir():
                try:
                    path.mkdir()
                except FileExistsError:
                    pass  # made by a run beside this one
                else:
                    if owner is not None:
                        os.chown(path, *owner)
    return path


def _open_derived(path: Path, flags: int) -> int:
    """Open (creating) a derived file that is appended to or locked, never
    through a symlink; a new one made by root belongs to its folder's owner."""
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        fd = -1
    if fd < 0:
        fd = os.open(path, flags)  # a FIFO without a reader fails here (ENXIO), never waits
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise TargetError(f"{path} is not a regular file; move it away so autograph can keep its files there")
        return fd
    owner = _owner_for_new(path.parent)
    if owner is not None:
        os.fchown(fd, *owner)
    return fd


def write_derived(root: Path, name: str, data: bytes, durable: bool = True) -> Path:
    """Atomically write ``.graph/<name>`` (a generated file; last writer wins).
    ``durable=False`` skips fsync, for caches.  Temporary files an earlier,
    killed writer of the same folder left (10 minutes old or more) are
    removed first.  Raises :class:`PathError` for symlinks under ``.graph``
    (see :func:`derived_path`)."""
    target = derived_path(root, name)
    _sweep_folder(target.parent, time.time() - 600)
    current = None
    if _check_target(target, follow_symlinks=False) is not None:  # a FIFO there is refused, never read
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            current = _read_fd(fd)
        finally:
            os.close(fd)
    replace_file(target, current, data, durable)
    return target


def write_derived_chunks(root: Path, name: str, chunks) -> Path:
    """Write ``.graph/<name>`` from an iterable of bytes, piece by piece, so a
    large generated file (the note cache of a big vault) never sits in memory
    whole.  Not durable (no fsync) and last writer wins, as for caches: the
    pieces go to a temporary file beside it that is renamed into place.
    Refuses what :func:`write_derived` refuses (symlinks under ``.graph``, a
    FIFO or device in its place)."""
    target = derived_path(root, name)
    _sweep_folder(target.parent, time.time() - 600)
    info = _check_target(target, follow_symlinks=False)
    if info is None:
        mode, owner = 0o644, _owner_for_new(target.parent)
    else:
        mode, owner = stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid)
    tmp = _write_temporary(target.parent, chunks, durable=False, mode=mode, owner=owner)
    try:
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return target


def _sweep_folder(folder: Path, older_than: float) -> None:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if _TMP_NAME.match(name):
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
                if stat.S_ISREG(info.st_mode) and info.st_mtime < older_than:
                    os.unlink(path)
            except OSError:
                pass


def discard_derived(root: Path, name: str) -> None:
    """Remove ``.graph/<name>`` if it is there: derived data only (a damaged
    search index, say), which is rebuilt, never a note.  A symlink under
    ``.graph`` raises :class:`PathError` (see :func:`derived_path`);
    anything but a regular file raises :class:`TargetError`."""
    target = derived_path(root, name, create=False)
    if _check_target(target, follow_symlinks=False) is None:
        return
    try:
        os.unlink(target)
    except FileNotFoundError:
        pass  # removed by a run beside this one


def append_line(root: Path, name: str, line: str) -> Path:
    """Append one line to ``.graph/<name>`` with a single ``O_APPEND`` write,
    so concurrent runs never interleave within a line."""
    line = line[:-1] if line.endswith("\n") else line
    if "\n" in line or "\r" in line:
        raise ValueError("append_line writes one line; the text holds a line break")
    target = derived_path(root, name)
    data = (line + "\n").encode("utf-8")
    fd = _open_derived(target, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return target
