"""Sync conflict copies (issue 30, point 1): the file a sync client leaves
beside a note is an artefact, never the card.

Syncthing, Nextcloud, Dropbox, Obsidian Sync, ownCloud, iCloud Drive and
OneDrive each name a copy their own way (``read/conflicts.py`` holds the
table).  A copy must never answer an identity look-up, a refusal, a dedup
group or a Map of Content; health lists it with the note it copies."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from autograph.read.conflicts import conflict_copies, original_of
from hypothesis import given
from hypothesis import strategies as st
from test_remember import REPO, make_vault, run

SCRIPTS = REPO / "skills" / "autograph" / "scripts"

COPIES = [
    "people/Dana Reyes.sync-conflict-20261201-120000-ABCDEFG.md",  # Syncthing
    "people/Dana Reyes (conflicted copy 2026-12-01 120000).md",  # Nextcloud
    "people/Dana Reyes (Ben's conflicted copy 2026-12-01).md",  # Dropbox
    "people/Dana Reyes (Conflicted copy Laptop 202612011200).md",  # Obsidian Sync
    "people/Dana Reyes_conflict-20261201-120000.md",  # ownCloud
    "people/Dana Reyes (conflict 2026-12-01).md",  # iCloud Drive, as seen
    "people/Dana Reyes-LAPTOP-AB12CD3.md",  # OneDrive, beside its note
]

NOT_COPIES = [
    "people/Plan-B.md",
    "Conflict of interest.md",
    "War (conflict).md",  # no date: a person's name for a note
    "Resolving conflicts.md",
    "people/Ben-LAPTOP-AB12CD3.md",  # OneDrive's form with no note beside it
    "Meeting 2.md",
]


@pytest.mark.parametrize("copy", COPIES)
def test_each_clients_copy_is_told_with_the_note_it_copies(copy):
    assert original_of(copy, {"people/Dana Reyes.md"}) == "people/Dana Reyes.md"


@pytest.mark.parametrize("name", NOT_COPIES)
def test_a_note_named_like_a_conflict_is_a_note(name):
    assert original_of(name, {"people/Dana Reyes.md", "Meeting.md", "War.md"}) is None


names = st.text(st.characters(blacklist_characters="/\0()", blacklist_categories=("Cs",)), min_size=1, max_size=20)


@given(names)
def test_every_form_of_every_name_leads_back_to_it(name):
    name = name.strip() or "x"
    forms = [
        f"{name}.sync-conflict-20261201-120000-ABCDEFG",
        f"{name} (conflicted copy 2026-12-01 120000)",
        f"{name} (Dana's conflicted copy 2026-12-01)",
        f"{name} (conflict 2026-12-01)",
        f"{name}_conflict-20261201-120000",
    ]
    for form in forms:
        assert original_of(f"a/{form}.md") == f"a/{name}.md"


@given(names)
def test_a_name_without_a_clients_mark_is_never_a_copy(name):
    if "onflict" not in name and "-DESKTOP-" not in name and "-LAPTOP-" not in name:
        assert original_of(f"{name}.md", {f"{name}.md"}) is None
        assert conflict_copies([f"{name}.md"]) == {}


CARD = """---
type: person
email: dana@example.org
status: active
description: Dana
---
# Dana Reyes

