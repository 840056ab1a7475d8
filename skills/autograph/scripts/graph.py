#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""graph.py: the link health of an Obsidian vault (health, backlinks, orphans, report) and its link care (fix, mv)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Only cli here: each command imports the modules it uses when it runs, so
# that --help and a bad option cost no more than starting Python
# (tests/test_startup.py).
from autograph import cli  # noqa: E402

# health.SCORE_FORMULA, spelled out so that help needs no import of health
# (which reads vaults); tests/test_startup.py checks that the two agree.
SCORE_FORMULA = (
    "score = 100 - 30*orphans/non-hub cards - 30*broken links/links"
    " - 15*max(0, 1 - avg links per note/3) - 10*(1 - description coverage of cards)"
    " - 10*(invalid frontmatter + unreadable notes)/notes - 5*broken anchors/links"
    " - decay.health_weight (default 0)*stale share,"
    " clamped to 0..100 and rounded to 0.1; an empty vault scores 100"
)

HEALTH_EPILOG = f"""\
The score:
  {SCORE_FORMULA}
  Hubs are notes named in schema "hubs.names" (default MEMORY, index, _index)
  or whose type is in "hubs.types" (default moc, index, hub); they are never
  orphans.  A dead end is a note that links to no other note (listed, not
  scored).  The stale share (cards last accessed more than decay.stale_days,
  90, days ago, of the cards with a date) and the tiers the dates give are
  shown and kept in the history; scored only with decay.health_weight.

Links follow Obsidian's rules: case-insensitive after Unicode NFC, ".md"
optional, no preference for letter case; of several candidates the exact
vault path, then one in the linking note's folder (or below it), then the
shortest path.
Links inside code, %% comments %%, <!-- --> and math are ignored; wikilinks
in frontmatter values count.

Writes: one line per run to VAULT/.graph/health-history.jsonl, and caches
under VAULT/.graph/cache/: the parsed notes (notes.jsonl, notes-delta.jsonl:
the next run reads only the notes that changed) and the last report
(health.json: reused while no note, file, schema or template setting
changed).  --dry-run writes none of them.  Nothing else in the vault is
touched; deleting .graph/cache loses nothing but time.

JSON keys (--json):
  vault, score, penalties{{orphans, broken_links, link_sparsity, description,
  invalid_frontmatter, broken_anchors, stale (only with decay.health_weight)}},
  notes, attachments, hubs[], links,
  resolved_links, avg_links, broken_links[{{source, line, target, kind}}],
  orphans[], dead_ends[], ambiguous_links[{{source, line, target, kind,
  resolved, candidates[]}}], broken_anchors[{{source, line, target, kind,
  resolved}}], description_coverage (0..1), invalid_frontmatter[{{path, line,
  column, error}}], unreadable[{{path, error}}], warnings[], stale_share
  (0..1), tiers{{core, active, warm, cold, archive}}, recall{{today, dated,
  undated, not_dates, stale, stale_days, never_touched_share}}, previous (the
  last history entry or null).  Paths are vault-relative with "/"; lines are 1-based.

Errors go to stderr with nothing on stdout, also with --json.

Kind: reads the vault; writes nothing in it (only derived files under
.graph/, and not with --dry-run).

Exit codes: 0 done; 1 score under --fail-under; 2 bad usage, vault or
schema; 3 I/O failure or bug.

Examples:
  graph.py health ~/vault
  cd ~/vault && graph.py health --fail-under 80
  graph.py health ~/vault --json | jq '.broken_links[] | "\\(.source):\\(.line) \\(.target)"'
"""

BACKLINKS_EPILOG = """\
NOTE is a vault path ("people/Dana Reyes.md"), a file path, or a name as in a
wikilink ("Dana Reyes", "[[Dana Reyes#Role|Dana]]"), resolved from the
vault's root.  A name no note has lists the broken links that use it.

JSON keys (--json): note (the vault path, null when no note has that name),
backlinks[{source, line, target, kind}], sources[]

Kind: reads the vault; writes nothing in it (only derived files under
.graph/, and not with --dry-run).

Exit codes: 0 done (also when there are no backlinks); 2 bad usage, no note
and no link with that name, a bad vault or schema; 3 I/O failure or bug.

Examples:
  graph.py backlinks ~/vault "Dana Reyes"
  graph.py backlinks "people/Dana Reyes.md" --json
"""

