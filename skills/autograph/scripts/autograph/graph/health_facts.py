"""What each note adds to the health report, and a report patched from it.

A whole-vault report (:func:`health.health_report`) costs a pass over every
note's summary; a vault where an agent changed a few notes since the last
report needs only theirs.  Each note's share of the report is kept as its
*facts* (:meth:`Facts.of`, a JSON-ready list, in the index file:
:mod:`write.report_base`), and :func:`patch` takes the last report, takes
out the old facts of the notes whose stamps moved and puts in their new ones.

What a note's facts cannot hold, because it depends on other notes, is
found again for the notes it can concern:

* a link's anchor (``#heading``, ``#^block``) is checked against its
  target's outline: the anchors of every note that links to a changed note
  are checked again;
* a note is an orphan when no other note links to it: the notes a changed
  note linked to, before or now, are asked of the index file's links;
* the memory section (probable duplicates, identity conflicts, daily notes)
  compares cards with each other: it is kept only when no changed card's
  properties or frontmatter state moved and none is in an identity group or
  conflict (a group's cards are ranked by their bodies and by the notes
  linking to them), and a changed note whose links lead elsewhere links,
  before and now, to no card of a group, and shares no name key with
  another note (a pair is suggested on links to the same notes); else it
  is computed again whole (:func:`quality.section`).  A changed daily note
  is then asked again whether it is processed, which its text alone says
  (:func:`quality.with_daily_notes`).

Everything else a patch may not assume (the file list, the schema, the
templates and daily-note settings, the generated Maps of Content, the day,
autograph's code) is in the base's ``context``; a base of another context
is never patched.  The patched report is the one :func:`health.health_report`
computes from nothing (a differential test holds them equal).
"""

from __future__ import annotations

import hashlib
import json

from ..memory import decay, quality
from ..read.links import find_heading

__all__ = ["Facts", "STATE_KEYS", "encode", "patch"]

# positions in a note's facts
(UNREADABLE, LINKS, BROKEN, AMBIGUOUS, CHECKS, OUT, DEAD_END, HUB, INVALID, CARD, DESCRIBED, READING, MEMORY, DAILY,
 OUTLINE, PROPERTIES) = range(16)  # fmt: skip
STATE_KEYS = ("cards", "described", "hub_cards", "links")  # the counts no list of the report holds


class Facts:
    """Takes notes' facts for one report: the vault's cards, the schema's
    hubs, the decay's ``settings`` and ``today``, ``index`` for the notes'
    sizes."""

    def __init__(self, vault, schema, index, settings, today):
        self.vault, self.schema, self.index = vault, schema, index
        self.settings, self.today = settings, today
        self.card_set = vault.card_set(schema)
        self.tally = decay.StatsTally(settings)  # for its parts only
        self.fold = quality.Fold(vault, schema)  # for its daily rule only

    def text(self, path: str, summary, hub: bool, card: bool, reading=None, daily_rule: bool = False) -> str:
        """:meth:`of` as JSON text, given what the caller knows already:
        whether the note is a hub, a card, its decay reading, whether a
        daily rule can take it (:meth:`quality.Fold.add`)."""
        return encode(self.of(path, summary, hub, card, reading, daily_rule))

    def of(self, path: str, summary, hub=None, card=None, reading=None, daily_rule=None) -> list:
        """The facts of note ``path`` (its :class:`index.Summary`, ``targets``
        filled): a list indexed by the constants above.  Its links as
        :class:`linkgraph.LinkTally` counts them; its own rows of the broken
        and ambiguous links; its anchored links to notes (checked later,
        against the target as it is then); the notes it links to; whether it
        is a hub, a card, described; its decay reading's part
        (:meth:`decay.StatsTally.part`); a digest of what the memory section
        reads of it; whether a daily rule can take it; a digest of its
        headings and block ids (what the anchors of links to it meet)."""
        broken, ambiguous, checks, out = [], [], [], set()
        unreadable = summary.unreadable
        leads_on = False
        if unreadable is None:
            for number, (link, (target, candidates, is_ambiguous)) in enumerate(
                zip(summary.links, summary.targets, strict=True)
            ):
                if target is None:
                    broken.append([link.line, link.text, link.kind])
                if is_ambiguous:
                    ambiguous.append([link.line, link.text, link.kind, target, list(candidates)])
                if target is None:
                    continue
                if target != path:
                    out.add(target)
                    leads_on = leads_on or target.endswith(".md")
                if link.fragment and target.endswith(".md"):
                    checks.append([target, link.fragment, number, link.line, link.text, link.kind])
        props = summary.properties
        card = path in self.card_set if card is None else card
        description = props.get("description")
        part = None
        readable = unreadable is None and summary.frontmatter != "invalid"
        if card:
            if reading is None:
                reading = decay.reading_of(path, summary, self.today, self.settings, self.index.size(path))
            part = self.tally.part(reading)
            if daily_rule is None:
                daily_rule = self.fold.may_be_daily(path, props if readable else {})
            # what the memory section reads of a card: its properties, whether they parse, where its links lead
            held = repr((summary.frontmatter, unreadable, props))
            seen = held + _where(summary.targets)
        else:
            held = None
            seen = _where(summary.targets)  # another note counts for the memory section by its links alone
        return [
            unreadable,
            0 if unreadable is not None else len(summary.links),
            broken,
            ambiguous,
            checks,
            sorted(target for target in out if target.endswith(".md")),
            unreadable is None and not leads_on,
            bool(self.schema.is_hub(summary.stem, props)) if hub is None else hub,
            list(summary.error) if summary.error is not None else None,
            card,
            card and isinstance(description, str) and bool(description.strip()),
            part,
            _digest(seen),
            bool(card and daily_rule),
            _digest(summary.outline + "\0\0" + "\0".join(summary.blocks)),
            None if held is None else _digest(held),
        ]


