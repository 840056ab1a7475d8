"""The vault report: one self-contained HTML page a person opens in a browser.

:func:`collect` gathers what the page shows through the library (the health
report of :func:`health.health_report`, backlinks counted in one pass over the notes,
findings of :func:`compliance.check`, and the history files under
``.graph/``); :func:`render` turns that into HTML; :func:`counts` is the
summary ``graph.py report --json`` prints.  Only :func:`publish` writes a
file: the page, where ``graph.py report`` puts it (through the store).

The page has no script and loads nothing: its CSS is inline, its charts are
inline SVG drawn by :mod:`svg`, and a Content-Security-Policy forbids
scripts, so a note named ``<script>`` is text (every piece of vault text is
escaped with :func:`svg.esc`).  It reads at phone and desktop widths and
follows the system's dark mode (``prefers-color-scheme``).

Sections:

* **Health score over time**: one point per well-formed line of
  ``.graph/health-history.jsonl`` (written by ``graph.py health``; see
  :func:`health.history_entry`), in file order, evenly spaced.
* **Tiers over time**: a stacked chart from ``.graph/decay-history.jsonl``
  when decay has run (else a one-line note).  That file's format, for the
  decay command to write (one line per run, appended)::

      {"time": "2026-12-01T03:00:00+01:00",
       "tiers": {"core": 12, "active": 40, "warm": 85, "cold": 30, "archive": 7}}

  ``time`` is an ISO 8601 string; ``tiers`` maps a tier name to the number
  of notes in it after the run (a whole number, 0 or more).  The known tiers
  are drawn bottom up in the order core, active, warm, cold, archive; other
  names follow in alphabetical order; a tier missing from a line counts 0.
  Other keys are allowed and ignored; lines that are not such an object are
  skipped.
* **Memory**: the ``memory`` section of the health report
  (:func:`quality.section`): probable duplicates, identity conflicts, cards
  superseded but still live and daily notes not processed, their counts,
  the share of cards they name and the points it takes off the score
  (``identity.health_weight``; none when it is not set).
* **Broken links and orphans by folder** (a broken link counts in the folder
  of the note that holds it; the vault root is shown as ``/``); folders
  with neither are only counted; then a sync client's conflict copies, each
  with the note it copies (:mod:`read.conflicts`).
* **Most and least linked notes**: links from other notes that resolve to
  the note (and how many notes they come from); hubs are left out of the
  least linked.
* **Schema compliance by type**: the cards (:meth:`Vault.cards`) grouped by
  their ``type`` property as written, with :func:`compliance.score` and the
  findings by severity and rule for each.
"""

from __future__ import annotations

import datetime
import json
import math
import os
from pathlib import Path

from ..read import jsonfile
from ..read.index import NoteIndex
from ..read.text import plural, printable
from ..read.vault import GRAPH_DIR, Vault
from ..schema import compliance
from ..schema.model import Schema
from ..write import derived
from ..write.replace import Conflict
from . import health, svg
from .svg import esc

__all__ = [
    "collect",
    "counts",
    "DECAY_HISTORY",
    "default_path",
    "output_path",
    "publish",
    "read_decay_history",
    "read_history",
    "render",
    "REPORT",
    "report_text",
    "TIERS",
]

REPORT = "report.html"
DECAY_HISTORY = "decay-history.jsonl"
TIERS = ("core", "active", "warm", "cold", "archive")
TOP = 10  # notes in each of the most and least linked lists
MAX_ROWS = 200  # rows of a long list shown before "... N more"
RECENT = 10  # runs in the table under the trend chart
NO_TYPE = "(no type)"
OPEN = 10  # lists this short are shown unfolded


# ---------------------------------------------------------------------------
# History files


def _lines(root: Path, name: str) -> list[dict]:
    """The JSON objects of ``.graph/<name>``, one per line; bad lines skipped,
    a missing or unreadable file (a FIFO, a folder) gives none."""
    try:
        data = jsonfile.read_bytes(Path(root) / GRAPH_DIR / name)
    except (OSError, ValueError):  # NotAFile is a ValueError
        return []
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            entry = json.loads(line, parse_constant=_reject)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict) and isinstance(entry.get("time", ""), str):
            found.append(entry)
    return found


