"""Frontmatter parsing, surgical edits and ``graph.py health`` on the real vaults.

Every test is parametrized by corpus (``../shared/corpora``, see its README)
and checks 100% of the notes of that corpus.  Corpora are read in place, once
per module (``_corpus``); anything that writes works on a copy in a temporary
folder.  When ``AUTOGRAPH_REQUIRE_CORPORA=1`` a missing corpus fails.

Each test collects every offending note and fails with the first few, so one
run shows the size of a problem, not just its first instance.
"""

from __future__ import annotations

import difflib
import json
import os
import posixpath
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from autograph.read import frontmatter
from autograph.read.frontmatter import FrontmatterError
from autograph.read.note import Note
from autograph.read.vault import Vault
from conftest import CORPORA, CORPUS_NAMES, SCRIPTS, copy_tree, require

pytestmark = pytest.mark.corpus

SENTINEL = "autograph sentinel \u2603 value"
NEW_KEY = "autograph_test"
SHOWN = 15

# graph.py health --help, "JSON keys (--json)"
HEALTH_KEYS = {
    "vault",
    "score",
    "penalties",
    "notes",
    "attachments",
    "hubs",
    "links",
    "resolved_links",
    "avg_links",
    "broken_links",
    "orphans",
    "dead_ends",
    "ambiguous_links",
    "broken_anchors",
    "description_coverage",
    "invalid_frontmatter",
    "unreadable",
    "case_collisions",
    "conflict_copies",
    "warnings",
    "previous",
    "stale_share",
    "tiers",
    "recall",
    "memory",
    "index",
}
PENALTY_KEYS = {"orphans", "broken_links", "link_sparsity", "description", "invalid_frontmatter", "broken_anchors"}
LINK_ROW_KEYS = {"source", "line", "target", "kind"}


# ---------------------------------------------------------------------------
# Reading each corpus once


@dataclass
class Corpus:
    name: str
    root: Path
    notes: list[Note]  # every .md note of the vault, in vault order

    def valid(self):
        """Notes whose frontmatter parsed, written as a block mapping (editable)."""
        return [n for n in self.notes if _parsed(n) and not _is_flow_mapping(n)]

    def flow(self):
        """Notes whose frontmatter parsed and is one flow mapping (JSON-style
        ``{...}``): documented as not editable, set_property raises."""
        return [n for n in self.notes if _parsed(n) and _is_flow_mapping(n)]


def _parsed(note: Note) -> bool:
    return note.text is not None and note.frontmatter is not None and note.frontmatter.error is None


def _is_flow_mapping(note: Note) -> bool:
    """The block's first content line (not blank, not a comment) opens with ``{``."""
    fm = note.frontmatter
    for line in note.text[fm.start : fm.end].split("\n"):
        stripped = line.strip(" \t\r")
        if stripped and not stripped.startswith("#"):
            return stripped.startswith("{")
    return False


@cache
def _load(name: str) -> Corpus:
    root = CORPORA / name
    vault = Vault.open(root)
    notes = [Note.from_bytes(path, (root / path).read_bytes()) for path in vault.notes]
    return Corpus(name, root, notes)


@pytest.fixture(scope="module", params=CORPUS_NAMES)
def corpus(request) -> Corpus:
    require(CORPORA / request.param)
    corpus = _load(request.param)
    assert corpus.notes, f"{request.param}: no notes found"
    return corpus


def _fail_if(problems: list[str], what: str, total: int) -> None:
    if problems:
        shown = "\n".join(problems[:SHOWN])
        more = f"\n... {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        pytest.fail(f"{len(problems)} of {total} {what}:\n{shown}{more}", pytrace=False)


