#!/usr/bin/env python3
"""The "Done when" of the one-index issue, measured in one run: ratios and a
PASS/FAIL per target.

Every timed process is a fresh ``sys.executable``; every figure is a ratio
to a floor (or to the seed) measured in the same run, never an absolute
time.  Times are the minimum over ``--rounds`` (the verdict: best run over
best floor), with the median of the per-round ratios beside it (the noise
of a shared machine); peak memory is the peak RSS of the process from
``os.wait4`` (on Linux the largest of the process and the children it
waited for: orchestrate.py's steps count, as the largest one, not a sum),
the largest over the runs.

Floors (bench/common.py): the read floor ``FLOOR`` (walk, dot folders
skipped, read and UTF-8-decode every note) and the stat floor
``STAT_FLOOR`` (the same walk, ``os.stat`` of every note).

The seed is the earlier project, smixs/autograph at commit 67a2ecf (stdlib
only), found through the environment variable AUTOGRAPH_SEED: a worktree
(holding skills/autograph/scripts/graph.py; when it is a git checkout of
another commit, 67a2ecf is extracted from it) or a git directory (bare
mirror: ``git archive 67a2ecf | tar -x`` into the temporary folder).  It is
run as ``python skills/autograph/scripts/graph.py health VAULT`` (its
README's ``uv run skills/autograph/scripts/graph.py health /path/to/vault``;
no --json there, it prints a text summary and writes .graph/vault-graph.json,
report.md, health-history.json) on its own copy of the same vault, with no
.graph/ before each run.  Without AUTOGRAPH_SEED the seed rows say n/a.

1. Cold health (``graph.py health VAULT --json`` with no .graph/) against
   the seed: <= 1.0x on the real vault (--vault, default obsidian-hub),
   <= 0.8x at the largest synthetic size (the target is set at 100k notes);
   and <= 5x the read floor on the real vault.  Printed beside, not a
   target: the FTS5 floor (``FTS_FLOOR``: the read floor plus every note's
   text inserted into an FTS5 table like the index's, by one process)
   against the read floor and the seed, the least a cold health that fills
   the search columns can take.
2. Cold search (``search.py --vault V --json QUERY`` with no .graph/) <= 1.2x
   the cold health of the same round (real vault and largest size); after a
   health from no .graph/, the first search's JSON ``index.parsed`` is 0, and
   after a search, the first health's (``n/a`` while the JSON has no
   ``index.parsed``, as before the refactor).
3. Peak memory at the largest size, each command run cold (no .graph/) and
   warm (after a health and a search), the larger figure: health, search,
   ``card.py new``, ``engine.py decay --dry-run``, ``dedup.py --dry-run``,
   ``moc.py generate --dry-run``, ``graph.py fix --dry-run``, ``enforce.py
   --dry-run`` < 250 MB; ``graph.py report`` (to a file outside the vault)
   and ``orchestrate.py health`` < 400 MB.
4. An unchanged vault at the largest size (after a warm-up run of each
   command), against the stat floor of the same round: ``graph.py health``,
   ``search.py``, ``check.py`` (sizes the vault's MEMORY.md) and
   ``session.py start`` (a SessionStart hook JSON on stdin, a new session
   id each run) <= 1.5x; ``card.py new`` / ``set`` / ``log`` / ``remember``,
   ``search.py --identity email=...`` and ``engine.py touch`` <= 2x.  The
   writing commands run on a copy of the vault, each repetition writing
   something fresh (a new card name, a new value, a new log line; touch
   counts one more access).  The vault gets a MEMORY.md and a person card
   with an email (written as files, before anything runs) for them.
5. 1% changed: a line appended to 1% of the notes, then ``graph.py health``
   at the largest size: <= 1.5x the read floor of the same round.
6. Scaling over --sizes (synthetic vaults, bench/synth_vault.py): cold
   health seconds per note and peak MB per note, largest size over a
   reference size, target <= 1.15 (within 15% of linear).  The reference is
   the smallest size of at least 10,000 notes below the largest (10k for
   the default 1k/10k/100k), else the smallest: at 1k notes a run is
   mostly interpreter start-up and imports, so per-note figures there say
   nothing about scaling (and the peak RSS of a small run is mostly the
   interpreter's baseline, so the memory ratio uses the same reference).

Each synthetic size is generated once; copies (``cp -r``) serve the seed
and the commands that write.  Everything lives in a temporary folder
(--tmpdir) outside the repository and is deleted at the end.  Progress goes
to stderr, the tables to stdout.  A command that fails (in parts 3 and 4)
is reported as an error row (FAIL) and the run goes on.  Never run in CI.

Usage: python3 bench/index_ratio.py [--sizes 1000,10000,100000] [--rounds N]
           [--vault DIR] [--tmpdir DIR] [--seed-commit C] [--quick]
Exit 0 when no target failed (n/a is not a failure), else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FLOOR, FTS_FLOOR, GRAPH, REPO, STAT_FLOOR, Run, bench_env, change_notes, commit, notes_of  # noqa: E402
from synth_vault import generate  # noqa: E402

PY = sys.executable
SCRIPTS = REPO / "skills" / "autograph" / "scripts"
SEARCH, CARD, CHECK, SESSION = (str(SCRIPTS / n) for n in ("search.py", "card.py", "check.py", "session.py"))
ENGINE, DEDUP, MOC, ENFORCE = (str(SCRIPTS / n) for n in ("engine.py", "dedup.py", "moc.py", "enforce.py"))
ORCHESTRATE = str(SCRIPTS / "orchestrate.py")
DEFAULT_VAULT = REPO.parent / "shared" / "corpora" / "obsidian-hub"
SEED_COMMIT = "67a2ecf"
SEED_GRAPH = Path("skills") / "autograph" / "scripts" / "graph.py"
REAL_QUERY = "daily notes template"
SYNTH_QUERY = "river garden lantern"
TARGET = "Bench Person"
TARGET_EMAIL = "bench.person@example.com"
QUICK_SIZES = "500,2000"
WRITERS = ("card.py new", "card.py set", "card.py log", "card.py remember", "search.py --identity", "engine.py touch")


def fts_columns() -> str:
    """The index's FTS5 columns, comma-separated, for FTS_FLOOR's table
    (read from the library, so the floor follows the index)."""
    sys.path.insert(0, str(SCRIPTS))
    from autograph.read.searchdoc import COLUMNS

    return ", ".join(COLUMNS)


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Cmd:
    argv: list[str]
    stdin: bytes = b""
    ok: tuple[int, ...] = (0,)


def execute(cmd: Cmd, env: dict[str, str], cwd: Path, capture: bool = False) -> tuple[Run, bytes]:
    """Run ``cmd`` in a fresh process (stdin given, stdout discarded unless
    ``capture``): its wall time, CPU time, peak RSS (``os.wait4``) and stdout.
    An exit code outside ``cmd.ok`` raises RuntimeError with its stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd.argv,
            stdin=subprocess.PIPE,
            stdout=out if capture else subprocess.DEVNULL,
            stderr=err,
            env=env,
            cwd=cwd,
        )
        try:
            proc.stdin.write(cmd.stdin)
        except BrokenPipeError:
            pass
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in cmd.ok:
            err.seek(0)
            message = err.read().decode("utf-8", "replace").strip()
            raise RuntimeError(f"{' '.join(cmd.argv)} exited {proc.returncode}: {message[-2000:]}")
        out.seek(0)
        data = out.read() if capture else b""
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / scale), data


