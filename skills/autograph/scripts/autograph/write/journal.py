"""The journal of applied runs: what each run changed, so it can be undone.

Every run that writes the vault keeps a folder ``.graph/journal/<run-id>/``:

``run.json``
    ``{state, finished, run, command, args, started, undoes, files, folders}``;
    ``state`` is ``running`` until the run ends, then ``done``;
    ``undoes`` names the run an undo or a recovery took back (else null);
    ``folders`` the folders the run was to create (vault paths, a folder
    before those in it), which a rollback removes while they are empty.
    ``state`` and ``finished`` come first, padded with spaces to
    :data:`HEAD_BYTES` bytes, so that marking the run finished (or rolled
    back) rewrites those bytes in place: no new disk block is needed, and
    a full disk cannot leave a run that reported success looking
    unfinished (:func:`mark_run`).
``entries.jsonl``
    one JSON object per planned change, written and fsynced before any file
    of the run changes (write-ahead): ``{n, op, path, before, after, to,
    offset, length, mtime}``.  ``op`` is ``write`` (``before``: the SHA-256
    of the file's bytes before, or null when it did not exist; ``after``:
    the hash of the bytes planned; ``mtime``: its modification time before,
    in nanoseconds, which an undo gives back with the bytes), ``trash`` (moved to ``to`` under ``.trash/``) or
    ``move`` (renamed to ``to``; ``before`` the hash of its bytes).
    ``offset``/``length`` locate the bytes before in ``before.bin``.
    After the run, one line per change in ``outcomes.jsonl`` (in
    ``entries.jsonl`` in journals older than that file) says what
    happened: ``{n, result, now, restore}``, ``result`` being ``written``, ``merged`` (another
    writer's edit landed during the write and ours was merged on top:
    ``restore`` then locates that writer's version, which is what an undo
    puts back), ``conflict`` or ``failed``; ``now`` the hash of the bytes
    the run left in the file.
``outcomes.jsonl``
    those lines, written in place over the spaces
    :meth:`JournalWriter.record` reserves for them before any file changes
    (blank lines are no outcome).
``before.bin``
    the bytes of every changed file before the run, one after the other.
``spare``
    space held for the rollback of a run that moves or trashes files
    (:meth:`JournalWriter.hold_space`), freed once the run is over or when
    its rollback begins (:func:`release_space`).

A run whose ``state`` is still ``running`` when no process holds the vault's
writer lock did not finish (a crash, a kill, a run whose end could not be
recorded and which exited 3 saying so): :func:`unfinished` finds it, and
the store rolls it back.  A run marked ``done`` is never rolled back by a
recovery.  Journals older than ``journal.keep_days``
(default 30) or beyond ``journal.max_mb`` (default 200) in all are pruned
(:func:`prunable`), the newest run never.

This module reads journals (:func:`load`, :func:`runs`, :func:`unfinished`),
writes one for each run the store carries out (:class:`JournalWriter`), marks
a rolled-back run (:func:`mark_run`) and prunes old ones
(:func:`prune_journals`, at most every :data:`PRUNE_INTERVAL` seconds).
"""

from __future__ import annotations

import errno
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
    "HEAD_BYTES",
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
    "release_space",
    "runs",
    "unfinished",
]

