"""card.py remember, --source, show --as-of, batch and card names (issue 25).

Each row of remember's lookup table, each flag and exit code, the JSON keys,
batch ordering (also under --dry-run) and its one undo, the evidence of a
source note (an old fact never overwrites a newer value), a card as it was
on a day, and every name a card command accepts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SCRIPTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CARD = SCRIPTS / "card.py"
UNDO = SCRIPTS / "undo.py"
TODAY = "2026-12-06"

REMEMBER_KEYS = {
    "command",
    "path",
    "today",
    "refused",
    "changes",
    "notes",
    "edits",
    "written",
    "conflicts",
    "failed",
    "run",
    "action",
    "matches",
    "suggested_title",
    "missing",
}
MATCH_KEYS = {"path", "title", "type", "retired", "replaced_by", "why", "conflicts"}


def card_note(props: dict, body: str = "") -> str:
    lines = ["---"]
    for key, value in props.items():
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n---\n" + body


def make_vault(tmp_path: Path, notes: dict[str, str], schema: dict | None = None) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    base = json.loads((REPO / "schema.example.json").read_text(encoding="utf-8"))
    base.update(schema or {})
    (root / "schema.json").write_text(json.dumps(base), encoding="utf-8")
    for path, text in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def run(root: Path, *args: str, stdin: str | None = None) -> tuple[int, dict, str]:
    proc = subprocess.run(
        [sys.executable, str(CARD), *args, "--vault", str(root), "--json", "--today", TODAY]
        if args[0] != "show"
        else [sys.executable, str(CARD), *args, "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


def read(root: Path, path: str) -> str:
    return (root / path).read_text(encoding="utf-8")


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".graph" not in p.parts and ".trash" not in p.parts
    }


def everything(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


DANA = card_note(
    {
        "type": "person",
        "description": "Ops lead",
        "status": "active",
        "email": "dana@acme.com",
        "role": "COO",
        "company": "[[Acme]]",
        "created": "2026-10-01",
        "updated": "2026-11-10",
    },
    "# Dana Reyes\n",
)
MARIA = card_note(
    {
        "type": "person",
        "description": "Engineer",
        "status": "active",
        "email": "maria@acme.com",
        "company": "[[Acme]]",
        "created": "2026-10-01",
        "updated": "2026-10-01",
    }
)


@pytest.fixture
def vault(tmp_path):
    return make_vault(
        tmp_path,
        {
            "people/Dana Reyes.md": DANA,
            "people/Maria Garcia.md": MARIA,
            "people/Robert Smith.md": card_note(
                {
                    "type": "person",
                    "description": "d",
                    "status": "active",
                    "aliases": ["Bob"],
                    "phone": "+49 30 1234567",
                }
            ),
            "people/José García.md": card_note({"type": "person", "description": "d", "status": "active"}),
            "projects/Atlas.md": card_note({"type": "project", "description": "d", "status": "active"}),
            "daily/2026-11-01.md": "# 2026-11-01\nMet Dana.\n",
            "daily/2026-11-20.md": "# 2026-11-20\nDana is CEO now.\n",
            "daily/2026-12-01.md": "# 2026-12-01\n",
        },
        {"identity": {"match_fields": ["email", "phone", "handle"], "default_country": "+49"}},
    )


# ---------------------------------------------------------------------------
# The lookup table, row by row


def test_an_identity_value_finds_the_card_whatever_the_name(vault):
    code, data, _ = run(vault, "remember", "person", "D. Reyes", "email=DANA@acme.com", "role=CEO")
    assert code == 0 and data["action"] == "updated" and data["path"] == "people/Dana Reyes.md"
    assert set(data) == REMEMBER_KEYS
    assert data["matches"][0]["why"] == [{"by": "identity", "field": "email", "value": "dana@acme.com"}]
    assert set(data["matches"][0]) == MATCH_KEYS
    text = read(vault, "people/Dana Reyes.md")
    assert "role: CEO" in text and "- 2026-12-06: role: COO → CEO" in text
    assert "D. Reyes" in text.split("---")[1]  # the name it was called by became an alias


def test_a_phone_in_another_spelling_is_the_same_identity(vault):
    code, data, _ = run(vault, "remember", "person", "R. Smith", "phone=030 1234567", "city=Berlin")
    assert code == 0 and data["path"] == "people/Robert Smith.md" and data["action"] == "updated"


def test_the_title_finds_the_card_with_case_and_accents_folded(vault):
    code, data, _ = run(vault, "remember", "person", "jose garcia", "role=CFO")
    assert code == 0 and data["action"] == "updated" and data["path"] == "people/José García.md"
    assert data["matches"][0]["why"][0]["by"] == "title"


def test_an_alias_finds_the_card(vault):
    code, data, _ = run(vault, "remember", "person", "bob", "role=CTO")
    assert code == 0 and data["path"] == "people/Robert Smith.md"
    assert data["matches"][0]["why"] == [{"by": "alias", "field": "aliases", "value": "Bob"}]


def test_a_same_named_stranger_is_ambiguous_with_a_distinct_title(vault):
    before = snapshot(vault)
    code, data, _ = run(vault, "remember", "person", "Maria Garcia", "email=maria@hooli.com", "company=[[Hooli]]")
    assert code == 1 and data["action"] == "ambiguous" and data["written"] == []
    assert data["suggested_title"] == "Maria Garcia (Hooli)"
    (match,) = data["matches"]
    assert match["path"] == "people/Maria Garcia.md"
    assert match["conflicts"] == [{"field": "email", "ours": "maria@hooli.com", "theirs": "maria@acme.com"}]
    assert snapshot(vault) == before
    # the advice: --new with the suggested title makes the stranger's card
    code, data, _ = run(vault, "remember", "person", "Maria Garcia (Hooli)", "email=maria@hooli.com", "--new",
                        "description=x", "status=active")  # fmt: skip
    assert code == 0 and data["action"] == "created" and data["path"] == "people/Maria Garcia (Hooli).md"
    # from now on the stranger's email finds her card, not the other Maria
    code, data, _ = run(vault, "remember", "person", "Maria Garcia", "email=maria@hooli.com", "role=PM")
    assert code == 0 and data["path"] == "people/Maria Garcia (Hooli).md"
    assert "role: PM" not in read(vault, "people/Maria Garcia.md")


def test_several_cards_are_ambiguous(vault):
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "phone=+49 30 1234567")
    assert code == 1 and data["action"] == "ambiguous"
    assert {m["path"] for m in data["matches"]} == {"people/Dana Reyes.md", "people/Robert Smith.md"}


def test_a_card_of_another_type_is_ambiguous(vault):
    code, data, _ = run(vault, "remember", "person", "Atlas", "description=a person", "status=active")
    assert code == 1 and data["action"] == "ambiguous" and data["matches"][0]["type"] == "project"
    assert data["suggested_title"] == "Atlas (person)"


def test_type_aliases_make_two_types_one(tmp_path):
    root = make_vault(
        tmp_path,
        {"people/Ann Lee.md": card_note({"type": "contact", "description": "d", "status": "active"})},
        {"type_aliases": {"contact": "person"}},
    )
    code, data, _ = run(root, "remember", "person", "Ann Lee", "role=CTO")
    assert code == 0 and data["action"] == "updated"


def test_nothing_found_creates_the_card_with_required_fields_checked(vault):
    code, data, _ = run(vault, "remember", "person", "Zoe Quinn", "email=zoe@x.io")
    assert code == 2 and data["action"] == "refused" and data["missing"] == ["description"]
    assert not (vault / "people/Zoe Quinn.md").exists()
    code, data, _ = run(vault, "remember", "person", "Zoe Quinn", "email=zoe@x.io", "description=d", "status=active")
    assert code == 0 and data["action"] == "created" and data["matches"] == []
    assert "email: zoe@x.io" in read(vault, "people/Zoe Quinn.md")


def test_equal_values_are_unchanged_and_write_nothing(vault):
    before = snapshot(vault)
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "role=COO", "email=Dana@ACME.com")
    assert code == 0 and data["action"] == "unchanged" and data["edits"] == []
    assert snapshot(vault) == before


def test_a_retired_match_is_followed_to_the_card_that_replaced_it(tmp_path):
    root = make_vault(
        tmp_path,
        {
            "people/Old Dana.md": card_note(
                {
                    "type": "person",
                    "description": "d",
                    "status": "superseded",
                    "email": "d@x.com",
                    "superseded_by": "[[Dana New]]",
                }  # fmt: skip
            ),
            "people/Dana New.md": card_note({"type": "person", "description": "d", "status": "active"}),
            "people/Gone.md": card_note({"type": "person", "description": "d", "status": "superseded"}),
        },
    )
    code, data, _ = run(root, "remember", "person", "Old Dana", "email=d@x.com", "role=CEO")
    assert code == 0 and data["path"] == "people/Dana New.md", data
    retired = next(m for m in data["matches"] if m["path"] == "people/Old Dana.md")
    assert retired["retired"] and retired["replaced_by"] == "people/Dana New.md"
    assert "role: CEO" in read(root, "people/Dana New.md") and "CEO" not in read(root, "people/Old Dana.md")
    code, data, _ = run(root, "remember", "person", "Gone", "role=x")  # retired, nothing replaced it
    assert code == 1 and data["action"] == "ambiguous"


def test_a_list_field_gets_the_value_added(tmp_path):
    root = make_vault(
        tmp_path,
        {
            "people/Ann.md": card_note(
                {"type": "person", "description": "d", "status": "active", "email": ["a@x.com", "ann@y.org"]}
            )
        },  # fmt: skip
    )
    code, data, _ = run(root, "remember", "person", "Ann", "email=ann@z.net")
    assert code == 0 and data["action"] == "updated"
    assert "ann@z.net" in read(root, "people/Ann.md") and "a@x.com" in read(root, "people/Ann.md")
    assert run(root, "remember", "person", "Ann", "email=A@X.com")[1]["action"] == "unchanged"


# ---------------------------------------------------------------------------
# --into and --new


def test_into_updates_the_named_card_and_refuses_a_conflicting_identity(vault):
    code, data, _ = run(vault, "remember", "person", "Dana", "role=CEO", "--into", "people/Dana Reyes.md")
    assert code == 0 and data["action"] == "updated" and data["path"] == "people/Dana Reyes.md"
    before = snapshot(vault)
    code, data, _ = run(vault, "remember", "person", "Dana", "email=dana@other.org", "--into", "Dana Reyes")
    assert code == 2 and data["action"] == "refused" and data["refused"]["reason"] == "identity-conflict"
    assert data["matches"][0]["conflicts"][0]["field"] == "email"
    assert snapshot(vault) == before


def test_new_needs_a_title_no_card_bears(vault):
    code, data, _ = run(vault, "remember", "person", "Maria Garcia", "--new", "description=d", "status=active")
    assert code == 2 and data["refused"]["reason"] == "title-taken" and data["suggested_title"]
    code, data, _ = run(vault, "remember", "person", "Maria G", "--new", "email=maria@acme.com")
    assert code == 1 and data["action"] == "ambiguous"  # the identity says it is that card
    assert run(vault, "remember", "person", "X", "--new", "--into", "Dana Reyes")[0] == 2  # exclusive


def test_new_gives_a_suggested_title_in_its_refusal(vault):
    code, data, _ = run(vault, "new", "person", "Maria Garcia", "company=[[Hooli]]", "description=d", "status=active")
    assert code == 1 and data["refused"]["suggested_title"] == "Maria Garcia (Hooli)"
    code, data, _ = run(vault, "new", "person", "Someone", "email=dana@acme.com", "description=d", "status=active")
    assert code == 1 and data["refused"]["suggested_title"] is None


def test_bad_input_is_exit_2(vault):
    assert run(vault, "remember", "nosuchtype", "X")[0] == 2
    assert run(vault, "remember", "person", "X", "notanassignment")[0] == 2
    assert run(vault, "remember", "person", "X", "type=project")[0] == 2


# ---------------------------------------------------------------------------
# --source


def test_a_source_must_be_a_note_of_the_vault(vault):
    before = snapshot(vault)
    for command in (
        ["remember", "person", "Dana Reyes", "role=CEO"],
        ["set", "Dana Reyes", "role=CEO"],
        ["log", "Dana Reyes", "met"],
        ["link", "Dana Reyes", "Atlas"],
        ["retire", "Maria Garcia", "--by", "Dana Reyes"],
    ):
        code, _, err = run(vault, *command, "--source", "2026-01-01")
        assert code == 2 and "--source" in err, (command, err)
    assert snapshot(vault) == before


def test_a_source_is_linked_and_dates_the_line(vault):
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "role=CEO", "--source", "2026-11-20")
    assert code == 0
    text = read(vault, "people/Dana Reyes.md")
    assert "- 2026-11-20: role: COO → CEO (from [[2026-11-20]])" in text
    assert "updated: 2026-11-20" in text  # the facts it holds are as new as the note
    code, data, _ = run(vault, "log", "Dana Reyes", "Talked about Q3", "--source", "daily/2026-12-01.md")
    assert "- 2026-12-01: Talked about Q3 (from [[2026-12-01]])" in read(vault, "people/Dana Reyes.md")


def test_an_older_fact_goes_to_history_and_leaves_the_current_value(vault):
    run(vault, "remember", "person", "Dana Reyes", "role=CEO", "--source", "2026-11-20")
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "role=VP", "--source", "2026-11-01")
    assert code == 0 and data["action"] == "updated"
    text = read(vault, "people/Dana Reyes.md")
    assert "role: CEO" in text and "role: VP\n" not in text
    assert "- 2026-11-01: role: VP (past value, from [[2026-11-01]])" in text
    assert "updated: 2026-11-20" in text
    before = snapshot(vault)  # the same old note read again writes nothing
    assert (
        run(vault, "remember", "person", "Dana Reyes", "role=VP", "--source", "2026-11-01")[1]["action"] == "unchanged"
    )
    assert snapshot(vault) == before
    # a fact whose change is in History, read again after a newer value: still no line
    run(vault, "remember", "person", "Dana Reyes", "role=Chair", "--source", "2026-12-01")
    before = snapshot(vault)
    assert (
        run(vault, "remember", "person", "Dana Reyes", "role=CEO", "--source", "2026-11-20")[1]["action"] == "unchanged"
    )
    assert snapshot(vault) == before
    # the same through set
    code, data, _ = run(vault, "set", "Dana Reyes", "company=[[Initech]]", "--source", "2026-11-01")
    assert 'company: "[[Acme]]"' in read(vault, "people/Dana Reyes.md")


def test_notes_read_in_order_later_leave_the_newest_fact_current(vault):
    """An agent catching up on last month's daily notes, oldest first: a card
    made from the first note must not make every later note's fact 'older'."""
    code, data, _ = run(vault, "remember", "person", "Ivan Petrov", "role=Engineer", "description=d",
                        "status=active", "--source", "2026-11-01")  # fmt: skip
    assert code == 0 and data["action"] == "created"
    text = read(vault, "people/Ivan Petrov.md")
    assert "created: 2026-11-01" in text and "- 2026-11-01: first noted (from [[2026-11-01]])" in text
    run(vault, "remember", "person", "Ivan Petrov", "role=Lead", "--source", "2026-11-20")
    run(vault, "remember", "person", "Ivan Petrov", "role=CTO", "--source", "2026-12-01")
    text = read(vault, "people/Ivan Petrov.md")
    assert "role: CTO" in text and "Engineer → Lead" in text and "Lead → CTO" in text


