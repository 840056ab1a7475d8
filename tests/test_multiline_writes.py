"""Multi-line strings that an edit writes (issue 9, item 7).

``frontmatter.set_property`` and ``format_property`` write a string that
holds a line break as a literal block scalar: ``|-`` (no trailing line
break), ``|`` (one), ``|+`` (more), with an indentation indicator when the
first line that is not empty starts with white space.  Folded (``>``) only
when the key's old value was folded, with each line break between two text
lines written as an empty line so that the text reads back exactly.  A value
no block scalar holds as itself (control characters, CR, NEL, U+2028/2029, a
BOM) is double-quoted with escapes; so is a ``|+`` value that the blank lines
after its key would lengthen.  Never a one-line ``"...\\n..."`` otherwise.

Each form is pinned below; a Hypothesis property checks that for any
multi-line string, set_property then parse gives the same value back, and
PyYAML reads the same value from the block.
"""

from __future__ import annotations

import re

import pytest
import yaml
from autograph.read import frontmatter
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def set_in(block: str, key: str, value, newline: str = "\n") -> str:
    """The block content after setting ``key`` (the note is ``---`` block ``---`` body)."""
    text = f"---{newline}{block}---{newline}body{newline}"
    new = frontmatter.set_property(text, key, value)
    fm = frontmatter.parse(new)
    assert fm is not None and fm.error is None, (new, fm and fm.error)
    assert fm.properties[key] == value and type(fm.properties[key]) is type(value)
    assert new[fm.body :] == f"body{newline}"
    return new[fm.start : fm.end]


# ---------------------------------------------------------------------------
# Each form, pinned


@pytest.mark.parametrize(
    ("value", "written"),
    [
        pytest.param("a\nb", "k: |-\n  a\n  b\n", id="strip"),
        pytest.param("a\nb\n", "k: |\n  a\n  b\n", id="clip"),
        pytest.param("a\nb\n\n", "k: |+\n  a\n  b\n\n", id="keep"),
        pytest.param("a\n\nb\n", "k: |\n  a\n\n  b\n", id="empty-line-inside"),
        pytest.param("\n\na", "k: |-\n\n\n  a\n", id="leading-empty-lines"),
        pytest.param("  a\nb", "k: |2-\n    a\n  b\n", id="indicator-first-line-indented"),
        pytest.param("\n  a\nb\n", "k: |2\n\n    a\n  b\n", id="indicator-after-empty-line"),
        pytest.param("\ta\nb", "k: |2-\n  \ta\n  b\n", id="indicator-first-line-tab"),
        pytest.param("a  \n b\t\n", "k: |\n  a  \n   b\t\n", id="trailing-white-space-kept"),
        pytest.param("# not a comment\n- not an item\nkey: value\n---", None, id="yaml-lookalikes"),
        pytest.param("a\n\n", "k: |+\n  a\n\n", id="keep-two"),
        pytest.param("\n", "k: |+\n\n", id="only-a-line-break"),
    ],
)
def test_literal_forms(value, written):
    if written is None:
        written = "k: |-\n" + "".join(f"  {line}\n" for line in value.split("\n"))
    assert set_in("a: 1\n", "k", value) == "a: 1\n" + written
    assert frontmatter.format_property("k", value) == written
    assert yaml.safe_load(written) == {"k": value}


@pytest.mark.parametrize(
    ("old", "value", "written"),
    [
        pytest.param("k: >\n  old text\n", "one\ntwo\n", "k: >\n  one\n\n  two\n", id="clip"),
        pytest.param("k: >-\n  old\n", "one\n\ntwo", "k: >-\n  one\n\n\n  two\n", id="strip-paragraphs"),
        pytest.param("k: >+\n  old\n", "a\n  b\nc\n\n", "k: >+\n  a\n    b\n  c\n\n", id="keep-spaced-line"),
        pytest.param("k: >2\n   old\n", " a\nb", "k: >2-\n   a\n  b\n", id="indicator"),
        pytest.param("k: > # why\n  old\n", "a\nb\n", "k: > # why\n  a\n\n  b\n", id="key-comment-kept"),
    ],
)
def test_folded_only_where_the_old_value_was_folded(old, value, written):
    assert set_in(old, "k", value) == written
    assert yaml.safe_load(written) == {"k": value}
    # the same value over a literal or plain old value stays literal
    assert set_in("k: |\n  old\n", "k", value).startswith("k: |")
    assert set_in("k: plain\n", "k", value).startswith("k: |")


@pytest.mark.parametrize(
    "value",
    [
        "a\rb\nc",  # CR would read as a line break
        "a\r\nb",
        "a\x00\nb",  # not printable: needs an escape
        "a\x1b\nb",
        "a\x85\nb",  # NEL: a line break in YAML 1.1
        "a\u2028b\nc",
        "a\nb\ufeff",
        "a\n\ud800",  # a lone surrogate
    ],
)
def test_values_no_block_scalar_holds_are_double_quoted(value):
    block = set_in("a: 1\n", "k", value)
    assert re.fullmatch(r'a: 1\nk: "[^\n]*"\n', block), block
    assert yaml.safe_load(block)["k"] == value


