"""The reduced bug-report cases of ``shared/cases`` as tests.

Each test asserts one fact from a case's ``expected.md`` (quoted in its
docstring) for the operations built so far: parsing frontmatter, surgical
rewrites, link extraction and resolution, backlinks and orphans, and the
vault walk.  Facts about enforce, dedup, search, decay and hooks are tested
where those parts are built.

Everything that writes runs on a temporary copy of the case (fixture
``case``); bytes are compared as bytes.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from autograph.graph.health import health_report
from autograph.read import frontmatter, linkgraph, tags
from autograph.read.frontmatter import FrontmatterError
from autograph.read.links import Resolver
from autograph.read.note import BOM, Note
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from autograph.write.changes import Edit
from autograph.write.store import apply

REPO = Path(__file__).resolve().parents[1]
GRAPH_PY = REPO / "skills" / "autograph" / "scripts" / "graph.py"


# ---------------------------------------------------------------------------
# Helpers


def typed(value):
    """``value`` with each scalar paired with its type, so that ``False != 0``,
    ``7 != 7.0`` and ``'7' != 7`` in comparisons."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def assert_properties(actual: dict, expected: dict) -> None:
    """``actual == expected`` with the same Python types throughout."""
    assert actual == expected
    assert typed(actual) == typed(expected)


def strings(value):
    """Every key and string value inside ``value`` (nested lists and mappings too)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def read_note(path: Path, name: str | None = None) -> Note:
    return Note.from_bytes(name or path.name, path.read_bytes())


def block_of(path: Path) -> frontmatter.Frontmatter | None:
    """The frontmatter of the file at ``path`` (None: no block)."""
    return read_note(path).frontmatter


def rewrite(root: Path, rel: str, key: str, value) -> bytes:
    """Set ``key`` in note ``rel`` of the vault at ``root`` through the write
    path (surgical edit, then the atomic store); return the bytes on disk."""
    path = root / rel
    before = path.read_bytes()
    after = Note.from_bytes(rel, before).with_property(key, value)
    result = apply(root, [Edit(rel, before, after)])
    assert result.conflicts == []
    return path.read_bytes()


def edges_from(graph, source: str):
    return [edge for edge in graph.edges if edge.source == source]


def run_graph(*args: str) -> dict:
    """Run ``graph.py ARGS --json --dry-run`` and return its JSON output."""
    proc = subprocess.run(
        [sys.executable, str(GRAPH_PY), *args, "--json", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def open_vault(root: Path, seconds: float = 30) -> Vault:
    """``Vault.open(root)``, failing (not hanging) if the walk never ends."""
    box: dict = {}

    def run() -> None:
        try:
            box["vault"] = Vault.open(root)
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the walk of {root} did not terminate within {seconds}s"
    if "error" in box:
        raise box["error"]
    return box["vault"]


# ---------------------------------------------------------------------------
# BR-01 - CRLF line endings


def test_br01_crlf_parse(case):
    """parse gives {'title': 'Weekly sync', 'status': 'active', 'tags': ['meeting']}; the frontmatter is detected."""
    block = block_of(case("BR-01") / "vault" / "weekly-sync.md")
    assert block is not None
    assert block.error is None
    assert_properties(block.properties, {"title": "Weekly sync", "status": "active", "tags": ["meeting"]})


def test_br01_crlf_no_carriage_return_in_keys_or_values(case):
    """No key or value contains \\r."""
    props = block_of(case("BR-01") / "vault" / "weekly-sync.md").properties
    assert props, "no properties parsed"
    assert [text for text in strings(props) if "\r" in text] == []


def test_br01_crlf_body_starts_with_text(case):
    """Body starts with `Agenda items below.` (the CRLF after the closing `---` is not part of the body text)."""
    note = read_note(case("BR-01") / "vault" / "weekly-sync.md")
    assert note.body.startswith("Agenda items below.")


def test_br01_crlf_rewrite_exact_bytes(case):
    """Rewrite `status: archived` produces exactly `expected-after/weekly-sync.md`."""
    folder = case("BR-01")
    after = rewrite(folder / "vault", "weekly-sync.md", "status", "archived")
    assert after == (folder / "expected-after" / "weekly-sync.md").read_bytes()


def test_br01_crlf_rewrite_is_idempotent(case):
    """Running the rewrite twice is idempotent (second run changes nothing)."""
    folder = case("BR-01")
    first = rewrite(folder / "vault", "weekly-sync.md", "status", "archived")
    second = rewrite(folder / "vault", "weekly-sync.md", "status", "archived")
    assert second == first


def test_br01_crlf_new_line_uses_crlf(case):
    """Every line still ends in \\r\\n; a new line added by a rewrite also uses \\r\\n."""
    folder = case("BR-01")
    after = rewrite(folder / "vault", "weekly-sync.md", "reviewed", True)
    lines = after.split(b"\n")
    assert lines[-1] == b""
    assert [line for line in lines[:-1] if not line.endswith(b"\r")] == []
    assert b"reviewed: true\r\n" in after
    assert after.count(b"---\r\n") == 2  # still exactly one block


# ---------------------------------------------------------------------------
# BR-02 - UTF-8 byte order mark before the opening `---`

BR02_PROPERTIES = {"type": "person", "aliases": ["Sam"], "status": "active"}


@pytest.mark.parametrize("name", ["Samuel Example.md", "Samuel Example (no BOM).md"])
def test_br02_bom_parse(case, name):
    """parse of both files gives {'type': 'person', 'aliases': ['Sam'], 'status': 'active'}."""
    block = block_of(case("BR-02") / "vault" / name)
    assert block is not None
    assert block.error is None
    assert_properties(block.properties, BR02_PROPERTIES)


def test_br02_bom_not_part_of_first_key(case):
    """The BOM is not part of the first key."""
    note = read_note(case("BR-02") / "vault" / "Samuel Example.md")
    assert note.bom is True
    assert not [key for key in note.properties if "\ufeff" in key]
    assert "type" in note.properties


def test_br02_bom_link_resolves(case):
    """`[[Samuel Example|Sam]]` in `log.md` resolves to `Samuel Example.md` (no ambiguity)."""
    graph = linkgraph.build(Vault.open(case("BR-02") / "vault"))
    [edge] = edges_from(graph, "log.md")
    assert (edge.link.target, edge.link.alias) == ("Samuel Example", "Sam")
    assert edge.target == "Samuel Example.md"
    assert edge.ambiguous is False


def test_br02_bom_rewrite_exact_bytes(case):
    """Rewrite `status: archived` produces exactly `expected-after/Samuel Example.md` (BOM kept, no second block)."""
    folder = case("BR-02")
    after = rewrite(folder / "vault", "Samuel Example.md", "status", "archived")
    assert after == (folder / "expected-after" / "Samuel Example.md").read_bytes()
    assert after.startswith(BOM + b"---\n")


def test_br02_bom_utf8_sig_is_enough(case):
    """Reading with Python's `utf-8-sig` codec (or stripping one leading U+FEFF) is enough."""
    data = (case("BR-02") / "vault" / "Samuel Example.md").read_bytes()
    text = data.decode("utf-8-sig")
    assert Note.from_bytes("Samuel Example.md", data).text == text
    assert_properties(frontmatter.parse(text).properties, BR02_PROPERTIES)


