"""The real installers against a clean clone of this repository (issue 14).

The clients are pinned and installed by ``.ci/run`` from the npm registry
into ``.ci/node/`` (git-ignored), never globally:

* ``claude`` (``@anthropic-ai/claude-code``): ``plugin validate --strict``,
  then, with ``HOME`` in a temporary folder, ``plugin marketplace add`` of the
  clone, ``plugin install autograph@autograph`` and ``plugin details``;
* ``skills`` (the skills.sh installer) with the Node.js it needs, from the
  same folder: ``skills add <clone> -a claude-code -y --copy`` into a fresh
  project, whose copy of ``graph.py health`` then runs on the example vault;
* ``agentskills`` (the ``skills-ref`` package on PyPI, a dev dependency): the
  Agent Skills reference validator, on ``skills/autograph``.

None of these needs a login or the network: every run gets a temporary
``HOME``, no API key, and the variables that turn off Claude Code's updater,
telemetry and other traffic.  A missing client skips these tests, and fails
them when ``AUTOGRAPH_REQUIRE_CORPORA=1`` (CI), as ``conftest.require`` does
for the shared data.

The clone is of the last commit: what is not committed is not tested here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from autograph.hosts import caps
from conftest import EXAMPLE_VAULT, REPO, copy_tree

NODE_BIN = REPO / ".ci" / "node" / "node_modules" / ".bin"
CLAUDE = NODE_BIN / "claude"
SKILLS = NODE_BIN / "skills"
SKILLS_NODE = (22, 20)  # skills 1.7's "engines" (older Node lacks fs/promises glob)

# What the installer's details must list, and the most the plugin may add to
# every session (the skill's and the command's descriptions), in tokens.
ALWAYS_ON_BUDGET = 400


def need(path: Path | None, what: str) -> Path:
    """``path`` when it exists; else skip, or fail under CI (conftest.require)."""
    if path is None or not path.exists():
        message = f"{what} is not installed ({path}); run the npm step of .ci/run"
        if os.environ.get("AUTOGRAPH_REQUIRE_CORPORA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def quiet_env(home: Path) -> dict[str, str]:
    """The environment of a client run: a fresh HOME (and no XDG folders
    elsewhere), none of the calling session's Claude or API variables, no
    updater, telemetry or other traffic, and the pinned Node.js first on
    PATH."""
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "AUTOGRAPH_INDEX_", "XDG_"))
    }
    return {
        **keep,
        "HOME": str(home),
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DO_NOT_TRACK": "1",
        "NO_COLOR": "1",
    }


def run(argv: list, env: dict, cwd: Path | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A ``git clone`` of this repository, as a user or CI would get it."""
    if shutil.which("git") is None:
        pytest.fail("git is needed to clone the repository")
    dest = tmp_path_factory.mktemp("clone") / "autograph"
    ok(subprocess.run(["git", "clone", "-q", str(REPO), str(dest)], capture_output=True, text=True, timeout=120))
    return dest


# ---------------------------------------------------------------------------
# claude plugin validate / marketplace add / install / details


def test_claude_plugin_validate_strict_passes_without_a_warning(clone, tmp_path):
    claude = need(CLAUDE, "claude (@anthropic-ai/claude-code)")
    env = quiet_env(tmp_path)
    for target in (clone, clone / ".claude-plugin" / "plugin.json"):
        proc = ok(run([claude, "plugin", "validate", "--strict", "--json", target], env))
        report = json.loads(proc.stdout)
        assert report["success"] is True and report["strict"] is True
        assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
        assert report["contents"] == [] or all(
            not c.get("warnings") and not c.get("errors") for c in report["contents"]
        )
        assert report["directory"]["findings"] == [], report["directory"]["findings"]
        provides = report["provides"]
        assert provides["skills"] == ["autograph:autograph"] and provides["commands"] == ["autograph:research"]
        hooks = {hook["event"]: hook["command"] for hook in provides["hooks"]}
        assert set(hooks) == {"PreToolUse", "SessionStart", "Stop"}
        assert "guard.py" in hooks["PreToolUse"] and "session.py start" in hooks["SessionStart"]
    # the same check refuses a manifest the runtime would only tolerate
    manifest = clone / ".claude-plugin" / "plugin.json"
    broken = copy_tree(clone, tmp_path / "broken")
    data = json.loads(manifest.read_text(encoding="utf-8"))
    (broken / ".claude-plugin" / "plugin.json").write_text(json.dumps({**data, "unknown_key": 1}))
    proc = run([claude, "plugin", "validate", "--strict", broken / ".claude-plugin" / "plugin.json"], env)
    assert proc.returncode != 0 and "unknown_key" in proc.stdout, proc.stdout


