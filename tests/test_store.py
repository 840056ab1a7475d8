"""autograph.write.store: every write is atomic, change-checked and confined to the vault.

DESIGN.md ("Writes and data safety"): a temporary file in the same folder,
flush, fsync, ``os.replace``; the file keeps its mode; an edit whose file
changed since it was read is skipped and reported as a conflict, never
forced; paths from data are confined to the vault; derived files live under
``.graph/``.
"""

from __future__ import annotations

import copy
import os
import pickle
import stat
from pathlib import Path

import pytest
from autograph.write.changes import Edit, diff
from autograph.write.confine import PathError, TargetError, confine
from autograph.write.derived import append_line, write_derived
from autograph.write.replace import Conflict, replace_file
from autograph.write.store import apply
from hypothesis import given, settings
from hypothesis import strategies as st


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def listing(folder: Path) -> list[str]:
    """Every file under ``folder`` (relative, sorted), dot files included."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink())


@pytest.fixture
def umask():
    """Set a known umask for the test and restore the old one."""
    old = os.umask(0o027)
    yield 0o027
    os.umask(old)


# ---------------------------------------------------------------------------
# replace_file


def test_replace_file_writes_the_new_bytes_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "note.md"
    target.write_bytes(b"old\r\n")
    replace_file(target, b"old\r\n", b"new\r\n")
    assert target.read_bytes() == b"new\r\n"
    assert listing(tmp_path) == ["note.md"]


@pytest.mark.parametrize("file_mode", [0o600, 0o640, 0o644, 0o755])
def test_replace_file_keeps_the_files_mode(tmp_path, file_mode):
    target = tmp_path / "note.md"
    target.write_bytes(b"old")
    target.chmod(file_mode)
    replace_file(target, b"old", b"new")
    assert mode(target) == file_mode


def test_replace_file_replaces_the_inode_atomically(tmp_path):
    # os.replace: a reader holding the old file still sees the old bytes
    target = tmp_path / "note.md"
    target.write_bytes(b"old")
    with open(target, "rb") as reader:
        replace_file(target, b"old", b"new")
        assert reader.read() == b"old"
    assert target.read_bytes() == b"new"


def test_new_file_gets_the_umask_mode(tmp_path, umask):
    target = tmp_path / "new.md"
    replace_file(target, None, b"hello")
    assert target.read_bytes() == b"hello"
    assert mode(target) == 0o666 & ~umask


def test_new_file_in_a_new_folder(tmp_path):
    target = tmp_path / "a" / "b" / "new.md"
    replace_file(target, None, b"x")
    assert target.read_bytes() == b"x"


@pytest.mark.parametrize(
    "on_disk, before",
    [
        pytest.param(b"changed by an agent", b"what the plan read", id="changed"),
        pytest.param(b"exists now", None, id="created-meanwhile"),
        pytest.param(b"what the plan read\n", b"what the plan read", id="one-byte-added"),
    ],
)
def test_conflict_when_the_file_changed_since_it_was_read(tmp_path, on_disk, before):
    target = tmp_path / "note.md"
    target.write_bytes(on_disk)
    target.chmod(0o640)
    with pytest.raises(Conflict):
        replace_file(target, before, b"the plan's new bytes")
    assert target.read_bytes() == on_disk
    assert mode(target) == 0o640
    assert listing(tmp_path) == ["note.md"]


def test_conflict_when_the_file_was_deleted_since_it_was_read(tmp_path):
    target = tmp_path / "gone.md"
    with pytest.raises(Conflict):
        replace_file(target, b"old", b"new")
    assert not target.exists()
    assert listing(tmp_path) == []


# ---------------------------------------------------------------------------
# apply


def test_apply_writes_unchanged_files_and_reports_conflicts(tmp_path):
    (tmp_path / "a.md").write_bytes(b"a")
    (tmp_path / "b.md").write_bytes(b"b changed meanwhile")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.md").write_bytes(b"c")
    result = apply(
        tmp_path,
        [
            Edit("a.md", b"a", b"A", "upper"),
            Edit("b.md", b"b", b"B", "upper"),
            Edit("sub/c.md", b"c", b"C", "upper"),
            Edit("new/d.md", None, b"D", "create"),
        ],
    )
    assert result.written == ["a.md", "sub/c.md", "new/d.md"]
    assert [item.path for item in result.conflicts] == ["b.md"]
    assert "changed since it was read" in result.conflicts[0].error
    assert (tmp_path / "a.md").read_bytes() == b"A"
    assert (tmp_path / "b.md").read_bytes() == b"b changed meanwhile"
    assert (tmp_path / "sub" / "c.md").read_bytes() == b"C"
    assert (tmp_path / "new" / "d.md").read_bytes() == b"D"
    assert [p for p in listing(tmp_path) if not p.startswith(".graph/")] == ["a.md", "b.md", "new/d.md", "sub/c.md"]


def test_apply_skips_edits_that_change_nothing(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"same")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    result = apply(tmp_path, [Edit("a.md", b"same", b"same")])
    assert (result.written, result.conflicts) == ([], [])
    assert path.stat().st_mtime_ns == 1_000_000_000


@pytest.mark.parametrize("bad", ["../outside.md", "/etc/passwd", "a/../../outside.md"])
def test_apply_refuses_every_edit_if_one_path_leaves_the_vault(tmp_path, bad):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_bytes(b"a")
    with pytest.raises(PathError):
        apply(vault, [Edit("a.md", b"a", b"A"), Edit(bad, None, b"x")])
    assert (vault / "a.md").read_bytes() == b"a"
    assert listing(tmp_path) == ["vault/a.md"]


# ---------------------------------------------------------------------------
# confine


def test_confine_gives_the_absolute_path_inside_the_vault(tmp_path):
    (tmp_path / "a").mkdir()
    assert confine(tmp_path, "a/b.md") == Path(os.path.realpath(tmp_path)) / "a" / "b.md"


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "/",
        "\\Windows\\system.ini",
        "C:\\notes\\a.md",
        "C:/notes/a.md",
        "..",
        "../a.md",
        "a/../../b.md",
        "a/../b.md",
        "..\\a.md",
        "a\\..\\..\\b.md",
    ],
)
def test_confine_refuses_absolute_paths_and_dot_dot(tmp_path, path):
    with pytest.raises(PathError) as raised:
        confine(tmp_path, path)
    assert repr(path) in str(raised.value)


def test_confine_refuses_a_symlink_that_leads_out_of_the_vault(tmp_path):
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (vault / "escape").symlink_to(outside, target_is_directory=True)
    (vault / "escape.md").symlink_to(outside / "x.md")
    for path in ("escape/x.md", "escape", "escape.md"):
        with pytest.raises(PathError, match="outside the vault"):
            confine(vault, path)


def test_confine_allows_a_symlink_that_stays_inside(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "shared").symlink_to("notes", target_is_directory=True)
    assert confine(tmp_path, "shared/a.md") == Path(os.path.realpath(tmp_path)) / "notes" / "a.md"


def test_apply_does_not_write_through_a_symlink_out_of_the_vault(tmp_path):
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (outside / "x.md").write_bytes(b"outside")
    (vault / "x.md").symlink_to(outside / "x.md")
    with pytest.raises(PathError):
        apply(vault, [Edit("x.md", b"outside", b"overwritten")])
    assert (outside / "x.md").read_bytes() == b"outside"


# ---------------------------------------------------------------------------
# Derived files: only under .graph/


def test_write_derived_writes_under_dot_graph(tmp_path):
    path = write_derived(tmp_path, "reports/health.json", b"{}")
    assert path == Path(os.path.realpath(tmp_path)) / ".graph" / "reports" / "health.json"
    assert path.read_bytes() == b"{}"
    write_derived(tmp_path, "reports/health.json", b'{"v": 2}')
    assert path.read_bytes() == b'{"v": 2}'
    assert listing(tmp_path) == [".graph/reports/health.json"]


@pytest.mark.parametrize("name", ["../escape.json", "a/../../escape.json", "..", "x/../../../escape.json"])
def test_write_derived_refuses_to_leave_dot_graph(tmp_path, name):
    vault = tmp_path / "vault"
    vault.mkdir()
    with pytest.raises(PathError):
        write_derived(vault, name, b"x")
    with pytest.raises(PathError):
        append_line(vault, name, "x")
    assert listing(tmp_path) == []


def test_derived_files_refuse_a_dot_graph_symlinked_out_of_the_vault(tmp_path):
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (vault / ".graph").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathError):
        write_derived(vault, "cache.json", b"x")
    with pytest.raises(PathError):
        append_line(vault, "history.jsonl", "x")
    assert listing(outside) == []


def test_append_line_adds_exactly_one_line_per_call(tmp_path):
    path = append_line(tmp_path, "history.jsonl", '{"score": 1}')
    append_line(tmp_path, "history.jsonl", '{"score": 2}\n')
    append_line(tmp_path, "history.jsonl", "")
    append_line(tmp_path, "history.jsonl", "naïve ✓")
    assert path == Path(os.path.realpath(tmp_path)) / ".graph" / "history.jsonl"
    assert path.read_bytes() == '{"score": 1}\n{"score": 2}\n\nnaïve ✓\n'.encode()


def test_append_line_never_writes_more_than_one_line(tmp_path):
    """A line with a line break inside is refused or kept on one line, never split."""
    append_line(tmp_path, "log.txt", "first")
    try:
        append_line(tmp_path, "log.txt", "two\nlines")
    except ValueError:
        pass
    lines = (tmp_path / ".graph" / "log.txt").read_bytes().splitlines()
    assert lines[0] == b"first"
    assert len(lines) in (1, 2), lines


# ---------------------------------------------------------------------------
# diff


def test_diff_of_a_change():
    edit = Edit("notes/a.md", b"---\nstatus: draft\n---\nBody\n", b"---\nstatus: active\n---\nBody\n")
    assert diff(edit) == (
        "--- a/notes/a.md\n+++ b/notes/a.md\n@@ -1,4 +1,4 @@\n ---\n-status: draft\n+status: active\n ---\n Body\n"
    )


def test_diff_of_a_new_file():
    assert diff(Edit("new.md", None, b"one\ntwo\n")) == "--- a/new.md\n+++ b/new.md\n@@ -0,0 +1,2 @@\n+one\n+two\n"


def test_diff_of_no_change_is_empty():
    assert diff(Edit("a.md", b"same\n", b"same\n")) == ""


def test_diff_of_bytes_that_are_not_utf8_does_not_raise():
    text = diff(Edit("a.md", b"caf\xe9\n", b"cafe\n"))
    assert text.splitlines()[3:] == ["-caf\ufffd", "+cafe"]


def test_diff_puts_each_line_on_its_own_line_without_a_final_newline():
    lines = diff(Edit("a.md", b"one\ntwo", b"one\nTWO")).splitlines()
    assert lines[:3] == ["--- a/a.md", "+++ b/a.md", "@@ -1,2 +1,2 @@"]
    assert " one" in lines
    assert "-two" in lines
    assert "+TWO" in lines


# ---------------------------------------------------------------------------
# Derived files are never written through a symlink under .graph/


def test_derived_files_refuse_a_cache_file_symlinked_onto_a_note(tmp_path):
    """.graph/cache/notes.json -> ../../a.md: PathError, and a.md keeps its bytes."""
    (tmp_path / "a.md").write_bytes(b"---\ntitle: A\n---\nBody [[b]]\n")
    (tmp_path / ".graph" / "cache").mkdir(parents=True)
    (tmp_path / ".graph" / "cache" / "notes.json").symlink_to("../../a.md")
    with pytest.raises(PathError):
        write_derived(tmp_path, "cache/notes.json", b"{}")
    with pytest.raises(PathError):
        append_line(tmp_path, "cache/notes.json", "{}")
    assert (tmp_path / "a.md").read_bytes() == b"---\ntitle: A\n---\nBody [[b]]\n"


def test_derived_files_refuse_a_history_file_symlinked_onto_a_note(tmp_path):
    """.graph/health-history.jsonl -> ../b.md: append_line raises PathError, b.md unchanged."""
    (tmp_path / "b.md").write_bytes(b"B\n")
    (tmp_path / ".graph").mkdir()
    (tmp_path / ".graph" / "health-history.jsonl").symlink_to("../b.md")
    with pytest.raises(PathError):
        append_line(tmp_path, "health-history.jsonl", '{"score": 1}')
    with pytest.raises(PathError):
        write_derived(tmp_path, "health-history.jsonl", b"x")
    assert (tmp_path / "b.md").read_bytes() == b"B\n"


def test_derived_files_refuse_a_dot_graph_symlinked_onto_a_folder_of_notes(tmp_path):
    """.graph -> notes (inside the vault): PathError, nothing created in notes/."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "n.md").write_bytes(b"n")
    (tmp_path / ".graph").symlink_to("notes", target_is_directory=True)
    with pytest.raises(PathError):
        write_derived(tmp_path, "cache/notes.json", b"{}")
    with pytest.raises(PathError):
        append_line(tmp_path, "health-history.jsonl", "x")
    assert listing(tmp_path / "notes") == ["n.md"]


