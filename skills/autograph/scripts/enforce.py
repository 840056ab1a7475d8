#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""enforce.py: check a vault against its schema, and fix what the schema allows."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from autograph.read.vault import Vault
    from autograph.schema import compliance
    from autograph.write.changes import Edit

# compliance.RULES, spelled out so that --help needs no import of compliance
# (which reads vaults); tests/test_startup.py checks that they agree.
RULE_LINES = """\
  unreadable           error    the note is not UTF-8 or cannot be read
  invalid-frontmatter  error    the frontmatter does not parse (repair: enforce.py --repair)
  no-frontmatter       warning  the note has no frontmatter (fix: engine.py init)
  missing-type         error    the schema has types and the note has no type
  type-alias           error    the type is another spelling of a schema type (type_aliases)
  unknown-type         error    the type is not in node_types
  field-fix            error    a value the schema maps to another (field_fixes)
  status-not-allowed   error    the status is not in its type's status list
  missing-required     error    a property the note's type requires is missing or empty
  tags-format          warning  tags written with '#' or with empty items
  yaml-comment         warning  a value that YAML reads as a comment ('#' after a space)
  property-type        warning  a value does not match the property's type (properties)
  misplaced            warning  the note is not in its type's folder
  quoted-date          info     a date property written in quotes
  tab-in-value         info     a tab character inside a value"""

EPILOG = f"""\
Rules (rule, severity, what it checks):
{RULE_LINES}

Fixes, written only with --apply and only as surgical frontmatter edits
(every other line and the body keep their bytes): type_aliases, field_fixes
(the only way a status outside its list is rewritten), a missing type the
note's folder gives (path_type_hints, the types' folders), missing required
properties the schema gives a default for (defaults, status_defaults), and
tags without '#' and empty items.  Everything else is reported only.

--repair rewrites frontmatter that does not parse or reads wrong (tabs in
indentation, an unquoted value holding ': ', '#tags' read as comments); it
always shows the diff, and writes only with --apply.

--move also moves each misplaced card into its type's folder (the folder of
its type in node_types), keeping its file name, as "graph.py mv" does: every
link that resolved to it is rewritten to keep resolving to it (form, alias,
heading and block kept), in the same journaled run as the fixes (a card that
is fixed and moved is written once, under its new name).  A card whose
destination exists is not moved (listed under "refused").

Compliance score: the mean over notes of 1 - the heaviest finding (error 1,
warning 0.5, info 0), times 100.  Output options never change it.

JSON keys (--json): vault, schema (path or null), notes, score, by_rule{{rule:
n}}, by_note{{path: n}}, findings[{{path, line, rule, severity, message, key, fix, fixable}}],
fixable, edits[{{path, reason}}], written[] (notes that now hold their
fix), conflicts[{{path, error, copy}}] (changed by someone else meanwhile:
left as they made it, or their version merged or saved at copy under
.graph/conflicts/), failed[{{path, error}}] (not written: read-only, a
symlink, hard links, ...), run (the run id, or null), skipped[{{path,
reason}}] (notes whose frontmatter cannot be edited: fixes not planned),
repairs[{{path, done[]}}], after (with --apply: {{score, by_rule, fixable}}
once the writes are done, else null); with --move also moves[{{from, to}}],
links[{{path, line, old, new}}] (rewritten links), left[{{path, line, target,
was, now, why}}] (links that will not follow a move), refused[{{path, to,
error}}], not_moved[{{path, error}}] (what could not be done: a new name not
written, an old name someone edited meanwhile, a link note not written),
rolled_back (the run that then took the whole run back, else null).  A
misplaced finding carries folder (where its type lives).

Kind: changes what people wrote, so a dry run unless --apply.  One
autograph writer per vault at a time: --wait SECONDS waits for another.

Exit codes: 0 done; 1 score under --fail-under; 2 bad usage, vault or
schema; 3 I/O failure, another run holding the vault, or a bug; 4 finished,
but some planned writes were skipped (conflicts, failures; wins over 1).

Examples:
  enforce.py --vault ~/vault                      # report, write nothing
  enforce.py --vault ~/vault --diff               # also show the fixes as diffs
  enforce.py --vault ~/vault --apply              # write the fixes
  enforce.py --vault ~/vault --repair             # show repairs of broken frontmatter
  enforce.py --vault ~/vault --repair --apply     # write them
  enforce.py --vault ~/vault --apply --move       # fixes, and misplaced cards into their folders
"""
SHOWN = 40


