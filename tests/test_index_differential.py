"""Differential test: the scripts of today against the scripts of commit 245566c.

245566c is the last commit before the refactor of how notes are indexed
(the note cache behind ``graph.py health``, the search index).  A refactor of
the index may make runs faster; it must not change what they report.  So
every vault is copied twice, the baseline scripts (``git archive 245566c``)
run on one copy and the current scripts on the other, the same commands in
the same order, and their JSON must be equal once a short list of volatile
keys is removed (``VOLATILE`` and ``REFACTOR_KEYS`` below):

* ``graph.py health VAULT --json``, cold (no ``.graph/``), then warm (its
  caches reused); the warm run must also equal the cold one of its version;
* ``search.py --json QUERY --limit 10`` for a few queries per vault (a word,
  several words, accents, an exact note name, an odd token, nothing found),
  and ``search.py --identity FIELD=VALUE``: every hit and every field of it,
  floats rounded to 6 places;
* ``dedup.py VAULT --json`` (a dry run);
* after the same change in both copies (a new ``[[Some Missing Note]]`` in
  three notes, one note renamed, one deleted): health and search again, the
  incremental path of both indexes.

Vaults: the example vault, every corpus of ``../shared/corpora`` and a
synthetic vault of 10,000 notes (``bench/synth_vault.py``, seeded).  The
baseline needs git and the commit (a shallow clone lacks it): without them
the module is skipped, or fails under ``AUTOGRAPH_REQUIRE_CORPORA=1`` as a
missing corpus does.  The corpora are never written: only their copies.
"""

from __future__ import annotations

import atexit
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import CORPORA, CORPUS_NAMES, EXAMPLE_VAULT, REPO, SCRIPTS, copy_tree, require

pytestmark = pytest.mark.corpus

BASELINE_COMMIT = "245566c"
SYNTHETIC = "synthetic-10k"
SYNTHETIC_NOTES = 10_000
SYNTHETIC_SEED = 245566
TODAY = "2026-01-01"  # dedup.py --today: the date of History lines
TIMEOUT = 300
SHOWN = 12  # differing keys shown per failed comparison

# Keys removed before comparing, chosen from the actual output of each command:
#
# * VOLATILE, by their place in the object: clock readings that differ from
#   one run to the next whatever the code (health's ``previous.time``, the
#   timestamp of the last history line, and ``recall.today``, the date,
#   which a run across midnight changes).
# * REFACTOR_KEYS, at any depth: the subject of the refactor, which may
#   change or appear: search's ``index`` object (index path, notes reread,
#   rebuilt, memory...), and ``cache``/``timings``, which no command prints
#   at 245566c but a faster index may add.
#
# Absolute paths of the temporary copies (health's and dedup's ``vault``,
# dedup's ``schema`` in the example vault) are not removed: each side's
# temporary folder is replaced by "<TMP>" in every string, so both sides
# read the same.
# Everything else (score, penalties, broken links, orphans, dead ends,
# ambiguous links, anchors, frontmatter errors, memory sections, counts,
# hits with their snippets, dedup's groups) must be equal.
VOLATILE = {("previous", "time"), ("recall", "today")}
# top-level keys a later issue added to health's report (issue 30: a sync
# client's conflict copies, tested in test_conflict_copies): absent at 245566c
ADDED_KEYS = {"conflict_copies"}
REFACTOR_KEYS = {"index", "cache", "timings"}

NOTHING = "zqxjv vjqxz"  # a query that finds nothing in any vault
ODD = 'POL-358 "x* NEAR('  # every word quoted: a safe query
QUERIES = {
    "example": ["atlas", "routing pilot", "Lena Fischer", "Átlas kíckoff", ODD, NOTHING],
    "obsidian-hub": ["dataview", "daily notes template", "sr-campelo", "Légifrance intégration", ODD, NOTHING],
    "dendron-site": ["schema", "publish site config", "lookup", "Fayçal Müller", ODD, NOTHING],
    "kepano-obsidian": ["template", "breath of the wild", "Steph Ango", "témplate café", ODD, NOTHING],
    "tasks-demo": ["recurring", "due date", "limit 25", "Ünïcödé émoji", ODD, NOTHING],
    "tasks-docs": ["backlinks", "task formats", "Editing Dates", "fïlter quéries", ODD, NOTHING],
    SYNTHETIC: ["garden", "garden river", "Übersicht", "Café Crème 読書ノート", ODD, NOTHING],
}
DEFAULT_QUERIES = ["note", "link to note", "café", ODD, NOTHING]  # a corpus added to the folder later
IDENTITY = {
    "example": "email=Ben.Carter@Example.org",
    "kepano-obsidian": "twitter=@kepano",
    "dendron-site": "twitter=johndoetwit",
}
DEFAULT_IDENTITY = "email=nobody@example.com"

