#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""check.py: the lines and bytes of an always-loaded index against its caps."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the check runs: --help imports nothing more)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from autograph.hosts import caps

EPILOG = """\
An agent host loads one index into every session and silently drops what
does not fit: Claude Code loads the first 200 lines or 25KB of MEMORY.md.
check.py sizes each index the way the loader does: lines count "\\n" only (a
last line without one counts; CRLF counts once); bytes are UTF-8 bytes on
disk, not characters.

What it checks: INDEX, a file; or every index of VAULT, a folder: the files
in the schema's "index.files" (default MEMORY.md) and the memory store's index
(<memory.folder>/<memory.index>, default memory/MEMORY.md) that exist.

Caps: hard 200 lines / 25,000 bytes, soft 160 / 20,000, and the target to
compact to, 140 lines / 17,500 bytes (Claude Code's own: from 160 lines or
about 20,000 bytes it asks to compact MEMORY.md to under 140 lines), from
the schema's "index" key (index.hard, index.soft, index.target_lines,
index.target_bytes; --schema, else schema.json in VAULT or in INDEX's
folder), overridden by AUTOGRAPH_INDEX_HARD_LINES, AUTOGRAPH_INDEX_HARD_BYTES,
AUTOGRAPH_INDEX_SOFT_LINES, AUTOGRAPH_INDEX_SOFT_BYTES,
AUTOGRAPH_INDEX_TARGET_LINES, AUTOGRAPH_INDEX_TARGET_BYTES.  Over a hard cap
means greater than it (exactly 200 lines is loaded whole); the soft cap warns
once it is reached, naming the target; a target above the soft cap is
lowered to it.  Each index's line of the report (with an indented line
under it saying how to compact), and every warning and error, starts
"check.py:".  check.py writes nothing (--dry-run changes nothing).

JSON keys (--json):
  files[{path, lines, bytes, loaded_lines, status, over[], near[], advice}],
  caps{soft{lines, bytes}, hard{lines, bytes}, target{lines, bytes},
  sources{}}, status
  status is "ok", "soft" (at a soft cap) or "over" (over a hard cap: the host
  loads only loaded_lines whole lines); the top-level status is the worst.
  over[] and near[] name the dimensions ("lines", "bytes"); advice is null
  for "ok", else how to compact, to under the target; sources names the
  environment variable behind each overridden cap or target ("target.lines").

Exit codes: 0 every index under its hard caps (a warning line at a soft cap);
1 an index over a hard cap; 2 bad usage, no index found, an unreadable file,
an index that is not a regular file (a FIFO or a device: never waited on) or
is over 1 GiB, a bad schema or a bad AUTOGRAPH_INDEX_* value; 3 I/O failure
or bug.

Examples:
  check.py ~/.claude/projects/my-project/memory/MEMORY.md
  check.py --vault ~/vault --json | jq '.files[] | select(.status != "ok")'
  AUTOGRAPH_INDEX_HARD_LINES=400 check.py MEMORY.md
"""

PREFIX = "check.py: "
COMPACT = (
    "one short pointer line per note (- [Title](note.md) — hook), detail in the notes, retired entries in archive/"
)


def _advice(row: dict, limits: caps.Caps) -> str | None:
    """How to compact an index at or over a cap, naming the target; None for "ok"."""
    if row["status"] == "ok":
        return None
    return f"compact it to under {limits.target_text()}: {COMPACT}"


def _amount(row: dict, dimension: str) -> str:
    return f"{row[dimension]:,} {dimension}" if dimension == "bytes" else cli.plural(row[dimension], "line")


def _human(rows: list[dict], limits: caps.Caps) -> str:
    out = []
    for row in rows:
        size = f"{cli.printable(row['path'])}: {_amount(row, 'lines')}, {_amount(row, 'bytes')}"
        if row["status"] == "over":
            dims = " and ".join(f"{limits.hard[d]:,} {d}" for d in row["over"])
            dropped = row["lines"] - row["loaded_lines"]
            out.append(
                f"{PREFIX}{size}: over the hard cap of {dims}; the host loads only the first "
                f"{cli.plural(row['loaded_lines'], 'line')} and drops {dropped}"
            )
            out.append(f"  {_advice(row, limits)}")
        elif row["status"] == "soft":
            dims = " and ".join(f"{limits.soft[d]:,} {d}" for d in row["near"])
            out.append(
                f"{PREFIX}warning: {size}: at the soft cap of {dims}; "
                f"compact it to under {limits.target_text()} now "
                f"(hard cap {limits.hard['lines']:,} lines / {limits.hard['bytes']:,} bytes)"
            )
            out.append(f"  {COMPACT}")
        else:
            out.append(f"{PREFIX}{size}: ok (hard cap {limits.hard['lines']:,} lines / {limits.hard['bytes']:,} bytes)")
    return "\n".join(out)


def cmd_check(args) -> int:
    from autograph.hosts import caps, store_doctor
    from autograph.read import size
    from autograph.schema.model import load_schema

    named = args.target if args.target is not None else args.vault
    target = Path(named)
    if not target.exists():
        raise cli.UsageError(f"{named}: no such file or folder; give the index (MEMORY.md) or a vault's folder")
    if target.is_dir():
        schema = load_schema(target, args.schema)
        found = store_doctor.index_files(target, schema.index_files, schema.memory)
        if not found:
            looked = ", ".join(schema.index_files)
            raise cli.UsageError(
                f"no index in {named} (looked for {looked} and the memory store's index); "
                f'give the index file\'s path, or list it in schema.json "index.files"'
            )
        files = [(name, target / name) for name in found]
    else:
        # the caps of the vault that holds the index (found upward from it), else of its folder
        schema = load_schema(Path(args.vault) if args.vault is not None else target.parent, args.schema)
        files = [(named, target)]
    for warning in schema.warnings:  # as cli.warn, with the command's name first
        print(f"{PREFIX}warning: {cli.printable(warning)}", file=sys.stderr)
    try:
        limits, _ = caps.caps_from(schema.section("index"))
    except caps.CapsError as exc:
        raise cli.UsageError(str(exc)) from None
    rows = []
    for shown, path in files:
        try:
            row = {"path": shown, **caps.check_file(path, limits)}
        except size.NotRegular as exc:  # a FIFO or a device: opened without blocking, never read
            raise cli.UsageError(f"{shown}: {exc}; an index is a regular file, give its path") from None
        except OSError as exc:
            raise cli.UsageError(f"cannot read {shown}: {exc.strerror or exc}") from None
        rows.append({**row, "advice": _advice(row, limits)})
    status = (
        "over"
        if any(r["status"] == "over" for r in rows)
        else ("soft" if any(r["status"] == "soft" for r in rows) else "ok")
    )
    if args.json:
        cli.print_json({"files": rows, "caps": limits.as_dict(), "status": status})
    else:
        print(_human(rows, limits))
    return cli.EXIT_FOUND if status == "over" else cli.EXIT_OK


def build_parser():
    parser = cli.make_parser(
        "check.py",
        "Size an always-loaded index (MEMORY.md) in lines and bytes against its soft and hard caps, "
        "and say what to compact it to.",
        EPILOG,
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="INDEX|VAULT",
        type=cli.vault_folder,
        help="the index file, or a folder whose indexes to check (default: the vault, as --vault)",
    )
    cli.add_vault_or_path(parser, "target")
    cli.add_common(parser, vault=False, dry_run_help="accepted for symmetry; check.py never writes")
    parser.set_defaults(func=cmd_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
