"""Hypothesis properties of ``autograph.read.frontmatter``: parser, emitter, surgical edits.

Frontmatter blocks are generated from a grammar of the supported YAML subset
(``documents``): plain keys and quoted keys, plain / single- / double-quoted
scalars (with escapes), multi-line plain scalars, block lists indented either
way, flow lists and flow mappings, nested maps, comments (own line and
trailing), blank and whitespace-only lines, literal and folded block scalars
with every chomping indicator and an optional indentation indicator, LF or
CRLF, an optional BOM (through ``Note``), and a body after the block.  The
generator knows, independently of the library, the typed value of every key
(YAML 1.2 core schema with DESIGN.md's round-trip rule) and the lines that
hold it.

Values for edits and for the emitter come from ``values``: strings of any
Unicode (plus the tricky ones: ``': '``, ``' #'``, ``'- '``, quotes,
backslashes, newlines, tabs, ``yes``, ``null``, ``01234``, ``1.10``,
``[[Link]]``), ints, finite floats, bools, None, lists and dicts of those.

The ``test_repro_*`` tests at the end hold the smallest inputs these
properties have failed on, so that each failure shows on every run.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

import pytest
import yaml
from autograph.read import frontmatter
from autograph.read.frontmatter import FrontmatterError
from autograph.read.note import BOM, Note
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from test_yaml_oracle import classify_yaml_error, compare, yaml11_plain

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------
# YAML 1.2 core typing with the round-trip rule (DESIGN.md "Frontmatter"),
# written here from the spec, not taken from the library

_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def core_value(text: str):
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if _INT.fullmatch(text) and str(int(text)) == text:
        return int(text)
    if _FLOAT.fullmatch(text):
        number = float(text)
        if math.isfinite(number) and repr(number) == text:
            return number
    return text


def typed_eq(a, b) -> bool:
    """Equality that tells True from 1, 1 from 1.0, and minds dict key order."""
    if isinstance(a, tuple):
        a = list(a)
    if isinstance(b, tuple):
        b = list(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(typed_eq(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(typed_eq(x, y) for x, y in zip(a, b, strict=True))
    return a == b


# Characters YAML 1.2 allows in a stream (c-printable), minus the line breaks.
def _printable(ch: str) -> bool:
    o = ord(ch)
    return (
        ch == "\t"
        or 0x20 <= o <= 0x7E
        or o == 0x85
        or 0xA0 <= o <= 0xD7FF
        or 0xE000 <= o <= 0xFFFD
        or 0x10000 <= o <= 0x10FFFF
    )


# ---------------------------------------------------------------------------
# The grammar


@dataclass
class Document:
    lines: list[str]  # block content lines, without line endings
    spans: dict[str, tuple[int, int]]  # key -> (first line, end line exclusive)
    expected: dict
    newline: str
    body: str
    heads: dict[str, str] = None  # key -> its first line up to the colon, as written
    list_indents: tuple[int, ...] = ()  # indentation of each top-level block list, relative to its key
    commented: frozenset = frozenset()  # keys whose value holds a comment after the key's own line
    key_comments: dict[str, str] = None  # key -> the comment at the end of its own line

    @property
    def block(self) -> str:
        return "".join(line + self.newline for line in self.lines)

    @property
    def text(self) -> str:
        nl = self.newline
        return f"---{nl}{self.block}---{nl}{self.body}"

    def offsets(self, key: str) -> tuple[int, int]:
        """Character offsets in ``text`` of ``key``'s lines."""
        start, end = self.spans[key]
        head = len("---" + self.newline)
        width = [len(line) + len(self.newline) for line in self.lines]
        return head + sum(width[:start]), head + sum(width[:end])

    @property
    def closing(self) -> int:
        return len("---" + self.newline) + len(self.block)


WORD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789éßø中文_"
words = st.text(alphabet=WORD_CHARS, min_size=1, max_size=8)
SPECIAL_PLAIN = [
    "yes",
    "no",
    "on",
    "Off",
    "null",
    "Null",
    "~",
    "true",
    "False",
    "TRUE",
    "01234",
    "1.10",
    "1.5",
    "42",
    "-7",
    "+44",
    "0",
    "-0",
    "0x1F",
    "0o17",
    "1e3",
    "1e-05",
    "1.0e+3",
    ".5",
    "1.",
    ".inf",
    "1_000",
    "12:30",
    "2021-04-17",
    "2021-10-02T11:30:00",
    "http://example.com/a#b",
    "a:b",
    "a#b",
    "-x",
    ":x",
    "?x",
    "x-",
    "C#",
    "--",
    "1,2",
    "a, b",
    "(x)",
    "x's",
    'say "hi"',
    "50%",
    "{{date}}x",
    "x]",
]


