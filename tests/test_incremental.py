"""Reading only what changed (issues 9 and 29): the index file
``.graph/index.sqlite`` and the stored health result.  Each test runs the
library twice or more on one vault and checks what was parsed (the
index's ``parsed`` count: by its update, and in this process) and what the
report says."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import autograph.read.parallel
import autograph.write.index_update
import pytest
from autograph.graph import health
from autograph.memory import search
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from autograph.write.derived import save_index
from autograph.write.index_file import note_index
from conftest import SCRIPTS
from hypothesis import example, given, settings
from hypothesis import strategies as st


def make_notes(make_vault, count: int = 60):
    text = "---\ndescription: note {i}\n---\n# N{i}\n[[n{next:03}]]\n"
    return make_vault({f"n{i:03}.md": text.format(i=i, next=(i + 1) % count) for i in range(count)})


def run(root, parsed: list | None = None, monkeypatch=None) -> dict:
    """One health run through the index file; ``parsed`` gets how many notes it parsed."""
    vault = Vault.open(root)
    index = note_index(vault, load_schema(root))
    report = health.report_for(vault, load_schema(root), index)
    if parsed is not None:
        parsed.append(index.parsed)
    return report


def edit(path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a new ctime shows the change even if size and mtime match


def test_unchanged_vault_reuses_the_stored_report_and_reads_no_note(make_vault, monkeypatch):
    root = make_notes(make_vault)
    first, parsed = [], []
    one = run(root, first)
    second = run(root, parsed, monkeypatch)
    assert first == [60] and parsed == [0]
    assert second == one


def test_a_changed_note_is_read_again_and_the_report_follows(make_vault, monkeypatch):
    root = make_notes(make_vault)
    assert run(root)["broken_links"] == []
    edit(root / "n005.md", "# N5\n[[missing]] [[n006]]\n")
    parsed: list = []
    report = run(root, parsed, monkeypatch)
    assert parsed == [1]
    assert [row["target"] for row in report["broken_links"]] == ["missing"]
    assert report["description_coverage"] == round(59 / 60, 4)


def test_a_schema_change_recomputes_the_report(make_vault):
    root = make_notes(make_vault)
    assert run(root)["hubs"] == []
    (root / "schema.json").write_text(json.dumps({"hubs": {"names": ["n000"]}}), encoding="utf-8")
    parsed: list = []
    assert run(root, parsed)["hubs"] == ["n000.md"]
    assert parsed == [0]  # the hub column derived again from the stored properties, no note read
    con = sqlite3.connect(root / ".graph" / "index.sqlite")
    assert con.execute("SELECT path FROM docs WHERE hub = 1").fetchall() == [("n000.md",)]
    assert con.execute("SELECT path FROM docs WHERE near_hub = 1").fetchall() == [("n001.md",)]


def test_a_new_file_recomputes_the_report(make_vault):
    root = make_notes(make_vault)
    (root / "n001.md").write_text("[[img.png]]\n", encoding="utf-8")
    assert [row["target"] for row in run(root)["broken_links"]] == ["img.png"]
    (root / "img.png").write_bytes(b"")
    assert run(root)["broken_links"] == []


def test_a_note_is_parsed_once_whichever_command_sees_it_first(make_vault):
    """health then search, and search then health: the second reads no note."""
    root = make_notes(make_vault)
    schema = load_schema(root)
    parsed: list = []
    run(root, parsed)
    opened, stamps = search.open_vault(root)
    assert search.open_index(opened, schema, stamps=stamps).reread == 0
    edit(root / "n007.md", "# N7\n[[n008]] fresh words\n")
    opened, stamps = search.open_vault(root)
    index = search.open_index(opened, schema, stamps=stamps)
    assert index.reread == 1
    assert [hit.path for hit in search.search(index, opened, schema, "fresh")] == ["n007.md"]
    run(root, parsed)
    assert parsed == [60, 0]


def test_the_files_it_replaced_are_removed_on_first_use(make_vault):
    root = make_notes(make_vault, 5)
    graph = root / ".graph"
    (graph / "cache").mkdir(parents=True)
    for name in ("search.sqlite", "search.sqlite-wal", "cache/notes.jsonl", "cache/notes-delta.jsonl"):
        (graph / name).write_bytes(b"old")
    run(root)
    left = sorted(str(p.relative_to(graph)) for p in graph.rglob("*") if p.is_file())
    assert [name for name in left if "search" in name or "notes" in name] == []
    assert "index.sqlite" in left


def test_where_links_resolve_is_kept_until_a_file_of_their_name_comes_or_goes(make_vault):
    root = make_notes(make_vault, 5)
    vault = Vault.open(root)
    index = note_index(vault, load_schema(root))
    health.health_report(vault, load_schema(root), index)
    save_index(index)
    again = note_index(Vault.open(root), load_schema(root))
    assert again.summary("n000.md").targets == [("n001.md", ("n001.md",), False)]  # resolved when parsed
    (root / "n001 copy.md").write_text("x\n", encoding="utf-8")  # a name no link uses
    other = note_index(Vault.open(root), load_schema(root))
    assert other.summary("n000.md").targets == [("n001.md", ("n001.md",), False)]
    assert other.parsed == 1
    (root / "sub").mkdir()
    (root / "sub" / "n001.md").write_text("x\n", encoding="utf-8")  # a second note of the name n000 links to
    moved = note_index(Vault.open(root), load_schema(root))
    assert moved.summary("n000.md").targets is None  # resolved again when asked
    assert moved.summary("n002.md").targets == [("n003.md", ("n003.md",), False)]
    report = health.health_report(moved.vault, load_schema(root), moved)
    assert [row["source"] for row in report["ambiguous_links"]] == ["n000.md"]


def sequential_and_parallel(root, monkeypatch):
    """A cold health with every note read here, and with forked readers."""
    schema = load_schema(root)
    monkeypatch.setattr(autograph.write.index_update, "PARALLEL_MIN", 10**9)
    vault = Vault.open(root)
    one = health.health_report(vault, schema, note_index(vault, schema, use_disk=False))
    monkeypatch.setattr(autograph.write.index_update, "PARALLEL_MIN", 2)
    monkeypatch.setattr(autograph.read.parallel, "can_fork", lambda: True)
    vault = Vault.open(root)
    two = health.health_report(vault, schema, note_index(vault, schema, use_disk=False))
    return one, two


def test_two_processes_read_the_same_as_one(make_vault, monkeypatch):
    root = make_notes(make_vault, 41)
    (root / "odd.md").write_text("---\nx: [\n---\n[[gone#h]] [[n001#N1]] [[n002#nope]]\n", encoding="utf-8")
    (root / "latin1.md").write_bytes(b"caf\xe9 [[n003]]\n")
    one, two = sequential_and_parallel(root, monkeypatch)
    assert two == one
    assert len(two["broken_anchors"]) == 1 and len(two["unreadable"]) == 1


def test_a_failing_reader_leaves_its_notes_to_this_process(make_vault, monkeypatch):
    import pickle

    root = make_notes(make_vault, 30)

    def broken(*args, **kwargs):
        raise RuntimeError("the child cannot write")

    monkeypatch.setattr(pickle, "dump", broken)  # the forked children use it; this process does not
    one, two = sequential_and_parallel(root, monkeypatch)
    assert two == one


@pytest.mark.parametrize("damage", ["x", "[1]", '[null, "valid", null, null, [], "a\tb", []]', "[null]"])
def test_a_damaged_row_reads_the_note_again(make_vault, damage):
    root = make_notes(make_vault, 5)
    (root / "n000.md").write_text("[[n001#N1]] [[n001#Nope]]\n", encoding="utf-8")
    first = run(root)
    con = sqlite3.connect(root / ".graph" / "index.sqlite")
    con.execute("UPDATE docs SET summary = ? WHERE path = 'n001.md'", (damage,))
    con.commit()
    con.close()
    (root / ".graph" / health.REPORT_CACHE).unlink()
    assert run(root) == first
    assert len(first["broken_anchors"]) == 1


def test_map_in_two_keeps_the_order_of_the_items():
    from autograph.read.parallel import map_in_two

    items = list(range(1203))  # more than two batches for the child
    assert map_in_two(lambda n: (n, n * n), items) == [(n, n * n) for n in items]
    assert map_in_two(str, []) == []
    assert map_in_two(str, [7]) == ["7"]


def test_map_in_two_computes_a_failed_child_share_here():
    from autograph.read.parallel import map_in_two

    parent = os.getpid()

    def only_here(n):
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return -n

    assert map_in_two(only_here, list(range(10))) == [-n for n in range(10)]


def graph_files(root) -> dict:
    """Every file under ``.graph/`` with its bytes (the folder itself may be absent)."""
    folder = root / ".graph"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def script(name: str, *argv) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / name), *map(str, argv)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("graph.py", "health", "--dry-run"),
        ("graph.py", "orphans", "--dry-run"),
        ("graph.py", "fix"),
        ("search.py", "note", "--dry-run"),
        ("search.py", "--identity", "email=a@x.org", "--dry-run"),
        ("dedup.py",),
        ("card.py", "show", "n001"),
        ("card.py", "new", "person", "Ann Lee", "email=a@x.org", "--dry-run"),
    ],
)
def test_a_read_or_a_dry_run_leaves_graph_byte_for_byte(make_vault, argv):
    """Also with a WAL a killed writer left beside the index: it is neither
    folded into the file nor removed (SQLite opens the file immutable)."""
    root = make_notes(make_vault, 8)
    run(root)
    leftover = sqlite3.connect(root / ".graph" / "index.sqlite")
    leftover.execute("PRAGMA wal_autocheckpoint = 0")
    leftover.execute("UPDATE docs SET title = 'changed' WHERE path = 'n003.md'")
    leftover.commit()  # in the -wal; the connection is left open, as a killed process leaves it
    before = graph_files(root)
    assert "index.sqlite-wal" in before
    proc = script(*argv, "--vault", root, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    assert graph_files(root) == before
    leftover.close()


def test_a_dry_run_on_a_vault_without_an_index_makes_no_graph_folder(make_vault):
    root = make_notes(make_vault, 8)
    for argv in (("graph.py", "health", root, "--dry-run"), ("dedup.py", root), ("graph.py", "fix", root)):
        proc = script(*argv, "--json")
        assert proc.returncode in (0, 1), proc.stderr
        assert not (root / ".graph").exists(), argv


def test_health_says_when_it_rebuilt_a_damaged_index(make_vault):
    root = make_notes(make_vault, 8)
    assert script("graph.py", "health", root, "--json").returncode == 0
    (root / ".graph" / "index.sqlite").write_bytes(b"not a database" * 4096)
    proc = script("graph.py", "health", root, "--json")
    assert proc.returncode == 0
    assert "damaged index" in proc.stderr and "rebuilt it" in proc.stderr
    assert json.loads(proc.stdout)["index"]["rebuilt"] == "damaged"


def index_rows(root) -> dict:
    """What the index file holds of ``root``, ids replaced by paths: each
    note's row (stamp, parse, counts), its links with where they lead, its
    names and name keys, as sets comparable between two files."""
    con = sqlite3.connect(root / ".graph" / "index.sqlite")
    path_of = dict(con.execute("SELECT id, path FROM docs"))
    columns = "path, size, mtime, ctime, title, names, type, status, hub, inlinks, near_hub, summary, props, vkeys"
    found = {
        "docs": set(con.execute(f"SELECT {columns} FROM docs")),
        "links": {(path_of[s], t, n, path_of.get(d)) for s, t, n, d in con.execute("SELECT * FROM links")},
        "names": {(n, path_of[i]) for n, i in con.execute("SELECT name, id FROM names")},
        "variants": {(k, path_of[i]) for k, i in con.execute("SELECT key, id FROM variants")},
    }
    con.close()
    return found


NAMES = ["a.md", "b.md", "sub/a.md", "sub/c.md", "d.md"]
BODIES = ["[[a]] [[c]]\n", "---\naliases: [Bob]\n---\n[[b]] [[d#x]]\n", "# x\n[[sub/a]]\n", "plain\n"]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["write", "remove"]), st.sampled_from(NAMES), st.sampled_from(BODIES)), max_size=8
    )
)
def test_an_index_kept_up_to_date_holds_what_one_built_from_nothing_holds(tmp_path_factory, steps):
    """After each note written, added or removed, the index file brought up
    to date (the stored stamps compared with the walk's: only the changed
    rows read) holds the same rows as a file built from nothing."""
    root = tmp_path_factory.mktemp("kept")
    for name in NAMES[:3]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(BODIES[0], encoding="utf-8")
    run(root)
    for number, (what, name, body) in enumerate(steps):
        path = root / name
        if what == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body + f"step {number}\n", encoding="utf-8")
        elif path.exists():
            path.unlink()
        run(root)
        assert_as_built(root, tmp_path_factory)


def fresh_copy(root, tmp_path_factory):
    """The notes of ``root`` copied to a new folder (modification times kept)."""
    fresh = tmp_path_factory.mktemp("fresh")
    for note in root.rglob("*"):
        if ".graph" not in note.parts and note.is_file():
            copy = fresh / note.relative_to(root)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(note.read_bytes())
            stat = note.stat()
            os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return fresh


def assert_as_built(root, tmp_path_factory) -> None:
    """The index file of ``root`` holds what one built from nothing on a
    copy of its notes holds (the copy's change times are its own)."""
    built = fresh_copy(root, tmp_path_factory)
    run(built)
    kept, fresh = index_rows(root), index_rows(built)
    drop_ctime = lambda rows: {row[:3] + row[4:] for row in rows}  # noqa: E731
    assert drop_ctime(kept.pop("docs")) == drop_ctime(fresh.pop("docs"))
    assert kept == fresh


WRITTEN = ["a.md", "b.md", "sub/c.md", "sub/new.md", "e.md", "x.png"]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["store", "store two", "by hand", "look up first"]),
            st.sampled_from(WRITTEN),
            st.sampled_from(WRITTEN),
            st.sampled_from(BODIES),
        ),
        max_size=7,
    )
)
# found by hypothesis: a look-up after two runs that wrote a file that is no
# note; the look-up's run then wrote a note
@example([("store", "x.png", "a.md", BODIES[0])] * 2 + [("look up first", "a.md", "a.md", BODIES[0])])
def test_the_rows_a_run_writes_are_those_an_update_would_give(tmp_path_factory, steps):
    """A run's writes go into the index file as rows (parsed once, by the
    writer): the file then holds what one built from nothing holds, and
    the next command parses nothing.  When the file did not hold the vault
    as the writer's walk found it (an edit by hand since), or another file
    came, the writer leaves it, and the next update reads what changed."""
    from autograph import cli
    from autograph.read.index import stamp_text
    from autograph.write.changes import Edit
    from autograph.write.index_file import lookup, open_index

    root = tmp_path_factory.mktemp("written")
    for name in NAMES[:3]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(BODIES[0], encoding="utf-8")
    run(root)
    for number, (how, name, other, body) in enumerate(steps):
        if how == "by hand":
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(body + f"hand {number}\n", encoding="utf-8")
            continue
        vault = Vault.open(root, stamps=True)
        schema = load_schema(root)
        if how == "look up first":  # card.py: a look-up compares the stamps, nothing is brought up to date
            lookup(vault, "SELECT 1")
            # what the writer finds, through a connection that sees the WAL (the look-up's does not):
            # when the file holds the walk's notes, the write must go in as rows
            con = sqlite3.connect(root / ".graph" / "index.sqlite")
            stored = con.execute("SELECT value FROM meta WHERE key = 'stamps'").fetchone()[0]
            con.close()
            held = stored == stamp_text(vault.on_disk["stamps"])
        else:
            open_index(vault, schema, stamps=vault.on_disk["stamps"]).close()
            held = True
        edits = []
        for path in dict.fromkeys([name, other] if how == "store two" else [name]):
            before = (root / path).read_bytes() if (root / path).exists() else None
            edits.append(Edit(path, before, (body + f"step {number}\n").encode(), "test"))
        outcome = cli.carry_out(vault, edits, True, schema=schema)
        assert sorted(outcome["written"]) == sorted(edit.path for edit in edits)
        others = any(not e.path.endswith(".md") for e in edits)
        if not others and held:
            # every write a note's: the file holds them as a build from nothing would
            assert_as_built(root, tmp_path_factory)
            parsed = []
            run(root, parsed)
            assert parsed == [0]
    # whatever came between, the next update brings the file to what a build from nothing holds
    run(root)
    assert_as_built(root, tmp_path_factory)


