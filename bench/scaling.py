#!/usr/bin/env python3
"""How ``graph.py health`` scales with the size of the vault.

For each size a synthetic vault (bench/synth_vault.py, shaped like
obsidian-hub) is generated in a temporary folder, and in fresh processes of
``sys.executable``, alternating within each round:

* floor: walk + read + UTF-8-decode every note (bench/common.py FLOOR);
* cold: ``graph.py health VAULT --json`` with no ``.graph/`` (first run);
* unchanged: the same again (the parsed-note cache is valid);
* 1% changed: a line appended to 1% of the notes, then the same again.

Times are the minimum over the rounds, printed as ratios to the floor of the
same size; peak MB is the largest peak RSS of the health runs of that kind
(``os.wait4`` of each process).  The last line compares the cold times of
the largest and the next size down: linear scaling means a ratio equal to
the size ratio (target: 100k/10k <= 11).

The vaults are deleted at the end.  Never run in CI.

Usage: python3 bench/scaling.py [--sizes 1000,10000,100000] [--rounds N]
           [--seed S] [--tmpdir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FLOOR, GRAPH, bench_env, change_notes, commit, notes_of, run  # noqa: E402
from synth_vault import generate  # noqa: E402


def measure(size: int, rounds: int, seed: int, tmpdir: str | None, graph: str) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"autograph-scaling-{size}-", dir=tmpdir) as tmp:
        env = bench_env(tmp)
        vault = Path(tmp) / "vault"
        start = time.perf_counter()
        summary = generate(size, vault, seed)
        made = time.perf_counter() - start
        print(
            f"  {size}: generated in {made:.0f} s ({summary['notes']} notes, "
            f"{summary['folders']} folders, {summary['attachments']} attachments, "
            f"median {summary['median_bytes']:.0f} B, mean {summary['mean_bytes']} B, "
            f"{summary['total_mb']} MB)",
            file=sys.stderr,
            flush=True,
        )
        notes = notes_of(vault)
        floor_cmd = [sys.executable, "-c", FLOOR, str(vault)]
        health_cmd = [sys.executable, graph, "health", str(vault), "--json"]
        run(floor_cmd, env)  # warm the page cache and the bytecode cache
        run(health_cmd, env)
        kinds = {"floor": [], "cold": [], "unchanged": [], "changed": []}
        changed = 0
        for r in range(rounds):
            kinds["floor"].append(run(floor_cmd, env))
            shutil.rmtree(vault / ".graph", ignore_errors=True)
            kinds["cold"].append(run(health_cmd, env))
            kinds["unchanged"].append(run(health_cmd, env))
            changed = change_notes(notes, r)
            kinds["changed"].append(run(health_cmd, env))
            print(
                f"  {size}: round {r + 1}/{rounds}: "
                + ", ".join(f"{k} {v[-1].seconds:.2f} s" for k, v in kinds.items()),
                file=sys.stderr,
                flush=True,
            )
    result = {"size": size, "changed": changed}
    for kind, runs in kinds.items():
        result[kind] = min(x.seconds for x in runs)
        result[kind + "_cpu"] = min(x.cpu for x in runs)
        result[kind + "_mb"] = max(x.peak_mb for x in runs)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated note counts")
    parser.add_argument(
        "--graph",
        default=str(GRAPH),
        help="the graph.py to time (default: this checkout's; e.g. one from `git archive` of a fixed commit)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tmpdir", help="where the vaults are generated (default: the system's temporary folder)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    version = commit() if Path(args.graph).resolve() == GRAPH else args.graph
    print(f"python: {sys.executable} {sys.version.split()[0]}; autograph {version}; rounds {args.rounds}", flush=True)
    results = [measure(size, args.rounds, args.seed, args.tmpdir, args.graph) for size in sorted(sizes)]
    print()
    print(f"{'notes':>8} {'floor s':>8} {'cold':>7} {'unchanged':>9} {'1% chg':>7} {'peak MB cold/unch/1%':>22}")
    for r in results:
        f = r["floor"]
        print(
            f"{r['size']:>8} {f:>8.3f} {r['cold'] / f:>7.2f} {r['unchanged'] / f:>9.2f} "
            f"{r['changed'] / f:>7.2f} "
            f"{r['cold_mb']:>8.0f}/{r['unchanged_mb']:.0f}/{r['changed_mb']:.0f}"
        )
    print(
        "(ratios: health wall time / floor wall time, minimum of the rounds; "
        "1% chg: a line appended to 1% of the notes)"
    )
    if len(results) >= 2:
        small, big = results[-2], results[-1]
        factor = big["size"] / small["size"]
        print(
            f"cold time {big['size']}/{small['size']}: {big['cold'] / small['cold']:.2f} "
            f"(size ratio {factor:g}; target <= {factor * 1.1:g}); "
            f"floor {big['floor'] / small['floor']:.2f}; "
            f"cold CPU {big['cold_cpu'] / small['cold_cpu']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