@st.composite
def plain_scalars(draw, flow: bool = False) -> str:
    """Valid plain scalar text (block context; flow context when ``flow``)."""
    if draw(st.booleans()):
        text = draw(st.sampled_from(SPECIAL_PLAIN))
    else:
        parts = draw(st.lists(words, min_size=1, max_size=4))
        separators = st.sampled_from([" ", "-", ".", "/", ":", "#", "  "])
        seps = draw(st.lists(separators, min_size=len(parts), max_size=len(parts)))
        text = "".join(p + s for p, s in zip(parts, seps, strict=True))[: -len(seps[-1])]
    if flow and any(c in text for c in ",[]{}"):
        text = re.sub(r"[,\[\]{}]", "x", text)
    # what makes a plain scalar invalid or ends it early
    text = text.replace(": ", ":x").replace(" #", " x")
    if text.endswith(":"):
        text += "x"
    if flow and re.search(r":[,\[\]{}]", text):
        text = text.replace(":", "x")
    if flow:
        # YAML 1.2 allows "?" in a flow plain scalar and ":x" at its start;
        # PyYAML does not: avoid them so that the oracle stays usable
        text = text.replace("?", "x")
        if text[:1] == ":":
            text = "x" + text
    assume_ok = text and text == text.strip(" ") and text[0] not in ",[]{}#&*!|>'\"%@`"
    if not assume_ok:
        return "x" + text.strip(" ") if text.strip(" ") else "x"
    if text[0] in "-?:" and (len(text) == 1 or text[1] in " ,[]{}"):
        return "x" + text
    return text


def _single_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@st.composite
def double_quoted(draw, text: str) -> str:
    """``text`` written double-quoted, escaping what must be and, at random,
    some other characters in every escape form YAML has."""
    out = ['"']
    rnd = draw(st.randoms(use_true_random=False))
    named = {
        "\n": "\\n",
        "\t": "\\t",
        "\r": "\\r",
        "\\": "\\\\",
        '"': '\\"',
        "\0": "\\0",
        "\x1b": "\\e",
        "\x85": "\\N",
        "\xa0": "\\_",
        "\u2028": "\\L",
        "\u2029": "\\P",
        "/": "\\/",
        " ": "\\ ",
    }
    for ch in text:
        o = ord(ch)
        must = ch in '"\\' or not _printable(ch) or ch in "\t\x85\u2028\u2029\ufeff"
        if not must and rnd.random() < 0.8:
            out.append(ch)
        elif ch in named and rnd.random() < 0.5:
            out.append(named[ch])
        elif o < 0x100 and rnd.random() < 0.5:
            out.append(f"\\x{o:02x}" if rnd.random() < 0.5 else f"\\x{o:02X}")
        elif o < 0x10000 and rnd.random() < 0.7:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


any_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
printable_text = st.text(
    st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"], blacklist_characters="\ufeff\ufffe\uffff"), max_size=12
)


@st.composite
def scalar_nodes(draw, flow: bool = False) -> tuple[str, object]:
    """(text as written, value) of a scalar on one line."""
    kinds = ["plain", "single", "double"] if flow else ["plain", "plain", "single", "double", "empty"]
    kind = draw(st.sampled_from(kinds))
    if kind == "plain":
        text = draw(plain_scalars(flow=flow))
        return text, core_value(text)
    if kind == "single":
        value = draw(printable_text)
        return _single_quote(value), value
    if kind == "double":
        value = draw(any_text)
        return draw(double_quoted(value)), value
    text = draw(st.sampled_from(["", "~", "null"]))
    return text, None


@st.composite
def flow_nodes(draw, depth: int = 0) -> tuple[str, object]:
    kind = draw(st.sampled_from(["scalar", "scalar", "list", "map"] if depth < 2 else ["scalar"]))
    if kind == "scalar":
        return draw(scalar_nodes(flow=True))
    sep = draw(st.sampled_from([", ", ",", " , "]))
    if kind == "list":
        items = draw(st.lists(flow_nodes(depth + 1), max_size=3))
        inner = sep.join(t for t, _ in items)
        pad = draw(st.sampled_from(["", " "])) if items else draw(st.sampled_from(["", " "]))
        return f"[{pad}{inner}{pad}]", [v for _, v in items]
    keys = draw(st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=4), unique=True, max_size=3))
    pairs = [(k, draw(flow_nodes(depth + 1))) for k in keys]
    inner = sep.join(f"{k}: {t}" for k, (t, _) in pairs)
    return "{" + inner + "}", {k: v for k, (_, v) in pairs}


@st.composite
def keys(draw) -> tuple[str, str]:
    """(key as written, key) for a top-level or nested key."""
    kind = draw(st.sampled_from(["plain", "plain", "plain", "spaced", "single", "double"]))
    if kind == "plain":
        key = draw(st.text(alphabet=WORD_CHARS + "-.", min_size=1, max_size=10).filter(lambda k: k[0] not in "-."))
        return key, key
    if kind == "spaced":
        key = " ".join(draw(st.lists(words, min_size=2, max_size=3)))
        return key, key
    key = draw(printable_text)
    if kind == "single":
        return _single_quote(key), key
    return draw(double_quoted(key)), key


COMMENTS = st.sampled_from(["# comment", "#", "# key: value", "#  - item", "# ---"])


