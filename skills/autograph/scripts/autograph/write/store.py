"""The store: the only writer of notes.  A plan's changes carried out as one journaled run.

Operations never write files themselves.  They return changes
(:class:`changes.Edit`, :class:`changes.Trash`, :class:`changes.Move`) and
hand them to :func:`apply`, which, holding the vault's writer lock
(:func:`writer_lock`), journals the run before anything changes
(write/journal.py, so it can be undone byte for byte) and carries out each
change with its checks:

1. every path confined to the vault and every destination checked before the
   first write (write/confine.py: no ``..``, no absolute path, no folder
   symlink leading out; nothing but a regular file replaced);
2. each file replaced atomically, only while it holds the bytes the plan was
   made from (write/replace.py); a write another writer lands meanwhile is
   kept, merged with ours when the two touch different lines
   (write/merge.py), else saved under ``.graph/conflicts/<run-id>/``;
3. a trashed file moved to ``.trash/<run-id>/``, a moved one renamed, never
   over a file;
4. at the end every written note read once more: one an editor saved over
   is reported, not counted as written.

Every skipped change is reported (:class:`changes.Result`), never forced.  A
run killed half way is rolled back by the next writer (:func:`writer_lock`,
:func:`recover`), each file only while it holds what the run left in it.

A run that returned is finished: its end is written in place over room
the journal reserved when it began (write/journal.py), so a full disk
cannot leave a run that reported success looking unfinished, to be rolled
back days later; when even that fails, :func:`apply` raises (the command
exits 3) and the next writer rolls the run back.  A run that moves or
trashes files also holds, from its start until the writer lock is
released, the disk space its own rollback needs, so a move that fails half
way on a full disk can be taken back at once.  Files the store would refuse
anyway (read-only, hard-linked) are reported without being journaled.  A
rollback removes the folders the run it takes back created, while they are
empty.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from pathlib import Path

from ..read.vault import GRAPH_DIR, TRASH_DIR
from . import journal as journal_mod
from . import lock, replace
from .changes import Edit, Move, Result, Skipped, Trash, new_run_id
from .confine import PathError, TargetError, check_folder, check_target, read_regular, vault_target, why_refused
from .derived import CONFLICTS_DIR, derived_path, save_conflict
from .journal import digest
from .merge import edited_on_top, merge3
from .replace import TMP_NAME, Conflict, LateWrite, Swap, fsync_dir, owner_for_new, rename_noreplace
from .rollback import plan_rollback

__all__ = [
    "applied",
    "apply",
    "last_recovery",
    "recover",
    "remove_made_folders",
    "reopen",
    "sweep_temporary_files",
    "writer_lock",
]

_APPLIED: list[str] = []  # the run ids this process began to write (applied)


def applied() -> bool:
    """Whether this process began a run that writes to a vault
    (:func:`apply`): a command that failed after that is not run again."""
    return bool(_APPLIED)


# Old files kept open after their swap, to look for late writes once more at
# the end of the run (bounded: a process may hold only so many descriptors).
_WATCHED = 128


def _watch_limit() -> int:
    """At most :data:`_WATCHED`, and an eighth of the descriptors this
    process may open (``ulimit -n 64`` leaves room for the writes)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 16
    if soft == resource.RLIM_INFINITY:
        return _WATCHED
    return max(0, min(_WATCHED, soft // 8 - 4))


# ---------------------------------------------------------------------------
# The writer lock, and a killed run rolled back


last_recovery: list = []  # (run id, Result) of the runs the last writer_lock rolled back
_depth: dict[str, int] = {}  # real vault path -> writer_lock nesting in this process
_spares: dict[str, list[str]] = {}  # real vault path -> runs holding room for their rollback


@contextlib.contextmanager
def writer_lock(root: Path, wait: float = 0.0, command: str = ""):
    """Hold the vault's one writer lock (:func:`lock.hold`): waits up to
    ``wait`` seconds for another run, then raises :class:`lock.LockBusy`
    naming it.  Re-entrant within one process.  When the previous holder
    did not finish (killed), temporary files it left in the vault are swept
    and its run is rolled back first (:func:`recover`); what that did is in
    :data:`last_recovery`.  Raises OSError when ``.graph/`` cannot be
    created (a read-only vault: reading commands still work without it).
    When the outermost hold ends, the room the runs made under it held for
    their rollback is freed (:meth:`journal.JournalWriter.hold_space`)."""

    def taken(killed: bool) -> None:
        last_recovery.clear()
        if killed:
            kept = sweep_temporary_files(root)
            last_recovery.extend(recover(root))
            if kept:
                last_recovery.append(("", Result("", conflicts=kept)))

    key = os.path.realpath(root)
    with lock.hold(root, wait, command, taken):
        _depth[key] = _depth.get(key, 0) + 1
        try:
            yield
        finally:
            _depth[key] -= 1
            if not _depth[key]:
                del _depth[key]
                for run_id in _spares.pop(key, ()):
                    journal_mod.release_space(Path(key) / GRAPH_DIR, run_id)


def sweep_temporary_files(root: Path) -> list[Skipped]:
    """Clear the temporary files a killed run left in the vault (names
    ``.autograph-*.tmp``, regular files only).  Called under the writer
    lock, when no other run can own them.  One that holds bytes a journaled
    run wrote or replaced is removed (the journal keeps them), and so is an
    empty one (a killed run's temporary file before its first byte: no
    editor saves a note as nothing over autograph's temporary name); any
    other (another writer's save that landed during the killed run's swap)
    is kept under ``.graph/conflicts/recovered-<time>/`` and returned."""
    graph = Path(os.path.realpath(root)) / GRAPH_DIR
    known: set[str | None] = set()
    for run in journal_mod.unfinished(graph):
        for change in run.changes:
            known.update((change.before, change.after))
    kept: list[Skipped] = []
    derived = os.path.join(root, GRAPH_DIR)
    old = time.time() - 600
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".trash")]
        for name in files:
            if not TMP_NAME.match(name):
                continue
            path = os.path.join(folder, name)
            try:
                if path.startswith(derived + os.sep):  # derived files are written without the lock
                    if stat.S_ISREG(os.lstat(path).st_mode) and os.lstat(path).st_mtime < old:
                        os.unlink(path)
                    continue
                data = read_regular(path)
                if not data or digest(data) in known:
                    os.unlink(path)
                    continue
                rel = os.path.relpath(path, root)
                where = f"{CONFLICTS_DIR}/recovered-{stamp}/{os.path.dirname(rel) or '.'}/{name[1:]}"
                dest = derived_path(root, where)
                try:
                    os.rename(path, dest)
                except OSError:
                    replace.replace_file(dest, None, data)
                    os.unlink(path)
                why = "a save that landed while a killed run was writing; kept"
                kept.append(Skipped(rel, why, f"{GRAPH_DIR}/{where}"))
            except (OSError, PathError, TargetError, Conflict):
                pass  # not ours to judge: left where it is
    return kept