MISSING_LINK = "\nSee also [[Some Missing Note]] (differential test).\n"
RENAMED = "Differential Renamed Note"


def _missing(message: str):
    """Skip, or fail under CI (``AUTOGRAPH_REQUIRE_CORPORA=1``)."""
    if os.environ.get("AUTOGRAPH_REQUIRE_CORPORA") == "1":
        pytest.fail(message)
    pytest.skip(message)


def _corpora() -> list[str]:
    """Every corpus folder: the known ones (a missing one fails or skips in
    the test) and any other folder of the corpora directory."""
    found = {p.name for p in CORPORA.iterdir() if p.is_dir()} if CORPORA.is_dir() else set()
    return sorted(set(CORPUS_NAMES) | found)


VAULTS = ["example", *_corpora(), SYNTHETIC]


# ---------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def baseline_scripts(tmp_path_factory) -> Path:
    """The scripts folder of commit 245566c, extracted with ``git archive``."""
    if shutil.which("git") is None:
        _missing(f"git is not installed: the baseline scripts (commit {BASELINE_COMMIT}) cannot be read")

    def has_commit() -> bool:
        argv = ["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{BASELINE_COMMIT}^{{commit}}"]
        return subprocess.run(argv, capture_output=True, text=True).returncode == 0

    if not has_commit():  # a shallow clone: its history is fetched, once, from where it was cloned
        subprocess.run(["git", "-C", str(REPO), "fetch", "--quiet", "--unshallow"], capture_output=True, timeout=300)
    if not has_commit():
        _missing(f"commit {BASELINE_COMMIT} is not in the repository at {REPO} (a shallow clone?): no baseline")
    out = tmp_path_factory.mktemp("baseline")
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", BASELINE_COMMIT, "skills/autograph"], capture_output=True, timeout=120
    )
    if archive.returncode != 0:
        _missing(f"git archive {BASELINE_COMMIT} failed: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True, timeout=120)
    scripts = out / "skills" / "autograph" / "scripts"
    assert (scripts / "graph.py").is_file(), f"no graph.py in the archive of {BASELINE_COMMIT}"
    return scripts


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """``scratch(name)``: a new folder for vault copies, in memory (tmpfs)
    when there is room for them, else on disk.  A copy of the large vaults
    takes seconds on a busy disk and a fraction of a second in memory, but a
    container's /dev/shm may hold only 64 MB, less than one side of the
    synthetic vault with its search index."""
    shm = Path("/dev/shm")
    try:
        room = shutil.disk_usage(shm).free if os.access(shm, os.W_OK | os.X_OK) else 0
    except OSError:
        room = 0
    if room < 2 * 1024**3:
        yield tmp_path_factory.mktemp
        return
    base = Path(tempfile.mkdtemp(dir=shm, prefix="autograph-differential-"))
    atexit.register(shutil.rmtree, base, True)  # even if the session is cut short
    yield lambda name: Path(tempfile.mkdtemp(dir=base, prefix=f"{name}-"))
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def synthetic_vault(scratch) -> Path:
    """A vault of 10,000 notes, the same for every run (seeded)."""
    out = scratch("synthetic") / "vault"
    subprocess.run(
        [sys.executable, str(REPO / "bench" / "synth_vault.py"), str(SYNTHETIC_NOTES), str(out)]
        + ["--seed", str(SYNTHETIC_SEED)],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    return out


def _source(name: str, request) -> Path:
    if name == "example":
        return require(EXAMPLE_VAULT)
    if name == SYNTHETIC:
        return request.getfixturevalue("synthetic_vault")
    return require(CORPORA / name)


# ---------------------------------------------------------------------------
# Running one command on both sides


class Side:
    """One version of the scripts and its own copy of the vault and HOME."""

    def __init__(self, label: str, scripts: Path, root: Path, source: Path):
        self.label = label
        self.scripts = scripts
        self.root = root
        self.vault = copy_tree(source, root / "vault")
        home = root / "home"
        home.mkdir()
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("AUTOGRAPH_", "CLAUDE", "CODEX_", "XDG_")) and key != "PYTHONPATH"
        }
        self.env["HOME"] = str(home)
        # the temporary folder as the scripts may print it, longest first
        self.prefixes = sorted({str(root), str(root.resolve())}, key=len, reverse=True)

    def run(self, script: str, args: list[str]) -> subprocess.CompletedProcess:
        argv = [str(self.vault) if arg == "VAULT" else arg for arg in args]
        return subprocess.run(
            [sys.executable, str(self.scripts / script), *argv],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=self.env,
            cwd=self.root,
            timeout=TIMEOUT,
        )

    def normalise(self, value, path: tuple = ()):
        """``value`` without volatile keys, this side's folder as "<TMP>"
        and floats rounded to 6 places."""
        if isinstance(value, dict):
            return {
                key: self.normalise(item, (*path, key))
                for key, item in value.items()
                if key not in REFACTOR_KEYS and (*path, key) not in VOLATILE and not (not path and key in ADDED_KEYS)
            }
        if isinstance(value, list):
            return [self.normalise(item, path) for item in value]
        if isinstance(value, str):
            for prefix in self.prefixes:
                value = value.replace(prefix, "<TMP>")
            return value
        if isinstance(value, float):
            return round(value, 6)
        return value