# ---------------------------------------------------------------------------
# show --as-of


def test_show_rebuilds_a_card_from_its_history(vault):
    run(vault, "remember", "person", "Dana Reyes", "role=CEO", "--source", "2026-11-20")
    run(vault, "remember", "person", "Dana Reyes", "role=Chair", "--source", "2026-12-01")
    before = everything(vault)
    code, data, _ = run(vault, "show", "Dana Reyes")
    assert code == 0 and data["fields"]["role"] == "Chair" and data["as_of"] is None
    assert set(data) == {"command", "path", "as_of", "existed", "fields"}
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-11-25")[1]["fields"]["role"] == "CEO"
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-11-19")[1]["fields"]["role"] == "COO"
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-12-02")[1]["fields"]["role"] == "Chair"
    code, data, _ = run(vault, "show", "Dana Reyes", "--as-of", "2026-09-01")
    assert code == 1 and data["existed"] is False
    assert everything(vault) == before  # a read: not even .graph/ changes


def test_show_uses_past_values(vault):
    run(vault, "remember", "person", "Dana Reyes", "role=CEO", "--source", "2026-11-20")
    run(vault, "remember", "person", "Dana Reyes", "role=VP", "--source", "2026-11-01")
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-11-05")[1]["fields"]["role"] == "VP"
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-11-21")[1]["fields"]["role"] == "CEO"


