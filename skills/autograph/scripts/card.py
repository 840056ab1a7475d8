#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""card.py: create and update cards in place, one command per step of the protocol."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
The update-in-place protocol as code: remember TYPE TITLE field=value
looks the subject up (identity values, title, aliases) and updates its
card, creates one, or stops as ambiguous; batch carries a day of such
lines in one run.  The lower-level steps, when the card is known:
  new     ADD a card (refused when its identity, its name or an alias
          of that name exists)
  set     UPDATE fields (old values go to ## History; equal values: nothing;
          an email, phone or handle another live card holds is refused
          unless --force)
  retire  SUPERSEDE a card by another
  (nothing: NOOP, when the card already says it)
then link what it relates to (link) and note what happened (log).  Every
command that writes also touches the card (access_count + 1, tier,
last_accessed) and sets updated, in the same one write.  --source NOTE
(every write) names the note a fact came from and dates it.

Secrets: a value or a log line that looks like a password, an API key, a
token or a private key is refused (exit 2, reason secret; the message
names its kind, never the value); --allow-secret stores one on purpose,
and even then it is shown as [redacted], never indexed and never kept in
## History (an old value that looks like one is not either).  redact NOTE
FIELD|--line N takes one out of the card, its History, the journal's
copies and the index.  access_count, last_accessed, tier and relevance are
autograph's own (every write's touch sets them): refused, exit 2.  An
unquoted YYYY-MM-DD is written as a date (updated: 2020-01-01).

NOTE and OTHER: a path (people/Dana Reyes, Dana Reyes.md; always taken
as given) or any name of the card: its file name (resolved as a wikilink
at the vault's root), its title property, an alias (a nickname), or a
title new changed for the file name (Plan: Q1 is Plan Q1.md).  A name
that fits several notes or cards (a stray root Dana Reyes.md, two files
differing in letter case, a title one card bears and another has as an
alias) is refused with the candidates listed (exit 2): give the path.
An exact name is that card even when remember would ask (Maria Garcia
beside Maria Garcia (Hooli)).

field=value splits at the first '='; the value is one YAML flow value:
tags=[a, b] a list, n=3 a number, flag=true a bool, role="3" text, x= empty.
Unquoted text is kept whole (a: b stays text).  A field that holds a list
keeps a list.

JSON keys (--json): command, path (the card), today, refused (null, or
{reason, message, matches[{path, field, value, retired}] (live cards
first), missing[], fields[] (reason secret: where)} with reason
identity-match, exists, by-itself, by-superseded, missing-required,
not-supersedable, not-editable, identity-taken (set, remember: another
live card holds the identity value), secret; for remember also ambiguous,
identity-conflict, title-taken), changes[{path,
field, old, new} or {path, section, line}] (a secret as [redacted]),
notes[], edits[{path, reason}], written[], conflicts[{path, error, copy}],
failed[{path, error}], run; redact adds purged{journal[], index}.

Kind: an agent's deliberate write, so it writes unless --dry-run; each run
is journaled (undo.py undo RUN takes it back).  It looks the card up and
plans before it takes the vault's writer lock (from the index every command
reads, .graph/index.sqlite), and waits up to 10 seconds (--wait) for another
autograph run writing to the vault; when such a run wrote meanwhile, it
looks up and plans again under the lock.

Exit codes: 0 done (or nothing to do); 1 refused: the identity or the name
exists (the card is named), or retire --by names the card itself or a card
that is itself retired (a cycle or a chain would leave no current card);
2 bad usage (a missing required field, an unknown type, a NOTE that names
no note or several notes, retiring a card whose type cannot be superseded,
autograph's own fields) or refused (identity-taken without --force, secret
without --allow-secret);
3 I/O failure or a bug; 4 the write was skipped (the card changed meanwhile, cannot be written, or its
frontmatter does not parse).

