"""Name variants: the forms under which two names may be one person.

An agent writes a name as it heard it: ``Bob`` one day, ``Robert Smith``
the next, ``R. Smith`` in a meeting note, ``Schaefer`` for ``Schäfer``,
``Maria Ivanova`` for ``Мария Иванова``.  Such cards share no email or
phone, so identity dedup never pairs them.  :func:`keys` gives a name's
*name keys*; two cards one of whose keys they share are a probable
duplicate, **suggested, never merged by name alone** (:func:`suggest`).

How a name key is built (folding, transliteration, umlauts, nicknames,
the ``full``, ``initial`` and ``given`` kinds) is :mod:`autograph.read.namekeys`'s:
the index file keeps every note's keys, so a look-up reads only the cards
sharing one.  Here: how strongly two names' keys say one person
(:func:`same_person`), the suggestions and the look-up by variant.
"""

from __future__ import annotations

import itertools
import sqlite3
from dataclasses import dataclass, field

from ..read.namekeys import CYRILLIC, GREEK, NICKNAMES, keys, nicknames_of
from .names import fold

__all__ = [
    "CYRILLIC",
    "GREEK",
    "NICKNAMES",
    "Suggestion",
    "join",
    "keys",
    "matches",
    "nicknames_of",
    "same_person",
    "suggest",
]


def same_person(a: set[tuple[str, str]], b: set[tuple[str, str]]) -> tuple[str, str] | None:
    """``(kind, key)``: the strongest name key two names share, by the rules
    of the module docstring (``full`` with ``full``; ``initial`` with a
    longer name's initial form; ``given`` with a longer name's first word or
    another one-word name); None when they share none."""
    return _same(_by_kind(a), _by_kind(b))


# (a key kind of one name, the kind of the other's it meets, the kind shared), strongest first
_MEETS = (
    ("full", "full", "full"),
    ("initial", "initial-of", "initial"),
    ("initial-of", "initial", "initial"),
    ("initial", "initial", "initial"),
    ("given", "first-of", "given"),
    ("first-of", "given", "given"),
    ("given", "given", "given"),
)