@st.composite
def block_scalar(draw, key_col: int, head: str, nl_after_blank_lines: int) -> tuple[list[str], object, bool, bool]:
    """The lines of ``head`` plus a literal or folded block scalar, its value,
    whether its header line has a comment, and whether it keeps the empty
    lines after it (``+``: they are its value, and its key's lines)."""
    style = draw(st.sampled_from("|>"))
    chomp = draw(st.sampled_from(["", "-", "+"]))
    n = key_col + draw(st.sampled_from([1, 2, 4]))
    explicit = draw(st.booleans())
    indicator = style + (f"{n - key_col}" if explicit else "") + chomp
    if explicit and draw(st.booleans()):
        indicator = style + chomp + f"{n - key_col}"
    tail = draw(st.sampled_from(["", "", " # note"]))
    header = head + " " + indicator + tail
    texts = draw(
        st.lists(
            st.one_of(words, st.sampled_from(["# not a comment", "- item", "key: value", "a  b", "---"])),
            min_size=1,
            max_size=4,
        )
    )
    lines: list[str] = []
    content: list[str] = []  # content lines after removing n columns ("" for empty lines)
    for _ in range(draw(st.integers(0, 2))):  # leading empty lines, never wider than n
        width = draw(st.integers(0, n))
        lines.append(" " * width)
        content.append("")
    for index, text in enumerate(texts):
        if index:
            for _ in range(draw(st.integers(0, 2))):
                # an empty line, or (literal only) a line of spaces wider than n: spaces are content
                width = draw(st.integers(0, n + 3)) if style == "|" else draw(st.integers(0, n))
                lines.append(" " * width)
                content.append(" " * (width - n) if width > n else "")
        extra = draw(st.integers(0, 2)) if (style == "|" and index) else 0
        lines.append(" " * (n + extra) + text)
        content.append(" " * extra + text)
    if style == "|":
        body = "\n".join(content)
    else:
        body, pending = "", 0
        started = False
        for line in content:
            if line == "":
                pending += 1
                continue
            if not started:
                body += "\n" * pending
                started = True
            elif pending:
                body += "\n" * pending
            else:
                body += " "
            body += line
            pending = 0
    if chomp == "-":
        value = body
    elif chomp == "+":
        value = body + "\n" + "\n" * nl_after_blank_lines
    else:
        value = body + "\n"
    return [header] + lines, value, bool(tail), chomp == "+"


@st.composite
def entry_value(
    draw, key_col: int, head: str, blank_after: int, depth: int = 0
) -> tuple[list[str], object, dict, bool]:
    """The lines of one ``key: value`` (``head`` is the key with its colon),
    its value, the YAML comments on its lines (line index -> comment), and
    whether the value ends in a keep-chomped block scalar, which holds the
    empty lines after it."""
    kinds = ["scalar", "scalar", "comment", "multiline", "block_list", "flow", "block_scalar"]
    if depth == 0:
        kinds.append("map")
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        text, value = draw(scalar_nodes())
        return [f"{head} {text}".rstrip(" ") if text else head], value, {}, False
    if kind == "comment":
        text, value = draw(scalar_nodes().filter(lambda tv: tv[0] != ""))
        comment = draw(COMMENTS)
        return [f"{head} {text} {comment}"], value, {0: comment}, False
    if kind == "multiline":
        parts = draw(st.lists(words, min_size=2, max_size=3))
        pad = " " * (key_col + draw(st.sampled_from([1, 2, 4])))
        return [f"{head} {parts[0]}"] + [pad + p for p in parts[1:]], " ".join(parts), {}, False
    if kind == "flow":
        text, value = draw(flow_nodes(depth=1).filter(lambda tv: isinstance(tv[1], (list, dict))))
        tail = draw(st.sampled_from(["", " # c"]))
        return [f"{head} {text}{tail}"], value, {0: tail[1:]} if tail else {}, False
    if kind == "block_scalar":
        lines, value, commented, keeps = draw(block_scalar(key_col, head, blank_after))
        return lines, value, {0: "# note"} if commented else {}, keeps
    if kind == "block_list":
        col = key_col + draw(st.sampled_from([0, 2, 4]))
        items = draw(st.lists(st.one_of(scalar_nodes(), flow_nodes(depth=1)), min_size=1, max_size=4))
        tail = draw(st.sampled_from(["", "", " # list"]))
        lines = [head + tail]
        comments = {0: tail[1:]} if tail else {}
        for index, (text, _) in enumerate(items):
            if index and draw(st.integers(0, 5)) == 0:
                comments[len(lines)] = draw(COMMENTS)
                lines.append(" " * col + comments[len(lines)])
            lines.append(" " * col + ("- " + text if text else "-"))
        return lines, [v for _, v in items], comments, False
    # a nested map
    col = key_col + draw(st.sampled_from([2, 4]))
    sub = draw(st.lists(keys(), min_size=1, max_size=3, unique_by=lambda kv: kv[1]))
    lines = [head]
    value = {}
    comments = {}
    keeps = False
    for index, (written, key) in enumerate(sub):
        # only the last nested value is followed by the empty lines after the map
        after = blank_after if index == len(sub) - 1 else 0
        sub_lines, sub_value, sub_comments, keeps = draw(entry_value(col, " " * col + written + ":", after, depth + 1))
        comments.update({len(lines) + i: c for i, c in sub_comments.items()})
        lines += sub_lines
        value[key] = sub_value
    return lines, value, comments, keeps


