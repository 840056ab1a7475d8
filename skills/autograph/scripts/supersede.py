#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""supersede.py: find cards of one entity with conflicting current values, and retire the older ones."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
Finds, with dedup.py's identity grouping (a shared email, phone or handle,
never a name; no conflicting identity value; retired cards left out):

  candidates     cards of one entity whose conflict fields (schema
                 conflict_fields.fields, default company, role, title,
                 platform, status) hold different values (compared
                 trimmed, without case; lists as sets).  The newest card
                 (updated, else created) is current; strictly older ones
                 are retired.
  still current  cards whose superseded_by names another card (resolved
                 as Obsidian resolves the link) and whose status is not
                 superseded.
  unresolved     cards whose superseded_by names no other card (TBD, 0,
                 [[Nobody]], a hub, the card itself): reported, never
                 stamped.  Empty, false, n/a, -, none: nobody, left alone.

--apply stamps each retired card 'status: superseded' and
'superseded_by: "[[current]]"' (surgical frontmatter edits), adds
'- [[current]]' under its '## Related' and '- [[retired]]' under the
current card's (once), and sets 'status: superseded' on still-current
cards.  Not applied (reported with a reason): candidates whose dates do
not order them, candidates found by a handle alone (not strong), cards
whose type's status list lacks superseded.  A person settles those with
card.py retire NOTE --by OTHER.

JSON keys (--json): vault, schema (path or null), candidates[{members,
current, retired[], conflicts{field: {value: [paths]}}, evidence[{key,
field, kind, value, paths}], strong, dates{path: date or null}, reason}],
still_current[{path, status, superseded_by}], unresolved[{path,
superseded_by, reason}], refused[{path, reason}],
edits[{path, reason}], written[], conflicts[{path, error, copy}],
failed[{path, error}], run (run id or null).

Writes: with --apply, the retired cards and the current cards they link.
Kind: changes what people wrote, so a dry run unless --apply.  One
autograph writer per vault at a time: --wait SECONDS waits for another.

Exit codes: 0 done, nothing found; 1 candidates, still-current or
unresolved cards found and not all settled by this run; 2 bad usage,
vault or schema; 3 I/O failure, another run holding the vault, or a bug;
4 finished, but some planned writes were skipped (wins over 1).

Examples:
  supersede.py --vault ~/vault                 # report
  supersede.py --vault ~/vault --diff          # and the stamps as diffs
  supersede.py --vault ~/vault --apply         # write them
"""


def cmd_supersede(args) -> int:
    with cli.writing(args, "supersede.py"):
        report = _supersede(args)
    return report()


def _supersede(args):
    from autograph.memory import supersede

    vault, schema = cli.load(args)
    apply = cli.writes(args)
    findings = supersede.find(vault, schema)
    edits, refused = supersede.plan(vault, schema, findings)
    outcome = cli.carry_out(vault, edits, apply, args.wait, "supersede.py", schema)
    unsettled = any(c.reason for c in findings.candidates) or bool(refused) or bool(findings.unresolved)
    found = (bool(findings.candidates or findings.still_current) and not apply) or unsettled
    code = cli.outcome_code(outcome, found=found)
    return lambda: _report(args, vault, schema, findings, edits, refused, outcome, code)


def _report(args, vault, schema, findings, edits, refused, outcome, code) -> int:
    apply = cli.writes(args)
    if args.json:
        cli.print_json(
            {
                "vault": str(vault.root),
                "schema": str(schema.source) if schema.source else None,
                "candidates": [c.as_dict() for c in findings.candidates],
                "still_current": findings.still_current,
                "unresolved": findings.unresolved,
                "refused": refused,
                **outcome,
            }
        )
        return code
    print(
        f"supersede: {cli.plural(len(findings.candidates), 'candidate')}, "
        f"{cli.plural(len(findings.still_current), 'retired card')} still current"
    )
    for candidate in findings.candidates:
        fields = "; ".join(
            f"{name}: " + " / ".join(f"{value} ({', '.join(paths)})" for value, paths in values.items())
            for name, values in candidate.conflicts.items()
        )
        print(f"  {cli.printable(', '.join(candidate.members))}")
        print(f"      differ in {cli.printable(fields)}")
        if candidate.current:
            print(
                f"      current: {cli.printable(candidate.current)}; "
                f"retired: {cli.printable(', '.join(candidate.retired))}"
            )
        if candidate.reason:
            print(f"      not applied: {cli.printable(candidate.reason)}")
    for item in findings.still_current:
        print(
            f"  still current: {cli.printable(item['path'])} "
            f"(superseded_by {cli.printable(str(item['superseded_by']))})"
        )
    for item in findings.unresolved:
        print(
            f"  unresolved: {cli.printable(item['path'])} (superseded_by {cli.printable(str(item['superseded_by']))}"
            "): names no other card; not stamped"
        )
    for item in refused:
        print(f"  refused: {cli.printable(item['path'])}: {cli.printable(item['reason'])}")
    print()
    cli.print_outcome(outcome, edits, apply, args.diff)
    return code


def build_parser():
    parser = cli.make_parser(
        "supersede.py", "Find cards of one entity with conflicting values; retire the older ones.", EPILOG
    )
    cli.add_common(parser, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(parser, changes_people_text=True)
    parser.add_argument("--diff", action="store_true", help="show each planned write as a unified diff")
    parser.set_defaults(func=cmd_supersede)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
