"""autograph.read.links: finding links (code-aware) and resolving them as Obsidian does.

Each test shows a note (or a list of vault files) and exactly what is found.
Expected values follow DESIGN.md ("Links"), CommonMark for what counts as
code, and the shared cases BR-16 (code), BR-18 (letter case) and BR-19
(several files with one name).
"""

from __future__ import annotations

import re
import unicodedata

import pytest
from autograph.read.index import note_links
from autograph.read.links import Resolver, anchor_key, block_ids, find_heading, headings, outline, property_links, scan
from autograph.read.note import Note
from autograph.read.regions import code_regions
from hypothesis import given, settings
from hypothesis import strategies as st

# ---------------------------------------------------------------------------
# Helpers


def found(text: str) -> list[tuple]:
    """``(target, fragment, alias, embed, kind)`` of every link in ``text``."""
    return [(link.target, link.fragment, link.alias, link.embed, link.kind) for link in scan(text)]


def targets(text: str) -> list[str]:
    return [link.target for link in scan(text)]


# ---------------------------------------------------------------------------
# Link forms

FORMS = [
    ("[[Note]]", ("Note", "", None, False, "wikilink")),
    ("[[Note|Shown text]]", ("Note", "", "Shown text", False, "wikilink")),
    ("[[Note#Heading]]", ("Note", "Heading", None, False, "wikilink")),
    ("[[Note#Heading|Alias]]", ("Note", "Heading", "Alias", False, "wikilink")),
    ("[[Note#^block-1]]", ("Note", "^block-1", None, False, "wikilink")),
    ("[[Note#H1#H2]]", ("Note", "H1#H2", None, False, "wikilink")),
    ("[[#Heading]]", ("", "Heading", None, False, "wikilink")),
    ("[[#^abc]]", ("", "^abc", None, False, "wikilink")),
    ("[[folder/Note]]", ("folder/Note", "", None, False, "wikilink")),
    ("[[Note.md]]", ("Note.md", "", None, False, "wikilink")),
    ("[[ Spaced ]]", ("Spaced", "", None, False, "wikilink")),
    ("![[Note]]", ("Note", "", None, True, "wikilink")),
    ("![[image.png|300]]", ("image.png", "", "300", True, "wikilink")),
    ("![[image.png|300x200]]", ("image.png", "", "300x200", True, "wikilink")),
    ("![[doc.pdf#page=3]]", ("doc.pdf", "page=3", None, True, "wikilink")),
    ("| [[Note\\|Alias]] | x |", ("Note", "", "Alias", False, "wikilink")),
    ("| ![[image.png\\|100]] |", ("image.png", "", "100", True, "wikilink")),
    ("| [[Note#Part\\|Alias]] |", ("Note", "Part", "Alias", False, "wikilink")),
    ("[text](Note.md)", ("Note.md", "", "text", False, "markdown")),
    ("[text](path%20with%20spaces.md)", ("path with spaces.md", "", "text", False, "markdown")),
    ("[text](<path with spaces.md>)", ("path with spaces.md", "", "text", False, "markdown")),
    ('[text](Note.md "A title")', ("Note.md", "", "text", False, "markdown")),
    ("[text](Note.md 'A title')", ("Note.md", "", "text", False, "markdown")),
    ("[text](Note.md#Some%20Heading)", ("Note.md", "Some Heading", "text", False, "markdown")),
    ("[text](#Heading)", ("", "Heading", "text", False, "markdown")),
    ("[text](Note%20(draft).md)", ("Note (draft).md", "", "text", False, "markdown")),
    ("[text](folder/Note_(v2).md)", ("folder/Note_(v2).md", "", "text", False, "markdown")),
    ("[a [nested] label](Note.md)", ("Note.md", "", "a [nested] label", False, "markdown")),
    ("![diagram](pics/atlas.png)", ("pics/atlas.png", "", "diagram", True, "markdown")),
    ("[Café](Caf%C3%A9.md)", ("Café.md", "", "Café", False, "markdown")),
]


@pytest.mark.parametrize("text, expected", FORMS, ids=[t for t, _ in FORMS])
def test_link_form(text, expected):
    assert found(f"Before {text} after.\n") == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "[site](https://example.com/Note.md)",
        "[mail](mailto:someone@example.com)",
        "[open](obsidian://open?vault=x&file=Note)",
        "[file](file:///tmp/Note.md)",
        "[site](<https://example.com/a b>)",
        "[empty]()",
        "plain [brackets] (and parens)",
        "[[unclosed",
        "[[line\nbreak]]",
    ],
)
def test_not_a_vault_link(text):
    assert found(text) == []


