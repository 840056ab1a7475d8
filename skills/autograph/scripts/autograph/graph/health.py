"""Vault health: link and frontmatter findings, and a 0-100 score.

The score (``SCORE_FORMULA``) starts at 100 and subtracts weighted shares,
each between 0 and 1, so no single finding can push it below 0 on its own:

* 30 x orphan share: cards no other note links to, of all cards that are
  not hubs (index and Map-of-Content notes are never orphans; notes in the
  templates folders and ``ignore_folders`` are not cards, :meth:`Vault.cards`);
* 30 x broken share: links that resolve to nothing, of all links;
* 15 x link sparsity: ``max(0, 1 - average links per note / 3)``;
* 10 x cards without a ``description`` property, of all cards;
* 10 x notes whose frontmatter does not parse, or that cannot be read or
  are not UTF-8 (``unreadable``);
* 5 x broken anchors: ``#heading``/``#^block`` links whose target lacks it,
  of all links;
* ``decay.health_weight`` (default 0: shown, not scored) x stale share:
  cards last accessed more than ``decay.stale_days`` (90) days ago, of the
  cards with a date (:mod:`decay`).  Scored only when the schema gives a
  weight; the report always holds the stale share and the tiers;
* ``identity.health_weight`` (default 0: shown, not scored) x memory share:
  cards named by a memory finding (a probable duplicate, an identity
  conflict, a card superseded but live, a daily note not processed), of all
  cards (:mod:`quality`).  Scored only when the schema gives a weight; the
  report always holds the ``memory`` section.

The result is clamped to 0..100 and rounded to one decimal.  An empty vault
scores 100.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..read import jsonfile
from ..read.conflicts import conflict_copies
from ..read.index import NoteIndex
from ..read.text import counts, printable
from ..read.vault import GRAPH_DIR, Vault
from ..schema.model import Schema
from ..write import derived
from ..write.confine import PathError, TargetError
from ..write.replace import Conflict
from .listing import section

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from ..read.linkgraph import Edge

__all__ = [
    "HISTORY",
    "SCORE_FORMULA",
    "append_history",
    "case_collisions",
    "health_report",
    "health_text",
    "hubs",
    "previous_entry",
    "record_run",
    "report_for",
    "score",
]

HISTORY = "health-history.jsonl"
REPORT_CACHE = "cache/health.json"

SCORE_FORMULA = (
    "score = 100 - 30*orphans/non-hub cards - 30*broken links/links"
    " - 15*max(0, 1 - avg links per note/3) - 10*(1 - description coverage of cards)"
    " - 10*(invalid frontmatter + unreadable notes)/notes - 5*broken anchors/links"
    " - decay.health_weight (default 0)*stale share - identity.health_weight (default 0)*memory share,"
    " clamped to 0..100 and rounded to 0.1; an empty vault scores 100"
)
PENALTIES = ("orphans", "broken_links", "link_sparsity", "description", "invalid_frontmatter", "broken_anchors")


@dataclass(frozen=True)
class Counts:
    notes: int
    cards: int  # cards (Vault.cards), hubs included
    hub_cards: int  # cards that are hubs (never orphans)
    links: int
    orphans: int
    broken: int
    described: int
    invalid: int
    broken_anchors: int
    stale_share: float = 0.0  # of dated cards, last access over decay.stale_days ago
    stale_weight: float = 0.0  # decay.health_weight: 0 shows the stale share without scoring it
    memory_share: float = 0.0  # of cards, named by a memory finding (quality.section)
    memory_weight: float = 0.0  # identity.health_weight: 0 shows the memory section without scoring it


def score(c: Counts) -> tuple[float, dict[str, float]]:
    """The health score for ``c`` and each penalty (see the module docstring)."""
    if c.notes == 0:
        return 100.0, dict.fromkeys(PENALTIES, 0.0)
    links = max(c.links, 1)
    avg = c.links / c.notes
    penalties = {
        "orphans": 30 * c.orphans / max(c.cards - c.hub_cards, 1),
        "broken_links": 30 * c.broken / links,
        "link_sparsity": 15 * max(0.0, 1 - avg / 3),
        "description": 10 * (1 - c.described / c.cards) if c.cards else 0.0,
        "invalid_frontmatter": 10 * c.invalid / c.notes,
        "broken_anchors": 5 * c.broken_anchors / links,
    }
    if c.stale_weight:
        penalties["stale"] = c.stale_weight * c.stale_share
    if c.memory_weight:
        penalties["memory"] = c.memory_weight * c.memory_share
    value = max(0.0, min(100.0, 100 - sum(penalties.values())))
    return round(value, 1), {k: round(v, 2) for k, v in penalties.items()}


def _edge_row(edge: Edge) -> dict:
    link = edge.link
    return {"source": edge.source, "line": link.line, "target": link.text, "kind": link.kind}


def hubs(vault: Vault, schema: Schema, index: NoteIndex) -> list[str]:
    """Index and Map-of-Content notes (:meth:`Schema.is_hub`), in vault order."""
    found = []
    for path in vault.notes:
        summary = index.summary(path)
        if schema.is_hub(summary.stem, summary.properties):
            found.append(path)
    return found


def case_collisions(paths: list[str]) -> list[list[str]]:
    """Groups of vault paths (notes and attachments) that differ only in
    letter case, each sorted, in path order: ``foo.md`` beside ``FOO.md``.
    A checkout on macOS or Windows (case-insensitive file systems) keeps one
    of each group and loses the rest."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(path.casefold(), []).append(path)
    return sorted(sorted(group) for group in groups.values() if len(group) > 1)


