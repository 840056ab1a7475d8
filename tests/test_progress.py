"""Progress (issue 8): a progress line on stderr while notes are read, only on
a terminal, never with --json or --quiet, never in a pipe; cleared before the
report.  ``cli.PROGRESS_AFTER`` (1 s) is set to 0 in the child so that a
small vault shows it without any sleep."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

RUNNER = (
    "import sys, runpy; sys.path.insert(0, {scripts!r}); from autograph import cli; cli.PROGRESS_AFTER = {after}; "
    "sys.argv = {argv!r}; runpy.run_path({script!r}, run_name='__main__')"
)


def run(script: str, args: list, after: float = 0, tty: bool = True) -> tuple[bytes, bytes, int]:
    """Run ``script`` with stderr on a pseudo-terminal (or a pipe); returns (stdout, stderr, code)."""
    code = RUNNER.format(
        scripts=str(SCRIPTS), after=after, argv=[script, *map(str, args)], script=str(SCRIPTS / script)
    )
    if not tty:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
        return proc.stdout, proc.stderr, proc.returncode
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read()
    os.close(master)
    return out, err, proc.wait(timeout=120)


@pytest.fixture
def vault(tmp_path):
    return copy_tree(EXAMPLE_VAULT, tmp_path / "vault")


@pytest.mark.parametrize(
    "script, args",
    [("graph.py", ["health"]), ("enforce.py", []), ("discover.py", []), ("engine.py", ["init"])],
)
def test_progress_on_a_terminal(vault, script, args):
    sub, rest = (args[:1], args[1:]) if args else ([], [])
    out, err, code = run(script, [*sub, vault, *rest, "--dry-run"])
    assert code in (0, 1), err
    assert b"reading notes: " in err and b"/42 (" in err and b"/s)" in err  # count of total, rate
    assert err.endswith(b"\r"), "the line is cleared at the end"
    assert b"reading notes" not in out


@pytest.mark.parametrize("flag", ["--json", "--quiet"])
def test_no_progress_with_json_or_quiet(vault, flag):
    out, err, _ = run("graph.py", ["health", vault, "--dry-run", flag])
    assert b"reading notes" not in err and b"reading notes" not in out


def test_no_progress_when_stderr_is_not_a_terminal(vault):
    out, err, code = run("graph.py", ["health", vault, "--dry-run"], tty=False)
    assert code == 0 and b"reading notes" not in err


def test_no_progress_for_a_quick_read(vault):
    """With the real threshold (1 s), the example vault is read before any line is due."""
    _, err, _ = run("graph.py", ["health", vault, "--dry-run"], after=1.0)
    assert b"reading notes" not in err


def _subcommands(help_text: str) -> list[str]:
    """The subcommands a --help lists: under "positional arguments:", the
    names indented four spaces (argparse's layout of a COMMAND's choices),
    up to the next section; not the examples of the epilog."""
    lines = help_text.splitlines()
    if "positional arguments:" not in lines:
        return []
    names = []
    for line in lines[lines.index("positional arguments:") + 1 :]:
        if line and not line.startswith(" "):
            break
        if line.startswith("    ") and not line.startswith("     ") and line.split():
            names.append(line.split()[0])
    return names


def test_every_command_takes_quiet():
    for script in sorted(SCRIPTS.glob("*.py")):
        if script.name == "guard.py":
            continue  # a hook: Claude Code's protocol, no terminal
        proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60)
        subcommands = _subcommands(proc.stdout)
        helps = [proc.stdout]
        for sub in subcommands:
            helps.append(
                subprocess.run([sys.executable, str(script), sub, "--help"], capture_output=True, text=True).stdout
            )
        assert any("--quiet" in text for text in helps), script.name
