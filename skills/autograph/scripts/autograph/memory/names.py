"""The names of a card: its title (the file name) and its ``aliases``.

An agent names a subject as it heard it: ``José García`` one day, ``jose
garcia`` the next.  :func:`fold` is the one comparison of names (letter
case, accents and Unicode form folded, white space collapsed), used by
``card.py remember``'s lookup and by every card command that takes a card
by name (:func:`cards.named_card`).  :func:`name_matches` is the one
whole-vault lookup by name (keep it one function: a later index answers
it), and :func:`suggested_title` the title that tells two subjects of one
name apart.
"""

from __future__ import annotations

import re
import unicodedata

from ..read.folding import MARKS
from ..read.folding import fold_name as fold
from ..read.folding import without_format as _without_format
from .errors import BadRequest

__all__ = [
    "DISTINGUISHING",
    "FORBIDDEN",
    "MARKS",
    "MAX_NAME_BYTES",
    "file_name",
    "fold",
    "link_form",
    "name_matches",
    "named_cards",
    "named_rows",
    "suggested_title",
]

# Characters Obsidian refuses in a note's name.
FORBIDDEN = '[]#^|\\/:*?"<>'
MAX_NAME_BYTES = 200  # file systems allow 255; room for " 2", ".md" and a sync tool's suffix

# Fields whose value tells two people or things of one name apart, in the
# order a person would use them: "Maria Garcia (Hooli)".
DISTINGUISHING = ("company", "organization", "organisation", "org", "employer", "team", "city", "location", "place")


# Names Windows reserves for devices, with any extension ("CON", "nul.md",
# "Com1.report"): a vault synced to Windows cannot hold such a file
# (learn.microsoft.com/windows/win32/fileio/naming-a-file).
WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL", *(f"COM{n}" for n in range(1, 10)), *(f"LPT{n}" for n in range(1, 10))]
)


def file_name(title: str) -> str:
    """The file name (without ``.md``) of a card titled ``title``: NFC, the
    characters Obsidian forbids (:data:`FORBIDDEN`) and control characters
    replaced by a space, format characters (zero-width, bidi) dropped, runs
    of white space made one space, dots and spaces trimmed at the ends (a
    leading dot would hide the note; Windows drops trailing ones), a name
    Windows reserves (:data:`WINDOWS_RESERVED`, before its first dot, any
    case) given a ``_`` (``CON`` is ``CON_``), cut to
    :data:`MAX_NAME_BYTES` bytes of UTF-8.  Raises :class:`BadRequest` when
    nothing is left."""
    text = _without_format(unicodedata.normalize("NFC", title))
    text = "".join(" " if ch in FORBIDDEN or ord(ch) < 32 or ch == "\x7f" else ch for ch in text)
    text = " ".join(text.split()).strip(". ")
    while len(text.encode("utf-8")) > MAX_NAME_BYTES:
        text = text[:-1].rstrip(". ")
    if not text:
        raise BadRequest(f"{title!r} leaves no file name; give a title with letters or digits")
    stem, dot, rest = text.partition(".")
    if stem.rstrip(" ").upper() in WINDOWS_RESERVED:
        text = stem.rstrip(" ") + "_" + dot + rest
    return text


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def _unqualified(name: str) -> str:
    """``Maria Garcia (Hooli)`` without its `` (Hooli)``: the name a title
    that tells two subjects apart (:func:`suggested_title`) is made from."""
    match = _QUALIFIED.fullmatch(name.strip())
    return match.group(1) if match else name


_QUALIFIED = re.compile(r"(.+?)\s+\([^()]+\)(?:\s+\d+)?")


def name_matches(vault, schema, names: list[str], exclude: str | None = None, qualified: bool = False) -> list[dict]:
    """The cards one of whose names (file name, ``title`` property, then
    ``aliases``) equals one of ``names`` by :func:`fold`: ``[{path, by:
    "title" | "alias", field, value}]`` (``field`` ``name`` for the file
    name, ``title`` or ``aliases`` for a property, ``value`` as the card
    writes it), one entry per card, in vault order.  ``qualified``: a name
    with a qualifier in brackets matches too (``Maria Garcia (Hooli)`` for
    ``Maria Garcia``): ``card.py remember`` asks which Maria a fact that
    names only "Maria Garcia" is about.
    Cards whose bytes cannot hold an alias are not parsed."""
    from ..read.identity import values_of

    wanted = {fold(n) for n in names if n and n.strip()}
    if not wanted:
        return []
    found = []
    rows = named_rows(vault, schema, wanted, qualified)
    for path in named_cards(vault, schema, rows):
        if path == exclude:
            continue
        stem = _stem(path)
        if fold(stem) in wanted or (qualified and fold(_unqualified(stem)) in wanted):
            found.append({"path": path, "by": "title", "field": "name", "value": stem})
            continue
        props = rows.get(path) if rows is not None else None
        if props is None:  # not in the index, or its properties are not known there: the note decides
            note = vault.note(path, keep=False)
            data = (note.data or b"").lower()
            if b"alias" not in data and b"title" not in data and b"\\" not in data:
                continue  # cheap: no aliases or title key (a YAML escape may spell one, so a backslash reads on)
            props = note.properties
        title = props.get("title")
        if isinstance(title, str) and (
            fold(title) in wanted or (qualified and fold(_unqualified(title)) in wanted)
        ):  # a title property, as search reads one
            found.append({"path": path, "by": "title", "field": "title", "value": title})
            continue
        for alias in values_of(props, "aliases"):
            if isinstance(alias, str) and (
                fold(alias) in wanted or (qualified and fold(_unqualified(alias)) in wanted)
            ):
                found.append({"path": path, "by": "alias", "field": "aliases", "value": alias})
                break
    return found


