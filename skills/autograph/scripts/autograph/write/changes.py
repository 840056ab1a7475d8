"""The changes a plan is made of, and what became of them.

An operation never writes: it returns changes, which :func:`store.apply`
carries out as one run.  :class:`Edit` (the bytes a file held when it was
read and the bytes it should hold), :class:`Trash` (to ``.trash/``:
nothing autograph removes is deleted) and :class:`Move` (a rename, never
over a file).  :class:`Result` says what happened to each (written, a
conflict with another writer, a failure), :class:`Skipped` why one did not
happen.  :func:`diff` shows one change as a unified diff.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from ..read.vault import TRASH_DIR

__all__ = ["Described", "Edit", "Move", "Result", "Skipped", "Trash", "diff", "new_run_id", "utc_now"]


class Edit:
    """One planned change of one file.

    ``path`` is vault-relative with ``/``; ``before`` is the file's bytes
    when the plan was made (None: the file must not exist yet); ``after`` the
    bytes to write.  ``reason`` says why, for reports.  ``mtime_ns`` sets
    the written file's modification time (undo gives a file back as it
    was); else it is the time of the write.

    Immutable.  ``after`` is kept as the part that differs from ``before``
    (a plan of a large vault holds thousands of edits that change a line of
    a note each: one copy of each note, not two) and given back whole.
    """

    __slots__ = ("path", "before", "reason", "mtime_ns", "_cut", "_middle")

    def __init__(
        self, path: str, before: bytes | None, after: bytes, reason: str = "", mtime_ns: int | None = None
    ) -> None:
        cut = None
        if before is not None and len(before) >= _SHARED_MIN and isinstance(after, bytes):
            head = _same_head(before, after)
            tail = _same_head(before[head:][::-1], after[head:][::-1])
            if head + tail >= _SHARED_MIN // 2:
                cut, after = (head, tail), after[head : len(after) - tail]
        for name, value in zip(self.__slots__, (path, before, reason, mtime_ns, cut, after), strict=True):
            object.__setattr__(self, name, value)

    @property
    def after(self) -> bytes:
        """The bytes to write."""
        if self._cut is None:
            return self._middle
        head, tail = self._cut
        return self.before[:head] + self._middle + self.before[len(self.before) - tail :]

    def replace(self, **changes) -> Edit:
        """This edit with ``changes`` (``reason=...``, any argument of the constructor)."""
        fields = {"path": self.path, "before": self.before, "after": self.after, "reason": self.reason}
        fields["mtime_ns"] = self.mtime_ns
        return Edit(**{**fields, **changes})

    def __reduce__(self):  # copy and pickle through the constructor (its attributes never change)
        return (Edit, (self.path, self.before, self.after, self.reason, self.mtime_ns))

    def __setattr__(self, name, value):
        raise AttributeError(f"an Edit does not change (use replace): {name}")

    def _key(self) -> tuple:
        return (self.path, self.before, self.after, self.reason, self.mtime_ns)

    def __eq__(self, other) -> bool:
        return self._key() == other._key() if isinstance(other, Edit) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Edit(path={self.path!r}, before={self.before!r}, after={self.after!r}, "
            f"reason={self.reason!r}, mtime_ns={self.mtime_ns!r})"
        )

    def described(self) -> Described:
        """What a dry run that shows no diff keeps of this edit: its path
        and reason (a plan of a large vault held every changed note's
        bytes only to say which notes would change)."""
        return Described(self.path, self.reason)


class Described:
    """An :class:`Edit` reported, never written: ``path`` and ``reason``
    alone (:meth:`Edit.described`)."""

    __slots__ = ("path", "reason")

    def __init__(self, path: str, reason: str) -> None:
        self.path, self.reason = path, reason

    def __repr__(self) -> str:
        return f"Described(path={self.path!r}, reason={self.reason!r})"


_SHARED_MIN = 256  # bytes: a smaller file's edit keeps its after whole


def _same_head(a: bytes, b: bytes) -> int:
    """How many leading bytes ``a`` and ``b`` share, by halving (each
    comparison a memcmp, not a loop over the bytes)."""
    low, high = 0, min(len(a), len(b))
    view_a, view_b = memoryview(a), memoryview(b)
    while low < high:
        middle = (low + high + 1) // 2
        if view_a[:middle] == view_b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


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


def utc_now() -> str:
    """Now in UTC as the journal and the lock state write it: ``2026-12-05T22:49:27Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