def test_list_items_and_nested_values():
    assert frontmatter.format_property("k", ["a\nb", "c"]) == "k:\n  - |-\n    a\n    b\n  - c\n"
    assert frontmatter.format_property("k", ["a\nb"], list_indent="") == "k:\n- |-\n  a\n  b\n"
    assert frontmatter.format_property("k", {"x": " a\nb\n"}) == "k:\n  x: |2\n     a\n    b\n"
    assert frontmatter.format_property("k", [["a\nb"]]) == 'k:\n  - ["a\\nb"]\n'  # flow: quoted
    for value in (["a\nb", "c"], {"x": " a\nb\n"}, {"x": ["\n\n y"]}):
        written = frontmatter.format_property("k", value)
        assert yaml.safe_load(written) == {"k": value}
        assert frontmatter.loads(written)[0] == {"k": value}


def test_keep_followed_by_a_blank_line_falls_back_to_double_quotes():
    """A ``|+`` scalar keeps the blank lines after it, which would change the value."""
    assert set_in("k: 1\n\nnext: 2\n", "k", "x\n\n") == 'k: "x\\n\\n"\n\nnext: 2\n'
    assert set_in("k: 1\nnext: 2\n", "k", "x\n\n") == "k: |+\n  x\n\nnext: 2\n"


def test_a_keep_value_is_replaced_with_its_blank_lines():
    """The blank lines that end a ``|+`` value are its lines: an edit replaces them."""
    block = "k: |+\n  x\n\n\nnext: 2\n"
    assert set_in(block, "k", "w\n\n") == "k: |+\n  w\n\nnext: 2\n"
    assert set_in(block, "k", "w") == "k: w\nnext: 2\n"
    new = frontmatter.delete_property("---\n" + block + "---\n", "k")
    assert new == "---\nnext: 2\n---\n"


def test_key_comment_crlf_and_indented_block():
    assert set_in("k: old  # why\n", "k", "a\nb") == "k: |-  # why\n  a\n  b\n"
    assert set_in("a: 1\r\nk: old\r\n", "k", "a\nb\n", "\r\n") == "a: 1\r\nk: |\r\n  a\r\n  b\r\n"
    assert set_in("  a: 1\n", "k", " x\ny") == "  a: 1\n  k: |2-\n     x\n    y\n"
    assert set_in("", "k", "a\nb") == "k: |-\n  a\n  b\n"


def test_note_without_frontmatter_gets_a_block_scalar():
    new = frontmatter.set_property("Body\n", "k", "a\nb\n")
    assert new == "---\nk: |\n  a\n  b\n---\nBody\n"


# ---------------------------------------------------------------------------
# Any multi-line string: set_property then parse (and PyYAML) give it back

PIECES = st.one_of(
    st.sampled_from(list(" \t#:-|>'\"[]{},&*!%@`?\\") + ["---", "...", "- x", "k: v", " #c", "{{d}}", "  "]),
    st.characters(blacklist_categories=["Cs"]),  # a note's text never holds a lone surrogate
)
line_text = st.lists(PIECES, max_size=6).map("".join)
multi_line = st.builds(
    lambda first, rest, tail: "\n".join([first, *rest]) + tail,
    line_text,
    st.lists(line_text, min_size=1, max_size=5),
    st.sampled_from(["", "", "\n", "\n\n", "\n\n\n"]),
)
BLOCKS = [
    "",
    "a: 1\n",
    "k: plain\n",
    "k: >\n  folded\n",
    "k: |+\n  kept\n\n\nz: 1\n",
    "k: 1\n\nz: 2\n",
    "z:\n  - x\nk: 'q'  # c\n",
    "  k: 1\n  z: 2\n",
]


def _block_only(value: str) -> bool:
    """Whether every character of ``value`` may stand in a block scalar as itself."""
    return not re.search(
        r"[\r\x85\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]", value
    )


@SETTINGS
@given(multi_line, st.sampled_from(BLOCKS), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_any_multi_line_string_reads_back(value, block, newline, as_item):
    stored = [value, "x"] if as_item else value
    text = "---" + newline + block.replace("\n", newline) + "---" + newline + "body"
    new = frontmatter.set_property(text, "k", stored)
    note(f"new={new!r}")
    fm = frontmatter.parse(new)
    assert fm is not None and fm.error is None, str(fm and fm.error)
    assert fm.properties["k"] == stored
    assert new[fm.body :] == "body"
    before = frontmatter.parse(text).properties
    assert {key: v for key, v in fm.properties.items() if key != "k"} == {
        key: v for key, v in before.items() if key != "k"
    }
    content = new[fm.start : fm.end]
    lines = content.split(newline)
    at = next(n for n, line in enumerate(lines) if line.lstrip(" ").startswith("k:"))
    header = lines[at + 1] if as_item else lines[at]
    keep = value.endswith("\n\n") or not value.strip("\n")
    if _block_only(value) and not (keep and not as_item and block == "k: 1\n\nz: 2\n"):
        # a block scalar, unless a |+ value would take in the blank line after it
        assert re.fullmatch(r" *(k:|-) [|>][1-9]?[-+]?( +#.*)?", header), header
    else:
        assert '"' in header, header
    assert yaml.safe_load(content)["k"] == stored
