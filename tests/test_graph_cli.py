"""graph.py as a person or cron runs it: health, backlinks and orphans.

Every run is a subprocess (``sys.executable graph.py ...``) on a temporary
copy of ``examples/vault`` or on a small vault built by the test.  Expected
findings for the example vault are the ones its notes were written to hold;
the score is recomputed here from the report's counts with the formula that
``graph.py health --help`` documents.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

GRAPH = SCRIPTS / "graph.py"
HISTORY = Path(".graph") / "health-history.jsonl"


def graph(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(GRAPH), *map(str, args)], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def graph_json(*args, cwd: Path | None = None) -> dict:
    proc = graph(*args, "--json", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault outside .graph/, with its bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".graph" or not path.is_file():
            continue
        out[str(rel)] = path.read_bytes()
    return out


def expected_score(report: dict) -> float:
    """The score from the report's counts, by the formula in ``health --help``:

    score = 100 - 30*orphans/non-hub notes - 30*broken links/links
            - 15*max(0, 1 - avg links per note/3) - 10*(1 - description coverage)
            - 10*invalid frontmatter/notes - 5*broken anchors/links, clamped to 0..100
    """
    notes = report["notes"]
    if notes == 0:
        return 100.0
    cards = notes - len(report["hubs"])
    links = report["links"]
    invalid = len(report["invalid_frontmatter"]) + len(report["unreadable"])
    value = (
        100
        - 30 * len(report["orphans"]) / max(cards, 1)
        - 30 * len(report["broken_links"]) / max(links, 1)
        - 15 * max(0.0, 1 - (links / notes) / 3)
        - 10 * (1 - report["description_coverage"])
        - 10 * invalid / notes
        - 5 * len(report["broken_anchors"]) / max(links, 1)
    )
    return min(100.0, max(0.0, value))


@pytest.fixture
def example(tmp_path) -> Path:
    return copy_tree(EXAMPLE_VAULT, tmp_path / "example")


@pytest.fixture(scope="module")
def example_report(tmp_path_factory) -> dict:
    """``health --json --dry-run`` of a copy of the example vault (read-only use)."""
    root = copy_tree(EXAMPLE_VAULT, tmp_path_factory.mktemp("example") / "vault")
    return graph_json("health", root, "--dry-run")


# A small vault whose every count is known by construction:
#   4 notes, 1 hub (MEMORY), 5 links, 1 broken link, 1 broken anchor,
#   1 orphan (c.md), 2 notes with a description, 1 invalid frontmatter.
SMALL = {
    "a.md": "---\ndescription: A note\n---\n# A\nSee [[b]] and [[missing]].\n",
    "b.md": "---\ndescription: B note\n---\nBack to [[a#Nope]] and [[a]].\n",
    "c.md": "---\ndescription: broken: yes\n---\nNo links here.\n",
    "MEMORY.md": "- [[a]]\n",
    "pic.png": b"\x89PNG",
}

PAIR = {"a.md": "[[b]]\n", "b.md": "[[a]]\n"}


# ---------------------------------------------------------------------------
# health on the example vault


def test_example_vault_broken_links(example_report):
    assert [(r["source"], r["line"], r["target"]) for r in example_report["broken_links"]] == [
        ("daily/2026-11-23.md", 12, "Marcus Okafur"),
        ("ideas/Customer advisory board.md", 22, "Pricing Model v2"),
        ("projects/Onboarding Revamp.md", 19, "Project Hermes"),
    ]


def test_example_vault_broken_anchors(example_report):
    assert [(r["source"], r["line"], r["target"], r["resolved"]) for r in example_report["broken_anchors"]] == [
        ("meetings/2026-11-20 Atlas design review.md", 25, "Project Atlas#Budget", "projects/Project Atlas.md"),
    ]


def test_example_vault_orphans(example_report):
    assert example_report["orphans"] == [
        "decisions/Adopt weekly pricing review.md",
        "ideas/Route simulation sandbox.md",
    ]


def test_example_vault_invalid_frontmatter(example_report):
    assert [(r["path"], r["line"]) for r in example_report["invalid_frontmatter"]] == [
        ("meetings/2026-11-18 Harbor quarterly check-in.md", 3),
    ]
    assert example_report["unreadable"] == []


def test_example_vault_counts_agree_with_each_other(example_report):
    r = example_report
    files = [
        p
        for p in EXAMPLE_VAULT.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(EXAMPLE_VAULT).parts)
    ]
    assert r["notes"] == sum(1 for p in files if p.suffix == ".md")
    assert r["attachments"] == len(files) - r["notes"]
    assert r["hubs"] == ["Home.md", "MEMORY.md"]  # schema.json: hubs.names MEMORY, Home
    assert r["resolved_links"] == r["links"] - len(r["broken_links"])
    assert r["avg_links"] == round(r["links"] / r["notes"], 2)
    assert r["previous"] is None


def test_example_vault_score_follows_the_formula(example_report):
    assert example_report["score"] == pytest.approx(expected_score(example_report), abs=0.05)


def test_health_json_keys_and_types(example_report):
    r = example_report
    assert set(r) == {
        "vault", "score", "penalties", "notes", "attachments", "hubs", "links", "resolved_links", "avg_links",
        "broken_links", "orphans", "dead_ends", "ambiguous_links", "broken_anchors", "description_coverage",
        "invalid_frontmatter", "unreadable", "case_collisions", "conflict_copies", "warnings", "previous",
        "stale_share", "tiers", "recall", "memory", "index",
    }  # fmt: skip
    assert set(r["index"]) == {"path", "notes", "parsed", "reread", "removed", "rebuilt", "stale", "memory", "readonly"}
    assert set(r["penalties"]) == {
        "orphans",
        "broken_links",
        "link_sparsity",
        "description",
        "invalid_frontmatter",
        "broken_anchors",
    }
    assert all(isinstance(v, (int, float)) and v >= 0 for v in r["penalties"].values())
    assert isinstance(r["vault"], str)
    assert isinstance(r["score"], (int, float)) and 0 <= r["score"] <= 100
    for key in ("notes", "attachments", "links", "resolved_links"):
        assert type(r[key]) is int, key
    assert isinstance(r["avg_links"], (int, float))
    assert isinstance(r["description_coverage"], (int, float)) and 0 <= r["description_coverage"] <= 1
    for key in ("hubs", "orphans", "dead_ends", "warnings"):
        assert isinstance(r[key], list) and all(isinstance(item, str) for item in r[key]), key
    for row in r["broken_links"]:
        assert set(row) == {"source", "line", "target", "kind"}
    for row in r["broken_anchors"]:
        assert set(row) == {"source", "line", "target", "kind", "resolved"}
    for row in r["invalid_frontmatter"]:
        assert set(row) == {"path", "line", "column", "error"}
        assert type(row["line"]) is int and type(row["column"]) is int and row["error"]


def test_health_human_output(example):
    report = graph_json("health", example, "--dry-run")
    proc = graph("health", example, "--dry-run")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == f"health: {report['score']}/100"
    assert "Broken links (3):" in lines
    assert "  daily/2026-11-23.md:12  Marcus Okafur" in lines
    assert "  ideas/Customer advisory board.md:22  Pricing Model v2" in lines
    assert "  projects/Onboarding Revamp.md:19  Project Hermes" in lines
    assert "Broken anchors (1):" in lines
    assert "  meetings/2026-11-20 Atlas design review.md:25  Project Atlas#Budget" in lines
    assert "Orphans (2):" in lines
    assert "Invalid frontmatter (1):" in lines
    assert any(line.startswith("  meetings/2026-11-18 Harbor quarterly check-in.md:3:") for line in lines)
    assert proc.stderr == ""


# ---------------------------------------------------------------------------
# health on a vault whose counts are known


def test_small_vault_counts(make_vault):
    report = graph_json("health", make_vault(SMALL), "--dry-run")
    assert (report["notes"], report["attachments"], report["links"]) == (4, 1, 5)
    assert report["hubs"] == ["MEMORY.md"]
    assert [(r["source"], r["line"], r["target"]) for r in report["broken_links"]] == [("a.md", 5, "missing")]
    assert [(r["source"], r["line"], r["target"]) for r in report["broken_anchors"]] == [("b.md", 4, "a#Nope")]
    assert report["orphans"] == ["c.md"]
    # 2 of the 3 cards: MEMORY.md is the index, not a card
    assert report["description_coverage"] == pytest.approx(2 / 3, abs=1e-4)
    assert [(r["path"], r["line"], r["column"]) for r in report["invalid_frontmatter"]] == [("c.md", 2, 20)]
    assert report["dead_ends"] == ["c.md"]


def test_small_vault_score(make_vault):
    report = graph_json("health", make_vault(SMALL), "--dry-run")
    by_hand = 100 - 30 * 1 / 3 - 30 * 1 / 5 - 15 * (1 - (5 / 4) / 3) - 10 * (1 - 2 / 3) - 10 * 1 / 4 - 5 * 1 / 5
    assert report["score"] == pytest.approx(by_hand, abs=0.05)
    assert report["score"] == pytest.approx(expected_score(report), abs=0.05)


def test_empty_vault_scores_100(make_vault):
    report = graph_json("health", make_vault({}), "--dry-run")
    assert (report["score"], report["notes"], report["links"]) == (100, 0, 0)


def test_empty_vault_has_every_penalty_at_zero(make_vault):
    """An empty vault: all six penalties present and 0, score 100."""
    report = graph_json("health", make_vault({}), "--dry-run")
    assert report["penalties"] == {
        "orphans": 0,
        "broken_links": 0,
        "link_sparsity": 0,
        "description": 0,
        "invalid_frontmatter": 0,
        "broken_anchors": 0,
    }
    assert report["score"] == 100


def test_vault_without_links_score(make_vault):
    # 3 orphans of 3 cards (30), no links (sparsity 15), no descriptions (10): 100 - 55
    report = graph_json("health", make_vault({"a.md": "A", "b.md": "B", "c.md": "C"}), "--dry-run")
    assert report["score"] == pytest.approx(45.0, abs=0.05)
    assert report["orphans"] == ["a.md", "b.md", "c.md"]
    assert report["dead_ends"] == ["a.md", "b.md", "c.md"]


@pytest.mark.parametrize("margin, code", [(0.1, 1), (0.0, 0), (-50, 0)])
def test_fail_under(example, example_report, margin, code):
    threshold = round(example_report["score"] + margin, 1)
    proc = graph("health", example, "--dry-run", "--fail-under", threshold)
    assert proc.returncode == code, proc.stderr
    if code == 1:
        assert f"--fail-under {threshold}" in proc.stderr
    else:
        assert proc.stderr == ""


def test_fail_under_with_json_still_prints_the_report(example, example_report):
    proc = graph("health", example, "--dry-run", "--json", "--fail-under", 100)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["score"] == example_report["score"]


@pytest.mark.parametrize("value", ["nan", "inf", "-5", "101", "abc"])
def test_fail_under_must_be_a_score(make_vault, value):
    """--fail-under nan, inf, -5, 101 or abc: exit 2 with a message naming --fail-under."""
    proc = graph("health", make_vault(SMALL), "--dry-run", "--fail-under", value)
    assert_usage_error(proc, "--fail-under")


@pytest.mark.parametrize("value", ["0", "100"])
def test_fail_under_accepts_0_and_100(make_vault, value):
    """--fail-under 0 and 100 are scores: an empty vault (score 100) passes both."""
    proc = graph("health", make_vault({}), "--dry-run", "--fail-under", value)
    assert (proc.returncode, proc.stderr) == (0, "")


# ---------------------------------------------------------------------------
# What health writes: one history line per run, the cache, nothing else


def test_history_line_per_run_and_previous(example):
    first = graph_json("health", example)
    assert first["previous"] is None
    lines = (example / HISTORY).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["score"] == first["score"]
    assert entry["notes"] == first["notes"]
    assert entry["broken_links"] == len(first["broken_links"])
    assert entry["orphans"] == len(first["orphans"])

    second = graph_json("health", example)
    assert second["previous"] == entry
    lines = (example / HISTORY).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0]) == entry


def test_dry_run_writes_no_history_and_no_cache(example):
    graph_json("health", example, "--dry-run")
    assert not (example / ".graph").exists()
    graph_json("health", example)
    before = (example / HISTORY).read_bytes()
    report = graph_json("health", example, "--dry-run")
    assert (example / HISTORY).read_bytes() == before
    assert report["previous"] == json.loads(before.decode("utf-8").splitlines()[-1])


def test_human_output_shows_the_trend(example):
    graph("health", example)
    proc = graph("health", example)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0].startswith(
        f"health: {graph_json('health', example, '--dry-run')['score']}/100  (+0.0 since "
    )


def test_example_vault_bytes_outside_dot_graph_unchanged(example):
    graph("health", example)
    graph("health", example, "--json", "--fail-under", 100)
    graph("backlinks", example, "Dana Reyes")
    graph("orphans", example, "--json")
    assert snapshot(example) == snapshot(EXAMPLE_VAULT)


def test_health_writes_only_under_dot_graph(make_vault):
    files = dict(SMALL)
    files["bom-crlf.md"] = b"\xef\xbb\xbf---\r\ndescription: x\r\n---\r\n[[a]]\r\n"
    files["latin1.md"] = b"caf\xe9 [[a]]\n"
    files["sub/nfd-Cafe\u0301.md"] = "[[b]]\n"
    root = make_vault(files)
    (root / "schema.json").write_text('{"version": 1}')
    before = snapshot(root)
    graph("health", root)
    graph("health", root, "--json")
    graph("backlinks", root, "a")
    graph("orphans", root)
    assert snapshot(root) == before
    assert sorted(str(p.relative_to(root)) for p in (root / ".graph").rglob("*") if p.is_file()) == [
        ".graph/cache/health.json",
        ".graph/health-history.jsonl",
        ".graph/index.sqlite",
    ]


def test_unreadable_note_is_reported_not_fatal(make_vault):
    report = graph_json(
        "health", make_vault({"a.md": "[[b]]", "b.md": "[[a]]", "latin1.md": b"caf\xe9\n"}), "--dry-run"
    )
    assert [r["path"] for r in report["unreadable"]] == ["latin1.md"]
    assert "offset 3" in report["unreadable"][0]["error"]


def test_file_name_that_is_not_utf8_does_not_crash_health(make_vault):
    # Linux allows any bytes in a file name (Latin-1 names from old archives)
    root = make_vault({"a.md": "[[b]]", "b.md": "[[a]]"})
    with open(os.fsencode(root) + b"/caf\xe9.md", "wb") as handle:
        handle.write(b"[[a]]\n")
    proc = graph("health", root, "--json")  # the default run writes history and cache
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    # such a name cannot be written in a UTF-8 report or linked to: skipped, and said so
    assert report["notes"] == 2
    assert any("caf" in warning and "not UTF-8" in warning for warning in report["warnings"])


def test_second_run_with_the_cache_gives_the_same_report(example):
    first = graph_json("health", example)
    second = graph_json("health", example)
    assert (first["index"]["parsed"], second["index"]["parsed"]) == (first["notes"], 0)
    for report in (first, second):
        report.pop("previous")
        report.pop("index")
    assert second == first


# ---------------------------------------------------------------------------
# Usage errors: exit 2, one line on stderr, no traceback


def assert_usage_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    for word in words:
        assert word in proc.stderr, proc.stderr


def test_missing_vault(tmp_path):
    proc = graph("health", tmp_path / "no-such-vault")
    assert_usage_error(proc, "no-such-vault")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_vault_is_a_file(tmp_path):
    (tmp_path / "note.md").write_text("x")
    proc = graph("health", tmp_path / "note.md", "--json")
    assert_usage_error(proc, "not a folder")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "schema, words",
    [
        pytest.param('{"nodetypes": {}}', ["$.nodetypes"], id="unknown-key"),
        pytest.param('{"version": 1,}', ["line 1, column 15"], id="invalid-json"),
        pytest.param(
            '{"node_types": {"person": {"status": ["active"], "supersedable": true}}}',
            ["$.node_types.person.status", "superseded"],
            id="status",
        ),
    ],
)
def test_bad_schema(make_vault, schema, words):
    root = make_vault({"a.md": "x", "schema.json": schema})
    proc = graph("health", root)
    assert_usage_error(proc, "schema.json", *words)
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (root / ".graph").exists()


def test_schema_option_with_a_missing_file(make_vault, tmp_path):
    proc = graph("health", make_vault({"a.md": "x"}), "--schema", tmp_path / "missing.json")
    assert_usage_error(proc, "missing.json")


def test_schema_option_is_used(make_vault, tmp_path):
    root = make_vault({"Start.md": "[[a]]", "a.md": "[[Start]]", "b.md": "x"})
    schema = tmp_path / "custom.json"
    schema.write_text('{"hubs": {"names": ["Start", "b"]}}')
    report = graph_json("health", root, "--dry-run", "--schema", schema)
    assert report["hubs"] == ["Start.md", "b.md"]
    assert report["orphans"] == []


@pytest.mark.parametrize(
    "args", [["health", "--jsn"], ["health", "--fail-under", "high"], ["orphans", "--dryrun"], ["backlinks"], ["helth"]]
)
def test_misspelled_flag_or_command(example, args):
    proc = graph(*args[:1], *([example] if args[0] != "backlinks" else []), *args[1:])
    assert_usage_error(proc)
    assert "usage:" in proc.stderr


def test_no_command_prints_usage_and_exits_2():
    proc = graph()
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args", [["health", ""], ["health", "", "--json"], ["health", " "], ["orphans", ""], ["backlinks", "", "a"]]
)
def test_empty_vault_argument_is_refused(make_vault, args):
    """VAULT "" (an unset variable in cron): exit 2 naming VAULT, nothing written in the current folder."""
    root = make_vault(PAIR)
    proc = graph(*args, cwd=root)
    assert_usage_error(proc, "VAULT")
    assert sorted(p.name for p in root.iterdir()) == ["a.md", "b.md"]


@pytest.mark.parametrize("command, args", [("health", []), ("orphans", []), ("backlinks", ["a"])])
def test_misspelled_option_after_the_vault_shows_the_commands_usage(make_vault, command, args):
    """graph.py health VAULT --bogus: exit 2 with 'usage: graph.py health', not the top-level usage."""
    proc = graph(command, make_vault(PAIR), *args, "--bogus")
    assert_usage_error(proc, f"usage: graph.py {command} ", "--bogus")
    assert "COMMAND ..." not in proc.stderr


# ---------------------------------------------------------------------------
# backlinks and orphans

LINKED = {
    "people/Dana Reyes.md": "---\ndescription: Dana\n---\nMe: [[Dana Reyes]]\n",
    "a.md": "Met [[Dana Reyes]] today.\n\nAgain [[dana reyes#Role|Dana]].\n",
    "notes/b.md": '---\nowner: "[[people/Dana Reyes]]"\n---\n`[[Dana Reyes]]` is code.\n',
    "c.md": "Nothing [[here]].\n",
}


@pytest.mark.parametrize("note", ["people/Dana Reyes.md", "Dana Reyes", "dana reyes", "people/Dana Reyes"])
def test_backlinks(make_vault, note):
    report = graph_json("backlinks", make_vault(LINKED), note, "--dry-run")
    assert report["note"] == "people/Dana Reyes.md"
    assert [(r["source"], r["line"], r["target"], r["kind"]) for r in report["backlinks"]] == [
        ("a.md", 1, "Dana Reyes", "wikilink"),
        ("a.md", 3, "dana reyes#Role", "wikilink"),
        ("notes/b.md", 2, "people/Dana Reyes", "property"),
    ]
    assert report["sources"] == ["a.md", "notes/b.md"]


def test_backlinks_human_output(make_vault):
    proc = graph("backlinks", make_vault(LINKED), "Dana Reyes")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        "people/Dana Reyes.md: 3 backlinks from 2 notes",
        "  a.md:1  Dana Reyes",
        "  a.md:3  dana reyes#Role",
        "  notes/b.md:2  people/Dana Reyes",
    ]


def test_backlinks_of_an_unknown_note(make_vault):
    proc = graph("backlinks", make_vault(LINKED), "Nobody")
    assert_usage_error(proc, "Nobody")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "cwd, note",
    [
        pytest.param("vault", "people/Dana Reyes.md", id="vault-path-from-the-vault"),
        pytest.param("vault", "./people/Dana Reyes.md", id="dot-slash"),
        pytest.param("parent", "vault/people/Dana Reyes.md", id="file-path-from-the-current-folder"),
        pytest.param("parent", "ABSOLUTE", id="absolute-file-path"),
        pytest.param("parent", "[[Dana Reyes#Role|Dana]]", id="wikilink"),
        pytest.param("parent", "Dana Reyes#Role", id="name-with-fragment"),
    ],
)
def test_backlinks_note_forms(make_vault, cwd, note):
    """NOTE as a path (vault, current folder, absolute), a [[wikilink]] or a name#fragment finds the same note."""
    root = make_vault(LINKED)
    note = str(root / "people" / "Dana Reyes.md") if note == "ABSOLUTE" else note
    report = graph_json("backlinks", root, note, "--dry-run", cwd=root if cwd == "vault" else root.parent)
    assert report["note"] == "people/Dana Reyes.md"
    assert report["sources"] == ["a.md", "notes/b.md"]
    assert len(report["backlinks"]) == 3


