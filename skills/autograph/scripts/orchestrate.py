#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""orchestrate.py: the multi-step workflows, and review batches for agents."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
Workflows (health, bootstrap) run the sibling scripts as child processes
(python3 scripts/<name>.py ...), each with its own arguments, writer lock and
exit code, after printing the whole plan.  A step exiting 0 or 1 (found what
it checks for) lets the run go on; any other code stops it with that code.  A
step whose script is not installed yet is skipped with a note.

Batches (dedup-prepare, link-prepare, graph-prepare, research plan) are JSON
for agents to review: every note in exactly one batch, in path order, each
batch within --budget tokens (estimated as bytes / 4); a note alone over the
budget gets a batch of its own, flagged over_budget.  The same vault gives the
same bytes.

Run 'orchestrate.py COMMAND --help' for each command's options, JSON keys and
examples.  Guide: references/orchestrate.md.
"""

CODES = """\
Exit codes: 0 done; 1 health under --fail-under (a 1 of another step, which
found something, shows in its status); 2 bad usage, vault or schema, or a
step that exited 2; 3 I/O failure or bug, or a step's 3 (or a signal); 4 a
step's planned writes were skipped (conflicts, failures)."""

HEALTH_EPILOG = f"""\
Steps (each read only; derived files under .graph/ only):
  1. graph.py health VAULT --json      score, broken links, orphans, ...
  2. engine.py stats VAULT --json      tiers, stale share, working set
  3. enforce.py VAULT --json           compliance report (a dry run)
then one summary.  --schema, --dry-run and --quiet are passed to every step;
--fail-under N to graph.py health.

JSON keys (--json): command, vault, plan[{{name, command, writes, skip}}],
steps[{{name, command, code, status (ok, found, failed, skipped, not-run),
summary{{}}, seconds}}], summary{{score, notes, broken_links, orphans, dead_ends,
ambiguous_links, description_coverage, invalid_frontmatter, stale_share,
tiers, cards, working_set_tokens, compliance, fixable, by_rule}}, code.
With --json the plan and progress lines go to stderr.

{CODES}

Examples:
  orchestrate.py health --vault ~/vault
  orchestrate.py health --vault ~/vault --json --fail-under 80
"""

BOOTSTRAP_EPILOG = f"""\
Steps:
  0. (a schema) load it: a bad one stops the run (exit 2) before step 1
  1. discover.py VAULT --json           kept in .graph/orchestrate/discovery.json
  2. generate_schema.py -               the draft, kept in .graph/orchestrate/schema.draft.json
  3. (no schema) write VAULT/schema.json from the draft (journaled; --apply)
  4. enforce.py VAULT [--apply]         types, fixes, required fields
  5. dedup.py VAULT [--apply]           merge cards by identity
  6. graph.py fix VAULT [--apply]       repair broken links
  7. moc.py generate VAULT [--dry-run]  maps of content
  8. graph.py health VAULT              the result
Every write step is a dry run unless --apply (moc.py gets --dry-run);
derived files under .graph/ are not writes.  --schema and --quiet are passed
to every step that takes them.

The schema: --schema, else VAULT/schema.json when it exists, is used as it
is and never overwritten (the draft stays under .graph/ to compare).  With no
schema, the steps use the draft: from .graph/ in a dry run; with --apply the
draft is first written to VAULT/schema.json (a new file; undo.py takes it
back).  Review it afterwards: descriptions are TODOs.

A dry run's later steps see the vault as it is, not as the earlier steps
would leave it.  orchestrate.py holds no lock between steps: each step takes
the vault's writer lock for its own writes (--wait is given to every write
step).

JSON keys (--json): command, vault, apply, schema{{source (the schema used
as it is, or null), draft, used, install}}, plan[{{name, command, writes,
skip}}], steps[{{name, command, code, status (ok, found, failed, skipped,
not-run), summary{{}}, seconds}}], code.  With --json the plan and progress
lines go to stderr.

{CODES}

Examples:
  orchestrate.py bootstrap --vault ~/vault            # the plan and every step as a dry run
  orchestrate.py bootstrap --vault ~/vault --apply    # write
"""

