#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""link_cleanup.py: take links that resolve nowhere out of ## Related sections."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
What it changes, only inside a "## Related" section (a "#" heading of any
level named Related, up to the next heading of the same or a higher level), and
only links that resolve to no file under Obsidian's rules:
  - a list item that is nothing but the broken link goes whole;
  - anywhere else in the section the link becomes its visible text
    ([[Gone|shown]] -> shown, [[Gone#Part]] -> Gone > Part, [label](x.md) -> label).
Never changed: a link that resolves (to a note or any other file), an embed
(![[...]]), links in frontmatter, links outside Related sections (those are
reported), anything inside code or comments, notes in templates folders or
ignore_folders, notes that are not UTF-8 or whose frontmatter does not parse.

JSON keys (--json): vault, notes, removed[{path, line, link, action ("item":
the list item went; "text": the link became text), text}], reported[{path,
line, link, reason}] (broken links left as they are), skipped[{path,
reason}] (notes not written), edits[{path, reason}], written[],
conflicts[{path, error, copy}], failed[{path, error}], run (the run id, or
null: undo.py undo RUN takes it back).

Kind: changes what people wrote, so a dry run unless --apply; writes go
through the journal (undo.py).  One autograph writer per vault at a time:
--wait SECONDS waits for another.

Exit codes: 0 done (whatever it found); 2 bad usage, vault or schema; 3 I/O
failure, another run holding the vault, or a bug; 4 finished, but some
planned writes were skipped (conflicts, failures).

Examples:
  link_cleanup.py --vault ~/vault                 # list what would go, write nothing
  link_cleanup.py --vault ~/vault --diff          # also show each change as a diff
  link_cleanup.py --vault ~/vault --apply         # write it (undo.py list shows the run)
  link_cleanup.py --vault ~/vault --json          # for agents
"""
SHOWN = 40


def cmd_cleanup(args) -> int:
    with cli.writing(args, "link_cleanup.py"):
        report = _cleanup(args)
    return report()  # printed once the vault is free again


def _cleanup(args):
    from autograph.graph import cleanup
    from autograph.write.derived import save_index
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=cli.writes(args))
    plan = cleanup.plan(vault, schema, index)
    cli.warn(index.warnings)
    if not args.dry_run:
        save_index(index)
    apply = cli.writes(args)
    outcome = cli.carry_out(vault, plan.edits, apply, args.wait, "link_cleanup.py", schema)
    code = cli.outcome_code(outcome)
    return lambda: _report(args, vault, plan, outcome, code)


def _report(args, vault, plan, outcome, code) -> int:
    if args.json:
        cli.print_json(
            {
                "vault": str(vault.root),
                "notes": len(vault.notes),
                "removed": plan.removed,
                "reported": plan.reported,
                "skipped": plan.skipped,
                **outcome,
            }
        )
        return code
    p = cli.printable
    print(
        f"link cleanup: {cli.plural(len(plan.removed), 'broken link')} in Related sections"
        f" · {len(plan.reported)} other broken left as they are"
    )
    for row in plan.removed[:SHOWN]:
        what = "list item removed" if row["action"] == "item" else f"-> {row['text']!r}"
        print(f"  {p(row['path'])}:{row['line']}  {p(row['link'])}  {p(what)}")
    if len(plan.removed) > SHOWN:
        print(f"  ... {len(plan.removed) - SHOWN} more (--json lists all)")
    if plan.reported:
        reasons: dict[str, int] = {}
        for row in plan.reported:
            reasons[row["reason"]] = reasons.get(row["reason"], 0) + 1
        print("left as they are: " + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items())))
    for row in plan.skipped:
        print(f"not written: {p(row['path'])}: {p(row['reason'])}")
    print()
    cli.print_outcome(outcome, plan.edits, cli.writes(args), args.diff)
    return code


def build_parser():
    parser = cli.make_parser(
        "link_cleanup.py", "Remove links that resolve nowhere from ## Related sections (dry run by default).", EPILOG
    )
    cli.add_common(parser, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(parser, changes_people_text=True)
    parser.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    parser.set_defaults(func=cmd_cleanup)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