def test_links_are_returned_in_text_order():
    text = "[md](B.md) then [[A]] then ![[c.png]] then [x](D.md)\n"
    assert targets(text) == ["B.md", "A", "c.png", "D.md"]


def test_offsets_cover_the_link_including_the_embed_mark():
    text = "x ![[image.png|20]] y [[Note|N]] z [t](a%20b.md)\n"
    assert [text[link.start : link.end] for link in scan(text)] == ["![[image.png|20]]", "[[Note|N]]", "[t](a%20b.md)"]


def test_text_property_joins_target_and_fragment():
    assert [link.text for link in scan("[[A#B|c]] [[#D]] [[E]]")] == ["A#B", "#D", "E"]


# ---------------------------------------------------------------------------
# Code and comments hold no links

CODE = [
    # fenced code
    ("```\n[[A]]\n```\n[[B]]\n", ["B"]),
    ("~~~\n[[A]]\n~~~\n[[B]]\n", ["B"]),
    ("```python\n[[A]]\n```\n[[B]]\n", ["B"]),
    ("````\n```\n[[A]]\n```\n[[B]]\n````\n[[C]]\n", ["C"]),
    ("~~~~\n[[A]]\n~~~\n[[B]]\n~~~~~\n[[C]]\n", ["C"]),
    ("~~~\n```\n[[A]]\n~~~\n[[B]]\n", ["B"]),
    ("```\n[[A]]\n~~~\n[[B]]\n```\n[[C]]\n", ["C"]),
    ("[[A]]\n```\n[[B]]\n\n[[C]]\n", ["A"]),
    ("[[A]]\n~~~~\n[[B]]\n", ["A"]),
    ("- item\n  ```\n  [[A]]\n  ```\n[[B]]\n", ["B"]),
    ("> ```\n> [[A]]\n> ```\n[[B]]\n", ["B"]),
    ("   ```\n[[A]]\n```\n[[B]]\n", ["B"]),
    ("``\n[[A]]\n``\n", []),  # two backticks: inline code across the lines, not a fence
    # a fence inside a container closes when the container ends (CommonMark)
    ("> ```\n> [[A]]\n\n[[B]]\n", ["B"]),
    ("> ```\n> [[A]]\n[[B]]\n", ["B"]),
    ("- item\n  ```\n  [[A]]\n\n[[B]]\n", ["B"]),
    # four spaces of indentation make indented code, not a fence (CommonMark)
    ("Para\n\n    ```\n    [[A]]\n\n[[B]]\n", ["B"]),
    # inline code
    ("`[[A]]` [[B]]\n", ["B"]),
    ("``[[A]] ` still code`` [[B]]\n", ["B"]),
    ("```[[A]]``` [[B]]\n", ["B"]),
    ("x ```[[A]]``` [[B]]\n", ["B"]),
    ("a ` [[A]]\n", ["A"]),
    ("`` [[A]] `\n", ["A"]),
    ("`open\n[[A]] close`\n[[B]]\n", ["B"]),
    ("`open\n\n[[A]] close`\n", ["A"]),
    ("`open\n   \n[[A]] close`\n", ["A"]),
    ("`a` [[A]] `b`\n", ["A"]),
    # indented code blocks
    ("Text\n\n    [[A]]\n\n[[B]]\n", ["B"]),
    ("Text\n\n\t[[A]]\n[[B]]\n", ["B"]),
    ("    [[A]]\n[[B]]\n", ["B"]),
    ("Text\n    [[A]]\n", ["A"]),
    ("- item\n    [[A]]\n", ["A"]),
    ("- item\n\n    [[A]]\n", ["A"]),
    ("- item\n\n      [[A]]\n", []),
    ("1. one\n\n   more [[A]]\n", ["A"]),
    ("- a\n  - b\n\n      [[A]]\n", ["A"]),
    ("Text\n\n    code\n    [[A]]\n", []),
    # comments
    ("%%[[A]]%% [[B]]\n", ["B"]),
    ("%%\n[[A]]\n%%\n[[B]]\n", ["B"]),
    ("[[A]] %% [[B]]\n[[C]]\n", ["A"]),
    ("%%a%% [[A]] %%b%% [[B]] %%[[C]]%%\n", ["A", "B"]),
    ("<!-- [[A]] --> [[B]]\n", ["B"]),
    ("<!--\n[[A]]\n-->\n[[B]]\n", ["B"]),
    ("[[A]] <!-- [[B]]\n", ["A"]),
    ("`%%` [[A]] `%%`\n", ["A"]),
    ("%%\n```\n%%\n[[A]]\n", ["A"]),
    ("<!-- ` -->[[A]]`x`\n", ["A"]),
    ("```\n%%\n```\n[[A]]\n", ["A"]),
    # Markdown links follow the same rules
    ("`[x](A.md)` [y](B.md)\n", ["B.md"]),
    ("```\n[x](A.md)\n```\n%%[z](C.md)%%\n", []),
]