def test_derived_files_refuse_a_symlinked_folder_below_dot_graph(tmp_path):
    """.graph/cache -> ../notes: PathError, nothing created in notes/."""
    (tmp_path / "notes").mkdir()
    (tmp_path / ".graph").mkdir()
    (tmp_path / ".graph" / "cache").symlink_to("../notes", target_is_directory=True)
    with pytest.raises(PathError):
        write_derived(tmp_path, "cache/notes.json", b"{}")
    with pytest.raises(PathError):
        append_line(tmp_path, "cache/log.jsonl", "x")
    assert listing(tmp_path / "notes") == []


def test_discard_derived_removes_only_a_regular_file_under_graph(tmp_path):
    from autograph.write import derived
    from autograph.write.confine import PathError

    (tmp_path / "a.md").write_text("keep\n", encoding="utf-8")
    (tmp_path / ".graph").mkdir()
    (tmp_path / ".graph" / "x.sqlite").write_bytes(b"junk")
    derived.discard_derived(tmp_path, "x.sqlite")
    assert not (tmp_path / ".graph" / "x.sqlite").exists()
    derived.discard_derived(tmp_path, "x.sqlite")  # absent: nothing to do
    (tmp_path / ".graph" / "link.sqlite").symlink_to("../a.md")
    with pytest.raises(PathError):
        derived.discard_derived(tmp_path, "link.sqlite")
    (tmp_path / ".graph" / "dir.sqlite").mkdir()
    with pytest.raises(TargetError):
        derived.discard_derived(tmp_path, "dir.sqlite")
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "keep\n"


