#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""daily.py: candidates for cards from daily notes (extract), and which daily notes are done (mark)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

WHICH = """\
Which notes are daily (templates and ignore_folders never are):
  - a note whose type is 'daily' (or a type_aliases spelling of it);
  - a note in a folder the schema gives the 'daily' type (the type's
    folder, or path_type_hints);
  - a note Obsidian's Daily notes plugin would have made: in the folder of
    .obsidian/daily-notes.json (the vault's root without it) and named by its
    date format (moment.js tokens; default YYYY-MM-DD), e.g. 2026-12-01.md.
  A daily note's date comes from its name, else from its date property."""

EXTRACT_EPILOG = f"""\
{WHICH}

What is extracted, from the body only and never inside code, comments or
math: bold names (**Ada Lovelace**), links to notes that do not exist,
emails, @handles, phone numbers (normalised as identity keys are), ISO dates
(YYYY-MM-DD, other than the note's own) and open tasks (- [ ] ...); and,
under 'linked', each link to an existing card with the other cards linked
on its line: "[[contacts/bob|Bob]] on [[projects/alpha]]" gives both, each
'with' the other.

Which notes: by default every daily note not yet marked processed, or marked
and edited by a person since (autograph's own edits, a link rewritten by
graph.py fix or mv or dedup, a frontmatter fix by enforce, do not count);
--date D the notes of that day, --all every daily note (processed ones too,
with status 'processed').

Writes: .graph/daily/<date>.json for each date extracted (derived files, not
notes; nothing with --dry-run).  The same notes give the same candidates and
the same files.

JSON keys (--json): vault, schema, settings{{folder, format, source,
schema_folder}}, notes[{{path, date, by, status (new|changed|processed),
hash, candidates{{names, missing_links, emails, handles, phones, dates,
tasks}}, linked[{{path, type, line, context, with[]}}]}}] (each candidate:
value, line, context, count; names and missing_links: note (the path the
name resolves to, or null); emails, handles, phones: normalised; linked: one
entry per card and line, path the card the link resolves to, type its type,
line 1-based, context the line trimmed, with the other cards linked on that
line), skipped[{{path, reason}}], files[] (written .graph paths),
counts{{kind: n}} (each candidate kind, and linked).

Exit codes: 0 done (also when there is nothing new); 2 bad usage, vault or
schema; 3 I/O failure or a bug.

Examples:
  daily.py extract --vault ~/vault                     # what is new since the last mark
  daily.py extract --vault ~/vault --date 2026-12-01 --json
  daily.py extract --vault ~/vault --all --dry-run     # every daily note, write nothing
"""

MARK_EPILOG = f"""\
{WHICH}

Sets autograph_processed: sha256:<hex> in the frontmatter of the daily notes
of --date (a surgical edit: every other byte stays).  The hash is of what a
person wrote and extract reads: the body, each link's target and wikilink
alias left out.  So a later extract skips the note while only autograph
changed it (a link retargeted by graph.py fix or mv, dedup's [[A. Example]]
-> [[Alex Example|A. Example]], enforce's frontmatter fixes, decay's fields),
and sees it again once a person edits its text.  A mark written by an earlier
version (a hash of the whole note without that key and decay's fields) still
counts while the note is unchanged.  --hash H marks only a note whose hash is
still H (the 'hash' extract printed), so a note edited between extract and
mark is not marked as done.

Kind: maintains a field autograph owns, so it writes unless --dry-run
(journaled: undo.py can take it back).  One autograph writer per vault at a
time: --wait SECONDS waits for another.

JSON keys (--json): vault, date, notes[{{path, status}}], left[{{path,
reason}}] (not marked: already marked, changed, frontmatter that does not
parse), edits[{{path, reason}}], written[], conflicts[{{path, error, copy}}],
failed[{{path, error}}], run.

Exit codes: 0 done; 1 no daily note has that date; 2 bad usage, vault or
schema; 3 I/O failure or a bug; 4 some planned writes were skipped
(conflicts, failures).

Examples:
  daily.py mark --vault ~/vault --date 2026-12-01
  daily.py mark --vault ~/vault --date 2026-12-01 --hash sha256:1f2e... --json
  daily.py mark --vault ~/vault --date 2026-12-01 --dry-run
"""


def day(text: str) -> str:
    """argparse type: a calendar date written YYYY-MM-DD."""
    import argparse
    import datetime as dt

    try:
        if len(text) != 10:
            raise ValueError
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD") from None


def cmd_extract(args) -> int:
    from autograph.memory import daily
    from autograph.read import jsonfile
    from autograph.read.vault import GRAPH_DIR
    from autograph.write import derived

    vault, schema = cli.load(args)
    config = daily.settings(vault, schema)
    found, skipped = daily.daily_notes(vault, schema, config)
    resolver = vault.resolver
    cards = daily.LinkedCards(vault, schema)
    notes = []
    for item in found:
        if args.date and item.date != args.date:
            continue
        note = vault.note(item.path, keep=False)
        status = daily.state(note)
        if status == "unreadable":
            skipped.append({"path": item.path, "reason": note.error or "the frontmatter does not parse"})
            continue
        if not (args.date or args.all) and status == "processed":
            continue
        notes.append(
            {
                "path": item.path,
                "date": item.date,
                "by": item.by,
                "status": status,
                "hash": daily.fingerprint(note),
                "candidates": daily.extract(note, resolver, schema, item.date),
                "linked": daily.linked(note, resolver, schema, cards),
            }
        )
    files = []
    if not args.dry_run:
        by_date: dict[str, list] = {}
        for entry in notes:
            by_date.setdefault(entry["date"], []).append(entry)
        for date, entries in sorted(by_date.items()):
            name = f"daily/{date}.json"
            data = jsonfile.dumps({"date": date, "notes": entries}, indent=1) + "\n"
            derived.write_derived(vault.root, name, data.encode("utf-8"), durable=False)
            files.append(f"{GRAPH_DIR}/{name}")
    counts = {kind: sum(len(n["candidates"][kind]) for n in notes) for kind in daily.KINDS}
    counts["linked"] = sum(len(n["linked"]) for n in notes)
    if args.json:
        cli.print_json(
            {
                "vault": str(vault.root),
                "schema": str(schema.source) if schema.source else None,
                "settings": {
                    "folder": config.folder,
                    "format": config.format,
                    "source": config.source,
                    "schema_folder": config.schema_folder,
                },
                "notes": notes,
                "skipped": skipped,
                "files": files,
                "counts": counts,
            }
        )
        return cli.EXIT_OK
    _print_extract(notes, skipped, files, counts, args)
    return cli.EXIT_OK


