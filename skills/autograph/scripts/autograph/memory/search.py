"""Search: BM25 over SQLite FTS5, a link-graph rerank, and an incremental index.

The index is one SQLite file, ``.graph/search.sqlite``.  Every query first
brings it up to date: each note's size, modification and change time
(nanoseconds) are compared with the stamp stored for it; notes whose stamp
moved are read again, notes that left the vault (deleted, renamed) leave the
index.  A new :data:`INDEX_VERSION` or a changed schema rebuilds it; a file
SQLite cannot read is rebuilt with a warning.  It is derived data: deleting
it loses nothing.  Two processes at once rely on SQLite's locking (WAL): the
one that updates holds a write transaction; the other waits up to
:data:`BUSY_SECONDS`, then answers from the index as it was (``stale``).  A
vault whose ``.graph/`` cannot be written is searched with an index in memory.

Text is NFC-normalised before it is indexed and before it is queried (BR-27);
the FTS5 tokenizer is ``unicode61 remove_diacritics 2``, so ``cafe`` finds
``café`` and Cyrillic and Greek are words.  Chinese, Japanese and Korean
runs are also written as overlapping character bigrams into a column of
their own (``cjk``), and a query's CJK run becomes a phrase of its bigrams,
so a two-character word finds its note.  Needs SQLite 3.27 or later with
FTS5 (:func:`check_sqlite`); below that, search stops with a clear error.

Columns and their BM25 weights (:data:`WEIGHTS`): title (the ``title``
property and the file name) 10, aliases 10, description 5, tags 3, headings
3, other property values 2, body 1, cjk 2.  A query is tokenised by autograph
(:func:`fts_query`): any text is safe; ``raw=True`` passes FTS5 syntax.

Rerank of the best ``4 * limit`` rows (:func:`rerank`), score = ``-bm25 *
links * hub * fresh * superseded`` with ``links = 1 + 0.15 * ln(1 +
in-links)`` (the other notes whose links :class:`links.Resolver` resolves to
it, as Obsidian would: a path-qualified link never credits a same-named
other note; counted when notes are indexed), ``hub = 1.1`` when a hub note
links to it, ``fresh = 0.85 + 0.15
* relevance`` (decay's relevance; 0.5 for an undated note), ``superseded =
0.5`` for a retired card (:func:`retirement.retired`: status
``superseded``, or a ``superseded_by`` that names another card, resolved
when such a note is a candidate; ``superseded_by: TBD`` is not retired).

Exact names first (:func:`rerank`, the one place of this rule): a note whose
name equals the whole query, as :func:`name_fold` compares them (its file
name without ``.md``, its ``title`` property or one of its ``aliases``;
letter case, accents, Unicode form and spacing folded), comes before every
note that only mentions it, the live ones before the retired ones, each
group in score order.  Names are stored folded in ``docs.names`` when a
note is indexed, so a query finds them with one scan of that column.
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import re
import sqlite3
import stat
import sys
import unicodedata

from .names import MARKS

__all__ = [
    "INDEX_NAME",
    "INDEX_VERSION",
    "MIN_SQLITE",
    "WEIGHTS",
    "Hit",
    "Index",
    "QueryError",
    "SearchUnavailable",
    "check_sqlite",
    "fold",
    "folder_prefixes",
    "fts_query",
    "lookup_identity",
    "name_fold",
    "name_key",
    "open_index",
    "open_vault",
    "search",
    "unusable",
]

INDEX_NAME = "search.sqlite"
INDEX_VERSION = 7  # 3: links resolved by links.Resolver, in-link counts stored; 4: superseded 2 = a superseded_by;
# 5: a note that is not UTF-8 indexed with U+FFFD, one too large to read by its name; 6: docs.unreadable;
# 7: docs.names (exact-name matches rank first)
MIN_SQLITE = (3, 27, 0)  # FTS5's unicode61 remove_diacritics 2
BUSY_SECONDS = 5.0
COLUMNS = ("title", "aliases", "description", "tags", "headings", "props", "body", "cjk")
WEIGHTS = (10.0, 10.0, 5.0, 3.0, 3.0, 2.0, 1.0, 2.0)
_WEIGHTS = ", ".join(str(w) for w in WEIGHTS)  # as bm25() takes them
MAX_QUERY_WORDS = 64  # a pasted page ranked by its first words: FTS5's OR of 10,000 phrases took 35 s
RERANK_DEPTH = 4  # rows fetched per hit asked for, then reranked

# CJK runs: compiled on first use through re's cache (this class alone
# takes about 4 ms to compile, a query in ASCII never needs it)
_CJK_RUN = "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"


def _has_cjk(text: str) -> bool:
    if text.isascii():
        return False
    if "\n" not in text:
        return re.search(_CJK_RUN, text) is not None
    # the regex on the lines that are not ASCII only: a scan by class is slow
    return any(not line.isascii() and re.search(_CJK_RUN, line) for line in text.split("\n"))


_BOM = b"\xef\xbb\xbf"  # note.BOM, here so that a query need not import note
_WORD = re.compile(r"\w+")
_DATED = re.compile(r'"(?:last_accessed|updated|created)"', re.I)  # decay.DATE_KEYS, as stored in props
_SURROGATE = "[\ud800-\udfff]"  # patterns kept as text are compiled on first use (re's cache)
_MARKS = MARKS  # the diacritics names.fold drops: the index and the names compare alike
# a tag starts a line or follows a space, as in Obsidian (not a URL's or a link's #fragment)
# (the "#" first, so that re searches for it rather than trying every offset)
_TAG = r"#(?<![^ \t\n]#)(\w[\w/-]*)"
# ATX headings for the headings column (those inside code are dropped by
# their offset; the closing #s are stripped); cheaper than links.outline,
# which also finds setext headings
_HEADING = r"\n {0,3}#{1,6}[ \t]+([^\n]+)"
_HEADING_START = r" {0,3}#{1,6}[ \t]+([^\n]+)"
_HASH_PATTERNS: tuple | None = None  # these three compiled, on first use: a warm query needs none
_SKIP_PROPS = {"title", "aliases", "alias", "description", "summary", "tags", "tag", "cssclasses"}


class SearchUnavailable(Exception):
    """This Python's SQLite cannot hold the index (too old, or no FTS5)."""


class QueryError(ValueError):
    """A query that cannot run as written (bad FTS5 syntax with ``--fts``):
    the message says what is wrong; a command exits 2 (bad usage)."""


def check_sqlite() -> None:
    """Raise :class:`SearchUnavailable` unless SQLite is 3.27+ with FTS5."""
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise SearchUnavailable(
            f"search needs SQLite {'.'.join(map(str, MIN_SQLITE))} or later with FTS5; "
            f"this Python has SQLite {sqlite3.sqlite_version}"
        )
    try:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize='unicode61 remove_diacritics 2')")
        con.close()
    except sqlite3.Error as exc:
        raise SearchUnavailable(f"search needs SQLite with FTS5, which this Python's SQLite lacks ({exc})") from None


# ---------------------------------------------------------------------------
# Text


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def strip_marks(text: str) -> str:
    """``text`` NFC, without the combining diacritics of Latin, Greek and
    Cyrillic letters (``é`` -> ``e``, ``ή`` -> ``η``; kana voicing marks
    stay).  SQLite's ``remove_diacritics`` knows Latin only; this is applied
    to what is indexed and to every query, so both sides compare alike."""
    if text.isascii():
        return text
    if "\n" in text:  # the lines that are not ASCII only (no combining sequence spans a line break)
        return "\n".join(line if line.isascii() else _strip_line(line) for line in text.split("\n"))
    return _strip_line(text)


