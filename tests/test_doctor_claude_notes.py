"""doctor.py accepts Claude Code's current memory note format (issue 27).

Claude Code (CLI 2.1.332) writes each memory as one file with frontmatter
``name`` (a kebab-case slug), ``description`` and ``metadata: {type: ...}``,
no dates, links related memories as ``[[name]]`` by that slug (a link to a
memory not written yet is fine), and adds a pointer line to ``MEMORY.md``.
The older format (a top-level ``type``, ``created``, ``updated``) keeps
working exactly as before.
"""

from __future__ import annotations

import json

import pytest
from autograph.hosts import caps, store_doctor
from autograph.read.note import Note
from autograph.schema.model import load_schema
from test_doctor_stores import both, doctor, found

SETTINGS = load_schema(None).memory
TYPES = SETTINGS["types"]
CAPS, _ = caps.caps_from(None, {})
# The keys doctor.py --json had before this format was accepted: they stay.
KEYS = {"store", "index", "notes", "archived", "index_size", "caps", "issues", "warnings", "counts", "omitted"}


def claude(name: str | None, kind: str | None, body: str, description: str | None = "default") -> str:
    """A note as Claude Code writes it now (``None`` leaves a field out)."""
    head = "" if name is None else f"name: {name}\n"
    if description is not None:
        head += f"description: {f'What {name} holds' if description == 'default' else description}\n"
    if kind is not None:
        head += f"metadata:\n  type: {kind}\n"
    return f"---\n{head}---\n{body}"


def older(name: str, kind: str, body: str = "A fact.\n") -> str:
    """A note of the older format: top-level type and dates."""
    return (
        f"---\nname: {name}\ndescription: What {name} holds\ntype: {kind}\n"
        f"created: 2026-01-05\nupdated: 2026-02-01\n---\n{body}"
    )


def problems(text: str, stem: str = "n") -> list[tuple[str, int | None]]:
    found = store_doctor.check_note(Note.from_bytes(f"{stem}.md", text.encode("utf-8")), TYPES)
    return [(f["kind"], f["line"]) for f in found]


def messages(text: str, stem: str = "n") -> list[str]:
    return [f["message"] for f in store_doctor.check_note(Note.from_bytes(f"{stem}.md", text.encode()), TYPES)]


WHY = (
    "\n**Why:** a mocked test passed while the production migration failed (2026-03-02).\n"
    "\n**How to apply:** never mock the database in tests/integration/.\n"
)

# A store exactly as Claude Code writes it: file names of its own choosing,
# name slugs that differ from them, links by slug (with an alias and a
# heading too), one link to a memory not written yet, and a pointer per note.
CLAUDE_STORE = {
    "MEMORY.md": (
        "- [User role](user_role.md) — data engineer, new to the React frontend\n"
        "- [Testing policy](feedback_testing.md) — integration tests hit a real database\n"
        "- [Atlas freeze](project_atlas_freeze.md) — merge freeze from 2026-03-05\n"
        "- [Grafana board](reference_grafana.md) — latency dashboards for on-call\n"
    ),
    "user_role.md": claude(
        "user-role",
        "user",
        "Data engineer; explain frontend work in backend terms. Follows [[testing-policy]]\n"
        "and is on the [[oncall-rotation]] (not written yet).\n",
        description="The user is a data engineer, new to this repo's React frontend",
    ),
    "feedback_testing.md": claude(
        "testing-policy",
        "feedback",
        "Integration tests use a real database, not mocks.\n" + WHY + "\nRelated: [[atlas-freeze|the freeze]].\n",
        description="Integration tests must hit a real database, not mocks",
    ),
    "project_atlas_freeze.md": claude(
        "atlas-freeze",
        "project",
        "Merge freeze for the Atlas release from 2026-03-05 (asked on 2026-03-01).\n"
        "\n**Why:** the mobile team cuts the release branch then.\n"
        "\n**How to apply:** flag non-critical PRs after that date. Dashboards: [[grafana-board#Latency]].\n",
        description="Merge freeze for the Atlas release from 2026-03-05",
    ),
    "reference_grafana.md": claude(
        "grafana-board",
        "reference",
        "grafana.internal/d/api-latency is the board on-call watches; see [[user-role]].\n",
        description="Where the API latency dashboards live",
    ),
}