def named_cards(vault, schema, rows: dict | None) -> list[str]:
    """The cards a look-up by name reads, in vault order: those of
    :func:`named_rows`' ``rows`` (a few, not a pass over every card), or
    every card without an index file (``rows`` None)."""
    if rows is None:
        return vault.cards(schema)
    return [path for path in sorted(rows) if vault.is_card(path, schema)]


def named_rows(vault, schema, wanted: set[str], qualified: bool) -> dict | None:
    """The notes one of the folded names ``wanted`` may name, as ``{path:
    properties}`` (None: read the note), from the index file
    (:func:`index_file.lookup`, whose ``names`` table holds each note's
    names folded, indexed: file name, ``title``, ``aliases``), and every
    note it does not hold as it is
    now (changed since, or planned in this run and not written yet); None
    without an index file (every card is then read)."""
    import json

    from ..write import index_file

    names = sorted(wanted)
    terms, params = [f"name IN ({', '.join('?' * len(names))})"], list(names)
    if qualified:  # "maria garcia (hooli)" for "maria garcia": a range of the index
        for name in names:
            terms.append("(name >= ? AND name < ?)")
            params += [name + " (", name + " (\U0010ffff"]
    columns = "SELECT path, props, unreadable FROM docs"
    sql = f"{columns} WHERE unreadable IS NOT NULL UNION {columns} WHERE id IN (SELECT id FROM names WHERE "
    found = index_file.lookup(vault, sql + " OR ".join(terms) + ")", params)
    if found is None:
        return None
    rows, fresh = found
    named = {path: (json.loads(props) if props else {}) if why is None else None for path, props, why in rows}
    named = {path: props for path, props in named.items() if path in fresh}
    named.update(dict.fromkeys(path for path in vault.notes if path not in fresh))
    return named


def link_form(vault, source: str, target: str) -> str:
    """The shortest link text that resolves, from note ``source``, to
    ``target`` and to nothing else: the note's name, else the shortest
    trailing part of its path that is not ambiguous, else its whole path
    (``.md`` left off; other files keep their extension)."""
    name = target[:-3] if target.endswith(".md") else target
    parts = name.split("/")
    for k in range(len(parts) - 1, -1, -1):
        candidate = "/".join(parts[k:])
        hit = vault.resolver.resolve(candidate, source)
        if hit.path == target and (not hit.ambiguous or k == 0):
            return candidate
    return name


def _shown(value) -> str | None:
    """A short one-line text of a property value: a link's name, else the
    text; None for lists, long or empty values."""
    if isinstance(value, list):
        value = value[0] if len(value) == 1 else None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    text = str(value).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[-1].split("#", 1)[0].strip()
    text = " ".join(text.split())
    return text if text and len(text) <= 40 else None


def suggested_title(vault, schema, kind: str | None, title: str, values: dict, others: list[dict]) -> str:
    """A title for the subject ``title`` (of type ``kind``, with
    ``values``, its ``{field: value}``) that tells it apart from the cards
    of ``others`` (each one's properties) and that no note of the vault
    bears: the title with the first :data:`DISTINGUISHING` value it has and
    none of them shares (``Maria Garcia (Hooli)``), else the domain of its
    email, else its type, then a number if still taken (``Maria Garcia
    (person) 2``)."""
    folded = {fold(str(k)): v for k, v in values.items()}
    theirs = [{fold(str(k)): v for k, v in props.items()} for props in others]
    marks = []
    for name in DISTINGUISHING:
        mine = _shown(folded.get(name))
        if mine and all(fold(_shown(t.get(name)) or "") != fold(mine) for t in theirs):
            marks.append(mine)
    email = _shown(folded.get("email"))
    if email and "@" in email:
        marks.append(email.rsplit("@", 1)[1])
    if kind:
        marks.append(kind)
    taken = {fold(_stem(p)) for p in vault.notes}
    options = [f"{title} ({mark})" for mark in marks] or [f"{title} 2"]
    for option in options:
        if fold(file_name(option)) not in taken and not name_matches(vault, schema, [option]):
            return option
    base = options[-1]
    for number in range(2, 1000):
        option = f"{base} {number}"
        if fold(file_name(option)) not in taken:
            return option
    return f"{base} {len(vault.notes) + 1}"
