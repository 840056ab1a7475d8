#!/usr/bin/env python3
"""Load: agents, cron, a person, a sync client and kill -9 on one vault, against a ledger.

A copy of a vault (the example vault, ``examples/vault``, and obsidian-hub,
``corpora/obsidian-hub`` of the shared test data, found as ``tests/conftest.py``
finds it: ``AUTOGRAPH_SHARED``, else ``../shared``) is put in a temporary
folder (``.graph/`` left out, made writable; a vault without a
``schema.json`` gets the example vault's, so that person cards have a type
and a folder).  It is brought to a vault in use first, untimed: the index
built (``graph.py health``), ``enforce.py --apply``, ``engine.py decay``,
``moc.py generate``.  Then, for ``--minutes``, concurrent loops (threads, each
driving fresh ``sys.executable`` processes in the environment of
``common.bench_env``) use it as real use does:

* ``--agents`` agents record facts about a shared pool of people (names,
  emails) with ``card.py remember`` (retried with ``description`` and
  ``status`` when a new card needs them), ``new``, ``set`` and ``log`` (on the
  path ``search.py --identity`` gives, as SKILL.md says to look up first) and
  ``batch`` (remember and log lines); each fact carries a unique token, and
  every fact a command reports written (exit 0, or the line's result in a
  batch) goes into the ledger: the person's email -> the token that must
  be somewhere in the vault at the end;
* cron: ``engine.py decay``, ``graph.py health``, ``moc.py generate``,
  ``dedup.py --apply``, ``enforce.py --apply``, in a loop, at their own
  default ``--wait`` (0: a busy vault skips the run, as a cron line does;
  ``--cron-wait`` to change it);
* a person appends a line with a unique token to a random note (never to a
  Map of Content autograph generates, whose edits SKILL.md says the next run
  replaces, nor to a conflict copy), by ``O_APPEND`` on the file as an editor
  saving in place does, and now and then renames a note in its folder (a
  shell rename: links to it break, as they would);
* a sync client now and then puts a conflict copy beside a person card
  (``Name.sync-conflict-YYYYMMDD-HHMMSS-ABCDEFG.md``, ``Name (conflicted copy
  2026-12-01 120000).md``, ``Name (conflict 2026-12-01).md``), its bytes plus
  a line "from the other device";
* ``--kills`` times, spread over the run, kill -9 of a random running
  autograph writer (a card.py command or a cron command that writes notes,
  running for at least 0.1 s); the next writer rolls its run back by itself.

The actors' choices come from ``random.Random`` seeded by ``--seed`` (one per
actor); how the processes interleave is up to the machine.  At the end
``undo.py recover`` runs once, then the ledger is checked against the vault:
every file under it (``.trash/`` included, ``.graph/`` not) is scanned for the
tokens.  Printed, one table per vault, with the targets beside:

* facts lost: a ledger token found in no file;
* person lines lost: a person's line found in no file;
* conflict copies chosen as cards: an agent's command that reported a
  conflict copy as the card it wrote (``path``/``written`` in its JSON), a
  ``dedup.py --apply`` merge whose ``canonical`` is a copy (its ``--json``),
  and a fact found only in conflict copies (written into one, or the card
  lost it);
* duplicates: ledger identities (emails) that more than one live card holds
  in its frontmatter (live: outside ``.trash/``, not a conflict copy);
  identities with no live card at all are printed beside (report only);
* lock waits of the agents' writing commands (default ``--wait`` 10):
  median, p99 (nearest rank), and how many gave up (exit 3 with "another
  autograph run is writing" on stderr).

How a lock wait is measured: each writing command runs under a small
launcher (``python -c``) that imports the library's ``autograph.write.lock``,
wraps its ``_take`` (the one non-blocking attempt at the writer lock that
``lock.hold`` repeats every 50 ms until its ``--wait`` runs out), and runs the
script with ``runpy`` as ``python script.py`` would.  A command's wait is the
time from its first refused attempt to the attempt that got the lock (0 when
the first attempt got it), summed over the times it took the lock; the
launcher writes it to a file as the process ends (a killed command leaves
none and is left out).  This counts exactly the time spent waiting for
another writer, not Python's start-up, the planning before the lock, or the
write itself, which a difference of wall times (or of a run's journal
``started`` and the process start) would mix in.  When the library has no
``lock._take`` (it was renamed), waits print as n/a and the gave-up count,
taken from exit codes and stderr, stands alone.

Targets: 0, 0, 0, 0, p99 lock wait <= 2 s, 0 gave up.  Exit 1 when a data
target (facts, person lines, copies chosen, duplicates) fails in any vault;
the lock-wait target is printed PASS/FAIL and does not change the exit code.
A missing obsidian-hub is skipped with a notice, or exits 2 when
``AUTOGRAPH_REQUIRE_CORPORA=1``.

Usage: python3 bench/load.py [--minutes 2] [--agents 6] [--kills 10] [--seed 1]
           [--vault example|obsidian-hub|PATH ...] [--json] [--keep DIR]
Not in CI as a whole (minutes of whole processes); tests/test_load_short.py
runs it for a few seconds on the example vault.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, bench_env, commit, writable_copy  # noqa: E402

SCRIPTS = REPO / "skills" / "autograph" / "scripts"
SHARED = Path(os.environ.get("AUTOGRAPH_SHARED", REPO.parent / "shared"))
CORPORA = SHARED / "corpora"
EXAMPLE = REPO / "examples" / "vault"
WAIT_TARGET = 2.0  # s, p99 of the lock waits
GAVE_UP = "another autograph run is writing"
KILL_AFTER = 0.1  # s a writer runs before it may be killed

FIRST = ["Ilsa", "Tobin", "Maren", "Quentin", "Odile", "Rafe", "Selma", "Caspar", "Wren", "Ansel", "Liesl", "Bram"]
LAST = ["Quarrington", "Vellacott", "Ashdown", "Pemberly", "Halloran", "Stroud", "Tremaine", "Kilbride", "Marwood"]
FIELDS = [("role", "Role"), ("team", "Team"), ("city", "City")]

# The forms of conflict copies the sync client makes, and how the check tells a copy by its name
# (any client's: the product's own table is in autograph/read/conflicts.py).
COPY_NAME = re.compile(
    r"\.sync-conflict-\d{8}-\d{6}(?:-[0-9A-Z]{7})?\.md$|\((?:[^()]*'s )?[Cc]onflicted [Cc]opy[^()]*\)\.md$"
    r"|\([Cc]onflict \d[^()]*\)\.md$|_conflict-\d{8}-\d{6}\.md$"
)

# Runs a script as `python script.py ARGS` would, timing each wait for the writer lock (docstring).
LAUNCHER = r"""
import json, os, runpy, sys, time
script, out = sys.argv[1], sys.argv[2]
sys.argv = [script] + sys.argv[3:]
sys.path.insert(0, os.path.dirname(script))
waits, pending = [], [None]
try:
    from autograph.write import lock as _lock
    _original = _lock._take