def recover(root: Path) -> list[tuple[str, Result]]:
    """Roll back every run that did not finish (killed mid-way, or one
    whose end could not be recorded), newest first: each file it changed
    goes back to its bytes before, unless someone changed it since (then it
    is reported, left alone), and the folders it created go while empty.
    A run marked done is never taken back here.  Each rollback is itself a
    journaled run (``undoes`` names the run).  Call under the writer lock
    (:func:`writer_lock` calls it when its previous holder died)."""
    graph = Path(os.path.realpath(root)) / GRAPH_DIR
    done = []
    for run in journal_mod.unfinished(graph):
        journal_mod.release_space(graph, run.id)  # the room it held for this
        changes, _ = plan_rollback(root, run)
        result = apply(root, changes, command="recover", args=["recover", run.id], undoes=run.id)
        journal_mod.mark_run(root, run.id, "rolled-back")
        done.append((run.id, result))
    return done


# ---------------------------------------------------------------------------
# A run


def apply(
    root: Path,
    changes: list,
    wait: float = 0.0,
    command: str = "",
    make_folders: bool = True,
    args: list[str] | None = None,
    undoes: str | None = None,
    keep: tuple[float, float] | None = None,
) -> Result:
    """Carry out ``changes`` (:class:`Edit`, :class:`Trash`, :class:`Move`)
    whose files are unchanged since they were read, as one journaled run.

    Holds the vault's writer lock (:func:`writer_lock`; ``wait`` seconds,
    then :class:`LockBusy`).  Raises :class:`PathError` before writing
    anything if any path (a move's or a trash's destination too) would
    leave the vault, :class:`TargetError` if a folder on a move's way is
    a file.  A :class:`Move` or :class:`Trash` with ``after`` happens only
    when every change of those paths earlier in ``changes`` was written
    (or changes nothing); else it is reported like the change it waited
    for (a conflict or a failure).  A run that stops on an exception half
    way stays ``running`` in its journal and in the lock's state, so the
    next writer (or ``undo.py recover``) rolls it back.  Before any file changes,
    the run's journal (``.graph/journal/<run-id>/``: the command, ``args``
    (default ``sys.argv``), each change and the bytes before) is written and
    fsynced, so the run can be undone and, if it is killed, rolled back.
    ``undoes`` names the run an undo takes back; ``keep`` is ``(keep_days,
    max_mb)`` for pruning old journals (default 30 days, 200 MB).

    Each file that changed is a conflict and each file that cannot be
    written is a failure, reported in the :class:`Result`; the run goes on
    with the others.  A file the store refuses whatever it holds (no write
    permission, other hard links) is a failure that is not journaled.  A
    run that moves or trashes files (and is no undo) holds the disk space
    its rollback needs until the writer lock is released; raises OSError
    before any file changes when the disk has not that room, or the journal
    cannot be written.  When the run's end cannot be recorded, raises
    OSError after the writes: the run is then taken back by the next
    writer, never counted as finished.  With ``undoes``, the folders the
    undone run created are removed once empty.  A new note's folders are created inside the vault
    unless ``make_folders`` is False.  At the end every written note is
    read once more: one that no longer holds what was written (an editor
    saved over it) is reported as a conflict, not counted as written.
    """
    result = Result(new_run_id())
    _APPLIED.append(result.run_id)
    planned = []
    unchanged: set[str] = set()  # edits that change nothing: nothing that waits for them need wait
    for change in changes:
        if not _changes_something(change):
            unchanged.add(change.path)
            continue
        target = vault_target(root, change.path)
        if isinstance(change, Move):
            vault_target(root, change.to)
        why = _refused(target) if isinstance(change, Edit) and change.before is not None else None
        if why is not None:  # refused whatever it holds: nothing to journal (an enforce over read-only notes)
            result.failed.append(Skipped(change.path, f"{why}; not written"))
            continue
        planned.append((change, target))
    if not planned:
        if undoes:
            with writer_lock(root, wait, command):
                remove_made_folders(root, undoes)
        return result
    inside = os.path.realpath(root)
    holds: dict[str, bytes] = {}  # written path -> the bytes it should now hold
    watched: list[tuple[int, Edit, Swap]] = []
    outcomes: dict[int, dict] = {}

    def settle(n: int, edit: Edit, late: LateWrite) -> None:
        outcome = replace._settle(late, lambda late: save_conflict(root, result.run_id, edit.path, late))
        result.conflicts.append(Skipped(edit.path, outcome.message, outcome.copies[-1] if outcome.copies else None))
        if outcome.kept_ours is None:
            holds.pop(edit.path, None)
            result.written.remove(edit.path)
            outcomes[n] = {"n": n, "result": "conflict", "now": digest(late.late)}
            return
        holds[edit.path] = outcome.kept_ours
        outcomes[n] = {"n": n, "result": "merged", "now": digest(outcome.kept_ours)}
        # what an undo puts back: the other writer's edit without ours (None: nothing safe)
        theirs = merge3(edit.after, outcome.kept_ours, edit.before) if outcome.copies == [] else edit.before
        if theirs is not None:
            outcomes[n]["restore"] = list(journal.keep(theirs))

    def look_again(n: int, edit: Edit, swap: Swap) -> None:
        late = replace.look_again(swap)
        if late is not None:
            settle(n, edit, late)

    def unwritten(move: Move) -> Skipped | None:
        """Why ``move`` must not happen: a change it waits for was not
        written (None: go ahead).  Those changes' files are looked at once
        more first, so a write another writer undid meanwhile counts."""
        for item in [w for w in watched if w[1].path in move.after]:
            watched.remove(item)
            look_again(*item)
        for path in move.after:
            if path in result.written or path in unchanged:
                continue
            what = "moved to .trash" if move.reason == "trash" else f"moved to {move.to}"
            error = f"not {what}: the change of {path} it goes with was not written, so it stays where it is"
            return Skipped(move.path, error)
        return None

    key = os.path.realpath(root)
    with writer_lock(root, wait, command):
        # a trashed file is a move into .trash/<run-id>/, its place chosen before the journal names it
        planned = [(_as_move(root, result.run_id, c) if isinstance(c, Trash) else c, t) for c, t in planned]
        for change, _ in planned:  # every destination checked before the first write, not half way
            if isinstance(change, Move):
                _check_destination(root, change.to)
        from ..read.secrets import masked_words  # the detector's patterns, only for a run that writes

        # a secret given on the command line (--allow-secret, redact) is not kept in the journal
        words = sys.argv if args is None else args
        journal = journal_mod.JournalWriter.begin(
            root, result.run_id, command, words[:1] + masked_words(list(words[1:])), undoes
        )
        try:
            entries = [(_journal_change(n, c, target), _before_of(c)) for n, (c, target) in enumerate(planned, 1)]
            journal.record(entries, _folders_to_make(root, planned))
            if undoes is None and any(isinstance(change, Move) for change, _ in planned):
                _spares.setdefault(key, []).append(result.run_id)
                journal.hold_space(_rollback_room(planned))
        except BaseException as exc:
            # no file of the run changed yet: its journal goes, nothing is left to roll back
            journal.discard()
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                raise OSError(exc.errno, f"{_NO_ROOM} ({exc.strerror})") from None
            raise
        lock.open_runs.setdefault(key, set()).add(result.run_id)
        for n, (change, target) in enumerate(planned, 1):
            if not lock.intact(root):
                result.failed.append(Skipped(change.path, _LOCK_GONE))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            try:
                if isinstance(change, Move):
                    held = unwritten(change) if change.after else None
                    if held is not None:
                        clash = any(c.path in change.after for c in result.conflicts)
                        (result.conflicts if clash else result.failed).append(held)
                        outcomes[n] = {"n": n, "result": "conflict" if clash else "failed"}
                        continue
                    _move(root, change, inside)
                    holds.pop(change.path, None)  # written earlier in this run: the move checked its bytes
                    result.written.append(change.path)
                    outcomes[n] = {"n": n, "result": "written", "now": digest(change.before)}
                    continue
                swap = replace._swap(target, change.before, change.after, True, make_folders, inside, change.mtime_ns)
            except Conflict as exc:
                result.conflicts.append(Skipped(change.path, str(exc)))
                outcomes[n] = {"n": n, "result": "conflict"}
                continue
            except LateWrite as late:
                result.written.append(change.path)
                holds[change.path] = change.after
                settle(n, change, late)
                continue
            except TargetError as exc:
                result.failed.append(Skipped(change.path, str(exc)))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            except OSError as exc:
                result.failed.append(Skipped(change.path, _os_error(exc)))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            except PathError as exc:  # a folder made a symlink out of the vault since the check
                result.failed.append(Skipped(change.path, f"not written: {exc}"))
                outcomes[n] = {"n": n, "result": "failed"}
                continue
            result.written.append(change.path)
            holds[change.path] = change.after
            outcomes[n] = {"n": n, "result": "written", "now": digest(change.after)}
            if swap is not None:
                late = replace.late_now(swap)
                if late is not None:
                    settle(n, change, late)
                    continue
                watched.append((n, change, swap))  # looked at again at the end, by its descriptor alone
                if len(watched) > _watch_limit():
                    look_again(*watched.pop(0))
        for n, edit, swap in watched:
            look_again(n, edit, swap)
        for n, change, now in _changed_after(root, result, holds, planned):
            theirs = edited_on_top(change, now)
            if theirs is not None:  # a person added to what we wrote: both are in the file
                holds[change.path] = now
                outcomes[n] = {"n": n, "result": "merged", "now": digest(now)}
                if change.before is not None:
                    outcomes[n]["restore"] = list(journal.keep(theirs))
                continue
            _call_changed_again(result, change.path)
            outcomes[n] = {"n": n, "result": "conflict", "now": None}
        try:
            journal.finish([outcomes[n] for n in sorted(outcomes)])
        except (OSError, PathError, TargetError) as exc:
            if not lock.intact(root) or not journal.folder.is_dir():
                # .graph/ was deleted under the run, its journal with it: nothing is left to roll back
                lock.open_runs[key].discard(result.run_id)
                result.warnings.append(f"the run's journal could not be finished ({exc}); undo.py may not see this run")
                return result
            # the run stays open, so the lock tells the next writer to roll it back: a run is never
            # taken back after it was reported done
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise OSError(
                getattr(exc, "errno", None) or errno.EIO,
                f"the run {result.run_id} wrote its files but its end could not be recorded ({reason}); "
                "it does not count as done: the next writing command (or undo.py recover) rolls it back",
            ) from None
        lock.open_runs[key].discard(result.run_id)  # finished: nothing for a next writer to roll back
        if undoes:
            remove_made_folders(root, undoes)
        try:
            if journal_mod.prune_due(root):
                journal_mod.prune_journals(root, *(keep or (journal_mod.KEEP_DAYS, journal_mod.MAX_MB)))
        except (OSError, PathError, TargetError, Conflict) as exc:
            result.warnings.append(f"old journals could not be pruned ({exc})")
    return result