def _print_extract(notes, skipped, files, counts, args) -> None:
    p = cli.printable
    which = f"of {args.date}" if args.date else "(all)" if args.all else "not processed yet"
    print(f"{cli.plural(len(notes), 'daily note')} {which}")
    labels = {"missing_links": "missing links", "linked": "linked cards"}
    for entry in notes:
        print(f"\n{p(entry['path'])}  {entry['date']}  {entry['status']}")
        for kind, items in entry["candidates"].items():
            if not items:
                continue
            print(f"  {labels.get(kind, kind)}:")
            for item in items[:20]:
                extra = f" -> {p(item['note'])}" if item.get("note") else ""
                norm = item.get("normalised")
                extra += f" ({p(norm)})" if norm and norm != item["value"] else ""
                times = f" ×{item['count']}" if item["count"] > 1 else ""
                print(f"    {p(item['value'])}{extra}  line {item['line']}{times}")
            if len(items) > 20:
                print(f"    ... {len(items) - 20} more (--json lists all)")
        if entry["linked"]:
            print("  linked cards:")
            for item in entry["linked"][:20]:
                kind = f" ({p(item['type'])})" if item["type"] else ""
                others = f"  with {', '.join(p(o) for o in item['with'])}" if item["with"] else ""
                print(f"    {p(item['path'])}{kind}  line {item['line']}{others}")
            if len(entry["linked"]) > 20:
                print(f"    ... {len(entry['linked']) - 20} more (--json lists all)")
    if notes:
        print("\n" + ", ".join(f"{labels.get(k, k)} {n}" for k, n in counts.items()))
    for item in skipped:
        print(f"skipped: {p(item['path'])}: {p(item['reason'])}")
    for name in files:
        print(f"wrote {p(name)}")
    if notes:
        print("when the cards are written: daily.py mark --vault VAULT --date DATE --hash HASH (the hash listed)")


def cmd_mark(args) -> int:
    with cli.writing(args, "daily.py mark"):
        report = _mark(args)
    return report()


def _mark(args):
    from autograph.memory import daily

    vault, schema = cli.load(args)
    found, _ = daily.daily_notes(vault, schema)
    chosen = [item for item in found if item.date == args.date]
    edits, left = daily.plan_mark(vault, chosen, args.hash)
    outcome = cli.carry_out(vault, edits, cli.writes(args), args.wait, "daily.py mark", schema)
    code = cli.outcome_code(outcome, found=not chosen)
    notes = [{"path": item.path, "status": daily.state(vault.note(item.path))} for item in chosen]

    def report() -> int:
        if args.json:
            cli.print_json({"vault": str(vault.root), "date": args.date, "notes": notes, "left": left, **outcome})
            return code
        if not chosen:
            print(f"no daily note of {args.date}")
            return code
        cli.print_outcome(outcome, edits, cli.writes(args), False)
        for item in left:
            print(f"not marked: {cli.printable(item['path'])}: {cli.printable(item['reason'])}")
        return code

    return report


def build_parser():
    parser = cli.make_parser(
        "daily.py",
        "Candidates for cards from daily notes, and marks for the daily notes that were processed.",
        "Run 'daily.py COMMAND --help' for each command's options, JSON keys and examples.",
    )
    commands = parser.add_subparsers(metavar="COMMAND")
    p = cli.subparser(
        commands,
        "extract",
        "list candidates for cards in daily notes",
        "List what in daily notes could become a card: bold names, links to missing notes, emails, "
        "handles, phones, dates and open tasks; write them to .graph/daily/ for the agent.",
        EXTRACT_EPILOG,
    )
    cli.add_common(p, dry_run_help="write nothing, not even .graph/daily/")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--date", type=day, metavar="YYYY-MM-DD", help="the daily notes of this date only")
    which.add_argument("--all", action="store_true", help="every daily note, processed ones too")
    p.set_defaults(func=cmd_extract)

    p = cli.subparser(
        commands,
        "mark",
        "mark a day's daily notes as processed",
        "Record in the frontmatter of the daily notes of --date that they were processed "
        "(autograph_processed: their hash), so extract skips them until they are edited.",
        MARK_EPILOG,
    )
    cli.add_common(p, dry_run_help="show what would be marked; write nothing")
    cli.add_writes(p, changes_people_text=False)
    p.add_argument("--date", type=day, required=True, metavar="YYYY-MM-DD", help="the date of the daily notes to mark")
    p.add_argument("--hash", metavar="HASH", help="mark only a note whose hash is still HASH (from extract)")
    p.set_defaults(func=cmd_mark)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