except (ImportError, AttributeError):
    measured = False
else:
    measured = True
    def _take(*args, **kwargs):
        began = time.monotonic()
        claim = _original(*args, **kwargs)
        if claim is None:
            if pending[0] is None:
                pending[0] = began
        else:
            waits.append(time.monotonic() - pending[0] if pending[0] is not None else 0.0)
            pending[0] = None
        return claim
    _lock._take = _take
def _record():
    if pending[0] is not None:
        waits.append(time.monotonic() - pending[0])
        pending[0] = None
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"measured": measured, "waits": waits}, handle)
_exit = os._exit
def _leave(code):  # a script that leaves by cli.exit_now (no teardown): its waits are written first
    _record()
    _exit(code)
os._exit = _leave
try:
    runpy.run_path(script, run_name="__main__")
finally:
    _record()
"""


def is_copy(path: str) -> bool:
    """Whether a (vault) path is named as a sync conflict copy."""
    return COPY_NAME.search(path) is not None


# ---------------------------------------------------------------------------
# The vault copy


def find_vault(name: str) -> Path | None:
    """The folder ``--vault NAME`` names: ``example``, a corpus of the shared
    data, or a path; None when a corpus is missing."""
    if name == "example":
        return EXAMPLE
    for candidate in (CORPORA / name, Path(name)):
        if candidate.is_dir():
            return candidate
    return None


def copy_vault(source: Path, dest: Path) -> Path:
    """A writable copy of ``source`` at ``dest`` (``.graph/`` left out), with
    the example vault's schema when it has none."""
    writable_copy(source, dest)
    if not (dest / "schema.json").exists():
        shutil.copyfile(EXAMPLE / "schema.json", dest / "schema.json")
    return dest


