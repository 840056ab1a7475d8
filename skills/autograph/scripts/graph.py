#!/usr/bin/env python3
"""graph.py: the link health of an Obsidian vault (health, backlinks, orphans)."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli, health, linkgraph, store  # noqa: E402
from autograph.index import NoteIndex  # noqa: E402

HEALTH_EPILOG = f"""\
The score:
  {health.SCORE_FORMULA}
  Hubs are notes named in schema "hubs.names" (default MEMORY, index, _index)
  or whose type is in "hubs.types" (default moc, index, hub); they are never
  orphans.  A dead end is a note that links to no other note.

Links follow Obsidian's rules: case-insensitive after Unicode NFC, ".md"
optional, exact path first, then the linking note's folder, then the
shortest path.  Links inside code, %% comments %% and <!-- --> are ignored;
wikilinks in frontmatter values count.

Writes: one line per run to VAULT/.graph/health-history.jsonl, and the
parsed-note cache VAULT/.graph/cache/notes.json (so the next run reads only
the notes that changed).  --dry-run writes neither.  Nothing else in the
vault is touched.

JSON keys (--json):
  vault, score, penalties{{orphans, broken_links, link_sparsity, description,
  invalid_frontmatter, broken_anchors}}, notes, attachments, hubs[], links,
  resolved_links, avg_links, broken_links[{{source, line, target, kind}}],
  orphans[], dead_ends[], ambiguous_links[{{source, line, target, kind,
  resolved, candidates[]}}], broken_anchors[{{source, line, target, kind,
  resolved}}], description_coverage (0..1), invalid_frontmatter[{{path, line,
  column, error}}], unreadable[{{path, error}}], warnings[], previous (the last
  history entry or null).  Paths are vault-relative with "/"; lines are 1-based.

Exit codes: 0 done; 1 score under --fail-under; 2 bad usage, vault or schema.

Examples:
  graph.py health ~/vault
  cd ~/vault && graph.py health --fail-under 80
  graph.py health ~/vault --json | jq '.broken_links[] | "\\(.source):\\(.line) \\(.target)"'
"""

BACKLINKS_EPILOG = """\
NOTE is a vault path ("people/Dana Reyes.md") or a link target as you would
write it in a wikilink ("Dana Reyes"), resolved from the vault's root.

JSON keys (--json): note, backlinks[{source, line, target, kind}], sources[]

Examples:
  graph.py backlinks ~/vault "Dana Reyes"
  graph.py backlinks "people/Dana Reyes.md" --json
"""

ORPHANS_EPILOG = """\
An orphan is a note that no other note links to.  Hubs (see health --help)
are never orphans.

JSON keys (--json): orphans[], count

Examples:
  graph.py orphans ~/vault