def health_report(vault: Vault, schema: Schema, index: NoteIndex | None = None, today=None, keep=None) -> dict:
    """Every health finding of ``vault`` as a JSON-ready dict (keys documented
    in ``graph.py health --help``).  ``index`` may supply cached summaries;
    ``today`` (the vault's date, default the clock's) dates the stale share.
    ``keep``: a dict whose ``facts`` (a list, or anything with ``append``)
    gets ``(path, facts as JSON text)`` of every note (:mod:`health_facts`),
    and that gets ``state``, the counts and the decay tally: what a later
    report patches from this one.

    One pass over the notes (:meth:`NoteIndex.each`) feeds every finding:
    the link tally (:class:`linkgraph.LinkTally`), the decay's readings
    (:func:`decay.reading_of`) and the memory section (:class:`quality.Fold`),
    so no note's summary is kept once it is counted."""
    from ..memory import decay, quality
    from ..read import dates
    from ..read.linkgraph import LinkTally  # the link graph only when the report is computed

    index = index if index is not None else NoteIndex(vault)
    settings = decay.Settings.of(schema)
    today = today or dates.today_in(settings.zone)
    notes = vault.notes
    card_set = vault.card_set(schema)
    graph = LinkTally(vault, index)
    memory = quality.Fold(vault, schema)
    readings: list = []  # small: the decay keeps a card's properties only while it is read
    stats = decay.StatsTally(settings)
    hub_list, invalid = [], []
    not_cards: set[str] = set()
    cards = described = 0
    facts = kept = None
    if keep is not None:
        from .health_facts import Facts

        facts, kept = Facts(vault, schema, index, settings, today), keep["facts"]
    for path, summary in index.each(notes, targets=True):
        graph.add(path, summary)
        if summary.error is not None:
            line, column, reason = summary.error
            invalid.append({"path": path, "line": line, "column": column, "error": reason})
        hub = schema.is_hub(summary.stem, summary.properties)
        if hub:
            hub_list.append(path)
        if path not in card_set:
            not_cards.add(path)
            if facts is not None:
                kept.append((path, facts.text(path, summary, hub, False)))
            continue
        cards += 1
        description = summary.properties.get("description")
        if isinstance(description, str) and description.strip():
            described += 1
        reading = decay.reading_of(path, summary, today, settings, index.size(path))
        stats.add(reading)
        daily_rule = memory.add(path, summary)
        if facts is not None:
            kept.append((path, facts.text(path, summary, hub, True, reading, daily_rule)))
    del readings
    skip = set(hub_list) | not_cards
    # a generated Map of Content links every card of its group: its links do
    # not rescue an orphan, or one moc.py run would hide every orphan
    generated = vault.generated_mocs(schema)
    if generated:
        orphans = [
            path
            for path in notes
            if path not in skip and all(source in generated for source in graph.backlink_sources(path))
        ]
    else:
        orphans = graph.orphans(exclude=skip.__contains__)
    broken = graph.broken
    anchors = graph.broken_anchors()
    links = graph.links
    unreadable = [{"path": path, "error": error} for path, error in sorted(graph.unreadable.items())]
    recall = _recall(stats.result(), today)
    section = memory.section(index, graph)
    state = {
        "cards": cards,
        "described": described,
        "hub_cards": len(set(hub_list).difference(not_cards)),
        "links": links,
    }
    if keep is not None:
        keep["state"] = {**state, "tally": stats.dump()}
    report = {
        "vault": str(vault.root),
        "score": None,  # below, from the findings
        "penalties": None,
        "notes": len(notes),
        "attachments": len(vault.files) - len(notes),
        "hubs": hub_list,
        "links": links,
        "resolved_links": links - len(broken),
        "avg_links": round(links / len(notes), 2) if notes else 0.0,
        "broken_links": [_edge_row(edge) for edge in broken],
        "orphans": orphans,
        "dead_ends": graph.dead_ends,
        "ambiguous_links": [
            dict(_edge_row(edge), resolved=edge.target, candidates=list(edge.candidates)) for edge in graph.ambiguous
        ],
        "broken_anchors": [dict(_edge_row(edge), resolved=edge.target) for edge in anchors],
        "description_coverage": round(described / cards, 4) if cards else 1.0,
        "invalid_frontmatter": invalid,
        "unreadable": unreadable,
        "case_collisions": case_collisions(vault.files),
        "conflict_copies": [{"path": copy, "copy_of": note} for copy, note in conflict_copies(notes).items()],
        "warnings": list(vault.warnings),
        **recall,
        "memory": section,
    }
    report["score"], report["penalties"] = score(_counts(report, state, schema))
    return report