# ---------------------------------------------------------------------------
# batch


def ops(*lines) -> str:
    return "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"


DAY_OPS = ops(
    {
        "op": "remember",
        "type": "person",
        "title": "Nadia Kim",
        "fields": {"email": "nadia@k.io", "description": "d", "status": "active"},
        "source": "2026-12-01",
    },  # fmt: skip
    {"op": "remember", "type": "person", "title": "Nadia", "fields": {"email": "NADIA@k.io", "role": "CTO"}},
    {"op": "set", "note": "Dana Reyes", "fields": {"role": "CEO"}, "source": "2026-12-01"},
    {"op": "log", "note": "Nadia Kim", "text": "Intro call", "source": "2026-12-01"},
    {"op": "link", "note": "Nadia Kim", "others": ["Dana Reyes"]},
    {"op": "touch", "note": "Atlas"},
)


def test_batch_lines_see_the_lines_before_them(vault):
    code, data, _ = run(vault, "batch", stdin=DAY_OPS)
    assert code == 0, data
    assert set(data) == {"results", "run", "failed", "today"} and data["failed"] == []
    actions = [r.get("action") for r in data["results"]]
    assert actions[:2] == ["created", "updated"] and [r["line"] for r in data["results"]] == [1, 2, 3, 4, 5, 6]
    assert data["results"][1]["path"] == "people/Nadia Kim.md"
    text = read(vault, "people/Nadia Kim.md")
    assert "role: CTO" in text and "Intro call (from [[2026-12-01]])" in text and "[[Dana Reyes]]" in text
    assert "access_count: 1\n" in text  # four lines wrote the card: one run is one access
    assert all(r["run"] == data["run"] for r in data["results"])


