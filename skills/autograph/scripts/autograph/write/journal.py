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

This module reads journals (:func:`load`, :func:`runs`, :func:`unfinished`),
writes one for each run the store carries out (:class:`JournalWriter`), marks
a rolled-back run (:func:`mark_run`) and prunes old ones
(:func:`prune_journals`, at most every :data:`PRUNE_INTERVAL` seconds).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..read.vault import GRAPH_DIR
from .changes import utc_now
from .derived import derived_path, open_derived, write_derived
from .replace import fsync_dir, replace_file

__all__ = [
    "FOLDER",
    "KEEP_DAYS",
    "MAX_MB",
    "PRUNE_INTERVAL",
    "Change",
    "JournalWriter",
    "Run",
    "digest",
    "generation",
    "load",
    "mark_run",
    "prunable",
    "prune_journals",
    "runs",
    "unfinished",
]

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


def generation(graph: Path) -> tuple | None:
    """Which runs the journal holds, as a value that changes whenever a run
    that writes starts (each makes its folder, named by its start time) or
    old ones are pruned: ``(count, newest run id)``, None without a journal.
    A command that plans before it takes the writer lock compares it under
    the lock: unchanged, no other autograph run wrote meanwhile."""
    try:
        names = [entry.name for entry in os.scandir(_journal_root(graph)) if not entry.name.startswith(".")]
    except OSError:
        return None
    return (len(names), max(names, default=""))


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


class JournalWriter:
    """Writes one run's journal, in the format above (the store makes one
    per run: :meth:`begin`, :meth:`record` before any file changes,
    :meth:`keep` for bytes an undo puts back, :meth:`finish`)."""

    def __init__(self, folder: Path, run: Run):
        self.folder, self.run, self.size = folder, run, 0

    @classmethod
    def begin(cls, root: Path, run_id: str, command: str, args: list[str], undoes: str | None) -> JournalWriter:
        """Make ``.graph/journal/<run-id>/`` with ``run.json`` (running), fsynced."""
        folder = derived_path(root, f"{FOLDER}/{run_id}/run.json").parent  # made here, ids are unique
        run = Run(run_id, folder, command, [str(a) for a in args], utc_now(), None, "running", undoes)
        writer = cls(folder, run)
        writer._write_run()
        fsync_dir(folder.parent)
        return writer

    def _write_run(self) -> None:
        replace_file(self.folder / "run.json", _read_or_none(self.folder / "run.json"), self._run_bytes())

    def _run_bytes(self) -> bytes:
        # ASCII: an argument that is not UTF-8 (a vault path) is a lone surrogate,
        # which json writes as \udcff and reads back as the same string
        return (json.dumps(self.run.summary(), ensure_ascii=True) + "\n").encode("ascii")

    def _append(self, name: str, data: bytes) -> tuple[int, int]:
        fd = open_derived(self.folder / name, os.O_WRONLY | os.O_APPEND)
        try:
            offset = os.fstat(fd).st_size
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return offset, len(data)

    def record(self, changes: list[tuple[Change, bytes | None]]) -> None:
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
        self.run.finished = utc_now()
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
    path = derived_path(root, f"{FOLDER}/{run_id}/run.json")
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


def prune_due(root: Path) -> bool:
    """True when no run looked for old journals in the last
    :data:`PRUNE_INTERVAL` seconds (the stamp's mtime)."""
    stamp = Path(os.path.realpath(root)) / GRAPH_DIR / FOLDER / _PRUNED_STAMP
    try:
        return time.time() - stamp.stat().st_mtime >= PRUNE_INTERVAL
    except OSError:
        return True


def prune_journals(root: Path, keep_days: float, max_mb: float) -> list[str]:
    """Remove old journals (:func:`journal.prunable`); returns their run ids.
    Sets the stamp :func:`store.apply` reads to look again only after
    :data:`PRUNE_INTERVAL` seconds."""
    import shutil

    graph = Path(os.path.realpath(root)) / GRAPH_DIR
    removed = prunable(graph, keep_days, max_mb)
    for run_id in removed:
        shutil.rmtree(graph / FOLDER / run_id, ignore_errors=True)
    # the time as its text: a stamp whose bytes never change might not be rewritten
    write_derived(root, f"{FOLDER}/{_PRUNED_STAMP}", f"{time.time()}\n".encode(), durable=False)
    return removed
