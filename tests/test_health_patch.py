"""A health report patched from the last one (issue 29: "1% changed
``health`` <= 1.5x the read floor"): after any edits, the patched report is
the report computed whole, and the patch is what answered.

The vault holds every cross-note case the patch must find again: anchors
into a note whose headings change, orphans that gain or lose their only
link, ambiguous names, an identity group whose cards are ranked by their
bodies, name variants, a daily note, a superseded card, frontmatter that
stops parsing, a note that stops being UTF-8."""

from __future__ import annotations

import datetime
import itertools
import json

import pytest
from autograph.graph import health, health_facts
from autograph.memory import daily, decay, quality
from autograph.read.note import Note
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from autograph.write import index_file
from autograph.write.index_file import note_index
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TODAY = datetime.date(2026, 12, 6)

BASE = {
    "index.md": "# Index\n[[n00]] [[n01#Alpha]] [[Ann Lee]]\n",
    "people/Ann Lee.md": "---\ntype: person\nemail: ann@example.com\ndescription: Ann\n---\n# Ann\nShort.\n",
    "people/Anne Lee.md": "---\ntype: person\nemail: ANN@Example.com\n---\n# Anne\nA longer body here.\n",
    "people/Bob Stone.md": "---\ntype: person\ndescription: Bob\n---\nBob.\n",
    "people/Robert Stone.md": "---\ntype: person\n---\nRobert.\n",
    "a/dup.md": "# Dup A\n",
    "b/dup.md": "# Dup B\n",
    "daily/2026-12-01.md": "---\ntype: daily\n---\n- met [[Ann Lee]]\n",
    "old.md": "---\nsuperseded_by: '[[n02]]'\nstatus: active\n---\nOld.\n",
    "broken.md": "---\ntitle: [unclosed\n---\nBody [[n03]]\n",
    "img.png": b"\x89PNG\r\n",
}
for i in range(12):
    BASE[f"notes/n{i:02}.md"] = (
        f"---\ndescription: note {i}\nlast_accessed: 2026-0{1 + i % 9}-01\naccess_count: {i % 3}\n---\n"
        f"# Alpha\n## Beta\nText ^blk{i}\n[[n{(i + 1) % 12:02}#Alpha]] [[n{(i + 5) % 12:02}#^blk{(i + 5) % 12}]]"
        f" [[dup]] [[missing {i}]]\n"
    )
_numbers = itertools.count()
NOTES = sorted(path for path in BASE if path.endswith(".md"))


def _edit(text: str, op: str, other: str) -> str | bytes:
    stem = other.rsplit("/", 1)[-1][:-3]
    if op == "append":
        return text + "\nA line more.\n"
    if op == "link":
        return text + f"\n[[{stem}]]\n"
    if op == "anchor":
        return text + f"\n[[{stem}#Alpha]] [[{stem}#Gone]] [[{stem}#^blk0]]\n"
    if op == "unlink":
        return text.replace("[[", "(")
    if op == "heading":
        return text.replace("# Alpha", "# Gamma").replace("^blk", "^other")
    if op == "describe":
        return text.replace("---\n", "---\ndescription: now\n", 1) if text.startswith("---\n") else text
    if op == "undescribe":
        return "\n".join(line for line in text.split("\n") if not line.startswith("description:"))
    if op == "break":
        return "---\nbad: [x\n---\n" + text
    if op == "mend":
        return text.replace("title: [unclosed", "title: mended").replace("bad: [x\n", "")
    if op == "email":
        return "---\ntype: person\nemail: ann@example.com\n---\n" + text
    if op == "noemail":
        return text.replace("email:", "mail:")
    if op == "bytes":
        return text.encode("utf-8") + b"\xff\xfe"
    if op == "supersede":
        return f"---\nsuperseded_by: '[[{stem}]]'\n---\n" + text
    if op == "hub":
        return "---\ntype: moc\n---\n" + text
    if op == "self":
        return text + "\n[[#Alpha]] [[#Nowhere]] [[#^blk1]]\n"
    if op == "surrogate":  # a property link whose text holds a lone surrogate (a YAML escape)
        return '---\nrelated: "[[\\ud800 x]]"\n---\n' + text
    if op == "accessed":
        return text.replace("last_accessed: 2026-0", "last_accessed: 2025-1")
    if op == "mark":  # daily.py mark: processed as the text is now (an edit after it makes it "changed")
        note = Note.from_bytes(other, text.encode("utf-8"))
        mark = daily.fingerprint(note)
        try:
            return text if mark is None else note.with_property(daily.KEY, mark).decode("utf-8")
        except ValueError:  # frontmatter that does not parse (FrontmatterError): not marked, as daily.py
            return text
    raise AssertionError(op)