def _strip_line(text: str) -> str:
    return nfc(re.sub(_MARKS, "", unicodedata.normalize("NFD", text)))


def fold(text: str) -> str:
    """``text`` as the index compares it: NFC, no diacritics, case-folded."""
    return strip_marks(text).casefold()


def name_fold(text: str) -> str:
    """``text`` as a name is compared with a query for an exact match (a
    note's file name, ``title`` or alias): :func:`names.fold`, the one rule
    by which ``card.py`` finds a card by name too."""
    from .names import fold as names_fold

    return names_fold(text)


def bigrams(text: str) -> str:
    """The overlapping character bigrams of each CJK run of ``text``,
    space-separated (a run of one character is itself)."""
    grams = []
    for run in re.findall(_CJK_RUN, text) if not text.isascii() else ():
        if len(run) == 1:
            grams.append(run)
        else:
            grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return " ".join(grams)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The words of a query, each as a tuple of its tokens (``POL-358`` ->
    ``("pol", "358")``), NFC-normalised; CJK runs stay whole."""
    terms = []
    for word in strip_marks(text).split():
        tokens = tuple(_WORD.findall(word))
        if tokens and tokens not in terms:
            terms.append(tokens)
    return terms


def fts_query(text: str, without: frozenset = frozenset()) -> str:
    """An FTS5 query for any text: each whitespace-separated word becomes a
    quoted phrase of its tokens, OR-joined, and several words are also
    searched as one phrase; a CJK run is also searched as the phrase of its
    bigrams in the ``cjk`` column.  ``""`` when the text
    has no word (then nothing matches).  Words in ``without`` (as
    :func:`query_terms` gives them) are left out, but not of the phrase."""
    parts = []
    terms = query_terms(text)
    for tokens in terms:
        if tokens in without:
            continue
        parts.append(_quote(" ".join(tokens)))
        grams = [bigrams(token) for token in tokens if _has_cjk(token)]
        if grams:
            parts.append("cjk : " + _quote(" ".join(grams)))
    if len(terms) > 1:  # the words as one phrase too: a note holding it scores that phrase on top
        parts.append(_quote(" ".join(token for tokens in terms for token in tokens)))
    return " OR ".join(parts)


# ---------------------------------------------------------------------------
# Documents


_JSON = json.JSONEncoder(ensure_ascii=False, default=str)  # json.dumps makes an encoder per call for these options


def _links():
    """:mod:`autograph.read.links`, imported on first use (a warm query never
    needs it), then without an import statement's cost per note."""
    global _LINKS
    if _LINKS is None:
        from ..read import links

        _LINKS = links
    return _LINKS


_LINKS = None


def _outside(items: list[tuple], regions) -> list[tuple]:
    """The ``(offset, ...)`` items, in offset order, that lie in none of
    ``regions`` (sorted, disjoint ``(start, end)``): one pass over both."""
    kept, k, count = [], 0, len(regions)
    for item in items:
        at = item[0]
        while k < count and regions[k][1] <= at:
            k += 1
        if k == count or regions[k][0] > at:
            kept.append(item)
    return kept


