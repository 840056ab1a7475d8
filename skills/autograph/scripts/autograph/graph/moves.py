"""The plan of a move: a note, an attachment or a folder to a new path, with every link kept.

:func:`paths_of` turns what a person typed (``OLD NEW``) into a mapping of
vault paths; :func:`plan_move` gives the store changes that carry the move
out, in a crash-safe order, as one journaled run:

1. each moved file is created under its new name with its bytes (its own
   links already retargeted, its modification time kept), so the file
   exists under both names;
2. every note with a link whose target the move changes is rewritten
   (:mod:`relink`: form, ``|alias``, ``#heading`` and ``#^block`` kept);
3. the old names go to ``.trash/<run-id>/`` (nothing is deleted).

A run killed at any point leaves every link resolving (to the old file or
to its copy), and ``undo.py recover`` (or the next writing command) rolls
it back; ``undo.py undo RUN`` takes a finished move back.  A move a part
of which could not be made (a note edited meanwhile, a full disk) is
taken back whole at once (:func:`roll_back_unfinished`), with the room the
store held for that when the run began; if even that fails, the run is
left unfinished for the next writer to take back, and the command exits 3.
A rollback removes the folders the move created while they are empty, so
running the move again does not nest them.  A file whose
mode, owner or extended attributes a new file would not get (a ``chmod
600`` note, a file of another user, one with an ACL) is renamed instead
(Move keeps the inode), before the links are rewritten; its own
links that must change are then rewritten in place, where the store keeps
all of that.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..read import location
from ..read.text import plural, printable
from ..read.vault import GRAPH_DIR
from ..write import relink, store
from ..write.changes import Edit, Move, Result, Skipped, Trash, diff
from ..write.confine import read_regular
from .listing import listed, shown

__all__ = [
    "MoveError",
    "MovePlan",
    "check_mapping",
    "diff_text",
    "move_json",
    "move_text",
    "moves_not_made",
    "paths_of",
    "plan_move",
    "roll_back",
    "roll_back_unfinished",
    "unfinished",
    "vault_path",
]


class MoveError(ValueError):
    """A move that cannot be made as asked (a missing source, a taken
    destination, a path out of the vault); the message says what to do."""


@dataclass
class MovePlan:
    """What a move does.  ``moves`` old -> new vault path of each file;
    ``changes`` the store changes in the order they run; ``links`` every
    rewritten link (:class:`relink.Change`); ``left`` links that will not
    resolve to their file after the move (see :func:`relink.plan_details`);
    ``warnings`` what a person should know (a symlink left leading
    nowhere); ``emptied`` the folders the move leaves empty (told only once
    the move is made)."""

    moves: dict[str, str]
    changes: list = field(default_factory=list)
    links: list = field(default_factory=list)
    left: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    emptied: list[str] = field(default_factory=list)

    def told(self, made: bool) -> list[str]:
        """The warnings to tell: with the folders left empty unless the
        move was not ``made`` (refused or rolled back: nothing was emptied)."""
        empty = [f"{folder}/ is left empty (autograph removes no folder)" for folder in self.emptied]
        return self.warnings + (empty if made else [])


def base_folder(root: Path, text: str, cwd: str | None = None) -> str:
    """The folder a relative path ``text`` typed by a person is read from:
    the current folder when the path names a file or folder of the vault
    from there (``cd vault/people && graph.py mv a.md b.md``, or
    ``../vault/people/a.md`` from a project folder); else the vault's root
    when it names one from there (``people/a.md`` typed in ``people/`` or
    outside the vault); else the current folder when the path names
    something there (outside the vault: refused, naming the vault) or the
    current folder is inside the vault; else the root."""
    real_root = os.path.realpath(root)
    try:
        here = os.path.realpath(cwd or os.getcwd())
    except OSError:  # the current folder was deleted: paths are read from the vault's root
        return real_root
    from_here = os.path.join(here, text)
    if os.path.lexists(from_here) and location.within(from_here, real_root):
        return here
    if os.path.lexists(os.path.join(real_root, text)):
        return real_root
    if os.path.lexists(from_here) or location.is_inside(here, real_root):
        return here
    return real_root


def vault_path(root: Path, text: str, cwd: str | None = None, base: str | None = None) -> str:
    """A path typed by a person as a vault path (``/``-separated, no ``..``
    out of the vault).  An absolute path must lie inside the vault; a
    relative one is read from ``base``, by default :func:`base_folder`.
    Raises :class:`MoveError`."""
    if not text.strip():
        raise MoveError("an empty path; give a file or folder of the vault")
    real_root = os.path.realpath(root)
    if os.path.isabs(text):
        full = os.path.normpath(text)
    else:
        full = os.path.normpath(os.path.join(base or base_folder(root, text, cwd), text))
    parent = os.path.realpath(os.path.dirname(full))  # the folder's symlinks resolved, not the file's
    full = os.path.join(parent, os.path.basename(full)) if os.path.basename(full) else parent
    if full == real_root:
        return ""
    if not full.startswith(real_root + os.sep):
        raise MoveError(f"{text!r} is not inside the vault {root}")
    rel = os.path.relpath(full, real_root).replace(os.sep, "/")
    if any(part.startswith(".") for part in rel.split("/")):
        raise MoveError(f"{text!r}: names starting with '.' are hidden from Obsidian; give a path in the vault")
    return rel


def paths_of(vault, old: str, new: str, cwd: str | None = None) -> dict[str, str]:
    """The vault path of each file ``old`` -> ``new`` moves.

    ``old`` is a file or a folder of the vault (a folder moves with every
    file in it); ``new`` is the new path, or an existing folder (or a path
    ending in ``/``) to move into.  A note keeps ``.md``: ``new`` without it
    gets it.  Raises :class:`MoveError` when ``old`` is not in the vault,
    a destination exists (also in another letter case or Unicode
    normalisation: Obsidian would not tell the two apart), or a folder would move into itself."""
    root = vault.root
    # a relative NEW is read as a relative OLD was: both from here, or both from the root
    base = base_folder(root, new if os.path.isabs(old) else old, cwd)
    source = vault_path(root, old, base=base)
    into = new.endswith(("/", os.sep))
    target = vault_path(root, new, base=base)
    files = set(vault.files)
    if source in files:
        moving = {source: ""}
    else:
        prefix = source + "/" if source else ""
        moving = {path: path[len(prefix) :] for path in vault.files if path.startswith(prefix)}
        if not source or not moving:
            raise MoveError(f"{old!r} is no file or folder of the vault {root}" + (" (give one)" if not source else ""))
    if os.path.isdir(os.path.join(root, target)) and target != source or into:
        target = (target + "/" if target else "") + source.rsplit("/", 1)[-1]
    if source in files:
        if source.endswith(".md") and not target.lower().endswith(".md"):
            target += ".md"
    kept = set(source.split("/"))
    for name in target.split("/"):
        why = None if name in kept else _unreachable(name)
        if why:
            raise MoveError(f"{new!r}: no link can reach a file or folder whose name {why}; choose another name")
    if source in files:
        mapping = {source: target}
    else:
        if target == source or target.startswith(source + "/"):
            raise MoveError(f"cannot move the folder {source!r} into itself ({target!r})")
        mapping = {path: f"{target}/{rest}" for path, rest in moving.items()}
    if all(a == b for a, b in mapping.items()):
        raise MoveError(f"{old!r} is already at {new!r}; nothing to move")
    _, refused = check_mapping(vault, mapping)
    if refused:
        raise MoveError(refused[0]["error"])
    return mapping


_LINK_ENDS = re.compile(r"[#^\[\]|\r\n\x85\u2028\u2029]")
# Obsidian refuses \ and : in a file name; a backtick, $, %% or <!-- in two
# links on one line makes code, math or a comment of the text between them
_LINK_BREAKS = re.compile(r"[\\:`$]|%%|<!--")


def _unreachable(name: str) -> str | None:
    """Why a wikilink cannot name a file or folder called ``name`` (None:
    it can).  Obsidian's rule: ``#``, ``^``, ``[``, ``]`` and ``|`` end a
    link's target (it refuses them in a file name it makes); a target is
    trimmed, so a name that starts or ends with a space is another name; a
    note ``x.md.md`` is reached by ``[[x.md]]``, which names ``x.md``."""
    if _LINK_ENDS.search(name):
        return "holds #, ^, [, ], | or a line break (they end a link's target)"
    if _LINK_BREAKS.search(name):
        return (
            "holds \\, :, a backtick, $, %% or <!-- (Obsidian refuses the first two; the others make code, "
            "math or a comment of a line with two links)"
        )
    stem = name[:-3] if name.lower().endswith(".md") else name
    if name != name.strip() or stem != stem.strip():
        return "starts or ends with a space (a link's target is trimmed)"
    if name.lower().endswith(".md.md"):
        return "ends in .md.md (a link to it would name another note)"
    return None


def check_mapping(vault, mapping: dict[str, str]) -> tuple[dict[str, str], list[dict]]:
    """Split ``mapping`` into the moves that can be made and the refused
    ones, ``{path, to, error}``: a destination that exists (also in another
    letter case, which Obsidian would not tell apart, unless it is the file
    itself), two files moving to one path, a hidden name, a file with other
    hard links.  Paths are
    compared as the resolver compares them: after NFC, in lower case (a
    ``Café`` written decomposed and one written composed are one name)."""
    root = vault.root
    others = {_name_key(path): path for path in vault.files if path not in mapping}
    ok: dict[str, str] = {}
    refused: list[dict] = []
    taken: set[str] = set()
    for path, dest in mapping.items():
        error = None
        key = _name_key(dest)
        if any(part.startswith(".") for part in dest.split("/")):
            error = f"{dest!r}: names starting with '.' are hidden from Obsidian"
        elif key in others or (os.path.lexists(os.path.join(root, dest)) and key != _name_key(path)):
            error = f"{dest!r} exists ({others.get(key, dest)}); autograph never moves a file over another"
        elif key in taken:
            error = f"{dest!r}: another file of this move goes there"
        else:
            error = _hard_links(root, path)
        if error is None:
            ok[path] = dest
            taken.add(key)
        else:
            refused.append({"path": path, "to": dest, "error": error})
    return ok, refused


def _hard_links(root, path: str) -> str | None:
    """Why ``path`` may not move when it has other hard links (a copy under
    the new name and the old name trashed would split them, as the store
    refuses to replace such a file), else None."""
    try:
        links = os.lstat(os.path.join(root, path)).st_nlink
    except OSError:
        return None  # gone or unreadable: plan_move says so
    if links > 1:
        return (
            f"{path!r} has {links} hard links; moving it would split them, so autograph does not "
            "(remove the other links first, or move the file with mv)"
        )
    return None


def _name_key(path: str) -> str:
    """A vault path as Obsidian's resolver compares paths (:mod:`links`):
    NFC, then lower case; two paths with one key are one note to it (and
    to a case- and normalisation-insensitive file system, as on macOS)."""
    return unicodedata.normalize("NFC", path).lower()


def _keeps_meta(full: str) -> bool:
    """Whether a new file made by the store would get this file's mode,
    owner and extended attributes (it gets none: POSIX ACLs, SELinux labels
    and ``user.*`` attributes are all extended attributes)."""
    info = os.lstat(full)
    if hasattr(os, "listxattr"):
        try:
            if os.listxattr(full, follow_symlinks=False):
                return False
        except OSError:
            pass  # the file system keeps none
    umask = os.umask(0)
    os.umask(umask)
    if stat.S_IMODE(info.st_mode) != 0o666 & ~umask:
        return False
    if os.geteuid() == 0:
        folder = os.stat(os.path.dirname(full))
        return (info.st_uid, info.st_gid) == (folder.st_uid, folder.st_gid)
    return info.st_uid == os.geteuid() and info.st_gid == os.getegid()


def plan_move(
    vault, mapping: dict[str, str], schema=None, index=None, settings=None, texts: dict[str, str] | None = None
) -> MovePlan:
    """The store changes of the moves in ``mapping`` (old -> new vault
    path, as :func:`paths_of` gives), with every link that resolved to a
    moved file rewritten to keep resolving to it, and links that a moved
    file would take over rewritten to keep their target.  Notes in the
    templates folders (and the schema's ``ignore_folders``) are never
    rewritten: their links that need it are in ``left``.  ``texts`` are
    pending new texts of notes the caller edits in the same run (path ->
    whole text, as :func:`relink.plan_details`): each such note gets one
    change that holds both.  Raises :class:`MoveError` for a file that
    cannot be read."""
    plan = MovePlan(dict(mapping))
    frozen = vault.frozen(schema)
    details = relink.plan_details(vault, mapping, False, texts, index, settings=settings, frozen=frozen)
    plan.links, plan.left = details.changes, details.left
    own = {edit.path: edit for edit in details.edits if edit.path in mapping}
    creates, renames, in_place, trashes = [], [], [], []
    for old, new in mapping.items():
        full = os.path.join(vault.root, old)
        if os.path.islink(full):
            raise MoveError(f"{old} is a symlink; move the file it points to, or the link itself with mv")
        linked = _hard_links(vault.root, old)
        if linked:
            raise MoveError(linked)
        try:
            data = read_regular(full)
            mtime = os.lstat(full).st_mtime_ns
            keeps = _keeps_meta(full)
        except OSError as exc:
            raise MoveError(f"{old}: cannot read it ({exc.strerror or exc})") from None
        edit = own.get(old)
        if keeps:
            after = edit.after if edit is not None else data
            creates.append(Edit(new, None, after, f"moved from {old}", None if edit else mtime))
            # never trashed unless its copy was written (the store skips it then), whatever follows
            trashes.append(Trash(old, data, f"moved to {new}", **_after(new)))
        else:
            # a new file would widen or drop who may read it: the inode moves,
            # then its own links are rewritten where it now is
            renames.append(Move(old, new, data, f"moved to {new}"))
            if edit is not None:
                in_place.append(Edit(new, data, edit.after, f"its links, after the move from {old}"))
    rewrites = [edit for edit in details.edits if edit.path not in mapping]
    plan.changes = renames + creates + in_place + rewrites + trashes
    folders = {old.rsplit("/", 1)[0] for old in mapping if "/" in old}
    plan.emptied = _emptied(vault, folders, mapping)
    plan.warnings += _symlinks_to(vault.root, mapping)
    return plan


def _emptied(vault, folders: set[str], mapping: dict[str, str]) -> list[str]:
    """The ``folders`` that hold nothing but moved files, as the disk has
    them (a symlink or a hidden file the vault's walk leaves out counts)."""
    found = []
    for folder in sorted(folders):
        try:
            names = os.listdir(os.path.join(vault.root, folder))
        except OSError:
            continue
        if all(f"{folder}/{name}" in mapping for name in names):
            found.append(folder)
    return found


def _symlinks_to(root, mapping: dict[str, str]) -> list[str]:
    """A warning for each symlink in the vault that leads to a moved file:
    it is not rewritten (a symlink is no link of Obsidian's), so after the
    move it leads nowhere."""
    real_root = os.path.realpath(root)
    moved = {os.path.join(real_root, old): new for old, new in mapping.items()}
    warnings = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            full = os.path.join(folder, name)
            if os.path.islink(full) and os.path.realpath(full) in moved:
                link = os.path.relpath(full, root).replace(os.sep, "/")
                new = moved[os.path.realpath(full)]
                warnings.append(f"{link} is a symlink to a file that moves to {new}; it is left leading nowhere")
    return sorted(warnings)


def unfinished(plan: MovePlan, outcome: dict) -> list[dict]:
    """The parts of a move that were not carried out, each ``{path, error}``:
    a new name that was not written (create or rename), an old name that
    was not trashed (a person edited the note meanwhile: their version is
    at the old name), a note whose link rewrite was not written (its links
    would name a trashed file).  Any of these leaves the vault wrong (links
    to a stale copy, or broken links), so the run must be rolled back
    (:func:`roll_back`).  A note whose rewrite was merged with another
    writer's edit holds the rewrite and is not listed.  ``outcome`` is
    :func:`cli.carry_out`'s."""
    written = set(outcome.get("written", []))
    skipped = {item["path"]: item["error"] for item in outcome.get("failed", []) + outcome.get("conflicts", [])}
    found, seen = [], set()
    for change in plan.changes:
        path = change.path
        if path in skipped and path not in written and path not in seen:
            seen.add(path)
            found.append({"path": path, "error": skipped[path]})
    return found


def _after(path: str) -> dict:
    """``after=(path,)`` for a Trash when the store knows the field (it
    skips the trash when ``path`` was not written), else nothing: the
    run is rolled back then anyway (:func:`unfinished`)."""
    import dataclasses

    fields = {f.name for f in dataclasses.fields(Trash)}
    return {"after": (path,)} if "after" in fields else {}


def moves_not_made(plan: MovePlan, outcome: dict) -> list[str]:
    """The paths of :func:`unfinished` (a new name not written, an old name
    not trashed, a link note not rewritten): when any is listed the run's
    links do not all lead to the moved file, so it must be rolled back."""
    return [item["path"] for item in unfinished(plan, outcome)]


def roll_back(
    root, run_id: str, wait: float = 0.0, moves: dict[str, str] | None = None, notes: list[str] = ()
) -> Result:
    """Take back the run ``run_id`` (as ``undo.py undo`` does, file by
    file), as its own journaled run.  Used when a part of a move could not
    be made.  A file can stay where the move put it, or a linking note
    keep the move's rewrite, when someone edited it meanwhile: with
    ``moves`` (old -> new path) and ``notes`` (the notes whose links the
    move rewrote), every link of those notes and of the files not taken
    back is then pointed at where each moved file now is, on the text it
    holds (a second journaled run), so edits stay and no link is left
    broken.  The result lists what did not go back."""
    from ..write import journal, undo

    graph = Path(os.path.realpath(root)) / GRAPH_DIR
    journal.release_space(graph, run_id)  # the room the store held for this rollback
    run = journal.load(graph, run_id)
    changes, not_undone = undo.plan_undo(Path(root), run, partial=True)
    if moves:
        # a moved file that cannot go back (edited at its new name) stays there, its old name
        # in .trash: bringing that back too would make two copies, the edit in the one no link names
        held = {item["path"] for item in not_undone}
        staying = {old for old, new in moves.items() if new in held}
        changes = [c for c in changes if not (isinstance(c, Move) and c.to in staying)]
    command = "graph.py mv (rolled back)"
    result = store.apply(Path(root), changes, wait=wait, command=command, undoes=run_id)
    result.conflicts = [Skipped(item["path"], item["error"]) for item in not_undone] + result.conflicts
    where = _where_files_are(root, moves) if moves else None
    for _ in range(3) if where else ():  # a note edited again meanwhile is read afresh, a few times
        back = _links_back(root, where, sorted({*notes, *moves, *moves.values(), *(c.path for c in result.conflicts)}))
        if not back:
            break
        again = store.apply(Path(root), back, wait=wait, command=command, undoes=run_id)
        fixed = set(again.written)
        result.written += again.written
        tried = {edit.path for edit in back}
        result.conflicts = [c for c in result.conflicts if c.path not in fixed and c.path not in tried]
        result.conflicts += again.conflicts
        result.failed += again.failed
        if not again.conflicts:
            break
    return result


def _where_files_are(root, moves: dict[str, str]) -> tuple | None:
    """``(retarget, resolver as the links see the files, resolver now, the
    vault's files)`` for the files of ``moves`` not where a link to them
    may lead: one back at its old name (links name the new one) or left at
    the new one, edited meanwhile (links name the old); None when every
    moved file is at one name only as planned."""
    from ..read.links import Resolver
    from ..read.vault import walk

    files, _ = walk(Path(root))
    now = set(files)
    retarget = {new: old for old, new in moves.items() if old in now and new not in now}
    retarget |= {old: new for old, new in moves.items() if new in now and old not in now}
    if not retarget:
        return None
    as_linked = Resolver(sorted((now - set(retarget.values())) | set(retarget)))
    return retarget, as_linked, Resolver(files), now


def _links_back(root, where: tuple, paths: list[str]) -> list:
    """Edits of the notes ``paths`` (as they are now) whose links lead to a
    name of a moved file it is not at (``where``: :func:`_where_files_are`),
    each such link rewritten to reach the file where it is
    (:func:`relink.retarget_text`)."""
    from ..read.note import read_note

    retarget, as_linked, resolver, now = where
    settings = relink.link_settings(root)
    edits = []
    for path in sorted(set(paths) & now):
        try:
            note = read_note(str(root), path)
        except OSError:
            continue
        if note.text is None or not path.endswith(".md"):
            continue
        text, found = relink.retarget_text(note.text, path, as_linked, retarget, False, resolver, settings)
        if found and note.encode(text) != note.data:
            edits.append(Edit(path, note.data, note.encode(text), "its links follow the move taken back"))
    return edits


def roll_back_unfinished(root, plan: MovePlan, outcome: dict, wait: float = 0.0) -> str | None:
    """After ``plan`` was carried out (``outcome``: :func:`cli.carry_out`'s),
    take the whole run back when a part of the move was not made
    (:func:`unfinished`), so that no link leads to a stale copy or to
    nothing (:func:`roll_back`, waiting up to ``wait`` seconds for the
    writer lock).

    Adds to ``outcome``, in this order: ``rolled_back`` (the id of the run
    that took the move back, else None), ``not_rolled_back`` (``[{path,
    error, copy}]``, what the rollback could not take back) and
    ``not_moved`` (``[{path, error}]``, the parts not made; empty for a dry
    run).  Returns what to tell on stderr when the move was rolled back
    (one line, the items as given: not made printable), else None.

    Raises OSError when the rollback itself fails (an error, or a file it
    could not write back): the move's run then counts as not finished
    (:func:`store.reopen`), so the next writing command or ``undo.py
    recover`` takes it back, and the command exits 3 saying so."""
    outcome["rolled_back"] = None
    outcome["not_rolled_back"] = []
    outcome["not_moved"] = unfinished(plan, outcome) if outcome["run"] else []
    if not outcome["not_moved"]:
        return None
    # a part of the move was not made (a new name not written, an old name someone edited meanwhile, a link
    # note not rewritten): the links would lead to a stale copy or nowhere, so the whole run is taken back
    try:
        undone = roll_back(root, outcome["run"], wait, plan.moves, [c.path for c in plan.links])
    except OSError as exc:
        _not_taken_back(root, outcome, exc.strerror or str(exc))
    if undone.failed:
        _not_taken_back(root, outcome, listed([f"{item.path}: {item.error}" for item in undone.failed]))
    outcome["rolled_back"] = undone.run_id
    outcome["not_rolled_back"] = [item.as_dict() for item in undone.conflicts + undone.failed]
    why = listed([f"{item['path']}: {item['error']}" for item in outcome["not_moved"]])
    if outcome["not_rolled_back"]:
        left = listed([f"{item['path']}: {item['error']}" for item in outcome["not_rolled_back"]])
        told = (
            f"rolled back but for {plural(len(outcome['not_rolled_back']), 'file')} ({left}); "
            "graph.py health shows what that left, graph.py fix repairs links"
        )
    else:
        told = "rolled back: no file moved, every link as before, a person's edit kept where they made it"
    return (
        f"the move could not be completed ({why}); the run {outcome['run']} was {told}; "
        "run it again once the notes are not being edited"
    )


def _not_taken_back(root, outcome: dict, why: str) -> None:
    """The move could not be made nor taken back now (``why``): leave its
    run unfinished for the next writer to take back, and raise OSError
    (the command exits 3)."""
    not_made = listed([f"{item['path']}: {item['error']}" for item in outcome["not_moved"]])
    try:
        store.reopen(root, outcome["run"])
        then = "the next writing command, or undo.py recover, takes it back once the disk has room"
    except OSError as exc:
        why_not = exc.strerror or exc
        then = f"it could not even be marked unfinished ({why_not}); undo.py undo {outcome['run']} takes it back"
    raise OSError(
        f"the move could not be completed ({not_made}) nor taken back now ({why}); "
        f"the run {outcome['run']} does not count as done: {then}"
    )


def _change_row(change) -> dict:
    """A store change as ``{op, path, to}``: op create or write (an Edit),
    trash, or rename (a Move, ``to`` its new path)."""
    if isinstance(change, Edit):
        return {"op": "create" if change.before is None else "write", "path": change.path, "to": None}
    if isinstance(change, Trash):
        return {"op": "trash", "path": change.path, "to": None}
    return {"op": "rename", "path": change.path, "to": change.to}


def move_json(root, plan: MovePlan, outcome: dict, warnings: list[str]) -> dict:
    """``graph.py mv --json``: ``{vault, moves[{from, to}], links[{path,
    line, old, new}], left[], warnings[], changes[{op, path, to}]}``, then
    the keys of ``outcome`` (:func:`cli.carry_out`'s, completed by
    :func:`roll_back_unfinished`)."""
    return {
        "vault": str(root),
        "moves": [{"from": a, "to": b} for a, b in plan.moves.items()],
        "links": [change._asdict() for change in plan.links],
        "left": plan.left,
        "warnings": warnings,
        "changes": [_change_row(c) for c in plan.changes],
        **outcome,
    }


def move_text(plan: MovePlan, outcome: dict, done: bool) -> str:
    """The human report of ``graph.py mv`` before its write outcome: the
    parts not made when the run was rolled back, the files moved (``done``)
    or that would be, the links rewritten, and those that will not follow
    the move, each list cut at :data:`listing.SHOWN` rows.  No final newline."""
    lines = []
    if outcome["rolled_back"]:
        lines.append(f"not moved: the run was rolled back ({outcome['rolled_back']}); nothing changed")
        lines += shown([f"{r['path']}: {r['error']}" for r in outcome["not_moved"]])
    planned = "planned to move" if outcome["rolled_back"] else "would move"
    lines.append(("moved" if done else planned) + f" {plural(len(plan.moves), 'file')}:")
    lines += shown([f"{a} -> {b}" for a, b in plan.moves.items()])
    links = [change._asdict() for change in plan.links]
    sources = len({link["path"] for link in links})
    verb = "rewritten" if done else ("rewritten, then taken back" if outcome["rolled_back"] else "to rewrite")
    lines.append(f"{plural(len(links), 'link')} in {plural(sources, 'note')} {verb}")
    lines += shown([f"{r['path']}:{r['line']}  {r['old']} -> {r['new']}" for r in links])
    if plan.left:
        lines.append(f"{plural(len(plan.left), 'link')} that will not follow the move:")
        lines += shown([f"{r['path']}:{r['line']}  {r['target']}  ({r['why']})" for r in plan.left])
    return "\n".join(lines)


def diff_text(changes) -> str:
    """``--diff`` for a run of store changes: the unified diff of each note
    rewritten in place (an Edit with ``before``), each line indented by four
    spaces and made printable; "" when there is none.  No final newline."""
    lines = []
    for change in changes:
        if isinstance(change, Edit) and change.before is not None:
            lines += ["    " + printable(line) for line in diff(change).splitlines()]
    return "\n".join(lines)