ORPHANS_EPILOG = """\
An orphan is a note that no other note links to.  Hubs (see health --help)
are never orphans.

JSON keys (--json): orphans[], count

Kind: reads the vault; writes nothing in it (only derived files under
.graph/, and not with --dry-run).

Exit codes: 0 done (also when there are orphans); 2 bad usage, vault or
schema; 3 I/O failure or bug.

Examples:
  graph.py orphans ~/vault
"""

REPORT_EPILOG = """\
One HTML file, self-contained: inline CSS and SVG charts, no JavaScript,
nothing loaded from the network (a Content-Security-Policy forbids it).  It
reads at phone and desktop widths and follows the system's dark mode.
Sections: the health score now and over time (one point per line of
VAULT/.graph/health-history.jsonl, which each "graph.py health" run adds;
the report itself adds none), tiers over time (from
VAULT/.graph/decay-history.jsonl once decay has run), broken links and
orphans by folder, the most and the least linked notes, and schema
compliance by type (as enforce.py scores it).

Writes: VAULT/.graph/report.html (a derived file, replaced each run) and
the parsed-note cache; with -o FILE, that file instead of the derived one
(a new file in an existing folder, or with --force an existing regular
file; never a device, FIFO or symlink).  --dry-run writes nothing.

JSON keys (--json):
  path (the file written, or that would be written with --dry-run),
  written (false with --dry-run), bytes, sections{health{score, notes,
  links, broken_links, orphans}, trend{points}, tiers{points} (0 when decay
  has not run), folders{folders, with_findings}, most_linked, least_linked
  (notes listed), compliance{score, cards, findings, types}}

Errors go to stderr with nothing on stdout, also with --json.

Kind: reads the vault; writes nothing in it (only derived files under
.graph/, or the -o file, and not with --dry-run).

Exit codes: 0 done; 2 bad usage, vault or schema, or an -o file that exists
(without --force) or is not a regular file; 3 I/O failure or bug.

Examples:
  graph.py report ~/vault && xdg-open ~/vault/.graph/report.html
  graph.py report ~/vault -o ~/Desktop/vault.html --force
  graph.py report --json | jq .sections.trend
"""

FIX_EPILOG = """\
Repairs only links that resolve nowhere and whose intended file is certain,
tried in this order:
  moved     the link named a file autograph moved (graph.py mv, enforce.py
            --move; the journal under VAULT/.graph/journal/ records every
            move of a run that was not undone), which still exists
  markdown  a Markdown link whose encoding is off: the file's name holds
            %-codes, the destination was encoded twice, '+' for spaces, or
            ".md" after an attachment's name
  path      a folder path that is out of date, while exactly one file in
            the vault has that name
  alias     a bare [[Alias]] in the aliases of exactly one note: it becomes
            [[Target|Alias]] (Obsidian does not resolve aliases)
A link that resolves is never touched (letter case is never "fixed"); one
with several candidates is listed under "ambiguous", never guessed; the rest
are listed under "unfixable", with suggestions a person may pick.
Full-text search is never used to pick a target.  Links in code, comments and math are not links and are never
edited.  The new link keeps its #heading, #^block, |alias and embed "!",
and its form (see "graph.py mv --help").  Notes in templates folders are
never written.

JSON keys (--json): vault, planned[{path, line, old, new, why}],
ambiguous[{path, line, target, candidates[]}], unfixable[{path, line,
target, why, suggestions[] (for a name no file has: notes with the same
name but for case, spaces, "-" and "_", or whose title is the link; shown,
never written)}], edits[{path, reason}], written[] (notes that now hold their
repairs), conflicts[{path, error, copy}] (changed by someone else
meanwhile: left as they made it, or merged, or their version saved at copy
under .graph/conflicts/), failed[{path, error}], run (the journaled run id,
or null; undo.py undo RUN takes it back).

Kind: changes what people wrote, so a dry run unless --apply.  One
autograph writer per vault at a time: --wait SECONDS waits for another.

Exit codes: 0 done (also when links stay broken: see unfixable); 2 bad
usage, vault or schema; 3 I/O failure, another run holding the vault, or a
bug; 4 finished, but some planned writes were skipped.

Examples:
  graph.py fix ~/vault                 # list the repairs, write nothing
  graph.py fix ~/vault --diff          # also as diffs
  graph.py fix ~/vault --apply         # write them
  graph.py fix --json | jq '.ambiguous[]'
"""