@pytest.mark.parametrize("whole_seconds", [False, True])
def test_a_note_read_within_a_clock_tick_of_its_change_is_read_again(make_vault, monkeypatch, whole_seconds):
    """A note the writer reads back at once, within the file system's clock
    tick (whole seconds on some), could be changed again by an editor with
    the same size and the same stamp: its row is kept under no stamp a file
    has, and the next update reads it again instead of trusting it (git's
    racily clean entries).  A note read later is trusted."""
    import types

    from autograph import cli
    from autograph.write import index_update
    from autograph.write.changes import Edit
    from autograph.write.index_file import open_index

    root = make_vault({"a.md": "# A\n[[b]]\n", "b.md": "# B\n"})
    run(root)
    note = root / "a.md"

    def now() -> int:  # the clock as the note's own stamp: read back within the tick
        info = os.stat(note)
        return max(info.st_mtime_ns, info.st_ctime_ns) + 1000

    slept = []
    monkeypatch.setattr(index_update, "time", types.SimpleNamespace(time_ns=now, sleep=slept.append))
    if whole_seconds:  # a file system of whole seconds (this one keeps nanoseconds): a second to wait
        monkeypatch.setattr(index_update, "racy", lambda stamp, now_ns: 10**9 if stamp else 0)
    vault = Vault.open(root, stamps=True)
    schema = load_schema(root)
    open_index(vault, schema, stamps=vault.on_disk["stamps"]).close()
    outcome = cli.carry_out(vault, [Edit("a.md", note.read_bytes(), b"# A\nwritten\n[[b]]\n")], True, schema=schema)
    assert outcome["written"] == ["a.md"]
    assert slept if not whole_seconds else not slept  # a tick is waited out; a second is not
    if whole_seconds:  # an update that finds it racy again: its row unknown, its size the file's
        again = Vault.open(root, stamps=True)
        index = note_index(again, schema)
        assert index.size("a.md") == note.stat().st_size
        assert [summary.path for _, summary in index.each(["a.md"])] == ["a.md"]
    monkeypatch.undo()
    parsed = []
    report = run(root, parsed)
    assert parsed == [1]  # read again, not trusted by its stamp
    assert report["notes"] == 2
    parsed = []
    run(root, parsed)
    assert parsed == [0]  # read long after its change: trusted from then on


