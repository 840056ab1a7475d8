"""Shared pieces of the benchmarks in bench/ (standard library only).

* ``FLOOR``: the floor every ratio is measured against, a fresh Python
  process that walks the vault (dot folders skipped) and reads and
  UTF-8-decodes every note;
* ``STAT_FLOOR``: the same walk, ``os.stat`` of every note instead of a read
  (the floor of a command that only checks that nothing changed);
* ``bench_env``: the environment of the timed processes (bytecode cached as
  in a normal install, in a temporary folder);
* ``run``: one timed fresh process, with its own peak memory (RSS) from
  ``os.wait4``;
* ``change_notes``: append a line to 1% of the notes (the "1% changed" run).

Every timed process is ``sys.executable``, never a ``python3`` on PATH.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GRAPH = REPO / "skills" / "autograph" / "scripts" / "graph.py"

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

STAT_FLOOR = r"""
import os, sys
root = sys.argv[1]
count = 0
for folder, dirs, files in os.walk(root):
    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    for name in sorted(files):
        if name.endswith(".md") and not name.startswith("."):
            os.stat(os.path.join(folder, name))
            count += 1
print(count)
"""


# The search columns' floor: the read floor, then every note's name and text
# inserted into an FTS5 table of the index's columns and tokenizer, in one
# transaction with automerge off (as the index's bulk build), by this one
# process (one SQLite writer).  argv: the vault, the table's column list, the
# database file to create (removed first).  No cold ``health`` that fills the
# search columns, so that the first search after it parses nothing, can run
# in less than this.
FTS_FLOOR = r"""
import os, sqlite3, sys
root, columns, db = sys.argv[1:4]
for suffix in ("", "-journal", "-wal", "-shm"):
    if os.path.exists(db + suffix):
        os.remove(db + suffix)
con = sqlite3.connect(db)
con.execute("PRAGMA journal_mode = WAL")
con.execute("PRAGMA synchronous = OFF")
con.execute(f"CREATE VIRTUAL TABLE fts USING fts5({columns}, tokenize='unicode61 remove_diacritics 2')")
con.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 0)")


def notes():
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                with open(os.path.join(folder, name), "rb") as handle:
                    yield name[:-3], handle.read().decode("utf-8", "replace")


with con:
    con.executemany("INSERT INTO fts (title, body) VALUES (?, ?)", notes())
print(con.execute("SELECT count(*) FROM fts").fetchone()[0])
"""


def bench_env(tmp: str | Path) -> dict[str, str]:
    """The environment of the timed processes.

    Bytecode is cached as in a normal install (some environments set
    PYTHONDONTWRITEBYTECODE); the cache lives in ``tmp``.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
    return env


@dataclass
class Run:
    seconds: float  # wall clock
    cpu: float  # user + system of the process
    peak_mb: float  # peak resident set size of the process


def run(command: list[str], env: dict[str, str] | None = None) -> Run:
    """Run ``command`` in a fresh process; its wall time, CPU time and peak RSS.

    ``os.wait4`` reports the resources of exactly this child, so runs do not
    mix as ``getrusage(RUSAGE_CHILDREN)`` would (its maxrss is the largest of
    all children so far).
    """
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            message = err.read().decode("utf-8", "replace")
            raise RuntimeError(f"{command} exited {proc.returncode}:\n{message}")
    # ru_maxrss: kilobytes on Linux, bytes on macOS
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / scale)


def notes_of(vault: str | Path) -> list[Path]:
    """Every note of the vault as the floor sees them, in a stable order."""
    found = []
    for folder, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                found.append(Path(folder) / name)
    return found


def change_notes(notes: list[Path], round_no: int, share: float = 0.01) -> int:
    """Append a line to ``share`` of ``notes`` (spread evenly, a different
    set each round, at least one note); the number of notes changed."""
    if not notes:
        return 0
    step = max(1, round(1 / share))
    chosen = notes[round_no % step :: step] or notes[:1]
    for path in chosen:
        with open(path, "a", encoding="utf-8", newline="\n") as handle:
            handle.write(f"\nEdited in benchmark round {round_no}.\n")
    return len(chosen)


def commit() -> str:
    """The checked-out commit (and '+dirty' when scripts/ has edits)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "skills/autograph/scripts"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def writable_copy(source: Path, dest: Path) -> Path:
    """Copy a (possibly read-only) vault or fixture tree to ``dest`` and make
    the copy writable; ``.graph/`` is left out (a run of the README's main
    command leaves one in the example vault) and symlinks stay symlinks.
    The tests' ``copy_tree`` and bench/load.py's copies both use it."""
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".graph"))
    for folder, dirs, files in os.walk(dest):
        for name in dirs + files:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
    Path(dest).chmod(Path(dest).stat().st_mode | stat.S_IWUSR)
    return Path(dest)