def test_store_as_claude_code_writes_it_passes(make_vault):
    store = make_vault(CLAUDE_STORE, name="memory")
    human, report = both(store)
    assert human.returncode == 0, human.stdout + human.stderr
    assert report["issues"] == [] and report["warnings"] == [] and report["counts"] == {}
    assert report["notes"] == 4
    # the link to a memory not written yet is info, never a problem
    assert [(f["kind"], f["path"], f["line"]) for f in report["info"]] == [("unwritten-link", "user_role.md", 8)]
    assert "[[oncall-rotation]]" in report["info"][0]["message"]
    assert "worth writing later" in report["info"][0]["message"]
    assert human.stdout.rstrip().endswith("no issues")
    assert "info (1):" in human.stdout and "user_role.md:8  unwritten-link" in human.stdout
    assert KEYS | {"info"} == set(report)


def test_store_of_claude_notes_without_an_index_is_a_store(make_vault):
    notes = {k: v for k, v in CLAUDE_STORE.items() if k != "MEMORY.md"}
    store = make_vault(notes, name="memory")
    human, report = both(store)
    assert human.returncode == 1, human.stderr
    assert found(report) == [("index-missing", "MEMORY.md")]


def test_claude_store_under_a_vault_schema(make_vault):
    files = {f"memory/{k}": v for k, v in CLAUDE_STORE.items()}
    vault = make_vault({**files, "schema.json": json.dumps({"memory": {"folder": "memory"}})}, name="vault")
    human, report = both(vault)
    assert human.returncode == 0, human.stdout + human.stderr
    assert report["issues"] == [] and report["store"].endswith("memory")


# ---------------------------------------------------------------------------
# One note in Claude Code's format


def test_valid_claude_notes():
    assert problems(claude("user-role", "user", "A fact.\n")) == []
    assert problems(claude("dashboards", "reference", "A pointer.\n")) == []
    assert problems(claude("testing-policy", "feedback", "The rule.\n" + WHY)) == []
    assert problems(claude("atlas-freeze", "project", "The state.\n" + WHY)) == []
    flow = "---\nname: user-role\ndescription: Who the user is\nmetadata: {type: user}\n---\nA fact.\n"
    assert problems(flow) == []
    more = "---\nname: x\ndescription: d\nmetadata:\n  # the kind\n  type: user\n  source: chat\ntags: [a]\n---\nx\n"
    assert problems(more) == []


def test_labels_still_apply_to_claude_notes():
    assert problems(claude("testing-policy", "feedback", "The rule.\n")) == [("missing-label", None)] * 2
    assert problems(claude("atlas", "project", "State.\n\n**Why:** because.\n")) == [("missing-label", None)]


@pytest.mark.parametrize(
    ("metadata", "kind", "line", "says"),
    [
        ("metadata:\n  type: Feedback\n", "bad-type", 5, "write it as 'feedback'"),
        ("metadata:\n  type: note\n", "bad-type", 5, "'note' is not one of the store's types"),
        ("metadata:\n  type: [user, project]\n", "bad-type", 5, "not one of the store's types"),
        ("metadata: {type: fact}\n", "bad-type", 4, "'fact' is not one of the store's types"),
        ("metadata:\n  source: chat\n  type: ''\n", "missing-field", 6, "metadata.type is empty: write 'type: <"),
        ("metadata:\n  source: chat\n", "missing-field", 4, "metadata.type is missing: add 'type: <"),
        ("metadata: {}\n", "missing-field", 4, "metadata.type is missing"),
    ],
)
def test_wrong_metadata_type_names_the_allowed_values(metadata, kind, line, says):
    text = f"---\nname: x\ndescription: what x holds\n{metadata}---\nA fact.\n"
    found = store_doctor.check_note(Note.from_bytes("x.md", text.encode()), TYPES)
    assert [(f["kind"], f["line"]) for f in found] == [(kind, line)]
    assert says in found[0]["message"]
    assert "user" in found[0]["message"] and "feedback" in found[0]["message"]
    assert "project" in found[0]["message"] and "reference" in found[0]["message"]