def _hashes(body: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``(headings, tags)`` of ``body``, code not left out: ``(offset of
    the line, text after the #s)`` of each ATX heading line and ``(offset of
    the "#", tag)`` of each tag, in order.

    The patterns are compiled once, not looked up in re's cache per note
    (measured: a sixth of this on obsidian-hub)."""
    global _HASH_PATTERNS
    if _HASH_PATTERNS is None:
        _HASH_PATTERNS = re.compile(_HEADING_START), re.compile(_HEADING), re.compile(_TAG)
    heading_start, heading, tag = _HASH_PATTERNS
    # ATX heading lines: one at the start, then each after a line break
    # (a regex led by "\n" is searched for, not tried at every offset)
    first = heading_start.match(body)
    headings = [(0, first.group(1))] if first else []
    headings += [(m.start() + 1, m.group(1)) for m in heading.finditer(body)]
    return headings, [(m.start(), m.group(1)) for m in tag.finditer(body)]


def _strings(value) -> list[str]:
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def name_key(path: str) -> str:
    """The file name a link target looks up, as :class:`links.Resolver`
    indexes it (NFC, lower case, without a final ``.md``): a link and a
    file that may resolve to each other share it (``Notes/Alice.md``,
    ``[[alice]]`` and ``[[people/Alice.md]]`` all give ``alice``)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if not name.isascii():
        name = nfc(name)
    name = name.lower()
    return name[:-3] if name.endswith(".md") else name


def document(note, hubs) -> tuple[tuple, list[str]]:
    """The indexed form of a :class:`note.Note`: ``(row, link targets)``,
    ``row`` being ``(title, type, status, hub, superseded, properties as
    JSON, body line, why its properties are unknown (None: they are
    known), its names as :func:`name_fold` gives them (each between line
    breaks), (the text of each of COLUMNS))``.

    The targets are the distinct paths its links name (``links.scan``
    outside code and comments, and wikilinks in property values, as
    ``index.note_links`` finds them), resolved against every file later."""
    links = _links()
    stem = note.stem
    text = note.text
    if text is None:
        # not UTF-8, or too large to read: indexed as Obsidian shows such a
        # file (U+FFFD for each byte that does not decode), all body, so that
        # its name and words still find it
        text, props, offset = note.data.decode("utf-8", "replace"), {}, 0
        if note.data.startswith(_BOM):
            text = text[1:]
        unknown = note.error or "unreadable"
    else:
        block = note.frontmatter
        props = block.properties if block is not None and block.valid else {}
        offset = note.body_offset
        unknown = f"frontmatter: {block.error}" if block is not None and not block.valid else None
    body = text[offset:] if offset else text
    line = text.count("\n", 0, offset) + 1 if offset else 1
    regions = ()
    headings, tags = _hashes(body) if "#" in body else ([], [])
    if headings or tags or "[[" in body or "](" in body:
        regions = links.code_regions(body)
        targets = links.targets(body, regions)
    else:
        targets = set()
    if regions:
        headings = _outside(headings, regions)
        tags = _outside(tags, regions)
    if props and "[[" in text[:offset]:  # a property value holds a wikilink
        targets.update(link.target for link in links.property_links(props) if link.target)
    low = {k.lower(): v for k, v in props.items() if isinstance(k, str)} if props else {}
    title = _strings(low["title"]) if "title" in low else []
    kind, status = low.get("type"), low.get("status")
    status = status.strip().lower() if isinstance(status, str) else None
    tags = _strings(low.get("tags", low.get("tag"))) + [t for _, t in tags if not t.isdigit()]
    aliases = _strings(low.get("aliases", low.get("alias"))) if low else []
    # the note's names, folded, one a line between line breaks: a query's
    # name is looked up as "\n" + name + "\n" (names hold no line break)
    names = sorted({name_fold(name) for name in [stem, *title, *aliases]} - {""})
    fields = [
        " ".join([stem, *(t for t in title if t != stem)]),
        " ".join(aliases),
        " ".join(_strings(low.get("description", low.get("summary")))) if low else "",
        " ".join(t.replace("/", " ") for t in tags),
        "\n".join(h.rstrip(" \t#\r") for _, h in headings),
        " ".join(s for k, v in low.items() if k not in _SKIP_PROPS for s in _strings(v)),
        body,
        "",
    ]
    if not text.isascii():
        fields = [strip_marks(f) for f in fields]
        fields[-1] = bigrams(" ".join(fields)) if _has_cjk(text) else ""
    row = (
        nfc(title[0]) if title else nfc(stem),
        kind.strip().lower() if isinstance(kind, str) else None,
        status,
        1 if hubs(stem, props) else 0,
        1 if status == "superseded" else 2 if low.get("superseded_by") else 0,  # 2: retired if it names a card
        _JSON.encode(props) if props else "{}",
        line,
        unknown,
        "\n" + "\n".join(names) + "\n",
        tuple(fields),
    )
    return row, sorted(targets)


# ---------------------------------------------------------------------------
# The index

_CREATE = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE docs (
  id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER, mtime INTEGER, ctime INTEGER,
  title TEXT, names TEXT, type TEXT, status TEXT, hub INTEGER, superseded INTEGER, props TEXT, body_line INTEGER,
  unreadable TEXT, inlinks INTEGER NOT NULL DEFAULT 0, near_hub INTEGER NOT NULL DEFAULT 0);
CREATE TABLE links (src INTEGER NOT NULL, target TEXT NOT NULL, name TEXT NOT NULL, dst INTEGER);
CREATE VIRTUAL TABLE fts USING fts5({", ".join(COLUMNS)}, tokenize='unicode61 remove_diacritics 2');
"""


class Index:
    """An open search index and what bringing it up to date did (a plain
    class: defined faster than a dataclass, on every start)."""

    def __init__(self, con: sqlite3.Connection, path: str | None, warnings: list[str] | None = None):
        self.con = con
        self.path = path  # None: in memory
        self.notes = 0
        self.reread = 0
        self.removed = 0
        self.rebuilt: str | None = None  # why it was built from nothing, if it was
        self.stale = False  # another process held the index: answered from the last good one
        self.warnings: list[str] = warnings if warnings is not None else []
        self.readonly = False  # .graph/ could not be written: a copy of its index, in memory, brought up to date
        self.relinked = 0  # links of other notes resolved again (a note was added, deleted or renamed)
        self.early = None  # readers started before the index was opened (_early), until _update takes them

    def close(self) -> None:
        """Close the index (the last connection folds the WAL into the file)."""
        try:
            self.con.close()
        except sqlite3.Error:
            pass

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "notes": self.notes,
            "reread": self.reread,
            "removed": self.removed,
            "rebuilt": self.rebuilt,
            "stale": self.stale,
            "memory": self.path is None or self.readonly,
            "readonly": self.readonly,
        }


# made after the first rows are in (an index built from sorted rows at once
# costs less than one kept up to date row by row while a vault is written)
_LINK_INDEXES = """
CREATE INDEX IF NOT EXISTS links_src ON links(src);
CREATE INDEX IF NOT EXISTS links_dst ON links(dst);
CREATE INDEX IF NOT EXISTS links_name ON links(name);
"""


_SHAPE = (
    "SELECT key, value FROM meta LIMIT 0",
    "SELECT id, path, size, mtime, ctime, title, names, type, status, hub, superseded, props, body_line, unreadable, "
    "inlinks, near_hub "
    "FROM docs LIMIT 0",
    "SELECT src, target, name, dst FROM links LIMIT 0",
    f"SELECT rowid, {', '.join(COLUMNS)} FROM fts WHERE fts MATCH 'x' LIMIT 0",
)


def _schema_stamp(schema) -> str:
    """The schema as the index was built for it (its whole text: any change rebuilds)."""
    return json.dumps(schema.data, sort_keys=True, ensure_ascii=True, default=str)


def _create(con: sqlite3.Connection, schema) -> None:
    for statement in _CREATE.split(";"):
        if statement.strip():
            con.execute(statement)
    con.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [
            ("version", str(INDEX_VERSION)),
            ("schema", _schema_stamp(schema)),
            ("sqlite", sqlite3.sqlite_version),
            ("files", ""),
        ],
    )


def _why_rebuild(con: sqlite3.Connection, schema) -> str | None:
    tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if not tables:
        return "new"
    if not {"meta", "docs", "links", "fts"} <= tables:
        return "incomplete"
    # every column a query reads, and FTS5's own tables: a damaged or foreign
    # table raises here, where the file is rebuilt, not in the query
    for statement in _SHAPE:
        con.execute(statement).fetchall()
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('version', 'schema')"))
    if meta.get("version") != str(INDEX_VERSION):
        return "index version"
    if meta.get("schema") != _schema_stamp(schema):
        return "schema changed"
    return None


def _drop_all(con: sqlite3.Connection) -> None:
    names = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql IS NOT NULL")]
    for name in names:
        if not name.startswith("fts_"):  # the FTS5 shadow tables go with fts
            con.execute(f"DROP TABLE IF EXISTS {_quote(name)}")


def _connect(path: str) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    con.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
    con.execute("PRAGMA cache_size = -65536")  # 64 MB at most: FTS5 merges its segments in memory while it builds
    if path != ":memory:":
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = OFF")  # derived data: an OS crash at worst damages it, then it is rebuilt
    return con


def _remove(root) -> None:
    """Discard a damaged index file and SQLite's files beside it (derived
    data, rebuilt next), through store."""
    from ..write import derived

    for suffix in SUFFIXES:
        derived.discard_derived(root, INDEX_NAME + suffix)


def _existing(root) -> str | None:
    """``.graph/search.sqlite`` when it is there as a regular file in a real
    ``.graph`` folder (neither a symlink), else None: the warm query opens it
    without loading the write machinery (store) that makes the folder."""
    folder = os.path.join(os.path.realpath(root), ".graph")
    path = os.path.join(folder, INDEX_NAME)
    try:
        if stat.S_ISDIR(os.lstat(folder).st_mode) and stat.S_ISREG(os.lstat(path).st_mode):
            return path
    except OSError:
        pass
    return None


SUFFIXES = ("", "-wal", "-shm", "-journal")  # the index file and the files SQLite keeps beside it


def unusable(root) -> str | None:
    """Why ``.graph/search.sqlite`` and its ``-wal``, ``-shm`` and
    ``-journal`` files cannot be used, else None (absent ones are fine).

    SQLite writes these files in place, so a hard link (another name for a
    note, say) would have that file overwritten with pages of the index; it
    opens the journal blocking, so a FIFO there would hang every query; a
    symlink would take its writes elsewhere."""
    folder = os.path.join(os.path.realpath(root), ".graph")
    for suffix in SUFFIXES:
        name = INDEX_NAME + suffix
        try:
            info = os.lstat(os.path.join(folder, name))
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f".graph/{name}: {exc.strerror}"
        if not stat.S_ISREG(info.st_mode):
            from ..read.jsonfile import file_kind

            kind = file_kind(info.st_mode)
        elif info.st_nlink > 1:
            kind = f"a file with {info.st_nlink} names (hard links), which the index would overwrite"
        else:
            continue
        return f".graph/{name} is {kind}; remove it and the index is made again"
    return None


def _index_path(root) -> str:
    """Where the index lives, ``.graph/`` made if need be (:func:`derived.derived_path`,
    which refuses symlinks and a file in place of the folder)."""
    path = _existing(root)
    if path is None:
        from ..write import derived

        path = str(derived.derived_path(root, INDEX_NAME))
    return path


def open_index(vault, schema, use_disk: bool = True, stamps: dict | None = None) -> Index:
    """The vault's search index, brought up to date (see the module
    docstring).  When ``.graph/`` cannot be written (or ``use_disk=False``),
    an index file already there is copied into memory and brought up to
    date there (``readonly``; nothing is written); without one, the index is
    built in memory.  ``stamps`` are the notes' stamps from
    :func:`open_vault` (else each note is stat'ed)."""
    check_sqlite()
    warnings: list[str] = []
    early = None
    if _existing(vault.root) is not None:
        stamps = _stamps(vault) if stamps is None else stamps
    else:  # built from nothing: readers start now, each note's stamp taken as it is read
        early = _early(vault, schema, stamps)
    try:
        return _open(vault, schema, use_disk, stamps, warnings, early)
    finally:
        if early is not None:
            early.close()


def _early(vault, schema, stamps):
    """Readers of every note started before the index is opened, when it
    will be built from nothing (no index file yet; :func:`_start_reading`),
    so that making the file and its tables overlaps with reading; None for
    a small vault.  :func:`_update` uses them if it is to read just those notes."""
    paths = vault.notes if stamps is None else [path for path in vault.notes if path in stamps]
    return _start_reading(vault, paths, schema.is_hub, {})


def _open(vault, schema, use_disk, stamps, warnings, early) -> Index:
    why = unusable(vault.root)
    if why is not None:  # neither opened in place nor copied: SQLite would write, or wait, there
        warnings.append(f"{why}; searched with an index in memory")
        use_disk = False
    elif use_disk:
        con = None
        try:
            path = _index_path(vault.root)
            try:
                con = _open_disk(path)
                index = _prepare(con, path, vault, schema, warnings, stamps, early)
            except sqlite3.DatabaseError as exc:
                if _locked(exc) or not _damaged(exc):
                    raise
                if con is not None:
                    con.close()
                warnings.append(f".graph/{INDEX_NAME}: damaged search index ({exc}); rebuilt it")
                _remove(vault.root)
                con = _open_disk(path)
                index = _prepare(con, path, vault, schema, warnings, stamps)
            return index
        except Exception as exc:
            if not _cannot_write(exc):
                raise
            if con is not None:
                con.close()
            if isinstance(exc, sqlite3.OperationalError) and _locked(exc):
                warnings.append("another process is writing the search index; searched with an index in memory")
            else:
                copied = _readonly_copy(vault, schema, warnings, stamps)
                if copied is not None:
                    copied.warnings.insert(
                        0,
                        f".graph/ cannot be written ({exc}); answered from a copy of .graph/{INDEX_NAME} in memory, "
                        f"brought up to date ({copied.reread} notes read again)",
                    )
                    return copied
                warnings.append(f".graph/ cannot hold the search index ({exc}); searched with an index in memory")
    else:
        copied = _readonly_copy(vault, schema, warnings, stamps)
        if copied is not None:
            return copied
    con = _connect(":memory:")
    return _prepare(con, None, vault, schema, warnings, stamps, early)


def _cannot_write(exc: Exception) -> bool:
    """Whether ``exc`` says the index file cannot be made, opened or written
    (a folder without write access, a file in place of ``.graph/``, a symlink
    refused by store, a lock held too long), not a bug."""
    confine = sys.modules.get(__package__.rsplit(".", 1)[0] + ".write.confine")  # loaded only if it was used
    return isinstance(exc, (OSError, sqlite3.OperationalError)) or (
        confine is not None and isinstance(exc, confine.PathError)
    )


def _open_disk(path: str) -> sqlite3.Connection:
    """A read-write connection to the index file (a seam: tests make it fail
    as a read-only ``.graph/`` would, which root's runs cannot show)."""
    return _connect(path)


def _readonly_copy(vault, schema, warnings, stamps) -> Index | None:
    """The index file opened read-only (``mode=ro``, else ``immutable=1``
    for a WAL file whose folder cannot take SQLite's ``-shm``), copied into
    memory and brought up to date there; None when there is no file, it is
    unreadable, or it was built for another index version or schema."""
    path = _existing(vault.root)
    if path is None:
        return None
    from urllib.parse import quote

    uri = "file:" + quote(path)
    for flags in ("?mode=ro", "?mode=ro&immutable=1"):
        source = memory = None
        try:
            source = sqlite3.connect(uri + flags, uri=True, timeout=BUSY_SECONDS, isolation_level=None)
            if _why_rebuild(source, schema) is not None:
                source.close()
                return None
            memory = _connect(":memory:")
            source.backup(memory)
            source.close()
            index = _prepare(memory, path, vault, schema, warnings, stamps)
            index.readonly = True
            return index
        except sqlite3.Error:
            for con in (source, memory):
                if con is not None:
                    con.close()
    return None


def _damaged(exc: Exception) -> bool:
    """True for the errors of a file that is not (or no longer) a sound
    SQLite database, as opposed to one that cannot be opened or written."""
    if isinstance(exc, sqlite3.OperationalError):
        return "malformed" in str(exc) or "no such" in str(exc)
    return isinstance(exc, sqlite3.DatabaseError)


def _locked(exc: Exception) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _prepare(con, path, vault, schema, warnings, stamps, early=None) -> Index:
    index = Index(con, path, warnings=warnings)
    index.early = early
    why = _why_rebuild(con, schema)
    rollback_journal = why == "new" and path is not None and _journal(con, "DELETE")
    try:
        _build(index, con, why, vault, schema, stamps)
    finally:
        if rollback_journal:
            _journal(con, "WAL")
    return index


def _journal(con, mode: str) -> bool:
    """Switch the index file's journal to ``mode`` if that can be done at
    once; whether it was.  A new file is filled with a rollback journal
    (``DELETE``): WAL would write each page twice, to the WAL and then back
    (measured on obsidian-hub: 70 ms CPU and 170 ms wall more).  Another
    process using the file keeps it in WAL (the switch needs the file to
    itself, and is not waited for); one that opens it meanwhile waits for
    the build, as for any writer, and it is WAL again when the build ends."""
    try:
        con.execute("PRAGMA busy_timeout = 0")
        now = con.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0]
    except sqlite3.Error:  # busy, or a file that is not sound: the caller's own error says more
        now = None
    finally:
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
    return isinstance(now, str) and now.lower() == mode.lower()