def _recall(found: dict, today) -> dict:
    """The report's decay keys of :func:`decay.stats`' ``found``:
    ``stale_share``, ``tiers`` and ``recall`` (dated, undated, not dates,
    stale, stale days, never touched share, as of ``today``)."""
    keys = ("dated", "undated", "not_dates", "stale", "stale_days", "never_touched_share")
    return {
        "stale_share": found["stale_share"],
        "tiers": found["tiers"],
        "recall": {"today": today.isoformat(), **{key: found[key] for key in keys}},
    }


def report_for(vault: Vault, schema: Schema, index: NoteIndex, today=None) -> dict:
    """:func:`health_report`, reused from ``.graph/cache/health.json`` when
    nothing it depends on changed: the vault's file list, every note's size,
    modification and change time, the templates folders, the daily notes'
    folder and format, the schema and
    autograph's own code (one hash, :func:`_report_key`).  So a run on an
    unchanged vault stats every note and reads none.  When only some notes
    changed since, the stored report is patched (:mod:`health_facts`: their
    facts, and what depends on them, taken again); otherwise the report is
    computed whole (reading only changed notes, through ``index``).  Either
    is stored.  The vault's date (``today``, default the clock's) is part
    of the key: the stale share and the tiers move with it."""
    if today is None:
        from ..memory import decay
        from ..read import dates

        today = dates.today_in(decay.Settings.of(schema).zone)
    if not index.use_cache:
        report = health_report(vault, schema, index, today)
        derived.save_index(index)
        return report
    parts = _key_parts(vault, schema, today)
    key = _report_key(parts, index)
    try:
        data = json.loads(jsonfile.read_bytes(vault.root / GRAPH_DIR / REPORT_CACHE, limit=1 << 30))
    except (OSError, ValueError, RecursionError):  # NotAFile is a ValueError
        data = None
    if (
        isinstance(data, dict)
        and data.get("key") == key
        and isinstance(data.get("report"), dict)
        and not _unknown(index)  # a note read within a clock tick of a change: its stamp does not say it is the same
    ):
        report = data["report"]
        report["vault"] = str(vault.root)
        report["warnings"] = list(vault.warnings)
        return report
    context = _context(parts, vault, schema)
    keep: dict = {}
    report = _patched(vault, schema, index, today, data, context, keep)
    whole = report is None
    if whole:
        from ..write.report_base import Pending

        keep = {"facts": Pending(index.store.index.con)}
        report = health_report(vault, schema, index, today, keep=keep)
    del data
    derived.save_index(index)
    _store(vault, index, key, context, keep, whole, report)
    return report


