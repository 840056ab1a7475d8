#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""moc.py: generated Maps of Content, one per domain or per type."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
generate: one Map of Content per domain (schema moc.group_by "domain": the
domain property, else domain_inference) or per type (moc.group_by "type"),
written to MOC.folder/<group> MOC.md (moc.folder; default the moc type's
folder, else MOC).  Names that differ only in letter case or Unicode
normalisation ("Person", "person") are one group, and a group keeps the page
it has (a newcomer with the same file name gets "(2)").  Group names and
statuses are written as one line of plain text (no heading, link or tag
from a value).  Entries are grouped under the statuses in status_order
(others next by name, no status last), then sorted by title; each is the
shortest wikilink that resolves to the card, with its description.  A page
holds at most moc.caps (default the index's hard caps, 200 lines and 25,000
bytes); a longer map is split into <group> MOC 2.md, ... linked from each part.

Generated notes carry "generated_by: autograph" and "type: moc" in their
frontmatter (a hub: never an orphan).  Their text holds no date, so an
unchanged vault writes nothing.  A note at a MOC's path without that mark is
never written over: its group is reported as blocked.  Generated MOCs no
group needs any more go to .trash/ (undo.py brings them back): only pages
named as moc.py names them, directly in moc.folder, that hold only lines
moc.py writes; a marked note anywhere else (a person's copy of a map) or a
page a person wrote a line in is never trashed (listed in not_owned).

JSON keys (--json): vault, group_by, folder, caps{lines, bytes}, pages[{path,
group, part, parts, entries, lines, bytes, change ("new", "changed",
"unchanged")}], blocked[{group, path, reason}], ungrouped (cards without a
group), trashed[], not_owned[] (notes marked as generated that are not
map pages in moc.folder, or pages no group needs with a person's lines in
them: never trashed), edits[{path, reason}], written[], conflicts[{path,
error, copy}], failed[{path, error}], run (the run id, or null).

Kind: maintains generated notes, so it writes unless --dry-run; writes go
through the journal (undo.py).  One autograph writer per vault at a time:
--wait SECONDS waits for another.

Exit codes: 0 done; 1 some group blocked by a note someone wrote; 2 bad
usage, vault or schema (a moc.folder that is never written, caps too small
for one entry); 3 I/O failure, another run holding the vault, or a bug; 4
finished, but some planned writes were skipped (conflicts, failures; wins
over 1).

Examples:
  moc.py generate --vault ~/vault              # write the MOCs (nothing when unchanged)
  moc.py generate --vault ~/vault --dry-run    # what would change
  moc.py generate --vault ~/vault --dry-run --diff
  moc.py generate --vault ~/vault --json       # for agents and cron
"""


def cmd_generate(args) -> int:
    with cli.writing(args, "moc.py generate"):
        report = _generate(args)
    return report()


def _generate(args):
    from autograph.graph import moc
    from autograph.write.derived import save_index
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    index = note_index(vault, schema, use_disk=not args.dry_run)
    try:
        plan = moc.plan(vault, schema, index)
    except moc.MocError as exc:
        raise cli.UsageError(str(exc)) from None
    cli.warn(index.warnings)
    if not args.dry_run:
        save_index(index)
    apply = cli.writes(args)
    outcome = cli.carry_out(vault, plan.changes, apply, args.wait, "moc.py generate", schema)
    code = cli.outcome_code(outcome, found=bool(plan.blocked))
    return lambda: _report(args, vault, plan, outcome, code)


def _report(args, vault, plan, outcome, code) -> int:
    if args.json:
        cli.print_json(
            {
                "vault": str(vault.root),
                "group_by": plan.group_by,
                "folder": plan.folder,
                "caps": plan.caps,
                "pages": plan.pages,
                "blocked": plan.blocked,
                "ungrouped": plan.ungrouped,
                "trashed": plan.trashed,
                "not_owned": plan.not_owned,
                **outcome,
            }
        )
        return code
    p = cli.printable
    groups = len({page["group"] for page in plan.pages})
    changed = sum(1 for page in plan.pages if page["change"] != "unchanged")
    print(
        f"maps of content by {plan.group_by}: {cli.plural(groups, 'group')}, {cli.plural(len(plan.pages), 'page')}"
        f" ({changed} new or changed) in {p(plan.folder or '(vault root)')}"
        f" · {cli.plural(plan.ungrouped, 'card')} without a {plan.group_by}"
    )
    for page in plan.pages:
        if page["change"] != "unchanged":
            print(f"  {page['change']:9} {p(page['path'])}  {page['entries']} entries, {page['lines']} lines")
    for row in plan.blocked:
        print(f"blocked: {p(row['group'])}: {p(row['path'])}: {p(row['reason'])}")
    if plan.not_owned:
        print(
            f"{cli.plural(len(plan.not_owned), 'note')} marked as generated but not a map page of"
            f" {p(plan.folder or '(vault root)')}, left as they are (a copy of a map, or pages of an earlier"
            " moc.folder: remove them yourself):"
        )
        for path in plan.not_owned[:20]:
            print(f"  {p(path)}")
    print()
    cli.print_outcome(outcome, plan.changes, cli.writes(args), args.diff)
    return code


def build_parser():
    parser = cli.make_parser("moc.py", "Generate Maps of Content.")
    subparsers = parser.add_subparsers(metavar="COMMAND")
    sub = cli.subparser(
        subparsers,
        "generate",
        "write one Map of Content per domain or type",
        "Write one Map of Content per domain (or type), split into pages within the caps.",
        EPILOG,
    )
    cli.add_common(sub)
    cli.add_writes(sub, changes_people_text=False)
    sub.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    sub.set_defaults(func=cmd_generate)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
