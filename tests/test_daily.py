"""daily.py: candidates for cards from daily notes, and the processed mark.

Done when: extracting twice from the same notes gives the same candidates,
``mark`` makes the third run skip them, and a hand edit after ``mark`` makes
the note seen again.
"""

from __future__ import annotations

import datetime as dt
import json
import sys

import pytest
from conftest import SCRIPTS
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

import daily as daily_script  # noqa: E402
from autograph.memory import daily  # noqa: E402
from autograph.read.note import Note  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.schema.model import load_schema  # noqa: E402

DAY = """\
---
type: daily
---
# Tuesday

Met **Ada Lovelace** and **Note:** about [[Acme Corp]] and [[Bob]].
Mail Ada@Example.com, ping @ada_l, call +44 20 7946 0958.
Next call 2026-12-08, not 2026-13-45, and today is 2026-12-01.

- [ ] send the deck to Ada
- [x] a finished task

```
**Not A Name** hidden@code.org @hidden [[Nope]] - [ ] no task 2026-01-01
```
Inline `**Code Name** x@y.io` and %% **Comment Name** [[Gone]] %% and <!-- @html -->.
"""


class Runner:
    """daily.py in this process (a subprocess per call costs more than the test)."""

    def __init__(self, capsys):
        self.capsys = capsys

    def __call__(self, *argv):
        code = daily_script.main(list(argv))
        out = self.capsys.readouterr()
        return code, out.out, out.err


@pytest.fixture
def run(capsys):
    return Runner(capsys)


@pytest.fixture
def run_json(run):
    def call(*argv):
        code, out, err = run(*argv, "--json")
        assert code in (0, 1), err
        return code, json.loads(out)

    return call


@pytest.fixture
def vault(make_vault):
    return make_vault({"daily/2026-12-01.md": DAY, "people/Bob.md": "---\ntype: person\n---\nBob\n"})


def values(entry, kind):
    return [item["value"] for item in entry["candidates"][kind]]


def test_extract_finds_each_kind_outside_code(vault, run_json):
    _, out = run_json("extract", str(vault))
    [entry] = out["notes"]
    assert entry["path"] == "daily/2026-12-01.md" and entry["date"] == "2026-12-01" and entry["status"] == "new"
    assert values(entry, "names") == ["Ada Lovelace"]
    assert values(entry, "missing_links") == ["Acme Corp"]  # Bob exists
    assert entry["candidates"]["emails"][0]["normalised"] == "ada@example.com"
    assert values(entry, "handles") == ["@ada_l"]
    assert entry["candidates"]["phones"][0]["normalised"] == "+442079460958"
    assert values(entry, "dates") == ["2026-12-08"]
    assert values(entry, "tasks") == ["send the deck to Ada"]
    assert entry["candidates"]["tasks"][0]["line"] == 10
    text = json.dumps(entry["candidates"])
    for hidden in (
        "Not A Name",
        "hidden@code.org",
        "@hidden",
        "Nope",
        "no task",
        "2026-01-01",
        "Code Name",
        "x@y.io",
        "Comment Name",
        "Gone",
        "@html",
    ):
        assert hidden not in text, hidden


def test_extract_twice_same_then_mark_skips_then_hand_edit_is_seen(vault, run_json):
    _, first = run_json("extract", str(vault))
    written = (vault / ".graph/daily/2026-12-01.json").read_bytes()
    _, second = run_json("extract", str(vault))
    assert first["notes"] == second["notes"]
    assert (vault / ".graph/daily/2026-12-01.json").read_bytes() == written
    note = vault / "daily/2026-12-01.md"
    before = note.read_bytes()
    code, marked = run_json("mark", str(vault), "--date", "2026-12-01")
    assert code == 0 and marked["written"] == ["daily/2026-12-01.md"] and marked["run"]
    after = note.read_bytes()
    # surgical: exactly one new frontmatter line
    added = after.decode().split("\n")[2]
    assert added == f"{daily.KEY}: {first['notes'][0]['hash']}"
    assert after.replace((added + "\n").encode(), b"", 1) == before
    _, third = run_json("extract", str(vault))
    assert third["notes"] == []
    # mark again: nothing to do
    code, again = run_json("mark", str(vault), "--date", "2026-12-01")
    assert again["edits"] == [] and again["left"][0]["reason"] == "already marked processed"
    note.write_bytes(after + b"\nLunch with **Grace Hopper**.\n")
    _, fourth = run_json("extract", str(vault))
    [entry] = fourth["notes"]
    assert entry["status"] == "changed"
    assert values(entry, "names") == ["Ada Lovelace", "Grace Hopper"]
    # --date and --all show a processed note too
    run_json("mark", str(vault), "--date", "2026-12-01")
    _, by_date = run_json("extract", str(vault), "--date", "2026-12-01")
    assert [n["status"] for n in by_date["notes"]] == ["processed"]
    _, every = run_json("extract", str(vault), "--all")
    assert [n["status"] for n in every["notes"]] == ["processed"]


