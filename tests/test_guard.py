"""guard.py as Claude Code runs it: a subprocess with the hook's JSON on stdin.

BR-35 (the index loader drops lines past 200: deny a write that grows the
index past its hard cap, judged on the file after the call) and BR-37 (the
answer must be the documented ``hookSpecificOutput`` shape, exit 0, nothing
else on stdout) run every hook input of the case with ``{{MEMORY_DIR}}``
replaced by the path of a fresh copy of the case's ``memory/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from autograph import caps
from conftest import SCRIPTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GUARD = SCRIPTS / "guard.py"
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRAPH_INDEX_")}


def run_guard(stdin: bytes | str, *args, env: dict | None = None, cwd: Path | None = None):
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    return subprocess.run(
        [sys.executable, str(GUARD), *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=30,
        env={**CLEAN_ENV, **(env or {})},
        cwd=cwd,
    )


def hook_input(case_dir: Path, name: str) -> bytes:
    text = (case_dir / name).read_text(encoding="utf-8")
    return text.replace("{{MEMORY_DIR}}", str(case_dir / "memory")).encode("utf-8")


def decision(proc) -> str:
    """``deny`` or ``allow``, after checking the output is one of the two
    shapes BR-37 allows: one hookSpecificOutput object, or nothing."""
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    if not out.strip():
        assert out == ""
        return "allow"
    answer = json.loads(out)  # raises if anything but one JSON object is on stdout
    assert set(answer) == {"hookSpecificOutput"}
    spec = answer["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert spec["permissionDecision"] == "deny"
    assert isinstance(spec["permissionDecisionReason"], str)
    return "deny"


def reason(proc) -> str:
    return json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]


# ---------------------------------------------------------------------------
# BR-35: the decision for every hook input


BR35 = [
    ("hook-input-edit-append.json", 201, "deny"),
    ("hook-input-edit-replace.json", 200, "allow"),
    ("hook-input-multiedit-net-zero.json", 200, "allow"),
    ("hook-input-write-150.json", 150, "allow"),
    ("hook-input-write-201.json", 201, "deny"),
    ("hook-input-write-200-plus-blank.json", 201, "deny"),
    ("hook-input-write-200-no-final-newline.json", 200, "allow"),
    ("hook-input-other-file.json", None, "allow"),
]


@pytest.mark.parametrize(("name", "lines", "expected"), BR35)
def test_br35_hook_inputs(case, name, lines, expected):
    root = case("BR-35")
    before = (root / "memory" / "MEMORY.md").read_bytes()
    assert caps.measure(before) == (200, 10600)
    payload = hook_input(root, name)
    proc = run_guard(payload)
    assert decision(proc) == expected
    if lines is not None:  # the count the guard judged is the file after the call
        tool = json.loads(payload)
        result = caps.after_call(tool["tool_name"].lower(), tool["tool_input"], before)
        assert caps.count_lines(result) == lines
    if expected == "deny":
        assert f"MEMORY.md would have {lines} lines (limit 200)" in reason(proc)
    else:
        assert proc.stdout == b""
    assert (root / "memory" / "MEMORY.md").read_bytes() == before  # the guard never writes


def test_br35_every_hook_input_is_covered(case):
    root = case("BR-35")
    assert sorted(p.name for p in root.glob("hook-input-*")) == sorted(name for name, _, _ in BR35)


def test_br35_topic_files_may_be_any_size(case):
    root = case("BR-35")
    proc = run_guard(hook_input(root, "hook-input-other-file.json"))
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""


# ---------------------------------------------------------------------------
# BR-37: the shape of the answer


def test_br37_deny_is_one_json_object_equivalent_to_the_expected(case):
    root = case("BR-37")
    proc = run_guard(hook_input(root, "hook-input-deny.json"))
    assert decision(proc) == "deny"
    got = json.loads(proc.stdout)["hookSpecificOutput"]
    want = json.loads((root / "expected-deny-stdout.json").read_text())["hookSpecificOutput"]
    assert got["hookEventName"] == want["hookEventName"]
    assert got["permissionDecision"] == want["permissionDecision"]
    assert "201" in got["permissionDecisionReason"] and "200" in got["permissionDecisionReason"]
    assert proc.stdout.decode().count("\n") == 1  # nothing before or after the object
    assert b'"decision"' not in proc.stdout


def test_br37_allow_prints_nothing(case):
    root = case("BR-37")
    proc = run_guard(hook_input(root, "hook-input-allow.json"))
    assert proc.returncode == 0 and proc.stdout == b""


def test_br37_input_that_is_not_json_passes_with_one_line_on_stderr(case):
    root = case("BR-37")
    proc = run_guard((root / "hook-input-not-json.txt").read_bytes())
    assert proc.returncode == 0 and proc.stdout == b""
    assert len(proc.stderr.decode().strip().splitlines()) == 1


def test_br37_new_index_is_judged_on_the_write_alone(case):
    root = case("BR-37")
    assert not (root / "memory" / "sub" / "MEMORY.md").exists()
    proc = run_guard(hook_input(root, "hook-input-new-file.json"))
    assert decision(proc) == "allow"


def test_br37_matched_tool_on_another_file_passes_silently(case, tmp_path):
    root = case("BR-37")
    payload = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(root / "memory" / "notes.md"), "content": "x\n" * 5000},
        }
    )
    proc = run_guard(payload)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""


def test_br37_guard_is_fast(case):
    root = case("BR-37")
    payload = hook_input(root, "hook-input-deny.json")
    run_guard(payload)  # warm the file cache
    start = time.perf_counter()
    proc = run_guard(payload)
    elapsed = time.perf_counter() - start
    assert decision(proc) == "deny"
    assert elapsed < 1.0


def test_guard_imports_only_what_it_needs():
    code = f"""