def _patched(vault: Vault, schema: Schema, index: NoteIndex, today, data, context: str, keep: dict) -> dict | None:
    """The stored report ``data`` patched with the notes changed since
    (:func:`health_facts.patch`), its new facts and state put in ``keep``;
    None when it cannot be: no base of this ``context`` in the index file,
    a stored report that is not the base's, an index another process
    holds, more than a fifth of the notes changed."""
    from ..memory import quality
    from ..write import report_base
    from . import health_facts

    store = index.store.index
    if store.stale or store.readonly or store.stamp_bytes is None or not isinstance(data, dict):
        return None
    con = store.con
    try:
        # one read transaction: the base, the facts and the links read are of one state of the file,
        # the state this process brought it to (else another process's base could meet this one's facts)
        con.execute("BEGIN")
        held = con.execute("SELECT value FROM meta WHERE key = 'state'").fetchone()
        if held is None or held[0] != store.state:
            return None
        found = _patch_in(vault, schema, index, today, data, context, report_base.load_base(con))
    except sqlite3.Error:
        return None
    finally:
        if con.in_transaction:
            con.execute("COMMIT")
    if found is None:
        return None
    report, new, state, at, base = found
    if report["memory"] is None:
        report["memory"] = quality.section(vault, schema, index)
    report["vault"] = str(vault.root)
    report["warnings"] = list(vault.warnings)
    report["score"], report["penalties"] = score(_counts(report, state, schema))
    keep["facts"] = [(path, health_facts.encode(item)) for path, item in new.items()]
    keep["state"] = state
    keep["moved"] = (at, base.report_key)
    return report