@pytest.mark.parametrize("text, expected", CODE, ids=[repr(t) for t, _ in CODE])
def test_code_and_comments_hold_no_links(text, expected):
    assert targets(text) == expected


def test_br16_shell_and_toml_brackets_in_code():
    text = (
        "See [[Design Doc]].\n\n"
        'Run `[[ -n "$X" ]]` first.\n\n'
        "```toml\n[[outputs.influxdb]]\n```\n\n"
        "```bash\nif [[ $a =~ [[:space:]] ]]; then\n```\n\n"
        "And [[Design Doc|the design]].\n"
    )
    assert found(text) == [
        ("Design Doc", "", None, False, "wikilink"),
        ("Design Doc", "", "the design", False, "wikilink"),
    ]


MATH_ESCAPES_AND_BLOCK_STARTS = [
    # math holds no links; a lone $ in prose is not math
    ("x $[[a]]$ y [[B]]\n", ["B"]),
    ("$$\n[[b]]\n$$\n[[B]]\n", ["B"]),
    ("costs $5 and $10 [[c]]\n", ["c"]),
    # a backslash escapes the bracket; an escaped backslash does not
    ("\\[[d]] [[B]]\n", ["B"]),
    ("\\\\[[e]]\n", ["e"]),
    # an indented line after a block that cannot continue is indented code
    ("# Heading\n    [[f]]\n[[B]]\n", ["B"]),
    ("Para\n\n***\n    [[g]]\n[[B]]\n", ["B"]),
    ("Para\n\n---\n    [[h]]\n[[B]]\n", ["B"]),
    ("```\ncode\n```\n    [[i]]\n[[B]]\n", ["B"]),
    # ... but continues a paragraph
    ("Para\n    [[j]]\n", ["j"]),
    # a fence in a container ends with the container
    ("> ```\n> [[k]]\nafter [[B]]\n", ["B"]),
    ("- item\n  ```\n  [[l]]\n\nafter [[B]]\n", ["B"]),
    # four spaces after a paragraph and a blank line: indented code, not a fence
    ("Para\n\n    ```\n    [[m]]\n    ```\n[[B]]\n", ["B"]),
    ("Para\n\n    ```\n[[B]]\n", ["B"]),
]


@pytest.mark.parametrize(
    "text, expected", MATH_ESCAPES_AND_BLOCK_STARTS, ids=[repr(t) for t, _ in MATH_ESCAPES_AND_BLOCK_STARTS]
)
def test_math_escapes_and_block_starts(text, expected):
    """Math, escaped brackets and indented code after headings, rules and fences hold no links."""
    assert targets(text) == expected


# ---------------------------------------------------------------------------
# Line numbers


def test_line_numbers_are_one_based():
    assert [(link.target, link.line) for link in scan("a\n[[A]]\n\nb [[B]] [[C]]\n[x](D.md)")] == [
        ("A", 2),
        ("B", 4),
        ("C", 4),
        ("D.md", 5),
    ]


def test_line_numbers_count_the_frontmatter():
    text = "---\ntitle: T\ntags:\n  - x\n---\n# Title\n\nSee [[A]].\n"
    note = Note.from_bytes("n.md", text.encode())
    assert [(link.target, link.line) for link in scan(note.text, note.body_offset, note.body_line)] == [("A", 8)]


def test_line_numbers_with_crlf():
    text = "---\r\na: 1\r\n---\r\n\r\n[[A]]\r\n```\r\n[[X]]\r\n```\r\nx [[B]]\r\n"
    note = Note.from_bytes("n.md", text.encode())
    links = scan(note.text, note.body_offset, note.body_line)
    assert [(link.target, link.line) for link in links] == [("A", 5), ("B", 9)]
    assert [note.text[link.start : link.end] for link in links] == ["[[A]]", "[[B]]"]


def test_line_numbers_with_a_bom():
    note = Note.from_bytes("n.md", b"\xef\xbb\xbf---\na: 1\n---\n[[A]]\n")
    assert [(link.target, link.line) for link in note_links(note)] == [("A", 4)]


def test_invalid_frontmatter_still_gives_body_links_with_file_lines():
    note = Note.from_bytes("n.md", b'---\ndescription: a: b\ncompany: "[[Acme]]"\n---\n\n[[Body]]\n')
    assert [(link.target, link.line, link.kind) for link in note_links(note)] == [("Body", 6, "wikilink")]


