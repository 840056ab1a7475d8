#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""doctor.py: validate a memory store: note format, index pointers, caps, secrets, names that differ only in case."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

# memory.ISSUES and memory.MAX_LISTED, spelled out so that --help needs no
# import of memory (which reads stores); tests/test_startup.py checks that
# they agree.
KINDS = """\
  index-missing     create the index (init.py, or copy assets/MEMORY.md into the store)
  index-unreadable  make the index a readable UTF-8 file
  index-outside     make the index a file inside the store, not a symlink to a file outside it
  index-over-cap    compact to under its target: one short pointer per note, detail in notes, retired entries archived
  index-content     move text out of the index into a note, and point to that note in one short line
  broken-pointer    fix the pointer's file name (letter case counts), or remove the line
  pointer-outside   point only at notes inside the store
  unreachable       add a pointer line for the note to the index, link it from a note that has one, or archive it
  unreadable        save the note as UTF-8 text
  frontmatter       start the note with frontmatter: name, description, metadata.type (or type, created, updated)
  missing-field     fill in the field
  bad-type          use one of the store's types
  name-mismatch     make name the file's name without .md (or rename the file); a name with spaces is a title
  bad-date          write dates as YYYY-MM-DD, with updated not before created
  missing-label     add the labelled line (e.g. 'Why: ...') to the note's body
  secret            delete the value; note only where it is kept (e.g. 'in the team password manager')"""

MAX_LISTED = 100
EPILOG = f"""\
A memory store is a folder: an index (MEMORY.md) that the agent host loads
into every session, holding one pointer line per note
("- [Title](note.md) — hook"), and one note per fact, in either format:

  Claude Code's current one      the older one (autograph, earlier Claude Code)
  ---                            ---
  name: short-kebab-case-slug    name: note-file-name
  description: one-line summary  description: one-line summary
  metadata:                      type: feedback
    type: feedback               created: 2026-01-05
  ---                            updated: 2026-02-01
                                 ---

Types: user, feedback, project, reference (the schema's "memory.types").
A note is in Claude Code's format when its frontmatter has a "metadata"
mapping and no top-level type.  Then name and description are required
(missing-field says what to add), metadata.type must be one of the types
(bad-type lists them), no date is required (created and updated, when
present, must still be real dates, updated not before created), and name is
the slug other notes link to, not the file's name (no name-mismatch).  In
the older format, every field the type requires must be there (by default
name, description, type, created, updated); a name with spaces is a title
(as earlier Claude Code versions wrote them); a name without spaces must be
the file's name (letter case, "-", "_" and a type prefix such as
"feedback_" aside).  Retired notes go to archive/ and need no pointer.

What counts as a store: a folder that holds the index ("memory.index",
default MEMORY.md, in any letter case, or a symlink by that name), or,
without one, whose live notes (*.md and *.MD outside archive/) are at least
half, and at least one, memory notes: frontmatter with a name, a description
and a type (or metadata.type) of the store's.  Any other folder (a
documentation vault, an empty folder) is refused in one line with exit
code 2.

STORE is the store, or a vault or project holding one: with a schema.json
there (or --schema), "memory.folder" names the store's folder (default
"memory"; used when it exists), "memory.types" its types and their required
fields and labelled lines (feedback and project notes need "Why:" and
"How to apply:" lines), "index" the caps (hard 200 lines / 25,000 bytes,
soft 160 / 20,000) and the target an index at a cap is to be compacted to
(index.target_lines, index.target_bytes: 140 / 17,500; the index-over-cap
and index-soft-cap messages name it).  The caps and the target can be
overridden with AUTOGRAPH_INDEX_HARD_LINES / _HARD_BYTES / _SOFT_LINES /
_SOFT_BYTES / _TARGET_LINES / _TARGET_BYTES.

Pointers and links resolve as the host's file system opens them: exact
letter case on a case-sensitive file system ([x](feedback_git.md) does not
open feedback_Git.md on Linux, and foo.md and FOO.md are two notes), ".md"
optional; a symlink inside the store is followed to its note, one out of
the store is refused (pointer-outside; an index that is such a symlink is
index-outside and is not read).  A [[name]] opens name.md next to the
index, or the note of that name elsewhere in the store when spelled exactly.
In a note, a [[name]] that opens no file leads to the note whose name: is
that slug (letter case, spaces, "_" and "-" alike), when the linking note or
that note is in Claude Code's format (two notes of the older format connect
by file name only, as before).

Issues (each reported once, with file and line; exit code 1):
{KINDS}
Warnings (reported, exit code unaffected): index-soft-cap, duplicate-pointer,
skipped (a file the walk left out, such as a symlink out of the store),
case-collision (paths that differ only in letter case, foo.md beside FOO.md:
a macOS or Windows checkout of the store keeps one of them).
Info (no problem, exit code unaffected): unwritten-link, a [[name]] in a note
of Claude Code's format that names no memory yet (Claude Code writes these
on purpose: a memory worth writing later); once per note and name.

Secrets: every text file of the store is scanned, not only notes (.env,
.txt, .yaml; a file with a NUL byte near its start is binary and skipped),
notes that are not UTF-8 too.  A secret is reported by file, line and kind
only, and every message is redacted: no finding of any kind quotes a secret
value (it shows "[redacted]").  Files are read as streams: a runaway index
costs time in proportion to its size and constant memory, and at most
{MAX_LISTED} findings of one kind are listed per file (the rest are counted).
doctor.py writes nothing (--dry-run changes nothing).

JSON keys (--json): store, index (null without one), notes (live notes),
archived, index_size{{lines, bytes, loaded_lines, status, over[], near[]}} or
null, caps{{soft{{lines, bytes}}, hard{{lines, bytes}}, target{{lines, bytes}},
sources{{}}}},
issues[{{kind, path, line, message}}], warnings[{{kind, path, line, message}}],
info[{{kind, path, line, message}}] (unwritten-link findings, no problem),
counts{{kind: number}} (issues found, listed or not), omitted{{kind: number}}
(findings beyond the first {MAX_LISTED} of one kind in one file, counted but
not listed).  Paths are store-relative with "/"; line is 1-based, or null
when the whole file is meant.

Exit codes: 0 no issues (warnings allowed); 1 issues found; 2 bad usage, no
such folder, not a memory store, a bad schema or a bad AUTOGRAPH_INDEX_*
value; 3 I/O failure or bug.

Examples:
  doctor.py ~/.claude/projects/my-project/memory
  doctor.py --vault ~/vault                      # the store named by ~/vault/schema.json
  doctor.py --vault ~/vault --json | jq -r '.issues[] | "\\(.path):\\(.line) \\(.kind)"'
"""


