"""The atomic replace of one file, with its checks, and a write that lands meanwhile kept.

:func:`replace_file` (and the store's batches through :func:`_swap`) replace
a file only while it holds the bytes the plan was made from:

1. open the file, check its bytes; write a temporary file beside it (flush,
   fsync, the old file's mode, owner, group and extended attributes);
2. right before the swap, check again through the open descriptor (bytes,
   size, mtime, ctime, inode) and by path (the same inode is still there);
3. swap the temporary file in atomically (Linux ``renameat2`` exchange,
   else ``os.replace``), then look at the old file once more: POSIX has no
   compare-and-rename, so another writer can still land a write in the old
   file (or rename its own file over the path) between the check and the
   swap.  Such a write is never lost silently (:func:`_settle`): our edit is
   merged on top of it when the two touch different lines
   (:func:`merge.merge_note`), else the other version is saved (a conflict
   copy) or put back in place of ours.

A new file is created with ``os.link``, never over a file that appeared
meanwhile.  ``_test_hook`` is a test seam at each window of a write.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import time
from pathlib import Path

from ..read.jsonfile import file_kind
from .confine import (
    PathError,
    TargetError,
    check_folder,
    check_target,
    read_fd,
    read_regular,
    stat_signature,
    why_refused,
)

__all__ = ["Conflict", "replace_file"]


_TMP_PREFIX = ".autograph-"
_TMP_SUFFIX = ".tmp"
TMP_NAME = re.compile(r"\.autograph-[A-Za-z0-9_]+\.tmp\Z")


# A test seam, never set by the product: called as hook(stage, path) at
# "read" (the file opened and its bytes checked), "temp-written" (the new
# version written, before the last check), "checked" (after the last check,
# right before the swap) and "swapped" (before the old file is looked at
# again), so a test can land a concurrent write in each window without
# sleeping.
_test_hook = None


class Conflict(Exception):
    """The file changed since it was read; the edit was not written."""


def umask_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def owner_for_new(folder: Path) -> tuple[int, int] | None:
    """Run as root, a new file belongs to its folder's owner and group, so
    that the person whose vault it is can still edit and remove it."""
    if os.geteuid() != 0:
        return None
    info = os.stat(folder)
    return (info.st_uid, info.st_gid)


def write_temporary(
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
        unlink_quietly(tmp)
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


def unlink_quietly(path: str) -> None:
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


_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP)  # the file system cannot
_RENAME_NOREPLACE = 1


def _rename_at2(a: str, b: str, flags: int) -> int | None:
    """``renameat2(a, b, flags)``: 0 when it was done, else its ``errno``;
    None where the system has no ``renameat2``."""
    if not _renameat2():
        return None
    import ctypes

    at_fdcwd = -100
    if _exchange_fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), flags) == 0:
        return 0
    return ctypes.get_errno()


def _exchange(a: str, b: str) -> bool:
    """Swap the files at ``a`` and ``b`` atomically (Linux ``renameat2``
    with ``RENAME_EXCHANGE``).  False when the system or file system cannot;
    the caller then uses ``os.replace``."""
    err = _rename_at2(a, b, _RENAME_EXCHANGE)
    if err is None or err in _UNSUPPORTED:
        return False
    if err:
        raise OSError(err, os.strerror(err), b)
    return True


def rename_noreplace(a: str, b: str) -> bool:
    """``renameat2(RENAME_NOREPLACE)``: rename unless ``b`` exists (then
    :class:`Conflict`); False when the system cannot."""
    err = _rename_at2(a, b, _RENAME_NOREPLACE)
    if err == errno.EEXIST:
        raise Conflict(f"{b} exists; autograph never moves a file over another")
    if err is None or err in _UNSUPPORTED:
        return False
    if err:
        raise OSError(err, os.strerror(err), a)
    return True


class Swap:
    """A replaced file whose old version is still open (``fd``) and, where
    the swap was an exchange, still linked at ``held`` (a temporary name
    beside it), to look for late writes; ``meta``: ``(mode, uid, gid)`` of
    the old file when it was checked.  (A plain class: ``dataclasses``
    imports ``inspect``, 4 ms of every command's start.)"""

    __slots__ = ("target", "fd", "before", "after", "held", "meta")

    def __init__(self, target: Path, fd: int, before: bytes, after: bytes, held: str | None, meta: tuple = ()):
        self.target, self.fd, self.before, self.after, self.held, self.meta = target, fd, before, after, held, meta


class LateWrite(Exception):
    """Another writer's version appeared after the last check: ``late``
    holds its bytes, ``held`` the temporary name its file is still linked
    at (or None), ``info`` its stat; ``meta``: what changed is its mode,
    owner or links, so it must go back in place whole.  Our ``after`` is in
    the file."""

    def __init__(self, target: Path, before: bytes, after: bytes, late: bytes, held: str | None, info, meta=False):
        super().__init__(str(target))
        self.target, self.before, self.after, self.late, self.held, self.info = target, before, after, late, held, info
        self.meta = meta


def _swap(
    target: Path,
    before: bytes | None,
    after: bytes,
    durable: bool = True,
    make_folders: bool = False,
    inside: str | None = None,
    mtime_ns: int | None = None,
) -> Swap | None:
    """Replace ``target`` (see the module docstring, steps 2-5).

    Returns a :class:`Swap` holding the old file (the caller looks at it
    again with :func:`look_again`), or None for a new file.  ``inside``:
    the real path the folder must stay in.  Raises :class:`Conflict`,
    :class:`TargetError` or OSError, the file then as it was; or
    :class:`LateWrite` when another writer renamed its file over the path
    during the swap (ours is in place, theirs in the exception)."""
    folder = target.parent
    if not folder.is_dir():
        if before is not None:
            raise Conflict("its folder was moved or deleted since it was read; not written")
        if not make_folders:
            raise TargetError(f"folder {folder} does not exist; create it first")
        folder.mkdir(parents=True, exist_ok=True)
    check_folder(folder, inside)
    info = check_target(target, follow_symlinks=False)
    if info is None:
        if before is not None:
            raise Conflict("deleted since it was read; not written")
        return _create(target, after, durable, mtime_ns)
    if before is None:
        raise Conflict("created by someone else since the plan was made; not written")
    why = why_refused(info)
    if why is not None:
        raise TargetError(f"{why}; not written")
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino) or not stat.S_ISREG(opened.st_mode):
            raise Conflict("replaced by another file since it was read; not written")
        if read_fd(fd, opened.st_size) != before:
            raise Conflict("changed since it was read; not written")
        if _test_hook:
            _test_hook("read", str(target))
        owner = (opened.st_uid, opened.st_gid)
        tmp = write_temporary(folder, after, durable, stat.S_IMODE(opened.st_mode), owner, fd, mtime_ns)
        # the folder itself, so the temporary file is removed even if the folder moves meanwhile
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        tmp_name = os.path.basename(tmp)
        held = None
        try:
            if _test_hook:
                _test_hook("temp-written", str(target))
            now = os.fstat(fd)
            if stat_signature(now) != stat_signature(opened) or read_fd(fd, now.st_size) != before:
                raise Conflict("changed while the new version was being written; not written")
            there = os.lstat(target)
            if (there.st_dev, there.st_ino) != (opened.st_dev, opened.st_ino):
                raise Conflict("replaced by another file while the new version was being written; not written")
            check_folder(folder, inside)
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
                    raise LateWrite(target, before, after, late, tmp, swapped_in)
            else:
                os.replace(tmp, target)
        except LateWrite:
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
            fsync_dir(folder)
        if _test_hook:
            _test_hook("swapped", str(target))
        swap, fd = Swap(target, fd, before, after, held, (opened.st_mode, opened.st_uid, opened.st_gid)), -1
        return swap
    finally:
        if fd >= 0:
            os.close(fd)


