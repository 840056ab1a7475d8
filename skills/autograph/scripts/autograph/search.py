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
in-links)``, ``hub = 1.1`` when a hub note links to it, ``fresh = 0.85 + 0.15
* relevance`` (decay's relevance; 0.5 for an undated note), ``superseded =
0.5`` for status ``superseded`` or a ``superseded_by`` value.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sqlite3
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import unquote

from . import identity as ident
from . import store
from .cli import UsageError

__all__ = [
    "INDEX_NAME",
    "INDEX_VERSION",
    "MIN_SQLITE",
    "WEIGHTS",
    "Hit",
    "Index",
    "SearchUnavailable",
    "check_sqlite",
    "fold",
    "fts_query",
    "lookup_identity",
    "open_index",
    "search",
]

INDEX_NAME = "search.sqlite"
INDEX_VERSION = 2
MIN_SQLITE = (3, 27, 0)  # FTS5's unicode61 remove_diacritics 2
BUSY_SECONDS = 5.0
COLUMNS = ("title", "aliases", "description", "tags", "headings", "props", "body", "cjk")
WEIGHTS = (10.0, 10.0, 5.0, 3.0, 3.0, 2.0, 1.0, 2.0)
RERANK_DEPTH = 4  # rows fetched per hit asked for, then reranked

_CJK = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_WORD = re.compile(r"\w+")
_DATED = re.compile(r'"(?:last_accessed|updated|created)"', re.I)  # decay.DATE_KEYS, as stored in props
_SURROGATE = re.compile("[\ud800-\udfff]")
_MARKS = re.compile("[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_TAG = re.compile(r"#(\w[\w/-]*)")
# Links and headings for the rerank and the headings column, found by
# regular expressions outside fenced code (cheaper than links.scan_body;
# inline code and comments are not told apart: a link there counts once more).
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[`~]*[ \t]*$|\Z)", re.M | re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_WIKILINK = re.compile(r"\[\[([^\]|#\n]+)[^\]\n]*\]\]")
_MDLINK = re.compile(r"\]\(<?([^)>#\s]+\.md)[)>#]")
_SKIP_PROPS = {"title", "aliases", "alias", "description", "summary", "tags", "tag", "cssclasses"}


class SearchUnavailable(Exception):
    """This Python's SQLite cannot hold the index (too old, or no FTS5)."""


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
    return nfc(_MARKS.sub("", unicodedata.normalize("NFD", text)))


def fold(text: str) -> str:
    """``text`` as the index compares it: NFC, no diacritics, case-folded."""
    return strip_marks(text).casefold()


def bigrams(text: str) -> str:
    """The overlapping character bigrams of each CJK run of ``text``,
    space-separated (a run of one character is itself)."""
    grams = []
    for run in _CJK.findall(text):
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


def fts_query(text: str) -> str:
    """An FTS5 query for any text: each whitespace-separated word becomes a
    quoted phrase of its tokens, OR-joined, and several words are also
    searched as one phrase; a CJK run is also searched as the phrase of its
    bigrams in the ``cjk`` column.  ``""`` when the text
    has no word (then nothing matches)."""
    parts = []
    terms = query_terms(text)
    for tokens in terms:
        parts.append(_quote(" ".join(tokens)))
        grams = [bigrams(token) for token in tokens if _CJK.search(token)]
        if grams:
            parts.append("cjk : " + _quote(" ".join(grams)))
    if len(terms) > 1:  # the words as one phrase too: a note holding it scores that phrase on top
        parts.append(_quote(" ".join(token for tokens in terms for token in tokens)))
    return " OR ".join(parts)


# ---------------------------------------------------------------------------
# Documents


def _strings(value) -> list[str]:
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def _prop(properties: dict, *names: str):
    for key, value in properties.items():
        if isinstance(key, str) and key.lower() in names:
            return value
    return None


@functools.lru_cache(maxsize=65536)
def _link_key(target: str) -> str:
    name = target.rsplit("/", 1)[-1]
    if name.lower().endswith(".md"):
        name = name[:-3]
    return nfc(name).casefold()


def document(note, hubs) -> tuple[dict, list[str]]:
    """The indexed form of a :class:`note.Note`: ``(row, link keys)``."""
    stem = note.stem
    if note.text is None:
        return {"key": nfc(stem).casefold(), "title": nfc(stem), "unreadable": 1}, []
    block = note.frontmatter
    props = block.properties if block is not None and block.valid else {}
    body = note.body
    plain = _FENCED.sub("", body) if "```" in body or "~~~" in body else body
    headings = _HEADING.findall(plain) if "#" in plain else []
    targets = _WIKILINK.findall(plain) if "[[" in plain else []
    targets += [unquote(t) for t in _MDLINK.findall(plain)] if "](" in plain else []
    targets += [t for v in props.values() for s in _strings(v) if "[[" in s for t in _WIKILINK.findall(s)]
    low = {k.lower(): v for k, v in props.items() if isinstance(k, str)} if props else {}
    title = low.get("title")
    titles = [stem] + [t for t in _strings(title) if t != stem]
    tags = _strings(low.get("tags", low.get("tag")))
    if "#" in plain:
        tags += [t for t in _TAG.findall(plain) if not t.isdigit()]
    others = [s for k, v in low.items() if k not in _SKIP_PROPS for s in _strings(v)]
    fields = {
        "title": " ".join(titles),
        "aliases": " ".join(_strings(low.get("aliases", low.get("alias")))),
        "description": " ".join(_strings(low.get("description", low.get("summary")))),
        "tags": " ".join(t.replace("/", " ") for t in tags),
        "headings": "\n".join(headings),
        "props": " ".join(others),
        "body": body,
    }
    fields = {k: strip_marks(v) for k, v in fields.items()}
    fields["cjk"] = "" if note.text.isascii() or not _CJK.search(note.text) else bigrams(" ".join(fields.values()))
    kind, status = low.get("type"), low.get("status")
    row = {
        "key": nfc(stem).casefold(),
        "title": nfc(_strings(title)[0]) if _strings(title) else nfc(stem),
        "type": kind.strip().lower() if isinstance(kind, str) else None,
        "status": status.strip().lower() if isinstance(status, str) else None,
        "hub": 1 if hubs(stem, props) else 0,
        "superseded": 1
        if (isinstance(status, str) and status.strip().lower() == "superseded") or low.get("superseded_by")
        else 0,
        "props": json.dumps(props, ensure_ascii=False, default=str) if props else "{}",
        "fields": fields,
    }
    keys = {_link_key(t) for t in targets if t.strip()}
    return row, sorted(keys - {row["key"]})


# ---------------------------------------------------------------------------
# The index

_CREATE = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE docs (
  id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER, mtime INTEGER, ctime INTEGER,
  key TEXT, title TEXT, type TEXT, status TEXT, hub INTEGER, superseded INTEGER, props TEXT);
CREATE INDEX docs_key ON docs(key);
CREATE TABLE links (src INTEGER NOT NULL, key TEXT NOT NULL);
CREATE INDEX links_key ON links(key);
CREATE INDEX links_src ON links(src);
CREATE VIRTUAL TABLE fts USING fts5({", ".join(COLUMNS)}, tokenize='unicode61 remove_diacritics 2');
"""


@dataclass
class Index:
    """An open search index and what bringing it up to date did."""

    con: sqlite3.Connection
    path: str | None  # None: in memory
    notes: int = 0
    reread: int = 0
    removed: int = 0
    rebuilt: str | None = None  # why it was built from nothing, if it was
    stale: bool = False  # another process held the index: answered from the last good one
    warnings: list[str] = field(default_factory=list)

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
            "memory": self.path is None,
        }


def _schema_stamp(schema) -> str:
    """The schema as the index was built for it (its whole text: any change rebuilds)."""
    return json.dumps(schema.data, sort_keys=True, ensure_ascii=True, default=str)


def _create(con: sqlite3.Connection, schema) -> None:
    for statement in _CREATE.split(";"):
        if statement.strip():
            con.execute(statement)
    con.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("version", str(INDEX_VERSION)), ("schema", _schema_stamp(schema)), ("sqlite", sqlite3.sqlite_version)],
    )


def _why_rebuild(con: sqlite3.Connection, schema) -> str | None:
    tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if not tables:
        return "new"
    if not {"meta", "docs", "links", "fts"} <= tables:
        return "incomplete"
    meta = dict(con.execute("SELECT key, value FROM meta"))
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
    for suffix in ("", "-wal", "-shm", "-journal"):
        store.discard_derived(root, INDEX_NAME + suffix)


def open_index(vault, schema, use_disk: bool = True) -> Index:
    """The vault's search index, brought up to date (see the module
    docstring).  Falls back to an index in memory when ``.graph/`` cannot
    be written (``use_disk=False`` forces it)."""
    check_sqlite()
    warnings: list[str] = []
    if use_disk:
        try:
            path = str(store.derived_path(vault.root, INDEX_NAME))
            con = None
            try:
                con = _connect(path)
                index = _prepare(con, path, vault, schema, warnings)
            except sqlite3.DatabaseError as exc:
                if _locked(exc) or not _damaged(exc):
                    raise
                if con is not None:
                    con.close()
                warnings.append(f".graph/{INDEX_NAME}: damaged search index ({exc}); rebuilt it")
                _remove(vault.root)
                con = _connect(path)
                index = _prepare(con, path, vault, schema, warnings)
            return index
        except (OSError, store.PathError, sqlite3.OperationalError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and _locked(exc):
                warnings.append("another process held the search index too long; searched with an index in memory")
            else:
                warnings.append(f".graph/ cannot hold the search index ({exc}); searched with an index in memory")
    con = _connect(":memory:")
    return _prepare(con, None, vault, schema, warnings)


def _damaged(exc: Exception) -> bool:
    """True for the errors of a file that is not (or no longer) a sound
    SQLite database, as opposed to one that cannot be opened or written."""
    if isinstance(exc, sqlite3.OperationalError):
        return "malformed" in str(exc) or "no such" in str(exc)
    return isinstance(exc, sqlite3.DatabaseError)


def _locked(exc: Exception) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _prepare(con, path, vault, schema, warnings) -> Index:
    index = Index(con, path, warnings=warnings)
    why = _why_rebuild(con, schema)
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
    _refresh(index, vault, schema)
    return index


def _stamps(vault) -> dict[str, tuple[int, int, int]]:
    root = str(vault.root).rstrip(os.sep) + os.sep
    found = {}
    stat = os.stat
    for path in vault.notes:
        try:
            st = stat(root + path)
        except OSError:
            continue
        found[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


def _diff(con, current) -> tuple[list[str], list[tuple[int, str]]]:
    stored = {row[0]: (row[1], tuple(row[2:])) for row in con.execute("SELECT path, id, size, mtime, ctime FROM docs")}
    changed = [p for p, stamp in current.items() if p not in stored or stored[p][1] != stamp]
    gone = [(doc_id, p) for p, (doc_id, stamp) in stored.items() if p not in current or current[p] != stamp]
    return changed, gone


PARALLEL_MIN = 1000  # notes to read before a forked second process pays for its start


def _documents(vault, paths: list[str], hubs) -> list:
    """``(path, document(note))`` for ``paths``; with many notes, every
    other one is read by a forked child (:func:`parallel.map_in_two`)."""
    from . import parallel

    def read(path):
        return path, document(vault.note(path, keep=False), hubs)

    def quiet():
        vault.progress = None

    with parallel.gc_paused():
        if len(paths) < PARALLEL_MIN or not parallel.can_fork():
            return [read(path) for path in paths]
        return parallel.map_in_two(read, paths, quiet)


def _refresh(index: Index, vault, schema) -> None:
    con = index.con
    current = _stamps(vault)
    index.notes = len(current)
    changed, gone = _diff(con, current)
    if not changed and not gone:
        return
    try:
        con.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if not _locked(exc):
            raise
        index.stale = True
        index.warnings.append("another process is updating the search index; answered from the index as it was")
        return
    try:
        changed, gone = _diff(con, current)  # as it is now that this process holds the index
        ids = [(doc_id,) for doc_id, _ in gone]
        con.executemany("DELETE FROM docs WHERE id = ?", ids)
        con.executemany("DELETE FROM links WHERE src = ?", ids)
        con.executemany("DELETE FROM fts WHERE rowid = ?", ids)
        index.removed = sum(1 for _, p in gone if p not in current)
        hubs = schema.is_hub
        docs, fts, links = [], [], []
        next_id = (con.execute("SELECT MAX(id) FROM docs").fetchone()[0] or 0) + 1
        for path, (row, keys) in _documents(vault, changed, hubs):
            doc_id, next_id = next_id, next_id + 1
            size, mtime, ctime = current[path]
            docs.append(
                (doc_id, path, size, mtime, ctime, row["key"], row["title"], row.get("type"), row.get("status"))
                + (row.get("hub", 0), row.get("superseded", 0), row.get("props", "{}"))
            )
            cols = row.get("fields") or {}
            fts.append((doc_id, *(cols.get(name, "") for name in COLUMNS)))
            links.extend((doc_id, key) for key in keys)
        con.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", docs)
        con.executemany(f"INSERT INTO fts (rowid, {', '.join(COLUMNS)}) VALUES ({', '.join('?' * 9)})", fts)
        con.executemany("INSERT INTO links VALUES (?, ?)", links)
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    index.reread = len(changed)


# ---------------------------------------------------------------------------
# Queries


@dataclass
class Hit:
    path: str
    title: str
    score: float
    bm25: float
    fields: list[str]
    line: int
    snippet: str
    inlinks: int
    relevance: float | None
    type: str | None
    status: str | None

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
        }


def _filters(kind, status, folder) -> tuple[str, list]:
    sql, params = [], []
    if kind:
        sql.append("docs.type = ?")
        params.append(kind.strip().lower())
    if status:
        sql.append("docs.status = ?")
        params.append(status.strip().lower())
    if folder and folder.strip("/"):
        prefix = folder.strip("/") + "/"
        sql.append("substr(docs.path, 1, ?) = ?")
        params += [len(prefix), prefix]
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
    ``raw``: ``text`` is FTS5 syntax; a bad one raises :class:`UsageError`."""
    text, kind, status, folder = (_text(value) for value in (text, kind, status, folder))
    query = strip_marks(text) if raw else fts_query(text)
    if not query.strip() or limit <= 0:
        return []
    where, params = _filters(kind, status, folder)
    weights = ", ".join(str(w) for w in WEIGHTS)
    sql = (
        f"SELECT fts.rowid, bm25(fts, {weights}) AS rank FROM fts JOIN docs ON docs.id = fts.rowid "
        f"WHERE fts MATCH ?{where} ORDER BY rank LIMIT ?"
    )
    try:
        rows = index.con.execute(sql, [query, *params, limit * RERANK_DEPTH]).fetchall()
    except sqlite3.Error as exc:
        if raw and not _locked(exc):
            hint = "leave out --fts to search for the words as typed"
            raise UsageError(f"bad FTS5 query {text!r}: {exc} ({hint})") from None
        raise
    ranked = rerank(index, schema, rows)[:limit]
    terms = [fold(" ".join(t)) for t in query_terms(text)] if not raw else [fold(w) for w in _WORD.findall(text)]
    return [_hit(index, vault, doc_id, score, bm, rel, terms, snippets) for doc_id, score, bm, rel in ranked]


def _text(value: str | None) -> str | None:
    """``value`` with what is not Unicode (bytes of a non-UTF-8 command line,
    kept as lone surrogates) as U+FFFD, which SQLite can take."""
    if value is None or not _SURROGATE.search(value):
        return value
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def rerank(index: Index, schema, rows) -> list[tuple]:
    """``(doc id, score, bm25, relevance or None)`` of FTS rows ``(doc id, bm25)``, best first."""
    con = index.con
    bm25 = dict(rows)
    marks = ",".join("?" * len(bm25))
    found = con.execute(
        f"SELECT d.id, d.hub, d.superseded, d.props, "
        f"(SELECT COUNT(DISTINCT l.src) FROM links l WHERE l.key = d.key AND l.src != d.id), "
        f"EXISTS (SELECT 1 FROM links l JOIN docs h ON h.id = l.src WHERE l.key = d.key AND h.hub = 1) "
        f"FROM docs d WHERE d.id IN ({marks})",
        list(bm25),
    ).fetchall()
    out = []
    clock = None
    for doc_id, hub_self, superseded, props, inlinks, near_hub in found:
        bm = bm25[doc_id]
        rel = None
        if props and _DATED.search(props):  # decay (and its imports) only for a card that has a date
            if clock is None:
                from . import decay

                settings = decay.Settings.of(schema)
                clock = (decay.today_in(settings.zone), settings)
            rel = freshness(json.loads(props), *clock)
        score = -bm * (1 + 0.15 * math.log1p(inlinks)) * (1.1 if near_hub and not hub_self else 1.0)
        score *= 0.85 + 0.15 * (0.5 if rel is None else rel)
        if superseded:
            score *= 0.5
        out.append((doc_id, score, -bm, rel))
    out.sort(key=lambda item: (-item[1], item[0]))
    return out


def freshness(props: dict, today, settings) -> float | None:
    """Decay's relevance of a card with ``props`` on ``today`` (None: undated)."""
    from . import decay

    if not isinstance(props, dict):
        return None
    reading = decay.read_card("", props, today, settings)
    return reading.relevance


def _words(text: str) -> set[str]:
    return set(_WORD.findall(fold(text)))


def _hit(index, vault, doc_id, score, bm, rel, terms, snippets) -> Hit:
    con = index.con
    path, title, kind, status, key, props = con.execute(
        "SELECT path, title, type, status, key, props FROM docs WHERE id = ?", (doc_id,)
    ).fetchone()
    cols = con.execute(f"SELECT {', '.join(COLUMNS)} FROM fts WHERE rowid = ?", (doc_id,)).fetchone()
    inlinks = con.execute("SELECT COUNT(DISTINCT src) FROM links WHERE key = ? AND src != ?", (key, doc_id))
    matched = []
    for name, value in zip(COLUMNS, cols, strict=True):
        if not value:
            continue
        if name == "cjk":
            grams = fold(value)
            if any(bigrams(t) and bigrams(t).split()[0] in grams for t in terms):
                matched.append(name)
            continue
        words = _words(value)
        folded = fold(value)
        if any(all(w in words for w in _WORD.findall(t)) or (_CJK.search(t) and t in folded) for t in terms):
            matched.append(name)
    line, snippet = _snippet(vault, path, terms) if snippets else (0, "")
    return Hit(path, title, score, bm, matched, line, snippet, inlinks.fetchone()[0], rel, kind, status)


def _snippet(vault, path: str, terms: list[str], width: int = 160) -> tuple[int, str]:
    """``(line, text)``: the first line of the note (body first, then
    frontmatter) holding a query word, cut to about ``width`` characters
    around it; NFC.  ``(1, first line)`` when no line holds one."""
    note = vault.note(path, keep=False)
    if note.text is None:
        return 0, ""
    lines = note.text.split("\n")
    first_body = note.body_line - 1
    order = list(range(first_body, len(lines))) + list(range(0, first_body))
    words = [w for t in terms for w in (_WORD.findall(t) or [t])]
    for number in order:
        line = nfc(lines[number])
        folded = fold(line)
        found = [_find_word(folded, w) for w in words]
        found = [at for at in found if at >= 0]
        if found:
            return number + 1, _cut(line, min(found), width)
    for number in order:
        if lines[number].strip():
            return number + 1, _cut(nfc(lines[number]), 0, width)
    return 1, ""


def _find_word(folded: str, word: str) -> int:
    if _CJK.search(word):
        return folded.find(word)
    match = re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", folded)
    return match.start() if match else -1


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
    """The cards that carry ``value`` under ``field_name`` (compared as
    :mod:`identity` normalises that field's kind)."""
    section = schema.section("identity")
    kinds = ident.field_kinds(section)
    name = field_name.strip().lower()
    kind = kinds.get(name) or ident.WELL_KNOWN.get(name, "exact")
    country = section.get("default_country")
    ignore = section.get("ignore_values", ident.DEFAULT_IGNORE)
    wanted = ident.normalise(value, kind, country, ignore)
    cards = set(vault.cards(schema))
    matches = []
    if wanted is not None:
        for path, title, props in index.con.execute("SELECT path, title, props FROM docs ORDER BY path"):
            if path not in cards or not props or name not in props.lower():
                continue
            data = json.loads(props)
            for held in ident.values_of(data, name):
                if ident.normalise(held, kind, country, ignore) == wanted:
                    matches.append({"path": path, "title": title, "field": name, "value": str(held)})
                    break
    return {
        "identity": {"field": name, "kind": kind, "value": value, "normalised": wanted, "listed": name in kinds},
        "matches": matches,
    }