Examples:
  card.py remember person "Alex Example" email=alex@example.com role=CTO --source 2026-12-01 --vault ~/vault
  card.py batch --vault ~/vault --json < today.jsonl
  card.py new person "Alex Example" email=alex@example.com status=active description="CTO at Acme" --vault ~/vault
  card.py set "Alex Example" role=CEO company="[[Acme]]" --vault ~/vault
  card.py log "Alex Example" "Met at the Berlin offsite" --vault ~/vault
  card.py link "Alex Example" Acme "Project Atlas" --vault ~/vault
  card.py retire "Old Alex" --by "Alex Example" --vault ~/vault --json
  card.py redact "Alex Example" api_key --vault ~/vault
"""


REMEMBER_EPILOG = """\
What the lookup finds (live cards; a retired one is followed to its superseded_by), and what is done:
  one card holds an identity value (identity.match_fields), no conflict         updated
  one card bears TITLE as its title or an alias (case and accents folded)       updated
  the name matches but a one-value identity field differs (a stranger)           ambiguous (exit 1)
  several cards match, or a card of another type                                 ambiguous (exit 1)
  nothing                                                                        created
Identity values are those of the schema's identity.match_fields (default: email, telegram, handle,
phone; add url or website there to look cards up by them too).  A conflict is a field under which the
card and the fact each hold one value, not the same; a card holding a list of emails never conflicts.
A card found by an identity value takes a change of a weaker kind (its email matches, its phone is
new: email > phone > handle, url); a name match alone never does.  Another spelling of the name
(Bob, R. Smith, Maria Ivanova for Мария Иванова) is asked about, never written on its own.
Updating writes each changed value with its ## History line (as set does; a value for a list field is
added to the list; TITLE becomes an alias when the card did not bear it).  Equal values: unchanged.
Names fold case and the accents of Latin, Greek and Cyrillic letters; a bare name also matches a title
with a qualifier (Maria Garcia matches Maria Garcia (Hooli)).  TITLE may be a card's vault path or a [[link]]:
that card, as with --into.  A retired match leads to its successor (why[].via: the retired card;
notes say which card was written); an old identity a retired card holds is not written over the new one.
access_count, last_accessed, tier and relevance are refused (exit 2); --source may not be the card.
On ambiguous nothing is written (a card that cannot be read and may hold the identity is ambiguous too):
read matches[] (why, conflicts) and the message, then give the card with --into PATH (its email changed:
card.py set PATH email=... first), or create another with --new and suggested_title as TITLE.

JSON keys (--json): those of every card.py command, plus action (created, updated, unchanged,
ambiguous, refused), matches[{path, title, type, retired, replaced_by, why[{by: identity|title|alias,
field, value, via}], conflicts[{field, ours, theirs}]}], suggested_title (null when a match holds the
identity), missing[].

Exit codes: 0 created, updated or unchanged; 1 ambiguous; 2 refused (missing required fields: missing[];
--into a card whose identity conflicts; --new with a title a card bears) or bad usage (an own field,
--source the card itself); 4 write skipped.

Examples:
  card.py remember person "Dana Reyes" email=dana@acme.com role=COO --source 2026-12-01 --vault ~/vault --json
  card.py remember person "Maria Garcia" email=maria@hooli.com --new --vault ~/vault   # after ambiguous
  card.py remember person Dana role=CEO --into "people/Dana Reyes.md" --vault ~/vault
