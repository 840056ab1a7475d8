"""Superseded values: cards of one entity that disagree, and retired cards still current.

:func:`find` reads the vault; :func:`plan` returns the edits; nothing is
written here.

* **Candidates**: a group of cards of one entity (the identity grouping of
  :func:`dedup.find_groups`: a shared identity key, no conflicting identity
  value, retired cards left out) whose conflict fields (schema
  ``conflict_fields.fields``; default :data:`DEFAULT_FIELDS`) hold different
  values.  Values compare trimmed, NFC and without case; lists as sets.
  The *current* card is the newest (``updated``, else ``created``); each
  other card is *retired* when it is strictly older.  A candidate without
  such an order (dates equal or missing) is reported as undecided and never
  applied; so is one found by a handle alone (not ``strong``: no email or
  phone key), which a person settles with ``card.py retire``.
* **Still current**: a card whose ``superseded_by`` names another card
  (resolved as Obsidian resolves the link, :func:`successor`) and whose
  ``status`` is not ``superseded`` (retired, but read as current by every
  search).  A ``superseded_by`` that names no other card (``TBD``, ``0``,
  ``[[Nobody]]``, a hub, the card itself) is reported as *unresolved* and
  never stamped; an empty one, ``false``, ``n/a``, ``-`` or ``none`` says
  nobody and is left alone.

:func:`plan` stamps each retired card ``status: superseded`` and
``superseded_by: "[[current]]"`` (surgical frontmatter edits) and links
both ways under ``## Related`` (:func:`sections.append`; a line already
there is not added twice).  A still-current card gets ``status:
superseded``.  A card whose type's status list lacks ``superseded`` is
refused (the schema says it is never replaced).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import dedup, recency
from .retirement import no_successor, successor

__all__ = ["DEFAULT_FIELDS", "Candidate", "Findings", "find", "plan"]

DEFAULT_FIELDS = recency.DEFAULT_FIELDS
NOT_SUPERSEDABLE = "its type cannot be superseded (supersedable: false, or a status list without superseded)"


@dataclass
class Candidate:
    """Cards of one entity whose conflict fields disagree.  ``conflicts``
    maps a field to ``{value as written: [paths]}``; ``current`` is the
    newest card (None when undecided); ``retired`` the strictly older ones;
    ``reason`` why nothing would be applied (None when it would)."""

    members: list[str]
    conflicts: dict[str, dict[str, list[str]]]
    evidence: list[dict]
    strong: bool
    current: str | None
    retired: list[str]
    dates: dict[str, str | None]
    reason: str | None = None

    def as_dict(self) -> dict:
        return {
            "members": self.members,
            "current": self.current,
            "retired": self.retired,
            "conflicts": self.conflicts,
            "evidence": self.evidence,
            "strong": self.strong,
            "dates": self.dates,
            "reason": self.reason,
        }


@dataclass
class Findings:
    """``candidates``, ``still_current`` (``{"path", "status",
    "superseded_by"}``), ``unresolved`` (``{"path", "superseded_by",
    "reason"}``: a ``superseded_by`` that names no other card, never
    stamped) and the grouping's :class:`dedup.Report`."""

    candidates: list[Candidate] = field(default_factory=list)
    still_current: list[dict] = field(default_factory=list)
    unresolved: list[dict] = field(default_factory=list)
    report: dedup.Report | None = None


def conflict_fields(schema) -> list[str]:
    """The schema's ``conflict_fields.fields`` (lower case), else :data:`DEFAULT_FIELDS`
    (:func:`recency.conflict_fields`)."""
    return recency.conflict_fields(schema)


