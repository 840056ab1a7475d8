"""``cli.print_json``: what an agent reads from ``--json``.  The text is
made and written in pieces (a report of 100,000 rows is never one string
as well), and is the same text ``json.dumps`` gives of the whole."""

from __future__ import annotations

import io
import json
import sys

import pytest
from autograph import cli
from hypothesis import given, settings
from hypothesis import strategies as st

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)
reports = st.dictionaries(st.text(max_size=6), st.one_of(values, st.lists(values, min_size=0, max_size=2500)))


def printed(monkeypatch, data, encoding: str = "utf-8") -> bytes:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict")
    monkeypatch.setattr(sys, "stdout", stream)
    cli.print_json(data)
    stream.flush()
    return raw.getvalue()


@settings(max_examples=60, deadline=None)
@given(reports)
def test_the_text_is_json_dumps_of_the_whole(data):
    with pytest.MonkeyPatch.context() as monkeypatch:
        out = printed(monkeypatch, data)
    try:
        expected = json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: every character escaped
        expected = json.dumps(data, ensure_ascii=True).encode("ascii")
    assert out == expected + b"\n"


def test_a_long_list_is_written_in_pieces_and_reads_back(monkeypatch):
    data = {"rows": [{"path": f"n{i}.md", "why": "é \U0001f600"} for i in range(5001)], "count": 5001}
    assert json.loads(printed(monkeypatch, data)) == data


def test_text_a_console_cannot_show_is_escaped(monkeypatch):
    out = printed(monkeypatch, {"name": ["Zoë"] * 3000}, encoding="ascii")
    assert out.isascii() and json.loads(out) == {"name": ["Zoë"] * 3000}


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32"])
def test_a_console_whose_encoding_marks_its_start_gets_one_mark(monkeypatch, encoding):
    data = {"rows": [f"Zoë {i}" for i in range(2500)]}
    out = printed(monkeypatch, data, encoding=encoding)
    assert out == (json.dumps(data, ensure_ascii=False) + "\n").encode(encoding)


def test_what_was_printed_before_comes_first(monkeypatch):
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", stream)
    print("before")
    cli.print_json({"a": 1})
    stream.flush()
    assert raw.getvalue() == b'before\n{"a": 1}\n'


def test_a_stream_of_text_alone_gets_the_same_text(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    cli.print_json({"a": list(range(1500))})
    assert sys.stdout.getvalue() == json.dumps({"a": list(range(1500))}) + "\n"
