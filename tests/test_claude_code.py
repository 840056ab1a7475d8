"""The real Claude Code CLI, headless, against a fake Messages server (issue 27).

``claude -p`` (the CLI ``.ci/run`` pins into ``.ci/node``) runs in a fresh
``HOME`` with ``ANTHROPIC_BASE_URL`` pointing at :class:`FakeMessages` on
127.0.0.1, which answers with a scripted tool call and then text.  What
the model would receive is what the server records: the system prompt (its
skills list and memory section), the hooks' context, tool results.  With the
plugin installed from a clone's marketplace, with ``init.py claude``, and with
both, these tests check what an agent really gets: a write past the index
cap denied with the reason in the next request, a soft-cap write passed with
the warning, a shrinking write passed, the SessionStart context, the whole
skill description, one guard process and one skill listing, the memory
section naming the store init made, and the completion checkpoint.

Every run is bounded: the server answers "done" after a few requests and
each CLI run has a timeout.  A missing CLI fails under CI
(``AUTOGRAPH_REQUIRE_CORPORA=1``) and skips elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from helpers.fake_messages import FakeMessages, text, tool_use
from test_plugin_clients import CLAUDE, need, ok, quiet_env, run

SKILL_DESCRIPTION = None
RUN_TIMEOUT = 60
SESSION_MATCHER = "startup|resume|clear|compact"


def skill_description() -> str:
    import yaml

    front = (REPO / "skills" / "autograph" / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)[1]
    return yaml.safe_load(front)["description"]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of this checkout as a user would have it (no .git, no caches,
    no installed clients), so the plugin and init.py run what is here."""
    dest = tmp_path_factory.mktemp("clone") / "autograph"
    skip = shutil.ignore_patterns(".git", ".ci", "__pycache__", ".*cache*", ".hypothesis", ".benchmarks", "*.egg-info")
    shutil.copytree(REPO, dest, ignore=skip, symlinks=True)
    return dest


