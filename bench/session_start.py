#!/usr/bin/env python3
"""Time ``session.py start`` (the SessionStart hook) against a bare Python start.

A session waits for its SessionStart hooks, so the hook must cost about
what starting Python costs, whatever the vault's size: it reads small
files only (the schema, the index, the end of the health history, the
journal's folder names) and never a note.  Target: at most 3x the floor.

The vault: a synthetic one of N notes (bench/synth_vault.py, default
10,000), with a ``schema.json``, a memory store whose ``MEMORY.md`` is
near its soft cap, a health history of ``--history`` lines (default
20,000, about 6 MB: reading it whole would show), and ``--runs`` journaled
runs (folders only).  The hook's ``cwd`` is a folder three levels down, so
the vault is found by the upward search, and ``CLAUDE_ENV_FILE`` is set.

The floor is ``sys.executable -c pass``; each round times the floor and the
hook (a new session id each time: the first start of a session, which
writes its record) one after the other, and the minimum of the rounds of
each is kept, so a noisy machine affects both alike.  Bytecode is cached
as in a normal install (bench/common.py's ``bench_env``).  The result is a
ratio to the floor, never an absolute time alone.  Never run in CI.

Usage: python3 bench/session_start.py [--notes N] [--rounds N] [--history N]
           [--runs N] [--max-ratio R]
Exit 1 when --max-ratio is given and the ratio is above it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, bench_env  # noqa: E402
from synth_vault import generate  # noqa: E402

SESSION = REPO / "skills" / "autograph" / "scripts" / "session.py"


def build(vault: Path, notes: int, history: int = 20000, runs: int = 300) -> dict:
    """Write the benchmark's vault at ``vault`` (a folder that does not exist
    yet, outside the repository): ``notes`` synthetic notes, a schema, a
    memory store with a 150-line index, ``history`` health-history lines
    and ``runs`` journal folders.  Returns the synthetic vault's summary."""
    summary = generate(notes, vault)
    schema = {"memory": {"folder": "memory", "index": "MEMORY.md"}, "session": {"budget_tokens": 150}}
    (vault / "schema.json").write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    (vault / "memory").mkdir(exist_ok=True)
    index = "".join(f"- [Topic {i}](topic-{i}.md) — one line about topic {i}\n" for i in range(150))
    (vault / "memory" / "MEMORY.md").write_text("# Memory\n\n" + index, encoding="utf-8")
    graph = vault / ".graph"
    graph.mkdir(exist_ok=True)
    with open(graph / "health-history.jsonl", "w", encoding="utf-8") as handle:
        for i in range(history):
            entry = {
                "time": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00+00:00",
                "score": round(60 + (i % 400) / 10, 1),
                "notes": notes,
                "links": notes * 4,
                "broken_links": i % 50,
                "orphans": i % 70,
                "dead_ends": 3,
                "ambiguous_links": 1,
                "broken_anchors": 2,
                "description_coverage": 0.8,
                "invalid_frontmatter": i % 5,
                "stale_share": 0.1,
                "tiers": {"active": 10, "warm": 20, "cold": 30, "archive": 40},
            }
            handle.write(json.dumps(entry) + "\n")
    for i in range(runs):
        run = graph / "journal" / f"20260101T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}.000000Z-1-abcdef"
        run.mkdir(parents=True)
        (run / "run.json").write_text(json.dumps({"run": run.name, "state": "done", "files": 1}) + "\n")
    return summary


def hook_cwd(vault: Path) -> Path:
    """A folder three levels into the vault (made if need be): the session's cwd."""
    folder = vault / "projects" / "work" / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _timed(command: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Run ``command`` with ``data`` on stdin: its wall time, its CPU time
    (user + system, of this child alone: ``os.wait4``) and its stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(data)
    proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()  # small: no pipe fills up
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{command} exited {proc.returncode}:\n{err.decode('utf-8', 'replace')}")
    return seconds, usage.ru_utime + usage.ru_stime, out


def measure(vault: Path, rounds: int, env: dict[str, str], tmp: Path) -> dict:
    """Time the floor and the hook ``rounds`` times each, alternating.
    Returns ``{"floor", "start"}`` (wall seconds, the minimum of the
    rounds), ``"ratio"`` (start / floor), the same of CPU time
    (``"floor_cpu"``, ``"start_cpu"``, ``"cpu_ratio"``: steadier on a busy
    machine) and ``"context"`` (the additionalContext of the last run, to
    check the hook said what it should)."""
    cwd = hook_cwd(vault)
    env = {**env, "CLAUDE_ENV_FILE": str(tmp / "env.sh")}
    env.pop("AUTOGRAPH_VAULT", None)
    env.pop("CLAUDE_PROJECT_DIR", None)
    floor_cmd = [sys.executable, "-c", "pass"]
    start_cmd = [sys.executable, str(SESSION), "start"]

    def payload(n: int) -> bytes:
        data = {"session_id": f"bench-{os.getpid()}-{n}", "cwd": str(cwd), "hook_event_name": "SessionStart"}
        return json.dumps({**data, "source": "startup", "transcript_path": str(tmp / "t.jsonl")}).encode()

    _timed(floor_cmd, b"", env)
    _timed(start_cmd, payload(-1), env)  # bytecode cache
    floor, hook, floor_cpu, hook_cpu, out = [], [], [], [], b""
    for n in range(rounds):
        seconds, cpu, _ = _timed(floor_cmd, b"", env)
        floor.append(seconds)
        floor_cpu.append(cpu)
        seconds, cpu, out = _timed(start_cmd, payload(n), env)
        hook.append(seconds)
        hook_cpu.append(cpu)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""
    f, h, fc, hc = min(floor), min(hook), min(floor_cpu), min(hook_cpu)
    return {
        "floor": f,
        "start": h,
        "ratio": h / f,
        "floor_cpu": fc,
        "start_cpu": hc,
        "cpu_ratio": hc / fc if fc else 0.0,
        "context": context,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10000, help="notes in the synthetic vault (default 10,000)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--history", type=int, default=20000, help="health-history lines (default 20,000)")
    parser.add_argument("--runs", type=int, default=300, help="journaled runs (default 300)")
    parser.add_argument("--max-ratio", type=float)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        env = bench_env(tmp)
        vault = tmp / "vault"
        summary = build(vault, args.notes, args.history, args.runs)
        result = measure(vault, args.rounds, env, tmp)
        history = (vault / ".graph" / "health-history.jsonl").stat().st_size
        print(f"session.py start, {args.rounds} rounds")
        print(
            f"vault: {summary['notes']:,} notes, {summary['total_mb']} MB; health history {args.history:,} lines "
            f"({history / 1e6:.1f} MB); {args.runs} journaled runs"
        )
        print(f"floor (python -c pass): {result['floor'] * 1000:.1f} ms")
        print(f"session.py start: {result['start'] * 1000:.1f} ms = {result['ratio']:.2f}x floor (target <= 3x)")
        print(
            f"CPU time: floor {result['floor_cpu'] * 1000:.1f} ms, start {result['start_cpu'] * 1000:.1f} ms "
            f"= {result['cpu_ratio']:.2f}x"
        )
        print("context:\n  " + result["context"].replace("\n", "\n  "))
        return 1 if args.max_ratio is not None and result["ratio"] > args.max_ratio else 0


if __name__ == "__main__":
    sys.exit(main())