import io, runpy, sys
sys.argv = [{str(GUARD)!r}]
sys.stdin = io.TextIOWrapper(io.BytesIO(b"{{}}"))
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m.startswith("autograph")), "argparse" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['autograph', 'autograph.caps'] False"


# ---------------------------------------------------------------------------
# More inputs


def write_input(path: Path, content: str, tool: str = "Write") -> str:
    return json.dumps(
        {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {"file_path": str(path), "content": content}}
    )


def lines(n: int, start: int = 0) -> str:
    return "".join(f"- [Topic {i:03d}](topic-{i:03d}.md) — hook about topic {i:03d}\n" for i in range(start, start + n))


@pytest.fixture
def memory(tmp_path) -> Path:
    folder = tmp_path / "memory"
    folder.mkdir()
    return folder


def test_index_name_is_matched_case_insensitively(memory):
    proc = run_guard(write_input(memory / "memory.MD", lines(201)))
    assert decision(proc) == "deny"
    assert reason(proc).startswith("memory.MD would have 201 lines")


def test_reads_and_other_tools_pass_silently(memory):
    (memory / "MEMORY.md").write_text(lines(300))
    for tool, tool_input in [
        ("Read", {"file_path": str(memory / "MEMORY.md")}),
        ("Bash", {"command": f"cat >> {memory / 'MEMORY.md'}"}),
        ("str_replace_based_edit_tool", {"command": "view", "path": str(memory / "MEMORY.md")}),
        ("Glob", {"pattern": "**/MEMORY.md"}),
    ]:
        proc = run_guard(json.dumps({"tool_name": tool, "tool_input": tool_input}))
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", tool


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"command": "create", "file_text": lines(201)}, "deny"),
        ({"command": "create", "file_text": lines(200)}, "allow"),
        ({"command": "str_replace", "old_str": "topic 199\n", "new_str": "topic 199\n- extra\n"}, "deny"),
        ({"command": "str_replace", "old_str": "topic 199\n", "new_str": "topic 199 reworded\n"}, "allow"),
        ({"command": "insert", "insert_line": 200, "new_str": "- extra"}, "deny"),
        ({"command": "insert", "insert_line": 999, "new_str": "- extra"}, "allow"),  # refused by the tool
    ],
)
def test_text_editor_commands(memory, tool_input, expected):
    (memory / "MEMORY.md").write_text(lines(200))
    payload = json.dumps(
        {"tool_name": "str_replace_based_edit_tool", "tool_input": {"path": str(memory / "MEMORY.md"), **tool_input}}
    )
    assert decision(run_guard(payload)) == expected


def test_multiedit_chained_growth_is_caught(memory):
    (memory / "MEMORY.md").write_text(lines(195))
    edits = [
        {"old_string": "topic 194\n", "new_string": "topic 194\nMARK\n"},
        {"old_string": "MARK\n", "new_string": lines(10, 500)},
    ]
    payload = json.dumps(
        {"tool_name": "MultiEdit", "tool_input": {"file_path": str(memory / "MEMORY.md"), "edits": edits}}
    )
    assert decision(run_guard(payload)) == "deny"