WRITERS = [
    (["engine.py", "decay", "--today", "2027-06-01"], None),
    (["card.py", "log", "Acme Robotics", "met"], None),
    # these walk without the stamps: their look-ups compare them
    (["card.py", "batch", "-"], '{"op": "log", "note": "Acme Robotics", "text": "met again"}\n'),
    (["engine.py", "touch", "Acme Robotics"], None),
]


@pytest.mark.parametrize(("writer", "stdin"), WRITERS)
def test_the_next_command_after_a_write_parses_nothing(tmp_path, writer, stdin):
    """A command that writes puts its notes into the index (decay's walk
    takes the stamps for it; card.py compares them in its look-ups): the
    next search parses none of them."""
    from conftest import EXAMPLE_VAULT, copy_tree, run_in_vault

    root = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    assert run_in_vault("search.py", root, "--json", "memory").returncode == 0
    done = run_in_vault(writer[0], root, *writer[1:], "--json", stdin=stdin)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out.get("written") or any(line["written"] for line in out.get("results", []))  # a batch's, by line
    after = json.loads(run_in_vault("search.py", root, "--json", "memory").stdout)
    assert after["index"]["parsed"] == 0


def test_how_long_a_stamp_may_be_given_again():
    from autograph.write.index_update import RACY_COARSE_NS, RACY_FINE_NS, racy

    second = 1_700_000_000 * 10**9
    assert racy(None, second) == 0
    assert racy((5, second, second), second + 10**6) == RACY_COARSE_NS - 10**6  # whole seconds: two of them
    assert racy((5, second, second), second + RACY_COARSE_NS) == 0
    assert racy((5, second + 7, second + 9), second + 10**6) == RACY_FINE_NS + 9 - 10**6  # a clock tick
    assert racy((5, second + 7, second + 9), second + 10**8) == 0
    assert racy((5, second + 10**11, second), second) == 0  # a time ahead of the clock (touch -d, another machine)


