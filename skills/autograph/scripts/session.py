#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""session.py: Claude Code session hooks: what a session starts with, and the checkpoint before it stops."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The hooks run at every session start and every stop: a call with only the
# options below is read by hand (_quick) and imports autograph.hosts.session
# alone; anything else (--help, a typo, a bad word) goes through argparse
# and autograph.cli, so usage errors read as every script's.

DESCRIPTION = (
    "Claude Code session hooks.  start (SessionStart): tells the agent where the vault is, how much "
    "room its memory index has, the last health score, and to look a subject up before writing.  "
    "stop (Stop): once per session, when autograph wrote to the vault or the index changed, asks the "
    "agent to report what it added, updated and retired and to check the index."
)

EPILOG = """\
Both read the hook's JSON on stdin (when stdin is not a terminal; empty
stdin is no input).  Input that is not a JSON object: no output, one line on
stderr, exit 0.  Exit codes: 0 for every hook input; 2 bad usage.  Stderr
lines start "session.py:" (--quiet: none); every line the agent reads
starts "autograph:".

Where: the vault is --vault, else $AUTOGRAPH_VAULT, else the nearest folder
holding .obsidian/, schema.json or .graph/journal/ upward from the hook's
"cwd", then from $CLAUDE_PROJECT_DIR.  The schema is --schema, else the
vault's schema.json; only its "memory" (folder, index), "index" (caps) and
"session" (budget_tokens) keys are read.  The memory store is --store, else
VAULT/<memory.folder> (default memory/), its index <store>/<memory.index>
(default MEMORY.md).  No vault and no store: no output at all.

start: prints one JSON object (--json changes nothing: it is the output):
  {"hookSpecificOutput": {"hookEventName": "SessionStart",
    "additionalContext": "autograph: ...\\nautograph: ..."}}
  additionalContext, a few lines in this order: the vault's path; the
  index's lines and bytes against its soft and hard caps and the target to
  compact to (hard 200 lines / 25,000 bytes by default; schema "index",
  AUTOGRAPH_INDEX_* variables); the last health score, its change since the
  run before, broken links and invalid frontmatter (the last lines of
  .graph/health-history.jsonl only), or "no health run yet"; the rule
  "look a subject up before writing" with card.py remember's path.
  Budget: session.budget_tokens of the schema (default 150; a token is
  counted as 4 UTF-8 bytes): lines are dropped whole, least important first
  (health, the index's headroom, the vault, an index at a cap, the rule);
  a word is never cut.  Nothing fits: no output.
  It also appends "export AUTOGRAPH_VAULT=<vault>" to $CLAUDE_ENV_FILE
  (once; a regular file or a new one, never a FIFO), so the session's shell
  commands find the vault, and records the start in the vault's (else the
  store's) .graph/sessions/<session_id>.json: the time, the newest
  journaled run and the index's stat.  A session id that is not a safe file
  name, or a .graph/ that cannot be written, is a note on stderr: the
  context is printed all the same.  Records older than 7 days are removed.
  It never reads the vault's notes.

stop: prints nothing, or once per session
  {"decision": "block", "reason": "autograph: checkpoint before you finish: ..."}
  which makes the agent go on with the reason: report what it added,
  updated and retired, then run check.py on the index.  Only for the event
  "Stop" with stop_hook_active false, a session whose start was recorded,
  and journaled runs that wrote to the vault or an index whose size, mtime
  or inode changed since.  The record is marked first, so it asks once.
  --plugin: only when $CLAUDE_PLUGIN_OPTION_CHECKPOINT is "true" or "1"
  (the autograph plugin's "checkpoint" option); without it, always.

Register them (init.py claude --checkpoint adds stop) in .claude/settings.json:
  {"hooks": {
    "SessionStart": [{"matcher": "startup|resume|clear|compact",
      "hooks": [{"type": "command", "command": "python3 /path/to/session.py start"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "python3 /path/to/session.py stop"}]}]}}

Examples:
  echo '{"session_id":"s1","cwd":"/home/me/vault","hook_event_name":"SessionStart"}' | session.py start
  session.py start --vault ~/vault < /dev/null      # by hand: what a session would be told
  session.py start --vault ~/vault --store ~/vault/.memory < hook-input.json
  session.py stop --vault ~/vault < hook-input.json
  CLAUDE_PLUGIN_OPTION_CHECKPOINT=true session.py stop --plugin < hook-input.json
"""

