"""init.py for the hosts that keep rules in a file (issue 28): Gemini CLI,
OpenCode, Cursor, Windsurf, Kiro and Cline; Codex's hooks; --reader.

For each host: install, reinstall (nothing changes), uninstall (byte for
byte; a person's own text in a shared rules file kept), reader mode, a file
of the person's at the rules path never overwritten, and --user where the
host has a rules file for the user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.hosts import rules_hosts, wiring
from autograph.hosts.toml_text import toml_with_flag, toml_without_flag
from conftest import SCRIPTS
from test_init import content, init, ok
from test_init import snapshot as snapshot_with_times

INIT = SCRIPTS / "init.py"
HOSTS = ["gemini", "opencode", "cursor", "windsurf", "kiro", "cline"]


def snapshot(root: Path) -> dict:
    """Every file and folder under ``root``: the bytes and mode of files."""
    return content(snapshot_with_times(root))


def without_store(snap: dict) -> dict:
    """``snap`` without the store init created (the index stays on uninstall)."""
    return {k: v for k, v in snap.items() if k not in ("memory", os.path.join("memory", "MEMORY.md"))}


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def rules_path(host: str, root: Path) -> Path:
    return root / rules_hosts.HOSTS[host].project_rules


@pytest.mark.parametrize("host", HOSTS)
def test_install_reinstall_uninstall(project, host):
    before = snapshot(project)
    report = ok(host, "--project", project)
    spec = rules_hosts.HOSTS[host]
    assert report["skill"] == spec.project_skill and report["config"] == spec.project_rules
    assert report["rung"] == "check after write" and report["reader"] is False and report["hooks_config"] is None
    assert report["unverified"] is (not spec.verified)
    assert (project / spec.project_skill / "SKILL.md").is_file()
    assert (project / "memory" / "MEMORY.md").is_file()
    text = rules_path(host, project).read_text(encoding="utf-8")
    assert text.startswith(spec.frontmatter + wiring.BEGIN) and text.endswith(wiring.END + "\n")
    skill = spec.project_skill
    assert f"python3 {skill}/scripts/check.py memory/MEMORY.md" in text
    assert f"python3 {skill}/scripts/card.py remember" in text
    assert "160 lines or 20,000 bytes" in text and "under 140 lines / 17,500 bytes" in text
    assert "200 lines or 25,000 bytes" in text
    installed = snapshot(project)
    again = ok(host, "--project", project)
    assert snapshot(project) == installed
    assert {a["action"] for a in again["actions"]} <= {"unchanged", "kept"}
    ok(host, "--project", project, "--uninstall")
    assert without_store(snapshot(project)) == before


def test_frontmatter_of_each_rules_file(project):
    for host, line in (
        ("cursor", "alwaysApply: true"),
        ("windsurf", "trigger: always_on"),
        ("kiro", "inclusion: always"),
    ):
        ok(host, "--project", project)
        head = rules_path(host, project).read_text().split("---\n")[1]
        assert line in head.splitlines()
    ok("cline", "--project", project)
    assert rules_path("cline", project).read_text().startswith(wiring.BEGIN)  # no frontmatter: always on


SHARED = {"gemini": "GEMINI.md", "opencode": "AGENTS.md"}


@pytest.mark.parametrize("host", sorted(SHARED))
@pytest.mark.parametrize("text", ["# Project\n\nUse tabs.\n", "# P\r\n\r\nUse tabs.", ""], ids=["lf", "crlf", "empty"])
def test_a_shared_rules_file_comes_back_byte_for_byte(project, host, text):
    path = project / SHARED[host]
    path.write_bytes(text.encode())
    ok(host, "--project", project)
    assert path.read_text(encoding="utf-8").count(wiring.BEGIN) == 1
    ok(host, "--project", project, "--uninstall")
    assert path.read_bytes() == text.encode()


@pytest.mark.parametrize("host", sorted(SHARED))
def test_text_added_around_the_block_is_kept_on_uninstall(project, host):
    path = project / SHARED[host]
    path.write_text("# Mine\n")
    ok(host, "--project", project)
    path.write_text(path.read_text() + "\nAdded later.\n")
    ok(host, "--project", project, "--uninstall")
    text = path.read_text()
    assert wiring.BEGIN not in text and text.startswith("# Mine\n") and "Added later.\n" in text


@pytest.mark.parametrize("host", ["cursor", "windsurf", "kiro", "cline"])
def test_a_users_file_at_the_rules_path_is_never_overwritten(project, host):
    path = rules_path(host, project)
    path.parent.mkdir(parents=True)
    path.write_text("my own rules\n")
    before = snapshot(project)
    proc = init(host, "--project", project)
    assert proc.returncode == 2 and "init did not write" in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(project) == before
    proc = init(host, "--project", project, "--uninstall", "--json")
    assert proc.returncode == 0 and path.read_text() == "my own rules\n"


@pytest.mark.parametrize("host", ["cursor", "windsurf", "kiro", "cline"])
def test_a_rules_file_edited_after_install_is_kept(project, host):
    ok(host, "--project", project)
    path = rules_path(host, project)
    path.write_text(path.read_text() + "my note\n")
    assert init(host, "--project", project).returncode == 2  # never overwritten
    report = ok(host, "--project", project, "--uninstall")
    assert path.read_text().endswith("my note\n")
    assert any(a["action"] == "kept" and a["path"] == rules_hosts.HOSTS[host].project_rules for a in report["actions"])


def test_a_legacy_clinerules_file_is_refused(project):
    (project / ".clinerules").write_text("old rules\n")
    proc = init("cline", "--project", project)
    assert proc.returncode == 2 and "is a file where init puts a folder" in proc.stderr
    assert (project / ".clinerules").read_text() == "old rules\n"


@pytest.mark.parametrize("host", [*HOSTS, "codex", "claude"])
def test_reader_mode(project, tmp_path, host):
    store = tmp_path / "shared"
    store.mkdir()
    before = snapshot(project)
    report = ok(host, "--project", project, "--reader", "--store", store)
    assert report["reader"] is True and report["rung"] == "rules only" and report["hooks_config"] is None
    assert not (store / "MEMORY.md").exists() and not (project / "memory").exists()
    assert not (project / ".codex").exists() and not (project / ".claude" / "settings.json").exists()
    assert not (project / ".claude" / "settings.local.json").exists()
    rules = project / report["config"]
    text = rules.read_text(encoding="utf-8")
    assert "read-only" in text and "tell the user instead" in text and str(store / "MEMORY.md") in text
    assert "card.py remember" not in text and "check.py" not in text
    installed = snapshot(project)
    ok(host, "--project", project, "--reader", "--store", store)
    assert snapshot(project) == installed
    ok(host, "--project", project, "--reader", "--store", store, "--uninstall")
    assert snapshot(project) == before


def test_reader_needs_a_store(project):
    proc = init("gemini", "--project", project, "--reader")
    assert proc.returncode == 2 and "--reader needs --store" in proc.stderr


USER_RULES = {
    "gemini": ".gemini/GEMINI.md",
    "opencode": ".config/opencode/AGENTS.md",
    "windsurf": ".codeium/windsurf/memories/global_rules.md",
    "kiro": ".kiro/steering/autograph.md",
    "cline": "Documents/Cline/Rules/autograph.md",
}


@pytest.mark.parametrize("host", sorted(USER_RULES))
def test_user_install(tmp_path, host):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": ""}
    shared = USER_RULES[host].endswith(("GEMINI.md", "AGENTS.md", "global_rules.md"))
    if shared:  # the person's own rules there stay
        (home / USER_RULES[host]).parent.mkdir(parents=True)
        (home / USER_RULES[host]).write_text("# mine\n")
    before = snapshot(home)
    report = ok(host, "--user", "--store", home / "mem", env=env)
    assert report["scope"] == "user"
    rules = (home / USER_RULES[host]).read_text()
    assert str(home / "mem" / "MEMORY.md") in rules and wiring.BEGIN in rules
    skill = Path(report["skill"])
    assert (skill if skill.is_absolute() else home / skill).joinpath("SKILL.md").is_file()
    installed = snapshot(home)
    ok(host, "--user", "--store", home / "mem", env=env)
    assert snapshot(home) == installed
    ok(host, "--user", "--store", home / "mem", "--uninstall", env=env)
    after = {k: v for k, v in snapshot(home).items() if not k.startswith("mem")}
    assert after == before


def test_cursor_has_no_user_rules_file(tmp_path):
    proc = init("cursor", "--user", env={"HOME": str(tmp_path)})
    assert proc.returncode == 2 and "--project" in proc.stderr


def test_help_marks_the_unverified_hosts():
    out = init("--help").stdout
    for host in ("cursor", "windsurf", "kiro", "cline"):
        assert not rules_hosts.HOSTS[host].verified
        assert f"{host} (unverified)" in out or f"{host}  (unverified)" in " ".join(out.split("\n"))
    for host in ("gemini", "opencode", "codex"):
        assert rules_hosts.HOSTS[host].verified


# ---------------------------------------------------------------------------
# Codex: hooks in .codex/hooks.json, the feature flag in .codex/config.toml


def test_codex_registers_the_guard_and_session_start(project):
    report = ok("codex", "--project", project)
    assert report["rung"] == "hook" and report["hooks_config"] == ".codex/hooks.json"
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    guard = hooks["PreToolUse"][0]
    assert guard["matcher"] == wiring.CODEX_MATCHER and "apply_patch" in guard["matcher"].split("|")
    assert guard["hooks"][0]["command"].endswith(str(project / ".agents/skills/autograph/scripts/guard.py"))
    start = hooks["SessionStart"][0]
    assert start["matcher"] == "startup|resume|clear"
    assert f"session.py start --store {project / 'memory'}" in start["hooks"][0]["command"]
    assert (project / ".codex" / "config.toml").read_text() == "[features]\nhooks = true\n"


def test_codex_hook_command_runs_the_installed_guard(project):
    ok("codex", "--project", project)
    command = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    payload = {
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / "memory" / "MEMORY.md"), "content": "- a\n"},
    }
    proc = subprocess.run(
        command["command"], shell=True, input=json.dumps(payload), capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr


CONFIGS = {
    "none": None,
    "user-settings": 'model = "gpt-5"\napproval_policy = "on-request"\n',
    "features-table": '# mine\n[features]\nweb_search = true\n\n[projects."/x"]\ntrust_level = "trusted"\n',
    "crlf-no-final-newline": 'model = "gpt-5"\r\n[tui]\r\nnotifications = true',
}


@pytest.mark.parametrize("config", list(CONFIGS), ids=list(CONFIGS))
def test_codex_hooks_come_back_byte_for_byte(project, config):
    toml = project / ".codex" / "config.toml"
    hooks_json = project / ".codex" / "hooks.json"
    user_hooks = (
        '{\n    "hooks": {\n        "Stop": [\n            {"hooks": [{"type": "command", "command": "echo"}]}\n'
        "        ]\n    }\n}\n"
    )
    if CONFIGS[config] is not None:
        toml.parent.mkdir()
        toml.write_bytes(CONFIGS[config].encode())
        hooks_json.write_text(user_hooks)
    before = snapshot(project)
    ok("codex", "--project", project)
    text = toml.read_text()
    assert "hooks = true" in text
    if CONFIGS[config]:
        assert CONFIGS[config].replace("\r\n", "\n").split("\n")[0] in text.replace("\r\n", "\n")
        assert "Stop" in json.loads(hooks_json.read_text())["hooks"]
    installed = snapshot(project)
    ok("codex", "--project", project)
    assert snapshot(project) == installed
    ok("codex", "--project", project, "--uninstall")
    assert without_store(snapshot(project)) == before


def test_codex_config_edited_since_keeps_the_edit(project):
    toml = project / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text('model = "gpt-5"\n')
    ok("codex", "--project", project)
    toml.write_text(toml.read_text() + "\n[tui]\nnotifications = true\n")
    ok("codex", "--project", project, "--uninstall")
    assert toml.read_text() == 'model = "gpt-5"\n\n[tui]\nnotifications = true\n'


def test_codex_hooks_turned_off_by_the_person_stay_off(project):
    toml = project / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text("[features]\nhooks = false\n")
    report = ok("codex", "--project", project)
    assert toml.read_text() == "[features]\nhooks = false\n"
    kept = [a for a in report["actions"] if a["path"] == ".codex/config.toml"]
    assert kept[0]["action"] == "kept" and "hooks = false" in kept[0]["note"]


def test_codex_config_it_cannot_edit_is_refused(project):
    toml = project / ".codex" / "config.toml"
    toml.parent.mkdir()
    for text in ("features = { web_search = true }\n", "not toml [\n"):
        toml.write_text(text)
        before = snapshot(project)
        proc = init("codex", "--project", project)
        assert proc.returncode == 2 and "config.toml" in proc.stderr and "Traceback" not in proc.stderr
        assert snapshot(project) == before


def test_codex_user_install_uses_codex_home(tmp_path):
    home, codex_home = tmp_path / "home", tmp_path / "cx"
    home.mkdir()
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('model = "gpt-5"\n')
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home)}
    before = snapshot(tmp_path)
    ok("codex", "--user", "--store", tmp_path / "mem", env=env)
    assert (codex_home / "AGENTS.md").is_file()
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert (
        str(home / ".agents" / "skills" / "autograph" / "scripts" / "guard.py")
        in hooks["PreToolUse"][0]["hooks"][0]["command"]
    )
    assert (codex_home / "config.toml").read_text() == 'model = "gpt-5"\n\n[features]\nhooks = true\n'
    ok("codex", "--user", "--store", tmp_path / "mem", "--uninstall", env=env)
    after = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("mem")}
    assert after == before


def test_codex_reader_takes_back_a_writers_hooks(project, tmp_path):
    ok("codex", "--project", project)
    assert json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    ok("codex", "--project", project, "--reader", "--store", tmp_path)
    assert not (project / ".codex" / "hooks.json").exists()


@pytest.mark.parametrize(
    "text",
    ["", "a = 1\n", "a = 1\r\n\r\n[x]\r\nb = 2\r\n", "[features]\nweb = true\n\n[x]\ny = 1\n", "# c\n[features]\n"],
)
def test_feature_flag_insert_and_remove_are_inverse(text):
    added = toml_with_flag(text, Path("config.toml"))
    assert "hooks = true" in added
    assert toml_without_flag(added, Path("config.toml"), drop_table="[features]" not in text) == text


def test_two_hosts_that_read_one_agents_md_are_not_installed_twice(tmp_path):
    """Codex and OpenCode both read the project's AGENTS.md: the second
    install is refused (nothing written) rather than taking the first's
    block for its own, so uninstalling one never strips the other's rules."""
    import subprocess

    from conftest import SCRIPTS

    project = tmp_path / "p"
    project.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home")}

    def init(*args):
        argv = [sys.executable, str(SCRIPTS / "init.py"), *args, "--project", str(project)]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)

    assert init("codex").returncode == 0
    agents = (project / "AGENTS.md").read_bytes()
    refused = init("opencode")
    assert refused.returncode == 2 and "AGENTS.md" in refused.stderr and "uninstall the other" in refused.stderr
    assert (project / "AGENTS.md").read_bytes() == agents and not (project / ".opencode").exists()
    assert init("codex").returncode == 0  # its own block: a reinstall is fine
    assert init("codex", "--uninstall").returncode == 0
    assert init("opencode").returncode == 0
