"""The recency rule (issue 24 item 3): when dedup merges cards of one
entity, per field the value with the newest evidence (its History change
line, else the card's updated, else created) is current, the others go to
## History dated with their evidence; autograph's own fields never go to
History (created the earliest, updated the merge day, access_count summed,
last_accessed the latest)."""

from __future__ import annotations

import json
import subprocess
import sys

from autograph.memory import recency
from conftest import SCRIPTS
from hypothesis import given
from hypothesis import strategies as st

TODAY = "2026-12-05"


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def dedup_apply(root):
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "dedup.py"), "--vault", str(root), "--apply", "--today", TODAY, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def pair(tmp_path, old_extra="", new_extra=""):
    """Acme's VP (more linked: the canonical card) and Globex's CTO, one
    email; company and role are no conflict fields of this schema, so
    dedup merges them (with the default ones, supersede.py settles them)."""
    root = tmp_path / "vault"
    write(root, "schema.json", '{"conflict_fields": {"fields": ["platform"]}}')
    write(
        root,
        "people/Dana Reyes.md",
        "---\ntype: person\nemail: dana@example.com\ncompany: Acme\nrole: VP Engineering\n"
        "created: 2026-01-10\nupdated: 2026-03-01\naccess_count: 3\nlast_accessed: 2026-03-01\ntier: cold\n---\n"
        f"# Dana Reyes\n{old_extra}",
    )
    write(
        root,
        "people/D. Reyes.md",
        "---\ntype: person\nemail: Dana@Example.com\ncompany: Globex\nrole: CTO\n"
        "created: 2026-02-01\nupdated: 2026-11-20\naccess_count: 2\nlast_accessed: 2026-11-25\n---\n"
        f"# D. Reyes\n{new_extra}",
    )
    write(root, "a.md", "[[Dana Reyes]]\n")
    write(root, "b.md", "[[Dana Reyes]]\n")
    return root


def properties(text: str) -> dict:
    head = text.split("---\n")[1]
    return dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)


def test_the_newer_values_become_current_and_the_older_go_to_history(tmp_path):
    root = pair(tmp_path)
    report = dedup_apply(root)
    assert [m["canonical"] for m in report["merged"]] == ["people/Dana Reyes.md"]
    text = (root / "people" / "Dana Reyes.md").read_text(encoding="utf-8")
    props = properties(text)
    assert (props["company"], props["role"]) == ("Globex", "CTO")
    # one change line per field, dated with the newer value's evidence: the next run reads it
    assert "- 2026-11-20: company: Acme → Globex (from [[Dana Reyes|D. Reyes]])\n" in text
    assert "- 2026-11-20: role: VP Engineering → CTO (from [[Dana Reyes|D. Reyes]])\n" in text
    # autograph's own fields: combined, never in History
    assert props["created"] == "2026-01-10" and props["updated"] == TODAY
    assert props["access_count"] == "5" and props["last_accessed"] == "2026-11-25"
    assert props["tier"] == "warm"  # recomputed: 10 days after the latest access
    history = text.split("## History", 1)[1]
    for own in ("created", "updated", "access_count", "last_accessed"):
        assert f": {own}:" not in history


def test_a_history_change_line_is_newer_evidence_than_updated(tmp_path):
    """The canonical card says its role changed on 2026-11-30 (after the
    other card's updated): its role stays, the other's is History."""
    root = pair(tmp_path, old_extra="\n## History\n- 2026-11-30: role: VP Engineering → SVP Engineering\n")
    text = (root / "people" / "Dana Reyes.md").read_text(encoding="utf-8")
    (root / "people" / "Dana Reyes.md").write_text(text.replace("role: VP Engineering", "role: SVP Engineering"))
    dedup_apply(root)
    text = (root / "people" / "Dana Reyes.md").read_text(encoding="utf-8")
    props = properties(text)
    assert props["role"] == "SVP Engineering" and props["company"] == "Globex"
    assert "- 2026-11-30: role: CTO → SVP Engineering (from [[" in text