@st.composite
def documents(draw) -> Document:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    base = draw(st.sampled_from([0, 0, 0, 1, 2]))  # the column of the top-level keys
    top = draw(st.lists(keys(), max_size=6, unique_by=lambda kv: kv[1]))

    def separator(first: bool) -> list[str]:
        """Lines between entries: empty, spaces (never wider than the keys'
        column, so never content of a block scalar) or comments."""
        out = []
        for kind in draw(st.lists(st.sampled_from(["blank", "blank", "comment"]), max_size=0 if first else 2)):
            pad = " " * draw(st.integers(0, base))
            out.append(pad if kind == "blank" else pad + draw(COMMENTS))
        return out

    separators = [separator(index == 0) for index in range(len(top))]
    separators.append(separator(False) if top else [draw(COMMENTS)] * draw(st.integers(0, 1)))
    lines: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    expected: dict = {}
    heads: dict[str, str] = {}
    list_indents: list[int] = []
    commented: set[str] = set()
    key_comments: dict[str, str] = {}
    for index, (written, key) in enumerate(top):
        lines += separators[index]
        blank_after = 0  # empty lines right after the entry (kept by a "+" block scalar)
        for line in separators[index + 1]:
            if line.strip():
                break
            blank_after += 1
        head = " " * base + written + draw(st.sampled_from([":", ":", " :"]))
        value_lines, value, comments, keeps = draw(entry_value(base, head, blank_after))
        if any(i > 0 for i in comments):
            commented.add(key)
        if 0 in comments:
            key_comments[key] = comments[0]
        spans[key] = (len(lines), len(lines) + len(value_lines) + (blank_after if keeps else 0))
        heads[key] = head
        if isinstance(value, list) and len(value_lines) > 1:  # a block list: line 2 is its first item
            list_indents.append(len(value_lines[1]) - len(value_lines[1].lstrip(" ")) - base)
        lines += value_lines
        expected[key] = value
    lines += separators[-1]
    body = draw(st.sampled_from(["", "# Title", "body [[Link]]", "---", "text\n---\nmore", "x: y"]))
    if body:
        body = body.replace("\n", newline) + draw(st.sampled_from(["", newline]))
    return Document(
        lines, spans, expected, newline, body, heads, tuple(list_indents), frozenset(commented), key_comments
    )


# ---------------------------------------------------------------------------
# Values for edits and for the emitter

TRICKY = [
    "a: b",
    "a #b",
    "- item",
    "-",
    "? x",
    ": x",
    "'quoted'",
    '"double"',
    "back\\slash",
    "new\nline",
    "tab\there",
    "yes",
    "no",
    "on",
    "off",
    "null",
    "~",
    "true",
    "01234",
    "1.10",
    "1e3",
    "0x1F",
    "12",
    "-5",
    ".5",
    "+44",
    "[[Link]]",
    "[[Link|alias]]",
    "#tag",
    "{{date}}",
    "x,y",
    "[a]",
    "@user",
    "`code`",
    "%",
    "&a",
    "*a",
    "!t",
    "|",
    ">",
    " lead",
    "trail ",
    "",
    " ",
    "é",
    "😀",
    "a\r\nb",
    "\x85",
    "\u2028",
    "\ufeff",
    "---",
    "...",
    "k: [v]",
    "2021-04-17",
]
scalar_values = st.one_of(
    st.sampled_from(TRICKY),
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=20),
    st.text(alphabet="ab :#-'\"\\\n\t[]{},", max_size=8),
    st.integers(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
dict_keys = st.one_of(st.sampled_from(["a", "b c", "yes", "1", "null", "- x", "a: b", "x,y", ""]), st.text(max_size=6))
values = st.recursive(
    scalar_values,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(dict_keys, children, max_size=3),
    ),
    max_leaves=8,
)
new_keys = st.one_of(st.sampled_from(["autograph_test", "new key", "tags", "Title", "x"]), keys().map(lambda kv: kv[1]))


# ---------------------------------------------------------------------------
# Parsing


def _parse(doc: Document):
    fm = frontmatter.parse(doc.text)
    note(f"text={doc.text!r}")
    assert fm is not None
    return fm


@SETTINGS
@given(st.text(st.characters(blacklist_categories=["Cs"]), max_size=80), st.sampled_from(["", "---\n", "---\r\n"]))
def test_parse_never_raises_on_any_text(source, prefix):
    text = prefix + source + ("\n---\n" if prefix else "")
    fm = frontmatter.parse(text)
    if fm is not None:
        assert fm.error is None or isinstance(fm.error, FrontmatterError)
        assert isinstance(fm.properties, dict)
        if fm.error is not None:
            assert fm.properties == {}
            assert fm.error.line >= 2 and fm.error.column >= 1


@SETTINGS
@given(documents())
def test_generated_blocks_parse_to_their_values(doc):
    fm = _parse(doc)
    assert fm.error is None, str(fm.error)
    assert typed_eq(fm.properties, doc.expected), (fm.properties, doc.expected)
    assert [(e.key, e.start, e.end) for e in fm.entries] == [(k, *doc.spans[k]) for k in doc.expected]
    assert fm.newline == doc.newline
    assert doc.text[fm.body :] == doc.body


@SETTINGS
@given(documents())
def test_generated_blocks_agree_with_pyyaml(doc):
    """The differential oracle of test_yaml_oracle on generated blocks."""
    fm = _parse(doc)
    source = doc.block.replace("\r\n", "\n")
    try:
        theirs = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        assert classify_yaml_error(source, exc) is not None, f"PyYAML rejects: {exc}"
        return
    assert fm.error is None, f"we reject what PyYAML reads as {theirs!r}: {fm.error}"
    # plain keys PyYAML types alike ("1" and "01", "1" and "yes"=True) collapse in
    # its dict: a YAML 1.1 difference, not a disagreement about the block
    assume(not _yaml11_keys_collide(fm.properties))
    problems: list[str] = []
    compare(fm.properties, theirs if theirs is not None else {}, (), Counter(), problems)
    assert not problems, problems


def _yaml11_keys_collide(value) -> bool:
    if isinstance(value, dict):
        typed = [yaml11_plain(k)[1] for k in value]
        try:
            if len(set(typed)) < len(typed):
                return True
        except TypeError:
            return True
        return any(_yaml11_keys_collide(v) for v in value.values())
    if isinstance(value, list):
        return any(_yaml11_keys_collide(v) for v in value)
    return False