# ---------------------------------------------------------------------------
# Links in frontmatter values


def test_property_links_in_values_and_lists():
    properties = {
        "company": "[[Acme]]",
        "people": ["[[Dana Reyes]]", "plain", "[[Omar|O.]]"],
        "meta": {"source": "Met [[A]] and [[B#Intro]]"},
        "count": 3,
        "flag": True,
        "cover": "![[cover.png]]",
    }
    assert [
        (link.target, link.fragment, link.alias, link.embed, link.kind, link.key) for link in property_links(properties)
    ] == [
        ("Acme", "", None, False, "property", "company"),
        ("Dana Reyes", "", None, False, "property", "people"),
        ("Omar", "", "O.", False, "property", "people"),
        ("A", "", None, False, "property", "meta"),
        ("B", "Intro", None, False, "property", "meta"),
        ("cover.png", "", None, True, "property", "cover"),
    ]


def test_property_links_take_the_line_of_their_key():
    properties = {"a": "[[A]]", "b": ["[[B]]", "[[C]]"]}
    assert [(link.target, link.line) for link in property_links(properties, {"a": 2, "b": 3})] == [
        ("A", 2),
        ("B", 3),
        ("C", 3),
    ]


def test_unquoted_wikilink_in_frontmatter_is_a_nested_list_not_a_link():
    note = Note.from_bytes("n.md", b'---\ncompany: [[Acme]]\nboss: "[[Dana]]"\n---\n')
    assert note.properties == {"company": [["Acme"]], "boss": "[[Dana]]"}
    assert [(link.target, link.line, link.kind, link.key) for link in note_links(note)] == [
        ("Dana", 3, "property", "boss")
    ]


def test_note_links_lists_frontmatter_links_before_body_links():
    note = Note.from_bytes("n.md", b'---\nup: "[[Parent]]"\nrelated:\n  - "[[X]]"\n---\nBody [[Y]]\n')
    assert [(link.target, link.line, link.kind) for link in note_links(note)] == [
        ("Parent", 2, "property"),
        ("X", 4, "property"),  # the list item's own line
        ("Y", 6, "wikilink"),
    ]


def test_property_list_items_get_their_own_lines():
    """list: - "[[m7]]" - "[[m8]]": each link has its item's line (4 and 5), not the key's (3)."""
    note = Note.from_bytes("n.md", b'---\ntitle: x\nlist:\n  - "[[m7]]"\n  - "[[m8]]"\n---\nBody [[z]]\n')
    assert [(link.target, link.line, link.kind, link.key) for link in note_links(note)] == [
        ("m7", 4, "property", "list"),
        ("m8", 5, "property", "list"),
        ("z", 7, "wikilink", None),
    ]


def test_property_list_items_whose_targets_share_a_prefix():
    """[[m7]] then [[m]]: the shorter target is not placed on the longer one's line."""
    note = Note.from_bytes("n.md", b'---\nlist:\n  - "[[m7]]"\n  - "[[m]]"\n  - "[[m7]]"\n---\n')
    assert [(link.target, link.line) for link in note_links(note)] == [("m7", 3), ("m", 4), ("m7", 5)]


def test_property_list_item_with_two_links_gives_both_its_line():
    """list: - "[[m7]] and [[m]]" - "[[z]]": m7 and m are on line 3, z on line 4."""
    note = Note.from_bytes("n.md", b'---\nlist:\n  - "[[m7]] and [[m]]"\n  - "[[z]]"\n---\n')
    assert [(link.target, link.line) for link in note_links(note)] == [("m7", 3), ("m", 3), ("z", 4)]


# ---------------------------------------------------------------------------
# Headings, block ids and anchor keys


def test_headings():
    body = (
        "# One\n"
        "## Two ##\n"
        "   ### Three\n"
        "\n#nospace is a tag\n"
        "\n    # indented code\n"
        "\nSetext one\n"
        "==========\n"
        "\nSetext two\n"
        "---\n"
        "\n```\n# Not a heading\n```\n"
        "\n%%\n# Commented\n%%\n"
        "\n####### Seven\n"
        "\n###### Six\n"
    )
    assert headings(body) == ["One", "Two", "Three", "Setext one", "Setext two", "Six"]


def test_block_ids():
    body = "A paragraph ^para-1\n\n- item ^Item2\n\n```\ncode ^incode\n```\nnot^anid\n^last\n"
    assert block_ids(body) == {"para-1", "item2", "last"}