def test_batch_dry_run_plans_on_earlier_lines_and_writes_nothing(vault):
    before = snapshot(vault)
    code, data, _ = run(vault, "batch", "--dry-run", stdin=DAY_OPS)
    assert code == 0 and [r.get("action") for r in data["results"][:2]] == ["created", "updated"]
    assert data["run"] is None and snapshot(vault) == before


def test_one_undo_takes_a_batch_back(vault):
    before = snapshot(vault)
    code, data, _ = run(vault, "batch", stdin=DAY_OPS)
    assert code == 0
    proc = subprocess.run(
        [sys.executable, str(UNDO), "undo", data["run"], "--vault", str(vault), "--apply"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert snapshot(vault) == before


def test_batch_reports_a_bad_line_and_runs_the_others(vault):
    text = ops(
        "{not json",
        {"op": "fly", "note": "x"},
        {"op": "set", "note": "Nobody Here", "fields": {"a": 1}},
        {"op": "set", "note": "Dana Reyes", "fields": {"role": "CEO"}, "extra": 1},
        {"op": "set", "note": "Dana Reyes", "fields": {"role": "CEO"}},
        {"op": "remember", "type": "person", "title": "Maria Garcia", "fields": {"email": "m@hooli.com"}},
    )
    code, data, _ = run(vault, "batch", stdin=text)
    assert code == 2 and data["failed"] == [1, 2, 3, 4, 6]
    assert all("error" in r for r in data["results"][:4])
    assert data["results"][4]["written"] == ["people/Dana Reyes.md"]
    assert data["results"][5]["action"] == "ambiguous"
    assert "role: CEO" in read(vault, "people/Dana Reyes.md")


def test_batch_exit_1_when_a_line_is_ambiguous(vault):
    text = ops({"op": "remember", "type": "person", "title": "Maria Garcia", "fields": {"email": "m@hooli.com"}})
    code, data, _ = run(vault, "batch", stdin=text)
    assert code == 1 and data["failed"] == [1]


def test_batch_exit_4_when_a_card_changed_meanwhile(vault, monkeypatch, capsys):
    sys.path.insert(0, str(SCRIPTS))
    import card as card_script
    from autograph.memory import batch

    planned = batch.plan_batch

    def plan_then_edit(*args, **kwargs):
        found = planned(*args, **kwargs)
        path = vault / "people/Dana Reyes.md"
        path.write_text(path.read_text(encoding="utf-8") + "A line a person wrote meanwhile.\n", encoding="utf-8")
        return found

    monkeypatch.setattr(batch, "plan_batch", plan_then_edit)
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(ops({"op": "set", "note": "Dana Reyes",
                                                                      "fields": {"role": "CEO"}})))  # fmt: skip
    code = card_script.main(["batch", "--vault", str(vault), "--json", "--today", TODAY])
    data = json.loads(capsys.readouterr().out)
    assert code == 4 and data["failed"] == [1]
    assert "A line a person wrote meanwhile." in read(vault, "people/Dana Reyes.md")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Ann Lee", "ann lee", "Ånn Lee", "Bo", "Cy Doe"]),
            st.sampled_from(["a@x.com", "A@X.com", "b@y.com", None]),
            st.sampled_from(["CTO", "CEO", "VP"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_batch_leaves_the_vault_its_lines_leave_one_by_one(tmp_path_factory, facts):
    """The same facts through batch and through one remember each: the same
    vault, but that a batch touches each card once."""
    lines, calls = [], []
    for title, email, role in facts:
        fields = {"role": role, "description": "d", "status": "active"}
        if email:
            fields["email"] = email
        lines.append({"op": "remember", "type": "person", "title": title, "fields": fields})
        calls.append(["remember", "person", title, *(f"{k}={v}" for k, v in fields.items())])
    one = make_vault(tmp_path_factory.mktemp("batch"), {})
    many = make_vault(tmp_path_factory.mktemp("single"), {})
    run(one, "batch", stdin=ops(*lines))
    for call in calls:
        run(many, *call)

    def cards(root):  # a batch is one access per card, the single runs one each: access_count aside
        found = {}
        for path, data in snapshot(root).items():
            if path.endswith(".md"):
                found[path] = b"".join(ln for ln in data.splitlines(True) if not ln.startswith(b"access_count:"))
        return found

    assert cards(one) == cards(many)
    assert all(b"access_count: 1\n" in data for path, data in snapshot(one).items() if path.endswith(".md"))


# ---------------------------------------------------------------------------
# Names


def test_every_name_of_a_card_reaches_it(vault):
    code, data, _ = run(vault, "new", "decision", "Decision: use Postgres?", "description=d", "status=accepted")
    assert code == 0 and data["path"] == "decisions/Decision use Postgres.md"
    assert run(vault, "set", "Decision: use Postgres?", "status=proposed")[1]["path"] == data["path"]
    code, data, _ = run(vault, "new", "decision", "Decision: use MySQL", "description=d", "status=accepted")
    code, data, err = run(vault, "retire", "Decision: use Postgres?", "--by", "Decision: use MySQL")
    assert code == 0, err
    assert "status: superseded" in read(vault, "decisions/Decision use Postgres.md")
    assert run(vault, "log", "Bob", "met for coffee")[1]["path"] == "people/Robert Smith.md"  # a nickname alias
    assert run(vault, "show", "jose garcia")[1]["path"] == "people/José García.md"
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "engine.py"), "touch", "Bob", "--vault", str(vault), "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and json.loads(proc.stdout)["touched"][0]["path"] == "people/Robert Smith.md"


def test_a_title_property_is_a_name(tmp_path):
    root = make_vault(
        tmp_path,
        {
            "people/mk-2024.md": card_note(
                {"type": "person", "title": "Mikhail Kuznetsov", "description": "d", "status": "active"}
            )
        },  # fmt: skip
    )
    code, data, _ = run(root, "remember", "person", "Mikhail Kuznetsov", "role=CTO")
    assert code == 0 and data["path"] == "people/mk-2024.md" and data["action"] == "updated"
    assert data["matches"][0]["why"] == [{"by": "title", "field": "title", "value": "Mikhail Kuznetsov"}]


def test_a_name_two_cards_share_is_refused_with_both_paths(vault):
    (vault / "people/Bob Jones.md").write_text(card_note({"type": "person", "description": "d", "status": "active",
                                                          "aliases": ["Robert Smith"]}), encoding="utf-8")  # fmt: skip
    code, _, err = run(vault, "set", "Robert Smith", "role=x")
    assert code == 2 and "people/Robert Smith.md" in err and "people/Bob Jones.md" in err
    assert run(vault, "set", "people/Robert Smith.md", "role=x")[0] == 0  # a path is never ambiguous


# ---------------------------------------------------------------------------
# A tester's finds


def test_a_bad_line_of_any_kind_never_stops_the_batch(vault):
    good = json.dumps({"op": "log", "note": "Dana Reyes", "text": "kept"}).encode()
    bad = [
        b'{"op": "log", "note": "Dana Reyes", "text": "caf\xe9"}',  # not UTF-8
        b'{"op": "log", "note": "Dana Reyes", "text": "\\ud800"}',  # a lone surrogate
        b'{"op": "set", "note": "Dana Reyes", "fields": {"n": NaN}}',
        b'{"op": "set", "note": "Dana Reyes", "fields": {"n": 1e400}}',
        b'{"op": "remember", "type": "person", "title": "X", "new": "false"}',
        b'{"op": "set", "note": "Dana Reyes", "fields": {"a=b": 1}}',
    ]
    proc = subprocess.run(
        [sys.executable, str(CARD), "batch", "--vault", str(vault), "--json", "--today", TODAY],
        input=b"\n".join([*bad, good]) + b"\n",
        capture_output=True,
        timeout=60,
    )
    data = json.loads(proc.stdout)
    assert proc.returncode == 2 and data["failed"] == [1, 2, 3, 4, 5, 6], data
    assert data["results"][6]["written"] == ["people/Dana Reyes.md"]
    assert "kept" in read(vault, "people/Dana Reyes.md")


def test_a_batch_reads_its_input_before_it_takes_the_lock(vault):
    """A pipe an agent has not closed yet never holds up other writers."""
    slow = subprocess.Popen(
        [sys.executable, str(CARD), "batch", "--vault", str(vault), "--json", "--today", TODAY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        code, data, err = run(vault, "log", "Dana Reyes", "meanwhile", "--wait", "2")
        assert code == 0, err
    finally:
        slow.communicate(json.dumps({"op": "log", "note": "Dana Reyes", "text": "later"}).encode(), timeout=60)
    assert slow.returncode == 0 and "later" in read(vault, "people/Dana Reyes.md")


def test_a_card_that_cannot_be_read_stops_a_create_it_may_duplicate(vault):
    path = vault / "people/Grace Liu.md"
    path.write_text("---\nemail: grace@x.com\nrole: [unclosed\n---\n", encoding="utf-8")
    code, data, _ = run(vault, "remember", "person", "G Liu", "email=grace@x.com", "description=d", "status=active")
    assert code == 1 and data["action"] == "ambiguous" and "cannot be read" in data["refused"]["message"]
    assert data["matches"][0]["path"] == "people/Grace Liu.md" and not (vault / "people/G Liu.md").exists()
    assert path.read_text(encoding="utf-8") == "---\nemail: grace@x.com\nrole: [unclosed\n---\n"


def test_a_title_given_as_a_path_or_a_link_is_the_card(vault):
    for title in ("people/Dana Reyes.md", "people/Dana Reyes", "[[Dana Reyes]]", "[[Dana Reyes|Dana]]"):
        code, data, _ = run(vault, "remember", "person", title, "role=CEO")
        assert code == 0 and data["path"] == "people/Dana Reyes.md", (title, data)
    text = read(vault, "people/Dana Reyes.md")
    assert "aliases" not in text and not (vault / "people/people Dana Reyes.md").exists()


def test_a_retired_match_says_which_card_was_written(tmp_path):
    root = make_vault(
        tmp_path,
        {
            "decisions/Use Kafka.md": card_note(
                {"type": "decision", "description": "d", "status": "superseded", "superseded_by": "[[Use NATS]]"}
            ),  # fmt: skip
            "decisions/Use NATS.md": card_note({"type": "decision", "description": "d", "status": "accepted"}),
        },
    )
    code, data, _ = run(root, "remember", "decision", "Use Kafka", "owner=Dana")
    assert code == 0 and data["path"] == "decisions/Use NATS.md"
    assert any("decisions/Use Kafka.md matched but is retired" in note for note in data["notes"])
    nats = next(m for m in data["matches"] if m["path"] == "decisions/Use NATS.md")
    assert nats["why"] == [{"by": "title", "field": "name", "value": "Use Kafka", "via": "decisions/Use Kafka.md"}]


def test_an_old_email_on_a_retired_card_reaches_its_successor_and_stays_old(tmp_path):
    root = make_vault(
        tmp_path,
        {
            "people/Dana Old.md": card_note(
                {
                    "type": "person",
                    "description": "d",
                    "status": "superseded",
                    "email": "dana@old.com",
                    "superseded_by": "[[Dana Reyes]]",
                }
            ),  # fmt: skip
            "people/Dana Reyes.md": card_note(
                {"type": "person", "description": "d", "status": "active", "email": "dana@new.com"}
            ),  # fmt: skip
        },
    )
    code, data, _ = run(root, "remember", "person", "Dana", "email=dana@old.com", "role=CEO")
    assert code == 0 and data["path"] == "people/Dana Reyes.md", data
    text = read(root, "people/Dana Reyes.md")
    assert "role: CEO" in text and "dana@new.com" in text and "dana@old.com" not in text


def test_the_advice_of_an_ambiguous_lookup_leads_somewhere(vault):
    # a name match whose email differs: the message says how to change an email, and the new title
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "email=dana@newco.com")
    assert code == 1 and "card.py set" in data["refused"]["message"] and data["suggested_title"]
    # one card holds the identity, another bears the name: no new title (the identity says who it is)
    (vault / "people/Bob Jones.md").write_text(card_note({"type": "person", "description": "d", "status": "active",
                                                          "email": "bob@a.com"}), encoding="utf-8")  # fmt: skip
    code, data, _ = run(vault, "remember", "person", "Bob", "email=bob@a.com")
    assert code == 1 and data["suggested_title"] is None and "--into" in data["refused"]["message"]
    assert run(vault, "remember", "person", "Bob", "email=bob@a.com", "--into", "people/Bob Jones.md")[0] == 0


def test_a_qualified_title_makes_a_bare_name_ambiguous(vault):
    """After "Maria Garcia (Hooli)" is made beside "Maria Garcia", a fact
    that gives only the name is asked about, never written to the first."""
    run(vault, "remember", "person", "Maria Garcia (Hooli)", "email=m@hooli.com", "--new", "description=d")
    code, data, _ = run(vault, "remember", "person", "Maria Garcia", "role=PM")
    assert code == 1 and {m["path"] for m in data["matches"]} == {
        "people/Maria Garcia.md",
        "people/Maria Garcia (Hooli).md",
    }
    assert run(vault, "set", "Maria Garcia", "role=PM")[0] == 0  # the exact name is still the first card's
    code, data, _ = run(vault, "remember", "person", "people/Maria Garcia.md", "role=CTO")  # a path is that card
    assert code == 0 and data["path"] == "people/Maria Garcia.md"
    code, data, _ = run(vault, "remember", "person", "[[Maria Garcia]]", "role=CFO")  # so is a link
    assert code == 0 and data["path"] == "people/Maria Garcia.md"


def test_names_fold_accents_of_latin_greek_and_cyrillic_only():
    sys.path.insert(0, str(SCRIPTS))
    from autograph.memory.names import fold

    assert fold("José García") == fold("jose garcia") and fold("Schäfer") == fold("SCHAFER")
    assert fold("Мария Иванова") == fold("мария иванова") and fold("Ёлка") == fold("елка")
    assert fold("Søren") == fold("Soren") and fold("Łukasz") == fold("lukasz") and fold("Straße") == fold("strasse")
    assert fold("सत्य") != fold("सतय") and fold("かぎ") != fold("かき")  # marks that are letters stay
    assert fold("陈伟") == "陈伟"


def test_long_titles_that_differ_late_are_two_subjects(vault):
    one, two = "Я" * 110 + " один", "Я" * 110 + " два"
    assert run(vault, "remember", "person", one, "description=d")[1]["action"] == "created"
    assert run(vault, "remember", "person", two, "description=d")[1]["action"] != "updated"


def test_a_value_holding_the_arrow_survives_history(vault):
    run(vault, "set", "Dana Reyes", "route=Berlin → Paris", "--today", "2026-11-01")
    run(vault, "set", "Dana Reyes", "route=Rome", "--today", "2026-11-20")
    assert '"Berlin → Paris" → Rome' in read(vault, "people/Dana Reyes.md")
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-11-05")[1]["fields"]["route"] == "Berlin → Paris"


def test_an_older_source_still_adds_to_a_list(vault):
    run(vault, "set", "Dana Reyes", "tags=[acme]", "--source", "2026-11-20")
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "tags=vip", "--source", "2026-11-01")
    assert code == 0 and data["action"] == "updated"
    assert "- vip" in read(vault, "people/Dana Reyes.md") and "past value" not in read(vault, "people/Dana Reyes.md")


def test_remember_leaves_autograph_s_own_fields_alone(vault):
    assert run(vault, "remember", "person", "Dana Reyes", "access_count=99")[0] == 2
    assert run(vault, "remember", "person", "Dana Reyes", "tier=core")[0] == 2


def test_a_card_is_not_its_own_source(vault):
    code, _, err = run(vault, "remember", "person", "Dana Reyes", "role=x", "--source", "Dana Reyes")
    assert code == 2 and "is the card written to" in err


def test_a_name_a_retired_card_shares_with_its_successor_is_the_successor(tmp_path):
    root = make_vault(
        tmp_path,
        {
            "people/Old.md": card_note(
                {
                    "type": "person",
                    "description": "d",
                    "status": "superseded",
                    "aliases": ["Dee"],
                    "superseded_by": "[[New]]",
                }
            ),  # fmt: skip
            "people/New.md": card_note({"type": "person", "description": "d", "status": "active", "aliases": ["Dee"]}),
        },
    )
    code, data, _ = run(root, "set", "Dee", "role=x")
    assert code == 0 and data["path"] == "people/New.md"


# ---------------------------------------------------------------------------
# A second tester's finds: what a write without a source does to the evidence


def test_a_write_without_a_source_never_makes_a_newer_fact_old(vault):
    """A link or log line moves ``updated``; it says nothing of when the role
    began, so a fact from yesterday's note is still newer than the role."""
    run(vault, "link", "Dana Reyes", "Atlas")  # no source: updated is today
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "role=CEO", "--source", "2026-12-01")
    assert code == 0 and data["action"] == "updated"
    text = read(vault, "people/Dana Reyes.md")
    assert "role: CEO" in text and "- 2026-12-01: role: COO → CEO (from [[2026-12-01]])" in text
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-12-01")[1]["fields"]["role"] == "CEO"


def test_a_first_value_is_dated_and_older_facts_stay_past(vault):
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "team=Ops", "--source", "2026-11-20")
    text = read(vault, "people/Dana Reyes.md")
    assert "- 2026-11-20: team: Ops (first value, from [[2026-11-20]])" in text
    run(vault, "remember", "person", "Dana Reyes", "team=Sales", "--source", "2026-11-01")
    text = read(vault, "people/Dana Reyes.md")
    assert "team: Ops" in text and "- 2026-11-01: team: Sales (past value, from [[2026-11-01]])" in text
    assert "team" not in run(vault, "show", "Dana Reyes", "--as-of", "2026-10-15")[1]["fields"]
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-11-05")[1]["fields"]["team"] == "Sales"
    assert run(vault, "show", "Dana Reyes", "--as-of", "2026-11-25")[1]["fields"]["team"] == "Ops"


