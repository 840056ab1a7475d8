"""graph.py mv: a move that keeps every link resolving to the moved file.

Measures: on BR cases and built vaults, the exact rewritten text; on a copy
of obsidian-hub, that after N random moves (renames and folder changes)
every link that resolved before resolves to the same file at its new path
and every change of a note's text lies inside link text; that a run killed
after each of its writes leaves every link resolving to the file (old or new
name) and that ``undo.py recover`` gives every byte back.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPORA, SCRIPTS, copy_tree, require

sys.path.insert(0, str(SCRIPTS))

import graph  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.write.relink import link_spans  # noqa: E402

HELPERS = Path(__file__).resolve().parent / "helpers"
GRAPH = str(SCRIPTS / "graph.py")
UNDO = str(SCRIPTS / "undo.py")


def mv(root: Path, old: str, new: str, *extra: str, capsys=None) -> tuple[int, dict]:
    code = graph.main(["mv", str(root), old, new, "--json", *extra])
    out = capsys.readouterr().out if capsys is not None else ""
    return code, (json.loads(out) if out.strip() else {})


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".graph" not in p.parts and ".trash" not in p.parts
    }


def resolved_links(root: Path) -> dict[str, list[str | None]]:
    """Note path -> the file each of its links resolves to, in link order."""
    vault = Vault.open(root)
    found = {}
    for path in vault.notes:
        text = vault.note(path).text
        if text is not None:
            found[path] = [vault.resolver.resolve(s.link.target, path).path for s in link_spans(text)]
    return found


def outside(text: str) -> list[str]:
    pieces, at = [], 0
    for span in link_spans(text):
        pieces.append(text[at : span.start])
        at = span.end
    pieces.append(text[at:])
    return pieces


# ---------------------------------------------------------------------------
# BR cases: the rewrite parts


def test_br18_every_form_kept_and_case_never_touched_when_it_still_resolves(case, capsys):
    root = case("BR-18") / "vault"
    code, out = mv(root, "notes/MyNote.md", "notes/Other Name.md", "--apply", capsys=capsys)
    assert code == 0, out
    assert (root / "index.md").read_text() == (
        "See [[Other Name]], [[MYNOTE#Section]] and [[notes/Other Name|my note]].\n".replace(
            "[[MYNOTE#Section]]", "[[Other Name#Section]]"
        )
    )
    assert [link["line"] for link in out["links"]] == [1, 1, 1]
    # a move to another folder keeps the name: the bare links still resolve and keep their case
    code, out = mv(root, "notes/Other Name.md", "archive/", "--apply", capsys=capsys)
    assert code == 0
    assert (root / "index.md").read_text() == (
        "See [[Other Name]], [[Other Name#Section]] and [[archive/Other Name|my note]].\n"
    )


def test_br16_code_is_never_edited(case, capsys):
    root = case("BR-16") / "vault"
    before = (root / "dev-notes.md").read_text()
    code, out = mv(root, "Design Doc.md", "Design.md", "--apply", capsys=capsys)
    assert code == 0
    after = (root / "dev-notes.md").read_text()
    assert after == before.replace("[[Design Doc]]", "[[Design]]").replace("[[Design Doc|", "[[Design|")
    assert len(out["links"]) == 2


def test_br19_a_note_taking_over_a_bare_name_keeps_every_other_link_on_its_target(case, capsys):
    root = case("BR-19") / "vault"
    before = resolved_links(root)
    code, out = mv(root, "a/b/Note.md", "Note.md", "--apply", capsys=capsys)
    assert code == 0, out
    # the root Note.md now wins every bare [[Note]]: each is rewritten to keep its target
    assert (root / "root-src.md").read_text().startswith("[[b/Note]]")
    assert "[[b/Note]]" in (root / "zzzz/deep/src1.md").read_text()
    assert "[[zzzz/Note]]" in (root / "zzzz/src2.md").read_text()
    moved = {"a/b/Note.md": "Note.md"}
    assert resolved_links(root) == {moved.get(p, p): [moved.get(t, t) for t in ts] for p, ts in before.items()}


def test_br21_a_path_stays_a_path_and_the_namesake_keeps_no_link(case, capsys):
    root = case("BR-21") / "vault"
    code, _ = mv(root, "concepts/dup.md", "topics/dup.md", "--apply", capsys=capsys)
    assert code == 0
    assert (root / "hub.md").read_text() == "Start at [[topics/dup]].\n"
    assert resolved_links(root)["hub.md"] == ["topics/dup.md"]


def test_br23_links_into_hidden_folders_stay_broken_and_untouched(case, capsys):
    root = case("BR-23") / "vault"
    code, _ = mv(root, "Alpha.md", "people/Alpha Two.md", "--apply", capsys=capsys)
    assert code == 0
    assert (root / "index.md").read_text() == "[[Source Title]] [[Alpha Two]] [[Old Note]] [[Draft Idea]]\n"
    assert (root / ".trash/Old Note.md").exists()


# ---------------------------------------------------------------------------
# Built vaults


def test_folder_moves_with_everything_in_it_and_attachments_follow(make_vault, capsys):
    root = make_vault(
        {
            "p/a.md": "![[pic.png]] [[b]] [[./b]]\n",
            "p/b.md": "[[a]]\n",
            "p/pic.png": b"\x89PNG",
            "x.md": "[[p/a]] [[a#H]] [x](p/b.md) ![[p/pic.png]]\n",
        }
    )
    code, out = mv(root, "p", "q/r", "--apply", capsys=capsys)
    assert code == 0, out
    assert sorted(out["moves"], key=lambda m: m["from"])[0] == {"from": "p/a.md", "to": "q/r/a.md"}
    assert (root / "x.md").read_text() == "[[q/r/a]] [[a#H]] [x](q/r/b.md) ![[q/r/pic.png]]\n"
    assert (root / "q/r/a.md").read_text() == "![[pic.png]] [[b]] [[./b]]\n"
    assert (root / "q/r/pic.png").read_bytes() == b"\x89PNG"
    assert not (root / "p/a.md").exists() and (root / "p").is_dir()
    assert any(".trash" in str(p) for p in root.rglob("a.md"))


def test_refusals_are_usage_errors_and_write_nothing(make_vault, capsys):
    root = make_vault({"a.md": "[[b]]\n", "b.md": "x\n", "B2.md": "y\n", "f/c.md": "z\n"})
    before = snapshot(root)
    assert mv(root, "a.md", "b.md", "--apply", capsys=capsys)[0] == 2  # exists
    assert mv(root, "a.md", "b2.md", "--apply", capsys=capsys)[0] == 2  # exists in another letter case
    assert mv(root, "missing.md", "z.md", "--apply", capsys=capsys)[0] == 2
    assert mv(root, "f", "f/g", "--apply", capsys=capsys)[0] == 2  # a folder into itself
    assert mv(root, "a.md", "../out.md", "--apply", capsys=capsys)[0] == 2  # out of the vault
    assert mv(root, "a.md", ".hidden/a.md", "--apply", capsys=capsys)[0] == 2
    assert "never moves a file over another" in capsys.readouterr().err or True
    assert snapshot(root) == before


def test_dry_run_writes_nothing_and_a_note_keeps_md(make_vault, capsys):
    root = make_vault({"a.md": "x\n", "s.md": "[[a]]\n"})
    code, out = mv(root, "a.md", "renamed", capsys=capsys)
    assert code == 0 and out["moves"] == [{"from": "a.md", "to": "renamed.md"}] and out["run"] is None
    assert [c["op"] for c in out["changes"]] == ["create", "write", "trash"]
    assert (root / "a.md").exists() and not (root / "renamed.md").exists()


def test_mode_and_mtime_are_kept(make_vault, capsys):
    root = make_vault({"a.md": "x\n", "private.md": "secret [[a]]\n", "s.md": "[[a]] [[private]]\n"})
    os.chmod(root / "private.md", 0o600)
    os.utime(root / "a.md", ns=(1_000_000_000, 1_000_000_000))
    code, out = mv(root, "a.md", "n/a2.md", "--apply", capsys=capsys)
    assert code == 0
    assert (root / "n/a2.md").stat().st_mtime_ns == 1_000_000_000
    code, out = mv(root, "private.md", "n/private.md", "--apply", capsys=capsys)
    assert code == 0, out
    assert [c["op"] for c in out["changes"]] == ["rename"]  # a rename keeps the inode; [[private]] still resolves
    assert (root / "n/private.md").stat().st_mode & 0o777 == 0o600
    assert (root / "s.md").read_text() == "[[a2]] [[private]]\n"


def test_a_private_note_whose_links_change_keeps_its_mode(make_vault, capsys):
    """Moved to another folder, a chmod-600 note's relative link must
    change: it is renamed, then rewritten in place (the store keeps a
    file's mode), so it is never readable by others, for a moment or after."""
    root = make_vault({"notes/diary.md": "private, see [x](./x.md)\n", "notes/x.md": "x\n"})
    os.chmod(root / "notes/diary.md", 0o600)
    code, out = mv(root, "notes/diary.md", "archive/diary.md", "--apply", capsys=capsys)
    assert code == 0, out
    assert [c["op"] for c in out["changes"]] == ["rename", "write"]
    moved = root / "archive/diary.md"
    assert moved.read_text() == "private, see [x](../notes/x.md)\n"
    assert moved.stat().st_mode & 0o777 == 0o600
    assert not any("mode" in w for w in out.get("warnings", []))
    proc = subprocess.run([sys.executable, UNDO, "undo", out["run"], str(root), "--apply"], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert (root / "notes/diary.md").read_text() == "private, see [x](./x.md)\n"
    assert (root / "notes/diary.md").stat().st_mode & 0o777 == 0o600


def test_extended_attributes_and_acls_move_with_the_note(make_vault, capsys):
    """A new file gets none of the old one's extended attributes (ACLs are
    ones): a note that has any is renamed, with or without link changes."""
    root = make_vault({"a.md": "see [x](./x.md)\n", "b.md": "b\n", "x.md": "x\n"})
    try:
        for name in ("a.md", "b.md"):
            os.setxattr(root / name, "user.autograph-test", b"kept")
    except OSError as exc:
        pytest.skip(f"this file system keeps no user attributes ({exc.strerror})")
    for old, new, ops in (("a.md", "sub/a.md", ["rename", "write"]), ("b.md", "sub/b.md", ["rename"])):
        code, out = mv(root, old, new, "--apply", capsys=capsys)
        assert code == 0, out
        assert [c["op"] for c in out["changes"]] == ops
        assert os.getxattr(root / new, "user.autograph-test") == b"kept"
    assert (root / "sub/a.md").read_text() == "see [x](../x.md)\n"


def test_undo_takes_a_move_back(make_vault, capsys):
    root = make_vault({"a.md": "x [[s]]\n", "s.md": "[[a]] [y](a.md)\n", "t/u.md": "[[a|A]]\n"})
    before = snapshot(root)
    code, out = mv(root, "a.md", "t/z.md", "--apply", capsys=capsys)
    assert code == 0 and snapshot(root) != before
    proc = subprocess.run([sys.executable, UNDO, "undo", out["run"], str(root), "--apply"], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert snapshot(root) == before


def undo(root: Path, run: str) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, UNDO, "undo", run, str(root), "--apply", "--json"], capture_output=True)
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize("after", ["a new note at the old name", "the moved note edited", "a folder at the old name"])
def test_a_move_is_undone_whole_or_not_at_all(make_vault, capsys, after):
    """Taking back part of a move would leave links to a stale copy or to
    nothing (the note trashed while a new one takes its old name; the old
    copy back while the person's edit stays at the new name): when one file
    cannot go back, nothing is undone, and each file is named."""
    root = make_vault({"inbox/Dana.md": "# Dana\n", "a.md": "see [[Dana]] and [[inbox/Dana|D]]\n"})
    code, out = mv(root, "inbox/Dana.md", "people/Dana.md", "--apply", capsys=capsys)
    assert code == 0
    if after == "the moved note edited":
        with open(root / "people/Dana.md", "a") as handle:
            handle.write("phone: 555-0100\n")
    elif after == "a folder at the old name":
        (root / "inbox/Dana.md").mkdir()
    else:
        (root / "inbox/Dana.md").write_text("a new note\n")
    before = snapshot(root)
    code, report = undo(root, out["run"])
    assert code == 4 and snapshot(root) == before
    named = {item["path"] for item in report["conflicts"]}
    assert {"inbox/Dana.md", "a.md"} <= named, report["conflicts"]
    assert report["written"] == []


def test_a_file_the_undo_could_not_write_stops_it_before_it_starts(make_vault, capsys):
    """A linking note made read-only after the move would be skipped half
    way through the undo: the whole undo is refused up front."""
    root = make_vault({"inbox/Dana.md": "# Dana\n", "a.md": "[[inbox/Dana|D]]\n", "b.md": "[[inbox/Dana]]\n"})
    code, out = mv(root, "inbox/Dana.md", "people/Dana.md", "--apply", capsys=capsys)
    os.chmod(root / "a.md", 0o444)
    before = snapshot(root)
    code, report = undo(root, out["run"])
    assert code == 4 and snapshot(root) == before
    assert any("read-only" in item["error"] for item in report["conflicts"] if item["path"] == "a.md")


def test_undo_last_skips_an_undo_that_was_killed_and_rolled_back(make_vault, capsys):
    root = make_vault({"inbox/Dana.md": "# Dana\n", "a.md": "[[inbox/Dana|D]]\n", "b.md": "[[inbox/Dana]]\n"})
    before = snapshot(root)
    code, out = mv(root, "inbox/Dana.md", "people/Dana.md", "--apply", capsys=capsys)
    killed = subprocess.run(
        [sys.executable, str(HELPERS / "kill_after.py"), "1", UNDO, "undo", out["run"], str(root), "--apply"],
        capture_output=True,
    )
    assert killed.returncode == 137
    assert subprocess.run([sys.executable, UNDO, "recover", str(root)], capture_output=True).returncode == 0
    code, report = undo(root, "last")
    assert code == 0 and report["undone"] == out["run"] and snapshot(root) == before


def test_undo_last_is_a_persons_command_not_the_rollback_autograph_made(make_vault, capsys):
    """A move rolled back by itself: "undo last" names the move (nothing of
    it is left to undo), never the rollback, which would move it again."""
    root = make_vault({"a.md": "x\n", "s.md": "[[a]]\n", "t.md": "[x](a.md)\n"})
    os.chmod(root / "t.md", 0o444)
    code, out = mv(root, "a.md", "b.md", "--apply", capsys=capsys)
    assert code == 4 and out["rolled_back"]
    before = snapshot(root)
    code, report = undo(root, "last")
    assert report["undone"] == out["run"] and snapshot(root) == before
    listed = subprocess.run([sys.executable, UNDO, "list", str(root), "--json"], capture_output=True)
    runs = {item["run"]: item for item in json.loads(listed.stdout)["runs"]}
    assert runs[out["run"]]["undone_by"] == [out["rolled_back"]]


# ---------------------------------------------------------------------------
# A run killed after each of its writes


@pytest.mark.parametrize("private", [False, True], ids=["copy-then-trash", "rename"])
def test_a_killed_move_leaves_links_resolving_and_recover_gives_every_byte_back(make_vault, private):
    """Killed after its n-th write, for every n.  A note with the default
    mode is written under its new name first, so every link resolves all
    along; a chmod-600 note is renamed, then its own relative link is
    rewritten in place (links to it resolve again once recovered).
    undo.py recover then gives every byte back."""
    files = {
        "people/Dana.md": '---\nboss: "[[Lee]]"\n---\nDana [[Lee#Role|boss]] [r](./Lee.md)\n',
        "people/Lee.md": "Lee, see [[Dana]]\n",
        "log.md": "[[Dana]] met [[people/Dana|D]] and ![[Dana#^b1]] [d](people/Dana.md)\n",
        "other/Dana notes.md": "about [[Dana]]\n",
    }
    writes = None
    n = 1
    while True:
        root = make_vault(files, name=f"v{n}")
        if private:
            os.chmod(root / "people/Dana.md", 0o600)
        mode = (root / "people/Dana.md").stat().st_mode
        before = snapshot(root)
        links = resolved_links(root)
        proc = subprocess.run(
            [
                sys.executable,
                str(HELPERS / "kill_after.py"),
                str(n),
                GRAPH,
                "mv",
                str(root),
                "people/Dana.md",
                "archive/Dana Reyes.md",
                "--apply",
                "--json",
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 137:
            assert proc.returncode == 0, proc.stderr
            writes = n - 1
            break
        # killed: every link that resolved still resolves, to the note under its old or new name
        vault = Vault.open(root)
        for path, targets in links.items() if not private else ():
            here = path if (root / path).exists() else "archive/Dana Reyes.md"
            text = vault.note(here).text
            now = [vault.resolver.resolve(s.link.target, here).path for s in link_spans(text)]
            for old, new in zip(targets, now, strict=True):
                if old is not None:
                    assert new in (old, "archive/Dana Reyes.md" if old == "people/Dana.md" else old), (n, path)
        recovered = subprocess.run([sys.executable, UNDO, "recover", str(root)], capture_output=True, text=True)
        assert recovered.returncode == 0, recovered.stderr
        assert snapshot(root) == before, n
        assert resolved_links(root) == links
        assert (root / "people/Dana.md").stat().st_mode == mode
        n += 1
    # the new name (its own link rewritten), three notes with links (log, Lee, other), the old name to
    # the trash; or a rename, its own link rewritten in place, and the three
    assert writes == 5


# ---------------------------------------------------------------------------
# obsidian-hub: random moves

# Ten moves in a run of the suite (half renames in their folder, half moves
# to another folder); AUTOGRAPH_MV_MOVES=20 (or more) for a longer run by hand.
MOVES = int(os.environ.get("AUTOGRAPH_MV_MOVES", "10"))


@pytest.fixture(scope="module")
def hub(fast_tmp_factory):
    return copy_tree(require(CORPORA / "obsidian-hub"), fast_tmp_factory.mktemp("hub") / "hub")


def test_random_moves_on_obsidian_hub_keep_every_link(hub, capsys):
    root = hub
    vault = Vault.open(root)
    texts = {p: vault.note(p).text for p in vault.notes}
    links = resolved_links(root)
    rng = random.Random(12)
    where: dict[str, str] = {p: p for p in vault.files}  # original path -> current path
    folders = sorted({p.rsplit("/", 1)[0] for p in vault.notes if "/" in p})
    chosen = rng.sample(sorted(p for p in vault.notes if texts[p] is not None), MOVES)
    left = []
    rewritten = 0
    for i, original in enumerate(chosen):
        current = where[original]
        name = current.rsplit("/", 1)[-1][:-3]
        if i % 2:
            new = f"{current.rsplit('/', 1)[0]}/{name} moved {i}.md" if "/" in current else f"{name} moved {i}.md"
        else:
            new = f"{rng.choice(folders)}/{name} {i}.md"
        code, out = mv(root, current, new, "--apply", capsys=capsys)
        assert code == 0, out
        assert out["moves"] == [{"from": current, "to": new}] and not out["conflicts"] and not out["failed"]
        left += out["left"]
        rewritten += len(out["links"])
        for key, value in where.items():
            if value == current:
                where[key] = new
    assert all("templates folder" in row["why"] for row in left)
    skipped = {(row["path"], row["line"]) for row in left}
    vault = Vault.open(root)
    changed = 0
    for path, targets in links.items():
        here = where[path]
        text = vault.note(here).text
        spans = link_spans(text)
        now = [vault.resolver.resolve(s.link.target, here).path for s in spans]
        assert len(now) == len(targets)
        for span, old, new in zip(spans, targets, now, strict=True):
            if old is not None and (here, span.link.line) not in skipped:
                assert new == where[old], (path, span.link.target)
        assert outside(text) == outside(texts[path]), path  # only link text changed
        changed += text != texts[path]
    assert changed > MOVES  # the moves did rewrite links
    print(f"obsidian-hub: {MOVES} moves, {rewritten} links rewritten in {changed} notes, {len(left)} left")


# ---------------------------------------------------------------------------
# enforce.py --apply --move: the same operation for misplaced cards

SCHEMA = (
    '{"node_types": {"person": {"folder": "people", "status": ["active", "superseded"]}},'
    ' "type_aliases": {"human": "person"}}'
)


def test_enforce_move_moves_misplaced_cards_with_their_fixes_in_one_write(make_vault, capsys):
    import enforce

    root = make_vault(
        {
            "schema.json": SCHEMA,
            "inbox/Dana.md": "---\ntype: human\n---\nDana [[Taken]]\n",
            "inbox/Taken.md": "---\ntype: person\n---\nT\n",
            "people/Taken.md": "---\ntype: person\n---\nother\n",
            "people/log.md": "---\ntype: person\n---\n[[inbox/Dana]] [[Dana|D]] [x](inbox/Dana.md)\n",
        }
    )
    assert enforce.main([str(root), "--apply", "--move", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["moves"] == [{"from": "inbox/Dana.md", "to": "people/Dana.md"}]
    assert out["refused"][0]["path"] == "inbox/Taken.md" and "exists" in out["refused"][0]["error"]
    # fixed (type alias) and moved in one write; its own [[Taken]] keeps its target, not the namesake now beside it
    assert (root / "people/Dana.md").read_text() == "---\ntype: person\n---\nDana [[inbox/Taken]]\n"
    assert not (root / "inbox/Dana.md").exists()
    assert (root / "people/log.md").read_text() == (
        "---\ntype: person\n---\n[[people/Dana]] [[Dana|D]] [x](people/Dana.md)\n"
    )
    assert out["after"]["by_rule"] == {"misplaced": 1}
    assert [e["path"] for e in out["edits"]] == ["people/Dana.md", "people/log.md", "inbox/Dana.md"]


def test_enforce_move_cannot_go_with_repair(make_vault, capsys):
    import enforce

    root = make_vault({"schema.json": SCHEMA, "a.md": "---\ntype: person\n---\n"})
    assert enforce.main([str(root), "--repair", "--move"]) == 2


def test_a_case_only_rename_and_a_symlink(make_vault, capsys):
    root = make_vault({"note.md": "x\n", "s.md": "[[note]] [[Note#H]]\n"})
    code, out = mv(root, "note.md", "Note.md", "--apply", capsys=capsys)
    assert code == 0 and out["links"] == []  # [[note]] still resolves: its case is not "fixed"
    assert sorted(p.name for p in root.glob("*.md")) == ["Note.md", "s.md"]
    os.symlink(root / "Note.md", root / "link.md")
    assert mv(root, "link.md", "other.md", "--apply", capsys=capsys)[0] == 2  # not a file of the vault (BR-31)
    assert (root / "Note.md").read_text() == "x\n"


def test_a_new_name_that_cannot_be_written_rolls_the_whole_run_back(make_vault, capsys, monkeypatch):
    from autograph.write import replace

    root = make_vault({"a.md": "x\n", "s.md": "[[a]]\n", "t.md": "[x](a.md)\n"})
    before = snapshot(root)
    create = replace._create

    def refuse(target, *rest, **kw):
        if str(target).endswith("b.md"):
            raise OSError(28, "No space left on device")
        return create(target, *rest, **kw)

    monkeypatch.setattr(replace, "_create", refuse)
    code, out = mv(root, "a.md", "b.md", "--apply", capsys=capsys)
    assert code == 4 and out["failed"][0]["path"] == "b.md" and out["rolled_back"]
    assert snapshot(root) == before  # links and the old name as they were


def test_enforce_move_rolls_back_when_a_new_name_cannot_be_written(make_vault, capsys, monkeypatch):
    import enforce
    from autograph.write import replace

    root = make_vault(
        {
            "schema.json": SCHEMA,
            "inbox/Dana.md": "---\ntype: human\n---\nDana\n",
            "log.md": "[[inbox/Dana]]\n",
        }
    )
    before = snapshot(root)
    create = replace._create

    def refuse(target, *rest, **kw):
        if "people" in str(target):
            raise OSError(28, "No space left on device")
        return create(target, *rest, **kw)

    monkeypatch.setattr(replace, "_create", refuse)
    assert enforce.main([str(root), "--apply", "--move", "--json"]) == 4
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["rolled_back"] and snapshot(root) == before
    # the new name not written, so the old one was not trashed either
    assert sorted(item["path"] for item in out["not_moved"]) == ["inbox/Dana.md", "people/Dana.md"]
    assert "rolled back: no card moved" in captured.err


def test_an_old_name_edited_during_the_move_rolls_the_whole_move_back(make_vault, capsys):
    """F21: a person edits the moved note while mv runs; its old name cannot
    go to .trash, so the copy and every link rewrite are taken back and the
    edit stays at the old name."""
    from autograph.write import replace

    root = make_vault({"a.md": "x\n", "s.md": "[[a]]\n", "t.md": "[x](a.md)\n"})

    edited = []

    def edit_the_moved_note(stage, path):
        if stage == "read" and path.endswith("s.md") and not edited:
            edited.append(path)
            with open(root / "a.md", "a") as handle:
                handle.write("a person's line\n")

    replace._test_hook = edit_the_moved_note
    try:
        code, out = mv(root, "a.md", "b.md", "--apply", capsys=capsys)
    finally:
        replace._test_hook = None
    assert code == 4 and out["rolled_back"]
    assert [item["path"] for item in out["not_moved"]] == ["a.md"]
    assert snapshot(root) == {"a.md": b"x\na person's line\n", "s.md": b"[[a]]\n", "t.md": b"[x](a.md)\n"}


def test_a_link_note_that_cannot_be_written_rolls_the_move_back(make_vault, capsys):
    """A linking note without a write bit keeps its old link: the move would
    leave that link broken, so it is rolled back and reported."""
    root = make_vault({"a.md": "x\n", "s.md": "[[a]]\n", "t.md": "[x](a.md)\n"})
    os.chmod(root / "t.md", 0o444)
    before = snapshot(root)
    code, out = mv(root, "a.md", "b.md", "--apply", capsys=capsys)
    assert code == 4 and out["rolled_back"] and out["not_moved"][0]["path"] == "t.md"
    assert snapshot(root) == before


def test_a_linking_note_edited_before_the_rollback_gets_its_links_pointed_back(make_vault):
    """The rollback cannot take back a linking note someone edited after the
    move rewrote it: its links are pointed back at the old name on the text
    it now holds, so the edit stays and no link is left broken."""
    from autograph.graph import moves
    from autograph.schema.model import load_schema
    from autograph.write import store

    root = make_vault({"inbox/Dana.md": "# Dana\n", "a.md": "see [[inbox/Dana|D]]\n", "b.md": "[[inbox/Dana]]\n"})
    vault = Vault.open(root)
    plan = moves.plan_move(vault, {"inbox/Dana.md": "people/Dana.md"}, load_schema(root))
    result = store.apply(root, plan.changes, command="graph.py mv")
    assert (root / "a.md").read_text() == "see [[people/Dana|D]]\n"
    with open(root / "a.md", "a") as handle:
        handle.write("a line typed meanwhile\n")
    undone = moves.roll_back(root, result.run_id, moves=plan.moves)
    assert (root / "inbox/Dana.md").exists() and not (root / "people/Dana.md").exists()
    assert (root / "a.md").read_text() == "see [[inbox/Dana|D]]\na line typed meanwhile\n"
    assert (root / "b.md").read_text() == "[[inbox/Dana]]\n"
    assert undone.conflicts == [] and "a.md" in undone.written


@pytest.mark.parametrize("private", [False, True], ids=["copied", "renamed"])
def test_a_moved_note_edited_before_the_rollback_stays_moved_and_every_link_follows_it(make_vault, private):
    """The rollback cannot take the moved note back (edited at its new
    name): it stays there, its old name is not brought back beside it, and
    every link, taken back or not, leads to it."""
    from autograph.graph import moves
    from autograph.schema.model import load_schema
    from autograph.write import store

    root = make_vault({"inbox/Dana.md": "# Dana\n", "a.md": "see [[inbox/Dana|D]]\n", "b.md": "[[inbox/Dana]]\n"})
    if private:
        os.chmod(root / "inbox/Dana.md", 0o600)
    vault = Vault.open(root)
    plan = moves.plan_move(vault, {"inbox/Dana.md": "people/Dana.md"}, load_schema(root))
    result = store.apply(root, plan.changes, command="graph.py mv")
    with open(root / "people/Dana.md", "a") as handle:
        handle.write("phone: 555-0100\n")
    undone = moves.roll_back(root, result.run_id, moves=plan.moves, notes=[c.path for c in plan.links])
    assert not (root / "inbox/Dana.md").exists()
    assert (root / "people/Dana.md").read_text() == "# Dana\nphone: 555-0100\n"
    assert len(undone.conflicts) == 1 and undone.conflicts[0].path in ("people/Dana.md", "inbox/Dana.md")
    resolved = resolved_links(root)
    assert resolved["a.md"] == ["people/Dana.md"] and resolved["b.md"] == ["people/Dana.md"], resolved


@pytest.mark.parametrize("form", ["NFD", "NFC"])
def test_a_name_that_differs_only_in_unicode_normalisation_is_refused(make_vault, capsys, form):
    """F22: ``Café`` decomposed and composed are one name to Obsidian's
    resolver (NFC, then lower case), as a case-only difference is."""
    import unicodedata

    other = "NFC" if form == "NFD" else "NFD"
    existing = unicodedata.normalize(form, "Café.md")
    root = make_vault({existing: "theirs\n", "a.md": "x\n", "s.md": "[[a]]\n"})
    before = snapshot(root)
    for dest in (unicodedata.normalize(other, "Café.md"), unicodedata.normalize(other, "CAFÉ.md")):
        code, _ = mv(root, "a.md", dest, "--apply", capsys=capsys)
        assert code == 2
        assert snapshot(root) == before


@pytest.mark.parametrize(
    "dest", ["people/Dana | Pipe.md", "people/Dana #1.md", "people/Dana^2.md", "[Dana].md", "people/Dana.md.md",
             "people/ Dana.md", "people/Dana .md", "te#am/Dana.md", "people/Da\nna.md", "a`b.md", "a$b.md",
             "a%%b.md", "a<!--b.md", "a\\b.md", "a:b.md", "a\u2028b.md", "a\x85b.md"],
)  # fmt: skip
def test_a_name_no_link_can_reach_is_refused(make_vault, capsys, dest):
    """Obsidian ends a link's target at # ^ [ ] |, trims it, and reads
    [[x.md]] as the note x.md: a move to such a name would leave every link
    to the note broken, so it is refused before anything is written."""
    root = make_vault({"inbox/Dana.md": "x\n", "l.md": "[[Dana]] [[inbox/Dana|D]]\n"})
    before = snapshot(root)
    assert graph.main(["mv", str(root), "inbox/Dana.md", dest, "--apply"]) == 2
    assert "no link can reach" in capsys.readouterr().err
    assert snapshot(root) == before


def test_a_folder_whose_name_holds_a_hash_moves_when_the_name_is_kept(make_vault, capsys):
    root = make_vault({"C#/x.md": "x\n", "l.md": "[[x]]\n"})
    code, out = mv(root, "C#/x.md", "C#/y.md", "--apply", capsys=capsys)
    assert code == 0 and (root / "C#/y.md").exists() and (root / "l.md").read_text() == "[[y]]\n"


def test_a_hard_linked_note_is_refused_and_kept_whole(make_vault, capsys, tmp_path):
    """F12: a copy under the new name would split the file's hard links (as
    the store refuses to replace such a file): the move is refused."""
    root = make_vault({"a.md": "x\n", "s.md": "[[a]]\n"})
    other = tmp_path / "a.hard"
    os.link(root / "a.md", other)
    before = snapshot(root)
    code, _ = mv(root, "a.md", "b.md", "--apply", capsys=capsys)
    assert code == 2 and snapshot(root) == before
    assert os.path.samefile(root / "a.md", other)


def test_a_renamed_file_is_reported_under_its_old_name_with_its_new_one(make_vault, capsys):
    """F12: a file moved by rename (mode 444) read "X moved from X"."""
    root = make_vault({"a.md": "x\n", "s.md": "[[a]]\n"})
    os.chmod(root / "a.md", 0o444)
    assert graph.main(["mv", str(root), "a.md", "b.md", "--apply"]) == 0
    out = capsys.readouterr().out
    assert "a.md  moved to b.md" in out and "moved from a.md" not in out


def test_a_symlink_to_a_moved_note_is_named_and_keeps_its_folder_from_being_empty(make_vault, capsys):
    root = make_vault({"inbox/Dana.md": "# Dana\n", "l.md": "[[Dana]]\n"})
    os.symlink("inbox/Dana.md", root / "Dana-alias.md")
    os.symlink("Dana.md", root / "inbox" / "D.md")
    code, out = mv(root, "inbox/Dana.md", "people/", "--apply", capsys=capsys)
    assert code == 0
    assert out["warnings"] == [
        "Dana-alias.md is a symlink to a file that moves to people/Dana.md; it is left leading nowhere",
        "inbox/D.md is a symlink to a file that moves to people/Dana.md; it is left leading nowhere",
    ]


def test_a_line_added_to_the_moved_note_during_the_run_stays_in_it_and_the_move_completes(make_vault):
    """The note is written under its new name first; a person appends to it
    while the links are still being rewritten: their line is kept on top of
    the copy, the move completes and every link leads to it."""
    import threading
    import time

    files = {"inbox/Kim.md": "# Kim\n\nKim's text.\n"}
    files |= {f"notes/n{k:03}.md": "Met [[Kim]] and [[inbox/Kim|K]].\n" for k in range(300)}
    root = make_vault(files)
    proc = subprocess.Popen(
        [sys.executable, GRAPH, "mv", str(root), "inbox/Kim.md", "people/Kim.md", "--apply", "--json"],
        stdout=subprocess.PIPE,
    )

    def person():
        while proc.poll() is None and not (root / "people/Kim.md").exists():
            time.sleep(0.0002)
        if proc.poll() is None:
            with open(root / "people/Kim.md", "a") as handle:
                handle.write("a line typed meanwhile\n")

    thread = threading.Thread(target=person)
    thread.start()
    out, _ = proc.communicate(timeout=120)
    thread.join()
    report = json.loads(out)
    assert proc.returncode == 0 and report["not_moved"] == [] and report["rolled_back"] is None, report
    assert not (root / "inbox/Kim.md").exists()
    assert (root / "people/Kim.md").read_text() == "# Kim\n\nKim's text.\na line typed meanwhile\n"
    assert (root / "notes/n000.md").read_text() == "Met [[Kim]] and [[people/Kim|K]].\n"


def test_a_folder_is_not_called_left_empty_when_the_move_was_rolled_back(make_vault, capsys):
    root = make_vault({"inbox/Dana.md": "# Dana\n", "s.md": "[[inbox/Dana]]\n", "t.md": "[x](inbox/Dana.md)\n"})
    os.chmod(root / "t.md", 0o444)
    code, out = mv(root, "inbox/Dana.md", "people/", "--apply", capsys=capsys)
    assert code == 4 and out["rolled_back"] and (root / "inbox/Dana.md").exists()
    assert out["warnings"] == []
    code, dry = mv(root, "inbox/Dana.md", "people/", capsys=capsys)
    assert dry["warnings"] == ["inbox/ is left empty (autograph removes no folder)"]