def _build(index: Index, con, why, vault, schema, stamps) -> None:
    if why is not None:
        try:
            con.execute("BEGIN IMMEDIATE")
            why = _why_rebuild(con, schema)  # another process may have built it while this one waited
            if why is not None:
                _drop_all(con)
                _create(con, schema)
            con.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise sqlite3.OperationalError(f"cannot prepare the index: {exc}") from None
        index.rebuilt = why
    _refresh(index, vault, schema, stamps)


def open_vault(root):
    """``(vault.Vault, stamps)``: the vault walked once, each note's
    ``(size, mtime_ns, ctime_ns)`` taken during the walk, for
    :func:`open_index` (the warm query's freshness check).  ``stamps`` is
    None when the vault has no index file: it is built from nothing, and
    each note's stamp is taken as it is read (a stat of every note in the
    walk costs a fifth of reading them all)."""
    from ..read.vault import Vault, walk

    path = Vault.check_folder(root)
    stamps = {} if _existing(path) is not None else None
    files, warnings = walk(path, stamps)
    return Vault(path, files, warnings), stamps


def _stamps(vault) -> dict[str, tuple[int, int, int]]:
    root = str(vault.root).rstrip(os.sep) + os.sep
    found = {}
    stat_of = os.stat
    for path in vault.notes:
        try:
            st = stat_of(root + path)
        except OSError:
            continue
        found[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


def _attachments(vault) -> str:
    """The vault's other files (not notes), one a line: a link can resolve
    to one instead of a note (``[[x.png]]``), so their set is kept."""
    return "\n".join(path for path in vault.files if not path.endswith(".md"))


PARALLEL_MIN = 1000  # notes to read before forked readers pay for their start


def _reader(vault, hubs, known: dict):
    """The function that reads one note: ``path -> (path, row, [(target,
    name_key, resolved path)], stamp)`` (:func:`document`; ``stamp`` as it
    was read, else as stat'ed, None when the note is gone).  Links are resolved
    with ``vault.resolver``, but for those in ``known`` (``(path, target)``
    -> resolved path, as stored before the note changed, when no file of
    that name came or went): an edit that keeps its links needs no resolver."""
    names: dict[str, str] = {}
    root = str(vault.root).rstrip(os.sep) + os.sep

    def read(path):
        note = vault.note(path, keep=False)
        stamp = note.stamp
        if stamp is None:  # not read: stat'ed, as the walk would have
            try:
                info = os.stat(root + path)
                stamp = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            except OSError:
                stamp = None
        row, targets = document(note, hubs)
        edges = []
        for target in targets:
            name = names.get(target)
            if name is None:
                name = names[target] = name_key(target)
            dst = known.get((path, target), names)  # names: a marker, never a path
            if dst is names:
                dst = vault.resolver.resolve(target, path).path
            edges.append((target, name, dst))
        return path, row, edges, stamp

    return read


def _start_reading(vault, paths: list[str], hubs, known: dict):
    """Forked readers of ``paths`` (:func:`parallel.stream`), started now,
    or None when there are too few notes to pay for them."""
    if len(paths) < PARALLEL_MIN:
        return None
    from ..read import note, parallel  # noqa: F401 - imported once, before the fork, not in each reader

    vault.resolver  # noqa: B018 - built before the fork: every reader resolves with it
    started = parallel.stream(_reader(vault, hubs, known), paths)
    started.paths = paths
    return started


def _documents(vault, paths: list[str], hubs, known: dict, started=None):
    """What :func:`_reader` gives for each of ``paths``, not in order; with
    many notes they are read by forked children (``started`` already, or
    now) while this process writes what arrives."""
    if started is None:
        started = _start_reading(vault, paths, hubs, known)
    if started is None:
        yield from map(_reader(vault, hubs, known), paths)
        return
    bar, vault.progress = vault.progress, None  # each note counted as it arrives, whichever process read it
    try:
        with started:
            for result in started:
                if bar is not None:
                    bar.step()
                yield result
    finally:
        vault.progress = bar


def _refresh(index: Index, vault, schema, stamps) -> None:
    """Bring the index up to date with the notes' ``stamps``.

    Fresh (the common case) when the walk's stamps, written out as one
    string (:func:`_stamp_text`), equal the one stored by the last update,
    and the other files are the same: one ``SELECT`` of one row.  Else, in
    one write transaction: notes that left are removed, changed notes re-read
    under their ids, new ones added; their links are resolved with
    :class:`links.Resolver` against every file.  A note added, deleted or
    renamed (or another file) can change where other notes' links lead, so
    the stored links whose name it shares are resolved again; then the
    in-link counts of every note that gained or lost a link are counted
    again."""
    con = index.con
    pending = stamps is None  # no index file at the walk: stamps taken as the notes are read
    if pending:
        stamps = {}
    index.notes = len(vault.notes if pending else stamps)
    files = _attachments(vault)
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('stamps', 'files')"))
    text = _stamp_text(stamps) if meta.get("stamps") is not None and not pending else None
    if text is not None and meta["stamps"] == text and meta.get("files") == files:
        return
    try:
        con.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if not _locked(exc) or meta.get("stamps") is None:  # never filled yet: no answer to give from it
            raise
        index.stale = True
        index.warnings.append("another process is updating the search index; answered from the index as it was")
        return
    try:
        if pending:
            current = [(path, None, None, None) for path in vault.notes]
            _update(index, vault, schema, current, files, stamps)
            index.notes = len(stamps)
        else:
            current = [(path, *stamps[path]) for path in vault.notes if path in stamps]
            _update(index, vault, schema, current, files)
        text = _stamp_text(stamps) if text is None else text
        con.execute("INSERT OR REPLACE INTO meta VALUES ('stamps', ?)", (text,))
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def _stamp_text(stamps: dict) -> bytes:
    """Every note's path and stamp in path order, NUL-separated (no path
    holds a NUL), as bytes: the freshness check compares it whole, which
    is cheaper than comparing a row per note."""
    return "\0".join(
        f"{path}\0{size}\0{mtime}\0{ctime}" for path, (size, mtime, ctime) in sorted(stamps.items())
    ).encode("utf-8", "surrogatepass")


def _update(index: Index, vault, schema, current: list[tuple], files: str, taken: dict | None = None) -> None:
    """See :func:`_refresh`.  ``taken``: stamps unknown in ``current``, each
    note's put there as it is read (a note gone meanwhile is left out)."""
    con = index.con
    before = {row[0]: row for row in con.execute("SELECT path, size, mtime, ctime FROM docs")}
    now = {row[0]: row for row in current}
    changed = [path for path, row in now.items() if before.get(path) != row]
    gone = [path for path in before if path not in now]
    ids: dict[str, int | None] = {}  # path -> doc id, looked up when needed (None: not a note indexed)

    def id_of(path: str | None) -> int | None:
        if path is None:
            return None
        found = ids.get(path, 0)
        if found == 0:
            row = con.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
            found = ids[path] = row[0] if row else None
        return found

    old = [(id_of(path),) for path in changed + gone if path in before]
    next_id = max((key for (key,) in old), default=0)  # never an id of a note gone: links may still name it
    next_id = max(next_id, con.execute("SELECT MAX(id) FROM docs").fetchone()[0] or 0) + 1
    for path in changed:
        if path not in before:
            ids[path], next_id = next_id, next_id + 1
    affected = {ids[path] for path in changed}  # notes whose in-links may have changed
    # names whose resolution may have moved: of notes added or gone, and of other files added or gone
    stored_files = con.execute("SELECT value FROM meta WHERE key = 'files'").fetchone()[0]
    moved = set()  # built from nothing: no stored link to resolve again
    if before:
        moved = {name_key(path) for path in changed if path not in before} | {name_key(path) for path in gone}
        if stored_files != files:
            was, is_ = set(stored_files.split("\n")) - {""}, set(files.split("\n")) - {""}
            moved |= {name_key(path) for path in was ^ is_}
    if stored_files != files:
        con.execute("UPDATE meta SET value = ? WHERE key = 'files'", (files,))
    known = {}  # (path, target) -> resolved path, of the links a changed note had, still valid
    lost = "SELECT l.target, l.name, l.dst, d.path FROM links l LEFT JOIN docs d ON d.id = l.dst WHERE l.src = ?"
    for path, key in zip([p for p in changed + gone if p in before], old, strict=True):
        for target, name, dst, dst_path in con.execute(lost, key):
            if dst is not None:
                affected.add(dst)
            if name not in moved:
                known[path, target] = dst_path
    con.executemany("DELETE FROM docs WHERE id = ?", old)
    con.executemany("DELETE FROM links WHERE src = ?", old)
    con.executemany("DELETE FROM fts WHERE rowid = ?", old)
    for path in gone:
        ids[path] = None
    index.removed = len(gone)
    if moved and before:
        marks = ",".join("?" * len(moved))
        rows = con.execute(
            f"SELECT l.rowid, s.path, l.target, l.dst FROM links l JOIN docs s ON s.id = l.src "
            f"WHERE l.name IN ({marks})",
            list(moved),
        ).fetchall()
        resolver = vault.resolver
        updates = []
        for rowid, source, target, dst in rows:
            new = id_of(resolver.resolve(target, source).path)
            if new != dst:
                updates.append((new, rowid))
                affected.update(d for d in (dst, new) if d is not None)
        con.executemany("UPDATE links SET dst = ? WHERE rowid = ?", updates)
        index.relinked = len(updates)
    columns = "id, path, size, mtime, ctime, title, type, status, hub, superseded, props, body_line, unreadable, names"
    add_doc = f"INSERT INTO docs ({columns}) VALUES ({', '.join('?' * 14)})"
    add_text = f"INSERT INTO fts (rowid, {', '.join(COLUMNS)}) VALUES ({', '.join('?' * 9)})"
    add_link = "INSERT INTO links VALUES (?, ?, ?, ?)"
    docs, fts, edges = [], [], []
    hubs, pairs = set(), set()  # built from nothing: the hubs, and (src, dst) of the links between notes
    bulk = len(changed) >= PARALLEL_MIN
    started, index.early = index.early, None
    if started is not None and (known or started.paths != changed):
        started.close()  # the readers started early read other notes than these (another process built the index)
        started = None
    if bulk:  # FTS5 does not merge its segments while a whole vault arrives (measured: 30 ms less, queries as fast)
        con.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 0)")
    with _gc_paused():
        for path, row, found, stamp in _documents(vault, changed, schema.is_hub, known, started):
            if taken is not None:
                # a note gone since the walk is kept, empty, under a stamp no
                # file has: the next query finds it gone and takes it out with
                # its links, as for any deleted note (its id stays known)
                stamp = taken[path] = stamp if stamp is not None else (-1, -1, -1)
            doc_id = ids[path]
            docs.append((doc_id, path, *(now[path][1:] if taken is None else stamp), *row[:9]))
            fts.append((doc_id, *row[9]))
            if row[3] and not before:
                hubs.add(doc_id)
            for target, name, dst in found:
                dst = id_of(dst)
                edges.append((doc_id, target, name, dst))
                if dst is not None:
                    affected.add(dst)
                    if not before and dst != doc_id:
                        pairs.add((doc_id, dst))
            if len(fts) >= WRITE_BATCH:  # written while the readers read on
                _write(con, (add_text, fts), (add_doc, docs), (add_link, edges))
        _write(con, (add_text, fts), (add_doc, docs), (add_link, edges))
    if bulk:
        con.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 4)")  # FTS5's default, for later updates
    for statement in _LINK_INDEXES.split(";"):
        if statement.strip():
            con.execute(statement)
    if before:
        _count_inlinks(con, affected)
    else:  # built from nothing: every note's count from the links at hand
        counts: dict[int, int] = {}
        near = set()
        for src, dst in pairs:
            counts[dst] = counts.get(dst, 0) + 1
            if src in hubs:
                near.add(dst)
        con.executemany(
            "UPDATE docs SET inlinks = ?, near_hub = ? WHERE id = ?",
            [(counts.get(doc_id, 0), 1 if doc_id in near else 0, doc_id) for doc_id in counts.keys() | near],
        )
    index.reread = len(changed)