def test_an_old_email_in_history_still_names_the_subject(vault):
    run(vault, "set", "Dana Reyes", "email=dana@newco.com", "--source", "2026-12-01")
    for title in ("Dana Reyes", "D. Reyes"):  # by name and old email, and by the old email alone
        code, data, _ = run(vault, "remember", "person", title, "email=dana@acme.com", "city=Lisbon")
        assert code == 0 and data["path"] == "people/Dana Reyes.md", data
        assert any("old value" in note for note in data["notes"])
    text = read(vault, "people/Dana Reyes.md")
    assert "email: dana@newco.com" in text and "city: Lisbon" in text
    code, data, _ = run(vault, "new", "person", "Dee R", "email=dana@acme.com", "description=d", "status=active")
    assert code == 1 and data["refused"]["matches"][0]["old"] is True


def test_br28_one_email_on_two_cards_is_asked_about_until_dedup_merges_them(tmp_path):
    """BR-28: a contact and a person with one email (in two spellings) are
    one entity.  Until dedup merges them remember asks which card; after, it
    updates the one card."""
    from conftest import CASES, copy_tree, require

    root = copy_tree(require(CASES / "BR-28" / "vault"), tmp_path / "vault")
    code, data, _ = run(root, "remember", "person", "Alex", "email=ALEX.example@example.com", "role=lead")
    assert code == 1 and data["action"] == "ambiguous" and data["suggested_title"] is None
    assert {m["path"] for m in data["matches"]} == {"people/Alex Example.md", "people/A. Example.md"}
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "dedup.py"), "--vault", str(root), "--apply", "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    code, data, _ = run(root, "remember", "person", "A. Example", "email=ALEX.example@example.com", "role=lead")
    assert code == 0 and data["path"] == "people/Alex Example.md" and data["action"] == "updated"


def test_a_card_found_by_its_email_takes_a_new_phone(vault):
    """A phone differs, but the email says who it is: a change of fact, not a stranger."""
    run(vault, "set", "Dana Reyes", "phone=+49 30 1111111")
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "email=dana@acme.com", "phone=+49 40 2222222")
    assert code == 0 and data["action"] == "updated"
    text = read(vault, "people/Dana Reyes.md")
    assert "+49 40 2222222" in text and "+49 30 1111111 → +49 40 2222222" in text
    # by name alone a different phone is still another subject, and by phone a different email is
    code, data, _ = run(vault, "remember", "person", "Dana Reyes", "phone=+49 89 3333333")
    assert code == 1 and data["matches"][0]["conflicts"][0]["field"] == "phone"
    code, data, _ = run(vault, "remember", "person", "D R", "phone=+49 40 2222222", "email=d@other.org")
    assert code == 1 and data["matches"][0]["conflicts"][0]["field"] == "email"
