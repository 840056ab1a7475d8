"""Daily notes: which notes are daily, what in them could become a card, and
which of them were processed already.

Which notes are daily (:func:`daily_notes`), among the vault's cards
(templates and ``ignore_folders`` are never daily notes):

1. a note whose ``type`` is ``daily`` (or a ``type_aliases`` spelling of it);
2. a note in a folder the schema gives the ``daily`` type (its
   ``node_types.daily.folder``, or ``path_type_hints``);
3. a note that Obsidian's Daily notes plugin would have made: in the folder
   of ``.obsidian/daily-notes.json`` (``folder``; the vault's root when the
   file or key is missing) with a path, below that folder and without
   ``.md``, that the plugin's date ``format`` reads (moment.js tokens:
   ``YYYY``, ``YY``, ``MM``, ``M``, ``MMM``, ``MMMM``, ``DD``, ``D``,
   ``Do``, ``DDD``/``DDDD`` day of the year, ``ddd``/``dddd`` weekday names,
   ``[literal]``; default ``YYYY-MM-DD``).

A daily note's date is read from its path by that format, else from a
``YYYY-MM-DD`` in its file name, else from its ``date`` (or ``created``)
property; a note of rule 1 or 2 without any date is reported, not used.

What is extracted (:func:`extract`), from the body only and never inside
code, comments or math: bold names (``**Ada Lovelace**``, ``__Acme__``),
links to notes that do not exist (the resolver finds nothing), emails,
``@handles``, phone numbers (normalised by :mod:`identity`), ISO dates and
open tasks (``- [ ] ...``).

Links to cards (:func:`linked`): each body link (outside code, comments
and math) that resolves to a card, with its line and the other cards linked
on that line: the relationships the note records.

Processed notes (:func:`fingerprint`, :func:`plan_mark`): ``daily.py mark``
sets :data:`KEY` to ``sha256:<hex>`` of what a person wrote in the note and
extract reads (:func:`reading`): the body, with each link's target left out.
autograph's own edits change nothing of that, so they never make a marked
note new again: the frontmatter (enforce's fixes, decay's fields, the mark
itself) is not in it, and a link rewrite (``graph.py fix`` and ``mv``,
dedup's retargeting, ``enforce.py --move``) changes only link targets, or
gives an alias-less wikilink its old text as alias.  A note whose stored
value equals its fingerprint (or the fingerprint of the first form,
:func:`legacy_fingerprint`, so marks written before stay valid) is
``processed``; one whose value differs was edited by hand since
(``changed``) and is extracted again; one without it is ``new``.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass, field

from ..read import frontmatter, jsonfile
from ..read.identity import normalise
from ..read.links import scan
from ..read.regions import code_regions
from ..write.changes import Edit

__all__ = [
    "daily_notes",
    "date_of",
    "DailyNote",
    "extract",
    "fingerprint",
    "KEY",
    "KINDS",
    "legacy_fingerprint",
    "linked",
    "LinkedCards",
    "MAINTAINED",
    "moment_pattern",
    "plan_mark",
    "reading",
    "Settings",
    "settings",
    "state",
]

KEY = "autograph_processed"
MAINTAINED = ("tier", "relevance", "last_accessed", "access_count")

# Bold text that reads as a label or emphasis, not as a name.
STOP_WORDS = frozenset(
    """note notes todo to-do important warning update updates summary decision decisions done next action
    actions agenda question questions idea ideas tip info fyi tbd wip attendees participants follow-up
    followup yes no ok new open closed urgent reminder status result results goal goals plan problem
    issue issues""".split()
)
PARTICLES = frozenset("van von der den de del della da di du la le el al bin ibn y e of and the & mc".split())


@dataclass(frozen=True)
class Settings:
    """Where daily notes live: ``folder`` and ``format`` of Obsidian's Daily
    notes plugin (``source`` ``obsidian`` when read from
    ``.obsidian/daily-notes.json``, else ``default``), and the schema's
    daily type folder (``schema_folder``, None when the schema has none)."""

    folder: str
    format: str
    source: str
    schema_folder: str | None


def settings(vault, schema) -> Settings:
    """The :class:`Settings` of ``vault`` (unreadable or odd settings give
    Obsidian's defaults: the vault's root and ``YYYY-MM-DD``)."""
    folder, form, source = "", "YYYY-MM-DD", "default"
    try:
        data = json.loads(jsonfile.read_bytes(os.path.join(vault.root, ".obsidian", "daily-notes.json"), 1 << 20))
    except (OSError, ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        source = "obsidian"
        value = data.get("folder")
        if isinstance(value, str) and ".." not in value.split("/"):
            folder = value.strip().strip("/")
        value = data.get("format")
        if isinstance(value, str) and value.strip():
            form = value.strip()
    kinds = {"daily"} | {alias for alias, kind in schema.type_aliases.items() if kind == "daily"}
    schema_folder = next((schema.folder_of(kind) for kind in sorted(kinds) if schema.folder_of(kind)), None)
    return Settings(folder, form, source, schema_folder)


_MONTHS = [m.lower() for m in calendar.month_name[1:]]
_MONTHS_ABBR = [m.lower() for m in calendar.month_abbr[1:]]
_DAYS = "|".join(calendar.day_name[:]) + "|" + "|".join(calendar.day_abbr[:])
_TOKENS = re.compile(r"\[[^\]]*\]|YYYY|YY|MMMM|MMM|MM|M|DDDD|DDD|Do|DD|D|dddd|ddd|gggg|GGGG|ww|WW|w|W|.", re.S)


@functools.lru_cache(maxsize=16)  # compiled once per format, not once per note
def moment_pattern(form: str) -> re.Pattern:
    """A regular expression (full match, case-insensitive) for paths the
    moment.js date format ``form`` writes; groups ``y``, ``m``, ``d``,
    ``doy`` (day of the year), ``mon`` (month name)."""
    parts = []
    used: set[str] = set()

    def group(name: str, body: str) -> str:
        if name in used:  # the same field twice: the second is matched, not captured
            return f"(?:{body})"
        used.add(name)
        return f"(?P<{name}>{body})"

    for token in _TOKENS.findall(form):
        if token.startswith("["):
            parts.append(re.escape(token[1:-1]))
        elif token == "YYYY" or token in ("gggg", "GGGG"):
            parts.append(group("y", r"\d{4}"))
        elif token == "YY":
            parts.append(group("yy", r"\d{2}"))
        elif token == "MMMM":
            parts.append(group("mon", "|".join(_MONTHS)))
        elif token == "MMM":
            parts.append(group("mon", "|".join(_MONTHS_ABBR)))
        elif token == "MM":
            parts.append(group("m", r"\d{2}"))
        elif token == "M":
            parts.append(group("m", r"\d{1,2}"))
        elif token in ("DDDD", "DDD"):
            parts.append(group("doy", r"\d{3}" if token == "DDDD" else r"\d{1,3}"))
        elif token == "DD":
            parts.append(group("d", r"\d{2}"))
        elif token == "D":
            parts.append(group("d", r"\d{1,2}"))
        elif token == "Do":
            parts.append(group("d", r"\d{1,2}") + "(?:st|nd|rd|th)")
        elif token in ("dddd", "ddd"):
            parts.append(f"(?:{_DAYS})")
        elif token in ("ww", "WW", "w", "W"):
            parts.append(r"\d{1,2}")
        else:
            parts.append(re.escape(token))
    return re.compile("".join(parts), re.I)


def _date_of(match: re.Match) -> str | None:
    found = match.groupdict()
    try:
        year = int(found["y"]) if found.get("y") else 2000 + int(found["yy"]) if found.get("yy") else None
        if year is None:
            return None
        if found.get("doy"):
            day = dt.date(year, 1, 1) + dt.timedelta(days=int(found["doy"]) - 1)
            return day.isoformat() if day.year == year else None
        if found.get("mon"):
            name = found["mon"].lower()
            month = (_MONTHS.index(name) if name in _MONTHS else _MONTHS_ABBR.index(name)) + 1
        else:
            month = int(found["m"]) if found.get("m") else None
        if month is None or not found.get("d"):
            return None
        return dt.date(year, month, int(found["d"])).isoformat()
    except (ValueError, OverflowError):
        return None


_ISO = re.compile(r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])")


def _iso(text) -> str | None:
    """The first valid ``YYYY-MM-DD`` date in ``text`` (a string), else None."""
    if not isinstance(text, str):
        return None
    for match in _ISO.finditer(text):
        try:
            return dt.date(*(int(g) for g in match.groups())).isoformat()
        except ValueError:
            continue
    return None


@dataclass
class DailyNote:
    """A daily note: its ``path``, ``date`` (``YYYY-MM-DD``) and why it is
    one (``by``: ``type``, ``schema folder`` or ``daily notes``)."""

    path: str
    date: str
    by: str


def daily_notes(vault, schema, config: Settings | None = None) -> tuple[list[DailyNote], list[dict]]:
    """The daily notes of ``vault`` in path order, and ``[{path, reason}]``
    of notes that look daily but cannot be used (no date, unreadable)."""
    config = config or settings(vault, schema)
    found: list[DailyNote] = []
    skipped: list[dict] = []
    for path in vault.cards(schema):
        by, date = _daily(vault, schema, config, path)
        if by is None:
            continue
        if date is None:
            skipped.append({"path": path, "reason": "a daily note without a date (in its name or its date property)"})
            continue
        found.append(DailyNote(path, date, by))
    return found, skipped


def date_of(vault, schema, path: str, config: Settings | None = None) -> str | None:
    """The ISO day the note at ``path`` speaks of: a daily note's date (as
    :func:`daily_notes` reads it), else the note's ``created`` (a calendar
    day; None when it has none).  ``card.py --source`` takes it as the day
    of the facts the note gives (the recency rule's evidence)."""
    from ..read.dates import NotADate, local_date, parse_when

    by, date = _daily(vault, schema, config or settings(vault, schema), path)
    if by is not None and date is not None:
        return date
    try:
        when = parse_when(vault.note(path).properties.get("created"))
    except NotADate:
        return None
    return local_date(when, None).isoformat() if when is not None else None


def _daily(vault, schema, config: Settings, path: str) -> tuple[str | None, str | None]:
    """``(by, date)``: why the card at ``path`` is a daily note (None: it is
    not one) and its date (None: none found)."""
    kinds = {"daily"} | {alias.lower() for alias, kind in schema.type_aliases.items() if kind == "daily"}
    prefix = config.folder + "/" if config.folder else ""
    by = date = None
    stem_path = path[:-3]
    if stem_path.startswith(prefix):
        match = moment_pattern(config.format).fullmatch(stem_path[len(prefix) :])
        date = _date_of(match) if match else None
        if date:
            by = "daily notes"
    if by is None and (schema.infer_type(path) or "").lower() in kinds:
        by = "schema folder"
    note = None
    if by is None:
        note = vault.note(path, keep=False)
        # only a note that spells a daily type somewhere has its frontmatter parsed
        if note.text is not None and any(kind in note.text.lower() for kind in kinds):
            kind = note.properties.get("type")
            if isinstance(kind, str) and kind.strip().lower() in kinds:
                by = "type"
    if by is None:
        return None, None
    if date is None:
        date = _iso(path.rsplit("/", 1)[-1])
    if date is None:
        props = (note or vault.note(path, keep=False)).properties
        date = _iso(props.get("date")) or _iso(props.get("created"))
    return by, date


# ---------------------------------------------------------------------------
# Processed or not


def _canonical(text: str) -> str:
    # the key is set before it is taken away, so a note without frontmatter
    # hashes the same before the mark (which adds a block) and after it
    text = frontmatter.set_property(text, KEY, "x")
    for key in (KEY, *MAINTAINED):
        text = frontmatter.delete_property(text, key)
    return text


def legacy_fingerprint(note) -> str | None:
    """The first form of the mark: ``sha256:<hex>`` of the note's whole text
    without :data:`KEY` and the :data:`MAINTAINED` fields; None when the
    note cannot be read or its frontmatter cannot take the key.  Still
    accepted, so notes marked before :func:`fingerprint` changed stay
    processed; never written any more."""
    if note.text is None:
        return None
    try:
        text = _canonical(note.text)
    except (frontmatter.FrontmatterError, ValueError):
        return None
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# The version of :func:`reading`, hashed with it: a later form of the reading
# gives other hashes, never one that an earlier form gave to other text.
_READING = "autograph daily reading 2\n"


def _link_token(link) -> str:
    """What :func:`reading` keeps of a link: its kind, ``!``, ``#fragment``
    and a Markdown link's label; never its target, nor a wikilink's alias
    (a rewrite may add one: dedup's ``[[A]]`` -> ``[[B|A]]``)."""
    bang = "!" if link.embed else ""
    fragment = "#" + link.fragment if link.fragment else ""
    if link.kind == "markdown":
        return f"{bang}[{link.alias or ''}]({fragment})"
    return f"{bang}[[{fragment}]]"


def reading(note) -> str | None:
    """What :func:`fingerprint` hashes: the note's body (the frontmatter is
    autograph's to maintain, and extract never reads it) with each link
    outside code, comments and math reduced to :func:`_link_token`, and
    CRLF line ends read as LF.  None when the note cannot be read or its
    frontmatter cannot take :data:`KEY` (then it is never marked)."""
    if note.text is None:
        return None
    try:
        frontmatter.set_property(note.text, KEY, "x")  # as mark will: a block it cannot edit is never marked
    except (frontmatter.FrontmatterError, ValueError):
        return None
    body = note.body
    pieces, at = [], 0
    for link in scan(body):
        pieces.append(body[at : link.start])
        pieces.append(_link_token(link))
        at = link.end
    pieces.append(body[at:])
    return "".join(pieces).replace("\r\n", "\n")


def fingerprint(note) -> str | None:
    """``sha256:<hex>`` of :func:`reading` (the body, each link's target left
    out), or None when the note cannot be read or its frontmatter does not
    parse.  The same for a note before and after autograph's own edits: a
    link retargeted or repaired (``graph.py fix``, ``mv``, dedup), a
    frontmatter fix (enforce), decay's fields, the mark."""
    text = reading(note)
    if text is None:
        return None
    return "sha256:" + hashlib.sha256((_READING + text).encode("utf-8")).hexdigest()


def _is_mark(note, stored, mark: str | None = None) -> bool:
    """Whether ``stored`` (a mark or an expected hash) is the note's
    fingerprint now, in this form or the first (:func:`legacy_fingerprint`)."""
    if not isinstance(stored, str):
        return False
    mark = mark if mark is not None else fingerprint(note)
    return stored == mark or stored == legacy_fingerprint(note)


def state(note) -> str:
    """``processed`` (marked, unchanged since but for autograph's own
    edits), ``changed`` (marked, then edited), ``new`` (never marked) or
    ``unreadable``."""
    mark = fingerprint(note)
    if mark is None:
        return "unreadable"
    stored = note.properties.get(KEY)
    if stored is None:
        return "new"
    return "processed" if _is_mark(note, stored, mark) else "changed"


def plan_mark(vault, notes: list[DailyNote], expect: str | None = None) -> tuple[list, list[dict]]:
    """The :class:`Edit` of each daily note in ``notes`` that is not
    marked processed yet, and ``[{path, reason}]`` of notes left alone.
    ``expect``: mark a note only when its fingerprint is still this one (the
    ``hash`` the extract reported, in either form), so a note edited since is
    not marked.  A note marked in the first form stays as it is."""
    edits, left = [], []
    for item in notes:
        note = vault.note(item.path)
        mark = fingerprint(note)
        if mark is None:
            left.append({"path": item.path, "reason": note.error or "the frontmatter does not parse; not marked"})
            continue
        if _is_mark(note, note.properties.get(KEY), mark):
            left.append({"path": item.path, "reason": "already marked processed"})
            continue
        if expect is not None and not _is_mark(note, expect, mark):
            left.append({"path": item.path, "reason": "changed since it was extracted (its hash differs); not marked"})
            continue
        try:
            after = note.with_property(KEY, mark)
        except (frontmatter.FrontmatterError, ValueError) as exc:
            left.append({"path": item.path, "reason": f"cannot set {KEY}: {exc}"})
            continue
        edits.append(Edit(item.path, note.data, after, f"{KEY}: marked processed"))
    return edits, left


# ---------------------------------------------------------------------------
# Extraction

_BOLD = re.compile(r"(\*\*|__)(?=[^\s*_])(.+?)(?<=[^\s*_])\1")
_NAME_WORD = re.compile(r"[^\W\d_][\w'’.-]*\Z")
_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+"
)
_HANDLE = re.compile(r"(?<![\w@./:+-])@([A-Za-z_][A-Za-z0-9_.]{1,38}[A-Za-z0-9_]|[A-Za-z_][A-Za-z0-9_])(?![\w@])")
# A phone number as people write it: "+49-30-123-4567", "(0033 1 23 45 67 89",
# "(415) 555-0101", "tel:+49..." (not after "14:" of a time: "14:30 ...")
_PHONE = re.compile(r"(?<![\w+/.-])(?<!\d:)\(?(?:\+|00)?\(?[0-9][0-9 ()./-]{5,}[0-9](?![\w/-])")
# Dates, times and ISO weeks are blanked before phones are looked for, so a
# number next to one is still found and no phone is made of one.  A date
# stands alone (its separator twice the same, no digit or separator around
# it: the "30-12-34" of "+49-30-12-34-56" is no date); _is_date checks it.
_DATE_LIKE = re.compile(
    r"(?<![\d+./-])(?:(?P<y>\d{4})(?P<s1>[-./])(?P<m>\d{1,2})(?P=s1)(?P<d>\d{1,2})"
    r"|(?P<a>\d{1,2})(?P<s2>[-./])(?P<b>\d{1,2})(?P=s2)(?:\d{4}|\d{2}))(?!\d|[-./]\d)"
    r"|(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?:\s*[-\u2013]\s*\d{1,2}:\d{2}(?::\d{2})?)?(?![\d:])"
    r"|(?<![\w-])(?:\d{4}-?)?W\d{1,2}(?:-?[1-7])?(?!\w)"
)
_CURRENCY = (
    r"[$\u20ac\u00a3\u00a5\u20b9\u20bd]|\b(?:EUR|USD|GBP|CHF|JPY|CNY|RUB|CAD|AUD|SEK|NOK|DKK|PLN|CZK|HUF|INR|BRL"
    r"|(?i:euros?|dollars?|pounds?|francs?|(?:r|ro)ubles?|yen|mio|mrd|million(?:s|en)?|billion(?:s|en)?|tsd))\b"
    r"|(?i:руб(?:л[ьяей]+)?|тыс|млн|млрд)\.?"
)
# Numbers shaped as something else, whatever surrounds them: a count in
# thousands ("1 250 000", "3.500.000": groups of three after the first, no
# leading 0, +, 00 or parenthesis), a range of years ("2025-2026"), an ISBN
# (978/979 and 13 digits), a version ("1.2.3.4567": a one-digit group between
# dots), a ZIP+4 code ("94107-1234").  A national number starts with its
# trunk 0 and is none of these.
_NOT_A_PHONE = re.compile(
    r"[1-9][0-9]{0,2}(?:([ .,'\u00a0])[0-9]{3})(?:\1[0-9]{3})+"
    r"|(?:19|20)[0-9]{2}\s*[-\u2013/]\s*(?:19|20)[0-9]{2}"
    r"|97[89][- ]?(?:[0-9][- ]?){9}[0-9X]"
    r"|[0-9]+(?:\.[0-9]+)*\.[0-9]\.[0-9]+(?:\.[0-9]+)*"
    r"|[1-9][0-9]{4}-[0-9]{4}"  # not 0: "04321-1234" is a German area code and number
)
# An amount: a currency (or "Mio") before the number, or after it and its cents
# (_AMOUNT_AFTER is matched where the number ends)
_AMOUNT_BEFORE = re.compile(rf"(?:{_CURRENCY})\.?\s*\Z")
_AMOUNT_AFTER = re.compile(rf"(?:[.,][0-9]{{1,2}}(?![0-9]))?\s*(?:{_CURRENCY})")
# An order, invoice or ticket number: a word that says so right before it
# ("order 123 456 789", "invoice no. 2026/0001234", "Rechnung 123-456-789");
# not "id", "account" or "case": "caller ID +49 ...", "Signal account +49 ..."
_ID_BEFORE = re.compile(
    r"\b(?:orders?|invoices?|tickets?|receipts?|bookings?|reservations?|tracking|shipments?|parcels?|contracts?"
    r"|customers?|ref|references?|transactions?|txn|serial|sku|iban"
    r"|bestell\w*|rechnung\w*|auftrag\w*|kunden\w*|vertrag\w*|vorgang\w*|aktenzeichen"
    r"|sendung\w*|lieferschein\w*|beleg\w*|referenz\w*|commande|facture)"
    r"[\s:#.-]*(?:(?:no|nr|num|number|nummer|id)\b\.?[\s:#.-]*|n\u00b0\s*)?#?\s*\Z",
    re.I,
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s<>)\]]+", re.I)
_TASK = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:[-*+]|[0-9]{1,9}[.)])[ \t]+\[ \][ \t]+(\S.*?)[ \t]*$", re.M)
_FILE_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}\Z")