def _create(target: Path, after: bytes, durable: bool, mtime_ns: int | None = None) -> None:
    """Create ``target`` with ``after``; a file that appears meanwhile is
    never replaced (``os.link`` fails on an existing name)."""
    owner = owner_for_new(target.parent)
    tmp = write_temporary(target.parent, after, durable, umask_mode(), owner, mtime_ns=mtime_ns)
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
        unlink_quietly(tmp)
    if durable:
        fsync_dir(target.parent)


def look_again(swap: Swap) -> LateWrite | None:
    """The old file's late version, if another writer changed it after the
    swap; else None, and the old file is let go (closed, unlinked)."""
    try:
        now = os.fstat(swap.fd)
        late = read_fd(swap.fd, now.st_size)
    finally:
        os.close(swap.fd)
    if late != swap.before:
        return LateWrite(swap.target, swap.before, swap.after, late, swap.held, now)
    if swap.held is not None:
        unlink_quietly(swap.held)
    return None


def late_now(swap: Swap) -> LateWrite | None:
    """Look at the old file right after its swap: its late version (the old
    file let go), or None, and then only its descriptor stays open (its
    temporary name is removed) for :func:`look_again` later.  A change of
    its mode, owner or links (a chmod 444, a new hard link) in the last
    moment counts too: then it goes back in place (``meta``)."""
    now = os.fstat(swap.fd)
    links = 1 if swap.held is not None else 0
    if (now.st_mode, now.st_uid, now.st_gid, now.st_nlink) != (*swap.meta, links) and swap.held is not None:
        late = read_fd(swap.fd, now.st_size)
        os.close(swap.fd)
        return LateWrite(swap.target, swap.before, swap.after, late, swap.held, now, meta=True)
    if read_fd(swap.fd, now.st_size) != swap.before:
        return look_again(swap)
    if swap.held is not None:
        unlink_quietly(swap.held)
        swap.held = None
    return None


