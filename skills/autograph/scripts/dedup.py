#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""dedup.py: find cards of one entity by identity keys, and merge them into one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
Grouping: cards holding the same identity value (the schema's
identity.match_fields, normalised as search.py --identity normalises them:
email case and spaces, handle '@', phone national or international) are
one entity, across file names and folders.  A name alone never groups; a
value held by more cards than identity.max_shared (default 8) is ignored;
two cards with different values under one identity field are never in one
group; identity.same_type_only (default false) and same_domain_only
(default true) gate the pairs.  Retired cards (status: superseded) are
left out.

Canonical card (the one that stays): more linking notes, then richer
(more non-empty properties, then a longer body), then newer (updated,
else created), then the shorter path, then code-point order of the path.

Merge (--apply): every line of every member is kept.  Properties the
canonical card lacks are copied as written, lists are joined, a differing
value stays in the canonical card and the member's goes to '## History'
as a dated line naming its source; the member's name joins 'aliases';
body sections merge under the same heading (same level); every link to the member is
rewritten to the canonical card keeping its visible text
([[A. Example]] -> [[Alex Example|A. Example]]); the member file goes to
.trash/<run-id>/.  One journaled run: undo.py undo RUN takes it back.

--apply alone merges only strong groups (joined by email or phone kind
keys), but one whose members differ on a conflict field
(conflict_fields.fields: company, role, title, platform, status) while one
card is newest on each such field is a change of fact: it is left to
supersede.py (under not_merged; "settled" names that card), so the two give
one vault in either order.  Groups found by a handle (or another key)
alone are merged only from a reviewed manifest: --manifest FILE writes every group, edit it
(remove groups or members, change "canonical"), then --apply-manifest
FILE --apply merges the groups left in it; a group whose members changed
since the manifest was written is skipped as a conflict.

Sync conflict copies: a card with copies a sync client left beside it
(Note.sync-conflict-..., Note (conflicted copy ...), see graph.py health)
is a group with "copy": true, never strong: --manifest writes it,
--apply-manifest FILE --apply folds what each copy adds into the card
(the card stays, the copy goes to .trash/<run-id>/, its name never an alias).

Name variants: cards whose names are one name in other spellings (a
nickname from a built-in table and identity.nicknames, initials,
Cyrillic and Greek transliterated, umlauts written out) and that hold no
conflicting identity are listed under suggestions[{cards, name_key,
evidence[{kind: field|link, ...}], confidence}], never merged by
--apply; --manifest writes them as groups with "suggested": true,
name_key, confidence, to review and merge with --apply-manifest.

Manifest (JSON): {format: "autograph-dedup-manifest", version: 1, vault,
groups[{canonical, members[{path, sha256}], evidence[{key, field, fields,
kind, value, paths}], strong, ranking[{path, backlinks, properties,
body_chars, date}], differs[], settled, copy (true for conflict copies,
else absent)}]}.  An evidence key is "kind:value": one value under any
field of its kind (handle and telegram) is one identity.
sha256 is of each member file's bytes; null means "as it is".

