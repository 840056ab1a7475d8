"""The real Codex, Gemini CLI and OpenCode, headless, against fake model servers (issue 28).

The CLIs are pinned and installed by ``.ci/run`` into ``.ci/node`` beside
Claude Code (``@openai/codex``, ``@google/gemini-cli``, ``opencode-ai``).
Every run gets a fresh ``HOME`` (and ``CODEX_HOME``), none of the calling
session's host variables, updates, telemetry and registry traffic turned off,
and a model server on 127.0.0.1 that records what the model would receive:

* Codex (``codex exec``): a ``model_providers`` entry given with ``-c``
  (``base_url`` to :class:`FakeOpenAI`, ``wire_api = "responses"``: Codex
  0.171 speaks only the Responses API);
* Gemini CLI (``gemini -p``): ``GOOGLE_GEMINI_BASE_URL`` to
  :class:`FakeGemini`, with the Gemini API key auth chosen in its
  settings and a placeholder key;
* OpenCode (``opencode run``): a provider of ``@ai-sdk/openai-compatible``
  (bundled) in ``OPENCODE_CONFIG_CONTENT``, ``baseURL`` to
  :class:`FakeOpenAI` (Chat Completions).

What is checked: the autograph plugin, installed into Codex from a copy of
this checkout (Codex installs Claude Code plugins), lists its three hooks
(``hooks/list`` of ``codex app-server``), and its guard, run by Codex for an
``apply_patch``, denies a patch that grows MEMORY.md past its cap with the
reason in the next request; and for each host, the rules ``init.py <host>``
writes reach the model.

Bounded: each server answers "done" after a few requests and every CLI run
has a timeout.  A missing CLI fails under CI (``AUTOGRAPH_REQUIRE_CORPORA=1``)
and skips elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO
from helpers.fake_gemini import FakeGemini
from helpers.fake_gemini import seen as gemini_seen
from helpers.fake_openai import FakeOpenAI, custom_tool_call, function_call, message, seen
from test_plugin_clients import NODE_BIN, need, ok, quiet_env, run

CODEX = NODE_BIN / "codex"
GEMINI = NODE_BIN / "gemini"
OPENCODE = NODE_BIN / "opencode"
RUN_TIMEOUT = 60
HOST_PREFIXES = ("OPENAI", "CODEX", "GEMINI", "GOOGLE", "OPENCODE", "NPM_CONFIG", "npm_config")
INIT = "skills/autograph/scripts/init.py"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused at once


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of this checkout as a user would have it (as tests/test_claude_code.py makes it)."""
    dest = tmp_path_factory.mktemp("clone") / "autograph"
    skip = shutil.ignore_patterns(".git", ".ci", "__pycache__", ".*cache*", ".hypothesis", ".benchmarks", "*.egg-info")
    shutil.copytree(REPO, dest, ignore=skip, symlinks=True)
    return dest


def host_env(home: Path) -> dict[str, str]:
    """quiet_env, without any host's keys, endpoints or npm settings."""
    home.mkdir(parents=True, exist_ok=True)
    return {k: v for k, v in quiet_env(home).items() if not k.startswith(HOST_PREFIXES)}


def init(clone: Path, host: str, project: Path, env: dict) -> dict:
    """``init.py HOST --project P --store P/memory``; its JSON report."""
    argv = [sys.executable, clone / INIT, host, "--project", project, "--store", project / "memory", "--json"]
    return json.loads(ok(run(argv, env)).stdout)


def rules_block(report: dict) -> str:
    """The rules block init wrote (its config file, between its markers)."""
    text = (Path(report["root"]) / report["config"]).read_text(encoding="utf-8")
    start = text.index("<!-- autograph:begin -->")
    end = text.index("<!-- autograph:end -->") + len("<!-- autograph:end -->")
    return text[start:end]


def assert_rules_reached(block: str, received: str, store: str) -> None:
    assert "## Memory (autograph)" in block and f"`{store}/MEMORY.md`" in block, block
    assert block in received, f"the rules init wrote are not in the request:\n{block}\n---\n{received[-3000:]}"


# ---------------------------------------------------------------------------
# Codex


