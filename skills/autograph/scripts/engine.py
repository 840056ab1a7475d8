#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""engine.py: maintain a vault's system fields (init: frontmatter for bare
notes; decay, touch, creative, stats: relevance and tiers)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

INIT_EPILOG = """\
Gives every note without frontmatter (or with an empty block, '{}'
included) the keys the schema can say: type (from the note's folder:
path_type_hints, then the types' folders), status (the type's default:
status_defaults or the type's defaults) and created (a YYYY-MM-DD date in
the file name, else the date the file was last modified).  Values are
written as Obsidian writes them; a note with a BOM keeps it.  A block that
does not parse, or that is a flow mapping, is reported and left alone: a
note never gets a second block.  Notes in the templates folder
(.obsidian/templates.json, Templater's folder, schema ignore_folders) are
never given frontmatter.

Kind: adds to what people wrote, so a dry run unless --apply (--diff shows
each change).  One autograph writer per vault at a time: --wait SECONDS
waits for another.

JSON keys (--json): edits[{path, reason}], written[] (notes that now hold
their frontmatter), conflicts[{path, error, copy}] (changed by someone else
meanwhile), failed[{path, error}] (not written: read-only, a symlink, hard
links, ...), run (the run id, or null), skipped[{path, reason}] (notes not
planned: unreadable, or a block that cannot be edited).

Exit codes: 0 done; 2 bad usage, vault or schema; 3 I/O failure, another
run holding the vault, or a bug; 4 finished, but some planned writes were
skipped (conflicts, failures).

Examples:
  engine.py init --vault ~/vault --diff          # show what would be added
  engine.py init --vault ~/vault --apply         # write it
"""


def cmd_init(args) -> int:
    with cli.writing(args, "engine.py init"):
        report = _init(args)
    return report()  # printed once the vault is free again (a paused pager holds no lock)


def _init(args):
    from autograph.schema import bootstrap

    vault, schema = cli.load(args)
    edits, skipped = bootstrap.plan_init(vault, schema)
    outcome = cli.carry_out(vault, edits, cli.writes(args), args.wait, "engine.py init", schema)
    code = cli.outcome_code(outcome)

    def report() -> int:
        if args.json:
            cli.print_json(bootstrap.init_data(outcome, skipped))
        else:
            cli.print_outcome(outcome, edits, cli.writes(args), args.diff)
            cli.print_lines(bootstrap.skipped_lines(skipped))
        return code

    return report


WHEN_HELP = """\
Dates: the last access is last_accessed, else updated, else created (a date,
a date-time with or without an offset, or epoch seconds/milliseconds).  Ages
are whole calendar days in the vault's time zone (schema timezone, else the
machine's).  --today YYYY-MM-DD (the vault's date) or --now ISO-8601 (an
instant, converted to the vault's zone) replaces the clock."""

DECAY_EPILOG = f"""\
Sets each card's tier from its age: active up to decay.tiers.active days
(7), warm up to warm (21), cold up to cold (60), then archive (boundaries
inclusive).  core is set by a person and never changed.  With
decay.store_relevance true (the earlier autograph's vaults) relevance is
kept in the notes too:
  relevance = max(floor, 1 - rate(type) / (1 + ln(max(access_count, 1))) * days)
rounded to 3 decimals; with it false (the default) only the tier is, so a
nightly run rewrites only the notes whose tier moved, and a relevance key
left from earlier runs is removed once (it is autograph's own field).
Edits are surgical (every other byte stays) and made only when a stored
value changes.  A card with no date is reported as undated, a value that
is not a date (a template placeholder too) as not-a-date: both are left
alone, never treated as old.  Each run that writes appends its tier counts
to .graph/decay-history.jsonl (the tiers chart of graph.py report) and keeps
what it read of each card in .graph/cache/decay.json, so the next run reads
only the notes that changed (deleting it loses nothing but time).

{WHEN_HELP}

Kind: maintains fields autograph owns, so it writes unless --dry-run
(--diff shows each change).  One autograph writer per vault at a time:
--wait SECONDS waits for another.  Nightly cron line:
  30 3 * * *  cd ~/vault && python3 ~/.claude/skills/autograph/scripts/engine.py decay --quiet

JSON keys (--json): today, store_relevance, cards, tiers{{core, active,
warm, cold, archive}} (after the run), transitions{{"from->to": n}} ("none"
for no tier), relevance_removed, skipped[{{path, reason, detail}}] (reason:
undated, not-a-date, invalid-frontmatter, unreadable, not-editable),
skipped_by_reason{{reason: n}}, edits[{{path, reason}}], written[],
conflicts[{{path, error, copy}}], failed[{{path, error}}], run (the run id, or
null).

Exit codes: 0 done; 2 bad usage, vault or schema; 3 I/O failure, another
run holding the vault, or a bug; 4 finished, but some planned writes were
skipped (conflicts, failures).

Examples:
  engine.py decay --vault ~/vault --dry-run --diff     # what tonight's run would change
  engine.py decay --vault ~/vault                      # write it
  engine.py decay --vault ~/vault --today 2026-01-31 --json
"""

