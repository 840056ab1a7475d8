#!/usr/bin/env python3
"""Time ``engine.py decay`` on a vault against the floor of reading it.

The floor is a fresh Python process that walks the vault (dot folders
skipped) and reads and UTF-8-decodes every note (FLOOR in bench/common.py).

Preparation, on a temporary copy of the vault: ``engine.py init --apply``;
then, unless ``--as-is``, every card with valid frontmatter and no date gets
a ``created`` date spread over the 120 days before day T (obsidian-hub's
notes carry no dates, so decay would otherwise only read them); then one
``decay --today T`` so that the vault holds its tiers.  Then, each round:

* nothing to write, cold: ``decay --today T`` with no ``.graph/cache``
  (decay then reads each card's frontmatter);
* nothing to write, warm: the same with the card cache the previous decay
  left (``.graph/cache/decay.json``; the nightly case);
* a pass that writes: ``decay --today T+8`` on a fresh copy of the prepared
  vault (warm cache), quoted per written note: (its time - the warm
  nothing-to-write time) / notes written.

All runs alternate within one session and the minimum of several rounds is
kept.  Results are ratios to the floor (and milliseconds per written note),
never absolute times alone.  Never run in CI.

Usage: python3 bench/decay_ratio.py [VAULT] [--rounds N] [--as-is]
           [--max-cold R] [--max-warm R]
Exit 1 when a --max-* ratio is given and exceeded.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FLOOR, REPO, bench_env, commit, run  # noqa: E402

ENGINE = REPO / "skills" / "autograph" / "scripts" / "engine.py"
DEFAULT_VAULT = REPO.parent / "shared" / "corpora" / "obsidian-hub"
DAY_T = datetime.date(2026, 3, 1)


def seed_dates(vault: Path, seed: int = 10) -> int:
    """Give every card with valid frontmatter and no date a ``created`` date
    in the 120 days before :data:`DAY_T` (a benchmark fixture on a temporary
    copy; surgical edits through the library's frontmatter module)."""
    sys.path.insert(0, str(REPO / "skills" / "autograph" / "scripts"))
    from autograph.memory import decay
    from autograph.read import frontmatter
    from autograph.read.vault import Vault
    from autograph.schema.model import load_schema

    rng = random.Random(seed)
    opened = Vault.open(vault)
    count = 0
    for path in opened.cards(load_schema(vault)):
        note = opened.note(path, keep=False)
        block = note.frontmatter
        if note.text is None or block is None or block.error is not None or not block.entries:
            continue
        if decay.last_access(block.properties)[0] is not None:
            continue
        day = DAY_T - datetime.timedelta(days=rng.randint(0, 120))
        try:
            text = frontmatter.set_property(note.text, "created", day)
        except frontmatter.FrontmatterError:
            continue
        (vault / path).write_bytes(note.encode(text))
        count += 1
    return count


def decay_json(vault: Path, today: datetime.date, env) -> dict:
    proc = subprocess.run(
        [sys.executable, str(ENGINE), "decay", str(vault), "--today", today.isoformat(), "--json", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", nargs="?", default=str(DEFAULT_VAULT))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--as-is", action="store_true", help="do not give undated cards a created date")
    parser.add_argument("--max-cold", type=float)
    parser.add_argument("--max-warm", type=float)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env(tmp)
        base = Path(tmp) / "base"
        shutil.copytree(args.vault, base, ignore=shutil.ignore_patterns(".graph"))
        for path in base.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
        init = [sys.executable, str(ENGINE), "init", str(base), "--apply", "--quiet"]
        subprocess.run(init, env=env, check=True, stdout=subprocess.DEVNULL)
        seeded = 0 if args.as_is else seed_dates(base)
        prepared = decay_json(base, DAY_T, env)
        shutil.rmtree(base / ".graph", ignore_errors=True)
        floor_cmd = [sys.executable, "-c", FLOOR, str(base)]
        decay_cmd = [sys.executable, str(ENGINE), "decay", str(base), "--today", DAY_T.isoformat(), "--quiet"]
        later = DAY_T + datetime.timedelta(days=8)
        floor, cold, warm, write, per_note = [], [], [], [], []
        for round_no in range(args.rounds):
            floor.append(run(floor_cmd, env).seconds)
            shutil.rmtree(base / ".graph" / "cache", ignore_errors=True)
            cold.append(run(decay_cmd, env).seconds)  # leaves the card cache
            warm.append(run(decay_cmd, env).seconds)
            work = Path(tmp) / f"work{round_no}"
            shutil.copytree(base, work)
            command = [sys.executable, str(ENGINE), "decay", str(work), "--today", later.isoformat(), "--quiet"]
            write.append(run(command, env).seconds)
            shutil.rmtree(work)
        check = Path(tmp) / "check"
        shutil.copytree(base, check)
        written = len(decay_json(check, later, env)["written"])
        f, c, w, x = min(floor), min(cold), min(warm), min(write)
        if written:
            per_note.append((x - w) / written)
        print(f"vault: {args.vault} ({commit()})")
        print(
            f"cards: {prepared['cards']}; dated by the bench: {seeded}; tiers at T: {prepared['tiers']}; "
            f"skipped: {prepared['skipped_by_reason']}"
        )
        print(f"floor (walk + read + decode): {f * 1000:.0f} ms")
        print(f"decay, nothing to write, cold: {c * 1000:.0f} ms = {c / f:.2f}x floor (target <= 3x)")
        print(f"decay, nothing to write, warm: {w * 1000:.0f} ms = {w / f:.2f}x floor (target <= 1.5x)")
        if written:
            print(
                f"decay at T+8 writing {written} notes: {x * 1000:.0f} ms = {x / f:.2f}x floor; "
                f"{per_note[0] * 1000:.3f} ms per written note over the warm pass"
            )
        failed = (args.max_cold is not None and c / f > args.max_cold) or (
            args.max_warm is not None and w / f > args.max_warm
        )
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