def test_no_evidence_or_a_tie_keeps_the_canonical_value():
    assert recency.newest([None, None]) == 0
    assert recency.newest(["2026-05-01", "2026-05-01"]) == 0
    assert recency.newest([None, "2026-05-01"]) == 1
    assert recency.newest(["2026-05-02", "2026-05-01", None]) == 0


@given(st.lists(st.one_of(st.none(), st.dates().map(lambda d: d.isoformat())), min_size=1, max_size=6))
def test_newest_is_the_first_of_the_latest_days(days):
    best = recency.newest(days)
    dated = [d for d in days if d is not None]
    if not dated:
        assert best == 0
    else:
        assert days[best] == max(dated) and days.index(max(dated)) == best


def test_evidence_reads_history_then_updated_then_created():
    body = "## History\n- 2026-04-01: role: A → B\n- 2026-06-01: company: X → Y\n- 2026-05-01: role: B → C\n"
    props = {"updated": "2026-03-01", "created": "2026-01-01"}
    assert recency.evidence(props, body, "role") == "2026-05-01"
    assert recency.evidence(props, body, "Role") == "2026-05-01"
    assert recency.evidence(props, body, "title") == "2026-03-01"
    assert recency.evidence({"created": "2026-01-01"}, "", "title") == "2026-01-01"
    assert recency.evidence({}, "", "title") is None


def test_a_change_of_company_is_left_to_supersede_and_either_order_gives_one_vault(tmp_path):
    """With the default conflict fields, cards of one entity whose company
    and role differ are a change of fact: dedup.py --apply leaves them
    (not_merged, exit 1) and supersede.py --apply retires the older; run in
    either order, the two give the same bytes."""
    results = []
    for order in (("dedup.py", "supersede.py"), ("supersede.py", "dedup.py")):
        root = pair(tmp_path / "-".join(order))
        write(root, "schema.json", "{}")
        for script in order:
            run(script, root)
        results.append(snapshot(root))
    assert results[0] == results[1]
    old = results[0]["people/D. Reyes.md"] if "people/D. Reyes.md" in results[0] else None
    assert old is not None  # nothing merged
    assert "status: superseded" in results[0]["people/Dana Reyes.md"]  # Acme's VP is the older card


def run(script, root, *extra):
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / script), "--vault", str(root), "--apply", "--today", TODAY, *extra, "--json"]
        if script == "dedup.py"
        else [sys.executable, str(SCRIPTS / script), "--vault", str(root), "--apply", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def snapshot(root) -> dict:
    """Every note outside .trash and .graph, by path."""
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.md"))
        if not {".trash", ".graph"} & set(p.relative_to(root).parts)
    }


DAYS = st.one_of(st.none(), st.dates(min_value=__import__("datetime").date(2025, 1, 1)).map(lambda d: d.isoformat()))
COMPANIES = st.sampled_from(["Acme", "Globex", "Initech"])


@st.composite
def cards(draw):
    """Two cards of one entity (one email, or one handle only), with
    random companies, roles, dates and History change lines."""
    shared = draw(st.sampled_from(["email: dana@example.com", 'handle: "@dana"']))
    made = []
    for name in ("Dana Reyes", "D. Reyes"):
        lines = ["---", "type: person", shared, f"company: {draw(COMPANIES)}"]
        if draw(st.booleans()):
            lines.append(f"role: {draw(st.sampled_from(['VP', 'CTO']))}")
        for key in ("created", "updated"):
            day = draw(DAYS)
            if day:
                lines.append(f"{key}: {day}")
        body = f"# {name}\n"
        changed = draw(DAYS)
        if changed:
            body += f"\n## History\n- {changed}: company: Old → New\n"
        made.append((name, "\n".join([*lines, "---", body])))
    return made