def notes(vault: Path) -> list[str]:
    """The vault's notes (vault paths, dot folders skipped), sorted."""
    found = []
    for folder, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                found.append(os.path.relpath(os.path.join(folder, name), vault).replace(os.sep, "/"))
    return found


def head(path: Path, size: int = 4096) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def frontmatter(text: str) -> str:
    """The frontmatter block of a note's text ('' when it has none)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return ""
    for n, line in enumerate(lines[1:], 1):
        if line.strip() in ("---", "..."):
            return "\n".join(lines[1:n])
    return ""


# ---------------------------------------------------------------------------
# Running commands


@dataclass
class Cmd:
    """One command an actor ran, as the ledger keeps it."""

    actor: str
    what: str  # e.g. "card.py remember"
    rc: int
    wall: float
    waits: list[float] | None  # None: not measured (killed, or no lock._take)
    default_wait: float
    writer: bool
    stdout: str = ""
    stderr: str = ""

    @property
    def killed(self) -> bool:
        return self.rc == -signal.SIGKILL

    @property
    def gave_up(self) -> bool:
        return self.rc == 3 and GAVE_UP in self.stderr

    def data(self):
        try:
            return json.loads(self.stdout)
        except ValueError:
            return None


@dataclass
class Ledger:
    """What the actors did and what must be in the vault at the end."""

    facts: list[dict] = field(default_factory=list)  # {token, email, kind, command}
    person_lines: list[dict] = field(default_factory=list)  # {token, path}
    renames: list[tuple[str, str]] = field(default_factory=list)
    copies: list[str] = field(default_factory=list)
    chosen: list[dict] = field(default_factory=list)  # {why, path, command}
    commands: list[Cmd] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, item) -> None:
        with self.lock:
            getattr(self, kind).append(item)


class Runner:
    """Runs the actors' commands on one vault; knows which writers run, for the killer."""

    def __init__(self, vault: Path, tmp: Path, ledger: Ledger):
        self.vault = vault
        self.env = bench_env(tmp)
        self.waits_dir = tmp / "waits"
        self.waits_dir.mkdir()
        self.ledger = ledger
        self.running: dict[int, tuple[subprocess.Popen, str, float]] = {}
        self.guard = threading.Lock()

    def call(
        self,
        actor: str,
        args: list[str],
        stdin: str | None = None,
        writer: bool = True,
        default_wait: float = 10.0,
        record: bool = True,
    ) -> Cmd:
        """Run ``SCRIPTS/args[0] args[1:] --vault VAULT`` in a fresh process
        under the launcher; the command, kept in the ledger when ``record``."""
        script = str(SCRIPTS / args[0])
        out = self.waits_dir / f"{uuid.uuid4().hex}.json"
        command = [sys.executable, "-c", LAUNCHER, script, str(out), *args[1:], "--vault", str(self.vault)]
        start = time.monotonic()
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        what = " ".join(a for a in args[:2] if not a.startswith("-") and "=" not in a and "/" not in a)
        if writer:
            with self.guard:
                self.running[proc.pid] = (proc, what, start)
        try:
            stdout, stderr = proc.communicate(stdin)
        finally:
            with self.guard:
                self.running.pop(proc.pid, None)
        wall = time.monotonic() - start
        waits = None
        try:
            found = json.loads(out.read_text(encoding="utf-8"))
            out.unlink()
            if found.get("measured"):
                waits = [float(w) for w in found.get("waits", [])]
        except (OSError, ValueError):
            pass
        cmd = Cmd(actor, what, proc.returncode, wall, waits, default_wait, writer, stdout, stderr)
        if record:
            self.ledger.add("commands", cmd)
        return cmd

    def kill_one(self, rng: random.Random) -> str | None:
        """kill -9 one writer that has run for KILL_AFTER s; what it was, or None."""
        now = time.monotonic()
        with self.guard:
            ready = sorted((pid, item) for pid, item in self.running.items() if now - item[2] >= KILL_AFTER)
        if not ready:
            return None
        pid, (proc, what, _) = rng.choice(ready)
        if proc.poll() is not None:
            return None
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return None
        return what


# ---------------------------------------------------------------------------
# The actors