MV_EPILOG = """\
OLD is a note, an attachment or a folder (a folder moves with every file in
it); NEW is the new path, or an existing folder (or a path ending in "/") to
move into.  Both are file paths: relative to the current folder when that is
inside the vault, else to the vault's root (VAULT, default the current
folder).  A note keeps ".md" (NEW without it gets it).  Refuses to move over
an existing file (also one whose name differs only in letter case or in
Unicode normalisation, "é" composed or decomposed, which Obsidian would not
tell apart), and to move a file with several hard links (the move would
split them).

Every link that resolved to a moved file is rewritten to resolve to its new
path: wikilinks, embeds, Markdown links and wikilinks in frontmatter values.
Only the link's path part changes: |alias, #heading, #^block, the embed "!"
and a table's "\\|" stay, and so does the form:
  a bare name stays the bare name while it resolves to the moved file, else
    becomes the shortest path that does (or, when .obsidian/app.json sets
    newLinkFormat "absolute" or "relative", that form);
  a path stays a path (a full vault path stays one); ./ and ../ stay relative;
  ".md" written stays written; a Markdown link stays one, encoded as it was.
A link that still resolves to the moved file is left byte for byte.  Links
elsewhere that the move would send to another file (a moved note taking
over a bare name in its new folder) are rewritten to keep their target.
Links that cannot be kept (in a templates folder, which is never written)
are listed under "left".  Links inside code are never touched.

Order of the writes, one journaled run (undo.py undo RUN takes it back):
the file is first written under its new name with the same bytes and
modification time (so it exists under both names), then the links are
rewritten, then the old name goes to .trash/<run-id>/.  A file whose mode
or owner a new file would not keep (chmod 600, another user's file) is
renamed instead, before the links are rewritten.  A run that is killed is
rolled back by "undo.py recover" or by the next writing command.  The old
folder of a moved folder is left (empty).

JSON keys (--json): vault, moves[{from, to}], links[{path, line, old, new}],
left[{path, line, target, was, now, why}], warnings[], changes[{op, path,
to}] (op: create, rename, write, trash, in the order they run),
edits[{path, reason}], written[], conflicts[{path, error, copy}],
failed[{path, error}], run (the journaled run id, or null), not_moved[{path,
error}] (the parts of the move that could not be made: a new name not
written, an old name someone edited meanwhile, a linking note not
rewritten), rolled_back (the id of the run that then took the whole move
back, so that no link leads to a stale copy or to nothing, else null; the
exit code is then 4; a person's edit stays where they made it: a linking
note edited meanwhile gets its links pointed back on the text it holds),
not_rolled_back[{path, error, copy}] (files the rollback could not take
back; graph.py health shows what they left).

Kind: changes what people wrote, so a dry run unless --apply.  One
autograph writer per vault at a time: --wait SECONDS waits for another.

Exit codes: 0 done; 2 bad usage (OLD not in the vault, NEW exists, a
folder into itself), a bad vault or schema; 3 I/O failure, another run
holding the vault, or a bug; 4 finished, but some planned writes were
skipped (conflicts, failures).

Examples:
  graph.py mv ~/vault "inbox/Dana.md" "people/Dana Reyes.md"          # dry run
  graph.py mv ~/vault "inbox/Dana.md" people/ --apply                 # into a folder
  cd ~/vault && graph.py mv projects/old archive/2026/ --apply --json  # a folder
"""

SHOWN = 20


def _section(title: str, rows: list[str]) -> list[str]:
    if not rows:
        return []
    out = [f"{title} ({len(rows)}):"]
    out += [f"  {cli.printable(row)}" for row in rows[:SHOWN]]
    if len(rows) > SHOWN:
        out.append(f"  ... {len(rows) - SHOWN} more (--json lists all)")
    return out