def _reject(constant: str):
    raise ValueError(f"{constant} is not a number")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_history(root: Path) -> list[dict]:
    """Every well-formed line of ``.graph/health-history.jsonl`` (the rule of
    :func:`health.previous_entry`: an object whose score is a finite number),
    in file order."""
    return [entry for entry in _lines(root, health.HISTORY) if _number(entry.get("score"))]


def read_decay_history(root: Path) -> list[dict]:
    """Every well-formed line of ``.graph/decay-history.jsonl`` (format in the
    module docstring) as ``{"time", "tiers"}``, counts that are not whole
    numbers of 0 or more dropped."""
    found = []
    for entry in _lines(root, DECAY_HISTORY):
        tiers = entry.get("tiers")
        if not isinstance(tiers, dict):
            continue
        clean = {
            str(name): int(count)
            for name, count in tiers.items()
            if _number(count) and count >= 0 and count == int(count)
        }
        found.append({"time": entry.get("time", ""), "tiers": clean})
    return found


# ---------------------------------------------------------------------------
# Collecting


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _type_of(properties: dict) -> str:
    """The note's ``type`` as written (the key read ignoring letter case, as
    Obsidian reads it); a list or number is shown as text."""
    value = properties.get("type")
    if value is None:
        value = next((v for k, v in properties.items() if isinstance(k, str) and k.lower() == "type"), None)
    if value is None or value == "" or value == []:
        return NO_TYPE
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def collect(vault: Vault, schema: Schema, index: NoteIndex | None = None, now: str | None = None) -> dict:
    """Everything the report shows, as JSON-ready data (see :func:`render`)."""
    index = index if index is not None else NoteIndex(vault)
    report = health.health_report(vault, schema, index)
    hubs = set(report["hubs"])
    checked = compliance.check(vault, schema)
    by_path: dict[str, list] = {}
    for finding in checked.findings:
        by_path.setdefault(finding.path, []).append(finding)
    card_set = vault.card_set(schema)
    incoming: dict[str, list] = {}  # note -> [links to it from other notes, those notes, the last of them]
    types: dict[str, dict] = {}
    for path, summary in index.each(vault.notes, targets=True):  # one pass; where links lead is stored by now
        for target, _candidates, _ambiguous in summary.targets:
            if target is not None and target != path:
                count = incoming.get(target)
                if count is None:
                    count = incoming[target] = [0, 0, None]
                count[0] += 1
                if count[2] != path:  # a note's links come together: a new note is the next one
                    count[1], count[2] = count[1] + 1, path
        if path in card_set:
            kind = _type_of(summary.properties)
            entry = types.setdefault(kind, {"type": kind, "cards": 0, "clean": 0, "findings": []})
            entry["cards"] += 1
            found = by_path.get(path, [])
            entry["clean"] += not found
            entry["findings"].extend(found)

    folders: dict[str, dict] = {}

    def row(folder: str) -> dict:
        return folders.setdefault(folder, {"folder": folder, "notes": 0, "broken_links": 0, "orphans": 0})

    for path in vault.notes:
        row(_folder(path))["notes"] += 1
    for item in report["broken_links"]:
        row(_folder(item["source"]))["broken_links"] += 1
    for path in report["orphans"]:
        row(_folder(path))["orphans"] += 1

    linked = []
    for path in vault.notes:
        links, notes, _last = incoming.get(path, (0, 0, None))
        linked.append({"path": path, "links": links, "notes": notes})
    most = sorted((r for r in linked if r["links"]), key=lambda r: (-r["links"], -r["notes"], r["path"]))[:TOP]
    shown = {r["path"] for r in most}
    least = sorted(
        (r for r in linked if r["path"] not in hubs and r["path"] not in shown),
        key=lambda r: (r["links"], r["notes"], r["path"]),
    )[:TOP]

    by_type = []
    for entry in types.values():
        findings = entry.pop("findings")
        severities = {level: 0 for level in (compliance.ERROR, compliance.WARNING, compliance.INFO)}
        rules: dict[str, int] = {}
        for finding in findings:
            severities[finding.severity] = severities.get(finding.severity, 0) + 1
            rules[finding.rule] = rules.get(finding.rule, 0) + 1
        entry.update(severities)
        entry["score"] = compliance.score(entry["cards"], findings)
        entry["rules"] = dict(sorted(rules.items(), key=lambda item: (-item[1], item[0])))
        by_type.append(entry)
    by_type.sort(key=lambda e: (e["score"], -e["cards"], e["type"]))

    return {
        "vault": str(vault.root),
        "name": vault.root.resolve().name or str(vault.root),
        "generated": now or datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "health": report,
        "history": read_history(vault.root),
        "decay": read_decay_history(vault.root),
        "folders": sorted(folders.values(), key=lambda r: (-(r["broken_links"] + r["orphans"]), r["folder"])),
        "most_linked": most,
        "least_linked": least,
        "compliance": {"score": checked.score, "cards": checked.notes, "findings": len(checked.findings)},
        "types": by_type,
    }