class Codex:
    """A fresh HOME and CODEX_HOME, and ``codex`` run against a fake server."""

    def __init__(self, tmp_path: Path):
        self.codex = need(CODEX, "codex (@openai/codex)")
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.env = {
            **host_env(self.home),
            "CODEX_HOME": str(self.home / ".codex"),
        }
        # its startup sync of OpenAI's curated plugins (git fetch from github.com, then the GitHub API, then
        # chatgpt.com) goes nowhere: github.com is rewritten for git to a closed port, and so is chatgpt_base_url
        (self.home / ".gitconfig").write_text(f'[url "{CLOSED}/"]\n\tinsteadOf = https://github.com/\n')
        (self.home / ".codex").mkdir()
        (self.home / ".codex" / "config.toml").write_text(f'chatgpt_base_url = "{CLOSED}/"\n', encoding="utf-8")

    def plugin(self, clone: Path) -> None:
        ok(run([self.codex, "plugin", "marketplace", "add", clone], self.env))
        ok(run([self.codex, "plugin", "add", "autograph@autograph"], self.env))

    def hooks(self) -> list[dict]:
        """``hooks/list`` of ``codex app-server`` (JSON-RPC on stdio) for the project."""
        requests = [
            {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "autograph-tests", "version": "1"}}},
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(self.project)]}},
        ]
        proc = subprocess.Popen(
            [str(self.codex), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        timer = threading.Timer(RUN_TIMEOUT, proc.kill)
        timer.start()
        try:
            proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
            proc.stdin.flush()
            for line in proc.stdout:  # the server answers, then waits for more: stop at the answer
                answer = json.loads(line)
                if answer.get("id") == 2:
                    assert "result" in answer, answer
                    (listing,) = answer["result"]["data"]
                    assert listing["errors"] == [], listing
                    return listing["hooks"]
            pytest.fail("codex app-server ended without answering hooks/list")
        finally:
            timer.cancel()
            proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stdin.close()

    def exec(self, script, max_requests: int = 4) -> tuple[subprocess.CompletedProcess, list[dict]]:
        """One ``codex exec`` in the project; returns (process, request bodies)."""
        with FakeOpenAI(script, max_requests=max_requests) as server:
            provider = (
                f'{{name = "fake", base_url = "{server.url}/v1", wire_api = "responses", '
                "request_max_retries = 0, stream_max_retries = 0}"
            )
            settings = {
                "model": '"gpt-5.5"',  # in 0.171's catalog: its tools (apply_patch, freeform) without code mode
                "model_provider": '"fake"',
                "model_providers.fake": provider,
                "check_for_update_on_startup": "false",
                "analytics.enabled": "false",
                "feedback.enabled": "false",
            }
            argv = [self.codex, "exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--json"]
            argv += [a for key, value in settings.items() for a in ("-c", f"{key}={value}")]
            # a fake model in a temporary folder: no sandbox needed; the plugin's hooks are not yet trusted
            argv += ["--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust"]
            argv += ["-C", self.project, "go"]
            proc = run(argv, self.env, cwd=self.project, timeout=RUN_TIMEOUT)
        assert proc.returncode == 0, f"codex exec exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc, server.requests


def tool_output(body: dict, call_id: str) -> str:
    """The output Codex sent back for one tool call."""
    outputs = [
        item.get("output")
        for item in body.get("input", [])
        if item.get("type") in ("custom_tool_call_output", "function_call_output") and item.get("call_id") == call_id
    ]
    assert outputs, f"no output for {call_id}"
    return outputs[-1] if isinstance(outputs[-1], str) else json.dumps(outputs[-1])


def index_lines(start: int, stop: int) -> list[str]:
    return [f"- [Topic {i}](topic-{i}.md) — why topic {i} matters" for i in range(start, stop)]


def test_codex_installs_the_plugin_and_lists_its_hooks(clone, tmp_path):
    host = Codex(tmp_path)
    host.plugin(clone)
    hooks = {hook["eventName"]: hook for hook in host.hooks() if hook.get("pluginId") == "autograph@autograph"}
    assert set(hooks) == {"preToolUse", "sessionStart", "stop"}, hooks
    assert all(hook["enabled"] and hook["source"] == "plugin" for hook in hooks.values()), hooks
    assert "guard.py" in hooks["preToolUse"]["command"] and "unless-init.sh" in hooks["preToolUse"]["command"]
    assert (
        hooks["preToolUse"]["matcher"]
        == json.loads((clone / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]["matcher"]
    )
    assert "session.py start" in hooks["sessionStart"]["command"]
    assert "session.py stop" in hooks["stop"]["command"]
    assert "${CLAUDE_PLUGIN_ROOT}" not in hooks["preToolUse"]["command"]  # Codex put in the installed copy's folder


def test_codex_runs_the_plugin_s_guard_on_apply_patch_and_the_reason_reaches_the_model(clone, tmp_path):
    host = Codex(tmp_path)
    host.plugin(clone)
    index = host.project / "memory" / "MEMORY.md"
    index.parent.mkdir()
    before = "".join(line + "\n" for line in index_lines(0, 10))
    index.write_text(before, encoding="utf-8")
    patch = "\n".join(
        ["*** Begin Patch", "*** Update File: memory/MEMORY.md", "@@", " " + index_lines(9, 10)[0]]
        + ["+" + line for line in index_lines(10, 210)]
        + ["*** End Patch"]
    )
    call = custom_tool_call("apply_patch", patch)

    def script(body, turn):
        return [call] if turn == 0 else [message("done")]

    _, requests = host.exec(script)
    assert len(requests) >= 2, requests
    reply = tool_output(requests[1], call["call_id"])
    assert "blocked by PreToolUse hook" in reply, reply[:2000]  # the plugin's hook ran for apply_patch, and denied
    assert "autograph guard:" in reply and "210 lines" in reply and "140 lines" in reply, reply[:2000]
    assert index.read_text(encoding="utf-8") == before  # the patch never applied


def test_codex_rules_from_init_reach_the_model(clone, tmp_path):
    host = Codex(tmp_path)
    report = init(clone, "codex", host.project, host.env)
    assert report["config"] == "AGENTS.md"
    _, requests = host.exec(lambda body, turn: [message("done")])
    received = seen(requests[0])
    assert_rules_reached(rules_block(report), received, "memory")
    assert f"# AGENTS.md instructions for {host.project}" in received  # loaded as the project's AGENTS.md
    assert f"`{host.project / '.agents' / 'skills'}`" in received and "- autograph: " in received  # the skill listed


# ---------------------------------------------------------------------------
# Gemini CLI

GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}
# the CLI's own JSON-mode checks (which model, who speaks next) get a valid answer
GEMINI_CHECKS = {"reasoning": "fake", "next_speaker": "user", "complexity_reasoning": "fake", "complexity_score": 1}


def test_gemini_rules_from_init_reach_the_model(clone, tmp_path):
    gemini = need(GEMINI, "gemini (@google/gemini-cli)")
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    env = host_env(home)
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS), encoding="utf-8")
    report = init(clone, "gemini", project, env)
    assert report["config"] == "GEMINI.md"
    with FakeGemini(lambda body, turn: [{"text": "done"}], max_requests=4, json_answer=GEMINI_CHECKS) as server:
        env = {
            **env,
            "GOOGLE_GEMINI_BASE_URL": server.url,
            "GEMINI_API_KEY": "not-a-key",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",  # headless in a folder it has never seen
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
        proc = ok(run([gemini, "-p", "go", "--output-format", "json"], env, cwd=project, timeout=RUN_TIMEOUT))
    assert json.loads(proc.stdout)["response"] == "done", proc.stdout
    assert server.requests, server.paths
    received = gemini_seen(server.requests[0])
    assert_rules_reached(rules_block(report), received, "memory")
    assert f"--- Context from: {project / 'GEMINI.md'} ---" in received  # loaded as the project's GEMINI.md
    assert f"<location>{project / report['skill'] / 'SKILL.md'}</location>" in received  # and the skill listed


# ---------------------------------------------------------------------------
# OpenCode


def test_opencode_rules_from_init_reach_the_model(clone, tmp_path):
    opencode = need(OPENCODE, "opencode (opencode-ai)")
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    env = host_env(home)
    report = init(clone, "opencode", project, env)
    assert report["config"] == "AGENTS.md"
    with FakeOpenAI(lambda body, turn: [message("done")], max_requests=4) as server:
        config = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": "fake/fake-model",
            "small_model": "fake/fake-model",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake",
                    "options": {"baseURL": f"{server.url}/v1", "apiKey": "not-a-key"},
                    "models": {"fake-model": {"name": "Fake model"}},
                }
            },
        }
        env = {
            **env,
            "PWD": str(project),  # OpenCode takes its folder from PWD
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            # it installs @opencode-ai/plugin into its config folder in the background: not from the registry here
            "npm_config_registry": f"{CLOSED}/",
        }
        proc = ok(run([opencode, "run", "go"], env, cwd=project, timeout=RUN_TIMEOUT))
    assert "done" in proc.stdout, proc.stdout + proc.stderr
    main = [body for body in server.requests if "Instructions from:" in seen(body)]  # not the title request
    assert main, [seen(body)[:300] for body in server.requests]
    received = seen(main[0])
    assert_rules_reached(rules_block(report), received, "memory")
    assert f"Instructions from: {project / 'AGENTS.md'}" in received  # loaded as the project's AGENTS.md
    assert f"<location>{project / report['skill'] / 'SKILL.md'}</location>" in received  # and the skill listed