def _human(report: dict, previous: dict | None) -> str:
    trend = ""
    if previous is not None:
        delta = report["score"] - previous["score"]
        trend = f"  ({delta:+.1f} since {cli.printable(str(previous.get('time', 'the last run')))})"
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
            " · tiers " + ", ".join(f"{name} {n}" for name, n in report["tiers"].items())
        )
    sections = [
        ("Broken links", [f"{r['source']}:{r['line']}  {r['target']}" for r in report["broken_links"]]),
        ("Broken anchors", [f"{r['source']}:{r['line']}  {r['target']}" for r in report["broken_anchors"]]),
        (
            "Invalid frontmatter",
            [f"{r['path']}:{r['line']}:{r['column']}  {r['error']}" for r in report["invalid_frontmatter"]],
        ),
        ("Unreadable", [f"{r['path']}  {r['error']}" for r in report["unreadable"]]),
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
    for title, rows in sections:
        block = _section(title, rows)
        if block:
            lines += [""] + block
    return "\n".join(lines)


def cmd_health(args) -> int:
    import datetime

    from autograph.graph import health
    from autograph.read.index import NoteIndex
    from autograph.write import store

    vault, schema = cli.load(args)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    report = health.report_for(vault, schema, index)
    previous = health.previous_entry(vault.root)
    report["previous"] = previous
    if not args.dry_run:
        when = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        try:
            health.append_history(vault.root, report, when)
        except (OSError, store.PathError, store.TargetError) as exc:
            print(f"warning: history not written: {exc}", file=sys.stderr)
    if args.json:
        cli.print_json(report)
    else:
        print(_human(report, previous))
    if args.fail_under is not None and report["score"] < args.fail_under:
        if not args.json:
            print(f"score {report['score']} is under --fail-under {args.fail_under:g}", file=sys.stderr)
        return cli.EXIT_FOUND
    return cli.EXIT_OK


def _note_name(vault, name: str) -> str:
    """NOTE as given: a file path (absolute or from the current folder), a
    vault path, or a link (``[[Dana Reyes#Role|Dana]]`` -> ``Dana Reyes``)."""
    if not name.strip():
        raise cli.UsageError("NOTE is empty; give a note's path or name")
    path = Path(name)
    if path.is_file():
        try:
            return path.resolve().relative_to(vault.root.resolve()).as_posix()
        except ValueError:
            raise cli.UsageError(f"{name!r} is not inside the vault {vault.root}") from None
    text = name.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0].split("#", 1)[0].strip()
    while text.startswith("./"):
        text = text[2:]
    return text


def cmd_backlinks(args) -> int:
    from autograph.read import linkgraph
    from autograph.read.index import NoteIndex

    vault, _ = cli.load(args)
    name = _note_name(vault, args.note)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    graph = linkgraph.build(vault, index)
    index.save()
    resolution = vault.resolver.resolve(name, "")
    path = name if name in vault.files else resolution.path
    if path is not None:
        if resolution.ambiguous and path == resolution.path:
            print(f"note: {name!r} could mean {len(resolution.candidates)} files; using {path}", file=sys.stderr)
        edges = graph.backlinks(path)
    else:
        # no such note: the links that name it are broken; list them
        edges = [e for e in graph.broken() if linkgraph.same_target(e.link.target, name)]
        if not edges:
            raise cli.UsageError(f"no note matches {name!r} in {vault.root}, and no link names it")
    rows = [{"source": e.source, "line": e.link.line, "target": e.link.text, "kind": e.link.kind} for e in edges]
    sources = sorted({row["source"] for row in rows})
    if args.json:
        cli.print_json({"note": path, "backlinks": rows, "sources": sources})
    else:
        what = cli.printable(path) if path else f"{cli.printable(name)} (no such note; these links are broken)"
        print(f"{what}: {cli.plural(len(rows), 'backlink')} from {cli.plural(len(sources), 'note')}")
        for row in rows:
            print(f"  {cli.printable(row['source'])}:{row['line']}  {cli.printable(row['target'])}")
    return cli.EXIT_OK


