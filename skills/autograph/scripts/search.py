#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""search.py: find notes by what they say, or cards by an identity (email,
handle, phone) before writing a new one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

EPILOG = """\
Search before you write: an agent looks a person, project or fact up here
before it creates a card, and updates the card it finds instead.

Ranking: BM25 (SQLite FTS5) with field weights title 10, aliases 10,
description 5, tags 3, headings 3, other properties 2, body 1, CJK bigrams 2;
then a rerank by in-links, closeness to hubs, relevance (decay) and down for
superseded cards (references/search.md has the formula and an example).
A note named as the whole query comes first: its file name, title or an
alias equals the query, letter case, accents, Unicode form and spacing
aside (bob: the card with alias Bob; jose garcia: José García.md; 陈伟:
陈伟.md), live before retired, each in score order; notes that only mention
the name come after.  A part of a name (Maria for Maria Garcia)
is ranked by score alone, and so is an --fts query.

Any text is a safe query: each word is quoted (POL-358, AND, NEAR(, "x, *,
emoji are plain words); words are OR-joined, so notes with more of them
rank higher.  Words that start with "-" go after "--", which ends the
options: search.py --vault ~/vault -- -v2 --force.  Accents and letter
case do not matter (cafe finds Café); Chinese, Japanese and Korean words
are found by character bigrams.  --fts
passes FTS5 query syntax as is (a bad query is an error, exit 2).

The index is .graph/index.sqlite, the one every command reads, brought up
to date at the start of every query (only changed notes are read again); deleting it loses nothing.  When
.graph/ cannot be written (or with --dry-run), an index file there is copied
into memory and brought up to date there; else one is built in memory.  Needs
SQLite 3.27+ with FTS5 (else exit 3 with a message).

JSON keys (--json): query, count, hits[{path, title, score, bm25, fields[]
(the columns that matched: title, aliases, description, tags, headings,
props, body, cjk), line (1-based line of the snippet in the file), snippet,
inlinks, relevance (null: undated), type, status, exact (its file name,
title or an alias is the query: ranked first)}], index{path (null: in
memory), notes, parsed (notes parsed by this call), reread (the same),
removed, rebuilt (why it was built from nothing, or
null), stale (another process held it: answered from the last good index),
memory, readonly (.graph/ cannot be written: its index was copied into
memory and brought up to date there)}.  With --identity: identity{field, kind (email, handle, phone,
exact), value, normalised, listed (the field is in identity.match_fields)},
count, matches[{path, title, field, value, status, retired (superseded:
update the card that replaced it)}] (live cards first), unreadable[{path,
error}] (cards whose properties are unknown: not UTF-8, too large, or
frontmatter that does not parse; any may hold the identity), index{...}.

Exit codes: 0 done (no hits is an empty list, not an error); 2 bad usage,
vault, schema or --fts query; 3 I/O failure, SQLite without FTS5, or a bug.

Examples:
  search.py alice acme --vault ~/vault
  search.py "POL-358" --vault ~/vault --json --limit 5
  search.py --identity email=Alice@Example.com --vault ~/vault --json
  search.py 'title:acme NOT draft' --fts --vault ~/vault
"""


def cmd_search(args) -> int:
    from autograph.memory import search
    from autograph.schema.model import load_schema

    identity = _identity(args)
    # ranked while the vault is walked, when it is a plain query (its rows used if no note changed)
    plain = identity is None and args.query and not (args.fts or args.type or args.status or args.folder)
    prefetch = search.Prefetch(" ".join(args.query), args.limit) if plain and not args.dry_run else None
    # cli.load, but the notes are stat'ed during the walk: the warm query's freshness check
    try:
        vault, stamps = search.open_vault(args.vault, prefetch.start if prefetch is not None else None)
    finally:
        if prefetch is not None:
            prefetch.join()  # before the index is opened: its update may fork readers
    schema = load_schema(vault.root, getattr(args, "schema", None))
    vault.progress = cli.progress_for(args, len(vault.notes))
    cli.warn(vault.warnings)
    cli.warn(schema.warnings)
    try:
        index = search.open_index(vault, schema, use_disk=not args.dry_run, stamps=stamps)
    except search.SearchUnavailable as exc:
        print(f"search.py: {exc}", file=sys.stderr)
        return cli.EXIT_CRASH
    try:
        return _answer(args, search, index, vault, schema, identity, prefetch)
    finally:
        if prefetch is not None:
            prefetch.close()
        index.close()