def _patch_in(vault: Vault, schema: Schema, index: NoteIndex, today, data, context: str, base) -> tuple | None:
    """:func:`_patched`'s work inside its read transaction: ``(report, new
    facts, state, positions of the stamps that moved, base)``, or None."""
    from ..memory import decay
    from ..read.index import changed_stamps, stamp_paths, unknown_stamps
    from ..write import report_base
    from .health_facts import Facts, patch

    store = index.store.index
    con = store.con
    report = data.get("report")
    if base is None or base.context != context or data.get("key") != base.report_key or not isinstance(report, dict):
        return None
    at = changed_stamps(base.stamps, store.stamp_bytes, most=0)
    if at is None:
        return None
    # a note held under the unknown stamp was read within a clock tick of a change, maybe twice in a row
    # (the stamp then the same): taken again
    at = sorted(set(at).union(unknown_stamps(store.stamp_bytes)))
    if len(at) > max(64, len(vault.notes) // 5):
        return None
    ordered = stamp_paths(store.stamp_bytes)
    changed = [ordered[i].decode("utf-8", "surrogatepass") for i in at]
    facts = Facts(vault, schema, index, decay.Settings.of(schema), today)
    try:
        report, new, state = patch(
            report,
            base.state,
            facts,
            changed,
            index.each(changed, targets=True),
            lambda paths: report_base.facts_of(con, paths),
            lambda paths: report_base.linked_from(con, paths),
            lambda paths: report_base.sharing_a_name(con, paths),
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None  # a base that does not fit: the report is computed whole
    return report, new, state, at, base


def _unknown(index: NoteIndex) -> bool:
    """Whether the index file holds a note under the unknown stamp (read
    within a clock tick of a change: :func:`index.unknown_stamps`)."""
    from ..read.index import unknown_stamps

    text = index.store.index.stamp_bytes if index.store is not None else None
    return text is not None and bool(unknown_stamps(text))


def _counts(report: dict, state: dict, schema: Schema) -> Counts:
    """The :class:`Counts` a report's score is taken from: its lists' lengths
    and ``state`` (:data:`health_facts.STATE_KEYS`)."""
    return Counts(
        notes=report["notes"],
        cards=state["cards"],
        hub_cards=state["hub_cards"],
        links=state["links"],
        orphans=len(report["orphans"]),
        broken=len(report["broken_links"]),
        described=state["described"],
        invalid=len(report["invalid_frontmatter"]) + len(report["unreadable"]),
        broken_anchors=len(report["broken_anchors"]),
        stale_share=report["stale_share"],
        stale_weight=float(schema.section("decay").get("health_weight", 0)),
        memory_share=report["memory"]["share"],
        memory_weight=float(schema.section("identity").get("health_weight", 0)),
    )


def _store(vault: Vault, index: NoteIndex, key: str, context: str, keep: dict, whole: bool, report: dict) -> None:
    """Keep ``report`` in ``.graph/cache/health.json`` under ``key``, and
    the base a later run patches it from in the index file (first: a
    report stored without its base is computed whole next time)."""
    from ..write import report_base

    store = index.store.index
    stored = store.stamp_bytes
    if "state" in keep and stored is not None and not store.stale:
        base = report_base.Base(context, key, stored, keep["state"])
        report_base.save_base(store.con, base, keep.get("facts", []), whole, stored, keep.get("moved"))
    if isinstance(keep.get("facts"), report_base.Pending):
        keep["facts"].close()
    keep.clear()
    try:
        # escaped to ASCII: json's encoder and decoder take half the time (3 MB at 100k notes: 22 ms less a run;
        # a vault of Cyrillic names loses 3), and a lone surrogate is an escape as any other character
        text = json.dumps({"key": key, "report": report}, separators=(",", ":"))
        derived.write_derived(vault.root, REPORT_CACHE, text.encode("ascii"), durable=False)
    except (OSError, Conflict, PathError, TargetError):
        pass  # a result that cannot be stored is computed again next run


def _key_parts(vault: Vault, schema: Schema, today) -> list:
    """What a report depends on besides the notes and the other files:
    the vault, its templates folders, the daily notes' settings, the
    schema, autograph's own code and the day."""
    code = []
    library = Path(__file__).resolve().parent.parent  # every module of autograph, in every layer
    for folder, dirs, files in os.walk(library):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                code.append([os.path.relpath(os.path.join(folder, name), library), info.st_size, info.st_mtime_ns])
    return [
        str(vault.root.resolve()),
        vault.template_folders,
        _settings_text(vault.root, "daily-notes.json"),  # where daily notes live (with the schema: daily.settings)
        schema.data,
        str(schema.source),
        code,
        str(today),
    ]


def _digest(parts: list):
    """A blake2b digest of ``parts`` (:func:`_key_parts`), to be extended."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20)


def _report_key(parts: list, index: NoteIndex) -> str:
    """The key of a report: ``parts`` (:func:`_key_parts`), the file list
    and every note's stamp (as the index file's digest of them, when it
    has one)."""
    key = _digest(parts)
    key.update(b"\0state\0" + index.state())
    return key.hexdigest()


def _context(parts: list, vault: Vault, schema: Schema) -> str:
    """The key of what a patched report may not assume (:mod:`health_facts`):
    ``parts``, the vault's file list and its generated Maps of Content,
    not the notes' stamps."""
    from ..write.index_update import files_key

    key = _digest(parts)
    key.update(b"\0files\0" + files_key(vault).encode())  # a digest of every path; the update took it already
    key.update(b"\0generated\0" + "\0".join(sorted(vault.generated_mocs(schema))).encode("utf-8", "surrogatepass"))
    return key.hexdigest()


def _settings_text(root: Path, name: str) -> str | None:
    """The text of Obsidian's settings file ``.obsidian/NAME`` as it is
    (None when it cannot be read): a key that changes with it, without
    reading what it says."""
    try:
        return jsonfile.read_bytes(root / ".obsidian" / name, 1 << 20).decode("utf-8", "replace")
    except (OSError, jsonfile.NotAFile):
        return None


def previous_entry(root: Path) -> dict | None:
    """The last well-formed line of ``.graph/health-history.jsonl``, or None.

    A damaged history (not JSON, too deeply nested, a score that is not a
    finite number) is skipped line by line, never trusted.
    """
    try:
        data = jsonfile.read_bytes(root / GRAPH_DIR / HISTORY)  # never a FIFO's endless wait
    except (OSError, jsonfile.NotAFile):
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    for line in reversed(lines):
        try:
            entry = json.loads(line, parse_constant=_reject)
        except (ValueError, RecursionError):
            continue
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("score"), (int, float))
            and not isinstance(entry["score"], bool)
            and math.isfinite(entry["score"])
            and isinstance(entry.get("time", ""), str)
        ):
            return entry
    return None