OPS = (
    "append", "link", "anchor", "unlink", "heading", "describe", "undescribe", "break", "mend", "email",
    "noemail", "bytes", "supersede", "accessed", "hub", "self", "surrogate", "mark",
)  # fmt: skip
# the note an edit links to: often one of a few, so two edits of a round meet at one note
# the daily note more often than the rest: it is marked processed, then edited (its state moves with its text)
edit = st.tuples(
    st.sampled_from(NOTES + ["daily/2026-12-01.md"] * 5),
    st.sampled_from(OPS),
    st.sampled_from(["people/Bob Stone.md", "old.md"]) | st.sampled_from(NOTES),
)
edits = st.lists(edit, min_size=1, max_size=6)


def _patches(monkeypatch) -> list:
    """A list that gets an item for each report the patch answered (one
    that raised, and so was computed whole, counts none)."""
    calls: list = []
    real = health_facts.patch

    def spy(*args, **kwargs):
        found = real(*args, **kwargs)
        calls.append(args[3])
        return found

    monkeypatch.setattr(health_facts, "patch", spy)
    return calls


def _whole_sections(monkeypatch) -> list:
    """A list that gets an item each time a patch computes the memory
    section whole (:func:`quality.section`)."""
    calls: list = []
    real = quality.section

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(quality, "section", spy)
    return calls


def _report(root, today=TODAY) -> dict:
    vault = Vault.open(root)
    schema = load_schema(root)
    report = health.report_for(vault, schema, note_index(vault, schema), today=today)
    return json.loads(json.dumps(report))


def _whole(root, today=TODAY) -> dict:
    """The report computed from nothing: no index file, no stored report."""
    vault = Vault.open(root)
    schema = load_schema(root)
    return json.loads(json.dumps(health.health_report(vault, schema, today=today)))