_NO_ROOM = (
    "not enough free disk space for this run's journal (and, for a move, the room to take it back); nothing was written"
)
_PAGE = 4096


def _refused(target: Path) -> str | None:
    """Why the store would refuse to replace ``target`` whatever it holds
    (read-only, other hard links), by what stat shows; None otherwise (the
    write checks everything again)."""
    try:
        info = check_target(target, follow_symlinks=False)
    except (TargetError, OSError):
        return None  # the write itself reports it
    return None if info is None else why_refused(info)


def _folders_to_make(root: Path, planned) -> list[str]:
    """The folders the run will create, outermost first: those on the way
    to a new file or a move's destination (``.trash/<run-id>/...`` too)
    that do not exist now."""
    made: list[str] = []
    seen: set[str] = set()
    for change, _ in planned:
        if isinstance(change, Move):
            dest = change.to
        elif isinstance(change, Edit) and change.before is None:
            dest = change.path
        else:
            continue
        parts = dest.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder in seen:
                continue
            seen.add(folder)
            if not os.path.lexists(os.path.join(root, folder)):
                made.append(folder)
    return made


def remove_made_folders(root: Path, run_id: str) -> list[str]:
    """Remove the folders the run ``run_id`` created (its journal's
    ``folders``) that are empty now, deepest first, so a retry of a move
    taken back does not nest (``archive/projects/projects/``).  Only empty
    real folders inside the vault go; anything else stays.  Returns the
    folders removed.  Call under the writer lock."""
    try:
        run = journal_mod.load(Path(os.path.realpath(root)) / GRAPH_DIR, run_id)
    except (OSError, ValueError, KeyError, TypeError):
        return []
    inside = os.path.realpath(root)
    removed = []
    for folder in sorted(run.folders, key=lambda f: f.count("/"), reverse=True):
        full = os.path.join(inside, folder)
        if ".." in folder.split("/") or os.path.isabs(folder) or os.path.islink(full):
            continue
        if os.path.realpath(full) != os.path.normpath(full):
            continue  # a symlinked folder on its way: not the folder the run made
        try:
            os.rmdir(full)
        except OSError:
            continue  # not empty (someone put a file there), or gone
        removed.append(folder)
    return removed