def test_claude_installs_the_plugin_from_the_marketplace(clone, tmp_path):
    claude = need(CLAUDE, "claude (@anthropic-ai/claude-code)")
    home = tmp_path / "home"
    home.mkdir()
    env = quiet_env(home)
    ok(run([claude, "plugin", "marketplace", "add", clone], env))
    ok(run([claude, "plugin", "install", "autograph@autograph"], env))
    details = ok(run([claude, "plugin", "details", "autograph"], env)).stdout
    inventory = {
        m["kind"]: m["items"]
        for m in re.finditer(r"(?m)^\s*(?P<kind>Skills|Hooks) \((?P<n>\d+)\)\s+(?P<items>.*)$", details)
    }
    assert {"autograph", "research"} <= {item.strip() for item in inventory["Skills"].split(",")}, details
    assert inventory["Hooks"].startswith("PreToolUse, SessionStart, Stop"), details
    always_on = int(re.search(r"Always-on:\s+~?([\d,]+) tok", details)[1].replace(",", ""))
    print(f"plugin details: always-on cost ~{always_on} tokens")
    assert 0 < always_on <= ALWAYS_ON_BUDGET, details
    for doc in ("README.md", "skills/autograph/references/install.md"):  # the cost the docs quote is this one
        assert f"~{always_on} tokens" in (REPO / doc).read_text(encoding="utf-8"), f"{doc} quotes another cost"

    # installing enabled it in the user's settings: init.py's hook now defers
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert settings["enabledPlugins"] == {"autograph@autograph": True}
    assert caps.plugin_enabled({"HOME": str(home)}) == str(home / ".claude" / "settings.json")

    # the installed copy's hook, run as Claude Code runs it, guards MEMORY.md
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text(encoding="utf-8"))
    (record,) = installed["plugins"]["autograph@autograph"]
    root = Path(record["installPath"])
    hooks = json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    command = hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    project = tmp_path / "project"
    project.mkdir()
    body = "".join(f"- [Topic {i}](t{i}.md) — hook\n" for i in range(201))
    payload = {"tool_name": "Write", "tool_input": {"file_path": str(project / "MEMORY.md"), "content": body}}
    proc = subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=30,
        env={**env, "CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PROJECT_DIR": str(project)},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


# ---------------------------------------------------------------------------
# skills add (skills.sh)


def test_skills_add_installs_a_copy_that_runs(clone, tmp_path):
    skills = need(SKILLS, "skills (the skills.sh installer)")
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    env = quiet_env(home)
    node = shutil.which("node", path=env["PATH"])
    version = run([node, "--version"], env).stdout.strip() if node else ""
    found = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    need(Path(node) if node and found >= SKILLS_NODE else None, f"Node.js {SKILLS_NODE} or later (found {version})")
    proc = ok(run([skills, "add", clone, "-a", "claude-code", "-y", "--copy"], env, cwd=project))
    installed = project / ".claude" / "skills" / "autograph"
    assert installed.is_dir() and not installed.is_symlink(), proc.stdout
    source = clone / "skills" / "autograph"
    for path in source.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            copy = installed / path.relative_to(source)
            assert copy.is_file() and not copy.is_symlink(), f"not copied: {copy}"
            assert copy.read_bytes() == path.read_bytes(), f"copied wrong: {copy}"
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    health = run([sys.executable, installed / "scripts" / "graph.py", "health", vault, "--json"], env, cwd=project)
    ok(health)
    report = json.loads(health.stdout)
    assert report["notes"] > 0 and 0 <= report["score"] <= 100


# ---------------------------------------------------------------------------
# skills-ref (agentskills validate)


def agentskills() -> Path | None:
    for folder in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(folder) / "agentskills"
        if candidate.exists():
            return candidate
    found = shutil.which("agentskills")
    return Path(found) if found else None


def test_the_agent_skills_reference_validator_accepts_the_skill(clone, tmp_path):
    validator = need(agentskills(), "agentskills (skills-ref, a dev dependency)")
    env = quiet_env(tmp_path)
    proc = ok(run([validator, "validate", clone / "skills" / "autograph"], env))
    assert "Valid skill" in proc.stdout
    # and refuses a skill whose name is not its folder's
    other = copy_tree(clone / "skills" / "autograph", tmp_path / "other-name")
    proc = run([validator, "validate", other], env)
    assert proc.returncode == 1 and "must match skill name 'autograph'" in proc.stdout + proc.stderr
