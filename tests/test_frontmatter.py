"""autograph.read.frontmatter: finding the block, reading its YAML subset, editing one key.

Each test shows an input and the exact value expected.  Expected values come
from DESIGN.md ("Frontmatter"), the YAML 1.2 specification and the shared
cases (BR-06 item 5 for the writer's quoting rule), never from running the
code.  Scalars are compared with their Python types (``True`` is not ``1``).
"""

from __future__ import annotations

import pytest
from autograph.read import frontmatter
from autograph.read.frontmatter import (
    FrontmatterError,
    _Parser,
    _simple,
    delete_property,
    format_scalar,
    loads,
    parse,
    set_property,
)
from autograph.read.note import Note
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# ---------------------------------------------------------------------------
# Helpers


def typed(value):
    """``value`` with every scalar paired with its type name, so comparisons
    tell ``True`` from ``1``, ``1`` from ``1.0`` and ``'1'`` from ``1``."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def load(source: str) -> dict:
    """The properties of a frontmatter block's content."""
    return loads(source)[0]


def assert_loads(source: str, expected: dict) -> None:
    actual = load(source)
    assert actual == expected
    assert typed(actual) == typed(expected)


def value_of(text: str):
    """The value of ``k: TEXT`` (one key)."""
    return load(f"k: {text}\n")["k"]


def error_of(note_text: str) -> FrontmatterError:
    """The error of a note whose frontmatter is invalid (positions in the file)."""
    block = parse(note_text)
    assert block is not None, "the block should be found"
    assert block.error is not None, f"expected an error, got {block.properties!r}"
    assert block.properties == {}
    return block.error


# ---------------------------------------------------------------------------
# Finding the block


def test_block_closed_by_dashes():
    text = "---\ntitle: Hello\n---\nBody text\n"
    block = parse(text)
    assert block.properties == {"title": "Hello"}
    assert text[block.start : block.end] == "title: Hello\n"
    assert text[block.body :] == "Body text\n"
    assert block.newline == "\n"
    assert block.valid


def test_block_closed_by_three_dots():
    text = "---\ntitle: Hello\n...\nBody\n"
    block = parse(text)
    assert block.properties == {"title": "Hello"}
    assert text[block.body :] == "Body\n"


def test_dashes_later_in_the_body_are_body():
    text = "---\na: 1\n---\nIntro\n---\nb: 2\n---\nmore\n"
    block = parse(text)
    assert block.properties == {"a": 1}
    assert text[block.body :] == "Intro\n---\nb: 2\n---\nmore\n"


def test_block_at_end_of_file_without_final_newline():
    text = "---\na: 1\n---"
    block = parse(text)
    assert block.properties == {"a": 1}
    assert text[block.body :] == ""


def test_empty_block():
    block = parse("---\n---\nBody\n")
    assert block.properties == {}
    assert block.valid


def test_comment_only_block_is_empty():
    block = parse("---\n# just a comment\n\n---\n")
    assert block.properties == {}
    assert block.valid


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("No frontmatter\n", id="plain-note"),
        pytest.param("", id="empty-file"),
        pytest.param("---\na: 1\n", id="never-closed"),
        pytest.param("---\n", id="only-opening-line"),
        pytest.param("\n---\na: 1\n---\n", id="blank-first-line"),
        pytest.param(" ---\na: 1\n---\n", id="indented-opening-line"),
        pytest.param("----\na: 1\n---\n", id="four-dashes"),
        pytest.param("--- a: 1\n---\n", id="text-after-opening-dashes"),
        pytest.param("# Title\n---\na: 1\n---\n", id="dashes-not-on-line-1"),
    ],
)
def test_no_block(text):
    assert parse(text) is None


def test_closing_line_must_be_exactly_dashes():
    # "--- x" and "----" do not close the block; the next "---" does.
    text = "---\na: |\n  ---- x\n  --- x\n---\nbody\n"
    block = parse(text)
    assert block.properties == {"a": "---- x\n--- x\n"}
    assert text[block.body :] == "body\n"


def test_crlf_block():
    text = "---\r\ntitle: Weekly\r\ntags:\r\n  - meeting\r\n---\r\nBody\r\n"
    block = parse(text)
    assert block.properties == {"title": "Weekly", "tags": ["meeting"]}
    assert block.newline == "\r\n"
    assert text[block.body :] == "Body\r\n"


def test_bom_is_removed_by_note_before_parsing():
    data = b"\xef\xbb\xbf---\ntitle: Hello\n---\nBody\n"
    note = Note.from_bytes("a.md", data)
    assert note.bom is True
    assert note.properties == {"title": "Hello"}
    assert "\ufeff" not in next(iter(note.properties))
    assert note.body == "Body\n"
    assert note.encode(note.text) == data


def test_entries_locate_each_top_level_key():
    source = "a: 1\n# comment\ntags:\n  - x\n  - y\n\nb: |\n  text\n"
    _, entries = loads(source)
    assert [(e.key, e.start, e.end, e.prefix) for e in entries] == [
        ("a", 0, 1, "a:"),
        ("tags", 2, 5, "tags:"),
        ("b", 6, 8, "b:"),
    ]


# ---------------------------------------------------------------------------
# Plain scalars: YAML 1.2 core schema, kept as text unless they round-trip