def _rollback_room(planned) -> int:
    """The disk space the rollback of these changes may need (bytes):
    its journal (the bytes each rewritten file holds after the run), a
    temporary file per file it writes back, and a page for each entry and
    folder; counted in whole pages, as a file system allocates them."""

    def pages(size: int) -> int:
        return -(-size // _PAGE) * _PAGE

    after = before = 0
    folders = set()
    for change, _ in planned:
        folders.add(change.path.rpartition("/")[0])
        if isinstance(change, Edit) and change.before is not None:
            after += len(change.after)
            before += pages(len(change.before))
    return pages(after) + before + pages(512 * len(planned)) + _PAGE * (16 + len(folders))


def reopen(root: Path, run_id: str) -> None:
    """Count the finished run ``run_id`` as not finished: its journal says
    ``running`` again (in place, no room needed) and the writer lock is
    left so, so the next writer (or ``undo.py recover``) rolls it back.
    For a run whose taking back failed at once (a move on a full disk).
    Call under the writer lock.  Raises OSError."""
    lock.open_runs.setdefault(os.path.realpath(root), set()).add(run_id)
    journal_mod.mark_run(root, run_id, "running")


def _check_destination(root: Path, path: str) -> None:
    """Raise :class:`PathError` when a move to ``path`` would leave the
    vault, :class:`TargetError` when a folder on its way exists as
    something else than a folder (a ``.trash`` file): called for every
    move of a run before its first write."""
    vault_target(root, path)
    folder = Path(os.path.realpath(root))
    for part in path.split("/")[:-1]:
        folder = folder / part
        if not os.path.lexists(folder):
            return
        if not folder.is_dir():
            raise TargetError(
                f"{folder} is not a folder, so nothing can be moved to {path}; "
                "move it away and run again (nothing was written)"
            )


_LOCK_GONE = (
    "not written: the vault's writer lock was removed while this ran (was .graph/ deleted?), "
    "so another run could be writing; run again"
)


def _changes_something(change) -> bool:
    return not isinstance(change, Edit) or change.before != change.after


def _before_of(change) -> bytes | None:
    return change.before if isinstance(change, Edit) else None


def _as_move(root: Path, run_id: str, trash: Trash) -> Move:
    return Move(trash.path, _trash_path(root, run_id, trash.path), trash.before, "trash", trash.after)


def _trash_path(root: Path, run_id: str, path: str) -> str:
    """``.trash/<run-id>/<path>``, or with ``.2``, ``.3``... if taken."""
    candidate = f"{TRASH_DIR}/{run_id}/{path}"
    n = 2
    while os.path.lexists(os.path.join(root, candidate)):
        candidate = f"{TRASH_DIR}/{run_id}/{path}.{n}"
        n += 1
    return candidate


def _journal_change(n: int, change, target: Path) -> journal_mod.Change:
    if isinstance(change, Edit):
        entry = journal_mod.Change(n, "write", change.path, digest(change.before), digest(change.after))
        if change.before is not None:
            try:
                entry.mtime = os.lstat(target).st_mtime_ns
            except OSError:
                pass  # gone: the write will be a conflict
        return entry
    op = "trash" if change.reason == "trash" and change.to.startswith(TRASH_DIR + "/") else "move"
    return journal_mod.Change(n, op, change.path, digest(change.before), to=change.to)


def _move(root: Path, move: Move, inside: str) -> None:
    """Rename ``move.path`` to ``move.to`` if it still holds ``move.before``
    and ``move.to`` does not exist (never over a file).  Raises
    :class:`Conflict`, :class:`TargetError` or OSError."""
    source = vault_target(root, move.path)
    dest = vault_target(root, move.to)
    check_folder(source.parent, inside)
    info = check_target(source, follow_symlinks=False)
    if info is None:
        raise Conflict("moved or deleted since it was read; not moved")
    with open(source, "rb") as handle:
        if handle.read() != move.before:
            raise Conflict("changed since it was read; not moved")
    if os.path.lexists(dest):
        raise Conflict(f"{move.to} exists; autograph never moves a file over another")
    folder = dest.parent
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        owner = owner_for_new(Path(inside))
        if owner is not None:
            top = Path(inside)
            for part in Path(move.to).parent.parts:
                top = top / part
                if top.stat().st_uid != owner[0]:
                    os.chown(top, *owner)
    check_folder(folder, inside)
    if not rename_noreplace(str(source), str(dest)):
        if os.path.lexists(dest):
            raise Conflict(f"{move.to} exists; autograph never moves a file over another")
        os.rename(source, dest)
    fsync_dir(folder)
    fsync_dir(source.parent)
    with open(dest, "rb") as handle:
        moved = handle.read()
    if moved != move.before:  # changed during the move: it goes back, theirs
        if not os.path.lexists(source):
            os.rename(dest, source)
        raise Conflict("changed while being moved; left in place")


def _changed_after(root: Path, result: Result, holds: dict[str, bytes], planned) -> list[tuple]:
    """``(change number, change, bytes now or None)`` of every written path
    that no longer holds the bytes written (another writer came after)."""
    numbers = {change.path: (n, change) for n, (change, _) in enumerate(planned, 1)}
    found = []
    for path in list(result.written):
        if path not in holds:
            continue  # a move or a trash: checked as it was made
        try:
            now = read_regular(vault_target(root, path))
        except (OSError, PathError):
            now = None
        if now != holds[path]:
            found.append((*numbers[path], now))
    return found


def _call_changed_again(result: Result, path: str) -> None:
    """Move ``path`` from written to conflicts: another writer replaced what
    was written (an editor saving its own copy over it)."""
    result.written.remove(path)
    again = (
        "changed again after it was written, by another writer whose edit is not apart from ours; "
        "left as it is now (undo.py leaves it too)"
    )
    if path not in {item.path for item in result.conflicts}:
        result.conflicts.append(Skipped(path, again))
    else:
        result.conflicts[:] = [
            Skipped(c.path, f"{c.error}; then it {again}", c.copy) if c.path == path else c for c in result.conflicts
        ]


def _os_error(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"not written: {reason.lower() if reason else exc.__class__.__name__}"
