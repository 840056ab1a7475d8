#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""generate_schema.py: a draft schema.json from what discover.py found."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

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
  discover.py --vault ~/vault --json > discovery.json
  generate_schema.py discovery.json -o ~/vault/schema.json
  discover.py --vault ~/vault --json | generate_schema.py - --coverage 0.8
"""


def _read_discovery(name: str) -> dict:
    from autograph.read import jsonfile

    shown = cli.printable(name)
    try:
        if name == "-":
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:
                raise cli.UsageError("-: there is no standard input to read; give the discovery file's name")
            text = jsonfile.read_stream(stream)
        else:
            text = jsonfile.read_text(name)
        return jsonfile.loads(text)
    except FileNotFoundError:
        raise cli.UsageError(f"{shown}: file not found; make one with: discover.py VAULT --json > {shown}") from None
    except IsADirectoryError:
        raise cli.UsageError(f"{shown}: is a folder; give the file discover.py --json wrote") from None
    except jsonfile.NotAFile as exc:
        fix = "give the output of discover.py --json" if name == "-" else "give the file discover.py --json wrote"
        raise cli.UsageError(f"{shown}: {exc}; {fix}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise cli.UsageError(f"{shown}: cannot read it ({exc})") from None
    except jsonfile.JSONError as exc:
        raise cli.UsageError(f"{shown}: {exc}; give the output of discover.py --json") from None


def _check_output(name: str, force: bool) -> Path:
    """The -o target, refused with the real reason before anything is
    drafted or written: an empty name, a folder, a symlink, a FIFO, device
    or socket, a missing folder, or an existing file without --force.
    derived.write_output checks again right before it writes."""
    from autograph.read import jsonfile

    if not name:
        raise cli.UsageError("-o: empty file name; give the schema's path, such as VAULT/schema.json")
    target = Path(name)
    shown = cli.printable(name)
    try:
        info = os.lstat(name)
    except OSError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise cli.UsageError(
            f"{shown} is a symlink; autograph does not write through it (give the file it points to, or another name)"
        )
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise cli.UsageError(
            f"{shown} is a folder; give a file name such as {cli.printable(str(target / 'schema.json'))}"
        )
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise cli.UsageError(
            f"{shown} is {jsonfile.file_kind(info.st_mode)}, not a regular file; autograph writes only regular files"
            " (give another name)"
        )
    if info is None and name.endswith(("/", os.sep)):
        raise cli.UsageError(f"{shown} ends with a slash but is not a folder; give a file name such as schema.json")
    if not target.parent.is_dir():
        raise cli.UsageError(f"{cli.printable(str(target.parent))} is not an existing folder; create it first")
    if info is not None and not force:
        raise cli.UsageError(f"{shown} exists; review it, or pass --force to replace it")
    return target


def cmd_generate(args) -> int:
    from autograph.read import jsonfile
    from autograph.schema import drafting

    target = None if args.output in (None, "-") else _check_output(args.output, args.force)
    try:
        draft = drafting.draft_schema(_read_discovery(args.discovery), args.coverage)
    except ValueError as exc:
        raise cli.UsageError(f"{cli.printable(args.discovery)}: {exc}") from None
    except RecursionError:
        raise cli.UsageError(
            f"{cli.printable(args.discovery)}: nested too deeply; give the output of discover.py --json"
        ) from None
    # a lone surrogate in a vault value (a "\ud800" escape) stays a JSON escape
    text = jsonfile.dumps(draft, indent=2) + "\n"
    if target is None:
        sys.stdout.write(text)
        return cli.EXIT_OK
    shown = cli.printable(str(target))
    if args.dry_run:
        print(f"would write {shown} ({len(draft['node_types'])} types)")
        return cli.EXIT_OK
    from autograph.write import derived
    from autograph.write.confine import TargetError
    from autograph.write.replace import Conflict

    try:
        derived.write_output(target, text.encode("utf-8"), overwrite=args.force)
    except Conflict:
        raise cli.UsageError(f"{shown} changed while the draft was made; run again") from None
    except TargetError as exc:
        raise cli.UsageError(cli.printable(str(exc))) from None
    print(f"wrote {shown}: {len(draft['node_types'])} types; review every TODO before enforce.py --apply")
    return cli.EXIT_OK


def _coverage(text: str) -> float:
    return cli.score_value(text, top=1.0)


def build_parser():
    parser = cli.make_parser("generate_schema.py", "Draft a schema.json from a discovery.", EPILOG)
    parser.add_argument("discovery", metavar="DISCOVERY.json", help="output of discover.py --json ('-' for stdin)")
    parser.add_argument("-o", "--output", metavar="SCHEMA", help="write the draft here (default, or '-': stdout)")
    parser.add_argument("--force", action="store_true", help="replace SCHEMA if it exists")
    parser.add_argument(
        "--coverage",
        type=_coverage,
        default=0.9,
        metavar="SHARE",
        help="share of a type's notes that must have a property for it to be required (default 0.9)",
    )
    parser.add_argument("--dry-run", action="store_true", help="write nothing; say what would be written")
    cli.add_quiet(parser)  # it reads no notes: accepted so that every command takes it
    parser.set_defaults(func=cmd_generate)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