def counts(data: dict) -> dict:
    """The ``sections`` object of ``graph.py report --json``: what each
    section of the page holds, as counts."""
    report = data["health"]
    folders = data["folders"]
    return {
        "health": {
            "score": report["score"],
            "notes": report["notes"],
            "links": report["links"],
            "broken_links": len(report["broken_links"]),
            "orphans": len(report["orphans"]),
            "conflict_copies": len(report.get("conflict_copies", [])),
        },
        "trend": {"points": len(data["history"])},
        "tiers": {"points": len(data["decay"])},
        "memory": _memory_counts(report),
        "folders": {
            "folders": len(folders),
            "with_findings": sum(1 for r in folders if r["broken_links"] or r["orphans"]),
        },
        "most_linked": len(data["most_linked"]),
        "least_linked": len(data["least_linked"]),
        "compliance": {
            "score": data["compliance"]["score"],
            "cards": data["compliance"]["cards"],
            "findings": data["compliance"]["findings"],
            "types": len(data["types"]),
        },
    }


def _memory_counts(report: dict) -> dict:
    """The memory section's counts for ``graph.py report --json``."""
    memory = report.get("memory") or {}
    found = memory.get("counts", {})
    keys = ("probable_duplicates", "identity_conflicts", "superseded_live", "unprocessed_daily", "flagged")
    return {**{key: found.get(key, 0) for key in keys}, "share": memory.get("share", 0.0)}


# ---------------------------------------------------------------------------
# Rendering

