"""Taking a run back, file by file: the changes that return each file to its bytes before the run.

The rollback of a run that did not finish (the store's :func:`store.recover`,
run by the next writer after a kill) and the first step of an undo
(write/undo.py, which adds the rule for finished runs).  A file goes back
only while it holds exactly what the run left in it (its SHA-256 in the
journal): a file changed since is a conflict, reported and left alone,
never forced.  What goes back:

* a file the run changed: its bytes before and its modification time (for
  a change merged on top of another writer's edit, that writer's version
  without ours);
* a file the run created: moved to ``.trash/<run-id>/`` (nothing is
  deleted);
* a file the run moved or trashed: moved back to where it was, unless
  something now stands there.

When a file the run moved or trashed is gone (``.trash/`` emptied) and
nothing stands at its old place, nothing of the run is taken back: the
run's other changes (a merge into the card that kept that file's text)
are reported, not taken back, so that text is never left nowhere.

Changes are taken back newest first, so chains unwind in order: each change
is judged against what its path will hold once the newer ones are taken
back (a note renamed and then rewritten in place goes back in two steps).
"""

from __future__ import annotations

import os
from pathlib import Path

from .changes import Edit, Move, Trash
from .journal import Change, Run, digest

__all__ = ["named_path", "plan_rollback"]


def plan_rollback(root: Path, run: Run) -> tuple[list, list[dict]]:
    """The changes that take ``run`` back file by file, and the files that
    cannot go back: ``(changes, conflicts)``, each conflict ``{path,
    error}``.  Works for a finished run (each change's ``result`` and
    ``now``) and for one that stopped mid-way (no results: a file is rolled
    back when it holds the bytes the run planned, left when it still holds
    its bytes before).  Raises OSError when the journal's saved bytes cannot
    be read.
    """
    changes: list = []
    conflicts: list[dict] = []
    lost: list[Change] = []
    pending: dict[str, bytes | None] = {}  # path -> what it holds once the steps planned so far ran

    def read(path: str) -> bytes | None:
        return pending[path] if path in pending else _read(root, path)

    for change in reversed(run.changes):
        if change.result in ("conflict", "failed"):
            continue  # the run did not change this file
        if change.op == "write":
            step = _undo_write(read, run, change)
        else:
            step = _undo_move(read, change)
            if step == _GONE.format(to=change.to) and read(change.path) is None:
                lost.append(change)
        if isinstance(step, str):
            conflicts.append({"path": change.path, "error": step})
        elif step is not None:
            changes.append(step)
            if isinstance(step, Move):
                pending[step.path], pending[step.to] = None, step.before
            else:
                pending[step.path] = step.after if isinstance(step, Edit) else None
    if lost:
        # a file the run moved away (a merged card in .trash/) is gone: taking back the rest (the
        # merge into the card that kept its text) would leave that text nowhere
        names = ", ".join(f"{c.path} (was at {c.to})" for c in lost)
        why = f"not undone: {names} went away since the run (.trash/ emptied?), so nothing of the run is undone"
        conflicts += [{"path": named_path(step), "error": why} for step in changes]
        return [], conflicts
    return changes, conflicts


def _read(root: Path, path: str) -> bytes | None:
    full = os.path.join(root, path)
    if not os.path.isfile(full) or os.path.islink(full):
        return None if not os.path.lexists(full) else b"\0not a regular file"
    with open(full, "rb") as handle:
        return handle.read()


def named_path(step) -> str:
    """The path a person knows a planned step's file by: where a moved or
    trashed file would go back, not where it is now (``.trash/...``)."""
    return step.to if isinstance(step, Move) else step.path


def _undo_write(read, run: Run, change: Change):
    current = read(change.path)
    now = digest(current)
    left = change.now if change.result in ("written", "merged") else change.after
    if now == change.before:
        return None  # as before the run: never written, or already taken back
    if now != left:
        if change.result is None and now is not None:
            return "changed since the run stopped; left as it is"
        return "changed since the run; left as it is" if current is not None else "deleted since the run"
    if change.before is None:
        if change.result == "merged":
            return "created by the run, then another writer added to it; left as it is"
        return Trash(change.path, current, "created by the run")
    where = change.restore if change.result == "merged" else (change.offset, change.length)
    if change.result == "merged" and change.restore is None:
        return "the run merged its edit with another writer's; they cannot be told apart, so it is left as it is"
    before = run.before_bytes(where)
    if change.result != "merged" and digest(before) != change.before:
        return "the journal's copy of the bytes before is damaged; left as it is"
    return Edit(change.path, current, before, "undo", mtime_ns=change.mtime)


def _undo_move(read, change: Change):
    moved = read(change.to)
    here = read(change.path)
    if moved is not None and digest(moved) == change.before and here is None:
        return Move(change.to, change.path, moved, "undo")
    if moved is None and digest(here) == change.before:
        return None  # never moved, or already back
    if here is not None:
        return f"{change.path} exists again; {change.to} stays where it is"
    if moved is None:
        return _GONE.format(to=change.to)
    return f"{change.to} changed since the run; left as it is"


_GONE = "{to} went away since the run; it cannot come back"
