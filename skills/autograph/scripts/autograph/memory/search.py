"""Search: BM25 over SQLite FTS5, a link-graph rerank, and identity look-ups.

The index is the one file every command reads, ``.graph/index.sqlite``
(:mod:`autograph.write.index_file`): every query first brings it up to
date (:mod:`autograph.write.index_update`: notes whose stamp moved are read
again, once, for every command; notes that left the vault leave it).  Two
processes at once rely on SQLite's locking (WAL): the one that updates
holds a write transaction; the other waits, then answers from the index as
it was (``stale``).  A vault whose ``.graph/`` cannot be written is searched
with an index in memory.

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

import contextlib
import json
import math
import os
import posixpath
import re
import sqlite3
import stat

from ..read.folding import fold_name as name_fold
from ..read.folding import fold_text as fold
from ..read.folding import nfc, strip_marks
from ..read.searchdoc import _BOM, COLUMNS, bigrams, has_cjk, name_key
from ..write.index_file import (
    INDEX_NAME,
    INDEX_VERSION,
    MIN_SQLITE,
    Index,
    SearchUnavailable,
    check_sqlite,
    open_index,
    open_vault,
    unusable,
)
from ..write.index_update import locked as _locked

__all__ = [
    "INDEX_NAME",
    "INDEX_VERSION",
    "MIN_SQLITE",
    "WEIGHTS",
    "Hit",
    "Index",
    "Prefetch",
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

WEIGHTS = (10.0, 10.0, 5.0, 3.0, 3.0, 2.0, 1.0, 2.0)
_WEIGHTS = ", ".join(str(w) for w in WEIGHTS)  # as bm25() takes them
MAX_QUERY_WORDS = 64  # a pasted page ranked by its first words: FTS5's OR of 10,000 phrases took 35 s
RERANK_DEPTH = 4  # rows fetched per hit asked for, then reranked
_WORD = re.compile(r"\w+")
_DATED = re.compile(r'"(?:last_accessed|updated|created)"', re.I)  # decay.DATE_KEYS, as stored in props
_SURROGATE = "[\ud800-\udfff]"  # patterns kept as text are compiled on first use (re's cache)


class QueryError(ValueError):
    """A query that cannot run as written (bad FTS5 syntax with ``--fts``):
    the message says what is wrong; a command exits 2 (bad usage)."""


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
        grams = [bigrams(token) for token in tokens if has_cjk(token)]
        if grams:
            parts.append("cjk : " + _quote(" ".join(grams)))
    if len(terms) > 1:  # the words as one phrase too: a note holding it scores that phrase on top
        parts.append(_quote(" ".join(token for tokens in terms for token in tokens)))
    return " OR ".join(parts)


# ---------------------------------------------------------------------------
# Documents


# ---------------------------------------------------------------------------
# The index


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
    prefetch: Prefetch | None = None,
) -> list[Hit]:
    """The best ``limit`` notes for ``text`` (see the module docstring).
    ``raw``: ``text`` is FTS5 syntax; a bad one raises :class:`QueryError`.
    ``prefetch``: the same query ranked while the vault was walked, used
    when it read the index as ``index`` holds it now (:class:`Prefetch`)."""
    text, kind, status, folder = (_text(value) for value in (text, kind, status, folder))
    text, query, cut = _query_of(text, raw)
    if cut:
        index.warnings.append(cut)
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
    sql = _ranking(where)
    depth = _depth(limit)
    with _snapshot(index.con):  # another process's update between two statements: a row gone, not damage
        rows = prefetch.rows(index, query, depth) if prefetch is not None and not (where or raw) else None
        if rows is None:
            rows = _fts_rows(index.con, text, query, sql, params, depth, raw)
        return _ranked(index, vault, schema, text, query, rows, where, params, limit, raw, snippets)


def _query_of(text: str, raw: bool) -> tuple[str, str, str | None]:
    """``(text, FTS5 query, warning or None)`` of a query's text (its
    :data:`MAX_QUERY_WORDS` first words; with ``raw``, as written)."""
    words = text.split() if not raw else []
    cut = None
    if len(words) > MAX_QUERY_WORDS:
        cut = f"the query has {len(words):,} words; searched with the first {MAX_QUERY_WORDS}"
        text = " ".join(words[:MAX_QUERY_WORDS])
    return text, strip_marks(text) if raw else fts_query(text), cut


def _ranking(where: str = "") -> str:
    """The ranked FTS5 statement, with the filters ``where`` (:func:`_filters`)."""
    join = " JOIN docs ON docs.id = fts.rowid" if where else ""  # for the filters only: 10-15% of a query
    ranked = f"SELECT fts.rowid, bm25(fts, {_WEIGHTS}) AS rank FROM fts{join}"
    return ranked + f" WHERE fts MATCH ?{where} ORDER BY rank LIMIT ?"


def _depth(limit: int) -> int:
    """How many rows are ranked for ``limit`` hits (then reranked)."""
    return min(limit, 1 << 40) * RERANK_DEPTH  # SQLite takes no integer past 2**63


def _fts_rows(con, text: str, query: str, sql: str, params: list, depth: int, raw: bool) -> list[tuple]:
    """The ``(doc id, bm25)`` rows of the best ``depth`` notes for ``query``
    (``sql``: :func:`_ranking`), without its too common words first
    (:func:`_without_common`).  A bad ``raw`` query raises :class:`QueryError`."""
    try:
        narrow = None if raw else _without_common(con, text)
        rows = _best(con, sql, narrow, params, depth) if narrow else []
        if len(rows) < depth:
            rows = _best(con, sql, query, params, depth)
    except sqlite3.Error as exc:
        if raw and not _locked(exc):
            hint = "leave out --fts to search for the words as typed"
            raise QueryError(f"bad FTS5 query {text!r}: {exc} ({hint})") from None
        raise
    return rows


def _ranked(index, vault, schema, text, query, rows, where, params, limit, raw, snippets) -> list[Hit]:
    """:func:`search`'s hits, from the ranked FTS5 ``rows`` for ``query``."""
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