SHOWN = 50


def _where(finding: dict) -> str:
    line = f":{finding['line']}" if finding["line"] else ""
    return cli.printable(f"{finding['path']}{line}")


def _human(report: dict) -> str:
    from autograph.hosts import store_doctor

    size = report["index_size"]
    index = (
        f"index {cli.printable(report['index'])} {cli.plural(size['lines'], 'line')} / {size['bytes']:,} bytes"
        if size
        else "no index"
    )
    out = [
        f"store: {cli.printable(report['store'])} · {cli.plural(report['notes'], 'note')}, "
        f"{report['archived']} archived · {index}"
    ]
    sections = (("issues", report["issues"]), ("warnings", report["warnings"]), ("info", report["info"]))
    for title, rows in sections:
        if rows:
            out += ["", f"{title} ({len(rows)}):"]
            out += [f"  {_where(r)}  {r['kind']}  {cli.printable(r['message'])}" for r in rows[:SHOWN]]
            if len(rows) > SHOWN:
                out.append(f"  ... {len(rows) - SHOWN} more (--json lists them)")
    omitted = sum(report["omitted"].values())
    if omitted:
        out.append(
            f"  ... and {omitted:,} more not listed: at most {store_doctor.MAX_LISTED} of one kind per file are "
            "(--json: omitted, by kind)"
        )
    if report["issues"]:
        out += ["", "what to do:"]
        out += [f"  {kind}: {store_doctor.ISSUES[kind]}" for kind in report["counts"]]
        summary = ", ".join(f"{n:,} {kind}" for kind, n in report["counts"].items())
        out += ["", f"{cli.plural(sum(report['counts'].values()), 'issue')}: {summary}"]
    else:
        out += ["", "no issues"]
    return "\n".join(out)


def cmd_doctor(args) -> int:
    from autograph.hosts import caps, store_cases, store_doctor
    from autograph.schema.model import DEFAULTS, load_schema

    named = args.store if args.store is not None else args.vault
    folder = Path(named)
    if not folder.is_dir():
        raise cli.UsageError(f"{named}: not a folder; give the memory store's folder (or a vault holding one)")
    schema = load_schema(folder, args.schema)
    cli.warn(schema.warnings)
    settings = schema.memory
    try:
        limits, _ = caps.caps_from(schema.section("index"))
    except caps.CapsError as exc:
        raise cli.UsageError(str(exc)) from None
    sub = settings["folder"]
    if sub and sub != DEFAULTS["memory"]["folder"] and not (folder / sub).is_dir():
        raise cli.UsageError(
            f'the memory store {folder / sub} ("memory.folder" in {schema.source}) does not exist; '
            f'create it (init.py) or fix "memory.folder"'
        )
    store = store_doctor.locate_store(folder, settings)
    report = store_cases.with_case_warnings(store_doctor.doctor(store, settings, limits), store)
    report["caps"] = limits.as_dict()
    if args.json:
        cli.print_json(report)
    else:
        print(_human(report))
    return cli.EXIT_FOUND if report["issues"] else cli.EXIT_OK


def build_parser():
    parser = cli.make_parser(
        "doctor.py",
        "Validate a memory store: each note's frontmatter and labelled lines, every index line a pointer "
        "that resolves, every note reachable, the index caps, and no secret values.",
        EPILOG,
    )
    parser.add_argument(
        "store",
        nargs="?",
        metavar="STORE",
        type=cli.vault_folder,
        help="the store's folder, or a vault holding one (default: the vault, as --vault)",
    )
    cli.add_vault_or_path(parser, "store")
    cli.add_common(parser, vault=False, dry_run_help="accepted for symmetry; doctor.py never writes")
    parser.set_defaults(func=cmd_doctor)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