CSS = """
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --card: #ffffff; --fg: #1c1f24; --muted: #5b6370; --line: #dde1e6;
  --accent: #2563c9; --bad: #c23b22; --warn: #a86b00; --good: #1f7a4d; --track: #eceff3;
  --s0: #1f5fbf; --s1: #2f9e6e; --s2: #e0a526; --s3: #7b8794; --s4: #b3bcc6; --s5: #a05fc0;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111418; --card: #1a1e24; --fg: #e4e7ec; --muted: #9ba4b0; --line: #2e343d;
    --accent: #6ea2ff; --bad: #ff7a66; --warn: #f0b43c; --good: #4cc38a; --track: #262b33;
    --s0: #5b93f0; --s1: #3fbf88; --s2: #e8b840; --s3: #7d8896; --s4: #4a535f; --s5: #c38be0;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
main { max-width: 1160px; margin: 0 auto; padding: 16px 14px 40px; }
header h1 { font-size: 1.5rem; line-height: 1.25; margin: 8px 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 0 0 10px; }
h3 { font-size: 1rem; margin: 14px 0 6px; }
p { margin: 6px 0; }
.meta, .note, figcaption { color: var(--muted); font-size: 0.9rem; overflow-wrap: anywhere; }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; margin: 14px 0; }
.tile { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 10px 12px; }
.tile .value { font-size: 1.6rem; font-weight: 650; line-height: 1.2; font-variant-numeric: tabular-nums; }
.tile .label { color: var(--muted); font-size: 0.85rem; }
.grid { display: grid; grid-template-columns: minmax(0, 1fr); gap: 14px; }
@media (min-width: 900px) { .grid.two { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); } }
section {
  background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 14px; margin: 14px 0; min-width: 0;
}
.grid > section { margin: 0; }
figure { margin: 0; }
svg.chart { display: block; width: 100%; height: auto; max-height: 420px; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .axis { fill: var(--muted); font-size: 14px; font-family: inherit; }
svg .line { fill: none; stroke: var(--accent); stroke-width: 2.5; stroke-linejoin: round; stroke-linecap: round; }
svg .point { fill: var(--card); stroke: var(--accent); stroke-width: 2; }
svg .area { stroke: var(--card); stroke-width: 0.75; }
.s0 { fill: var(--s0); background: var(--s0); } .s1 { fill: var(--s1); background: var(--s1); }
.s2 { fill: var(--s2); background: var(--s2); } .s3 { fill: var(--s3); background: var(--s3); }
.s4 { fill: var(--s4); background: var(--s4); } .s5 { fill: var(--s5); background: var(--s5); }
@media (max-width: 600px) { svg .axis { font-size: 21px; } }
.legend { list-style: none; padding: 0; margin: 8px 0 0; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.legend li { font-size: 0.9rem; overflow-wrap: anywhere; }
.swatch {
  display: inline-block; width: 0.8em; height: 0.8em; border-radius: 2px; margin-right: 5px; vertical-align: -1px;
}
table { width: 100%; border-collapse: collapse; font-size: 0.93rem; }
th, td {
  text-align: left; padding: 6px 6px; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: anywhere;
}
th { color: var(--muted); font-weight: 600; font-size: 0.85rem; }
td.num, th.num {
  text-align: right; font-variant-numeric: tabular-nums; width: 1%; white-space: nowrap; overflow-wrap: normal;
}
th { white-space: nowrap; }
tr:last-child td { border-bottom: 0; }
.path { overflow-wrap: anywhere; word-break: break-word; }
.rules { display: block; color: var(--muted); font-size: 0.82rem; }
.bar { display: block; height: 6px; margin-top: 5px; border-radius: 3px; background: var(--track); overflow: hidden; }
.bar > span { display: block; height: 100%; border-radius: 3px; background: var(--accent); }
.bar.bad > span { background: var(--bad); } .bar.good > span { background: var(--good); }
.bar.warn > span { background: var(--warn); }
.bad { color: var(--bad); } .good { color: var(--good); } .warn { color: var(--warn); }
ol.notes, ul.plain { margin: 0; padding-left: 1.4em; }
ol.notes li, ul.plain li { margin: 3px 0; overflow-wrap: anywhere; }
ol.notes .count { color: var(--muted); font-variant-numeric: tabular-nums; white-space: nowrap; }
details { margin-top: 10px; }
summary { cursor: pointer; color: var(--accent); }
code {
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; overflow-wrap: anywhere;
}
footer { color: var(--muted); font-size: 0.85rem; margin-top: 18px; }
@media (max-width: 600px) {
  main { padding: 10px 10px 32px; }
  section { padding: 12px 10px; }
  .tiles { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  th, td { padding: 6px 4px; }
  table { font-size: 0.9rem; }
}
"""

# no script of any kind, nothing loaded from anywhere: styles inline only
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def _when(text: str) -> str:
    """A history time as ``2026-11-20 14:03`` (the text itself when it is not ISO 8601)."""
    try:
        moment = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return text
    return moment.strftime("%Y-%m-%d %H:%M")


def _day(text: str) -> str:
    try:
        return datetime.datetime.fromisoformat(text).strftime("%Y-%m-%d")
    except (TypeError, ValueError):
        return text[:16]


def _bar(share: float, tone: str = "") -> str:
    width = max(0.0, min(1.0, share)) * 100
    return f'<span class="bar {tone}"><span style="width:{width:.1f}%"></span></span>'


def _tone(score: float) -> str:
    return "good" if score >= 90 else "warn" if score >= 70 else "bad"


def _tile(value: str, label: str, tone: str = "") -> str:
    cls = f"value {tone}".strip()
    return f'<div class="tile"><div class="{cls}">{value}</div><div class="label">{label}</div></div>'


def _listing(title: str, items: list, row, item_attrs: str = "") -> str:
    """A folding list of the first :data:`MAX_ROWS` ``items`` (each shown by
    ``row``, HTML-escaped already) under ``title (count)``; "" for none."""
    if not items:
        return ""
    listed = "".join(f"<li{item_attrs}>{row(item)}</li>" for item in items[:MAX_ROWS])
    return (
        f'<details{_open(items)}><summary>{title} ({len(items)})</summary><ul class="plain">{listed}</ul>'
        f"{_more(len(items), MAX_ROWS, title.lower())}</details>"
    )