def cmd_orphans(args) -> int:
    from autograph.graph import health
    from autograph.read import linkgraph
    from autograph.read.index import NoteIndex

    vault, schema = cli.load(args)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    graph = linkgraph.build(vault, index)
    index.save()
    orphans = graph.orphans(exclude=set(health.hubs(vault, schema, index)).__contains__)
    if args.json:
        cli.print_json({"orphans": orphans, "count": len(orphans)})
    else:
        print(cli.plural(len(orphans), "orphan"))
        for path in orphans:
            print(f"  {cli.printable(path)}")
    return cli.EXIT_OK


def cmd_report(args) -> int:
    from autograph.graph import report
    from autograph.read.index import NoteIndex
    from autograph.write import store

    vault, schema = cli.load(args)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    data = report.collect(vault, schema, index)
    index.save()
    page = report.render(data).encode("utf-8")
    if args.output is not None:
        path = report.output_path(args.output)
    else:
        path = str(report.default_path(vault.root, create=not args.dry_run))
    if not args.dry_run:
        try:
            if args.output is not None:
                store.write_output(args.output, page, overwrite=args.force, vault=vault.root)
            else:
                store.write_derived(vault.root, report.REPORT, page)
        except store.Conflict as exc:
            raise OSError(f"{path} changed while it was written; run again: {exc}") from None
    sections = report.counts(data)
    if args.json:
        cli.print_json({"path": path, "written": not args.dry_run, "bytes": len(page), "sections": sections})
    else:
        done = "would write" if args.dry_run else "wrote"
        trend, compliance = sections["trend"]["points"], sections["compliance"]
        print(f"report: {done} {cli.printable(path)} ({len(page):,} bytes)")
        print(
            f"health {sections['health']['score']}/100 · {cli.plural(trend, 'run')} in the trend"
            f" · compliance {compliance['score']}/100 over {cli.plural(compliance['types'], 'type')}"
            + ("" if sections["tiers"]["points"] else " · decay has not run")
        )
    return cli.EXIT_OK


def _listed(items: list[str], most: int = 5) -> str:
    """The first ``most`` of ``items``, "; "-joined, and how many more: one
    line of stderr stays readable when hundreds of notes are named."""
    more = f"; and {len(items) - most} more" if len(items) > most else ""
    return "; ".join(items[:most]) + more


def _show(rows: list[str]) -> None:
    for row in rows[:SHOWN]:
        print(f"  {cli.printable(row)}")
    if len(rows) > SHOWN:
        print(f"  ... {len(rows) - SHOWN} more (--json lists all)")


def _print_changes(edits, show_diff: bool) -> None:
    """--diff for a run of Edits, Moves and Trashes: the diffs of rewritten notes."""
    from autograph.write import store

    if not show_diff:
        return
    for edit in edits:
        if isinstance(edit, store.Edit) and edit.before is not None:
            for line in store.diff(edit).splitlines():
                print("    " + cli.printable(line))


def cmd_fix(args) -> int:
    with cli.writing(args, "graph.py fix"):
        report = _fix(args)
    return report()


def _fix(args):
    from autograph.graph import linkfix
    from autograph.read.index import NoteIndex

    vault, schema = cli.load(args)
    index = NoteIndex(vault, use_cache=not args.dry_run)
    plan = linkfix.plan_fix(vault, schema, index)
    if not args.dry_run:
        index.save()
    outcome = cli.carry_out(vault.root, plan.edits, cli.writes(args), args.wait, "graph.py fix", schema)
    code = cli.outcome_code(outcome)

    def report() -> int:
        if args.json:
            cli.print_json(
                {
                    "vault": str(vault.root),
                    "planned": plan.planned,
                    "ambiguous": plan.ambiguous,
                    "unfixable": plan.unfixable,
                    **outcome,
                }
            )
            return code
        verb = "repaired" if cli.writes(args) else "to repair"
        print(f"{cli.plural(len(plan.planned), 'broken link')} {verb} in {cli.plural(len(plan.edits), 'note')}")
        _show([f"{r['path']}:{r['line']}  {r['old']} -> {r['new']}  ({r['why']})" for r in plan.planned])
        if plan.ambiguous:
            print(f"{cli.plural(len(plan.ambiguous), 'link')} with several candidates (not guessed):")
            _show([f"{r['path']}:{r['line']}  {r['target']} -> {', '.join(r['candidates'])}" for r in plan.ambiguous])
        if plan.unfixable:
            print(f"{cli.plural(len(plan.unfixable), 'broken link')} left (no certain target):")
            _show(
                [
                    f"{r['path']}:{r['line']}  {r['target']}  ({r['why']})"
                    + (f"; maybe {', '.join(r['suggestions'])}" if r.get("suggestions") else "")
                    for r in plan.unfixable
                ]
            )
        cli.print_outcome(outcome, plan.edits, cli.writes(args), args.diff)
        return code

    return report


