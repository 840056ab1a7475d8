"""A card as it was on a day, rebuilt from its ``## History``: ``card.py show --as-of``.

``## History`` holds three kinds of dated lines (:func:`sections.history_line`,
:func:`source.past_line`), each maybe ending in ``(from [[NOTE]])``:

* ``- D: field: old → new``: from day D the field held ``new``, before it ``old``;
* ``- D: field: old``: until day D the field held ``old`` (a value cleared,
  or a merged card's value dated with its evidence);
* ``- D: field: value (past value, from [[NOTE]])``: on day D the field held
  ``value`` (a fact older than the value the card holds now);
* ``- D: field: value (first value)``: from day D the field held ``value``,
  before it none.

The value of a field on day X is that of the latest point at or before X
(a change's ``new``, a past value, or the current value at its evidence,
:func:`recency.evidence`); with none, the ``old`` of the earliest line after
X; with no line at all, the value the card holds.  A field set where it had
none leaves no line, so its earlier absence is not known: it shows as now.
"""

from __future__ import annotations

import re

from ..read import frontmatter as fm
from ..write import sections
from . import recency
from .source import FIRST, PAST

__all__ = ["LINE", "as_of", "history"]

# "- 2026-12-01: role: CTO → CEO (from [[2026-12-01]])"
LINE = re.compile(r"^[-*+] (\d{4}-\d{2}-\d{2}): ([^:]+?): (.*)$")
# the old value, quoted (it may hold the arrow itself) or up to the first arrow, then the new one
_ARROW = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|.*?) → (.*)$""")
_SOURCE = re.compile(
    r" \((?:(?:" + re.escape(PAST) + "|" + re.escape(FIRST) + r"), )?from \[\[[^\]]*\]\]\)$|"
    r" \(" + re.escape(FIRST) + r"\)$"
)


def _value(text: str):
    try:
        values, _ = fm.loads("v: " + text.strip())
    except fm.FrontmatterError:
        return text.strip()
    return values.get("v")


def history(text: str) -> list[dict]:
    """The dated lines of the ``## History`` section of a card's ``text``:
    ``[{day, field, kind: "change" | "until" | "past", old, new}]`` in the
    order written (``old`` None for a past value, ``new`` None for
    ``until``)."""
    found = []
    for line in sections.items(text, "History"):
        match = LINE.match(line)
        if match is None:
            continue
        day, name, rest = match.groups()
        past = f"({PAST}, from [[" in rest
        first = rest.endswith(f"({FIRST})") or f"({FIRST}, from [[" in rest
        rest = _SOURCE.sub("", rest)
        if first:
            found.append({"day": day, "field": name.strip(), "kind": "change", "old": None, "new": _value(rest)})
        elif past:
            found.append({"day": day, "field": name.strip(), "kind": "past", "old": None, "new": _value(rest)})
        elif (arrow := _ARROW.match(rest)) is not None:
            old, new = arrow.groups()
            found.append({"day": day, "field": name.strip(), "kind": "change", "old": _value(old), "new": _value(new)})
        else:
            found.append({"day": day, "field": name.strip(), "kind": "until", "old": _value(rest), "new": None})
    return found


def as_of(note, day: str, zone=None) -> tuple[bool, dict]:
    """``(existed, fields)``: whether the card ``note`` (a
    :class:`note.Note`) existed on ``day`` (ISO; its ``created`` is not
    after it) and its properties as they were then (see the module
    docstring; autograph's own bookkeeping, :data:`recency.OWN_FIELDS`
    but ``created``, is left out: it was never recorded)."""
    props = note.properties
    created = recency.day_of(props.get(_key(props, "created")), zone)
    if created is not None and created > day:
        return False, {}
    lines = history(note.text or "")
    own = {f for f in recency.OWN_FIELDS if f != "created"}
    fields = {}
    names = list(props) + [line["field"] for line in lines if _key(props, line["field"]) is None]
    for name in dict.fromkeys(names):
        if str(name).casefold() in own:
            continue
        mine = [line for line in lines if line["field"].casefold() == str(name).casefold()]
        current = props.get(name)
        value = _field_as_of(current, recency.fact_evidence(props, note.body, str(name), zone), mine, day)
        if value is not None:
            fields[name] = value
    return True, fields


def _field_as_of(current, evidence: str | None, lines: list[dict], day: str):
    points = [(line["day"], line["new"]) for line in lines if line["kind"] in ("change", "past")]
    if evidence is not None and lines:
        points.append((evidence, current))
    before = [point for point in points if point[0] <= day]
    if before:
        return sorted(before, key=lambda point: point[0])[-1][1]  # on one day, the later line (current last)
    after = sorted(
        (line for line in lines if line["kind"] in ("change", "until") and line["day"] > day), key=lambda x: x["day"]
    )
    if after:
        return after[0]["old"]
    return current


def _key(props: dict, name: str):
    folded = name.casefold()
    return next((k for k in props if str(k).casefold() == folded), None)