def _typed_eq(a, b) -> bool:
    """Equality that tells True from 1 and 1 from 1.0, and dict key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_typed_eq(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_typed_eq(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _lines(text: str) -> list[str]:
    """Split on "\\n" only, keeping the endings (the library's notion of a line)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _block_lines(text: str, fm) -> list[str]:
    return _lines(text[fm.start : fm.end])


# ---------------------------------------------------------------------------
# Parsing


def test_every_note_parses_or_gives_a_located_error(corpus):
    problems = []
    counts = {"valid": 0, "invalid": 0, "none": 0}
    for note in corpus.notes:
        if note.text is None:
            problems.append(f"{note.path}: not decoded ({note.error})")
            continue
        try:
            fm = note.frontmatter
        except Exception as exc:  # noqa: BLE001 - the point is that nothing escapes
            problems.append(f"{note.path}: parse raised {type(exc).__name__}: {exc}")
            continue
        if fm is None:
            counts["none"] += 1
            continue
        if fm.error is None:
            counts["valid"] += 1
            assert isinstance(fm.properties, dict)
            continue
        counts["invalid"] += 1
        err = fm.error
        closing_line = note.text.count("\n", 0, fm.end) + 1  # file line of the closing ---
        if not isinstance(err, FrontmatterError):
            problems.append(f"{note.path}: error is {type(err).__name__}")
        elif fm.properties != {}:
            problems.append(f"{note.path}: invalid block but properties {fm.properties!r}")
        elif not (2 <= err.line < closing_line):
            block = f"lines 2..{closing_line - 1}"
            problems.append(f"{note.path}: error line {err.line} outside the block ({block}): {err}")
        else:
            line_text = note.text.split("\n")[err.line - 1].rstrip("\r")
            if not (1 <= err.column <= len(line_text) + 1):
                problems.append(f"{note.path}: error column {err.column} outside line {err.line} {line_text!r}: {err}")
            if not err.reason or str(err.line) not in str(err):
                problems.append(f"{note.path}: error message without reason/position: {err!s}")
    print(f"\n{corpus.name}: {counts}")
    _fail_if(problems, "notes do not parse cleanly", len(corpus.notes))
    # a corpus whose blocks all failed would make every other test vacuous
    assert counts["valid"] > 0


# ---------------------------------------------------------------------------
# Round trips


def test_bytes_round_trip(corpus):
    problems = []
    for note in corpus.notes:
        if note.text is None:
            problems.append(f"{note.path}: not decoded ({note.error})")
        elif note.encode(note.text) != note.data:
            problems.append(f"{note.path}: encode(text) differs from the file bytes")
        elif Note.from_bytes(note.path, note.data).encode(note.text) != note.data:
            problems.append(f"{note.path}: a fresh Note encodes differently")
    _fail_if(problems, "notes do not round-trip to their bytes", len(corpus.notes))


def test_setting_a_key_to_its_own_value_changes_nothing(corpus):
    problems = []
    checked = 0
    for note in corpus.valid():
        props = note.frontmatter.properties
        for key in props:
            checked += 1
            try:
                result = frontmatter.set_property(note.text, key, props[key])
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{note.path} [{key!r}]: raised {type(exc).__name__}: {exc}")
                continue
            if result != note.text:
                problems.append(f"{note.path} [{key!r}]: text changed (value {props[key]!r})")
    _fail_if(problems, "keys rewritten when set to their own value", checked)
    assert checked > 0


def _key_span(text: str, fm, key: str) -> tuple[int, int, int, int]:
    """(entry start line, end line, char offset of start, char offset of end) of ``key``."""
    entry = next(e for e in fm.entries if e.key == key)
    lines = _block_lines(text, fm)
    start = fm.start + sum(len(line) for line in lines[: entry.start])
    end = fm.start + sum(len(line) for line in lines[: entry.end])
    return entry.start, entry.end, start, end


def test_emitter_round_trip_through_a_change(corpus):
    """Set each key to a sentinel and back: typed values, key order and every
    byte outside the key's lines come back."""
    problems = []
    checked = 0
    for note in corpus.valid():
        text, fm = note.text, note.frontmatter
        props = fm.properties
        if props and not fm.entries:
            problems.append(f"{note.path}: block mapping without entries")
            continue
        for key in props:
            checked += 1
            where = f"{note.path} [{key!r}]"
            try:
                changed = frontmatter.set_property(text, key, SENTINEL)
                final = frontmatter.set_property(changed, key, props[key])
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{where}: raised {type(exc).__name__}: {exc}")
                continue
            mid = frontmatter.parse(changed)
            if mid is None or mid.error is not None or mid.properties.get(key) != SENTINEL:
                problems.append(f"{where}: the sentinel did not read back ({mid and mid.error})")
                continue
            again = frontmatter.parse(final)
            if again is None or again.error is not None:
                problems.append(f"{where}: re-emitted value {props[key]!r} does not parse: {again and again.error}")
                continue
            if not _typed_eq(again.properties, props):
                new = again.properties.get(key, "<missing>")
                if list(again.properties) != list(props):
                    problems.append(f"{where}: key order {list(props)} became {list(again.properties)}")
                else:
                    problems.append(f"{where}: value {props[key]!r} reads back as {new!r}")
                continue
            s0, e0, a0, b0 = _key_span(text, fm, key)
            s1, e1, a1, b1 = _key_span(final, again, key)
            if s0 != s1:
                problems.append(f"{where}: key moved from block line {s0} to {s1}")
            elif text[:a0] != final[:a1]:
                problems.append(f"{where}: bytes before the key's lines changed")
            elif text[b0:] != final[b1:]:
                problems.append(f"{where}: bytes after the key's lines changed")
    _fail_if(problems, "keys do not survive set(sentinel) + set(original)", checked)
    assert checked > 0


# ---------------------------------------------------------------------------
# A one-key edit


def test_adding_one_key_inserts_exactly_one_line(corpus):
    problems = []
    checked = 0
    for note in corpus.notes:
        if note.text is None:
            continue
        text, fm = note.text, note.frontmatter
        if fm is not None and (fm.error is not None or _is_flow_mapping(note)):
            continue  # never rewritten: invalid blocks, flow mappings (test below)
        assert fm is None or NEW_KEY not in fm.properties
        checked += 1
        try:
            new = frontmatter.set_property(text, NEW_KEY, "x")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{note.path}: raised {type(exc).__name__}: {exc}")
            continue
        if fm is None:
            first_line = text.split("\n", 1)[0]
            nl = "\r\n" if "\n" in text and first_line.endswith("\r") else "\n"
            expected_lines = [f"---{nl}", f"{NEW_KEY}: x{nl}", f"---{nl}"]
        else:
            expected_lines = [f"{NEW_KEY}: x{fm.newline}"]
        a, b = _lines(text), _lines(new)
        ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
        if len(ops) != 1 or ops[0][0] != "insert" or b[ops[0][3] : ops[0][4]] != expected_lines:
            problems.append(f"{note.path}: diff is {[(op, b[j1:j2]) for op, _, _, j1, j2 in ops][:3]}")
            continue
        at = sum(len(line) for line in a[: ops[0][1]])
        if fm is None and at != 0:
            problems.append(f"{note.path}: new block inserted at offset {at}, not before byte 0")
        if new != text[:at] + "".join(expected_lines) + text[at:]:
            problems.append(f"{note.path}: bytes outside the inserted line changed")
            continue
        reparsed = frontmatter.parse(new)
        old = fm.properties if fm is not None else {}
        if reparsed is None or reparsed.error is not None:
            problems.append(f"{note.path}: does not parse after the edit: {reparsed and reparsed.error}")
        elif not _typed_eq(reparsed.properties, {**old, NEW_KEY: "x"}):
            problems.append(f"{note.path}: properties after the edit {reparsed.properties!r}")
        else:
            via_note = Note.from_bytes(note.path, note.data).with_property(NEW_KEY, "x")
            if via_note != note.encode(new):
                problems.append(f"{note.path}: Note.with_property differs from set_property")
    _fail_if(problems, "one-key edits touched more than one line", checked)
    assert checked > 0


def test_uneditable_blocks_refuse_every_edit(corpus):
    """Invalid blocks and flow-mapping blocks (documented: set_property and
    delete_property raise FrontmatterError) are never rewritten."""
    problems = []
    unedited = [n for n in corpus.notes if n.frontmatter is not None and n.frontmatter.error is not None]
    unedited += corpus.flow()
    for note in unedited:
        key = next(iter(note.frontmatter.properties), "title")
        for edit, args in (
            (frontmatter.set_property, (note.text, NEW_KEY, "x")),
            (frontmatter.set_property, (note.text, key, "x")),
            (frontmatter.delete_property, (note.text, key)),
        ):
            try:
                result = edit(*args)
            except FrontmatterError:
                continue
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{note.path}: raised {type(exc).__name__}: {exc}")
            else:
                problems.append(f"{note.path}: edited although not editable (changed: {result != note.text})")
    for note in corpus.flow():
        if note.frontmatter.entries:
            problems.append(f"{note.path}: flow mapping with entries {note.frontmatter.entries}")
    print(f"\n{corpus.name}: {len(unedited)} unedited blocks ({len(corpus.flow())} flow mappings)")
    _fail_if(problems, "unedited notes", len(unedited))


# ---------------------------------------------------------------------------
# graph.py health on a copy


def _snapshot(root: Path) -> dict[str, bytes]:
    snap = {}
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".graph" or rel_folder.startswith(".graph" + os.sep):
            continue
        for name in files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            snap[rel] = path.readlink().as_posix().encode() if path.is_symlink() else path.read_bytes()
        for name in dirs:
            rel = (Path(folder) / name).relative_to(root).as_posix()
            if rel != ".graph":
                snap[rel + "/"] = b"<dir>"
    return snap


@dataclass
class HealthRun:
    copy: Path
    returncode: int
    stdout: str
    stderr: str
    before: dict[str, bytes]
    after: dict[str, bytes]


@pytest.fixture(scope="module")
def health_runs(fast_tmp_factory):
    runs: dict[str, HealthRun] = {}

    def run(name: str) -> HealthRun:
        if name not in runs:
            source = require(CORPORA / name)
            copy = copy_tree(source, fast_tmp_factory.mktemp("health") / name)
            before = _snapshot(copy)
            proc = subprocess.run(
                [sys.executable, str(SCRIPTS / "graph.py"), "health", str(copy), "--json"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            runs[name] = HealthRun(copy, proc.returncode, proc.stdout, proc.stderr, before, _snapshot(copy))
        return runs[name]

    return run


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_health_json_runs_and_writes_only_under_graph(name, health_runs):
    run = health_runs(name)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stderr[-3000:]}"
    report = json.loads(run.stdout)
    assert report["notes"] == len(_load(name).notes)
    changed = sorted(k for k in run.before.keys() | run.after.keys() if run.before.get(k) != run.after.get(k))
    assert not changed, f"files outside .graph/ changed: {changed[:SHOWN]}"
    history = (run.copy / ".graph" / "health-history.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(history) == 1, history
    entry = json.loads(history[0])
    assert entry["score"] == report["score"]


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_health_json_has_the_documented_keys(name, health_runs):
    run = health_runs(name)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    assert set(report) == HEALTH_KEYS
    assert set(report["penalties"]) == PENALTY_KEYS
    assert 0 <= report["score"] <= 100
    assert 0 <= report["description_coverage"] <= 1
    assert report["previous"] is None  # first run on a fresh copy
    assert report["index"]["parsed"] == report["notes"] and report["index"]["rebuilt"] == "new"
    assert report["resolved_links"] == report["links"] - len(report["broken_links"])
    for row in report["broken_links"]:
        assert set(row) == LINK_ROW_KEYS, row
    for row in report["ambiguous_links"]:
        assert set(row) == LINK_ROW_KEYS | {"resolved", "candidates"}, row
    for row in report["broken_anchors"]:
        assert set(row) == LINK_ROW_KEYS | {"resolved"}, row
    for row in report["invalid_frontmatter"]:
        assert set(row) == {"path", "line", "column", "error"}, row
    for row in report["unreadable"]:
        assert set(row) == {"path", "error"}, row
    # the invalid notes the report lists are exactly those whose block fails to parse here
    corpus = _load(name)
    expected_invalid = sorted(
        n.path for n in corpus.notes if n.frontmatter is not None and n.frontmatter.error is not None
    )
    assert sorted(row["path"] for row in report["invalid_frontmatter"]) == expected_invalid


# ---------------------------------------------------------------------------
# obsidian-hub: broken links follow Obsidian's rules


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).lower()


def _resolvable_note(
    target: str, source: str, note_paths: list[str], by_name: set[str], by_path: set[str]
) -> str | None:
    """Why an independent, Obsidian-style lookup finds a note for ``target``
    (compared case-insensitively after NFC), or None.

    A bare name matches any note with that file name, in any folder; a path
    matches a note whose path ends with it, or the path relative to the
    linking note's folder."""
    if not target:
        return None
    target = target.replace("\\", "/")
    names = {_fold(target)}
    if not _fold(target).endswith(".md"):
        names.add(_fold(target) + ".md")
    names = {n for n in names if n.endswith(".md")}
    if "/" not in target.strip("/"):
        hit = {posixpath.basename(n.strip("/")) for n in names} & by_name
        return f"note named {hit.pop()!r}" if hit else None
    folder = posixpath.dirname(source)
    for name in names:
        relative = posixpath.normpath(posixpath.join(_fold(folder), name)).lstrip("/")
        if relative in by_path:
            return f"relative path {relative!r}"
        tail = "/" + name.lstrip("/")
        for path in note_paths:
            if ("/" + path).endswith(tail):
                return f"path {path!r}"
    return None


def test_obsidian_hub_broken_links_are_really_broken(health_runs):
    name = "obsidian-hub"
    run = health_runs(name)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    assert set(report) == HEALTH_KEYS
    corpus = _load(name)
    note_paths = [_fold(n.path) for n in corpus.notes]
    by_name = {posixpath.basename(p) for p in note_paths}
    by_path = set(note_paths)
    # README: ~39k wikilinks in the raw text, about 20k of them in %% comments
    # and code; a link scan that found nothing would make this test vacuous
    assert report["links"] > 10_000
    problems = []
    for row in report["broken_links"]:
        target = row["target"].split("#", 1)[0]
        why = _resolvable_note(target, row["source"], note_paths, by_name, by_path)
        if why:
            problems.append(f"{row['source']}:{row['line']} [[{row['target']}]] ({row['kind']}) matches {why}")
    _fail_if(problems, "broken links name an existing note", len(report["broken_links"]))