# ---------------------------------------------------------------------------
# BR-04 - YAML 1.1 implicit typing

BR04_PROPERTIES = {
    "country": "NO",
    "languages": ["en", "no"],
    "answer": "yes",
    "reviewed": "off",
    "enabled": "On",
    "done": False,
    "zip": "01234",
    "ticket": "0012",
    "version": "1.10",
    "count": 7,
}


def test_br04_yaml12_typing_parse(case):
    """parse gives exactly {'country': 'NO', 'languages': ['en', 'no'], ..., 'done': False, 'zip': '01234', ...}."""
    block = block_of(case("BR-04") / "vault" / "trip.md")
    assert block is not None and block.error is None
    assert_properties(block.properties, BR04_PROPERTIES)


def _key_spans(data: bytes) -> dict[str, tuple[int, int]]:
    """Top-level key -> (first line, end line) indexes in the file's lines."""
    lines = data.splitlines(keepends=True)
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip(b"\r\n") == b"---")
    starts = [i for i in range(1, close) if lines[i][:1] not in (b" ", b"-", b"#", b"\n")]
    spans = {}
    for n, start in enumerate(starts):
        key = lines[start].split(b":", 1)[0].decode()
        spans[key] = (start, starts[n + 1] if n + 1 < len(starts) else close)
    return spans


@pytest.mark.parametrize("key", list(BR04_PROPERTIES))
def test_br04_rewrite_one_key_keeps_other_lines(case, key):
    """A rewrite of any one key leaves every other line byte-identical."""
    root = case("BR-04") / "vault"
    before = (root / "trip.md").read_bytes()
    start, end = _key_spans(before)[key]
    after = rewrite(root, "trip.md", key, "changed")
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert new[:start] == old[:start]
    assert new[start + 1 :] == old[end:]
    assert read_note(root / "trip.md").properties[key] == "changed"


# ---------------------------------------------------------------------------
# BR-05 - `#tag` in frontmatter starts a YAML comment


def test_br05_inline_hashtags_parse(case):
    """parse of `inline-hashtags.md` gives {'tags': None}."""
    assert_properties(block_of(case("BR-05") / "vault" / "inline-hashtags.md").properties, {"tags": None})


def test_br05_list_hashtags_parse(case):
    """parse of `list-hashtags.md` gives {'tags': [None, 'beta', '#gamma']}."""
    props = block_of(case("BR-05") / "vault" / "list-hashtags.md").properties
    assert_properties(props, {"tags": [None, "beta", "#gamma"]})


def test_br05_inline_hashtags_normalized(case):
    """Normalised tags: `inline-hashtags.md` -> []."""
    props = block_of(case("BR-05") / "vault" / "inline-hashtags.md").properties
    assert tags.normalize(props["tags"]) == []


def test_br05_list_hashtags_normalized(case):
    """Normalised tags: `list-hashtags.md` -> ['beta', 'gamma'] (quoted leading `#` dropped, None items dropped)."""
    props = block_of(case("BR-05") / "vault" / "list-hashtags.md").properties
    assert tags.normalize(props["tags"]) == ["beta", "gamma"]


