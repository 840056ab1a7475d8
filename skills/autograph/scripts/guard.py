#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""guard.py: a Claude Code and Codex PreToolUse hook that stops an index growing past its cap."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# autograph.hosts.caps (only os and json: this runs before every write) is imported
# once there is a hook call to check, so --help imports nothing of autograph.

DESCRIPTION = (
    "A PreToolUse hook for Claude Code and Codex: reads the hook's JSON on stdin and denies a "
    "write or patch that would grow an always-loaded index (MEMORY.md) past its hard cap."
)

EPILOG = """\
What it checks: Write, Edit and MultiEdit calls (and the create, str_replace
and insert commands of a text-editor tool; Codex's apply_patch, below)
whose file is an index: its base
name, or the base name of the file it resolves to (through symlinks and
"..", relative paths taken from the hook's cwd), is an index name
(case-insensitive; default MEMORY.md).  It computes the file as it would be
after the call and denies only when that result is over a hard cap AND
larger than the current file in that dimension, so compacting in steps is
always allowed.  Lines count "\\n" only (a last line without one counts;
CRLF counts once); bytes are UTF-8 bytes on disk.  Each edit's result size
is counted before it is built: an Edit or MultiEdit whose result would pass
10 times the hard byte cap (or the current size, if larger) is denied
without building it.

Codex's apply_patch (@openai/codex 0.171): Codex runs a plugin's hooks for
its patch tool with the hook input of Claude Code's shape (codex-rs/hooks,
PreToolUseCommandInput: session_id, turn_id, transcript_path, cwd,
hook_event_name, model, permission_mode, tool_name, tool_input,
tool_use_id), tool_name "apply_patch" and the patch text, a string, in
tool_input.command (a matcher "Write" or "Edit" selects it too: Codex keeps
those names as aliases).  A Bash command "apply_patch <<'EOF' ... EOF"
(optionally "cd DIR && " first) is a patch too: Codex applies it.  The
patch ("*** Begin Patch", then "*** Add File: P" with "+" lines, "*** Delete
File: P", "*** Update File: P" [+ "*** Move to: Q"] with "@@" hunks of " ",
"-", "+" lines, "*** End Patch") is parsed and applied as Codex does
(codex-rs/apply-patch: hunks found exactly, then ignoring trailing
whitespace, then trimmed; CRLF kept; checked against 0.171's own
apply_patch), paths taken from the hook's cwd, and every index it would
leave is judged: grown past a hard cap by an Update, an Add or a file moved
onto it (against the index there now), denied; shrunk, kept or deleted,
allowed; a patch that touches no index passes silently.  A patch Codex
rejects (it does not parse, a hunk is not in its file) passes with a note.
Results are sized before they are built (10 times the byte cap, as for
edits) and hunk searches are bounded: past either, the patch is denied.
Codex honours the same deny object (hookSpecificOutput, permissionDecision
"deny" with a permissionDecisionReason; additionalContext), and rejects an
"allow" without updatedInput, so the answer has one shape for both hosts.

Caps and index names: hard 200 lines / 25,000 bytes, soft 160 / 20,000,
and a compaction target of 140 lines / 17,500 bytes (Claude Code loads the
first 200 lines or 25KB of MEMORY.md and drops the rest; from 160 lines or
about 20,000 bytes it asks the model itself to compact to under 140 lines),
and MEMORY.md, unless the project's schema.json sets others in its "index"
key (index.files, index.soft, index.hard, index.target_lines,
index.target_bytes) and "memory" key (memory.index).  A target above the
soft cap is lowered to it.  The schema is --schema PATH (init.py writes it
into the hook command), else $CLAUDE_PROJECT_DIR/schema.json, else
schema.json in the hook input's cwd.
A schema that is missing, not valid JSON or does not validate never blocks
a write: the built-in names and caps are used and the output says so.
The environment overrides both:
  AUTOGRAPH_INDEX_HARD_LINES    AUTOGRAPH_INDEX_HARD_BYTES
  AUTOGRAPH_INDEX_SOFT_LINES    AUTOGRAPH_INDEX_SOFT_BYTES
  AUTOGRAPH_INDEX_TARGET_LINES  AUTOGRAPH_INDEX_TARGET_BYTES
  AUTOGRAPH_INDEX_FILES         index base names, comma-separated
A variable that is not a positive whole number is ignored (and said).

Output (the hook protocol, Claude Code 2.1.9+ and Codex; always exit code 0):
  allowed, nothing to say: nothing on stdout.
  otherwise one JSON object on stdout:
    {"hookSpecificOutput": {"hookEventName": "PreToolUse",
      "permissionDecision": "deny", "permissionDecisionReason": "...",
      "additionalContext": "..."}}
  permissionDecision and permissionDecisionReason only to deny: the reason
  says which cap (lines or bytes), the counts after the call and now, the
  caps, the target to compact to ("to under 140 lines / 17,500 bytes") and
  how.  additionalContext, which the model reads, only when there is
  something to know: the index reached its soft cap with a write that grows
  it (with the target), it stays over its hard cap (allowed: it does not
  grow; with the target), its size could not be checked, or the schema
  could not be used.  It never answers "allow" (that would skip your
  permission rules).  The same notes go to stderr, one per line.  Every
  message (the reason, each additionalContext line, each stderr line)
  starts "autograph guard:".
Reads and other tools pass silently.  Input that is not JSON passes, with one
line on stderr.  A missing index is sized as empty; an unreadable one never
blocks, and one that is not a regular file (a FIFO, a device) is never
opened for a blocking read: the call passes and the output says why.  A call
the host itself rejects passes with a note and no size check: a text field
that is not a string, a replace_all that is not true or false (only the
boolean true replaces every occurrence; "false", a string, is invalid), an
insert_line that is not a line number of the file (NaN, Infinity, 1.5, -1,
past the end).  The guard writes nothing (--dry-run changes nothing).
--defer-to-plugin: accepted and ignored.  init.py of earlier versions put it
on the hook it registered, to stay silent while the plugin was enabled; now
the plugin's hooks step aside while init.py's install is present (and
init.py installs no hooks while the plugin is enabled), so the hook that
remains must always answer.
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
    """Parse options only when there are any: the hook itself may run bare,
    and argparse costs more than the whole check.  (argparse alone, not
    autograph.cli, which loads the vault and store modules: this runs
    before every write.)"""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # the usage, then the guard's own prefix
            self.print_usage(sys.stderr)
            self.exit(2, f"autograph guard: error: {message}\n")

    parser = Parser(
        prog="guard.py", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--schema",
        metavar="PATH",
        help='the project\'s schema.json, whose "index" and "memory" keys give the index names and caps '
        "(default: $CLAUDE_PROJECT_DIR/schema.json, else schema.json in the hook's cwd)",
    )
    parser.add_argument(
        "--defer-to-plugin",
        action="store_true",
        help="accepted and ignored (written by init.py of earlier versions; the guard that runs always answers)",
    )
    parser.add_argument("--dry-run", action="store_true", help="accepted for symmetry; the guard never writes")
    return parser.parse_args(argv)


def _load_index(path: str) -> tuple[list[str], dict]:
    """The index names (``index.files`` and the memory store's index) and
    the ``index`` section of the schema at ``path``; raises SchemaError.
    Imported only when a write is checked: most calls never need it."""
    from autograph.schema.model import load_schema

    schema = load_schema(None, path)
    return [*schema.index_files, schema.memory["index"]], schema.section("index")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    schema = None
    if argv:
        args = _options(argv)
        schema = args.schema
    if sys.stdin is None or sys.stdin.isatty():
        print("autograph guard: reads a Claude Code hook's JSON on stdin; see guard.py --help", file=sys.stderr)
        return 2
    try:
        payload = sys.stdin.buffer.read()
    except OSError as exc:
        print(f"autograph guard: cannot read the hook input ({exc}); the call is allowed unchecked", file=sys.stderr)
        return 0
    from autograph.hosts import caps

    try:
        answer, notes = caps.review(payload, os.environ, schema=schema, load=_load_index)
    except Exception as exc:  # a bug must not block writes; say so
        answer, notes = "", [f"autograph guard: internal error ({exc.__class__.__name__}: {exc}); the call is allowed"]
    for note in notes:
        print(note, file=sys.stderr)
    if answer:
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