def _gc_paused():
    from ..read.parallel import gc_paused

    return gc_paused()


WRITE_BATCH = 200  # notes per executemany into the FTS table


def _write(con, *batches) -> None:
    """Run each ``(statement, rows)`` of ``batches`` over its rows, then empty them."""
    for statement, rows in batches:
        if rows:
            con.executemany(statement, rows)
            rows.clear()


def _count_inlinks(con, ids: set) -> None:
    """Count again the in-links of the notes ``ids``: how many other notes
    link to each, and whether a hub does."""
    count = (
        "UPDATE docs SET inlinks = (SELECT COUNT(DISTINCT src) FROM links WHERE dst = docs.id AND src != docs.id), "
        "near_hub = EXISTS (SELECT 1 FROM links JOIN docs h ON h.id = links.src "
        "WHERE links.dst = docs.id AND links.src != docs.id AND h.hub = 1)"
    )
    con.executemany(count + " WHERE id = ?", [(doc_id,) for doc_id in ids])


# ---------------------------------------------------------------------------
# Queries


class Hit:
    """One search hit (a plain class: defined faster than a dataclass, on every start)."""

    __slots__ = (
        "path",
        "title",
        "score",
        "bm25",
        "fields",
        "line",
        "snippet",
        "inlinks",
        "relevance",
        "type",
        "status",
        "exact",
    )

    def __init__(self, path, title, score, bm25, fields, line, snippet, inlinks, relevance, type, status, exact=False):
        self.path: str = path
        self.title: str = title
        self.score: float = score
        self.bm25: float = bm25
        self.fields: list[str] = fields
        self.line: int = line
        self.snippet: str = snippet
        self.inlinks: int = inlinks
        self.relevance: float | None = relevance
        self.type: str | None = type
        self.status: str | None = status
        self.exact: bool = exact  # its file name, title or an alias is the query (ranked first)

    def __repr__(self) -> str:
        return f"Hit({self.path!r}, score={self.score:.4g})"

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "title": self.title,
            "score": round(self.score, 4),
            "bm25": round(self.bm25, 4),
            "fields": self.fields,
            "line": self.line,
            "snippet": self.snippet,
            "inlinks": self.inlinks,
            "relevance": self.relevance,
            "type": self.type,
            "status": self.status,
            "exact": self.exact,
        }


