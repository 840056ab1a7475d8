#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""undo.py: list the runs that wrote a vault, and take any of them back."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

DESCRIPTION = """\
Every run that writes a vault (enforce.py --apply, engine.py init --apply,
and every later writer) is journaled in VAULT/.graph/journal/<run-id>/ before
it changes a file: the command, its arguments, the time, and for each file
its path, its bytes before and the hash of what was written.  undo.py lists
those runs and takes any of them back."""

LIST_EPILOG = """\
JSON keys (--json): runs[{run, command, args, started, finished, state,
undoes, files, undone_by}], newest first.  state is "done", "running" (did
not finish: recover rolls it back) or "rolled-back"; undoes names the run an
undo or a recovery took back; undone_by the undo runs that took this one back.

Kind: reads only.
Exit codes: 0 done; 2 bad usage or vault; 3 I/O failure or bug.

Examples:
  undo.py list --vault ~/vault
  undo.py list --json | jq -r '.runs[0].run'
"""

SHOW_EPILOG = """\
RUN is a run id from 'undo.py list', or "last" (the newest run a person
started: recoveries and rollbacks autograph made by itself are skipped, and
so are runs killed and rolled back, which left nothing to undo).

JSON keys (--json): run{run, command, args, started, finished, state, undoes,
files}, changes[{n, op, path, to, result, status}].  op is write, trash or
move; result is written, merged, conflict, failed, or null (the run stopped
first); status is where the file is now: "as the run left it" (undo takes it
back), "as before" (nothing to undo), "changed since", "absent".

Kind: reads only.
Exit codes: 0 done; 2 bad usage, vault or unknown RUN; 3 I/O failure or bug.
"""

UNDO_EPILOG = """\
Takes RUN back: every file it changed that still holds exactly what the run
left in it gets its bytes before; a file the run created goes to
.trash/<undo-run-id>/ (nothing is deleted); moved and trashed files come
back.  A file changed since the run is a conflict: listed, left as it is.
A run that created, moved or trashed files (mv, dedup, moc) is undone whole
or not at all: when one of its files cannot go back (changed since, or
something now stands at its old name), nothing is undone and every file is
listed, since a part would leave links to a stale copy or to nothing.
The undo is itself a journaled run, so it can be undone too.

Kind: changes what people's files hold, so a dry run unless --apply.

JSON keys (--json): undone (RUN's id), edits[{path, reason}], written[],
conflicts[{path, error, copy}] (changed since the run, or during the undo),
failed[{path, error}], run (the undo's own run id, or null).

Exit codes: 0 done; 2 bad usage, vault or unknown RUN; 3 I/O failure,
another run writing, or a bug; 4 finished, but some files were not taken
back (conflicts, failures).

Examples:
  undo.py undo last --vault ~/vault                # what would go back
  undo.py undo 20261201T040501Z-4242-a1b2c3 --vault ~/vault --apply
"""

RECOVER_EPILOG = """\
Rolls back every run that did not finish (killed, crashed, or one whose
end could not be recorded on a full disk, which exited 3 saying so),
newest first: each file it changed goes back to its bytes before, unless
someone changed it since (then it is reported and left), and the folders
it created go while they are empty.  A run that exited 0 is never rolled
back.  Every writing command does this first by itself when the run before
it died; recover does it now.  Autograph's own temporary files a killed
run left are removed; a save another program made over one of them is
kept under .graph/conflicts/.

Kind: repairs autograph's own interrupted writes, so it writes unless
--dry-run.

JSON keys (--json): recovered[{undone, edits[], written[], conflicts[],
failed[], run}] (one per unfinished run; an entry with undone null lists
saves another writer made while the killed run wrote, kept under
.graph/conflicts/recovered-<time>/: conflicts[{path, error, copy}]).

Exit codes: 0 done (also when there was nothing to recover); 2 bad usage or
vault; 3 I/O failure, another run writing, or a bug; 4 some files could not
be rolled back.
"""


def _find(root, name: str):
    from autograph.write import undo

    try:
        return undo.find_run(root, name)
    except undo.NoSuchRun as exc:
        raise cli.UsageError(str(exc)) from None


def cmd_list(args) -> int:
    from autograph.read.vault import Vault
    from autograph.write import undo

    items = undo.listed_runs(Vault.check_folder(args.vault))
    if args.json:
        cli.print_json({"runs": items})
    else:
        print(undo.list_text(items))
    return cli.EXIT_OK