def _reject(constant: str):
    raise ValueError(f"{constant} is not a number")


def append_history(root: Path, report: dict, when: str) -> Path:
    """Append this report's summary line to ``.graph/health-history.jsonl``.
    Raises OSError or :class:`PathError` when it cannot be written."""
    return derived.append_line(root, HISTORY, json.dumps(history_entry(report, when), ensure_ascii=False))


def history_entry(report: dict, when: str) -> dict:
    """The one-line summary of a report that ``.graph/health-history.jsonl`` keeps."""
    return {
        "time": when,
        "score": report["score"],
        "notes": report["notes"],
        "links": report["links"],
        "broken_links": len(report["broken_links"]),
        "orphans": len(report["orphans"]),
        "dead_ends": len(report["dead_ends"]),
        "ambiguous_links": len(report["ambiguous_links"]),
        "broken_anchors": len(report["broken_anchors"]),
        "description_coverage": report["description_coverage"],
        "invalid_frontmatter": len(report["invalid_frontmatter"]) + len(report["unreadable"]),
        "stale_share": report.get("stale_share", 0.0),
        "tiers": report.get("tiers", {}),
    }


def record_run(root: Path, report: dict) -> str | None:
    """Append ``report`` to ``.graph/health-history.jsonl``, stamped with the
    local time now (ISO 8601, seconds).  Returns None, or why the line could
    not be written (an OSError, a path the store refuses): the history only
    draws the trend, so a run that cannot add to it still reports."""
    when = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    try:
        append_history(root, report, when)
    except (OSError, PathError, TargetError) as exc:
        return str(exc)
    return None