PLAIN = [
    # booleans: only true/false
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("false", False),
    ("False", False),
    ("tRuE", "tRuE"),
    ("yes", "yes"),
    ("no", "no"),
    ("on", "on"),
    ("off", "off"),
    ("Yes", "Yes"),
    ("NO", "NO"),
    ("y", "y"),
    # null
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("~", None),
    ("", None),
    ("nil", "nil"),
    # integers that read back as the same text
    ("0", 0),
    ("42", 42),
    ("-7", -7),
    ("1234567890123", 1234567890123),
    # number-like text that would not survive a round trip
    ("01234", "01234"),
    ("0012", "0012"),
    ("+44", "+44"),
    ("+44 20 7946 0958", "+44 20 7946 0958"),
    ("-0", "-0"),
    ("1e3", "1e3"),
    ("0x1F", "0x1F"),
    ("0o17", "0o17"),
    ("1_000", "1_000"),
    ("1.10", "1.10"),
    (".5", ".5"),
    ("1.0e+3", "1.0e+3"),
    # floats that read back as the same text
    ("1.5", 1.5),
    ("-2.25", -2.25),
    ("3.0", 3.0),
    # dates and times stay text
    ("2026-11-23", "2026-11-23"),
    ("2026-11-23T10:30:00", "2026-11-23T10:30:00"),
    ("2022-12-06 09:05:28 -06:00", "2022-12-06 09:05:28 -06:00"),
    ("10:30", "10:30"),
    # other text
    ("hello world", "hello world"),
    ("C#", "C#"),
    ("a:b", "a:b"),
    ("https://example.com/a?b=c#frag", "https://example.com/a?b=c#frag"),
    ("value # a comment", "value"),
    ("trailing spaces   ", "trailing spaces"),
    ("Zürich 東京", "Zürich 東京"),
    ("a - b", "a - b"),
    ("-x", "-x"),
]


@pytest.mark.parametrize("text, expected", PLAIN, ids=[repr(t) for t, _ in PLAIN])
def test_plain_scalar_typing(text, expected):
    assert typed(value_of(text)) == typed(expected)


def test_plain_scalar_typing_in_block_lists_and_flow_lists():
    assert_loads(
        "a:\n  - yes\n  - 01234\n  - 7\n  - true\n  -\nb: [no, 1.10, 3, false, null]\n",
        {"a": ["yes", "01234", 7, True, None], "b": ["no", "1.10", 3, False, None]},
    )


def test_multi_line_plain_scalar_folds_into_spaces():
    assert_loads("k: one\n  two\n  three\nnext: 1\n", {"k": "one two three", "next": 1})


def test_multi_line_plain_scalar_blank_line_is_a_line_break():
    assert_loads("k: one\n\n  two\n", {"k": "one\ntwo"})


# ---------------------------------------------------------------------------
# Quoted scalars

QUOTED = [
    ("'single'", "single"),
    ("'it''s'", "it's"),
    ("'no \\n escapes'", "no \\n escapes"),
    ('"double"', "double"),
    ('""', ""),
    ("''", ""),
    ('"42"', "42"),
    ("'true'", "true"),
    ('"null"', "null"),
    ('"[[Link]]"', "[[Link]]"),
    ("'#not a comment'", "#not a comment"),
    ('"a: b # c"', "a: b # c"),
    ('"quoted" # comment', "quoted"),
    ('"say \\"hi\\""', 'say "hi"'),
    ('"back\\\\slash"', "back\\slash"),
    ('"\\0\\a\\b\\t\\n\\v\\f\\r\\e"', "\x00\x07\x08\t\n\x0b\x0c\r\x1b"),
    ('"\\ \\/\\N\\_\\L\\P"', " /\x85\xa0\u2028\u2029"),
    ('"tab\\\there"', "tab\there"),
    ('"\\x41\\x7e"', "A~"),
    ('"caf\\u00e9 \\u00E9"', "café é"),
    ('"\\U0001F600"', "\U0001f600"),
]


@pytest.mark.parametrize("text, expected", QUOTED, ids=[t for t, _ in QUOTED])
def test_quoted_scalar(text, expected):
    assert typed(value_of(text)) == typed(expected)


@pytest.mark.parametrize(
    "source, expected",
    [
        pytest.param('k: "one\n  two"\n', "one two", id="double-line-break-is-space"),
        pytest.param('k: "one\n\n  two"\n', "one\ntwo", id="double-blank-line-is-newline"),
        pytest.param('k: "one\\\n  two"\n', "onetwo", id="escaped-line-break-joins"),
        pytest.param('k: "one   \n  two"\n', "one two", id="trailing-spaces-trimmed"),
        pytest.param("k: 'a\n  b'\n", "a b", id="single-line-break-is-space"),
        pytest.param("k: 'a\n\n\n  b'\n", "a\n\nb", id="single-two-blank-lines"),
    ],
)
def test_quoted_scalar_folds_across_lines(source, expected):
    assert_loads(source, {"k": expected})


def test_quoted_keys():
    assert_loads("\"my key\": 1\n'a: b': x\n", {"my key": 1, "a: b": "x"})


# ---------------------------------------------------------------------------
# Block scalars