def _where(targets) -> str:
    """Where a note's links lead, as text that is the same however they
    were found: resolved now (:class:`links.Resolution`, whose repr names
    its fields) or read back from the index file (plain tuples).  A digest
    of one compared with a digest of the other would move for a note whose
    links did not (then the memory section is computed whole: 3.5 s at 100k
    notes, every round after a file came or went)."""
    if targets is None:
        return "None"
    return repr([(path, tuple(candidates), bool(ambiguous)) for path, candidates, ambiguous in targets])


# a note's facts as JSON text: one encoder for every note (json.dumps with
# options makes one per call); ASCII, so a lone surrogate (a YAML escape in a
# property link) is escaped, and SQLite takes it
encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _grouped(rows, source, gone: set, new: dict, notes: frozenset) -> list:
    """``rows`` (each of one note, ``source(row)``) without those of the
    notes in ``gone``, with ``new`` (``{note: its rows}``) put in, the
    notes in vault order (the order of their paths: the walk sorts them),
    each note's rows in their order.  Raises KeyError for a note that is
    not one of ``notes`` (the vault's)."""
    groups: dict[str, list] = {}
    for row in rows:
        note = source(row)
        if note not in gone:
            groups.setdefault(note, []).append(row)
    for note, found in new.items():
        if found:
            groups[note] = found
    ordered = sorted(groups)
    if not notes.issuperset(ordered):
        raise KeyError("a row of a note the vault does not hold")
    return [row for note in ordered for row in groups[note]]


def _edge(path: str, line: int, text: str, kind: str) -> dict:
    return {"source": path, "line": line, "target": text, "kind": kind}


