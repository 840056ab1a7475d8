"""dedup.py: identity grouping, the canonical card, merges, the manifest (issue 13).

Cases BR-28 (one person, email differing by case and spaces, two types)
and BR-30 (same display name, different people; a handle group), a
labelled vault of duplicates (tests/helpers/people_vault.py) for
precision and recall, the merge's keep-every-line rule, and the corpora.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from autograph.memory import dedup
from autograph.read import linkgraph
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from conftest import CORPORA, CORPUS_NAMES, SCRIPTS, require
from helpers import people_vault
from hypothesis import example, given, settings
from hypothesis import strategies as st

TODAY = "2026-12-01"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name[:-3]}", SCRIPTS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DEDUP = load_script("dedup.py")


def run(capsys, *args) -> tuple[int, str]:
    capsys.readouterr()
    code = DEDUP.main([str(a) for a in args])
    out = capsys.readouterr().out
    return code, out


def run_json(capsys, *args) -> tuple[int, dict]:
    code, out = run(capsys, *args, "--json")
    return code, json.loads(out)


def files_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".graph", ".trash")
    }


def broken_links(root: Path) -> list:
    vault = Vault.open(root)
    return [(e.source, e.link.target) for e in linkgraph.build(vault).broken()]


# ---------------------------------------------------------------------------
# BR-28


ALEX_AFTER = """\
---
type: person
email: Alex.Example@Example.COM
role: engineer
phone: "+1 555 0100"
aliases:
  - A. Example
---
Notes about Alex.

Imported contact.