def _masked(body: str) -> str:
    """``body`` with code, comments, math and URLs blanked (line breaks
    kept), so offsets and lines stay those of the body."""
    chars = list(body)
    for start, end in code_regions(body):
        for i in range(start, end):
            if chars[i] not in "\r\n":
                chars[i] = " "
    text = "".join(chars)
    return _URL.sub(lambda m: " " * len(m.group()), text)


def _is_date(match: re.Match) -> bool:
    """Whether a :data:`_DATE_LIKE` match is one: a time or week, or a date
    whose month and day can be read (day first or month first)."""
    if match.group("y"):
        return 1 <= int(match.group("m")) <= 12 and 1 <= int(match.group("d")) <= 31
    if match.group("a"):
        a, b = int(match.group("a")), int(match.group("b"))
        return 1 <= min(a, b) <= 12 and 1 <= max(a, b) <= 31
    return True


def _without_dates(text: str) -> str:
    """``text`` with its dates, times and ISO weeks overwritten by ``x``
    (a letter: no phone number reaches into or across one; offsets kept)."""
    return _DATE_LIKE.sub(lambda m: "x" * len(m.group()) if _is_date(m) else m.group(), text)


def _is_name(text: str, stop: frozenset) -> bool:
    words = text.split()
    if not 1 <= len(words) <= 5 or len(text) > 60 or text.lower() in stop:
        return False
    if not words[0][0].isupper():
        return False
    for n, word in enumerate(words):
        if n and word.lower() in PARTICLES:
            continue  # "Ada van Dijk", "Smith & Wesson"
        if not _NAME_WORD.match(word) or not word[0].isupper():
            return False
    return words[-1].lower() not in PARTICLES