"""

REDACT_EPILOG = """\
A redact run is journaled like every write, but its copy of the card before is overwritten too:
undo.py cannot put the secret back (it says the journal's copy is damaged and leaves the card).
A run whose copy held the secret can no longer restore that file either.  Copies outside
.graph/ (the .trash/ of a dedup merge, a sync client's conflict copy, git history) are not
touched: remove those by hand.

JSON keys (--json): those of every card.py command (changes show [redacted] for what was taken
out), plus purged{journal[] (run ids whose copies were overwritten), index (true when the index
file was rebuilt without it)}.

Exit codes: 0 taken out; 2 bad usage (no such field and no History line of it, a line outside
the body or empty); 4 the write was skipped (the card changed meanwhile).

Examples:
  card.py redact "Dana Reyes" api_key --vault ~/vault
  card.py redact "Dana Reyes" --line 14 --vault ~/vault --json
"""

SHOW_EPILOG = """\
JSON keys (--json): command ("show"), path, as_of (null without --as-of), existed, fields {name: value}.
autograph's own fields (updated, tier, relevance, access_count, last_accessed) are left out with --as-of.
A limit: a field set where it had no value leaves no ## History line, so --as-of shows it as now.

Exit codes: 0 shown; 1 the card did not exist yet on that day (its created is later); 2 bad usage (a NOTE
that names no card or several).  A read: it writes nothing.

Examples:
  card.py show "Dana Reyes" --vault ~/vault
  card.py show "Dana Reyes" --as-of 2026-11-01 --vault ~/vault --json
"""

BATCH_EPILOG = """\
One JSON object a line (blank lines are skipped):
  {"op": "remember", "type": "person", "title": "Dana Reyes", "fields": {"role": "COO"}, "source": "2026-12-01"}
  {"op": "set", "note": "Dana Reyes", "fields": {"role": "COO"}, "source": "2026-12-01"}
  {"op": "log", "note": "Dana Reyes", "text": "Agreed the Q3 plan", "source": "2026-12-01"}
  {"op": "link", "note": "Dana Reyes", "others": ["Acme Robotics"]}
  {"op": "retire", "note": "D. Reyes", "by": "Dana Reyes"}
  {"op": "touch", "note": "Dana Reyes"}
remember also takes "into" and "new"; remember and set take "force", remember, set and log
"allow_secret" (true or false, as --force and --allow-secret); "source" is optional (not for touch).
Field values are JSON values: a string is text, "2026-12-01" a date, [..] a list.

The input is read whole before the lock is taken.  Every line is planned in order on the vault as the
lines before left it (line 7 may update the card line 2 created, also under --dry-run); all are written
together, one lock, one journaled run: undo.py undo RUN takes the whole batch back.  A card is touched
once per batch, however many lines write it.  Each line is decoded on its own: a malformed line (not
UTF-8, not one JSON object, NaN, Infinity, 1e400, a lone surrogate, "new" not true/false, a field name
with =) or a failing one is reported; the others go on.

JSON keys (--json): results[] (one per line, in order: the single command's JSON plus line and op;
a line that could not run has line, op and error), run, failed[] (line numbers that did not do what
they asked), today.

Exit codes: 0 every line did what it asked; 1 a line was ambiguous (or refused as card.py new/set
would be); 4 writes were skipped (a card changed meanwhile); 2 a line was malformed or bad usage
(2 wins over 4, 4 over 1).

Examples:
  card.py batch --vault ~/vault --json < today.jsonl
  card.py batch today.jsonl --vault ~/vault --dry-run
"""

NOTE_HELP = "the card: a path, or a name that fits one note (resolved like a wikilink)"
ALLOW_SECRET_HELP = (
    "store a value or a line that looks like a secret (a password, an API key, a token, a private key) on "
    "purpose; without it such a write is refused (exit 2), the value never shown"
)
FORCE_SET_HELP = (
    "write an identity value (email, phone, handle) another live card holds; without it refused (exit 2, "
    "reason identity-taken); a forced value leaves a ## Log line, and dedup.py --apply then merges the two "
    "cards only from a reviewed manifest"
)


def _common(p, source: bool = True, secret: bool = False) -> None:
    cli.add_vault(p, positional=False, notes=("note", "others", "by", "into", "source"))
    if secret:
        p.add_argument("--allow-secret", action="store_true", help=ALLOW_SECRET_HELP)
    if source:
        p.add_argument(
            "--source",
            metavar="NOTE",
            help="the note the fact came from (a daily note, a meeting): it must be in the vault; lines name it "
            "as (from [[NOTE]]) and its date is the fact's date (an older fact goes to ## History only)",
        )
    cli.add_common(p, vault=False, dry_run_help="write nothing: show what would change")
    cli.add_writes(p, changes_people_text=False, wait=10.0)
    p.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    p.add_argument("--today", type=cli.today_value, metavar="YYYY-MM-DD", help="the date to write (default: today)")


def cmd_card(args) -> int:
    from autograph.read.vault import GRAPH_DIR, Vault
    from autograph.write import journal, store

    # Looked up and planned before the writer lock, so another writer waits
    # only while this one writes; planned again under the lock when another
    # autograph run wrote meanwhile (the journal says) or a killed one was
    # rolled back.  A person's edit to a note it writes is kept by the store.
    graph = Vault.check_folder(args.vault) / GRAPH_DIR
    seen = journal.generation(graph)
    planned = _plan(args) if cli.writes(args) else None
    with cli.writing(args, f"card.py {args.command}"):
        if planned is None or store.last_recovery or journal.generation(graph) != seen:
            planned = _plan(args)
        report = _card(args, *planned)
    return report()


def _plan(args):
    from autograph.memory import commands, decay

    vault, schema = cli.load(args, stamps=True)
    today = args.today or decay.Settings.of(schema).today()
    return vault, schema, today, commands.plan_command(vault, schema, args.command, vars(args), today)


def _card(args, vault, schema, today, plan):
    from autograph.memory import cards, secrets

    apply = cli.writes(args)
    outcome = cli.carry_out(vault, plan.edits, apply, args.wait, f"card.py {args.command}", schema)
    code = cards.exit_code(plan, cli.outcome_code(outcome))
    data = cards.report(plan, today, outcome)
    if args.command == "redact":
        data["purged"] = secrets.purge_written(vault.root, schema, plan, outcome)
    # a diff would show the secret a change holds (its report shows [redacted])
    diff = args.diff and args.command != "redact" and plan.changes == secrets.shown_changes(plan.changes)

    def show() -> int:
        if args.json:
            cli.print_json(data)
            return code
        cli.print_lines(cards.report_lines(plan))
        if plan.edits:  # a refused plan has none
            cli.print_outcome(outcome, plan.edits, apply, diff)
        if "purged" in data:
            cli.print_lines(secrets.purged_lines(data["purged"]))
        return code

    return show


def cmd_show(args) -> int:
    from autograph.memory import asof, cards, decay, secrets

    vault, schema = cli.load(args)
    path = cards.named_card(vault, schema, args.note)
    note = vault.note(path)
    if note.unwritable is not None:
        raise cards.BadRequest(f"{path}: {note.unwritable}")
    today = decay.Settings.of(schema).today()
    day = (args.as_of or today).isoformat()
    existed, fields = asof.as_of(note, day, decay.Settings.of(schema).zone) if args.as_of else (True, note.properties)
    data = {"command": "show", "path": path, "as_of": args.as_of.isoformat() if args.as_of else None}
    data.update({"existed": existed, "fields": cards.json_value(secrets.shown_fields(fields))})
    if args.json:
        cli.print_json(data)
    elif not existed:
        print(f"{path} did not exist yet on {day}")
    else:
        shown = secrets.shown_fields(fields)
        cli.print_lines([f"{path}" + (f" as of {day}" if args.as_of else "")] + cards.field_lines(shown))
    return cli.EXIT_OK if existed else cli.EXIT_FOUND


def _read_ops(name: str) -> bytes:
    """The bytes of the JSON Lines (each line is decoded on its own: one
    line that is not UTF-8 is a malformed line, not a refused batch)."""
    if name == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise cli.UsageError("card.py batch reads JSON Lines on stdin: card.py batch --vault V < ops.jsonl")
        stream = getattr(sys.stdin, "buffer", None)
        return stream.read() if stream is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
    try:
        with open(name, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise cli.UsageError(f"cannot read {name}: {exc.strerror or exc}") from None


def cmd_batch(args) -> int:
    data = _read_ops(args.ops)  # read before the lock: a slow pipe never holds up other writers
    with cli.writing(args, "card.py batch"):
        report = _batch(args, data)
    return report()


def _batch(args, text: bytes):
    from autograph.memory import batch, cards, decay

    vault, schema = cli.load(args)
    today = args.today or decay.Settings.of(schema).today()
    lines, edits = batch.plan_batch(vault, schema, text, today)
    apply = cli.writes(args)
    outcome = cli.carry_out(vault, edits, apply, args.wait, "card.py batch", schema)
    results, failed, code = batch.results(lines, outcome, today)
    data = {"results": results, "run": outcome["run"], "failed": failed, "today": today.isoformat()}

    def show() -> int:
        if args.json:
            cli.print_json(data)
            return code
        for line, result in zip(lines, results, strict=True):
            refused = (result.get("refused") or {}).get("reason")
            told = result.get("error") or result.get("action") or (refused and f"refused ({refused})")
            told = told or ("done" if result.get("edits") else "nothing")
            cli.print_lines([f"line {line.number} ({line.op or '?'}): {told}"])
            if line.plan is not None:
                cli.print_lines(["  " + text for text in cards.report_lines(line.plan)])
        if edits:
            cli.print_outcome(outcome, edits, apply, args.diff)
        return code

    return show


def build_parser():
    parser = cli.make_parser(
        "card.py",
        "Create and update cards in place: remember, batch, new, set, log, link, retire, redact; show reads one.",
        EPILOG,
    )
    commands = parser.add_subparsers(metavar="COMMAND", dest="command")
    p = cli.subparser(
        commands,
        "new",
        "ADD: create a card of a type (refused when its identity or name exists)",
        "Create a card of TYPE titled TITLE in the type's folder, with its required fields and defaults.",
        "Exit codes: 0 created; 1 refused (a card with the same identity, or a note of that name, exists;\n"
        "named in --json refused.matches); 2 a required field has no value (refused.missing) or bad usage.\n\n"
        "Example:\n  card.py new person 'Alex Example' email=alex@example.com status=active description='CTO at Acme'",
    )
    p.add_argument("type", metavar="TYPE", help="a type of the schema (node_types), or one of its aliases")
    p.add_argument("title", metavar="TITLE", help="the card's title; its file name (forbidden characters replaced)")
    p.add_argument("fields", nargs="*", metavar="field=value", help="fields to set (values as YAML flow values)")
    p.add_argument(
        "--force",
        action="store_true",
        help="create it even when its identity or name exists elsewhere (a live card's identity value it holds "
        "gets a ## Log line: dedup merges the two only from a reviewed manifest)",
    )
    _common(p, secret=True)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "remember",
        "LOOK UP, then ADD or UPDATE: the card of a subject, found by identity or name",
        "Look the subject up (an identity value, its title or an alias) and update the one card it names,\n"
        "create it when none does, or stop (ambiguous, exit 1) when the name belongs to another subject\n"
        "or to several cards.",
        REMEMBER_EPILOG,
    )
    p.add_argument("type", metavar="TYPE", help="a type of the schema (node_types), or one of its aliases")
    p.add_argument("title", metavar="TITLE", help="the subject's name: a new card's title, else a name to look up")
    p.add_argument("fields", nargs="*", metavar="field=value", help="the facts (values as YAML flow values)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--into", metavar="NOTE", help="update this card (refused when an identity value conflicts)")
    how.add_argument("--new", action="store_true", help="create a card though a name matches (a title no card bears)")
    p.add_argument("--force", action="store_true", help=FORCE_SET_HELP)
    _common(p, secret=True)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "set",
        "UPDATE: set fields; the old values go to ## History (equal values: nothing)",
        "Set each field=value on NOTE; an old value different from the new one goes to ## History.",
        "Nothing is written when every field already holds its value (no touch either).\n\n"
        "Example:\n  card.py set 'Alex Example' role=CEO tags='[team, berlin]'",
    )
    p.add_argument("note", metavar="NOTE", help=NOTE_HELP)
    p.add_argument("fields", nargs="+", metavar="field=value", help="fields to set (values as YAML flow values)")
    p.add_argument("--force", action="store_true", help=FORCE_SET_HELP)
    _common(p, secret=True)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "log",
        "add a dated line under ## Log",
        "Add '- DAY: TEXT' under NOTE's ## Log (nothing when the same line is there).",
        "Example:\n  card.py log 'Alex Example' Met at the offsite",
    )
    p.add_argument("note", metavar="NOTE", help=NOTE_HELP)
    p.add_argument("text", nargs="+", metavar="TEXT", help="the line (several words are joined by spaces)")
    _common(p, secret=True)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "link",
        "add [[OTHER]] under ## Related, once",
        "Add '- [[OTHER]]' under NOTE's ## Related for each OTHER no link there resolves to yet.",
        "The link is written in the shortest form that resolves to OTHER.\n\n"
        "Example:\n  card.py link 'Alex Example' Acme 'Project Atlas'",
    )
    p.add_argument("note", metavar="NOTE", help=NOTE_HELP)
    p.add_argument("others", nargs="+", metavar="OTHER", help="notes to link (each must exist)")
    _common(p)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "retire",
        "SUPERSEDE: mark a card superseded by another",
        "Mark NOTE superseded by OTHER: status superseded, superseded_by, links both ways, a History line.",
        "Example:\n  card.py retire 'Alex (old)' --by 'Alex Example'",
    )
    p.add_argument("note", metavar="NOTE", help="the card to retire: a path or a name")
    p.add_argument("--by", required=True, metavar="OTHER", help="the card that supersedes it")
    _common(p)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "redact",
        "take a secret out: a field (and its History), or a line, then out of the journal and the index",
        "Remove FIELD from NOTE with every ## History line of it that holds its value or looks like a\n"
        "secret; or, with --line N, hide the secrets of line N of its body as [redacted] (the whole line\n"
        "when none is seen there; a private key block whole).  Then the same text is overwritten in every\n"
        "journaled run's copies and arguments, and the index file is brought up to date and vacuumed.",
        REDACT_EPILOG,
    )
    p.add_argument("note", metavar="NOTE", help=NOTE_HELP)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("field", nargs="?", metavar="FIELD", help="the property holding the secret")
    what.add_argument("--line", type=int, metavar="N", help="the line of the note (1-based) holding the secret")
    _common(p, source=False)
    p.set_defaults(func=cmd_card)

    p = cli.subparser(
        commands,
        "show",
        "READ a card's fields, now or as they were on a date (rebuilt from ## History)",
        "Print NOTE's fields; with --as-of, as they were on that day: a field changed later shows its\n"
        "earlier value (## History lines dated after the day are undone).",
        SHOW_EPILOG,
    )
    p.add_argument("note", metavar="NOTE", help=NOTE_HELP)
    p.add_argument("--as-of", type=cli.today_value, metavar="YYYY-MM-DD", help="the day to rebuild the card at")
    cli.add_vault(p, positional=False, notes=("note",))
    cli.add_common(p, vault=False)
    p.set_defaults(func=cmd_show)

    p = cli.subparser(
        commands,
        "batch",
        "run many operations (JSON Lines) in one process, one lock, one undoable run",
        "Read one JSON object a line (remember, set, log, link, retire, touch) and carry them out in\n"
        "order; later lines see what earlier ones did, also under --dry-run.",
        BATCH_EPILOG,
    )
    p.add_argument("ops", nargs="?", default="-", metavar="FILE", help="the JSON Lines file (default: stdin)")
    cli.add_vault(p, positional=False, notes=())
    cli.add_common(p, vault=False, dry_run_help="write nothing: show what every line would do")
    cli.add_writes(p, changes_people_text=False, wait=10.0)
    p.add_argument("--diff", action="store_true", help="show each change as a unified diff")
    p.add_argument("--today", type=cli.today_value, metavar="YYYY-MM-DD", help="the date to write (default: today)")
    p.set_defaults(func=cmd_batch)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