def test_writers_at_once_leave_an_index_that_is_right_or_says_it_is_behind(make_vault, tmp_path_factory):
    """Agents writing at once (``card.py`` in several processes) and a
    person editing meanwhile: each writer puts its notes in as rows only
    when the index held the vault as it walked it.  Whatever order they
    ran in, an index whose stored stamps match the notes holds what a build
    from nothing holds; one that does not is brought there by the next
    update."""
    from autograph.read.index import stamp_text
    from autograph.write.index_file import close_all
    from autograph.write.index_update import stamps_of

    root = make_vault({f"people/P{i}.md": f"---\ntype: person\n---\n# P{i}\n[[P{(i + 1) % 6}]]\n" for i in range(6)})
    run(root)
    close_all()  # as a command's end: the write-ahead log folded in, which look-ups (immutable) read past
    script = str(SCRIPTS / "card.py")
    held = 0  # rounds after which the index said it held the notes as they are
    for round_, (together, by_hand) in enumerate([(False, False), (True, False), (True, True), (False, False)]):
        procs = []
        for argv in (
            ["set", f"P{round_}", f"role=r{round_}"],
            ["log", f"P{round_ + 1}", f"met {round_}"],
            ["new", "person", f"New {round_}", f"role=n{round_}"],
        ):
            command = [sys.executable, script, *argv, "--vault", str(root), "--wait", "30", "--json"]
            procs.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            if not together:
                assert procs[-1].wait(timeout=120) == 0
        if by_hand:
            (root / f"people/P{round_ + 2}.md").write_text(f"# hand {round_}\n[[New {round_}]]\n", encoding="utf-8")
        for proc in procs:
            assert proc.wait(timeout=120) in (0, 4)
        con = sqlite3.connect(root / ".graph" / "index.sqlite")
        stored = con.execute("SELECT value FROM meta WHERE key = 'stamps'").fetchone()[0]
        con.close()
        if stored == stamp_text(stamps_of(Vault.open(root))):  # says it holds the notes as they are
            held += 1
            assert_as_built(root, tmp_path_factory)
    assert held >= 1  # one writer after another: each put its notes in
    run(root)
    assert_as_built(root, tmp_path_factory)


