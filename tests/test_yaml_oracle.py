"""Differential test: our frontmatter parser against PyYAML on every corpus block.

Each frontmatter block of every corpus note (``text[fm.start:fm.end]``) goes
through ``frontmatter.parse`` and ``yaml.safe_load``.  PyYAML reads YAML 1.1;
we read the YAML 1.2 core schema with the round-trip rule of DESIGN.md
("Frontmatter").  Where both parse, every value must agree, or differ in one
of the known, counted ways below.  Anything else fails with the file, the key
path and both values.

Known typed differences (PyYAML's value is explained by re-reading *our* text
with PyYAML's own YAML 1.1 resolver, and our value by our rules):

* ``timestamp-date`` / ``timestamp-datetime`` -- PyYAML makes a date or
  datetime, we keep the text;
* ``yaml11-bool`` -- ``yes/no/on/off`` (any case) are booleans in 1.1, strings
  for us;
* ``yaml11-int:<form>`` -- hex ``0x1F``, binary ``0b11``, leading-zero octal
  ``012``/``00``, ``1_000``, sexagesimal ``1:30``, a ``+`` sign, ``-0``:
  integers in 1.1, text for us (1.2 core has no such ints, or they would not
  read back as the same text);
* ``float-not-round-trip`` / ``yaml11-float:<form>`` -- ``1.10``, ``.5``,
  ``1.0e+3`` (1.2 floats whose text is not ``repr`` of the number), and 1.1-only
  forms (``1_000.5``, ``1:30.5``): floats for PyYAML, text for us;
* ``non-finite-float`` -- ``.inf``/``.nan``: floats for PyYAML, text for us;
* ``yaml12-float-pyyaml-string`` -- ``1e-05``: a 1.2 float that reads back
  as itself; 1.1 floats need a dot, so PyYAML keeps the text;
* ``key:<category>`` -- a key that PyYAML types (``1:``, ``true:``); our keys
  are always strings (the text as written);
* ``empty-block`` -- an empty or comment-only block: PyYAML gives None, we ``{}``;
* ``template-placeholder`` -- an unquoted ``{{date}}`` (BR-41, DESIGN.md's
  subset as extended in ``frontmatter``'s docstring): YAML reads a flow
  mapping whose key is a mapping, which PyYAML's safe loader rejects
  ("found unhashable key") and a loader that accepted it would give as a
  mapping; we read the text, a ``Placeholder``.  So that the rest of such a
  block is still compared, :func:`yaml_load` quotes each placeholder PyYAML
  rejects and reads the block again; each placeholder value then counts here
  (PyYAML's string equals our text).

Known cases where only one side errors (anything else fails the test):

* we error, PyYAML accepts -- ``duplicate-key`` (YAML 1.2 requires unique
  keys; PyYAML silently keeps the last), ``outside-subset`` (anchors,
  aliases, tags, complex keys, directives; DESIGN.md makes them errors),
  ``not-a-mapping`` (the block is a scalar or a list, which frontmatter
  cannot be), ``tab-indentation`` (DESIGN.md: tabs in indentation are errors),
  ``comment-not-separated`` (``[x]# c``: YAML 1.2 needs white space before a
  comment's ``#``; PyYAML reads a comment);
* PyYAML errors, we accept -- ``tab-separator`` (a tab between tokens or
  inside a plain value, e.g. ``key:<TAB>value``: YAML 1.2 white space, which
  PyYAML's scanner refuses where a token may start), ``yaml11-line-break``
  (NEL/LS/PS ``\\x85 \\u2028 \\u2029``: line breaks in 1.1, ordinary
  characters in 1.2), ``template-placeholder`` (see above: what PyYAML
  rejects in a block that :func:`yaml_load` could not read by quoting its
  placeholders).  Accepting a character YAML 1.2 does not allow at all (C0
  controls other than tab, DEL, ...) is *not* in this list: it would be a
  parser bug.

Observed on the corpora at the pinned commits (run ``pytest -s`` for the
live table; this is a record, the test does not compare against it):

    corpus            blocks  both-ok  both-error  differences (counted values)
    obsidian-hub        6549     6534          15  timestamp-date 24, timestamp-datetime 79,
                                                   yaml11-bool 1 (alias ``Yes``),
                                                   yaml11-int:hex 1 (alias ``0x1DA9430``)
    dendron-site        1012     1012           0  none (epoch-ms ints, nested maps agree)
    kepano-obsidian       98       98           0  timestamp-date 30, template-placeholder 34
                                                   (28 template blocks PyYAML reads only
                                                   with their placeholders quoted)
    tasks-demo            64       64           0  timestamp-date 3, timestamp-datetime 4,
                                                   empty-block 1
    tasks-docs           103      103           0  none

    One side errors: never.  Both reject the same 15 blocks (a plain value
    starting with ``@``, text after a quoted value, a list item after a scalar
    value).
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

import pytest
import yaml
from autograph.read import frontmatter
from autograph.read.note import Note
from autograph.read.vault import Vault
from conftest import CORPORA, CORPUS_NAMES, require

pytestmark = pytest.mark.corpus

SHOWN = 15

# One-sided errors that are expected, with why (see the module docstring).
OURS_ONLY_ERRORS = {
    "duplicate-key": "YAML 1.2 requires unique keys; PyYAML keeps the last value",
    "outside-subset": "anchors, aliases, tags, complex keys, directives are errors by design",
    "not-a-mapping": "a block that is a scalar or a list is not frontmatter",
    "tab-indentation": "tabs in indentation are errors by design",
    "comment-not-separated": "YAML needs white space before '#' starting a comment (``[x]# c``); PyYAML does not",
}
YAML_ONLY_ERRORS = {
    "tab-separator": "YAML 1.2 allows tabs as separation white space and inside plain values; PyYAML does not",
    "yaml11-line-break": "NEL/LS/PS are line breaks in YAML 1.1, ordinary characters in YAML 1.2",
    "template-placeholder": "unquoted {{date}} is a mapping as a key for YAML, which PyYAML rejects; we read its text",
}

_OUR_REASONS = [
    ("duplicate-key", re.compile(r"^duplicate key ")),
    ("outside-subset", re.compile(r"(anchors|aliases|tags|complex keys|directives) .*not supported")),
    ("not-a-mapping", re.compile(r"^frontmatter is (a string|a list|a boolean|a number|not a mapping)")),
    ("tab-indentation", re.compile(r"^tab used for indentation")),
]

# ---------------------------------------------------------------------------
# PyYAML's YAML 1.1 reading of a plain scalar's text


def yaml11_plain(text: str):
    """``(tag, value)`` PyYAML gives the plain scalar ``text`` (implicit
    resolution); the value is ``("<no constructor>", text)`` for the 1.1-only
    tags SafeLoader cannot build (``=``, ``<<``, ``!``/``&``/``*`` forms)."""
    tag = yaml.SafeLoader.resolve(yaml.SafeLoader, yaml.ScalarNode, text, (True, False))
    try:
        return tag, yaml.SafeLoader("").construct_object(yaml.ScalarNode(tag, text))
    except yaml.YAMLError:
        return tag, ("<no constructor>", text)


# YAML 1.2 core schema forms (spec 10.3.2)
_CORE_INT = re.compile(r"[-+]?[0-9]+\Z")
_CORE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_CORE_INF_NAN = re.compile(r"[-+]?\.(inf|Inf|INF)\Z|\.(nan|NaN|NAN)\Z")
_CORE_BOOL = {"true", "True", "TRUE", "false", "False", "FALSE"}
_CORE_NULL = {"", "~", "null", "Null", "NULL"}
_YAML11_BOOL = {"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"}


def _typed_eq(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_typed_eq(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_typed_eq(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _int_form(text: str) -> str | None:
    """Why a YAML 1.1 integer text is not an integer for us, or None (a bug)."""
    body = text.lstrip("+-")
    if body[:2] in ("0x", "0X"):
        return "hex"
    if body[:2] in ("0b", "0B"):
        return "binary"
    if ":" in body:
        return "sexagesimal"
    if "_" in body:
        return "underscore"
    if len(body) > 1 and body.startswith("0"):
        return "leading-zero"
    if text.startswith("+"):
        return "plus-sign"
    if text == "-0":
        return "minus-zero"
    return None


def explain_scalar(ours, theirs) -> str | None:
    """The known category that explains our scalar ``ours`` against PyYAML's
    ``theirs`` (``"agree"`` when equal), or None when nothing does."""
    if isinstance(ours, frontmatter.Placeholder):
        # PyYAML's text after yaml_load quoted it, or the mapping YAML reads
        if (isinstance(theirs, str) and theirs == ours) or isinstance(theirs, dict):
            return "template-placeholder"
        return None
    if _typed_eq(ours, theirs):
        return "agree"
    if isinstance(ours, str) and not isinstance(theirs, str):
        # the only way: a plain scalar PyYAML typed and we kept as text
        tag, value = yaml11_plain(ours)
        if not _typed_eq(value, theirs):
            return None
        kind = tag.rsplit(":", 1)[-1]
        if kind == "timestamp":
            return "timestamp-datetime" if isinstance(theirs, datetime.datetime) else "timestamp-date"
        if kind == "bool":
            if ours in _CORE_BOOL:
                return None  # 1.2 core boolean kept as text: a bug
            return "yaml11-bool" if ours in _YAML11_BOOL else None
        if kind == "int":
            if _CORE_INT.match(ours) and str(int(ours)) == ours:
                return None  # canonical integer kept as text: a bug
            form = _int_form(ours)
            return f"yaml11-int:{form}" if form else None
        if kind == "float":
            if _CORE_INF_NAN.match(ours):
                return "non-finite-float"
            if _CORE_FLOAT.match(ours):
                if repr(float(ours)) == ours:
                    return None  # reads back as itself: should be a float
                return "float-not-round-trip"
            if "_" in ours:
                return "yaml11-float:underscore"
            if ":" in ours:
                return "yaml11-float:sexagesimal"
            return None
        return None  # null (or anything else) kept as text: a bug
    if isinstance(theirs, str) and isinstance(ours, float) and not isinstance(ours, bool):
        tag, _ = yaml11_plain(theirs)
        if tag.endswith(":str") and _CORE_FLOAT.match(theirs) and repr(ours) == theirs:
            return "yaml12-float-pyyaml-string"
    return None


def explain_key(ours: str, theirs) -> str | None:
    if isinstance(theirs, str):
        return "agree" if ours == theirs else None
    if not isinstance(ours, str):
        return None
    _, value = yaml11_plain(ours)
    if not _typed_eq(value, theirs):
        return None
    return f"key:{type(theirs).__name__}"


def compare(ours, theirs, path: tuple, counts: Counter, problems: list[str]) -> None:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if len(ours) != len(theirs):
            problems.append(f"{path}: keys {list(ours)!r} vs PyYAML {list(theirs)!r}")
            return
        for (ok, ov), (tk, tv) in zip(ours.items(), theirs.items(), strict=True):
            why = explain_key(ok, tk)
            if why is None:
                problems.append(f"{path}: key {ok!r} vs PyYAML {tk!r}")
                continue
            if why != "agree":
                counts[why] += 1
            compare(ov, tv, path + (ok,), counts, problems)
        return
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            problems.append(f"{path}: ours {ours!r} vs PyYAML {theirs!r}")
            return
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            compare(a, b, path + (index,), counts, problems)
        return
    if isinstance(ours, (dict, list)) or (
        isinstance(theirs, (dict, list)) and not isinstance(ours, frontmatter.Placeholder)
    ):
        problems.append(f"{path}: ours {ours!r} vs PyYAML {theirs!r}")
        return
    why = explain_scalar(ours, theirs)
    if why is None:
        problems.append(f"{path}: ours {ours!r} ({type(ours).__name__}) vs PyYAML {theirs!r} ({type(theirs).__name__})")
    elif why != "agree":
        counts[why] += 1


def classify_our_error(reason: str, at: str = "") -> str | None:
    """The documented category of our error ``reason``; ``at`` is the text of
    the error's line from its column on."""
    for name, pattern in _OUR_REASONS:
        if pattern.search(reason):
            return name
    if reason.startswith("unexpected text after the value") and at.startswith("#"):
        return "comment-not-separated"
    return None