def test_compacting_an_over_cap_index_in_steps_is_allowed(memory):
    (memory / "MEMORY.md").write_text(lines(260))
    proc = run_guard(write_input(memory / "MEMORY.md", lines(230)))  # still over, but shrinking
    assert decision(proc) == "allow"
    assert b"stays over its hard cap" in proc.stderr
    edit = json.dumps(
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": str(memory / "MEMORY.md"), "old_string": lines(1, 5), "new_string": ""},
        }
    )
    assert decision(run_guard(edit)) == "allow"


def test_lines_shrink_while_bytes_grow_past_the_byte_cap_is_denied_naming_bytes(memory):
    (memory / "MEMORY.md").write_text(lines(210))
    fat = "".join(f"- [T{i}](t{i}.md) — " + "x" * 150 + "\n" for i in range(205))
    proc = run_guard(write_input(memory / "MEMORY.md", fat))
    assert decision(proc) == "deny"
    text = reason(proc)
    assert "bytes (limit 25,000)" in text and "lines (limit" not in text


def test_byte_cap_counts_utf8_bytes_of_cjk_text(memory):
    line = "- [記憶](kioku.md) — " + "日本語の説明" * 6 + "\n"  # ~130 bytes, ~45 characters
    count = 25000 // len(line.encode("utf-8")) + 5
    assert count <= 200 and len(line * count) < 25000 < len((line * count).encode("utf-8"))
    assert decision(run_guard(write_input(memory / "MEMORY.md", line * count))) == "deny"
    assert decision(run_guard(write_input(memory / "MEMORY.md", line * (count - 30)))) == "allow"


def test_soft_cap_allows_and_notes_on_stderr(memory):
    proc = run_guard(write_input(memory / "MEMORY.md", lines(160)))
    assert decision(proc) == "allow"
    assert b"soft cap" in proc.stderr


def test_unreadable_index_never_blocks(memory):
    (memory / "MEMORY.md").mkdir()  # exists, cannot be read as a file
    proc = run_guard(write_input(memory / "MEMORY.md", lines(300)))
    assert decision(proc) == "allow"
    assert b"cannot be read" in proc.stderr
    edit = json.dumps(
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": str(memory / "MEMORY.md"), "old_string": "a", "new_string": lines(300)},
        }
    )
    proc = run_guard(edit)
    assert decision(proc) == "allow" and b"cannot be read" in proc.stderr


def test_missing_index_is_sized_as_empty(memory):
    assert decision(run_guard(write_input(memory / "MEMORY.md", lines(200)))) == "allow"
    assert decision(run_guard(write_input(memory / "MEMORY.md", lines(201)))) == "deny"
    edit = json.dumps(
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": str(memory / "MEMORY.md"), "old_string": "", "new_string": lines(201)},
        }
    )
    assert decision(run_guard(edit)) == "deny"  # an Edit that creates the file is judged too


def test_relative_path_is_taken_from_the_hook_cwd(memory):
    (memory / "MEMORY.md").write_text(lines(200))
    payload = json.dumps(
        {
            "cwd": str(memory),
            "tool_name": "Edit",
            "tool_input": {"file_path": "MEMORY.md", "old_string": "topic 199\n", "new_string": "topic 199\n- more\n"},
        }
    )
    assert decision(run_guard(payload, cwd=memory.parent)) == "deny"


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"[]",
        b'"text"',
        b'{"tool_name": "Write"}',
        b'{"tool_name": "Write", "tool_input": []}',
        b'{"tool_name": "Write", "tool_input": {"content": "x"}}',
        b"\xff\xfe{}",
    ],
)
def test_malformed_input_passes_and_says_why(payload):
    proc = run_guard(payload)
    assert proc.returncode == 0 and proc.stdout == b""
    assert len(proc.stderr.decode().strip().splitlines()) == 1


def test_environment_raises_the_caps_and_names_the_files(memory):
    payload = write_input(memory / "MEMORY.md", lines(250))
    assert decision(run_guard(payload)) == "deny"
    assert decision(run_guard(payload, env={"AUTOGRAPH_INDEX_HARD_LINES": "300"})) == "allow"
    assert decision(run_guard(payload, env={"AUTOGRAPH_INDEX_FILES": "INDEX.md"})) == "allow"
    assert (
        decision(run_guard(write_input(memory / "index.md", lines(250)), env={"AUTOGRAPH_INDEX_FILES": "INDEX.md"}))
        == "deny"
    )


