"""Which value of a field is current when cards of one entity disagree: the recency rule.

The one rule dedup's merge (and supersede's choice of the current card)
follows: per field, the value with the latest *evidence* is current.  The
evidence of a card's value is the day that field last changed on the card
(the newest ``## History`` line recording a change of it, ``- 2026-12-01:
role: VP → CTO``), else the card's ``updated``, else its ``created``.  With
no evidence on either side, or the same day, the canonical card's value
stays (BR-28).  The values that are not current go to ``## History``,
dated with their evidence.

autograph's own fields are not facts with a history: :data:`OWN_FIELDS`
are combined by :func:`own_fields` (the earliest ``created``, ``updated``
the merge day, ``access_count`` summed, the latest ``last_accessed``), and
``tier`` and ``relevance`` are recomputed from those as ``engine.py decay``
computes them (dedup's merge does it).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "DEFAULT_FIELDS",
    "OWN_FIELDS",
    "conflict_fields",
    "day_of",
    "current_card",
    "differing",
    "settle",
    "evidence",
    "fact_evidence",
    "newest",
    "own_fields",
]

# The fields whose values say what is current about an entity (schema
# ``conflict_fields.fields``): cards of one entity that disagree on them are
# a change of fact (a new company, a new role), for supersede.py to settle,
# never merged by dedup.py --apply on its own.
DEFAULT_FIELDS = ("company", "role", "title", "platform", "status")

OWN_FIELDS = ("created", "updated", "access_count", "last_accessed", "tier", "relevance")

# "- 2026-12-01: role: VP → CTO" (card.py set): the day ``role`` became CTO;
# "- 2026-12-01: role: CTO (first value, from [[2026-12-01]])" (card.py remember): the day it got one
_CHANGE = re.compile(r"^[-*+] (\d{4}-\d{2}-\d{2}): ([^:\n]+?): (?:.* → |.*\((?:first value)[,)])", re.M)


def day_of(value, zone=None) -> str | None:
    """The ISO calendar day (in ``zone``) of a date property's value; None
    when it is no date."""
    from ..read.dates import NotADate, local_date, parse_when

    try:
        when = parse_when(value)
    except NotADate:
        return None
    return local_date(when, zone).isoformat() if when is not None else None


def evidence(properties: dict, body: str, field: str, zone=None) -> str | None:
    """The ISO day of the evidence for the value a card holds under
    ``field`` (compared without case): its newest History change line,
    else its ``updated``, else its ``created`` (each as a calendar day in
    ``zone``); None when it has none."""
    return _evidence(properties, body, field, ("updated", "created"), zone)


def fact_evidence(properties: dict, body: str, field: str, zone=None) -> str | None:
    """The ISO day since which the card holds its value of ``field``, for a
    fact that comes with its own day (``card.py --source``): the field's
    newest History change or first-value line, else the card's ``created``
    (the value has been there since; ``updated`` moves with any write, a
    link or a log line too, so it says nothing of this field), else its
    ``updated``; None when it has none."""
    return _evidence(properties, body, field, ("created", "updated"), zone)


def _evidence(properties: dict, body: str, field: str, keys: tuple[str, str], zone) -> str | None:
    wanted = field.strip().casefold()
    changed = [day for day, name in _CHANGE.findall(body or "") if name.strip().casefold() == wanted]
    if changed:
        return max(changed)
    folded = {str(k).casefold(): v for k, v in properties.items()}
    for key in keys:
        day = day_of(folded.get(key), zone)
        if day is not None:
            return day
    return None


def newest(days: list[str | None]) -> int:
    """The index of the current value among values whose evidence is
    ``days`` (index 0 the canonical card's): the latest day wins; no day
    loses to any day; on a tie the earlier index (the canonical) stays."""
    best = 0
    for index, day in enumerate(days):
        if day is not None and (days[best] is None or day > days[best]):
            best = index
    return best


def conflict_fields(schema) -> list[str]:
    """The schema's ``conflict_fields.fields`` (lower case), else :data:`DEFAULT_FIELDS`."""
    fields = schema.section("conflict_fields").get("fields")
    return [f.lower() for f in (fields if fields else DEFAULT_FIELDS)]


def _fold(value) -> object:
    if isinstance(value, list):
        return frozenset(_fold(v) for v in value if v not in (None, ""))
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value).strip().casefold()
    return value