def test_a_dry_run_on_a_large_vault_without_an_index_builds_a_private_one(make_vault, monkeypatch):
    """From PRIVATE_MIN notes, a dry run with no index file answers from an
    index in SQLite's private temporary database: the same report as the
    index file gives, no .graph/ made, and the summaries not all held."""
    import autograph.write.index_file as index_file

    root = make_notes(make_vault)
    schema = load_schema(root)
    monkeypatch.setattr(index_file, "PRIVATE_MIN", 10)
    vault = Vault.open(root)
    index = note_index(vault, schema, use_disk=False)
    private = health.health_report(vault, schema, index)
    assert index.store is not None and index.store.index.path is None  # not a file of the vault
    assert index.parsed == 60 and not index._summaries  # each note parsed once, none kept
    assert not (root / ".graph").exists()
    vault = Vault.open(root)
    index = note_index(vault, schema, use_disk=False)
    health.report_for(vault, schema, index)  # as graph.py health --dry-run: no stored report either
    assert index.store.index.readonly and not (root / ".graph").exists()
    monkeypatch.setattr(index_file, "PRIVATE_MIN", 10**9)
    in_memory = health.health_report(Vault.open(root), schema, note_index(Vault.open(root), schema, use_disk=False))
    assert not (root / ".graph").exists()
    assert private == in_memory and private["notes"] == 60