PREPARE_KEYS = """\
JSON keys (the output): command, vault, budget, token_estimate, items,
notes, {extra}, batches[{{id, tokens, over_budget, items[...]}}],
over_budget[batch ids], instructions.  Item: {item}.

Without -o the JSON goes to stdout; with -o OUT it is written to OUT (never
over an existing file without --force, never through a symlink or FIFO) and a
summary is printed (--json: {{output, batches, items, notes, over_budget}}).
Reads the vault; writes nothing in it but the parsed-note cache in .graph/.

Exit codes: 0 done; 2 bad usage, vault or schema, or OUT exists; 3 I/O failure or bug."""

DEDUP_EPILOG = (
    """\
Candidate groups of notes that may be one subject: notes sharing an
identity value (identity.match_fields, normalised: emails, handles, phones)
or a name (file name, title, aliases) that folds to the same words (accents,
case and punctuation dropped, word order ignored).  A name shared by more than
8 notes (index, readme) is no evidence.  Groups sharing a note are joined, so
every note is in at most one group, and a group is never split over batches.
Name-only groups are candidates for review, never merges.

"""
    + PREPARE_KEYS.format(
        extra="generic_names",
        item="{group, strength (identity or name-only), notes[{path, type, names[], identity{field: [values]}, "
        "preview}], evidence[{by, kind, value, paths[]}]}",
    )
    + """

Examples:
  orchestrate.py dedup-prepare --vault ~/vault -o dedup-review.json
"""
)

LINK_EPILOG = (
    """\
Notes with broken links or with no backlinks (orphans), as graph.py health
counts them, with each broken link's line and the notes whose name folds to
the link's (candidates for what it meant).

"""
    + PREPARE_KEYS.format(
        extra="broken_links, orphans",
        item="{path, orphan, broken[{source, line, target, kind, context, similar[]}]}",
    )
    + """

Examples:
  orchestrate.py link-prepare --vault ~/vault --budget 20000 -o links.json
"""
)

GRAPH_EPILOG = (
    """\
Every card with what an agent needs to propose links to it or from it.

"""
    + PREPARE_KEYS.format(
        extra="links", item="{path, type, tags[], description, links[resolved note paths], backlinks}"
    )
    + """

Examples:
  orchestrate.py graph-prepare --vault ~/vault -o graph.json
"""
)

PLAN_EPILOG = """\
Every note outside the templates folders and ignore_folders goes into exactly
one batch, in path order (the others are listed in left_out).  A note's tokens
are its file's bytes / 4: what the explorer reads.  --budget caps each
batch's tokens, --batch-size its notes.  "prompt" is the explorer's prompt,
with {batch}, {vault}, {example} and {paths} to fill in per batch; each
explorer answers one JSON observation (references/orchestrate.md):
  {"batch": "batch-001", "notes": [{"path": "...", "type": "person",
   "status": "active", "fields": ["email", "role"]}],
   "types": {"person": {"description": "..."}}, "language": "en"}
Save each answer as a file and give them all to 'research reduce'.

A vault whose notes mostly have a type (typed_share) may need no explorers:
orchestrate.py bootstrap drafts its schema from what the notes say.

JSON keys (the output): vault, notes, frontmatter_share, typed_share (0..1,
of the planned notes), left_out[], budget, batch_size,
token_estimate, batches[{id, tokens, over_budget, items[{path, tokens}]}],
over_budget[], observation_example, prompt.  Without -o the JSON goes to
stdout; with -o OUT it is written there (--force to replace) and a summary
printed (--json: {output, batches, notes, typed_share, over_budget}).

Exit codes: 0 done; 2 bad usage, vault or schema, or OUT exists; 3 I/O failure or bug.

Examples:
  orchestrate.py research plan --vault ~/vault -o plan.json
  orchestrate.py research plan --vault ~/vault --batch-size 20
"""

REDUCE_EPILOG = """\
The explorers' observations (JSON files: one observation object each, or a
list of them) -> a draft schema, drafted by the same rules as
generate_schema.py: types as the explorers named them, a type's folder where
most of its notes are, required fields those --coverage of its notes have,
statuses in use plus "superseded", a domain per top folder.  At most
--max-types types (those with the most notes; the rest are reported as
dropped).  A path, type, status or field that is not well formed, a file that
is not JSON, too large or nested too deeply is reported under rejected and
left out; it never stops the run.  The first observation of a note wins.

Writes the draft to -o (never over an existing file without --force, never
through a symlink or FIFO); without -o only the report is printed (--json
includes the draft).

JSON keys (--json): output, schema (the draft), observations, notes,
types{type: notes}, dropped_types{type: notes}, duplicates, language,
rejected[{source, where, error}] (200 at most), rejected_count.

Exit codes: 0 done; 2 bad usage, no usable observation, or -o exists;
3 I/O failure or bug.

Examples:
  orchestrate.py research reduce obs/*.json -o schema.draft.json
  orchestrate.py research reduce obs/*.json --max-types 8 --json
"""