@given(pair_of_cards=cards())
@__import__("hypothesis").settings(max_examples=25, deadline=None)
def test_dedup_and_supersede_give_the_same_cards_in_either_order(tmp_path_factory, pair_of_cards):
    """For any two cards of one entity with dated values, dedup then
    supersede and supersede then dedup leave byte-identical cards."""
    results = []
    base = tmp_path_factory.mktemp("orders")
    for order in (("dedup.py", "supersede.py"), ("supersede.py", "dedup.py")):
        root = base / "-".join(order)
        write(root, "schema.json", "{}")
        for name, text in pair_of_cards:
            write(root, f"people/{name}.md", text)
        write(root, "a.md", "[[Dana Reyes]]\n")
        for script in order:
            run(script, root)
        results.append(snapshot(root))
    assert results[0] == results[1]


def test_a_reviewed_manifest_merges_a_change_of_company_with_the_newest_current(tmp_path):
    """Issue 24's reproduction: Acme's VP (the canonical, most linked) and
    Globex's CTO, merged from a reviewed manifest: Globex and CTO are
    current, Acme and VP Engineering in History dated 2026-03-01; no
    created, updated, access_count or last_accessed line in History."""
    root = pair(tmp_path)
    write(root, "schema.json", "{}")  # the default conflict fields: company and role among them
    report = run("dedup.py", root)
    assert report["merged"] == [] and "supersede.py" in report["not_merged"][0]["reason"]
    manifest = tmp_path / "groups.json"
    run("dedup.py", root, "--manifest", str(manifest))
    report = run("dedup.py", root, "--apply-manifest", str(manifest))
    assert [m["canonical"] for m in report["merged"]] == ["people/Dana Reyes.md"]
    text = (root / "people" / "Dana Reyes.md").read_text(encoding="utf-8")
    props = properties(text)
    assert (props["company"], props["role"], props["updated"]) == ("Globex", "CTO", TODAY)
    history = text.split("## History", 1)[1]
    assert "- 2026-11-20: company: Acme → Globex (from [[" in history
    assert "- 2026-11-20: role: VP Engineering → CTO (from [[" in history
    assert not any(f": {own}:" in history for own in ("created", "updated", "access_count", "last_accessed"))


def test_after_a_merge_each_field_keeps_its_evidence_not_the_merge_day(tmp_path):
    """The merged card's updated is the merge day; a later duplicate with a
    newer company (updated after Globex's evidence, before the merge day)
    is still the newer one: supersede keeps it current."""
    root = pair(tmp_path)
    dedup_apply(root)
    write(
        root,
        "people/Dana R.md",
        "---\ntype: person\nemail: dana@example.com\ncompany: Hooli\nupdated: 2026-11-28\n---\n# Dana R\n",
    )
    write(root, "schema.json", "{}")
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "supersede.py"), "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    (candidate,) = json.loads(proc.stdout)["candidates"]
    assert candidate["current"] == "people/Dana R.md", candidate


def test_a_scalar_and_a_list_of_one_different_email_are_two_people(tmp_path):
    root = tmp_path / "vault"
    write(root, "schema.json", '{"identity": {"default_country": "+49"}}')
    write(root, "people/Gil A.md", "---\ntype: person\nemail: gil@a.com\nphone: +49 30 1111111\n---\n")
    write(root, "people/Gil B.md", "---\ntype: person\nemail:\n  - gil@b.com\nphone: 030 1111111\n---\n")
    report = run("dedup.py", root)
    assert report["merged"] == [] and [r["field"] for r in report["refused"]] == ["email"]
    assert (root / "people" / "Gil B.md").exists()


def test_a_change_of_fact_on_a_type_that_cannot_be_superseded_is_merged(tmp_path):
    """supersede.py cannot retire a card whose type says so: dedup does not
    leave it such a group (it would stay two cards for good)."""
    root = pair(tmp_path)
    write(root, "schema.json", '{"node_types": {"person": {"status": ["active"], "supersedable": false}}}')
    report = dedup_apply(root)
    assert [m["canonical"] for m in report["merged"]] == ["people/Dana Reyes.md"]
