#!/usr/bin/env python3
"""engine.py: maintain a vault's system fields (init: frontmatter for bare notes)."""

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
    from autograph import bootstrap

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
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