@st.composite
def mutated(draw) -> str:
    """A generated note with a few random edits: characters that matter to
    YAML inserted or removed, lines duplicated, swapped, re-indented."""
    doc = draw(documents())
    lines = doc.text.split(doc.newline)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["insert", "delete", "dup", "swap", "indent", "dedent"]))
        line = lines[i]
        if op == "insert":
            j = draw(st.integers(0, len(line)))
            inserted = list(":- \t#'\"[]{}|>&*!?%@`\\,.~\r") + ["\n", ": ", "- ", "\ufeff", "\x85", "\u2028"]
            lines[i] = line[:j] + draw(st.sampled_from(inserted)) + line[j:]
        elif op == "delete" and line:
            j = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:j] + line[j + 1 :]
        elif op == "dup":
            lines.insert(i, line)
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "indent":
            lines[i] = draw(st.sampled_from([" ", "  ", "\t"])) + line
        elif op == "dedent":
            lines[i] = line.lstrip(" ")
    return doc.newline.join(lines)


def _flow_block(text: str, fm) -> bool:
    for line in text[fm.start : fm.end].split("\n"):
        stripped = line.strip(" \t\r")
        if stripped and not stripped.startswith("#"):
            return stripped.startswith("{")
    return False


@SETTINGS
@given(mutated())
def test_mutated_blocks_parse_or_give_a_located_error_and_edit_cleanly(text):
    fm = frontmatter.parse(text)
    if fm is None:
        assert frontmatter.set_property(text, "autograph_test", "x").endswith(text)
        return
    closing = text.count("\n", 0, fm.end) + 1
    if fm.error is not None:
        assert fm.properties == {}
        assert 2 <= fm.error.line < closing, (fm.error, closing)
        line = text.split("\n")[fm.error.line - 1].rstrip("\r")
        assert 1 <= fm.error.column <= len(line) + 1, (fm.error, line)
        with pytest.raises(FrontmatterError):
            frontmatter.set_property(text, "autograph_test", "x")
        with pytest.raises(FrontmatterError):
            frontmatter.delete_property(text, "autograph_test")
        return
    if _flow_block(text, fm):
        return
    for key, value in fm.properties.items():
        assert frontmatter.set_property(text, key, value) == text, key
    if "autograph_test" not in fm.properties:
        new = frontmatter.set_property(text, "autograph_test", "x")
        first = fm.entries[0].prefix if fm.entries else ""
        indent = first[: len(first) - len(first.lstrip(" "))]  # new keys line up with the first key
        assert new == text[: fm.end] + indent + "autograph_test: x" + fm.newline + text[fm.end :]
        assert typed_eq(frontmatter.parse(new).properties, {**fm.properties, "autograph_test": "x"})


# ---------------------------------------------------------------------------
# Surgical edits


@SETTINGS
@given(documents(), st.booleans())
def test_setting_a_key_to_its_value_changes_nothing(doc, bom):
    text = doc.text
    for key, value in frontmatter.parse(text).properties.items():
        assert frontmatter.set_property(text, key, value) == text, key
    data = (BOM if bom else b"") + text.encode("utf-8")
    note_ = Note.from_bytes("n.md", data)
    assert note_.text == text and note_.bom == bom
    assert note_.encode(note_.text) == data
    for key, value in note_.properties.items():
        assert note_.with_property(key, value) == data, key


def _target(before: dict, key: str) -> str | None:
    """The key an edit of ``key`` lands on (Obsidian: names that differ only
    in letter case are one property): written exactly so, else the one key
    written in another case; None for a new key.  Raises LookupError when
    several keys differ from ``key`` in case alone."""
    if key in before:
        return key
    same = [k for k in before if k.lower() == key.lower()]
    if len(same) > 1:
        raise LookupError(same)
    return same[0] if same else None