def _human(report: compliance.Report, schema_source) -> str:
    source = schema_source or "built-in defaults"
    lines = [f"compliance: {report.score}/100 · {cli.plural(report.notes, 'note')} · schema: {source}"]
    if report.findings:
        lines.append("by rule: " + ", ".join(f"{rule} {n}" for rule, n in report.by_rule().items()))
        lines.append("")
        for finding in report.findings[:SHOWN]:
            mark = " (fixable)" if finding.fix is not None else ""
            lines.append(
                f"{cli.printable(finding.path)}:{finding.line}  {finding.severity}  {finding.rule}: "
                f"{cli.printable(finding.message)}{mark}"
            )
        if len(report.findings) > SHOWN:
            lines.append(f"... {len(report.findings) - SHOWN} more (--json lists all)")
    fixable = len(report.fixable())
    lines.append("")
    lines.append(
        f"{cli.plural(fixable, 'finding')} fixable" + (" (enforce.py --apply writes the fixes)" if fixable else "")
    )
    return "\n".join(lines)


def _repairs(vault: Vault, report: compliance.Report) -> tuple[list[Edit], list[dict]]:
    from autograph.schema import repair
    from autograph.write.changes import Edit

    edits, done = [], []
    paths = sorted({f.path for f in report.findings if f.rule in ("invalid-frontmatter", "yaml-comment")})
    for path in paths:
        note = vault.note(path)
        result = repair.repair(note.text) if note.text is not None else None
        if result is not None:
            text, steps = result
            edits.append(Edit(path, note.data, note.encode(text), "repair: " + "; ".join(steps)))
            done.append({"path": path, "done": steps})
    return edits, done


def cmd_enforce(args) -> int:
    with cli.writing(args, "enforce.py"):
        report = _enforce(args)
    return report()  # printed once the vault is free again (a paused pager holds no lock)


def _enforce(args):
    from autograph.read.vault import Vault
    from autograph.schema import compliance

    apply = cli.writes(args)
    # stamps, for a run that writes: its notes go into the index (record_written); a dry run holds none
    vault, schema = cli.load(args, stamps=apply)
    report = compliance.check(vault, schema)
    repairs: list[dict] = []
    skipped: list[dict] = []
    moved: dict | None = None
    move_plan = None
    if args.repair:
        if args.move:
            raise cli.UsageError("--move cannot go with --repair: repair the frontmatter first, then move")
        edits, repairs = _repairs(vault, report)
        command = "enforce.py --repair"
    else:
        edits, skipped = compliance.plan_fixes(vault, report)
        command = "enforce.py"
        if args.move:
            edits, moved, move_plan = _moves(vault, schema, report, edits)
            command = "enforce.py --move"
    # everything is written before anything is printed: a reader that goes
    # away (| head) never stops a run half way
    outcome = cli.carry_out(vault, edits, apply, args.wait, command, schema)
    if moved is not None:
        _roll_back_failed_moves(vault, move_plan, outcome, moved, args.wait)
    after = None
    if apply:
        later = compliance.check(Vault.open(args.vault), schema)
        after = {"score": later.score, "by_rule": later.by_rule(), "fixable": len(later.fixable())}
    final = after["score"] if after else report.score
    code = cli.outcome_code(outcome, found=args.fail_under is not None and final < args.fail_under)
    return lambda: _report(args, vault, schema, report, edits, outcome, skipped, repairs, after, code, moved)


def _roll_back_failed_moves(vault: Vault, plan, outcome: dict, moved: dict, wait: float) -> None:
    """Take the run back when a moved card's new name could not be written
    (its links were rewritten to it): ``moved["rolled_back"]`` names the
    undo's run, else None."""
    from autograph.graph import moves

    moved["rolled_back"] = None
    missed = moves.unfinished(plan, outcome) if outcome["run"] else []
    moved["not_moved"] = missed
    if missed:
        undone = moves.roll_back(vault.root, outcome["run"], wait)
        moved["rolled_back"] = undone.run_id
        print(
            f"enforce.py: the run {outcome['run']} was rolled back: no card moved and every link is as before, "
            "and edits made meanwhile were kept; run it again. Not done: "
            + "; ".join(f"{cli.printable(item['path'])}: {cli.printable(item['error'])}" for item in missed),
            file=sys.stderr,
        )


