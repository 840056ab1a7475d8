"""Packaging (issue 14): what an installer or a runner reads, checked without
the installers themselves (tests/test_plugin_clients.py runs the real ones).

* Every script in ``scripts/`` opens with the PEP 723 header, read the way
  ``uv run`` reads it: the reference regular expression of PEP 723
  (packaging.python.org, "Inline script metadata"), TOML inside, one
  ``script`` block, no dependencies, a Python the skill supports.
* The plugin's hook runs the guard as Claude Code runs a hook command (a
  shell, ``${CLAUDE_PLUGIN_ROOT}`` set, the project's schema found through
  ``$CLAUDE_PROJECT_DIR``) and never defers: init.py's registration is the
  one that stays silent while the plugin is enabled, so one guard answers.
* ``llms.txt`` follows the llms.txt format and its links lead to files that
  exist; the slash command and the manifests name what the issue names.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO, SCRIPTS
from packaging.specifiers import SpecifierSet

SHEBANG = "#!/usr/bin/env python3"
HEADER = ["# /// script", '# requires-python = ">=3.11"', "# dependencies = []", "# ///"]

# PEP 723's reference implementation, verbatim: what uv and pipx follow.
PEP723_REGEX = r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$"


def pep723_read(script: str) -> dict | None:
    """The ``script`` block of ``script`` as PEP 723's reference reader gives
    it: None when there is none, ValueError for two, TOMLDecodeError for a
    block whose content is not TOML."""
    name = "script"
    matches = [m for m in re.finditer(PEP723_REGEX, script) if m.group("type") == name]
    if len(matches) > 1:
        raise ValueError(f"Multiple {name} blocks found")
    if len(matches) == 1:
        content = "".join(
            line[2:] if line.startswith("# ") else line[1:]
            for line in matches[0].group("content").splitlines(keepends=True)
        )
        return tomllib.loads(content)
    return None


ALL_SCRIPTS = sorted(SCRIPTS.glob("*.py"))


def test_the_scripts_are_found():
    """The parametrised checks below run over every script there is."""
    names = {path.name for path in ALL_SCRIPTS}
    assert {"graph.py", "guard.py", "init.py", "enforce.py", "undo.py"} <= names


@pytest.mark.parametrize("script", ALL_SCRIPTS, ids=lambda p: p.name)
def test_every_script_opens_with_the_pep_723_header(script):
    lines = script.read_text(encoding="utf-8").splitlines()
    assert lines[0] == SHEBANG, f"{script.name}: first line is not {SHEBANG!r}"
    assert lines[1:5] == HEADER, f"{script.name}: lines 2-5 are not the PEP 723 header:\n" + "\n".join(HEADER)


@pytest.mark.parametrize("script", ALL_SCRIPTS, ids=lambda p: p.name)
def test_uv_reads_no_dependencies_and_a_supported_python(script):
    text = script.read_text(encoding="utf-8")
    metadata = pep723_read(text)
    assert metadata == {"requires-python": ">=3.11", "dependencies": []}
    spec = SpecifierSet(metadata["requires-python"])
    running = ".".join(map(str, sys.version_info[:3]))
    assert running in spec and "3.11.0" in spec and "3.10.12" not in spec
    # the header is comments: the module docstring stays the first statement
    assert ast.get_docstring(ast.parse(text)), f"{script.name}: the header pushed the docstring out"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("# /// script\n# dependencies = []\n# ///\n", {"dependencies": []}),
        ("#!/usr/bin/env python3\n# /// script\n#\n# dependencies = []\n# ///\n", {"dependencies": []}),
        ("# /// script\n# dependencies = []\n", None),  # never closed
        ("#/// script\n# dependencies = []\n# ///\n", None),  # no space after '#'
        ("# /// script\n#dependencies = []\n# ///\n", None),  # a content line needs '# '
        ("# /// pyproject\n# x = 1\n# ///\n", None),  # another block type
    ],
)
def test_the_reader_is_pep_723s(text, expected):
    """The reader above finds what PEP 723 finds and nothing else, so a
    header uv would not read fails the checks."""
    assert pep723_read(text) == expected


def test_the_reader_refuses_two_blocks_and_bad_toml():
    block = "# /// script\n# dependencies = []\n# ///\n"
    with pytest.raises(ValueError):
        pep723_read(block + block)
    with pytest.raises(tomllib.TOMLDecodeError):
        pep723_read("# /// script\n# dependencies = [\n# ///\n")


def uv_binary() -> str:
    """uv itself (the ``uv`` dev dependency); skipped without it, failed under
    CI (AUTOGRAPH_REQUIRE_CORPORA=1), as conftest.require does."""
    try:
        import uv

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError) as exc:
        message = f"uv is not installed ({exc}); pip install -e '.[dev]'"
        if os.environ.get("AUTOGRAPH_REQUIRE_CORPORA") == "1":
            pytest.fail(message)
        pytest.skip(message)


def uv_run(tmp_path, script: Path, *args: str) -> subprocess.CompletedProcess:
    """``uv run SCRIPT ARGS`` offline, outside any project, on this Python."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    env.update(UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_OFFLINE="1", UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never")
    return subprocess.run(
        [uv_binary(), "run", "--no-project", "--python", sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )


def test_uv_run_runs_every_script(tmp_path):
    """What the earlier project's users type: ``uv run scripts/x.py``, with
    no network (nothing to install) and no project around it."""
    for script in ALL_SCRIPTS:
        proc = uv_run(tmp_path, script, "--help")
        assert proc.returncode == 0, f"uv run {script.name} --help: {proc.stderr}"
        assert "incompatible" not in proc.stderr, proc.stderr
        assert proc.stdout.startswith("usage: "), proc.stdout


def test_uv_reads_the_header_it_is_given(tmp_path):
    """uv objects to a script whose header asks for a Python it is not given
    (it warns when the interpreter is named), so the runs above went through
    the header, not around it."""
    text = (SCRIPTS / "check.py").read_text(encoding="utf-8").replace('">=3.11"', '">=3.99"', 1)
    script = tmp_path / "scripts" / "check.py"
    script.parent.mkdir()
    script.write_text(text, encoding="utf-8")
    (script.parent / "autograph").symlink_to(SCRIPTS / "autograph")
    proc = uv_run(tmp_path, script, "--help")
    assert "incompatible with the script's Python requirement: `>=3.99`" in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------
# The plugin's hook


def plugin_hooks() -> dict:
    """The handlers hooks/hooks.json registers, by event, each with its matcher."""
    data = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert set(data["hooks"]) == {"PreToolUse", "SessionStart", "Stop"}
    out = {}
    for event, groups in data["hooks"].items():
        (group,) = groups
        (handler,) = group["hooks"]
        out[event] = {"matcher": group.get("matcher"), **handler}
    return out


def plugin_hook() -> dict:
    """The one PreToolUse handler hooks/hooks.json registers, with its matcher."""
    return plugin_hooks()["PreToolUse"]


def test_the_plugin_hooks_match_init_s_registration():
    from autograph.hosts import wiring

    hooks = plugin_hooks()
    assert all(h["type"] == "command" and h["timeout"] == wiring.HOOK_TIMEOUT for h in hooks.values())
    # Claude Code's write tools, and Codex's apply_patch (the plugin runs in both)
    assert hooks["PreToolUse"]["matcher"].split("|") == [*wiring.MATCHER.split("|"), "apply_patch", "Bash"]
    assert hooks["SessionStart"]["matcher"] == wiring.SESSION_MATCHER and hooks["Stop"]["matcher"] is None
    runner = 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/unless-init.sh"'
    assert hooks["PreToolUse"]["command"] == f"{runner} guard.py"
    assert hooks["SessionStart"]["command"] == f"{runner} session.py start"
    assert hooks["Stop"]["command"] == f"{runner} session.py stop --plugin"
    assert all(wiring.DEFER_FLAG not in h["command"] and "--schema" not in h["command"] for h in hooks.values())


def run_hook(command: str, payload: dict, env: dict) -> subprocess.CompletedProcess:
    """Run a hook command the way Claude Code does: through a shell, the
    hook input on stdin."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "AUTOGRAPH_INDEX_"))}
    return subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=30,
        env={**clean, **env},
    )


def decision(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout.strip():
        return "allow"
    return json.loads(proc.stdout)["hookSpecificOutput"].get("permissionDecision", "allow")


def write_call(path: Path, lines: int) -> dict:
    body = "".join(f"- [Topic {i}](topic-{i}.md) — one line\n" for i in range(lines))
    tool_input = {"file_path": str(path), "content": body}
    return {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": tool_input}


def test_the_plugin_hook_finds_the_schema_through_claude_project_dir(tmp_path):
    """A project's schema sets its own index and cap; the plugin's command
    carries no --schema, so $CLAUDE_PROJECT_DIR is how it is found."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "schema.json").write_text(json.dumps({"index": {"files": ["HOT.md"], "hard": {"lines": 20}}}))
    home = tmp_path / "home"
    home.mkdir()
    command = plugin_hook()["command"]
    env = {"CLAUDE_PLUGIN_ROOT": str(REPO), "HOME": str(home)}
    payload = write_call(project / "HOT.md", 21)
    assert decision(run_hook(command, payload, env)) == "allow"  # no project: HOT.md is no index
    in_project = {**env, "CLAUDE_PROJECT_DIR": str(project)}
    denied = run_hook(command, payload, in_project)
    assert decision(denied) == "deny"
    assert "21 lines (limit 20)" in json.loads(denied.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert decision(run_hook(command, write_call(project / "HOT.md", 20), in_project)) == "allow"


def test_with_init_s_install_the_plugin_s_hooks_step_aside(tmp_path):
    """Claude Code runs every registered hook: with init.py's install in the
    project (or the user's folder) the plugin's hooks exit before starting
    Python, so each call gets exactly one answer; a skill copied without
    hooks (skills.sh) or an uninstalled init never silences the plugin."""
    project = tmp_path / "project"
    (project / "memory").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    # as Claude Code runs hooks: CLAUDECODE=1 (Codex, which sets no such variable, is tests/test_host_clients.py's)
    env = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_ROOT": str(REPO), "CLAUDECODE": "1"}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}

    def init(*args) -> dict:
        argv = [sys.executable, str(SCRIPTS / "init.py"), "claude", *args, "--json", "--quiet"]
        done = subprocess.run(argv, capture_output=True, timeout=60, env={**clean, "HOME": str(home)})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    payload = write_call(project / "memory" / "MEMORY.md", 201)
    plugin_command = plugin_hook()["command"]
    assert decision(run_hook(plugin_command, payload, env)) == "deny"  # the plugin alone answers
    init("--project", str(project))
    settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    (init_group,) = settings["hooks"]["PreToolUse"]
    init_command = init_group["hooks"][0]["command"]

    def answers() -> list[str]:
        return [decision(run_hook(command, payload, env)) for command in (init_command, plugin_command)]

    assert answers() == ["deny", "allow"]
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"autograph@autograph": True}}))
    assert answers() == ["deny", "allow"]  # enabled later: init's install still answers, once
    start = plugin_hooks()["SessionStart"]["command"]
    assert run_hook(start, {"hook_event_name": "SessionStart", "cwd": str(project)}, env).stdout == b""
    init("--project", str(project), "--uninstall")
    assert decision(run_hook(plugin_command, payload, env)) == "deny"
    # a copy of the skill without init's record (skills.sh) has no hooks: the plugin still answers
    shutil.copytree(REPO / "skills" / "autograph", project / ".claude" / "skills" / "autograph")
    assert decision(run_hook(plugin_command, payload, env)) == "deny"
    # init.py claude --user while the plugin is enabled for the user installs no hooks: the plugin answers
    assert init("--user")["plugin"] and decision(run_hook(plugin_command, payload, env)) == "deny"
    # with the plugin disabled, a user-wide install is seen too
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"autograph@autograph": False}}))
    assert not init("--user")["plugin"]
    assert decision(run_hook(plugin_command, payload, env)) == "allow"