class Prefetch:
    """A query's FTS5 rows ranked in a thread while the vault is walked: on
    an unchanged vault the walk (a stat of every note) and the ranking (65-80
    ms of bm25 for a query matching most of 100k notes) overlap, as SQLite
    lets other threads run while it steps.

    :meth:`start` is given the vault's folder before the walk.  The thread
    reads the index file as it is (``immutable``: no lock taken, no ``-wal``
    or ``-shm`` made beside it), and only when the file holds every commit
    (no ``-wal`` with frames, no ``-journal``) and nothing wrote it while it
    was read (its size and time the same after).  :meth:`join` must come
    before anything forks (readers of changed notes): a process that forks
    has no thread.

    :meth:`rows` gives the rows only when the index :func:`search` answers
    from is that file as the thread read it: opened in place, no note read
    again; the same file (its inode: the thread's connection holds it open,
    so a file made in its place has another); the same ``schema_version``
    (a rebuild in place drops and makes the tables); the same ``state`` and
    ``schema`` in ``meta`` (every update of a note's rows writes its
    ``state``, a digest of every note's stamp, and a changed note's stamp is
    never the one it had).  Else None, and the query is ranked again."""

    def __init__(self, text: str, limit: int):
        self.text, self.query, _ = _query_of(_text(text) or "", False)
        self.depth = _depth(limit)
        self._thread = self._con = self._file = self._found = self._seen = None

    def start(self, root) -> None:
        """Rank in a thread, if ``root`` (the vault's folder) has an index
        file SQLite may open."""
        import threading

        from ..write.index_file import _existing

        path = _existing(root)
        if path is None or unusable(root) is not None or not self.query.strip() or self.depth <= 0:
            return
        self._thread = threading.Thread(target=self._rank, args=(path,), daemon=True)
        self._thread.start()

    def _rank(self, path: str) -> None:
        from urllib.parse import quote

        from ..write.index_file import READ_ONLY

        try:
            if os.path.exists(path + "-journal") or _has_frames(path + "-wal"):
                return  # commits the file does not hold yet, or a write under way
            before = os.stat(path)
            self._con = con = sqlite3.connect(
                "file:" + quote(path) + READ_ONLY, uri=True, isolation_level=None, check_same_thread=False
            )
            meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('version', 'state', 'schema')"))
            if meta.get("version") != str(INDEX_VERSION) or not isinstance(meta.get("state"), str):
                return  # rebuilt by whoever opens it, or never filled
            version = con.execute("PRAGMA schema_version").fetchone()[0]
            found = _fts_rows(con, self.text, self.query, _ranking(), [], self.depth, False)
            if _written(before) != _written(os.stat(path)):
                return  # written while it was read
            self._file, self._seen, self._found = (path, before), (meta["state"], meta.get("schema"), version), found
        except Exception:  # noqa: BLE001 - a guess that failed: the query is ranked as always
            self._found = None

    def join(self) -> None:
        """Wait for the ranking to end (before anything forks)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def rows(self, index: Index, query: str, depth: int) -> list | None:
        """The rows ranked, when they are what ``index`` would rank now for
        ``query`` and ``depth`` (see the class docstring); else None.  Call
        within the read transaction the query's hits are read in."""
        self.join()
        try:
            return self._valid(index, query, depth)
        finally:
            self.close()

    def _valid(self, index: Index, query: str, depth: int) -> list | None:
        found = self._found
        if found is None or (query, depth) != (self.query, self.depth) or self._file is None:
            return None
        path, before = self._file
        if index.path != path or index.readonly or index.stale or index.rebuilt or index.reread or index.removed:
            return None
        try:
            if not os.path.samestat(before, os.stat(path)):
                return None
            meta = dict(index.con.execute("SELECT key, value FROM meta WHERE key IN ('state', 'schema')"))
            version = index.con.execute("PRAGMA schema_version").fetchone()[0]
        except (OSError, sqlite3.Error):
            return None
        return found if (meta.get("state"), meta.get("schema"), version) == self._seen else None

    def close(self) -> None:
        """Close the thread's connection (it holds no lock: any time)."""
        self.join()
        self._found = None
        if self._con is not None:
            self._con.close()
            self._con = None