@dataclass
class Person:
    name: str
    email: str


def people(seed: int, count: int) -> list[Person]:
    rng = random.Random(f"{seed}-people")
    pairs = [(f, last) for f in FIRST for last in LAST]
    rng.shuffle(pairs)
    return [Person(f"{f} {last}", f"{f}.{last}@load{seed}.example".lower()) for f, last in pairs[:count]]


class Agent:
    """An agent writing facts about a shared pool of people through card.py."""

    def __init__(self, n: int, seed: int, tag: str, pool: list[Person], runner: Runner, ledger: Ledger):
        self.n, self.tag, self.pool, self.runner, self.ledger = n, tag, pool, runner, ledger
        self.rng = random.Random(f"{seed}-agent-{n}")
        self.count = 0
        self.actor = f"agent{n}"

    def token(self) -> str:
        self.count += 1
        return f"{self.tag}f{self.n}x{self.count:05d}"

    def note_written(self, cmd: Cmd, result: dict) -> bool:
        """Whether a card command's result says it wrote; a copy it wrote is noted as chosen."""
        written = [result.get("path")] + list(result.get("written") or [])
        for path in written:
            if isinstance(path, str) and is_copy(path):
                self.ledger.add("chosen", {"why": "agent wrote into a copy", "path": path, "command": cmd.what})
        return result.get("refused") is None and not result.get("failed") and not result.get("conflicts")

    def fact(self, person: Person, token: str, kind: str, cmd: Cmd) -> None:
        self.ledger.add("facts", {"token": token, "email": person.email, "kind": kind, "command": cmd.what})

    def lookup(self, person: Person) -> str | None:
        """The path of the person's card, as search.py --identity names it first (live)."""
        cmd = self.runner.call(
            self.actor, ["search.py", "--identity", f"email={person.email}", "--json"], writer=False, record=False
        )
        data = cmd.data() or {}
        for match in data.get("matches") or []:
            if not match.get("retired"):
                return match.get("path")
        return None

    def step(self) -> None:
        person = self.rng.choice(self.pool)
        op = self.rng.choices(["remember", "new", "set", "log", "batch"], [35, 10, 20, 20, 15])[0]
        key, label = self.rng.choice(FIELDS)
        if op == "remember":
            token = self.token()
            args = ["card.py", "remember", "person", person.name, f"email={person.email}", f"{key}={label} {token}"]
            cmd = self.runner.call(self.actor, [*args, "--json"])
            data = cmd.data() or {}
            described = None
            if cmd.rc == 2 and (data.get("refused") or {}).get("reason") == "missing-required":
                described = self.token()
                extra = [f"description=Met through the load run {described}", "status=active"]
                cmd = self.runner.call(self.actor, [*args, *extra, "--json"])
                data = cmd.data() or {}
            if cmd.rc == 0 and self.note_written(cmd, data) and data.get("action") in ("created", "updated"):
                self.fact(person, token, key, cmd)
                if described is not None:
                    self.fact(person, described, "description", cmd)
        elif op == "new":
            token = self.token()
            args = ["card.py", "new", "person", person.name, f"email={person.email}", "status=active"]
            cmd = self.runner.call(self.actor, [*args, f"description=Met through the load run {token}", "--json"])
            if cmd.rc == 0 and self.note_written(cmd, cmd.data() or {}):
                self.fact(person, token, "description", cmd)
        elif op in ("set", "log"):
            path = self.lookup(person)
            if path is None:
                return
            token = self.token()
            if op == "set":
                args = ["card.py", "set", path, f"{key}={label} {token}", "--json"]
            else:
                args = ["card.py", "log", path, f"Talked about the plan {token}", "--json"]
            cmd = self.runner.call(self.actor, args)
            if cmd.rc == 0 and self.note_written(cmd, cmd.data() or {}):
                self.fact(person, token, key if op == "set" else "log", cmd)
        else:
            lines, planned = [], []
            for _ in range(self.rng.randint(2, 4)):
                who = self.rng.choice(self.pool)
                token = self.token()
                if self.rng.random() < 0.6:
                    key, label = self.rng.choice(FIELDS)
                    fields = {
                        "email": who.email,
                        key: f"{label} {token}",
                        "description": f"Met through the load run {token}d",
                        "status": "active",
                    }
                    lines.append({"op": "remember", "type": "person", "title": who.name, "fields": fields})
                else:
                    lines.append({"op": "log", "note": who.name, "text": f"Heard about the plan {token}"})
                planned.append((who, token, lines[-1]["op"]))
            stdin = "".join(json.dumps(line) + "\n" for line in lines)
            cmd = self.runner.call(self.actor, ["card.py", "batch", "--json"], stdin=stdin)
            data = cmd.data() or {}
            if cmd.rc in (0, 1, 4) and isinstance(data.get("results"), list):
                for result in data["results"]:
                    line = result.get("line")
                    if not isinstance(line, int) or not 1 <= line <= len(planned):
                        continue
                    who, token, kind = planned[line - 1]
                    if not self.note_written(cmd, result):
                        continue
                    if kind == "log" or result.get("action") in ("created", "updated"):
                        self.fact(who, token, kind, cmd)
                        if kind == "remember":
                            self.fact(who, token + "d", "description", cmd)

    def loop(self, stop: float) -> None:
        while time.monotonic() < stop:
            self.step()
            time.sleep(self.rng.uniform(0.2, 1.5))