def test_a_row_another_process_wrote_during_a_pass_is_read_again(make_vault):
    """A pass over the index file (NoteIndex.each) takes a row only at the
    stamp this process's update brought it to: a row another process wrote
    since (another version of the note) is parsed here, never mixed in."""
    root = make_notes(make_vault, 5)
    run(root)
    vault = Vault.open(root)
    index = note_index(vault, load_schema(root))
    assert index.store.index.reread == 0  # opened and brought up to date by this process
    other = sqlite3.connect(root / ".graph" / "index.sqlite")
    empty = '[null,"none",null,null,[],"",[]]'  # another version of the note: no link
    other.execute("UPDATE docs SET mtime = mtime + 1, summary = ? WHERE path = 'n002.md'", (empty,))
    other.commit()
    other.close()
    found = dict(index.each(vault.notes))
    assert index.parsed == 1 and [link.target for link in found["n002.md"].links] == ["n003"]


def test_an_index_kept_in_no_file_is_built_in_memory_when_sqlite_cannot_spill_it(make_vault, monkeypatch):
    """SQLite's private temporary database spills to a temporary folder; when
    it cannot (none it may write, or full), the index is built in memory
    alone, with a warning, and answers the same."""
    import autograph.write.index_file as index_file

    root = make_notes(make_vault, 8)
    schema = load_schema(root)
    real = index_file._connect

    def connect(path):
        if path == index_file.PRIVATE:
            raise sqlite3.OperationalError("unable to open database file")
        return real(path)

    monkeypatch.setattr(index_file, "_connect", connect)
    monkeypatch.setattr(index_file, "PRIVATE_MIN", 1)
    vault = Vault.open(root)
    index = note_index(vault, schema, use_disk=False)
    report = health.health_report(vault, schema, index)
    assert report["notes"] == 8 and report["broken_links"] == []
    assert any("built it in memory" in warning for warning in index.warnings)
    assert not (root / ".graph").exists()