def _short(value, width: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= width else text[: width - 3] + "..."


def differences(old, new, path: str = "$", out: list[str] | None = None) -> list[str]:
    """The first places where ``old`` (baseline) and ``new`` (current) differ."""
    out = [] if out is None else out
    if len(out) >= SHOWN:
        return out
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            if key not in new:
                out.append(f"{path}.{key}: only in baseline: {_short(old[key])}")
            elif key not in old:
                out.append(f"{path}.{key}: only in current: {_short(new[key])}")
            else:
                differences(old[key], new[key], f"{path}.{key}", out)
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            # items gone and added, not the shifted items after them
            out.append(f"{path}: {len(old)} items in baseline, {len(new)} in current")
            olds = [json.dumps(x, sort_keys=True) for x in old]
            news = [json.dumps(x, sort_keys=True) for x in new]
            gone = [x for x in olds if x not in news][:4]
            added = [x for x in news if x not in olds][:4]
            out += [f"{path}: only in baseline: {_short(json.loads(x))}" for x in gone]
            out += [f"{path}: only in current: {_short(json.loads(x))}" for x in added]
            if gone or added:
                return out[:SHOWN]
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            differences(a, b, f"{path}[{i}]", out)
    elif old != new or type(old) is not type(new):
        out.append(f"{path}: baseline {_short(old)} != current {_short(new)}")
    return out[:SHOWN]


class Differential:
    """Runs each command on both sides at once (two cores) and collects
    every difference, so one failure shows them all."""

    def __init__(self, name: str, base: Side, cur: Side):
        self.name = name
        self.base = base
        self.cur = cur
        self.problems: list[str] = []
        self.pool = ThreadPoolExecutor(max_workers=2)

    def run(self, step: str, script: str, args: list[str], ok: set[int] = frozenset({0})):
        """Run ``script args`` on both sides; their normalised JSON, after
        recording any difference (None when a side printed no JSON)."""
        futures = [self.pool.submit(side.run, script, args) for side in (self.base, self.cur)]
        procs = [f.result() for f in futures]
        shown = " ".join(args).replace("VAULT", f"<{self.name}>")
        label = f"[{self.name}] {step}: {script} {shown}"
        old, new = procs
        if old.returncode not in ok:
            self.problems.append(f"{label}\n  baseline exit {old.returncode}: {old.stderr.strip()[-800:]}")
            return None
        if new.returncode != old.returncode:
            self.problems.append(
                f"{label}\n  exit {old.returncode} in baseline, {new.returncode} in current\n"
                f"  current stderr: {new.stderr.strip()[-800:]}"
            )
            return None
        parsed = []
        for side, proc in zip((self.base, self.cur), procs, strict=True):
            try:
                parsed.append(side.normalise(json.loads(proc.stdout)))
            except json.JSONDecodeError as error:
                self.problems.append(f"{label}\n  {side.label} printed no JSON ({error}): {proc.stdout[:300]!r}")
                return None
        self.compare(label, *parsed)
        return parsed

    def compare(self, label: str, old, new, names=("baseline", "current")) -> None:
        if old == new:
            return
        found = differences(old, new)
        if isinstance(old, dict) and isinstance(new, dict) and "hits" in old and "hits" in new:
            # search: the order of the hits first, the rest below
            paths = [[hit.get("path") for hit in side["hits"]] for side in (old, new)]
            if paths[0] != paths[1]:
                found = [f"hits: baseline {_short(paths[0], 600)}", f"hits: current  {_short(paths[1], 600)}", *found]
        if names != ("baseline", "current"):
            found = [line.replace("baseline", names[0]).replace("current", names[1]) for line in found]
        diff = difflib.unified_diff(
            json.dumps(old, indent=1, sort_keys=True, ensure_ascii=False).splitlines(),
            json.dumps(new, indent=1, sort_keys=True, ensure_ascii=False).splitlines(),
            names[0],
            names[1],
            n=1,
            lineterm="",
        )
        excerpt = list(diff)[:40]
        where = "\n    ".join(found)
        lines = "\n    ".join(excerpt)
        self.problems.append(f"{label}\n  differs at:\n    {where}\n  diff (first lines):\n    {lines}")

    def close(self) -> None:
        self.pool.shutdown()


# ---------------------------------------------------------------------------
# The change applied to both copies


def _notes(vault: Path) -> list[str]:
    """The vault's notes (outside dot folders), sorted, as relative paths."""
    notes = []
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".md") and not name.startswith("."):
                notes.append(Path(folder, name).relative_to(vault).as_posix())
    return sorted(notes)