def cron(runner: Runner, ledger: Ledger, seed: int, stop: float, wait: float | None) -> None:
    """decay, health, moc, dedup, enforce, again and again."""
    rng = random.Random(f"{seed}-cron")
    extra = [] if wait is None else ["--wait", f"{wait:g}"]
    default = 0.0 if wait is None else wait
    steps = [
        (["engine.py", "decay", "--quiet"], True),
        (["graph.py", "health", "--quiet"], False),
        (["moc.py", "generate", "--quiet"], True),
        (["dedup.py", "--apply", "--json", "--quiet"], True),
        (["enforce.py", "--apply", "--quiet"], True),
    ]
    while time.monotonic() < stop:
        for args, writes in steps:
            if time.monotonic() >= stop:
                return
            cmd = runner.call("cron", args + (extra if writes else []), writer=writes, default_wait=default)
            if args[0] == "dedup.py" and cmd.rc in (0, 1, 4):
                for merge in (cmd.data() or {}).get("merged") or []:
                    canonical = merge.get("canonical")
                    if isinstance(canonical, str) and is_copy(canonical):
                        ledger.add("chosen", {"why": "dedup kept a copy", "path": canonical, "command": cmd.what})
        time.sleep(rng.uniform(1.0, 3.0))


def editable(vault: Path, rng: random.Random) -> str | None:
    """A random note a person edits (a person card 3 times in 10): not a
    conflict copy, not one of autograph's generated Maps of Content (their
    edits the next moc run replaces, as SKILL.md says)."""
    choices = [p for p in notes(vault) if not is_copy(p)]
    cards = [p for p in choices if p.startswith("people/")]
    if cards and rng.random() < 0.3:  # the cards agents write to, often: an edit that races theirs
        choices = cards
    for _ in range(10):
        if not choices:
            return None
        path = rng.choice(choices)
        if "generated_by: autograph" not in head(vault / path, 2048):
            return path
        choices.remove(path)
    return None


def person(vault: Path, ledger: Ledger, seed: int, tag: str, stop: float) -> None:
    """Appends a unique line to a random note; now and then renames one."""
    rng = random.Random(f"{seed}-person")
    count = 0
    while time.monotonic() < stop:
        time.sleep(rng.uniform(0.4, 1.6))
        path = editable(vault, rng)
        if path is None:
            continue
        count += 1
        if rng.random() < 0.1:
            stem = path[:-3]
            target = f"{stem} r{count}.md"
            if (vault / target).exists():
                continue
            try:
                os.rename(vault / path, vault / target)
            except OSError:
                continue
            ledger.add("renames", (path, target))
            continue
        token = f"{tag}p0x{count:05d}"
        line = f"\nA line the person typed in Obsidian {token}.\n".encode()
        try:
            fd = os.open(vault / path, os.O_WRONLY | os.O_APPEND)  # never creates a note that went away
        except OSError:
            continue
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        ledger.add("person_lines", {"token": token, "path": path})