def test_bad_environment_value_falls_back_to_the_default_and_says_so(memory):
    proc = run_guard(write_input(memory / "MEMORY.md", lines(250)), env={"AUTOGRAPH_INDEX_HARD_LINES": "0"})
    assert decision(proc) == "deny"
    assert b"AUTOGRAPH_INDEX_HARD_LINES" in proc.stderr


def test_schema_option_gives_names_and_caps(memory, tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"index": {"files": ["HOT.md"], "hard": {"lines": 20}}}))
    assert decision(run_guard(write_input(memory / "HOT.md", lines(21)), "--schema", schema)) == "deny"
    assert decision(run_guard(write_input(memory / "MEMORY.md", lines(21)), "--schema", schema)) == "allow"
    bad = tmp_path / "bad.json"
    bad.write_text('{"index": {"hard": {"lines": -1}}}')
    proc = run_guard(write_input(memory / "HOT.md", "x"), "--schema", bad)
    assert proc.returncode == 2 and b"$.index.hard.lines" in proc.stderr


def test_help_and_usage_errors():
    proc = run_guard(b"", "--help")
    assert proc.returncode == 0
    assert b"permissionDecision" in proc.stdout and b"AUTOGRAPH_INDEX_HARD_LINES" in proc.stdout
    proc = run_guard(b"", "--shcema", "x")
    assert proc.returncode == 2 and b"unrecognized" in proc.stderr


# ---------------------------------------------------------------------------
# Property: a write that shrinks an over-cap index is never denied

line_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=160)


@st.composite
def over_cap_and_smaller(draw):
    """An index over a hard cap (lines or bytes) and a result no larger in
    either dimension: a subset of its lines, possibly shortened."""
    base = draw(st.lists(line_text, min_size=0, max_size=40))
    padding = draw(st.sampled_from(["lines", "bytes", "both"]))
    body = list(base)
    if padding in ("lines", "both"):
        body += [f"- p{i}" for i in range(201 - len(body) + draw(st.integers(0, 30)))]
    if padding in ("bytes", "both"):
        body += ["x" * 2000] * 13
    current = "\n".join(body) + draw(st.sampled_from(["", "\n", "\r\n"]))
    keep = draw(st.lists(st.booleans(), min_size=len(body), max_size=len(body)))
    cut = draw(st.integers(0, 5))
    smaller = [line[: max(0, len(line) - cut)] for line, kept in zip(body, keep, strict=True) if kept]
    result = "\n".join(smaller) + ("\n" if smaller and current.endswith("\n") else "")
    return current, result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pair=over_cap_and_smaller(), tool=st.sampled_from(["Write", "create", "Edit"]))
def test_property_shrinking_an_over_cap_index_is_never_denied(tmp_path, pair, tool):
    current, result = pair
    path = tmp_path / "MEMORY.md"
    path.write_bytes(current.encode("utf-8"))
    before, after = caps.measure(current.encode("utf-8")), caps.measure(result.encode("utf-8"))
    assert caps.DEFAULT_HARD["lines"] < before.lines or caps.DEFAULT_HARD["bytes"] < before.bytes
    assert after.lines <= before.lines and after.bytes <= before.bytes
    if tool == "Write":
        tool_name, tool_input = "Write", {"file_path": str(path), "content": result}
    elif tool == "create":
        tool_name, tool_input = (
            "str_replace_based_edit_tool",
            {"command": "create", "path": str(path), "file_text": result},
        )
    else:
        tool_name, tool_input = "Edit", {"file_path": str(path), "old_string": current, "new_string": result}
    out, _ = caps.review(json.dumps({"tool_name": tool_name, "tool_input": tool_input}).encode(), {})
    assert out == ""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.lists(line_text, min_size=201, max_size=260), start=st.integers(0, 250), length=st.integers(1, 400))
def test_property_deleting_text_from_an_over_cap_index_is_never_denied(tmp_path, body, start, length):
    current = "\n".join(body) + "\n"
    start = min(start, len(current) - 1)
    old = current[start : start + length]
    path = tmp_path / "MEMORY.md"
    path.write_bytes(current.encode("utf-8"))
    payload = {"tool_name": "Edit", "tool_input": {"file_path": str(path), "old_string": old, "new_string": ""}}
    out, _ = caps.review(json.dumps(payload).encode(), {})
    assert out == ""


def test_shrinking_write_through_the_subprocess(memory):
    (memory / "MEMORY.md").write_text(lines(240) + "x" * 30000 + "\n")
    assert decision(run_guard(write_input(memory / "MEMORY.md", lines(239)))) == "allow"