BLOCK = [
    ("k: |\n  a\n  b\n", "a\nb\n"),
    ("k: |-\n  a\n  b\n", "a\nb"),
    ("k: |+\n  a\n\n\nx: 1\n", "a\n\n\n"),
    ("k: |\n  a\n\n  b\n", "a\n\nb\n"),
    ("k: |\n\n  a\n", "\na\n"),
    ("k: |\n  a\n    indented\n  b\n", "a\n  indented\nb\n"),
    ("k: |\n  # not a comment\n", "# not a comment\n"),
    ("k: | # a comment\n  a\n", "a\n"),
    ("k: |\nx: 1\n", ""),
    ("k: >\n  a\n  b\n\n  c\n", "a b\nc\n"),
    ("k: >-\n  a\n  b\n", "a b"),
    ("k: >+\n  a\n\nx: 1\n", "a\n\n"),
    ("k: >\n  a\n\n\n  b\n  c\n", "a\n\nb c\n"),
    ("k: >\n\n  a\n  b\n", "\na b\n"),
    ("k: >\n  a\n    b\n  c\n", "a\n  b\nc\n"),
    ("k: >\n  a\n   b\n   c\n  d\n", "a\n b\n c\nd\n"),
    ("k: |2\n    a\n  b\n", "  a\nb\n"),
    ("k: |-2\n   a\n", " a"),
    ("k: >2-\n   a\n", " a"),
    ("n:\n  k: |1\n    a\n   b\n", None),  # nested: see below
]


@pytest.mark.parametrize("source, expected", BLOCK[:-1], ids=[s for s, _ in BLOCK[:-1]])
def test_block_scalar(source, expected):
    assert load(source)["k"] == expected


def test_block_scalar_indentation_indicator_is_relative_to_the_key():
    assert_loads("n:\n  k: |1\n    a\n   b\n", {"n": {"k": " a\nb\n"}})


def test_block_scalar_ends_at_a_less_indented_line():
    assert_loads("a: |\n  one\n  two\nb: after\n", {"a": "one\ntwo\n", "b": "after"})


def test_block_scalar_in_a_list_item():
    assert_loads("k:\n  - |\n    text\n  - x\n", {"k": ["text\n", "x"]})


# ---------------------------------------------------------------------------
# Flow collections

FLOW = [
    ("[]", []),
    ("{}", {}),
    ("[a, b, c]", ["a", "b", "c"]),
    ("[a, b,]", ["a", "b"]),
    ("[1, true, null, \"x, y\", 'p, q']", [1, True, None, "x, y", "p, q"]),
    ("[[a, b], [c]]", [["a", "b"], ["c"]]),
    ("{a: 1, b: [x, y]}", {"a": 1, "b": ["x", "y"]}),
    ("{a, b: }", {"a": None, "b": None}),
    ("[a, b] # comment", ["a", "b"]),
    ("[[Link]]", [["Link"]]),
    ('["[[Link]]", "[[Other|alias]]"]', ["[[Link]]", "[[Other|alias]]"]),
    ("[ yes , 01234 ]", ["yes", "01234"]),
]


@pytest.mark.parametrize("text, expected", FLOW, ids=[t for t, _ in FLOW])
def test_flow_collection(text, expected):
    assert typed(value_of(text)) == typed(expected)


def test_multi_line_flow_collection():
    assert_loads("k: [a,\n  b,\n  # comment\n  c]\nnext: 1\n", {"k": ["a", "b", "c"], "next": 1})


def test_multi_line_flow_mapping():
    assert_loads("k: {a: 1,\n  b: {c: [x,\n    y]}}\n", {"k": {"a": 1, "b": {"c": ["x", "y"]}}})


def test_whole_block_as_a_flow_mapping():
    properties, entries = loads("{title: Hello, tags: [a]}\n")
    assert properties == {"title": "Hello", "tags": ["a"]}
    assert entries == []


def test_template_placeholder_is_its_text():
    # BR-41: {{date}} is a flow mapping whose key is a mapping, which Obsidian's
    # YAML library accepts; autograph reads the text it shows (tests/test_placeholders.py)
    value = load("created: {{date}}\n")["created"]
    assert value == "{{date}}" and isinstance(value, frontmatter.Placeholder)


@pytest.mark.parametrize(
    "source",
    [
        "created: {{date}} later\n",  # not the whole value
        "created: {{date}}: x\n",
        "created: {{}}\n",  # nothing inside
        "created: {{a}b}}\n",
        "created: {{a}\n",
        "created: { {{a}}: 1 }\n",  # a placeholder is never a key
    ],
)
def test_template_placeholder_that_is_not_the_whole_value_is_an_error(source):
    error = error_of("---\n" + source + "---\n")
    assert error.line == 2


# ---------------------------------------------------------------------------
# Block sequences and mappings


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("tags:\n- a\n- b\nnext: 1\n", id="at-the-key-indentation"),
        pytest.param("tags:\n  - a\n  - b\nnext: 1\n", id="indented-2"),
        pytest.param("tags:\n    - a\n    - b\nnext: 1\n", id="indented-4"),
        pytest.param("tags:\n  # comment\n  - a\n\n  - b   # comment\nnext: 1\n", id="with-comments"),
    ],
)
def test_block_sequence(source):
    assert_loads(source, {"tags": ["a", "b"], "next": 1})


def test_empty_list_items_are_null():
    assert_loads("k:\n  -\n  - x\n  - \n", {"k": [None, "x", None]})


def test_nested_mappings_in_a_sequence():
    assert_loads(
        "people:\n  - name: Ada\n    role: lead\n  - name: Grace\nnext: 1\n",
        {"people": [{"name": "Ada", "role": "lead"}, {"name": "Grace"}], "next": 1},
    )


def test_nested_mappings_in_a_zero_indented_sequence():
    assert_loads(
        "people:\n- name: Ada\n  role: lead\n- name: Grace\n",
        {"people": [{"name": "Ada", "role": "lead"}, {"name": "Grace"}]},
    )


def test_nested_sequences():
    assert_loads("k:\n  - - a\n    - b\n  - c\n", {"k": [["a", "b"], "c"]})