TOUCH_EPILOG = f"""\
Run on every card an agent reads.  access_count + 1, then graduated recall,
one tier up per touch: archive -> cold, cold -> warm, warm -> active, with
last_accessed set to the middle of the new tier (40, 14 and 3 days back
with the default tiers), so the card drifts back down unless it is read
again.  An active card is dated today.  A card with no tier becomes active
today (the earlier autograph made it cold: a card an agent just read is in
use).  core stays core, dated today.  A last access more recent than that
date is kept (a touch never makes a card older).  A last_accessed that is
not a date is reported and replaced; the touch still counts.  relevance is
written only with decay.store_relevance.

NOTE is a path (absolute, or relative to the current folder) inside the
vault, a vault-relative path, or a note name resolved like a wikilink from
the vault's root ("Acme", "people/Ann", "[[Acme]]"), as card.py reads one; a
name that fits several notes is refused with their paths (give a path).
Notes in templates folders or ignore_folders are not cards and are not
touched.

{WHEN_HELP}

Kind: maintains fields autograph owns, so it writes unless --dry-run.

JSON keys (--json): today, touched[{{path, tier_before, tier, access_count,
last_accessed, note}}] (note: why an old value was replaced, or null),
skipped[{{path, reason, detail}}], edits[{{path, reason}}], written[],
conflicts[{{path, error, copy}}], failed[{{path, error}}], run.

Exit codes: 0 done; 2 bad usage (a NOTE that names no note or several), vault or
schema; 3 I/O failure, another run holding the vault, or a bug; 4 finished,
but some planned writes were skipped.

Examples:
  engine.py touch "people/Ann Lee.md" --vault ~/vault
  engine.py touch Acme "Project X" --vault ~/vault --json
"""

CREATIVE_EPILOG = f"""\
Picks N cards from the coldest tiers (archive and cold, as their dates give
them today) to look at again: forgotten ideas, people not seen for a while.
The same --seed gives the same cards; without --seed the vault's date is the
seed, so the picks are stable within a day and change the next.  --touch
touches the picked cards (see engine.py touch --help), which writes.

{WHEN_HELP}

JSON keys (--json): today, seed, pool (cards in the coldest tiers),
picks[{{path, tier, days, relevance, description}}]; with --touch also
touched[], skipped[], edits[], written[], conflicts[], failed[], run.

Exit codes: 0 done; 2 bad usage, vault or schema; 3 I/O failure or a bug;
4 with --touch, some planned writes were skipped.

Examples:
  engine.py creative --vault ~/vault
  engine.py creative --vault ~/vault -n 3 --seed 42 --json
"""

