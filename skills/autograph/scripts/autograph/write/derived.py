"""Files that are not notes: derived files under ``.graph/`` and outputs named on the command line.

Derived files (reports, caches, the search index, history, the journal,
conflict copies) live in the vault's own ``.graph/`` folder, which Obsidian
ignores; they are not writes of the vault (not journaled, last writer
wins).  Nothing is written through a symlink under ``.graph/``
(:func:`derived_path`), a FIFO or device in a derived file's place is
refused, and a large file is written from pieces (:func:`write_derived_chunks`).

An output named on the command line (``-o FILE``, :func:`write_output`)
replaces only a regular file and only when asked, and never takes a note's
place in the vault (it is not journaled, so undo could not bring it back).
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from ..read.location import is_inside
from ..read.vault import GRAPH_DIR
from .confine import PathError, TargetError, check_target, read_fd
from .replace import TMP_NAME, LateWrite, owner_for_new, replace_file, unlink_quietly, write_temporary

__all__ = [
    "CONFLICTS_DIR",
    "append_line",
    "derived_path",
    "discard_derived",
    "save_index",
    "write_derived",
    "write_derived_chunks",
    "write_output",
]


CONFLICTS_DIR = "conflicts"


def save_conflict(root: Path, run_id: str, path: str, late: LateWrite) -> str:
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
            unlink_quietly(late.held)
            return f"{GRAPH_DIR}/{name}"
        except OSError:
            pass
    tmp = write_temporary(
        target.parent, late.late, True, stat.S_IMODE(late.info.st_mode), (late.info.st_uid, late.info.st_gid)
    )
    try:
        os.link(tmp, target)
    finally:
        unlink_quietly(tmp)
    return f"{GRAPH_DIR}/{name}"


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
        info = check_target(real, follow_symlinks=False)
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
    if not is_inside(real, real_root) or not path.name.lower().endswith(".md"):
        return False
    return not is_inside(real, os.path.join(real_root, GRAPH_DIR))


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
    for attempt in range(3):
        try:
            return _made(root, parts, create)
        except FileNotFoundError:
            # .graph/ taken away as it was made (a writer lock's run that wrote nothing): make it again
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _made(root: Path, parts: list[str], create: bool) -> Path:
    path = Path(os.path.realpath(root))
    for index, part in enumerate(parts):
        owner = owner_for_new(path) if create else None
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


def open_derived(path: Path, flags: int) -> int:
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
    owner = owner_for_new(path.parent)
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
    if check_target(target, follow_symlinks=False) is not None:  # a FIFO there is refused, never read
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            current = read_fd(fd)
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
    info = check_target(target, follow_symlinks=False)
    if info is None:
        mode, owner = 0o644, owner_for_new(target.parent)
    else:
        mode, owner = stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid)
    tmp = write_temporary(target.parent, chunks, durable=False, mode=mode, owner=owner)
    try:
        os.replace(tmp, target)
    except BaseException:
        unlink_quietly(tmp)
        raise
    return target


def _sweep_folder(folder: Path, older_than: float) -> None:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if TMP_NAME.match(name):
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
    if check_target(target, follow_symlinks=False) is None:
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
    fd = open_derived(target, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return target


def save_index(index) -> None:
    """Store where the links a :class:`index.NoteIndex` resolved lead, in the
    index file it was served from (nothing without one).  A file that
    cannot take it only costs time next run: failures are ignored there."""
    if index.store is not None:
        index.store.save(index.resolved())
