"""The vault named one way and found as git finds a repository (DESIGN 3,
"Command-line conventions").

A table of every command that works on a vault runs each one as an agent
(from a folder outside the vault), as cron (from the vault), as a person
(from a subfolder) and with ``AUTOGRAPH_VAULT``; each must give what the
command gives with ``--vault`` named.  With no vault anywhere, a reading
command reads the current folder with a notice and writes nothing there; a
writing command is exit 2 and writes nothing.  A test holds the table to
the scripts' parsers, so a new script or subcommand must join it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# (script, arguments before the common options, "read" | "write"): every
# subcommand of every script that works on a vault.  Note arguments are
# names or vault paths that exist in the example vault.
# a date for the commands that write one: two runs compared across midnight would differ
DAY = ["--today", "2026-12-05"]
COMMANDS = [
    ("graph.py", ["health"], "read"),
    ("graph.py", ["backlinks", "Dana Reyes"], "read"),
    ("graph.py", ["orphans"], "read"),
    ("graph.py", ["report"], "read"),
    ("graph.py", ["fix"], "write"),
    ("graph.py", ["mv", "people/Dana Reyes.md", "people/Dana R.md"], "write"),
    ("discover.py", [], "read"),
    ("search.py", ["Dana"], "read"),
    ("check.py", [], "read"),
    ("doctor.py", [], "read"),
    ("card.py", ["new", "person", "Zoe Tester", "description=A tester", "status=active", *DAY], "write"),
    ("card.py", ["set", "Dana Reyes", "role=COO", *DAY], "write"),
    ("card.py", ["log", "Dana Reyes", "Met", "again", *DAY], "write"),
    ("card.py", ["link", "Dana Reyes", "Acme Robotics", *DAY], "write"),
    ("card.py", ["retire", "Ben Carter", "--by", "Dana Reyes", *DAY], "write"),
    ("card.py", ["remember", "person", "Zoe Tester", "description=A tester", "status=active", *DAY], "write"),
    ("card.py", ["show", "Dana Reyes"], "read"),
    ("card.py", ["batch", *DAY], "write"),
    ("card.py", ["redact", "Dana Reyes", "role", *DAY], "write"),
    ("daily.py", ["extract", "--all"], "read"),
    ("daily.py", ["mark", "--date", "2026-11-24"], "write"),
    ("dedup.py", [], "write"),
    ("enforce.py", [], "write"),
    ("engine.py", ["init"], "write"),
    ("engine.py", ["decay", "--today", "2026-12-05"], "write"),
    ("engine.py", ["touch", "Dana Reyes", "--today", "2026-12-05"], "write"),
    ("engine.py", ["creative", "--seed", "1", "--today", "2026-12-05"], "write"),
    ("engine.py", ["stats", "--today", "2026-12-05"], "read"),
    ("enrich.py", ["tags"], "write"),
    ("enrich.py", ["links"], "write"),
    ("link_cleanup.py", [], "write"),
    ("moc.py", ["generate"], "write"),
    ("orchestrate.py", ["health"], "read"),
    ("orchestrate.py", ["bootstrap"], "write"),
    ("orchestrate.py", ["dedup-prepare"], "read"),
    ("orchestrate.py", ["link-prepare"], "read"),
    ("orchestrate.py", ["graph-prepare"], "read"),
    ("orchestrate.py", ["research", "plan"], "read"),
    ("supersede.py", [], "write"),
    ("undo.py", ["list"], "read"),
    ("undo.py", ["show", "last"], "read"),
    ("undo.py", ["undo", "last"], "write"),
    ("undo.py", ["recover"], "write"),
]

# Commands that take no vault, and why.
NO_VAULT = {
    ("generate_schema.py",): "drafts a schema from a discovery file; writes only the file -o names",
    ("guard.py",): "a Claude Code hook: the project comes from the hook's input and CLAUDE_PROJECT_DIR",
    ("session.py",): "Claude Code session hooks: the vault comes from --vault, the hook's cwd or CLAUDE_PROJECT_DIR",
    ("init.py",): "installs into an agent host: --project, --user and --store name the folders",
    ("orchestrate.py", "research", "reduce"): "reduces observation files to a draft; reads no vault",
}


def _ids(row) -> str:
    script, argv, _ = row
    return " ".join([script[:-3], *argv[:1]] + (argv[1:2] if script == "orchestrate.py" else []))


def run(script: str, *argv, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "AUTOGRAPH_VAULT"}
    environ.update(env or {})
    environ.pop("AUTOGRAPH_LLM_API_KEY", None)
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        timeout=300,
    )


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def normalised(text: str, vault: Path) -> object:
    """A command's JSON with the vault's folder, however it was named,
    written the same way (``.``, and paths in it vault-relative), and
    without what differs from run to run: timings, and the size of the
    report page, which names the folder."""
    data = json.loads(text) if text.strip() else None

    def norm(value):
        if isinstance(value, dict):
            timed = ("seconds", "scanned", *(("bytes",) if "sections" in value else ()))
            return {k: norm(v) for k, v in value.items() if k not in timed}
        if isinstance(value, list):
            return [norm(v) for v in value]
        if isinstance(value, str):
            for form in (str(vault.resolve()), str(vault)):
                value = value.replace(form + "/", "").replace(form, ".")
            return value
        return value

    return norm(data)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The example vault (marked by .obsidian/ and schema.json) and a folder
    outside it with no marker above it (the temporary folders' parents hold
    none)."""
    base = tmp_path_factory.mktemp("location")
    vault = copy_tree(EXAMPLE_VAULT, base / "vault")
    outside = base / "project"
    outside.mkdir()
    return vault, outside