def test_codex_with_the_plugin_and_init_s_hooks_runs_one_guard(clone, tmp_path):
    """init.py codex registers the guard and session start in the project's
    .codex/hooks.json (listed by Codex once the project is trusted); with
    the plugin installed too, the plugin's hooks step aside: one guard per
    call, whose deny reaches the model."""
    host = Codex(tmp_path)
    log = tmp_path / "python3.log"
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python3").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    (shim / "python3").chmod(0o755)
    host.env["PATH"] = f"{shim}{os.pathsep}{host.env['PATH']}"
    host.plugin(clone)
    init(clone, "codex", host.project, host.env)
    config = host.home / ".codex" / "config.toml"
    config.write_text(config.read_text() + f'\n[projects."{host.project}"]\ntrust_level = "trusted"\n')
    listed = {(hook["eventName"], hook["source"]) for hook in host.hooks()}
    assert {("preToolUse", "project"), ("sessionStart", "project")} <= listed, listed
    index = host.project / "memory" / "MEMORY.md"
    before = index.read_text(encoding="utf-8")
    patch = "\n".join(["*** Begin Patch", "*** Add File: memory/NOTES.md", "+x", "*** Update File: memory/MEMORY.md"])
    patch += "\n@@\n" + "\n".join("+" + line for line in index_lines(0, 210)) + "\n*** End Patch"
    call = custom_tool_call("apply_patch", patch)
    log.write_text("")
    _, requests = host.exec(lambda body, turn: [call] if turn == 0 else [message("done")])
    assert "autograph guard:" in tool_output(requests[1], call["call_id"])
    assert index.read_text(encoding="utf-8") == before
    guards = [line for line in log.read_text().splitlines() if "/guard.py" in line]
    assert len(guards) == 1, log.read_text()


