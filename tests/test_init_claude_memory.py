"""init.py claude and Claude Code's memory (issue 27): autoMemoryDirectory,
--host-store, the SessionStart hook, the --checkpoint Stop hook, and
stepping aside while the autograph plugin is enabled.

Every run has its own HOME, so the user's settings (and whether the plugin
is enabled there) are the test's."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.hosts import claude_memory
from conftest import SCRIPTS

INIT = SCRIPTS / "init.py"


@pytest.fixture
def home(tmp_path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def init(home: Path, *args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    return subprocess.run(
        [sys.executable, str(INIT), "claude", *map(str, args), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "HOME": str(home)},
    )


def ok(home: Path, *args) -> dict:
    proc = init(home, *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))}


def events(project: Path) -> dict:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return {event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in settings["hooks"].items()}


def enable_plugin(home: Path, on: bool = True) -> None:
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"autograph@autograph": on}}))


def test_auto_memory_goes_to_the_local_settings_and_comes_back_byte_for_byte(home, project):
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    original = b'{\r\n\t"permissions": {"allow": ["Bash(ls)"]}\r\n}\r\n'
    local.write_bytes(original)
    before = tree(project)
    report = ok(home, "--project", project, "--store", project / "notes")
    assert report["auto_memory"] == str(project / "notes") and report["store"] == "notes"
    data = json.loads(local.read_text())
    assert data == {"permissions": {"allow": ["Bash(ls)"]}, "autoMemoryDirectory": str(project / "notes")}
    assert local.read_bytes().count(b"\r\n") == local.read_bytes().count(b"\n")  # its line endings kept
    assert "autoMemoryDirectory" not in (project / ".claude" / "settings.json").read_text()
    again = ok(home, "--project", project, "--store", project / "notes")
    assert {a["action"] for a in again["actions"]} <= {"unchanged", "kept"}
    ok(home, "--project", project, "--uninstall")
    after = tree(project)
    assert after.pop("notes/MEMORY.md") and after.pop("notes", "x") is None  # the store stays
    assert after == before


def test_a_person_s_own_auto_memory_folder_is_never_replaced(home, project):
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"autoMemoryDirectory": "/somewhere/else"}\n')
    before = tree(project)
    proc = init(home, "--project", project)
    assert proc.returncode == 2 and "autoMemoryDirectory" in proc.stderr and "/somewhere/else" in proc.stderr
    assert tree(project) == before
    # the same folder given as the store: kept, and never removed as if init wrote it
    (project / "x").mkdir()
    local.write_text(json.dumps({"autoMemoryDirectory": str(project / "x")}) + "\n")
    ok(home, "--project", project, "--store", project / "x")
    ok(home, "--project", project, "--uninstall")
    assert json.loads(local.read_text()) == {"autoMemoryDirectory": str(project / "x")}


def test_a_user_install_with_a_store_points_claude_code_at_it(home, tmp_path):
    store = tmp_path / "memory store"
    report = ok(home, "--user", "--store", store)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["autoMemoryDirectory"] == str(store) == report["auto_memory"]
    assert set(settings["hooks"]) == {"PreToolUse", "SessionStart"}
    assert (store / "MEMORY.md").is_file()
    ok(home, "--user", "--uninstall")
    assert not (home / ".claude" / "settings.json").exists()
    assert ok(home, "--user")["auto_memory"] is None  # no store: no folder to point at


def test_host_store_is_the_folder_claude_code_uses(home, project):
    (project / ".git").mkdir()
    (project / "sub").mkdir()
    report = ok(home, "--project", project / "sub", "--host-store")
    own = home / ".claude" / "projects" / claude_memory.project_key(str(project)) / "memory"
    assert Path(report["store"]) == own and (own / "MEMORY.md").is_file()
    assert report["auto_memory"] is None and not (project / "sub" / ".claude" / "settings.local.json").exists()
    assert f"--store {shlex.quote(str(own))}" in events(project / "sub")["SessionStart"][0]
    for bad in (("--store", project), ("--user",)):
        proc = init(home, "--project" if bad[0] != "--user" else "--user", *([project] if bad[0] != "--user" else []))
        assert proc.returncode == 0
        proc = init(home, *(["--project", project] if bad[0] != "--user" else []), *bad, "--host-store")
        assert proc.returncode == 2 and "--host-store" in proc.stderr


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/tmp/a/my proj.v2_x", "-tmp-a-my-proj-v2-x"),
        ("/tmp/a/Ünïcode dir", "-tmp-a--n-code-dir"),
        ("/tmp/a/😀", "-tmp-a---"),  # one character outside the BMP: two UTF-16 units
    ],
)
def test_claude_code_s_project_key(path, key):
    assert claude_memory.project_key(path) == key


def test_a_long_project_key_is_cut_and_hashed_as_claude_code_does():
    # measured with the pinned CLI: this path's memory folder ends in -d8e0ue
    key = claude_memory.project_key("/tmp/tmp0t25hbos/" + "a" * 230)
    assert len(key) == 207 and key.endswith("-d8e0ue")


def test_session_start_is_registered_and_the_checkpoint_only_when_asked(home, project):
    ok(home, "--project", project)
    hooks = events(project)
    assert set(hooks) == {"PreToolUse", "SessionStart"}
    assert hooks["SessionStart"] == [
        'python3 "$CLAUDE_PROJECT_DIR/.claude/skills/autograph/scripts/session.py" start '
        '--store "$CLAUDE_PROJECT_DIR/memory"'
    ]
    report = ok(home, "--project", project, "--checkpoint")
    assert report["checkpoint"] is True
    assert events(project)["Stop"] == [
        'python3 "$CLAUDE_PROJECT_DIR/.claude/skills/autograph/scripts/session.py" stop '
        '--store "$CLAUDE_PROJECT_DIR/memory"'
    ]
    ok(home, "--project", project, "--uninstall")  # without --checkpoint: the Stop hook goes too
    assert not (project / ".claude").exists()


def test_with_the_plugin_enabled_init_installs_no_skill_and_no_hooks(home, project):
    enable_plugin(home)
    report = ok(home, "--project", project)
    assert report["plugin"] == str(home / ".claude" / "settings.json")
    assert not [a for a in report["actions"] if a["what"] == "skill"]
    assert not (project / ".claude" / "settings.json").exists()
    assert json.loads((project / ".claude" / "settings.local.json").read_text())["autoMemoryDirectory"]
    assert not (project / ".claude" / "skills" / "autograph" / "scripts").exists()
    ok(home, "--project", project, "--uninstall")
    assert not (project / ".claude").exists()


def test_run_again_after_the_plugin_was_enabled_init_steps_aside(home, project):
    (project / ".claude").mkdir()
    settings = project / ".claude" / "settings.json"
    settings.write_text('{\n  "model": "opus"\n}\n')
    ok(home, "--project", project, "--checkpoint")
    skill = project / ".claude" / "skills" / "autograph"
    (skill / "references" / "memory.md").write_text("my own notes\n")  # changed since: kept
    enable_plugin(home)
    report = ok(home, "--project", project)
    removed = [a for a in report["actions"] if a["what"] == "skill" and a["action"] == "remove"]
    kept = [a for a in report["actions"] if a["what"] == "skill" and a["action"] == "kept"]
    assert removed and [a["path"] for a in kept] == [".claude/skills/autograph/references/memory.md"]
    assert not (skill / "scripts").exists() and (skill / "references" / "memory.md").exists()
    assert settings.read_text() == '{\n  "model": "opus"\n}\n'  # the hooks taken out, the rest as it was
    # the plugin disabled again: init installs them back
    enable_plugin(home, on=False)
    proc = init(home, "--project", project)
    assert proc.returncode == 2 and "memory.md" in proc.stderr  # the changed file is not init's any more
    (skill / "references" / "memory.md").unlink()
    ok(home, "--project", project)
    assert set(events(project)) == {"PreToolUse", "SessionStart"}


def test_hooks_already_in_init_s_own_form_are_taken_back_out(home, project, tmp_path):
    """A settings.json copied from an earlier install (or written by a
    second init running at the same time) already holds init's commands:
    they run the scripts init installs, so they are init's and uninstall
    takes them out with the skill (a hook left behind would fail, and block,
    every write)."""
    ok(home, "--project", project, "--checkpoint")
    copied = (project / ".claude" / "settings.json").read_bytes()
    ok(home, "--project", project, "--uninstall")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_bytes(copied)
    ok(home, "--project", project, "--checkpoint")
    ok(home, "--project", project, "--uninstall")
    assert (
        not (project / ".claude" / "settings.json").exists()
        or "autograph" not in (project / ".claude" / "settings.json").read_text()
    )


def test_run_again_without_checkpoint_takes_the_stop_hook_out(home, project):
    ok(home, "--project", project, "--checkpoint")
    assert "Stop" in events(project)
    report = ok(home, "--project", project)
    assert report["checkpoint"] is False and set(events(project)) == {"PreToolUse", "SessionStart"}


def test_a_person_s_spelling_of_the_same_folder_is_kept(home, project):
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    for spelling in ("~/mem", "~/mem/", str(home / "mem") + "/"):
        local.write_text(json.dumps({"autoMemoryDirectory": spelling}))
        ok(home, "--project", project, "--store", home / "mem")
        assert json.loads(local.read_text()) == {"autoMemoryDirectory": spelling}
        ok(home, "--project", project, "--uninstall")
        assert json.loads(local.read_text()) == {"autoMemoryDirectory": spelling}


def test_host_store_refuses_when_a_setting_moves_claude_code_s_memory(home, project):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"autoMemoryDirectory": "~/elsewhere"}')
    proc = init(home, "--project", project, "--host-store")
    assert proc.returncode == 2 and "autoMemoryDirectory" in proc.stderr and "--store" in proc.stderr
    assert not (project / ".claude").exists()


def test_host_store_of_a_linked_worktree_is_the_main_repository_s(home, tmp_path):
    main = tmp_path / "repo with space"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], check=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
                        "GIT_COMMITTER_EMAIL": "a@b"})  # fmt: skip
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    report = ok(home, "--project", tmp_path / "wt", "--host-store")
    assert Path(report["store"]) == home / ".claude" / "projects" / claude_memory.project_key(str(main)) / "memory"


@pytest.mark.parametrize("value", ["relative/home", "./home"])
def test_a_user_install_needs_an_absolute_home(tmp_path, value):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    proc = subprocess.run(
        [sys.executable, str(INIT), "claude", "--user", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "HOME": value},
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and "HOME" in proc.stderr


def test_a_dangling_link_at_the_local_settings_is_refused_before_anything_is_written(home, project):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").symlink_to(project / "nowhere" / "settings.local.json")
    before = tree(project)
    proc = init(home, "--project", project)
    assert proc.returncode == 2 and "settings.local.json" in proc.stderr
    assert tree(project) == before


def test_checkpoint_with_the_plugin_enabled_points_at_its_option(home, project):
    enable_plugin(home)
    proc = init(home, "--project", project, "--checkpoint")
    assert proc.returncode == 0 and "checkpoint" in proc.stderr and json.loads(proc.stdout)["checkpoint"] is False
