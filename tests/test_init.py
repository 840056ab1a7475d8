"""init.py: install into Claude Code and Codex, run twice (nothing changes the
second time), uninstall (settings.json and AGENTS.md come back byte for byte;
the store is never touched); existing hooks, file modes and line endings kept."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.hosts import wiring
from conftest import SCRIPTS

INIT = SCRIPTS / "init.py"
OURS = "autograph/scripts/guard.py"


def init(*args, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(INIT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def ok(*args, **kwargs) -> dict:
    proc = init(*args, "--json", **kwargs)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def snapshot(root: Path) -> dict:
    """Every file and folder under ``root``: bytes, mode and mtime of files."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), root)] = "dir"
        for name in files:
            path = Path(folder) / name
            info = path.lstat()
            out[os.path.relpath(path, root)] = (path.read_bytes(), stat.S_IMODE(info.st_mode), info.st_mtime_ns)
    return out


def content(snap: dict) -> dict:
    """A snapshot without mtimes: bytes and modes only."""
    return {k: v if v == "dir" else v[:2] for k, v in snap.items()}


def is_ours(group: dict) -> bool:
    """The hook group runs one of autograph's hook scripts (guard.py, session.py)."""
    return any(
        mark in h.get("command", "") for h in group.get("hooks", []) for mark in (OURS, "autograph/scripts/session.py")
    )


def without_ours(settings: dict, was: dict) -> dict:
    """``settings`` without autograph's hook groups (appended last to each
    event's list), and without the event lists and ``hooks`` object init
    created for them (those not in ``was``)."""
    settings = json.loads(json.dumps(settings))
    hooks = settings.get("hooks", {})
    for event in list(hooks):
        kept = [g for g in hooks[event] if not is_ours(g)]
        assert hooks[event][: len(kept)] == kept  # ours come after the person's
        hooks[event] = kept
        if not kept and event not in was.get("hooks", {}):
            del hooks[event]
    if "hooks" in settings and not hooks and "hooks" not in was:
        del settings["hooks"]
    return settings


def our_groups(settings: dict) -> list:
    return [
        g
        for g in settings.get("hooks", {}).get("PreToolUse", [])
        if any(OURS in h.get("command", "") for h in g.get("hooks", []))
    ]


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# App\n")
    return root


# ---------------------------------------------------------------------------
# Claude Code


def test_claude_install_run_twice_uninstall(project):
    before = snapshot(project)
    report = ok("claude", "--project", project)
    assert report["skill"] == ".claude/skills/autograph" and report["config"] == ".claude/settings.json"
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [group] = our_groups(settings)
    assert group["matcher"] == "Write|Edit|MultiEdit"
    assert group["hooks"][0]["command"] == 'python3 "$CLAUDE_PROJECT_DIR/.claude/skills/autograph/scripts/guard.py"'
    [start] = settings["hooks"]["SessionStart"]
    assert start["matcher"] == "startup|resume|clear|compact"
    assert start["hooks"][0]["command"] == (
        'python3 "$CLAUDE_PROJECT_DIR/.claude/skills/autograph/scripts/session.py" start '
        '--store "$CLAUDE_PROJECT_DIR/memory"'
    )
    assert "Stop" not in settings["hooks"]  # the checkpoint is opt-in
    # Claude Code reads autoMemoryDirectory only from the user's, local and policy settings
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local == {"autoMemoryDirectory": str(project / "memory")}
    assert (project / ".claude" / "skills" / "autograph" / "SKILL.md").is_file()
    assert (project / ".claude" / "skills" / "autograph" / "scripts" / "guard.py").is_file()
    assert (project / "memory" / "MEMORY.md").read_bytes() == (SCRIPTS.parent / "assets" / "MEMORY.md").read_bytes()
    installed = snapshot(project)
    second = ok("claude", "--project", project)
    assert {a["action"] for a in second["actions"]} <= {"unchanged", "kept"}
    assert snapshot(project) == installed  # not a byte, mode or mtime changed
    ok("claude", "--project", project, "--uninstall")
    after = snapshot(project)
    index = after.pop(os.path.join("memory", "MEMORY.md"))
    assert after.pop("memory") == "dir"
    assert index[0] == installed[os.path.join("memory", "MEMORY.md")][0]  # the store is never touched
    assert after == before  # .claude/ and all in it gone; nothing else changed