def parsed_of(data: bytes) -> int | None:
    """``index.parsed`` of a command's JSON output, None when absent."""
    try:
        index = json.loads(data).get("index")
    except (ValueError, AttributeError):
        return None
    value = index.get("parsed") if isinstance(index, dict) else None
    return value if isinstance(value, int) else None


def clear(vault: Path) -> None:
    shutil.rmtree(vault / ".graph", ignore_errors=True)


def copy(src: Path, dst: Path) -> Path:
    subprocess.run(["cp", "-r", str(src), str(dst)], check=True)
    return dst


# -- the seed ------------------------------------------------------------------


def _git(root: Path, *args: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def find_seed(spec: str | None, wanted: str, tmp: Path) -> tuple[Path | None, str]:
    """The seed's graph.py (None without AUTOGRAPH_SEED) and how it was found."""
    if not spec:
        return None, "none (AUTOGRAPH_SEED not set: seed ratios n/a)"
    root = Path(spec).expanduser().resolve()
    if (root / SEED_GRAPH).is_file():
        top = _git(root, "rev-parse", "--show-toplevel")
        head = _git(root, "rev-parse", "HEAD") if top and Path(top).resolve() == root else None
        if head is None:
            return root / SEED_GRAPH, f"{root} (a worktree, taken as {wanted})"
        if head.startswith(wanted):
            return root / SEED_GRAPH, f"{root} (checkout of {head[:12]})"
    full = _git(root, "rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}")
    if full is None:
        raise SystemExit(f"AUTOGRAPH_SEED={spec}: neither a worktree holding {SEED_GRAPH} nor a git dir with {wanted}")
    dest = tmp / "seed"
    dest.mkdir()
    archive = subprocess.Popen(["git", "-C", str(root), "archive", full], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0 or not (dest / SEED_GRAPH).is_file():
        raise SystemExit(f"AUTOGRAPH_SEED={spec}: git archive {wanted} gave no {SEED_GRAPH}")
    return dest / SEED_GRAPH, f"{root} @ {full[:12]} (git archive into the temporary folder)"


# -- figures -------------------------------------------------------------------


def best(runs: list[Run]) -> float:
    return min(r.seconds for r in runs)


def peak(runs: list[Run]) -> float:
    return max(r.peak_mb for r in runs)


def ratio(top: list[Run], bottom: list[Run]) -> tuple[float, float] | None:
    """(best / best, median of the per-round ratios); None when either is empty."""
    if not top or not bottom:
        return None
    rounds = [a.seconds / b.seconds for a, b in zip(top, bottom, strict=False)]
    return best(top) / best(bottom), statistics.median(rounds)


@dataclass
class Target:
    label: str
    value: float | None  # None: not measured (n/a)
    limit: float
    shown: str = ""  # how the value is shown (default: 2 decimals + "x")
    op: str = "<="
    error: str = ""

    def verdict(self) -> str:
        if self.error:
            return "FAIL"
        if self.value is None:
            return "n/a"
        good = {"<=": self.value <= self.limit, "<": self.value < self.limit, "==": self.value == self.limit}
        return "PASS" if good[self.op] else "FAIL"


@dataclass
class SizeResult:
    label: str
    notes: int
    runs: dict[str, list[Run]] = field(default_factory=dict)


# -- the bench -----------------------------------------------------------------


class Bench:
    def __init__(self, env: dict[str, str], tmp: Path, seed: Path | None, rounds: int):
        self.env, self.tmp, self.seed, self.rounds = env, tmp, seed, rounds
        self.counter = 0  # fresh names and values for the writing commands
        self.errors: dict[str, str] = {}

    def run(self, cmd: Cmd | list[str], capture: bool = False) -> tuple[Run, bytes]:
        cmd = cmd if isinstance(cmd, Cmd) else Cmd(cmd)
        return execute(cmd, self.env, self.tmp, capture)

    def fresh(self) -> int:
        self.counter += 1
        return self.counter

    # part 1, 2 and 6: cold runs ------------------------------------------------
    def cold(self, label: str, vault: Path, seed_copy: Path | None, query: str) -> SizeResult:
        floor = [PY, "-c", FLOOR, str(vault)]
        fts = [PY, "-c", FTS_FLOOR, str(vault), fts_columns(), str(self.tmp / "fts-floor.sqlite")]
        health = [PY, str(GRAPH), "health", str(vault), "--json"]
        search = [PY, SEARCH, "--vault", str(vault), "--json", query]
        seed = [PY, str(self.seed), "health", str(seed_copy)] if self.seed and seed_copy else None
        result = SizeResult(label, len(notes_of(vault)))
        result.runs = {"floor": [], "fts floor": [], "health": [], "search": [], "seed": []}
        self.run(floor)  # the page cache
        for r in range(self.rounds):
            result.runs["floor"].append(self.run(floor)[0])
            result.runs["fts floor"].append(self.run(fts)[0])
            clear(vault)
            result.runs["health"].append(self.run(health)[0])
            clear(vault)
            result.runs["search"].append(self.run(search)[0])
            if seed:
                clear(seed_copy)
                result.runs["seed"].append(self.run(seed)[0])
            say(
                f"  {label}: cold round {r + 1}/{self.rounds}: "
                + ", ".join(f"{k} {v[-1].seconds:.2f} s" for k, v in result.runs.items() if v)
            )
        return result

    def parsed(self, vault: Path, query: str) -> tuple[int | None, int | None]:
        """(index.parsed of the first search after a health, of the first
        health after a search), each from no .graph/."""
        health = [PY, str(GRAPH), "health", str(vault), "--json"]
        search = [PY, SEARCH, "--vault", str(vault), "--json", query]
        clear(vault)
        self.run(health)
        after_health = parsed_of(self.run(search, capture=True)[1])
        clear(vault)
        self.run(search)
        after_search = parsed_of(self.run(health, capture=True)[1])
        return after_health, after_search

    # part 3: peak memory -----------------------------------------------------
    def memory_commands(self, vault: Path, phase: str) -> dict[str, tuple[Cmd, float]]:
        v = str(vault)
        ok = (0, 1)  # 1: found what it checks for
        return {
            "graph.py health": (Cmd([PY, str(GRAPH), "health", v, "--json"], ok=ok), 250),
            "search.py": (Cmd([PY, SEARCH, "--vault", v, "--json", SYNTH_QUERY]), 250),
            "card.py new": (Cmd([PY, CARD, "new", "person", f"Memory Card {phase} {self.fresh()}", "--vault", v]), 250),
            "engine.py decay --dry-run": (Cmd([PY, ENGINE, "decay", v, "--dry-run", "--json"], ok=ok), 250),
            "dedup.py --dry-run": (Cmd([PY, DEDUP, v, "--dry-run", "--json"], ok=ok), 250),
            "moc.py generate --dry-run": (Cmd([PY, MOC, "generate", v, "--dry-run", "--json"], ok=ok), 250),
            "graph.py fix --dry-run": (Cmd([PY, str(GRAPH), "fix", v, "--dry-run", "--json"], ok=ok), 250),
            "enforce.py --dry-run": (Cmd([PY, ENFORCE, v, "--dry-run", "--json"], ok=ok), 250),
            "graph.py report": (
                Cmd([PY, str(GRAPH), "report", v, "-o", str(self.tmp / "report.html"), "--force", "--json"], ok=ok),
                400,
            ),
            "orchestrate.py health": (Cmd([PY, ORCHESTRATE, "health", v, "--json"], ok=ok), 400),
        }

    def memory(self, vault: Path) -> dict[str, dict]:
        """Each command cold (no .graph/) then warm; {name: {cold, warm, limit, error}}."""
        table: dict[str, dict] = {}
        for name, (cmd, limit) in self.memory_commands(vault, "cold").items():
            clear(vault)
            table[name] = {"limit": limit, "cold": None, "warm": None, "error": ""}
            try:
                table[name]["cold"] = self.run(cmd)[0]
            except RuntimeError as exc:
                table[name]["error"] = str(exc)
            say(f"  memory, cold: {name} {self._show(table[name]['cold'])}")
        clear(vault)
        for warm_up in ([PY, str(GRAPH), "health", str(vault), "--json"], [PY, SEARCH, "--vault", str(vault), "x"]):
            try:
                self.run(warm_up)
            except RuntimeError as exc:
                say(f"  warm-up failed: {exc}")
        for name, (cmd, _limit) in self.memory_commands(vault, "warm").items():
            try:
                table[name]["warm"] = self.run(cmd)[0]
            except RuntimeError as exc:
                table[name]["error"] = table[name]["error"] or str(exc)
            say(f"  memory, warm: {name} {self._show(table[name]['warm'])}")
        return table

    @staticmethod
    def _show(r: Run | None) -> str:
        return "error" if r is None else f"{r.seconds:.2f} s, {r.peak_mb:.0f} MB"

    # part 4: an unchanged vault ----------------------------------------------
    def readers(self, vault: Path) -> dict[str, Cmd]:
        payload = {
            "session_id": f"bench-{os.getpid()}-{self.fresh()}",
            "cwd": str(vault),
            "hook_event_name": "SessionStart",
            "source": "startup",
            "transcript_path": str(self.tmp / "transcript.jsonl"),
        }
        v = str(vault)
        return {
            "graph.py health": Cmd([PY, str(GRAPH), "health", v, "--json"]),
            "search.py": Cmd([PY, SEARCH, "--vault", v, "--json", SYNTH_QUERY]),
            "check.py": Cmd([PY, CHECK, "--vault", v, "--json"]),
            "session.py start": Cmd([PY, SESSION, "start"], stdin=json.dumps(payload).encode()),
        }

    def writers(self, vault: Path) -> dict[str, Cmd]:
        v, n = str(vault), self.fresh()
        return {
            "card.py new": Cmd([PY, CARD, "new", "person", f"Bench New {n}", "--vault", v, "--json"]),
            "card.py set": Cmd([PY, CARD, "set", TARGET, f"bench_value=set-{n}", "--vault", v, "--json"]),
            "card.py log": Cmd([PY, CARD, "log", TARGET, f"bench line {n}", "--vault", v, "--json"]),
            "card.py remember": Cmd(
                [PY, CARD, "remember", "person", TARGET, f"bench_note=remember-{n}", "--vault", v, "--json"]
            ),
            "search.py --identity": Cmd([PY, SEARCH, "--identity", f"email={TARGET_EMAIL}", "--vault", v, "--json"]),
            "engine.py touch": Cmd([PY, ENGINE, "touch", TARGET, "--vault", v, "--json"]),
        }

    def _timed(self, name: str, cmd: Cmd, into: dict[str, list[Run]], check_write: bool) -> None:
        if name in self.errors:
            return
        try:
            result, out = self.run(cmd, capture=check_write)
        except RuntimeError as exc:
            self.errors[name] = str(exc)
            say(f"  {name}: {exc}")
            return
        into.setdefault(name, []).append(result)
        if check_write and name != "search.py --identity":
            try:
                written = json.loads(out).get("written")
            except (ValueError, AttributeError):
                written = None
            if not written:
                say(f"  warning: {name} wrote nothing ({out[:200]!r})")

    def unchanged(self, base: Path, work: Path) -> dict[str, list[Run]]:
        """Reading commands on ``base``, writing ones on ``work``, a warm-up
        run of each first; the stat floor of ``base`` each round."""
        runs: dict[str, list[Run]] = {"stat floor": []}
        stat = [PY, "-c", STAT_FLOOR, str(base)]
        self.run(stat)
        scratch: dict[str, list[Run]] = {}
        for name, cmd in self.readers(base).items():
            self._timed(name, cmd, scratch, False)
        for name, cmd in self.writers(work).items():
            self._timed(name, cmd, scratch, True)
        for r in range(self.rounds):
            runs["stat floor"].append(self.run(stat)[0])
            for name, cmd in self.readers(base).items():
                self._timed(name, cmd, runs, False)
            for name, cmd in self.writers(work).items():
                self._timed(name, cmd, runs, True)
            say(
                f"  unchanged round {r + 1}/{self.rounds}: "
                + ", ".join(f"{k} {v[-1].seconds:.2f} s" for k, v in runs.items() if v)
            )
        return runs

    # part 5: 1% changed ------------------------------------------------------
    def changed(self, base: Path) -> tuple[list[Run], list[Run], int]:
        floor = [PY, "-c", FLOOR, str(base)]
        health = [PY, str(GRAPH), "health", str(base), "--json"]
        notes = notes_of(base)
        self.run(health)  # the cache up to date
        floors, healths, count = [], [], 0
        for r in range(self.rounds):
            floors.append(self.run(floor)[0])
            count = change_notes(notes, r)
            healths.append(self.run(health)[0])
            say(
                f"  1% changed round {r + 1}/{self.rounds}: floor {floors[-1].seconds:.2f} s, "
                f"health {healths[-1].seconds:.2f} s"
            )
        return floors, healths, count


def add_fixtures(vault: Path) -> None:
    """A MEMORY.md (for check.py and session.py) and a person card with an
    email (for set, log, remember, touch and --identity), written as files."""
    index = "".join(f"- [Topic {i}](topic-{i}.md) - one line about topic {i}\n" for i in range(40))
    (vault / "MEMORY.md").write_text("# Memory\n\n" + index, encoding="utf-8")
    card = f"---\ntype: person\nemail: {TARGET_EMAIL}\ncreated: 2026-01-05\n---\n\n# {TARGET}\n\nA bench card.\n"
    (vault / f"{TARGET}.md").write_text(card, encoding="utf-8")


def fmt(pair: tuple[float, float] | None) -> str:
    return "n/a" if pair is None else f"{pair[0]:.2f} (median {pair[1]:.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", help="comma-separated note counts (default 1000,10000,100000)")
    parser.add_argument("--rounds", type=int, help="rounds of each timing (default 3)")
    parser.add_argument("--vault", default=str(DEFAULT_VAULT), help="the real vault (default obsidian-hub)")
    parser.add_argument("--tmpdir", help="where the vaults go (default: the system's temporary folder)")
    parser.add_argument("--seed-commit", default=SEED_COMMIT, help=f"the seed's commit (default {SEED_COMMIT})")
    parser.add_argument("--quick", action="store_true", help=f"a smoke test: sizes {QUICK_SIZES}, 1 round")
    args = parser.parse_args()
    sizes_text = args.sizes or (QUICK_SIZES if args.quick else "1000,10000,100000")
    sizes = sorted({int(s) for s in sizes_text.split(",") if s.strip()})
    rounds = args.rounds or (1 if args.quick else 3)
    if not sizes or sizes[0] < 1 or rounds < 1:
        parser.error("--sizes needs positive note counts and --rounds at least 1")
    real = Path(args.vault)
    targets: list[Target] = []
    lines: list[str] = []

    with tempfile.TemporaryDirectory(prefix="autograph-index-ratio-", dir=args.tmpdir) as folder:
        tmp = Path(folder).resolve()
        if tmp == REPO or REPO in tmp.parents:
            raise SystemExit(f"--tmpdir must be outside the repository: {tmp}")
        env = bench_env(tmp)
        for name in ("AUTOGRAPH_VAULT", "CLAUDE_PROJECT_DIR"):
            env.pop(name, None)
        env["CLAUDE_ENV_FILE"] = str(tmp / "env.sh")
        seed, seed_note = find_seed(os.environ.get("AUTOGRAPH_SEED"), args.seed_commit, tmp)
        bench = Bench(env, tmp, seed, rounds)
        head = (
            f"autograph {commit()}; {PY} {sys.version.split()[0]}; rounds {rounds}; sizes "
            + ",".join(map(str, sizes))
            + f"\nseed: {seed_note}"
            + (f"\n      run as: {PY} {seed} health VAULT" if seed else "")
        )
        say(head)

        # the real vault --------------------------------------------------
        results: list[SizeResult] = []
        real_parsed: tuple[int | None, int | None] = (None, None)
        if real.is_dir():
            vault, twin = tmp / "real", tmp / "real-seed"
            for dst in (vault, twin):
                shutil.copytree(real, dst, ignore=shutil.ignore_patterns(".graph"))
                for path in dst.rglob("*"):
                    path.chmod(path.stat().st_mode | 0o200)
            say(f"real vault {real}:")
            warm = [[PY, str(GRAPH), "health", str(vault), "--json"], [PY, SEARCH, "--vault", str(vault), "x"]]
            for cmd in warm + ([[PY, str(seed), "health", str(twin)]] if seed else []):
                bench.run(cmd)  # the bytecode cache
            results.append(bench.cold(real.name, vault, twin if seed else None, REAL_QUERY))
            real_parsed = bench.parsed(vault, REAL_QUERY)
            shutil.rmtree(vault)
            shutil.rmtree(twin)
        else:
            say(f"no real vault at {real}: its rows are n/a")

        # the synthetic sizes ---------------------------------------------
        largest: dict = {}
        for size in sizes:
            base = tmp / f"n{size}"
            start = time.perf_counter()
            summary = generate(size, base)
            add_fixtures(base)
            say(f"{size} notes: generated in {time.perf_counter() - start:.0f} s ({summary['total_mb']} MB)")
            twin = copy(base, tmp / f"n{size}-seed") if seed else None
            if not results:  # no real vault: the bytecode cache here
                for cmd in ([PY, str(GRAPH), "health", str(base), "--json"], [PY, SEARCH, "--vault", str(base), "x"]):
                    bench.run(cmd)
            results.append(bench.cold(f"{size} synthetic", base, twin, SYNTH_QUERY))
            if twin:
                shutil.rmtree(twin)
            if size != sizes[-1]:
                shutil.rmtree(base)
                continue
            say(f"{size} notes: index.parsed checks")
            largest["parsed"] = bench.parsed(base, SYNTH_QUERY)
            work = copy(base, tmp / f"n{size}-work")
            say(f"{size} notes: peak memory, cold then warm")
            largest["memory"] = bench.memory(work)
            say(f"{size} notes: an unchanged vault")
            largest["unchanged"] = bench.unchanged(base, work)
            shutil.rmtree(work)
            say(f"{size} notes: 1% changed")
            largest["changed"] = bench.changed(base)
            shutil.rmtree(base)

    # -- the report ----------------------------------------------------------------
    lines.append(head)
    lines.append("")
    lines.append("Cold runs (no .graph/): seconds are the best of the rounds; ratios best/best (median of rounds)")
    lines.append(
        f"{'vault':<22} {'notes':>7} {'floor s':>8} {'health/floor':>13} {'search/health':>22} "
        f"{'health/seed':>22} {'peak MB h/s/seed':>17} {'ms/note':>8} {'KB/note':>8}"
    )
    for res in results:
        r = res.runs
        h_seed = ratio(r["health"], r["seed"])
        peaks = f"{peak(r['health']):.0f}/{peak(r['search']):.0f}/" + (f"{peak(r['seed']):.0f}" if r["seed"] else "-")
        lines.append(
            f"{res.label:<22} {res.notes:>7} {best(r['floor']):>8.3f} {best(r['health']) / best(r['floor']):>13.2f} "
            f"{fmt(ratio(r['search'], r['health'])):>22} {fmt(h_seed):>22} {peaks:>17} "
            f"{best(r['health']) / res.notes * 1000:>8.3f} {peak(r['health']) * 1024 / res.notes:>8.1f}"
        )
    lines.append("(ms/note: cold health seconds per note; KB/note: cold health peak RSS per note)")
    lines.append("")
    lines.append(
        "FTS5 floor: the read floor, then every note's name and text inserted into an FTS5 table of the"
        " index's columns and tokenizer by one process (bench/common.py FTS_FLOOR). A cold health that"
        " fills the search columns (target 2: the first search after it parses nothing) is never faster."
    )
    lines.append(f"{'vault':<22} {'fts floor s':>12} {'/ read floor':>13} {'/ seed':>22} {'health / fts floor':>19}")
    for res in results:
        r = res.runs
        lines.append(
            f"{res.label:<22} {best(r['fts floor']):>12.3f} {best(r['fts floor']) / best(r['floor']):>13.2f} "
            f"{fmt(ratio(r['fts floor'], r['seed'])):>22} {best(r['health']) / best(r['fts floor']):>19.2f}"
        )

    # targets: 1 and 2
    real_res = results[0] if real.is_dir() else None
    synth = [r for r in results if r is not real_res]
    big = synth[-1]
    name = real.name
    if real_res is not None:
        rr = real_res.runs
        pair = ratio(rr["health"], rr["seed"])
        targets.append(Target(f"1. cold health / seed, {name}", pair and pair[0], 1.0))
        targets.append(Target(f"1. cold health / read floor, {name}", best(rr["health"]) / best(rr["floor"]), 5.0))
    else:
        targets.append(Target(f"1. cold health / seed, {name}", None, 1.0))
        targets.append(Target(f"1. cold health / read floor, {name}", None, 5.0))
    pair = ratio(big.runs["health"], big.runs["seed"])
    note = "" if sizes[-1] == 100000 else " (target set at 100k)"
    targets.append(Target(f"1. cold health / seed, {big.label}{note}", pair and pair[0], 0.8))
    for res in ([real_res] if real_res else []) + [big]:
        pair = ratio(res.runs["search"], res.runs["health"])
        targets.append(Target(f"2. cold search / cold health, {res.label}", pair and pair[0], 1.2))
    for label, (after_health, after_search) in ((name, real_parsed), (big.label, largest["parsed"])):
        for what, value in (("search after a health", after_health), ("health after a search", after_search)):
            shown = "n/a (no index.parsed)" if value is None else str(value)
            targets.append(Target(f"2. index.parsed of the first {what}, {label}", value, 0, shown, "=="))

    # 3: memory
    lines.append("")
    lines.append(f"Peak memory at {big.label} (MB; cold: no .graph/, warm: after a health and a search)")
    lines.append(f"{'command':<28} {'cold':>7} {'warm':>7} {'target':>8}")
    for cname, row in largest["memory"].items():
        cold, warm = row["cold"], row["warm"]
        values = [x.peak_mb for x in (cold, warm) if x is not None]
        shown = "-" if cold is None else f"{cold.peak_mb:.0f}"
        shown_w = "-" if warm is None else f"{warm.peak_mb:.0f}"
        lines.append(f"{cname:<28} {shown:>7} {shown_w:>7} {'< ' + str(row['limit']):>8}")
        value = max(values) if values else None
        targets.append(
            Target(
                f"3. peak MB, {cname}",
                value,
                row["limit"],
                "error" if value is None else f"{value:.0f} MB",
                "<",
                row["error"],
            )
        )

    # 4: unchanged vault
    runs = largest["unchanged"]
    stat = runs["stat floor"]
    lines.append("")
    lines.append(f"Unchanged vault at {big.label}: stat floor {best(stat):.3f} s; ratios best/best (median of rounds)")
    limits = {n: 1.5 for n in ("graph.py health", "search.py", "check.py", "session.py start")}
    limits.update({n: 2.0 for n in WRITERS})
    for cname, limit in limits.items():
        pair = ratio(runs.get(cname, []), stat)
        error = bench.errors.get(cname, "")
        lines.append(f"{cname:<28} {'error' if error else fmt(pair):>24}  target <= {limit}x")
        targets.append(Target(f"4. {cname} / stat floor, unchanged", pair and pair[0], limit, error=error))

    # 5: 1% changed
    floors, healths, count = largest["changed"]
    pair = ratio(healths, floors)
    lines.append("")
    lines.append(f"1% changed ({count} notes) at {big.label}: health / read floor {fmt(pair)}")
    targets.append(Target(f"5. 1% changed health / read floor, {big.label}", pair and pair[0], 1.5))

    # 6: scaling
    lines.append("")
    if len(synth) >= 2:
        low = next((r for r in synth[:-1] if r.notes >= 10000), synth[0])
        t_ratio = (best(big.runs["health"]) / big.notes) / (best(low.runs["health"]) / low.notes)
        m_ratio = (peak(big.runs["health"]) / big.notes) / (peak(low.runs["health"]) / low.notes)
        lines.append(
            f"Scaling, cold health per note, {big.label} over {low.label}: time {t_ratio:.2f}, memory {m_ratio:.2f}"
            + ("" if low.notes >= 10000 else " (reference under 10k notes: start-up weighs on it)")
        )
        targets.append(Target(f"6. time per note, {big.notes} / {low.notes}", t_ratio, 1.15))
        targets.append(Target(f"6. peak MB per note, {big.notes} / {low.notes}", m_ratio, 1.15))
    else:
        lines.append("Scaling: one size only (n/a)")
        targets.append(Target("6. time per note, largest / reference", None, 1.15))
        targets.append(Target("6. peak MB per note, largest / reference", None, 1.15))

    lines.append("")
    lines.append("Targets")
    for t in targets:
        shown = t.shown or ("n/a" if t.value is None else f"{t.value:.2f}x")
        limit = f"{t.op} {t.limit:g}" + ("" if t.op == "==" else (" MB" if t.label.startswith("3.") else "x"))
        lines.append(f"  {t.verdict():<5} {t.label:<66} {shown:>22}  ({limit})")
    for t in targets:
        if t.error:
            lines.append(f"  error in {t.label}: {t.error}")
    print("\n".join(lines))
    return 1 if any(t.verdict() == "FAIL" for t in targets) else 0


if __name__ == "__main__":
    sys.exit(main())