def test_diff_of_a_move_or_trash_names_where_the_file_goes():
    from autograph.write.changes import Move, Trash

    assert diff(Move("a.md", "b/a.md", b"x")) == "rename a.md -> b/a.md\n"
    assert diff(Trash("a.md", b"x")) == "move a.md -> .trash/<run-id>/a.md\n"


@pytest.mark.parametrize("theirs", ["appended", "a line apart edited"])
def test_an_edit_on_top_of_ours_after_the_write_keeps_both_and_undo_keeps_theirs(tmp_path, theirs):
    """A person edits a note the run already wrote, before the run ends
    (a line appended, or a line apart from ours changed): the file holds
    our edit and theirs, so it counts as merged (not "saved over"), and an
    undo puts back their version without ours."""
    import threading
    import time

    from autograph.write import journal
    from autograph.write.undo import plan_undo

    root = tmp_path / "vault"
    root.mkdir()
    names = [f"n{k:03}.md" for k in range(300)]
    for name in names:
        (root / name).write_bytes(b"---\ndescription: a note\nstatus: draft\n---\nline one\nline two\n")
    before = (root / names[0]).read_bytes()
    after = before.replace(b"draft", b"active")

    def edit(data: bytes) -> bytes:
        if theirs == "appended":
            return data + b"a line typed meanwhile\n"
        return data.replace(b"line two", b"line two, edited")

    seen = threading.Event()

    def person():
        deadline = time.time() + 30
        while time.time() < deadline and (root / names[0]).read_bytes() != after:
            time.sleep(0.001)
        (root / names[0]).write_bytes(edit(after))
        seen.set()

    thread = threading.Thread(target=person)
    thread.start()
    result = apply(root, [Edit(name, before, after) for name in names])
    thread.join()
    assert seen.is_set()
    assert names[0] in result.written and result.conflicts == []
    assert (root / names[0]).read_bytes() == edit(after)
    run = journal.load(root / ".graph", result.run_id)
    assert [c.result for c in run.changes if c.path == names[0]] == ["merged"]
    changes, conflicts = plan_undo(root, run)
    assert conflicts == []
    apply(root, changes)
    assert (root / names[0]).read_bytes() == edit(before)
    assert (root / names[1]).read_bytes() == before


