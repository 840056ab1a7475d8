"""graph.py fix: broken links repaired only when their target is certain.

Measures: the BR cases' repair parts (nothing in code, no case "fix" of a
resolving link, no guess for BR-17/BR-25's unresolved links), each kind of
repair (moved by autograph, Markdown encoding, folder path, alias) on built
vaults, ambiguity reported, and on a copy of obsidian-hub: every link that
resolved before resolves to the same file after --apply, the broken count
does not grow, and a second run plans nothing.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import CORPORA, SCRIPTS, copy_tree, require

sys.path.insert(0, str(SCRIPTS))

import graph  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.write.relink import link_spans  # noqa: E402


def fix(root, *extra, capsys) -> tuple[int, dict]:
    code = graph.main(["fix", str(root), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def snapshot(root) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".graph" not in p.parts and ".trash" not in p.parts
    }


def resolved_links(root) -> dict[str, list[str | None]]:
    vault = Vault.open(root)
    found = {}
    for path in vault.notes:
        text = vault.note(path).text
        if text is not None:
            found[path] = [vault.resolver.resolve(s.link.target, path).path for s in link_spans(text)]
    return found


# ---------------------------------------------------------------------------
# BR cases


@pytest.mark.parametrize("name", ["BR-16", "BR-18", "BR-19", "BR-21"])
def test_links_that_resolve_and_code_are_never_touched(case, capsys, name):
    root = case(name) / "vault"
    before = snapshot(root)
    code, out = fix(root, "--apply", capsys=capsys)
    assert code == 0
    assert out["planned"] == [] and out["edits"] == [] and out["run"] is None
    assert snapshot(root) == before


def test_br17_unresolved_links_are_reported_not_rewritten(case, capsys):
    root = case("BR-17") / "vault"
    before = snapshot(root)
    code, out = fix(root, "--apply", capsys=capsys)
    assert code == 0 and out["planned"] == [] and out["ambiguous"] == []
    assert [(r["path"], r["line"], r["target"]) for r in out["unfixable"]] == [
        ("index.md", 5, "alpha_note"),
        ("index.md", 6, "A Descriptive Human Title"),  # a title: property is no alias
    ]
    # suggested (by a loose name, by the title property), never written
    assert [r["suggestions"] for r in out["unfixable"]] == [["alpha-note.md"], ["alpha-note.md"]]
    assert snapshot(root) == before


def test_br23_links_into_hidden_folders_are_not_repaired(case, capsys):
    root = case("BR-23") / "vault"
    code, out = fix(root, "--apply", capsys=capsys)
    assert out["planned"] == []
    assert [r["target"] for r in out["unfixable"]] == ["Old Note", "Draft Idea"]


def test_br25_no_search_fallback(case, capsys):
    root = case("BR-25") / "vault"
    before = snapshot(root)
    code, out = fix(root, "--apply", capsys=capsys)
    assert code == 0 and out["planned"] == [] and out["ambiguous"] == []
    assert all(r["suggestions"] == [] for r in out["unfixable"])  # no search behind a suggestion either
    assert sorted((r["line"], r["target"]) for r in out["unfixable"]) == [
        (2, "overview (state-management/session-execution)"),
        (4, "Session Execution Overview"),
    ]
    assert snapshot(root) == before


# ---------------------------------------------------------------------------
# Each kind of repair


def test_alias_of_exactly_one_note(make_vault, capsys):
    root = make_vault(
        {
            "people/Alex Example.md": "---\naliases: [A. Example, Alex]\n---\nAlex.\n",
            "people/Alex Other.md": "---\naliases:\n  - Alex\n---\nOther.\n",
            "log.md": (
                '---\nwith: "[[A. Example]]"\n---\n'
                "Met [[A. Example]], [[a. example#Role]], [[A. Example|him]] and [[Alex]].\n"
                "`[[A. Example]]` in code\n"
                "| t | [[A. Example]] |\n"
            ),
        }
    )
    code, out = fix(root, "--apply", capsys=capsys)
    assert code == 0
    assert (root / "log.md").read_text() == (
        '---\nwith: "[[Alex Example|A. Example]]"\n---\n'
        "Met [[Alex Example|A. Example]], [[Alex Example#Role|a. example > Role]], [[Alex Example|him]] and [[Alex]].\n"
        "`[[A. Example]]` in code\n"
        "| t | [[Alex Example\\|A. Example]] |\n"
    )
    assert out["ambiguous"] == [
        {
            "path": "log.md",
            "line": 4,
            "target": "Alex",
            "candidates": ["people/Alex Example.md", "people/Alex Other.md"],
        }
    ]
    assert {r["why"] for r in out["planned"]} == {"alias of the note"}
    assert out["planned"][0] == {
        "path": "log.md",
        "line": 2,
        "old": "[[A. Example]]",
        "new": "[[Alex Example|A. Example]]",
        "why": "alias of the note",
    }


def test_folder_path_out_of_date_and_markdown_encodings(make_vault, capsys):
    root = make_vault(
        {
            "new/place/Note.md": "n\n",
            "a%20b.md": "odd name\n",
            "My Note.md": "m\n",
            "two/Same.md": "",
            "one/Same.md": "",
            "src.md": (
                "[[old/Note#H|x]] ![[old/Note]] [m](old/Note.md) [e](a%20b.md) [d](My%2520Note.md) "
                "[p](My+Note.md) [[gone/Same]] [i](pic.png.md)\n"
            ),
            "pic.png": b"",
        }
    )
    code, out = fix(root, "--apply", capsys=capsys)
    assert code == 0, out
    assert (root / "src.md").read_text() == (
        "[[place/Note#H|x]] ![[place/Note]] [m](place/Note.md) [e](a%2520b.md) [d](My%20Note.md) "
        "[p](My%20Note.md) [[gone/Same]] [i](pic.png)\n"
    )
    assert out["ambiguous"][0]["candidates"] == ["one/Same.md", "two/Same.md"]
    code, again = fix(root, capsys=capsys)
    assert again["planned"] == [] and len(again["ambiguous"]) == 1


def test_a_link_to_a_note_autograph_moved(make_vault, capsys):
    root = make_vault({"inbox/Dana.md": "d\n", "a.md": "[[Dana]]\n"})
    assert graph.main(["mv", str(root), "inbox/Dana.md", "people/Dana Reyes.md", "--apply", "--json"]) == 0
    capsys.readouterr()
    # written later by someone who still knew the old name
    (root / "b.md").write_text("see [[Dana]] and [[inbox/Dana#Role]]\n")
    code, out = fix(root, "--apply", capsys=capsys)
    assert code == 0
    assert (root / "b.md").read_text() == "see [[Dana Reyes]] and [[people/Dana Reyes#Role]]\n"
    assert all(r["why"].startswith("moved by autograph to people/Dana Reyes.md") for r in out["planned"])


def test_an_undone_move_is_no_move(make_vault, capsys):
    root = make_vault({"inbox/Dana.md": "d\n", "a.md": "x\n"})
    graph.main(["mv", str(root), "inbox/Dana.md", "people/Dana Reyes.md", "--apply", "--json"])
    run = json.loads(capsys.readouterr().out)["run"]
    from autograph.write import store, undo
    from autograph.write.journal import load

    changes, _ = undo.plan_undo(root, load(root / ".graph", run))
    store.apply(root, changes, undoes=run)
    (root / "people").mkdir(exist_ok=True)
    (root / "people/Dana Reyes.md").write_text("another Dana\n")
    (root / "b.md").write_text("[[inbox/Gone/Dana Reyes]]\n")
    (root / "c.md").write_text("[[Dana Junior]]\n")
    code, out = fix(root, capsys=capsys)
    assert [r["why"] for r in out["planned"]] == ["folder path out of date; the file name is in the vault"]
    assert out["unfixable"][0]["target"] == "Dana Junior"


def test_templates_are_never_written(make_vault, capsys):
    root = make_vault(
        {
            ".obsidian/templates.json": '{"folder": "Templates"}',
            "Templates/t.md": "[[Alias]]\n",
            "Target.md": "---\naliases: [Alias]\n---\n",
        }
    )
    before = snapshot(root)
    code, out = fix(root, "--apply", capsys=capsys)
    assert out["planned"] == [] and "templates folder" in out["unfixable"][0]["why"]
    assert snapshot(root) == before


def test_dry_run_and_diff_write_nothing(make_vault, capsys):
    root = make_vault({"T.md": "---\naliases: [Alias]\n---\n", "s.md": "[[Alias]]\n"})
    assert graph.main(["fix", str(root), "--diff"]) == 0
    shown = capsys.readouterr().out
    assert "s.md:1  [[Alias]] -> [[T|Alias]]" in shown and "+[[T|Alias]]" in shown
    assert (root / "s.md").read_text() == "[[Alias]]\n"


# ---------------------------------------------------------------------------
# obsidian-hub


def test_fix_on_obsidian_hub(fast_tmp, capsys):
    root = copy_tree(require(CORPORA / "obsidian-hub"), fast_tmp / "hub")
    before = resolved_links(root)
    broken_before = sum(t is None for ts in before.values() for t in ts)
    code, out = fix(root, "--apply", capsys=capsys)
    assert code == 0 and not out["conflicts"] and not out["failed"]
    assert len(out["planned"]) >= 8 and len(out["written"]) == len(out["edits"])
    after = resolved_links(root)
    assert after.keys() == before.keys()
    repaired = 0
    for path, targets in before.items():
        assert len(after[path]) == len(targets)
        for old, new in zip(targets, after[path], strict=True):
            if old is not None:
                assert new == old, path
            repaired += old is None and new is not None
    broken_after = sum(t is None for ts in after.values() for t in ts)
    assert broken_after <= broken_before and repaired == len(out["planned"])
    code, again = fix(root, capsys=capsys)
    assert again["planned"] == [] and again["edits"] == []
    print(f"obsidian-hub: {broken_before} broken before, {broken_after} after, {repaired} repaired")


def test_a_link_with_a_uri_scheme_is_not_a_folder_path(make_vault, capsys):
    root = make_vault({"careers.mission.md": "m\n", "a.md": "![[dendron://dendron.site/careers.mission]]\n"})
    code, out = fix(root, "--apply", capsys=capsys)
    assert out["planned"] == [] and out["unfixable"][0]["target"] == "dendron://dendron.site/careers.mission"