SETTINGS_VARIANTS = {
    "crlf-4-spaces-with-hooks": (
        '{\r\n    "permissions": {\r\n        "allow": ["Bash(ls)"]\r\n    },\r\n    "hooks": {\r\n'
        '        "PreToolUse": [\r\n            {"matcher": "Bash", "hooks": [{"type": "command", '
        '"command": "echo hi"}]}\r\n        ],\r\n        "Stop": [{"hooks": [{"type": "command", '
        '"command": "notify"}]}]\r\n    }\r\n}\r\n'
    ),
    "no-hooks-key": '{\n  "model": "opus",\n  "env": {"A": "1"}\n}\n',
    "hooks-without-pretooluse": '{\n  "hooks": {\n    "PostToolUse": []\n  }\n}',
    "empty-pretooluse": '{"hooks": {"PreToolUse": []}}\n',
    "empty-object": "{}\n",
    "empty-object-spaced": "{ }",
    "compact-one-line": '{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[]}]}}',
    "tabs": (
        '{\n\t"model": "opus",\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{"matcher": "Bash", "hooks": []}'
        "\n\t\t]\n\t}\n}\n"
    ),
    "unicode": '{\n  "statusLine": "ünïcödé ✓"\n}\n',
    "empty-file": "",
}


@pytest.mark.parametrize("name", SETTINGS_VARIANTS)
def test_settings_json_merged_and_restored_byte_for_byte(project, name):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    original = SETTINGS_VARIANTS[name].encode("utf-8")
    path.write_bytes(original)
    path.chmod(0o640)
    ok("claude", "--project", project)
    text = path.read_bytes().decode("utf-8")
    settings = json.loads(text)
    assert len(our_groups(settings)) == 1
    assert {event for event, groups in settings["hooks"].items() if any(map(is_ours, groups))} == {
        "PreToolUse",
        "SessionStart",
    }
    if original.strip():  # every key and hook that was there is still there, in order
        was = json.loads(original)
        assert without_ours(settings, was) == was
    if "\r\n" in SETTINGS_VARIANTS[name]:
        assert text.count("\n") == text.count("\r\n")  # CRLF stays CRLF
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    installed = path.read_bytes()
    ok("claude", "--project", project)
    assert path.read_bytes() == installed
    ok("claude", "--project", project, "--uninstall")
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_settings_edited_after_install_keeps_the_edits(project):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooks": {\n    "PreToolUse": [\n      {"matcher": "Bash", "hooks": []}\n    ]\n  }\n}\n')
    ok("claude", "--project", project)
    data = json.loads(path.read_text())
    data["model"] = "sonnet"
    data["hooks"]["PreToolUse"].append({"matcher": "Read", "hooks": [{"type": "command", "command": "audit"}]})
    path.write_text(json.dumps(data, indent=2) + "\n")
    report = ok("claude", "--project", project, "--uninstall")
    assert [a["action"] for a in report["actions"] if a["what"].startswith("hook")] == ["update"]
    after = json.loads(path.read_text())
    assert our_groups(after) == []
    assert after["model"] == "sonnet"
    assert [g["matcher"] for g in after["hooks"]["PreToolUse"]] == ["Bash", "Read"]


def test_uninstall_without_the_record_still_removes_only_ours(project):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    original = '{\n  "hooks": {\n    "PreToolUse": [\n      {"matcher": "Bash", "hooks": []}\n    ]\n  }\n}\n'
    path.write_text(original)
    ok("claude", "--project", project)
    (project / ".claude" / "skills" / "autograph" / wiring.RECORD).unlink()
    ok("claude", "--project", project, "--uninstall")
    assert path.read_text() == original  # the group was appended, so taking it out is exact
    assert not (project / ".claude" / "skills" / "autograph").exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"hooks": []}', '"hooks" is not an object'),
        ('{"hooks": {"PreToolUse": {}}}', '"hooks.PreToolUse" is not a list'),
    ],
)
def test_settings_it_cannot_edit_safely_stop_everything(project, text, words):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    before = snapshot(project)
    proc = init("claude", "--project", project)
    assert proc.returncode == 2
    assert words in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(project) == before  # nothing written: no skill, no index