def test_decay_fields_do_not_count_as_an_edit(vault, run_json):
    run_json("mark", str(vault), "--date", "2026-12-01")
    note = vault / "daily/2026-12-01.md"
    text = note.read_text()
    note.write_text(text.replace("type: daily\n", "type: daily\ntier: warm\naccess_count: 3\n"))
    _, out = run_json("extract", str(vault))
    assert out["notes"] == []


def test_mark_keeps_crlf_and_bom_and_hash_guard(make_vault, run_json):
    text = DAY.replace("\n", "\r\n")
    root = make_vault({"daily/2026-12-01.md": b"\xef\xbb\xbf" + text.encode()})
    note = root / "daily/2026-12-01.md"
    before = note.read_bytes()
    code, out = run_json("mark", str(root), "--date", "2026-12-01", "--hash", "sha256:" + "0" * 64)
    assert out["edits"] == [] and "changed since" in out["left"][0]["reason"]
    assert note.read_bytes() == before
    _, extracted = run_json("extract", str(root), "--dry-run")
    digest = extracted["notes"][0]["hash"]
    assert not (root / ".graph" / "daily").exists()  # --dry-run writes nothing
    run_json("mark", str(root), "--date", "2026-12-01", "--hash", digest)
    after = note.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf---\r\ntype: daily\r\n" + daily.KEY.encode())
    assert after.count(b"\n") == after.count(b"\r\n")
    _, out = run_json("extract", str(root))
    assert out["notes"] == []


def test_mark_dry_run_and_missing_date(vault, run, run_json):
    note = vault / "daily/2026-12-01.md"
    before = note.read_bytes()
    code, out = run_json("mark", str(vault), "--date", "2026-12-01", "--dry-run")
    assert code == 0 and out["edits"] and out["written"] == [] and note.read_bytes() == before
    code, out = run_json("mark", str(vault), "--date", "2026-11-30")
    assert code == 1 and out["notes"] == []
    with pytest.raises(SystemExit) as exit_:
        run("mark", str(vault), "--date", "2026-02-30")
    assert exit_.value.code == 2 and "YYYY-MM-DD" in run.capsys.readouterr().err


def test_invalid_frontmatter_is_reported_never_marked(make_vault, run_json):
    root = make_vault({"2026-12-02.md": "---\ntype: [daily\n---\n**Ada Lovelace**\n"})
    before = (root / "2026-12-02.md").read_bytes()
    _, out = run_json("extract", str(root))
    assert out["notes"] == [] and out["skipped"][0]["path"] == "2026-12-02.md"
    _, marked = run_json("mark", str(root), "--date", "2026-12-02")
    assert marked["edits"] == [] and marked["left"]
    assert (root / "2026-12-02.md").read_bytes() == before


def test_which_notes_are_daily(make_vault):
    root = make_vault(
        {
            ".obsidian/daily-notes.json": json.dumps({"folder": "Journal/", "format": "YYYY/MM/DD ddd"}),
            ".obsidian/templates.json": json.dumps({"folder": "Templates"}),
            "Journal/2026/12/01 Tue.md": "plain\n",
            "Journal/2026/12/notes.md": "not a date\n",
            "2026-12-03.md": "at the root, but the plugin's folder is Journal\n",
            "log/whatever.md": "---\ntype: Daily\ndate: 2026-12-04\n---\n",
            "log/undated.md": "---\ntype: daily\n---\n",
            "days/Friday 2026-12-05.md": "by the schema's folder\n",
            "logs/daily/2026-12-07.md": "by a path_type_hints folder\n",
            "Templates/2026-12-06.md": "---\ntype: daily\ndate: 2026-12-06\n---\n",
            "schema.json": json.dumps(
                {"node_types": {"daily": {"folder": "days"}, "note": {}}, "path_type_hints": {"logs/daily": "daily"}}
            ),
        }
    )
    found, skipped = daily.daily_notes(Vault.open(root), load_schema(root))
    assert [(n.path, n.date, n.by) for n in found] == [
        ("Journal/2026/12/01 Tue.md", "2026-12-01", "daily notes"),
        ("days/Friday 2026-12-05.md", "2026-12-05", "schema folder"),
        ("log/whatever.md", "2026-12-04", "type"),
        ("logs/daily/2026-12-07.md", "2026-12-07", "schema folder"),
    ]
    assert [s["path"] for s in skipped] == ["log/undated.md"]