def change(vault: Path) -> None:
    """Three notes gain a link to a missing note, one is renamed, one deleted:
    the same notes on both sides (chosen from the sorted list)."""
    notes = _notes(vault)
    n = len(notes)
    assert n >= 6, f"too few notes to change: {n}"
    for k in (1, 2, 3):
        with open(vault / notes[k * n // 6], "ab") as handle:
            handle.write(MISSING_LINK.encode("utf-8"))
    moved = vault / notes[4 * n // 6]
    os.rename(moved, moved.with_name(f"{RENAMED}.md"))
    os.remove(vault / notes[5 * n // 6])


# ---------------------------------------------------------------------------
# The test


def health(d: Differential, step: str):
    return d.run(step, "graph.py", ["health", "VAULT", "--json", "--quiet"])


def search(d: Differential, step: str, query: str):
    return d.run(step, "search.py", ["--vault", "VAULT", "--json", "--quiet", "--limit", "10", "--", query])


@pytest.mark.parametrize("name", VAULTS)
def test_same_results_as_baseline(name, baseline_scripts, scratch, request):
    source = _source(name, request)
    root = scratch(f"diff-{name}")
    base = Side("baseline", baseline_scripts, root / "baseline", source)
    cur = Side("current", SCRIPTS, root / "current", source)
    d = Differential(name, base, cur)
    try:
        cold = health(d, "health, cold")
        warm = health(d, "health, warm")
        for side, first, second in zip(("baseline", "current"), cold or (), warm or (), strict=False):
            # the warm run's caches give the cold run's report (but for the
            # history line of the cold run, under "previous")
            first = {k: v for k, v in first.items() if k != "previous"}
            second = {k: v for k, v in second.items() if k != "previous"}
            d.compare(f"[{name}] health: cold and warm runs of {side}", first, second, ("cold", "warm"))

        queries = QUERIES.get(name, DEFAULT_QUERIES)
        for query in queries:
            search(d, "search", query)
        identity = IDENTITY.get(name, DEFAULT_IDENTITY)
        d.run("identity", "search.py", ["--vault", "VAULT", "--json", "--quiet", "--identity", identity])
        d.run("dedup", "dedup.py", ["VAULT", "--json", "--quiet", "--today", TODAY], ok={0, 1})

        change(base.vault)
        change(cur.vault)
        health(d, "health after the change")
        for query in ("Some Missing Note", RENAMED, queries[0]):
            search(d, "search after the change", query)
    finally:
        d.close()

    if d.problems:
        pytest.fail(
            f"{len(d.problems)} difference(s) from commit {BASELINE_COMMIT} on {name}:\n\n" + "\n\n".join(d.problems),
            pytrace=False,
        )
    shutil.rmtree(root, ignore_errors=True)  # space: two copies and their indexes (kept when the test fails)