@pytest.mark.parametrize("row", COMMANDS, ids=_ids)
def test_every_command_finds_the_vault_from_anywhere(world, row):
    """Named with --vault from elsewhere, the command's answer; the same
    from the vault (cron's `cd vault && ...`), from a subfolder of it, and
    from elsewhere with AUTOGRAPH_VAULT; and nothing written outside it."""
    vault, outside = world
    script, argv, _ = row
    common = ["--json", "--dry-run"]
    named = run(script, *argv, "--vault", vault, *common, cwd=outside)
    assert named.returncode in (0, 1, 2, 4), named.stderr
    expected = (named.returncode, normalised(named.stdout, vault))
    for cwd, env in ((vault, None), (vault / "people", None), (outside, {"AUTOGRAPH_VAULT": str(vault)})):
        proc = run(script, *argv, *common, cwd=cwd, env=env)
        assert (proc.returncode, normalised(proc.stdout, vault)) == expected, (cwd, env, proc.stderr)
        assert "no vault marker" not in proc.stderr
    assert files_under(outside) == []
    assert not (vault / "people" / ".graph").exists()


@pytest.mark.parametrize("row", COMMANDS, ids=_ids)
def test_with_no_vault_anywhere_reading_takes_the_current_folder_and_writing_is_refused(tmp_path, row):
    """No --vault, no AUTOGRAPH_VAULT, no marker upward: a reading command
    reads the current folder, says so on one line of stderr and writes
    nothing there; a writing command is exit 2, says how to name the vault,
    and writes nothing."""
    script, argv, kind = row
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "Dana Reyes.md").write_text("---\ntype: person\n---\nDana [[Acme]]\n", encoding="utf-8")
    before = files_under(folder)
    proc = run(script, *argv, "--json", cwd=folder)
    if kind == "write":
        assert proc.returncode == 2, proc.stderr
        assert "no vault found" in proc.stderr and "--vault" in proc.stderr and "AUTOGRAPH_VAULT" in proc.stderr
    else:
        notices = [line for line in proc.stderr.splitlines() if "no vault marker" in line]
        assert len(notices) == 1, proc.stderr
        assert "--vault" in notices[0]
    assert files_under(folder) == before
    assert files_under(tmp_path) == ["notes", "notes/Dana Reyes.md"]


def _parsers():
    """Every script's parser, built as the script builds it."""
    for path in sorted(SCRIPTS.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(SCRIPTS))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(SCRIPTS))
        build = getattr(module, "build_parser", None) or getattr(module, "_parser", None)
        yield path.name, build() if build else None


def _commands(parser, words=()):
    """(words, parser) of each runnable command under ``parser``."""
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield tuple(words), parser
        return
    for name, sub in subs[0].choices.items():
        yield from _commands(sub, [*words, name])


