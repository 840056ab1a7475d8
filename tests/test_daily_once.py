"""Daily notes processed once (issue 26), and the links to cards they record.

Done when: a daily note marked processed stays processed when only autograph
changed it since (``graph.py fix``, ``graph.py mv``, ``dedup.py --apply``,
``enforce.py --apply`` and ``--move``, run for real on a vault built here),
a person's edit of its text makes it ``changed`` again, a mark written in the
first form of the hash still counts, and ``daily.py extract`` lists the
links to existing cards under ``linked[{path, type, line, context, with}]``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import SCRIPTS
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

import daily as daily_script  # noqa: E402
from autograph.memory import daily  # noqa: E402
from autograph.read import frontmatter  # noqa: E402
from autograph.read.links import Resolver  # noqa: E402
from autograph.read.note import Note  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.schema.model import load_schema  # noqa: E402
from autograph.write.relink import link_spans, retarget_text  # noqa: E402

DAY = "daily/2026-12-01.md"
DATE = "2026-12-01"

SCHEMA = {
    "node_types": {
        "person": {"folder": "people"},
        "contact": {"folder": "contacts"},
        "project": {"folder": "projects"},
        "daily": {"folder": "daily", "required": ["tags"], "defaults": {"tags": ["journal"]}},
    },
    "type_aliases": {"Journal": "daily", "human": "person"},
}

NOTE = """\
---
type: Journal
---
# Tuesday

