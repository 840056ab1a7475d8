#!/usr/bin/env python3
"""Time ``search.py`` on a vault against the floor of reading it (issue 11).

The floor is a fresh Python process that walks the vault (dot folders
skipped) and reads and UTF-8-decodes every note (FLOOR in bench/common.py).
On a temporary copy of the vault, each round, whole processes:

* cold: ``search.py QUERY`` with no ``.graph/`` (the index built from
  nothing; target <= 4x the floor);
* 1% changed: a line appended to 1% of the notes, then one query (only
  those are read again, counted from the JSON ``index.reread``; target
  <= 1.5x);
* warm: the same query again (the freshness check of every note included;
  target <= 1x);

and, in this process after start-up, the query itself on an up-to-date
index (``autograph.memory.search.search``, the median of the queries; target
< 20 ms).  All runs alternate within one session; each run is divided by
the floor of its own round, and the median of those ratios is reported with
their range (the noise of a shared machine), beside the median wall and CPU
(user + system, every process of a build: its readers too) times and the best run over the
best floor (the figure earlier versions of this script gave).  Never run in CI.

Usage: python3 bench/search_ratio.py [VAULT] [--rounds N] [--query Q]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FLOOR, REPO, bench_env, change_notes, commit, notes_of, run  # noqa: E402

SEARCH = REPO / "skills" / "autograph" / "scripts" / "search.py"
DEFAULT_VAULT = REPO.parent / "shared" / "corpora" / "obsidian-hub"
QUERIES = ["plugin", "daily notes template", "dataview query", "graph view", "canvas", "POL-358", "kanban board"]


def in_process(vault: Path) -> list[float]:
    sys.path.insert(0, str(REPO / "skills" / "autograph" / "scripts"))
    from autograph.memory import search
    from autograph.read.vault import Vault
    from autograph.schema.model import load_schema

    opened = Vault.open(vault)
    schema = load_schema(vault)
    index = search.open_index(opened, schema)
    times = []
    try:
        for _ in range(3):
            for query in QUERIES:
                start = time.perf_counter()
                search.search(index, opened, schema, query, 10)
                times.append(time.perf_counter() - start)
    finally:
        index.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", nargs="?", default=str(DEFAULT_VAULT))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--query", default="daily notes template")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env(tmp)
        base = Path(tmp) / "vault"
        shutil.copytree(args.vault, base, ignore=shutil.ignore_patterns(".graph"))
        for path in base.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
        notes = notes_of(base)
        floor_cmd = [sys.executable, "-c", FLOOR, str(base)]
        query = [sys.executable, str(SEARCH), args.query, "--vault", str(base), "--quiet"]
        subprocess.run(query, env=env, check=True, stdout=subprocess.DEVNULL)  # bytecode cached
        runs: dict[str, list] = {"floor": [], "cold": [], "changed": [], "warm": []}
        reread = []
        for round_no in range(args.rounds):
            runs["floor"].append(run(floor_cmd, env))
            shutil.rmtree(base / ".graph", ignore_errors=True)
            runs["cold"].append(run(query, env))
            count = change_notes(notes, round_no)
            runs["changed"].append(run(query, env))
            runs["warm"].append(run(query, env))
            change_notes(notes, round_no + 100)
            proc = subprocess.run([*query, "--json"], env=env, check=True, capture_output=True, text=True)
            reread.append((json.loads(proc.stdout)["index"]["reread"], count))
        times = in_process(base)
        print(f"vault: {args.vault} ({commit()}); {len(notes)} notes; query {args.query!r}; {args.rounds} rounds")
        f = runs["floor"]
        print(
            f"floor (walk + read + decode): median {statistics.median(r.seconds for r in f) * 1000:.0f} ms wall, "
            f"{statistics.median(r.cpu for r in f) * 1000:.0f} ms CPU"
        )
        targets = {"cold": ("cold (index from nothing)", 4), "changed": ("1% changed", 1.5), "warm": ("warm", 1)}
        for key, (label, target) in targets.items():
            ratios = [r.seconds / fl.seconds for r, fl in zip(runs[key], f, strict=True)]
            cpu = [r.cpu / fl.cpu for r, fl in zip(runs[key], f, strict=True)]
            best = min(r.seconds for r in runs[key]) / min(fl.seconds for fl in f)
            print(
                f"{label}: median {statistics.median(r.seconds for r in runs[key]) * 1000:.0f} ms = "
                f"{statistics.median(ratios):.2f}x floor (rounds {min(ratios):.2f}-{max(ratios):.2f}; "
                f"best/best {best:.2f}x; CPU {statistics.median(cpu):.2f}x) (target <= {target}x)"
            )
        print(f"1% changed re-read {reread[-1][0]} notes of {reread[-1][1]} changed")
        print(
            f"query in-process: median {statistics.median(times) * 1000:.1f} ms, "
            f"max {max(times) * 1000:.1f} ms over {len(times)} (target < 20 ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