@SETTINGS
@given(documents(), st.one_of(st.integers(0, 9), new_keys), values, st.booleans())
def test_setting_one_key_changes_only_its_lines(doc, choice, value, bom):
    """``choice``: an index into the existing keys, or a key (new or not)."""
    text = doc.text
    before = frontmatter.parse(text).properties
    assert list(before) == list(doc.expected)
    existing = list(doc.expected)
    if isinstance(choice, int):
        key = existing[choice % len(existing)] if existing else "autograph_test"
    else:
        key = choice
    try:
        target = _target(before, key)
    except LookupError:
        with pytest.raises(FrontmatterError, match="differ only in letter case"):
            frontmatter.set_property(text, key, value)
        return
    if target in doc.commented and not typed_eq(before[target], value):
        # a comment inside the old value would be lost: refused, never dropped
        with pytest.raises(FrontmatterError, match="holds YAML comments"):
            frontmatter.set_property(text, key, value)
        return
    new = frontmatter.set_property(text, key, value)
    note(f"new={new!r}")
    # bytes: only the key's lines (or one appended block of lines) differ
    if target is not None:
        a, b = doc.offsets(target)
    else:
        a = b = doc.closing
    assert new[:a] == text[:a], "bytes before the key's lines changed"
    assert new[len(new) - (len(text) - b) :] == text[b:], "bytes after the key's lines changed"
    written = new[a : len(new) - (len(text) - b)]
    if target is not None and typed_eq(before[target], value):
        assert new == text
    else:
        assert written.endswith(doc.newline)
        if doc.newline == "\r\n":
            assert written.count("\n") == written.count("\r\n"), "a line break that is not CRLF"
        else:
            assert "\r" not in written
        if target in doc.heads:
            assert written.startswith(doc.heads[target]), "the key lost its spelling"
        if target in doc.key_comments:
            first = written.split(doc.newline)[0]
            assert first.endswith(" " + doc.key_comments[target]), "the key line lost its comment"
        # "tags: [a, b]" stays a flow list, as the person wrote it (a list of one-line values)
        first = doc.lines[doc.spans[target][0]] if target is not None else ""
        was_flow = bool(before.get(target)) and first[len(doc.heads.get(target, "")) :].lstrip(" ").startswith("[")
        one_line = isinstance(value, list) and value and not any(isinstance(v, str) and "\n" in v for v in value)
        if was_flow and one_line:
            assert written.count(doc.newline) == 1, "a flow list became block lines"
            assert written[len(doc.heads[target]) :].lstrip(" ").startswith("["), "a flow list lost its brackets"
        elif isinstance(value, list) and value and len(set(doc.list_indents)) == 1:
            # a new list follows the indentation of the file's block lists
            column = len(written) - len(written.lstrip(" ")) + doc.list_indents[0]
            # (the lines of a block scalar item are indented deeper, or empty)
            items = [line for line in written.split(doc.newline)[1:-1] if line[: column + 1].strip()]
            assert items and all(i[:column] == " " * column and i[column] == "-" for i in items), (
                f"list items {items} not at column {column} like the file's lists"
            )
    # values: the key reads back as set, every other key as before, order kept
    after = frontmatter.parse(new)
    assert after.error is None, str(after.error)
    name = target if target is not None else key
    assert typed_eq(after.properties[name], value), (after.properties[name], value)
    assert list(after.properties) == (list(before) if target is not None else list(before) + [key])
    for other in before:
        if other != name:
            assert typed_eq(after.properties[other], before[other]), other
    # through a Note with a BOM: the same bytes after the BOM
    data_ = (BOM if bom else b"") + text.encode("utf-8")
    assert Note.from_bytes("n.md", data_).with_property(key, value) == (BOM if bom else b"") + new.encode("utf-8")


@SETTINGS
@given(documents(), st.data(), st.one_of(st.integers(0, 9), new_keys), values)
def test_an_edit_keeps_the_line_endings_of_mixed_lines(doc, data, choice, value):
    """Lines ending in CRLF and in LF mixed in one block: the edited key's lines
    keep the ending each had (the last one's for extra lines), a new key takes
    the block's (its opening line's) ending, and no other byte changes."""
    n = len(doc.lines)
    endings = data.draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=n + 2, max_size=n + 2), label="endings")
    opening, closing, own = endings[0], endings[1], endings[2:]
    text = "---" + opening + "".join(line + end for line, end in zip(doc.lines, own, strict=True))
    text += "---" + closing + doc.body
    before = frontmatter.parse(text).properties
    assert typed_eq(before, doc.expected)
    existing = list(before)
    key = (existing[choice % len(existing)] if existing else "autograph_test") if isinstance(choice, int) else choice
    try:
        target = _target(before, key)
    except LookupError:
        return  # refused (test_setting_one_key_changes_only_its_lines)
    assume(target not in doc.commented or typed_eq(before[target], value))
    new = frontmatter.set_property(text, key, value)
    note(f"new={new!r}")
    head = len("---" + opening)
    width = [len(line) + len(end) for line, end in zip(doc.lines, own, strict=True)]
    if target is not None:
        start, end = doc.spans[target]
        old_endings = own[start:end]
    else:
        start = end = n
        old_endings = [opening]
    a, b = head + sum(width[:start]), head + sum(width[:end])
    assert new[:a] == text[:a] and new[len(new) - (len(text) - b) :] == text[b:], "bytes outside the key changed"
    written = new[a : len(new) - (len(text) - b)]
    if target is not None and typed_eq(before[target], value):
        assert new == text
        return
    lines = written.split("\n")[:-1]
    assert written.endswith("\n") and lines
    for index, line in enumerate(lines):
        expected = old_endings[min(index, len(old_endings) - 1)]
        assert line.endswith("\r") == (expected == "\r\n"), (index, line, expected)
    assert typed_eq(frontmatter.parse(new).properties[target if target is not None else key], value)


def _kept_more(old, new) -> bool:
    """``new`` is ``old`` with more trailing line breaks in its last string."""
    if isinstance(old, str) and isinstance(new, str):
        return len(new) > len(old) and new.startswith(old) and new[len(old) :].strip("\n") == ""
    if isinstance(old, dict) and isinstance(new, dict) and list(old) == list(new) and old:
        *head, last = old
        return all(typed_eq(old[k], new[k]) for k in head) and _kept_more(old[last], new[last])
    return False


@SETTINGS
@given(documents(), st.data())
def test_deleting_a_key_removes_exactly_its_lines(doc, data):
    text = doc.text
    before = frontmatter.parse(text).properties
    if not doc.expected:
        assert frontmatter.delete_property(text, "missing") == text
        return
    key = data.draw(st.sampled_from(list(doc.expected)), label="key")
    a, b = doc.offsets(key)
    new = frontmatter.delete_property(text, key)
    assert new == text[:a] + text[b:]
    after = frontmatter.parse(new)
    assert after.error is None, str(after.error)
    remaining = {k: v for k, v in before.items() if k != key}
    assert list(after.properties) == list(remaining)
    order = list(before)
    previous = order[order.index(key) - 1] if order.index(key) else None
    for k, v in remaining.items():
        # YAML, not the edit: empty lines that followed the deleted key now
        # follow a keep-chomped ("|+") block scalar just before it, which keeps them
        assert typed_eq(after.properties[k], v) or (k == previous and _kept_more(v, after.properties[k])), k
    if not any(k.lower() == key.lower() for k in remaining):  # F0000 and f0000 are one property, as in Obsidian:
        assert frontmatter.delete_property(new, key) == new  # deleting it again takes the other spelling