def cmd_mv(args) -> int:
    with cli.writing(args, "graph.py mv"):
        report = _mv(args)
    return report()


def _change_row(change) -> dict:
    from autograph.write import store

    if isinstance(change, store.Edit):
        return {"op": "create" if change.before is None else "write", "path": change.path, "to": None}
    if isinstance(change, store.Trash):
        return {"op": "trash", "path": change.path, "to": None}
    return {"op": "rename", "path": change.path, "to": change.to}


def _mv(args):
    from autograph.graph import moves
    from autograph.read.index import NoteIndex

    vault, schema = cli.load(args)
    try:
        mapping = moves.paths_of(vault, args.old, args.new)
        index = NoteIndex(vault, use_cache=not args.dry_run)
        plan = moves.plan_move(vault, mapping, schema, index)
    except moves.MoveError as exc:
        raise cli.UsageError(str(exc)) from None
    if not args.dry_run:
        index.save()
    outcome = cli.carry_out(vault.root, plan.changes, cli.writes(args), args.wait, "graph.py mv", schema)
    outcome["rolled_back"] = None
    outcome["not_rolled_back"] = []
    outcome["not_moved"] = moves.unfinished(plan, outcome) if outcome["run"] else []
    if outcome["not_moved"]:
        # a part of the move was not made (a new name not written, an old name someone edited meanwhile, a link
        # note not rewritten): the links would lead to a stale copy or nowhere, so the whole run is taken back
        undone = moves.roll_back(vault.root, outcome["run"], args.wait, plan.moves, [c.path for c in plan.links])
        outcome["rolled_back"] = undone.run_id
        outcome["not_rolled_back"] = [item.as_dict() for item in undone.conflicts + undone.failed]
        why = _listed([f"{item['path']}: {item['error']}" for item in outcome["not_moved"]])
        if outcome["not_rolled_back"]:
            left = _listed([f"{item['path']}: {item['error']}" for item in outcome["not_rolled_back"]])
            told = (
                f"rolled back but for {cli.plural(len(outcome['not_rolled_back']), 'file')} ({left}); "
                "graph.py health shows what that left, graph.py fix repairs links"
            )
        else:
            told = "rolled back: no file moved, every link as before, a person's edit kept where they made it"
        print(
            f"graph.py mv: the move could not be completed ({why}); the run {outcome['run']} was {told}; "
            "run it again once the notes are not being edited",
            file=sys.stderr,
        )
    warnings = plan.told(made=not outcome["rolled_back"])
    cli.warn(warnings)
    code = cli.outcome_code(outcome)
    links = [change._asdict() for change in plan.links]

    def report() -> int:
        if args.json:
            cli.print_json(
                {
                    "vault": str(vault.root),
                    "moves": [{"from": a, "to": b} for a, b in plan.moves.items()],
                    "links": links,
                    "left": plan.left,
                    "warnings": warnings,
                    "changes": [_change_row(c) for c in plan.changes],
                    **outcome,
                }
            )
            return code
        done = cli.writes(args) and not outcome["rolled_back"]
        if outcome["rolled_back"]:
            print(f"not moved: the run was rolled back ({outcome['rolled_back']}); nothing changed")
            _show([f"{r['path']}: {r['error']}" for r in outcome["not_moved"]])
        planned = "planned to move" if outcome["rolled_back"] else "would move"
        print(("moved" if done else planned) + f" {cli.plural(len(plan.moves), 'file')}:")
        _show([f"{a} -> {b}" for a, b in plan.moves.items()])
        sources = len({link["path"] for link in links})
        verb = "rewritten" if done else ("rewritten, then taken back" if outcome["rolled_back"] else "to rewrite")
        print(f"{cli.plural(len(links), 'link')} in {cli.plural(sources, 'note')} {verb}")
        _show([f"{r['path']}:{r['line']}  {r['old']} -> {r['new']}" for r in links])
        if plan.left:
            print(f"{cli.plural(len(plan.left), 'link')} that will not follow the move:")
            _show([f"{r['path']}:{r['line']}  {r['target']}  ({r['why']})" for r in plan.left])
        cli.print_outcome(outcome, plan.changes, done, False)
        _print_changes(plan.changes, args.diff)
        return code

    return report


