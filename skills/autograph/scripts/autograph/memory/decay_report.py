"""What ``engine.py decay``, ``touch``, ``creative`` and ``stats`` report.

Each ``*_data`` function returns the object ``--json`` prints (its keys in
the order printed, as the epilogs of ``engine.py`` list them); each
``*_lines`` function returns the lines of the human report, made from that
same object, so the two reports cannot disagree.  Nothing here prints or
writes: the script prints the lines, and ``cli.print_outcome`` tells the
writes between them.  The plans themselves are :mod:`decay`'s.
"""

from __future__ import annotations

import datetime
from collections import Counter

from ..read.text import counts as counted
from ..read.text import plural, printable
from .decay import CardCache, Plan, Reading, Settings, creative, read_cards, stats

__all__ = [
    "creative_data",
    "creative_lines",
    "decay_data",
    "decay_lines",
    "description",
    "SHOWN",
    "skipped_lines",
    "stats_data",
    "stats_lines",
    "touch_data",
    "touch_lines",
]

SHOWN = 20  # skipped cards a human report lists; --json lists all


def skipped_lines(skipped: list[dict]) -> list[str]:
    """The cards a run left alone (``[{path, reason, detail}]``): a line of
    counts per reason, most first, then the first :data:`SHOWN` cards;
    ``[]`` for none."""
    if not skipped:
        return []
    counts = Counter(item["reason"] for item in skipped)
    lines = ["skipped: " + counted(counts.most_common())]
    for item in skipped[:SHOWN]:
        lines.append(f"  {printable(item['path'])}: {item['reason']}: {printable(item['detail'])}")
    if len(skipped) > SHOWN:
        lines.append(f"  ... {len(skipped) - SHOWN} more (--json lists all)")
    return lines


# ---------------------------------------------------------------------------
# decay


def decay_data(plan: Plan, settings: Settings, today: datetime.date, outcome: dict) -> dict:
    """``engine.py decay --json``: ``today`` (YYYY-MM-DD), ``store_relevance``,
    ``cards`` (read), ``tiers`` ({tier: cards} after the run),
    ``transitions`` ({"from->to": notes}, most first; "none" for no tier),
    ``relevance_removed`` (notes), ``skipped`` ([{path, reason, detail}]),
    ``skipped_by_reason`` ({reason: cards}), then ``outcome`` (what
    ``cli.carry_out`` returned: edits, written, conflicts, failed, run)."""
    return {
        "today": today.isoformat(),
        "store_relevance": settings.store_relevance,
        "cards": len(plan.readings),
        "tiers": plan.tiers(),
        "transitions": dict(plan.transitions.most_common()),
        "relevance_removed": len(plan.relevance_removed),
        "skipped": plan.skipped,
        "skipped_by_reason": plan.skipped_by_reason(),
        **outcome,
    }


def decay_lines(data: dict) -> list[str]:
    """The head of the human report of :func:`decay_data`'s ``data``: the
    cards per tier, the tier changes and the relevance keys removed.  The
    edits and the skipped cards (:func:`skipped_lines`) follow it."""
    tiers = counted(data["tiers"].items(), " · ")
    lines = [f"decay {data['today']}: {plural(data['cards'], 'card')} · {tiers}"]
    if data["transitions"]:
        changes = ", ".join(f"{k.replace('->', ' -> ')} {n}" for k, n in data["transitions"].items())
        lines.append(f"tier changes: {changes}")
    if data["relevance_removed"]:
        lines.append(f"relevance removed from {plural(data['relevance_removed'], 'note')} (store_relevance false)")
    return lines


# ---------------------------------------------------------------------------
# touch


def touch_data(plan: Plan, today: datetime.date, outcome: dict) -> dict:
    """``engine.py touch --json``: ``today``, ``touched`` (:attr:`Plan.results`:
    [{path, tier_before, tier, access_count, last_accessed, note}]),
    ``skipped`` ([{path, reason, detail}]), then ``outcome`` (``cli.carry_out``'s)."""
    return {"today": today.isoformat(), "touched": plan.results, "skipped": plan.skipped, **outcome}


def touch_lines(data: dict, applied: bool) -> list[str]:
    """The human report of :func:`touch_data`'s ``data``: each card touched
    (``applied``: whether the run wrote, else it is a dry run), the cards
    skipped, and the notes not written (conflicts, failures)."""
    lines = _touched_lines(data, applied) + skipped_lines(data["skipped"])
    for item in data["conflicts"] + data["failed"]:
        lines.append(f"not written: {printable(item['path'])}: {printable(item['error'])}")
    return lines


