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
    " - decay.health_weight (default 0)*stale share - identity.health_weight (default 0)*memory share,"
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
  The memory section is always shown: probable duplicates (cards sharing an
  identity value, or name variants: Bob and Robert Smith), identity
  conflicts (one email on two live cards), cards superseded but still live
  (superseded_by names another card, status is not superseded) and daily
  notes not processed (daily.py mark); the memory share (the cards they
  name, of all cards) is scored only with identity.health_weight.

Links follow Obsidian's rules: case-insensitive after Unicode NFC, ".md"
optional, no preference for letter case; of several candidates the exact
vault path, then one in the linking note's folder (or below it), then the
shortest path.
Links inside code, %% comments %%, <!-- --> and math are ignored; wikilinks
in frontmatter values count.

Writes: one line per run to VAULT/.graph/health-history.jsonl, the index
every command reads (VAULT/.graph/index.sqlite: each note parsed once per
change, whichever command sees it first; the next run reads only the notes
that changed) and the last report (.graph/cache/health.json: reused while no
note, file, schema or template setting changed; patched with the notes that
changed when only some did, from what each note added to it, kept in the
index).  --dry-run writes none of them.  Nothing else in the vault is touched; deleting them loses nothing but
time.

JSON keys (--json):
  vault, score, penalties{{orphans, broken_links, link_sparsity, description,
  invalid_frontmatter, broken_anchors, stale (only with decay.health_weight),
  memory (only with identity.health_weight)}},
  notes, attachments, hubs[], links,
  resolved_links, avg_links, broken_links[{{source, line, target, kind}}],
  orphans[], dead_ends[], ambiguous_links[{{source, line, target, kind,
  resolved, candidates[]}}], broken_anchors[{{source, line, target, kind,
  resolved}}], description_coverage (0..1), invalid_frontmatter[{{path, line,
  column, error}}], unreadable[{{path, error}}], case_collisions[[paths that
  differ only in letter case]], conflict_copies[{{path, copy_of}}] (a sync
  client's conflict copies: never cards), warnings[], stale_share
  (0..1), tiers{{core, active, warm, cold, archive}}, recall{{today, dated,
  undated, not_dates, stale, stale_days, never_touched_share}},
  memory{{probable_duplicates[{{cards[], by (identity|name), key, confidence}}],
  identity_conflicts[{{key, cards[], grouped}}], superseded_live[{{path, by,
  status}}], unprocessed_daily[{{path, date, state (new|changed)}}],
  counts{{cards, daily_notes, probable_duplicates, identity_conflicts,
  superseded_live, unprocessed_daily, flagged}}, share (0..1)}}, previous (the
  last history entry or null), index{{path (null: none), notes, parsed (notes
  parsed by this call), reread, removed, rebuilt, stale, memory, readonly}}.
  Paths are vault-relative with "/"; lines are 1-based.

Errors go to stderr with nothing on stdout, also with --json.

Kind: reads the vault; writes nothing in it (only derived files under
.graph/, and not with --dry-run).

Exit codes: 0 done; 1 score under --fail-under; 2 bad usage, vault or
schema; 3 I/O failure or bug.

Examples:
  graph.py health --vault ~/vault
  cd ~/vault && graph.py health --fail-under 80
  graph.py health --vault ~/vault --json | jq '.broken_links[] | "\\(.source):\\(.line) \\(.target)"'
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
  graph.py backlinks --vault ~/vault "Dana Reyes"
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
  graph.py orphans --vault ~/vault
"""

REPORT_EPILOG = """\
One HTML file, self-contained: inline CSS and SVG charts, no JavaScript,
nothing loaded from the network (a Content-Security-Policy forbids it).  It
reads at phone and desktop widths and follows the system's dark mode.
Sections: the health score now and over time (one point per line of
VAULT/.graph/health-history.jsonl, which each "graph.py health" run adds;
the report itself adds none), tiers over time (from
VAULT/.graph/decay-history.jsonl once decay has run), the memory
(probable duplicates, identity conflicts, cards superseded but still live,
daily notes not processed: the memory section of graph.py health), broken
links and orphans by folder, the most and the least linked notes, and
schema compliance by type (as enforce.py scores it).

Writes: VAULT/.graph/report.html (a derived file, replaced each run) and
the parsed-note cache; with -o FILE, that file instead of the derived one
(a new file in an existing folder, or with --force an existing regular
file; never a device, FIFO or symlink).  --dry-run writes nothing.

JSON keys (--json):
  path (the file written, or that would be written with --dry-run),
  written (false with --dry-run), bytes, sections{health{score, notes,
  links, broken_links, orphans, conflict_copies}, trend{points}, tiers{points} (0 when decay
  has not run), memory{probable_duplicates, identity_conflicts,
  superseded_live, unprocessed_daily, flagged, share}, folders{folders,
  with_findings}, most_linked, least_linked (notes listed),
  compliance{score, cards, findings, types}}

Errors go to stderr with nothing on stdout, also with --json.

Kind: reads the vault; writes nothing in it (only derived files under
.graph/, or the -o file, and not with --dry-run).

Exit codes: 0 done; 2 bad usage, vault or schema, or an -o file that exists
(without --force) or is not a regular file; 3 I/O failure or bug.

Examples:
  graph.py report --vault ~/vault && xdg-open ~/vault/.graph/report.html
  graph.py report --vault ~/vault -o ~/Desktop/vault.html --force
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
  graph.py fix --vault ~/vault                 # list the repairs, write nothing
  graph.py fix --vault ~/vault --diff          # also as diffs
  graph.py fix --vault ~/vault --apply         # write them
  graph.py fix --json | jq '.ambiguous[]'
"""

MV_EPILOG = """\
OLD is a note, an attachment or a folder (a folder moves with every file in
it); NEW is the new path, or an existing folder (or a path ending in "/") to
move into.  Both are file paths (not names): absolute, or relative to the
current folder when OLD is there (inside the vault or not), else to the
vault's root; a relative NEW is read as a relative OLD was.  With no vault
named, it is the one that holds OLD (see --vault).  A path outside the vault
is refused.  A note keeps ".md" (NEW without it gets it).  Refuses to move over
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
  graph.py mv --vault ~/vault "inbox/Dana.md" "people/Dana Reyes.md"          # dry run
  graph.py mv --vault ~/vault "inbox/Dana.md" people/ --apply                 # into a folder
  cd ~/vault && graph.py mv projects/old archive/2026/ --apply --json  # a folder
"""


def cmd_health(args) -> int:
    from autograph.graph import health
    from autograph.write.index_file import describe, note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=not args.dry_run)
    report = health.report_for(vault, schema, index)
    cli.warn(index.warnings)
    report["previous"] = health.previous_entry(vault.root)
    report["index"] = describe(index)
    if not args.dry_run:
        failed = health.record_run(vault.root, report)
        if failed is not None:
            print(f"warning: history not written: {failed}", file=sys.stderr)
    if args.json:
        cli.print_json(report)
    else:
        print(health.health_text(report))
    if args.fail_under is not None and report["score"] < args.fail_under:
        if not args.json:
            print(f"score {report['score']} is under --fail-under {args.fail_under:g}", file=sys.stderr)
        return cli.EXIT_FOUND
    return cli.EXIT_OK


def cmd_backlinks(args) -> int:
    from autograph.graph import backlinks
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    try:
        # no index file made for a call that may be refused (a name no note has and no link uses)
        index = note_index(vault, schema, use_disk=not args.dry_run, create=False)
        found = backlinks.find(vault, index, args.note)
    except backlinks.NoteError as exc:
        raise cli.UsageError(str(exc)) from None
    cli.warn(index.warnings)
    if found.ambiguity:
        print(f"note: {found.ambiguity}", file=sys.stderr)
    if args.json:
        cli.print_json(backlinks.backlinks_json(found))
    else:
        print(backlinks.backlinks_text(found))
    return cli.EXIT_OK


def cmd_orphans(args) -> int:
    from autograph.graph import backlinks
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=not args.dry_run)
    orphans = backlinks.orphan_notes(vault, schema, index)
    cli.warn(index.warnings)
    if args.json:
        cli.print_json(backlinks.orphans_json(orphans))
    else:
        print(backlinks.orphans_text(orphans))
    return cli.EXIT_OK


def cmd_report(args) -> int:
    from autograph.graph import report
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=not args.dry_run)
    result = report.publish(vault, schema, index, args.output, args.force, write=not args.dry_run)
    cli.warn(index.warnings)
    if args.json:
        cli.print_json(result)
    else:
        print(report.report_text(result))
    return cli.EXIT_OK


def cmd_fix(args) -> int:
    with cli.writing(args, "graph.py fix"):
        report = _fix(args)
    return report()


def _fix(args):
    """Plan and write the repairs under the writer lock; the returned
    report() prints once the lock is released."""
    from autograph.graph import linkfix
    from autograph.write.derived import save_index
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=cli.writes(args))
    plan = linkfix.plan_fix(vault, schema, index, described=not (cli.writes(args) or args.diff))
    cli.warn(index.warnings)
    if not args.dry_run:
        save_index(index)
    outcome = cli.carry_out(vault, plan.edits, cli.writes(args), args.wait, "graph.py fix", schema)
    code = cli.outcome_code(outcome)

    def report() -> int:
        if args.json:
            cli.print_json(linkfix.fix_json(vault.root, plan, outcome))
            return code
        print(linkfix.fix_text(plan, cli.writes(args)))
        cli.print_outcome(outcome, plan.edits, cli.writes(args), args.diff)
        return code

    return report


def cmd_mv(args) -> int:
    with cli.writing(args, "graph.py mv"):
        report = _mv(args)
    return report()


def _mv(args):
    """Plan and carry out the move under the writer lock (rolled back
    whole when a part of it could not be made); the returned report()
    prints once the lock is released."""
    from autograph.graph import moves
    from autograph.write.derived import save_index
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    try:
        mapping = moves.paths_of(vault, args.old, args.new)
        index = note_index(vault, schema, use_disk=cli.writes(args))
        plan = moves.plan_move(vault, mapping, schema, index)
    except moves.MoveError as exc:
        raise cli.UsageError(str(exc)) from None
    cli.warn(index.warnings)
    if not args.dry_run:
        save_index(index)
    outcome = cli.carry_out(vault, plan.changes, cli.writes(args), args.wait, "graph.py mv", schema)
    failed = moves.roll_back_unfinished(vault.root, plan, outcome, args.wait)
    if failed is not None:
        print(f"graph.py mv: {failed}", file=sys.stderr)
    warnings = plan.told(made=not outcome["rolled_back"])
    cli.warn(warnings)
    code = cli.outcome_code(outcome)

    def report() -> int:
        if args.json:
            cli.print_json(moves.move_json(vault.root, plan, outcome, warnings))
            return code
        done = cli.writes(args) and not outcome["rolled_back"]
        print(moves.move_text(plan, outcome, done))
        cli.print_outcome(outcome, plan.changes, done, False)
        diffs = moves.diff_text(plan.changes) if args.diff else ""
        if diffs:
            print(diffs)
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
    cli.add_vault(p, notes=("note",))
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
    cli.add_vault(p, notes=("old", "new"))
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
    cli.exit_now(main())