def _budget(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of tokens (1 or more)")
    return value


def _say(args):
    stream = sys.stderr if getattr(args, "json", False) else sys.stdout
    return lambda line: print(line, file=stream, flush=True)


def cmd_health(args) -> int:
    from autograph.agents import orchestrate

    report = orchestrate.health(args.vault, args.schema, args.fail_under, args.dry_run, args.quiet, _say(args))
    if args.json:
        cli.print_json(report)
    elif report["code"] < cli.EXIT_USAGE:  # else the failing step said why on stderr
        print()
        print(orchestrate.health_text(report["summary"]))
    return report["code"]


def cmd_bootstrap(args) -> int:
    import functools

    from autograph.agents import orchestrate

    perform = functools.partial(_perform, args)
    report = orchestrate.bootstrap(
        args.vault, args.schema, cli.writes(args), args.fail_under, args.wait, args.quiet, _say(args), perform
    )
    if args.json:
        cli.print_json(report)
    else:
        print()
        print(orchestrate.bootstrap_text(report))
    return report["code"]


def _perform(args, step, root) -> tuple[int, dict]:
    """A bootstrap step run in this process (loading the schema, installing
    the draft): its exit code and summary; why it failed goes to stderr."""
    from autograph.agents import orchestrate

    try:
        done = step.action()
    except orchestrate.StepError as exc:
        print(f"orchestrate.py: {exc}", file=sys.stderr)
        return (cli.EXIT_CRASH if exc.unreadable else cli.EXIT_USAGE), {}
    if not isinstance(done, list):
        return cli.EXIT_OK, done
    # the edits it planned (schema.json) are written as every command writes, journaled
    outcome = cli.carry_out(root, done, cli.writes(args), args.wait, "orchestrate.py bootstrap")
    for item in outcome["conflicts"] + outcome["failed"]:
        print(f"orchestrate.py: {item['path']} not written: {item['error']}", file=sys.stderr)
    return (cli.EXIT_SKIPPED if outcome["conflicts"] or outcome["failed"] else cli.EXIT_OK), outcome


def _emit(args, data: dict, summary: dict, vault=None) -> int:
    """The output of a batch command: the JSON on stdout, or to -o."""
    from autograph.agents import batches, output

    text = output.json_text(data)
    cli.warn(batches.over_budget_warnings(data))
    if not args.output or args.output == "-":
        sys.stdout.write(text)
    elif args.dry_run:
        print(output.would_write(args.output, text))
    else:
        # never in place of a note of the vault, even with --force
        target = output.write(args.output, text, args.force, vault)
        if args.json:
            cli.print_json({"output": target, **summary})
        else:
            print(output.wrote(target, summary))
    return cli.EXIT_OK


def cmd_prepare(args) -> int:
    from autograph.agents import batches, review
    from autograph.write import derived
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=not args.dry_run)
    data = review.prepare(args.command, vault, schema, index, args.budget)
    cli.warn(index.warnings)
    if not args.dry_run:
        derived.save_index(index)
    return _emit(args, data, batches.summary(data, "items", "notes", "over_budget"), vault.root)


def cmd_research_plan(args) -> int:
    from autograph.agents import batches, research
    from autograph.write import derived
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=not args.dry_run)
    data = research.plan(vault, schema, args.budget, args.batch_size, index)
    cli.warn(index.warnings)
    if not args.dry_run:
        derived.save_index(index)
    return _emit(args, data, batches.summary(data, "notes", "typed_share", "over_budget"), vault.root)


def cmd_research_reduce(args) -> int:
    from autograph.agents import output, research

    report = research.reduce(args.observations, args.max_types, args.coverage)
    cli.warn(research.rejected_warnings(report))
    research.check_usable(report)
    written = None
    if args.output and not args.dry_run:
        written = output.write(args.output, output.json_text(report["schema"], indent=2), args.force)
    if args.json:
        cli.print_json({"output": written, **report})
    else:
        print(research.reduce_text(report, args.max_types, written, args.output))
    return cli.EXIT_OK