# an unquoted template placeholder, as DESIGN.md's subset (extended by BR-41) has it
_PLACEHOLDER = re.compile(r"\{\{[^{}\r\n]*\}\}")


def _rejected_placeholder(source: str, exc: yaml.YAMLError) -> re.Match | None:
    """The unquoted ``{{...}}`` PyYAML rejected as a mapping key, if that is its error."""
    mark = getattr(exc, "context_mark", None)
    if getattr(exc, "problem", None) != "found unhashable key" or mark is None:
        return None
    return _PLACEHOLDER.match(source, mark.index)


def yaml_load(source: str, limit: int = 100) -> tuple[object, int]:
    """PyYAML's reading of ``source`` and how many placeholders were quoted
    for it: each unquoted ``{{date}}`` PyYAML rejects ("found unhashable key")
    is written ``"{{date}}"`` and the block read again, so the rest of a
    template's block is still compared.  Raises ``yaml.YAMLError``."""
    quoted = 0
    while True:
        try:
            return yaml.safe_load(source), quoted
        except yaml.YAMLError as exc:
            match = _rejected_placeholder(source, exc)
            if match is None or quoted == limit:
                raise
            source = source[: match.start()] + json.dumps(match.group(), ensure_ascii=False) + source[match.end() :]
            quoted += 1