def _more(total: int, shown: int, what: str) -> str:
    return f'<p class="note">… {total - shown} more {what}</p>' if total > shown else ""


# a chart's heading, and what its section says when there is nothing to draw yet (HTML)
_NO_DATA = {
    "trend": (
        "Health score over time",
        "No history yet: each <code>graph.py health</code> run adds a point to "
        "<code>.graph/health-history.jsonl</code>.",
    ),
    "tiers": ("Tiers over time", "Decay has not run on this vault yet (no <code>.graph/decay-history.jsonl</code>)."),
}


def _without_data(section: str) -> str:
    """A chart's section when there is nothing to draw yet: its heading and why."""
    title, note = _NO_DATA[section]
    return f'<section id="{section}"><h2>{title}</h2><p class="note">{note}</p></section>'


def _trend(data: dict) -> str:
    history = data["history"]
    if not history:
        return _without_data("trend")
    out = ['<section id="trend"><h2>Health score over time</h2>']
    scores = [float(entry["score"]) for entry in history]
    lo = max(0.0, math.floor((min(scores) - 2) / 10) * 10)
    hi = 100.0 if max(scores) <= 100 else math.ceil(max(scores) / 10) * 10
    times = [str(entry.get("time", "")) for entry in history]
    labels = [_day(t) if t else f"run {i + 1}" for i, t in enumerate(times)]
    tips = [f"{_when(t) or f'run {i + 1}'}: {_fmt(s)}" for i, (t, s) in enumerate(zip(times, scores, strict=True))]
    first, last = scores[0], scores[-1]
    delta = last - first
    sign = "good" if delta > 0 else "bad" if delta < 0 else ""
    out.append(
        f'<p>Last run <strong class="{_tone(last)}">{_fmt(last)}</strong> · '
        f'<span class="{sign}">{delta:+.1f}</span> since the first of {len(history)} '
        f"run{'s' if len(history) != 1 else ''} ({esc(_when(times[0]))})</p>"
    )
    chart = svg.line_chart(scores, labels, tips, "Health score per run of graph.py health", lo, hi)
    out.append(f"<figure>{chart}<figcaption>One point per run of <code>graph.py health</code>.</figcaption></figure>")
    recent = history[-RECENT:]
    rows = []
    previous = history[-RECENT - 1]["score"] if len(history) > RECENT else None
    for entry in recent:
        score = float(entry["score"])
        change = "" if previous is None else f"{score - float(previous):+.1f}".replace("+0.0", "0").replace("-0.0", "0")
        previous = score
        cells = [
            f'<td class="path">{esc(_when(str(entry.get("time", ""))))}</td>',
            f'<td class="num">{_fmt(score)}</td>',
            f'<td class="num">{esc(change)}</td>',
        ]
        for key in ("broken_links", "orphans"):
            value = entry.get(key)
            cells.append(f'<td class="num">{esc(_fmt(value)) if _number(value) else "–"}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    out.append(
        f"<details><summary>Last {len(recent)} runs</summary><table><thead><tr><th>time</th>"
        '<th class="num">score</th><th class="num">change</th><th class="num">broken</th>'
        f'<th class="num">orphans</th></tr></thead><tbody>{"".join(reversed(rows))}</tbody></table></details>'
    )
    out.append("</section>")
    return "".join(out)


def _tier_names(decay: list[dict]) -> list[str]:
    seen = {name for entry in decay for name in entry["tiers"]}
    return [name for name in TIERS if name in seen] + sorted(seen - set(TIERS))


