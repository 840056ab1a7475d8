"""Identity by kind (issue 24 item 1): a value matches any field of its
kind on any card, in lookups (``search.py --identity``, ``card.py new``'s
refusal) and in dedup's grouping; a conflict is only within one
single-valued field; ``url`` values compare as a browser opens them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from autograph.read import identity
from conftest import SCRIPTS

SCHEMA = {
    "node_types": {
        "person": {"folder": "people", "required": [], "status": ["active", "superseded"]},
    },
    "identity": {
        "match_fields": {
            "email": "email",
            "phone": "phone",
            "phones": "phone",
            "handle": "handle",
            "telegram": "handle",
            "website": "url",
        },
        "default_country": "+49",
    },
}


def run(script, *argv, vault):
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *map(str, argv), "--vault", str(vault), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    return root


def card(root, name, **fields):
    lines = ["---", "type: person", "status: active"]
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{key}:")
            lines += [f'  - "{item}"' for item in value]
        else:
            lines.append(f'{key}: "{value}"')
    (root / "people" / f"{name}.md").write_text("\n".join([*lines, "---", f"# {name}", ""]), encoding="utf-8")


def test_a_handle_is_found_under_any_field_of_its_kind(vault):
    card(vault, "Ivan Petrov", telegram="ivan_p")
    proc = run("search.py", "--identity", "handle=@Ivan_P", vault=vault)
    matches = json.loads(proc.stdout)["matches"]
    assert [(m["path"], m["field"], m["value"]) for m in matches] == [("people/Ivan Petrov.md", "telegram", "ivan_p")]
    proc = run("card.py", "new", "person", "I. Petrov", "handle=@ivan_p", vault=vault)
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["refused"]["matches"][0]["path"] == "people/Ivan Petrov.md"
    assert not (vault / "people" / "I. Petrov.md").exists()


def test_dedup_groups_values_of_one_kind_under_different_fields(vault):
    card(vault, "Ivan Petrov", telegram="ivan_p", email="ivan@example.com")
    card(vault, "I. Petrov", handle="@IVAN_P")
    proc = run("dedup.py", vault=vault)
    groups = json.loads(proc.stdout)["groups"]
    assert len(groups) == 1
    (evidence,) = groups[0]["evidence"]
    assert evidence["key"] == "handle:ivan_p" and evidence["kind"] == "handle"
    assert evidence["fields"] == ["handle", "telegram"]


def test_a_list_field_adds_values_and_never_conflicts(vault):
    """Several phones on each card, one shared: one entity, though each
    list holds a number the other lacks."""
    card(vault, "Ann Lee", email="ann@example.com", phones=["+49 30 1234567", "+33 1 23 45 67 89"])
    card(vault, "A. Lee", phones=["030 1234567", "+44 20 7946 0000"])
    report = json.loads(run("dedup.py", vault=vault).stdout)
    assert [sorted(m["path"] for m in g["members"]) for g in report["groups"]] == [
        ["people/A. Lee.md", "people/Ann Lee.md"]
    ]
    assert report["refused"] == []


def test_one_single_valued_field_holding_two_values_is_a_conflict(vault):
    """One email each, not the same: two people, though they share a phone."""
    card(vault, "Ann Lee", email="ann@example.com", phone="+49 30 1234567")
    card(vault, "Ann Lee (work)", email="ann@work.example", phone="030 1234567")
    report = json.loads(run("dedup.py", vault=vault).stdout)
    assert report["groups"] == []
    assert [r["field"] for r in report["refused"]] == ["email"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://WWW.Example.com/team/", "https://example.com/team"),
        ("HTTPS://example.COM", "https://example.com/"),
        ("https://example.com/a?x=1", "https://www.example.com/a?x=1"),
    ],
)
def test_urls_compare_as_a_browser_opens_them(a, b):
    assert identity.normalise(a, "url") == identity.normalise(b, "url")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.com/a?x=1", "https://example.com/a?x=2"),  # the query is kept
        ("https://example.com/Team", "https://example.com/team"),  # a path keeps its case
        ("https://example.com", "https://example.org"),
    ],
)
def test_different_urls_stay_different(a, b):
    assert identity.normalise(a, "url") != identity.normalise(b, "url")


def test_a_website_written_another_way_is_found(vault):
    card(vault, "Acme Person", website="https://www.Acme.example/people/ann/")
    proc = run("search.py", "--identity", "website=https://acme.example/people/ann", vault=vault)
    assert [m["path"] for m in json.loads(proc.stdout)["matches"]] == ["people/Acme Person.md"]
    proc = run("card.py", "new", "person", "Ann Acme", "website=HTTPS://acme.example/people/ann", vault=vault)
    assert proc.returncode == 1, proc.stderr
