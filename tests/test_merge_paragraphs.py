"""Merging two copies of a card: a paragraph that grew is one paragraph (issue 30, point 6).

A dedup merge (or a sync client's conflict copy folded back) used to add a
paragraph of the other copy beside the card's own when the other copy's had
grown by a line: every line but one then stood twice.  ``merge_paragraphs``
folds such a paragraph into the card's; these tests hold it to that, and to
never losing a line of either side.
"""

from __future__ import annotations

import pytest
from autograph.write.merge import merge_paragraphs
from hypothesis import example, given, settings
from hypothesis import strategies as st


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def merged(have: str, content: str) -> tuple[str, str]:
    mine, theirs, flags = merge_paragraphs(lines(have), lines(content))
    assert len(flags) == len(theirs)
    return "".join(mine), "".join(theirs)


def test_a_paragraph_grown_by_a_line_replaces_the_one_the_card_holds():
    have = "Dana met Ben at the fair.\nShe likes tea.\n\nOther paragraph.\n"
    content = "Dana met Ben at the fair.\nShe likes tea.\nAnd coffee.\n\nOther paragraph.\n"
    assert merged(have, content) == (
        "Dana met Ben at the fair.\nShe likes tea.\nAnd coffee.\n\nOther paragraph.\n",
        "",
    )


def test_a_line_added_in_the_middle_or_at_the_start_keeps_its_place():
    assert merged("one\nthree\n", "one\ntwo\nthree\n") == ("one\ntwo\nthree\n", "")
    assert merged("two\nthree\n", "one\ntwo\nthree\n") == ("one\ntwo\nthree\n", "")


def test_a_shorter_version_of_a_paragraph_the_card_holds_adds_nothing():
    have = "one\ntwo\nthree\n\nfour\n"
    assert merged(have, "one\nthree\n\nfour\n") == (have, "")


def test_a_new_paragraph_stays_for_the_caller_and_the_card_is_unchanged():
    have = "one\ntwo\n"
    assert merged(have, "one\n\nnew words\nhere\n") == (have, "new words\nhere\n")


def test_the_card_keeps_its_own_spelling_of_its_lines_and_its_line_breaks():
    """Lines compare without trailing spaces; the card's lines stay as it
    wrote them (a trailing double space is a line break in Markdown), the
    new line takes the card's line break."""
    have = "first  \r\nsecond\r\n"
    assert merged(have, "first\nsecond\nthird\n") == ("first  \r\nsecond\r\nthird\r\n", "")


def test_a_card_without_a_final_line_break_gets_one_between_its_lines():
    assert merged("one\ntwo", "one\ntwo\nthree\n") == ("one\ntwo\nthree", "")


def test_a_list_grows_at_its_end():
    have = "- 2026-01-01: x\n"
    assert merged(have, "- 2026-02-01: y\n- 2026-01-01: x\n") == ("- 2026-01-01: x\n- 2026-02-01: y\n", "")


def test_a_new_line_the_card_holds_elsewhere_is_not_added_again():
    """The other copy joined two of the card's paragraphs: nothing is new."""
    have = "alpha\n\nbeta\n"
    assert merged(have, "alpha\nbeta\n") == (have, "")


def test_code_is_never_folded():
    have = "```\nx = 1\n```\n"
    content = "```\nx = 1\ny = 2\n```\n"
    mine, theirs = merged(have, content)
    assert mine == have and theirs == content


def test_code_flags_must_match_the_lines():
    with pytest.raises(ValueError):
        merge_paragraphs(["a\n"], ["b\n"], [False, False], None)


# ---------------------------------------------------------------------------
# The property: no line lost, no paragraph twice

LINES = ["alpha", "beta", "gamma", "delta", "- item a", "- item b", "  - item a", "1. one", "text  ", "x"]
paragraph = st.lists(st.sampled_from(LINES), min_size=1, max_size=4).map(tuple)
side = st.lists(paragraph, max_size=5, unique=True)


def text_of(paragraphs, newline: str = "\n") -> str:
    return (newline * 2).join(newline.join(p) for p in paragraphs) + (newline if paragraphs else "")


def paragraphs_of(text: str) -> list[tuple[str, ...]]:
    found, run = [], []
    for line in text.splitlines():
        if line.strip():
            run.append(line.rstrip())
        elif run:
            found.append(tuple(run))
            run = []
    if run:
        found.append(tuple(run))
    return found


def has(texts: list[str], line: str) -> bool:
    keys = {got.rstrip() for text in texts for got in text.splitlines()}
    if line.rstrip() in keys:
        return True
    return line.lstrip().startswith(("- ", "1. ")) and line.strip() in {key.strip() for key in keys}


@settings(max_examples=400, deadline=None)
@given(side, side, st.sampled_from(["\n", "\r\n"]))
def test_merging_never_loses_a_line_and_never_yields_a_paragraph_twice(mine, theirs, newline):
    have, content = text_of(mine, newline), text_of(theirs)
    out_have, out_content = merged(have, content)
    # every line of either side is in the result
    for line in have.splitlines() + content.splitlines():
        assert not line.strip() or has([out_have, out_content], line), line
    # the card keeps its lines in its order
    it = iter(out_have.splitlines())
    assert all(any(line == got for got in it) for line in have.splitlines())
    # a paragraph either side holds once is in the result once
    result = paragraphs_of(out_have) + paragraphs_of(out_content)
    assert len(result) == len(set(result)), result
    # the card's line breaks stay its own
    if newline == "\r\n":
        assert "\n" not in out_have.replace("\r\n", "")


@settings(max_examples=200, deadline=None)
@given(side, side)
# a line the copy repeats, held once by the card: the second merge must not grow another paragraph with it
@example(mine=[("alpha",), ("beta",)], theirs=[("alpha", "beta", "beta"), ("alpha", "alpha")])
def test_merging_the_other_copy_again_changes_nothing_more(mine, theirs):
    """A merge written once whose other copy stayed adds nothing the second time."""
    have, content = text_of(mine), text_of(theirs)
    once, _ = merged(have, content)
    again, _ = merged(once, content)
    assert again == once


# ---------------------------------------------------------------------------
# The dedup merge of two cards' bodies (memory/dedup.py) uses the rule


def test_a_dedup_merge_keeps_a_grown_paragraph_once():
    from autograph.memory import dedup

    body = "# Notes\nDana met Ben at the fair.\nShe likes tea.\n\nOther paragraph.\n"
    other = "# Notes\nDana met Ben at the fair.\nShe likes tea.\nAnd coffee.\n\nOther paragraph.\n"
    assert dedup.merge_body(body, other, "\n") == (
        "# Notes\nDana met Ben at the fair.\nShe likes tea.\nAnd coffee.\n\nOther paragraph.\n"
    )