def _tiers(data: dict) -> str:
    decay = data["decay"]
    if not decay:
        return _without_data("tiers")
    out = ['<section id="tiers"><h2>Tiers over time</h2>']
    names = _tier_names(decay)
    rows = [[float(entry["tiers"].get(name, 0)) for name in names] for entry in decay]
    labels = [_day(str(entry["time"])) if entry["time"] else f"run {i + 1}" for i, entry in enumerate(decay)]
    chart = svg.stacked_chart(rows, names, labels, "Notes per tier after each decay run")
    latest = decay[-1]["tiers"]
    legend = "".join(
        f'<li><span class="swatch s{min(k, 5)}"></span>{esc(name)} {latest.get(name, 0)}</li>'
        for k, name in enumerate(names)
    )
    out.append(
        f"<figure>{chart}<figcaption>Notes per tier after each of {len(decay)} decay "
        f"run{'s' if len(decay) != 1 else ''}; the legend gives the last.</figcaption></figure>"
        f'<ul class="legend">{legend}</ul></section>'
    )
    return "".join(out)


def _open(items: list) -> str:
    """Short lists are shown open; long ones folded."""
    return " open" if len(items) <= OPEN else ""


def _folders(data: dict) -> str:
    report = data["health"]
    folders = data["folders"]
    worst = max((r["broken_links"] + r["orphans"] for r in folders), default=0) or 1
    out = ['<section id="folders"><h2>Broken links and orphans by folder</h2>']
    found = [r for r in folders if r["broken_links"] or r["orphans"]]
    clean = len(folders) - len(found)
    if not found:
        out.append(f'<p class="good">No broken links and no orphans in {len(folders)} folders.</p>')
    else:
        shown = found[:MAX_ROWS]
        rows = []
        for r in shown:
            name = esc(r["folder"] + "/") if r["folder"] else "/ (vault root)"
            share = (r["broken_links"] + r["orphans"]) / worst
            rows.append(
                f'<tr><td class="path">{name}{_bar(share, "bad")}</td>'
                f'<td class="num">{r["notes"]}</td><td class="num">{r["broken_links"]}</td>'
                f'<td class="num">{r["orphans"]}</td></tr>'
            )
        out.append(
            '<table><thead><tr><th>folder</th><th class="num">notes</th><th class="num">broken</th>'
            f'<th class="num">orphans</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )
        out.append(_more(len(found), len(shown), "folders"))
        if clean:
            out.append(f'<p class="note">{clean} other folder{"s have" if clean != 1 else " has"} none.</p>')
    out.append(
        _listing(
            "Broken links",
            report["broken_links"],
            lambda b: f'<span class="path">{esc(b["source"])}:{b["line"]}</span> → <code>{esc(b["target"])}</code>',
        )
    )
    out.append(_listing("Orphans", report["orphans"], lambda path: esc(path), ' class="path"'))
    out.append(
        _listing(
            "Sync conflict copies",
            report.get("conflict_copies", []),
            lambda c: (
                f'<span class="path">{esc(c["path"])}</span> <span class="rules">a copy of {esc(c["copy_of"])}</span>'
            ),
        )
    )
    out.append("</section>")
    return "".join(out)


# the memory section's lists: (key, heading, one row of a finding as HTML)
_MEMORY_LISTS = (
    (
        "probable_duplicates",
        "Probable duplicates",
        lambda r: (
            " + ".join(f'<span class="path">{esc(p)}</span>' for p in r["cards"])
            + f' <span class="rules">{esc(r["by"])} <code>{esc(r["key"])}</code>, {esc(r["confidence"])}</span>'
        ),
    ),
    (
        "identity_conflicts",
        "Identity conflicts",
        lambda r: (
            f"<code>{esc(r['key'])}</code> on "
            + ", ".join(f'<span class="path">{esc(p)}</span>' for p in r["cards"])
            + ("" if r["grouped"] else ' <span class="rules">dedup refuses to join them: a person decides</span>')
        ),
    ),
    (
        "superseded_live",
        "Superseded but still live",
        lambda r: (
            f'<span class="path">{esc(r["path"])}</span> '
            f'<span class="rules">superseded by {esc(r["by"])}; status {esc(str(r["status"]))}</span>'
        ),
    ),
    (
        "unprocessed_daily",
        "Daily notes not processed",
        lambda r: f'<span class="path">{esc(r["path"])}</span> <span class="rules">{esc(r["state"])}</span>',
    ),
)


def _memory(data: dict) -> str:
    """The memory section: counts, the score points it takes, each finding."""
    report = data["health"]
    memory = report.get("memory")
    out = ['<section id="memory"><h2>Memory</h2>']
    if not memory:
        out.append('<p class="note">No memory section in this report.</p></section>')
        return "".join(out)
    c = memory["counts"]
    points = report.get("penalties", {}).get("memory")
    scored = (
        f"takes {_fmt(points)} points off the health score (<code>identity.health_weight</code>)"
        if points is not None
        else "not scored (the schema sets no <code>identity.health_weight</code>)"
    )
    out.append(
        f"<p>{c['flagged']} of {plural(c['cards'], 'card')} named by a finding "
        f"({memory['share']:.0%}): {scored}.</p>{_bar(memory['share'], 'warn')}"
    )
    rows = [
        ("probable duplicates", c["probable_duplicates"]),
        ("identity conflicts", c["identity_conflicts"]),
        ("superseded but still live", c["superseded_live"]),
        (f"daily notes not processed, of {c['daily_notes']}", c["unprocessed_daily"]),
    ]
    cells = "".join(
        f'<tr><td>{esc(label)}</td><td class="num{" warn" if n else ""}">{n}</td></tr>' for label, n in rows
    )
    out.append(f"<table><tbody>{cells}</tbody></table>")
    for key, title, row in _MEMORY_LISTS:
        out.append(_listing(title, memory[key], row))
    out.append("</section>")
    return "".join(out)


def _note_list(rows: list[dict], top: int) -> str:
    if not rows:
        return '<p class="note">None.</p>'
    items = []
    for r in rows:
        name = r["path"][:-3] if r["path"].endswith(".md") else r["path"]
        sources = f" from {r['notes']} note{'s' if r['notes'] != 1 else ''}" if r["links"] else ""
        count = f"{r['links']} link{'s' if r['links'] != 1 else ''}{sources}"
        items.append(
            f'<li><span class="path">{esc(name)}</span> <span class="count">· {count}</span>'
            f"{_bar(r['links'] / top) if top else ''}</li>"
        )
    return f'<ol class="notes">{"".join(items)}</ol>'


def _linked(data: dict) -> str:
    most, least = data["most_linked"], data["least_linked"]
    top = most[0]["links"] if most else 0
    return (
        '<div class="grid two" id="linked">'
        f'<section id="most-linked"><h2>Most linked notes</h2>{_note_list(most, top)}</section>'
        f'<section id="least-linked"><h2>Least linked notes</h2>{_note_list(least, top)}'
        '<p class="note">Links from other notes; hubs left out.</p></section></div>'
    )


def _compliance(data: dict) -> str:
    summary = data["compliance"]
    out = [
        '<section id="compliance"><h2>Schema compliance by type</h2>',
        f'<p>Compliance <strong class="{_tone(summary["score"])}">{_fmt(summary["score"])}</strong>/100 over '
        f"{summary['cards']} card{'s' if summary['cards'] != 1 else ''}, "
        f"{summary['findings']} finding{'s' if summary['findings'] != 1 else ''}.</p>",
    ]
    if not data["types"]:
        out.append('<p class="note">No cards.</p></section>')
        return "".join(out)
    rows = []
    for t in data["types"][:MAX_ROWS]:
        parts = [
            f"{t[level]} {level}{'s' if t[level] != 1 else ''}"
            for level in (compliance.ERROR, compliance.WARNING, compliance.INFO)
            if t[level]
        ]
        rules = ", ".join(f"{esc(rule)}&nbsp;{n}" for rule, n in t["rules"].items())
        detail = " · ".join(filter(None, [", ".join(parts), rules]))
        detail = f'<span class="rules">{detail}</span>' if detail else ""
        name = f"<em>{esc(t['type'])}</em>" if t["type"] == NO_TYPE else esc(t["type"])
        rows.append(
            f'<tr><td class="path">{name}{detail}{_bar(t["score"] / 100, _tone(t["score"]))}</td>'
            f'<td class="num {_tone(t["score"])}">{_fmt(t["score"])}</td><td class="num">{t["cards"]}</td>'
            f'<td class="num">{t["clean"]}</td></tr>'
        )
    out.append(
        '<table><thead><tr><th>type</th><th class="num">score</th><th class="num">cards</th>'
        f'<th class="num">clean</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    out.append(_more(len(data["types"]), min(len(data["types"]), MAX_ROWS), "types"))
    out.append(
        '<p class="note">Score: the mean over cards of 1 − the heaviest finding (error 1, warning ½, info 0); '
        "<code>enforce.py</code> lists every finding.</p></section>"
    )
    return "".join(out)


def render(data: dict) -> str:
    """The report page for :func:`collect`'s data, as HTML text."""
    report = data["health"]
    name = esc(data["name"])
    comp = data["compliance"]["score"]
    tiles = "".join(
        [
            _tile(_fmt(report["score"]), "health score", _tone(report["score"])),
            _tile(str(report["notes"]), "notes"),
            _tile(str(report["links"]), f"links ({_fmt(report['avg_links'])} per note)"),
            _tile(str(len(report["broken_links"])), "broken links", "bad" if report["broken_links"] else ""),
            _tile(str(len(report["orphans"])), "orphans", "warn" if report["orphans"] else ""),
            _tile(_fmt(comp), "schema compliance", _tone(comp)),
        ]
    )
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        '<meta name="generator" content="autograph graph.py report">',
        f"<title>{name}: autograph report</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<header><h1>{name}</h1>",
        f'<p class="meta">autograph report · {esc(_when(data["generated"]))} · <span class="path">'
        f"{esc(data['vault'])}</span></p></header>",
        f'<div class="tiles">{tiles}</div>',
        f'<div class="grid two">{_trend(data)}{_tiers(data)}</div>',
        _memory(data),
        _folders(data),
        _linked(data),
        _compliance(data),
        "<footer>Made by <code>graph.py report</code> from the vault and <code>.graph/</code> history; "
        "<code>graph.py health</code> lists every finding.</footer>",
        "</main></body></html>",
        "",
    ]
    return "\n".join(body)


def default_path(root: Path, create: bool = True) -> Path:
    """Where the report goes without ``-o``: ``VAULT/.graph/report.html``."""
    return derived.derived_path(root, REPORT, create=create)


def output_path(path: str) -> str:
    """``-o FILE`` as an absolute path, for the JSON output."""
    return os.path.abspath(path)


def publish(
    vault: Vault, schema: Schema, index: NoteIndex, output: str | None = None, force: bool = False, write: bool = True
) -> dict:
    """Make the report page of ``vault`` and, with ``write``, write it: to
    ``output`` (a new file, or with ``force`` an existing regular file;
    :func:`derived.write_output`), else to ``VAULT/.graph/report.html`` (a
    derived file).  ``index``'s cache is saved once the data is collected.

    Returns the JSON of ``graph.py report``: ``{path (absolute, the file
    written or that would be), written (bool), bytes (the page's UTF-8
    size), sections (:func:`counts`)}``.  Raises OSError when the file
    cannot be written or changed while it was, :class:`PathError` or
    :class:`TargetError` for an ``output`` the store refuses."""
    data = collect(vault, schema, index)
    derived.save_index(index)
    page = render(data).encode("utf-8")
    path = output_path(output) if output is not None else str(default_path(vault.root, create=write))
    if write:
        try:
            if output is not None:
                derived.write_output(output, page, overwrite=force, vault=vault.root)
            else:
                derived.write_derived(vault.root, REPORT, page)
        except Conflict as exc:
            raise OSError(f"{path} changed while it was written; run again: {exc}") from None
    return {"path": path, "written": write, "bytes": len(page), "sections": counts(data)}


def report_text(result: dict) -> str:
    """The human report of ``graph.py report`` for :func:`publish`'s result:
    the file (written or would be) and its size, then the score, the runs
    in the trend and the compliance.  Two lines, no final newline."""
    sections = result["sections"]
    done = "wrote" if result["written"] else "would write"
    trend, compliance = sections["trend"]["points"], sections["compliance"]
    return (
        f"report: {done} {printable(result['path'])} ({result['bytes']:,} bytes)\n"
        f"health {sections['health']['score']}/100 · {plural(trend, 'run')} in the trend"
        f" · compliance {compliance['score']}/100 over {plural(compliance['types'], 'type')}"
        + ("" if sections["tiers"]["points"] else " · decay has not run")
    )
