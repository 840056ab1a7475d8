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
  engine.py init ~/vault --diff          # show what would be added
  engine.py init ~/vault --apply         # write it
"""


def cmd_init(args) -> int:
    with cli.writing(args, "engine.py init"):
        report = _init(args)
    return report()  # printed once the vault is free again (a paused pager holds no lock)


def _init(args):
    from autograph.schema import bootstrap

    vault, schema = cli.load(args)
    edits, skipped = bootstrap.plan_init(vault, schema)
    outcome = cli.carry_out(vault.root, edits, cli.writes(args), args.wait, "engine.py init", schema)
    code = cli.outcome_code(outcome)

    def report() -> int:
        if args.json:
            cli.print_json({**outcome, "skipped": skipped})
        else:
            cli.print_outcome(outcome, edits, cli.writes(args), args.diff)
            for item in skipped:
                print(f"skipped {cli.printable(item['path'])}: {cli.printable(item['reason'])}")
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
  engine.py decay ~/vault --dry-run --diff     # what tonight's run would change
  engine.py decay ~/vault                      # write it
  engine.py decay ~/vault --today 2026-01-31 --json
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
  engine.py creative ~/vault
  engine.py creative ~/vault -n 3 --seed 42 --json
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
  engine.py stats ~/vault
  engine.py stats ~/vault --json
"""

SHOWN = 20


def _date(text: str):
    import datetime

    try:
        return datetime.date.fromisoformat(text.strip()) if len(text.strip()) == 10 else None
    except ValueError:
        return None


def today_value(text: str):
    """argparse type for --today: a YYYY-MM-DD date."""
    import argparse

    value = _date(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-01-31")
    return value


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
    group.add_argument("--today", type=today_value, metavar="YYYY-MM-DD", help="the vault's date of today")
    group.add_argument("--now", type=now_value, metavar="ISO-8601", help="the instant of now (default: the clock)")


def _today(args, schema):
    from autograph.memory import decay
    from autograph.read import dates

    settings = decay.Settings.of(schema)
    return dates.today_in(settings.zone, args.today or args.now), settings


def _history_time(args, today) -> str:
    import datetime

    if args.now is not None:
        return args.now.isoformat()
    if args.today is not None:
        return today.isoformat()
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def _print_skipped(skipped: list[dict]) -> None:
    if not skipped:
        return
    from collections import Counter

    counts = Counter(item["reason"] for item in skipped)
    print("skipped: " + ", ".join(f"{reason} {n}" for reason, n in counts.most_common()))
    for item in skipped[:SHOWN]:
        print(f"  {cli.printable(item['path'])}: {item['reason']}: {cli.printable(item['detail'])}")
    if len(skipped) > SHOWN:
        print(f"  ... {len(skipped) - SHOWN} more (--json lists all)")


def cmd_decay(args) -> int:
    with cli.writing(args, "engine.py decay"):
        report = _decay(args)
    return report()


def _decay(args):
    import json

    from autograph.memory import decay
    from autograph.write import store

    vault, schema = cli.load(args)
    today, settings = _today(args, schema)
    apply = cli.writes(args)
    cache = decay.CardCache(vault, use=True)
    plan = decay.plan_decay(vault, schema, today, cache=cache)
    outcome = cli.carry_out(vault.root, plan.edits, apply, args.wait, "engine.py decay", schema)
    tiers = plan.tiers()
    if apply:
        cache.save(vault.cards(schema))
        line = {"time": _history_time(args, today), "today": today.isoformat(), "tiers": tiers}
        line["written"] = len(outcome["written"])
        try:
            store.append_line(vault.root, decay.HISTORY, json.dumps(line, ensure_ascii=False))
        except (OSError, store.PathError) as exc:
            cli.warn([f"the tier counts were not added to .graph/{decay.HISTORY}: {exc}"])
    code = cli.outcome_code(outcome)
    data = {
        "today": today.isoformat(),
        "store_relevance": settings.store_relevance,
        "cards": len(plan.readings),
        "tiers": tiers,
        "transitions": dict(plan.transitions.most_common()),
        "relevance_removed": len(plan.relevance_removed),
        "skipped": plan.skipped,
        "skipped_by_reason": plan.skipped_by_reason(),
        **outcome,
    }

    def show() -> int:
        if args.json:
            cli.print_json(data)
            return code
        print(
            f"decay {data['today']}: {cli.plural(data['cards'], 'card')} · "
            + " · ".join(f"{name} {n}" for name, n in tiers.items())
        )
        if plan.transitions:
            print(
                "tier changes: " + ", ".join(f"{k.replace('->', ' -> ')} {n}" for k, n in data["transitions"].items())
            )
        if plan.relevance_removed:
            print(f"relevance removed from {cli.plural(len(plan.relevance_removed), 'note')} (store_relevance false)")
        cli.print_outcome(outcome, plan.edits, apply, args.diff)
        _print_skipped(plan.skipped)
        return code

    return show


def _resolve_notes(vault, names: list[str]) -> list[str]:
    # card.py's reading of a NOTE: a path as given, a name as a wikilink, and a
    # name that fits several notes refused with them (touching one is a guess)
    from autograph.memory import cards

    paths, missing = [], []
    for name in names:
        try:
            path = cards.find_card(vault, name)
        except cards.Ambiguous as exc:
            raise cli.UsageError(str(exc)) from None
        if path is None:
            missing.append(name)
        else:
            paths.append(path)
    if missing:
        raise cli.UsageError("no note named " + ", ".join(repr(cli.printable(m)) for m in missing) + " in the vault")
    return paths


def cmd_touch(args) -> int:
    with cli.writing(args, "engine.py touch"):
        report = _touch(args)
    return report()


def _touch(args):
    from autograph.memory import decay

    vault, schema = cli.load(args)
    today, _ = _today(args, schema)
    plan = decay.plan_touch(vault, schema, _resolve_notes(vault, args.notes), today)
    outcome = cli.carry_out(vault.root, plan.edits, cli.writes(args), args.wait, "engine.py touch", schema)
    code = cli.outcome_code(outcome)
    data = {"today": today.isoformat(), "touched": plan.results, "skipped": plan.skipped, **outcome}

    def show() -> int:
        if args.json:
            cli.print_json(data)
            return code
        _print_touched(plan.results, outcome, cli.writes(args))
        _print_skipped(plan.skipped)
        for item in outcome["conflicts"] + outcome["failed"]:
            print(f"not written: {cli.printable(item['path'])}: {cli.printable(item['error'])}")
        return code

    return show


def _print_touched(results: list[dict], outcome: dict, applied: bool) -> None:
    written = set(outcome["written"])
    for item in results:
        state = "" if not applied or item["path"] in written else " (not written)"
        before = item["tier_before"] or "no tier"
        print(
            f"touched {cli.printable(item['path'])}: {before} -> {item['tier']}, access_count "
            f"{item['access_count']}, last_accessed {item['last_accessed']}{state}" + ("" if applied else " (dry run)")
        )
        if item["note"]:
            print(f"  note: {cli.printable(item['note'])}")


def cmd_creative(args) -> int:
    with cli.writing(args, "engine.py creative --touch") if args.touch else _nothing():
        report = _creative(args)
    return report()


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def _creative(args):
    from autograph.memory import decay

    if args.n < 0:
        raise cli.UsageError(f"-n {args.n}: give a number of cards, 0 or more")
    vault, schema = cli.load(args)
    today, settings = _today(args, schema)
    readings = decay.read_cards(vault, schema, today, settings, cache=decay.CardCache(vault))
    seed = args.seed if args.seed is not None else today.isoformat()
    picks = decay.creative(readings, args.n, seed)
    data = {
        "today": today.isoformat(),
        "seed": seed,
        "pool": sum(r.tier in ("archive", "cold") for r in readings),
        "picks": [
            {
                "path": r.path,
                "tier": r.tier,
                "days": r.days,
                "relevance": r.relevance,
                "description": _description(r),
            }
            for r in picks
        ],
    }
    code, plan, outcome = cli.EXIT_OK, None, None
    if args.touch:
        plan = decay.plan_touch(vault, schema, [r.path for r in picks], today)
        outcome = cli.carry_out(vault.root, plan.edits, cli.writes(args), args.wait, "engine.py creative", schema)
        code = cli.outcome_code(outcome)
        data.update({"touched": plan.results, "skipped": plan.skipped, **outcome})

    def show() -> int:
        if args.json:
            cli.print_json(data)
            return code
        print(
            f"creative recall {data['today']} (seed {cli.printable(str(seed))}): "
            f"{cli.plural(len(picks), 'card')} of {data['pool']} cold or archived"
        )
        for item in data["picks"]:
            print(f"  {cli.printable(item['path'])}  [{item['tier']}, {item['days']} days]")
            if item["description"]:
                print(f"      {cli.printable(item['description'])}")
        if plan is not None:
            _print_touched(plan.results, outcome, cli.writes(args))
            _print_skipped(plan.skipped)
        return code

    return show


def _description(reading) -> str:
    value = reading.properties.get("description")
    text = value.strip() if isinstance(value, str) and value.strip() else reading.path.rsplit("/", 1)[-1][:-3]
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:79] + "…"


