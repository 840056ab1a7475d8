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
  claude  the skill in .claude/skills/autograph/, and in .claude/settings.json
          (merged into the JSON that is there: other keys and hooks are
          kept, and so are the file's indentation, line endings and mode)
          two hooks: guard.py as a PreToolUse hook (matcher
          Write|Edit|MultiEdit), naming the schema (--schema, else
          PROJECT/schema.json when there is one) so it enforces its index
          names and caps; and session.py start as a SessionStart hook
          (matcher startup|resume|clear|compact), which gives each session
          a few lines: the vault, the index's headroom, the last health
          score, and "look a subject up before writing".  --checkpoint adds
          session.py stop as a Stop hook: once per session that wrote to
          memory, it asks the agent to report what it added, updated and
          retired.  And autoMemoryDirectory, the store's absolute path, in
          .claude/settings.local.json (Claude Code reads that setting from
          the user's, the local and policy settings, never from a project's
          settings.json), so the index Claude Code loads is the one guarded.
          --host-store instead takes the folder Claude Code itself keeps the
          project's memory in (~/.claude/projects/<project>/memory/, named
          after the project's git root) as the store, and writes no
          autoMemoryDirectory.
          While the autograph Claude Code plugin is enabled (enabledPlugins
          in the project's or the user's settings), init installs neither
          the skill nor the hooks (the plugin provides them; two would list
          the skill twice and start two guards per call): only
          autoMemoryDirectory and the index; run on an install made
          earlier, it takes its skill and hooks back out.  Installed the
          other way round, the plugin's hooks step aside while init's
          install is present; its skill is then listed twice until init
          is run again (or uninstalled).
  codex   the skill in .agents/skills/autograph/ and a block of memory rules
          in AGENTS.md, between <!-- autograph:begin --> and
          <!-- autograph:end --> lines; the rest of the file is kept.  And
          two hooks in .codex/hooks.json (merged like settings.json): guard.py
          as a PreToolUse hook (matcher apply_patch|Edit|Write|Bash: Codex names
          its file edits apply_patch, and applies `apply_patch <<'EOF'` run in
          its shell too) and session.py start as a SessionStart
          hook (matcher startup|resume|clear), each by absolute path; and
          "hooks = true" under [features] in .codex/config.toml unless the
          file sets that flag (or codex_hooks) already: a "false" there is
          yours and is kept (hooks then stay off; the report says so).  Codex
          loads a project's .codex/ only in a trusted project, and runs a new
          hook only once you trust it (/hooks).
          (developers.openai.com/codex/hooks, /guides/agents-md, /skills)
  gemini  the skill in .gemini/skills/autograph/, the rules block in
          GEMINI.md (~/.gemini/GEMINI.md with --user).
          (geminicli.com/docs/cli/gemini-md, /docs/cli/using-agent-skills)
  opencode  the skill in .opencode/skills/autograph/, the rules block in
          AGENTS.md (~/.config/opencode/AGENTS.md, or $XDG_CONFIG_HOME, with
          --user).  Codex reads the same AGENTS.md: install one of the two in
          a project.  (opencode.ai/docs/rules, /docs/skills)
  cursor (unverified)  the skill in .cursor/skills/autograph/, the rules in
          .cursor/rules/autograph.mdc (alwaysApply: true).  No --user: Cursor
          keeps User Rules in its settings, not in a file.
          (cursor.com/docs/context/rules, /docs/context/skills)
  windsurf (unverified)  the skill in .windsurf/skills/autograph/, the rules
          in .windsurf/rules/autograph.md (trigger: always_on); with --user
          ~/.codeium/windsurf/skills/ and a rules block in
          ~/.codeium/windsurf/memories/global_rules.md.
          (docs.windsurf.com/windsurf/cascade/memories, /cascade/skills)
  kiro (unverified)  the skill in .kiro/skills/autograph/, the rules in
          .kiro/steering/autograph.md (inclusion: always); ~/.kiro/ with
          --user.  (kiro.dev/docs/steering, /docs/skills)
  cline (unverified)  the skill in .cline/skills/autograph/, the rules in
          .clinerules/autograph.md; ~/.cline/skills/ and
          ~/Documents/Cline/Rules/autograph.md with --user.
          (docs.cline.bot/customization/cline-rules, /customization/skills)
  The rules name the store and its index, say to read the index first, to
  look a subject up before writing (card.py remember), the index's caps
  (from 160 lines / 20,000 bytes compact to under 140 / 17,500; never past
  200 / 25,000) and to run check.py after each index write.  Only claude and
  codex get a guard hook: the other hosts' hooks take input guard.py does
  not read (Gemini CLI's BeforeTool names write_file and replace), so they
  get "check after write" (the rung, in --json).  "unverified": checked
  against the host's documented layout only, not a run of the host.
  --user  puts them in the home folder instead: ~/.claude/ (or
          $CLAUDE_CONFIG_DIR) for claude, autoMemoryDirectory (with --store
          only) in its settings.json; ~/.agents/skills/ and ~/.codex/AGENTS.md,
          hooks.json and config.toml (or $CODEX_HOME) for codex; the others
          as above.
  --reader --store DIR  for a host that reads a store another agent
          writes: the skill and rules that say the store is read-only for it
          (read the index, open notes, never write; tell the user a fact
          instead); no index is created and no hook registered (a codex
          install's hooks are taken back out).  For claude the rules go to
          .claude/rules/autograph.md and settings.json is not touched.
  Each creates the store's index from assets/MEMORY.md when it has none
  (never with --reader): the store is --store, else
  PROJECT/<memory.folder of PROJECT/schema.json> (default PROJECT/memory);
  with --user only when --store is given.

Running it again changes nothing.  What it wrote is recorded in
<skill>/.autograph-install.json; --uninstall removes exactly that: skill files
not changed since (changed ones are kept and named), the hook groups,
autoMemoryDirectory, the rules block or rules file, Codex's hooks and flag
(settings.json, settings.local.json, AGENTS.md, GEMINI.md, hooks.json and
config.toml come back byte for byte when nobody edited them since; a file
init created is removed; a rules file of its own edited since is kept), and
folders it created once empty.  Uninstall with the options you installed
with (--reader included).  It never touches the
store: the index and the notes stay.  Writes are atomic; --dry-run shows the
plan and writes nothing.

It never overwrites or removes what it did not write, and refuses (exit 2,
nothing written, the message names each file) when the skill folder holds
a file that differs from autograph's and that no install record names (your
own file, another skill called autograph, an installed file you edited), or
a symbolic link (it never writes or removes through one there); when a
rules file of its own (.cursor/rules/autograph.mdc...) is there and init did
not write it (or it was edited since); when a file stands where a folder
goes (a legacy .clinerules file); when config.toml is not valid TOML or
writes [features] inline; when
settings.json already runs an autograph guard.py or session.py it did not
write; or when settings.json
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
(settings.json or AGENTS.md), store (null without one), auto_memory (the
autoMemoryDirectory init writes, or null), plugin (the settings file that
enables the autograph plugin, or null), checkpoint (true when the Stop hook
is registered), schema (the schema the hook names, or null), uninstall, dry_run, reader (true with
--reader), rung ("hook", "check after write" or "rules only"), hooks_config (Codex's hooks.json, or null),
unverified (true for a host checked against its documented layout only), actions[{path, action, what,
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
  init.py gemini --project ~/code/app
  init.py cursor --project ~/code/app --reader --store ~/vault/memory
  init.py claude --project ~/code/app --host-store --checkpoint
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
    if report.get("plugin") and not report["uninstall"]:
        out.append(
            f"  the autograph plugin is enabled ({cli.printable(report['plugin'])}): it provides the skill and "
            "the hooks, so init installs neither"
        )
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
    if args.host != "claude" and (args.checkpoint or args.host_store):
        raise cli.UsageError("--checkpoint and --host-store are for claude (Claude Code's hooks and memory folder)")
    if args.reader and args.checkpoint:
        raise cli.UsageError("--checkpoint asks a writer to report what it wrote; a --reader writes nothing")
    try:
        layout = wiring.layout(
            args.host,
            args.project,
            args.user,
            args.store,
            folder,
            host_store=args.host_store,
            checkpoint=args.checkpoint,
            reader=args.reader,
        )
        if args.uninstall:
            cleanup = wiring.removable_dirs(layout)
            actions = wiring.plan_uninstall(layout, source, args.python, schema_file)
        else:
            actions = wiring.plan_install(layout, source, args.python, schema=schema_file)
            # with the plugin enabled, an earlier install's skill files were taken out: drop emptied folders
            cleanup = wiring.removable_dirs(layout) if layout.plugin else None
    except wiring.HostError as exc:
        raise cli.UsageError(str(exc)) from None
    skipped = [] if args.dry_run else wiring.apply(actions, cleanup)
    conflicts = [a for a in skipped if a.conflict]
    failed = [a for a in skipped if not a.conflict]
    root = layout.root
    spec = wiring.HOSTS.get(args.host)
    if args.reader:
        rung = "rules only"
    elif args.host == "claude" or (spec is not None and spec.rung == "hook"):
        rung = "hook"
    else:
        rung = "check after write"
    report = {
        "host": args.host,
        "scope": layout.scope,
        "root": str(root),
        "skill": _shown(layout.skill, root),
        "config": _shown(layout.config, root),
        "store": _shown(layout.store, root) if layout.store else None,
        "auto_memory": layout.memory_dir,
        "plugin": layout.plugin,
        "checkpoint": bool(layout.checkpoint and not layout.plugin),
        "schema": _shown(schema_file, root) if schema_file and args.host in ("claude", "codex") else None,
        "uninstall": bool(args.uninstall),
        "dry_run": bool(args.dry_run),
        "reader": bool(args.reader),
        "rung": rung,
        "hooks_config": _shown(layout.hooks_file, root) if layout.hooks_file and not args.reader else None,
        "unverified": bool(spec is not None and not spec.verified),
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
    if args.checkpoint and layout.plugin and not args.uninstall:
        print(
            "init.py: --checkpoint not registered: the autograph plugin is enabled and has its own; turn on its "
            '"checkpoint" option (/plugin, autograph, configure)',
            file=sys.stderr,
        )
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
        "Install autograph into an agent host: the skill, the index guard hook (claude, codex) and the memory "
        "rules the host loads (AGENTS.md, GEMINI.md, a rules file of its own), and an index for the memory "
        "store; or --uninstall it.",
        EPILOG,
    )
    parser.add_argument(
        "host",
        choices=["claude", "codex", "gemini", "opencode", "cursor", "windsurf", "kiro", "cline"],
        help="the agent host (cursor, windsurf, kiro and cline: unverified, see below)",
    )
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
        "--host-store",
        action="store_true",
        help="claude: use the folder Claude Code itself keeps this project's memory in "
        "(~/.claude/projects/<project>/memory/) as the store",
    )
    parser.add_argument(
        "--checkpoint",
        action="store_true",
        help="claude: also register session.py stop, a completion checkpoint that asks the agent, once per "
        "session, to report what it wrote to memory",
    )
    parser.add_argument(
        "--python", metavar="CMD", default="python3", help="the interpreter the hook runs (default: python3)"
    )
    parser.add_argument(
        "--reader",
        action="store_true",
        help="the host reads a store another agent writes (needs --store): rules that say the store is read-only "
        "for it; no index created, no guard hook",
    )
    parser.add_argument("--uninstall", action="store_true", help="remove what init wrote (never the store)")
    cli.add_common(parser, vault=False, dry_run_help="show what would change and write nothing")
    parser.set_defaults(func=cmd_init)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
