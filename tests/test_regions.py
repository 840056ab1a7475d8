"""autograph.read.regions: code and comment regions, where nothing is a link.

The BR-42 rows (code regions follow CommonMark 0.31), one small test per
rule, and properties that hold for any text.  tests/test_commonmark_oracle.py
checks every text of ``RULES`` against markdown-it too, and the corpora.
"""

from __future__ import annotations

import pytest
from autograph.graph.health import health_report
from autograph.read.links import scan
from autograph.read.note import Note
from autograph.read.regions import code_regions
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from conftest import CASES, require
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def targets(text: str) -> list[str]:
    return [link.target for link in scan(text)]


# ---------------------------------------------------------------------------
# BR-42 - code regions follow CommonMark

BR42 = [
    # (note, link target, a link?) -- one row of expected.md each
    ("fence.md", "inside-fence", False),
    ("fence.md", "after-fence", True),
    ("heading.md", "tab-indented-code", False),
    ("heading.md", "after-code", True),
    ("spans.md", "real-link", True),
]


@pytest.mark.parametrize(("name", "target", "is_link"), BR42)
def test_br42_link_or_code(name, target, is_link):
    """`fence.md`: the fence opened on line 1 closes only at the unprefixed fence
    line 4 (`> ```` on line 2 is inside it); `heading.md`: the heading closes the
    list, so the tab-indented line after it is indented code; `spans.md`: the
    lone backticks of two list items do not pair."""
    path = require(CASES / "BR-42" / "vault" / name)
    note = Note.from_bytes(name, path.read_bytes())
    assert f"[[{target}]]" in note.text
    found = [link.target for link in scan(note.text, note.body_offset, note.body_line)]
    assert (target in found) is is_link


def test_br42_health_reports_exactly_three_broken_links(case):
    """Health reports exactly these 3 broken links: `after-fence`, `after-code`, `real-link`."""
    root = case("BR-42") / "vault"
    rows = health_report(Vault.open(root), load_schema(root))["broken_links"]
    assert sorted((row["source"], row["target"]) for row in rows) == [
        ("fence.md", "after-fence"),
        ("heading.md", "after-code"),
        ("spans.md", "real-link"),
    ]


# ---------------------------------------------------------------------------
# One rule at a time (each text agrees with markdown-it: see the oracle test)

RULES = [
    # a top-level fence closes only at an unprefixed fence line (up to 3 spaces)
    ("```\n> ```\n[[A]]\n```\n[[B]]\n", ["B"]),
    ("```\n   ```\n[[A]]\n", ["A"]),
    ("```\n    ```\n[[A]]\n```\n[[B]]\n", ["B"]),
    ("~~~\n> ~~~\n[[A]]\n~~~\n[[B]]\n", ["B"]),
    ("  ```\n[[A]]\n   ```\n[[B]]\n", ["B"]),
    # a fence in a block quote closes at a line with as many ">"; fewer end the quote
    ("> ```\n> [[A]]\n> ```\n> [[B]]\n", ["B"]),
    ("> > ```\n> > [[A]]\n> > ```\n[[B]]\n", ["B"]),
    ("> > ```\n> [[A]]\n", ["A"]),
    ("> ```\n> > ```\n> [[A]]\n> ```\n[[B]]\n", ["B"]),
    # a fence opened on a list item's line stays open across blank lines in the item
    ("- ```js\n  [[A]]\n\n  [[B]]\n  ```\n[[C]]\n", ["C"]),
    ("- ```js\n  [[A]]\n[[B]]\n", ["B"]),
    ("1. ```\n   [[A]]\n\n   ```\n   [[B]]\n", ["B"]),
    ("- a\n  - ```\n    [[A]]\n\n    ```\n[[B]]\n", ["B"]),
    ("> - ```\n>   [[A]]\n>\n>   ```\n> [[B]]\n", ["B"]),
    ("> - ```\n> - [[A]]\n", ["A"]),
    ("- ---\n  ```\n[[A]]\n", []),  # "- ---" is a rule, so the fence is top-level
    # a heading (or rule, or fence) closes an open list: a tab after it is code
    ("- a\n  b\n# H\n\t[[A]]\n[[B]]\n", ["B"]),
    ("- a\n# H\n    [[A]]\n[[B]]\n", ["B"]),
    ("- a\n  b\n***\n\t[[A]]\n", []),
    ("- a\n```\nx\n```\n\t[[A]]\n", []),
    ("- a\n  # H\n    [[A]]\n", ["A"]),  # a heading inside the item keeps it open
    ("- a\nlazy\n    [[A]]\n", ["A"]),  # paragraph text continues the item
    # a code span never crosses a block
    ("- one ` x\n- two [[A]] ` y\n", ["A"]),
    ("1. one ` x\n2. two [[A]] ` y\n", ["A"]),
    ("# H ` x\n[[A]] ` y\n", ["A"]),
    ("a ` x\n## H [[A]] ` y\n", ["A"]),
    ("a ` x\n***\n[[A]] ` y\n", ["A"]),
    ("a ` x\n---\n[[A]] ` y\n", ["A"]),
    ("a ` x\n```\n[[A]] `\n", []),
    ("> a ` x\n> > [[A]] ` y\n", ["A"]),
    ("- a ` x\n  - [[A]] ` y\n", ["A"]),
    # ... but pairs within one paragraph, list item or quote
    ("a ` x\n[[A]] ` y\n", []),
    ("- a ` x\n  [[A]] ` y\n", []),
    ("- a ` x\n[[A]] ` y\n", []),
    ("> a ` x\n> [[A]] ` y\n", []),
    ("> > a ` x\n> [[A]] ` y\n", []),
    # a backslash-escaped backtick opens nothing
    ("\\`[[A]]`\n", ["A"]),
    ("\\\\`[[A]]`\n", []),
    ("`a\\`[[A]]`\n", ["A"]),
    ("\\``[[A]]`\n", []),
]


@pytest.mark.parametrize(("text", "expected"), RULES, ids=[repr(text) for text, _ in RULES])
def test_code_follows_commonmark(text, expected):
    assert targets(text) == expected


def test_crlf_lines_follow_the_same_rules():
    for text, expected in RULES:
        assert targets(text.replace("\n", "\r\n")) == expected, repr(text)


# ---------------------------------------------------------------------------
# Properties of any text

MARKDOWN = st.lists(
    st.one_of(
        st.sampled_from(
            ["\n", "\n", " ", "  ", "    ", "\t", "> ", "- ", "1. ", "# ", "`", "``", "```", "~~~", "\\", "$", "$$"]
            + ["%%", "<!--", "-->", "---", "***", "[[A]]", "[x](y.md)", "a", "\r\n"]
        ),
        st.text(max_size=5),
    ),
    max_size=40,
).map("".join)
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(MARKDOWN)
def test_regions_are_sorted_disjoint_and_within_the_text(text):
    regions = code_regions(text)
    end = 0
    for start, stop in regions:
        assert end <= start < stop <= len(text)
        end = stop
        # each starts at a construct's marker, or at a line start (indented code)
        assert text[start] in "`~%<$" or start == 0 or text[start - 1] == "\n", (start, stop)


@SETTINGS
@given(MARKDOWN)
def test_no_link_starts_inside_a_region(text):
    regions = code_regions(text)
    for link in scan(text):
        start = link.start + link.embed
        assert not any(a <= start < b for a, b in regions)


@SETTINGS
@given(st.text(st.characters(blacklist_characters="`~%<$\t"), max_size=200))
def test_text_without_markers_or_indentation_has_no_regions(text):
    if "    " not in text:
        assert code_regions(text) == []