@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_backlinks_of_a_file_outside_the_vault(make_vault, tmp_path, where):
    """NOTE a file outside the vault (absolute, or ../outside.md from the vault): exit 2."""
    root = make_vault(LINKED)
    (tmp_path / "outside.md").write_text("[[Dana Reyes]]\n")
    note = tmp_path / "outside.md" if where == "absolute" else "../outside.md"
    assert_usage_error(graph("backlinks", root, note, cwd=root), "outside.md", "not inside the vault")


@pytest.mark.parametrize("note", ["", "  "])
def test_backlinks_of_an_empty_note(make_vault, note):
    """NOTE "" or blank: exit 2 naming NOTE."""
    assert_usage_error(graph("backlinks", make_vault(LINKED), note), "NOTE")


def test_backlinks_of_a_name_only_broken_links_use(make_vault):
    """c.md links [[here]], no note has that name: exit 0, note null, the broken link listed."""
    root = make_vault(LINKED)
    assert graph_json("backlinks", root, "here", "--dry-run") == {
        "note": None,
        "backlinks": [{"source": "c.md", "line": 1, "target": "here", "kind": "wikilink"}],
        "sources": ["c.md"],
    }
    proc = graph("backlinks", root, "here", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "here (no such note; these links are broken): 1 backlink from 1 note",
        "  c.md:1  here",
    ]


