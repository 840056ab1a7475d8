"""Differential test: our code regions against a CommonMark parser (markdown-it-py).

For every note of every corpus that holds ``[[`` or ``](``, each such
position in the body (after the frontmatter, as ``links.scan`` sees it) is
asked one question on both sides: does it lie in code?  Ours: inside one of
``regions.code_regions(body)``.  markdown-it's: inside a ``fence`` or
``code_block`` token (line ranges from ``token.map``) or a ``code_inline``
token (offsets recorded by wrapping markdown-it's backtick rule, mapped from
the inline token's content back to the body).  Only notes holding a link
opener are parsed, which keeps the whole run to seconds.

Obsidian extends CommonMark with syntax markdown-it does not know.  Each
disagreement must fall in one of these named categories (counted, printed
with ``pytest -s``); anything else fails with the note, the offset and the
text around it:

* ``obsidian-comment`` -- ``%% ... %%``: no link inside for us, plain text
  for markdown-it; or markdown-it pairs a backtick inside a comment with one
  outside it (or opens a fence there), so a position is code for it only;
* ``html-comment`` -- ``<!-- ... -->``: the same, and markdown-it reads the
  comment as raw HTML (``html_block`` / ``html_inline``), which is not code;
* ``math`` -- ``$...$`` and ``$$...$$`` (Obsidian's MathJax): the same;
* ``html-block`` -- we see code where markdown-it reads a raw HTML block
  (``<div>`` ... up to a blank line): we do not model HTML blocks, and
  CommonMark finds neither code nor links in them.

Wikilinks need no category: they matter here only as positions.  Neither
side lets ``[[...]]`` change how backticks pair or fences close (CommonMark
code spans bind tighter than link brackets, and so do ours), so a wikilink
cannot cause a disagreement.  The frontmatter is never compared: it is not
Markdown, and ``code_regions`` never sees it.

Observed on the corpora at the pinned commits (run ``pytest -s`` for the
live table; this is a record, the test does not compare against it):

    corpus           notes  positions  disagree  categories
    obsidian-hub      6555      94287     22440  html-comment 18794, obsidian-comment 3646
    dendron-site       703       7159        95  html-comment 95
    kepano-obsidian     54         81         0
    tasks-demo          51        182         2  html-comment 1, obsidian-comment 1
    tasks-docs         109       1630         2  html-comment 2

Before BR-42 (issue 9) the same run found 15 more, none in a category: code
spans paired across list items, and an escaped backtick (``\\```) opening one.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

import pytest
from autograph.read.note import Note
from autograph.read.regions import code_regions
from autograph.read.vault import Vault
from conftest import CASES, CORPORA, CORPUS_NAMES, require
from markdown_it import MarkdownIt
from markdown_it.rules_inline.backticks import backtick as _backtick
from markdown_it.rules_inline.image import image as _image
from test_regions import RULES

SHOWN = 15
CATEGORIES = {
    "obsidian-comment": "%% comments %% are Obsidian's; markdown-it reads them as text",
    "html-comment": "<!-- comments --> are raw HTML for markdown-it, not code; no link inside for us",
    "math": "$math$ is Obsidian's (MathJax); markdown-it reads it as text",
    "html-block": "raw HTML blocks hold neither code nor links in CommonMark; we do not model them",
}
_POINTS = re.compile(r"\[\[|\]\(")

# ---------------------------------------------------------------------------
# markdown-it with code span positions


def _record_backtick(state, silent):
    """markdown-it's backtick rule, recording each code span's offsets."""
    start = state.pos
    count = len(state.tokens)
    found = _backtick(state, silent)
    if found and not silent and len(state.tokens) > count and state.tokens[-1].type == "code_inline":
        env = state.env
        base = env["bases"][-1]
        env["spans"].append((env["inline"], base + start, base + state.pos))
    return found


def _record_image(state, silent):
    """markdown-it's image rule; an image's alt text is parsed as a new source
    starting after ``![``, so code spans there get that offset added."""
    if silent:
        return _image(state, silent)
    bases = state.env["bases"]
    bases.append(bases[-1] + state.pos + 2)
    try:
        return _image(state, silent)
    finally:
        bases.pop()


def _core_inline(state):
    """markdown-it's core "inline" rule, telling the rules which token they parse."""
    for token in state.tokens:
        if token.type == "inline":
            state.env["inline"] = token
            state.env["bases"] = [0]
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


MD = MarkdownIt("commonmark")
MD.inline.ruler.at("backticks", _record_backtick)
MD.inline.ruler.at("image", _record_image)
MD.core.ruler.at("inline", _core_inline)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _content_pieces(token, text: str, starts: list[int]) -> list[tuple[int, int, int]]:
    """``(content offset, text offset, length)`` for each line of an inline
    token's content: markdown-it cuts container markers and indentation off
    each line (and trims the whole, and a heading's ``#`` marks), so each
    line's content, less leading white space, is found in its source line."""
    pieces = []
    first = token.map[0]
    offset = 0
    for number, part in enumerate(token.content.split("\n"), start=first):
        core = part.lstrip(" \t")
        if core:
            line_start = starts[number]
            line_end = starts[number + 1] - 1 if number + 1 < len(starts) else len(text)
            line = text[line_start:line_end]
            if line.endswith(core):
                at = len(line) - len(core)
            elif line.rstrip().endswith(core):
                at = len(line.rstrip()) - len(core)
            else:
                at = line.find(core)
            if at < 0:
                raise ValueError(f"line {number + 1}: inline content {part!r} not found in {line!r}")
            pieces.append((offset + len(part) - len(core), line_start + at, len(core)))
        offset += len(part) + 1
    return pieces


def _to_text(pieces: list[tuple[int, int, int]], offset: int) -> int:
    for content_start, text_start, length in pieces:
        if content_start <= offset <= content_start + length:
            return text_start + offset - content_start
    raise ValueError(f"content offset {offset} outside the mapped lines")


@dataclass
class Parsed:
    """markdown-it's reading of a text: sorted, disjoint code ranges and raw HTML block ranges."""

    code: list[tuple[int, int, str]]
    html: list[tuple[int, int, str]]


def markdown_it_code(text: str) -> Parsed:
    env: dict = {"spans": []}
    tokens = MD.parse(text, env)
    starts = _line_starts(text)

    def at_line(number: int) -> int:
        return starts[number] if number < len(starts) else len(text)

    code, html = [], []
    for token in tokens:
        if token.type in ("fence", "code_block"):
            code.append((at_line(token.map[0]), at_line(token.map[1]), token.type))
        elif token.type == "html_block":
            html.append((at_line(token.map[0]), at_line(token.map[1]), token.type))
    pieces: dict[int, list] = {}
    for inline, start, end in env["spans"]:
        if id(inline) not in pieces:
            pieces[id(inline)] = _content_pieces(inline, text, starts)
        code.append((_to_text(pieces[id(inline)], start), _to_text(pieces[id(inline)], end), "code_inline"))
    code.sort()
    return Parsed(code, html)


def _containing(ranges: list, starts: list[int], offset: int):
    index = bisect_right(starts, offset) - 1
    if index >= 0 and ranges[index][1] > offset:
        return ranges[index]
    return None


# ---------------------------------------------------------------------------
# Comparing and explaining


def region_kind(text: str, start: int) -> str:
    """What one of our regions is, from the text it starts with."""
    if text.startswith("%%", start):
        return "obsidian-comment"
    if text.startswith("<!--", start):
        return "html-comment"
    if text.startswith("$", start):
        return "math"
    return "code"


def compare(text: str, regions: list[tuple[int, int]], parsed: Parsed | None = None):
    """``(positions, Counter of categories, [(offset, unexplained reason)])``
    for the ``[[`` and ``](`` positions of ``text``, our ``regions`` against
    markdown-it."""
    parsed = parsed or markdown_it_code(text)
    starts = [start for start, _ in regions]
    code_starts = [start for start, _, _ in parsed.code]
    html_starts = [start for start, _, _ in parsed.html]
    counts: Counter = Counter()
    problems: list[tuple[int, str]] = []
    positions = 0
    for match in _POINTS.finditer(text):
        positions += 1
        offset = match.start()
        ours = _containing(regions, starts, offset)
        theirs = _containing(parsed.code, code_starts, offset)
        if (ours is None) == (theirs is None):
            continue
        if ours is not None:
            kind = region_kind(text, ours[0])
            if kind == "code" and _containing(parsed.html, html_starts, offset):
                kind = "html-block"
            if kind == "code":
                problems.append((offset, "code for us, not for markdown-it"))
            else:
                counts[kind] += 1
            continue
        # markdown-it's code span or fence overlaps one of our comments or
        # math: it paired a backtick (or opened a fence) that we see inside them
        start, end, token = theirs
        kind = None
        for region_start, region_end in regions[max(bisect_right(starts, start) - 1, 0) :]:
            if region_start >= end:
                break
            if region_end > start and region_kind(text, region_start) != "code":
                kind = region_kind(text, region_start)
                break
        if kind:
            counts[kind] += 1
        else:
            problems.append((offset, f"code for markdown-it ({token} {start}-{end}), not for us"))
    return positions, counts, problems


@dataclass
class Oracle:
    notes: int = 0
    positions: int = 0
    counts: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def _context(text: str, offset: int) -> str:
    return repr(text[max(0, offset - 60) : offset + 40])


@cache
def run_oracle(name: str) -> Oracle:
    root = CORPORA / name
    vault = Vault.open(root)
    result = Oracle()
    for path in vault.notes:
        note = Note.from_bytes(path, (root / path).read_bytes())
        if note.text is None:
            continue
        body = note.body
        if "[[" not in body and "](" not in body:
            continue
        # markdown-it reads CR LF and CR as LF; compare on the same text
        body = body.replace("\r\n", "\n").replace("\r", "\n")
        result.notes += 1
        try:
            positions, counts, problems = compare(body, code_regions(body))
        except ValueError as exc:  # a markdown-it token this test cannot place
            result.problems.append(f"{path}: cannot map markdown-it's tokens: {exc}")
            continue
        result.positions += positions
        result.counts.update(counts)
        for offset, why in problems:
            line = note.body_line + body.count("\n", 0, offset)
            result.problems.append(f"{path} line {line} (body offset {offset}): {why}: {_context(body, offset)}")
    return result


@pytest.fixture(scope="module", params=CORPUS_NAMES)
def oracle(request) -> tuple[str, Oracle]:
    require(CORPORA / request.param)
    return request.param, run_oracle(request.param)


@pytest.mark.corpus
def test_code_positions_agree_with_markdown_it_up_to_obsidian_syntax(oracle):
    name, result = oracle
    disagree = sum(result.counts.values()) + len(result.problems)
    print(f"\n[{name}] notes {result.notes}, positions {result.positions}, disagree {disagree}")
    for category, count in sorted(result.counts.items()):
        print(f"    {category:20} {count}")
    assert result.notes > 0
    assert set(result.counts) <= set(CATEGORIES)
    if result.problems:
        shown = "\n".join(result.problems[:SHOWN])
        pytest.fail(
            f"{name}: {len(result.problems)} positions where we and markdown-it disagree on code, "
            f"outside the known categories:\n{shown}",
            pytrace=False,
        )


# ---------------------------------------------------------------------------
# The comparison itself: hand-made texts


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("%% [[a]] %%\n", "obsidian-comment"),
        ("%%\n```\n%%\n[[a]]\n", "obsidian-comment"),  # the fence opens inside our comment
        ("%% ` %% [[a]] `\n", "obsidian-comment"),  # markdown-it pairs a backtick from inside the comment
        ("<!-- [[a]] -->\n", "html-comment"),
        ("Text <!-- [[a]] --> text\n", "html-comment"),
        ("$x [[a]]$\n", "math"),
        ("$`x$ [[a]] `\n", "math"),  # markdown-it pairs a backtick from inside the math
        ("<div>\n`[[a]]`\n</div>\n", "html-block"),
    ],
)
def test_obsidian_syntax_is_a_known_category(text, category):
    positions, counts, problems = compare(text, code_regions(text))
    assert positions == 1
    assert problems == []
    assert counts == Counter({category: 1})