def patch(report: dict, state: dict, facts: Facts, changed: list[str], summaries, stored, linked_from, named):
    """``(report, new facts, state)``: ``report`` (the last one, as
    :func:`health.health_report` gave it; changed in place) with the notes
    of ``changed`` taken again.  ``state``: the counts and the decay tally
    the last report was summed from (:data:`STATE_KEYS`, ``tally``);
    ``summaries``: ``(path, Summary)`` of each changed note, ``targets``
    filled; ``stored(paths)``: ``{path: facts}`` of the last report (a
    changed note's old ones, a neighbour's); ``linked_from(paths)``: the
    other notes linking to each (:func:`report_base.linked_from`);
    ``named(paths)``: those of ``paths`` sharing a name key with another
    note (:func:`report_base.sharing_a_name`).  The
    memory section is left to the caller when ``report["memory"]`` is
    None on return.  Raises KeyError, TypeError or ValueError for a base
    that does not fit (then the report is computed whole)."""
    vault, today = facts.vault, facts.today
    old = stored(changed)
    if len(old) != len(changed):
        raise KeyError("a changed note has no stored facts")
    new = {path: facts.of(path, summary) for path, summary in summaries}
    if len(new) != len(changed):
        raise KeyError("a changed note has no summary")
    counts = {key: int(state[key]) for key in STATE_KEYS}
    tally = decay.StatsTally.load(facts.settings, state["tally"])
    memory_holds = True
    daily_now = []  # daily notes whose properties held: only whether each is processed may have moved
    relinked = []  # notes whose properties held and whose links lead elsewhere now
    for path in changed:
        for sign, item in ((-1, old[path]), (1, new[path])):
            counts["links"] += sign * item[LINKS]
            if item[CARD]:
                counts["cards"] += sign
                counts["described"] += sign * bool(item[DESCRIBED])
                counts["hub_cards"] += sign * bool(item[HUB])
                tally.count(item[READING], sign)
        before, now = old[path], new[path]
        if before[MEMORY] != now[MEMORY]:
            if before[CARD] == now[CARD] and before[PROPERTIES] == now[PROPERTIES]:
                relinked.append(path)
            else:
                memory_holds = False
        if now[DAILY]:  # (while the section holds, the same properties: the same daily rule)
            daily_now.append(path)
    ranked = _ranked(report["memory"])
    if memory_holds and ranked.intersection(changed):
        memory_holds = False  # a group's cards are ranked by their bodies too (dedup.find_groups)
    if memory_holds and relinked:
        # links count in the section twice: a group's cards are ranked by the notes linking to them,
        # and a pair of cards sharing a name key is suggested on links to the same notes
        to_groups = any(ranked.intersection(old[path][OUT] + new[path][OUT]) for path in relinked)
        if to_groups or named([path for path in relinked if new[path][CARD]]):
            memory_holds = False
    notes = vault.note_set
    gone = set(changed)

    def rows(at: int, make) -> dict:
        return {path: [make(path, *row) for row in new[path][at]] for path in changed}

    report["hubs"] = _grouped(report["hubs"], str, gone, {p: [p] for p in changed if new[p][HUB]}, notes)
    report["dead_ends"] = _grouped(report["dead_ends"], str, gone, {p: [p] for p in changed if new[p][DEAD_END]}, notes)
    report["invalid_frontmatter"] = _grouped(
        report["invalid_frontmatter"],
        lambda row: row["path"],
        gone,
        {p: [_invalid(p, new[p][INVALID])] for p in changed if new[p][INVALID] is not None},
        notes,
    )
    unreadable = {row["path"]: row["error"] for row in report["unreadable"] if row["path"] not in gone}
    unreadable.update({p: new[p][UNREADABLE] for p in changed if new[p][UNREADABLE] is not None})
    report["unreadable"] = [{"path": p, "error": e} for p, e in sorted(unreadable.items())]
    report["broken_links"] = _grouped(report["broken_links"], _source, gone, rows(BROKEN, _edge), notes)
    report["ambiguous_links"] = _grouped(report["ambiguous_links"], _source, gone, rows(AMBIGUOUS, _ambiguous), notes)
    report["broken_anchors"] = _anchors(report["broken_anchors"], facts, changed, old, new, stored, linked_from, notes)
    unreadable_now = {row["path"] for row in report["unreadable"]}
    report["orphans"] = _orphans(
        report["orphans"], facts, changed, old, new, stored, linked_from, notes, unreadable_now
    )
    links, broken = counts["links"], len(report["broken_links"])
    notes = len(vault.notes)
    report["links"] = links
    report["resolved_links"] = links - broken
    report["avg_links"] = round(links / notes, 2) if notes else 0.0
    report["description_coverage"] = round(counts["described"] / counts["cards"], 4) if counts["cards"] else 1.0
    found = tally.result()
    report["stale_share"] = found["stale_share"]
    report["tiers"] = found["tiers"]
    keys = ("dated", "undated", "not_dates", "stale", "stale_days", "never_touched_share")
    report["recall"] = {"today": today.isoformat(), **{key: found[key] for key in keys}}
    if not memory_holds:
        report["memory"] = None
    elif daily_now:
        report["memory"] = quality.with_daily_notes(report["memory"], vault, facts.schema, daily_now)
    state = {**counts, "tally": tally.dump()}
    return report, new, state