@pytest.mark.parametrize("how", ["init", "plugin"])
def test_codex_guards_an_apply_patch_heredoc_run_in_its_shell(clone, tmp_path, how):
    """Codex applies `apply_patch <<'EOF' … EOF` run through its shell tool,
    which reaches hooks as Bash: the guard's matcher covers it (init's
    .codex/hooks.json, the plugin's hooks.json) and the deny reaches the
    model; a shell call without apply_patch starts no guard."""
    host = Codex(tmp_path)
    if how == "plugin":
        host.plugin(clone)
        index = host.project / "memory" / "MEMORY.md"
        index.parent.mkdir()
    else:
        init(clone, "codex", host.project, host.env)
        config = host.home / ".codex" / "config.toml"
        config.write_text(config.read_text() + f'\n[projects."{host.project}"]\ntrust_level = "trusted"\n')
        index = host.project / "memory" / "MEMORY.md"
    before = "".join(line + "\n" for line in index_lines(0, 195))
    index.write_text(before, encoding="utf-8")
    patch = "\n".join(
        ["*** Begin Patch", "*** Update File: memory/MEMORY.md", "@@", " " + index_lines(194, 195)[0]]
        + ["+" + line for line in index_lines(195, 215)]
        + ["*** End Patch"]
    )
    call = function_call("exec_command", {"cmd": f"apply_patch <<'EOF'\n{patch}\nEOF\n"})
    _, requests = host.exec(lambda body, turn: [call] if turn == 0 else [message("done")])
    reply = tool_output(requests[1], call["call_id"])
    assert "autograph guard:" in reply and "215 lines" in reply, reply[:2000]
    assert index.read_text(encoding="utf-8") == before