def find(vault, schema, report: dedup.Report | None = None) -> Findings:
    """Candidates and still-current cards of ``vault`` (module docstring)."""
    report = report if report is not None else dedup.find_groups(vault, schema)
    findings = Findings(report=report)
    fields = conflict_fields(schema)
    zone = dedup.identity_settings(schema).zone
    for group in report.groups:
        notes = {path: vault.note(path) for path in group.members}
        # the recency rule, as dedup merges: per differing field, the value with the newest evidence
        conflicts, current = recency.settle(notes, fields, zone)
        if not conflicts:
            continue
        dates = {path: dedup.card_date(notes[path].properties, zone) or None for path in group.members}
        retired = [p for p in sorted(group.members) if p != current] if current is not None else []
        reason = None
        if current is None:
            reason = (
                "no card is strictly newer than the others on every differing field (its History line, "
                "else updated, else created); retire one with card.py retire"
            )
        elif not group.strong:
            reason = "found by a handle or another weak key alone; retire one with card.py retire if they are one"
        findings.candidates.append(
            Candidate(sorted(group.members), conflicts, group.evidence, group.strong, current, retired, dates, reason)
        )
    cards = vault.cards(schema)
    card_set = set(cards)
    for path in cards:
        note = vault.note(path, keep=False)
        props = note.properties
        key = dedup.find_key(props, "superseded_by")
        by = props.get(key) if key is not None else None
        if no_successor(by):
            continue
        status = props.get("status")
        if successor(vault, card_set, path, by) is None:
            findings.unresolved.append(
                {"path": path, "superseded_by": by, "reason": "superseded_by names no other card; nothing stamped"}
            )
        elif not (isinstance(status, str) and status.strip().lower() == "superseded"):
            findings.still_current.append({"path": path, "status": status, "superseded_by": by})
    return findings


def _allows_superseded(schema, props: dict) -> bool:
    kind = props.get("type")
    return schema.supersedable(kind if isinstance(kind, str) else None)


def plan(vault, schema, findings: Findings) -> tuple[list, list[dict]]:
    """``(edits, refused)``: the :class:`Edit` of every card to stamp
    or link (one edit per card), and ``{"path", "reason"}`` for cards left
    as they are."""
    from ..read import frontmatter as fm
    from ..write import sections
    from ..write.changes import Edit

    texts: dict[str, str] = {}
    refused: list[dict] = []

    def text_of(path: str) -> str | None:
        if path not in texts:
            note = vault.note(path)
            if note.unwritable:
                refused.append({"path": path, "reason": note.unwritable})
                return None
            texts[path] = note.text
        return texts[path]

    def related(path: str, target: str) -> None:
        text = text_of(path)
        if text is None:
            return
        line = f"- [[{dedup.link_name(vault, path, target)}]]"
        if line[2:] not in {item[2:].strip() for item in sections.items(text, "Related")}:
            texts[path] = sections.append(text, "Related", [line])

    for candidate in findings.candidates:
        if candidate.reason is not None or candidate.current is None:
            continue
        current = candidate.current
        for path in candidate.retired:
            text = text_of(path)
            if text is None or text_of(current) is None:
                continue
            if not _allows_superseded(schema, fm.parse(text).properties if fm.parse(text) else {}):
                refused.append(
                    {
                        "path": path,
                        "reason": NOT_SUPERSEDABLE,
                    }
                )
                continue
            try:
                text = fm.set_property(text, "status", "superseded")
                text = fm.set_property(text, "superseded_by", f"[[{dedup.link_name(vault, path, current)}]]")
            except fm.FrontmatterError as exc:
                refused.append({"path": path, "reason": str(exc)})
                continue
            texts[path] = text
            related(path, current)
            related(current, path)
    for item in findings.still_current:
        text = text_of(item["path"])
        if text is None:
            continue
        block = fm.parse(text)
        if not _allows_superseded(schema, block.properties if block else {}):
            refused.append(
                {
                    "path": item["path"],
                    "reason": NOT_SUPERSEDABLE,
                }
            )
            continue
        try:
            texts[item["path"]] = fm.set_property(text, "status", "superseded")
        except fm.FrontmatterError as exc:
            refused.append({"path": item["path"], "reason": str(exc)})
    edits = []
    for path in sorted(texts):
        note = vault.note(path)
        after = note.encode(texts[path])
        if after != note.data:
            edits.append(Edit(path, note.data, after, "supersede"))
    return edits, refused