@pytest.mark.parametrize(
    ("before", "after", "now"),
    [
        # they typed over our line, while the same text stands on another line
        (b"---\nstatus: draft\n---\nTemplate:\nstatus: active\n",
         b"---\nstatus: active\n---\nTemplate:\nstatus: active\n",
         b"---\nstatus: done\n---\nTemplate:\nstatus: active\n"),
        # their line next to ours, among blank lines a diff could place elsewhere
        (b"a\n\n\n\nb\n", b"a\nX\n\n\nb\n", b"a\nX\n\nP\n\nb\n"),
    ],
)  # fmt: skip
def test_an_edit_that_cannot_be_told_apart_from_ours_is_a_conflict_and_undo_leaves_it(tmp_path, before, after, now):
    """An undo must never change a line nobody edited: when their edit
    touches ours, or a line diff could place it on another line, the note is
    a conflict, left as they made it."""
    from autograph.write.merge import edited_on_top

    assert edited_on_top(Edit("x.md", before, after), now) is None


def test_a_line_appended_to_a_note_without_a_final_newline_stays_a_line_of_its_own():
    from autograph.write.merge import edited_on_top

    before = b"## Related\n- [[A]]\n- [[Gone]]"
    after = b"## Related\n- [[A]]\n"
    assert edited_on_top(Edit("x.md", before, after), after + b"- [[B]]\n") == before + b"\n- [[B]]\n"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.binary(max_size=40), st.binary(max_size=600), st.binary(max_size=40))
def test_an_edit_gives_back_the_bytes_it_was_given(head, old, tail, new):
    """An Edit keeps its after as the part that differs from before (one
    copy of a note, not two): whatever the bytes, after is what was given,
    and an edit equals one made from the same bytes."""
    before, after = head + old + tail, head + new + tail
    edit = Edit("a.md", before, after, "why")
    assert edit.after == after and edit.before == before
    assert edit == Edit("a.md", before, after, "why") and edit.replace(reason="other").after == after
    assert Edit("a.md", None, after).after == after
    assert copy.copy(edit) == edit and pickle.loads(pickle.dumps(edit)) == edit
