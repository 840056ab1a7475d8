#!/usr/bin/env python3
"""Time ``graph.py health`` on a vault against the floor of reading it.

The floor is a fresh Python process that walks the vault (dot folders
skipped) and reads and UTF-8-decodes every note (FLOOR in bench/common.py).
``health`` runs in a fresh process on a temporary copy of the vault, three
times per round:

* cold: no ``.graph/`` cache (the first run on a vault): every note parsed;
* warm: the parsed-note cache from the previous run is valid (the nightly
  case): only changed notes are parsed;
* 1% changed: a line appended to 1% of the notes, then run again.

The peak memory (RSS) of each kind of run is reported too (``os.wait4`` of
the process; the largest over the rounds).

Start-up: ``graph.py --help`` and ``graph.py health --help`` against a bare
``python -c pass``, many repetitions, the minimum of each (target: <= 1.5x).

Python's bytecode cache is on for all processes, as in a normal install
(kept in the temporary folder), and every process is ``sys.executable``.

All runs alternate within one session and the minimum of several rounds is
kept, so a noisy shared machine affects them alike.  The results are ratios
to the floor, never absolute times.  Never run in CI.

Usage: python3 bench/health_ratio.py [VAULT] [--rounds N] [--startup-reps N]
           [--max-ratio R]
Exit 1 when --max-ratio is given and the warm ratio is above it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FLOOR, GRAPH, REPO, bench_env, change_notes, commit, notes_of, run  # noqa: E402

DEFAULT_VAULT = REPO.parent / "shared" / "corpora" / "obsidian-hub"


def startup(env: dict[str, str], reps: int, graph: str) -> dict[str, float]:
    commands = {
        "bare": [sys.executable, "-c", "pass"],
        "graph.py --help": [sys.executable, graph, "--help"],
        "graph.py health --help": [sys.executable, graph, "health", "--help"],
    }
    for command in commands.values():
        run(command, env)  # bytecode cache
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(reps):
        for name, command in commands.items():
            times[name].append(run(command, env).seconds)
    return {name: min(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", nargs="?", default=str(DEFAULT_VAULT))
    parser.add_argument(
        "--graph",
        default=str(GRAPH),
        help="the graph.py to time (default: this checkout's; e.g. one from `git archive` of a fixed commit)",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--startup-reps", type=int, default=20)
    parser.add_argument("--max-ratio", type=float)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env(tmp)
        vault = Path(tmp) / "vault"
        shutil.copytree(args.vault, vault)
        notes = notes_of(vault)
        floor_cmd = [sys.executable, "-c", FLOOR, str(vault)]
        health_cmd = [sys.executable, args.graph, "health", str(vault), "--json"]
        run(floor_cmd, env)  # warm the page cache
        run(health_cmd, env)
        floors, colds, warms, changes = [], [], [], []
        changed = 0
        for r in range(args.rounds):
            floors.append(run(floor_cmd, env))
            shutil.rmtree(vault / ".graph", ignore_errors=True)
            colds.append(run(health_cmd, env))
            warms.append(run(health_cmd, env))
            changed = change_notes(notes, r)
            changes.append(run(health_cmd, env))
        starts = startup(env, args.startup_reps, args.graph)

    def best(runs):
        return min(x.seconds for x in runs), max(x.peak_mb for x in runs)

    floor, floor_mb = best(floors)
    cold, cold_mb = best(colds)
    warm, warm_mb = best(warms)
    change, change_mb = best(changes)
    version = commit() if Path(args.graph).resolve() == GRAPH else args.graph
    print(
        f"vault: {args.vault} (copied, {len(notes)} notes); autograph {version}; "
        f"{sys.executable} {sys.version.split()[0]}; {args.rounds} rounds"
    )
    print(f"floor (walk + read + decode, fresh process): {floor:.3f} s              peak {floor_mb:.0f} MB")
    print(f"graph.py health, cold (no cache):           {cold:.3f} s  ratio {cold / floor:5.2f}  peak {cold_mb:.0f} MB")
    print(f"graph.py health, warm (cache valid):        {warm:.3f} s  ratio {warm / floor:5.2f}  peak {warm_mb:.0f} MB")
    print(
        f"graph.py health, 1% changed ({changed} notes):   {change:.3f} s  ratio {change / floor:5.2f}  "
        f"peak {change_mb:.0f} MB"
    )
    bare = starts.pop("bare")
    print(f"start-up, min of {args.startup_reps}: {sys.executable} -c pass {bare * 1000:.1f} ms")
    for name, seconds in starts.items():
        print(f"  {name + ':':<24} {seconds * 1000:6.1f} ms  ratio {seconds / bare:.2f} (target <= 1.5)")
    if args.max_ratio is not None and warm / floor > args.max_ratio:
        print(f"warm ratio {warm / floor:.2f} is above {args.max_ratio}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