@pytest.mark.parametrize(
    "name, line",
    [("inline-hashtags.md", 2), ("list-hashtags.md", 3)],
)
def test_br05_comment_lines_never_silently_rewritten(case, name, line):
    """The tool never silently rewrites these lines (line 2 `tags: #project #urgent`, line 3 `  - #alpha`)."""
    root = case("BR-05") / "vault"
    before = (root / name).read_bytes().splitlines(keepends=True)
    after = rewrite(root, name, "status", "draft").splitlines(keepends=True)
    assert before[line - 1].lstrip().startswith((b"tags: #", b"- #"))  # the fixture line the fact is about
    assert after[line - 1] == before[line - 1]
    assert after[: len(before) - 2] == before[: len(before) - 2]  # every line up to the closing `---`


# ---------------------------------------------------------------------------
# BR-06 - unquoted value containing `: `


def test_br06_colon_in_value_error_at_line_3(case):
    """parse reports an error for `spec-rules.md`, line 3, naming the cause ("`: ` inside an unquoted value")."""
    block = block_of(case("BR-06") / "vault" / "spec-rules.md")
    assert block is not None, "reported as 'no frontmatter'"
    assert block.error is not None
    assert block.error.line == 3
    assert ": " in block.error.reason and "inside an unquoted value" in block.error.reason
    assert str(block.error).startswith(block.error.reason + " at line 3, column ")


def test_br06_colon_in_value_no_partial_dict(case):
    """It must not return a partial dict that looks valid."""
    block = block_of(case("BR-06") / "vault" / "spec-rules.md")
    assert block.properties == {}


@pytest.mark.parametrize(
    "edit",
    [("set", "type", "rule"), ("set", "status", "active"), ("delete", "name", None)],
    ids=["set-type", "add-key", "delete-key"],
)
def test_br06_colon_in_value_rewrite_refused(case, edit):
    """A rewrite of any key (e.g. set `type: rule`) is refused; file bytes unchanged."""
    path = case("BR-06") / "vault" / "spec-rules.md"
    before = path.read_bytes()
    note = Note.from_bytes("spec-rules.md", before)
    action, key, value = edit
    with pytest.raises(FrontmatterError) as raised:
        if action == "set":
            note.with_property(key, value)
        else:
            note.without_property(key)
    assert raised.value.line == 3
    assert path.read_bytes() == before


# ---------------------------------------------------------------------------
# BR-08 - frontmatter update must not re-serialise the body

BR08_LINKS = {
    ("Design Doc", False, None),
    ("diagram.png", True, None),
    ("Person A", False, None),
    ("Spec", False, "the spec"),
}


def test_br08_set_updated_exact_bytes(case):
    """Set `updated: 2026-01-06` produces exactly `expected-after/project.md` (body byte-identical).

    A date is set as a ``datetime.date``, which is written unquoted (Obsidian's
    Date property); the string "2026-01-06" would be quoted (BR-06 item 5)."""
    folder = case("BR-08")
    after = rewrite(folder / "vault", "project.md", "updated", datetime.date(2026, 1, 6))
    assert after == (folder / "expected-after" / "project.md").read_bytes()


def test_br08_body_links_same_before_and_after(case):
    """Body links before and after the edit: `Design Doc`, `diagram.png` (embed), `Person A`, `Spec` (`the spec`)."""
    root = case("BR-08") / "vault"
    before = linkgraph.note_links(read_note(root / "project.md"))
    rewrite(root, "project.md", "updated", datetime.date(2026, 1, 6))
    after = linkgraph.note_links(read_note(root / "project.md"))
    for found in (before, after):
        assert len(found) == 4
        assert {(link.target, link.embed, link.alias) for link in found} == BR08_LINKS


# ---------------------------------------------------------------------------
# BR-09 - plain dates must not become timestamps


def test_br09_add_key_keeps_dates_exact_bytes(case):
    """Adding `reviewed: true` produces exactly `expected-after/log.md` (appended last; date lines byte-identical)."""
    folder = case("BR-09")
    after = rewrite(folder / "vault", "log.md", "reviewed", True)
    assert after == (folder / "expected-after" / "log.md").read_bytes()


# ---------------------------------------------------------------------------
# BR-10 - `---` horizontal rules taken for frontmatter


def test_br10_no_frontmatter(case):
    """`no-frontmatter.md`: parse gives no frontmatter; `status: not a field` is body text, never a property."""
    note = read_note(case("BR-10") / "vault" / "no-frontmatter.md")
    assert note.frontmatter is None
    assert note.properties == {}
    assert "status: not a field" in note.body


def test_br10_rule_first_no_closing_line(case):
    """`rule-first.md`: line 1 is `---` but no closing line follows -> no frontmatter; the rule is body."""
    note = read_note(case("BR-10") / "vault" / "rule-first.md")
    assert note.frontmatter is None
    assert note.body.startswith("---\n")


def test_br10_real_and_fake_blocks(case):
    """`real-and-fake.md`: parse gives {'status': 'active'}; the second block is body."""
    note = read_note(case("BR-10") / "vault" / "real-and-fake.md")
    assert_properties(note.properties, {"status": "active"})
    assert "status: fake" in note.body


@pytest.mark.parametrize(
    "name, value",
    [("no-frontmatter.md", "active"), ("rule-first.md", "active"), ("real-and-fake.md", "archived")],
)
def test_br10_set_status_exact_bytes(case, name, value):
    """Adding/setting `status` produces exactly the files in `expected-after/`."""
    folder = case("BR-10")
    after = rewrite(folder / "vault", name, "status", value)
    assert after == (folder / "expected-after" / name).read_bytes()


