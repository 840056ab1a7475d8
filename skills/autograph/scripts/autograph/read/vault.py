"""Walking a vault: which files are notes, ignore rules, symlinks, the note cache.

Obsidian's rules: files and folders whose name starts with ``.`` are not part
of the vault (``.obsidian/``, ``.trash/``, ``.git/``, macOS ``._Note.md``),
and a note is a file ending in ``.md``.  Every other file is an attachment
that links may point to.

Symlinks are followed once each by real path: a file or folder reached a
second time (through a link, or a loop such as ``loop -> .``) is skipped, and
the canonical path of a note is the one reached without a symlink (BR-31).
A symlink whose real path lies outside the vault is skipped with a warning,
so nothing is ever read from or written to outside the vault.
"""

from __future__ import annotations

import json
import os
import stat
from functools import cached_property
from pathlib import Path

from . import jsonfile
from .conflicts import may_be_copy, original_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .links import Resolver
    from .note import Note

__all__ = ["GRAPH_DIR", "MAX_NOTE_BYTES", "TRASH_DIR", "Vault", "VaultError", "walk"]

# autograph's own folders in a vault (dot folders: Obsidian and the walk skip them)
GRAPH_DIR = ".graph"  # derived files: reports, caches, the search index, the journal, the writer lock
TRASH_DIR = ".trash"  # what autograph removes, under a run id: nothing is deleted

# links from which Vault.resolver_for builds the resolver of every file: fewer
# are answered by one over only the files they can mean (one pass over the paths;
# measured at 100k files: 25 ms for 5,000 links, 50 ms for 20,000, 80 ms for every file's)
FEW_LINKS = 10000
FEW_MADE = 3  # such resolvers one vault makes before it makes the one of every file
# Notes are read whole; one larger than this is reported, not read (a stray
# export or dump would otherwise take gigabytes of memory).
MAX_NOTE_BYTES = 32 << 20


class VaultError(Exception):
    """The vault folder cannot be used (missing, not a folder, unreadable)."""


def read_note(root, path: str, limit: int | None = None):
    """:func:`note.read_note`, imported on first use: a command that only
    walks the vault (a warm search) does not load the frontmatter parser."""
    global _read_note
    if _read_note is None:  # once: an import statement per note costs a tenth of reading it
        from .note import read_note as read

        _read_note = read
    return _read_note(root, path, limit)


_read_note = None