def _ranked(memory: dict) -> set[str]:
    """The cards of a memory section's identity groups and conflicts: those
    :func:`dedup.find_groups` ranks, by their bodies' length among other
    things, so an edit of a body alone can reorder them."""
    found = set()
    for item in memory["probable_duplicates"]:
        if item["by"] != "name":  # name variants compare names and links, never bodies
            found.update(item["cards"])
    for item in memory["identity_conflicts"]:
        found.update(item["cards"])
    return found


def _source(row: dict) -> str:
    return row["source"]


def _invalid(path: str, error: list) -> dict:
    line, column, reason = error
    return {"path": path, "line": line, "column": column, "error": reason}


def _ambiguous(path: str, line: int, text: str, kind: str, target: str, candidates: list) -> dict:
    return dict(_edge(path, line, text, kind), resolved=target, candidates=candidates)


def _anchors(rows: list, facts: Facts, changed: list, old: dict, new: dict, stored, linked_from, notes) -> list:
    """The broken anchors of the report, those of the changed notes and of
    every note linking to one whose headings or block ids moved checked
    again."""
    moved = [path for path in changed if old[path][OUTLINE] != new[path][OUTLINE]]
    near = set()
    for sources in linked_from(moved).values() if moved else ():
        near.update(sources)
    near.difference_update(changed)
    checks = {path: new[path][CHECKS] for path in changed}
    checks.update({path: item[CHECKS] for path, item in stored(sorted(near)).items()})
    if len(checks) != len(changed) + len(near):
        raise KeyError("a linking note has no stored facts")
    targets = sorted({check[0] for found in checks.values() for check in found})
    outlines = {target: (keys, ids) for target, keys, ids in facts.index.each_anchors(targets)}
    failed = {}
    for path, found in checks.items():
        failed[path] = []
        for target, fragment, _number, line, text, kind in found:
            keys, ids = outlines[target]
            if fragment.startswith("^"):
                ok = fragment[1:].strip().lower() in ids
            else:
                ok = find_heading(keys, fragment) is not None
            if not ok:
                failed[path].append(dict(_edge(path, line, text, kind), resolved=target))
    return _grouped(rows, _source, set(checks), failed, notes)


def _orphans(rows, facts: Facts, changed: list, old: dict, new: dict, stored, linked_from, notes, unreadable):
    """The orphans of the report, asked again of the changed notes that
    became or stopped being a card or a hub, and of every note a changed
    note links to now and did not before, or the reverse (``unreadable``:
    the notes that are not UTF-8 now, whose links do not count).  Any other
    note's in-links are those of the last report."""
    asked = set()
    for path in changed:
        before, now = old[path], new[path]
        asked.update(set(before[OUT]).symmetric_difference(now[OUT]))
        if before[HUB] != now[HUB] or before[CARD] != now[CARD]:
            asked.add(path)
    asked = {path for path in asked if path in notes}
    known = {**stored(sorted(asked.difference(changed))), **{path: new[path] for path in asked.intersection(changed)}}
    if len(known) != len(asked):
        raise KeyError("a linked note has no stored facts")
    sources = linked_from(sorted(asked))
    generated = facts.vault.generated_mocs(facts.schema)
    found = {}
    for path in asked:
        item = known[path]
        if item[HUB] or not item[CARD]:
            continue
        linked = [source for source in sources.get(path, ()) if source not in unreadable]  # they link nowhere
        if all(source in generated for source in linked) if generated else not linked:
            found[path] = [path]
    return _grouped(rows, str, asked, found, notes)
