#!/usr/bin/env python3
"""generate_schema.py: a draft schema.json from what discover.py found."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli, drafting, jsonfile, store  # noqa: E402

EPILOG = """\
The draft states what the vault already does and invents nothing:
  node_types        one per explicit "type" value: its usual folder, the
                    properties at least --coverage of its notes have
                    (required), the statuses in use plus "superseded"
  field_fixes       only spellings of a status that differ in letter case
                    or spacing ("Active" -> "active"); never similar words
  path_type_hints   folders whose typed notes are 80%+ one type (3+ notes)
  status_defaults   the most used status of a type that requires one
  domain_inference  each top-level folder -> a slug of its name
  properties        .obsidian/types.json, else a kind all values share
  decay, hubs       the built-in defaults
Every description is a TODO for a person.  Review the draft before running
enforce.py --apply with it.

Writes SCHEMA (-o) atomically and never over an existing file without
--force; without -o the draft goes to stdout.  SCHEMA must be a regular
file or a new name in a folder that exists: a symlink, a device, a FIFO or
a missing folder is refused.  --dry-run writes nothing.

Kind: writes only the file named by -o (never a note).

Exit codes: 0 done; 2 bad usage, unreadable discovery, SCHEMA exists
without --force or is not a file autograph may write; 3 I/O failure or bug.

Examples:
  discover.py ~/vault --json > discovery.json
  generate_schema.py discovery.json -o ~/vault/schema.json
  discover.py ~/vault --json | generate_schema.py - --coverage 0.8
"""


def _read_discovery(name: str) -> dict:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        return jsonfile.loads(text)
    except FileNotFoundError:
        raise cli.UsageError(f"{name}: file not found; make one with: discover.py VAULT --json > {name}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise cli.UsageError(f"{name}: cannot read it ({exc})") from None
    except jsonfile.JSONError as exc:
        raise cli.UsageError(f"{name}: {exc}; give the output of discover.py --json") from None


def cmd_generate(args) -> int:
    try:
        draft = drafting.draft_schema(_read_discovery(args.discovery), args.coverage)
    except ValueError as exc:
        raise cli.UsageError(f"{args.discovery}: {exc}") from None
    except RecursionError:
        raise cli.UsageError(f"{args.discovery}: nested too deeply; give the output of discover.py --json") from None
    text = json.dumps(draft, ensure_ascii=False, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return cli.EXIT_OK
    target = Path(args.output)
    if target.is_dir():
        raise cli.UsageError(f"{target} is a folder; give a file name such as {target / 'schema.json'}")
    if os.path.lexists(target) and not args.force:
        raise cli.UsageError(f"{target} exists; review it, or pass --force to replace it")
    if args.dry_run:
        print(f"would write {target} ({len(draft['node_types'])} types)")
        return cli.EXIT_OK
    try:
        store.write_output(target, text.encode("utf-8"), overwrite=args.force)
    except store.Conflict:
        raise cli.UsageError(f"{target} changed while the draft was made; run again") from None
    print(f"wrote {target}: {len(draft['node_types'])} types; review every TODO before enforce.py --apply")
    return cli.EXIT_OK


def _coverage(text: str) -> float:
    return cli.score_value(text, top=1.0)


def build_parser():
    parser = cli.make_parser("generate_schema.py", "Draft a schema.json from a discovery.", EPILOG)
    parser.add_argument("discovery", metavar="DISCOVERY.json", help="output of discover.py --json ('-' for stdin)")
    parser.add_argument("-o", "--output", metavar="SCHEMA", help="write the draft here (default: stdout)")
    parser.add_argument("--force", action="store_true", help="replace SCHEMA if it exists")
    parser.add_argument(
        "--coverage",
        type=_coverage,
        default=0.9,
        metavar="SHARE",
        help="share of a type's notes that must have a property for it to be required (default 0.9)",
    )
    parser.add_argument("--dry-run", action="store_true", help="write nothing; say what would be written")
    parser.set_defaults(func=cmd_generate)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