JSON keys (--json): vault, schema (path or null), cards (cards examined),
groups[...] (as in the manifest), suggestions[...] (above), refused[{paths, key, reason, field,
values}] (joins not made: the two cards differ under field), shared[{key,
cards}] (keys ignored, held by too many cards), skipped[{path, reason}]
(notes not examined: unreadable, frontmatter that does not parse),
selected (how many groups this run merges or would merge), merged[{canonical,
members, history, aliases}] (history: the lines added to ## History),
not_merged[{members, reason}] (refused, stale or left to supersede.py),
links[{path, line, old, new}], links_left[{path, line, target,
was, now, why}] (links that cannot follow: in a templates folder, never
written), manifest (the file written, or
null), edits[{path, reason}], written[], conflicts[{path, error, copy}],
failed[{path, error}], run (run id or null).

Writes: with --apply, the canonical cards, the notes whose links change,
and the merged cards moved to .trash/<run-id>/ (a member stays where it
is, reported under failed or conflicts, when its merge into the
canonical card or a rewrite of a link to it was not written; a rerun
then adds no line the canonical card already holds).  --manifest writes
its file (never through a symlink, FIFO or device, never as a .md note
of the vault; an existing file only with --force), also in a dry run.

Kind: changes what people wrote, so a dry run unless --apply.  One
autograph writer per vault at a time: --wait SECONDS waits for another.

Exit codes: 0 done, nothing left to merge; 1 groups found that this run
did not merge (a dry run, groups that need a manifest, refused groups);
2 bad usage, vault, schema or manifest; 3 I/O failure, another run
holding the vault, or a bug; 4 finished, but some planned writes or
manifest groups were skipped (changed meanwhile; wins over 1).

Examples:
  dedup.py --vault ~/vault                              # report the groups
  dedup.py --vault ~/vault --diff                       # and the merge of strong groups as diffs
  dedup.py --vault ~/vault --apply                      # merge the strong groups
  dedup.py --vault ~/vault --manifest groups.json       # write every group for review
  dedup.py --vault ~/vault --apply-manifest groups.json --apply
"""
SHOWN = 40


def cmd_dedup(args) -> int:
    if args.apply_manifest and args.manifest:
        raise cli.UsageError("give --manifest (write the groups) or --apply-manifest (merge them), not both")
    with cli.writing(args, "dedup.py"):
        report = _dedup(args)
    return report()


def _today(args, schema) -> str:
    from autograph.memory import decay
    from autograph.read import dates

    return dates.today_in(decay.Settings.of(schema).zone, args.today).isoformat()


def _dedup(args):
    from autograph.memory import dedup, variants
    from autograph.read import jsonfile
    from autograph.write import derived
    from autograph.write.index_file import note_index

    vault, schema = cli.load(args, stamps=True)
    apply = cli.writes(args)
    # one read of every note's links, for backlinks and the rewrite; a dry run writes not even the index
    index = note_index(vault, schema, use_disk=apply)
    report = dedup.find_groups(vault, schema, index=index)
    report.groups += dedup.copy_groups(vault, schema)  # a sync client's copies: folded in from a manifest
    cli.warn(index.warnings)
    grouped = {path for group in report.groups for path in group.members}
    suggestions = (
        [] if args.apply_manifest else variants.suggest(vault, schema, grouped=grouped)
    )  # reviewed, never merged
    written_manifest = None
    if args.manifest:
        identities = {}

        def apart(a: str, b: str) -> bool:  # two cards whose identities conflict are never one group
            for path in (a, b):
                if path not in identities:
                    identities[path] = dedup.read_card(vault.note(path), schema, dedup.identity_settings(schema))
            one, two = identities[a], identities[b]
            return one is not None and two is not None and bool(dedup.conflicts_between(one, two))

        data = dedup.manifest(report, vault.root.resolve(), variants.join(suggestions, apart), vault)
        data = jsonfile.dumps(data, indent=2) + "\n"
        written_manifest = str(
            derived.write_output(args.manifest, data.encode("utf-8"), overwrite=args.force, vault=vault.root)
        )
    stale: list[dict] = []
    if args.apply_manifest:
        try:
            data = jsonfile.loads(jsonfile.read_text(args.apply_manifest))
        except (OSError, ValueError) as exc:
            raise cli.UsageError(f"cannot read the manifest {args.apply_manifest}: {exc}") from None
        written_for = data.get("vault") if isinstance(data, dict) else None
        if isinstance(written_for, str) and Path(written_for) != vault.root.resolve():
            cli.warn([f"the manifest was written for {written_for}; its content hashes decide what is merged here"])
        try:
            selected, stale = dedup.groups_from_manifest(vault, data)
        except dedup.ManifestError as exc:
            raise cli.UsageError(f"{args.apply_manifest}: {exc}") from None
    else:
        # a change of fact (a new company, a new role) is supersede.py's to settle: either order, one result
        selected = [group for group in report.groups if group.strong and group.settled is None]
    ignored = {item["key"] for item in report.shared}
    plan = dedup.plan_merge(vault, schema, selected, _today(args, schema), index=index, ignored=ignored)
    outcome = cli.carry_out(vault, plan.changes, apply, args.wait, "dedup.py", schema)
    merged_paths = {p for entry in plan.merged for p in [entry["canonical"], *entry["members"]]}
    left = [g for g in report.groups if not set(g.members) <= merged_paths] if not args.apply_manifest else []
    found = bool(plan.refused or left or (not apply and plan.merged))  # suggestions are never merged: not "left"
    if stale:
        outcome["conflicts"] = outcome["conflicts"] + [
            {"path": item["members"][0], "error": item["reason"], "copy": None} for item in stale
        ]
    code = cli.outcome_code(outcome, found=found)
    report.suggestions = suggestions
    return lambda: _report(args, vault, schema, report, plan, selected, stale, outcome, written_manifest, code)


def deferred(report, selected) -> list[dict]:
    """The strong groups left to supersede.py: their current values differ
    and one card is newest on each (supersede retires the others)."""
    chosen = {group.canonical for group in selected}
    return [
        {
            "members": group.members,
            "reason": f"their current {', '.join(group.differs)} differ and {group.settled} is the newest: "
            "supersede.py retires the older card (or merge them from a reviewed manifest)",
        }
        for group in report.groups
        if group.strong and group.settled is not None and group.canonical not in chosen
    ]


def _report(args, vault, schema, report, plan, selected, stale, outcome, manifest, code) -> int:
    apply = cli.writes(args)
    not_merged = plan.refused + stale + deferred(report, selected)
    if args.json:
        cli.print_json(
            {
                "vault": str(vault.root),
                "schema": str(schema.source) if schema.source else None,
                "cards": report.cards,
                "groups": [g.as_dict() for g in report.groups],
                "suggestions": [s.as_dict() for s in report.suggestions],
                "refused": [r.as_dict() for r in report.refused],
                "shared": report.shared,
                "skipped": report.skipped,
                "selected": len(selected),
                "merged": plan.merged,
                "not_merged": not_merged,
                "links": plan.links,
                "links_left": plan.links_left,
                "manifest": manifest,
                **outcome,
            }
        )
        return code
    strong = sum(1 for g in report.groups if g.strong)
    print(
        f"dedup: {cli.plural(report.cards, 'card')} · {cli.plural(len(report.groups), 'group')} ({strong} strong)"
        f" · {cli.plural(len(report.refused), 'join')} refused · {cli.plural(len(report.shared), 'shared key')} ignored"
    )
    for group in report.groups[:SHOWN]:
        evidence = ", ".join(e["key"] for e in group.evidence)
        mark = "" if group.strong else "  (needs a manifest: no email or phone key)"
        mark = "  (sync conflict copies: a manifest folds them in)" if group.copy else mark
        print(f"  {cli.printable(group.canonical)}  <- {cli.printable(', '.join(group.members[1:]))}{mark}")
        print(f"      by {cli.printable(evidence)}")
    if len(report.groups) > SHOWN:
        print(f"  ... {len(report.groups) - SHOWN} more (--json or --manifest lists all)")
    for item in report.suggestions[:SHOWN]:
        print(
            f"  probably one ({item.confidence}, name {cli.printable(item.name_key)}): "
            f"{cli.printable(' + '.join(item.cards))}  (review: --manifest, then --apply-manifest)"
        )
    if len(report.suggestions) > SHOWN:
        print(f"  ... {len(report.suggestions) - SHOWN} more suggestions (--json or --manifest lists all)")
    for item in report.refused[:SHOWN]:
        print(
            f"  not joined: {cli.printable(' + '.join(item.paths))} share {cli.printable(item.key)} "
            f"but differ in {item.field}"
        )
    for item in report.shared:
        print(f"  ignored: {cli.printable(item['key'])} is held by {item['cards']} cards (max_shared)")
    for item in report.skipped[:SHOWN]:
        print(f"  not examined: {cli.printable(item['path'])}: {cli.printable(item['reason'])}")
    if manifest:
        print(f"manifest written: {cli.printable(manifest)}")
    print()
    print(f"{cli.plural(len(plan.merged), 'group')} to merge, {cli.plural(len(plan.links), 'link')} to rewrite")
    # print_outcome diffs Edits only: a trashed card is listed with its reason
    from autograph.write.changes import Edit

    edits = [c for c in plan.changes if isinstance(c, Edit)]
    cli.print_outcome(outcome, edits, apply, args.diff)
    for change in plan.changes:
        if not isinstance(change, Edit):
            done = "moved" if change.path in outcome["written"] else "to move"
            print(f"  {cli.printable(change.path)}  {done} to .trash/ ({cli.printable(change.reason)})")
    for item in plan.links_left:
        print(
            f"link left: {cli.printable(item['path'])}:{item['line']} [[{cli.printable(item['target'])}]]: "
            f"{cli.printable(item['why'])}"
        )
    for item in not_merged:
        print(f"not merged: {cli.printable(', '.join(item['members']))}: {cli.printable(item['reason'])}")
    return code


def today_value(text: str):
    """argparse type for --today: a YYYY-MM-DD date."""
    import argparse
    import datetime

    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-01-31") from None


def build_parser():
    parser = cli.make_parser(
        "dedup.py", "Find cards of one entity by identity keys (email, phone, handle) and merge them.", EPILOG
    )
    cli.add_common(parser, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(parser, changes_people_text=True)
    parser.add_argument("--diff", action="store_true", help="show each planned write as a unified diff")
    parser.add_argument("--manifest", metavar="OUT", help="write every group found to OUT (JSON) for review")
    parser.add_argument("--force", action="store_true", help="let --manifest replace an existing file")
    parser.add_argument("--apply-manifest", metavar="IN", help="merge the groups of a reviewed manifest (with --apply)")
    parser.add_argument(
        "--today", type=today_value, metavar="YYYY-MM-DD", help="the date of History lines (default: today)"
    )
    parser.set_defaults(func=cmd_dedup)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