def _written(info: os.stat_result) -> tuple:
    """What changes when a file is written or replaced: its inode, size and time."""
    return info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns


def _has_frames(wal: str) -> bool:
    """Whether a ``-wal`` file holds anything (absent or empty: no)."""
    try:
        return os.stat(wal).st_size > 0
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def _snapshot(con):
    """One read transaction over the statements within: they see one state
    of the index, whatever another process commits meanwhile (WAL)."""
    began = not con.in_transaction
    if began:
        con.execute("BEGIN")
    try:
        yield
    finally:
        if began and con.in_transaction:
            try:
                con.execute("COMMIT")
            except sqlite3.Error:
                pass  # a read transaction: nothing to keep


def _missing(what: str, doc_id) -> sqlite3.DatabaseError:
    """The error of an index whose tables disagree (read in one snapshot):
    damage, which the command answers by building the index again
    (:func:`index_file.discard_damaged`)."""
    return sqlite3.DatabaseError(f"the index is malformed: note {doc_id} has no row in {what}")


def _named(con, text: str, where: str, params: list) -> set[int]:
    """The ids of the notes (within the filters ``where``, ``params`` of
    :func:`_filters`) one of whose names is ``text``, as :func:`name_fold`
    compares them: from the index file's ``names`` table, which holds each
    note's names folded (:func:`document`), indexed."""
    name = name_fold(text)
    if not name:
        return set()
    sql = f"SELECT docs.id FROM names JOIN docs ON docs.id = names.id WHERE names.name = ?{where}"
    return {doc_id for (doc_id,) in con.execute(sql, [name, *params])}


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
    single = [tokens for tokens in terms if len(tokens) == 1 and not has_cjk(tokens[0])]
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
    if len(found) != len(bm25):
        raise _missing("docs", min(set(bm25) - {row[0] for row in found}))
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
    return re.escape(word) if has_cjk(word) else r"(?<!\w)" + re.escape(word) + r"(?!\w)"


def _hit(index, vault, doc_id, score, bm, rel, terms, snippets, exact=False) -> Hit:
    con = index.con
    row = con.execute("SELECT path, title, type, status, inlinks, body_line FROM docs WHERE id = ?", (doc_id,))
    row = row.fetchone()
    cols = con.execute(f"SELECT {', '.join(COLUMNS)} FROM fts WHERE rowid = ?", (doc_id,)).fetchone()
    if row is None or cols is None:
        raise _missing("docs" if row is None else "fts", doc_id)
    path, title, kind, status, inlinks, body_line = row
    # a term matches a column when each of its words is a word of the column
    # (a CJK term: is in it); searched for, not every word of a long body listed
    wanted = [[re.compile(_word_pattern(w)) for w in (_WORD.findall(t) if not has_cjk(t) else [t])] for t in terms]
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
    cards = vault.card_set(schema)  # asked of the few paths the index names: the cards are never listed
    matches = []
    if wanted is not None:
        from .cards import identity_needle
        from .retirement import retired

        # only the cards whose frontmatter or History may hold it (the index keeps them lower-cased, and
        # their digits); a YAML escape may spell any value
        needle = identity_needle(wanted, kind)
        sql, params = "SELECT path, title, status, props FROM docs", []
        if needle is not None:
            sql += f" WHERE instr({'digits' if needle[0] else 'probe'}, ?) > 0 OR instr(probe, '\\') > 0"
            params.append(needle[1].decode("ascii"))
        rows = index.con.execute(sql + " ORDER BY path", params)
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