def _add_output(parser) -> None:
    parser.add_argument("-o", "--output", metavar="OUT", help="write the JSON here (default, or '-': stdout)")
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")


def build_parser():
    parser = cli.make_parser(
        "orchestrate.py", "Multi-step workflows over the other scripts, and review batches for agents.", EPILOG
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    sub = cli.subparser(
        commands,
        "health",
        "health, stats and compliance in one summary",
        "Run graph.py health, engine.py stats and enforce.py (a dry run); one summary.",
        HEALTH_EPILOG,
    )
    cli.add_common(sub, dry_run_help="pass --dry-run to every step (no history line, no cache)")
    sub.add_argument("--fail-under", type=cli.score_value, metavar="N", help="exit 1 when the health score is under N")
    sub.set_defaults(func=cmd_health)

    sub = cli.subparser(
        commands,
        "bootstrap",
        "discover -> schema -> enforce -> dedup -> fix -> moc -> health",
        "Bring a vault under a schema, every write step a dry run unless --apply.",
        BOOTSTRAP_EPILOG,
    )
    cli.add_common(sub, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(sub, changes_people_text=True)
    sub.add_argument(
        "--fail-under",
        type=cli.score_value,
        metavar="N",
        help="the last step (graph.py health) exits 1 when the score is under N",
    )
    sub.set_defaults(func=cmd_bootstrap)

    for name, what, epilog in (
        ("dedup-prepare", "candidate duplicate groups, in batches for review", DEDUP_EPILOG),
        ("link-prepare", "broken links and orphans with context, in batches", LINK_EPILOG),
        ("graph-prepare", "every card with its links, in batches for link proposals", GRAPH_EPILOG),
    ):
        sub = cli.subparser(commands, name, what, what[0].upper() + what[1:] + ".", epilog)
        cli.add_common(sub, dry_run_help="write nothing: no -o file, no cache")
        sub.add_argument(
            "--budget",
            type=_budget,
            default=50_000,
            metavar="TOKENS",
            help="tokens per batch, estimated as bytes / 4 (default 50000)",
        )
        _add_output(sub)
        sub.set_defaults(func=cmd_prepare)

    research = cli.subparser(
        commands,
        "research",
        "the research swarm: plan explorer batches, reduce observations",
        "Plan batches of notes for explorer agents; reduce their observations to a schema draft.",
        "Run 'orchestrate.py research plan --help' and 'research reduce --help'.",
    )
    steps = research.add_subparsers(dest="research_command", metavar="STEP")
    sub = cli.subparser(
        steps,
        "plan",
        "batches of notes for explorer agents, with their prompt",
        "Batches of notes for explorer agents, with the prompt and the observation format.",
        PLAN_EPILOG,
    )
    cli.add_common(sub, dry_run_help="write nothing: no -o file")
    size = sub.add_mutually_exclusive_group()
    size.add_argument("--batch-size", type=_budget, metavar="N", help="at most N notes per batch")
    size.add_argument(
        "--budget", type=_budget, metavar="TOKENS", help="at most TOKENS per batch, file bytes / 4 (default 50000)"
    )
    _add_output(sub)
    sub.set_defaults(func=cmd_research_plan, budget=None)

    sub = cli.subparser(
        steps,
        "reduce",
        "explorers' observations -> a draft schema",
        "Reduce the explorers' JSON observations to a draft schema that validates.",
        REDUCE_EPILOG,
    )
    sub.add_argument("observations", nargs="+", metavar="OBSERVATIONS", help="observation files (JSON)")
    sub.add_argument("-o", "--output", metavar="SCHEMA", help="write the draft here")
    sub.add_argument("--force", action="store_true", help="replace SCHEMA if it exists")
    sub.add_argument("--max-types", type=_budget, default=15, metavar="N", help="at most N node types (default 15)")
    sub.add_argument(
        "--coverage",
        type=lambda t: cli.score_value(t, 1.0),
        default=0.9,
        metavar="SHARE",
        help="share of a type's notes that must have a field for it to be required (default 0.9)",
    )
    sub.add_argument("--json", action="store_true", help="print one JSON object on stdout (keys below)")
    sub.add_argument("--dry-run", action="store_true", help="write nothing; say what would be written")
    sub.set_defaults(func=cmd_research_reduce)
    research.set_defaults(func=lambda args: _no_step(research))
    return parser


def _no_step(parser) -> int:
    parser.print_help(sys.stderr)
    return cli.EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