STATS_EPILOG = f"""\
Read only.  Tiers overall and per type as the cards' dates give them today
(core as stored), cards without a date or with a value that is not one, the
stale share (last access more than decay.stale_days, 90, days ago, of the
dated cards), the never-touched share (no access_count of 1 or more, of all
cards), and the bytes of each tier and of the working set (active + warm;
tokens about bytes / 4).

{WHEN_HELP}

JSON keys (--json): today, cards, tiers{{core, active, warm, cold, archive}},
by_type{{type: {{tier: n}}}} ("(no type)" for none), undated, not_dates,
unreadable (not read, or frontmatter that does not parse), dated, stale,
stale_days, stale_share, never_touched, never_touched_share, bytes{{tier:
n}}, working_set_bytes, working_set_tokens.

Exit codes: 0 done; 2 bad usage, vault or schema; 3 I/O failure or a bug.

Examples:
  engine.py stats --vault ~/vault
  engine.py stats --vault ~/vault --json
"""


def now_value(text: str):
    """argparse type for --now: an ISO 8601 date-time (with an offset: an
    instant; without: the vault's wall-clock time)."""
    import argparse

    from autograph.read import dates

    try:
        value = dates.parse_when(text.strip())
    except dates.NotADate:
        value = None
    if value is None or type(value).__name__ != "datetime":
        raise argparse.ArgumentTypeError(f"{text!r} is not a date-time like 2026-01-31T09:00:00+01:00")
    return value