class Host:
    """A fresh HOME and project, a ``python3`` on PATH that logs each hook
    script it runs, and the CLI driven against a fake server."""

    def __init__(self, tmp_path: Path, clone: Path):
        self.claude = need(CLAUDE, "claude (@anthropic-ai/claude-code)")
        self.clone = clone
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.log = tmp_path / "python3.log"
        shim = tmp_path / "bin"
        shim.mkdir()
        (shim / "python3").write_text(f'#!/bin/sh\necho "$*" >> "{self.log}"\nexec "{sys.executable}" "$@"\n')
        (shim / "python3").chmod(0o755)
        self.env = quiet_env(self.home)
        self.env["PATH"] = f"{shim}{os.pathsep}{self.env['PATH']}"

    def plugin(self) -> None:
        ok(run([self.claude, "plugin", "marketplace", "add", self.clone], self.env))
        ok(run([self.claude, "plugin", "install", "autograph@autograph"], self.env))

    def init(self, *args) -> dict:
        script = self.clone / "skills" / "autograph" / "scripts" / "init.py"
        proc = ok(run([sys.executable, script, "claude", "--project", self.project, "--json", *args], self.env))
        return json.loads(proc.stdout)

    def drive(self, script, prompt: str = "go", max_requests: int = 6) -> tuple[subprocess.CompletedProcess, list]:
        """Run ``claude -p`` once; returns (process, request bodies)."""
        self.log.write_text("")
        with FakeMessages(script, max_requests=max_requests) as server:
            env = {**self.env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test-not-a-key"}
            argv = [self.claude, "-p", prompt, "--output-format", "json", "--allowedTools", "Write,Edit,Read,Bash"]
            proc = run(argv, env, cwd=self.project, timeout=RUN_TIMEOUT)
            assert proc.returncode == 0, f"claude -p exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            return proc, list(server.requests)

    def hook_runs(self, script: str) -> list[str]:
        """The logged python3 command lines that ran ``script``."""
        return [line for line in self.log.read_text().splitlines() if f"/{script}" in line]


def seen(body: dict) -> str:
    """Everything the model receives in one request, as text."""
    out = [block.get("text", "") for block in body.get("system", []) if isinstance(block, dict)]
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(out)


def memory_section_folder(body: dict) -> str | None:
    found = re.search(r"persistent file-based memory at `([^`]*)`", seen(body))
    return found[1].rstrip("/") if found else None


def index_lines(count: int) -> str:
    return "".join(f"- [Topic {i}](topic-{i}.md) — why topic {i} matters\n" for i in range(count))


def write_then_done(path: Path, content: str):
    def script(body, turn):
        if turn == 0:
            return [tool_use("Write", {"file_path": str(path), "content": content})]
        return [text("done")]

    return script


def answered(body: dict) -> str:
    """The text of the tool results in the request's last message."""
    last = body["messages"][-1]["content"]
    blocks = last if isinstance(last, list) else []
    return "\n".join(
        b["content"] if isinstance(b.get("content"), str) else json.dumps(b.get("content"))
        for b in blocks
        if b.get("type") == "tool_result"
    )


@pytest.fixture
def host(tmp_path, clone) -> Host:
    return Host(tmp_path, clone)


# ---------------------------------------------------------------------------
# the guard, through the plugin and through init.py


@pytest.mark.parametrize("how", ["plugin", "init"])
def test_a_write_past_the_cap_is_denied_and_the_reason_reaches_the_model(host, how):
    host.plugin() if how == "plugin" else host.init()
    index = host.project / "memory" / "MEMORY.md"
    index.parent.mkdir(exist_ok=True)
    index.write_text(index_lines(10))
    _, requests = host.drive(write_then_done(index, index_lines(210)))
    reply = answered(requests[1])
    assert "autograph guard:" in reply and "210 lines" in reply and "140 lines" in reply, reply
    assert index.read_text() == index_lines(10)  # the write never happened
    assert len(host.hook_runs("guard.py")) == 1


@pytest.mark.parametrize("how", ["plugin", "init"])
def test_a_soft_cap_write_passes_with_the_warning_and_a_shrinking_one_passes(host, how):
    host.plugin() if how == "plugin" else host.init()
    index = host.project / "memory" / "MEMORY.md"
    index.parent.mkdir(exist_ok=True)
    index.write_text(index_lines(10))
    _, requests = host.drive(write_then_done(index, index_lines(165)))
    assert index.read_text() == index_lines(165)
    later = seen(requests[1])
    assert "autograph guard:" in later and "soft cap" in later and "140 lines" in later, later[-2000:]
    # an index over the hard cap may always shrink
    index.write_text(index_lines(230))
    _, requests = host.drive(write_then_done(index, index_lines(220)))
    assert index.read_text() == index_lines(220)
    assert "permissionDecision" not in answered(requests[1]) and "hook error" not in answered(requests[1])


# ---------------------------------------------------------------------------
# what a session starts with


def vault_with_history(project: Path) -> float:
    """A vault in the project with two real ``graph.py health`` runs in its
    history; returns the last score."""
    (project / ".obsidian").mkdir()
    (project / "Alpha.md").write_text("# Alpha\n\nSee [[Beta]].\n")
    (project / "Beta.md").write_text("# Beta\n\nSee [[Alpha]].\n")
    graph = REPO / "skills" / "autograph" / "scripts" / "graph.py"
    for _ in range(2):
        proc = ok(run([sys.executable, graph, "health", project, "--json"], os.environ))
        (project / "Gamma.md").write_text("# Gamma\n\nSee [[Missing]].\n")
    return json.loads(proc.stdout)["score"]


@pytest.mark.parametrize("how", ["plugin", "init"])
def test_the_session_start_context_and_the_whole_skill_description_reach_the_model(host, how):
    score = vault_with_history(host.project)
    host.plugin() if how == "plugin" else host.init()
    _, requests = host.drive(lambda body, turn: [text("done")])
    first = seen(requests[0])
    context = first[first.index("SessionStart hook additional context:") :].split("\n\n", 1)[0]
    assert str(host.project) in context and "card.py remember" in context, context
    assert f"{score:g}" in context and "broken links 1" in context, context
    assert ("memory/MEMORY.md" in context) == (how == "init")  # init made the store; the plugin found none
    assert len(context.encode()) <= 150 * 4 + len("SessionStart hook additional context: ")
    assert skill_description() in first  # the whole description, not the first 276 characters
    assert len(host.hook_runs("session.py start")) == 1


# ---------------------------------------------------------------------------
# both installed


@pytest.mark.parametrize("first", ["plugin", "init"])
def test_with_both_installed_one_guard_and_one_session_start_answer(host, first):
    if first == "plugin":
        host.plugin()
        report = host.init()
        assert report["plugin"] and not [a for a in report["actions"] if a["what"] == "skill"]
    else:
        host.init()
        host.plugin()
    index = host.project / "memory" / "MEMORY.md"
    _, requests = host.drive(write_then_done(index, index_lines(210)))
    assert len(host.hook_runs("guard.py")) == 1, host.log.read_text()
    assert len(host.hook_runs("session.py start")) == 1, host.log.read_text()
    assert "autograph guard:" in answered(requests[1])
    listed = [line for line in seen(requests[0]).splitlines() if re.match(r"- (autograph(:autograph)?): ", line)]
    if first == "plugin":
        assert len(listed) == 1, listed
    else:  # init's skill is listed beside the plugin's until init runs again, which then steps aside
        context = seen(requests[0])
        assert "installed twice" in context and "init.py claude --project" in context, context[:3000]
        host.init()
        _, requests = host.drive(lambda body, turn: [text("done")])
        listed = [line for line in seen(requests[0]).splitlines() if re.match(r"- (autograph(:autograph)?): ", line)]
        assert len(listed) == 1, listed
        assert len(host.hook_runs("session.py start")) == 1, host.log.read_text()
    # no vault here: the plugin's session start still names the store Claude Code loads (autoMemoryDirectory)
    start = seen(requests[0])
    start = start[start.index("SessionStart hook additional context:") :].split("\n\n", 1)[0]
    assert "MEMORY.md" in start and str(host.project / "memory") in start, start


# ---------------------------------------------------------------------------
# Claude Code's own memory folder


def test_the_memory_section_names_the_store_init_made(host):
    _, requests = host.drive(lambda body, turn: [text("done")])
    own = memory_section_folder(requests[0])
    report = host.init()
    store = host.project / "memory"
    assert report["auto_memory"] == str(store)
    _, requests = host.drive(lambda body, turn: [text("done")])
    assert memory_section_folder(requests[0]) == str(store)
    assert f"Contents of {store / 'MEMORY.md'}" in seen(requests[0])  # the index it loads is the guarded one
    # --host-store: the folder Claude Code chose itself
    host.init("--uninstall")
    report = host.init("--host-store")
    assert report["auto_memory"] is None and Path(report["store"]) == Path(own)
    _, requests = host.drive(lambda body, turn: [text("done")])
    assert memory_section_folder(requests[0]) == own


# ---------------------------------------------------------------------------
# the completion checkpoint


def test_the_checkpoint_asks_once_for_a_report_after_a_memory_write(host):
    host.init("--checkpoint")
    index = host.project / "memory" / "MEMORY.md"

    def script(body, turn):
        if turn == 0:
            return [tool_use("Write", {"file_path": str(index), "content": index_lines(3)})]
        return [text(f"answer {turn}")]

    _, requests = host.drive(script)
    reasons = [seen(body) for body in requests[2:]]
    assert len(requests) == 3, [seen(b)[-300:] for b in requests]  # one more turn for the report, never two
    assert "Stop hook" in reasons[0] and "check.py" in reasons[0], reasons[0][-1500:]
    # a session that wrote nothing is never stopped
    _, requests = host.drive(lambda body, turn: [text("nothing written")])
    assert len(requests) == 1
