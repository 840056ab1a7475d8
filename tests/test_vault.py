"""autograph.read.vault, autograph.read.note and autograph.read.index: which files a vault
holds, how a note's bytes are decoded, and the parsed-note cache in .graph/.

Expected values follow DESIGN.md (Obsidian ignores dot folders; a file that
is not UTF-8 is reported and never rewritten; derived files live in .graph/)
and the shared case BR-31 (symlinks).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import autograph.read.index
import autograph.read.links
import autograph.read.note
import autograph.read.vault
import pytest
from autograph.graph.health import health_report
from autograph.read.frontmatter import FrontmatterError
from autograph.read.index import NoteIndex
from autograph.read.note import BOM, Note, read_note
from autograph.read.vault import Vault, VaultError, walk
from autograph.schema.model import load_schema
from autograph.write.derived import save_index
from autograph.write.index_file import note_index

# ---------------------------------------------------------------------------
# Helpers


def walk_within(root: Path, seconds: float = 20) -> tuple[list[str], list[str]]:
    """``walk(root)``, failing (not hanging) if it never ends."""
    box: dict = {}

    def run() -> None:
        try:
            box["result"] = walk(root)
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the walk of {root} did not end within {seconds}s"
    if "error" in box:
        raise box["error"]
    return box["result"]


# ---------------------------------------------------------------------------
# Walking a vault


def test_walk_skips_dot_files_and_dot_folders(make_vault):
    root = make_vault(
        {
            "a.md": "A",
            "sub/b.md": "B",
            "img.png": b"\x89PNG",
            ".obsidian/app.json": "{}",
            ".obsidian/plugins/x/README.md": "x",
            ".trash/old.md": "old",
            ".git/HEAD": "ref",
            ".graph/cache/notes.json": "{}",
            "._a.md": "macOS resource fork",
            "sub/.hidden.md": "hidden",
            "sub/.dotdir/c.md": "c",
        }
    )
    files, warnings = walk(root)
    assert files == ["a.md", "img.png", "sub/b.md"]
    assert warnings == []


def test_walk_is_sorted_and_lists_attachments(make_vault):
    names = ["b.md", "B.md", "a b.md", "a.md", "a/x.md", "a/Z.pdf", "Board.canvas", "Tasks.base", "z/img.PNG", "é.md"]
    root = make_vault({name: "x" for name in names})
    vault = Vault.open(root)
    assert vault.files == sorted(names)
    assert vault.notes == sorted(name for name in names if name.endswith(".md"))


def test_walk_result_uses_forward_slashes(make_vault):
    root = make_vault({"a/b/c/Deep.md": "x"})
    assert walk(root)[0] == ["a/b/c/Deep.md"]


def test_symlinked_folder_and_file_are_listed_once_at_their_real_path(make_vault):
    """BR-31 item 2: the canonical path is the one without a symlink."""
    root = make_vault({"index.md": "[[Alpha]]", "notes/Alpha.md": "alpha"})
    (root / "shared").symlink_to("notes", target_is_directory=True)
    (root / "alias-note.md").symlink_to("notes/Alpha.md")
    files, warnings = walk_within(root)
    assert files == ["index.md", "notes/Alpha.md"]
    assert warnings == []


def test_symlink_sorting_before_its_target_is_still_not_canonical(make_vault):
    root = make_vault({"zz-real/Note.md": "x", "zz-real/img.png": b""})
    (root / "aa-link").symlink_to("zz-real", target_is_directory=True)
    (root / "Aa.md").symlink_to("zz-real/Note.md")
    assert walk_within(root)[0] == ["zz-real/Note.md", "zz-real/img.png"]


def test_symlink_to_a_new_place_inside_the_vault_is_followed(make_vault):
    # a symlink whose target the walk does not otherwise reach: listed at the link's path
    root = make_vault({".hidden-store/Note.md": "x", "a.md": "a"})
    (root / "visible").symlink_to(".hidden-store", target_is_directory=True)
    assert walk_within(root)[0] == ["a.md", "visible/Note.md"]


def test_symlink_loop_terminates(make_vault):
    root = make_vault({"a.md": "a", "sub/b.md": "b"})
    (root / "loop").symlink_to(".", target_is_directory=True)
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)
    (root / "sub" / "self").symlink_to("../sub", target_is_directory=True)
    files, _ = walk_within(root)
    assert files == ["a.md", "sub/b.md"]


def test_symlink_to_outside_the_vault_is_skipped_with_a_warning(tmp_path, make_vault):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    root = make_vault({"a.md": "a"})
    (root / "ext").symlink_to(outside, target_is_directory=True)
    (root / "secret-link.md").symlink_to(outside / "secret.md")
    files, warnings = walk_within(root)
    assert files == ["a.md"]
    assert sorted(warnings) == [
        "ext: symlink to outside the vault skipped",
        "secret-link.md: symlink to outside the vault skipped",
    ]


def test_broken_symlink_is_skipped_with_a_warning(make_vault):
    root = make_vault({"a.md": "a"})
    (root / "dangling.md").symlink_to("missing.md")
    files, warnings = walk_within(root)
    assert files == ["a.md"]
    assert warnings == ["dangling.md: broken symlink skipped"]


def test_vault_open_missing_folder(tmp_path):
    with pytest.raises(VaultError, match="not found"):
        Vault.open(tmp_path / "no-such-vault")


def test_vault_open_a_file(tmp_path):
    path = tmp_path / "note.md"
    path.write_text("x")
    with pytest.raises(VaultError, match="not a folder"):
        Vault.open(path)


def test_vault_note_is_read_once(make_vault):
    root = make_vault({"a.md": "---\nt: 1\n---\nbody"})
    vault = Vault.open(root)
    first = vault.note("a.md")
    (root / "a.md").write_text("changed")
    assert vault.note("a.md") is first
    assert first.properties == {"t": 1}


def test_vault_resolver_knows_every_file(make_vault):
    root = make_vault({"people/Dana.md": "x", "pics/a.png": b""})
    resolver = Vault.open(root).resolver
    assert resolver.resolve("dana", "x.md").path == "people/Dana.md"
    assert resolver.resolve("a.png", "x.md").path == "pics/a.png"


def test_upper_case_md_extension_is_an_attachment_not_a_note(make_vault):
    """UP.MD is in files but not in notes, and [[UP]] does not resolve to it as a note."""
    root = make_vault({"UP.MD": "# Upper\n", "a.md": "[[UP]]\n"})
    vault = Vault.open(root)
    assert vault.files == ["UP.MD", "a.md"]
    assert vault.notes == ["a.md"]
    assert vault.resolver.resolve("UP", "a.md").path is None


def test_upper_case_md_attachment_resolves_by_its_full_name(make_vault):
    """[[UP.MD]] names the attachment UP.MD by its full name, as [[pic.png]] does."""
    root = make_vault({"UP.MD": "# Upper\n", "a.md": "[[UP.MD]]\n"})
    assert Vault.open(root).resolver.resolve("UP.MD", "a.md").path == "UP.MD"


# ---------------------------------------------------------------------------
# Notes that cannot be read


def test_note_deleted_after_the_walk_comes_back_unreadable(make_vault):
    """Vault.open, then the file goes: vault.note gives text None and 'cannot read: ...'."""
    root = make_vault({"a.md": "[[gone]]\n", "gone.md": "[[a]]\n"})
    vault = Vault.open(root)
    (root / "gone.md").unlink()
    note = vault.note("gone.md")
    assert note.text is None
    assert note.error == "cannot read: No such file or directory"


def test_health_report_lists_a_note_deleted_after_the_walk_as_unreadable(make_vault):
    """health_report does not raise; the vanished note is under unreadable with its error."""
    root = make_vault({"a.md": "[[gone]]\n", "gone.md": "[[a]]\n"})
    vault = Vault.open(root)
    (root / "gone.md").unlink()
    report = health_report(vault, load_schema(root))
    assert report["unreadable"] == [{"path": "gone.md", "error": "cannot read: No such file or directory"}]
    assert report["notes"] == 2
    assert report["broken_links"] == []  # [[gone]] still names a file of the walk


def test_note_larger_than_the_limit_is_reported_and_not_read(make_vault, monkeypatch):
    """With MAX_NOTE_BYTES = 100, a 200-byte note is unreadable ('larger than ...') and its bytes never read."""
    root = make_vault({"big.md": "[[a]]" + "x" * 195, "a.md": "[[big]]\n"})
    monkeypatch.setattr(autograph.read.vault, "MAX_NOTE_BYTES", 100)
    opened: list[str] = []
    real = autograph.read.note.Note.from_bytes.__func__

    def recording(cls, path, data):
        opened.append(path)
        return real(cls, path, data)

    monkeypatch.setattr(autograph.read.note.Note, "from_bytes", classmethod(recording))
    vault = Vault.open(root)
    note = vault.note("big.md")
    assert (note.text, note.data) == (None, b"")
    assert note.error.startswith("larger than ") and note.error.endswith("not read")
    report = health_report(vault, load_schema(root))
    assert [row["path"] for row in report["unreadable"]] == ["big.md"]
    assert report["unreadable"][0]["error"] == note.error
    assert opened == ["a.md"]


def test_note_of_exactly_the_limit_is_read(make_vault, monkeypatch):
    """A note of MAX_NOTE_BYTES bytes is read as usual (the limit is 'larger than')."""
    root = make_vault({"edge.md": "[[a]]" + "x" * 95})
    monkeypatch.setattr(autograph.read.vault, "MAX_NOTE_BYTES", 100)
    note = Vault.open(root).note("edge.md")
    assert (note.error, len(note.text)) == (None, 100)


# ---------------------------------------------------------------------------
# Notes: bytes, BOM, encoding


def test_note_with_bom():
    data = BOM + b"---\r\ntitle: T\r\n---\r\nBody\r\n"
    note = Note.from_bytes("a.md", data)
    assert (note.bom, note.error) == (True, None)
    assert note.text == "---\r\ntitle: T\r\n---\r\nBody\r\n"
    assert note.properties == {"title": "T"}
    assert note.newline == "\r\n"
    assert note.body == "Body\r\n"
    assert note.body_line == 4
    assert note.encode(note.text) == data


def test_note_without_frontmatter():
    note = Note.from_bytes("folder/My Note.md", b"# Title\nText\n")
    assert note.frontmatter is None
    assert note.properties == {}
    assert (note.body, note.body_offset, note.body_line) == ("# Title\nText\n", 0, 1)
    assert (note.stem, note.folder) == ("My Note", "folder")


def test_note_with_invalid_frontmatter_keeps_its_body():
    note = Note.from_bytes("a.md", b"---\na: b: c\n---\nBody\n")
    assert note.properties == {}
    assert note.frontmatter.error is not None
    assert note.body == "Body\n"
    assert note.body_line == 4


@pytest.mark.parametrize(
    "data, offset, byte",
    [
        pytest.param(b"---\na: caf\xe9\n---\n", 10, "0xe9", id="latin-1"),
        pytest.param(BOM + b"ab\xff", 5, "0xff", id="after-a-bom"),
        pytest.param(b"\xfe\xff\x00a", 0, "0xfe", id="utf-16-bom"),
        pytest.param(b"ok \xe2\x82", 3, "0xe2", id="truncated-sequence"),
    ],
)
def test_invalid_utf8_is_reported_with_its_offset(data, offset, byte):
    note = Note.from_bytes("bad.md", data)
    assert note.text is None
    assert f"offset {offset}" in note.error
    assert byte in note.error
    assert note.properties == {}
    assert note.frontmatter is None
    assert note.body == ""


def test_invalid_utf8_note_is_never_rewritten():
    note = Note.from_bytes("bad.md", b"---\na: caf\xe9\n---\n")
    with pytest.raises(ValueError) as raised:
        note.with_property("a", "x")
    assert not isinstance(raised.value, FrontmatterError)
    assert "bad.md" in str(raised.value)
    with pytest.raises(ValueError):
        note.without_property("a")


def test_read_note_from_disk(make_vault):
    root = make_vault({"sub/n.md": b"caf\xc3\xa9\r\n"})
    note = read_note(root, "sub/n.md")
    assert (note.path, note.text, note.newline) == ("sub/n.md", "café\r\n", "\r\n")


# ---------------------------------------------------------------------------
# The parsed-note cache (.graph/cache/notes.json)

CACHE = Path(".graph") / "index.sqlite"
NOTES = {
    "a.md": '---\ntitle: A\ncompany: "[[b]]"\n---\n# A\nSee [[b#Part]] and ![[pic.png|40]].\n',
    "b.md": "---\ndescription: B\n---\n## Part\nBack to [[a]] ^blk\n",
    "c.md": "---\nbad: x: y\n---\nno links\n",
    "bad.md": b"caf\xe9 [[a]]\n",
    "pic.png": b"\x89PNG",
}


def index_everything(root: Path, use_cache: bool = True) -> dict:
    """Run one index over the vault (summaries and anchors of every note),
    save it, and return what it holds as plain data."""
    vault = Vault.open(root)
    index = note_index(vault, load_schema(root)) if use_cache else NoteIndex(vault)
    out = {}
    for path in vault.notes:
        summary = index.summary(path)
        anchors = index.anchors(path)
        out[path] = (
            summary.properties,
            summary.frontmatter,
            summary.error,
            summary.unreadable,
            [tuple(link) for link in summary.links],
            ([tuple(entry) for entry in anchors[0]], sorted(anchors[1])),
        )
    save_index(index)
    return out


def count_parses(monkeypatch) -> list[str]:
    """Record every note the index parses (instead of taking it from the cache)."""
    calls: list[str] = []
    parts = autograph.read.index.summarize_parts

    def counting_parts(note):  # every parse goes through it: the index file's update's and the index's own
        calls.append(note.path)
        return parts(note)

    monkeypatch.setattr(autograph.read.index, "summarize_parts", counting_parts)
    return calls


def read_cache(path: Path) -> tuple[None, dict]:
    """The notes the index file holds a summary of, as ``(None, {path: summary})``."""
    import sqlite3

    con = sqlite3.connect(path)
    try:
        return None, dict(con.execute("SELECT path, summary FROM docs"))
    finally:
        con.close()


def test_first_run_writes_the_cache(make_vault):
    root = make_vault(NOTES)
    index_everything(root)
    _, rows = read_cache(root / CACHE)
    assert sorted(rows) == ["a.md", "b.md", "bad.md", "c.md"]


def test_second_run_reads_every_note_from_the_cache(make_vault, monkeypatch):
    root = make_vault(NOTES)
    first = index_everything(root)

    def must_not_parse(*args):
        raise AssertionError(f"{args} was parsed although the cache holds it")

    monkeypatch.setattr(autograph.read.index, "summarize", must_not_parse)
    monkeypatch.setattr(autograph.read.index, "summarize_parts", must_not_parse)
    second = index_everything(root)
    assert second == first


def test_cached_summaries_are_what_the_notes_hold(make_vault):
    root = make_vault(NOTES)
    index_everything(root)
    cached = index_everything(root)
    assert cached["a.md"][0] == {"title": "A", "company": "[[b]]"}
    assert [(link[0], link[1], link[2], link[3], link[4], link[5]) for link in cached["a.md"][4]] == [
        ("b", "", None, False, "property", 3),
        ("b", "Part", None, False, "wikilink", 6),
        ("pic.png", "", "40", True, "wikilink", 6),
    ]
    assert cached["b.md"][5] == ([(2, "part")], ["blk"])
    state, (line, column, reason) = cached["c.md"][1:3]
    assert (state, line, column) == ("invalid", 2, 7)
    assert cached["bad.md"][3].startswith("not valid UTF-8")
    assert "offset 3" in cached["bad.md"][3]


def test_a_note_whose_size_changed_is_parsed_again(make_vault, monkeypatch):
    root = make_vault(NOTES)
    index_everything(root)
    (root / "b.md").write_text("---\ndescription: B2\n---\nNow [[c]]\n", encoding="utf-8")
    calls = count_parses(monkeypatch)
    result = index_everything(root)
    assert calls == ["b.md"]
    assert result["b.md"][0] == {"description": "B2"}
    assert [link[0] for link in result["b.md"][4]] == ["c"]


def test_a_note_whose_mtime_changed_is_parsed_again(make_vault, monkeypatch):
    root = make_vault(NOTES)
    index_everything(root)
    path = root / "b.md"
    old = path.read_bytes()
    new = old.replace(b"description: B", b"description: Q")
    assert len(new) == len(old)
    stat = path.stat()
    path.write_bytes(new)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    calls = count_parses(monkeypatch)
    result = index_everything(root)
    assert calls == ["b.md"]
    assert result["b.md"][0] == {"description": "Q"}


def test_a_new_note_is_parsed_and_a_deleted_one_dropped(make_vault, monkeypatch):
    root = make_vault(NOTES)
    index_everything(root)
    (root / "d.md").write_text("new [[a]]\n")
    (root / "c.md").unlink()
    calls = count_parses(monkeypatch)
    result = index_everything(root)
    assert calls == ["d.md"]
    assert sorted(result) == ["a.md", "b.md", "bad.md", "d.md"]
    _, rows = read_cache(root / CACHE)
    assert sorted(rows) == ["a.md", "b.md", "bad.md", "d.md"]


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"not json at all", id="not-json"),
        pytest.param(b"", id="empty"),
        pytest.param(b'{"header": {"format": 1}', id="truncated"),
        pytest.param(b'{"header": {"format": 1}}\n["a.md", [1, 2]', id="old-format-cut-off"),
        pytest.param(b"[1, 2, 3]", id="a-list"),
        pytest.param(b'{"header": null, "notes": {"a.md": 1}}', id="wrong-header"),
        pytest.param(b"\xff\xfe\x00", id="binary"),
    ],
)
def test_a_corrupt_cache_is_ignored(make_vault, monkeypatch, garbage):
    root = make_vault(NOTES)
    expected = index_everything(root, use_cache=False)
    (root / CACHE).parent.mkdir(parents=True)
    (root / CACHE).write_bytes(garbage)
    calls = count_parses(monkeypatch)
    assert index_everything(root) == expected
    assert sorted(calls) == ["a.md", "b.md", "bad.md", "c.md"]
    # and it was replaced by a good one
    assert sorted(read_cache(root / CACHE)[1]) == ["a.md", "b.md", "bad.md", "c.md"]


def test_damaged_cache_rows_are_not_trusted(make_vault, monkeypatch):
    import sqlite3

    root = make_vault(NOTES)
    expected = index_everything(root, use_cache=False)
    index_everything(root)
    con = sqlite3.connect(root / CACHE)
    for path, row in [("a.md", '[{}, "valid"]'), ("b.md", "not json"), ("c.md", '["row", 1, 2, 3, 4, 5, 6]')]:
        con.execute("UPDATE docs SET summary = ? WHERE path = ?", (row, path))
    con.commit()
    con.close()
    calls = count_parses(monkeypatch)
    assert index_everything(root) == expected
    assert sorted(calls) == ["a.md", "b.md", "c.md"]


def test_use_cache_false_writes_nothing(make_vault):
    root = make_vault(NOTES)
    index_everything(root, use_cache=False)
    assert not (root / ".graph").exists()


def test_use_cache_false_ignores_an_existing_cache(make_vault, monkeypatch):
    root = make_vault(NOTES)
    index_everything(root)
    before = (root / CACHE).read_bytes()
    calls = count_parses(monkeypatch)
    index_everything(root, use_cache=False)
    assert sorted(calls) == ["a.md", "b.md", "bad.md", "c.md"]
    assert (root / CACHE).read_bytes() == before


def test_cache_of_another_vault_copy_is_not_trusted(make_vault, tmp_path, monkeypatch):
    root = make_vault(NOTES)
    index_everything(root)
    # the same cache file copied into another vault whose a.md has the same
    # size and modification time but other text
    text = NOTES["a.md"].replace("[[b#Part]]", "[[z#Part]]")
    other = make_vault({"a.md": text}, name="other")
    mtime = (root / "a.md").stat().st_mtime_ns
    os.utime(other / "a.md", ns=(mtime, mtime))
    (other / CACHE).parent.mkdir(parents=True)
    (other / CACHE).write_bytes((root / CACHE).read_bytes())
    calls = count_parses(monkeypatch)
    result = index_everything(other)
    assert calls == ["a.md"]
    assert [link[0] for link in result["a.md"][4]] == ["b", "z", "pic.png"]


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(make_vault):
    """Same size, mtime set back with os.utime: the change time differs, so health sees the new broken link."""
    root = make_vault({"a.md": "See [[b]].\n", "b.md": "[[a]]\n"})
    vault = Vault.open(root)
    index = note_index(vault, load_schema(root))
    assert health_report(vault, load_schema(root), index)["broken_links"] == []
    save_index(index)
    assert (root / CACHE).is_file()

    path = root / "a.md"
    before = path.stat()
    path.write_bytes(b"See [[c]].\n")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    for _ in range(200):  # on a coarse clock, wait until the change time moves
        if path.stat().st_ctime_ns != before.st_ctime_ns:
            break
        time.sleep(0.01)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns

    vault = Vault.open(root)
    report = health_report(vault, load_schema(root), note_index(vault, load_schema(root)))
    assert [(r["source"], r["line"], r["target"]) for r in report["broken_links"]] == [("a.md", 1, "c")]


def _health_run(root: Path) -> dict:
    vault = Vault.open(root)
    index = note_index(vault, load_schema(root))
    report = health_report(vault, load_schema(root), index)
    save_index(index)
    return report


def test_cached_link_targets_are_reused_while_the_file_list_holds(make_vault, monkeypatch):
    """A warm run with no file added or removed resolves no link again (no resolver is built)."""
    root = make_vault({"a.md": "[[b]] [[missing]]\n", "b.md": "[[a]]\n"})
    first = _health_run(root)
    built = []
    real = autograph.read.links.Resolver
    monkeypatch.setattr(autograph.read.links, "Resolver", lambda files: built.append(1) or real(files))
    second = _health_run(root)
    assert built == []
    assert (
        second["broken_links"]
        == first["broken_links"]
        == [{"source": "a.md", "line": 1, "target": "missing", "kind": "wikilink"}]
    )


def test_a_new_file_makes_cached_targets_resolve_again(make_vault):
    """After a note is added, a link that was broken resolves on the next (cached) run."""
    root = make_vault({"a.md": "[[b]] [[missing]]\n", "b.md": "[[a]]\n"})
    assert [r["target"] for r in _health_run(root)["broken_links"]] == ["missing"]
    (root / "missing.md").write_text("[[a]]\n", encoding="utf-8")
    assert _health_run(root)["broken_links"] == []


def test_a_second_candidate_makes_a_cached_link_ambiguous(make_vault):
    """After a second note with the same name appears, the cached link is reported ambiguous."""
    root = make_vault({"a.md": "[[b]]\n", "x/b.md": "[[a]]\n"})
    assert _health_run(root)["ambiguous_links"] == []
    (root / "y").mkdir()
    (root / "y" / "b.md").write_text("[[a]]\n", encoding="utf-8")
    ambiguous = _health_run(root)["ambiguous_links"]
    assert [(r["source"], r["resolved"], r["candidates"]) for r in ambiguous] == [
        ("a.md", "x/b.md", ["x/b.md", "y/b.md"])
    ]


def test_a_file_reached_through_a_file_symlink_and_a_folder_symlink_is_listed_once(tmp_path):
    """The walk counts a file once: through the first symlink (by path order)
    when no path without one reaches it, wherever the other one points."""
    root = tmp_path / "vault"
    (root / ".hid" / "sub").mkdir(parents=True)
    (root / "a").mkdir()
    (root / ".hid" / "x.md").write_text("x\n")
    (root / ".hid" / "sub" / "y.md").write_text("y\n")
    (root / "a" / "z.md").write_text("z\n")
    for name, target in [
        ("f.md", ".hid/x.md"),
        ("vis", ".hid"),
        ("alink", "a"),
        ("deep", ".hid/sub"),
        ("z.md", "a/z.md"),
    ]:
        (root / name).symlink_to(target)
    files, warnings = walk(root, {})
    assert files == ["a/z.md", "deep/y.md", "f.md"] and warnings == []