def test_nested_mapping():
    assert_loads(
        "a:\n  b: 1\n  c:\n    d: [x]\n    e:\n      - y\nz: end\n",
        {"a": {"b": 1, "c": {"d": ["x"], "e": ["y"]}}, "z": "end"},
    )


def test_empty_value_is_null():
    assert_loads("a:\nb:   \nc: # comment\n", {"a": None, "b": None, "c": None})


def test_comments_everywhere():
    source = (
        "# leading comment\n"
        "a: 1 # after a value\n"
        "  # indented comment\n"
        "b: # after a key\n"
        "  - x # after an item\n"
        "  # between items\n"
        "  - y\n"
        "# between keys\n"
        "c:\n"
        "  d: 'q' # after a quoted value\n"
        "#end\n"
    )
    assert_loads(source, {"a": 1, "b": ["x", "y"], "c": {"d": "q"}})


def test_key_with_spaces_and_unicode():
    assert_loads("my key: 1\nprénom: Zoë\n", {"my key": 1, "prénom": "Zoë"})


def test_tab_inside_a_value_is_not_indentation():
    assert_loads("k: a\tb\n", {"k": "a\tb"})


# ---------------------------------------------------------------------------
# Errors: the reason, and the line and column in the file (line 1 is "---")

ERRORS = [
    # (note text, line, column, words the reason contains)
    ("---\na:\n\tb: 1\n---\n", 3, 1, "tab"),
    ("---\ntags:\n  - a\n\t- b\n---\n", 4, 1, "tab"),
    ("---\na: &anchor 1\n---\n", 2, 4, "anchor"),
    ("---\na: 1\nb: *anchor\n---\n", 3, 4, "alias"),
    ("---\na: !!str 1\n---\n", 2, 4, "tag"),
    ("---\nk:\n  - !custom x\n---\n", 3, 5, "tag"),
    ("---\nauthor: @ada\n---\n", 2, 9, "quote"),
    ("---\ncode: `x`\n---\n", 2, 7, "quote"),
    ("---\na: 1\nb: 2\na: 3\n---\n", 4, 1, "duplicate"),
    ("---\nn:\n  x: 1\n  x: 2\n---\n", 4, 3, "duplicate"),
    ("---\ndescription: Rules (REQ): read first\n---\n", 2, 25, ": "),
    ('---\na: ok\nb: "unclosed\n---\n', 3, 4, "unclosed"),
    ("---\nb: 'unclosed\n---\n", 2, 4, "unclosed"),
    ("---\nb: [x, y\n---\n", 2, 4, "unclosed"),
    ("---\nb: {x: 1,\n  y: 2\n---\n", 2, 4, "unclosed"),
    ("---\na:\n    b: 1\n  c: 2\n---\n", 4, 3, "indent"),
    ("---\n%YAML 1.2\n---\n", 2, 1, "directive"),
    ("---\n? complex\n: key\n---\n", 2, 1, "complex"),
    ('---\nk: "\\q"\n---\n', 2, 5, "escape"),
    ('---\nk: "\\x4"\n---\n', 2, 5, "escape"),
]


@pytest.mark.parametrize("text, line, column, words", ERRORS, ids=[repr(t[4:-5]) for t, *_ in ERRORS])
def test_error_position(text, line, column, words):
    error = error_of(text)
    assert (error.line, error.column) == (line, column), error
    assert words in error.reason.lower()
    assert str(error).endswith(f"at line {line}, column {column}")


@pytest.mark.parametrize(
    "text, kind",
    [
        pytest.param("---\njust a sentence\n---\n", "a string", id="scalar"),
        pytest.param("---\n- a\n- b\n---\n", "a list", id="list"),
        pytest.param("---\n42\n---\n", "a number", id="number"),
    ],
)
def test_a_document_that_is_not_a_mapping_is_an_error(text, kind):
    error = error_of(text)
    assert (error.line, error.column) == (2, 1)
    assert f"frontmatter is {kind}" in error.reason


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("k: " + "[" * 3000 + "]" * 3000 + "\n", id="flow-lists"),
        pytest.param("k: " + "{a: " * 3000 + "}" * 3000 + "\n", id="flow-mappings"),
        pytest.param("".join(" " * i + "k:\n" for i in range(1500)) + " " * 1500 + "v\n", id="block-mappings"),
    ],
)
def test_deep_nesting_never_raises_from_parse(content):
    """A vault may come from anyone: parse returns a value or an error, never crashes."""
    try:
        block = parse("---\n" + content + "---\nbody\n")
    except RecursionError:
        # (a short failure: pytest would spend seconds printing a thousand frames)
        pytest.fail("parse raised RecursionError instead of returning an error", pytrace=False)
    assert block is not None
    assert block.valid or isinstance(block.error, FrontmatterError)


def test_loads_raises_with_the_given_first_line():
    with pytest.raises(FrontmatterError) as raised:
        loads("a: 1\nb: &x 2\n", first_line=10)
    assert (raised.value.line, raised.value.column) == (11, 4)


def test_invalid_block_still_locates_the_body():
    text = "---\ndescription: a: b\n---\nBody [[Link]]\n"
    block = parse(text)
    assert not block.valid
    assert text[block.body :] == "Body [[Link]]\n"


# ---------------------------------------------------------------------------
# Edits: only the edited key's lines change


