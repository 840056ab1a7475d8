#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""init.py: wire autograph into an agent host (the skill, the index guard or the rules, an index)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
What it installs:
  claude  the skill in .claude/skills/autograph/ and guard.py as a PreToolUse
          hook (matcher Write|Edit|MultiEdit) in .claude/settings.json, merged
          into the JSON that is there: other keys and hooks are kept, and so
          are the file's indentation, line endings and mode.  The hook's
          command names the schema (--schema, else PROJECT/schema.json when
          there is one) so the guard enforces its index names and caps, and
          carries --defer-to-plugin: it stays silent while the autograph
          Claude Code plugin, which registers the same guard, is enabled.
  codex   the skill in .agents/skills/autograph/ and a block of memory rules
          in AGENTS.md, between <!-- autograph:begin --> and
          <!-- autograph:end --> lines; the rest of the file is kept.
  --user  puts them in the home folder instead: ~/.claude/ (or
          $CLAUDE_CONFIG_DIR) for claude; ~/.agents/skills/ and ~/.codex/AGENTS.md
          (or $CODEX_HOME) for codex.
  Both create the store's index from assets/MEMORY.md when it has none: the
  store is --store, else PROJECT/<memory.folder of PROJECT/schema.json>
  (default PROJECT/memory); with --user only when --store is given.

Running it again changes nothing.  What it wrote is recorded in
<skill>/.autograph-install.json; --uninstall removes exactly that: skill files
not changed since (changed ones are kept and named), the hook group or the
rules block (settings.json and AGENTS.md come back byte for byte when nobody
edited them since), and folders it created once empty.  It never touches the
store: the index and the notes stay.  Writes are atomic; --dry-run shows the
plan and writes nothing.

