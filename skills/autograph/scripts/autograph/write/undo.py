"""Undo: taking a finished run back, whole or not at all.

A person or an agent undoes a journaled run (``undo.py undo RUN``).  Each
file goes back as write/rollback.py takes files back (only while it holds
what the run left in it; a change since is a conflict, never forced), with
one more rule for a finished run: one that created, moved or trashed files
is taken back whole or not at all, since a part would leave links to a
stale copy or to nothing.  The undo itself is a journaled run
(:func:`store.apply` with ``undoes``), so it can be undone in turn.

Also what ``undo.py`` shows of the journal: runs found by id or ``last``
(:func:`find_run`), listed (:func:`listed_runs`), one run's changes with
what each file holds now (:func:`shown_changes`), and the human reports.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..read.text import plural, printable
from ..read.vault import GRAPH_DIR
from . import journal
from .changes import Edit
from .confine import would_refuse
from .journal import Change, Run, digest
from .rollback import named_path, plan_rollback

__all__ = [
    "NoSuchRun",
    "change_status",
    "find_run",
    "journal_folder",
    "list_text",
    "listed_runs",
    "plan_undo",
    "recover_text",
    "show_text",
    "shown_changes",
]


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
        conflicts += [{"path": named_path(step), "error": why} for step in changes]
        return [], conflicts
    return changes, conflicts


class NoSuchRun(ValueError):
    """No journaled run by that id (or none at all for ``last``): bad usage."""


def journal_folder(root: Path) -> Path:
    """The vault's ``.graph/`` folder, where the journal lives (``journal.FOLDER`` in it)."""
    return Path(root).resolve() / GRAPH_DIR


def find_run(root: Path, name: str) -> Run:
    """The journaled run ``name`` names: a run id, or ``last`` (the newest
    run a person or agent gave, not a recovery or roll-back autograph made,
    and not one rolled back).  Raises :class:`NoSuchRun` saying what exists."""
    runs = journal.runs(journal_folder(root))
    if name == "last":
        given = [run for run in runs if not run.automatic and run.state != "rolled-back"]
        if not given:
            raise NoSuchRun("this vault has no journaled run yet")
        return given[0]
    for run in runs:
        if run.id == name:
            return run
    hint = f"; the newest is {runs[0].id}" if runs else "; this vault has no journaled run yet"
    raise NoSuchRun(f"no run {name!r} in {journal_folder(root) / journal.FOLDER}{hint} (undo.py list shows them)")


def listed_runs(root: Path) -> list[dict]:
    """Every journaled run, newest first: :meth:`journal.Run.summary` with
    ``undone_by`` (the ids of the undos that took it back; an undo that was
    itself killed and recovered undid nothing, so it is not named)."""
    runs = journal.runs(journal_folder(root))
    undone_by: dict[str, list[str]] = {}
    taken_back = {run.undoes for run in runs if run.automatic}
    for run in runs:
        if run.undoes and run.id not in taken_back:
            undone_by.setdefault(run.undoes, []).append(run.id)
    return [{**run.summary(), "undone_by": undone_by.get(run.id, [])} for run in runs]


def list_text(items: list[dict]) -> str:
    """The human report of ``undo.py list``: a line per run of :func:`listed_runs`."""
    lines = [] if items else ["no journaled runs"]
    for item in items:
        note = f"  (undone by {', '.join(item['undone_by'])})" if item["undone_by"] else ""
        note += f"  (undoes {item['undoes']})" if item["undoes"] else ""
        state = "" if item["state"] == "done" else f"  [{item['state']}]"
        lines.append(
            f"{item['run']}  {printable(item['command'] or '?')}  {plural(item['files'], 'file')}{state}{note}"
        )
    return "\n".join(lines)


def change_status(root: Path, change: Change) -> str:
    """What the file of one journaled change holds now: ``as the run left
    it``, ``as before``, ``absent`` or ``changed since``."""
    where = change.to if change.op != "write" else change.path
    try:
        with open(Path(root) / where, "rb") as handle:
            now = digest(handle.read())
    except OSError:
        now = None
    if change.op != "write":
        return "as the run left it" if now == change.before else ("absent" if now is None else "changed since")
    left = change.now if change.result in ("written", "merged") else change.after
    if now == left and change.result not in ("conflict", "failed"):
        return "as the run left it"
    if now == change.before:
        return "as before"
    return "absent" if now is None else "changed since"


def shown_changes(root: Path, run: Run) -> list[dict]:
    """``undo.py show``'s changes: ``{n, op, path, to, result, status}`` per
    change of ``run`` (``status``: :func:`change_status`)."""
    return [
        {"n": c.n, "op": c.op, "path": c.path, "to": c.to, "result": c.result, "status": change_status(root, c)}
        for c in run.changes
    ]


def show_text(run: Run, changes: list[dict]) -> str:
    """The human report of ``undo.py show``: the run, then a line per change."""
    info = run.summary()
    lines = [
        f"{info['run']}  {printable(' '.join(info['args']) or info['command'])}",
        f"started {info['started']}, finished {info['finished'] or '-'}, {info['state']}",
    ]
    for item in changes:
        target = f" -> {item['to']}" if item["to"] else ""
        lines.append(
            f"  {item['op']:<5} {printable(item['path'])}{printable(target)}  "
            f"{item['result'] or 'not reached'}; now {item['status']}"
        )
    return "\n".join(lines)


def recover_text(recovered: list[dict]) -> str:
    """The human report of ``undo.py recover``: per rolled-back run (an
    outcome with ``undone``, the run id, or None for the saves a killed run's
    temporary files held) what was restored and what was left."""
    lines = [] if recovered else ["nothing to recover: every journaled run finished"]
    for item in recovered:
        if item["undone"] is None:
            lines += [
                f"kept {printable(kept['path'])} as {printable(kept['copy'])}: {kept['error']}"
                for kept in item["conflicts"]
            ]
            continue
        lines.append(f"rolled back {item['undone']}: {plural(len(item['written']), 'file')} restored")
        lines += [
            f"  left as it is: {printable(conflict['path'])}: {printable(conflict['error'])}"
            for conflict in item["conflicts"]
        ]
    return "\n".join(lines)