def health_text(report: dict) -> str:
    """The human report of ``graph.py health``: the score (and its change
    since ``report["previous"]``, the last history entry, when there is
    one), the counts, then each kind of finding with at most
    :data:`listing.SHOWN` rows.  Lines joined by "\\n", no final newline."""
    previous = report.get("previous")
    trend = ""
    if previous is not None:
        delta = report["score"] - previous["score"]
        trend = f"  ({delta:+.1f} since {printable(str(previous.get('time', 'the last run')))})"
    lines = [
        f"health: {report['score']}/100{trend}",
        f"notes {report['notes']} · links {report['links']} ({report['avg_links']} per note)"
        f" · attachments {report['attachments']} · hubs {len(report['hubs'])}",
        f"broken links {len(report['broken_links'])} · orphans {len(report['orphans'])}"
        f" · dead ends {len(report['dead_ends'])} · ambiguous links {len(report['ambiguous_links'])}"
        f" · broken anchors {len(report['broken_anchors'])}",
        f"description coverage {report['description_coverage']:.0%}"
        f" · invalid frontmatter {len(report['invalid_frontmatter'])}"
        f" · unreadable {len(report['unreadable'])}",
    ]
    recall = report.get("recall")
    if recall and recall["dated"]:
        lines.append(
            f"stale {report['stale_share']:.0%} of {recall['dated']} dated cards (> {recall['stale_days']:g} days)"
            " · tiers " + counts(report["tiers"].items())
        )
    memory = report.get("memory")
    if memory:
        lines.append(_memory_line(memory))
    sections = [
        ("Broken links", [f"{r['source']}:{r['line']}  {r['target']}" for r in report["broken_links"]]),
        ("Broken anchors", [f"{r['source']}:{r['line']}  {r['target']}" for r in report["broken_anchors"]]),
        (
            "Invalid frontmatter",
            [f"{r['path']}:{r['line']}:{r['column']}  {r['error']}" for r in report["invalid_frontmatter"]],
        ),
        ("Unreadable", [f"{r['path']}  {r['error']}" for r in report["unreadable"]]),
        (
            "Paths that differ only in case (a macOS or Windows checkout keeps one)",
            ["  ".join(group) for group in report.get("case_collisions", [])],
        ),
        (
            "Sync conflict copies (fold what they add into the note, then remove them)",
            [f"{r['path']}  (a copy of {r['copy_of']})" for r in report.get("conflict_copies", [])],
        ),
        ("Orphans", report["orphans"]),
        ("Dead ends", report["dead_ends"]),
        (
            "Ambiguous links",
            [
                f"{r['source']}:{r['line']}  {r['target']} -> {r['resolved']} (of {len(r['candidates'])})"
                for r in report["ambiguous_links"]
            ],
        ),
    ]
    if memory:
        sections += _memory_sections(memory)
    for title, rows in sections:
        block = section(title, rows)
        if block:
            lines += [""] + block
    return "\n".join(lines)


def _memory_line(memory: dict) -> str:
    """The one line of the ``memory`` section's counts (:func:`quality.section`)."""
    c = memory["counts"]
    return (
        f"memory: probable duplicates {c['probable_duplicates']} · identity conflicts {c['identity_conflicts']}"
        f" · superseded but live {c['superseded_live']}"
        f" · daily notes not processed {c['unprocessed_daily']} of {c['daily_notes']}"
        f" · {c['flagged']} of {c['cards']} cards flagged ({memory['share']:.0%})"
    )


def _memory_sections(memory: dict) -> list[tuple[str, list[str]]]:
    """The ``memory`` section's findings as ``(title, rows)`` for the
    human report, each row one line."""
    return [
        (
            "Probable duplicates",
            [
                f"{' + '.join(r['cards'])}  ({r['by']} {r['key']}, {r['confidence']})"
                for r in memory["probable_duplicates"]
            ],
        ),
        (
            "Identity conflicts",
            [
                f"{r['key']}  {', '.join(r['cards'])}" + ("" if r["grouped"] else "  (dedup refuses: a person decides)")
                for r in memory["identity_conflicts"]
            ],
        ),
        ("Superseded but live", [f"{r['path']}  (superseded by {r['by']})" for r in memory["superseded_live"]]),
        ("Daily notes not processed", [f"{r['path']}  ({r['state']})" for r in memory["unprocessed_daily"]]),
    ]