It never overwrites or removes what it did not write, and refuses (exit 2,
nothing written, the message names each file) when the skill folder holds
a file that differs from autograph's and that no install record names (your
own file, another skill called autograph, an installed file you edited), or
a symbolic link (it never writes or removes through one there); when
settings.json already runs another autograph guard.py; or when settings.json
holds a key twice (Claude Code reads only the last one) or is nested too
deeply to parse; when settings.json, AGENTS.md or a file in the skill folder
is not a regular file (a FIFO, a device: never waited on); or when the
install record names a path outside the skill folder (".." or an absolute
path; the record may come with a clone) or a folder init never creates.
Move or merge what it names, then run it again.  settings.json and AGENTS.md
themselves may be symbolic links: they are edited at the file they point to,
but only when that file's folder exists (init never creates a folder where a
link points).  A UTF-8 byte order mark at the start of settings.json is kept
byte for byte (Claude Code's CLI reads such a file; its desktop app may not).

JSON keys (--json): host, scope ("project" or "user"), root, skill, config
(settings.json or AGENTS.md), store (null without one), schema (the schema
the hook names, or null), uninstall, dry_run, actions[{path, action, what,
note}], conflicts[{path, error}] (files changed while it ran, left as they
were), failed[{path, error}] (files it could not write: permissions, I/O).
action is create, update, restore, remove, unchanged or kept; paths are
relative to root when inside it.

Exit codes: 0 done; 2 bad usage, a bad schema, a settings.json / AGENTS.md
it cannot edit safely (not valid JSON, a key twice, nested too deeply,
markers that do not pair up, not UTF-8, not a regular file, a link into a
missing folder), an install record naming paths outside the skill folder, or
files it did not write in its way (the message says what to fix; nothing is
written); 3 an I/O failure or a bug; 4 finished, but some
planned writes were skipped (a file changed while it ran, or could not be
written: listed in conflicts and failed, and left as they were; run it
again).

Examples:
  init.py claude --project ~/code/app
  init.py claude --project ~/vault --schema ~/vault/schema.json
  init.py codex --project ~/vault --store ~/vault/.memory
  init.py claude --user --dry-run
  init.py claude --project ~/code/app --uninstall
"""


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _human(report: dict, dry_run: bool) -> str:
    verb = "would " if dry_run else ""
    title = "uninstall" if report["uninstall"] else "install"
    out = [
        f"{title} autograph for {report['host']} ({report['scope']}: {cli.printable(report['root'])})"
        + (" (dry run: nothing written)" if dry_run else "")
    ]
    skill = [a for a in report["actions"] if a["what"] == "skill"]
    if skill:
        counts: dict[str, int] = {}
        for action in skill:
            counts[action["action"]] = counts.get(action["action"], 0) + 1
        summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        out.append(f"  skill   {cli.printable(report['skill'])}/  files: {summary}")
        out += [f"          kept {cli.printable(a['path'])}: {a['note']}" for a in skill if a["action"] == "kept"]
    for action in report["actions"]:
        if action["what"] == "skill":
            continue
        word = action["action"] if action["action"] in ("unchanged", "kept") else verb + action["action"]
        note = f" ({action['note']})" if action["note"] else ""
        out.append(f"  {action['what']}: {cli.printable(action['path'])} {word}{note}")
    for conflict in report["conflicts"]:
        out.append(f"  conflict: {cli.printable(conflict['error'])}")
    for failure in report["failed"]:
        out.append(f"  not written: {cli.printable(failure['path'])}: {cli.printable(failure['error'])}")
    return "\n".join(out)


def cmd_init(args) -> int:
    from autograph.hosts import wiring
    from autograph.schema.model import load_schema

    source = Path(__file__).resolve().parent.parent
    folder = "memory"
    schema_file = None
    if args.schema:
        schema_file = Path(args.schema).absolute()
        schema = load_schema(None, schema_file)  # a bad schema is exit 2 before anything is planned
        folder = schema.memory["folder"]
    elif not args.user:
        project = Path(args.project or ".")
        if project.is_dir() and (project / "schema.json").is_file():
            schema_file = (project / "schema.json").absolute()
            folder = load_schema(project).memory["folder"]
    try:
        layout = wiring.layout(args.host, args.project, args.user, args.store, folder)
        if args.uninstall:
            cleanup = wiring.removable_dirs(layout)
            actions = wiring.plan_uninstall(layout, source, args.python, schema_file)
        else:
            cleanup = None
            actions = wiring.plan_install(layout, source, args.python, schema=schema_file)
    except wiring.HostError as exc:
        raise cli.UsageError(str(exc)) from None
    skipped = [] if args.dry_run else wiring.apply(actions, cleanup)
    conflicts = [a for a in skipped if a.conflict]
    failed = [a for a in skipped if not a.conflict]
    root = layout.root
    report = {
        "host": args.host,
        "scope": layout.scope,
        "root": str(root),
        "skill": _shown(layout.skill, root),
        "config": _shown(layout.config, root),
        "store": _shown(layout.store, root) if layout.store else None,
        "schema": _shown(schema_file, root) if schema_file and args.host == "claude" else None,
        "uninstall": bool(args.uninstall),
        "dry_run": bool(args.dry_run),
        "actions": [
            {"path": _shown(a.path, root), "action": a.action, "what": a.what, "note": a.note} for a in actions
        ],
        "conflicts": [{"path": _shown(a.path, root), "error": a.conflict} for a in conflicts],
        "failed": [{"path": _shown(a.path, root), "error": a.failed} for a in failed],
    }
    if args.json:
        cli.print_json(report)
    else:
        print(_human(report, args.dry_run))
    if skipped:
        print(
            f"init.py: {cli.plural(len(skipped), 'planned write')} skipped "
            f"({len(conflicts)} changed while init ran, {len(failed)} could not be written) and left as found; "
            "run init again",
            file=sys.stderr,
        )
        return cli.EXIT_SKIPPED
    return cli.EXIT_OK


def build_parser():
    parser = cli.make_parser(
        "init.py",
        "Install autograph into an agent host: the skill, the index guard hook (claude) or the memory "
        "rules in AGENTS.md (codex), and an index for the memory store; or --uninstall it.",
        EPILOG,
    )
    parser.add_argument("host", choices=["claude", "codex"], help="the agent host")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--project",
        metavar="DIR",
        type=cli.vault_folder,
        help="install into this project's folder (default: the current folder)",
    )
    where.add_argument("--user", action="store_true", help="install for the user, in the home folder")
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="the memory store's folder (default: PROJECT/memory, or memory.folder of its schema)",
    )
    parser.add_argument(
        "--python", metavar="CMD", default="python3", help="the interpreter the hook runs (default: python3)"
    )
    parser.add_argument("--uninstall", action="store_true", help="remove what init wrote (never the store)")
    cli.add_common(parser, vault=False, dry_run_help="show what would change and write nothing")
    parser.set_defaults(func=cmd_init)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