@dataclass
class _Found:
    items: dict = field(default_factory=dict)

    def add(self, kind: str, key: str, entry: dict) -> None:
        bucket = self.items.setdefault(kind, {})
        if key in bucket:
            bucket[key]["count"] += 1
        else:
            bucket[key] = {**entry, "count": 1}


KINDS = ("names", "missing_links", "emails", "handles", "phones", "dates", "tasks")


def extract(note, resolver, schema, own_date: str | None = None) -> dict:
    """Candidates for cards in daily note ``note``: ``{kind: [item]}`` for
    each of :data:`KINDS`, items in the order they first appear, one per
    value (``count`` says how often it appears).  Every item has ``value``,
    ``line`` (1-based, in the file) and ``context`` (its line, trimmed, at
    most 200 characters); names and missing links have ``note`` (the path
    the name resolves to, or None), emails, handles and phones
    ``normalised`` (:func:`identity.normalise`).  ``own_date``, the daily
    note's own date, is not listed among its dates."""
    from ..read.secrets import mask

    # a secret in the note is never listed, written to .graph/daily/ or handed to an agent: the body is
    # read with each one hidden (as [redacted], line for line, so line numbers stay right)
    text = note.text or ""
    offset = note.body_offset
    body = mask(text[offset:])
    text = text[:offset] + body
    first_line = note.body_line
    masked = _masked(body)
    lines = body.split("\n")
    country = schema.section("identity").get("default_country")
    stop = STOP_WORDS | {
        str(w).lower() for w in schema.section("entity_extraction").get("noise_words", []) if isinstance(w, str)
    }
    found = _Found()

    def where(start: int) -> tuple[int, str]:
        index = body.count("\n", 0, start)
        return first_line + index, lines[index].strip()[:200]

    for match in _BOLD.finditer(masked):
        name = " ".join(match.group(2).split())
        if "[[" in name or not _is_name(name, stop):
            continue
        line, context = where(match.start())
        hit = resolver.resolve(name, note.path).path
        found.add("names", name.casefold(), {"value": name, "line": line, "context": context, "note": hit})
    for link in scan(text, offset, first_line):
        target = link.target
        if not target or _FILE_EXTENSION.search(target) and not target.lower().endswith(".md"):
            continue
        if resolver.resolve(target, note.path).path is not None:
            continue
        index = link.line - first_line
        context = lines[index].strip()[:200] if 0 <= index < len(lines) else ""
        found.add(
            "missing_links", target.casefold(), {"value": target, "line": link.line, "context": context, "note": None}
        )
    emails_at: list[tuple[int, int]] = []
    for match in _EMAIL.finditer(masked):
        value = match.group().rstrip(".")
        emails_at.append((match.start(), match.end()))
        line, context = where(match.start())
        key = normalise(value, "email") or value
        found.add("emails", key, {"value": value, "normalised": key, "line": line, "context": context})
    for match in _HANDLE.finditer(masked):
        if any(s <= match.start() < e for s, e in emails_at):
            continue
        value = "@" + match.group(1)
        line, context = where(match.start())
        key = normalise(value, "handle") or value
        found.add("handles", key, {"value": value, "normalised": key, "line": line, "context": context})
    for match in _PHONE.finditer(_without_dates(masked)):
        value = match.group().strip()
        digits = sum(ch.isdigit() for ch in value)
        if not 7 <= digits <= 15 or any(s <= match.start() < e for s, e in emails_at):
            continue
        if not (value.startswith(("+", "00", "(")) or re.search(r"[0-9][ ./-][0-9]", value)):
            continue  # a bare run of digits is an id or an amount more often than a phone
        if _NOT_A_PHONE.fullmatch(value):
            continue
        before = masked[masked.rfind("\n", 0, match.start()) + 1 : match.start()]
        if _AMOUNT_BEFORE.search(before) or _AMOUNT_AFTER.match(masked, match.end()) or _ID_BEFORE.search(before):
            continue
        line, context = where(match.start())
        key = normalise(value, "phone", country) or value
        found.add("phones", key, {"value": value, "normalised": key, "line": line, "context": context})
    for match in _ISO.finditer(masked):
        try:
            value = dt.date(*(int(g) for g in match.groups())).isoformat()
        except ValueError:
            continue
        if value == own_date:
            continue
        line, context = where(match.start())
        found.add("dates", value, {"value": value, "line": line, "context": context})
    for match in _TASK.finditer(masked):
        task = body[match.start(1) : match.end(1)].strip()
        line, context = where(match.start(1))
        found.add("tasks", f"{line}", {"value": task, "line": line, "context": context})
    return {kind: list(found.items.get(kind, {}).values()) for kind in KINDS}