Works at Hooli.
"""

COPY = CARD.replace("Works at Hooli.", "Works at Hooli.\nMet at the offsite.")


def _vault(tmp_path):
    notes = {"people/Dana Reyes.md": CARD, "people/Ben Carter.md": CARD.replace("dana@", "ben@")}
    notes.update(dict.fromkeys(COPIES[:6], COPY))
    notes["people/Dana Reyes-LAPTOP-AB12CD3.md"] = COPY
    notes["Home.md"] = "[[Dana Reyes]] [[Ben Carter]]\n"
    return make_vault(tmp_path, notes)


def _script(name, root, *args):
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, timeout=120, cwd=root
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def test_an_identity_look_up_finds_the_note_never_a_copy(tmp_path):
    root = _vault(tmp_path)
    code, found, err = _script(
        "search.py", root, "--vault", str(root), "--json", "--identity", "email=dana@example.org"
    )
    assert code == 0, err
    assert [hit["path"] for hit in found["matches"]] == ["people/Dana Reyes.md"]


def test_card_new_refuses_with_the_note_and_remember_writes_the_note(tmp_path):
    root = _vault(tmp_path)
    code, report, err = run(root, "new", "person", "Dana R", "email=dana@example.org")
    assert code != 0 or report.get("refused"), (report, err)
    assert {m["path"] for m in report["refused"]["matches"]} == {"people/Dana Reyes.md"}
    before = {copy: (root / copy).read_bytes() for copy in COPIES}
    code, report, err = run(root, "remember", "person", "Dana Reyes", "email=dana@example.org", "role=CTO")
    assert code == 0, (report, err)
    assert "role: CTO" in (root / "people/Dana Reyes.md").read_text(encoding="utf-8")
    assert {copy: (root / copy).read_bytes() for copy in COPIES} == before


def test_dedup_never_groups_a_copy_and_health_lists_each_with_its_note(tmp_path):
    root = _vault(tmp_path)
    code, plan, err = _script("dedup.py", root, "--vault", str(root), "--json")
    assert code in (0, 1), err
    assert plan["cards"] == 2  # Dana and Ben: no copy is a card
    # the copies are offered as one group to fold into the note, never as a card of an identity group
    assert [(g["canonical"], g.get("copy")) for g in plan["groups"]] == [("people/Dana Reyes.md", True)]
    assert sorted(m["path"] for m in plan["groups"][0]["members"][1:]) == sorted(COPIES)
    assert plan["merged"] == [] and not json.dumps(plan["suggestions"]).count("onflict")
    code, report, err = _script("graph.py", root, "health", str(root), "--json")
    assert code == 0, err
    assert report["conflict_copies"] == [{"path": copy, "copy_of": "people/Dana Reyes.md"} for copy in sorted(COPIES)]
    assert not set(COPIES) & set(report["orphans"])
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "graph.py"), "health", str(root)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "Dana Reyes.sync-conflict-20261201-120000-ABCDEFG.md  (a copy of people/Dana Reyes.md)" in proc.stdout


def test_a_map_of_content_never_lists_a_copy(tmp_path):
    root = _vault(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "moc.py"), "generate", "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "sync-conflict" not in proc.stdout and "conflicted copy" not in proc.stdout
    assert sum(page["entries"] for page in json.loads(proc.stdout)["pages"]) == 2  # Dana and Ben, no copy


def test_dedup_folds_a_copy_into_its_note_only_from_a_reviewed_manifest(tmp_path):
    notes = {
        "people/Dana Reyes.md": CARD,
        "people/Dana Reyes.sync-conflict-20261201-120000-ABCDEFG.md": COPY.replace("description: Dana", "role: CTO"),
        "Home.md": "[[Dana Reyes]] [[Dana Reyes.sync-conflict-20261201-120000-ABCDEFG]]\n",
    }
    root = make_vault(tmp_path, notes)
    copy = "people/Dana Reyes.sync-conflict-20261201-120000-ABCDEFG.md"
    code, plan, err = _script("dedup.py", root, "--vault", str(root), "--json", "--apply")
    assert code == 1, err  # offered, never merged unattended
    assert [g["members"][1]["path"] for g in plan["groups"] if g.get("copy")] == [copy]
    assert (root / copy).exists() and plan["merged"] == []
    manifest = tmp_path / "groups.json"
    code, _, err = _script("dedup.py", root, "--vault", str(root), "--json", "--manifest", str(manifest))
    assert json.loads(manifest.read_text())["groups"][0]["copy"] is True
    code, done, err = _script(
        "dedup.py", root, "--vault", str(root), "--json", "--apply-manifest", str(manifest), "--apply"
    )
    assert code == 0, (done, err)
    text = (root / "people/Dana Reyes.md").read_text(encoding="utf-8")
    assert "Met at the offsite." in text and text.count("Works at Hooli.") == 1
    assert "role: CTO" in text and "description: Dana" in text  # what the copy adds joins the card
    assert "sync-conflict" not in text.split("---")[1]  # the copy's name is no alias
    assert not (root / copy).exists() and list((root / ".trash").rglob("*sync-conflict*"))
    assert "[[Dana Reyes.sync-conflict" not in (root / "Home.md").read_text(encoding="utf-8")


def test_a_manifest_copy_group_must_hold_copies_of_its_card(tmp_path):
    root = _vault(tmp_path)
    manifest = tmp_path / "groups.json"
    manifest.write_text(
        json.dumps(
            {
                "format": "autograph-dedup-manifest",
                "version": 1,
                "groups": [
                    {
                        "canonical": "people/Dana Reyes.md",
                        "members": [{"path": "people/Dana Reyes.md"}, {"path": "people/Ben Carter.md"}],
                        "copy": True,
                    }
                ],
            }
        )
    )
    code, _, err = _script("dedup.py", root, "--vault", str(root), "--apply-manifest", str(manifest), "--apply")
    assert code == 2 and "conflict copies" in err
    assert (root / "people/Ben Carter.md").exists()


def test_the_report_page_lists_each_copy_with_its_note(tmp_path):
    root = _vault(tmp_path)
    page = tmp_path / "report.html"
    code, data, err = _script("graph.py", root, "report", "--vault", str(root), "--json", "-o", str(page))
    assert code == 0, err
    assert data["sections"]["health"]["conflict_copies"] == len(COPIES)
    html = page.read_text(encoding="utf-8")
    assert "Sync conflict copies (7)" in html
    assert (
        "Dana Reyes.sync-conflict-20261201-120000-ABCDEFG.md</span>" in html
        and "a copy of people/Dana Reyes.md" in html
    )