@pytest.mark.parametrize(
    "before, after",
    [
        ("[[b]]\n", "---\ntype: moc\n---\n[[b]]\n"),  # becomes a hub, its links the same
        ("---\ntype: moc\n---\n[[b]]\n", "[[b]]\n"),  # stops being one
        ("[[b]] [[c]]\n", "[[c]] more\n"),  # a link goes, another stays
        ("[[c]]\n", "[[b]] [[c]]\n"),  # a link comes
    ],
)
def test_in_link_counts_follow_the_links_and_hubs_a_note_changes(make_vault, tmp_path_factory, before, after):
    """A note read again keeps its own in-link counts; the notes whose
    in-links or hub neighbours it changed are counted again."""
    root = make_vault({"a.md": before, "b.md": "[[a]]\n", "c.md": "# C\n"})
    run(root)
    edit(root / "a.md", after)
    run(root)
    assert_as_built(root, tmp_path_factory)


def test_a_lone_surrogate_after_other_notes_in_one_batch_is_stored_once(make_vault, tmp_path_factory):
    """SQLite cannot take a lone surrogate (a YAML escape in a property
    link): the rows of the batch before it are undone before the batch is
    written again with it replaced, not written twice (an update crashed
    with a constraint error)."""
    root = make_vault({"a.md": "# A\n", "b.md": "# B\n"})
    run(root)
    edit(root / "a.md", "# A\nmore\n")
    edit(root / "b.md", '---\nrelated: "[[\\ud800 x]]"\n---\n# B\n')
    assert run(root)["notes"] == 2
    assert_as_built(root, tmp_path_factory)


