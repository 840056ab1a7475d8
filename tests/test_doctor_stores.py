"""doctor.py fits real stores (issue 7, item 10).

Claude Code's own notes carry ``name`` as a title; pointers open files the
way the host's file system does (letter case, symlinks inside the store);
``*.MD`` notes are notes; a symlinked index out of the store is refused in
one finding; and a folder that is not a memory store is refused in one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPORA, SCRIPTS, require

DOCTOR = SCRIPTS / "doctor.py"


def doctor(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRAPH_INDEX_")}
    return subprocess.run(
        [sys.executable, str(DOCTOR), *map(str, args)], capture_output=True, text=True, timeout=120, env=env
    )


def both(store: Path, *args) -> tuple[subprocess.CompletedProcess, dict]:
    """The human report and the JSON report of one store."""
    human = doctor(store, *args)
    proc = doctor(store, "--json", *args)
    assert proc.returncode == human.returncode, (proc.stderr, human.stderr)
    return human, json.loads(proc.stdout)


def found(report: dict) -> list[tuple[str, str]]:
    return sorted((f["kind"], f["path"]) for f in report["issues"])


def note(name: str, kind: str = "user", body: str = "A fact.\n") -> str:
    return (
        f"---\nname: {name}\ndescription: What {name} holds\ntype: {kind}\n"
        f"created: 2026-01-05\nupdated: 2026-02-01\n---\n{body}"
    )


def case_sensitive(folder: Path) -> bool:
    probe = folder / "Case-Probe.tmp"
    probe.write_text("x")
    try:
        return not (folder / "case-probe.tmp").exists()
    finally:
        probe.unlink()


# ---------------------------------------------------------------------------
# Claude Code's own store: names are titles, no dates

CLAUDE_SCHEMA = {
    "memory": {
        "folder": "",
        "types": {
            kind: {
                "description": kind,
                "required": ["name", "description", "type"],
                "labels": ["Why", "How to apply"] if kind in ("feedback", "project") else [],
            }
            for kind in ("user", "feedback", "project", "reference")
        },
    }
}
WHY = "Squash before merging.\n\n**Why:** the history is read by release tooling.\n\n**How to apply:** always.\n"
CLAUDE_STORE = {
    "MEMORY.md": (
        "- [Git workflow](feedback_git_workflow.md) — squash, never force-push main\n"
        "- [Role](user_role.md) — operations lead\n"
        "- [Atlas cutover](project_atlas_cutover.md) — cutover 2027-06-30\n"
        "- [Dashboards](reference_dashboards.md) — where the numbers live\n"
    ),
    "feedback_git_workflow.md": (
        f"---\nname: Git workflow preferences\ndescription: How commits and PRs are handled\ntype: feedback\n---\n{WHY}"
    ),
    "user_role.md": "---\nname: Role and focus\ndescription: Who the user is\ntype: user\n---\nOps lead.\n",
    "project_atlas_cutover.md": (
        f"---\nname: Atlas cutover\ndescription: State of the cutover\ntype: project\n---\n{WHY}"
    ),
    "reference_dashboards.md": (
        "---\nname: dashboards\ndescription: Where the numbers live\ntype: reference\n---\nThe board.\n"
    ),
}


def test_claude_code_store_with_title_names_is_clean(make_vault, tmp_path):
    store = make_vault(CLAUDE_STORE, name="memory")
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(CLAUDE_SCHEMA))
    human, report = both(store, "--schema", schema)
    assert human.returncode == 0, human.stdout + human.stderr
    assert report["issues"] == [] and report["notes"] == 4
    assert human.stdout.rstrip().endswith("no issues")


@pytest.mark.parametrize(
    ("stem", "name", "mismatch"),
    [
        ("feedback_git_workflow", "Git workflow preferences", False),  # a title
        ("user_role", "Role and focus", False),
        ("notes", "Anything\tat all", False),
        ("feedback_git_workflow", "git-workflow", False),  # the stem without its type prefix
        ("feedback_git_workflow", "Git_Workflow", False),
        ("user-audit", "feedback-audit", True),  # no spaces: must be the file's name
        ("notes", "something-else", True),
    ],
)
def test_name_mismatch_only_for_names_without_spaces(make_vault, stem, name, mismatch):
    files = {"MEMORY.md": f"- [N]({stem}.md) — n\n", f"{stem}.md": note(name)}
    store = make_vault(files, name="store")
    human, report = both(store)
    assert found(report) == ([("name-mismatch", f"{stem}.md")] if mismatch else []), report["issues"]
    assert ("name-mismatch" in human.stdout) == mismatch


# ---------------------------------------------------------------------------
# Pointers open files as the host's file system does


def test_pointer_letter_case_counts(make_vault):
    store = make_vault(
        {"MEMORY.md": "- [Git](feedback_git_workflow.md) — wrong case\n", "feedback_Git_Workflow.md": note("x")},
        name="store",
    )
    if not case_sensitive(store):
        pytest.skip("a case-insensitive file system opens feedback_git_workflow.md")
    human, report = both(store)
    assert found(report) == [
        ("broken-pointer", "MEMORY.md"),
        ("name-mismatch", "feedback_Git_Workflow.md"),
        ("unreachable", "feedback_Git_Workflow.md"),
    ]
    assert "MEMORY.md:1  broken-pointer" in human.stdout and "letter case counts" in human.stdout


def test_wikilink_pointer_letter_case_counts(make_vault):
    store = make_vault({"MEMORY.md": "- [[Feedback_git]] — wrong case\n", "feedback_git.md": note("feedback_git")})
    if not case_sensitive(store):
        pytest.skip("a case-insensitive file system opens Feedback_git.md")
    _, report = both(store)
    assert found(report) == [("broken-pointer", "MEMORY.md"), ("unreachable", "feedback_git.md")]


def test_two_notes_that_differ_only_in_case(make_vault):
    files = {"foo.md": note("foo"), "FOO.md": note("FOO")}
    store = make_vault({"MEMORY.md": "- [a](foo.md) — a\n- [b](FOO.md) — b\n", **files}, name="both")
    if not case_sensitive(store):
        pytest.skip("foo.md and FOO.md are one file here")
    _, report = both(store)
    assert report["issues"] == [] and report["notes"] == 2
    # two notes here, one on a macOS or Windows checkout: a warning (issue 30)
    assert [(w["kind"], w["path"]) for w in report["warnings"]] == [("case-collision", "FOO.md")]
    store = make_vault({"MEMORY.md": "- [b](FOO.md) — b\n", **files}, name="upper")
    _, report = both(store)
    assert found(report) == [("unreachable", "foo.md")]
    store = make_vault({"MEMORY.md": "- [a](foo.md) — a\n", **files}, name="lower")
    _, report = both(store)
    assert found(report) == [("unreachable", "FOO.md")]


def test_links_between_notes_open_as_the_host_does(make_vault):
    store = make_vault(
        {
            "MEMORY.md": "- [A](a.md) — a\n",
            "a.md": note("a", body="See [b](B.md) and [[C]].\n"),
            "b.md": note("b"),
            "c.md": note("c"),
        }
    )
    if not case_sensitive(store):
        pytest.skip("a case-insensitive file system opens B.md")
    _, report = both(store)
    assert found(report) == [("unreachable", "b.md"), ("unreachable", "c.md")]


def test_pointer_to_a_symlink_inside_the_store_is_followed(make_vault, tmp_path):
    store = make_vault(
        {
            "MEMORY.md": "- [Alias](alias.md) — a symlink to a note\n- [[short]] — a symlink too\n",
            "notes/real.md": note("real"),
            "notes/other.md": note("other"),
        },
        name="store",
    )
    (store / "alias.md").symlink_to("notes/real.md")
    (store / "short.md").symlink_to(store / "notes" / "other.md")
    human, report = both(store)
    assert human.returncode == 0, human.stdout
    assert report["issues"] == [] and report["notes"] == 2


def test_pointer_to_a_symlink_out_of_the_store_is_refused(make_vault, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text(note("elsewhere"))
    store = make_vault({"MEMORY.md": "- [Out](out.md) — leaves the store\n"}, name="store")
    (store / "out.md").symlink_to(outside)
    human, report = both(store)
    assert found(report) == [("pointer-outside", "MEMORY.md")]
    assert [(w["kind"], w["path"]) for w in report["warnings"]] == [("skipped", "out.md")]
    assert "pointer-outside" in human.stdout


def test_upper_case_md_notes_are_validated(make_vault):
    store = make_vault(
        {
            "MEMORY.md": "- [Good](Good.MD) — fine\n- [Bare](BARE.MD) — no frontmatter\n",
            "Good.MD": note("Good"),
            "BARE.MD": "Just text.\n",
            "Stray.Md": note("Stray"),
        },
        name="store",
    )
    human, report = both(store)
    assert found(report) == [("frontmatter", "BARE.MD"), ("unreachable", "Stray.Md")]
    assert report["notes"] == 3
    assert "BARE.MD:1  frontmatter" in human.stdout


def test_symlinked_index_out_of_the_store_is_refused(make_vault, tmp_path):
    elsewhere = tmp_path / "dotfiles"
    elsewhere.mkdir()
    (elsewhere / "MEMORY.md").write_text("- [Gone](gone.md) — broken\nSome content. password=hunter22\n")
    store = make_vault({"a.md": note("a")}, name="store")
    (store / "MEMORY.md").symlink_to(elsewhere / "MEMORY.md")
    human, report = both(store)
    assert human.returncode == 1
    assert [(f["kind"], f["path"], f["line"]) for f in report["issues"]] == [("index-outside", "MEMORY.md", None)]
    assert report["warnings"] == []  # reported once, not again as "skipped"
    assert report["index"] == "MEMORY.md" and report["index_size"] is None
    assert "index-outside" in human.stdout and "not read" in human.stdout
    assert "hunter22" not in human.stdout


def test_symlinked_index_inside_the_store_is_the_index(make_vault):
    store = make_vault({"indexes/main.md": "- [A](../a.md) — a\n", "a.md": note("a")}, name="store")
    (store / "MEMORY.md").symlink_to("indexes/main.md")
    human, report = both(store)
    # the host opens MEMORY.md in the store's folder: its pointers are relative to it
    assert found(report) == [("pointer-outside", "MEMORY.md"), ("unreachable", "a.md")]
    store = make_vault({"indexes/main.md": "- [A](a.md) — a\n", "a.md": note("a")}, name="store2")
    (store / "MEMORY.md").symlink_to("indexes/main.md")
    human, report = both(store)
    assert human.returncode == 0 and report["issues"] == [] and report["notes"] == 1


# ---------------------------------------------------------------------------
# A folder that is not a memory store


def test_documentation_vault_is_not_a_store():
    vault = require(CORPORA / "tasks-docs")
    for args in ((), ("--json",)):
        proc = doctor(vault, *args)
        assert proc.returncode == 2, proc.stdout[-500:]
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "is not a memory store" in lines[0], proc.stderr


def test_folders_that_are_not_stores(make_vault, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    docs = make_vault({"guide.md": "# Guide\n", "api.md": "---\ntitle: API\n---\n# API\n"}, name="docs")
    mostly = make_vault({"a.md": note("a"), "b.md": "# B\n", "c.md": "# C\n"}, name="mostly-docs")
    for folder in (empty, docs, mostly):
        proc = doctor(folder)
        assert proc.returncode == 2 and "is not a memory store" in proc.stderr, (folder, proc.stdout)
        assert len(proc.stderr.strip().splitlines()) == 1


def test_store_without_an_index_is_still_a_store(make_vault):
    store = make_vault({"a.md": note("a"), "b.md": note("b"), "readme.md": "# Readme\n"}, name="store")
    human, report = both(store)
    assert human.returncode == 1
    assert found(report) == [("frontmatter", "readme.md"), ("index-missing", "MEMORY.md")]
    store = make_vault({"MEMORY.md": "# Memory\n"}, name="fresh")  # init.py's empty index
    human, report = both(store)
    assert human.returncode == 0 and report["issues"] == []


def test_help_says_what_a_store_is():
    out = doctor("--help").stdout
    assert "What counts as a store" in out and "omitted" in out and "index-outside" in out