"""

HISTORY = "health-history.jsonl"
SHOWN = 20


def _previous(root: Path) -> dict | None:
    try:
        lines = (root / store.GRAPH_DIR / HISTORY).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("score"), (int, float)):
            return entry
    return None


def _section(title: str, rows: list[str]) -> list[str]:
    if not rows:
        return []
    out = [f"{title} ({len(rows)}):"]
    out += [f"  {row}" for row in rows[:SHOWN]]
    if len(rows) > SHOWN:
        out.append(f"  ... {len(rows) - SHOWN} more (--json lists all)")
    return out


def _human(report: dict, previous: dict | None) -> str:
    trend = ""
    if previous is not None:
        delta = report["score"] - previous["score"]
        trend = f"  ({delta:+.1f} since {previous.get('time', 'last run')})"
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
    sections = [
        ("Broken links", [f"{r['source']}:{r['line']}  {r['target']}" for r in report["broken_links"]]),
        ("Broken anchors", [f"{r['source']}:{r['line']}  {r['target']}" for r in report["broken_anchors"]]),
        ("Invalid frontmatter", [f"{r['path']}:{r['line']}:{r['column']}  {r['error']}" for r in report["invalid_frontmatter"]]),
        ("Unreadable", [f"{r['path']}  {r['error']}" for r in report["unreadable"]]),
        ("Orphans", report["orphans"]),
        ("Ambiguous links", [
            f"{r['source']}:{r['line']}  {r['target']} -> {r['resolved']} (of {len(r['candidates'])})"
            for r in report["ambiguous_links"]
        ]),
    ]
    for title, rows in sections:
        block = _section(title, rows)
        if block:
            lines += [""] + block
    return "\n".join(lines)


def cmd_health(args) -> int:
    vault, schema = cli.load(args)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    report = health.health_report(vault, schema, index)
    index.save()
    previous = _previous(vault.root)
    report["previous"] = previous
    if not args.dry_run:
        when = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        entry = health.history_entry(report, when)
        try:
            store.append_line(vault.root, HISTORY, json.dumps(entry, ensure_ascii=False))
        except (OSError, store.PathError) as exc:
            print(f"warning: history not written: {exc}", file=sys.stderr)
    if args.json:
        cli.print_json(report)
    else:
        print(_human(report, previous))
    if args.fail_under is not None and report["score"] < args.fail_under:
        if not args.json:
            print(f"score {report['score']} is under --fail-under {args.fail_under}", file=sys.stderr)
        return cli.EXIT_FOUND
    return cli.EXIT_OK


def _find_note(vault, name: str) -> str:
    wanted = name.replace("\\", "/")
    while wanted.startswith("./"):
        wanted = wanted[2:]
    if wanted in vault.files:
        return wanted
    resolution = vault.resolver.resolve(name, "")
    if resolution.path is None:
        raise cli.UsageError(f"no note matches {name!r} in {vault.root}")
    if resolution.ambiguous:
        print(f"note: {name!r} could mean {len(resolution.candidates)} files; using {resolution.path}", file=sys.stderr)
    return resolution.path


def cmd_backlinks(args) -> int:
    vault, _ = cli.load(args)
    path = _find_note(vault, args.note)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    graph = linkgraph.build(vault, index)
    index.save()
    rows = [
        {"source": e.source, "line": e.link.line, "target": e.link.text, "kind": e.link.kind}
        for e in graph.backlinks(path)
    ]
    sources = sorted({row["source"] for row in rows})
    if args.json:
        cli.print_json({"note": path, "backlinks": rows, "sources": sources})
    else:
        print(f"{path}: {len(rows)} backlinks from {len(sources)} notes")
        for row in rows:
            print(f"  {row['source']}:{row['line']}  {row['target']}")
    return cli.EXIT_OK


def cmd_orphans(args) -> int:
    vault, schema = cli.load(args)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    graph = linkgraph.build(vault, index)
    index.save()
    hubs = {p for p in vault.notes if schema.is_hub(index.summary(p).stem, index.summary(p).properties)}
    orphans = graph.orphans(exclude=hubs.__contains__)
    if args.json:
        cli.print_json({"orphans": orphans, "count": len(orphans)})
    else:
        print(f"{len(orphans)} orphans")
        for path in orphans:
            print(f"  {path}")
    return cli.EXIT_OK


def build_parser():
    parser = cli.make_parser(
        "graph.py",
        "The link health of an Obsidian vault: a health score, backlinks and orphans.",
        "Run 'graph.py COMMAND --help' for each command's options, JSON keys and examples.",
    )
    commands = parser.add_subparsers(metavar="COMMAND")

    p = cli.subparser(commands, "health", "score the vault and list what lowers the score",
                      "Score the vault 0-100 and list broken links, orphans, dead ends, ambiguous "
                      "links, broken anchors, missing descriptions and invalid frontmatter.",
                      HEALTH_EPILOG)
    cli.add_common(p, dry_run_help="write nothing: no history line, no cache")
    p.add_argument("--fail-under", type=float, metavar="N", help="exit 1 when the score is under N (for cron and CI)")
    p.set_defaults(func=cmd_health)

    p = cli.subparser(commands, "backlinks", "list the links that point to a note",
                      "List every link from another note that resolves to NOTE.", BACKLINKS_EPILOG)
    p.add_argument("vault", nargs="?", default=".", metavar="VAULT", help="the vault's folder (default: the current folder)")
    p.add_argument("note", metavar="NOTE", help="a vault path or a link target")
    cli.add_common(p, vault=False, schema=False)
    p.set_defaults(func=cmd_backlinks)

    p = cli.subparser(commands, "orphans", "list notes that nothing links to",
                      "List the notes no other note links to (hubs excepted).", ORPHANS_EPILOG)
    cli.add_common(p)
    p.set_defaults(func=cmd_orphans)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