def _by_kind(found: set[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """Name keys ``{(kind, key)}`` as ``{kind: (key, ...)}`` (a name has a
    few keys of each kind: a tuple is smaller than a set, and as quick)."""
    table: dict[str, list[str]] = {}
    for kind, key in found:
        table.setdefault(kind, []).append(key)
    return {kind: tuple(sorted(keys)) for kind, keys in table.items()}


def _same(a: dict[str, tuple[str, ...]], b: dict[str, tuple[str, ...]]) -> tuple[str, str] | None:
    """:func:`same_person` of two names' keys by kind (:func:`_by_kind`)."""
    for mine, theirs, kind in _MEETS:
        x, y = a.get(mine), b.get(theirs)
        if x and y:
            shared = [key for key in x if key in y]
            if shared:
                return kind, min(shared)
    return None


@dataclass
class Suggestion:
    """Cards that are probably one subject by their names: ``cards`` (paths,
    in path order), the ``name_key`` they share (``full:robert smith``),
    ``evidence`` beside the name (``[{"kind": "link" | "field" | "type",
    ...}]``) and ``confidence`` (``high``, ``medium``, ``low``)."""

    cards: list[str]
    name_key: str
    evidence: list[dict] = field(default_factory=list)
    confidence: str = "low"

    def as_dict(self) -> dict:
        return {
            "cards": self.cards,
            "name_key": self.name_key,
            "evidence": self.evidence,
            "confidence": self.confidence,
        }


# the confidence of a shared key by its kind, before evidence
_BASE = {"full": 1, "initial": 0, "given": 0}  # one name alone is never high: evidence makes it so
_LEVELS = ("low", "medium", "high")


def suggest(
    vault, schema, paths: list[str] | None = None, grouped: set[str] = frozenset(), index=None, eligible=None
) -> list[Suggestion]:
    """The pairs of live cards of one type (``type_aliases`` made one)
    that share a name key, with no one-value identity field in conflict
    and not already one identity group, each with its evidence: links to
    the same notes, the same value of a field such as ``company``.  A pair
    whose only shared key is a one-word name (``given``) needs evidence to
    be suggested.  ``paths``: the cards to look at (default: every card);
    ``grouped``: cards already in an identity group (dedup merges those
    first; the merged card is suggested on the next run).  ``index``: a
    :class:`index.NoteIndex` whose summaries give the properties and the
    links (``graph.py health``), so no note is read again, and whose file
    says which cards share a key (its ``variants`` table): only those are
    looked at again.  ``eligible``: the cards already known to read, parse
    and not be retired (a caller's own pass found them), else found here.
    Sorted by confidence, then paths."""
    from .dedup import conflicts_between, identity_settings

    table = nicknames_of(schema)
    settings = identity_settings(schema)
    todo = [path for path in (paths if paths is not None else vault.cards(schema)) if path not in grouped]
    try:
        buckets = _buckets(vault, schema, todo, index, table, eligible)  # a key many cards share is a common name
    except sqlite3.Error:  # the index file could not be read through: every card's keys computed here
        buckets = _buckets(vault, schema, todo, None, table, eligible)
    by_kind = _keys_by_kind(vault, index, sorted({path for members in buckets.values() for path in members}), table)
    meeting = {}  # the pairs whose keys meet (same_person), with the key they share
    for members in buckets.values():
        ordered = sorted(members)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                if (a, b) not in meeting:  # a pair sharing two keys meets in both buckets
                    shared = _same(by_kind[a], by_kind[b])
                    if shared is not None:
                        meeting[a, b] = shared
    del by_kind, buckets
    # only the cards of a meeting pair are read again: their properties and links
    info = {
        path: {"props": note.properties, "links": None, "note": None if index is not None else note, "index": index}
        for path, note in _notes(vault, index, sorted({path for pair in meeting for path in pair}))
    }
    found_pairs = []
    for (a, b), shared in sorted(meeting.items()):
        if a not in info or b not in info:
            continue  # a card that no longer reads (another process wrote it since its keys were found)
        left, right = info[a], info[b]
        if _type_of(schema, a, left) != _type_of(schema, b, right):
            continue
        one, two = _identity(vault, schema, settings, a, left), _identity(vault, schema, settings, b, right)
        if one is not None and two is not None:
            if conflicts_between(one, two):
                continue  # two subjects: never suggested as one
            if any(one.values[k] & two.values.get(k, frozenset()) for k in one.values):
                continue  # one identity: dedup's groups have them already
        evidence = _evidence(vault, left, right, a, b)
        score = _BASE[shared[0]] + min(len(evidence), 2)
        if shared[0] == "given" and not evidence:
            continue
        found_pairs.append(Suggestion([a, b], f"{shared[0]}:{shared[1]}", evidence, _LEVELS[min(score, 2)]))
    return sorted(found_pairs, key=lambda s: (-_LEVELS.index(s.confidence), s.cards))


def _notes(vault, index, paths: list[str]):
    """``(path, note)`` of each of ``paths`` that reads and whose
    frontmatter parses: the index's summary, else the note read."""
    if index is not None:
        for path, note in index.each(paths):
            if note.unreadable is None and note.frontmatter != "invalid":  # as Note.unwritable
                yield path, note
        return
    for path in paths:
        note = vault.note(path, keep=False)
        if note.unwritable is None:
            yield path, note


def _keys_by_kind(vault, index, paths: list[str], table) -> dict[str, dict[str, tuple[str, ...]]]:
    """``{path: name keys by kind}`` (:func:`_by_kind`) of ``paths``: as
    the index file keeps them where it holds the card as it is, else
    computed from its names."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    shared: dict[str, str] = {}
    store = getattr(index, "store", None)
    if store is not None and not store.index.stale:
        con = store.index.con
        for start in range(0, len(paths), 500):  # well under SQLite's bound on parameters
            part = paths[start : start + 500]
            sql = f"SELECT path, vkeys FROM docs WHERE vkeys IS NOT NULL AND path IN ({', '.join('?' * len(part))})"
            try:
                rows = con.execute(sql, part).fetchall()
            except sqlite3.Error:
                break
            for path, text in rows:
                pairs = set()
                for line in text.split("\n"):
                    if line:
                        kind, _, key = line.partition("\t")
                        pairs.add((kind, shared.setdefault(key, key)))  # one string for a key the cards share
                found[path] = _by_kind(pairs)
    todo = [path for path in paths if path not in found]
    for path, note in _notes(vault, index, todo):
        found[path] = _by_kind(_name_keys(path, note.properties, table))
    for path in todo:
        found.setdefault(path, {})
    return found


def _name_keys(path: str, props: dict, table) -> set[tuple[str, str]]:
    """The name keys of a card's names: its file name, ``aliases`` and
    ``title`` (as :func:`namekeys.stored_keys` keeps them)."""
    found: set[tuple[str, str]] = set()
    names = [path.rsplit("/", 1)[-1][:-3]]
    names += [a for a in _list(props.get("aliases")) if isinstance(a, str)]
    if isinstance(props.get("title"), str):
        names.append(props["title"])
    for name in dict.fromkeys(names):  # a title that is the file name is one name
        found |= keys(name, table)
    return found


COMMON = 12  # cards sharing a name key beyond which it is a common name, not evidence


def _buckets(vault, schema, todo: list[str], index, table, eligible) -> dict[str, set[str]]:
    """``{key: cards}``: the cards of ``todo`` that read, parse and are not
    retired (``eligible`` when the caller knows them), by each name key
    (of any kind) that two to :data:`COMMON` of them share.  The index
    file's ``variants`` table names the notes sharing a key, a key at a
    time, so only the cards whose keys it lacks are read for them; without
    a file brought up to date here, every card's keys are computed in one
    pass."""
    from .retirement import retired

    live = vault.card_set(schema)
    shared = _shared_keys(index)
    buckets: dict[str, set[str]] = {}
    if eligible is None:
        eligible = set()
        for path, note in _notes(vault, index, todo):
            if retired(vault, live, path, note.properties):
                continue
            eligible.add(path)
            if shared is None:
                for _kind, key in _name_keys(path, note.properties, table):
                    buckets.setdefault(key, set()).add(path)
    else:
        eligible = set(todo).intersection(eligible)
        if shared is None:
            for path, note in _notes(vault, index, [path for path in todo if path in eligible]):
                for _kind, key in _name_keys(path, note.properties, table):
                    buckets.setdefault(key, set()).add(path)
    if shared is None:
        return {key: paths for key, paths in buckets.items() if 1 < len(paths) <= COMMON}
    con, unknown = shared
    mine: dict[str, set[str]] = {}  # keys of the cards the file holds no keys of, computed
    for path, note in _notes(vault, index, [path for path in todo if path in unknown and path in eligible]):
        for _kind, key in _name_keys(path, note.properties, table):
            mine.setdefault(key, set()).add(path)
    buckets = {key: set(paths) for key, paths in mine.items()}
    seen: set[str] = set()  # keys of ``mine`` the first look-up gave

    def put(key: str, members: set[str]) -> None:
        found = buckets.get(key, set()) | members
        if 1 < len(found) <= COMMON:
            buckets[key] = found
        else:
            buckets.pop(key, None)

    join = "SELECT v.key, d.path FROM variants v JOIN docs d ON d.id = v.id WHERE v.key IN"
    for key, members in _runs(con, eligible, f"{join} (SELECT key FROM variants GROUP BY key HAVING COUNT(*) > 1)"):
        if key in mine:
            seen.add(key)
        put(key, members)
    rest = sorted(set(mine).difference(seen))  # keys one note of the file holds, or none
    for start in range(0, len(rest), 500):  # well under SQLite's bound on parameters
        part = rest[start : start + 500]
        for key, members in _runs(con, eligible, f"{join} ({', '.join('?' * len(part))})", part):
            put(key, members)
    return {key: paths for key, paths in buckets.items() if 1 < len(paths) <= COMMON}


def _runs(con, eligible: set[str], sql: str, params=()):
    """``(key, the eligible notes holding it)`` for each key of ``sql``'s
    ``(key, path)`` rows, a key at a time (ordered by key): a common
    name's notes are never all held at once."""
    last, members = None, set()
    for key, path in con.execute(sql + " ORDER BY v.key", params):
        if key != last:
            if last is not None:
                yield last, members
            last, members = key, set()
        if path in eligible:
            members.add(path)
    if last is not None:
        yield last, members


def _shared_keys(index):
    """``(connection, unknown)``: the index file of a :class:`index.NoteIndex`
    brought up to date by this process (so every row holds its note as it
    is), and the notes whose name keys it does not keep; None without such
    a file, or when it cannot be read."""
    store = getattr(index, "store", None)
    if store is None or store.index.stale:
        return None
    con = store.index.con
    try:
        unknown = {path for (path,) in con.execute("SELECT path FROM docs WHERE vkeys IS NULL")}
    except sqlite3.Error:
        return None
    return con, unknown


def _type_of(schema, path: str, item: dict) -> str | None:
    """The type of the card of ``item`` (``info[path]``), found once."""
    if "type" not in item:
        item["type"] = _type(schema, path, item["props"])
    return item["type"]


def _identity(vault, schema, settings, path: str, item: dict):
    """The identity of the card of ``item`` (:func:`dedup.read_card`), found once."""
    if "identity" not in item:
        from .dedup import read_card

        item["identity"] = read_card(_Card(path, item["props"]), schema, settings)
    return item["identity"]


class _Card:
    """What :func:`dedup.read_card` reads of a note: its path and
    properties (a note or the index's summary of it).  No bytes: the
    identity's hash is never read here."""

    def __init__(self, path: str, properties: dict):
        self.path, self.properties, self.data = path, properties, b""


def _list(value) -> list:
    return value if isinstance(value, list) else [value] if value is not None else []


def _type(schema, path: str, props: dict) -> str | None:
    from .cards import _known_type, card_type

    kind = card_type(schema, path, props)
    return _known_type(schema, kind) or kind


_EVIDENCE_FIELDS = ("company", "organization", "employer", "team", "city", "role")


def _evidence(vault, left: dict, right: dict, a: str, b: str) -> list[dict]:
    """What beside the name says two cards are one subject: links to the
    same notes (not hubs), the same value of :data:`_EVIDENCE_FIELDS`."""
    found = []
    for name in _EVIDENCE_FIELDS:
        x, y = _value(left["props"], name), _value(right["props"], name)
        if x and x == y:
            found.append({"kind": "field", "field": name, "value": x})
    shared = sorted(_links(vault, left, a) & _links(vault, right, b) - {a, b})
    if shared:
        found.append({"kind": "link", "paths": shared[:5]})
    return found


def _value(props: dict, name: str) -> str | None:
    for key, value in props.items():
        if isinstance(key, str) and key.lower() == name and isinstance(value, str) and value.strip():
            text = value.strip()
            if text.startswith("[[") and text.endswith("]]"):
                text = text[2:-2].split("|", 1)[0]
            return fold(text)
    return None


def _links(vault, item: dict, path: str) -> set[str]:
    """The notes the card links to, as the note index reads its links
    (frontmatter values, then the body: :func:`index.note_links`), and
    where the index file says they lead when it holds that."""
    if item["links"] is None:
        from ..read.index import note_links

        note = item["note"] if item["note"] is not None else item["index"].one(path)  # only a pair's cards: asked again
        links = note_links(note) if item["index"] is None else note.links
        places = getattr(note, "targets", None)
        targets = set()
        for number, link in enumerate(links):
            if not link.target:
                continue  # the card itself ([[#heading]])
            if places is not None:
                hit = places[number][0]
            else:
                hit = vault.resolver.resolve(link.target, path).path
            if hit is not None:
                targets.add(hit)
        item["links"] = targets
    return item["links"]


def matches(vault, schema, name: str, exclude: set[str] = frozenset()) -> list[dict]:
    """The cards one of whose names is ``name`` in another spelling (a
    shared name key, :func:`same_person`; a one-word name only with a
    longer one's first word): ``[{path, field, value, name_key}]`` in
    vault order, ``exclude`` (paths) left out.  For ``card.py remember``:
    such a card is asked about, never written by its name alone.  Only
    the cards that share a key with ``name`` are looked at where the index
    file holds them as they are (:func:`_sharing`); the others are read."""
    table = nicknames_of(schema)
    mine = keys(name, table)
    if not mine:
        return []
    found = []
    sharing, fresh = _sharing(vault, {key for _kind, key in mine})
    if fresh:  # the cards sharing a key, and those the index does not hold as they are: not every card
        wanted = [path for path in vault.notes if path in sharing or path not in fresh]
        candidates = [path for path in wanted if vault.is_card(path, schema)]
    else:
        candidates = vault.cards(schema)
    for path in candidates:
        if path in exclude or (path in fresh and path not in sharing):
            continue
        stem = path.rsplit("/", 1)[-1][:-3]
        names = [stem]
        if path in fresh:  # the index holds the card as it is: its aliases, with no read
            names += [a for a in _list(sharing[path].get("aliases")) if isinstance(a, str)]
        else:
            note = vault.note(path, keep=False)
            data = (note.data or b"").lower()
            if b"alias" in data or b"\\" in data:
                names += [a for a in _list(note.properties.get("aliases")) if isinstance(a, str)]
        for other in names:
            shared = same_person(mine, keys(other, table))
            if shared is not None:
                field_name = "name" if other == stem else "aliases"
                found.append({"path": path, "field": field_name, "value": other, "name_key": ":".join(shared)})
                break
    return found


def _sharing(vault, wanted: set[str]) -> tuple[dict[str, dict], set[str]]:
    """``({path: properties}, fresh)``: the notes one of whose stored name
    keys (:func:`namekeys.stored_keys`, of any kind) is in ``wanted``, from
    the index file's ``variants`` table (:func:`index_file.lookup`, through
    its index), and the notes it holds as
    they are now (the others, a note whose keys were not stored and a
    ``card.py batch``'s planned ones, are read); ``({}, set())`` without an
    index file."""
    import json

    from ..write import index_file

    keys = sorted(wanted)
    columns = "SELECT path, props, vkeys FROM docs"
    sql = f"{columns} WHERE vkeys IS NULL UNION {columns} WHERE id IN (SELECT id FROM variants WHERE key IN "
    found = index_file.lookup(vault, sql + f"({', '.join('?' * len(keys))}))", keys)
    if found is None:
        return {}, set()
    rows, fresh = found
    unknown = {path for path, _, vkeys in rows if vkeys is None}  # its keys are not known: read
    sharing = {path: json.loads(props) if props else {} for path, props, vkeys in rows if vkeys is not None}
    return sharing, fresh - unknown


def join(suggestions: list[Suggestion], apart=None) -> list[Suggestion]:
    """``suggestions`` that share a card made one (``Bob``, ``R. Smith`` and
    ``Robert Smith``): one group to review.  ``apart(a, b)``, when given,
    says two cards may never be one (their identities conflict: two
    Alexanders a ``Sasha`` card names both); a suggestion that would join
    such cards stays a group of its own."""
    joined: dict[int, Suggestion] = {}  # in the order made (a number each); a group joined goes to the end
    by_card: dict[str, set[int]] = {}  # card -> the groups holding it

    numbering = itertools.count()

    def add(group: Suggestion) -> None:
        number = next(numbering)
        joined[number] = group
        for card in group.cards:
            by_card.setdefault(card, set()).add(number)

    for item in suggestions:
        numbers = sorted({n for card in item.cards for n in by_card.get(card, ())})
        touching = [joined[n] for n in numbers]
        cards = sorted(set(item.cards).union(*(j.cards for j in touching)))
        if apart is not None and any(apart(a, b) for i, a in enumerate(cards) for b in cards[i + 1 :]):
            add(item)
            continue
        keys = " + ".join(dict.fromkeys([*(j.name_key for j in touching), item.name_key]))
        evidence = [e for j in touching for e in j.evidence] + item.evidence
        levels = ("low", "medium", "high")
        level = min([item.confidence, *(j.confidence for j in touching)], key=levels.index)
        for n in numbers:
            for card in joined.pop(n).cards:
                by_card[card].discard(n)
        add(Suggestion(cards, keys, evidence, level))
    return list(joined.values())