def walk(root: Path, stamps: dict | None = None, notes: list | None = None) -> tuple[list[str], list[str]]:
    """Every file of the vault at ``root``: ``(paths, warnings)``.

    Paths are vault-relative with ``/``, sorted; warnings name what was
    skipped (broken symlinks, symlinks out of the vault, names that are not
    UTF-8, folders that cannot be listed).  A symlink to a file or folder
    already counted is skipped silently: its content is in the vault once,
    under the path without the symlink (BR-31).  Deterministic: never
    depends on directory listing order.

    ``stamps``, when given, receives ``path: (size, mtime_ns, ctime_ns)``
    of each note (``.md``) found, stat'ed during the walk (through a
    symlink: of its target); a note whose stat fails has none.  ``notes``,
    when given, receives the notes among the paths, sorted (what
    :attr:`Vault.notes` would filter them for: 100k paths, 6 ms).
    """
    root_real = os.path.realpath(root)
    seen_dirs = {root_real}
    seen_files: set[str] = set()
    files: list[str] = []
    warnings: list[str] = []
    deferred: list[tuple[str, str]] = []  # (relative path, real path) of symlinks

    def inside(real: str) -> bool:
        return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)

    def scan(folder: str, real_folder: str, rel: str, seen: set | None = None) -> None:
        # real_folder is the folder's real path, so entries that are not
        # symlinks get theirs by joining, without a system call each
        try:
            entries = sorted(os.scandir(folder), key=_name)
        except OSError as exc:
            warnings.append(f"{rel or '.'}: cannot list folder ({exc.strerror})")
            return
        subdirs = []
        prefix = real_folder if real_folder.endswith(os.sep) else real_folder + os.sep  # os.path.join, once
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = f"{rel}/{entry.name}" if rel else entry.name
            if not entry.name.isascii() and not _utf8(entry.name):
                warnings.append(f"{path.encode('utf-8', 'backslashreplace').decode()}: name is not UTF-8; skipped")
                continue
            if entry.is_symlink():
                deferred.append((path, entry.path))
            elif entry.is_dir(follow_symlinks=False):
                subdirs.append((entry.path, prefix + entry.name, path))
            elif entry.is_file(follow_symlinks=False):
                # before the symlinks (they wait in deferred) no file is reached twice, so
                # ``seen`` is filled when they come: a file through one may be counted already
                if seen is not None:
                    real = prefix + entry.name
                    if real in seen:
                        continue
                    seen.add(real)
                files.append(path)
                if (stamps is not None or notes is not None) and path.endswith(".md"):
                    if notes is not None:
                        notes.append(path)
                    if stamps is None:
                        continue
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    stamps[path] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        for full, real, path in subdirs:
            if real not in seen_dirs:
                seen_dirs.add(real)
                scan(full, real, path, seen)

    scan(str(root), root_real, "")
    if deferred:  # the real paths of the files found so far, for the symlinks to be compared with
        base = root_real.rstrip(os.sep) + os.sep
        seen_files.update(base + path.replace("/", os.sep) for path in files)
    # Symlinks last, so the path without a symlink is the canonical one.
    while deferred:
        batch, deferred[:] = sorted(deferred), []
        for path, full in batch:
            real = os.path.realpath(full)
            try:
                info = os.stat(real)
                mode = info.st_mode
            except OSError:
                mode = None
            if mode is None:
                warnings.append(f"{path}: broken symlink skipped")
            elif not inside(real):
                warnings.append(f"{path}: symlink to outside the vault skipped")
            elif not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                # reading a FIFO would hang, a device would never end
                warnings.append(f"{path}: symlink to something that is not a regular file or folder skipped")
            elif stat.S_ISDIR(mode):
                if real not in seen_dirs:
                    seen_dirs.add(real)
                    scan(full, real, path, seen_files)
            elif real not in seen_files:
                seen_files.add(real)
                files.append(path)
                if path.endswith(".md"):
                    if notes is not None:
                        notes.append(path)
                    if stamps is not None:
                        stamps[path] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    files.sort()
    if notes is not None:
        notes.sort()
    return files, warnings


class _CardSet:
    """:meth:`Vault.card_set`: ``path in cards``, nothing else."""

    __slots__ = ("_schema", "_vault")

    def __init__(self, vault: Vault, schema):
        self._vault, self._schema = vault, schema

    def __contains__(self, path) -> bool:
        return isinstance(path, str) and self._vault.is_card(path, self._schema)


def _may_be_page(path: str) -> bool:
    """Whether ``path`` is named as a Map of Content page ``moc.py`` writes
    (:func:`generated.is_page_path`, in any folder)."""
    from .generated import is_page_path

    return is_page_path(path, path.rsplit("/", 1)[0] if "/" in path else "")


def _inserted(paths: list[str], path: str) -> list[str]:
    """A copy of sorted ``paths`` with ``path`` in its place."""
    import bisect

    found = list(paths)
    bisect.insort(found, path)
    return found


def _name(entry) -> str:
    return entry.name


