"""The index file's record of every note's stamp (``read/index.stamp_text``):
read back whole, and told apart where a few notes changed, as a plain
comparison of the two dicts would."""

from __future__ import annotations

import pytest
from autograph.read.index import changed_stamps, patch_stamp_text, read_stamp_text, stamp_text, stamp_writes
from hypothesis import given
from hypothesis import strategies as st

paths = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), min_size=1, max_size=12)
stamps = st.tuples(st.integers(-1, 2**40), st.integers(-1, 2**62), st.integers(-1, 2**62))
vaults = st.dictionaries(paths, stamps, max_size=600)


def _read_back(text: bytes) -> bytes:
    """``text`` as the index file gives it back: equal bytes, another object
    (where its paths end is found again, not remembered from when it was made)."""
    return bytes(bytearray(text))


@given(vaults)
def test_a_stamp_text_reads_back_as_it_was_written(found):
    assert read_stamp_text(stamp_text(found)) == {path.encode("utf-8"): stamp for path, stamp in found.items()}


@given(vaults, st.data())
def test_the_notes_told_apart_are_those_whose_stamp_moved(before, data):
    after = dict(before)
    for path in data.draw(st.lists(st.sampled_from(sorted(before)), max_size=5) if before else st.just([])):
        after[path] = data.draw(stamps)
    changed = changed_stamps(_read_back(stamp_text(before)), stamp_text(after))
    ordered = sorted(after)
    assert changed is not None
    assert {ordered[at] for at in changed} == {path for path in after if before[path] != after[path]}


@given(vaults, st.data())
def test_notes_added_and_gone_are_lined_up_and_each_new_or_moved_one_told(before, data):
    after = {path: stamp for path, stamp in before.items() if not data.draw(st.booleans(), label=f"drop {path!r}")}
    for path in data.draw(st.lists(paths, max_size=8)):
        after[path] = data.draw(stamps)
    changed = changed_stamps(_read_back(stamp_text(before)), stamp_text(after), most=10_000)
    ordered = sorted(after)
    assert changed is not None
    assert sorted(changed) == changed
    assert {ordered[at] for at in changed} == {path for path in after if before.get(path) != after[path]}


@given(vaults, st.data())
def test_a_patched_text_is_the_text_of_the_changed_set(before, data):
    # the writer of a run puts its notes' stamps into the stored text, few or many, added, moved or gone
    changes = {}
    for path in data.draw(st.lists(st.sampled_from(sorted(before)), max_size=80) if before else st.just([])):
        changes[path] = data.draw(st.one_of(stamps, st.none()))
    for path in data.draw(st.lists(paths, max_size=80)):
        changes[path] = data.draw(stamps)
    after = {path: stamp for path, stamp in {**before, **changes}.items() if stamp is not None}
    text = stamp_text(before)
    assert patch_stamp_text(text, changes) == stamp_text(after)
    writes = stamp_writes(text, changes)
    if writes is None:  # written in place only when no note came or went
        assert after.keys() != before.keys() or len(changes) > 64
    else:
        assert after.keys() == before.keys()
        patched = bytearray(text)
        for offset, data_ in writes:
            patched[offset : offset + len(data_)] = data_
        assert bytes(patched) == stamp_text(after)


def test_a_text_that_does_not_read_as_one_is_never_patched():
    with pytest.raises(ValueError):
        patch_stamp_text(stamp_text({"a.md": (1, 2, 3)})[:-5], {"a.md": (4, 5, 6)})


def test_a_damaged_stored_text_is_never_lined_up():
    good = stamp_text({"a.md": (1, 2, 3), "b.md": (4, 5, 6)})
    assert changed_stamps(good[:-5], good) is None
    # paths out of order, as no update writes them: never lined up (nor a loop without end)
    shuffled = b"b.md\0a.md\0\0" + good.split(b"\0\0", 1)[1]
    assert changed_stamps(shuffled, stamp_text({"a.md": (1, 2, 3), "c.md": (4, 5, 6)})) is None


@pytest.mark.parametrize("count", [1, 16, 17, 256, 257, 1000])
def test_a_moved_stamp_is_told_at_every_block_edge(count):
    # the packed stamps are compared by blocks of 256 notes, then of 16: a note at either edge of
    # either is told, alone or with its neighbours
    before = {f"note {n:05}.md": (n, n, n) for n in range(count)}
    edges = {0, 15, 16, 17, 255, 256, 257, count - 1}
    for moved in [{at} for at in edges if at < count] + [{at for at in edges if at < count}]:
        after = dict(before)
        for at in moved:
            after[f"note {at:05}.md"] = (at, at + 1, at)
        assert changed_stamps(stamp_text(before), stamp_text(after)) == sorted(moved)


def test_the_answer_kept_for_two_texts_holds_only_for_them_and_their_bound():
    # an update compares the stored stamps with the walk's, then health's patch does again (with
    # ``most=0``: no note may come or go): the second is answered from the first only where it would
    # answer the same
    before = {"a.md": (1, 1, 1), "b.md": (2, 2, 2)}
    added = {**before, "c.md": (3, 3, 3)}
    old, new = stamp_text(before), stamp_text(added)
    assert changed_stamps(old, new) == [2]
    assert changed_stamps(bytes(bytearray(old)), new, most=0) is None  # a note came: past the bound
    moved = {**before, "b.md": (2, 5, 2)}
    new = stamp_text(moved)
    assert changed_stamps(old, new) == [1]
    found = changed_stamps(bytes(bytearray(old)), new, most=0)  # equal texts, the same notes: kept
    assert found == [1]
    found.append(7)  # the caller's own list
    assert changed_stamps(old, new, most=0) == [1]
    assert changed_stamps(stamp_text({**moved, "b.md": (2, 6, 2)}), new) == [1]
    assert changed_stamps(stamp_text(before), stamp_text(before)) == []