def fsync_dir(folder: Path) -> None:
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
        late = look_again(swap) if swap is not None else None
    except LateWrite as caught:
        late = caught
    if late is not None:
        outcome = _settle(late, save=None)
        if outcome.kept_ours is None:
            raise Conflict(outcome.message)


class _Settled:
    """How a late write was kept: ``message`` for the report, ``copies``
    (where other versions were saved), ``kept_ours``: the bytes of ours now
    in the file (merged or as written), or None when theirs was put back."""

    __slots__ = ("message", "copies", "kept_ours")

    def __init__(self, message: str, copies: list[str], kept_ours: bytes | None):
        self.message, self.copies, self.kept_ours = message, copies, kept_ours


def _settle(late: LateWrite, save) -> _Settled:
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
        from .merge import merge_note  # only when someone wrote meanwhile: not at every start

        merged = merge_note(current.before, current.after, current.late) if _is_note(current.target) else None
        if merged is None:
            break
        try:
            swap = _swap(current.target, current.after, merged)
            again = look_again(swap)
        except LateWrite as caught:
            again = caught
        except (Conflict, TargetError, OSError):
            break  # the file moved on again: its newest version is in it; ours and `current` are not
        if current.held is not None:
            unlink_quietly(current.held)  # merged: the file holds both
        if again is None:
            return _Settled(_MERGED, copies, merged)
        current = again
    kept = current.after
    try:
        if save is None:
            raise OSError("no place for a copy")
        copies.append(save(current))
        if current.held is not None:
            unlink_quietly(current.held)
        message = f"changed while being written; that version was saved as {copies[-1]}"
        if len(copies) > 1:
            message = f"changed while being written, more than once; those versions were saved as {', '.join(copies)}"
        return _Settled(message, copies, kept)
    except (OSError, TargetError, PathError, Conflict) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return _put_back(current, f"changed while being written ({why})", copies)


def _put_back(current: LateWrite, what: str, copies: list[str]) -> _Settled:
    """The other writer's version goes back in place of ours (no copy, or
    its mode, owner or links changed)."""
    try:
        if current.held is not None and _exchange(current.held, str(current.target)):
            unlink_quietly(current.held)
        else:
            _finish(_swap(current.target, current.after, current.late))
        return _Settled(f"{what}; left as the other writer made it", copies, None)
    except (OSError, TargetError, Conflict, LateWrite) as exc:
        lost = current.held or "nowhere"
        message = f"{what}; the other version could not be put back ({exc}); it is at {lost}"
        return _Settled(message, copies, current.after)


def _is_note(path: Path) -> bool:
    return path.name.lower().endswith(".md")


_MERGED = "changed while being written; that edit was kept and this one merged on top"


def _finish(swap: Swap | None) -> None:
    if swap is not None:
        late = look_again(swap)
        if late is not None:
            raise late