def test_missing_name_and_description_say_what_to_add():
    assert problems(claude(None, "user", "x\n", description=None)) == [("missing-field", 1)] * 2
    name, description = messages(claude(None, "user", "x\n", description=None))
    assert name.startswith("name is missing: add 'name: <short-kebab-case-slug>'")
    assert "[[name]]" in name
    assert description.startswith("description is missing: add 'description: <one-line summary")
    assert problems(claude("x", "user", "x\n", description=None)) == [("missing-field", 1)]
    assert problems(claude(None, "user", "x\n")) == [("missing-field", 1)]
    empty = "---\nname: ''\ndescription:\nmetadata:\n  type: user\n---\nx\n"
    assert problems(empty) == [("missing-field", 2), ("missing-field", 3)]
    assert messages(empty)[0].startswith("name is empty: write 'name: <")
    assert problems("---\nname: [a, b]\ndescription: d\nmetadata:\n  type: user\n---\nx\n") == [("missing-field", 2)]


def test_claude_notes_need_no_dates_and_keep_real_ones():
    """No date is required of a note in Claude Code's format; dates it has
    anyway must still be real, with updated not before created."""
    assert problems(claude("x", "user", "x\n")) == []  # no created, no updated: no finding
    dated = "---\nname: x\ndescription: d\nmetadata:\n  type: user\ncreated: {}\nupdated: {}\n---\nx\n"
    assert problems(dated.format("2026-01-05", "2026-02-01")) == []
    assert problems(dated.format("2026-02-30", "2026-03-01")) == [("bad-date", 6)]
    assert problems(dated.format("2026-03-01", "2026-02-01")) == [("bad-date", 7)]
    # the older format still requires them
    text = "---\nname: n\ndescription: d\ntype: user\n---\nx\n"
    assert problems(text) == [("missing-field", 1)] * 2
    assert [m.split(" ")[0] for m in messages(text)] == ["created", "updated"]


def test_claude_name_need_not_be_the_file_name():
    assert problems(claude("testing-policy", "user", "x\n"), stem="feedback_db") == []
    assert problems(claude("Testing policy", "user", "x\n"), stem="whatever") == []
    # the older format keeps its rule
    assert problems(older("testing-policy", "user"), stem="feedback_db") == [("name-mismatch", 2)]


def test_top_level_type_means_the_older_format():
    """A note with a top-level type is checked as before, metadata or not."""
    text = "---\nname: n\ndescription: d\ntype: user\nmetadata:\n  type: feedback\n---\nx\n"
    assert problems(text) == [("missing-field", 1)] * 2  # created, updated
    assert store_doctor.note_format({"type": "user", "metadata": {"type": "user"}}) == "type"
    assert store_doctor.note_format({"metadata": {"type": "user"}}) == "metadata"
    assert store_doctor.note_format({"metadata": None}) == "type"
    assert store_doctor.note_format({}) == "type"


# ---------------------------------------------------------------------------
# Links by name


def test_mixed_store_of_both_formats_passes(make_vault):
    store = make_vault(
        {
            "MEMORY.md": (
                "- [Deploys](project-deploys.md) — deploys go through the pipeline\n"
                "- [Tabs](prefers_tabs.md) — tabs over spaces\n"
            ),
            # older format, linking a newer note by its name slug
            "project-deploys.md": older(
                "project-deploys", "project", "Deploy through CI.\n" + WHY + "\nSee [[tabs-over-spaces]].\n"
            ),
            # Claude Code's format, linking an older note by file name and one by its title
            "prefers_tabs.md": claude(
                "tabs-over-spaces",
                "feedback",
                "Indent with tabs.\n" + WHY + "\nSee [[project-deploys]] and [[release-checklist]].\n",
            ),
            # older format, title name, no pointer: reached through the name
            "release.md": older("Release checklist", "reference"),
        },
        name="mixed",
    )
    human, report = both(store)
    assert human.returncode == 0, human.stdout + human.stderr
    assert report["issues"] == [] and report["info"] == [] and report["notes"] == 3