def build_parser():
    parser = cli.make_parser(
        "graph.py",
        "The link health of an Obsidian vault: a health score, backlinks, orphans, an HTML report, "
        "repairs of broken links (fix) and moves that keep every link (mv).",
        "Run 'graph.py COMMAND --help' for each command's options, JSON keys and examples.",
    )
    commands = parser.add_subparsers(metavar="COMMAND")

    p = cli.subparser(
        commands,
        "health",
        "score the vault and list what lowers the score",
        "Score the vault 0-100 and list broken links, orphans, dead ends, ambiguous "
        "links, broken anchors, missing descriptions and invalid frontmatter.",
        HEALTH_EPILOG,
    )
    cli.add_common(p, dry_run_help="write nothing: no history line, no cache")
    p.add_argument(
        "--fail-under",
        type=cli.score_value,
        metavar="N",
        help="exit 1 when the score is under N, a number from 0 to 100 (for cron and CI)",
    )
    p.set_defaults(func=cmd_health)

    p = cli.subparser(
        commands,
        "backlinks",
        "list the links that point to a note",
        "List every link from another note that resolves to NOTE.",
        BACKLINKS_EPILOG,
    )
    cli.add_vault(p)
    p.add_argument("note", metavar="NOTE", help="a note's vault path, file path or name (as in a wikilink)")
    cli.add_common(p, vault=False)
    p.set_defaults(func=cmd_backlinks)

    p = cli.subparser(
        commands,
        "orphans",
        "list notes that nothing links to",
        "List the notes no other note links to (hubs excepted).",
        ORPHANS_EPILOG,
    )
    cli.add_common(p)
    p.set_defaults(func=cmd_orphans)

    p = cli.subparser(
        commands,
        "report",
        "write an HTML report of the vault's health, trend and compliance",
        "Write one self-contained HTML page: the health score and its trend, tiers over time, broken "
        "links and orphans by folder, the most and least linked notes, and schema compliance by type.",
        REPORT_EPILOG,
    )
    cli.add_common(p, dry_run_help="write nothing: no report, no cache")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE (default: VAULT/.graph/report.html)",
    )
    p.add_argument("--force", action="store_true", help="replace FILE (-o) if it exists")
    p.set_defaults(func=cmd_report)

    p = cli.subparser(
        commands,
        "fix",
        "repair broken links whose target is certain",
        "Repair broken links whose intended file is certain (moved by autograph, Markdown encoding, "
        "an out-of-date folder path, an alias of exactly one note); list the rest.",
        FIX_EPILOG,
    )
    cli.add_common(p, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(p, changes_people_text=True)
    p.add_argument("--diff", action="store_true", help="show each repair as a unified diff")
    p.set_defaults(func=cmd_fix)

    p = cli.subparser(
        commands,
        "mv",
        "move or rename a note, attachment or folder, rewriting every link to it",
        "Move or rename a note, an attachment or a folder, and rewrite every link that resolved to it "
        "so that it still does, keeping each link's form, alias, heading and block.",
        MV_EPILOG,
    )
    cli.add_vault(p)
    p.add_argument("old", metavar="OLD", help="the file or folder to move (a path)")
    p.add_argument("new", metavar="NEW", help="its new path, or a folder to move it into")
    cli.add_common(p, vault=False, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(p, changes_people_text=True)
    p.add_argument("--diff", action="store_true", help="show each rewritten note as a unified diff")
    p.set_defaults(func=cmd_mv)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