def test_br10_reparse_rule_first_after(case):
    """Re-parsing `expected-after/rule-first.md` gives {'status': 'active'}; the body starts with the `---` rule."""
    folder = case("BR-10")
    note = read_note(folder / "expected-after" / "rule-first.md")
    assert_properties(note.properties, {"status": "active"})
    assert note.body.startswith("---\n")
    assert note.body == (folder / "vault" / "rule-first.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# BR-12 - empty or comment-only frontmatter


@pytest.mark.parametrize(
    "name, properties, body",
    [
        ("empty.md", {}, "Body\n"),
        ("comment-only.md", {}, "Body\n"),
        ("frontmatter-only.md", {"status": "active"}, ""),
        ("no-trailing-newline.md", {"status": "active"}, ""),
    ],
)
def test_br12_empty_blocks_parse(case, name, properties, body):
    """parse: `empty.md` -> {}, body `Body\\n`; `comment-only.md` -> {}; `frontmatter-only.md`,
    `no-trailing-newline.md` -> {'status': 'active'}, body ''."""
    note = read_note(case("BR-12") / "vault" / name)
    assert note.frontmatter is not None, "reported as no frontmatter"
    assert note.frontmatter.error is None
    assert_properties(note.properties, properties)
    if name != "comment-only.md":  # the case states no body for this one
        assert note.body == body


@pytest.mark.parametrize("name", ["empty.md", "comment-only.md"])
def test_br12_set_status_exact_bytes(case, name):
    """Setting `status: active` produces exactly `expected-after/` (inside the block; the comment line survives)."""
    folder = case("BR-12")
    after = rewrite(folder / "vault", name, "status", "active")
    assert after == (folder / "expected-after" / name).read_bytes()


# ---------------------------------------------------------------------------
# BR-14 - a `---` block that is valid YAML but not a mapping

BR14_REASONS = {
    "letterhead.md": "frontmatter is a string, expected key: value pairs",
    "list-preamble.md": "frontmatter is a list, expected key: value pairs",
}


@pytest.mark.parametrize("name", list(BR14_REASONS))
def test_br14_not_a_mapping_parse(case, name):
    """parse -> block present but invalid: "frontmatter is a string (list), expected key: value pairs"; {}."""
    block = block_of(case("BR-14") / "vault" / name)
    assert block is not None
    assert block.error is not None
    assert BR14_REASONS[name] in block.error.reason
    assert block.properties == {}


@pytest.mark.parametrize("name", list(BR14_REASONS))
def test_br14_add_key_refused(case, name):
    """No writer adds a second block or replaces the preamble; adding `type: note` is refused with the same message."""
    path = case("BR-14") / "vault" / name
    before = path.read_bytes()
    with pytest.raises(FrontmatterError) as raised:
        Note.from_bytes(name, before).with_property("type", "note")
    assert BR14_REASONS[name] in raised.value.reason
    assert path.read_bytes() == before


# ---------------------------------------------------------------------------
# BR-15 - tab characters


def test_br15_tab_indentation_error(case):
    """parse of `tabbed.md` reports "tab used for indentation at line 4" and returns no properties."""
    block = block_of(case("BR-15") / "vault" / "tabbed.md")
    assert block is not None
    assert block.error is not None
    assert "tab used for indentation" in block.error.reason
    assert block.error.line == 4
    assert block.properties == {}


def test_br15_tab_inside_value_parse(case):
    """parse of `tab-in-value.md` succeeds: {'title': 'Tab\\tinside value', 'status': 'active'}."""
    block = block_of(case("BR-15") / "vault" / "tab-in-value.md")
    assert block is not None and block.error is None
    assert_properties(block.properties, {"title": "Tab\tinside value", "status": "active"})


# ---------------------------------------------------------------------------
# BR-16 - `[[...]]` inside code


def test_br16_outgoing_links_exactly_two(case):
    """Outgoing links of `dev-notes.md` = exactly two, both to `Design Doc.md` (line 1, and `|the design`)."""
    root = case("BR-16") / "vault"
    lines = (root / "dev-notes.md").read_text(encoding="utf-8").splitlines()
    second_line = next(n for n, text in enumerate(lines, 1) if "[[Design Doc|the design]]" in text)
    graph = linkgraph.build(Vault.open(root))
    found = [(edge.target, edge.link.alias, edge.link.line) for edge in edges_from(graph, "dev-notes.md")]
    assert found == [("Design Doc.md", None, 1), ("Design Doc.md", "the design", second_line)]


@pytest.mark.parametrize(
    "text",
    [
        "not a link",
        "also not",
        '-n "$X"',
        ":space:",
        "outputs.influxdb",
        "inside nested fence",
        "indented code block",
        "after an unclosed fence",
    ],
)
def test_br16_nothing_in_code_is_a_link(case, text):
    """Nothing else is a link: inline code, fenced code (any fence, nested, unclosed), indented code."""
    note = read_note(case("BR-16") / "vault" / "dev-notes.md")
    assert [link.target for link in linkgraph.note_links(note) if text in link.text] == []


def test_br16_broken_link_report_empty(case):
    """Broken-link report for the vault: empty."""
    root = case("BR-16") / "vault"
    assert health_report(Vault.open(root), load_schema(root))["broken_links"] == []


def test_br16_orphan_report(case):
    """Orphan report: `dev-notes.md` only; `Design Doc.md` is not an orphan."""
    root = case("BR-16") / "vault"
    assert health_report(Vault.open(root), load_schema(root))["orphans"] == ["dev-notes.md"]


# ---------------------------------------------------------------------------
# BR-17 - a root-level note linked by its file name


@pytest.mark.parametrize(
    "link, target",
    [
        ("alpha-note", "alpha-note.md"),
        ("alpha-note.md", "alpha-note.md"),
        ("notes/beta-note", "notes/beta-note.md"),
        ("beta-note", "notes/beta-note.md"),
        ("alpha_note", None),
        ("A Descriptive Human Title", None),
    ],
)
def test_br17_link_target(case, link, target):
    """Link in `index.md` -> target (`_` and `-` differ; a `title:` property is not a link target)."""
    graph = linkgraph.build(Vault.open(case("BR-17") / "vault"))
    [edge] = [edge for edge in edges_from(graph, "index.md") if edge.link.text == link]
    assert edge.target == target


def test_br17_broken_link_report(case):
    """The broken-link report lists exactly `[[alpha_note]]`, `[[A Descriptive Human Title]]`, with line numbers."""
    root = case("BR-17") / "vault"
    rows = health_report(Vault.open(root), load_schema(root))["broken_links"]
    assert [(row["source"], row["line"], row["target"]) for row in rows] == [
        ("index.md", 5, "alpha_note"),
        ("index.md", 6, "A Descriptive Human Title"),
    ]


# ---------------------------------------------------------------------------
# BR-18 - wikilinks resolve case-insensitively


@pytest.mark.parametrize("link", ["mynote", "MYNOTE#Section", "notes/mynote"])
def test_br18_case_insensitive_link(case, link):
    """`[[mynote]]`, `[[MYNOTE#Section]]` and `[[notes/mynote|my note]]` all resolve to `notes/MyNote.md`."""
    graph = linkgraph.build(Vault.open(case("BR-18") / "vault"))
    [edge] = [edge for edge in edges_from(graph, "index.md") if edge.link.text == link]
    assert edge.target == "notes/MyNote.md"


def test_br18_backlinks(case):
    """Backlinks of `notes/MyNote.md` = `[index.md]` (one note, three links)."""
    graph = linkgraph.build(Vault.open(case("BR-18") / "vault"))
    backlinks = graph.backlinks("notes/MyNote.md")
    assert sorted({edge.source for edge in backlinks}) == ["index.md"]
    assert len(backlinks) == 3


def test_br18_backlinks_cli(case):
    """Backlinks of `notes/MyNote.md` = `[index.md]` (one note, three links) - through `graph.py backlinks`."""
    out = run_graph("backlinks", str(case("BR-18") / "vault"), "notes/MyNote.md")
    assert out["sources"] == ["index.md"]
    assert len(out["backlinks"]) == 3


@pytest.mark.parametrize(
    "source, link, target",
    [
        # full ties (same rank, same length): code-point order of the path as written
        ("index.md", "Foo", "a/Foo.md"),
        ("index.md", "foo", "a/Foo.md"),
        ("c/src.md", "FOO", "a/Foo.md"),
        # the source's folder decides, whatever the letter case
        ("b/src.md", "Foo", "b/foo.md"),
        ("a/src.md", "foo", "a/Foo.md"),
        ("a/src.md", "FOO", "a/Foo.md"),
        ("b/src.md", "FOO", "b/foo.md"),
    ],
)
def test_br18_no_letter_case_preference(make_vault, source, link, target):
    """No letter-case preference anywhere in resolution: `[[foo]]` with `a/Foo.md`
    and `b/foo.md` is decided by BR-19's rules alone; only a full tie is broken by
    code-point order of the vault path in its original letter case."""
    root = make_vault({"a/Foo.md": "A\n", "b/foo.md": "B\n", source: f"[[{link}]]\n"})
    graph = linkgraph.build(Vault.open(root))
    [edge] = edges_from(graph, source)
    assert edge.target == target


def test_br18_same_folder_note_wins_over_exact_case(make_vault):
    """A `[[bookfusion]]` written inside `People/BookFusion.md` goes to that
    same-folder note, not to `Plugins/bookfusion.md`."""
    root = make_vault({"People/BookFusion.md": "[[bookfusion]]\n", "Plugins/bookfusion.md": "plugin\n"})
    [edge] = linkgraph.build(Vault.open(root)).edges
    assert edge.target == "People/BookFusion.md"


# ---------------------------------------------------------------------------
# BR-19 - several notes share a file name

BR19_TABLE = [
    ("vault", "zzzz/deep/src1.md", "Note", "b/Note.md"),
    ("vault", "zzzz/src2.md", "Note", "zzzz/Note.md"),
    ("vault", "root-src.md", "Note", "b/Note.md"),
    ("vault", "root-src.md", "b/Note", "b/Note.md"),
    ("vault-with-root", "zzzz/deep/src1.md", "Note", "Note.md"),
    ("vault-with-root", "zzzz/src2.md", "Note", "Note.md"),
    ("vault-with-root", "root-src.md", "Note", "Note.md"),
    ("vault-with-root", "root-src.md", "b/Note", "b/Note.md"),
]
BR19_CANDIDATES = {"vault": 3, "vault-with-root": 4}


@pytest.mark.parametrize("vault, source, link, target", BR19_TABLE)
def test_br19_same_name_resolution(case, vault, source, link, target):
    """Exact vault path wins, then the source's own folder (not an ancestor), then the shortest path."""
    graph = linkgraph.build(Vault.open(case("BR-19") / vault))
    [edge] = [edge for edge in edges_from(graph, source) if edge.link.target == link]
    assert edge.target == target


@pytest.mark.parametrize("vault", list(BR19_CANDIDATES))
def test_br19_bare_link_marked_ambiguous(case, vault):
    """Each bare `[[Note]]` is marked "ambiguous: 3 (or 4) candidates" with the list, even though it resolves."""
    v = Vault.open(case("BR-19") / vault)
    every_note = sorted(path for path in v.notes if path.rsplit("/", 1)[-1] == "Note.md")
    assert len(every_note) == BR19_CANDIDATES[vault]
    bare = [edge for edge in linkgraph.build(v).edges if edge.link.target == "Note"]
    assert len(bare) == 3
    for edge in bare:
        assert edge.target is not None
        assert edge.ambiguous is True
        assert sorted(edge.candidates) == every_note


@pytest.mark.parametrize("vault", list(BR19_CANDIDATES))
def test_br19_ambiguous_links_in_health_report(case, vault):
    """The link report marks each bare `[[Note]]` as ambiguous with 3 (or 4) candidates and lists them."""
    root = case("BR-19") / vault
    report = health_report(Vault.open(root), load_schema(root))
    rows = [row for row in report["ambiguous_links"] if row["target"] == "Note"]
    assert sorted(row["source"] for row in rows) == ["root-src.md", "zzzz/deep/src1.md", "zzzz/src2.md"]
    expected = {(source, target) for v, source, link, target in BR19_TABLE if v == vault and link == "Note"}
    assert {(row["source"], row["resolved"]) for row in rows} == expected
    for row in rows:
        assert len(row["candidates"]) == BR19_CANDIDATES[vault]
    assert "Note" not in {row["target"] for row in report["broken_links"]}


@pytest.mark.parametrize("vault", list(BR19_CANDIDATES))
def test_br19_resolution_independent_of_listing_order(case, vault):
    """Resolution is deterministic (never file-system listing order)."""
    files = Vault.open(case("BR-19") / vault).files
    forward, backward = Resolver(sorted(files)), Resolver(sorted(files, reverse=True))
    for v, source, link, target in BR19_TABLE:
        if v == vault:
            assert forward.resolve(link, source).path == target
            assert backward.resolve(link, source).path == target


# ---------------------------------------------------------------------------
# BR-21 - a path-qualified link must not hide an orphan


@pytest.mark.parametrize(
    "note, sources",
    [("concepts/dup.md", ["hub.md"]), ("summaries/dup.md", []), ("hub.md", [])],
)
def test_br21_backlinks(case, note, sources):
    """Backlinks: `concepts/dup.md` <- [hub.md]; `summaries/dup.md` <- []; `hub.md` <- []."""
    graph = linkgraph.build(Vault.open(case("BR-21") / "vault"))
    assert [edge.source for edge in graph.backlinks(note)] == sources


def test_br21_orphans(case):
    """Orphans (no incoming link from another note) = ['hub.md', 'summaries/dup.md']."""
    graph = linkgraph.build(Vault.open(case("BR-21") / "vault"))
    assert graph.orphans() == ["hub.md", "summaries/dup.md"]


def test_br21_orphans_cli(case):
    """Orphans = ['hub.md', 'summaries/dup.md'] - through `graph.py orphans`."""
    assert run_graph("orphans", str(case("BR-21") / "vault"))["orphans"] == ["hub.md", "summaries/dup.md"]


def test_br21_orphans_use_resolved_path(case):
    """Orphan detection uses the resolved target path of each link, never the raw link text or its stem."""
    graph = linkgraph.build(Vault.open(case("BR-21") / "vault"))
    [edge] = edges_from(graph, "hub.md")
    assert edge.target == "concepts/dup.md"
    assert "summaries/dup.md" in graph.orphans()


# ---------------------------------------------------------------------------
# BR-23 - hidden folders and macOS `._` files


def test_br23_notes_skip_dot_paths(case):
    """Notes in the vault = ['Alpha.md', 'index.md', 'sources/Source Title.md']."""
    assert Vault.open(case("BR-23") / "vault").notes == ["Alpha.md", "index.md", "sources/Source Title.md"]


def test_br23_nothing_under_dot_paths_is_read(case):
    """Nothing under a dot-prefixed folder and no dot-prefixed file (`._Alpha.md`) is read or indexed."""
    files = Vault.open(case("BR-23") / "vault").files
    assert [path for path in files if any(part.startswith(".") for part in path.split("/"))] == []


@pytest.mark.parametrize(
    "link, target",
    [("Source Title", "sources/Source Title.md"), ("Alpha", "Alpha.md"), ("Old Note", None), ("Draft Idea", None)],
)
def test_br23_links_in_index(case, link, target):
    """Links in `index.md`: `Source Title`, `Alpha` resolve; `Old Note`, `Draft Idea` are unresolved."""
    graph = linkgraph.build(Vault.open(case("BR-23") / "vault"))
    [edge] = [edge for edge in edges_from(graph, "index.md") if edge.link.target == link]
    assert edge.target == target


def test_br23_source_title_not_ambiguous(case):
    """`[[Source Title]]` -> `sources/Source Title.md` (not ambiguous)."""
    graph = linkgraph.build(Vault.open(case("BR-23") / "vault"))
    [edge] = [edge for edge in edges_from(graph, "index.md") if edge.link.target == "Source Title"]
    assert edge.ambiguous is False
    assert list(edge.candidates) == ["sources/Source Title.md"]


def test_br23_orphans(case):
    """Orphans = ['index.md']."""
    graph = linkgraph.build(Vault.open(case("BR-23") / "vault"))
    assert graph.orphans() == ["index.md"]


# ---------------------------------------------------------------------------
# BR-25 - no fuzzy fallback for unmatched links


@pytest.mark.parametrize(
    "link",
    ["overview (state-management/session-execution)", "Session Execution Overview"],
)
def test_br25_links_unresolved(case, link):
    """Both links in `tasks.md` are unresolved (`part_of: [[overview (...)]]`, `[[Session Execution Overview]]`)."""
    graph = linkgraph.build(Vault.open(case("BR-25") / "vault"))
    [edge] = [edge for edge in edges_from(graph, "tasks.md") if edge.link.target == link]
    assert edge.target is None


@pytest.mark.parametrize("note", ["architecture/overview.md", "state-management.md"])
def test_br25_no_edge_to_unrelated_note(case, note):
    """No edge from `tasks.md` to `architecture/overview.md` or `state-management.md`; backlinks of both are []."""
    graph = linkgraph.build(Vault.open(case("BR-25") / "vault"))
    assert [edge for edge in edges_from(graph, "tasks.md") if edge.target == note] == []
    assert graph.backlinks(note) == []


def test_br25_broken_link_report(case):
    """The broken-link report lists both (file, line, link text)."""
    root = case("BR-25") / "vault"
    rows = health_report(Vault.open(root), load_schema(root))["broken_links"]
    assert sorted((row["source"], row["line"], row["target"]) for row in rows) == [
        ("tasks.md", 2, "overview (state-management/session-execution)"),
        ("tasks.md", 4, "Session Execution Overview"),
    ]


# ---------------------------------------------------------------------------
# BR-30 - same display name, different people


def test_br30_link_resolves_by_file_name_not_alias(case):
    """`[[Jordan Lee]]` in any note resolves to `people/Jordan Lee.md` by file name, not to the aliased note."""
    root = case("BR-30") / "vault"
    (root / "index.md").write_text("Met [[Jordan Lee]].\n", encoding="utf-8")
    (root / "people" / "log.md").write_text("Call [[Jordan Lee]].\n", encoding="utf-8")
    vault = Vault.open(root)
    edges = [edge for edge in linkgraph.build(vault).edges if edge.link.target == "Jordan Lee"]
    assert sorted(edge.source for edge in edges) == ["index.md", "people/log.md"]
    for edge in edges:
        assert edge.target == "people/Jordan Lee.md"
        assert "people/Jordan Lee (Beta).md" not in edge.candidates
    for source in vault.notes:
        assert vault.resolver.resolve("Jordan Lee", source).path == "people/Jordan Lee.md"


# ---------------------------------------------------------------------------
# BR-31 - symlinks


@pytest.fixture
def br31_vault(case, tmp_path):
    """BR-31's vault with real symlinks: `shared -> notes`, `alias-note.md ->
    notes/Alpha.md`, `loop -> .`, and `elsewhere ->` a folder outside the vault."""
    root = case("BR-31") / "vault"
    for name, target in (("shared", "notes"), ("alias-note.md", "notes/Alpha.md")):
        (root / name).unlink()  # a plain text file on this checkout
        os.symlink(target, root / name)
    os.symlink(".", root / "loop")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Outside.md").write_text("Outside [[Alpha]].\n", encoding="utf-8")
    os.symlink(os.path.relpath(outside, root), root / "elsewhere")
    return root


def test_br31_walk_terminates_each_file_once(br31_vault):
    """The scan terminates (with `vault/loop` present); each real file is visited once, keyed by `os.path.realpath`."""
    vault = open_vault(br31_vault)
    reals = [os.path.realpath(br31_vault / path) for path in vault.files]
    assert len(reals) == len(set(reals))
    assert [path for path in vault.files if path.startswith(("loop/", "shared/"))] == []


def test_br31_notes_canonical_paths(br31_vault):
    """Notes = ['index.md', 'notes/Alpha.md']; `shared/Alpha.md` and `alias-note.md` are not separate notes."""
    assert open_vault(br31_vault).notes == ["index.md", "notes/Alpha.md"]


def test_br31_link_not_ambiguous(br31_vault):
    """`[[Alpha]]` resolves to `notes/Alpha.md` and is not ambiguous."""
    graph = linkgraph.build(open_vault(br31_vault))
    [edge] = edges_from(graph, "index.md")
    assert edge.link.target == "Alpha"
    assert edge.target == "notes/Alpha.md"
    assert edge.ambiguous is False


def test_br31_symlink_outside_vault_skipped_with_warning(br31_vault):
    """A symlink whose real path is outside the vault is skipped with a warning."""
    vault = open_vault(br31_vault)
    assert [path for path in vault.files if path.startswith("elsewhere")] == []
    assert [warning for warning in vault.warnings if "elsewhere" in warning] != []


# ---------------------------------------------------------------------------
# BR-39 - heading anchors compared the way Obsidian compares them

BR39_TABLE = [
    ("[[Target#MCP Server]]", True),
    ("[[Target#mcp server]]", True),
    ("[[Target#mcp-server]]", False),
    ("[[Target#Step 1 install]]", True),
    ("[[Target#Step 1: install]]", True),
    ("[[Target#What's new]]", True),
    ("[[Target#Whats new]]", False),
    ("[[Target#Fájl-tulajdonságok]]", True),
    ("[[Target#Fájl tulajdonságok]]", False),
    ("[[Target#Part A#Details]]", True),
    ("[[Target#Part B#Details]]", False),
    ("[[Target#^PARA-1]]", True),
    ("[server](Target.md#MCP%20Server)", True),
    ("[server slug](Target.md#mcp-server)", False),
]


def br39_broken_lines(root: Path) -> set[int]:
    report = health_report(Vault.open(root), load_schema(root))
    assert report["broken_links"] == []
    return {row["line"] for row in report["broken_anchors"]}


@pytest.mark.parametrize("link, resolves", BR39_TABLE, ids=[link for link, _ in BR39_TABLE])
def test_br39_anchor(case, link, resolves):
    """Each link of `Source.md` to `Target.md`: its anchor resolves or is broken
    as Obsidian's stripHeading and heading walk say."""
    root = case("BR-39") / "vault"
    lines = (root / "Source.md").read_text(encoding="utf-8").split("\n")
    [line] = [number for number, text in enumerate(lines, 1) if text == f"- {link}"]
    assert (line not in br39_broken_lines(root)) is resolves


def test_br39_exactly_five_broken_anchors(case):
    """`graph.py health` reports exactly 5 broken anchors for this vault and no broken link."""
    out = run_graph("health", str(case("BR-39") / "vault"))
    assert len(out["broken_anchors"]) == 5
    assert out["broken_links"] == []
    assert {row["resolved"] for row in out["broken_anchors"]} == {"Target.md"}


# ---------------------------------------------------------------------------
# BR-40 - relative paths stop at the vault root; candidates below the source's folder come first

BR40_TABLE = [
    ("docs/guide/deep/page.md", "../../../images/shot.png", "images/shot.png"),
    ("docs/guide/deep/page.md", "../../../../../images/shot.png", "images/shot.png"),
    ("docs/guide/deep/page.md", "../../../images/missing.png", None),
    ("docs/guide/deep/page.md", "./sibling.md", "docs/guide/deep/sibling.md"),
    ("projects/alpha/overview.md", "Plan", "projects/alpha/sub/Plan.md"),
]


@pytest.mark.parametrize("source, link, target", BR40_TABLE)
def test_br40_resolution(case, source, link, target):
    """Relative paths stop at the vault root; a candidate below the source's folder
    comes before a shorter path elsewhere."""
    graph = linkgraph.build(Vault.open(case("BR-40") / "vault"))
    edges = [edge for edge in edges_from(graph, source) if edge.link.target == link]
    assert edges
    assert {edge.target for edge in edges} == {target}


def test_br40_wikilink_relative_path(case):
    """`[[../../../images/shot.png]]` in `docs/guide/deep/page.md` is `images/shot.png`."""
    graph = linkgraph.build(Vault.open(case("BR-40") / "vault"))
    [edge] = [e for e in edges_from(graph, "docs/guide/deep/page.md") if e.link.kind == "wikilink"]
    assert edge.link.target == "../../../images/shot.png"
    assert edge.target == "images/shot.png"


def test_br40_exactly_one_broken_link(case):
    """Health reports exactly 1 broken link (`../../../images/missing.png`)."""
    out = run_graph("health", str(case("BR-40") / "vault"))
    assert [row["target"] for row in out["broken_links"]] == ["../../../images/missing.png"]


# ---------------------------------------------------------------------------
# BR-41 - template placeholders in frontmatter


def test_br41_placeholders_are_valid_frontmatter(case):
    """Neither template is listed under invalid frontmatter; their property links
    count: `[[Cities]]` is broken, `[[Acme]]` resolves; exactly 1 broken link."""
    root = case("BR-41") / "vault"
    out = run_graph("health", str(root))
    assert out["invalid_frontmatter"] == []
    assert [row["target"] for row in out["broken_links"]] == ["Cities"]
    graph = linkgraph.build(Vault.open(root))
    [acme] = [edge for edge in graph.edges if edge.link.target == "Acme"]
    assert acme.source == "Templates/Person Template.md"
    assert acme.target == "Acme.md"


# ---------------------------------------------------------------------------
# BR-42 - code regions follow CommonMark


def test_br42_exactly_three_broken_links(case):
    """Health reports exactly these 3 broken links: `after-fence`, `after-code`, `real-link`."""
    out = run_graph("health", str(case("BR-42") / "vault"))
    assert sorted(row["target"] for row in out["broken_links"]) == ["after-code", "after-fence", "real-link"]