def _identity(args) -> tuple[str, str] | None:
    """``(field, value)`` of ``--identity``, checked before the index is
    opened; None without it.  Raises :class:`cli.UsageError`."""
    if not args.identity:
        return None
    if len(args.identity) > 1:
        raise cli.UsageError("give one --identity a run (the cards of each identity are looked up apart)")
    field, equals, value = args.identity[0].partition("=")
    if not field.strip() or not equals or not value.strip():
        raise cli.UsageError(f"--identity {args.identity[0]!r}: give FIELD=VALUE, like email=alice@example.com")
    if args.query:
        raise cli.UsageError("--identity looks up one identity: leave out the query words, or search without it")
    flags = (("--type", args.type), ("--status", args.status), ("--folder", args.folder), ("--fts", args.fts))
    ignored = [flag for flag, given in flags if given]
    if ignored:
        raise cli.UsageError(f"--identity takes no {', '.join(ignored)}: it looks at every card")
    return field, value


def _answer(args, search, index, vault, schema, identity, prefetch=None) -> int:
    if identity is not None:
        cli.warn(index.warnings)
        field, value = identity
        found = search.lookup_identity(index, vault, schema, field, value)
        unread = found["unreadable"]
        if unread:
            listed = "; ".join(f"{cli.printable(u['path'])} ({u['error']})" for u in unread[:5])
            more = f" and {len(unread) - 5} more" if len(unread) > 5 else ""
            cli.warn([f"{cli.plural(len(unread), 'card')} cannot be read and may hold this identity: {listed}{more}"])
        if args.json:
            cli.print_json({**found, "count": len(found["matches"]), "index": index.as_dict()})
        else:
            info = found["identity"]
            print(f"{cli.plural(len(found['matches']), 'card')} with {info['field']} = {info['normalised']!s}")
            for item in found["matches"]:
                print(f"  {cli.printable(item['path'])}  ({cli.printable(item['value'])})")
        return cli.EXIT_OK
    text = " ".join(args.query)
    hits = search.search(
        index, vault, schema, text, args.limit, args.type, args.status, args.folder, raw=args.fts, prefetch=prefetch
    )
    cli.warn(index.warnings)  # the index's, and the search's (a --folder no note is in)
    if args.json:
        cli.print_json(
            {"query": text, "count": len(hits), "hits": [h.as_dict() for h in hits], "index": index.as_dict()}
        )
        return cli.EXIT_OK
    if not hits:
        print("no results")
    for hit in hits:
        print(f"{hit.score:8.4g}  {cli.printable(hit.path)}  [{', '.join(hit.fields)}]")
        if hit.snippet:
            print(f"          {hit.line}: {cli.printable(hit.snippet)}")
    return cli.EXIT_OK


MAX_LIMIT = 100_000  # hits; SQLite takes no integer past 2**63, and no vault needs more


def positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to {MAX_LIMIT:,}")
    return value


def build_parser():
    parser = cli.make_parser("search.py", "Find notes by their words, or cards by an identity.", EPILOG)
    parser.add_argument("query", nargs="*", metavar="QUERY", type=cli.word, help="words to look for (any text is safe)")
    cli.add_vault(parser, positional=False)
    cli.add_common(parser, vault=False, dry_run_help="write nothing: search with an index in memory")
    parser.add_argument("--limit", type=positive, default=10, metavar="N", help="at most N hits (default 10)")
    parser.add_argument("--type", metavar="T", help="only cards of type T")
    parser.add_argument("--status", metavar="S", help="only cards with status S")
    parser.add_argument("--folder", metavar="F", help="only notes in folder F (and below)")
    parser.add_argument("--fts", action="store_true", help="the query is raw FTS5 syntax")
    parser.add_argument(
        "--identity",
        action="append",
        metavar="FIELD=VALUE",
        help="the cards that carry this identity (email, handle, phone, ...)",
    )
    parser.set_defaults(func=cmd_search)
    parser.allow_abbrev = False  # a query word like --dry is not taken for --dry-run
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    return cli.run(parser, argv)


if __name__ == "__main__":
    cli.exit_now(main())
