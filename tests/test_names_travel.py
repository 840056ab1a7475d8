"""Names that travel (issue 30, "Names that travel"): a card's file name a
vault synced to Windows can hold, and names that look the same compared
the same.

Windows reserves CON, PRN, AUX, NUL, COM1-9 and LPT1-9 with any extension
and drops trailing dots and spaces; format characters (zero-width spaces and
joiners, bidirectional overrides) make two names that look alike differ."""

from __future__ import annotations

import unicodedata

import pytest
from autograph.memory.names import WINDOWS_RESERVED, file_name, fold
from hypothesis import given
from hypothesis import strategies as st
from test_remember import make_vault, run


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("CON", "CON_"),
        ("nul", "nul_"),
        ("Com1.report", "Com1_.report"),
        ("LPT9", "LPT9_"),
        ("aux .x", "aux_.x"),
        ("COM10", "COM10"),  # not reserved
        ("Aux Road", "Aux Road"),
        ("Dana Reyes\u200d", "Dana Reyes"),
        ("a\u202eb", "ab"),
        ("trailing. . ", "trailing"),
    ],
)
def test_a_file_name_windows_can_hold(title, name):
    assert file_name(title) == name


@given(st.text(min_size=1, max_size=40))
def test_no_file_name_is_reserved_ends_in_a_dot_or_space_or_holds_a_format_character(title):
    try:
        name = file_name(title)
    except ValueError:
        return  # nothing left of the title: refused with a message
    assert name.partition(".")[0].rstrip(" ").upper() not in WINDOWS_RESERVED
    assert not name.endswith((".", " ")) and not name.startswith((".", " "))
    assert not any(unicodedata.category(ch) == "Cf" for ch in name)


@given(st.text(alphabet=st.characters(whitelist_categories=("L", "Zs")), min_size=1, max_size=20), st.data())
def test_format_characters_never_make_two_names(name, data):
    position = data.draw(st.integers(0, len(name)))
    hidden = data.draw(st.sampled_from(["\u200b", "\u200c", "\u200d", "\u2060", "\u202e", "\ufeff"]))
    assert fold(name[:position] + hidden + name[position:]) == fold(name)


def test_card_new_makes_a_windows_file_and_finds_it_by_its_title(tmp_path):
    root = make_vault(tmp_path, {})
    code, report, _ = run(root, "new", "person", "CON", "description=x", "status=active")
    assert code == 0 and report["path"].endswith("/CON_.md"), report
    code, report, _ = run(root, "set", "CON", "role=device")
    assert code == 0 and report["path"].endswith("/CON_.md")
    # a title that only adds a zero-width joiner is the same card
    run(root, "new", "person", "Dana Reyes", "description=x", "status=active")
    code, report, _ = run(root, "new", "person", "Dana Reyes\u200d", "description=x", "status=active")
    assert code == 1 and "Dana Reyes.md" in str(report), report


def test_health_reports_paths_that_differ_only_in_case(tmp_path):
    import json
    import subprocess
    import sys

    from conftest import SCRIPTS

    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "foo.md").write_text("# foo\n")
    try:
        (root / "FOO.md").write_text("# FOO\n")
    except OSError:
        pytest.skip("this file system folds case")
    if len(list(root.glob("*.md"))) < 2:
        pytest.skip("this file system folds case")
    (root / "img").mkdir()
    (root / "img" / "a.png").write_bytes(b"x")
    (root / "img" / "A.PNG").write_bytes(b"y")
    (root / "other.md").write_text("# other\n")
    graph = [sys.executable, str(SCRIPTS / "graph.py"), "health", str(root)]
    report = json.loads(subprocess.run([*graph, "--json"], capture_output=True, text=True, timeout=60).stdout)
    assert report["case_collisions"] == [["FOO.md", "foo.md"], ["img/A.PNG", "img/a.png"]]
    human = subprocess.run(graph, capture_output=True, text=True, timeout=60).stdout
    assert "differ only in case" in human and "FOO.md  foo.md" in human