# ---------------------------------------------------------------------------
# Links to cards


class LinkedCards:
    """The cards of ``vault`` (:meth:`Vault.cards`) and their types
    (:func:`cards.card_type`), read once per run and only for the cards a
    daily note links to."""

    def __init__(self, vault, schema):
        self.vault, self.schema = vault, schema
        self._cards: set[str] | None = None
        self._types: dict[str, str | None] = {}

    def is_card(self, path: str) -> bool:
        if self._cards is None:
            self._cards = set(self.vault.cards(self.schema))
        return path in self._cards

    def type_of(self, path: str) -> str | None:
        if path not in self._types:
            from .cards import card_type

            note = self.vault.note(path, keep=False)
            self._types[path] = card_type(self.schema, path, note.properties)
        return self._types[path]


def linked(note, resolver, schema, cards: LinkedCards | None = None) -> list[dict]:
    """The links of daily note ``note`` to existing cards: ``[{path, type,
    line, context, with}]``, one per card and line, in the order they first
    appear.  ``path`` is the card the link resolves to, ``type`` its type,
    ``line`` the 1-based file line, ``context`` that line trimmed (at most
    200 characters), ``with`` the other cards linked on that line.  From the
    body only and never inside code, comments or math (:func:`links.scan`);
    links to attachments and to the note itself are not listed.  ``cards``
    says what a card is and its type (None: every note is one, typed by its
    folder, :meth:`model.Schema.infer_type`)."""
    from ..read.secrets import mask

    text = note.text or ""
    offset = note.body_offset
    first_line = note.body_line
    lines = mask(text[offset:]).split("\n")  # contexts without a secret the line holds
    found: dict[tuple[int, str], dict] = {}
    on_line: dict[int, list[str]] = {}
    for link in scan(text, offset, first_line):
        if not link.target:
            continue
        path = resolver.resolve(link.target, note.path).path
        if path is None or path == note.path or not path.lower().endswith(".md"):
            continue
        if cards is not None and not cards.is_card(path):
            continue
        if (link.line, path) in found:
            continue
        index = link.line - first_line
        if cards is not None:
            kind = cards.type_of(path)
        else:
            inferred = schema.infer_type(path)
            kind = inferred.lower() if inferred else None
        found[(link.line, path)] = {
            "path": path,
            "type": kind,
            "line": link.line,
            "context": lines[index].strip()[:200] if 0 <= index < len(lines) else "",
            "with": [],
        }
        on_line.setdefault(link.line, []).append(path)
    for (line, path), entry in found.items():
        entry["with"] = [other for other in on_line[line] if other != path]
    return list(found.values())
