"""Undo: taking a finished run back, whole or not at all.

A person or an agent undoes a journaled run (``undo.py undo RUN``).  Each
file goes back as write/rollback.py takes files back (only while it holds
what the run left in it; a change since is a conflict, never forced), with
one more rule for a finished run: one that created, moved or trashed files
is taken back whole or not at all, since a part would leave links to a
stale copy or to nothing.  The undo itself is a journaled run
(:func:`store.apply` with ``undoes``), so it can be undone in turn.
"""

from __future__ import annotations

import os
from pathlib import Path

from .changes import Edit
from .confine import would_refuse
from .journal import Run
from .rollback import _named, plan_rollback

__all__ = ["plan_undo"]


def plan_undo(root: Path, run: Run, partial: bool = False) -> tuple[list, list[dict]]:
    """The store changes that take ``run`` back, and the files that cannot
    go back: ``(changes, conflicts)``, each conflict ``{path, error}``.

    Works for a finished run (each change's ``result`` and ``now``) and
    for one that stopped mid-way (no results: a file is rolled back when it
    holds the bytes the run planned, left when it still holds its bytes
    before).  A finished run that created, moved or trashed a file is taken
    back whole or not at all: when one of its files cannot go back (changed
    since, or something stands where it would go), nothing is undone, since
    a part would leave links to a stale copy or to nothing (a moved note
    back at its old name while the note edited at the new one stays).
    ``partial`` takes back what can be, file by file, as for a run that
    stopped (a move that failed half way is rolled back so).  Raises
    OSError when the journal's saved bytes cannot be read.
    """
    changes, conflicts = plan_rollback(root, run)
    if partial or not changes:
        return changes, conflicts
    done = [c for c in run.changes if c.result not in ("conflict", "failed")]
    finished = any(c.result is not None for c in run.changes)
    whole = finished and not partial and any(c.op != "write" or c.before is None for c in done)
    if whole:  # a file the store would refuse to write would stop the undo half way
        for step in changes:
            why = would_refuse(os.path.join(root, step.path)) if isinstance(step, Edit) else None
            if why:
                conflicts.append({"path": step.path, "error": f"{why}; it cannot go back"})
    if conflicts and changes and whole:
        names = ", ".join(item["path"] for item in conflicts)
        why = (
            f"not undone: {names} cannot go back, and the run created, moved or trashed files, so nothing of it "
            "is undone (a part would leave links to a stale copy or to nothing)"
        )
        conflicts += [{"path": _named(step), "error": why} for step in changes]
        return [], conflicts
    return changes, conflicts
