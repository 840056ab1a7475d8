"""The index file's record of every note's stamp (``read/index.stamp_text``):
read back whole, and told apart where a few notes changed, as a plain
comparison of the two dicts would."""

from __future__ import annotations

from autograph.read.index import changed_stamps, read_stamp_text, stamp_text
from hypothesis import given
from hypothesis import strategies as st

paths = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), min_size=1, max_size=12)
stamps = st.tuples(st.integers(-1, 2**40), st.integers(-1, 2**62), st.integers(-1, 2**62))
vaults = st.dictionaries(paths, stamps, max_size=600)


@given(vaults)
def test_a_stamp_text_reads_back_as_it_was_written(found):
    assert read_stamp_text(stamp_text(found)) == {path.encode("utf-8"): stamp for path, stamp in found.items()}


@given(vaults, st.data())
def test_the_notes_told_apart_are_those_whose_stamp_moved(before, data):
    after = dict(before)
    for path in data.draw(st.lists(st.sampled_from(sorted(before)), max_size=5) if before else st.just([])):
        after[path] = data.draw(stamps)
    changed = changed_stamps(stamp_text(before), stamp_text(after))
    ordered = sorted(after)
    assert changed is not None
    assert {ordered[at] for at in changed} == {path for path in after if before[path] != after[path]}


@given(vaults, vaults)
def test_other_note_lists_are_never_compared_by_position(before, after):
    if sorted(before) != sorted(after):
        assert changed_stamps(stamp_text(before), stamp_text(after)) is None
