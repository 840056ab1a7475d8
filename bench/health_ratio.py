#!/usr/bin/env python3
"""Time ``graph.py health`` on a vault against the floor of reading it.

The floor is a fresh Python process that walks the vault (dot folders
skipped) and reads and UTF-8-decodes every note.  ``health`` runs in a fresh
process on a temporary copy of the vault, twice per round:

* cold: no ``.graph/`` cache (the first run on a vault): every note parsed;
* warm: the parsed-note cache from the previous run is valid (the nightly
  case): only changed notes are parsed.

Python's bytecode cache is on for both processes, as in a normal install
(kept in the temporary folder).

All runs alternate within one session and the minimum of several rounds is
kept, so a noisy shared machine affects them alike.  The results are ratios
to the floor, never absolute times.

Usage: python3 bench/health_ratio.py [VAULT] [--rounds N] [--max-ratio R]
Exit 1 when --max-ratio is given and the warm ratio is above it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GRAPH = REPO / "skills" / "autograph" / "scripts" / "graph.py"
DEFAULT_VAULT = REPO.parent / "shared" / "corpora" / "obsidian-hub"

FLOOR = r"""
import os, sys
root = sys.argv[1]
count = 0
for folder, dirs, files in os.walk(root):
    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    for name in sorted(files):
        if name.endswith(".md") and not name.startswith("."):
            with open(os.path.join(folder, name), "rb") as handle:
                data = handle.read()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            count += 1
print(count)
"""


ENV = dict(os.environ)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", nargs="?", default=str(DEFAULT_VAULT))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-ratio", type=float)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # Bytecode is cached as in a normal install (some environments set
        # PYTHONDONTWRITEBYTECODE); the cache lives in the temporary folder.
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        vault = Path(tmp) / "vault"
        shutil.copytree(args.vault, vault)
        floor_cmd = [sys.executable, "-c", FLOOR, str(vault)]
        health_cmd = [sys.executable, str(GRAPH), "health", str(vault), "--json"]
        timed(floor_cmd)  # warm the page cache
        timed(health_cmd)
        floors, colds, warms = [], [], []
        for _ in range(args.rounds):
            floors.append(timed(floor_cmd))
            shutil.rmtree(vault / ".graph", ignore_errors=True)
            colds.append(timed(health_cmd))
            warms.append(timed(health_cmd))
    floor, cold, warm = min(floors), min(colds), min(warms)
    print(f"vault: {args.vault} (copied)")
    print(f"floor (walk + read + decode, fresh process): {floor:.3f} s")
    print(f"graph.py health, cold (no cache):           {cold:.3f} s  ratio {cold / floor:.2f}")
    print(f"graph.py health, warm (cache valid):        {warm:.3f} s  ratio {warm / floor:.2f}")
    if args.max_ratio is not None and warm / floor > args.max_ratio:
        print(f"warm ratio {warm / floor:.2f} is above {args.max_ratio}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