def test_the_table_holds_every_command_of_every_script():
    """A new script or subcommand joins COMMANDS (and so every test above)
    or NO_VAULT with its reason; each command in COMMANDS takes --vault and
    says in its --help where the vault is found."""
    seen = set()
    for script, parser in _parsers():
        if parser is None:
            assert (script,) in NO_VAULT, f"{script}: no parser and not in NO_VAULT"
            seen.add((script,))
            continue
        for words, command in _commands(parser):
            key = (script, *words)
            seen.add(key)
            if key in NO_VAULT:
                assert not any("--vault" in a.option_strings for a in command._actions), key
                continue
            rows = [row for row in COMMANDS if row[0] == script and row[1][: len(words)] == list(words)]
            assert rows, f"{' '.join(key)}: add it to COMMANDS (or NO_VAULT with a reason)"
            option = [a for a in command._actions if "--vault" in a.option_strings]
            assert option, f"{' '.join(key)} takes no --vault"
            help_text = command.format_help()
            for word in ("AUTOGRAPH_VAULT", ".obsidian/", "schema.json", ".graph/", "current folder"):
                assert word in " ".join(help_text.split()), (key, word)
    for script, argv, _ in COMMANDS:
        assert any(key[0] == script and argv[: len(key) - 1] == list(key[1:]) for key in seen), (script, argv)
    assert set(NO_VAULT) <= seen


@pytest.fixture
def vault(tmp_path):
    """A writable copy of the example vault, and a folder outside it."""
    (tmp_path / "project").mkdir()
    return copy_tree(EXAMPLE_VAULT, tmp_path / "vault")


def test_a_positional_vault_and_vault_option_must_name_one_folder(vault, tmp_path):
    """Both given: the same folder however spelled is fine; two folders is
    exit 2 naming both, before anything is read or written."""
    other = tmp_path / "other"
    other.mkdir()
    same = run("graph.py", "orphans", vault, "--vault", f"{vault}/people/..", "--dry-run", cwd=tmp_path / "project")
    assert same.returncode == 0, same.stderr
    proc = run("graph.py", "fix", vault, "--vault", other, "--apply", cwd=tmp_path / "project")
    assert proc.returncode == 2
    assert f"--vault {other}" in proc.stderr and f"VAULT {vault}" in proc.stderr
    assert files_under(other) == [] and not (vault / ".graph").exists()


