"""card.py new's refusal by name (``memory/cards._folded_equal``): the
paths equal to a name by the one fold of names, found without folding
every path of a large vault, as folding each one finds them."""

from __future__ import annotations

import unicodedata

from autograph.memory.cards import _NAME, _fold, _folded_equal
from hypothesis import given
from hypothesis import strategies as st

letters = st.sampled_from(["a", "A", "e", "É", "é", "e\u0301", "ß", "İ", "x", "/", " ", "Ω", "ω", ".md"])
names = st.lists(letters, min_size=1, max_size=6).map("".join)


@given(st.lists(names, max_size=30), names)
def test_the_same_paths_as_folding_each_one(paths, wanted):
    assert _folded_equal(paths, wanted) == [p for p in paths if _fold(p) == _fold(wanted)]
    by_name = [p for p in paths if _fold(p.rsplit("/", 1)[-1]) == _fold(wanted)]
    assert _folded_equal(paths, wanted, _NAME) == by_name


def test_a_name_in_another_case_or_unicode_form_is_found():
    paths = ["people/Dana Reyes.md", "people/JOSE.md", unicodedata.normalize("NFD", "people/José.md")]
    assert _folded_equal(paths, "dana reyes.md", _NAME) == ["people/Dana Reyes.md"]
    assert _folded_equal(paths, "José.md", _NAME) == [paths[2]]