def _shown(value) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value).strip()


def _value(props: dict, name: str):
    for key, value in props.items():
        if isinstance(key, str) and key.casefold() == name:
            return value
    return None


def differing(props_of: dict[str, dict], fields: list[str]) -> dict[str, dict[str, list[str]]]:
    """The ``fields`` on which the cards ``props_of`` (``{path: properties}``)
    disagree: ``{field: {value as written: [paths]}}``, values compared
    trimmed, NFC and without case (lists as sets), empty values aside."""
    found: dict[str, dict[str, list[str]]] = {}
    for name in fields:
        seen: dict[object, tuple[str, list[str]]] = {}
        for path in sorted(props_of):
            value = _value(props_of[path], name)
            if value in (None, "", []):
                continue
            seen.setdefault(_fold(value), (_shown(value), []))[1].append(path)
        if len(seen) > 1:
            found[name] = {shown: paths for shown, paths in seen.values()}
    return found


def current_card(days_of: dict[str, dict[str, str | None]], order: list[str]) -> str | None:
    """The card whose value is current on every field that differs: for
    each field, ``days_of[path][field]`` is the evidence of that card's
    value; the card must hold the strictly newest evidence on each of them
    (:func:`newest` with ``order``, the canonical first, breaking no tie).
    None when no card does (a tie, no dates, or one card newer on one field
    and another on the next)."""
    winner = None
    fields = {name for days in days_of.values() for name in days}
    for name in sorted(fields):
        days = [days_of[path].get(name) for path in order]
        best = newest(days)
        if days[best] is None or days.count(days[best]) > 1:
            return None
        if winner not in (None, order[best]):
            return None
        winner = order[best]
    return winner


def settle(notes: dict, fields: list[str], zone=None) -> tuple[dict[str, dict[str, list[str]]], str | None]:
    """How cards of one entity stand on their conflict fields: ``notes``
    maps each card's path to its :class:`note.Note` (properties and body
    are read).  Returns ``(differs, current)``: :func:`differing` of the
    ``fields``, and the card whose value is newest on every field that
    differs (:func:`current_card`), None when none is (or none differs).
    supersede.py retires the others of a settled group; dedup.py --apply
    leaves such a group to it and merges every other, so the two give one
    vault in either order."""
    props = {path: note.properties for path, note in notes.items()}
    differs = differing(props, fields)
    if not differs:
        return differs, None
    order = list(notes)
    days_of = {
        path: {
            name: evidence(props[path], notes[path].body, name, zone)
            for name, values in differs.items()
            if any(path in paths for paths in values.values())
        }
        for path in order
    }
    return differs, current_card(days_of, order)


def own_fields(cards: list[dict], merge_day: str, zone=None) -> dict:
    """autograph's own fields of the card that ``cards`` (their properties,
    canonical first) become: ``{field: value}`` for those to write, as
    :data:`OWN_FIELDS` says (``created`` the earliest day as written on its
    card, ``updated`` ``merge_day``, ``access_count`` the sum, the latest
    ``last_accessed`` as written).  Fields none of the cards holds are left
    out; ``tier`` and ``relevance`` are never returned (they follow from
    these: the caller recomputes them)."""
    from .decay import access_count

    folded = [{str(k).casefold(): v for k, v in props.items()} for props in cards]
    out: dict = {}
    created = [(d, f["created"]) for f in folded if "created" in f and (d := day_of(f["created"], zone))]
    if created:
        out["created"] = min(created, key=lambda pair: pair[0])[1]
    if any("updated" in f for f in folded):  # a card that never said when it changed is not made to (BR-28)
        out["updated"] = merge_day
    counts = [access_count(f.get("access_count")) for f in folded if "access_count" in f]
    if counts:
        out["access_count"] = sum(c for c in counts if c is not None)
    seen = [(d, f["last_accessed"]) for f in folded if "last_accessed" in f and (d := day_of(f["last_accessed"], zone))]
    if seen:
        out["last_accessed"] = max(seen, key=lambda pair: pair[0])[1]
    return out