@SETTINGS
@given(st.data())
def test_notes_without_frontmatter_get_a_block_before_byte_0(data):
    body = data.draw(st.text(max_size=30).filter(lambda t: frontmatter.parse(t) is None), label="body")
    key = data.draw(new_keys, label="key")
    value = data.draw(values, label="value")
    new = frontmatter.set_property(body, key, value)
    assert new.endswith(body)
    fm = frontmatter.parse(new)
    assert fm is not None and fm.error is None, fm and str(fm.error)
    assert new[fm.body :] == body
    assert typed_eq(fm.properties, {key: value})


@given(
    st.sampled_from(["{}", "{ }", "{}  # empty", "# kept\n{}", "{\n}", "  {}"]),
    st.sampled_from(["\n", "\r\n"]),
    st.lists(st.tuples(new_keys, values), min_size=1, max_size=3, unique_by=lambda kv: kv[0].lower()),
    st.text(max_size=20),
)
def test_keys_set_on_an_empty_flow_mapping_replace_it_in_block_style(flow, newline, pairs, body):
    """BR-43: '{}' is an empty block; keys set on it replace it, comments stay, the body keeps its bytes.
    (The keys differ in more than letter case: ``x`` and ``X`` are one property, set twice.)"""
    body = body.replace("\r", "")
    text = "---" + newline + flow.replace("\n", newline) + newline + "---" + newline + body
    for key, value in pairs:
        text = frontmatter.set_property(text, key, value)
    fm = frontmatter.parse(text)
    assert fm.error is None, (text, fm.error)
    assert typed_eq(fm.properties, dict(pairs))
    assert [entry.key for entry in fm.entries] == [key for key, _ in pairs]  # block style: a line per key
    assert text[fm.body :] == body
    assert ("# kept" in text) == ("# kept" in flow) and ("# empty" in text) == ("# empty" in flow)


# ---------------------------------------------------------------------------
# The emitter


def _read_back(written: str):
    fm = frontmatter.parse(written)
    assert fm is not None
    assert fm.error is None, f"{written!r}: {fm.error}"
    return fm.properties


@SETTINGS
@given(values)
def test_format_property_round_trips(value):
    written = "---\n" + frontmatter.format_property("k", value) + "---\n"
    note(f"written={written!r}")
    assert typed_eq(_read_back(written), {"k": value})


@SETTINGS
@given(
    dict_keys | st.text(),
    values,
    st.sampled_from(["", "  ", "    "]),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from(["", "  "]),
)
def test_format_property_round_trips_with_any_key_and_layout(key, value, list_indent, newline, indent):
    lines = frontmatter.format_property(key, value, indent=indent, list_indent=list_indent, newline=newline)
    note(f"lines={lines!r}")
    assert lines.endswith(newline)
    if newline == "\r\n":
        assert lines.count("\n") == lines.count("\r\n")
    written = f"---{newline}{lines}---{newline}"
    assert typed_eq(_read_back(written), {key: value})


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain words", "plain words"),
        ("Acme Robotics", "Acme Robotics"),
        ("Zoë's café", "Zoë's café"),
        ("[[Link]]", '"[[Link]]"'),
        ("yes", '"yes"'),
        ("01234", '"01234"'),
        ("a: b", '"a: b"'),
        (12, "12"),
        (True, "true"),
        (None, ""),
    ],
)
def test_format_scalar_quotes_only_when_yaml_needs_it(value, written):
    assert frontmatter.format_scalar(value) == written


@SETTINGS
@given(scalar_values)
def test_format_scalar_round_trips(value):
    text = frontmatter.format_scalar(value)
    assert "\n" not in text and "\r" not in text
    if isinstance(value, str) and value and text == value:
        assert value == value.strip(" \t")  # a plain string is written as itself
    assert typed_eq(_read_back(f"---\nk: {text}\n---\n"), {"k": value})
    assert typed_eq(_read_back(f"---\nk:\n  - {text}\n---\n"), {"k": [value]})


# ---------------------------------------------------------------------------
# The emitter's text must mean the same to another YAML reader (PyYAML)

YAML11_DIFFERENCES = Counter()


