"""Reading only what changed (issue 9, speed): the note cache's delta file
and the stored health result.  Each test runs the library twice or more on
one vault and checks what was parsed and what the report says."""

from __future__ import annotations

import json
import os

import autograph.read.index
import autograph.read.parallel
import pytest
from autograph.graph import health
from autograph.read.index import CACHE_NAME, DELTA_NAME, NoteIndex
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from conftest import read_cache, write_cache


def make_notes(make_vault, count: int = 60):
    text = "---\ndescription: note {i}\n---\n# N{i}\n[[n{next:03}]]\n"
    return make_vault({f"n{i:03}.md": text.format(i=i, next=(i + 1) % count) for i in range(count)})


def run(root, parsed: list | None = None, monkeypatch=None) -> dict:
    """One health run through the cache; ``parsed`` collects the notes read."""
    vault = Vault.open(root)
    if monkeypatch is not None and parsed is not None:
        real = autograph.read.index.summarize

        def counting(vault, path):
            parsed.append(path)
            return real(vault, path)

        monkeypatch.setattr(autograph.read.index, "summarize", counting)
    return health.report_for(vault, load_schema(root), NoteIndex(vault))


def edit(path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a new ctime shows the change even if size and mtime match


def test_unchanged_vault_reuses_the_stored_report_and_reads_no_note(make_vault, monkeypatch):
    root = make_notes(make_vault)
    first = run(root)
    parsed: list = []
    second = run(root, parsed, monkeypatch)
    assert parsed == []
    assert second == first


def test_a_changed_note_is_read_again_and_the_report_follows(make_vault, monkeypatch):
    root = make_notes(make_vault)
    assert run(root)["broken_links"] == []
    edit(root / "n005.md", "# N5\n[[missing]] [[n006]]\n")
    parsed: list = []
    report = run(root, parsed, monkeypatch)
    assert parsed == ["n005.md"]
    assert [row["target"] for row in report["broken_links"]] == ["missing"]
    assert report["description_coverage"] == round(59 / 60, 4)


def test_a_schema_change_recomputes_the_report(make_vault):
    root = make_notes(make_vault)
    assert run(root)["hubs"] == []
    (root / "schema.json").write_text(json.dumps({"hubs": {"names": ["n000"]}}), encoding="utf-8")
    assert run(root)["hubs"] == ["n000.md"]


def test_a_new_file_recomputes_the_report(make_vault):
    root = make_notes(make_vault)
    (root / "n001.md").write_text("[[img.png]]\n", encoding="utf-8")
    assert [row["target"] for row in run(root)["broken_links"]] == ["img.png"]
    (root / "img.png").write_bytes(b"")
    assert run(root)["broken_links"] == []


def test_few_changes_write_only_the_delta(make_vault, monkeypatch):
    root = make_notes(make_vault)
    run(root)
    base = (root / ".graph" / CACHE_NAME).read_bytes()
    edit(root / "n010.md", "# N10\n[[n011]] [[n012]]\n")
    run(root)
    assert (root / ".graph" / CACHE_NAME).read_bytes() == base
    _, delta = read_cache(root / ".graph" / DELTA_NAME)
    assert sorted(delta) == ["n010.md"]
    # the next run takes n010 from the delta: nothing is parsed
    (root / ".graph" / health.REPORT_CACHE).unlink()
    parsed: list = []
    report = run(root, parsed, monkeypatch)
    assert parsed == []
    assert report["links"] == 61


def test_many_changes_rewrite_the_whole_cache(make_vault, monkeypatch):
    root = make_notes(make_vault, 200)
    run(root)
    base = (root / ".graph" / CACHE_NAME).read_bytes()
    for i in range(0, 200, 2):  # half the notes, over the delta's share
        edit(root / f"n{i:03}.md", f"# N{i}\n")
    run(root)
    assert (root / ".graph" / CACHE_NAME).read_bytes() != base
    (root / ".graph" / health.REPORT_CACHE).unlink()
    parsed: list = []
    run(root, parsed, monkeypatch)
    assert parsed == []


def test_a_delta_for_another_base_is_ignored(make_vault, monkeypatch):
    root = make_notes(make_vault)
    run(root)
    edit(root / "n010.md", "# N10\n[[gone]]\n")
    run(root)
    delta_path = root / ".graph" / DELTA_NAME
    head, rows = read_cache(delta_path)
    write_cache(delta_path, dict(head, base="another"), rows)
    (root / ".graph" / health.REPORT_CACHE).unlink()
    parsed: list = []
    report = run(root, parsed, monkeypatch)
    assert parsed == ["n010.md"]  # its base row is stale: read again
    assert [row["target"] for row in report["broken_links"]] == ["gone"]


@pytest.mark.parametrize("damage", [b"", b"{", b'{"key": 1}', b"[]", b'{"key": "x", "report": []}'])
def test_a_damaged_stored_report_is_recomputed(make_vault, damage):
    root = make_notes(make_vault)
    first = run(root)
    (root / ".graph" / health.REPORT_CACHE).write_bytes(damage)
    assert run(root) == first


def sequential_and_parallel(root, monkeypatch):
    schema = load_schema(root)
    monkeypatch.setattr(autograph.read.index, "PARALLEL_MIN", 10**9)
    one = health.health_report(Vault.open(root), schema, NoteIndex(Vault.open(root), use_cache=False))
    monkeypatch.setattr(autograph.read.index, "PARALLEL_MIN", 2)
    monkeypatch.setattr(autograph.read.parallel, "can_fork", lambda: True)
    vault = Vault.open(root)
    two = health.health_report(vault, schema, NoteIndex(vault, use_cache=False))
    return one, two


def counting_parses(monkeypatch) -> list[str]:
    """The notes this process parses from now on (a forked child's are not counted)."""
    parsed: list[str] = []
    real = autograph.read.index.summarize

    def counting(vault, path):
        parsed.append(path)
        return real(vault, path)

    monkeypatch.setattr(autograph.read.index, "summarize", counting)
    return parsed


def test_two_processes_read_the_same_as_one(make_vault, monkeypatch):
    root = make_notes(make_vault, 41)
    (root / "odd.md").write_text("---\nx: [\n---\n[[gone#h]] [[n001#N1]] [[n002#nope]]\n", encoding="utf-8")
    (root / "latin1.md").write_bytes(b"caf\xe9 [[n003]]\n")
    parsed = counting_parses(monkeypatch)
    one, two = sequential_and_parallel(root, monkeypatch)
    assert two == one
    assert len(two["broken_anchors"]) == 1 and len(two["unreadable"]) == 1
    assert len(parsed) == 43 + 22  # all of them once, then this process's half


def test_a_failing_second_process_leaves_its_notes_to_the_first(make_vault, monkeypatch):
    import pickle

    root = make_notes(make_vault, 30)

    def broken(*args, **kwargs):
        raise RuntimeError("the child cannot write")

    monkeypatch.setattr(pickle, "dump", broken)  # the forked child uses it; this process does not
    parsed = counting_parses(monkeypatch)
    one, two = sequential_and_parallel(root, monkeypatch)
    assert two == one
    assert len(parsed) == 30 + 30  # the child's share parsed here too


@pytest.mark.parametrize("outline", ["x", "a\tb", "1", "\t"])
def test_a_damaged_outline_in_the_cache_reads_the_note_again(make_vault, outline):
    root = make_notes(make_vault, 5)
    (root / "n000.md").write_text("[[n001#N1]] [[n001#Nope]]\n", encoding="utf-8")
    first = run(root)
    cache = root / ".graph" / CACHE_NAME
    head, rows = read_cache(cache)
    rows["n001.md"][6][0] = outline
    write_cache(cache, head, rows)
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
