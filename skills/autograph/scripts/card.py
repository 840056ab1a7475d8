#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""card.py: create and update cards in place, one command per step of the protocol."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
The update-in-place protocol: search first (search.py QUERY, search.py
--identity email=...), then one of
  new     ADD a card (refused when its identity, its name or an alias
          of that name exists)
  set     UPDATE fields (old values go to ## History; equal values: nothing)
  retire  SUPERSEDE a card by another
  (nothing: NOOP, when the card already says it)
then link what it relates to (link) and note what happened (log).  Every
command that writes also touches the card (access_count + 1, tier,
last_accessed) and sets updated, in the same one write.

NOTE and OTHER: a path (people/Dana Reyes, Dana Reyes.md; always taken
as given) or a name resolved as a wikilink at the vault's root.  A name
that fits several notes (people/Dana Reyes.md and a stray root Dana
Reyes.md, or two files differing in letter case) is refused with the
candidates listed (exit 2): give the path.  A name that is only another
card's alias is named in the error.

field=value splits at the first '='; the value is one YAML flow value:
tags=[a, b] a list, n=3 a number, flag=true a bool, role="3" text, x= empty.
Unquoted text is kept whole (a: b stays text).  A field that holds a list
keeps a list.

JSON keys (--json): command, path (the card), today, refused (null, or
{reason, message, matches[{path, field, value, retired}] (live cards
first), missing[]} with reason
identity-match, exists, by-itself, by-superseded, missing-required,
not-supersedable or not-editable), changes[{path,
field, old, new} or {path, section, line}], notes[], edits[{path, reason}],
written[], conflicts[{path, error, copy}], failed[{path, error}], run.

Kind: an agent's deliberate write, so it writes unless --dry-run; each run
is journaled (undo.py undo RUN takes it back).  It waits up to 10 seconds
(--wait) for another autograph run writing to the vault.

Exit codes: 0 done (or nothing to do); 1 refused: the identity or the name
exists (the card is named), or retire --by names the card itself or a card
that is itself retired (a cycle or a chain would leave no current card);
2 bad usage (a missing required field, an unknown type, a NOTE that names
no note or several notes, retiring a card whose type cannot be superseded); 3 I/O failure or a bug; 4 the
write was skipped (the card changed meanwhile, cannot be written, or its
frontmatter does not parse).

Examples:
  card.py new person "Alex Example" email=alex@example.com status=active description="CTO at Acme" --vault ~/vault
  card.py set "Alex Example" role=CEO company="[[Acme]]" --vault ~/vault
  card.py log "Alex Example" "Met at the Berlin offsite" --vault ~/vault
  card.py link "Alex Example" Acme "Project Atlas" --vault ~/vault
  card.py retire "Old Alex" --by "Alex Example" --vault ~/vault --json
"""


NOTE_HELP = "the card: a path, or a name that fits one note (resolved like a wikilink)"


def _common(p) -> None:
    cli.add_vault(p, positional=False, notes=("note", "others", "by"))
    cli.add_common(p, vault=False, dry_run_help="write nothing: show what would change")
    cli.add_writes(p, changes_people_text=False, wait=10.0)
    p.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    p.add_argument("--today", type=cli.today_value, metavar="YYYY-MM-DD", help="the date to write (default: today)")


def cmd_card(args) -> int:
    with cli.writing(args, f"card.py {args.command}"):
        report = _card(args)
    return report()


def _card(args):
    from autograph.memory import cards, decay

    vault, schema = cli.load(args)
    today = args.today or decay.Settings.of(schema).today()
    plan = cards.plan_command(vault, schema, args.command, vars(args), today)
    apply = cli.writes(args)
    outcome = cli.carry_out(vault.root, plan.edits, apply, args.wait, f"card.py {args.command}", schema)
    code = cards.exit_code(plan, cli.outcome_code(outcome))
    data = cards.report(plan, today, outcome)

    def show() -> int:
        if args.json:
            cli.print_json(data)
            return code
        cli.print_lines(cards.report_lines(plan))
        if plan.edits:  # a refused plan has none
            cli.print_outcome(outcome, plan.edits, apply, args.diff)
        return code

    return show


def build_parser():
    parser = cli.make_parser(
        "card.py",
        "Create and update cards in place: new, set, log, link, retire.",
        EPILOG,
    )
    commands = parser.add_subparsers(metavar="COMMAND", dest="command")
    p = cli.subparser(
        commands,
        "new",
        "ADD: create a card of a type (refused when its identity or name exists)",
        "Create a card of TYPE titled TITLE in the type's folder, with its required fields and defaults.",
        "Exit codes: 0 created; 1 refused (a card with the same identity, or a note of that name, exists;\n"
        "named in --json refused.matches); 2 a required field has no value (refused.missing) or bad usage.\n\n"
        "Example:\n  card.py new person 'Alex Example' email=alex@example.com status=active description='CTO at Acme'",
    )
    p.add_argument("type", metavar="TYPE", help="a type of the schema (node_types), or one of its aliases")
    p.add_argument("title", metavar="TITLE", help="the card's title; its file name (forbidden characters replaced)")
    p.add_argument("fields", nargs="*", metavar="field=value", help="fields to set (values as YAML flow values)")
    p.add_argument("--force", action="store_true", help="create it even when its identity or name exists elsewhere")
    _common(p)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "set",
        "UPDATE: set fields; the old values go to ## History (equal values: nothing)",
        "Set each field=value on NOTE; an old value different from the new one goes to ## History.",
        "Nothing is written when every field already holds its value (no touch either).\n\n"
        "Example:\n  card.py set 'Alex Example' role=CEO tags='[team, berlin]'",
    )
    p.add_argument(
        "note", metavar="NOTE", help="the card: a path, or a name that fits one note (resolved like a wikilink)"
    )
    p.add_argument("fields", nargs="+", metavar="field=value", help="fields to set (values as YAML flow values)")
    _common(p)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "log",
        "add a dated line under ## Log",
        "Add '- DAY: TEXT' under NOTE's ## Log (nothing when the same line is there).",
        "Example:\n  card.py log 'Alex Example' Met at the offsite",
    )
    p.add_argument(
        "note", metavar="NOTE", help="the card: a path, or a name that fits one note (resolved like a wikilink)"
    )
    p.add_argument("text", nargs="+", metavar="TEXT", help="the line (several words are joined by spaces)")
    _common(p)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "link",
        "add [[OTHER]] under ## Related, once",
        "Add '- [[OTHER]]' under NOTE's ## Related for each OTHER no link there resolves to yet.",
        "The link is written in the shortest form that resolves to OTHER.\n\n"
        "Example:\n  card.py link 'Alex Example' Acme 'Project Atlas'",
    )
    p.add_argument(
        "note", metavar="NOTE", help="the card: a path, or a name that fits one note (resolved like a wikilink)"
    )
    p.add_argument("others", nargs="+", metavar="OTHER", help="notes to link (each must exist)")
    _common(p)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "retire",
        "SUPERSEDE: mark a card superseded by another",
        "Mark NOTE superseded by OTHER: status superseded, superseded_by, links both ways, a History line.",
        "Example:\n  card.py retire 'Alex (old)' --by 'Alex Example'",
    )
    p.add_argument("note", metavar="NOTE", help="the card to retire: a path or a name")
    p.add_argument("--by", required=True, metavar="OTHER", help="the card that supersedes it")
    _common(p)
    p.set_defaults(func=cmd_card)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
