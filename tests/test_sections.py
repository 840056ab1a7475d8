"""Body sections (issue 13): ``sections.find``, ``append``, ``items`` and the
one ``## History`` line format.  Hypothesis: appending keeps every other
byte (CRLF too) and what it appends is then the section's last items."""

from __future__ import annotations

import sys

from conftest import SCRIPTS
from hypothesis import example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

from autograph.write import sections  # noqa: E402

NOTE = """\
---
type: person
# History: a YAML comment, no heading
---
# Alex

Intro.

## Related
- [[Acme]]
- [[Bob]]

### Sub
- nested

## History
- 2026-01-01: role: CTO

Trailing.
"""


def test_find_spans_to_next_heading_of_same_or_higher_level():
    start, end = sections.find(NOTE, "related")
    assert NOTE[start:].startswith("## Related")
    assert NOTE[end:].startswith("## History")  # ### Sub is inside
    start, end = sections.find(NOTE, "  HISTORY ")
    assert NOTE[start:end].endswith("Trailing.\n") and end == len(NOTE)
    assert sections.find(NOTE, "Log") is None
    assert sections.find(NOTE, "Alex") == (NOTE.index("# Alex"), len(NOTE))


def test_frontmatter_comment_and_code_are_no_headings():
    text = "---\n# Log: x\n---\nbody\n```\n## Log\n```\n"
    assert sections.find(text, "Log") is None
    new = sections.append(text, "Log", ["- a"])
    assert new == text + "\n## Log\n- a\n"
    assert sections.items(new, "Log") == ["- a"]


def test_setext_heading_ends_a_section():
    text = "## Related\n- [[A]]\n\nOther\n-----\n- not related\n"
    assert sections.items(text, "Related") == ["- [[A]]"]
    new = sections.append(text, "Related", ["- [[B]]"])
    assert new == "## Related\n- [[A]]\n- [[B]]\n\nOther\n-----\n- not related\n"


def test_append_after_last_non_blank_line_keeps_blank_lines():
    new = sections.append(NOTE, "Related", ["- [[Carol]]"])
    assert new == NOTE.replace("- nested\n", "- nested\n- [[Carol]]\n")
    assert sections.items(new, "related") == ["- [[Acme]]", "- [[Bob]]", "- nested", "- [[Carol]]"]


def test_append_creates_the_section_once():
    text = "# Title\nbody"  # no final line break
    once = sections.append(text, "Log", ["- 2026-12-01: met"])
    assert once == "# Title\nbody\n\n## Log\n- 2026-12-01: met\n"
    twice = sections.append(once, "Log", ["- 2026-12-02: called"])
    assert twice == once + "- 2026-12-02: called\n"
    assert sections.append("", "Log", ["- x"]) == "## Log\n- x\n"
    assert sections.append("a\n\n", "Log", ["- x"]) == "a\n\n## Log\n- x\n"
    assert sections.append("a\n", "Log", ["- x"], level=3) == "a\n\n### Log\n- x\n"


def test_append_to_a_last_line_without_line_break():
    text = "## Log\n- one"
    assert sections.append(text, "Log", ["- two"]) == "## Log\n- one\n- two"
    assert sections.append("## Log", "Log", ["- two"]) == "## Log\n- two"


def test_append_refuses_to_write_into_unclosed_code():
    for text in ("body\n```\ncode\n", "## Log\n- a\n%% open comment\n", "x\n<!-- open\n"):
        try:
            sections.append(text, "Log", ["- b"])
        except ValueError as exc:
            assert "never closed" in str(exc)
        else:
            raise AssertionError(f"appended into code: {text!r}")
    closed = "body\n```\ncode\n```\n"
    assert sections.append(closed, "Log", ["- b"]) == closed + "\n## Log\n- b\n"


def test_append_refuses_line_breaks_and_ignores_nothing():
    assert sections.append(NOTE, "Log", []) == NOTE
    for bad in ("- ", "---", " = ="):
        try:
            sections.append("## Log\ntext\n", "Log", [bad])
        except ValueError:
            pass
        else:
            raise AssertionError(f"{bad!r} would make 'text' a heading")
    try:
        sections.append(NOTE, "Log", ["a\nb"])
    except ValueError:
        pass
    else:
        raise AssertionError("a line break inside a line was accepted")