def cmd_stats(args) -> int:
    from autograph.memory import decay

    vault, schema = cli.load(args)
    today, settings = _today(args, schema)
    cache = decay.CardCache(vault)
    data = {
        "today": today.isoformat(),
        **decay.stats(decay.read_cards(vault, schema, today, settings, cache=cache), settings),
    }
    if args.json:
        cli.print_json(data)
        return cli.EXIT_OK
    cards = data["cards"]
    print(f"stats {data['today']}: {cli.plural(cards, 'card')}")
    width = max([n for n in data["tiers"].values()] + [1])
    for name, n in data["tiers"].items():
        bar = "#" * round(40 * n / width)
        print(f"  {name:<8} {n:>7,}  {bar}")
    for label, key in (("undated", "undated"), ("not a date", "not_dates"), ("not read", "unreadable")):
        if data[key]:
            print(f"  {label:<8} {data[key]:>7,}")
    print(
        f"stale (> {data['stale_days']:g} days): {data['stale']:,} of {data['dated']:,} dated cards "
        f"({data['stale_share']:.1%}); never touched: {data['never_touched']:,} ({data['never_touched_share']:.1%})"
    )
    print(
        f"working set (active + warm): {data['working_set_bytes']:,} bytes, about {data['working_set_tokens']:,} tokens"
    )
    if len(data["by_type"]) > 1:
        print("by type:")
        for kind, tiers in data["by_type"].items():
            print(f"  {cli.printable(kind)}: " + ", ".join(f"{t} {n}" for t, n in tiers.items() if n))
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
    p.add_argument(
        "--vault", default=".", type=cli.vault_folder, help="the vault's folder (default: the current folder)"
    )
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