def test_a_look_up_without_the_walks_stamps_stats_each_note_once(make_vault, monkeypatch):
    """card.py batch and show walk without the notes' stamps: a look-up
    stats them once, and the notes it finds changed are told apart by that
    one pass (a second one could see a note gone meanwhile: every position
    after it would name the next note, trusting a changed row)."""
    from autograph.write import index_file

    root = make_vault({f"{name}.md": f"# {name}\n" for name in "abcde"})
    run(root)
    index_file.close_all()
    (root / "d.md").write_text("# d, changed by hand since\n", encoding="utf-8")
    vault = Vault.open(root)  # no stamps taken by the walk
    real = index_file.stamps_of
    passes = []

    def then_gone(vault):
        found = real(vault)
        passes.append(1)
        if (root / "b.md").exists():
            (root / "b.md").unlink()  # another process deletes a note after the first pass
        return found

    monkeypatch.setattr(index_file, "stamps_of", then_gone)
    _rows, current = index_file.lookup(vault, "SELECT 1")
    assert "d.md" not in current  # its row is the old text
    assert "c.md" in current and len(passes) == 1


def _fresh(root, tmp_path):
    """The health report of a copy of ``root`` without ``.graph/``: as if rebuilt."""
    import shutil

    copy = tmp_path / "fresh"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".graph"))
    return run(copy)


def test_an_attachment_renamed_to_a_name_of_the_same_checksum_is_seen(make_vault, tmp_path):
    # the two names have one length and one CRC-32: a file list keyed by its length and CRC-32
    # stays the same when one becomes the other, and the report was patched as if no file moved
    import zlib

    old, new = "xxipexojjc", "jusynyghbq"
    assert len(old) == len(new) and zlib.crc32(old.encode()) == zlib.crc32(new.encode())
    root = make_vault({"n.md": f"# N\n[[{new}.png]]\n", "o.md": "# O\n[[n]]\n", f"zz/{old}.png": b"x"})
    assert [row["target"] for row in run(root)["broken_links"]] == [f"{new}.png"]
    (root / "zz" / f"{old}.png").rename(root / "zz" / f"{new}.png")
    assert run(root)["broken_links"] == [] == _fresh(root, tmp_path)["broken_links"]


@pytest.mark.skipif(sys.platform == "win32", reason="Windows names hold no line break")
def test_files_whose_names_hold_a_line_break_are_told_apart(make_vault, tmp_path):
    # "a\nb" and "c" renamed to "a" and "b\nc": the same lines joined by line breaks
    root = make_vault({"n.md": "# N\n[[a]] [[c]]\n", "a\nb": b"1", "c": b"2"})
    first = run(root)["broken_links"]
    assert [row["target"] for row in first] == ["a"]
    (root / "a\nb").rename(root / "a")
    (root / "c").rename(root / "b\nc")
    assert run(root)["broken_links"] == _fresh(root, tmp_path)["broken_links"]
    assert [row["target"] for row in run(root)["broken_links"]] == ["c"]


def test_readers_are_reaped_when_the_update_fails_after_they_started(make_vault, monkeypatch):
    # forked readers of the changed notes, then a failure while this process takes their results
    root = make_vault({f"n{i:03}.md": f"# N{i}\n[[n{(i + 1) % 60:03}]] [[new]]\n" for i in range(60)})
    run(root)
    monkeypatch.setattr(autograph.write.index_update, "PARALLEL_MIN", 2)
    monkeypatch.setattr(autograph.read.parallel, "can_fork", lambda: True)
    for i in range(40):
        edit(root / f"n{i:03}.md", f"# N{i}\n[[n{(i + 2) % 60:03}]] [[new]] edited\n")
    (root / "new.md").write_text("x\n", encoding="utf-8")  # a name that comes: other notes' links resolved again

    def fails(self, links):
        raise RuntimeError("a failure while the readers read")

    monkeypatch.setattr(Vault, "resolver_for", fails)
    with pytest.raises(RuntimeError):
        run(root)
    with pytest.raises(ChildProcessError):  # every child reaped: none left, running or not
        os.waitpid(-1, os.WNOHANG)