@pytest.mark.parametrize(
    "heading, key",
    [
        ("Budget", "budget"),
        ("Budget: Q1 [draft]", "budget q1 draft"),
        ("  Many   spaces ", "many spaces"),
        ("Café", "café"),
        (unicodedata.normalize("NFD", "Café"), "café"),
        ("Ünïcödé Straße", "ünïcödé straße"),
        ("C# / F#", "c f"),
    ],
)
def test_anchor_key(heading, key):
    assert anchor_key(heading) == unicodedata.normalize("NFC", key)


@pytest.mark.parametrize(
    "heading, key",
    [
        # BR-39: Obsidian's stripHeading keeps "-", "'", "_" and non-ASCII characters
        ("MCP Server", "mcp server"),
        ("mcp-server", "mcp-server"),
        ("What's new?", "what's new"),
        ("snake_case", "snake_case"),
        ("Fájl-tulajdonságok", "fájl-tulajdonságok"),
        ("全角：句読点。", "全角：句読点。"),
        ("a\u00a0\u3000b", "a b"),  # JavaScript's \s shrinks NBSP and ideographic space
        ("a\u0085b", "a\u0085b"),  # NEL is not in \s
        ('!"#$%&()*+,.:;<=>?@^`{|}~/[]\\x', "x"),
        ("line\r\nbreak", "line break"),
    ],
)
def test_anchor_key_is_obsidians_strip_heading(heading, key):
    assert anchor_key(heading) == key


@pytest.mark.parametrize(
    "fragment, index",
    [
        ("Part A", 0),
        ("Part A#Details", 1),
        ("Part B#Details", None),  # no deeper "Details" after "Part B"
        ("Details", 1),
        ("Part A##Details", 1),
        ("Part A#Later", 4),  # no section containment: any deeper heading after it
        ("Part B#Later", 4),
        ("Details#Part B", None),  # not deeper
        ("Part B#Part A", None),  # not after
        ("missing", None),
    ],
)
def test_find_heading_walks_the_outline(fragment, index):
    """BR-39: `#A#B` is A, then a deeper B somewhere after it, in document order."""
    body = "# Part A\n## Details\n# Part B\nText\n# Part C\n## Later\n"
    keys = [(level, anchor_key(text)) for level, text in outline(body)]
    assert keys[4] == (2, "later")
    assert find_heading(keys, fragment) == index


def test_outline_levels():
    body = "# One\n### Three\nSetext\n===\nTwo\n---\n```\n# code\n```\n"
    assert outline(body) == [(1, "One"), (3, "Three"), (1, "Setext"), (2, "Two")]


def test_anchor_key_matches_a_link_written_by_obsidian():
    # Obsidian drops ':' and '|' when it writes a link to "Q1: plan | v2"
    assert anchor_key("Q1: plan | v2") == anchor_key("Q1 plan  v2")


# ---------------------------------------------------------------------------
# Resolution


def resolve(files: list[str], target: str, source: str = "src.md"):
    resolution = Resolver(files).resolve(target, source)
    return resolution.path


RESOLVE = [
    # (files, target, source, expected path)
    (["People/Dana Reyes.md"], "dana reyes", "x.md", "People/Dana Reyes.md"),
    (["People/Dana Reyes.md"], "DANA REYES.MD", "x.md", "People/Dana Reyes.md"),
    (["Note.md"], "Note.md", "x.md", "Note.md"),
    (["Note.md"], "Note", "x.md", "Note.md"),
    (["Note.md"], "Not", "x.md", None),
    (["assets/img.png"], "img.png", "x.md", "assets/img.png"),
    (["assets/img.png"], "IMG.PNG", "x.md", "assets/img.png"),
    (["assets/img.png"], "img", "x.md", None),
    (["docs/file.pdf"], "file.pdf", "x.md", "docs/file.pdf"),
    (["Board.canvas"], "Board.canvas", "x.md", "Board.canvas"),
    (["Board.canvas"], "Board", "x.md", None),
    (["Tasks.base"], "Tasks.base", "x.md", "Tasks.base"),
    (["notes/a.b.md"], "a.b", "x.md", "notes/a.b.md"),
    (["a/b/Deep.md"], "b/Deep", "x.md", "a/b/Deep.md"),
    (["a/b/Deep.md"], "a/b/Deep", "x.md", "a/b/Deep.md"),
    (["a/b/Deep.md"], "/a/b/Deep", "x.md", "a/b/Deep.md"),
    (["a/b/Deep.md"], "A/B/deep.md", "x.md", "a/b/Deep.md"),
    (["a/b/Deep.md"], "x/b/Deep", "x.md", None),
    (["a/ob/Deep.md"], "b/Deep", "x.md", None),
    (["a/b/Deep.md"], "a/b", "x.md", None),
    (["src.md"], "", "src.md", "src.md"),
    # relative targets
    (["a/Note.md", "Note.md"], "./Note", "a/src.md", "a/Note.md"),
    (["a/Note.md", "Note.md"], "../Note", "a/src.md", "Note.md"),
    (["a/Note.md"], "../Note.md", "a/b/src.md", "a/Note.md"),
    (["a/img.png"], "./img.png", "a/src.md", "a/img.png"),
    (["x/Note.md"], "../x/note", "a/src.md", "x/Note.md"),
    # BR-40: "../" at the vault root drops nothing
    (["Note.md"], "../Note", "src.md", "Note.md"),
    (["Note.md"], "../../Note", "a/src.md", "Note.md"),
    (["a/Note.md"], "../../../a/Note", "a/b/src.md", "a/Note.md"),
    (["a/Note.md"], "../../../Note", "a/b/src.md", None),
    (["a/Note.md"], "./Missing", "a/src.md", None),
]