@pytest.mark.parametrize(
    "form, name, date",
    [
        ("YYYY-MM-DD", "2026-12-01", "2026-12-01"),
        ("DD.MM.YYYY", "01.12.2026", "2026-12-01"),
        ("dddd, MMMM Do YYYY", "Tuesday, December 1st 2026", "2026-12-01"),
        ("[Daily] YY-M-D", "Daily 26-2-9", "2026-02-09"),
        ("YYYY-[W]ww-DDDD", "2026-W49-335", "2026-12-01"),
        ("YYYY-MM-DD", "2026-02-30", None),
    ],
)
def test_moment_formats(form, name, date):
    match = daily.moment_pattern(form).fullmatch(name)
    assert (daily._date_of(match) if match else None) == date


@settings(max_examples=60, deadline=None)
@given(
    st.dates(dt.date(1900, 1, 1), dt.date(2199, 12, 31)), st.sampled_from(["YYYY-MM-DD", "DD.MM.YYYY", "YYYY/MM/DD"])
)
def test_moment_round_trip(day, form):
    name = form.replace("YYYY", f"{day.year:04d}").replace("MM", f"{day.month:02d}").replace("DD", f"{day.day:02d}")
    assert daily._date_of(daily.moment_pattern(form).fullmatch(name)) == day.isoformat()


def test_phone_uses_default_country_and_rejects_dates_and_ids(make_vault):
    root = make_vault(
        {
            "2026-12-01.md": "call 030 1234567 or (030) 123-4567\n"
            "not 12.05.2026 nor 2026-12-01 nor 10:30 nor 1234567890123\n",
            "schema.json": json.dumps({"identity": {"default_country": "DE"}}),
        }
    )
    vault = Vault.open(root)
    note = vault.note("2026-12-01.md")
    found = daily.extract(note, vault.resolver, load_schema(root))
    assert [p["normalised"] for p in found["phones"]] == ["+49301234567"]
    assert found["phones"][0]["count"] == 2


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab *_[]@.-+0123456789`\n#%<>!:A")), max_size=120))
def test_fingerprint_ignores_only_its_key(body):
    text = ("---\ntype: daily\n---\n" if len(body) % 2 else "") + body
    note = Note.from_bytes("d.md", text.encode())
    mark = daily.fingerprint(note)
    marked = Note.from_bytes("d.md", note.with_property(daily.KEY, mark))
    assert daily.state(marked) == "processed"
    assert daily.fingerprint(marked) == mark
    edited = Note.from_bytes("d.md", marked.data + b"x")
    assert daily.state(edited) == "changed"
    # extraction is deterministic and never raises on odd text
    resolver = Vault(root=None, files=["d.md"]).resolver
    schema = load_schema(None)
    assert daily.extract(note, resolver, schema) == daily.extract(note, resolver, schema)


def test_tasks_demo_corpus_twice_same_then_marked_skipped(tmp_path, run_json):
    from conftest import CORPORA, copy_tree, require

    root = copy_tree(require(CORPORA / "tasks-demo"), tmp_path / "tasks-demo")
    _, first = run_json("extract", str(root))
    assert [n["path"] for n in first["notes"]] == [f"Daily Notes/2025-06-{d}.md" for d in (17, 18, 19, 20)]
    assert first["settings"]["source"] == "obsidian" and first["settings"]["folder"] == "Daily Notes"
    _, second = run_json("extract", str(root))
    assert second["notes"] == first["notes"]
    for entry in first["notes"]:
        before = (root / entry["path"]).read_bytes()
        _, marked = run_json("mark", str(root), "--date", entry["date"], "--hash", entry["hash"])
        assert marked["written"] == [entry["path"]]
        after = (root / entry["path"]).read_bytes()
        line = f"{daily.KEY}: {entry['hash']}\n".encode()
        assert after == b"---\n" + line + b"---\n" + before  # these notes have no frontmatter
    _, third = run_json("extract", str(root))
    assert third["notes"] == []
