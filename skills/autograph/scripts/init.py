#!/usr/bin/env python3
"""init.py: wire autograph into an agent host (the skill, the index guard or the rules, an index)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli, hosts  # noqa: E402
from autograph.schema import load_schema  # noqa: E402

EPILOG = """\
What it installs:
  claude  the skill in .claude/skills/autograph/ and guard.py as a PreToolUse
          hook (matcher Write|Edit|MultiEdit) in .claude/settings.json, merged
          into the JSON that is there: other keys and hooks are kept, and so
          are the file's indentation, line endings and mode.
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

JSON keys (--json): host, scope ("project" or "user"), root, skill, config
(settings.json or AGENTS.md), store (null without one), uninstall, dry_run,
actions[{path, action, what, note}], conflicts[{path, error}].  action is
create, update, restore, remove, unchanged or kept; paths are relative to
root when inside it.

Exit codes: 0 done; 2 bad usage, or a settings.json / AGENTS.md it cannot edit
safely (not valid JSON, markers that do not pair up, not UTF-8: the message
says what to fix); 3 a file changed while it ran (it is left as it was), an
I/O failure or a bug.

Examples:
  init.py claude --project ~/code/app
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
    return "\n".join(out)


def cmd_init(args) -> int:
    source = Path(__file__).resolve().parent.parent
    folder = "memory"
    if not args.user:
        project = Path(args.project or ".")
        if project.is_dir() and (args.schema or (project / "schema.json").is_file()):
            folder = load_schema(project, args.schema).memory["folder"]
    try:
        layout = hosts.layout(args.host, args.project, args.user, args.store, folder)
        if args.uninstall:
            cleanup = hosts.removable_dirs(layout)
            actions = hosts.plan_uninstall(layout, source)
        else:
            cleanup = None
            actions = hosts.plan_install(layout, source, args.python)
    except hosts.HostError as exc:
        raise cli.UsageError(str(exc)) from None
    conflicts = [] if args.dry_run else hosts.apply(actions, cleanup)
    root = layout.root
    report = {
        "host": args.host,
        "scope": layout.scope,
        "root": str(root),
        "skill": _shown(layout.skill, root),
        "config": _shown(layout.config, root),
        "store": _shown(layout.store, root) if layout.store else None,
        "uninstall": bool(args.uninstall),
        "dry_run": bool(args.dry_run),
        "actions": [
            {"path": _shown(a.path, root), "action": a.action, "what": a.what, "note": a.note} for a in actions
        ],
        "conflicts": [{"path": _shown(a.path, root), "error": a.conflict} for a in conflicts],
    }
    if args.json:
        cli.print_json(report)
    else:
        print(_human(report, args.dry_run))
    if conflicts:
        print(
            f"init.py: {cli.plural(len(conflicts), 'file')} changed while init ran and "
            f"{'was' if len(conflicts) == 1 else 'were'} left as found; run init again",
            file=sys.stderr,
        )
        return cli.EXIT_CRASH
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