def sync_client(vault: Path, ledger: Ledger, seed: int, tag: str, stop: float, pool: list[Person]) -> None:
    """Puts a conflict copy beside a person card now and then (most often a
    card of the agents' pool, once there is one)."""
    names = {p.name for p in pool}
    rng = random.Random(f"{seed}-sync")
    count = 0
    while time.monotonic() < stop:
        time.sleep(rng.uniform(2.0, 5.0))
        cards = ["people/" + p for p in notes(vault / "people") if not is_copy(p)]
        ours = [p for p in cards if p[len("people/") : -len(".md")].split(" r")[0] in names]
        if ours and rng.random() < 0.7:
            cards = ours
        if not cards:
            continue
        path = rng.choice(cards)
        count += 1
        stem = path[:-3]
        device = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ234567") for _ in range(7))
        form = count % 3
        if form == 0:
            copy = f"{stem}.sync-conflict-20261201-{120000 + count:06d}-{device}.md"
        elif form == 1:
            copy = f"{stem} (conflicted copy 2026-12-01 {120000 + count:06d}).md"
        else:
            copy = f"{stem} (conflict 2026-12-{1 + count % 28:02d}).md"
        try:
            data = (vault / path).read_bytes()
        except OSError:
            continue
        if (vault / copy).exists():
            continue
        data += f"\nA line from the other device {tag}s0x{count:05d}.\n".encode()
        temp = vault / f".{uuid.uuid4().hex}.syncing"
        temp.write_bytes(data)
        os.replace(temp, vault / copy)
        ledger.add("copies", copy)


def killer(runner: Runner, ledger: Ledger, seed: int, kills: int, start: float, stop: float) -> None:
    """``kills`` kill -9s of running writers, spread over the run."""
    rng = random.Random(f"{seed}-kill")
    span = stop - start
    times = sorted(start + span * (i + rng.uniform(0.2, 0.8)) / kills for i in range(kills))
    for at in times:
        while time.monotonic() < at:
            time.sleep(min(0.05, max(0.0, at - time.monotonic())))
        deadline = at + max(2.0, span / max(kills, 1))
        while time.monotonic() < min(deadline, stop + 1):
            what = runner.kill_one(rng)
            if what is not None:
                ledger.add("kills", what)
                break
            time.sleep(0.02)


# ---------------------------------------------------------------------------
# The check