Met [[Old Name]] and [[people/Old Name|Old]] about [[A. Example]] (see [[A. Example#Work]]).
[[contacts/bob|Bob]] on [[projects/alpha]]; also [[wrong/alpha]] and [[Oldie]].
Markdown [the card](../people/Old%20Name.md) and ![[Old Name#Photo]].
`[[Old Name]] in code` %% [[projects/alpha]] %%
"""


def files() -> dict[str, str]:
    return {
        "schema.json": json.dumps(SCHEMA),
        DAY: NOTE,
        "people/Old Name.md": "---\ntype: person\naliases: [Oldie]\n---\n# Photo\n",
        "people/Alex Example.md": "---\ntype: person\nemail: alex@example.com\n---\nNotes about Alex.\n",
        "people/A. Example.md": '---\ntype: contact\nemail: " ALEX@example.com "\n---\n# Work\nImported.\n',
        "team.md": "Owner: [[Alex Example]].\n",
        "lead.md": "Lead: [[Alex Example]].\n",
        "contacts/bob.md": "---\ntype: human\n---\nBob\n",
        "projects/alpha.md": "---\ntype: project\n---\nAlpha\n",
    }


class Runner:
    """daily.py in this process; the writers as the person runs them."""

    def __init__(self, capsys):
        self.capsys = capsys

    def daily(self, *argv) -> tuple[int, dict]:
        self.capsys.readouterr()
        code = daily_script.main([*map(str, argv), "--json"])
        out = self.capsys.readouterr().out
        assert code in (0, 1), out
        return code, json.loads(out)

    def listed(self, root) -> list[tuple[str, str]]:
        """``(path, status)`` of the notes a default extract lists."""
        _, out = self.daily("extract", root, "--dry-run")
        return [(n["path"], n["status"]) for n in out["notes"]]

    def status(self, root, path: str = DAY) -> str:
        _, out = self.daily("extract", root, "--all", "--dry-run")
        return next(n["status"] for n in out["notes"] if n["path"] == path)

    def mark(self, root, date: str = DATE) -> dict:
        code, out = self.daily("mark", root, "--date", date)
        assert code == 0 and out["failed"] == [] and out["conflicts"] == [], out
        return out

    @staticmethod
    def script(name: str, *argv) -> dict:
        proc = subprocess.run(
            [sys.executable, str(SCRIPTS / name), *map(str, argv), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        return json.loads(proc.stdout)


@pytest.fixture
def run(capsys):
    return Runner(capsys)


@pytest.fixture
def vault(make_vault, run):
    root = make_vault(files())
    assert run.listed(root) == [(DAY, "new")]
    run.mark(root)
    assert run.listed(root) == []
    return root


def body(root, path: str = DAY) -> str:
    text = (root / path).read_text()
    return text[text.index("# Tuesday") :]


def hand_edit(root, old: str, new: str, path: str = DAY) -> None:
    note = root / path
    text = note.read_text()
    assert old in text
    note.write_text(text.replace(old, new, 1))


# ---------------------------------------------------------------------------
# Each writer, for real


def test_graph_fix_keeps_a_marked_note_processed(vault, run):
    out = run.script("graph.py", "fix", vault, "--apply")
    assert out["written"] == [DAY]
    assert "also [[projects/alpha]] and [[Old Name|Oldie]]." in body(vault)  # path repaired, alias kept as text
    assert run.listed(vault) == []
    assert run.status(vault) == "processed"
    hand_edit(vault, "Met", "Saw")
    assert run.listed(vault) == [(DAY, "changed")]


def test_graph_mv_keeps_a_marked_note_processed(vault, run):
    out = run.script("graph.py", "mv", vault, "people/Old Name.md", "people/New Name.md", "--apply")
    assert DAY in out["written"]
    text = body(vault)
    for new in (
        "[[New Name]]",
        "[[people/New Name|Old]]",
        "[the card](../people/New%20Name.md)",
        "![[New Name#Photo]]",
        "`[[Old Name]] in code`",  # code is not a link: never rewritten
    ):
        assert new in text, new
    assert run.listed(vault) == []
    # a path with an alias, moved to another folder and renamed
    run.script("graph.py", "mv", vault, "contacts/bob.md", "people/Robert.md", "--apply")
    assert "[[people/Robert|Bob]] on [[projects/alpha]]" in body(vault)
    assert run.listed(vault) == []
    hand_edit(vault, "[[New Name]] and", "[[New Name]], [[contacts/bob]] and")  # a link added
    assert run.listed(vault) == [(DAY, "changed")]


def test_dedup_apply_keeps_a_marked_note_processed(vault, run):
    out = run.script("dedup.py", vault, "--apply")
    assert DAY in out["written"], out
    text = body(vault)
    assert "about [[Alex Example|A. Example]] (see [[Alex Example#Work|A. Example > Work]])." in text
    assert run.listed(vault) == []
    assert run.status(vault) == "processed"
    hand_edit(vault, "(see ", "(read ")
    assert run.listed(vault) == [(DAY, "changed")]


def test_enforce_frontmatter_fixes_keep_a_marked_note_processed(vault, run):
    before = (vault / DAY).read_text()
    out = run.script("enforce.py", vault, "--apply")
    assert DAY in out["written"], out
    after = (vault / DAY).read_text()
    assert "type: daily\n" in after and "  - journal\n" in after and after != before
    assert run.listed(vault) == []
    assert run.status(vault) == "processed"
    hand_edit(vault, "# Tuesday", "# Wednesday")
    assert run.listed(vault) == [(DAY, "changed")]


def test_enforce_move_keeps_a_marked_note_processed(make_vault, run):
    root = make_vault(
        {
            "schema.json": json.dumps(SCHEMA),
            "inbox/day one.md": "---\ntype: daily\ndate: 2026-12-02\ntags: [journal]\n---\nMet [[Ada]].\n",
            "Ada.md": "Ada\n",
        }
    )
    run.mark(root, "2026-12-02")
    assert run.listed(root) == []
    out = run.script("enforce.py", root, "--move", "--apply")
    assert (root / "daily/day one.md").exists() and out["written"], out
    assert run.listed(root) == []
    hand_edit(root, "Met", "Called", "daily/day one.md")
    assert run.listed(root) == [("daily/day one.md", "changed")]


def test_every_writer_in_turn_then_each_kind_of_hand_edit(vault, run):
    run.script("graph.py", "fix", vault, "--apply")
    run.script("graph.py", "mv", vault, "people/Old Name.md", "people/Renamed.md", "--apply")
    run.script("dedup.py", vault, "--apply")
    run.script("enforce.py", vault, "--apply")
    run.script("graph.py", "mv", vault, "contacts/bob.md", "people/Robert.md", "--apply")
    text = body(vault)
    assert "[[people/Robert|Bob]]" in text and "[[Renamed|Oldie]]" in text and "[[Alex Example|A. Example]]" in text
    assert run.listed(vault) == []
    pristine = (vault / DAY).read_bytes()
    for old, new in (
        ("Met", "Met "),  # a space
        ("Met", "met"),  # letter case
        ("(see [[Alex Example#Work|A. Example > Work]])", ""),  # a link removed
        ("#Work|", "#Home|"),  # a link's heading
        ("[the card]", "[a card]"),  # a Markdown link's label
        ("![[Renamed#Photo]]", "[[Renamed#Photo]]"),  # an embed made a link
        ("`[[Old Name]] in code`", "`[[New Name]] in code`"),  # text inside code
        ("# Tuesday\n", "# Tuesday\n\n- [ ] call Bob\n"),  # a line
    ):
        hand_edit(vault, old, new)
        assert run.listed(vault) == [(DAY, "changed")], (old, new)
        (vault / DAY).write_bytes(pristine)
        assert run.listed(vault) == []


def test_only_the_frontmatter_edited_by_a_person_stays_processed(vault, run):
    """The frontmatter is not in the hash: nothing is extracted from it, and
    it is where autograph maintains fields (decay, enforce, the mark)."""
    hand_edit(vault, "type: Journal\n", "type: Journal\nmood: fine\ntier: warm\n")
    assert run.listed(vault) == []


def test_crlf_line_ends_read_as_lf(vault, run):
    note = vault / DAY
    note.write_bytes(note.read_bytes().replace(b"\n", b"\r\n"))
    assert run.listed(vault) == []


# ---------------------------------------------------------------------------
# Marks of the first form


def old_mark(root, path: str = DAY) -> str:
    """Mark the note as ``daily.py mark`` did before the hash changed."""
    note = Note.from_bytes(path, (root / path).read_bytes())
    mark = daily.legacy_fingerprint(note)
    (root / path).write_bytes(note.with_property(daily.KEY, mark))
    return mark


def test_a_mark_of_the_first_form_still_counts(make_vault, run):
    root = make_vault(files())
    mark = old_mark(root)
    assert mark != daily.fingerprint(Note.from_bytes(DAY, (root / DAY).read_bytes()))
    assert run.listed(root) == []
    assert run.status(root) == "processed"
    out = run.mark(root)
    assert out["edits"] == [] and out["left"][0]["reason"] == "already marked processed"
    assert f"{daily.KEY}: {mark}\n" in (root / DAY).read_text()  # left as it is
    hand_edit(root, "type: Journal\n", "type: Journal\ntier: warm\nlast_accessed: 2026-12-03\n")  # decay
    assert run.listed(root) == []
    hand_edit(root, "Met", "Saw")
    assert run.listed(root) == [(DAY, "changed")]
    # marked again: the new form
    _, out = run.daily("extract", root, "--dry-run")
    new = out["notes"][0]["hash"]
    run.daily("mark", root, "--date", DATE, "--hash", new)
    assert f"{daily.KEY}: {new}\n" in (root / DAY).read_text()
    assert run.listed(root) == []


def test_hash_of_either_form_is_taken_by_mark(make_vault, run):
    root = make_vault(files())
    note = Note.from_bytes(DAY, (root / DAY).read_bytes())
    legacy = daily.legacy_fingerprint(note)
    code, out = run.daily("mark", root, "--date", DATE, "--hash", legacy)
    assert out["written"] == [DAY]
    assert f"{daily.KEY}: {daily.fingerprint(note)}\n" in (root / DAY).read_text()  # always the new form
    code, out = run.daily("mark", root, "--date", DATE, "--hash", "sha256:" + "0" * 64)
    assert out["left"][0]["reason"] == "already marked processed"


def test_unreadable_stays_unreadable():
    note = Note.from_bytes("d.md", b"---\ntype: [daily\n---\nbody\n")
    assert daily.fingerprint(note) is None and daily.legacy_fingerprint(note) is None
    assert daily.state(note) == "unreadable"
    assert daily.state(Note("d.md", b"\xff", None, False, "not UTF-8")) == "unreadable"


# ---------------------------------------------------------------------------
# Rules in general


NAMES = ["Ada", "Bob Smith", "people/Carl", "projects/Alpha", "Déjà vu", "x/y/Zed", "img.png"]
NEW_NAMES = ["Ada Lovelace", "people/Bob", "archive/Carl", "Alpha 2", "work/projects/Alpha", "Zed Two"]
WORDS = st.text(alphabet=st.sampled_from(list("ab Z.,:-*_#@`$%\n")), max_size=12)


@st.composite
def link_text(draw, names=NAMES) -> str:
    name = draw(st.sampled_from(names))
    written = draw(st.sampled_from([name, name.rsplit("/", 1)[-1], name + ".md" if "." not in name else name]))
    fragment = draw(st.sampled_from(["", "#Work", "#^b1", "#A#B"]))
    if draw(st.booleans()) and not name.endswith(".png"):
        label = draw(st.sampled_from(["the card", "Bob", ""]))
        dest = written.replace(" ", "%20")
        dest = dest if dest.endswith(".md") else dest + ".md"
        return f"[{label}]({dest}{fragment})"
    alias = draw(st.sampled_from(["", "|Shown", "|Bob", "|A. Example"]))
    bang = "!" if draw(st.booleans()) else ""
    return f"{bang}[[{written}{fragment}{alias}]]"


@st.composite
def daily_body(draw) -> str:
    parts = draw(st.lists(st.one_of(WORDS, link_text()), max_size=12))
    parts.insert(draw(st.integers(0, len(parts))), draw(link_text()))  # one link at least
    return "".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    daily_body(),
    st.dictionaries(st.sampled_from(NAMES), st.sampled_from(NEW_NAMES), min_size=1, max_size=3),
    st.booleans(),
    st.booleans(),
)
def test_any_link_retargeting_keeps_the_fingerprint(text, renames, keep_text, with_frontmatter):
    """relink.retarget_text is every link writer's rewrite (mv, enforce
    --move, dedup with keep_text, fix through rewrite_links): whatever it
    retargets, the fingerprint stays."""
    files_ = [n if n.endswith(".png") else n + ".md" for n in NAMES] + [DAY]
    mapping = {}
    for old, new in renames.items():
        old_path = old if old.endswith(".png") else old + ".md"
        new_path = new + (".png" if old.endswith(".png") else ".md")
        if new_path not in files_ and new_path not in mapping.values():
            mapping[old_path] = new_path
    assume(mapping)
    full = ("---\ntype: daily\n---\n" if with_frontmatter else "") + text
    new_text, _ = retarget_text(full, DAY, Resolver(files_), mapping, keep_text)
    before, after = Note.from_bytes(DAY, full.encode()), Note.from_bytes(DAY, new_text.encode())
    assert daily.fingerprint(before) == daily.fingerprint(after)
    marked = Note.from_bytes(DAY, after.with_property(daily.KEY, daily.fingerprint(before)))
    assert daily.state(marked) == "processed"


@settings(max_examples=150, deadline=None)
@given(daily_body(), st.data())
def test_any_change_of_a_character_outside_links_changes_the_fingerprint(text, data):
    note = Note.from_bytes(DAY, ("---\ntype: daily\n---\n" + text).encode())
    start = note.body_offset
    spans = [(s.start, s.end) for s in link_spans(note.text)]
    free = [i for i in range(start, len(note.text)) if note.text[i].isalnum() and not any(a <= i < b for a, b in spans)]
    assume(free)
    at = data.draw(st.sampled_from(free))
    new_char = data.draw(st.sampled_from([c for c in "abcXYZ019 " if c != note.text[at]]))
    edited = Note.from_bytes(DAY, (note.text[:at] + new_char + note.text[at + 1 :]).encode())
    assert daily.fingerprint(edited) != daily.fingerprint(note)
    marked = Note.from_bytes(DAY, note.with_property(daily.KEY, daily.fingerprint(note)))
    edited_marked = marked.text.replace(note.text[start:], edited.text[start:])
    assert daily.state(Note.from_bytes(DAY, edited_marked.encode())) == "changed"


@settings(max_examples=100, deadline=None)
@given(
    daily_body(),
    st.lists(
        st.tuples(
            st.sampled_from(["type", "tags", "status", "tier", "created", "Mood"]),
            st.one_of(st.text(alphabet="abc -", max_size=6), st.lists(st.sampled_from(["a", "b"]), max_size=2)),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_any_frontmatter_fix_keeps_the_fingerprint(text, fixes):
    """enforce writes its fixes with frontmatter.set_property, as this does."""
    full = "---\ntype: Journal\ntags: '#x'\n---\n" + text
    note = Note.from_bytes(DAY, full.encode())
    fixed = full
    for key, value in fixes:
        fixed = frontmatter.set_property(fixed, key, value)
    assert daily.fingerprint(Note.from_bytes(DAY, fixed.encode())) == daily.fingerprint(note)


# ---------------------------------------------------------------------------
# linked


def test_linked_lists_cards_linked_on_a_line_each_with_the_others(make_vault, run):
    root = make_vault(files())
    _, out = run.daily("extract", root)
    [entry] = out["notes"]
    linked = [(e["path"], e["type"], e["line"], e["with"]) for e in entry["linked"]]
    assert linked == [
        ("people/Old Name.md", "person", 6, ["people/A. Example.md"]),
        ("people/A. Example.md", "contact", 6, ["people/Old Name.md"]),
        ("contacts/bob.md", "person", 7, ["projects/alpha.md"]),  # type_aliases: human is person
        ("projects/alpha.md", "project", 7, ["contacts/bob.md"]),
        ("people/Old Name.md", "person", 8, []),  # a Markdown link and an embed of one card: one entry
    ]
    bob = entry["linked"][2]
    assert bob["context"] == "[[contacts/bob|Bob]] on [[projects/alpha]]; also [[wrong/alpha]] and [[Oldie]]."
    # broken links stay candidates; links in code and comments are not counted (line 9)
    assert [c["value"] for c in entry["candidates"]["missing_links"]] == ["wrong/alpha", "Oldie"]
    assert out["counts"]["linked"] == 5 and out["counts"]["missing_links"] == 2
    written = json.loads((root / ".graph/daily/2026-12-01.json").read_text())
    assert written["notes"][0]["linked"] == entry["linked"]
    # every key of before is still there
    assert set(entry) == {"path", "date", "by", "status", "hash", "candidates", "linked"}
    assert set(entry["candidates"]) == set(daily.KINDS)


def test_linked_the_issue_example(make_vault, run):
    root = make_vault(
        {
            "2026-12-01.md": "[[contacts/bob|Bob]] on [[projects/alpha]]\n",
            "contacts/bob.md": "---\ntype: person\n---\n",
            "projects/alpha.md": "---\ntype: project\n---\n",
        }
    )
    _, out = run.daily("extract", root)
    assert out["notes"][0]["linked"] == [
        {
            "path": "contacts/bob.md",
            "type": "person",
            "line": 1,
            "context": "[[contacts/bob|Bob]] on [[projects/alpha]]",
            "with": ["projects/alpha.md"],
        },
        {
            "path": "projects/alpha.md",
            "type": "project",
            "line": 1,
            "context": "[[contacts/bob|Bob]] on [[projects/alpha]]",
            "with": ["contacts/bob.md"],
        },
    ]


def test_linked_skips_code_comments_math_attachments_itself_and_non_cards(make_vault, run):
    root = make_vault(
        {
            ".obsidian/templates.json": json.dumps({"folder": "Templates"}),
            "2026-12-01.md": "---\ndate: 2026-12-01\n---\n"
            "```\n[[Ada]]\n```\n"
            "`[[Ada]]` %% [[Ada]] %% <!-- [[Ada]] --> $[[Ada]]$\n"
            "$$\n[[Ada]]\n$$\n\n"
            "    [[Ada]] indented code\n\n"
            "![[pic.png]] [[2026-12-01]] [[#Top]] [[Templates/Meeting]] [[index]]\n"
            "[[Ada]] and [[Ada|again]] and [[Ada]]\n"
            "[[Ada]] with [[Gone]]\n",
            "Ada.md": "Ada, no type\n",
            "pic.png": b"\x89PNG",
            "Templates/Meeting.md": "---\ntype: meeting\n---\n",
            "index.md": "the hub\n",
        }
    )
    _, out = run.daily("extract", root)
    linked = [(e["path"], e["type"], e["line"], e["with"]) for e in out["notes"][0]["linked"]]
    assert linked == [("Ada.md", None, 15, []), ("Ada.md", None, 16, [])]


def test_linked_in_the_text_report(make_vault, run):
    root = make_vault(files())
    run.capsys.readouterr()
    assert daily_script.main(["extract", str(root), "--dry-run"]) == 0
    out = run.capsys.readouterr().out
    assert "  linked cards:\n" in out
    assert "    contacts/bob.md (person)  line 7  with projects/alpha.md\n" in out
    assert "linked cards 5" in out


def test_linked_without_a_vault_types_by_folder():
    vault = Vault(root=None, files=[DAY, "people/Ada.md", "notes/Bob.md"])
    note = Note.from_bytes(DAY, b"[[Ada]] and [[Bob]]\n")
    schema = load_schema(None)
    found = daily.linked(note, vault.resolver, schema)
    assert [(e["path"], e["with"]) for e in found] == [
        ("people/Ada.md", ["notes/Bob.md"]),
        ("notes/Bob.md", ["people/Ada.md"]),
    ]