def classify_yaml_error(source: str, exc: yaml.YAMLError) -> str | None:
    """Which documented PyYAML limitation made it reject ``source``, or None."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", "") or ""
    if _rejected_placeholder(source, exc) is not None:
        return "template-placeholder"
    lines = source.split("\n")
    line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    at = line[mark.column] if mark is not None and mark.column < len(line) else ""
    if any(ch in line for ch in "\x85\u2028\u2029") or any(ch in source for ch in "\u2028\u2029"):
        return "yaml11-line-break"
    if at == "\t" or "'\\t'" in problem:
        return "tab-separator"
    return None


# ---------------------------------------------------------------------------
# Running both parsers over a corpus (once per module)


@dataclass
class Oracle:
    blocks: int = 0
    both_ok: int = 0
    both_error: int = 0
    counts: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    quoted: int = 0  # blocks PyYAML read only with their placeholders quoted (yaml_load)
    ours_only: list[tuple[str, str, str]] = field(default_factory=list)  # (path, category, detail)
    yaml_only: list[tuple[str, str, str]] = field(default_factory=list)


@cache
def run_oracle(name: str) -> Oracle:
    root = CORPORA / name
    vault = Vault.open(root)
    result = Oracle()
    for path in vault.notes:
        note = Note.from_bytes(path, (root / path).read_bytes())
        if note.text is None or note.frontmatter is None:
            continue
        fm = note.frontmatter
        source = note.text[fm.start : fm.end]
        result.blocks += 1
        try:
            theirs, quoted = yaml_load(source)
            yaml_error = None
        except yaml.YAMLError as exc:
            theirs, quoted, yaml_error = None, 0, exc
        result.quoted += bool(quoted)
        if fm.error is not None and yaml_error is not None:
            result.both_error += 1
        elif fm.error is not None:
            line = note.text.split("\n")[fm.error.line - 1] if fm.error.line <= note.text.count("\n") + 1 else ""
            category = classify_our_error(fm.error.reason, line[fm.error.column - 1 :])
            detail = f"{fm.error}; PyYAML reads {theirs!r:.120}"
            result.ours_only.append((path, category or "UNKNOWN", detail))
        elif yaml_error is not None:
            category = classify_yaml_error(source, yaml_error)
            detail = f"PyYAML: {' '.join(str(yaml_error).split())[:200]}; ours {fm.properties!r:.120}"
            result.yaml_only.append((path, category or "UNKNOWN", detail))
        else:
            result.both_ok += 1
            if theirs is None and fm.properties == {}:
                result.counts["empty-block"] += 1
                continue
            problems: list[str] = []
            compare(fm.properties, theirs, (), result.counts, problems)
            result.problems += [f"{path} {p}" for p in problems]
    return result


@pytest.fixture(scope="module", params=CORPUS_NAMES)
def oracle(request) -> tuple[str, Oracle]:
    require(CORPORA / request.param)
    return request.param, run_oracle(request.param)


def _summary(name: str, result: Oracle) -> str:
    lines = [
        f"\n[{name}] blocks {result.blocks}: both parse {result.both_ok}, both error {result.both_error}, "
        f"only we error {len(result.ours_only)}, only PyYAML errors {len(result.yaml_only)}; "
        f"read by PyYAML with their placeholders quoted {result.quoted}"
    ]
    for category, count in sorted(result.counts.items()):
        lines.append(f"    {category:32} {count}")
    for side, items in (("we error", result.ours_only), ("PyYAML errors", result.yaml_only)):
        for category, count in sorted(Counter(c for _, c, _ in items).items()):
            lines.append(f"    only {side}: {category:20} {count}")
    return "\n".join(lines)


def test_values_agree_with_pyyaml_up_to_known_differences(oracle):
    name, result = oracle
    print(_summary(name, result))
    assert result.blocks > 0
    assert result.both_ok > 0
    if result.problems:
        shown = "\n".join(result.problems[:SHOWN])
        pytest.fail(
            f"{name}: {len(result.problems)} values disagree with PyYAML outside the known categories:\n{shown}",
            pytrace=False,
        )


def test_one_sided_errors_are_documented(oracle):
    name, result = oracle
    unexplained = [f"{p}: [{cat}] {detail}" for p, cat, detail in result.ours_only if cat not in OURS_ONLY_ERRORS]
    unexplained += [f"{p}: [{cat}] {detail}" for p, cat, detail in result.yaml_only if cat not in YAML_ONLY_ERRORS]
    for path, cat, detail in result.ours_only + result.yaml_only:
        print(f"    {name}: {path}: [{cat}] {detail}")
    if unexplained:
        shown = "\n".join(unexplained[:SHOWN])
        pytest.fail(
            f"{name}: {len(unexplained)} blocks where only one parser errors, for no documented reason:\n{shown}",
            pytrace=False,
        )


# ---------------------------------------------------------------------------
# The comparison itself must be able to fail: hand-made blocks


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a: 2021-04-17\n", "timestamp-date"),
        ("a: 2021-10-02T11:30:00\n", "timestamp-datetime"),
        ("a: Yes\n", "yaml11-bool"),
        ("a: 0x1F\n", "yaml11-int:hex"),
        ("a: 012\n", "yaml11-int:leading-zero"),
        ("a: 1_000\n", "yaml11-int:underscore"),
        ("a: 1:30\n", "yaml11-int:sexagesimal"),
        ("a: +44\n", "yaml11-int:plus-sign"),
        ("a: 1.10\n", "float-not-round-trip"),
        ("a: .5\n", "float-not-round-trip"),
        ("a: 1.0e+3\n", "float-not-round-trip"),
        ("a: .inf\n", "non-finite-float"),
        ("a: 1e-05\n", "yaml12-float-pyyaml-string"),
        ("1: x\n", "key:int"),
        ("a: {{date}}\n", "template-placeholder"),
        ("a:\n  - {{title}}\n  - x\n", "template-placeholder"),
        ("a: [x, y]\n", None),
        ("a: plain text\n", None),
    ],
)
def test_known_categories_are_recognised(source, expected):
    fm = frontmatter.parse("---\n" + source + "---\n")
    assert fm is not None and fm.error is None, fm and fm.error
    counts: Counter = Counter()
    problems: list[str] = []
    compare(fm.properties, yaml_load(source)[0], (), counts, problems)
    assert problems == []
    assert list(counts) == ([expected] if expected else [])


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("12", 12),  # a canonical int kept as text
        ("true", True),  # a core boolean kept as text
        ("1.5", 1.5),  # a round-tripping float kept as text
        ("null", None),  # a null kept as text
        (1, 1.0),
        (True, 1),
        ("a b", "a  b"),
        (["a"], ["a", "b"]),
        ({"a": 1}, {"b": 1}),
        (frontmatter.Placeholder("{{date}}"), "{{title}}"),  # another text
        (frontmatter.Placeholder("{{date}}"), ["{{date}}"]),
        ("{{date}}", {"{{date}}": None}),  # only a placeholder we read may be a mapping for PyYAML
    ],
)
def test_unknown_differences_are_reported(ours, theirs):
    problems: list[str] = []
    compare({"k": ours}, {"k": theirs}, (), Counter(), problems)
    assert problems


@pytest.mark.parametrize(
    ("source", "ours", "theirs"),
    [
        ("a: 1\na: 2\n", "duplicate-key", None),
        ("a: &x 1\n", "outside-subset", None),
        ("- a\n", "not-a-mapping", None),
        ("a: [x]# c\n", "comment-not-separated", None),
        ("a:\tb\n", None, "tab-separator"),
        ("a: b\u2028c\n", None, "yaml11-line-break"),
        ("a: b\x7f\n", None, None),  # not YAML at all: not an accepted excuse
        ("a: {{date}}\n", None, "template-placeholder"),  # we read it (test_known_categories_are_recognised)
        ("a: [x, {{date:YYYY}}]\n", None, "template-placeholder"),
        ("a: {{b: c}: d}\n", "UNEXPLAINED", None),  # a mapping as a key that is no placeholder: no excuse
    ],
)
def test_one_sided_error_classifiers(source, ours, theirs):
    fm = frontmatter.parse("---\n" + source + "---\n")
    if ours == "UNEXPLAINED":  # both reject it
        assert fm.error is not None
        with pytest.raises(yaml.YAMLError) as info:
            yaml.safe_load(source)
        assert classify_yaml_error(source, info.value) is None
    elif ours is not None:
        assert fm.error is not None
        line = source.split("\n")[fm.error.line - 2]
        assert classify_our_error(fm.error.reason, line[fm.error.column - 1 :]) == ours
    else:
        with pytest.raises(yaml.YAMLError) as info:
            yaml.safe_load(source)
        assert classify_yaml_error(source, info.value) == theirs


def test_yaml_load_quotes_only_the_placeholders_pyyaml_rejects():
    source = "a: {{date}}\nb: [{{x}}, '{{y}}']\nc: <% tp.file.title %>\n"
    assert yaml_load(source) == ({"a": "{{date}}", "b": ["{{x}}", "{{y}}"], "c": "<% tp.file.title %>"}, 2)
    with pytest.raises(yaml.YAMLError):
        yaml_load("a: {{b: c}: d}\n")
