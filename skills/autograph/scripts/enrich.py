#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""enrich.py: tags and ## Related links proposed by a language model, checked, then written surgically."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograph import cli  # noqa: E402  (the rest when the command runs: --help imports nothing more)

MAX_REQUESTS = 20
MAX_TOKENS = 100_000

COMMON_EPILOG = """\
The model: any OpenAI-compatible chat endpoint (POST BASE/chat/completions).
  --base-url, else AUTOGRAPH_LLM_BASE_URL (e.g. https://openrouter.ai/api/v1,
  https://api.openai.com/v1, http://localhost:11434/v1); https only, plain
  http only for this machine.  --model, else AUTOGRAPH_LLM_MODEL.  The key
  only from the environment: AUTOGRAPH_LLM_API_KEY, else OPENROUTER_API_KEY,
  else OPENAI_API_KEY.  The key is never printed, logged, cached or
  journaled.

Without --apply nothing is sent and nothing is written: the dry run shows
each request it would send (--json: every request's full body) and the
edits that answers cached by an earlier --apply would make.

--apply sends the requests the cache cannot answer, in batches of 8 notes,
until --max-requests or --max-tokens would be passed (then it stops
cleanly, keeps what it got, and says so).  429 and 5xx answers, time-outs
and dropped connections are retried (4 attempts, backoff with jitter,
Retry-After honoured up to 60 s); 401/403 and a request that still fails
stop the run.  Every answer is cached by the hash of what the model saw of
each note (.graph/enrich/<mode>/), so a second run sends nothing.

Every proposal is checked before anything is written: an answer counts
only for the notes of its own request, a tag must be one valid Obsidian tag
(no spaces; lower case, '#' dropped, ignore_tags dropped, at most 5 new per
note), a link must name a card the vault's resolver finds (no '..', no
absolute path, no URL; not the note itself, not already linked; at most 5).
Tags are added to the note's tags list (only that property's lines
change); links as '- [[Name]]' lines at the end of its '## Related' section,
created at the end of the note when missing (every other byte stays).
Writes are journaled (undo.py undo RUN).

JSON keys (--json): vault, mode, model, base_url, key_from (the variable
name, never the key), applied, budget{max_requests, max_tokens},
candidates, cached, requests[{number, notes[], estimate, status
(planned|answered|malformed|failed|not sent), error, body (dry run: what
would be sent)}], usage{requests, attempts, prompt_tokens,
completion_tokens, total_tokens}, stopped (null, max-requests, max-tokens,
error), errors[{request, kind, error}], results[{path, proposed[],
accepted[], rejected[{value, reason}]}], skipped[{path, reason}],
edits[{path, reason}], written[], conflicts[{path, error, copy}],
failed[{path, error}], run.

Exit codes: 0 done (also when a budget stopped it); 2 bad usage, vault or
schema, or --apply without a model, base URL or key; 3 a request failed or
its answer was malformed (what was answered is still written), an I/O
failure or a bug;
4 some planned writes were skipped (conflicts, failures)."""

TAGS_EPILOG = f"""\
Which notes: cards without a tag (ignore_tags do not count).

{COMMON_EPILOG}

Examples:
  enrich.py tags --vault ~/vault                                   # show what would be sent
  AUTOGRAPH_LLM_API_KEY=... enrich.py tags --vault ~/vault --apply --model openai/gpt-4o-mini \\
      --base-url https://openrouter.ai/api/v1 --max-requests 5
"""

LINKS_EPILOG = f"""\
Which notes: cards with fewer than 2 links to other notes.  The model picks
from a catalog of up to 200 note names (names sharing words with the notes,
then notes of the same folders).

{COMMON_EPILOG}

Examples:
  enrich.py links --vault ~/vault --json                           # every request body, nothing sent
  enrich.py links --vault ~/vault --apply --max-tokens 20000
"""


def cmd_enrich(args) -> int:
    from autograph.agents import enrich, llm

    apply = cli.writes(args)
    config = llm.settings(args.base_url, args.model)
    client = llm.client_for(config, args.timeout) if apply else None
    model = config["model"] or enrich.NO_MODEL
    vault, schema = cli.load(args)
    # ask first, without the writer lock: answers can take minutes, and other runs may write meanwhile
    first = enrich.prepare(vault, schema, args.mode, model, vault.root, args.refresh)
    sent = None
    if apply and first.requests:
        sent = enrich.send(first, client, args.max_requests, args.max_tokens, vault.root)
    with cli.writing(args, f"enrich.py {args.mode}"):
        if apply:
            from autograph.read.vault import Vault

            vault = Vault.open(args.vault)  # read again: the notes as they are now, under the lock
        edits, results, skipped = enrich.plan_answers(vault, schema, first, sent, model, again=apply)
        outcome = cli.carry_out(vault, edits, apply, args.wait, f"enrich.py {args.mode}", schema)
        code = cli.outcome_code(outcome)
    if sent is not None and sent.errors and code == cli.EXIT_OK:
        code = cli.EXIT_CRASH  # a request failed or was malformed: what was answered is still written
    budget = {"max_requests": args.max_requests, "max_tokens": args.max_tokens}
    data = enrich.report(vault.root, first, sent, results, skipped, outcome, config, apply, budget)
    if args.json:
        cli.print_json(data)
    else:
        print(enrich.human_text(data, first))
        cli.print_outcome(outcome, edits, apply, args.diff)
    return code


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (0 or more)")
    return value


def build_parser():
    parser = cli.make_parser(
        "enrich.py",
        "Tags and ## Related links proposed by a language model over an OpenAI-compatible endpoint; "
        "checked, cached, written only with --apply.",
        "Run 'enrich.py COMMAND --help' for each command's options, JSON keys and examples.",
    )
    commands = parser.add_subparsers(metavar="COMMAND")
    for mode, short, long, epilog in (
        ("tags", "propose tags for notes without tags", "Propose tags for cards without a tag.", TAGS_EPILOG),
        (
            "links",
            "propose ## Related links for notes with few links",
            "Propose links under '## Related' for cards with fewer than 2 links to other notes.",
            LINKS_EPILOG,
        ),
    ):
        p = cli.subparser(commands, mode, short, long, epilog)
        cli.add_common(p, dry_run_help="send nothing and write nothing, even with --apply")
        cli.add_writes(p, changes_people_text=True)
        p.add_argument("--model", metavar="M", help="the model name (default: AUTOGRAPH_LLM_MODEL)")
        p.add_argument("--base-url", metavar="URL", help="the endpoint's base URL (default: AUTOGRAPH_LLM_BASE_URL)")
        p.add_argument(
            "--max-requests",
            type=_positive,
            default=MAX_REQUESTS,
            metavar="N",
            help=f"send at most N requests (default {MAX_REQUESTS})",
        )
        p.add_argument(
            "--max-tokens",
            type=_positive,
            default=MAX_TOKENS,
            metavar="N",
            help=f"spend at most N tokens, prompts and answers (default {MAX_TOKENS:,})",
        )
        p.add_argument(
            "--timeout",
            type=cli.seconds,
            default=60.0,
            metavar="SECONDS",
            help="time-out of each socket operation and of a whole answer (default 60)",
        )
        p.add_argument("--refresh", action="store_true", help="ask again even when the cache holds an answer")
        p.add_argument("--diff", action="store_true", help="show each edit as a unified diff")
        p.set_defaults(func=cmd_enrich, mode=mode)
    return parser


def main(argv: list[str] | None = None) -> int:
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
