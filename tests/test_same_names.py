"""card.py new's refusal by name (``memory/cards._same_names``): the files
at the new card's path and the notes and files of its name, by the one fold
of names, found in one pass without folding every path of a large vault,
as folding each one finds them."""

from __future__ import annotations

import unicodedata

from autograph.memory.cards import _fold, _same_names
from hypothesis import given
from hypothesis import strategies as st

letters = st.sampled_from(["a", "A", "e", "É", "é", "e\u0301", "ß", "İ", "x", "/", " ", "Ω", "ω", ".md", ".png"])
names = st.lists(letters, min_size=1, max_size=6).map("".join)


def naive(files, path, name):
    same_file = [p for p in files if _fold(p) == _fold(path)]
    notes = [p for p in files if p.endswith(".md")]
    same_name = [p for p in notes if _fold(p.rsplit("/", 1)[-1][:-3]) == _fold(name) and p not in same_file]
    same_name += [p for p in files if not p.endswith(".md") and _fold(p.rsplit("/", 1)[-1]) == _fold(name)]
    return same_file, same_name


@given(st.lists(names, max_size=30, unique=True), names, names)
def test_the_same_paths_as_folding_each_one(files, folder, name):
    path = f"{folder}/{name}.md"
    assert _same_names(files, path, name) == naive(files, path, name)


def test_a_name_in_another_case_or_unicode_form_is_found():
    files = ["people/Dana Reyes.md", "people/JOSE.md", unicodedata.normalize("NFD", "people/José.md"), "José"]
    assert _same_names(files, "people/dana reyes.md", "dana reyes") == (["people/Dana Reyes.md"], [])
    assert _same_names(files, "work/José.md", "José") == ([], [files[2], "José"])