@pytest.mark.parametrize(
    "files, target, source, expected", RESOLVE, ids=[f"{t or '(empty)'}<-{s}:{f}" for f, t, s, _ in RESOLVE]
)
def test_resolve(files, target, source, expected):
    assert resolve(files, target, source) == expected


def test_resolve_nfc_link_to_nfd_file_name():
    nfd = unicodedata.normalize("NFD", "Café.md")
    assert resolve([nfd], "Café") == nfd
    assert resolve([nfd], unicodedata.normalize("NFD", "Café")) == nfd


def test_resolve_nfd_link_to_nfc_file_name():
    assert resolve(["notes/Café.md"], unicodedata.normalize("NFD", "café")) == "notes/Café.md"


# BR-19: exact vault path, then the source's own folder, then the shortest path
BR19 = ["a/b/Note.md", "b/Note.md", "zzzz/Note.md", "zzzz/deep/src1.md", "zzzz/src2.md", "root-src.md"]


@pytest.mark.parametrize(
    "files, source, target, expected",
    [
        (BR19, "zzzz/deep/src1.md", "Note", "b/Note.md"),
        (BR19, "zzzz/src2.md", "Note", "zzzz/Note.md"),
        (BR19, "root-src.md", "Note", "b/Note.md"),
        (BR19, "root-src.md", "b/Note", "b/Note.md"),
        (BR19, "zzzz/src2.md", "b/Note", "b/Note.md"),
        (BR19 + ["Note.md"], "zzzz/src2.md", "Note", "Note.md"),
        (BR19 + ["Note.md"], "zzzz/deep/src1.md", "Note", "Note.md"),
        (BR19 + ["Note.md"], "root-src.md", "b/Note", "b/Note.md"),
        # a subfolder of the source's folder counts as its folder (BR-40)
        (["x/y/Note.md", "q/Note.md", "x/src.md"], "x/src.md", "Note", "x/y/Note.md"),
        (["aa/Note.md", "b/long/Note.md", "b/long/src.md"], "b/long/src.md", "note", "b/long/Note.md"),
    ],
)
def test_resolve_same_name_in_several_folders(files, source, target, expected):
    assert resolve(files, target, source) == expected


@pytest.mark.parametrize(
    "files, source, target, expected",
    [
        # a full tie (same rank, same length): code-point order of the path
        (["a/Foo.md", "b/foo.md"], "c/src.md", "Foo", "a/Foo.md"),
        (["a/Foo.md", "b/foo.md"], "c/src.md", "foo", "a/Foo.md"),
        (["a/foo.md", "b/Foo.md"], "c/src.md", "Foo", "a/foo.md"),
        # the source's folder wins over letter case
        (["a/Foo.md", "b/foo.md"], "b/src.md", "Foo", "b/foo.md"),
        (["a/Foo.md", "b/foo.md"], "a/src.md", "foo", "a/Foo.md"),
        # the shorter path wins over letter case
        (["People/BookFusion.md", "Plugins/bookfusion.md"], "x.md", "bookfusion", "People/BookFusion.md"),
        (["People/BookFusion.md", "Plug/bookfusion.md"], "x.md", "BookFusion", "Plug/bookfusion.md"),
        (["notes/MyNote.md"], "index.md", "mynote", "notes/MyNote.md"),
    ],
)
def test_resolve_has_no_letter_case_preference(files, source, target, expected):
    """BR-18 item 4 (revised): link and paths are compared lower-cased, so
    letter case never decides; BR-19's order alone does."""
    assert resolve(files, target, source) == expected