# ---------------------------------------------------------------------------
# Manifests, the command, llms.txt


def test_the_manifests_name_the_plugin_the_guard_looks_for():
    from autograph.hosts import caps

    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert plugin["name"] == market["name"] == caps.PLUGIN_NAME == "autograph"
    (entry,) = market["plugins"]
    assert entry["name"] == "autograph" and entry["source"] == "./"
    assert entry["version"] == plugin["version"]
    assert plugin["version"] == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_the_research_command_walks_through_the_orchestrate_subcommands():
    text = (REPO / "commands" / "research.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front = text.split("---\n", 2)[1]
    assert re.search(r"(?m)^description: \S", front)
    for step in ("orchestrate.py research plan", "orchestrate.py research reduce", "orchestrate.py bootstrap"):
        assert step in text
    assert "--max-types" in text and "--apply" in text
    assert "$ARGUMENTS" in text and "${CLAUDE_PLUGIN_ROOT}/skills/autograph/scripts/" in text


LINK = re.compile(r"^- \[(?P<name>[^\]]+)\]\((?P<url>[^)\s]+)\)(?::\s*(?P<notes>.+))?$")


def llms_sections() -> tuple[str, str, dict[str, list[re.Match]]]:
    """(title, summary, {section: [link matches]}) of llms.txt, checking the
    format on the way: an H1, a blockquote, free text, then H2 sections whose
    lists hold only ``- [name](url): notes`` lines."""
    lines = (REPO / "llms.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ") and lines[1] == ""
    assert lines[2].startswith("> ")
    sections: dict[str, list[re.Match]] = {}
    current = None
    for line in lines[3:]:
        if line.startswith("#"):
            assert line.startswith("## ") and not line.startswith("###"), line
            current = line[3:].strip()
            assert current not in sections
            sections[current] = []
        elif current is not None and line.strip():
            match = LINK.match(line)
            assert match, f"llms.txt: not a link line in section {current}: {line!r}"
            sections[current].append(match)
    return lines[0][2:], lines[2][2:], sections


def test_llms_txt_follows_the_format_and_its_links_exist():
    title, summary, sections = llms_sections()
    assert title == "autograph" and "Obsidian" in summary
    assert sections and all(sections.values())
    for links in sections.values():
        for link in links:
            url = link["url"]
            assert not url.startswith(("http:", "https:", "/")), url
            assert (REPO / url.split("#", 1)[0]).is_file(), f"llms.txt links to a missing file: {url}"


def test_llms_txt_documents_every_script_and_the_command():
    _, _, sections = llms_sections()
    names = {link["name"] for links in sections.values() for link in links}
    urls = {link["url"] for links in sections.values() for link in links}
    missing = [p.name for p in ALL_SCRIPTS if not any(name.startswith(p.name) for name in names)]
    assert not missing, f"llms.txt names no documentation for: {missing}"
    assert "commands/research.md" in urls and "skills/autograph/SKILL.md" in urls


@pytest.mark.parametrize("path", ["skills/autograph/SKILL.md", "commands/research.md"])
def test_a_description_is_read_whole_by_every_yaml_reader(path):
    """A plain scalar ends at " #" (a YAML comment): SKILL.md's description,
    "... old values to ## History ...", was read as 276 of its characters by
    PyYAML, the skills installer, Claude Code and autograph alike.  The
    value each reader gets is the whole text written after the key."""
    import yaml
    from autograph.read import frontmatter

    text = (REPO / path).read_text(encoding="utf-8")
    line = next(x for x in text.split("---\n", 2)[1].splitlines() if x.startswith("description: "))
    written = line[len("description: ") :]
    if written[:1] in "\"'" and written[-1:] == written[:1]:
        written = written[1:-1]
    assert yaml.safe_load(text.split("---\n", 2)[1])["description"] == written
    assert frontmatter.parse(text).properties["description"] == written


def test_the_agent_skills_reference_reads_the_whole_skill_frontmatter():
    """skills-ref's read-properties (the Agent Skills reference parser, the
    one the installers follow) gets every property whole, as PyYAML does."""
    import yaml
    from skills_ref import read_properties

    text = (REPO / "skills/autograph/SKILL.md").read_text(encoding="utf-8")
    expected = yaml.safe_load(text.split("---\n", 2)[1])
    found = read_properties(REPO / "skills/autograph")
    assert found.name == expected["name"] == "autograph"
    assert found.description == expected["description"]
    assert found.license == expected["license"] and found.compatibility == expected["compatibility"]
    assert found.description.endswith("and whenever you write to a memory index or store.")


def test_the_plugin_s_guard_passes_shell_calls_without_apply_patch_before_python(tmp_path):
    """The plugin's guard matcher names Bash (Codex applies an apply_patch
    heredoc run in its shell): a shell call without apply_patch is passed by
    the wrapper before Python starts; one with it is judged."""
    project = tmp_path / "project"
    (project / "memory").mkdir(parents=True)
    index = project / "memory" / "MEMORY.md"
    index.write_text("".join(f"- [T{i}](t{i}.md) — x\n" for i in range(195)))
    log = tmp_path / "python3.log"
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python3").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    (shim / "python3").chmod(0o755)
    env = {"HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(REPO), "PATH": f"{shim}:{os.environ['PATH']}"}
    command = plugin_hook()["command"]
    ls = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(project)}
    assert decision(run_hook(command, ls, env)) == "allow" and not log.exists()
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n" + "+- [N](n.md) — n\n" * 20 + "*** End Patch"
    heredoc = {**ls, "tool_input": {"command": f"apply_patch <<'EOF'\n{patch}\nEOF\n"}}
    assert decision(run_hook(command, heredoc, env)) == "deny"
    assert "guard.py" in log.read_text()