def test_set_existing_key_keeps_every_other_byte():
    text = (
        "---\n"
        "title: 'Quoted title'\n"
        "tags: [a, b]   # flow list, comment\n"
        "status: draft\n"
        "aliases:\n"
        "- One\n"
        "---\n"
        "Body status: draft\n"
    )
    assert set_property(text, "status", "active") == text.replace("status: draft\naliases", "status: active\naliases")


def test_set_key_keeps_its_spelling_and_position():
    text = '---\na: 1\n"my key": old\nb: 2\n---\n'
    assert set_property(text, "my key", "new") == '---\na: 1\n"my key": new\nb: 2\n---\n'


def test_set_replaces_all_lines_of_a_block_list():
    text = "---\ntags:\n  - a\n  - b\nnext: 1\n---\n"
    assert set_property(text, "tags", "solo") == "---\ntags: solo\nnext: 1\n---\n"


def test_set_scalar_to_a_list_uses_the_files_list_indentation():
    text = "---\nstatus: x\naliases:\n    - A\n---\n"
    assert set_property(text, "status", ["a", "b"]) == "---\nstatus:\n    - a\n    - b\naliases:\n    - A\n---\n"


def test_a_flow_list_with_items_stays_a_flow_list():
    # the person wrote "[a, b]": a new item keeps that style (and the comment);
    # "[]" is how any empty list is written, so it becomes a block list
    text = "---\ntags: [a, b]  # mine\nnext: 1\n---\n"
    assert set_property(text, "tags", ["a", "b", "c: d"]) == '---\ntags: [a, b, "c: d"]  # mine\nnext: 1\n---\n'
    assert set_property("---\ntags: [a,\n  b]\n---\n", "tags", ["b"]) == "---\ntags: [b]\n---\n"
    assert set_property("---\ntags: []\n---\n", "tags", ["x"]) == "---\ntags:\n  - x\n---\n"
    assert set_property("---\ntags: [a]\n---\n", "tags", "solo") == "---\ntags: solo\n---\n"
    multi = set_property("---\ntags: [a]\n---\n", "tags", ["two\nlines"])
    assert frontmatter.parse(multi).properties == {"tags": ["two\nlines"]} and "[" not in multi


def test_add_key_is_appended_last():
    text = "---\ntitle: Hello\n# closing comment\n---\nBody\n"
    assert set_property(text, "status", "active") == "---\ntitle: Hello\n# closing comment\nstatus: active\n---\nBody\n"


@pytest.mark.parametrize(
    "items, expected_items",
    [
        pytest.param("tags:\n- x\n", "- A\n- B\n", id="zero-indented-stays-zero"),
        pytest.param("tags:\n  - x\n", "  - A\n  - B\n", id="two"),
        pytest.param("tags:\n    - x\n", "    - A\n    - B\n", id="four"),
        pytest.param("tags: [x]\n", "  - A\n  - B\n", id="no-block-list-default-two"),
    ],
)
def test_add_list_follows_the_files_list_indentation(items, expected_items):
    text = f"---\ntitle: T\n{items}---\nbody\n"
    assert set_property(text, "aliases", ["A", "B"]) == f"---\ntitle: T\n{items}aliases:\n{expected_items}---\nbody\n"


def test_delete_key_removes_its_block_list_lines():
    text = "---\na: 1\ntags:\n  - x\n  - y\nb: 2\n---\nbody\n"
    assert delete_property(text, "tags") == "---\na: 1\nb: 2\n---\nbody\n"


def test_delete_keeps_comments_and_blank_lines_around_the_key():
    text = "---\na: 1\n\n# about b\nb: 2 # two\n\nc: 3\n---\n"
    assert delete_property(text, "b") == "---\na: 1\n\n# about b\n\nc: 3\n---\n"


def test_delete_block_scalar():
    text = "---\nnote: |\n  line one\n  line two\nb: 2\n---\n"
    assert delete_property(text, "note") == "---\nb: 2\n---\n"


def test_delete_missing_key_is_a_no_op():
    text = "---\na: 1\n---\n"
    assert delete_property(text, "zzz") == text


def test_delete_without_frontmatter_is_a_no_op():
    assert delete_property("Body\n", "a") == "Body\n"


def test_set_on_a_note_without_frontmatter_adds_a_block():
    assert set_property("# Title\nText\n", "type", "idea") == "---\ntype: idea\n---\n# Title\nText\n"


def test_set_on_a_crlf_note_without_frontmatter_uses_crlf():
    assert set_property("# Title\r\nText\r\n", "tags", ["a"]) == "---\r\ntags:\r\n  - a\r\n---\r\n# Title\r\nText\r\n"


def test_set_on_an_empty_block():
    assert set_property("---\n---\nBody\n", "a", 1) == "---\na: 1\n---\nBody\n"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("---\ndescription: Rules (REQ): read first\n---\n", id="colon-in-value"),
        pytest.param("---\na: 1\na: 2\n---\n", id="duplicate-key"),
        pytest.param("---\njust text\n---\n", id="scalar-document"),
        pytest.param("---\na:\n\tb: 1\n---\n", id="tab-indentation"),
    ],
)
@pytest.mark.parametrize("edit", ["set-existing", "set-new", "delete"])
def test_edits_are_refused_on_invalid_frontmatter(text, edit):
    with pytest.raises(FrontmatterError):
        if edit == "set-existing":
            set_property(text, "a", "x")
        elif edit == "set-new":
            set_property(text, "new", "x")
        else:
            delete_property(text, "a")


def test_edit_is_refused_on_a_flow_mapping_block():
    with pytest.raises(FrontmatterError):
        set_property("---\n{a: 1}\n---\n", "b", 2)