def test_existing_hook_of_ours_with_another_interpreter_is_updated_in_place(project):
    ok("claude", "--project", project)
    path = project / ".claude" / "settings.json"
    ok("claude", "--project", project, "--python", "/opt/py/bin/python3")
    [group] = our_groups(json.loads(path.read_text()))
    assert group["hooks"][0]["command"].startswith("/opt/py/bin/python3 ")
    ok("claude", "--project", project, "--uninstall")
    assert not path.exists()


def test_symlinked_settings_is_written_through_the_link(project, tmp_path):
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(real)
    ok("claude", "--project", project)
    assert (project / ".claude" / "settings.json").is_symlink()
    assert len(our_groups(json.loads(real.read_text()))) == 1
    ok("claude", "--project", project, "--uninstall")
    assert (project / ".claude" / "settings.json").is_symlink()
    assert real.read_text() == '{"model": "opus"}\n'


def test_installed_guard_runs_from_the_settings_command(project):
    ok("claude", "--project", project)
    command = our_groups(json.loads((project / ".claude" / "settings.json").read_text()))[0]["hooks"][0]["command"]
    index = project / "memory" / "MEMORY.md"
    payload = json.dumps({"tool_name": "Write", "tool_input": {"file_path": str(index), "content": "- x\n" * 201}})
    proc = subprocess.run(
        command.replace("python3", sys.executable, 1),
        shell=True,
        input=payload,
        text=True,
        capture_output=True,
        timeout=30,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_installed_skill_is_self_contained(project, tmp_path):
    ok("claude", "--project", project)
    skill = project / ".claude" / "skills" / "autograph"
    assert not list(skill.rglob("__pycache__"))
    proc = subprocess.run(
        [sys.executable, str(skill / "scripts" / "doctor.py"), str(project / "memory")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the template index is a valid empty store


def test_changed_skill_file_is_kept_on_uninstall(project):
    ok("claude", "--project", project)
    mine = project / ".claude" / "skills" / "autograph" / "SKILL.md"
    mine.write_text(mine.read_text() + "\nMy own notes.\n")
    extra = project / ".claude" / "skills" / "autograph" / "mine.txt"
    extra.write_text("not autograph's")
    report = ok("claude", "--project", project, "--uninstall")
    kept = [a for a in report["actions"] if a["action"] == "kept" and a["what"] == "skill"]
    assert [a["path"] for a in kept] == [".claude/skills/autograph/SKILL.md"]
    assert mine.exists() and extra.exists()
    assert not (project / ".claude" / "skills" / "autograph" / "scripts").exists()


# ---------------------------------------------------------------------------
# Codex


def test_codex_install_run_twice_uninstall(project):
    before = snapshot(project)
    report = ok("codex", "--project", project)
    assert report["skill"] == ".agents/skills/autograph" and report["config"] == "AGENTS.md"
    text = (project / "AGENTS.md").read_text()
    assert text.startswith(wiring.BEGIN + "\n") and text.endswith(wiring.END + "\n")
    assert "python3 .agents/skills/autograph/scripts/check.py memory/MEMORY.md" in text
    assert (project / ".agents" / "skills" / "autograph" / "SKILL.md").is_file()
    installed = snapshot(project)
    ok("codex", "--project", project)
    assert snapshot(project) == installed
    ok("codex", "--project", project, "--uninstall")
    after = snapshot(project)
    after.pop(os.path.join("memory", "MEMORY.md"))
    after.pop("memory")
    assert after == before


AGENTS_VARIANTS = {
    "lf": "# Agents\n\nRun the tests before committing.\n",
    "crlf-no-final-newline": "# Agents\r\n\r\nUse tabs.",
    "no-final-newline": "# Agents\n\nUse tabs.",
    "blank-lines-at-end": "# Agents\n\n\n",
    "quotes-a-marker-in-prose": f"# Agents\n\nWe use `{wiring.BEGIN}` markers elsewhere.\n",
    "empty": "",
}


@pytest.mark.parametrize("name", AGENTS_VARIANTS)
def test_agents_md_block_added_and_removed_byte_for_byte(project, name):
    path = project / "AGENTS.md"
    original = AGENTS_VARIANTS[name].encode("utf-8")
    path.write_bytes(original)
    path.chmod(0o600)
    ok("codex", "--project", project)
    text = path.read_bytes().decode()
    assert text.startswith(AGENTS_VARIANTS[name].rstrip("\r\n")) or not original
    assert text.count(wiring.END) == 1 and wiring.BEGIN + ("\r\n" if "\r\n" in name or "\r\n" in text else "\n") in text
    if b"\r\n" in original:
        assert text.count("\n") == text.count("\r\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    installed = path.read_bytes()
    ok("codex", "--project", project)
    assert path.read_bytes() == installed
    ok("codex", "--project", project, "--uninstall")
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_agents_md_edited_around_the_block(project):
    path = project / "AGENTS.md"
    path.write_text("# Agents\n\nRule one.\n")
    ok("codex", "--project", project)
    text = path.read_text()
    path.write_text(text.replace("Rule one.\n", "Rule one.\nRule two.\n") + "\n## Later\n\nAdded after.\n")
    ok("codex", "--project", project, "--uninstall")
    assert path.read_text() == "# Agents\n\nRule one.\nRule two.\n\n\n## Later\n\nAdded after.\n"
    assert wiring.BEGIN not in path.read_text()


def test_agents_md_block_is_updated_in_place(project):
    path = project / "AGENTS.md"
    path.write_text("# Agents\n\nIntro.\n")
    ok("codex", "--project", project)
    path.write_text(path.read_text() + "\nAfter the block.\n")
    ok("codex", "--project", project, "--store", project / "notes")
    text = path.read_text()
    assert "`notes/MEMORY.md`" in text and text.count(wiring.BEGIN) == 1
    assert text.startswith("# Agents\n\nIntro.\n\n" + wiring.BEGIN)
    assert text.endswith(wiring.END + "\n\nAfter the block.\n")


@pytest.mark.parametrize(
    "text",
    [
        f"{wiring.BEGIN}\na\n{wiring.BEGIN}\nb\n{wiring.END}\n",
        f"{wiring.END}\nx\n{wiring.BEGIN}\n",
        f"x\n{wiring.BEGIN}\n",
    ],
)
def test_agents_md_markers_that_do_not_pair_up_stop_everything(project, text):
    (project / "AGENTS.md").write_text(text)
    before = snapshot(project)
    proc = init("codex", "--project", project)
    assert proc.returncode == 2 and "do not pair up" in proc.stderr
    assert snapshot(project) == before
    proc = init("codex", "--project", project, "--uninstall")
    assert proc.returncode == 2 and snapshot(project) == before


def test_agents_md_not_utf8_is_refused(project):
    (project / "AGENTS.md").write_bytes(b"caf\xe9\n")
    proc = init("codex", "--project", project)
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr


# ---------------------------------------------------------------------------
# The store, --user, --dry-run, usage


def test_store_is_never_touched(project):
    store = project / "memory"
    store.mkdir()
    (store / "MEMORY.md").write_text("- [A](a.md) — mine\n")
    (store / "a.md").write_text("---\nname: a\n---\nA fact.\n")
    before = content(snapshot(store))
    for host in ("claude", "codex"):
        report = ok(host, "--project", project)
        assert [a["action"] for a in report["actions"] if a["what"] == "index"] == ["kept"]
        ok(host, "--project", project, "--uninstall")
    assert content(snapshot(store)) == before


def test_store_from_the_project_schema(project):
    (project / "schema.json").write_text('{"memory": {"folder": ".memory"}}')
    report = ok("claude", "--project", project)
    assert report["store"] == ".memory" and (project / ".memory" / "MEMORY.md").is_file()


def test_user_install_goes_to_the_home_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""}
    report = ok("claude", "--user", env=env)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = our_groups(settings)[0]["hooks"][0]["command"]
    assert str(home / ".claude" / "skills" / "autograph" / "scripts" / "guard.py") in command
    assert report["store"] is None and not (home / "memory").exists()
    ok("codex", "--user", "--store", home / "mem", env=env)
    assert (home / ".agents" / "skills" / "autograph" / "SKILL.md").is_file()
    assert str(home / "mem" / "MEMORY.md") in (home / ".codex" / "AGENTS.md").read_text()
    ok("claude", "--user", "--uninstall", env=env)
    ok("codex", "--user", "--uninstall", env=env)
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == ["mem", "mem/MEMORY.md"]


def test_user_install_honours_config_dir_variables(tmp_path):
    env = {
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "CODEX_HOME": str(tmp_path / "cx"),
    }
    ok("claude", "--user", env=env)
    ok("codex", "--user", env=env)
    assert (tmp_path / "cc" / "settings.json").is_file() and (tmp_path / "cc" / "skills" / "autograph").is_dir()
    assert (tmp_path / "cx" / "AGENTS.md").is_file()


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_dry_run_writes_nothing(project, host):
    before = snapshot(project)
    report = ok(host, "--project", project, "--dry-run")
    assert report["dry_run"] is True and any(a["action"] == "create" for a in report["actions"])
    assert snapshot(project) == before
    ok(host, "--project", project)
    installed = snapshot(project)
    ok(host, "--project", project, "--uninstall", "--dry-run")
    assert snapshot(project) == installed


def test_human_report(project):
    proc = init("claude", "--project", project)
    assert proc.returncode == 0
    assert "files:" in proc.stdout and "create" in proc.stdout and ".claude/settings.json" in proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("vscode",),
        ("claude", "--project", "X", "--user"),
        ("claude", "--project", "missing-folder"),
        ("claude", "--usr"),
    ],
)
def test_usage_errors(project, args):
    proc = init(*args, cwd=project)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_current_folder_is_the_default_project(project):
    ok("codex", cwd=project)
    assert (project / "AGENTS.md").is_file() and (project / ".agents" / "skills" / "autograph").is_dir()


# ---------------------------------------------------------------------------
# The text edits, directly


def test_settings_insert_and_remove_are_inverse():
    for text in [
        '{\n  "a": 1\n}',
        '{"hooks": {"PreToolUse": [{"matcher": "X", "hooks": []}], "Stop": []}}',
        '{\n\t"hooks": {\n\t\t"Stop": []\n\t}\n}\n',
    ]:
        command = "python3 /x/autograph/scripts/guard.py"
        added = wiring.settings_with_hook(text, command, Path("s.json"))
        assert json.loads(added)
        assert wiring.settings_without_hook(added, Path("s.json"), {command}) == text
        assert wiring.settings_without_hook(added, Path("s.json"), {"python3 /y/autograph/scripts/guard.py"}) == added


def test_rules_insert_and_remove_are_inverse():
    block = f"{wiring.BEGIN}\nrules\n{wiring.END}"
    for text in ["# A\n", "# A\r\n\r\nB\r\n", "x\n\n"]:
        added = wiring.rules_with_block(text, block, Path("AGENTS.md"))
        assert wiring.rules_without_block(added, Path("AGENTS.md")) == text


def test_agents_md_block_names_the_python_given(project):
    """``--python`` reaches the rules block: the agent is told to run check.py with that interpreter."""
    ok("codex", "--project", project, "--python", "/opt/py/bin/python3.12")
    text = (project / "AGENTS.md").read_text(encoding="utf-8")
    assert "`/opt/py/bin/python3.12 " in text
    assert "`python3 " not in text


# ---------------------------------------------------------------------------
# Issue 7, item 6: init never overwrites what it did not write


def skill_dir(project: Path) -> Path:
    return project / ".claude" / "skills" / "autograph"


SKILL_SOURCE = SCRIPTS.parent


@pytest.mark.parametrize(
    "files",
    [
        {"SKILL.md": "---\nname: autograph\ndescription: my own autograph skill\n---\nMine.\n"},
        {"SKILL.md": "---\nname: autograph\ndescription: another tool\n---\n", "scripts/run.py": "print(1)\n"},
        {"scripts/guard.py": "# my own guard\n"},
    ],
    ids=["users-skill-md", "another-skill-named-autograph", "users-guard-py"],
)
def test_a_file_init_did_not_write_is_refused_and_never_deleted(project, files):
    for rel, text in files.items():
        path = skill_dir(project) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    before = snapshot(project)
    proc = init("claude", "--project", project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    first = sorted(files)[0]
    assert f".claude/skills/autograph/{first}" in proc.stderr and "did not write" in proc.stderr
    assert snapshot(project) == before  # nothing written: no skill file, no hook, no index
    proc = init("claude", "--project", project, "--uninstall")
    assert proc.returncode == 0, proc.stderr
    for rel, text in files.items():
        assert (skill_dir(project) / rel).read_text() == text


def test_a_user_edit_of_an_installed_file_is_not_overwritten_by_a_reinstall(project):
    ok("claude", "--project", project)
    mine = skill_dir(project) / "SKILL.md"
    mine.write_text(mine.read_text() + "\nMy own notes.\n")
    before = snapshot(project)
    proc = init("claude", "--project", project)
    assert proc.returncode == 2 and ".claude/skills/autograph/SKILL.md" in proc.stderr
    assert snapshot(project) == before


def test_an_earlier_version_of_an_installed_file_is_updated(project):
    ok("claude", "--project", project)
    installed = skill_dir(project) / "references" / "memory.md"
    record_path = skill_dir(project) / wiring.RECORD
    record = json.loads(record_path.read_text())
    old = b"an earlier autograph version of this file\n"
    installed.write_bytes(old)
    record["files"]["references/memory.md"] = hashlib.sha256(old).hexdigest()
    record_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    report = ok("claude", "--project", project)
    assert [a["action"] for a in report["actions"] if a["path"].endswith("references/memory.md")] == ["update"]
    assert installed.read_bytes() == (SKILL_SOURCE / "references" / "memory.md").read_bytes()


@pytest.mark.parametrize("where", ["scripts/guard.py", "SKILL.md", ".", "scripts"])
def test_a_symlink_at_a_skill_path_is_never_written_through(project, where):
    index = project / "memory" / "MEMORY.md"
    index.parent.mkdir()
    index.write_text("- [A](a.md) — my index\n")
    link = skill_dir(project) / where if where != "." else skill_dir(project)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(index if where.endswith(("py", "md")) else index.parent, target_is_directory=True)
    before = snapshot(project)
    proc = init("claude", "--project", project)
    assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stdout + proc.stderr
    assert index.read_text() == "- [A](a.md) — my index\n"
    assert snapshot(project) == before and link.is_symlink()
    init("claude", "--project", project, "--uninstall")
    assert index.read_text() == "- [A](a.md) — my index\n" and link.is_symlink()


def test_uninstall_never_follows_a_symlink_at_a_skill_path(project):
    """A link put where an installed file was (the index holding what the
    record says we wrote, as the old install left it) is kept, and so is
    what it points to."""
    ok("claude", "--project", project)
    guard = skill_dir(project) / "scripts" / "guard.py"
    index = project / "memory" / "MEMORY.md"
    index.write_bytes(guard.read_bytes())
    guard.unlink()
    guard.symlink_to(index)
    report = ok("claude", "--project", project, "--uninstall")
    [action] = [a for a in report["actions"] if a["path"].endswith("scripts/guard.py")]
    assert action["action"] == "kept" and "link" in action["note"]
    assert index.is_file() and guard.is_symlink()


def test_a_users_own_guard_hook_is_not_rewritten(project):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    mine = "python3 /opt/tools/autograph/scripts/guard.py --strict"
    original = json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": mine}]}]}}, indent=2
    )
    path.write_text(original)
    before = snapshot(project)
    proc = init("claude", "--project", project)
    assert proc.returncode == 2 and mine in proc.stderr and "did not write" in proc.stderr, proc.stderr
    assert snapshot(project) == before
    proc = init("claude", "--project", project, "--uninstall")
    assert proc.returncode == 0 and path.read_text() == original


def test_our_hook_with_a_users_handler_added_to_its_group_keeps_the_handler(project):
    ok("claude", "--project", project)
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"].append({"type": "command", "command": "audit-writes"})
    path.write_text(json.dumps(data, indent=2) + "\n")
    ok("claude", "--project", project, "--uninstall")
    after = json.loads(path.read_text())
    assert after["hooks"]["PreToolUse"][0]["hooks"] == [{"type": "command", "command": "audit-writes"}]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"hooks": {"PreToolUse": [], "PreToolUse": [{"matcher": "Bash", "hooks": []}]}}', "hooks.PreToolUse"),
        ('{"hooks": {"Stop": []}, "hooks": {"PreToolUse": []}}', "hooks"),
        ('{"model": "a", "env": {"A": "1", "A": "2"}}', "env.A"),
    ],
)
def test_settings_with_duplicate_keys_are_refused_naming_the_key(project, text, key):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    before = snapshot(project)
    for args in [(), ("--uninstall",)]:
        proc = init("claude", "--project", project, *args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f'"{key}"' in proc.stderr and "more than once" in proc.stderr and "Traceback" not in proc.stderr
        assert snapshot(project) == before


def _load_init():
    import importlib.util

    spec = importlib.util.spec_from_file_location("init_script", INIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_conflict_while_writing_finishes_with_exit_code_4(project, monkeypatch, capsys):
    from autograph.write import replace
    from autograph.write.replace import Conflict

    real = replace.replace_file

    def racing(target, before, after, *args, **kwargs):
        if Path(target).name == "settings.json":
            raise Conflict(f"{target}: changed since it was read; not written")
        return real(target, before, after, *args, **kwargs)

    monkeypatch.setattr(replace, "replace_file", racing)
    code = _load_init().main(["claude", "--project", str(project), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 4
    assert [c["path"] for c in report["conflicts"]] == [".claude/settings.json"]
    assert (skill_dir(project) / "SKILL.md").is_file()  # the rest was written


def test_help_lists_the_exit_codes():
    proc = init("--help")
    assert proc.returncode == 0
    text = proc.stdout
    assert "Exit codes:" in text and "4 " in text.split("Exit codes:")[1]


# ---------------------------------------------------------------------------
# Issue 7, item 7: the hook the user installed enforces the project's schema


def guard_command_of(project: Path) -> str:
    return our_groups(json.loads((project / ".claude" / "settings.json").read_text()))[0]["hooks"][0]["command"]


def run_command(command: str, payload: dict, project: Path, cwd: Path) -> dict:
    proc = subprocess.run(
        command.replace("python3", sys.executable, 1),
        shell=True,
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        timeout=30,
        cwd=cwd,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project), "HOME": str(cwd)},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["hookSpecificOutput"] if proc.stdout.strip() else {}


def hot_write(project: Path, count: int) -> dict:
    return {"tool_name": "Write", "tool_input": {"file_path": str(project / "HOT.md"), "content": "- x\n" * count}}


@pytest.mark.parametrize("where", ["schema.json", "conf/autograph.json"])
def test_installed_guard_enforces_the_schema_given_to_init(project, tmp_path, where):
    schema = project / where
    schema.parent.mkdir(exist_ok=True)
    schema.write_text(json.dumps({"index": {"files": ["HOT.md"], "hard": {"lines": 20}}}))
    args = ("--schema", schema) if where != "schema.json" else ()
    report = ok("claude", "--project", project, *args)
    assert report["schema"] == where
    command = guard_command_of(project)
    assert f'--schema "$CLAUDE_PROJECT_DIR/{where}"' in command and wiring.DEFER_FLAG not in command
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run_command(command, hot_write(project, 21), project, elsewhere)["permissionDecision"] == "deny"
    assert "permissionDecision" not in run_command(command, hot_write(project, 20), project, elsewhere)
    second = ok("claude", "--project", project, *args)
    assert {a["action"] for a in second["actions"]} <= {"unchanged", "kept"}
    ok("claude", "--project", project, *args, "--uninstall")
    assert not (project / ".claude").exists()


def test_user_install_names_an_absolute_schema(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    schema = tmp_path / "my schemas" / "schema.json"
    schema.parent.mkdir()
    schema.write_text("{}")
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""}
    ok("claude", "--user", "--schema", schema, env=env)
    command = our_groups(json.loads((home / ".claude" / "settings.json").read_text()))[0]["hooks"][0]["command"]
    assert f"--schema '{schema}'" in command


def test_a_bad_schema_given_to_init_stops_it(project, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"index": {"hard": {"lines": 0}}}')
    before = snapshot(project)
    proc = init("claude", "--project", project, "--schema", bad)
    assert proc.returncode == 2 and "$.index.hard.lines" in proc.stderr
    assert snapshot(project) == before


def test_an_install_by_an_earlier_init_is_upgraded_in_place(project):
    """A record written before the hook command was recorded: the group that
    runs this skill's guard is ours and gets the new command."""
    ok("claude", "--project", project)
    settings = project / ".claude" / "settings.json"
    legacy = 'python3 "$CLAUDE_PROJECT_DIR/.claude/skills/autograph/scripts/guard.py"'
    settings.write_text(settings.read_text().replace(json.dumps(guard_command_of(project)), json.dumps(legacy)))
    assert guard_command_of(project) == legacy
    record_path = skill_dir(project) / wiring.RECORD
    record = json.loads(record_path.read_text())
    del record["hook"]
    record_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    ok("claude", "--project", project)
    [group] = our_groups(json.loads(settings.read_text()))
    assert group["hooks"][0]["command"].endswith('guard.py"')
    ok("claude", "--project", project, "--uninstall")
    assert not settings.exists()