def test_backlinks_human_output_singular_and_zero(make_vault):
    """'1 backlink from 1 note' and '0 backlinks from 0 notes'."""
    root = make_vault({"x.md": "alone\n", "y.md": "[[x]]\n"})
    assert graph("backlinks", root, "x", "--dry-run").stdout.splitlines() == [
        "x.md: 1 backlink from 1 note",
        "  y.md:1  x",
    ]
    assert graph("backlinks", root, "y", "--dry-run").stdout.splitlines() == ["y.md: 0 backlinks from 0 notes"]


def test_backlinks_on_the_example_vault_by_path_and_by_name(example):
    by_path = graph_json("backlinks", example, "people/Dana Reyes.md", "--dry-run")
    by_name = graph_json("backlinks", example, "Dana Reyes", "--dry-run")
    assert by_path == by_name
    assert by_path["note"] == "people/Dana Reyes.md"
    # attendees: "[[Dana Reyes]]" in a valid frontmatter counts
    assert "meetings/2026-11-20 Atlas design review.md" in by_path["sources"]
    # the same property in invalid frontmatter does not (the block has no values)
    assert "meetings/2026-11-18 Harbor quarterly check-in.md" not in by_path["sources"]
    assert "people/Dana Reyes.md" not in by_path["sources"]


