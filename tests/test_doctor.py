"""doctor.py and the memory library: a store seeded with one fault of each
kind reports each fault exactly once; the example vault's store reports
nothing; a secret is located but never printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from autograph.hosts import caps, store_doctor
from autograph.read.note import Note
from autograph.schema.model import load_schema
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

DOCTOR = SCRIPTS / "doctor.py"
TYPES = load_schema(None).memory["types"]
SETTINGS = load_schema(None).memory
CAPS, _ = caps.caps_from(None, {})
SECRET = "hunter2-Correct-Horse"


def doctor(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRAPH_INDEX_")}
    return subprocess.run(
        [sys.executable, str(DOCTOR), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **(env or {})},
    )


def note(stem: str, kind: str = "user", body: str = "A fact.\n", **fields) -> str:
    props = {
        "name": stem,
        "description": f"What {stem} holds",
        "type": kind,
        "created": "2026-01-05",
        "updated": "2026-02-01",
        **fields,
    }
    head = "".join(f"{k}: {v}\n" for k, v in props.items() if v is not None)
    return f"---\n{head}---\n{body}"


WHY_HOW = "The rule.\n\n**Why:** a reason.\n\n**How to apply:** when it matters.\n"

# One fault of each kind; a comment names the kind each line or file seeds.
SEEDED = {
    "schema.json": json.dumps({"memory": {"folder": ""}, "index": {"soft": {"lines": 10}, "hard": {"lines": 14}}}),
    "MEMORY.md": (
        "# Memory\n"
        "\n"
        "- [Good](user-good.md) — a valid note\n"
        "- [No label](feedback-no-label.md) — seeds missing-label\n"
        "- [Bad date](project-bad-date.md) — seeds bad-date\n"
        "- [Creds](reference-creds.md) — seeds secret\n"
        "- [No description](user-no-description.md) — seeds missing-field\n"
        "- [Bad type](user-bad-type.md) — seeds bad-type\n"
        "- [Renamed](user-renamed.md) — seeds name-mismatch\n"
        "- [Bare](user-bare.md) — seeds frontmatter\n"
        "- [Latin-1](user-latin1.md) — seeds unreadable\n"
        "- [Gone](user-gone.md) — seeds broken-pointer\n"
        "- [Outside](../outside.md) — seeds pointer-outside\n"
        "Notes on the team go here, with all the detail anyone could want.\n"  # index-content
        "- [Good again](user-good.md) — a second pointer: a warning only\n"
        "- [Archive](archive/index.md) — retired notes\n"  # 16 lines: index-over-cap (hard 14)
    ),
    "user-good.md": note("user-good"),
    "feedback-no-label.md": note("feedback-no-label", "feedback", "The rule.\n\n**Why:** a reason.\n"),
    "project-bad-date.md": note("project-bad-date", "project", WHY_HOW, created="2026-02-30"),
    "reference-creds.md": note("reference-creds", "reference", f"Staging login: admin\npassword={SECRET}\n"),
    "user-no-description.md": note("user-no-description", description=None),
    "user-bad-type.md": note("user-bad-type", kind="Feedback"),
    "user-renamed.md": note("something-else"),
    "user-bare.md": "Just text, no frontmatter.\n",
    "user-latin1.md": note("user-latin1", body="caf\xe9\n").encode("latin-1"),
    "user-unindexed.md": note("user-unindexed"),  # unreachable
    "archive/index.md": "- [Old](old.md) — retired\n",
    "archive/old.md": "No frontmatter: archived notes are not format-checked.\n",
}
SEEDED_KINDS = set(store_doctor.ISSUES) - {"index-missing", "index-unreadable", "index-outside"}


@pytest.fixture
def seeded(make_vault) -> Path:
    return make_vault(SEEDED, name="store")


def test_seeded_store_reports_each_fault_exactly_once(seeded):
    proc = doctor(seeded, "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["counts"] == {kind: 1 for kind in SEEDED_KINDS}
    where = {f["kind"]: (f["path"], f["line"]) for f in report["issues"]}
    assert where == {
        "index-over-cap": ("MEMORY.md", None),
        "index-content": ("MEMORY.md", 14),
        "broken-pointer": ("MEMORY.md", 12),
        "pointer-outside": ("MEMORY.md", 13),
        "missing-label": ("feedback-no-label.md", None),
        "bad-date": ("project-bad-date.md", 5),
        "secret": ("reference-creds.md", 9),
        "missing-field": ("user-no-description.md", 1),
        "bad-type": ("user-bad-type.md", 4),
        "name-mismatch": ("user-renamed.md", 2),
        "frontmatter": ("user-bare.md", 1),
        "unreadable": ("user-latin1.md", None),
        "unreachable": ("user-unindexed.md", None),
    }
    assert [(w["kind"], w["line"]) for w in report["warnings"]] == [("duplicate-pointer", 15)]
    assert report["notes"] == 10 and report["archived"] == 2
    assert report["index"] == "MEMORY.md" and report["index_size"]["lines"] == 16


def test_seeded_store_human_report(seeded):
    proc = doctor(seeded)
    assert proc.returncode == 1
    assert "13 issues:" in proc.stdout
    assert "MEMORY.md:12  broken-pointer" in proc.stdout
    for kind in SEEDED_KINDS:
        assert f"  {kind}: {store_doctor.ISSUES[kind]}" in proc.stdout  # what to do, once per kind


def test_secret_value_is_never_printed(seeded):
    for args in ((), ("--json",)):
        proc = doctor(seeded, *args)
        assert SECRET not in proc.stdout and SECRET not in proc.stderr
        assert "hunter2" not in proc.stdout
    assert "reference-creds.md:9  secret" in doctor(seeded).stdout


def test_each_fault_alone_is_the_only_issue(make_vault):
    """Removing every other fault leaves exactly the one seeded: no fault
    causes a second finding of another kind."""
    for name, content in SEEDED.items():
        if not name.endswith(".md") or name in ("MEMORY.md", "user-good.md") or name.startswith("archive/"):
            continue
        index = f"- [Good](user-good.md) — ok\n- [It]({name}) — it\n"
        files = {"MEMORY.md": index, "user-good.md": SEEDED["user-good.md"], name: content}
        if name == "user-unindexed.md":
            files["MEMORY.md"] = "- [Good](user-good.md) — ok\n"
        store = make_vault(files, name=name.replace(".md", ""))
        report = store_doctor.doctor(store, SETTINGS, CAPS)
        assert len(report["issues"]) == 1, (name, report["issues"])


def test_store_without_an_index(make_vault):
    store = make_vault({"user-good.md": SEEDED["user-good.md"], "memory.md": "- [G](user-good.md) — g\n"})
    report = store_doctor.doctor(store, SETTINGS, CAPS)
    if (store / "MEMORY.md").exists():  # a case-insensitive file system: memory.md is MEMORY.md
        assert report["issues"] == []
        return
    assert [f["kind"] for f in report["issues"]][:1] == ["index-missing"]
    assert "unreachable" not in kinds(report)  # without an index, reachability is not judged
    assert "found 'memory.md': rename it to 'MEMORY.md'" in report["issues"][0]["message"]
    assert report["index"] is None and report["index_size"] is None


def test_unreadable_index(make_vault):
    store = make_vault({"MEMORY.md": b"- [G](user-good.md) \x97 caf\xe9\n", "user-good.md": SEEDED["user-good.md"]})
    report = store_doctor.doctor(store, SETTINGS, CAPS)
    assert [f["kind"] for f in report["issues"]] == ["index-unreadable"]
    store = make_vault({"user-good.md": SEEDED["user-good.md"]}, name="dir-index")
    (store / "MEMORY.md").mkdir()
    report = store_doctor.doctor(store, SETTINGS, CAPS)
    assert [f["kind"] for f in report["issues"]] == ["index-unreadable"]


# ---------------------------------------------------------------------------
# The example vault's store


def test_example_vault_store_reports_nothing(tmp_path):
    vault = copy_tree(EXAMPLE_VAULT, tmp_path / "example")
    for target in (vault, vault / ".memory"):
        proc = doctor(target, "--json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report = json.loads(proc.stdout)
        assert report["issues"] == [] and report["warnings"] == []
        assert report["store"].endswith(".memory")
        assert report["notes"] >= 4 and report["archived"] >= 1
    proc = doctor(vault)
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("no issues")


def test_example_store_has_notes_of_every_type():
    kinds = set()
    for path in (EXAMPLE_VAULT / ".memory").glob("*.md"):
        if path.name != "MEMORY.md":
            kinds.add(Note.from_bytes(path.name, path.read_bytes()).properties["type"])
    assert kinds == {"user", "feedback", "project", "reference"}


# ---------------------------------------------------------------------------
# The index: pointers, content, resolution


def check_index(make_vault, index: str, notes: dict | None = None) -> dict:
    files = {"MEMORY.md": index, **(notes or {})}
    return store_doctor.doctor(make_vault(files, name=f"s{abs(hash(index)) % 10**8}"), SETTINGS, CAPS)


def kinds(report: dict) -> list[str]:
    return [f["kind"] for f in report["issues"]]


def test_pointer_forms_that_resolve(make_vault):
    notes = {
        "a.md": note("a"),
        "my note.md": note("my note"),
        "b.md": note("b"),
        "c.md": note("c"),
        "d.md": note("d"),
        "sub/e.md": note("e"),
    }
    index = (
        "- [A](a.md) — plain\n"
        "- [Spaces](my%20note.md) — URL-encoded\n"
        "* [Angle](<my note.md>) — angle brackets\n"
        "- [[b]] — a wikilink\n"
        "- [[c|C note]] — a wikilink with an alias\n"
        "1. [D](d.md#Details) — numbered, with a heading\n"
        '+ [E](sub/e.md "Title") — in a subfolder, with a title\n'
        "- [Docs](https://example.com/x.md) — a web page is not a note, and not a fault\n"
    )
    report = check_index(make_vault, index, notes)
    assert report["issues"] == [], report["issues"]
    assert [w["kind"] for w in report["warnings"]] == ["duplicate-pointer"]  # my note.md twice


def test_pointer_faults(make_vault):
    notes = {"a.md": note("a")}
    index = (
        "- [A](a.md) — ok\n"
        "- [Bak](a.md.bak) — not truncated to a.md\n"
        "- [File](file:///etc/a.md) — a file URL leaves the store\n"
        "- [Abs](/etc/a.md) — an absolute path\n"
        "- [Up](../a.md) — climbs out\n"
        "- [[nothing-here]] — a wikilink to nothing\n"
    )
    report = check_index(make_vault, index, notes)
    assert [(f["kind"], f["line"]) for f in report["issues"]] == [
        ("broken-pointer", 2),
        ("pointer-outside", 3),
        ("pointer-outside", 4),
        ("pointer-outside", 5),
        ("broken-pointer", 6),
    ]


def test_content_lines(make_vault):
    notes = {"a.md": note("a")}
    index = (
        "---\ntype: index\n---\n# Memory\n\n<!-- a comment\n spanning lines -->\n---\n"
        "- [A](a.md) — ok\n"
        "Paragraph one.\nParagraph two.\nParagraph three.\n"
        "- [A again](a.md) — " + "detail " * 40 + "\n"
        "> a quote is content too\n"
    )
    report = check_index(make_vault, index, notes)
    found = [(f["kind"], f["line"]) for f in report["issues"]]
    assert found == [("index-content", 10), ("index-content", 13), ("index-content", 14)]
    assert report["issues"][0]["message"].startswith("lines 10-12 are not a pointer")
    assert "characters (limit 200)" in report["issues"][1]["message"]


def test_pointer_in_a_comment_or_code_does_not_index_a_note(make_vault):
    notes = {"a.md": note("a"), "b.md": note("b")}
    index = "- [A](a.md) — ok\n<!-- - [B](b.md) — commented out -->\n"
    report = check_index(make_vault, index, notes)
    assert [(f["kind"], f["path"]) for f in report["issues"]] == [("unreachable", "b.md")]


def test_reachability_follows_links_from_indexed_notes_only(make_vault):
    notes = {
        "a.md": note("a", body="See [[b]].\n"),
        "b.md": note("b", body="And [c](c.md).\n"),
        "c.md": note("c"),
        "x.md": note("x", body="See [[y]].\n"),  # x and y link each other, nothing reaches them
        "y.md": note("y", body="See [[x]].\n"),
    }
    report = check_index(make_vault, "- [A](a.md) — the start\n", notes)
    assert [(f["kind"], f["path"]) for f in report["issues"]] == [("unreachable", "x.md"), ("unreachable", "y.md")]


def test_index_soft_cap_is_a_warning(make_vault):
    notes = {f"n{i}.md": note(f"n{i}") for i in range(160)}
    index = "".join(f"- [N{i}](n{i}.md) — note {i}\n" for i in range(160))  # Claude Code's soft cap: 160 lines
    report = check_index(make_vault, index, notes)
    assert report["issues"] == []
    assert [w["kind"] for w in report["warnings"]] == ["index-soft-cap"]
    message = report["warnings"][0]["message"]
    assert "160 lines (soft cap 160)" in message and "compact it to under 140 lines / 17,500 bytes" in message


def test_index_over_cap_names_what_is_dropped(make_vault):
    notes = {f"n{i}.md": note(f"n{i}") for i in range(205)}
    index = "".join(f"- [N{i}](n{i}.md) — note {i}\n" for i in range(205))
    report = check_index(make_vault, index, notes)
    assert kinds(report) == ["index-over-cap"]
    assert "loads only its first 200 lines and silently drops the other 5" in report["issues"][0]["message"]
    assert "compact it to under 140 lines / 17,500 bytes" in report["issues"][0]["message"]


def test_index_lines_classification():
    lines = store_doctor.index_lines("# H\n\n- [A](a.md) — x\ntext\n***\n- [[b]]\n")
    assert [(i.line, i.kind, i.target) for i in lines] == [
        (3, "pointer", "a.md"),
        (4, "content", ""),
        (6, "pointer", "b"),
    ]


# ---------------------------------------------------------------------------
# Notes


def problems(text: str, stem: str = "n") -> list[tuple[str, int | None]]:
    found = store_doctor.check_note(Note.from_bytes(f"{stem}.md", text.encode("utf-8")), TYPES)
    return [(f["kind"], f["line"]) for f in found]


def test_valid_notes_of_each_type():
    assert problems(note("n")) == []
    assert problems(note("n", "reference")) == []
    assert problems(note("n", "feedback", WHY_HOW)) == []
    assert problems(note("n", "project", WHY_HOW)) == []


def test_obsidian_properties_are_fine():
    text = note("n", tags="\n  - memory\n  - atlas", aliases="[N]")
    assert problems(text) == []


@pytest.mark.parametrize(
    "body",
    [
        "**Why:** x\n**How to apply:** y\n",
        "Why: x\nHow to apply: y\n",
        "- **Why:** x\n- **How to Apply:** y\n",
        "## Why: x\n## How  to apply: y\n",
        "> Why: x\n> How to apply: y\n",
        "**Why**：原因\n**How to apply**: y\n",
        "__Why__: x\n*How to apply*: y\n",
    ],
)
def test_labels_accepted(body):
    assert problems(note("n", "feedback", body)) == []


@pytest.mark.parametrize(
    ("body", "missing"),
    [
        ("## Why\nx\n## How to apply\ny\n", 2),
        ("**Why:** x\n**How:** y\n", 1),
        ("The Why: is here, and How to apply: there.\n", 2),
        ("```\nWhy: x\nHow to apply: y\n```\n", 2),
        ("<!-- Why: x -->\nHow to apply: y\n", 1),
    ],
)
def test_labels_refused(body, missing):
    assert problems(note("n", "project", body)) == [("missing-label", None)] * missing


def test_labels_in_frontmatter_do_not_count():
    text = note("n", "feedback", "The rule.\n", Why="because", **{"How to apply": "always"})
    assert problems(text) == [("missing-label", None), ("missing-label", None)]


def test_frontmatter_faults_are_one_finding_each():
    assert problems("no block\n") == [("frontmatter", 1)]
    assert problems("---\nname: n\ndescription: a: b\n---\nx\n") == [("frontmatter", 3)]
    assert problems("---\nname: n\n---\nx\n") == [("missing-field", 1)] * 4  # description, type, created, updated
    assert problems(note("n", description="''")) == [("missing-field", 3)]
    assert problems(note("n", description="[a, b]")) == [("missing-field", 3)]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-01-05", True),
        ("2026-01-05T10:30", True),
        ("2026-01-05T10:30:00Z", True),
        ("2024-02-29", True),
        ("2026-02-30", False),
        ("2026-13-01", False),
        ("2026-1-5", False),
        ("05/01/2026", False),
        ("２０２６-０１-０５", False),
        ("2026-01-05T25:00", False),
        ("'2026-01-05\"'", False),
        ("2026", False),
    ],
)
def test_dates(value, ok):
    found = problems(note("n", created=value, updated="2026-12-31"))
    assert found == ([] if ok else [("bad-date", 5)])


def test_updated_before_created():
    assert problems(note("n", created="2026-03-01", updated="2026-02-01")) == [("bad-date", 6)]


@pytest.mark.parametrize(
    ("stem", "name", "ok"),
    [
        ("audit-methodology", "audit-methodology", True),
        ("Audit Methodology", "audit-methodology", True),
        ("feedback_audit_methodology", "audit-methodology", True),
        ("audit_methodology", "Audit methodology", True),
        ("заметка-один", "Заметка один", True),
        ("audit", "audit-methodology", False),
        ("user-audit", "feedback-audit", False),
    ],
)
def test_name_matches_the_file(stem, name, ok):
    text = note("x", "feedback", WHY_HOW)
    text = text.replace("name: x", f"name: {name}")
    assert problems(text, stem) == ([] if ok else [("name-mismatch", 2)])


def test_bad_type_hint():
    found = store_doctor.check_note(Note.from_bytes("n.md", note("n", kind="Feedback").encode()), TYPES)
    assert [f["kind"] for f in found] == ["bad-type"]
    assert "write it as 'feedback'" in found[0]["message"]


# ---------------------------------------------------------------------------
# Secrets


@pytest.mark.parametrize(
    "line",
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "aws key AKIAIOSFODNN7EXAMPLE here",
        "token ghp_" + "a1B2" * 9,
        "use sk-ant-api03-" + "x" * 30,
        "OPENAI_API_KEY=sk-proj-" + "Ab3" * 10,
        "slack xoxb-1234567890-abcdefghij",
        "stripe sk_live_" + "a1" * 12,
        "google AIza" + "B" * 35,
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
        "db: postgres://atlas:S3cretPass@db.internal/atlas",
        "password=hunter22",
        "- **Password**: Tr0ub4dor&3",
        "api_key: 'abcdEFGH1234'",
        "client-secret = 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c",
    ],
)
def test_secrets_found(line):
    found = store_doctor.find_secrets(f"first line\n{line}\nlast line\n")
    assert [n for n, _ in found] == [2]
    what = found[0][1]
    assert line.split()[-1] not in what and "hunter22" not in what


@pytest.mark.parametrize(
    "line",
    [
        "password: ask Dana",
        "The password: stored in the team vault",
        "token: see [[reference-dashboards]]",
        "api_key=${OPENAI_API_KEY}",
        "API_KEY=$OPENAI_API_KEY",
        "password: <redacted>",
        "secret: ****",
        "api_key: ~/.config/atlas/key",
        "Use a token bucket for rate limits.",
        "We rotate passwords every 90 days.",
        "sk-learn is a library",
    ],
)
def test_no_secret_in_prose_and_placeholders(line):
    assert store_doctor.find_secrets(line) == []


# ---------------------------------------------------------------------------
# The command


def test_locate_store(tmp_path):
    (tmp_path / "memory").mkdir()
    assert store_doctor.locate_store(tmp_path, {"folder": "memory"}) == tmp_path / "memory"
    assert store_doctor.locate_store(tmp_path, {"folder": ".memory"}) == tmp_path
    assert store_doctor.locate_store(tmp_path, {"folder": ""}) == tmp_path


def test_usage_errors(tmp_path):
    proc = doctor(tmp_path / "missing")
    assert proc.returncode == 2 and "not a folder" in proc.stderr
    proc = doctor(tmp_path, "--jsn")
    assert proc.returncode == 2 and "unrecognized" in proc.stderr
    proc = doctor(tmp_path, env={"AUTOGRAPH_INDEX_HARD_LINES": "lots"})
    assert proc.returncode == 2 and "AUTOGRAPH_INDEX_HARD_LINES" in proc.stderr
    (tmp_path / "schema.json").write_text('{"memory": {"types": {"x": {"labels": "Why"}}}}')
    proc = doctor(tmp_path)
    assert proc.returncode == 2 and "$.memory.types.x.labels" in proc.stderr
    assert doctor("--help").returncode == 0


def test_environment_caps_apply(make_vault):
    notes = {f"n{i}.md": note(f"n{i}") for i in range(5)}
    index = "".join(f"- [N{i}](n{i}.md) — note {i}\n" for i in range(5))
    store = make_vault({"MEMORY.md": index, **notes}, name="small")
    assert doctor(store).returncode == 0
    proc = doctor(store, "--json", env={"AUTOGRAPH_INDEX_HARD_LINES": "4"})
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["counts"] == {"index-over-cap": 1}
    assert report["caps"]["sources"] == {"hard.lines": "AUTOGRAPH_INDEX_HARD_LINES"}
    assert report["caps"]["target"] == {"lines": 4, "bytes": 17500}  # lowered with the caps: target <= soft <= hard
    proc = doctor(store, "--json", env={"AUTOGRAPH_INDEX_HARD_LINES": "4", "AUTOGRAPH_INDEX_TARGET_LINES": "3"})
    assert "compact it to under 3 lines / 17,500 bytes" in json.loads(proc.stdout)["issues"][0]["message"]


def test_doctor_writes_nothing(seeded):
    before = {p: p.read_bytes() for p in seeded.rglob("*") if p.is_file()}
    doctor(seeded)
    doctor(seeded, "--json")
    after = {p: p.read_bytes() for p in seeded.rglob("*") if p.is_file()}
    assert before == after


def test_store_folder_named_by_the_schema_must_exist(make_vault):
    vault = make_vault(
        {
            "schema.json": '{"memory": {"folder": ".memory"}}',
            "MEMORY.md": "- [A](a.md) — a\n",
            "a.md": "# not a memory note\n",
        }
    )
    proc = doctor(vault)
    assert proc.returncode == 2 and "memory.folder" in proc.stderr and ".memory" in proc.stderr
