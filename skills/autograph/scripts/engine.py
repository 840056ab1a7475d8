#!/usr/bin/env python3
"""engine.py: maintain a vault's system fields (init: frontmatter for bare notes)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import bootstrap, cli  # noqa: E402

INIT_EPILOG = """\
Gives every note without frontmatter (or with an empty block) the keys the
schema can say: type (from the note's folder: path_type_hints, then the
types' folders), status (the type's default: status_defaults or the type's
defaults) and created (a YYYY-MM-DD date in the file name, else the date the
file was last modified).  Values are written as Obsidian writes them; a
note with a BOM keeps it.  A block that does not parse is reported and left
alone: a note never gets a second block.

Writes by default (these are system fields); --dry-run previews, --diff
shows each change.

JSON keys (--json): edits[{path, reason}], written[], conflicts[{path,
error}], skipped[{path, reason}].

Exit codes: 0 done; 2 bad usage, vault or schema; 3 I/O failure or bug.

Examples:
  engine.py init ~/vault --dry-run --diff
  engine.py init ~/vault
"""


def cmd_init(args) -> int:
    vault, schema = cli.load(args)
    edits, skipped = bootstrap.plan_init(vault, schema)
    outcome = cli.carry_out(vault.root, edits, not args.dry_run, args.diff, args.json)
    if args.json:
        cli.print_json({**outcome, "skipped": skipped})
    else:
        for item in skipped:
            print(f"skipped {cli.printable(item['path'])}: {cli.printable(item['reason'])}")
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
    cli.add_common(p, dry_run_help="write nothing; list the notes that would change")
    p.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    p.set_defaults(func=cmd_init)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