def folder_prefixes(vault, folder: str | None) -> list[str] | None:
    """The folder ``folder`` (``--folder``) as the vault's note paths spell
    it, each ending in ``/``: None for no folder (the whole vault); ``[]``
    when no note lies in it.  ``./people/`` is ``people``; names compare in
    NFC, so ``Réunions`` typed on Linux finds the folder macOS wrote
    decomposed (NFD), as a query finds its words."""
    if folder is None:
        return None
    folder = folder.strip()
    if os.path.isabs(folder):  # a path to a folder of the vault, as a shell completes it
        folder = os.path.relpath(os.path.realpath(folder), os.path.realpath(vault.root))
    name = nfc(posixpath.normpath(folder.replace("\\", "/"))).strip("/")
    if name in ("", "."):
        return None
    prefix = name + "/"
    found = set()
    for path in vault.notes:
        head = path[: path.rfind("/") + 1]
        if head and (head if head.isascii() else nfc(head)).startswith(prefix):
            found.add(head[: len(prefix)] if head.isascii() else _raw_prefix(head, prefix))
    return sorted(found)


def _raw_prefix(head: str, prefix: str) -> str:
    """The start of ``head`` (a raw folder path) whose NFC form is ``prefix``."""
    for end in range(len(prefix), len(head) + 1):
        if head[end - 1] == "/" and nfc(head[:end]) == prefix:
            return head[:end]
    return prefix


def _filters(kind, status, prefixes) -> tuple[str, list]:
    sql, params = [], []
    if kind:
        sql.append("docs.type = ?")
        params.append(kind.strip().lower())
    if status:
        sql.append("docs.status = ?")
        params.append(status.strip().lower())
    if prefixes:
        sql.append("(" + " OR ".join(["substr(docs.path, 1, ?) = ?"] * len(prefixes)) + ")")
        params += [item for prefix in prefixes for item in (len(prefix), prefix)]
    return "".join(" AND " + s for s in sql), params