def _utf8(name: str) -> bool:
    """False for names with bytes that are not UTF-8 (surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Vault:
    """A vault on disk: its files, its notes, and parsed notes on demand.

    ``files`` holds every file (notes and attachments); ``notes`` the ``.md``
    ones.  :meth:`note` reads and caches a note; :attr:`resolver` resolves
    links against all files.  ``progress`` (has ``step()``) is told of each
    note read.
    """

    # A plain class: dataclasses imports inspect, ~10 ms of the start of every
    # command, and a warm search.py query is measured against reading the vault.
    def __init__(self, root: Path, files: list[str], warnings: list[str] | None = None):
        self.root = root
        self.files = files
        self.warnings = [] if warnings is None else warnings
        self._notes: dict[str, Note] = {}
        self._given: dict[str, Note] = {}  # notes a view holds as if written (with_text)
        # cards a run of edits touched already (card.py batch): one run is one access, however many lines
        self.touched_in_run: frozenset[str] = frozenset()
        self._resolver: Resolver | None = None
        self._few: Resolver | None = None  # the last resolver_for made of the files some links can mean
        self._few_made = 0
        self._generated: dict[int, tuple] = {}  # id(schema) -> (schema, generated_mocs)
        self._cards: dict[int, tuple] = {}  # id(schema) -> (schema, cards, a set of them or None)
        self._rules: dict[int, tuple] = {}  # id(schema) -> (schema, is_card(path), the notes as a set)
        self._note_list: tuple | None = None  # (files, the notes among them)
        self._note_set: tuple | None = None  # (files, the notes among them as a set)
        self.progress: object | None = None
        # what was learned of the files on disk, shared by the views of one
        # walk (with_text writes nothing): the notes the index file holds as they are
        self.on_disk: dict = {}

    def __repr__(self) -> str:
        return f"Vault(root={self.root!r}, files={len(self.files)})"

    @staticmethod
    def check_folder(root: str | os.PathLike) -> Path:
        """``root`` as a Path; raises :class:`VaultError` if it is not a folder."""
        path = Path(root)
        if not path.exists():
            raise VaultError(f"vault folder not found: {path}")
        if not path.is_dir():
            raise VaultError(f"not a folder: {path} (give the vault's folder)")
        return path

    @classmethod
    def open(cls, root: str | os.PathLike, stamps: bool = False) -> Vault:
        """Walk the vault at ``root``; raises :class:`VaultError` if it is not
        a folder.  ``stamps``: every note's ``(size, mtime_ns, ctime_ns)`` is
        taken during the walk, kept in ``on_disk["stamps"]``."""
        path = cls.check_folder(root)
        taken: dict | None = {} if stamps else None
        vault = cls.walked(path, taken)
        if taken is not None:
            vault.on_disk["stamps"] = taken
        return vault

    @classmethod
    def walked(cls, root: Path, stamps: dict | None) -> Vault:
        """The vault at folder ``root`` as :func:`walk` finds it, its notes
        listed during the walk; ``stamps``: a dict the walk fills with every
        note's stamp, or None."""
        notes: list[str] = []
        files, warnings = walk(root, stamps, notes)
        vault = cls(root, files, warnings)
        vault._note_list = (files, notes)
        return vault

    def with_text(self, path: str, data: bytes) -> Vault:
        """A new view of this vault in which the note ``path`` (added to its
        files if new) holds ``data``, as if it had been written: for
        planning further on an edit not written yet.  The notes an earlier
        view was given stay as given (a chain of views is a run of edits:
        ``card.py batch`` plans each line on the ones before).  Nothing is
        written."""
        from .note import Note

        files = self.files if path in self.files else sorted([*self.files, path])
        view = Vault(self.root, files, list(self.warnings))
        view._given = {**self._given, path: Note.from_bytes(path, data)}
        if not _may_be_page(path):  # its text cannot make it a generated MOC: what was known of cards holds
            view._generated = dict(self._generated)
            if files is self.files:
                view._note_list, view._cards = self._note_list, dict(self._cards)
            elif path.endswith(".md"):  # a note added: the lists known so far, with it where it belongs
                view._note_list = None if self._note_list is None else (files, _inserted(self._note_list[1], path))
                view._cards = {
                    key: (schema, _inserted(found, path) if self._card_rule(schema)(path) else found, None)
                    for key, (schema, found, _) in self._cards.items()
                }
        view.touched_in_run = self.touched_in_run
        view.on_disk = self.on_disk
        view._notes.update(view._given)
        return view

    @property
    def given(self) -> dict:
        """``{path: bytes}`` of the notes :meth:`with_text` gave this view
        (none for a vault opened from disk)."""
        return {path: note.data for path, note in self._given.items()}

    @property
    def notes(self) -> list[str]:
        """The Markdown files of :attr:`files` (listed once per file list: a
        large vault's is asked for many times a command)."""
        files = self.files
        known = self._note_list
        if known is None or known[0] is not files:
            known = self._note_list = (files, [path for path in files if path.endswith(".md")])
        return known[1]

    @property
    def note_set(self) -> frozenset[str]:
        """:attr:`notes` as a set, made once per file list (a command that
        names several notes asks it each time)."""
        known = self._note_set
        if known is None or known[0] is not self.files:
            known = self._note_set = (self.files, frozenset(self.notes))
        return known[1]

    def note(self, path: str, keep: bool = True) -> Note:
        """The parsed note at vault-relative ``path`` (read once, then cached;
        ``keep=False`` does not cache a note read now, so a pass over a large
        vault does not hold every note's text to the end of the run).

        A note that cannot be read (permissions, deleted since the walk, too
        large) comes back with ``text = None`` and ``error`` saying why; it is
        reported, never an exception.
        """
        note = self._notes.get(path)
        if note is None:
            try:
                note = read_note(str(self.root), path, MAX_NOTE_BYTES)
            except OSError as exc:
                from .note import Note

                note = Note(path, b"", None, False, f"cannot read: {exc.strerror or exc}")
            if keep:
                self._notes[path] = note
            if self.progress is not None:
                self.progress.step()
        return note

    @cached_property
    def template_folders(self) -> list[str]:
        """The vault's templates folders, as its settings name them: the core
        Templates plugin (``.obsidian/templates.json``, key ``folder``) and
        Templater (``.obsidian/plugins/templater-obsidian/data.json``, key
        ``templates_folder``).  Vault-relative, without ``/`` at the ends;
        unreadable or odd settings give none."""
        found = []
        for name, key in (
            ("templates.json", "folder"),
            ("plugins/templater-obsidian/data.json", "templates_folder"),
        ):
            try:
                data = jsonfile.read_bytes(os.path.join(self.root, ".obsidian", name), limit=1 << 20)
                value = json.loads(data.decode("utf-8")).get(key)
            except (OSError, ValueError, AttributeError, RecursionError):  # NotAFile is a ValueError
                continue
            if isinstance(value, str) and value.strip("/ ") and ".." not in value.split("/"):
                found.append(value.strip("/"))
        return found

    def cards(self, schema=None) -> list[str]:
        """The notes that are cards: every note outside the templates folders
        (:attr:`template_folders`) and the schema's ``ignore_folders``, other
        than the always-loaded index files (``index.files``, e.g.
        ``MEMORY.md``) and the hubs named in ``hubs.names`` (``index``,
        ``Home``, ...), compared without letter case.

        The one place that decides what a card is.  Templates are read for
        links like every note, but they are not cards: no command checks,
        fixes, decays or counts them as orphans, since a card's fields
        written into a template would be copied into every note made from it.
        An index or a named hub is a list of cards, not one: a ``tier`` or a
        ``type`` written into ``MEMORY.md`` would cost every session a line.
        A sync client's conflict copy (:mod:`conflicts`) is not a card: it
        holds one device's version of a note, never the subject itself.
        Maps of Content written by ``moc.py generate`` are not cards either
        (:func:`generated.generated_paths`: they are rewritten whole, so a field
        written into one would not last, and they are hubs).
        ``schema`` is a :class:`model.Schema` (None: templates only).
        """
        folders = self._frozen_folders(schema)
        if schema is None:
            return [path for path in self.notes if not path.startswith(folders)] if folders else list(self.notes)
        return list(self._known_cards(schema)[1])

    def is_card(self, path: str, schema) -> bool:
        """Whether note ``path`` is one of :meth:`cards`: from the set of
        them when they were listed, else by their rule for this one path
        (a look-up asking of a few notes costs no pass over a large vault)."""
        known = self._cards.get(id(schema))
        if known is not None and known[0] is schema:
            if known[2] is None:
                known = self._cards[id(schema)] = (schema, known[1], frozenset(known[1]))
            return path in known[2]
        rule = self._rules.get(id(schema))
        if rule is None or rule[0] is not schema:
            rule = self._rules[id(schema)] = (schema, self._card_rule(schema), self.note_set)
        return path in rule[2] and rule[1](path)

    def card_set(self, schema) -> _CardSet:
        """The cards as a set for membership tests (``path in ...``), each
        answered by :meth:`is_card`: a command that asks of a few notes
        lists no card."""
        return _CardSet(self, schema)

    def _known_cards(self, schema) -> tuple:
        """``(schema, cards, set of them or None)``, found once per schema
        (a command asks several times: its look-ups each do)."""
        known = self._cards.get(id(schema))
        if known is not None and known[0] is schema:
            return known
        found = list(filter(self._card_rule(schema), self.notes))
        known = self._cards[id(schema)] = (schema, found, None)
        return known

    def _card_rule(self, schema):
        """:meth:`cards`' rule as a function of one note's path (see there)."""
        folders = self._frozen_folders(schema)
        index_files = {f.strip("/").lower() for f in schema.index_files}
        hub_names = schema.hub_names
        generated = self.generated_mocs(schema)
        notes: set[str] = set()  # the vault's notes, filled when a name asks (OneDrive's copies)

        def is_card(path: str) -> bool:
            if folders and path.startswith(folders):
                return False
            if path in generated:
                return False
            if may_be_copy(path):
                if not notes:
                    notes.update(self.notes)
                if original_of(path, notes) is not None:
                    return False  # a sync client's conflict copy: an artefact, never the card
            if path.lower() in index_files:
                return False
            stem = path.rsplit("/", 1)[-1]
            return (stem[:-3] if stem.lower().endswith(".md") else stem).lower() not in hub_names

        return is_card

    def _frozen_folders(self, schema=None) -> tuple[str, ...]:
        ignore = schema.ignore_folders if schema is not None else []
        return tuple(f.strip("/") + "/" for f in [*self.template_folders, *ignore] if f.strip("/"))

    def frozen(self, schema=None) -> set[str]:
        """The notes nothing writes: those in the templates folders and the
        schema's ``ignore_folders`` (read for links, never written; a link
        rewrite leaves theirs as they are)."""
        folders = self._frozen_folders(schema)
        return {path for path in self.notes if path.startswith(folders)} if folders else set()

    def generated_mocs(self, schema) -> set[str]:
        """The Maps of Content ``moc.py generate`` wrote
        (:func:`generated.generated_paths`), read once per schema: :meth:`cards`
        and health's orphans both ask."""
        cached = self._generated.get(id(schema))
        if cached is None or cached[0] is not schema:
            from .generated import generated_paths

            cached = self._generated[id(schema)] = (schema, generated_paths(self, schema))
        return cached[1]

    @property
    def resolver(self) -> Resolver:
        """Resolves link targets against this vault's files (built on first
        use: commands that never follow a link do not import links)."""
        if self._resolver is None:
            from .links import Resolver

            self._resolver = Resolver(self.files)
        return self._resolver

    def resolver_for(self, links) -> Resolver:
        """A resolver that answers ``links`` (``(target, source)`` pairs, an
        iterable) as :attr:`resolver` would: that one when it is built or
        there are many links, else one over only the files they can mean
        (:meth:`links.Resolver.for_links`: on a large vault a command that
        follows a few links, ``card.py`` naming a card, an index update of
        the notes one run wrote, does not pay for a resolver of every
        file).  Asked of other links, it answers them right too, at the
        whole one's cost."""
        if self._resolver is None:
            links = list(links)
            few = self._few
            if few is not None and all(few.covers(target, source) for target, source in links):
                return few
            if len(links) <= FEW_LINKS and self._few_made < FEW_MADE:
                from .links import Resolver

                self._few_made += 1  # a command that asks again and again soon pays for the whole one, once
                self._few = Resolver.for_links(self.files, links)
                return self._few
        return self.resolver

    def forget_resolver(self) -> None:
        """Let the resolver go (a large vault's is tens of MB): a process
        whose forked readers resolve with their own copy frees it for what
        follows; the next :attr:`resolver` builds it again."""
        self._resolver = None
