"""Start-up cost (issue 9): a script's imports and argument parser cost about
as much as starting Python, because each command imports the library modules
it uses when it runs, not when the script is loaded.

No timings here (they would be flaky): what is checked is which modules
``--help`` (and a bad option) imports, which decides the cost.  Help texts
that quote a table of a library module spell it out; the last tests check that
the copies agree with the library.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from conftest import SCRIPTS

# Run a script as python runs it, then list the modules that running it
# imported (those of the interpreter's own start-up, site's .pth hooks
# included, are taken away first).
RUN_AND_LIST = """\
import os, runpy, sys
out, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
def leave(code):  # cli.exit_now skips the teardown: here the list is written first
    raise SystemExit(code)
os._exit = leave
before = set(sys.modules)
sys.argv = [script, *args]
code = 0
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as exc:
    code = exc.code
imported = sorted(set(sys.modules) - before)
with open(out, "w", encoding="utf-8") as handle:
    handle.write("\\n".join(imported))
sys.exit(code)
"""

ALL_SCRIPTS = sorted(path.name for path in SCRIPTS.glob("*.py"))
SUBCOMMANDS = {
    "engine.py": ["init", "decay", "touch", "creative", "stats"],
    "graph.py": ["health", "backlinks", "orphans", "report", "fix", "mv"],
    "moc.py": ["generate"],
    "card.py": ["new", "set", "log", "link", "retire", "redact"],
    "orchestrate.py": ["health", "bootstrap", "dedup-prepare", "link-prepare", "graph-prepare", "research"],
    "daily.py": ["extract", "mark"],
    "enrich.py": ["tags", "links"],
    "undo.py": ["list", "show", "undo", "recover"],
    "session.py": ["start", "stop"],
}
HELPS = [[name, "--help"] for name in ALL_SCRIPTS] + [
    [name, command, "--help"] for name, commands in SUBCOMMANDS.items() for command in commands
]

# Of the library, only the argument helpers load before a command runs.
ALLOWED_LIBRARY = {"autograph", "autograph.cli"}
# Standard modules that only the library's readers and writers need.
HEAVY_STDLIB = {"json", "sqlite3", "dataclasses", "datetime", "hashlib", "unicodedata", "tempfile", "shlex"}


def run_listing(tmp_path, argv: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    out = tmp_path / "modules.txt"
    proc = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST, str(out), str(SCRIPTS / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    modules = set(out.read_text(encoding="utf-8").split()) if out.exists() else set()
    return proc, modules


def heavy(modules: set[str]) -> list[str]:
    library = {m for m in modules if m.split(".")[0] == "autograph"} - ALLOWED_LIBRARY
    return sorted(library | (modules & HEAVY_STDLIB))


@pytest.mark.parametrize("argv", HELPS, ids=" ".join)
def test_help_works_and_imports_no_library_module_beyond_cli(tmp_path, argv):
    proc, modules = run_listing(tmp_path, argv)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: "), proc.stdout[:200]
    assert "Traceback" not in proc.stderr
    assert modules, "the module list was not written"
    assert heavy(modules) == []


@pytest.mark.parametrize("name", ALL_SCRIPTS)
def test_a_bad_option_is_refused_before_any_library_module_loads(tmp_path, name):
    proc, modules = run_listing(tmp_path, [name, "--no-such-option"])
    assert proc.returncode == 2, proc.stderr
    assert "usage: " in proc.stderr and "error: " in proc.stderr  # the option, or a required argument missing
    assert "Traceback" not in proc.stderr
    assert heavy(modules) == []


def test_importing_cli_imports_no_other_library_module(tmp_path):
    code = (
        "import sys; before = set(sys.modules); from autograph import cli; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=SCRIPTS)
    assert proc.returncode == 0, proc.stderr
    assert heavy(set(proc.stdout.split())) == []


def test_a_command_still_imports_what_it_needs(tmp_path):
    """The imports moved into the commands: a run reads the vault as before."""
    (tmp_path / "a.md").write_text("---\ntype: note\n---\nSee [[b]].\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("Back to [[a]].\n", encoding="utf-8")
    proc, modules = run_listing(tmp_path, ["graph.py", "health", str(tmp_path), "--json", "--dry-run"])
    assert proc.returncode == 0, proc.stderr
    assert '"score"' in proc.stdout
    assert {"autograph.graph.health", "autograph.read.index", "autograph.read.vault", "json"} <= modules
    assert "autograph.graph.report" not in modules  # only what health uses


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"startup_{name[:-3]}", SCRIPTS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_graph_help_states_the_health_score_formula():
    from autograph.graph import health

    assert load_script("graph.py").SCORE_FORMULA == health.SCORE_FORMULA


def test_doctor_help_lists_every_issue_and_the_listing_limit():
    from autograph.hosts import store_doctor

    doctor = load_script("doctor.py")
    assert doctor.KINDS == "\n".join(f"  {kind:<17} {hint}" for kind, hint in store_doctor.ISSUES.items())
    assert doctor.MAX_LISTED == store_doctor.MAX_LISTED


def test_enforce_help_lists_every_rule():
    from autograph.schema import compliance

    enforce = load_script("enforce.py")
    expected = "\n".join(f"  {rule:<20} {severity:<8} {what}" for rule, (severity, what) in compliance.RULES.items())
    assert enforce.RULE_LINES == expected


# guard.py is a hook: it takes options only and reads its request from stdin
@pytest.mark.parametrize("name", [name for name in ALL_SCRIPTS if name != "guard.py"])
def test_an_argument_that_is_not_utf8_is_refused_before_anything_else(tmp_path, name):
    """Bytes that are not UTF-8 reach Python as lone surrogates; every script
    refuses them (exit 2, one line) before it reads or journals anything:
    card.py set NOTE 'k=\\xff' crashed in the journal and left an empty run."""
    (tmp_path / "Dana.md").write_text("---\ntype: person\n---\n", encoding="utf-8")
    proc, modules = run_listing(tmp_path, [name, "set", "Dana", "k=\udcff\udcfe", "--vault", str(tmp_path)])
    assert proc.returncode == 2, proc.stderr
    assert "not valid UTF-8" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / ".graph").exists()
    # the argument is shown through the one printable rule, read/text.py (re alone)
    assert heavy(modules - {"autograph.read", "autograph.read.text"}) == []