def test_orphans_json(example):
    assert graph_json("orphans", example, "--dry-run") == {
        "orphans": ["decisions/Adopt weekly pricing review.md", "ideas/Route simulation sandbox.md"],
        "count": 2,
    }


def test_orphans_human_output(make_vault):
    proc = graph("orphans", make_vault(LINKED), "--dry-run")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["3 orphans", "  a.md", "  c.md", "  notes/b.md"]


# ---------------------------------------------------------------------------
# VAULT defaults to the current folder


def test_health_in_the_current_folder(example, example_report):
    report = graph_json("health", "--dry-run", cwd=example)
    assert report["vault"] == "."
    report.pop("vault")
    expected = dict(example_report)
    expected.pop("vault")
    assert report == expected


def test_cron_style_run_writes_history_in_the_current_folder(example):
    proc = graph("health", "--fail-under", 0, cwd=example)
    assert proc.returncode == 0, proc.stderr
    assert len((example / HISTORY).read_text(encoding="utf-8").splitlines()) == 1


def test_orphans_and_backlinks_in_the_current_folder(example):
    assert graph_json("orphans", "--dry-run", cwd=example)["count"] == 2
    proc = graph("backlinks", "Dana Reyes", "--json", "--dry-run", cwd=example)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["note"] == "people/Dana Reyes.md"


def test_scripts_run_from_any_folder_without_pythonpath(example, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(GRAPH), "orphans", str(example), "--json", "--dry-run"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["count"] == 2


def test_json_in_a_pipe_is_one_compact_line(make_vault):
    """--json for an agent (stdout not a terminal) is one line of compact JSON."""
    root = make_vault(SMALL)
    proc = subprocess.run(
        [sys.executable, str(GRAPH), "health", str(root), "--json", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    assert json.loads(proc.stdout)["notes"] == len([name for name in SMALL if name.endswith(".md")])