## History
- 2026-12-01: type: contact (from [[Alex Example|A. Example]])
"""


def test_br28_one_group_by_normalised_email_across_types(case, capsys):
    root = case("BR-28") / "vault"
    code, report = run_json(capsys, root)
    assert code == 1  # a group found, nothing merged in a dry run
    [group] = report["groups"]
    assert [m["path"] for m in group["members"]] == ["people/Alex Example.md", "people/A. Example.md"]
    assert group["canonical"] == "people/Alex Example.md"
    assert [e["key"] for e in group["evidence"]] == ["email:alex.example@example.com"]
    assert group["strong"] is True
    backlinks = {r["path"]: r["backlinks"] for r in group["ranking"]}
    assert backlinks == {"people/Alex Example.md": 2, "people/A. Example.md": 1}
    assert report["written"] == [] and report["run"] is None


def test_br28_merge_after_state(case, capsys):
    root = case("BR-28") / "vault"
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply", "--today", TODAY)
    assert code == 0, report
    after = files_of(root)
    assert after["people/Alex Example.md"].decode() == ALEX_AFTER
    assert after["log.md"].decode() == "Emailed [[Alex Example|A. Example]] today.\n"
    assert after["project.md"] == before["project.md"] and after["team.md"] == before["team.md"]
    assert "people/A. Example.md" not in after
    run_id = report["run"]
    trashed = root / ".trash" / run_id / "people" / "A. Example.md"
    assert trashed.read_bytes() == before["people/A. Example.md"]
    assert broken_links(root) == []
    assert report["merged"] == [
        {
            "canonical": "people/Alex Example.md",
            "members": ["people/A. Example.md"],
            "history": ["- 2026-12-01: type: contact (from [[Alex Example|A. Example]])"],
            "aliases": ["A. Example"],
        }
    ]
    # the links of other notes only: the History line is written pointing here already
    assert report["links"] == [
        {"path": "log.md", "line": 1, "old": "[[A. Example]]", "new": "[[Alex Example|A. Example]]"},
    ]
    # a second run finds nothing: one card per person
    code, again = run_json(capsys, root)
    assert code == 0 and again["groups"] == []


def test_br28_merge_undoes_byte_for_byte(case, capsys):
    root = case("BR-28") / "vault"
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply", "--today", TODAY)
    assert code == 0
    undo = load_script("undo.py")
    assert undo.main(["undo", report["run"], str(root), "--apply"]) == 0
    assert files_of(root) == before


def test_one_phone_number_in_two_spellings_is_no_conflict(make_vault, capsys):
    """A card with "+49 (0)30 ..." and one with "+49 30 ..." that share an
    email are one person: they were refused as a conflict, never merged."""
    root = make_vault(
        {
            "people/Dana Reyes.md": '---\ntype: person\nemail: dana@acme.com\nphone: "+49 (0)30 1234567"\n---\nA\n',
            "people/D Reyes.md": '---\ntype: person\nemail: Dana@Acme.com\nphone: "tel:+49301234567"\n---\nB\n',
        }
    )
    code, report = run_json(capsys, root)
    assert code == 1 and report["refused"] == []  # 1: a dry run with merges to make
    [group] = report["groups"]
    assert sorted(m["path"] for m in group["members"]) == ["people/D Reyes.md", "people/Dana Reyes.md"]
    assert {e["key"] for e in group["evidence"]} == {"email:dana@acme.com", "phone:+49301234567"}


def test_br28_different_identity_value_refuses_the_merge(case, capsys):
    """Item 3: a different non-empty phone means two people."""
    root = case("BR-28") / "vault"
    alex = root / "people" / "Alex Example.md"
    alex.write_text(alex.read_text().replace("role: engineer", 'role: engineer\nphone: "+1 555 0199"'))
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply")
    assert report["groups"] == []
    [refused] = report["refused"]
    assert refused["reason"] == "conflicting identity key phone"
    assert sorted(refused["paths"]) == ["people/A. Example.md", "people/Alex Example.md"]
    assert files_of(root) == before and code == 0


# ---------------------------------------------------------------------------
# BR-30


def test_br30_same_name_is_no_group_handle_is(case, capsys):
    root = case("BR-30") / "vault"
    code, report = run_json(capsys, root)
    [group] = report["groups"]
    assert sorted(m["path"] for m in group["members"]) == ["people/J Lee.md", "people/Jordan Lee (Beta).md"]
    assert [e["key"] for e in group["evidence"]] == ["handle:jlee"]
    assert group["strong"] is False
    assert all("people/Jordan Lee.md" not in [m["path"] for m in g["members"]] for g in report["groups"])
    # [[Jordan Lee]] resolves by file name, not to the note with that alias (BR-17)
    assert Vault.open(root).resolver.resolve("Jordan Lee", "x.md").path == "people/Jordan Lee.md"


def test_br30_apply_without_manifest_leaves_a_handle_group(case, capsys):
    root = case("BR-30") / "vault"
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply")
    assert code == 1 and report["selected"] == 0 and report["written"] == []
    assert files_of(root) == before


def test_br30_manifest_pair_of_same_name_is_refused(case, capsys, tmp_path):
    root = case("BR-30") / "vault"
    manifest = {
        "format": "autograph-dedup-manifest",
        "version": 1,
        "groups": [
            {
                "canonical": "people/Jordan Lee.md",
                "members": [{"path": "people/Jordan Lee.md"}, {"path": "people/Jordan Lee (Beta).md"}],
            }
        ],
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(manifest))
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply-manifest", path, "--apply")
    [refused] = report["not_merged"]
    assert refused["reason"].startswith("conflicting identity key email")
    assert files_of(root) == before and code == 1


def test_br30_reviewed_manifest_merges_the_handle_group(case, capsys, tmp_path):
    root = case("BR-30") / "vault"
    out = tmp_path / "groups.json"
    code, report = run_json(capsys, root, "--manifest", out)
    assert report["manifest"] == str(out.resolve())
    data = json.loads(out.read_text())
    assert data["format"] == "autograph-dedup-manifest" and len(data["groups"]) == 1
    member = data["groups"][0]["members"][1]
    assert member["sha256"] == dedup.sha256((root / member["path"]).read_bytes())
    code, report = run_json(capsys, root, "--apply-manifest", out, "--apply", "--today", TODAY)
    assert code == 0, report
    assert not (root / "people" / "J Lee.md").exists()
    assert (root / "people" / "Jordan Lee (Beta).md").read_text() == (
        "---\ntype: person\naliases:\n  - Jordan Lee\n  - J Lee\nemail: jordan@beta.example\n"
        'handle: "@jlee"\n---\nWorks at Beta.\n\nMet at a meetup.\n'
    )
    assert (root / "people" / "Jordan Lee.md").read_text().endswith("Works at Alpha.\n")


# ---------------------------------------------------------------------------
# The manifest


def test_manifest_group_changed_since_is_a_conflict(case, capsys, tmp_path):
    root = case("BR-30") / "vault"
    out = tmp_path / "groups.json"
    run_json(capsys, root, "--manifest", out)
    jlee = root / "people" / "J Lee.md"
    jlee.write_text(jlee.read_text() + "Added later.\n")
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply-manifest", out, "--apply")
    assert code == 4
    assert report["not_merged"][0]["reason"] == "people/J Lee.md changed since the manifest was written"
    assert files_of(root) == before


def test_manifest_path_out_of_the_vault_is_refused(case, capsys, tmp_path):
    root = case("BR-30") / "vault"
    manifest = {
        "format": "autograph-dedup-manifest",
        "groups": [{"canonical": "people/J Lee.md", "members": [{"path": "people/J Lee.md"}, {"path": "../x.md"}]}],
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(manifest))
    code, _ = run(capsys, root, "--apply-manifest", path, "--apply")
    assert code == 2


def test_manifest_not_a_manifest_is_bad_usage(case, capsys, tmp_path):
    root = case("BR-30") / "vault"
    path = tmp_path / "m.json"
    path.write_text('{"groups": 3}')
    assert run(capsys, root, "--apply-manifest", path, "--apply")[0] == 2


def test_manifest_output_never_through_a_symlink_or_over_a_file(case, capsys, tmp_path):
    root = case("BR-30") / "vault"
    target = tmp_path / "elsewhere.json"
    target.write_text("keep")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run(capsys, root, "--manifest", link)[0] == 2
    assert run(capsys, root, "--manifest", target)[0] == 2  # exists: needs --force
    assert target.read_text() == "keep"
    assert run(capsys, root, "--manifest", target, "--force")[0] == 1
    assert json.loads(target.read_text())["format"] == "autograph-dedup-manifest"
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        assert run(capsys, root, "--manifest", fifo, "--force")[0] == 2


# ---------------------------------------------------------------------------
# Grouping rules


def card(fields: dict, body: str = "Body.") -> str:
    lines = ["---", *(f"{k}: {json.dumps(v)}" for k, v in fields.items()), "---", body]
    return "\n".join(lines) + "\n"


def groups_of(root: Path) -> list[list[str]]:
    vault = Vault.open(root)
    return [sorted(g.members) for g in dedup.find_groups(vault, load_schema(root)).groups]


def test_shared_switchboard_is_ignored(make_vault):
    files = {f"c{k}.md": card({"phone": "+49 30 1000", "handle": f"h{k}"}) for k in range(9)}
    files["d.md"] = card({"phone": "030 1000", "handle": "h0"})
    files["schema.json"] = json.dumps({"identity": {"default_country": "DE"}})
    root = make_vault(files)
    report = dedup.find_groups(Vault.open(root), load_schema(root))
    assert report.shared == [{"key": "phone:+49301000", "cards": 10}]
    assert [sorted(g.members) for g in report.groups] == [["c0.md", "d.md"]]  # by the handle only
    assert report.groups[0].strong is False


def test_names_and_aliases_never_group(make_vault):
    root = make_vault(
        {
            "a/Sam Lee.md": card({"aliases": ["S. Lee"], "role": "x"}),
            "b/Sam Lee.md": card({"aliases": ["S. Lee"], "role": "x"}),
            "S. Lee.md": card({"title": "Sam Lee"}),
        }
    )
    assert groups_of(root) == []


def test_type_and_domain_gates(make_vault):
    files = {
        "a.md": card({"type": "person", "domain": "work", "email": "x@y.z"}),
        "b.md": card({"type": "contact", "domain": "work", "email": "X@Y.Z"}),
        "c.md": card({"type": "person", "domain": "home", "email": "x@y.z"}),
    }
    root = make_vault(files)
    assert groups_of(root) == [["a.md", "b.md"]]  # same_domain_only by default; types may differ
    (root / "schema.json").write_text(json.dumps({"identity": {"same_type_only": True, "same_domain_only": False}}))
    assert groups_of(root) == [["a.md", "c.md"]]


def test_a_chain_never_joins_two_conflicting_cards(make_vault):
    """a~b by email, b~c by handle, but a and c hold different emails."""
    root = make_vault(
        {
            "a.md": card({"email": "one@x.org"}),
            "b.md": card({"email": "ONE@x.org", "handle": "@kim"}),
            "c.md": card({"email": "two@x.org", "handle": "kim"}),
        }
    )
    report = dedup.find_groups(Vault.open(root), load_schema(root))
    assert [sorted(g.members) for g in report.groups] == [["a.md", "b.md"]]
    assert [(r.field, r.key) for r in report.refused] == [("email", "handle:kim")]


def test_retired_templates_and_hubs_are_left_out(make_vault):
    root = make_vault(
        {
            "a.md": card({"email": "x@y.z"}),
            "old.md": card({"email": "x@y.z", "status": "superseded", "superseded_by": "[[a]]"}),
            "Templates/t.md": card({"email": "x@y.z"}),
            "MEMORY.md": card({"email": "x@y.z"}),
            ".obsidian/snippets/s.md": card({"email": "x@y.z"}),
            ".obsidian/templates.json": '{"folder": "Templates"}',
        }
    )
    assert groups_of(root) == []


def test_a_superseded_by_that_names_no_card_retires_nothing(make_vault):
    # supersede.retired: "TBD" or a link to nobody leaves the card in; a
    # superseded_by naming another card takes it out, as status: superseded does
    root = make_vault(
        {
            "a.md": card({"email": "x@y.z"}),
            "b.md": card({"email": "x@y.z", "superseded_by": "TBD"}),
            "c.md": card({"email": "x@y.z", "superseded_by": "[[Nobody]]"}),
            "d.md": card({"email": "x@y.z", "superseded_by": "[[a]]"}),
        }
    )
    assert groups_of(root) == [["a.md", "b.md", "c.md"]]


def test_br23_nothing_under_dot_folders(case, capsys):
    root = case("BR-23") / "vault"
    code, report = run_json(capsys, root)
    # Alpha.md and sources/Source Title.md; index.md is a hub; ._Alpha.md is never decoded
    assert code == 0 and report["groups"] == [] and report["cards"] == 2 and report["skipped"] == []


def test_canonical_rule_backlinks_richness_date_path(make_vault):
    base = {"email": "x@y.z"}
    root = make_vault(
        {
            "a/long name.md": card({**base, "role": "r", "company": "c"}, "Long body text here."),
            "b.md": card(base, "B."),
            "c.md": card({**base, "updated": "2026-01-02"}, "C."),
            "d.md": card({**base, "updated": "2026-01-01"}, "C."),
            "n1.md": "[[b]]",
        }
    )
    report = dedup.find_groups(Vault.open(root), load_schema(root))
    [group] = report.groups
    # b has a backlink; then a (richer); then c (newer than d)
    assert group.members == ["b.md", "a/long name.md", "c.md", "d.md"]
    (root / "n1.md").write_text("none")
    [group] = dedup.find_groups(Vault.open(root), load_schema(root)).groups
    assert group.members[0] == "a/long name.md"


# ---------------------------------------------------------------------------
# Merging keeps every line


lines_st = st.lists(
    st.one_of(
        st.sampled_from(["", "## Notes", "## Log", "# Title", "## History", "- item a", "- item b", "```", "text"]),
        st.text(alphabet="abc -#*", min_size=1, max_size=8),
    ),
    max_size=12,
)


@settings(max_examples=100, deadline=None)
@given(lines_st, lines_st, st.sampled_from(["\n", "\r\n"]))
def test_merge_body_keeps_every_line(mine, theirs, newline):
    body = newline.join(mine) + (newline if mine else "")
    other = "\n".join(theirs) + ("\n" if theirs else "")
    merged = dedup.merge_body(body, other, newline)
    merged_lines = {line.strip() for line in merged.split(newline)}
    headings = {dedup._heading_key(line) for line in merged.split(newline)} - {None}
    for line in theirs:
        # a heading is kept as the same heading: same level, same text without case
        assert line.strip() in merged_lines or not line.strip() or dedup._heading_key(line) in headings
    # the canonical body's lines stay, in their order
    it = iter(merged.split(newline))
    assert all(any(line == got for got in it) for line in body.split(newline))
    if newline == "\r\n":
        assert "\n" not in merged.replace("\r\n", "")


def test_merge_sections_under_their_headings():
    body = "Intro.\n\n## Notes\n- a\n\n## Log\n- 2026-01-01: x\n"
    other = "Other intro.\n\n## Log\n- 2026-02-01: y\n- 2026-01-01: x\n\n## Extra\nMore.\n"
    assert dedup.merge_body(body, other, "\n") == (
        "Intro.\n\nOther intro.\n\n## Notes\n- a\n\n## Log\n- 2026-01-01: x\n- 2026-02-01: y\n\n## Extra\nMore.\n"
    )


# ---------------------------------------------------------------------------
# The labelled vault


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    root = tmp_path_factory.mktemp("people") / "vault"
    labels = people_vault.build(root)
    return root, labels


def test_labelled_vault_precision_and_recall(labelled):
    root, labels = labelled
    report = dedup.find_groups(Vault.open(root), load_schema(root))
    precision, recall, false_pairs, missed = people_vault.score([g.members for g in report.groups], labels)
    people = len(set(labels.entity.values()))
    print(
        f"\nlabelled vault: {len(labels.entity)} cards, {people} entities, {len(labels.true_pairs)} true pairs; "
        f"{len(report.groups)} groups ({sum(g.strong for g in report.groups)} strong); "
        f"precision {precision:.3f}, recall {recall:.3f}; {len(report.refused)} joins refused, "
        f"{len(report.shared)} shared keys ignored"
    )
    assert len(labels.entity) >= 300
    assert false_pairs == set(), sorted(map(sorted, false_pairs))[:5]
    assert precision == 1.0
    assert recall >= 0.95
    # the misses are exactly the cards that carry no identity value
    assert all(any("(name only)" in p for p in pair) for pair in missed)
    assert {s["cards"] for s in report.shared} == {12}


def test_labelled_vault_merge_keeps_links_and_lines(labelled, capsys, tmp_path):
    source, labels = labelled
    root = tmp_path / "vault"
    shutil.copytree(source, root)
    out = tmp_path / "groups.json"
    run_json(capsys, root, "--manifest", out)
    groups = json.loads(out.read_text())["groups"]
    canonical_of = {m["path"]: g["canonical"] for g in groups for m in g["members"]}
    before = {p: (root / p).read_text() for p in canonical_of}
    code, report = run_json(capsys, root, "--apply-manifest", out, "--apply", "--today", TODAY)
    assert code == 0, report["not_merged"][:3]
    assert len(report["merged"]) == len(groups)
    vault = Vault.open(root)
    # every link of the meeting notes resolves where its card went
    for note, targets in labels.links.items():
        edges = linkgraph.note_links(vault.note(note))
        got = [vault.resolver.resolve(link.target, note).path for link in edges]
        assert got == [canonical_of.get(t, t) for t in targets], note
    assert broken_links(root) == []
    # every non-empty body line of each merged card is in its canonical card
    for path, canonical in canonical_of.items():
        if path == canonical:
            continue
        assert not (root / path).exists()
        text = (root / canonical).read_text()
        body = before[path].split("\n---\n", 1)[1]
        kept = {line.strip() for line in text.splitlines()}
        for line in body.splitlines():
            assert not line.strip() or line.strip() in kept, (path, line)
        assert Path(path).stem in (root / canonical).read_text()  # the old name is an alias


# ---------------------------------------------------------------------------
# The corpora (dry runs)


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_corpus_dry_run(name, capsys):
    """A dry run reads the corpus where it lies (copying obsidian-hub alone
    takes longer than the run): it writes nothing, so no dot entry appears
    (no .graph, no .trash) and the top-level listing stays as it was."""
    root = require(CORPORA / name)
    before = sorted(os.listdir(root))
    code, report = run_json(capsys, root, "--quiet")
    print(f"\n{name}: {report['cards']} cards, {len(report['groups'])} groups, {len(report['refused'])} refused")
    assert code in (0, 1)
    assert len(report["groups"]) <= 3
    assert all(not m["path"].startswith(".") and "/." not in m["path"] for g in report["groups"] for m in g["members"])
    assert sorted(os.listdir(root)) == before and report["written"] == [] and report["run"] is None


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


values_st = st.fixed_dictionaries(
    {},
    optional={
        "email": st.sampled_from(["a@x.org", " A@X.org", "mailto:a@x.org", "b@x.org", "B@X.ORG "]),
        "handle": st.sampled_from(["@kim", "KIM", "lee", "@Lee"]),
        "phone": st.sampled_from(["+49 30 1", "030 1", "0049301", "+49 40 2"]),
    },
)


@settings(max_examples=40, deadline=None)
@given(st.lists(values_st, min_size=2, max_size=7))
def test_no_group_ever_holds_two_values_of_one_field(cards):
    """Whatever the cards hold, a group never joins different identity values
    of one field, and every member shares a key with another member."""
    import tempfile

    from autograph.read import identity

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "schema.json").write_text(json.dumps({"identity": {"default_country": "DE"}}))
        for n, fields in enumerate(cards):
            (root / f"c{n}.md").write_text(card(fields))
        report = dedup.find_groups(Vault.open(root), load_schema(root))
        for group in report.groups:
            for name, kind in (("email", "email"), ("handle", "handle"), ("phone", "phone")):
                held = {
                    identity.normalise(cards[int(p[1:-3])][name], kind, "DE")
                    for p in group.members
                    if name in cards[int(p[1:-3])]
                }
                assert len(held) <= 1, (group.members, name, held)
            assert all(any(p in e["paths"] for e in group.evidence) for p in group.members)


def test_a_card_ending_in_unclosed_code_is_not_merged(make_vault, capsys):
    root = make_vault(
        {"a.md": card({"email": "x@y.z", "role": "r"}, "```\nopen fence"), "b.md": card({"email": "X@y.z"}, "B.")}
    )
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply")
    [refused] = report["not_merged"]
    assert "never closed" in refused["reason"] and code == 1
    assert files_of(root) == before


def test_human_report_and_dry_run_flag(case, capsys):
    root = case("BR-30") / "vault"
    code, out = run(capsys, root, "--diff")
    assert code == 1
    assert "people/Jordan Lee (Beta).md  <- people/J Lee.md  (needs a manifest" in out
    assert "by handle:jlee" in out
    root = case("BR-28") / "vault"
    before = files_of(root)
    code, out = run(capsys, root, "--apply", "--dry-run", "--diff")
    assert "+Emailed [[Alex Example|A. Example]] today." in out
    assert "people/A. Example.md  to move to .trash/" in out
    assert files_of(root) == before and not (root / ".trash").exists()


def test_templates_are_never_written_nor_merged(make_vault, capsys, tmp_path):
    root = make_vault(
        {
            ".obsidian/templates.json": '{"folder": "Templates"}',
            "a.md": card({"email": "x@y.z", "role": "r"}, "A."),
            "b.md": card({"email": "X@y.z"}, "B."),
            "n.md": "[[a]]",
            "n2.md": "[[a]]",
            "Templates/t.md": "Template linking [[b]].\n",
        }
    )
    template = (root / "Templates" / "t.md").read_bytes()
    code, report = run_json(capsys, root, "--apply")
    assert report["merged"][0]["canonical"] == "a.md"
    assert report["links_left"] == [
        {"path": "Templates/t.md", "line": 1, "target": "b", "was": "b.md", "now": None,
         "why": "in a templates folder: never written"}
    ]  # fmt: skip
    assert (root / "Templates" / "t.md").read_bytes() == template
    # a manifest cannot make a template a member
    manifest = {
        "format": "autograph-dedup-manifest",
        "groups": [{"canonical": "a.md", "members": [{"path": "a.md"}, {"path": "Templates/t.md"}]}],
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(manifest))
    code, report = run_json(capsys, root, "--apply-manifest", path, "--apply")
    assert report["not_merged"][0]["reason"].startswith("not a card") and code == 1
    assert (root / "Templates" / "t.md").read_bytes() == template


def test_links_from_hubs_and_the_index_follow_the_merged_card(make_vault, capsys):
    """MEMORY.md and named hubs are not cards, but they are written: a link
    from them to a merged card must not break (only templates stay as they are)."""
    root = make_vault(
        {
            "people/Alex Example.md": card({"email": "alex@example.com"}) + "\n[[Other]]\n",
            "people/A. Example.md": card({"email": "ALEX@example.com "}),
            **{f"o{i}.md": "[[Alex Example]]\n" for i in range(4)},  # more linking notes: the canonical card
            "MEMORY.md": "- [[A. Example]] — met in May\n",
            "Home.md": "See [[A. Example]].\n",
            "Templates/t.md": "[[A. Example]]\n",
            ".obsidian/templates.json": '{"folder": "Templates"}',
        }
    )
    code, report = run_json(capsys, root, "--apply")
    assert code == 0, report
    assert (root / "MEMORY.md").read_text() == "- [[Alex Example|A. Example]] — met in May\n"
    assert (root / "Home.md").read_text() == "See [[Alex Example|A. Example]].\n"
    assert (root / "Templates/t.md").read_text() == "[[A. Example]]\n"


def test_a_member_in_another_folder_keeps_where_its_links_lead(make_vault, capsys):
    """F14: the member's body moves into the canonical card's folder; its
    relative links and a name a same-named note there would take are
    rewritten so each reaches the file it reached before."""
    root = make_vault(
        {
            "people/Alex Example.md": card({"email": "alex@example.com"}, "Canonical body, the longer one by far."),
            "inbox/A. Example.md": card(
                {"email": "ALEX@example.com"},
                "## Notes\n- see [the plan](../projects/plan.md) and [[./Plan B]]\n- met at [[Standup]]\n",
            ),
            "projects/plan.md": "the plan\n",
            "inbox/Plan B.md": "b\n",
            "inbox/Standup.md": "inbox standup\n",
            "people/Standup.md": "people standup\n",
            **{f"o{i}.md": "[[Alex Example]]\n" for i in range(4)},
        }
    )
    before = {t: r for t, r in resolved(root, "inbox/A. Example.md").items()}
    code, report = run_json(capsys, root, "--apply")
    assert code == 0, report
    after = resolved(root, "people/Alex Example.md")
    assert sorted(before) == ["./Plan B", "Standup", "the plan"]
    for text, path in before.items():
        assert after[text] == path, (text, (root / "people/Alex Example.md").read_text())
    assert broken_links(root) == []


def resolved(root: Path, path: str) -> dict[str, str]:
    """What each link of the note at ``path`` resolves to, by its visible text
    (a rewritten wikilink keeps the old one as its alias)."""
    from autograph.read.links import scan

    vault = Vault.open(root)
    note = vault.note(path)
    found = {}
    for link in scan(note.text):
        found[link.alias or link.target] = vault.resolver.resolve(link.target, path).path
    return found


# ---------------------------------------------------------------------------
# A merge that is not written whole (F1, F2, F7, F16)

MEMBER = "---\ntype: person\nemail: a@x.com\ncreated: 2026-01-01\n---\n# A\nmember text\n"
CANONICAL = "---\ntype: person\nemail: A@X.com\ncreated: 2025-01-01\n---\n# Old\nlonger body canonical\n"


def pair_vault(tmp_path: Path, **extra: str) -> Path:
    root = tmp_path / "v"
    (root / "people").mkdir(parents=True)
    (root / "people" / "Alex.md").write_text(MEMBER)
    (root / "people" / "Alex Old.md").write_text(CANONICAL)
    for name, text in extra.items():
        (root / f"{name}.md").write_text(text)
    return root


def test_a_member_stays_when_its_merge_is_not_written(tmp_path, capsys):
    """F1: the canonical card is read-only: the member is not trashed (the
    group is refused before anything is written, exit 1: found, not merged)."""
    root = pair_vault(tmp_path, other="[[Alex Old]]\n")
    (root / "people" / "Alex Old.md").chmod(0o444)
    code, report = run_json(capsys, root, "--apply", "--today", TODAY)
    assert code == 1
    assert (root / "people" / "Alex.md").read_text() == MEMBER
    assert (root / "people" / "Alex Old.md").read_text() == CANONICAL
    assert "read-only" in report["not_merged"][0]["reason"]
    assert report["written"] == [] and report["failed"] == []


def test_a_member_stays_when_a_link_to_it_is_not_rewritten(tmp_path, capsys):
    """F2, then F7: a read-only note links to the member: it stays (no
    broken link); once the note is writable, a rerun merges nothing twice."""
    root = pair_vault(tmp_path, ro="[[Alex]]\n", other="[[Alex Old]]\n")
    (root / "ro.md").chmod(0o444)
    code, report = run_json(capsys, root, "--apply", "--today", TODAY)
    assert code == 4 and report["written"] == ["people/Alex Old.md"]
    assert (root / "people" / "Alex.md").read_text() == MEMBER
    assert broken_links(root) == []
    once = (root / "people" / "Alex Old.md").read_text()
    assert once.count("member text") == 1 and once.count("created:") == 1  # autograph's own fields never go to History
    (root / "ro.md").chmod(0o644)
    code, report = run_json(capsys, root, "--apply", "--today", "2026-12-02")
    assert code == 0 and not (root / "people" / "Alex.md").exists()
    assert (root / "people" / "Alex Old.md").read_text() == once
    assert (root / "ro.md").read_text() == "[[Alex Old|Alex]]\n"


def test_merge_adds_no_line_the_canonical_card_holds():
    """F7: the merged text merged again adds nothing; a paragraph or a
    History line already there is not repeated, a new line still is."""
    body = "# Old\ncanonical\n\n# A\nmember text\n\nsecond\n"
    merged = dedup.merge_body(body, "# A\nmember text\n\nsecond\n", "\n")
    assert merged == body
    merged = dedup.merge_body(body, "# A\nmember text\n\nthird\n", "\n")
    assert merged.count("member text") == 1 and merged.endswith("third\n")
    code = "```\nx\n\ny\n```\n"
    merged = dedup.merge_body("# A\ny\n", "# A\n" + code, "\n")
    assert code in merged  # a piece of code is never dropped on its own
    assert dedup._history_key('- 2026-12-02: created: "2026-01-01" (from [[Alex Old|Alex]])') == dedup._history_key(
        '- 2026-12-01: created: "2026-01-01" (from [[Alex]])'
    )


def test_manifest_never_replaces_a_note_of_the_vault(tmp_path, capsys):
    """F16: --manifest NOTE --force is refused; the note stays."""
    root = pair_vault(tmp_path)
    code, _ = run(capsys, root, "--manifest", root / "people" / "Alex.md", "--force")
    assert code == 2 and (root / "people" / "Alex.md").read_text() == MEMBER
    (root / ".graph").mkdir(exist_ok=True)
    run_json(capsys, root, "--manifest", root / ".graph" / "groups.json")
    assert json.loads((root / ".graph" / "groups.json").read_text())["format"] == "autograph-dedup-manifest"


BODY_LINES = ["# A", "## B", "text", "more", "- item", "  - item", "1. one", "", "```", "code", "x  ", "| a |", "---"]
bodies = st.lists(st.sampled_from(BODY_LINES), max_size=12).map(lambda ls: "".join(line + "\n" for line in ls))


@settings(max_examples=300, deadline=None)
@given(bodies, bodies)
@example(body="", other="```\n```\ntext\n```\n```\n")  # two pieces of code the held paragraph left side by side
def test_a_merge_merged_again_adds_nothing_and_keeps_every_line(body, other):
    """F7, the rule: merging a member's body a second time into the merged
    body changes nothing, and the first merge keeps every line of both."""
    if dedup._ends_in_code(body) or dedup._ends_in_code(other):
        return  # merge_text refuses these
    once = dedup.merge_body(body, other, "\n")
    assert dedup.merge_body(once, other, "\n") == once
    kept = {line.strip() for line in once.splitlines()}
    assert {line.strip() for line in (body + other).splitlines() if not line.startswith("#")} - {""} <= kept


def refused_whole(root: Path, capsys) -> str:
    """Run dedup --apply on a vault whose one group must be refused before
    any write: check nothing changed and nothing merged; the reason."""
    before = files_of(root)
    code, report = run_json(capsys, root, "--apply")
    assert report["merged"] == [] and report["written"] == [] and files_of(root) == before, report
    [refused] = report["not_merged"]
    return refused["reason"]


def test_a_block_id_on_different_lines_in_two_cards_refuses_the_merge(make_vault, capsys):
    """Merged, the card would hold ^met twice, and [[Dana#^met]] and
    [[Dana Reyes#^met]] would both reach the first; the same line in both
    merges once."""
    dana = {"type": "person", "email": "dana@x.org"}
    root = make_vault(
        {
            "people/Dana Reyes.md": card(dana, "Met at the fair. ^met\n\nShared line. ^same"),
            "people/Dana.md": card(dana, "Met online. ^MET\n\nShared line. ^same"),
            "log.md": "[[Dana#^met]] [[Dana Reyes#^met]]\n[[Dana Reyes]]\n",
        }
    )
    reason = refused_whole(root, capsys)
    assert "^met" in reason and "rename one" in reason, reason
    (root / "people/Dana.md").write_text(card(dana, "Met online. ^online\n\nShared line. ^same"))
    code, report = run_json(capsys, root, "--apply")
    assert code == 0 and report["merged"], report
    text = (root / "people/Dana Reyes.md").read_text()
    assert text.count("^same") == 1 and "Met online. ^online" in text and "Met at the fair. ^met" in text


def test_a_block_line_both_cards_hold_under_different_headings_refuses_the_group(make_vault, capsys):
    dana = {"type": "person", "email": "dana@x.org"}
    root = make_vault(
        {
            "people/Dana Reyes.md": card(dana, "## Notes\n- met at the offsite ^m1"),
            "people/Dana.md": card(dana, "## Log\n- met at the offsite ^m1\n- second meeting"),
            "a.md": "[[Dana Reyes#^m1]]\n",
        }
    )
    assert "^m1" in refused_whole(root, capsys)


@pytest.mark.parametrize("how", ["read-only member", "read-only canonical", "hard-linked canonical"])
def test_a_card_the_store_would_not_replace_refuses_its_group_before_any_write(make_vault, capsys, tmp_path, how):
    """Half a merge (links retargeted to a card that never got the merged
    text, or a member left beside it) is never written: the group is refused."""
    dana = {"type": "person", "email": "dana@x.org"}
    root = make_vault(
        {
            "people/Dana Reyes.md": card(dana, "Canonical."),
            "people/Dana.md": card(dana, "Member."),
            "a.md": "[[Dana Reyes]] [[Dana Reyes]] [[Dana]]\n",
            "b.md": "[[Dana Reyes]]\n",
        }
    )
    if how == "read-only member":
        os.chmod(root / "people/Dana.md", 0o444)
    elif how == "read-only canonical":
        os.chmod(root / "people/Dana Reyes.md", 0o444)
    else:
        os.link(root / "people/Dana Reyes.md", tmp_path / "elsewhere.md")
    reason = refused_whole(root, capsys)
    assert ("read-only" in reason) != (how == "hard-linked canonical"), reason


def test_a_comment_on_a_member_value_goes_to_history_with_it(make_vault, capsys):
    """The member goes to .trash: every YAML comment of its frontmatter is
    kept in the canonical card, as written: with a value that goes to
    History, with a value the card already holds, or on a line of its own;
    one the card gets copied with its line keeps it there."""
    root = make_vault(
        {
            "people/Dana Reyes.md": "---\ntype: person\nemail: d@x.org\ndesk: CEO\nteam: Ops\ncity: Berlin\n"
            "---\nBody.\n",
            "people/Dana.md": "---\ntype: person\nemail: d@x.org\n# met at the 2024 offsite\n"
            'desk: CTO  # promoted in May, ask Kim\nteam: "R #2"\ncity: Berlin  # since 2019\n'
            "phone: '+1 555'  # work\n---\n",
            "a.md": "[[Dana Reyes]]\n",
        }
    )
    code, report = run_json(capsys, root, "--apply", "--today", TODAY)
    assert code == 0, report
    assert report["merged"][0]["history"] == [
        "- 2026-12-01: desk: CTO  # promoted in May, ask Kim (from [[Dana Reyes|Dana]])",
        '- 2026-12-01: team: "R #2" (from [[Dana Reyes|Dana]])',  # quoted: its # is no comment
        "- 2026-12-01: city: Berlin  # since 2019 (from [[Dana Reyes|Dana]])",
        "- 2026-12-01: # met at the 2024 offsite (from [[Dana Reyes|Dana]])",
    ]
    assert "phone: '+1 555'  # work\n" in (root / "people/Dana Reyes.md").read_text()
    code, again = run_json(capsys, root, "--apply", "--today", "2026-12-02")
    assert again["merged"] == [] and code == 0


@pytest.mark.parametrize(
    ("member", "kept"),
    [
        (
            "tags:  # from the CRM\n  - a  # first tag\n  - z  # added by Kim\n",
            ["tags: [a, z]  # from the CRM", "tags: - a  # first tag", "tags: - z  # added by Kim"],
        ),
        ("role: CEO  # work\ncity: Berlin\n# Berlin\n", ["role: CEO  # work", "# Berlin"]),
        ("notes: |\n  # step one\n  done\n", ['notes: "# step one\\ndone\\n"']),  # a block scalar's text
        ("desk: a 'b # c'\n", ["desk: a 'b  # c'"]),  # YAML: a plain value, then a comment
        ("company:   # not sure\n", ["company: null  # not sure"]),  # on an empty value
    ],
)
def test_every_frontmatter_comment_of_a_member_is_kept_once(make_vault, capsys, member, kept):
    canonical = (
        "---\ntype: person\nemail: d@x.org\nrole: CEO\ndesk: CEO\ntags: [a]\nnotes: other\n---\nI work in Berlin.\n"
    )
    root = make_vault(
        {"people/Dana Reyes.md": canonical, "people/Dana.md": "---\ntype: person\nemail: d@x.org\n" + member + "---\n"}
    )
    code, report = run_json(capsys, root, "--apply", "--today", TODAY)
    assert code == 0, report
    assert report["merged"][0]["history"] == [f"- 2026-12-01: {line} (from [[Dana Reyes|Dana]])" for line in kept]


def test_an_immutable_card_refuses_its_group_before_any_write(make_vault, capsys):
    """chattr +i shows in no mode bit: the store reads Linux's file flags."""
    import shutil
    import subprocess

    dana = {"type": "person", "email": "dana@x.org"}
    root = make_vault({"people/Dana Reyes.md": card(dana, "Canonical."), "people/Dana.md": card(dana, "Member.")})
    member = root / "people/Dana.md"
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(member)], capture_output=True).returncode != 0:
        pytest.skip("this file system or user cannot make a file immutable")
    try:
        assert "immutable" in refused_whole(root, capsys)
    finally:
        subprocess.run([chattr, "-i", str(member)], check=True)