_OPTIONS = {
    "start": ("--vault", "--store", "--schema", "--json", "--quiet"),
    "stop": ("--vault", "--store", "--json", "--quiet", "--plugin"),
}
_FLAGS = ("--json", "--quiet", "--plugin")


def _quick(argv: list[str]) -> dict | None:
    """The options of a plain hook call, read without argparse; None for
    anything else (argparse then reads it, or explains what is wrong)."""
    if not argv or argv[0] not in _OPTIONS:
        return None
    found = {"command": argv[0], "vault": None, "store": None, "schema": None, "json": False, "plugin": False}
    found.update(quiet=False)
    words = iter(argv[1:])
    for word in words:
        name, equals, value = word.partition("=")
        if name not in _OPTIONS[argv[0]] or (equals and name in _FLAGS):
            return None
        if name in _FLAGS:
            found[name[2:].replace("-", "_")] = True
            continue
        if not equals:
            value = next(words, None)
        if not value or not value.strip() or value.startswith("-") or not value.isprintable():
            return None
        found[name[2:]] = value
    return found


def _named(text: str) -> str:
    """argparse type for a folder or file name: an empty one (an unset
    variable in a hook command) is refused, not read as the current folder."""
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a path")
    return text


def _argument_parser():
    from autograph import cli

    parser = cli.make_parser("session.py", DESCRIPTION, EPILOG)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    start = cli.subparser(
        commands,
        "start",
        "a SessionStart hook: the context a session starts with",
        "Read a SessionStart hook's JSON on stdin; print the context the agent starts with (see session.py --help).",
    )
    stop = cli.subparser(
        commands,
        "stop",
        "a Stop hook: the completion checkpoint, once per session",
        "Read a Stop hook's JSON on stdin; once per session, when autograph wrote, ask for a report "
        "(see session.py --help).",
    )
    for sub in (start, stop):
        sub.add_argument(
            "--vault", metavar="DIR", type=_named, help="the vault (default: $AUTOGRAPH_VAULT, else found upward)"
        )
        sub.add_argument(
            "--store", metavar="DIR", type=_named, help="the memory store (default: VAULT/<memory.folder>)"
        )
        sub.add_argument("--json", action="store_true", help="print the hook's JSON (the output either way)")
        sub.add_argument("-q", "--quiet", action="store_true", help="no notes on stderr")
        sub.set_defaults(func=_run)
    start.add_argument(
        "--schema", metavar="PATH", type=_named, help="the schema.json to read (default: VAULT/schema.json)"
    )
    stop.add_argument(
        "--plugin",
        action="store_true",
        help="act only when $CLAUDE_PLUGIN_OPTION_CHECKPOINT is true or 1 (the plugin's checkpoint option)",
    )
    return cli, parser


def _payload() -> bytes | None:
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.buffer.read()


def _run(args) -> int:
    """Run one hook; every failure is a line on stderr and exit 0 (a hook
    must never break the session)."""
    from autograph.hosts import session

    scripts = os.path.dirname(os.path.abspath(__file__))
    out, notes = "", []
    try:
        payload = _payload()
        if args.command == "start":
            schema = getattr(args, "schema", None)
            out, notes = session.start(payload, vault=args.vault, store=args.store, schema=schema, scripts=scripts)
        else:
            plugin = getattr(args, "plugin", False)
            out, notes = session.stop(payload, vault=args.vault, store=args.store, plugin=plugin, scripts=scripts)
    except Exception as exc:  # a bug must not break the session; say so
        notes = [f"session.py: internal error ({exc.__class__.__name__}: {exc}); nothing to say"]
    for note in [] if args.quiet else notes:
        print(note, file=sys.stderr)
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    return 0


class _Args:
    def __init__(self, options: dict):
        self.__dict__.update(options)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    options = _quick(argv)
    if options is not None:
        return _run(_Args(options))
    cli, parser = _argument_parser()
    return cli.run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