def test_items_kinds_and_code():
    text = "## R\n- a\n* b\n+ c\n1. d\n2) e\ntext\n-no\n```\n- code\n```\n  - f\n"
    assert sections.items(text, "R") == ["- a", "* b", "+ c", "1. d", "2) e", "- f"]
    assert sections.items(text, "missing") == []


def test_history_line_format():
    assert sections.history_line("2026-12-01", "role", "CTO", "CEO") == "- 2026-12-01: role: CTO → CEO"
    assert sections.history_line("2026-12-01", "role", "CTO") == "- 2026-12-01: role: CTO"
    assert (
        sections.history_line("2026-12-01", "tags", ["a", "b"], ["a"], source="Alex Old")
        == "- 2026-12-01: tags: [a, b] → [a] (from [[Alex Old]])"
    )
    assert sections.history_line("2026-12-01", "n", 3, "3") == '- 2026-12-01: n: 3 → "3"'
    assert sections.history_line("2026-12-01", "note", "a\nb: c") == '- 2026-12-01: note: "a\\nb: c"'
    assert sections.history_line("2026-12-01", "company", "[[Acme]]") == '- 2026-12-01: company: "[[Acme]]"'


# Note texts built from lines that are often near headings: headings of every
# level, list items, blank lines, fences, frontmatter-looking lines.
LINE = st.sampled_from(
    [
        "",
        "   ",
        "text",
        "## Log",
        "## log ",
        "# Log",
        "### Log",
        "## History",
        "- item",
        "* [[Link]]",
        "```",
        "~~~",
        "---",
        "Setext",
        "====",
        "%%",
        "    indented",
        "#nothead",
        "1. one",
        "## Related",
    ]
)
# item texts that cannot open code or a thematic break of their own
ADDED = st.lists(
    st.text(st.sampled_from("ab Zé→:[]|.,()"), min_size=1, max_size=12).filter(str.strip), min_size=1, max_size=3
)


@st.composite
def notes(draw):
    lines = draw(st.lists(LINE, max_size=14))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    end = draw(st.sampled_from(["", nl]))
    head = draw(st.sampled_from(["", "---" + nl + "a: 1" + nl + "---" + nl]))
    return head + nl.join(lines) + (end if lines else "")


@settings(max_examples=400, deadline=None)
@given(notes(), st.sampled_from(["Log", "History", "Related"]), ADDED, st.sampled_from([2, 3]))
# the section ends right before a setext heading's text line: the added
# line must not take it in as its continuation
@example(text="## Log\n---\n====\n---\n- item", heading="Log", added=[":"], level=2)
def test_append_keeps_every_other_byte(text, heading, added, level):
    try:
        new = sections.append(text, heading, [f"- {a}" for a in added], level)
    except ValueError:  # only when the note ends inside unclosed code or a comment
        assert sections._in_code(text + "\n", len(text)) or sections._in_code(text, len(text) - 1)
        return
    nl = sections.newline_of(text)
    if nl == "\r\n":  # CRLF stays CRLF: no bare \n appears
        assert new.count("\n") == new.count("\r\n")
    # the old text is the new text with exactly one inserted run removed
    inserted_len = len(new) - len(text)
    assert inserted_len > 0
    cut = next(k for k in range(len(text) + 1) if text[:k] + new[k + inserted_len :] == text and new[:k] == text[:k])
    assert new[:cut] + new[cut + inserted_len :] == text
    # the section now exists and ends with what was appended
    assert sections.find(new, heading) is not None
    found = sections.items(new, heading)
    assert found[len(found) - len(added) :] == [f"- {a}".strip() for a in added]


@settings(max_examples=200, deadline=None)
@given(notes(), st.sampled_from(["Log", "History"]), ADDED, ADDED)
def test_append_twice_adds_to_the_same_section(text, heading, first, second):
    try:
        once = sections.append(text, heading, [f"- {a}" for a in first])
    except ValueError:
        return
    twice = sections.append(once, heading, [f"- {a}" for a in second])
    headings = [h for h in sections._headings(twice) if h[2].casefold() == heading.casefold() and h[3]]
    before = [h for h in sections._headings(text) if h[2].casefold() == heading.casefold() and h[3]]
    assert len(headings) == max(1, len(before))
