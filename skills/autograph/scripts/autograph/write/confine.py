"""Confinement and refusals: where autograph may write, and what it never replaces.

Paths that come from data (frontmatter, a model's answer, a manifest) are
confined to the vault (:func:`confine`: no ``..``, no absolute path, no
symlinked folder leading out: :class:`PathError`).  A vault path as the walk
gives it is resolved with its folders followed but not its last part
(:func:`vault_target`), so a note that is itself a symlink is refused as one.

What is never replaced (:class:`TargetError`, :func:`would_refuse`): a
symlink, anything but a regular file, a file with several hard links, a file
this user may not write (a file without any write bit is someone's "do not
touch", root included), an immutable or append-only file.  Files are read
without following a symlink or waiting on a FIFO (:func:`read_regular`).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from ..read.jsonfile import file_kind
from ..read.location import is_inside

__all__ = ["PathError", "TargetError", "confine", "read_regular", "would_refuse"]


class PathError(ValueError):
    """A path from data would leave the vault (``..``, absolute, symlink out)."""


class TargetError(ValueError):
    """A file named for writing is not one autograph may replace (a device,
    a FIFO, a symlink where none is allowed, a folder that does not exist)."""


def confine(root: Path, path: str) -> Path:
    """The absolute path of vault-relative ``path``; raises :class:`PathError`
    if it is absolute, climbs out with ``..``, or resolves (through symlinks)
    to a place outside the vault.  The result is the real path of the file."""
    _check_relative(path)
    full = root / path
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if not is_inside(real, real_root):
        raise PathError(f"{path!r}: resolves outside the vault")
    return Path(real)


def _check_relative(path: str) -> None:
    if not path or os.path.isabs(path) or path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise PathError(f"{path!r}: expected a path inside the vault, relative to its folder")
    if ".." in path.replace("\\", "/").split("/"):
        raise PathError(f"{path!r}: '..' would leave the vault")


def vault_target(root: Path, path: str) -> Path:
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
    if not is_inside(real_folder, real_root) or not is_inside(os.path.realpath(target), real_root):
        raise PathError(f"{path!r}: resolves outside the vault")
    return Path(target)


def stat_signature(info: os.stat_result) -> tuple:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def would_refuse(path) -> str | None:
    """Why :func:`apply` would refuse to replace the existing file ``path``
    whatever it held (a symlink, not a regular file, several hard links, no
    write permission), or None.  For planning: a change of several files
    that must all be written can be refused whole, before any is written."""
    try:
        info = check_target(Path(path), follow_symlinks=False)
    except TargetError as exc:
        return str(exc)
    if info is None:
        return None
    why = why_refused(info)
    if why is None and locked_by_flag(path):
        why = "is immutable or append-only (chattr +i or +a)"
    return why


def why_refused(info: os.stat_result) -> str | None:
    """Why a file with ``info`` must not be replaced, by what stat shows."""
    if info.st_nlink > 1:
        return f"has {info.st_nlink} hard links; replacing it would split them"
    if not may_write(info):
        return "is read-only (no write permission for this user)"
    return None


_FS_IOC_GETFLAGS = 0x80086601  # Linux's _IOR('f', 1, long)


_FS_NO_REPLACE = 0x10 | 0x20  # FS_IMMUTABLE_FL, FS_APPEND_FL


def locked_by_flag(path) -> bool:
    """Whether Linux's file flags forbid replacing ``path`` (``chattr +i``
    or ``+a``): no mode bit shows them.  False where they cannot be read."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import fcntl
    except ImportError:  # a Python built without it: the flags cannot be read, as on other systems
        return False
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


def may_write(info: os.stat_result) -> bool:
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


def read_fd(fd: int, size_hint: int = 0) -> bytes:
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
        return read_fd(fd, info.st_size)
    finally:
        os.close(fd)


def check_target(target: Path, follow_symlinks: bool) -> os.stat_result | None:
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


def check_folder(folder: Path, inside: str | None) -> None:
    """The folder still leads where it did: inside the vault (a folder
    swapped for a symlink during a run must not take a write elsewhere)."""
    if inside is not None and not is_inside(os.path.realpath(folder), inside):
        raise TargetError(f"its folder {folder} now leads outside the vault (a symlink?); not written")
