"""Every command README.md and SKILL.md show runs as written.

An agent copies these lines: each code-block line and each inline example
that names a script with arguments is run by a shell, in document order,
from a project folder outside the vault (as an agent runs), with ``VAULT``
and ``~/vault`` the vault's folder and ``python3`` this interpreter.  The
synopses (``[--vault VAULT]``, ``NOTE...``) and bare names of commands in
prose are not commands.  Placeholders a person fills in are given values
(``RUN`` the last run, ``<hash>`` the daily note's hash); the few notes the
examples name that the example vault lacks are made first.  A ``jsonl``
block is the file the examples after it read (``today.jsonl``, the input
of ``card.py batch``): written as shown, each line checked to be one JSON
object.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE_VAULT, REPO, SCRIPTS, copy_tree

DOCS = [REPO / "README.md", REPO / "skills" / "autograph" / "SKILL.md"]
NAMES = sorted(p.name for p in SCRIPTS.glob("*.py"))
SCRIPT = re.compile(r"(?:^|[\s/])(" + "|".join(map(re.escape, NAMES)) + r")(?=\s|$)")

# What a person fills in, and what this test fills in for it.
FILLED = {
    "RUN": "last",
    "YYYY-MM-DD": "2026-11-24",
    "STORE": "~/vault",
    "email=...": "email=dana@acme.com",
    "[--json]": "--json",
}


def examples(path: Path) -> list[str]:
    """The commands ``path`` shows: code-block lines and inline code that
    name a script and give it arguments (its ``# comments`` cut)."""
    found, block = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            block = not block
            continue
        spans = [line] if block else re.findall(r"`([^`]+)`", line)
        for span in spans:
            text = re.sub(r"\s+#\s.*$", "", span).strip()
            match = SCRIPT.search(text)
            if not match or "[-" in text or "\\|" in text or "..." in text.replace("=...", ""):
                continue  # no script, or a synopsis
            words = text[match.end() :].split()
            if not words or (len(words) == 1 and re.fullmatch(r"[a-z-]+", words[0])):
                continue  # a command's name in prose: "engine.py decay"
            found.append(text)
    return found


def jsonl_blocks(path: Path) -> list[str]:
    """The text of each ```jsonl block of ``path`` (a file an example reads)."""
    return re.findall(r"^```jsonl\n(.*?)^```$", path.read_text(encoding="utf-8"), re.S | re.M)


def test_the_examples_are_found():
    """The extraction sees the examples it must run (a regression here
    would silently run none)."""
    skill = examples(DOCS[1])
    readme = examples(DOCS[0])
    assert "python3 scripts/graph.py health --vault VAULT" in skill
    assert any(e.startswith("card.py new person") for e in skill)
    for command in ("remember", "batch", "show"):
        assert any(e.startswith(f"python3 scripts/card.py {command} ") for e in skill), command
    assert len(jsonl_blocks(DOCS[1])) == 1 and "< today.jsonl" in " ".join(skill)
    assert "python3 skills/autograph/scripts/graph.py health --vault examples/vault" in readme
    assert "cd ~/vault && graph.py health --fail-under 80" in readme
    assert len(skill) >= 40


def _expanded(example: str, daily_hash: str) -> list[str]:
    """``example`` as a shell command line (or several: ``tags|links`` is
    two), with what a person fills in filled in."""
    text = example
    for placeholder, value in FILLED.items():
        text = re.sub(r"(?<![\w-])" + re.escape(placeholder) + r"(?![\w-])", value, text)
    text = text.replace("<hash>", daily_hash)
    text = re.sub(r"(?<![\w/.-])VAULT(?=/|\s|$)", "~/vault", text)
    choices = re.search(r"\b([a-z]+)\|([a-z]+)\b", text)
    if choices and "|" not in text.replace(choices.group(0), ""):
        return [text.replace(choices.group(0), word) for word in choices.groups()]
    return [text]


@pytest.fixture
def project(tmp_path):
    """A project folder (HOME) holding the vault as ``~/vault`` and
    ``examples/vault``, the skill as ``scripts/`` and ``skills/``, and
    ``python3`` and each script on PATH, all running this interpreter."""
    home = tmp_path / "home"
    (home / "examples").mkdir(parents=True)
    vault = copy_tree(EXAMPLE_VAULT, home / "vault")
    (home / "examples" / "vault").symlink_to(vault)
    (home / "scripts").symlink_to(SCRIPTS)
    (home / "skills").symlink_to(REPO / "skills")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = shlex.quote(sys.executable)
    for name, target in [("python3", ""), *((n, shlex.quote(str(SCRIPTS / n))) for n in NAMES)]:
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nexec {python} {target} "$@"\n')
        wrapper.chmod(0o755)
    # what the examples name that the example vault lacks
    (vault / "inbox").mkdir()
    (vault / "inbox" / "Lee Park.md").write_text("---\ntype: person\n---\nMet Lee.\n", encoding="utf-8")
    (vault / "projects" / "old").mkdir()
    (vault / "projects" / "old" / "Plan.md").write_text("An old plan.\n", encoding="utf-8")
    (vault / "people" / "D. Reyes.md").write_text(
        "---\ntype: person\nstatus: active\ndescription: An older card\n---\n", encoding="utf-8"
    )
    (home / "obs").mkdir()
    (home / "obs" / "explorer-1.json").write_text(
        json.dumps({"notes": [{"path": "people/Dana Reyes.md", "type": "person", "status": "active", "fields": []}]})
    )
    (home / "MEMORY.md").write_text("- [Atlas](atlas.md) — the project\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRAPH_", "OPENROUTER_", "OPENAI_"))}
    env.update(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    return home, vault, env


def _sh(command: str, home: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", "-c", command], cwd=home, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_example_runs_as_written(project, doc):
    """Exit 0, or 1 where the example shows what a check or refusal finds
    (a card that exists, a score under --fail-under): never a usage error,
    a crash or a traceback."""
    home, vault, env = project
    blocks = jsonl_blocks(doc)
    assert len(blocks) <= 1, "one file per document: today.jsonl"
    for block in blocks:
        assert all(isinstance(json.loads(line), dict) for line in block.splitlines() if line.strip()), block
        (home / "today.jsonl").write_text(block, encoding="utf-8")
    day = _sh("daily.py extract --vault ~/vault --date 2026-11-24 --json", home, env)
    daily_hash = json.loads(day.stdout)["notes"][0]["hash"]
    ran, failed = 0, []
    for example in examples(doc):
        if "pip install" in example:
            continue  # the test command itself
        for command in _expanded(example, daily_hash):
            if "generate_schema.py" in command and "-o" in command:
                (vault / "schema.json").rename(home / "schema.kept")  # the draft's place must be free
            proc = _sh(command, home, env)
            if (home / "schema.kept").exists():
                (home / "schema.kept").replace(vault / "schema.json")
            if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
                failed.append(f"{example}\n  -> {command}\n  exit {proc.returncode}: {proc.stderr.strip()}")
            ran += 1
    assert not failed, "\n".join(failed)
    assert ran >= (40 if doc.name == "SKILL.md" else 2)