def search(
    index: Index,
    vault,
    schema,
    text: str,
    limit: int = 10,
    kind: str | None = None,
    status: str | None = None,
    folder: str | None = None,
    raw: bool = False,
    snippets: bool = True,
) -> list[Hit]:
    """The best ``limit`` notes for ``text`` (see the module docstring).
    ``raw``: ``text`` is FTS5 syntax; a bad one raises :class:`QueryError`."""
    text, kind, status, folder = (_text(value) for value in (text, kind, status, folder))
    words = text.split() if not raw else []
    if len(words) > MAX_QUERY_WORDS:
        index.warnings.append(f"the query has {len(words):,} words; searched with the first {MAX_QUERY_WORDS}")
        text = " ".join(words[:MAX_QUERY_WORDS])
    query = strip_marks(text) if raw else fts_query(text)
    prefixes = folder_prefixes(vault, folder)
    if prefixes == []:
        index.warnings.append(f"--folder {folder!r}: no note is in that folder (folders are named from the vault)")
    for flag, column, value in (("--type", "type", kind), ("--status", "status", status)):
        if (
            value
            and not index.con.execute(f"SELECT 1 FROM docs WHERE {column} = ?", (value.strip().lower(),)).fetchone()
        ):
            index.warnings.append(f"{flag} {value!r}: no note has that {column}")
    if not query.strip() or limit <= 0 or prefixes == []:
        return []
    where, params = _filters(kind, status, prefixes)
    join = " JOIN docs ON docs.id = fts.rowid" if where else ""  # for the filters only: 10-15% of a query
    sql = (
        f"SELECT fts.rowid, bm25(fts, {_WEIGHTS}) AS rank FROM fts{join} WHERE fts MATCH ?{where} ORDER BY rank LIMIT ?"
    )
    depth = min(limit, 1 << 40) * RERANK_DEPTH  # SQLite takes no integer past 2**63
    try:
        narrow = None if raw else _without_common(index.con, text)
        rows = _best(index.con, sql, narrow, params, depth) if narrow else []
        if len(rows) < depth:
            rows = _best(index.con, sql, query, params, depth)
    except sqlite3.Error as exc:
        if raw and not _locked(exc):
            hint = "leave out --fts to search for the words as typed"
            raise QueryError(f"bad FTS5 query {text!r}: {exc} ({hint})") from None
        raise
    exact = set() if raw else _named(index.con, text, where, params)
    missing = exact - {doc_id for doc_id, _ in rows}
    if missing:  # named exactly, yet past the rows fetched: reranked with them (a note no word matches: bm25 0)
        marks = ",".join("?" * len(missing))
        scored = dict.fromkeys(missing, 0.0)
        found = f"SELECT rowid, bm25(fts, {_WEIGHTS}) FROM fts WHERE fts MATCH ? AND rowid IN ({marks})"
        scored.update(index.con.execute(found, [query, *missing]).fetchall())
        rows = [*rows, *scored.items()]
    ranked = rerank(index, schema, rows, vault, exact)[:limit]
    terms = [fold(" ".join(t)) for t in query_terms(text)] if not raw else [fold(w) for w in _WORD.findall(text)]
    return [
        _hit(index, vault, doc_id, score, bm, rel, terms, snippets, doc_id in exact)
        for doc_id, score, bm, rel in ranked
    ]


def _named(con, text: str, where: str, params: list) -> set[int]:
    """The ids of the notes (within the filters ``where``, ``params`` of
    :func:`_filters`) one of whose names is ``text``, as :func:`name_fold`
    compares them: one scan of ``docs.names``, where :func:`document` keeps
    each note's names folded, each between line breaks."""
    name = name_fold(text)
    if not name:
        return set()
    sql = f"SELECT docs.id FROM docs WHERE instr(docs.names, ?) > 0{where}"
    return {doc_id for (doc_id,) in con.execute(sql, ["\n" + name + "\n", *params])}


def _best(con, sql: str, query: str, params: list, depth: int) -> list[tuple]:
    """The ``(doc id, bm25)`` rows of ``sql`` (a ranked FTS query, its
    ``LIMIT`` last) for ``query``: the best ``depth``, and every row whose
    bm25 ties with the last of them.  Which of tied rows a ``LIMIT`` keeps
    depends on their ids, that is on the index's history (a renamed note
    gets a new id); with all of them the hits depend on the notes alone."""
    rows = con.execute(sql, [query, *params, depth + 1]).fetchall()
    if len(rows) <= depth:
        return rows
    last = rows[depth - 1][1]
    if rows[depth][1] != last:
        return rows[:depth]
    tied = sql.replace(" ORDER BY rank LIMIT ?", f" AND bm25(fts, {_WEIGHTS}) = ?")
    found = dict(rows[:depth])
    found.update(con.execute(tied, [query, *params, last]).fetchall())
    return list(found.items())


def _without_common(con, text: str) -> str | None:
    """The query of ``text`` without its one-token words that half the notes
    or more hold, when another word remains; else None.

    FTS5's bm25 gives such a word an IDF of 1e-6 (``log((N - n + 0.5) /
    (n + 0.5))`` is not positive), so it adds about a millionth to a score,
    yet bm25 is computed for every note that holds it: "notes" in
    obsidian-hub is in 3,659 of 6,571 notes, and a query holding it took 10
    ms instead of 1.  A note holding only such words scores below every note
    holding another word, so the best rows are the same; :func:`search` runs
    the whole query when this one finds fewer rows than it needs.

    When every word is that common, the phrase of them all is the query, if
    fewer than half the notes hold it (its IDF is then positive, and a note
    holding it scores above every note that does not): "obsidian notes" in
    obsidian-hub, 23 ms to 4."""
    terms = query_terms(text)
    single = [tokens for tokens in terms if len(tokens) == 1 and not _has_cjk(tokens[0])]
    if len(terms) < 2 or not single:
        return None
    notes = con.execute("SELECT count(*) FROM docs").fetchone()[0]
    count = "SELECT count(*) FROM fts WHERE fts MATCH ?"
    common = frozenset(t for t in single if 2 * con.execute(count, [_quote(t[0])]).fetchone()[0] >= notes)
    if not common:
        return None
    if len(common) == len(terms):
        phrase = _quote(" ".join(tokens[0] for tokens in terms))
        return phrase if 2 * con.execute(count, [phrase]).fetchone()[0] < notes else None
    return fts_query(text, common)


def _text(value: str | None) -> str | None:
    """``value`` with what is not Unicode (bytes of a non-UTF-8 command line,
    kept as lone surrogates) as U+FFFD, which SQLite can take."""
    if value is None or value.isascii() or not re.search(_SURROGATE, value):
        return value
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def rerank(index: Index, schema, rows, vault=None, exact=frozenset()) -> list[tuple]:
    """``(doc id, score, bm25, relevance or None)`` of FTS rows ``(doc id,
    bm25)``, best first.  ``vault`` resolves a ``superseded_by`` (without
    it, any value retires the card).  ``exact``: the ids of the notes named
    as the query (:func:`_named`), which come first."""
    con = index.con
    bm25 = dict(rows)
    marks = ",".join("?" * len(bm25))
    found = con.execute(
        f"SELECT id, path, hub, superseded, props, inlinks, near_hub FROM docs WHERE id IN ({marks})", list(bm25)
    ).fetchall()
    out = []
    clock = cards = None
    paths = {row[0]: row[1] for row in found}
    tiers: dict[int, int] = {}
    for doc_id, path, hub_self, superseded, props, inlinks, near_hub in found:
        bm = bm25[doc_id]
        rel = None
        if props and _DATED.search(props):  # decay (and its imports) only for a card that has a date
            if clock is None:
                from ..read import dates
                from . import decay

                settings = decay.Settings.of(schema)
                clock = (dates.today_in(settings.zone), settings)
            rel = freshness(json.loads(props), *clock)
        score = -bm * (1 + 0.15 * math.log1p(inlinks)) * (1.1 if near_hub and not hub_self else 1.0)
        score *= 0.85 + 0.15 * (0.5 if rel is None else rel)
        if superseded == 2 and vault is not None:  # a superseded_by: retired if it names another card
            from . import retirement

            cards = set(vault.cards(schema)) if cards is None else cards
            superseded = retirement.retired(vault, cards, path, json.loads(props))
        if superseded:
            score *= 0.5
        # Exact names first.  An agent looking a subject up by its name must
        # see the subject's card first, not a meeting note that mentions the
        # name five times (more body words can outscore a one-word title):
        # a note whose file name, title or alias is the query (tier 0) comes
        # before every other; a retired one (tier 1) after the live ones, as
        # it points to the card that replaced it; the rest (tier 2) by score.
        # Within a tier, the score orders (superseded still halves it).
        tiers[doc_id] = (0 if not superseded else 1) if doc_id in exact else 2
        out.append((doc_id, score, -bm, rel))
    # ties by path: the same hits for the same notes
    out.sort(key=lambda item: (tiers[item[0]], -item[1], paths[item[0]]))
    return out