def test_note_without_valid_frontmatter_is_never_rewritten():
    data = b"---\ndescription: x: y\n---\nBody\n"
    note = Note.from_bytes("a.md", data)
    with pytest.raises(FrontmatterError):
        note.with_property("type", "rule")
    with pytest.raises(FrontmatterError):
        note.without_property("description")


@pytest.mark.parametrize(
    "line, key, value",
    [
        ("title: Hello", "title", "Hello"),
        ("count: 7", "count", 7),
        ("done: true", "done", True),
        ("tags:\n- a\n- b", "tags", ["a", "b"]),
        ("tags: [a, b]", "tags", ["a", "b"]),
        ("tags: [a, b]", "tags", ("a", "b")),
        ("when: 2026-01-02", "when", "2026-01-02"),
        ("empty:", "empty", None),
        ('link: "[[Acme]]"', "link", "[[Acme]]"),
    ],
)
def test_setting_a_key_to_its_own_value_changes_nothing(line, key, value):
    text = f"---\n{line}\nother: 'x'\n---\nBody\n"
    assert set_property(text, key, value) == text


@pytest.mark.parametrize(
    "line, value, expected",
    [
        pytest.param("n: 1", True, "n: true", id="1-to-True"),
        pytest.param("n: true", 1, "n: 1", id="True-to-1"),
        pytest.param("n: 1", 1.0, "n: 1.0", id="1-to-1.0"),
        pytest.param("n: 7", "7", 'n: "7"', id="7-to-'7'"),
        pytest.param("n:", "", 'n: ""', id="None-to-''"),
    ],
)
def test_set_tells_types_apart(line, value, expected):
    assert set_property(f"---\n{line}\n---\n", "n", value) == f"---\n{expected}\n---\n"


def test_set_keeps_crlf():
    text = "---\r\na: 1\r\nb: 2\r\n---\r\nbody\r\n"
    assert set_property(text, "a", 5) == "---\r\na: 5\r\nb: 2\r\n---\r\nbody\r\n"
    assert set_property(text, "c", ["x"]) == "---\r\na: 1\r\nb: 2\r\nc:\r\n  - x\r\n---\r\nbody\r\n"
    assert delete_property(text, "a") == "---\r\nb: 2\r\n---\r\nbody\r\n"


def test_set_keeps_the_bom_through_note():
    data = b"\xef\xbb\xbf---\r\na: 1\r\n---\r\nbody\r\n"
    assert Note.from_bytes("a.md", data).with_property("a", 2) == b"\xef\xbb\xbf---\r\na: 2\r\n---\r\nbody\r\n"


@pytest.mark.parametrize(
    "value, written",
    [
        pytest.param("[[Acme Robotics]]", 'company: "[[Acme Robotics]]"\n', id="link-quoted"),
        pytest.param(
            ["[[Dana Reyes]]", "[[Omar Haddad]]"],
            'company:\n  - "[[Dana Reyes]]"\n  - "[[Omar Haddad]]"\n',
            id="link-list",
        ),
        pytest.param([], "company: []\n", id="empty-list"),
        pytest.param(None, "company:\n", id="none"),
        pytest.param(True, "company: true\n", id="bool"),
        pytest.param(3, "company: 3\n", id="int"),
        pytest.param(2.5, "company: 2.5\n", id="float"),
        pytest.param("Acme Robotics", "company: Acme Robotics\n", id="plain-text"),
        pytest.param("Acme: the robots", 'company: "Acme: the robots"\n', id="colon-space"),
        pytest.param(["a", None, ""], 'company:\n  - a\n  -\n  - ""\n', id="list-with-empty-items"),
        pytest.param({"name": "Acme", "tags": ["x"]}, "company:\n  name: Acme\n  tags:\n    - x\n", id="mapping"),
    ],
)
def test_values_are_written_in_obsidians_style(value, written):
    text = "---\ntitle: T\n---\n"
    after = set_property(text, "company", value)
    assert after == f"---\ntitle: T\n{written}---\n"
    # and they read back as the value written
    expected = list(value) if isinstance(value, tuple) else value
    assert typed(parse(after).properties["company"]) == typed(expected)


@pytest.mark.parametrize(
    "key", ["my key", "C#", "-x", "x-", "?x", "?", "#x", "a: b", "x:", "", "yes", "1", "[x]", "{x}", "'q'", "é"]
)
def test_any_key_reads_back_after_set(key):
    after = set_property("---\na: 1\n---\n", key, "v")
    block = parse(after)
    assert block.error is None, (after, block.error)
    assert block.properties == {"a": 1, key: "v"}


@pytest.mark.parametrize(
    "value",
    [
        pytest.param([{"name": "Smith, John", "role": "lead"}], id="comma-in-a-value"),
        pytest.param([{"role, title": "lead"}], id="comma-in-a-key"),
        pytest.param([{"b [x]": 2}], id="bracket-in-a-key"),
        pytest.param([{"a}": 1}], id="brace-in-a-key"),
        pytest.param([{"#tag": 1, "k": "x #y"}], id="hash"),
        pytest.param([["a, b", "c"], []], id="nested-lists"),
    ],
)
def test_list_of_collections_reads_back_after_set(value):
    after = set_property("---\na: 1\n---\n", "people", value)
    block = parse(after)
    assert block.error is None, (after, block.error)
    assert typed(block.properties["people"]) == typed(value)


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**9), 10**9)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
    | st.text(alphabet="ab -?:#'\"[]{},|>&*!%@`~.01\\", max_size=6)
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        ["---\ntitle: T\ntags:\n- a\n---\nbody\n", "---\r\na: 1\r\n---\r\n", "no frontmatter\n", "---\n  a: 1\n---\n"]
    ),
    st.text(alphabet="ab -?:#'\"[]{},|>&*!%@`~.01\\é", min_size=0, max_size=6),
    _SCALARS | st.lists(_SCALARS, max_size=4),
)
def test_set_then_parse_gives_the_value_back(text, key, value):
    after = set_property(text, key, value)
    block = parse(after)
    assert block is not None and block.error is None, (after, block and block.error)
    assert typed(block.properties[key]) == typed(value)
    before = parse(text)
    for other, old in (before.properties if before else {}).items():
        if other != key:
            assert typed(block.properties[other]) == typed(old)