def _add_when(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--today", type=cli.today_value, metavar="YYYY-MM-DD", help="the vault's date of today")
    group.add_argument("--now", type=now_value, metavar="ISO-8601", help="the instant of now (default: the clock)")


def _today(args, schema):
    from autograph.memory import decay

    settings = decay.Settings.of(schema)
    return settings.today(args.today or args.now), settings


def cmd_decay(args) -> int:
    with cli.writing(args, "engine.py decay"):
        report = _decay(args)
    return report()


def _decay(args):
    from autograph.memory import decay, decay_report

    apply = cli.writes(args)
    # stamps, for a run that writes: its notes go into the index (record_written); a dry run holds none
    vault, schema = cli.load(args, stamps=apply)
    today, settings = _today(args, schema)
    cache = decay.CardCache(vault, use=True)
    plan = decay.plan_decay(vault, schema, today, cache=cache, described=not (apply or args.diff))
    outcome = cli.carry_out(vault, plan.edits, apply, args.wait, "engine.py decay", schema)
    data = decay_report.decay_data(plan, settings, today, outcome)
    if apply:  # the cache and the tiers chart's line; a line not added is told, the writes stand
        written = len(outcome["written"])
        cli.warn(decay.record_run(vault, schema, cache, today, data["tiers"], written, args.today or args.now))
    code = cli.outcome_code(outcome)

    def show() -> int:
        if args.json:
            cli.print_json(data)
            return code
        cli.print_lines(decay_report.decay_lines(data))
        cli.print_outcome(outcome, plan.edits, apply, args.diff)
        cli.print_lines(decay_report.skipped_lines(data["skipped"]))
        return code

    return show


def cmd_touch(args) -> int:
    with cli.writing(args, "engine.py touch"):
        report = _touch(args)
    return report()


def _touch(args):
    from autograph.memory import cards, decay, decay_report

    vault, schema = cli.load(args)
    today, _ = _today(args, schema)
    # card.py's reading of a NOTE; a name that fits none or several is a cards.BadRequest: exit 2 (cli.run)
    plan = decay.plan_touch(vault, schema, cards.find_cards(vault, schema, args.notes), today)
    outcome = cli.carry_out(vault, plan.edits, cli.writes(args), args.wait, "engine.py touch", schema)
    code = cli.outcome_code(outcome)
    data = decay_report.touch_data(plan, today, outcome)

    def show() -> int:
        if args.json:
            cli.print_json(data)
        else:
            cli.print_lines(decay_report.touch_lines(data, cli.writes(args)))
        return code

    return show


def cmd_creative(args) -> int:
    import contextlib

    with cli.writing(args, "engine.py creative --touch") if args.touch else contextlib.nullcontext():
        report = _creative(args)
    return report()


def _creative(args):
    from autograph.memory import decay, decay_report

    if args.n < 0:
        raise cli.UsageError(f"-n {args.n}: give a number of cards, 0 or more")
    vault, schema = cli.load(args)
    today, settings = _today(args, schema)
    data = decay_report.creative_data(vault, schema, today, settings, args.n, args.seed)
    code = cli.EXIT_OK
    if args.touch:
        plan = decay.plan_touch(vault, schema, [pick["path"] for pick in data["picks"]], today)
        outcome = cli.carry_out(vault, plan.edits, cli.writes(args), args.wait, "engine.py creative", schema)
        code = cli.outcome_code(outcome)
        data.update(decay_report.touch_data(plan, today, outcome))  # its today is the picks' own

    def show() -> int:
        if args.json:
            cli.print_json(data)
        else:
            cli.print_lines(decay_report.creative_lines(data, cli.writes(args)))
        return code

    return show


def cmd_stats(args) -> int:
    from autograph.memory import decay_report

    vault, schema = cli.load(args)
    today, settings = _today(args, schema)
    data = decay_report.stats_data(vault, schema, today, settings)
    if args.json:
        cli.print_json(data)
    else:
        cli.print_lines(decay_report.stats_lines(data))
    return cli.EXIT_OK


def build_parser():
    parser = cli.make_parser(
        "engine.py",
        "Maintain the vault's system fields.",
        "Run 'engine.py COMMAND --help' for each command's options, JSON keys and examples.",
    )
    commands = parser.add_subparsers(metavar="COMMAND")
    p = cli.subparser(
        commands,
        "init",
        "give notes without frontmatter a type, status and created date",
        "Add frontmatter (type, status, created) to notes that have none.",
        INIT_EPILOG,
    )
    cli.add_common(p, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(p, changes_people_text=True)
    p.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    p.set_defaults(func=cmd_init)

    p = cli.subparser(
        commands,
        "decay",
        "set each card's tier (and relevance) from its last access; nightly",
        "Set each card's tier (and, with decay.store_relevance, relevance) from its last access.",
        DECAY_EPILOG,
    )
    cli.add_common(p, dry_run_help="write nothing: show what would change")
    cli.add_writes(p, changes_people_text=False)
    p.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    _add_when(p)
    p.set_defaults(func=cmd_decay)

    p = cli.subparser(
        commands,
        "touch",
        "count a read of cards and move them one tier up",
        "Count a read of each NOTE: access_count + 1, one tier up (graduated recall).",
        TOUCH_EPILOG,
    )
    p.add_argument("notes", nargs="+", metavar="NOTE", help="a note's path or name (resolved like a wikilink)")
    cli.add_vault(p, positional=False, notes=("notes",))
    cli.add_common(p, vault=False, dry_run_help="write nothing: show what would change")
    cli.add_writes(p, changes_people_text=False)
    _add_when(p)
    p.set_defaults(func=cmd_touch)

    p = cli.subparser(
        commands,
        "creative",
        "pick cards from the coldest tiers to look at again",
        "Pick N cards from the coldest tiers (archive, cold) for review; the same seed gives the same cards.",
        CREATIVE_EPILOG,
    )
    cli.add_common(p, dry_run_help="write nothing (with --touch: show what the touch would change)")
    p.add_argument("-n", type=int, default=5, metavar="N", help="how many cards (default 5)")
    p.add_argument("--seed", metavar="S", help="seed of the draw (default: the vault's date of today)")
    p.add_argument("--touch", action="store_true", help="touch the picked cards (writes)")
    cli.add_writes(p, changes_people_text=False)
    _add_when(p)
    p.set_defaults(func=cmd_creative)

    p = cli.subparser(
        commands,
        "stats",
        "tiers overall and per type, stale and never-touched shares, working-set size",
        "Tiers overall and per type, stale share, never-touched share, bytes of the working set.",
        STATS_EPILOG,
    )
    cli.add_common(p)
    _add_when(p)
    p.set_defaults(func=cmd_stats)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
