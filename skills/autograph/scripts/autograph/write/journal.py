"""The journal of applied runs: what each run changed, so it can be undone.

Every run that writes the vault keeps a folder ``.graph/journal/<run-id>/``:

``run.json``
    ``{run, command, args, started, finished, state, undoes, files}``;
    ``state`` is ``running`` until the run ends, then ``done``;
    ``undoes`` names the run an undo or a recovery took back (else null).
``entries.jsonl``
    one JSON object per planned change, written and fsynced before any file
    of the run changes (write-ahead): ``{n, op, path, before, after, to,
    offset, length, mtime}``.  ``op`` is ``write`` (``before``: the SHA-256
    of the file's bytes before, or null when it did not exist; ``after``:
    the hash of the bytes planned; ``mtime``: its modification time before,
    in nanoseconds, which an undo gives back with the bytes), ``trash`` (moved to ``to`` under ``.trash/``) or
    ``move`` (renamed to ``to``; ``before`` the hash of its bytes).
    ``offset``/``length`` locate the bytes before in ``before.bin``.
    After the run, one line per change says what happened: ``{n, result,
    now, restore}``, ``result`` being ``written``, ``merged`` (another
    writer's edit landed during the write and ours was merged on top:
    ``restore`` then locates that writer's version, which is what an undo
    puts back), ``conflict`` or ``failed``; ``now`` the hash of the bytes
    the run left in the file.
``before.bin``
    the bytes of every changed file before the run, one after the other.

A run whose ``state`` is still ``running`` when no process holds the vault's
writer lock did not finish (a crash, a kill): :func:`unfinished` finds it,
and the store rolls it back.  Journals older than ``journal.keep_days``
(default 30) or beyond ``journal.max_mb`` (default 200) in all are pruned
(:func:`prunable`), the newest run never.

This module reads journals; :mod:`store`, which makes every write, writes
them.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FOLDER", "Change", "Run", "digest", "load", "prunable", "runs", "unfinished"]

FOLDER = "journal"
KEEP_DAYS = 30
MAX_MB = 200


def digest(data: bytes | None) -> str | None:
    """The SHA-256 of ``data`` in hex, or None for an absent file."""
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class Change:
    """One planned change of a run, as the journal keeps it (see the module
    docstring for the fields); ``result``, ``now`` and ``restore`` are
    filled in once the run has tried it (None for a run that stopped
    first)."""

    n: int
    op: str
    path: str
    before: str | None
    after: str | None = None
    to: str | None = None
    offset: int | None = None
    length: int | None = None
    mtime: int | None = None
    result: str | None = None
    now: str | None = None
    restore: tuple[int, int] | None = None

    def as_dict(self) -> dict:
        data = {"n": self.n, "op": self.op, "path": self.path, "before": self.before}
        for key in ("after", "to", "offset", "length", "mtime"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data


@dataclass
class Run:
    """A run as its journal tells it."""

    id: str
    folder: Path
    command: str = ""
    args: list = field(default_factory=list)
    started: str = ""
    finished: str | None = None
    state: str = "running"
    undoes: str | None = None
    changes: list[Change] = field(default_factory=list)

    @property
    def automatic(self) -> bool:
        """Whether autograph ran this run by itself to take another back: a
        recovery of a killed run, or the rollback of a move that failed half
        way (not a command a person gave)."""
        return self.undoes is not None and (self.command == "recover" or self.command.endswith(" (rolled back)"))

    def summary(self) -> dict:
        """``{run, command, args, started, finished, state, undoes, files}``."""
        return {
            "run": self.id,
            "command": self.command,
            "args": self.args,
            "started": self.started,
            "finished": self.finished,
            "state": self.state,
            "undoes": self.undoes,
            "files": len(self.changes),
        }

    def before_bytes(self, where: tuple[int, int] | None) -> bytes | None:
        """Bytes kept in ``before.bin`` at ``(offset, length)``."""
        if where is None:
            return None
        with open(self.folder / "before.bin", "rb") as handle:
            handle.seek(where[0])
            data = handle.read(where[1])
        if len(data) != where[1]:
            raise OSError(f"{self.folder / 'before.bin'}: shorter than the journal says; it was damaged")
        return data


def _journal_root(graph: Path) -> Path:
    return graph / FOLDER


def load(graph: Path, run_id: str) -> Run:
    """The run ``run_id`` from its journal.  Raises FileNotFoundError for
    an unknown run, ValueError for a damaged journal."""
    if not run_id or "/" in run_id or run_id.startswith("."):
        raise FileNotFoundError(run_id)
    folder = _journal_root(graph) / run_id
    with open(folder / "run.json", encoding="utf-8") as handle:
        info = json.load(handle)
    if not isinstance(info, dict):
        raise ValueError(f"{folder / 'run.json'}: not a run record")
    run = Run(
        run_id,
        folder,
        str(info.get("command", "")),
        list(info.get("args") or []),
        str(info.get("started", "")),
        info.get("finished"),
        str(info.get("state", "running")),
        info.get("undoes"),
    )
    changes: dict[int, Change] = {}
    try:
        with open(folder / "entries.jsonl", encoding="utf-8") as log:
            lines = log.read().splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash: the run then did not start that change
        if not isinstance(item, dict) or not isinstance(item.get("n"), int):
            continue
        if "op" in item:
            changes[item["n"]] = Change(
                item["n"],
                item["op"],
                item["path"],
                item.get("before"),
                item.get("after"),
                item.get("to"),
                item.get("offset"),
                item.get("length"),
                item.get("mtime"),
            )
        elif item["n"] in changes:
            change = changes[item["n"]]
            change.result = item.get("result")
            change.now = item.get("now")
            where = item.get("restore")
            change.restore = tuple(where) if isinstance(where, list) and len(where) == 2 else None
    run.changes = [changes[n] for n in sorted(changes)]
    return run


def runs(graph: Path) -> list[Run]:
    """Every journaled run, newest first (run ids sort by time); damaged
    journals are skipped."""
    folder = _journal_root(graph)
    try:
        names = sorted((entry.name for entry in os.scandir(folder) if entry.is_dir()), reverse=True)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        try:
            found.append(load(graph, name))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def unfinished(graph: Path) -> list[Run]:
    """Runs that did not finish (``state`` still ``running``), oldest first.
    Call it only under the vault's writer lock: then no run is writing."""
    return [run for run in reversed(runs(graph)) if run.state == "running"]


def _size(folder: Path) -> int:
    total = 0
    for entry in os.scandir(folder):
        try:
            total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            pass
    return total


def prunable(graph: Path, keep_days: float = KEEP_DAYS, max_mb: float = MAX_MB, now: float | None = None) -> list[str]:
    """The runs to prune: older than ``keep_days``, then, oldest first, those
    beyond ``max_mb`` megabytes of journal in all; never the newest run nor
    a run that did not finish.  (The store removes them.)"""
    now = time.time() if now is None else now
    folder = _journal_root(graph)
    try:
        names = sorted((entry.name for entry in os.scandir(folder) if entry.is_dir()), reverse=True)
    except FileNotFoundError:
        return []
    chosen = []
    total = 0
    for index, name in enumerate(names):
        path = folder / name
        size = _size(path)
        total += size
        if index == 0:
            continue
        try:
            with open(path / "run.json", encoding="utf-8") as handle:
                state = json.load(handle).get("state")
            age_days = (now - (path / "run.json").stat().st_mtime) / 86400
        except (OSError, ValueError, AttributeError):
            continue
        if state == "running":
            continue
        if age_days > keep_days or total > max_mb * 1024 * 1024:
            total -= size
            chosen.append(name)
    return chosen
