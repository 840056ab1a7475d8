"""doctor.py reports paths that differ only in letter case (issue 30, point 6).

``foo.md`` beside ``FOO.md`` are two notes on Linux; a macOS or Windows
checkout of the store keeps one.  doctor.py says so, as ``graph.py health``
does for a vault: a warning (the store works where it is), with every path
of the group.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

DOCTOR = SCRIPTS / "doctor.py"


def note(stem: str) -> str:
    return (
        f"---\nname: {stem}\ndescription: What {stem} holds\ntype: user\n"
        "created: 2026-01-05\nupdated: 2026-02-01\n---\nA fact.\n"
    )


def doctor(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DOCTOR), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture
def store(tmp_path) -> Path:
    """The example vault's store with two notes and two files whose names
    differ only in letter case, each note pointed to from the index."""
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    store = vault / ".memory"
    (store / "user-team.md").write_text(note("user-team"), encoding="utf-8")
    try:
        (store / "user-Team.md").write_text(note("user-Team"), encoding="utf-8")
    except OSError:
        pytest.skip("this file system folds letter case")
    if len(list(store.glob("user-*eam.md"))) < 2:
        pytest.skip("this file system folds letter case")
    (store / "files").mkdir()
    (store / "files" / "plan.txt").write_text("a\n", encoding="utf-8")
    (store / "files" / "Plan.TXT").write_text("b\n", encoding="utf-8")
    index = store / "MEMORY.md"
    index.write_text(
        index.read_text(encoding="utf-8")
        + "- [Team](user-team.md) — the team\n- [Team, again](user-Team.md) — the team, again\n",
        encoding="utf-8",
    )
    return store


def test_doctor_warns_of_paths_that_differ_only_in_case(store):
    proc = doctor(store, "--json")
    report = json.loads(proc.stdout)
    found = [w for w in report["warnings"] if w["kind"] == "case-collision"]
    assert [(w["path"], w["line"]) for w in found] == [("files/Plan.TXT", None), ("user-Team.md", None)]
    assert "user-Team.md" in found[1]["message"] and "user-team.md" in found[1]["message"]
    assert "files/plan.txt" in found[0]["message"]
    # a warning: the exit code is the issues' alone
    assert proc.returncode == (1 if report["issues"] else 0), proc.stderr
    assert not [i for i in report["issues"] if "Team" in i["path"] or "team" in i["path"]], report["issues"]


def test_the_human_report_names_both_notes(store):
    proc = doctor(store)
    assert "case-collision" in proc.stdout
    line = next(line for line in proc.stdout.splitlines() if "case-collision" in line and "eam" in line)
    assert "user-team.md" in line and "user-Team.md" in line and "macOS or Windows" in line


def test_a_store_without_such_names_has_no_such_warning(tmp_path):
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    report = json.loads(doctor(vault / ".memory", "--json").stdout)
    assert not [w for w in report["warnings"] if w["kind"] == "case-collision"]


def test_the_library_gives_the_same_groups_as_health(store):
    from autograph.graph.health import case_collisions
    from autograph.hosts.store_cases import case_warnings
    from autograph.read.vault import Vault

    groups = case_collisions(Vault.open(store).files)
    assert [w["path"] for w in case_warnings(store)] == [group[0] for group in groups]