def cmd_show(args) -> int:
    from autograph.read.vault import Vault
    from autograph.write import undo

    vault = Vault.open(args.vault)
    run = _find(vault.root, args.run)
    changes = undo.shown_changes(vault.root, run)
    if args.json:
        cli.print_json({"run": run.summary(), "changes": changes})
    else:
        print(undo.show_text(run, changes))
    return cli.EXIT_OK


def cmd_undo(args) -> int:
    from autograph.read.vault import Vault

    _find(Vault.check_folder(args.vault), args.run)  # an unknown RUN: exit 2 before the lock makes .graph/ anywhere
    with cli.writing(args, "undo.py undo"):
        report = _undo(args)
    return report()


def _undo(args):
    from autograph.read.vault import Vault
    from autograph.write.undo import plan_undo

    vault = Vault.open(args.vault)
    run = _find(vault.root, args.run)
    changes, not_undone = plan_undo(Path(vault.root), run)
    outcome = cli.carry_out(vault, changes, cli.writes(args), args.wait, "undo.py undo", undoes=run.id)
    outcome["conflicts"] = [{**c, "copy": None} for c in not_undone] + outcome["conflicts"]
    code = cli.outcome_code(outcome)

    def report() -> int:
        if args.json:
            cli.print_json({"undone": run.id, **outcome})
        else:
            print(f"undo {run.id} ({cli.printable(run.command or '?')})")
            cli.print_outcome(outcome, changes, cli.writes(args), args.diff)
        return code

    return report


def cmd_recover(args) -> int:
    with cli.writing(args, "undo.py recover"):
        report = _recover(args)
    return report()


def _recover(args):
    from autograph.read.vault import Vault
    from autograph.write import journal, store, undo

    vault = Vault.open(args.vault)
    # a dead writer's run was rolled back as the lock was taken (cli.writing)
    recovered = [{"undone": run_id or None, **cli.outcome_of([], result)} for run_id, result in store.last_recovery]
    for run in journal.unfinished(undo.journal_folder(vault.root)):  # newest first: a killed rollback unwinds first
        if cli.writes(args):
            journal.release_space(undo.journal_folder(vault.root), run.id)  # the room it held for its rollback
        changes, not_undone = undo.plan_undo(Path(vault.root), run, partial=True)
        outcome = cli.carry_out(vault, changes, cli.writes(args), args.wait, "undo.py recover", undoes=run.id)
        outcome["conflicts"] = [{**c, "copy": None} for c in not_undone] + outcome["conflicts"]
        if cli.writes(args):
            journal.mark_run(vault.root, run.id, "rolled-back")
        recovered.append({"undone": run.id, **outcome})
    code = max((cli.outcome_code(item) for item in recovered), default=cli.EXIT_OK)

    def report() -> int:
        if args.json:
            cli.print_json({"recovered": recovered})
        elif text := undo.recover_text(recovered):
            print(text)
        return code

    return report


def build_parser():
    parser = cli.make_parser(
        "undo.py", DESCRIPTION, "Run 'undo.py COMMAND --help' for each command's options, JSON keys and examples."
    )
    commands = parser.add_subparsers(metavar="COMMAND")
    p = cli.subparser(commands, "list", "the journaled runs, newest first", "List the journaled runs.", LIST_EPILOG)
    cli.add_common(p, schema=False, dry_run_help="changes nothing (list only reads)")
    p.set_defaults(func=cmd_list)

    p = cli.subparser(commands, "show", "what one run changed", "Show what one run changed.", SHOW_EPILOG)
    p.add_argument("run", metavar="RUN", type=cli.word, help='a run id, or "last"')
    cli.add_common(p, schema=False, dry_run_help="changes nothing (show only reads)")
    p.set_defaults(func=cmd_show)

    p = cli.subparser(commands, "undo", "take a run back", "Take one run back.", UNDO_EPILOG)
    p.add_argument("run", metavar="RUN", type=cli.word, help='a run id, or "last"')
    cli.add_common(p, schema=False, dry_run_help="write nothing, even with --apply")
    cli.add_writes(p, changes_people_text=True)
    p.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    p.set_defaults(func=cmd_undo)

    p = cli.subparser(
        commands, "recover", "roll back runs that did not finish", "Roll back unfinished runs.", RECOVER_EPILOG
    )
    cli.add_common(p, schema=False, dry_run_help="write nothing; show what would be rolled back")
    cli.add_writes(p, changes_people_text=False)
    p.set_defaults(func=cmd_recover)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