def scan(vault: Path, tag: str) -> dict[str, set[str]]:
    """token -> the files (vault paths, .trash/ included, .graph/ not) holding it."""
    pattern = re.compile(re.escape(tag) + r"[fps]\d+x\d{5}d?")
    found: dict[str, set[str]] = {}
    for folder, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if d != ".graph")
        for name in files:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, vault).replace(os.sep, "/")
            try:
                with open(full, "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
            except OSError:
                continue
            for token in set(pattern.findall(text)):
                found.setdefault(token, set()).add(rel)
    return found


def live_cards(vault: Path, emails: set[str]) -> dict[str, list[str]]:
    """email -> live notes (not .trash/, not copies) whose frontmatter holds it."""
    held: dict[str, list[str]] = {e: [] for e in emails}
    for path in notes(vault):
        if is_copy(path):
            continue
        try:
            text = (vault / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        block = frontmatter(text).lower()
        if "@" not in block:
            continue
        for email in emails:
            if email in block:
                held[email].append(path)
    return held


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def check(vault: Path, ledger: Ledger, tag: str) -> dict:
    found = scan(vault, tag)
    facts_lost = [f for f in ledger.facts if f["token"] not in found]
    lines_lost = [p for p in ledger.person_lines if p["token"] not in found]
    only_in_copies = [
        f for f in ledger.facts if f["token"] in found and all(is_copy(path) for path in found[f["token"]])
    ]
    chosen = list(ledger.chosen) + [
        {"why": "fact only in conflict copies", "path": sorted(found[f["token"]])[0], "command": f["command"]}
        for f in only_in_copies
    ]
    emails = {f["email"] for f in ledger.facts}
    held = live_cards(vault, emails)
    duplicates = {e: paths for e, paths in held.items() if len(paths) > 1}
    homeless = sorted(e for e, paths in held.items() if not paths)
    agents = [c for c in ledger.commands if c.writer and c.default_wait > 0 and not c.killed]
    measured = [sum(c.waits) for c in agents if c.waits is not None]
    cron_skipped = sum(1 for c in ledger.commands if c.actor == "cron" and c.default_wait == 0 and c.gave_up)
    return {
        "facts": len(ledger.facts),
        "facts_lost": len(facts_lost),
        "person_lines": len(ledger.person_lines),
        "person_lines_lost": len(lines_lost),
        "copies_made": len(ledger.copies),
        "copies_chosen": len(chosen),
        "identities": len(emails),
        "duplicates": len(duplicates),
        "identities_without_card": len(homeless),
        "lock_wait": {
            "commands": len(agents),
            "measured": len(measured),
            "median": statistics.median(measured) if measured else None,
            "p99": percentile(measured, 0.99) if measured else None,
            "max": max(measured) if measured else None,
            "gave_up": sum(1 for c in agents if c.gave_up),
        },
        "cron_skipped_busy": cron_skipped,
        "renames": len(ledger.renames),
        "kills": sum(1 for c in ledger.commands if c.killed),
        "kill_signals": len(ledger.kills),
        "commands": len(ledger.commands),
        "exit_codes": _codes(ledger.commands),
        "details": {
            "facts_lost": facts_lost[:20],
            "person_lines_lost": lines_lost[:20],
            "copies_chosen": chosen[:20],
            "duplicates": dict(list(duplicates.items())[:20]),
            "identities_without_card": homeless[:20],
            "internal_errors": [
                {"command": c.what, "stderr": c.stderr[-600:]}
                for c in ledger.commands
                if c.rc == 3 and not c.gave_up and not c.killed
            ][:10],
        },
    }


def _codes(commands: list[Cmd]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in commands:
        key = "killed" if c.killed else str(c.rc)
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


# ---------------------------------------------------------------------------
# One vault


def warm_up(runner: Runner) -> None:
    """A vault in use: its index built, brought to its schema, decayed, mapped (untimed)."""
    for args in (
        ["graph.py", "health", "--quiet"],
        ["enforce.py", "--apply", "--quiet", "--wait", "30"],
        ["engine.py", "decay", "--quiet", "--wait", "30"],
        ["moc.py", "generate", "--quiet", "--wait", "30"],
    ):
        cmd = runner.call("setup", args, writer=False, record=False)
        if cmd.rc in (2, 3):
            print(f"warning: setup {' '.join(args)} exited {cmd.rc}: {cmd.stderr.strip()[-300:]}", file=sys.stderr)


def run_vault(name: str, source: Path, options, tmp: Path) -> dict:
    vault = copy_vault(source, tmp / "vault")
    ledger = Ledger()
    runner = Runner(vault, tmp, ledger)
    warm_up(runner)
    tag = f"Q{options.seed}"
    pool = people(options.seed, max(4, 2 * options.agents))
    start = time.monotonic()
    stop = start + options.minutes * 60
    threads = [
        threading.Thread(target=Agent(n, options.seed, tag, pool, runner, ledger).loop, args=(stop,))
        for n in range(1, options.agents + 1)
    ]
    threads.append(threading.Thread(target=cron, args=(runner, ledger, options.seed, stop, options.cron_wait)))
    threads.append(threading.Thread(target=person, args=(vault, ledger, options.seed, tag, stop)))
    threads.append(threading.Thread(target=sync_client, args=(vault, ledger, options.seed, tag, stop, pool)))
    if options.kills > 0:
        threads.append(threading.Thread(target=killer, args=(runner, ledger, options.seed, options.kills, start, stop)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start
    recover = runner.call("final", ["undo.py", "recover", "--json", "--wait", "30"], writer=False, record=False)
    result = check(vault, ledger, tag)
    result.update(
        {
            "vault": name,
            "notes": len(notes(source)),
            "seconds": round(elapsed, 1),
            "recover_exit": recover.rc,
            "recover": (recover.data() or {}) if recover.rc != 0 else {},
        }
    )
    result["data_pass"] = all(
        result[key] == 0 for key in ("facts_lost", "person_lines_lost", "copies_chosen", "duplicates")
    )
    wait = result["lock_wait"]
    result["lock_pass"] = wait["p99"] is not None and wait["p99"] <= WAIT_TARGET and wait["gave_up"] == 0
    if options.keep:
        dest = Path(options.keep) / name.replace("/", "_")
        shutil.copytree(tmp, dest, symlinks=True, dirs_exist_ok=True)
        (dest / "ledger.json").write_text(
            json.dumps(
                {
                    "facts": ledger.facts,
                    "person_lines": ledger.person_lines,
                    "renames": ledger.renames,
                    "copies": ledger.copies,
                    "chosen": ledger.chosen,
                    "kills": ledger.kills,
                    "commands": [
                        {"actor": c.actor, "what": c.what, "rc": c.rc, "wall": c.wall, "waits": c.waits}
                        for c in ledger.commands
                    ],
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    return result


def _seconds(value) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def table(result: dict) -> str:
    """The one table of a vault's run."""
    wait = result["lock_wait"]

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    rows = [
        ("facts lost", f"{result['facts_lost']} of {result['facts']}", "0", result["facts_lost"] == 0),
        (
            "person lines lost",
            f"{result['person_lines_lost']} of {result['person_lines']}",
            "0",
            result["person_lines_lost"] == 0,
        ),
        (
            "conflict copies chosen as cards",
            f"{result['copies_chosen']} ({result['copies_made']} copies made)",
            "0",
            result["copies_chosen"] == 0,
        ),
        ("duplicates", f"{result['duplicates']} of {result['identities']} identities", "0", result["duplicates"] == 0),
        (
            "lock wait median / p99",
            f"{_seconds(wait['median'])} / {_seconds(wait['p99'])} (max {_seconds(wait['max'])})",
            f"p99 <= {WAIT_TARGET:g} s",
            wait["p99"] is not None and wait["p99"] <= WAIT_TARGET,
        ),
        ("gave up (agents, --wait 10)", f"{wait['gave_up']} of {wait['commands']}", "0", wait["gave_up"] == 0),
    ]
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    lines = [
        f"{result['vault']}: {result['notes']} notes, {result['seconds']} s, {result['commands']} commands "
        f"(exit codes {result['exit_codes']}), {result['kills']} killed by kill -9, {result['renames']} renames",
        f"  {'measure':<{width}}  {'result':<{value_width}}  {'target':<12}  verdict",
    ]
    for label, value, target, ok in rows:
        note = "  (report only)" if label.startswith(("lock", "gave")) else ""
        lines.append(f"  {label:<{width}}  {value:<{value_width}}  {target:<12}  {verdict(ok)}{note}")
    lines.append(
        f"  beside: identities with no live card {result['identities_without_card']}; cron runs skipped "
        f"(busy, --wait 0) {result['cron_skipped_busy']}; undo.py recover exit {result['recover_exit']}"
    )
    for key, items in result["details"].items():
        if items:
            lines.append(f"  {key}: {json.dumps(items, ensure_ascii=False)[:1500]}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0, help="how long the actors run (default 2)")
    parser.add_argument("--agents", type=int, default=6, help="agents writing cards (default 6)")
    parser.add_argument("--kills", type=int, default=10, help="kill -9s of running writers (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="seed of every actor's choices (default 1)")
    parser.add_argument(
        "--vault",
        action="append",
        help="example, obsidian-hub (or another corpus name) or a folder; repeat for several "
        "(default: example and obsidian-hub)",
    )
    parser.add_argument("--cron-wait", type=float, default=None, help="--wait of cron's writers (default: theirs, 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    parser.add_argument("--keep", metavar="DIR", help="keep each vault copy, the ledger and the commands in DIR")
    options = parser.parse_args()
    if options.minutes <= 0 or options.agents < 1 or options.kills < 0:
        parser.error("--minutes must be > 0, --agents >= 1, --kills >= 0")
    names = options.vault or ["example", "obsidian-hub"]
    results, skipped = [], []
    for name in names:
        source = find_vault(name)
        if source is None:
            message = f"vault missing: {name} (looked in {CORPORA} and the current folder)"
            if os.environ.get("AUTOGRAPH_REQUIRE_CORPORA") == "1":
                print(message, file=sys.stderr)
                return 2
            print(f"skipped: {message}", file=sys.stderr)
            skipped.append(name)
            continue
        with tempfile.TemporaryDirectory(prefix="autograph-load-") as tmp:
            result = run_vault(name, source, options, Path(tmp))
        results.append(result)
        if not options.json:
            print(table(result), flush=True)
    passed = all(r["data_pass"] for r in results)
    if options.json:
        report = {
            "commit": commit(),
            "minutes": options.minutes,
            "agents": options.agents,
            "kills": options.kills,
            "seed": options.seed,
            "vaults": results,
            "skipped": skipped,
            "pass": passed,
        }
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print(f"commit {commit()}; data targets {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