def freshness(props: dict, today, settings) -> float | None:
    """Decay's relevance of a card with ``props`` on ``today`` (None: undated)."""
    from . import decay

    if not isinstance(props, dict):
        return None
    reading = decay.read_card("", props, today, settings)
    return reading.relevance


def _word_pattern(word: str) -> str:
    """A regex for ``word`` (folded) as a whole word; a CJK run anywhere."""
    return re.escape(word) if _has_cjk(word) else r"(?<!\w)" + re.escape(word) + r"(?!\w)"


def _hit(index, vault, doc_id, score, bm, rel, terms, snippets, exact=False) -> Hit:
    con = index.con
    path, title, kind, status, inlinks, body_line = con.execute(
        "SELECT path, title, type, status, inlinks, body_line FROM docs WHERE id = ?", (doc_id,)
    ).fetchone()
    cols = con.execute(f"SELECT {', '.join(COLUMNS)} FROM fts WHERE rowid = ?", (doc_id,)).fetchone()
    # a term matches a column when each of its words is a word of the column
    # (a CJK term: is in it); searched for, not every word of a long body listed
    wanted = [[re.compile(_word_pattern(w)) for w in (_WORD.findall(t) if not _has_cjk(t) else [t])] for t in terms]
    matched = []
    for name, value in zip(COLUMNS, cols, strict=True):
        if not value:
            continue
        if name == "cjk":
            grams = fold(value)
            if any(bigrams(t) and bigrams(t).split()[0] in grams for t in terms):
                matched.append(name)
            continue
        folded = fold(value)
        if any(words and all(word.search(folded) for word in words) for words in wanted):
            matched.append(name)
    line, snippet = _snippet(vault, path, body_line or 1, terms) if snippets else (0, "")
    return Hit(path, title, score, bm, matched, line, snippet, inlinks, rel, kind, status, exact)


def _text_of(vault, path: str) -> str | None:
    """The text of a note as :func:`document` indexed it (UTF-8, U+FFFD for
    a byte that does not decode, the BOM left off, lone-CR line ends as
    ``\n``; a FIFO or a note over ``vault.MAX_NOTE_BYTES`` is not read),
    None when it cannot be read.
    Here so that a query does not load the frontmatter parser for its
    snippets: the body's first line was stored when the note was indexed."""
    try:
        fd = os.open(os.path.join(vault.root, path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > 32 << 20:
                return None
            data = handle.read()
        text = (data[3:] if data.startswith(_BOM) else data).decode("utf-8", "replace")  # as indexed (document)
    except OSError:
        return None
    if "\r" in text and "\n" not in text:
        text = text.replace("\r", "\n")
    return text


def _snippet(vault, path: str, body_line: int, terms: list[str], width: int = 160) -> tuple[int, str]:
    """``(line, text)``: the first line of the note (body first, from its
    1-based ``body_line``, then frontmatter) holding a query word, cut to
    about ``width`` characters around it; NFC.  ``(1, first line)`` when no
    line holds one; ``(0, "")`` for a note that cannot be read."""
    text = _text_of(vault, path)
    if text is None:
        return 0, ""
    lines = text.split("\n")
    first_body = min(body_line - 1, len(lines))
    words = [w for t in terms for w in (_WORD.findall(t) or [t])]
    if words:
        # the whole text folded at once: folding keeps every line break, so
        # its lines are the text's; the first match of any word is searched
        folded = fold(text)
        start = len("\n".join(folded.split("\n", first_body)[:first_body])) + (1 if first_body else 0)
        any_word = re.compile("|".join(_word_pattern(w) for w in words))
        found = any_word.search(folded, start) or any_word.search(folded, 0, max(start - 1, 0))
        if found:
            number = folded.count("\n", 0, found.start())
            at = found.start() - (folded.rfind("\n", 0, found.start()) + 1)
            return number + 1, _cut(nfc(lines[number]), at, width)
    for number in list(range(first_body, len(lines))) + list(range(0, first_body)):
        if lines[number].strip():
            return number + 1, _cut(nfc(lines[number]), 0, width)
    return 1, ""


def _cut(line: str, at: int, width: int) -> str:
    line = line.strip("\r")
    if len(line) <= width:
        return line.strip()
    start = max(0, min(at - width // 3, len(line) - width))
    text = line[start : start + width].strip()
    return ("…" if start > 0 else "") + text + ("…" if start + width < len(line) else "")


# ---------------------------------------------------------------------------
# Identity


def lookup_identity(index: Index, vault, schema, field_name: str, value: str) -> dict:
    """The cards that carry ``value`` under ``field_name`` or any other
    identity field of its kind (compared as :mod:`identity` normalises that
    kind; ``field`` in a match names the card's field): ``{"identity": {...},
    "matches": [{path, title, field, value, status, retired}],
    "unreadable": [{path, error}]}``: matches live cards first (the one to
    update), retired ones (superseded, :func:`retirement.retired`) after
    them, each part by path; ``unreadable`` the cards whose properties are
    unknown (not UTF-8, too large, frontmatter that does not parse), any of
    which may hold the identity."""
    from ..read import identity as ident

    section = schema.section("identity")
    kinds = ident.field_kinds(section)
    name = field_name.strip().lower()
    kind = kinds.get(name) or ident.WELL_KNOWN.get(name, "exact")
    country = section.get("default_country")
    ignore = section.get("ignore_values", ident.DEFAULT_IGNORE)
    wanted = ident.normalise(value, kind, country, ignore)
    # every field of the value's kind: handle=@ivan_p finds the card that holds it under telegram
    names = list(dict.fromkeys([name, *ident.fields_by_kind(kinds).get(kind, [])]))
    cards = set(vault.cards(schema))
    matches = []
    if wanted is not None:
        from .retirement import retired

        rows = index.con.execute("SELECT path, title, status, props FROM docs ORDER BY path")
        for path, title, status, props in rows:
            if path not in cards or not props or not any(n in props.lower() for n in names):
                continue
            data = json.loads(props)
            held = ident.holding(data, names, kind, wanted, country, ignore)
            if held is not None:
                matches.append(
                    {
                        "path": path,
                        "title": title,
                        "field": held[0],
                        "value": str(held[1]),
                        "status": status,
                        "retired": retired(vault, cards, path, data),
                    }
                )
    matches.sort(key=lambda match: match["retired"])  # live cards first: the one to update; then by path
    unread = [
        {"path": path, "error": why}
        for path, why in index.con.execute(
            "SELECT path, unreadable FROM docs WHERE unreadable IS NOT NULL ORDER BY path"
        )
        if path in cards
    ]
    return {
        "identity": {"field": name, "kind": kind, "value": value, "normalised": wanted, "listed": name in kinds},
        "matches": matches,
        "unreadable": unread,
    }
