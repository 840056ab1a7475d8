#!/usr/bin/env python3
"""guard.py: a Claude Code PreToolUse hook that stops an index growing past its cap."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from autograph import caps  # noqa: E402  (only os and json: this runs before every write)

DESCRIPTION = (
    "A Claude Code PreToolUse hook: reads the hook's JSON on stdin and denies a "
    "write that would grow an always-loaded index (MEMORY.md) past its hard cap."
)

EPILOG = """\
What it checks: Write, Edit and MultiEdit calls (and the create, str_replace
and insert commands of a text-editor tool) whose file's base name is an index
name (case-insensitive; default MEMORY.md).  It computes the file as it would
be after the call and denies only when that result is over a hard cap AND
larger than the current file in that dimension, so compacting in steps is
always allowed.  Lines count "\\n" only (a last line without one counts; CRLF
counts once); bytes are UTF-8 bytes on disk.

Caps: hard 200 lines / 25,000 bytes, soft 150 / 20,000 (Claude Code loads the
first 200 lines or 25KB of MEMORY.md and drops the rest), from the schema's
"index" key with --schema, overridden by the environment:
  AUTOGRAPH_INDEX_HARD_LINES  AUTOGRAPH_INDEX_HARD_BYTES
  AUTOGRAPH_INDEX_SOFT_LINES  AUTOGRAPH_INDEX_SOFT_BYTES
  AUTOGRAPH_INDEX_FILES       index base names, comma-separated
A variable that is not a positive whole number is ignored (said on stderr).

Output (the hook protocol, always exit code 0):
  allowed: nothing on stdout (notes, such as a soft-cap warning, on stderr)
  denied:  one JSON object on stdout:
    {"hookSpecificOutput": {"hookEventName": "PreToolUse",
      "permissionDecision": "deny", "permissionDecisionReason": "..."}}
  The reason gives the resulting counts, the caps and how to compact.
Reads and other tools pass silently.  Input that is not JSON passes, with one
line on stderr.  A missing index is sized as empty; an unreadable one never
blocks.  The guard writes nothing (--dry-run changes nothing).
Exit codes: 0 for every hook input; 2 bad usage (Claude Code treats exit 2
as a block and shows the message, so a broken hook command is noticed).

Register it (init.py claude does this) in .claude/settings.json:
  {"hooks": {"PreToolUse": [{"matcher": "Write|Edit|MultiEdit",
    "hooks": [{"type": "command", "command": "python3 /path/to/guard.py"}]}]}}

Examples:
  echo '{"tool_name":"Write","tool_input":{"file_path":"/tmp/MEMORY.md","content":"- a\\n"}}' | guard.py
  guard.py --schema ~/vault/schema.json < hook-input.json
"""


def _options(argv: list[str]):
    """Parse options only when there are any: the hook itself runs bare, and
    argparse plus the schema loader cost more than the whole check."""
    from autograph import cli

    parser = cli.make_parser("guard.py", DESCRIPTION, EPILOG)
    parser.add_argument("--schema", metavar="PATH", help='schema.json whose "index" key gives the index names and caps')
    parser.add_argument("--dry-run", action="store_true", help="accepted for symmetry; the guard never writes")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    files = section = None
    if argv:
        args = _options(argv)
        if args.schema:
            from autograph.schema import SchemaError, load_schema

            try:
                schema = load_schema(None, args.schema)
            except SchemaError as exc:
                print(f"guard.py: bad schema: {exc}", file=sys.stderr)
                return 2
            section = schema.section("index")
            files = section.get("files")
    if sys.stdin is None or sys.stdin.isatty():
        print("guard.py: reads a Claude Code hook's JSON on stdin; see guard.py --help", file=sys.stderr)
        return 2
    try:
        payload = sys.stdin.buffer.read()
    except OSError as exc:
        print(f"guard: cannot read the hook input ({exc}); the call is allowed unchecked", file=sys.stderr)
        return 0
    try:
        answer, notes = caps.review(payload, os.environ, files, section)
    except Exception as exc:  # a bug must not block writes; say so
        answer, notes = "", [f"guard: internal error ({exc.__class__.__name__}: {exc}); the call is allowed"]
    for note in notes:
        print(note, file=sys.stderr)
    if answer:
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