FOLDER = "journal"
KEEP_DAYS = 30
MAX_MB = 200
HEAD_BYTES = 72  # '{"state": "rolled-back", "finished": "2026-12-05T22:49:27Z",' and room to spare
_SPARE = "spare"
_OUTCOMES = "outcomes.jsonl"
# The longest outcome line finish() writes for change n: its space is reserved when the run starts.
_WORST_OUTCOME = {"result": "conflict", "now": "0" * 64, "restore": [10**19, 10**19]}


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
    folders: list[str] = field(default_factory=list)  # folders the run was to create, outermost first

    @property
    def automatic(self) -> bool:
        """Whether autograph ran this run by itself to take another back: a
        recovery of a killed run, or the rollback of a move that failed half
        way (not a command a person gave)."""
        return self.undoes is not None and (self.command == "recover" or self.command.endswith(" (rolled back)"))

    def summary(self) -> dict:
        """``{run, command, args, started, finished, state, undoes, files}``
        (``folders`` is in ``run.json`` only)."""
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
    try:
        with open(folder / _OUTCOMES, encoding="utf-8") as log:
            lines += log.read().splitlines()
    except FileNotFoundError:
        pass
    folders = info.get("folders")
    run.folders = [str(f) for f in folders] if isinstance(folders, list) else []
    for line in lines:
        if not line.strip():
            continue  # room reserved for outcomes not written (yet)
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
    """Runs that did not finish (``state`` still ``running``), newest first:
    the order to take them back in, so that a recovery killed in turn (a
    run that took another back) is unwound before the run it took back.
    Call it only under the vault's writer lock: then no run is writing."""
    return [run for run in runs(graph) if run.state == "running"]


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
    :meth:`hold_space` for a run its rollback may need room for,
    :meth:`keep` for bytes an undo puts back, :meth:`finish`)."""

    def __init__(self, folder: Path, run: Run):
        self.folder, self.run, self.size = folder, run, 0
        self._reserved = (0, 0)  # (offset, length) in entries.jsonl kept for the outcome lines

    @classmethod
    def begin(cls, root: Path, run_id: str, command: str, args: list[str], undoes: str | None) -> JournalWriter:
        """Make ``.graph/journal/<run-id>/`` with ``run.json`` (running),
        fsynced.  Raises OSError (a full disk) with no folder left behind."""
        folder = derived_path(root, f"{FOLDER}/{run_id}/run.json").parent  # made here, ids are unique
        run = Run(run_id, folder, command, [str(a) for a in args], utc_now(), None, "running", undoes)
        writer = cls(folder, run)
        try:
            replace_file(folder / "run.json", None, writer._run_bytes())
            fsync_dir(folder.parent)
        except BaseException:
            writer.discard()
            raise
        return writer

    def discard(self) -> None:
        """Remove this run's journal: for a run that stopped before any file
        changed (its journal could not be written), nothing to take back."""
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)

    def _run_bytes(self) -> bytes:
        # ASCII: an argument that is not UTF-8 (a vault path) is a lone surrogate,
        # which json writes as \udcff and reads back as the same string
        info = self.run.summary()
        rest = {key: value for key, value in info.items() if key not in ("state", "finished")}
        rest["folders"] = self.run.folders
        head = _head(self.run.state, self.run.finished)
        return head + (json.dumps(rest, ensure_ascii=True)[1:] + "\n").encode("ascii")

    def _append(self, name: str, data: bytes) -> tuple[int, int]:
        fd = open_derived(self.folder / name, os.O_WRONLY | os.O_APPEND)
        try:
            offset = os.fstat(fd).st_size
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return offset, len(data)

    def record(self, changes: list[tuple[Change, bytes | None]], folders: list[str] = ()) -> None:
        """Write ahead: every change and the bytes before it, fsynced before
        any file of the run is touched, with room reserved for what
        :meth:`finish` writes (so a full disk fails the run here, before
        any file changed, not after).  ``folders``: those the run will
        create (vault paths, outermost first)."""
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
        self.run.folders += [f for f in folders if f not in self.run.folders]
        room = sum(_outcome_room(change.n) for change in self.run.changes)
        fd = open_derived(self.folder / _OUTCOMES, os.O_WRONLY)
        try:
            _write_all(fd, b" " * (room - 1) + b"\n", 0)  # allocated, not sparse: finish() writes over it
            os.fsync(fd)
        finally:
            os.close(fd)
        self._reserved = (0, room)
        path = self.folder / "run.json"
        replace_file(path, _read_or_none(path), self._run_bytes())  # its count of files

    def hold_space(self, size: int) -> None:
        """Hold ``size`` bytes of the disk in ``spare`` (allocated, not a
        sparse file), for a rollback to free (:func:`release_space`).
        Raises OSError when the disk has not that much room."""
        if size <= 0:
            return
        fd = open_derived(self.folder / _SPARE, os.O_WRONLY)
        try:
            try:
                os.posix_fallocate(fd, 0, size)
            except (AttributeError, OSError) as exc:
                if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                    raise
                chunk = b"\xa5" * (1 << 20)  # no fallocate on this file system: real bytes hold the room
                at = 0
                while at < size:
                    at += os.pwrite(fd, chunk[: min(len(chunk), size - at)], at)
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            release_space(self.folder.parent.parent, self.run.id)
            raise
        os.close(fd)

    def keep(self, data: bytes) -> tuple[int, int]:
        """Keep more bytes (what an undo puts back); returns where."""
        where = self._append("before.bin", data)
        self.size += len(data)
        return where

    def finish(self, outcomes: list[dict]) -> None:
        """What happened to each change; the run is done.  Both are written
        in place, over the room :meth:`begin` and :meth:`record` reserved,
        so no new disk block is needed.  Raises OSError when even that
        fails (a copy-on-write file system that is full, a failing disk):
        the run then did not finish, and the caller must say so."""
        lines = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in outcomes).encode("utf-8")
        at, room = self._reserved
        if lines and len(lines) <= room:
            fd = open_derived(self.folder / _OUTCOMES, os.O_WRONLY)
            try:
                _write_all(fd, lines + (b" " * (room - len(lines) - 1) + b"\n" if room > len(lines) else b""), at)
                os.fsync(fd)
            finally:
                os.close(fd)
        elif lines:
            self._append(_OUTCOMES, lines)  # more than reserved: cannot happen, but never lost
        self.run.finished = utc_now()
        self.run.state = "done"
        _set_head(self.folder / "run.json", self.run.state, self.run.finished)


def _outcome_room(n: int) -> int:
    return len(json.dumps({"n": n, **_WORST_OUTCOME}, ensure_ascii=False)) + 1


def _write_all(fd: int, data: bytes, at: int) -> None:
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], at + done)


def _head(state: str, finished: str | None) -> bytes:
    """The first :data:`HEAD_BYTES` bytes of ``run.json``: ``{"state": ...,
    "finished": ...,`` and spaces (JSON allows them between members)."""
    text = f'{{"state": {json.dumps(state, ensure_ascii=True)}, "finished": {json.dumps(finished, ensure_ascii=True)},'
    return text.ljust(HEAD_BYTES).encode("ascii")


def _set_head(path: Path, state: str, finished: str | None) -> None:
    """Rewrite ``run.json``'s state and finish time in place (its first
    :data:`HEAD_BYTES` bytes, one disk sector: no new block, and no torn
    write).  A journal written before heads existed, or a state too long
    for the head, is rewritten whole instead.  Raises OSError."""
    head = _head(state, finished)
    fd = open_derived(path, os.O_RDWR)
    try:
        old = os.pread(fd, HEAD_BYTES + 1, 0)
        if len(head) == HEAD_BYTES and _is_head(old):
            _write_all(fd, head, 0)
            os.fsync(fd)
            return
    finally:
        os.close(fd)
    before = _read_or_none(path)
    data = json.loads(before.decode("utf-8")) if before else {}
    data["state"], data["finished"] = state, finished
    replace_file(path, before, (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8"))


def _is_head(data: bytes) -> bool:
    """Whether ``data`` (the first bytes of ``run.json``) starts with a
    head :func:`_head` wrote, followed by the rest of the object."""
    if len(data) <= HEAD_BYTES or not data.startswith(b'{"state": '):
        return False
    head = data[:HEAD_BYTES].rstrip(b" ")
    if not head.endswith(b","):
        return False
    try:
        value = json.loads(head[:-1] + b"}")
    except ValueError:
        return False
    return isinstance(value, dict) and set(value) == {"state", "finished"}


def _read_or_none(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def mark_run(root: Path, run_id: str, state: str) -> None:
    """Set a journaled run's ``state`` (``rolled-back`` after a recovery;
    ``running`` for a finished run that must be taken back by the next
    writer, its finish time then cleared), in place (:func:`_set_head`).
    Raises OSError."""
    path = derived_path(root, f"{FOLDER}/{run_id}/run.json")
    before = _read_or_none(path)
    data = json.loads(before.decode("utf-8")) if before else {}
    _set_head(path, state, None if state == "running" else data.get("finished"))


def release_space(graph: Path, run_id: str) -> bool:
    """Free the room a run held for its rollback (``spare`` in its journal;
    removing a file needs no room).  True when there was some."""
    try:
        os.unlink(Path(graph) / FOLDER / run_id / _SPARE)
    except OSError:
        return False
    return True


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


def scrub_secret(graph: Path, secret: bytes) -> list[str]:
    """Overwrite every copy of ``secret`` the journal keeps (``card.py
    redact``): in each run's ``before.bin`` with as many ``*`` (offsets
    and lengths stay right; the copy no longer matches its hash, so an
    undo leaves that file as it is rather than put the secret back), and
    in its recorded ``args`` with ``[redacted]``.  Returns the ids of the
    runs changed."""
    changed = []
    try:
        names = sorted(entry.name for entry in os.scandir(_journal_root(graph)) if entry.is_dir())
    except FileNotFoundError:
        return []
    text = secret.decode("utf-8", "surrogateescape")
    for name in names:
        folder = _journal_root(graph) / name
        touched = False
        kept = _read_or_none(folder / "before.bin")
        if kept is not None and secret in kept:
            replace_file(folder / "before.bin", kept, kept.replace(secret, b"*" * len(secret)))
            touched = True
        record = _read_or_none(folder / "run.json")
        info = json.loads(record.decode("utf-8")) if record else None
        if isinstance(info, dict) and any(isinstance(a, str) and text in a for a in info.get("args") or []):
            info["args"] = [a.replace(text, "[redacted]") if isinstance(a, str) else a for a in info["args"]]
            replace_file(folder / "run.json", record, (json.dumps(info, ensure_ascii=True) + "\n").encode("ascii"))
            touched = True
        if touched:
            changed.append(name)
    return changed