def _moves(vault: Vault, schema, report: compliance.Report, edits: list) -> tuple[list, dict, object]:
    """The run of --move: each misplaced card to its type's folder (as
    graph.py mv, through autograph.graph.moves), the frontmatter fixes folded in
    (one change per file).  Returns the changes, the JSON of the moves and
    the :class:`moves.MovePlan`."""

    from autograph.graph import moves
    from autograph.read.note import Note
    from autograph.write.changes import Edit

    wanted = {}
    for finding in report.findings:
        if finding.rule == "misplaced" and finding.folder is not None:
            name = finding.path.rsplit("/", 1)[-1]
            wanted[finding.path] = f"{finding.folder}/{name}" if finding.folder else name
    mapping, refused = moves.check_mapping(vault, wanted)
    reasons = {edit.path: edit.reason for edit in edits}
    texts = {edit.path: Note.from_bytes(edit.path, edit.after).text for edit in edits}
    try:
        plan = moves.plan_move(vault, mapping, schema, texts=texts)
    except moves.MoveError as exc:
        raise cli.UsageError(str(exc)) from None
    cli.warn(plan.told(made=True))
    changes = []
    for change in plan.changes:
        if isinstance(change, Edit):
            old = next((a for a, b in mapping.items() if b == change.path), None) if change.before is None else None
            fixed = reasons.get(old or change.path)
            if fixed:
                base = change.reason if old or "retargeted" in change.reason else ""
                change = change.replace(reason="; ".join(r for r in (base, fixed) if r))
        changes.append(change)
    info = {
        "moves": [{"from": a, "to": b} for a, b in mapping.items()],
        "links": [link._asdict() for link in plan.links],
        "left": plan.left,
        "refused": refused,
    }
    return changes, info, plan


def _report(args, vault, schema, report, edits, outcome, skipped, repairs, after, code, moved=None) -> int:
    apply = cli.writes(args)
    if args.json:
        cli.print_json(
            {
                "vault": str(vault.root),
                "schema": str(schema.source) if schema.source else None,
                "notes": report.notes,
                "score": report.score,
                "by_rule": report.by_rule(),
                "by_note": report.by_note(),
                "findings": [f.as_dict() for f in report.findings],
                "fixable": len(report.fixable()),
                **outcome,
                "skipped": skipped,
                "repairs": repairs,
                "after": after,
                **(moved or {}),
            }
        )
        return code
    print(_human(report, schema.source))
    print()
    if moved is not None:
        verb = "moved" if apply else "to move"
        links = cli.plural(len(moved["links"]), "link")
        print(f"{cli.plural(len(moved['moves']), 'misplaced card')} {verb}, {links} rewritten")
        for item in moved["moves"]:
            print(f"  {cli.printable(item['from'])} -> {cli.printable(item['to'])}")
        for item in moved["refused"]:
            print(f"  not moved: {cli.printable(item['path'])}: {cli.printable(item['error'])}")
        for item in moved["left"]:
            where = f"{cli.printable(item['path'])}:{item['line']}"
            print(f"  link left: {where} {cli.printable(item['target'])} ({item['why']})")
    from autograph.write.changes import Edit

    shown = [e for e in edits if not (args.diff or args.repair) or (isinstance(e, Edit) and e.before is not None)]
    cli.print_outcome(outcome, shown, apply, args.diff or args.repair)
    for item in skipped:
        print(f"not fixed: {cli.printable(item['path'])}: {cli.printable(item['reason'])}")
    if after:
        print(f"after the writes: compliance {after['score']}/100, {cli.plural(after['fixable'], 'finding')} fixable")
    return code


def build_parser():
    parser = cli.make_parser("enforce.py", "Check every note against the schema; fix what the schema allows.", EPILOG)
    cli.add_common(parser, dry_run_help="write nothing, even with --apply (the default already writes nothing)")
    cli.add_writes(parser, changes_people_text=True)
    parser.add_argument("--repair", action="store_true", help="repair frontmatter that does not parse or reads wrong")
    parser.add_argument("--diff", action="store_true", help="show each fix as a unified diff")
    parser.add_argument(
        "--move",
        action="store_true",
        help="also move misplaced cards into their type's folder, rewriting every link to them",
    )
    parser.add_argument(
        "--fail-under", type=cli.score_value, metavar="N", help="exit 1 when the compliance score is under N (0-100)"
    )
    parser.set_defaults(func=cmd_enforce)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