def test_name_slug_differs_from_file_name_and_is_linked_by_slug(make_vault):
    files = {
        "MEMORY.md": "- [Role](user_role.md) — who the user is\n",
        "user_role.md": claude("user-role", "user", "Ops lead; prefers [[Tabs_Over_Spaces]].\n"),
        "feedback_tabs.md": claude("tabs-over-spaces", "feedback", "Tabs.\n" + WHY),
    }
    human, report = both(make_vault(files, name="slug"))
    assert human.returncode == 0, human.stdout
    assert report["issues"] == [] and report["info"] == []
    # without the link, the note is reached by nothing: the slug is what reached it
    files["user_role.md"] = claude("user-role", "user", "Ops lead.\n")
    human, report = both(make_vault(files, name="unlinked"))
    assert found(report) == [("unreachable", "feedback_tabs.md")]


def test_link_that_resolves_only_by_slug(make_vault):
    """[[atlas-freeze]] opens no file (the file is project_atlas.md) and
    Obsidian would not resolve it; the note's name: resolves it."""
    files = {
        "MEMORY.md": "- [Role](role.md) — who the user is\n",
        "role.md": claude("role", "user", "Works on [[atlas-freeze]].\n"),
        "project_atlas.md": claude("atlas-freeze", "project", "Freeze.\n" + WHY),
    }
    store = make_vault(files, name="only-slug")
    assert not (store / "atlas-freeze.md").exists()
    report = store_doctor.doctor(store, SETTINGS, CAPS)
    assert report["issues"] == [] and report["info"] == []


def test_two_older_notes_never_connect_by_name(make_vault):
    """A store of the older format reads exactly as before: a [[title]] that
    opens no file reaches nothing, and is no info either."""
    files = {
        "MEMORY.md": "- [A](a.md) — a\n",
        "a.md": older("a", "user", "See [[other-thing]] and [[never-written]].\n"),
        "other.md": older("Other thing", "user"),
    }
    report = store_doctor.doctor(make_vault(files, name="older"), SETTINGS, CAPS)
    assert found(report) == [("unreachable", "other.md")]
    assert report["info"] == []


def test_unwritten_links_are_info_once_per_note_and_name(make_vault):
    files = {
        "MEMORY.md": "- [Role](role.md) — who the user is\n- [Gone](archive-index.md) — retired\n",
        "role.md": claude(
            "role",
            "user",
            "Later: [[vendor-contacts]], again [[Vendor Contacts]], ![[diagram.png]], [[old-policy]].\n"
            "And [[#A heading]] of this note.\n",
        ),
        "archive-index.md": claude("archive-index", "reference", "Retired notes.\n"),
        "archive/old.md": claude("old-policy", "feedback", "Retired.\n"),
    }
    store = make_vault(files, name="info")
    human, report = both(store)
    assert human.returncode == 0, human.stdout
    assert [(f["kind"], f["path"], f["line"]) for f in report["info"]] == [("unwritten-link", "role.md", 7)]
    assert "[[vendor-contacts]]" in report["info"][0]["message"]  # an archived memory is written: no info


def test_index_pointers_still_open_files_only(make_vault):
    """The host opens a pointer of the index as a file: a [[name]] pointer
    does not resolve by a note's name: slug."""
    files = {
        "MEMORY.md": "- [[tabs-over-spaces]] — tabs\n",
        "feedback_tabs.md": claude("tabs-over-spaces", "feedback", "Tabs.\n" + WHY),
    }
    report = store_doctor.doctor(make_vault(files, name="pointer"), SETTINGS, CAPS)
    assert found(report) == [("broken-pointer", "MEMORY.md"), ("unreachable", "feedback_tabs.md")]


def test_help_documents_the_format_and_the_info_key():
    out = doctor("--help").stdout
    assert "metadata:" in out and "Claude Code's current one" in out
    assert "info[{kind, path, line, message}]" in out and "unwritten-link" in out