def test_setting_an_unsupported_type_raises_type_error():
    with pytest.raises(TypeError):
        set_property("---\na: 1\n---\n", "a", object())


def test_edit_then_read_back_keeps_other_values():
    text = "---\nzip: 01234\nok: yes\nversion: 1.10\n---\n"
    after = set_property(text, "new", "v")
    assert_loads(after[4 : after.index("---\n", 4)], {"zip": "01234", "ok": "yes", "version": "1.10", "new": "v"})


# ---------------------------------------------------------------------------
# format_scalar: quotes only when YAML (or another YAML reader) needs them
# BR-06 item 5: quote a string if it contains ": " or " #", has leading or
# trailing spaces, starts with "- ", "? " or one of [ ] { } , & * ! | > ' " % @ ` #,
# or would otherwise read back as bool / null / number / date.

PLAIN_OK = [
    "Acme Robotics",
    "C#",
    "a:b",
    "https://example.com/x",
    "Zürich",
    "a - b",
    "x-ray",
    "50%",
    "a\\b",
    "e-mail@example.com",
]


@pytest.mark.parametrize("value", PLAIN_OK)
def test_format_scalar_leaves_safe_text_plain(value):
    assert format_scalar(value) == value


QUOTED_BY_RULE = [
    ("a: b", '"a: b"'),
    ("ends with colon:", '"ends with colon:"'),
    ("a #b", '"a #b"'),
    (" leading", '" leading"'),
    ("trailing ", '"trailing "'),
    ("- item", '"- item"'),
    ("? what", '"? what"'),
    ("", '""'),
    ("true", '"true"'),
    ("False", '"False"'),
    ("null", '"null"'),
    ("~", '"~"'),
    ("42", '"42"'),
    ("-7", '"-7"'),
    ("1.5", '"1.5"'),
    ("01234", '"01234"'),
    ("1e3", '"1e3"'),
    ("0x1F", '"0x1F"'),
    ("+44", '"+44"'),
    ("yes", '"yes"'),
    ("2026-11-23", '"2026-11-23"'),
    ("2026-11-23T10:30:00", '"2026-11-23T10:30:00"'),
    ('say "hi": now', '"say \\"hi\\": now"'),
    ("C:\\dir: x", '"C:\\\\dir: x"'),
    ("line\nbreak", '"line\\nbreak"'),
    ("tab\there", '"tab\\there"'),
] + [(c + "x", '"' + ("\\" + c if c == '"' else c) + 'x"') for c in "[]{},&*!|>'\"%@`#"]


@pytest.mark.parametrize("value, expected", QUOTED_BY_RULE, ids=[repr(v) for v, _ in QUOTED_BY_RULE])
def test_format_scalar_quotes_by_the_writer_rule(value, expected):
    assert format_scalar(value) == expected


@pytest.mark.parametrize(
    "value, expected",
    [(None, ""), (True, "true"), (False, "false"), (0, "0"), (-12, "-12"), (2.5, "2.5")],
)
def test_format_scalar_non_strings(value, expected):
    assert format_scalar(value) == expected


def test_format_scalar_rejects_non_scalars():
    with pytest.raises(TypeError):
        format_scalar(["a"])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20))
def test_format_scalar_reads_back_as_the_same_string(value):
    written = format_scalar(value)
    assert typed(load(f"k: {written}\n")) == typed({"k": value})


# ---------------------------------------------------------------------------
# The fast path: _simple must agree with the full parser on whatever it accepts

KEYS = ["title", "tags", "a", "my key", "prénom", "due-date", "x_y", "Key2", "url", "k.v"]
# values the fast path is meant to take, and values that must send it to the parser
EASY_VALUES = [
    "",
    "plain text",
    "yes",
    "no",
    "On",
    "true",
    "False",
    "TRUE",
    "null",
    "~",
    "Null",
    "0",
    "42",
    "-7",
    "+44",
    "01234",
    "1.10",
    "1.5",
    "3.0",
    "-0",
    "1e3",
    "0x1F",
    ".5",
    "1_000",
    "2026-11-23",
    "10:30",
    "C#",
    "a:b",
    "a#c",
    "http://x.y/z#f",
    '"quoted"',
    '""',
    "''",
    "'single'",
    '"[[Link]]"',
    "'[[Link]]'",
    "[]",
    "-x",
    "trailing   ",
    "Zürich 東京",
    "\\",
    "a\\b",
    "it's",
    'say "hi"',
    "a  b",
    "--",
    "...",
    "x-",
    "a - b",
    "1.",
    "-.5",
]
TRICKY_VALUES = [
    "a: b",
    "a #c",
    "x:",
    "'it''s'",
    '"esc \\" q"',
    '"back\\\\slash"',
    '"a" # c',
    "'a' trailing",
    '"unclosed',
    "'unclosed",
    '"a"b"',
    "'a'b'",
    "[a, b]",
    "{}",
    "{a: 1}",
    "[[Link]]",
    "- x",
    "-",
    "#comment",
    "|",
    ">",
    "|-",
    "&a x",
    "*a",
    "!t x",
    "@x",
    "`x`",
    "%x",
    "?",
    "? x",
    ",x",
    "]",
    "}",
    "a ]",
    "x,y",
    "---",
    "[] # c",
    '"x" ',
    "' x '",
]
ODD_LINES = [
    "  nested: 1",
    "  continuation",
    "- orphan item",
    "\tb: 1",
    "key\t: v",
    "k: a\tb",
    "  - deeper",
    "    - deeper",
    "a: &x 1",
    "b: *x",
    "? k",
    ": v",
    "-  two spaces",
    "-\titem",
    "%YAML 1.2",
    "just text",
    '"quoted key": v',
    "'k': v",
    "k: |",
    "  literal",
    "[a]: b",
    "k:v",
    "k :v",
    "title: dup",
    " a: 1",
    "a:  # c",
]