@pytest.mark.parametrize(
    ("text", "regions"),
    [
        ("`[[a]]`\n", []),  # code missed
        ("```\n[[a]]\n```\n", []),
        ("    [[a]]\n", []),
        ("[[a]] text\n", [(0, 5)]),  # code invented
        ("[x](y) text\n", [(0, 11)]),
    ],
)
def test_other_disagreements_are_reported(text, regions):
    _, counts, problems = compare(text, regions)
    assert counts == Counter()
    assert len(problems) == 1


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("a `[[x]]` b\n", [(2, 9, "code_inline")]),
        ("> - a ``[[x]]`` b\n", [(6, 15, "code_inline")]),
        ("# H `[[x]]` #\n", [(4, 11, "code_inline")]),
        ("para\n   more `x\n   [[y]]` z\n", [(13, 25, "code_inline")]),
        ("![alt `[[x]]`](i.png)\n", [(6, 13, "code_inline")]),
        ("```\n[[x]]\n```\n", [(0, 14, "fence")]),
        ("    [[x]]\n", [(0, 10, "code_block")]),
    ],
)
def test_markdown_it_positions_map_to_the_text(text, code):
    assert markdown_it_code(text).code == code


@pytest.mark.parametrize("name", ["fence.md", "heading.md", "spans.md"])
def test_br42_notes_agree_with_markdown_it(name):
    text = (require(CASES / "BR-42" / "vault" / name)).read_text(encoding="utf-8")
    positions, counts, problems = compare(text, code_regions(text))
    assert positions > 0
    assert counts == Counter()
    assert problems == []


@pytest.mark.parametrize(("text", "_expected"), RULES, ids=[repr(text) for text, _ in RULES])
def test_rule_examples_agree_with_markdown_it(text, _expected):
    """Each hand-made text of tests/test_regions.py (no Obsidian syntax in them)."""
    _, counts, problems = compare(text, code_regions(text))
    assert counts == Counter()
    assert problems == []
