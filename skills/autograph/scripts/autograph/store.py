"""Every write autograph makes: atomic, change-checked, confined to the vault.

Operations never write files themselves.  They return :class:`Edit` objects
(the bytes a file held when it was read and the bytes it should hold) and
hand them to :func:`apply`, which for each edit:

1. confines the path to the vault (no ``..``, no absolute paths, no symlink
   that leads outside);
2. re-reads the file and skips the edit as a *conflict* if it no longer holds
   the expected bytes (an agent or a sync changed it meanwhile);
3. writes a temporary file in the same folder, flushes and fsyncs it, gives
   it the original file's mode, and ``os.replace``-s it over the original.

Derived files (reports, history, caches) live under ``.graph/`` and are
written with :func:`write_derived` and :func:`append_line`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Conflict",
    "Edit",
    "PathError",
    "append_line",
    "apply",
    "confine",
    "diff",
    "replace_file",
    "write_derived",
]

GRAPH_DIR = ".graph"


class PathError(ValueError):
    """A path from data would leave the vault (``..``, absolute, symlink out)."""


class Conflict(Exception):
    """The file changed since it was read; the edit was not written."""


@dataclass(frozen=True)
class Edit:
    """One planned change of one file.

    ``path`` is vault-relative with ``/``; ``before`` is the file's bytes
    when the plan was made (None: the file must not exist yet); ``after`` the
    bytes to write.  ``reason`` says why, for reports.
    """

    path: str
    before: bytes | None
    after: bytes
    reason: str = ""


def confine(root: Path, path: str) -> Path:
    """The absolute path of vault-relative ``path``; raises :class:`PathError`
    if it is absolute, climbs out with ``..``, or resolves (through symlinks)
    to a place outside the vault."""
    if not path or os.path.isabs(path) or path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise PathError(f"{path!r}: expected a path inside the vault, relative to its folder")
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        raise PathError(f"{path!r}: '..' would leave the vault")
    full = root / path
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise PathError(f"{path!r}: resolves outside the vault")
    return Path(real)


def replace_file(target: Path, before: bytes | None, after: bytes, durable: bool = True) -> None:
    """Atomically replace ``target`` with ``after`` if it still holds ``before``.

    ``before = None`` means the file must not exist.  The new file keeps the
    old file's permission bits.  ``durable=False`` skips the fsyncs (for
    caches, whose loss costs only time).  Raises :class:`Conflict` when the
    current content differs from ``before``; OSError for I/O failures (the
    original is then untouched).
    """
    try:
        current = target.read_bytes()
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        current, mode = None, None
    if current != before:
        raise Conflict(f"{target}: changed since it was read; not written")
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    import tempfile  # imported here: most runs never write a note

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(after)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        _fsync_dir(folder)


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


@dataclass
class Result:
    """What :func:`apply` did: paths written, and conflicts with their reason."""

    written: list[str]
    conflicts: list[tuple[str, str]]


def apply(root: Path, edits: list[Edit]) -> Result:
    """Write every edit whose file is unchanged since it was read.

    Raises :class:`PathError` (before writing anything) if any path would
    leave the vault.  A changed file is skipped and reported, never forced.
    """
    targets = [(edit, confine(root, edit.path)) for edit in edits]
    result = Result([], [])
    for edit, target in targets:
        if edit.before == edit.after:
            continue
        try:
            replace_file(target, edit.before, edit.after)
        except Conflict as exc:
            result.conflicts.append((edit.path, str(exc)))
        else:
            result.written.append(edit.path)
    return result


def diff(edit: Edit) -> str:
    """A unified diff of one edit (``a/PATH`` → ``b/PATH``); binary-safe."""
    import difflib  # only diffs need it; keep start-up fast

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


def derived_path(root: Path, name: str, create: bool = True) -> Path:
    """The path of ``.graph/<name>`` in the vault, its folders created.

    Raises :class:`PathError` if ``.graph`` or any folder or file below it is a
    symlink: a derived file is written only inside the vault's own
    ``.graph/``, never through a link onto a note or out of the vault.
    """
    parts = [GRAPH_DIR, *name.split("/")]
    if ".." in parts or any(not part for part in parts):
        raise PathError(f"{name!r}: not a file name under {GRAPH_DIR}/")
    path = Path(os.path.realpath(root))
    for index, part in enumerate(parts):
        path = path / part
        if path.is_symlink():
            raise PathError(f"{path}: is a symlink; autograph writes only inside the vault's own {GRAPH_DIR}/ folder")
        if create and index < len(parts) - 1 and not path.is_dir():
            path.mkdir(exist_ok=True)
    return path


def write_derived(root: Path, name: str, data: bytes, durable: bool = True) -> Path:
    """Atomically write ``.graph/<name>`` (a generated file; last writer wins).
    ``durable=False`` skips fsync, for caches.  Raises :class:`PathError` for
    symlinks under ``.graph`` (see :func:`derived_path`)."""
    target = derived_path(root, name)
    try:
        current = target.read_bytes()
    except FileNotFoundError:
        current = None
    replace_file(target, current, data, durable)
    return target


def append_line(root: Path, name: str, line: str) -> Path:
    """Append one line to ``.graph/<name>`` with a single ``O_APPEND`` write,
    so concurrent runs never interleave within a line."""
    line = line[:-1] if line.endswith("\n") else line
    if "\n" in line or "\r" in line:
        raise ValueError("append_line writes one line; the text holds a line break")
    target = derived_path(root, name)
    data = (line + "\n").encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return target
