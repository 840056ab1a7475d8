#!/usr/bin/env python3
"""Time a day of 10 facts through ``card.py batch`` against one ``card.py new``.

An agent's day used to cost a process per fact (search, then ``new`` or
``set``, then ``log``, ``link``, ``touch``).  ``card.py batch`` carries the
day in one process, one lock and one journal run.  This benchmark times, on
fresh copies of the example vault (or VAULT) in one session, alternating:

* ``card.py new person ...``: one card, the cost of a single fact;
* ``card.py batch DAY.jsonl``: 10 facts of a day (new people and updates by
  ``remember`` with ``--source`` the day's note, a ``set``, ``log`` and
  ``link`` lines, a ``touch``).

The minimum of several rounds is kept; the result is the ratio batch / new
(issue 25: at most 3).  Whole processes, ``sys.executable``.  Never run in
CI.

Usage: python3 bench/batch_ratio.py [VAULT] [--rounds N] [--max R]
Exit 1 when --max is given and the ratio exceeds it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, bench_env, commit, run  # noqa: E402

CARD = REPO / "skills" / "autograph" / "scripts" / "card.py"
DEFAULT_VAULT = REPO / "examples" / "vault"
TODAY = "2026-12-06"


def day_of_facts(source: str) -> list[dict]:
    """Ten facts an agent takes from one daily note ``source``."""
    fields = {"description": "Met at the offsite", "status": "active"}
    return [
        {
            "op": "remember",
            "type": "person",
            "title": "Nadia Kim",
            "fields": {"email": "nadia@k.io", **fields},
            "source": source,
        },  # fmt: skip
        {
            "op": "remember",
            "type": "person",
            "title": "Nadia",
            "fields": {"email": "NADIA@k.io", "role": "CTO"},
            "source": source,
        },  # fmt: skip
        {"op": "remember", "type": "person", "title": "Dana Reyes", "fields": {"role": "COO"}, "source": source},
        {
            "op": "remember",
            "type": "company",
            "title": "Kim Labs",
            "fields": {"description": "Nadia's company"},
            "source": source,
        },  # fmt: skip
        {"op": "set", "note": "Nadia Kim", "fields": {"company": "[[Kim Labs]]"}, "source": source},
        {"op": "log", "note": "Dana Reyes", "text": "Agreed the Q3 plan", "source": source},
        {"op": "log", "note": "Nadia Kim", "text": "Intro call with Dana", "source": source},
        {"op": "link", "note": "Nadia Kim", "others": ["Dana Reyes", "Kim Labs"]},
        {
            "op": "remember",
            "type": "idea",
            "title": "Shared routing data",
            "fields": {"description": "Pool data"},
            "source": source,
        },  # fmt: skip
        {"op": "touch", "note": "Project Atlas"},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", nargs="?", default=str(DEFAULT_VAULT))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max", type=float, default=None, help="fail when batch / new exceeds this ratio")
    args = parser.parse_args(argv)
    source_vault = Path(args.vault)
    daily = sorted(p.stem for p in (source_vault / "daily").glob("*.md")) if (source_vault / "daily").is_dir() else []
    source = daily[-1] if daily else None
    with tempfile.TemporaryDirectory(prefix="autograph-bench-") as tmp:
        env = bench_env(tmp)
        ops = Path(tmp, "day.jsonl")
        facts = (
            day_of_facts(source)
            if source
            else [{k: v for k, v in f.items() if k != "source"} for f in day_of_facts("")]
        )
        ops.write_text("\n".join(json.dumps(f) for f in facts) + "\n", encoding="utf-8")
        new_times, batch_times = [], []
        for round_no in range(args.rounds):
            for kind in ("new", "batch"):
                copy = Path(tmp, f"{kind}-{round_no}")
                shutil.copytree(source_vault, copy, ignore=shutil.ignore_patterns(".graph"))
                base = [sys.executable, str(CARD)]
                tail = ["--vault", str(copy), "--today", TODAY, "--json"]
                if kind == "new":
                    fact = ["new", "person", "Nadia Kim", "email=nadia@k.io", "description=Met", "status=active"]
                    new_times.append(run([*base, *fact, *tail], env).seconds)
                else:
                    batch_times.append(run([*base, "batch", str(ops), *tail], env).seconds)
    one, day = min(new_times), min(batch_times)
    ratio = day / one
    print(f"commit {commit()}  vault {source_vault}  rounds {args.rounds}")
    print(f"card.py new (1 fact):      {one * 1000:8.1f} ms")
    print(f"card.py batch (10 facts):  {day * 1000:8.1f} ms")
    print(f"ratio batch / new:         {ratio:8.2f}  (issue 25: <= 3)")
    return 1 if args.max is not None and ratio > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