def _touched_lines(data: dict, applied: bool) -> list[str]:
    written = set(data["written"])
    lines = []
    for item in data["touched"]:
        state = "" if not applied or item["path"] in written else " (not written)"
        before = item["tier_before"] or "no tier"
        lines.append(
            f"touched {printable(item['path'])}: {before} -> {item['tier']}, access_count "
            f"{item['access_count']}, last_accessed {item['last_accessed']}{state}" + ("" if applied else " (dry run)")
        )
        if item["note"]:
            lines.append(f"  note: {printable(item['note'])}")
    return lines


# ---------------------------------------------------------------------------
# creative


def creative_data(vault, schema, today: datetime.date, settings: Settings, n: int, seed=None) -> dict:
    """``engine.py creative --json``: up to ``n`` cards drawn from the
    coldest tiers (:func:`decay.creative`) with ``seed`` (None: ``today``,
    so the picks hold for a day).  Keys: ``today``, ``seed``, ``pool``
    (cards in archive and cold), ``picks`` ([{path, tier, days (since the
    last access), relevance, description (:func:`description`)}]).  With
    ``--touch`` the script adds :func:`touch_data`'s keys."""
    readings = read_cards(vault, schema, today, settings, cache=CardCache(vault))
    seed = seed if seed is not None else today.isoformat()
    picks = creative(readings, n, seed)
    return {
        "today": today.isoformat(),
        "seed": seed,
        "pool": sum(r.tier in ("archive", "cold") for r in readings),
        "picks": [
            {"path": r.path, "tier": r.tier, "days": r.days, "relevance": r.relevance, "description": description(r)}
            for r in picks
        ],
    }


def description(reading: Reading) -> str:
    """One line that says what a card is: its ``description``, else its
    note name; white space runs made one space, at most 80 characters
    (cut with ``…``)."""
    value = reading.properties.get("description")
    text = value.strip() if isinstance(value, str) and value.strip() else reading.path.rsplit("/", 1)[-1][:-3]
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:79] + "…"


def creative_lines(data: dict, applied: bool) -> list[str]:
    """The human report of :func:`creative_data`'s ``data``: the draw, each
    pick with its description, and with ``--touch`` (``touched`` in
    ``data``) the cards touched and skipped (``applied`` as for
    :func:`touch_lines`)."""
    lines = [
        f"creative recall {data['today']} (seed {printable(str(data['seed']))}): "
        f"{plural(len(data['picks']), 'card')} of {data['pool']} cold or archived"
    ]
    for item in data["picks"]:
        lines.append(f"  {printable(item['path'])}  [{item['tier']}, {item['days']} days]")
        if item["description"]:
            lines.append(f"      {printable(item['description'])}")
    if "touched" in data:
        lines += _touched_lines(data, applied) + skipped_lines(data["skipped"])
    return lines


# ---------------------------------------------------------------------------
# stats


def stats_data(vault, schema, today: datetime.date, settings: Settings) -> dict:
    """``engine.py stats --json``: ``today`` and :func:`decay.stats` of every
    card as its dates give it on ``today`` (read through the card cache,
    which a read-only run never writes)."""
    readings = read_cards(vault, schema, today, settings, cache=CardCache(vault))
    return {"today": today.isoformat(), **stats(readings, settings)}


def stats_lines(data: dict) -> list[str]:
    """The human report of :func:`stats_data`'s ``data``: a bar per tier,
    the cards without a usable date, the stale and never-touched shares,
    the working set, and the tiers per type when there are several types."""
    lines = [f"stats {data['today']}: {plural(data['cards'], 'card')}"]
    width = max([n for n in data["tiers"].values()] + [1])
    for name, n in data["tiers"].items():
        bar = "#" * round(40 * n / width)
        lines.append(f"  {name:<8} {n:>7,}  {bar}")
    for label, key in (("undated", "undated"), ("not a date", "not_dates"), ("not read", "unreadable")):
        if data[key]:
            lines.append(f"  {label:<8} {data[key]:>7,}")
    lines.append(
        f"stale (> {data['stale_days']:g} days): {data['stale']:,} of {data['dated']:,} dated cards "
        f"({data['stale_share']:.1%}); never touched: {data['never_touched']:,} ({data['never_touched_share']:.1%})"
    )
    lines.append(
        f"working set (active + warm): {data['working_set_bytes']:,} bytes, about {data['working_set_tokens']:,} tokens"
    )
    if len(data["by_type"]) > 1:
        lines.append("by type:")
        for kind, tiers in data["by_type"].items():
            lines.append(f"  {printable(kind)}: " + counted((t, n) for t, n in tiers.items() if n))
    return lines
