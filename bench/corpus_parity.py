#!/usr/bin/env python3
"""Save, then compare, what the scripts answer on every real corpus.

A refactoring (a module moved, a store split) must not change one byte of
what a user sees.  This script runs, on a temporary copy of each corpus in
``../shared/corpora/``:

* ``graph.py health --json``;
* ``search.py --json`` for 20 fixed queries (the index built by the first,
  brought up to date by the others, as an agent's day does);
* ``dedup.py --json`` and ``supersede.py --json`` (dry runs: the default
  writes nothing);

and the same on the example vault shipped in ``examples/vault`` and on a
generated vault of people cards with known duplicates
(``tests/helpers/people_vault``, 320 people, seed 7: dedup has groups to
merge there).  Every answer, with the temporary folder's path replaced by
``<VAULT>`` and today's date with ``<TODAY>``, goes to one JSON file.  ``--compare OLD.json`` then diffs a new run
against a file saved before the change and exits 1 on any difference.

Usage:
  python3 bench/corpus_parity.py --save before.json      # at the old commit
  python3 bench/corpus_parity.py --compare before.json   # after the change

Every process is ``sys.executable``.  Not run in CI (it takes minutes); the
closing note of a refactoring quotes its result.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "skills" / "autograph" / "scripts"
CORPORA = Path(os.environ.get("AUTOGRAPH_SHARED", REPO.parent / "shared")) / "corpora"

TODAY = time.strftime("%Y-%m-%d")  # the machine's date, as the scripts take it without a schema timezone
QUERIES = [
    "obsidian plugin",
    "tasks due date",
    "dendron hierarchy",
    "daily note template",
    "Café",
    "Москва",
    "日本語",
    "link alias heading",
    "query filter",
    "kanban board",
    "graph view",
    "frontmatter yaml property",
    "recurring task",
    "vault sync",
    "markdown table",
    "hotkey command palette",
    "theme css snippet",
    "calendar week",
    "POL-358 AND NEAR(",
    "readme",
]


def answer(script: str, args: list[str], vault: Path, cwd: Path) -> dict:
    """One script's exit code and parsed --json output, the vault path hidden."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    # the vault's path and today's date (reports and History lines carry it) differ between runs
    out = proc.stdout.replace(str(vault), "<VAULT>").replace(TODAY, "<TODAY>")
    try:
        parsed = json.loads(out)
    except json.JSONDecodeError:
        parsed = {"stdout": out}
    return {"exit": proc.returncode, "json": parsed}


def corpus_answers(corpus: Path | None) -> dict:
    """Every answer for one corpus (None: the generated people vault), run on
    a temporary copy of it."""
    with tempfile.TemporaryDirectory() as tmp:
        if corpus is None:
            sys.path.insert(0, str(REPO))
            from tests.helpers import people_vault

            vault = Path(tmp) / "people"
            people_vault.build(vault, people=320, seed=7)
        else:
            vault = Path(tmp) / corpus.name
            # a .graph/ left by an earlier run would make the first answers warm
            shutil.copytree(corpus, vault, symlinks=True, ignore=shutil.ignore_patterns(".graph"))
        result = {"health": answer("graph.py", ["health", str(vault), "--json"], vault, Path(tmp))}
        result["search"] = [
            answer("search.py", ["--vault", str(vault), "--json", "--", query], vault, Path(tmp)) for query in QUERIES
        ]
        result["dedup"] = answer("dedup.py", [str(vault), "--json"], vault, Path(tmp))
        result["supersede"] = answer("supersede.py", [str(vault), "--json"], vault, Path(tmp))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", metavar="OUT", help="write the answers to OUT")
    mode.add_argument("--compare", metavar="OLD", help="diff the answers against OLD; exit 1 on a difference")
    args = parser.parse_args()
    if not CORPORA.is_dir():
        print(f"no corpora at {CORPORA}", file=sys.stderr)
        return 2
    answers = {}
    for corpus in [*sorted(p for p in CORPORA.iterdir() if p.is_dir()), REPO / "examples" / "vault", None]:
        name = corpus.name if corpus else "generated-people"
        print(f"{name} ...", file=sys.stderr)
        answers[name] = corpus_answers(corpus)
    text = json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.save:
        Path(args.save).write_text(text, encoding="utf-8")
        return 0
    old = Path(args.compare).read_text(encoding="utf-8")
    if old == text:
        print(f"same answers on {len(answers)} vaults ({len(QUERIES)} queries each)")
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), "before", "after", n=2))
    return 1


if __name__ == "__main__":
    sys.exit(main())