def test_vault_option_wins_over_the_environment_and_a_bad_environment_is_a_usage_error(vault, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    proc = run("search.py", "Dana", "--vault", vault, "--json", cwd=tmp_path, env={"AUTOGRAPH_VAULT": str(other)})
    assert proc.returncode == 0 and json.loads(proc.stdout)["hits"], proc.stderr
    proc = run(
        "card.py", "set", "Dana Reyes", "role=COO", cwd=tmp_path, env={"AUTOGRAPH_VAULT": str(tmp_path / "nope")}
    )
    assert proc.returncode == 2 and "AUTOGRAPH_VAULT" in proc.stderr
    # set but empty (an unset variable in a cron line) is as if unset: found from the current folder
    proc = run("engine.py", "stats", "--json", cwd=vault / "people", env={"AUTOGRAPH_VAULT": ""})
    assert proc.returncode == 0 and "no vault marker" not in proc.stderr, proc.stderr


def test_absolute_note_paths_from_another_folder_find_their_vault_and_write_there(vault, tmp_path):
    """The agent in its project folder passes the paths it was given."""
    project = tmp_path / "project"
    dana = vault / "people" / "Dana Reyes.md"
    proc = run("card.py", "set", dana, "role=COO", "--today", "2026-12-05", "--json", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["written"] == ["people/Dana Reyes.md"]
    assert "role: COO" in dana.read_text(encoding="utf-8")
    proc = run("engine.py", "touch", vault / "companies" / "Acme Robotics.md", "--today", "2026-12-05", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "access_count: 1" in (vault / "companies" / "Acme Robotics.md").read_text(encoding="utf-8")
    proc = run("graph.py", "backlinks", dana, "--json", cwd=project)
    assert proc.returncode == 0 and json.loads(proc.stdout)["note"] == "people/Dana Reyes.md", proc.stderr
    proc = run("graph.py", "mv", dana, vault / "people" / "Dana R.md", "--apply", "--json", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert (vault / "people" / "Dana R.md").exists() and not dana.exists()
    assert files_under(project) == []


def test_paths_relative_to_the_current_folder_and_to_the_vault_both_work_in_a_subfolder(vault):
    people = vault / "people"
    proc = run("card.py", "log", "Dana Reyes.md", "Met", "again", "--today", "2026-12-05", "--json", cwd=people)
    assert proc.returncode == 0 and json.loads(proc.stdout)["written"] == ["people/Dana Reyes.md"], proc.stderr
    proc = run("engine.py", "touch", "../companies/Acme Robotics.md", "people/Ben Carter.md", "--json", cwd=people)
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(proc.stdout)["written"]) == ["companies/Acme Robotics.md", "people/Ben Carter.md"]
    proc = run("graph.py", "mv", "Grace Liu.md", "Grace L.md", "--apply", "--json", cwd=people)
    assert proc.returncode == 0 and (people / "Grace L.md").exists(), proc.stderr
    proc = run("graph.py", "mv", "people/Omar Haddad.md", "people/Omar H.md", "--apply", "--json", cwd=people)
    assert proc.returncode == 0 and (people / "Omar H.md").exists(), proc.stderr
    assert not (people / "people").exists() and not (people / ".graph").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["card.py", "set", "{outside}", "role=CTO"],
        ["card.py", "link", "Dana Reyes", "{outside}"],
        ["engine.py", "touch", "{outside}"],
        ["graph.py", "backlinks", "{outside}"],
        ["graph.py", "mv", "{outside}", "people/x.md", "--apply"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_note_path_outside_the_vault_is_a_usage_error_naming_the_vault(vault, tmp_path, argv):
    outside = tmp_path / "project" / "Dana Reyes.md"
    outside.write_text("---\ntype: person\n---\n", encoding="utf-8")
    before = files_under(vault)
    script, *rest = [str(outside) if word == "{outside}" else word for word in argv]
    proc = run(script, *rest, "--vault", vault, cwd=tmp_path / "project")
    assert proc.returncode == 2, proc.stderr
    assert str(vault) in proc.stderr and ("outside the vault" in proc.stderr or "not inside the vault" in proc.stderr)
    assert files_under(vault) == before


@pytest.mark.parametrize("words", [["dana", "{vault}"], ["{vault}"], ["dana", "~"]], ids=str)
def test_a_query_word_naming_a_folder_is_a_usage_error_suggesting_vault(vault, tmp_path, words):
    query = [str(vault) if w == "{vault}" else w for w in words]
    proc = run("search.py", *query, cwd=tmp_path / "project", env={"HOME": str(tmp_path / "project")})
    assert proc.returncode == 2 and "--vault" in proc.stderr, proc.stderr
    assert files_under(tmp_path / "project") == [] and not (vault / ".graph").exists()
    # a word that is only a folder's name in the vault is a word: "people" is searched for
    proc = run("search.py", "people", "--json", cwd=vault)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["card.py", "set", "Nobody Here", "role=CTO"],
        ["card.py", "new", "person", "Dana Reyes", "description=again", "status=active"],
        ["card.py", "new", "person", "No Description"],
        ["card.py", "retire", "Dana Reyes", "--by", "Nobody Here"],
        ["engine.py", "touch", "Nobody Here"],
        ["graph.py", "backlinks", "Nobody Here"],
        ["graph.py", "mv", "people/Nobody.md", "people/Somebody.md", "--apply"],
        ["undo.py", "undo", "20990101-000000-xyz", "--apply"],
        ["undo.py", "show", "last"],
        ["enforce.py", "--schema", "{missing}", "--apply"],
        ["graph.py", "fix", "--apply", "--wait", "-1"],
    ],
    ids=lambda argv: " ".join(argv[:3]),
)
def test_a_refused_or_failed_call_writes_nothing_anywhere(vault, tmp_path, argv):
    """Named by --vault, a vault autograph never wrote to (no .graph/): a
    refusal leaves no .graph/, no lock, no journal there, and nothing in
    the current folder."""
    script, *rest = [str(tmp_path / "missing.json") if w == "{missing}" else w for w in argv]
    before = files_under(vault)
    proc = run(script, *rest, "--vault", vault, cwd=tmp_path / "project")
    assert proc.returncode in (1, 2), proc.stderr
    assert files_under(vault) == before
    assert files_under(tmp_path / "project") == []


def test_a_lock_taken_away_by_a_run_that_wrote_nothing_is_taken_anew_by_the_run_waiting(tmp_path):
    """The first run in a vault makes .graph/ for its lock and, having
    written nothing, takes both away; a run that waited on the old lock
    file opens the new one, so two runs never hold two locks."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_bytes(b"a\n")
    library = str(SCRIPTS)
    holder = (
        f"import sys, time; sys.path.insert(0, {library!r})\n"
        "from pathlib import Path\n"
        "from autograph.write import store\n"
        f"with store.writer_lock(Path({str(root)!r}), 0, 'first'):\n"
        "    print('held', flush=True); time.sleep(1.5)\n"
    )
    waiter = (
        f"import sys; sys.path.insert(0, {library!r})\n"
        "from pathlib import Path\n"
        "from autograph.write import store\n"
        "from autograph.write.changes import Edit\n"
        f"result = store.apply(Path({str(root)!r}), [Edit('a.md', b'a\\n', b'b\\n')], wait=30, command='second')\n"
        "print(result.written)\n"
    )
    first = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    assert first.stdout.readline().strip() == "held"
    second = subprocess.run([sys.executable, "-c", waiter], capture_output=True, text=True, timeout=60)
    assert first.wait(timeout=60) == 0
    assert second.returncode == 0 and "a.md" in second.stdout, second.stderr
    assert (root / "a.md").read_bytes() == b"b\n"
    state = json.loads((root / ".graph" / "writer.lock").read_text())
    assert state["state"] == "done" and state["command"] == "second"


def test_what_earlier_runs_left_in_a_folder_does_not_make_it_a_vault(tmp_path):
    """A .graph/ without a journal (a lock, a search index, caches, a
    health history: what reading runs and refused calls left in a home
    folder before) marks nothing: a writing command below it still asks for
    --vault.  One with a journal (autograph wrote notes there) does."""
    home = tmp_path / "home"
    work = home / "code" / "app"
    work.mkdir(parents=True)
    litter = home / ".graph"
    (litter / "cache").mkdir(parents=True)
    (litter / "writer.lock").write_text('{"state": "done"}\n')
    (litter / "search.sqlite").write_bytes(b"")
    (litter / "health-history.jsonl").write_text("{}\n")
    (litter / "cache" / "notes.jsonl").write_text("{}\n")
    proc = run("engine.py", "decay", "--dry-run", cwd=work)
    assert proc.returncode == 2 and "no vault found" in proc.stderr
    (litter / "journal").mkdir()
    proc = run("engine.py", "decay", "--dry-run", "--json", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert files_under(work) == []


def test_a_journal_in_a_subfolder_does_not_split_the_vault(vault):
    """A journal an earlier version left in people/ (a command run there
    took it for the vault) does not make people/ a vault while the folder
    above holds .obsidian/: a move from people/ rewrites every link."""
    (vault / "people" / ".graph" / "journal").mkdir(parents=True)
    proc = run("graph.py", "mv", "Ben Carter.md", "Ben C.md", "--apply", "--json", cwd=vault / "people")
    assert proc.returncode == 0, proc.stderr
    assert "[[Ben Carter]]" not in (vault / "companies" / "Northwind Logistics.md").read_text(encoding="utf-8")
    assert (vault / ".graph" / "journal").is_dir()


def test_a_folder_of_a_vault_named_as_the_vault_is_refused_for_writing(vault):
    """--vault vault/people (no mark of its own, .obsidian/ above): a
    writing command is exit 2 naming the vault, since links from the rest
    of the vault would be broken unseen; a reading one says so and goes on."""
    before = files_under(vault)
    proc = run("graph.py", "mv", "Ben Carter.md", "Ben C.md", "--vault", vault / "people", "--apply", cwd=vault)
    assert proc.returncode == 2 and f"--vault {vault}" in proc.stderr, proc.stderr
    assert files_under(vault) == before
    proc = run("graph.py", "orphans", "--vault", vault / "people", "--dry-run", "--json", cwd=vault)
    assert proc.returncode == 0 and "is a folder of the Obsidian vault" in proc.stderr


def test_mv_reads_paths_from_the_current_folder_outside_the_vault(vault, tmp_path):
    """An agent in its project folder moves a note with paths relative to
    where it stands, as every other command reads them."""
    sub = tmp_path / "project" / "sub"
    sub.mkdir()
    proc = run("graph.py", "mv", "../../vault/people/Ben Carter.md", "../../vault/people/Ben C.md", "--apply", cwd=sub)
    assert proc.returncode == 0, proc.stderr
    assert (vault / "people" / "Ben C.md").exists()


def test_two_refused_calls_at_once_leave_nothing(vault):
    """Two agents refused at the same moment in a vault autograph never
    wrote to: neither leaves .graph/ behind, whichever takes the lock first."""
    command = [
        sys.executable,
        str(SCRIPTS / "card.py"),
        "new",
        "person",
        "Dana Reyes",
        "description=x",
        "status=active",
    ]
    for _ in range(3):
        procs = [subprocess.Popen([*command, "--vault", str(vault)], stderr=subprocess.PIPE) for _ in range(2)]
        assert [p.wait(timeout=120) for p in procs] == [1, 1]
        assert not (vault / ".graph").exists()


def test_tilde_in_a_name_no_shell_expanded_is_the_home_folder(vault, tmp_path):
    """A tool that runs no shell passes ~/vault as typed."""
    env = {"HOME": str(tmp_path)}
    proc = run(
        "card.py", "set", "~/vault/people/Dana Reyes.md", "role=COO", "--json", cwd=tmp_path / "project", env=env
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["written"] == ["people/Dana Reyes.md"], proc.stderr
    proc = run("graph.py", "orphans", "--vault=~/vault", "--dry-run", cwd=tmp_path / "project", env=env)
    assert proc.returncode == 0, proc.stderr


def test_from_a_deleted_current_folder_a_named_vault_still_works(vault, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    code = (
        "import os, subprocess, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]);"
        "argv = [sys.executable, sys.argv[2], 'orphans', '--vault', sys.argv[3], '--dry-run'];"
        "sys.exit(subprocess.run(argv).returncode)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(gone), str(SCRIPTS / "graph.py"), str(vault)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------
# The rules as properties: any tree of folders, any way of naming the vault

MARKS = [
    ("obsidian", True),  # .obsidian/: a vault
    ("schema", True),  # schema.json: a vault
    ("graph", True),  # .graph/ with a journal: a vault, unless a folder above holds one of the two above
    ("litter", False),  # .graph/ with a lock, a search index, a history: not one
    ("obsidian-file", False),  # a file called .obsidian: not one
    ("schema-dir", False),  # a folder called schema.json: not one
    (None, False),
]


def _mark(folder: Path, kind: str | None) -> None:
    if kind == "obsidian":
        (folder / ".obsidian").mkdir()
    elif kind == "schema":
        (folder / "schema.json").write_text("{}")
    elif kind == "graph":
        (folder / ".graph" / "journal").mkdir(parents=True)
    elif kind == "litter":
        (folder / ".graph").mkdir()
        (folder / ".graph" / "writer.lock").write_text("")
        (folder / ".graph" / "search.sqlite").write_text("")
        (folder / ".graph" / "health-history.jsonl").write_text("{}\n")
    elif kind == "obsidian-file":
        (folder / ".obsidian").write_text("")
    elif kind == "schema-dir":
        (folder / "schema.json").mkdir()


def _tree(base: Path, marks: list) -> list[Path]:
    """base/d0/d1/... one folder per mark, each marked so; the folders, top first."""
    folders, folder = [], base
    for depth, kind in enumerate(marks):
        folder = folder / f"d{depth}"
        folder.mkdir()
        _mark(folder, kind)
        folders.append(folder)
    return folders


def _nearest(folders: list[Path], marks: list) -> Path | None:
    """The nearest folder marked by .obsidian/ or schema.json, else the
    nearest with a journal."""
    pairs = list(reversed(list(zip(folders, marks, strict=False))))
    for tier in (("obsidian", "schema"), ("graph",)):
        for folder, kind in pairs:
            if kind in tier:
                return folder
    return None


PROPERTIES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@PROPERTIES
@given(marks=st.lists(st.sampled_from([kind for kind, _ in MARKS]), min_size=1, max_size=6))
def test_find_vault_is_the_nearest_marked_folder_upward(tmp_path_factory, marks):
    from autograph.read import location

    base = tmp_path_factory.mktemp("tree")
    folders = _tree(base, marks)
    assert location.find_vault(folders[-1]) == _nearest(folders, marks)
    assert location.find_vault(base) is None  # nothing above the temporary folders is a vault


@PROPERTIES
@given(
    marks=st.lists(st.sampled_from([kind for kind, _ in MARKS]), min_size=2, max_size=5),
    option=st.booleans(),
    positional=st.booleans(),
    environment=st.booleans(),
    note_depth=st.one_of(st.none(), st.integers(0, 4)),
    writer=st.booleans(),
)
def test_locate_follows_the_order_for_any_way_of_naming_the_vault(
    tmp_path_factory, marks, option, positional, environment, note_depth, writer
):
    """--vault, then VAULT (the two agreeing), then AUTOGRAPH_VAULT, then the
    nearest marked folder above the note path or the current folder, then
    the current folder for a reader (a dry run) and exit 2 for a writer."""
    import argparse
    import contextlib
    import io

    from autograph import cli

    base = tmp_path_factory.mktemp("locate")
    folders = _tree(base, marks)
    named, elsewhere = base / "named", base / "env"
    named.mkdir()
    elsewhere.mkdir()
    cwd = folders[-1]
    note = None
    if note_depth is not None:
        note = folders[min(note_depth, len(folders) - 1)] / "note.md"
        note.write_text("x\n")
    args = argparse.Namespace(
        vault=str(named) if positional else None,
        vault_option=str(named) if option else None,
        _vault_from="vault",
        _notes=("note",),
        note=str(note) if note else "Some Name",
        dry_run=False,
    )
    if writer:
        args._writer = True
    environ = {"AUTOGRAPH_VAULT": str(elsewhere)} if environment else {}
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            how = cli.locate(args, "test", environ=environ, cwd=str(cwd))
        except cli.UsageError:
            how = "refused"
    start = note.parent if note else cwd
    found = _nearest(folders[: folders.index(start) + 1], marks)
    if option or positional:
        assert (how, Path(args.vault)) == ("named", named)
    elif environment:
        assert (how, Path(args.vault)) == ("environment", elsewhere)
    elif found is not None:
        assert how == "found" and Path(args.vault if args.vault != "." else cwd) == found
    elif writer:
        assert how == "refused"
    else:
        assert (how, args.vault, args.dry_run) == ("current", ".", True)
        assert err.getvalue().count("\n") == 1 and "no vault marker" in err.getvalue()


def test_a_symlink_to_a_folder_of_an_obsidian_vault_is_no_way_around_the_refusal(tmp_path):
    """--vault through a symlink to an unmarked folder of an Obsidian vault
    is that folder; and a journal left there does not make it a vault."""
    outer = tmp_path / "ob"
    (outer / ".obsidian").mkdir(parents=True)
    (outer / "sub" / "people").mkdir(parents=True)
    (outer / "sub" / "people" / "Dana.md").write_text("---\ntype: person\n---\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(outer / "sub")
    for named in (tmp_path / "link", outer / "sub"):
        proc = run("card.py", "set", "Dana", "role=X", "--vault", named, cwd=tmp_path)
        assert proc.returncode == 2 and "Obsidian vault" in proc.stderr, proc.stderr
        proc = run("card.py", "set", "Dana", "role=X", cwd=tmp_path, env={"AUTOGRAPH_VAULT": str(named)})
        assert proc.returncode == 2 and "Obsidian vault" in proc.stderr, proc.stderr
    (outer / "sub" / ".graph" / "journal").mkdir(parents=True)
    proc = run("card.py", "set", "Dana", "role=X", "--vault", outer / "sub", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr


@pytest.mark.parametrize(
    "text",
    [
        '{"$schema": "https://json-schema.org/draft/2020-12/schema", "description": "app config"}',
        '{\n  "$schema" : "http://json-schema.org/draft-07/schema#",\n  "type": "object"\n}',
        '{"data": {"__schema": {"types": []}}}',
    ],
    ids=["json-schema", "draft-07", "graphql"],
)
def test_another_tools_schema_json_makes_no_vault(tmp_path, text):
    """A code repository's schema.json is no autograph schema: a writing
    command below it finds no vault instead of writing into the repository."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "schema.json").write_text(text, encoding="utf-8")
    proc = run("card.py", "new", "person", "Zoe", "description=x", "status=active", cwd=repo / "src")
    assert proc.returncode == 2 and "no vault found" in proc.stderr, proc.stderr
    assert files_under(repo) == ["schema.json", "src"]


def test_a_bad_schema_found_by_searching_upward_says_so(tmp_path):
    repo = tmp_path / "repo"
    (repo / "notes").mkdir(parents=True)
    (repo / "schema.json").write_text('{"node_types": 3}', encoding="utf-8")
    proc = run("graph.py", "orphans", cwd=repo / "notes")
    assert proc.returncode == 2 and "found by searching upward" in proc.stderr and "--vault" in proc.stderr


def test_a_note_path_through_a_symlink_finds_the_vault_behind_it(vault, tmp_path):
    (tmp_path / "people-link").symlink_to(vault / "people")
    proc = run("card.py", "set", "people-link/Dana Reyes.md", "role=COO", "--json", cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["written"] == ["people/Dana Reyes.md"], proc.stderr
    proc = run("graph.py", "backlinks", "people-link/Dana Reyes.md", "--json", cwd=tmp_path)
    assert proc.returncode == 0 and "no vault marker" not in proc.stderr, proc.stderr


def test_from_a_deleted_current_folder_absolute_note_paths_still_work(vault, tmp_path):
    gone = tmp_path / "gone"
    code = (
        "import os, subprocess, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]);"
        "sys.exit(subprocess.run([sys.executable, *sys.argv[2:]]).returncode)"
    )
    card = [str(SCRIPTS / "card.py"), "set", str(vault / "people" / "Dana Reyes.md"), "role=COO"]
    move = [str(SCRIPTS / "graph.py"), "mv", str(vault / "people" / "Ben Carter.md"), "people/Ben C.md"]
    for argv in (card, [*move, "--vault", str(vault), "--apply"]):
        gone.mkdir()
        proc = subprocess.run([sys.executable, "-c", code, str(gone), *argv], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    assert (vault / "people" / "Ben C.md").exists()


def test_mv_with_an_absolute_old_reads_a_relative_new_from_the_vault(vault, tmp_path):
    """From outside the vault, `mv /abs/vault/a.md people/b.md`: NEW is a
    vault path (nothing of it is where the command runs)."""
    old = vault / "people" / "Ben Carter.md"
    proc = run("graph.py", "mv", old, "people/Ben C.md", "--apply", cwd=tmp_path / "project")
    assert proc.returncode == 0, proc.stderr
    assert (vault / "people" / "Ben C.md").exists()


def test_a_store_in_a_vault_given_to_doctor_is_not_told_to_be_a_vault(vault):
    proc = run("doctor.py", vault / ".memory", "--json", cwd=vault)
    assert proc.returncode in (0, 1) and "Obsidian vault" not in proc.stderr, proc.stderr


def test_the_writer_lock_is_taken_again_when_its_folder_goes_as_it_is_opened(tmp_path, monkeypatch):
    """A run that made .graph/ and wrote nothing takes it away; another run
    opening the lock at that moment gets 'no such file' and tries again,
    never exit 3."""
    from autograph.write import lock

    root = tmp_path / "vault"
    root.mkdir()
    real_open = lock.open_derived
    calls = []

    def open_once_gone(path, flags):
        calls.append(path)
        if len(calls) == 1:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_open(path, flags)

    monkeypatch.setattr(lock, "open_derived", open_once_gone)
    with lock.hold(root, wait=0, command="test"):
        pass
    assert len(calls) == 2
    assert not (root / ".graph").exists()  # new lock, nothing written: taken away again