@pytest.mark.parametrize(
    "files, source, target, expected",
    [
        # BR-40: subfolders of the source's folder come first ...
        (
            ["projects/alpha/sub/Plan.md", "other/Plan.md"],
            "projects/alpha/overview.md",
            "Plan",
            "projects/alpha/sub/Plan.md",
        ),
        # ... as a plain string prefix, as Obsidian compares
        (["projects/alphabet/Plan.md", "x/Plan.md"], "projects/alpha/overview.md", "Plan", "projects/alphabet/Plan.md"),
        (["Projects/Alpha/deep/Plan.md", "x/Plan.md"], "projects/alpha/o.md", "plan", "Projects/Alpha/deep/Plan.md"),
        # an ancestor folder still gives no preference (BR-19)
        (["projects/Plan.md", "x/Plan.md"], "projects/alpha/overview.md", "Plan", "x/Plan.md"),
        # shortest in UTF-16 code units: an emoji counts 2
        (["\U0001f600/Plan.md", "ab/Plan.md"], "x.md", "Plan", "ab/Plan.md"),
        (["\U0001f600/Plan.md", "abc/Plan.md"], "x.md", "Plan", "\U0001f600/Plan.md"),
    ],
)
def test_resolve_prefers_paths_below_the_source_folder(files, source, target, expected):
    assert resolve(files, target, source) == expected


@pytest.mark.parametrize(
    "files, target, source, path, candidates, ambiguous",
    [
        pytest.param(["a/Note.md"], "Note", "x.md", "a/Note.md", {"a/Note.md"}, False, id="one-candidate"),
        pytest.param(
            BR19,
            "Note",
            "root-src.md",
            "b/Note.md",
            {"b/Note.md", "zzzz/Note.md", "a/b/Note.md"},
            True,
            id="bare-name-3",
        ),
        pytest.param(
            BR19 + ["Note.md"],
            "Note",
            "root-src.md",
            "Note.md",
            {"Note.md", "b/Note.md", "zzzz/Note.md", "a/b/Note.md"},
            True,
            id="bare-name-exact-root",
        ),
        pytest.param(
            BR19, "b/Note", "root-src.md", "b/Note.md", {"b/Note.md", "a/b/Note.md"}, False, id="exact-path-qualified"
        ),
        pytest.param(
            ["x/b/Note.md", "y/b/Note.md"],
            "b/Note",
            "root-src.md",
            "x/b/Note.md",
            {"x/b/Note.md", "y/b/Note.md"},
            True,
            id="path-suffix-2",
        ),
        pytest.param(
            ["a/img.png", "b/img.png"],
            "img.png",
            "x.md",
            "a/img.png",
            {"a/img.png", "b/img.png"},
            True,
            id="attachment-2",
        ),
        pytest.param(["Note.md"], "missing", "x.md", None, set(), False, id="unresolved"),
    ],
)
def test_ambiguity(files, target, source, path, candidates, ambiguous):
    """BR-19: a bare name with two or more candidates is ambiguous even when it
    resolves; an exact path-qualified link is not."""
    resolution = Resolver(files).resolve(target, source)
    assert resolution.path == path
    assert set(resolution.candidates) == candidates
    assert len(resolution.candidates) == len(candidates)
    assert resolution.ambiguous is ambiguous


def test_resolution_does_not_depend_on_file_order():
    files = BR19 + ["Note.md", "c/Note.md", "C/note.md"]
    expected = [
        Resolver(files).resolve(t, s) for t in ("Note", "note", "b/Note") for s in ("zzzz/src2.md", "root-src.md")
    ]
    for order in (sorted(files), sorted(files, reverse=True), files[3:] + files[:3]):
        assert [
            Resolver(order).resolve(t, s) for t in ("Note", "note", "b/Note") for s in ("zzzz/src2.md", "root-src.md")
        ] == expected


def test_resolve_answers_stay_correct_across_sources():
    # lookups are cached per (target, folder); a second source folder must not reuse the first answer
    resolver = Resolver(["a/Note.md", "b/Note.md", "a/src.md", "b/src.md"])
    assert resolver.resolve("Note", "a/src.md").path == "a/Note.md"
    assert resolver.resolve("Note", "b/src.md").path == "b/Note.md"
    assert resolver.resolve("Note", "a/src.md").path == "a/Note.md"