@st.composite
def flat_blocks(draw):
    """Mostly flat frontmatter (what the fast path is for), with now and then
    a value or a line that only the full parser handles."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    noise = draw(st.sampled_from([0, 0, 0.05, 0.2]))  # share of tricky values and odd lines

    def value():
        tricky = draw(st.floats(0, 1)) < noise
        if tricky:
            return draw(st.sampled_from(TRICKY_VALUES) | st.text(alphabet="ab :#-'\"[]{}\\,", max_size=6))
        return draw(st.sampled_from(EASY_VALUES))

    lines: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["scalar", "scalar", "scalar", "list", "list", "comment", "blank", "odd"]))
        key = draw(st.sampled_from(KEYS) | st.from_regex(r"[a-z][a-z0-9 _-]{0,6}", fullmatch=True))
        if kind == "scalar":
            sep = draw(st.sampled_from([": ", ": ", ":  ", " : "]))
            text = value()
            lines.append(f"{key}{sep}{text}".rstrip(" ") if not text.endswith(" ") else f"{key}{sep}{text}")
        elif kind == "list":
            lines.append(draw(st.sampled_from([f"{key}:", f"{key}:", f"{key}: ", f"{key}:  # c"])))
            indent = draw(st.sampled_from([0, 2, 4]))
            for _ in range(draw(st.integers(0, 4))):
                shift = draw(st.floats(0, 1)) < noise
                item_indent = draw(st.sampled_from([1, 3, 6])) if shift else indent
                item = value()
                lines.append(" " * item_indent + ("- " + item if item else draw(st.sampled_from(["-", "- "]))))
                if draw(st.integers(0, 5)) == 0:
                    lines.append(draw(st.sampled_from(["", "  # c", "# c", " " * indent + "# c"])))
        elif kind == "comment":
            lines.append(draw(st.sampled_from(["# comment", "  # indented", "#", "#: x"])))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "  ", "   "])))
        elif draw(st.floats(0, 1)) < noise * 2:
            lines.append(draw(st.sampled_from(ODD_LINES)))
    source = newline.join(lines)
    if lines and draw(st.booleans()):
        source += newline
    return source


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flat_blocks())
def test_fast_path_agrees_with_the_full_parser(source):
    fast = _simple(source)
    if fast is None:
        return
    try:
        value, entries = _Parser(source, 1).document()
    except FrontmatterError as exc:
        raise AssertionError(f"_simple accepted what the full parser rejects: {exc}") from None
    assert typed(fast[0]) == typed(value)
    assert list(fast[0]) == list(value), "key order"
    assert fast[1] == entries


@pytest.mark.parametrize(
    "source",
    [
        "a: 1\nb: yes\nc: 01234\n",
        "tags:\n- a\n- b\n",
        "tags:\n    - a\n    -\n",
        "a: '[[x]]'\r\nb: \"y\"\r\n",
        "a:\n# c\n\nb: []\n",
    ],
)
def test_fast_path_examples_agree_with_the_full_parser(source):
    fast = _simple(source)
    assert fast is not None, "these flat blocks are what the fast path is for"
    value, entries = _Parser(source, 1).document()
    assert typed(fast[0]) == typed(value)
    assert fast[1] == entries


def test_loads_is_the_fast_path_or_the_parser():
    # a block the fast path declines still parses
    assert frontmatter._simple("a:\n  b: 1\n") is None
    assert_loads("a:\n  b: 1\n", {"a": {"b": 1}})


@pytest.mark.parametrize(
    "text, key, value, expected",
    [
        ("---\ntype: contact   # note\nx: 1\n---\n", "type", "person", "---\ntype: person   # note\nx: 1\n---\n"),
        ('---\ntype: "a # b" # real\n---\n', "type", "person", "---\ntype: person # real\n---\n"),
        ("---\ntype: a#b\n---\n", "type", "person", "---\ntype: person\n---\n"),
        ("---\ntags: # topics\n  - a\n---\n", "tags", ["x"], "---\ntags: # topics\n  - x\n---\n"),
        ("---\r\nk: 1 # c\r\n---\r\n", "k", 2, "---\r\nk: 2 # c\r\n---\r\n"),
    ],
)
def test_setting_a_key_keeps_the_comment_on_its_line(text, key, value, expected):
    """A comment after a value (``key: v  # why``) survives a change of the value."""
    assert set_property(text, key, value) == expected