def yaml11_difference(value, flow: bool = False) -> str | None:
    """Why PyYAML (YAML 1.1) may read what we write for ``value`` differently,
    by design: a plain-written string PyYAML types as a timestamp or a
    sexagesimal number, or one of its 1.1-only ``=``/``<<`` tags; NEL (a line
    break in 1.1); a float whose ``repr`` has no dot (``1e-05``: a string in
    1.1); a ``?`` in a plain scalar inside a flow collection, or a ``:`` that
    starts one (``[a?b]``, ``[:0]``: PyYAML keeps its flow context free of
    them, deliberately; YAML 1.2 reads plain text).  None when the value
    must read back the same.  ``flow``: the value is written inside ``[...]``
    or ``{...}`` (a list or mapping that is an item of a list)."""
    if isinstance(value, dict):
        for k, v in value.items():
            why = yaml11_difference(k, flow) or yaml11_difference(v, flow)
            if why:
                return why
        return None
    if isinstance(value, list):
        for item in value:
            why = yaml11_difference(item, flow or isinstance(item, (list, dict)))
            if why:
                return why
        return None
    if isinstance(value, float):
        tag, _ = yaml11_plain(repr(value))
        return None if tag.endswith(":float") else "float-without-dot"
    if isinstance(value, str):
        if "\x85" in value:
            return "nel-line-break"
        if frontmatter.format_scalar(value) == value:
            if flow and ("?" in value or value.startswith(":")):
                return "pyyaml-flow-indicator"
            tag, _ = yaml11_plain(value)
            kind = tag.rsplit(":", 1)[-1]
            if kind == "timestamp":
                return "timestamp"
            if kind in ("int", "float") and ":" in value:
                return "sexagesimal"
            if kind in ("value", "merge"):
                return f"yaml11-{kind}"
    return None


@SETTINGS
@given(values)
def test_pyyaml_reads_what_we_write(value):
    why = yaml11_difference(value)
    if why:
        YAML11_DIFFERENCES[why] += 1
        return
    written = frontmatter.format_property("k", value)
    note(f"written={written!r}")
    assert typed_eq(yaml.safe_load(written), {"k": value})


def test_pyyaml_difference_classifier():
    """The exclusions above are narrow: typed-looking strings are not excused."""
    # excused only when the emitter writes them plain (it may quote them)
    for text, why in [("2021-04-17", "timestamp"), ("1:30", "sexagesimal"), ("=", "yaml11-value")]:
        assert yaml11_difference(text) == (why if frontmatter.format_scalar(text) == text else None), text
    assert yaml11_difference(1e-05) == "float-without-dot"
    assert yaml11_difference([["a?"]]) == "pyyaml-flow-indicator"
    assert yaml11_difference([{"k": ":0"}]) == "pyyaml-flow-indicator"
    assert yaml11_difference([":0"]) is None
    assert yaml11_difference(["a?"]) is None
    for value in ["yes", "0x1F", "012", "1_000", "1.10", "null", "true", "12", 1.5, 3, True, None, ["a"], {"a": 1}]:
        assert yaml11_difference(value) is None, value


@pytest.fixture(scope="module", autouse=True)
def _print_yaml11_differences():
    yield
    if YAML11_DIFFERENCES:
        print(f"\nvalues excused from the PyYAML cross-check (YAML 1.1 differences): {dict(YAML11_DIFFERENCES)}")


# ---------------------------------------------------------------------------
# The smallest inputs the properties above have failed on, kept as plain
# tests so that each failure shows on every run, whatever Hypothesis draws.
# Each asserts the same property as its Hypothesis test, on one input.


@pytest.mark.parametrize(
    ("block", "value"),
    [
        ("a: |\n  x\n    \n  y\n", "x\n  \ny\n"),  # spaces past the indentation are content
        ("a: |\n  x\n  \t\n  y\n", "x\n\t\ny\n"),  # so is a tab
        ("a: >\n  x\n    \n  y\n", "x\n  \ny\n"),  # folded: a more-indented line of spaces
    ],
)
def test_repro_whitespace_line_in_block_scalar(block, value):
    fm = frontmatter.parse("---\n" + block + "---\n")
    assert fm.error is None
    assert yaml.safe_load(block) == {"a": value}  # the YAML reading, by a second reader
    assert fm.properties == {"a": value}


@pytest.mark.parametrize("key", ["?x", "?0", "?[x]"])
def test_repro_key_starting_with_question_mark(key):
    """``?x: 1`` is a plain key in YAML (``?`` not followed by a space); the
    emitter writes it so, and an edit must leave a block that still parses."""
    assert yaml.safe_load(frontmatter.format_property(key, 1)) == {key: 1}
    new = frontmatter.set_property("---\na: 1\n---\n", key, 1)
    fm = frontmatter.parse(new)
    assert fm.error is None, f"{new!r}: {fm.error}"
    assert fm.properties == {"a": 1, key: 1}


@pytest.mark.parametrize("value", [[{"a,b": 1}], [{"x]": 1}], [{"{k}": 1}], [[{"a,b": 1}]]])
def test_repro_flow_mapping_key_with_flow_indicator(value):
    new = frontmatter.set_property("---\na: 1\n---\n", "k", value)
    fm = frontmatter.parse(new)
    assert fm.error is None, f"{new!r}: {fm.error}"
    assert typed_eq(fm.properties["k"], value), (new, fm.properties["k"])


@pytest.mark.parametrize("value", ["\x80", "a\x9fb", "\ufffe", "\uffff", ["\x81"], {"\x90": 1}])
def test_repro_non_printable_characters_are_escaped(value):
    """YAML 1.2 streams hold only printable characters (c-printable excludes
    C1 controls other than NEL, and U+FFFE/U+FFFF): the emitter must escape them."""
    written = frontmatter.format_property("k", value)
    assert all(_printable(ch) or ch == "\n" for ch in written), repr(written)
    assert typed_eq(yaml.safe_load(written), {"k": value})


def test_repro_new_list_follows_a_list_whose_key_has_a_comment():
    text = "---\ntags: # topics\n- a\n---\n"
    assert frontmatter.set_property(text, "x", ["b"]) == "---\ntags: # topics\n- a\nx:\n- b\n---\n"