def _apply(root, changes) -> None:
    for path, op, other in changes:
        target = root / path
        data = target.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace").replace("\ufffd", "")
        new = _edit(text, op, other)
        target.write_bytes(new if isinstance(new, bytes) else new.encode("utf-8"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(edits, min_size=1, max_size=3))
def test_a_patched_report_is_the_report_computed_whole(make_vault, monkeypatch, rounds):
    root = make_vault(BASE, name=f"vault{next(_numbers)}")  # one folder per example
    calls = _patches(monkeypatch)
    try:
        _report(root)  # whole: the base is stored
        for number, changes in enumerate(rounds):
            _apply(root, changes)
            patched = _report(root)
            assert patched == _whole(root)
            # patched, not computed whole, from the notes this round changed alone
            assert calls[number:] == [sorted({path for path, _, _ in changes}, key=str.encode)]
    finally:
        index_file.close_all()


def test_a_daily_note_edited_after_its_mark_is_patched_without_the_whole_section(make_vault, monkeypatch):
    """A daily note's body says whether it is processed (its mark is a hash
    of the body): an edit after ``daily.py mark`` makes it ``changed``.
    Only that note is asked again; the rest of the memory section, which
    reads properties and links, holds."""
    root = make_vault(BASE)
    path = "daily/2026-12-01.md"
    calls = _patches(monkeypatch)
    sections = _whole_sections(monkeypatch)
    try:
        first = _report(root)
        assert [item["state"] for item in first["memory"]["unprocessed_daily"]] == ["new"]
        _apply(root, [(path, "mark", path)])
        marked = _report(root)  # its properties moved: the section computed whole
        assert marked == _whole(root) and marked["memory"]["unprocessed_daily"] == []
        sections.clear()
        _apply(root, [(path, "append", path)])
        edited = _report(root)
        assert edited == _whole(root)
        assert [item["state"] for item in edited["memory"]["unprocessed_daily"]] == ["changed"]
        assert calls[-1] == [path] and sections == []  # patched, and the section only patched
    finally:
        index_file.close_all()


@pytest.mark.parametrize(
    ("path", "link", "whole"),
    [
        ("notes/n05.md", "n07", False),  # no finding reads where n05 links
        ("notes/n05.md", "Anne Lee", True),  # an identity group's cards are ranked by the notes linking to them
        ("people/Robert Stone.md", "n07", True),  # a name pair is suggested on links to the same notes
    ],
)
def test_a_link_moves_the_memory_section_only_where_a_finding_reads_it(make_vault, monkeypatch, path, link, whole):
    root = make_vault(BASE)
    calls = _patches(monkeypatch)
    sections = _whole_sections(monkeypatch)
    try:
        _report(root)
        with open(root / path, "a", encoding="utf-8") as note:
            note.write(f"\n[[{link}]]\n")
        patched = _report(root)
        assert patched == _whole(root)
        assert calls == [[path]] and sections == ([1] if whole else [])
    finally:
        index_file.close_all()


def test_where_links_lead_counts_the_same_resolved_now_or_read_back(make_vault, monkeypatch):
    """A file that comes makes the links of its name resolved again: the
    report computed whole then reads those notes' links resolved now, a
    later patch reads them back from the index file.  A card of a name pair
    (its links count in the memory section) edited in its text alone must
    patch the section, not compute it whole."""
    path = "people/Robert Stone.md"
    root = make_vault({**BASE, path: "---\ntype: person\n---\nRobert. [[plan.pdf]] [[n07]]\n"})
    calls = _patches(monkeypatch)
    sections = _whole_sections(monkeypatch)
    try:
        _report(root)
        (root / "plan.pdf").write_bytes(b"%PDF")  # the link now leads somewhere: resolved again
        _report(root)
        sections.clear()
        _apply(root, [(path, "append", path)])
        patched = _report(root)
        assert patched == _whole(root)
        assert calls[-1] == [path] and sections == []
    finally:
        index_file.close_all()


def test_a_body_edit_of_a_ranked_card_reorders_its_group(make_vault):
    """An identity group's cards rank by their bodies' length among other
    things (dedup): a body edit alone must not keep the old memory section."""
    card = "---\ntype: person\nemail: {}\n---\n{}\n"
    root = make_vault(
        {
            "people/Ann Lee.md": card.format("ann@example.com", "Short."),
            "people/Anne Lee.md": card.format("ANN@Example.com", "A longer body here."),
            "other.md": "# Other\n",
        }
    )
    try:
        first = _report(root)
        assert _identity_groups(first) == [["people/Anne Lee.md", "people/Ann Lee.md"]]  # the longer body first
        (root / "people/Ann Lee.md").write_text(card.format("ann@example.com", "Much longer now. " * 5), "utf-8")
        second = _report(root)
        assert second == _whole(root)
        assert _identity_groups(second) == [["people/Ann Lee.md", "people/Anne Lee.md"]]
    finally:
        index_file.close_all()


def _identity_groups(report: dict) -> list[list[str]]:
    return [item["cards"] for item in report["memory"]["probable_duplicates"] if item["by"] == "identity"]


def test_a_new_day_or_a_new_note_computes_the_report_whole(make_vault, monkeypatch):
    root = make_vault(BASE)
    calls = _patches(monkeypatch)
    try:
        _report(root)
        (root / "notes/new.md").write_text("# New\n[[n00]]\n", encoding="utf-8")
        assert _report(root) == _whole(root)
        assert calls == []  # the file list is in the base's context
        (root / "notes/n00.md").write_text("# Changed\n", encoding="utf-8")
        assert _report(root) == _whole(root)
        assert calls == [["notes/n00.md"]]
        (root / "notes/n01.md").write_text("# Changed\n", encoding="utf-8")
        tomorrow = TODAY + datetime.timedelta(days=1)
        assert _report(root, tomorrow) == _whole(root, tomorrow)
        assert len(calls) == 1  # the day is in the context: the stale share moves with it
    finally:
        index_file.close_all()


tiers = st.sampled_from([None, *decay.TIERS])
parts = st.lists(
    st.tuples(
        st.booleans(),
        st.booleans(),
        st.booleans(),
        tiers,
        st.sampled_from(["undated", "not-a-date", "unreadable"]),
        st.integers(0, 10_000),
        st.sampled_from(["person", "(no type)", "idea"]),
    ),
    max_size=12,
)


@given(kept=parts, gone=parts)
def test_a_tally_less_the_parts_taken_out_is_the_tally_of_the_rest(kept, gone, tmp_path_factory):
    settings_ = decay.Settings.of(load_schema(tmp_path_factory.mktemp("schema")))
    whole, rest = decay.StatsTally(settings_), decay.StatsTally(settings_)
    for part in kept + gone:
        whole.count(list(part))
    for part in kept:
        rest.count(list(part))
    again = decay.StatsTally.load(settings_, json.loads(json.dumps(whole.dump())))
    for part in gone:
        again.count(list(part), -1)
    assert again.result() == rest.result()


def test_two_notes_that_link_to_an_orphan_in_one_round(make_vault, monkeypatch):
    """Two changed notes that each add (then each drop) a link to the same
    orphan: it stops being one, then is one again."""
    root = make_vault(BASE)
    calls = _patches(monkeypatch)
    try:
        assert "old.md" in _report(root)["orphans"]
        _apply(root, [("notes/n00.md", "link", "old.md"), ("notes/n01.md", "link", "old.md")])
        linked = _report(root)
        assert "old.md" not in linked["orphans"] and linked == _whole(root)
        _apply(root, [("notes/n00.md", "unlink", "old.md"), ("notes/n01.md", "unlink", "old.md")])
        dropped = _report(root)
        assert "old.md" in dropped["orphans"] and dropped == _whole(root)
        assert len(calls) == 2
    finally:
        index_file.close_all()


def test_a_note_read_within_a_clock_tick_twice_is_taken_again(make_vault, monkeypatch):
    """On a file system that keeps whole seconds every read right after a
    change is racy: the note is stored under the unknown stamp both times,
    and must still be taken again (the report is never reused while one is)."""
    from autograph.write import index_update

    monkeypatch.setattr(index_update, "racy", lambda *args, **kwargs: True)
    root = make_vault(BASE)
    try:
        _report(root)
        _apply(root, [("notes/n00.md", "unlink", "old.md")])
        assert _report(root) == _whole(root)
        _apply(root, [("notes/n01.md", "link", "old.md")])
        assert _report(root) == _whole(root)
        assert _report(root) == _whole(root)  # nothing changed since, but the stamps cannot tell
    finally:
        index_file.close_all()


def test_a_base_another_run_stored_meanwhile_is_not_patched_over(make_vault):
    """A run that patched from one base stores nothing when another run
    (of another day, another schema) stored its own base meanwhile: the
    facts of the notes it did not change are that run's."""
    import sqlite3

    from autograph.write import report_base

    root = make_vault(BASE)
    try:
        _report(root)
        con = sqlite3.connect(root / ".graph" / "index.sqlite", isolation_level=None)
        held = report_base.load_base(con)
        (stamps,) = con.execute("SELECT value FROM meta WHERE key = 'stamps'").fetchone()
        base = report_base.Base("another context", "another key", stamps, held.state)
        assert not report_base.save_base(con, base, [("index.md", "[]")], False, stamps, ([0], "not the stored key"))
        kept = report_base.load_base(con)
        assert (kept.context, kept.report_key) == (held.context, held.report_key)
        assert report_base.facts_of(con, ["index.md"])["index.md"] != []
        con.close()
    finally:
        index_file.close_all()


def test_a_damaged_facts_row_computes_the_report_whole(make_vault):
    import sqlite3

    root = make_vault(BASE)
    try:
        _report(root)
        con = sqlite3.connect(root / ".graph" / "index.sqlite", isolation_level=None)
        con.execute("UPDATE health_facts SET facts = ? WHERE path = 'notes/n00.md'", ("[" * 100_000 + "]" * 100_000,))
        con.close()
        _apply(root, [("notes/n00.md", "append", "old.md")])
        assert _report(root) == _whole(root)
    finally:
        index_file.close_all()