_NAME_PARTS = st.sampled_from(["a", "A", "b", "é", "e\u0301", "\u212a", "k", ".md", ".MD", ".png", " ", "-"])
_NAMES = st.lists(_NAME_PARTS, min_size=1, max_size=4).map("".join)
_PATHS = st.lists(st.sampled_from(["", "x/", "X/", "x/y/", "é/"]), min_size=1, max_size=1).flatmap(
    lambda folder: _NAMES.map(lambda name: folder[0] + name)
)
_TARGETS = st.one_of(
    _PATHS,
    _PATHS.map(lambda p: "./" + p),
    _PATHS.map(lambda p: "../" + p),
    _PATHS.map(lambda p: "/" + p),
    _PATHS.map(lambda p: p.replace("/", "\\")),
    st.just(""),
    st.just("../"),
    st.just("./"),
)


@settings(max_examples=400, deadline=None)
@given(
    files=st.lists(_PATHS, max_size=12, unique=True),
    links=st.lists(st.tuples(_TARGETS, _PATHS.map(lambda p: p + ".md")), min_size=1, max_size=4),
    other=st.tuples(_TARGETS, _PATHS),
)
def test_a_resolver_for_some_links_answers_them_as_the_whole_one(files, links, other):
    whole = Resolver(sorted(files))
    few = Resolver.for_links(sorted(files), links)
    for target, source in links:
        assert few.covers(target, source)
        assert few.resolve(target, source) == whole.resolve(target, source)
    # a link it was not made for is answered right too (by a resolver of every file)
    assert few.resolve(*other) == whole.resolve(*other)


def test_a_resolver_for_some_links_reads_only_the_files_of_their_names():
    files = [f"f{i}/Note {i}.md" for i in range(50)] + ["a/Dana.md", "b/dana.md", "Dana.png", "Zoë.md"]
    few = Resolver.for_links(files, [("dana", "x.md")])
    assert sorted(few._paths.values()) == ["Zoë.md", "a/Dana.md", "b/dana.md"]  # not Dana.png: a file by its full name
    assert few.resolve("dana", "x.md") == Resolver(files).resolve("dana", "x.md")


def test_aliases_do_not_resolve_links():
    # BR-30 / DESIGN: a bare [[Alias]] does not resolve through `aliases`
    assert resolve(["people/Dana Reyes.md"], "Dana") is None


# The plain definitions of headings and block ids (a regex tried at every
# line start); the library finds the same from cheap str.find probes.
_REF_ATX = re.compile(r"^[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$", re.M)
_REF_SETEXT = re.compile(r"^[ ]{0,3}(\S[^\n]*)\r?\n[ ]{0,3}([=-])\2*[ \t]*\r?$", re.M)
_REF_BLOCK = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*\r?$", re.M)


def _reference_outline(text: str) -> list[tuple[int, str]]:
    found = [(m.start(), len(m.group(1)), m.group(2) or "") for m in _REF_ATX.finditer(text)]
    found += [
        (m.start(), 1 if m.group(2) == "=" else 2, m.group(1))
        for m in _REF_SETEXT.finditer(text)
        if not m.group(1).lstrip().startswith(("#", "-", "*", "+", ">", "|"))
    ]
    regions = code_regions(text)
    return [
        (level, title.strip()) for start, level, title in sorted(found) if not any(a <= start < b for a, b in regions)
    ]


_PIECES = st.sampled_from(
    ["#", "# ", "##", "=", "-", "\n", " ", "a", "^b", "\t", "\r", "\r\n", "```", "==", "--", "x\n==\n", "    #", "\\#"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_outline_and_block_ids_match_their_plain_definitions(text):
    assert outline(text) == _reference_outline(text)
    regions = code_regions(text)
    ids = _REF_BLOCK.finditer(text)
    expected = {m.group(1).lower() for m in ids if not any(a <= m.start(1) < b for a, b in regions)}
    assert block_ids(text) == expected


def test_a_command_naming_many_notes_makes_few_resolvers(make_vault, monkeypatch):
    """``engine.py touch N1 … N200`` names each note through a resolver: a
    few of the files their names can mean, then (asked again and again)
    the one of every file, once, never a pass over every path per name."""
    from autograph.memory.cards import find_card
    from autograph.read.links import Resolver
    from autograph.read.vault import Vault

    root = make_vault({f"people/Person {i}.md": "---\ntype: person\n---\n" for i in range(40)})
    vault = Vault.open(root)
    made = []
    real = Resolver.for_links.__func__
    monkeypatch.setattr(Resolver, "for_links", classmethod(lambda cls, *a: made.append(1) or real(cls, *a)))
    found = [find_card(vault, f"Person {i}") for i in range(40)]
    assert found == [f"people/Person {i}.md" for i in range(40)]
    assert len(made) <= 3 and vault._resolver is not None
