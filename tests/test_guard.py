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
from autograph.hosts import caps
from autograph.read import size
from conftest import SCRIPTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GUARD = SCRIPTS / "guard.py"
CLEAN_ENV = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith("AUTOGRAPH_INDEX_") and k not in ("CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR")
}


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
    """``deny`` or ``allow``, after checking the output is one of the shapes
    Claude Code's PreToolUse protocol documents (BR-37): nothing, or one
    hookSpecificOutput object that denies (permissionDecision "deny" with a
    reason) and/or tells the model something (additionalContext); never an
    "allow", which would skip the user's permission rules."""
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    if not out.strip():
        assert out == ""
        return "allow"
    assert out.count("\n") == 1 and out.endswith("\n")  # one line, nothing before or after
    answer = json.loads(out)  # raises if anything but one JSON object is on stdout
    assert set(answer) == {"hookSpecificOutput"}
    spec = answer["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert set(spec) <= {"hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext"}
    if "additionalContext" in spec:
        assert isinstance(spec["additionalContext"], str) and spec["additionalContext"].strip()
    if "permissionDecision" not in spec:
        assert "permissionDecisionReason" not in spec and "additionalContext" in spec
        return "allow"
    assert spec["permissionDecision"] == "deny"
    assert isinstance(spec["permissionDecisionReason"], str)
    return "deny"


def reason(proc) -> str:
    return json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]


def context(proc) -> str:
    """What the model is told (additionalContext), or ``""``."""
    if not proc.stdout.strip():
        return ""
    return json.loads(proc.stdout)["hookSpecificOutput"].get("additionalContext", "")


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
    assert size.measure(before) == (200, 10600)
    payload = hook_input(root, name)
    proc = run_guard(payload)
    assert decision(proc) == expected
    if lines is not None:  # the count the guard judged is the file after the call
        tool = json.loads(payload)
        result = caps.after_call(tool["tool_name"].lower(), tool["tool_input"], before)
        assert size.count_lines(result) == lines
    if expected == "deny":
        assert f"MEMORY.md would have {lines} lines (limit 200)" in reason(proc)
    elif lines is not None and lines <= 200 and not context(proc):
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
    assert (
        proc.stdout.strip()
        == "['autograph', 'autograph.hosts', 'autograph.hosts.caps', 'autograph.read', 'autograph.read.size'] False"
    )


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
    assert reason(proc).startswith("autograph guard: memory.MD would have 201 lines")


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


def test_soft_cap_allows_and_tells_the_model(memory):
    """Issue 7, item 8: the soft-cap warning reaches the model as
    additionalContext (stderr alone is never shown to it)."""
    proc = run_guard(write_input(memory / "MEMORY.md", lines(165)))
    assert decision(proc) == "allow"
    assert b"soft cap" in proc.stderr
    told = context(proc)
    assert "MEMORY.md is at its soft cap" in told and "165 lines" in told and "soft cap 160 lines" in told
    assert "archive/" in told  # how to compact
    # the target Claude Code names itself ("Compact it to under 140 lines now"): one target, not two
    assert "compact it to under 140 lines / 17,500 bytes now" in told
    assert proc.stderr.decode().strip() == told


def test_soft_cap_is_claude_codes_160_lines(memory):
    assert decision(proc := run_guard(write_input(memory / "MEMORY.md", lines(159)))) == "allow"
    assert proc.stdout == b"" and proc.stderr == b""  # under the soft cap: nothing to say
    assert "soft cap" in context(run_guard(write_input(memory / "MEMORY.md", lines(160))))
    fat = "- [T](t.md) — " + "x" * 183 + "\n"
    assert len(fat.encode()) == 200  # 100 lines reach the 20,000-byte soft cap
    told = context(run_guard(write_input(memory / "MEMORY.md", fat * 100)))
    assert "soft cap" in told and "20,000 bytes" in told and "to under 140 lines / 17,500 bytes" in told


def test_soft_cap_note_only_for_a_call_that_grows_the_index(memory):
    (memory / "MEMORY.md").write_text(lines(170))
    same = json.dumps(
        {
            "tool_name": "Edit",
            "tool_input": {
                "file_path": str(memory / "MEMORY.md"),
                "old_string": "hook about topic 005",
                "new_string": "hook on topic 005",
            },
        }
    )
    proc = run_guard(same)
    assert decision(proc) == "allow" and proc.stdout == b"" and proc.stderr == b""
    assert "soft cap" in context(run_guard(write_input(memory / "MEMORY.md", lines(171))))


def test_still_over_the_cap_tells_the_model(memory):
    (memory / "MEMORY.md").write_text(lines(260))
    proc = run_guard(write_input(memory / "MEMORY.md", lines(230)))
    assert decision(proc) == "allow"
    told = context(proc)
    assert "stays over its hard cap" in told and "230 lines" in told and "keep compacting" in told
    assert "to under 140 lines / 17,500 bytes" in told
    assert told.startswith("autograph guard: ")


def test_deny_reason_names_the_dimension_the_numbers_and_how_to_compact(memory):
    (memory / "MEMORY.md").write_text(lines(200))
    proc = run_guard(write_input(memory / "MEMORY.md", lines(205)))
    text = reason(proc)
    assert "205 lines (limit 200)" in text and "it has 200 lines and" in text
    assert "Compact it first" in text and "archive/" in text
    assert "to under 140 lines / 17,500 bytes" in text
    assert text.startswith("autograph guard: MEMORY.md would have 205 lines")


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


def test_target_from_the_environment_is_named(memory):
    soft, over = write_input(memory / "MEMORY.md", lines(165)), write_input(memory / "MEMORY.md", lines(201))
    env = {"AUTOGRAPH_INDEX_TARGET_LINES": "100", "AUTOGRAPH_INDEX_TARGET_BYTES": "9000"}
    assert "to under 100 lines / 9,000 bytes" in context(run_guard(soft, env=env))
    assert "to under 100 lines / 9,000 bytes" in reason(run_guard(over, env=env))
    env = {"AUTOGRAPH_INDEX_TARGET_LINES": "190"}  # above the soft cap: lowered to it
    assert "to under 160 lines / 17,500 bytes" in context(run_guard(soft, env=env))


@pytest.mark.parametrize("value", ["0", "-1", "many", "1.5"])
def test_bad_target_in_the_environment_is_ignored_with_a_note(memory, value):
    proc = run_guard(write_input(memory / "MEMORY.md", lines(165)), env={"AUTOGRAPH_INDEX_TARGET_LINES": value})
    assert decision(proc) == "allow"  # never blocks on a typo
    told = context(proc)
    assert "AUTOGRAPH_INDEX_TARGET_LINES" in told and "not a positive whole number" in told
    assert "to under 140 lines / 17,500 bytes" in told  # the default target, as if it were unset
    assert b"AUTOGRAPH_INDEX_TARGET_LINES" in proc.stderr
    proc = run_guard(write_input(memory / "MEMORY.md", lines(201)), env={"AUTOGRAPH_INDEX_TARGET_BYTES": value})
    assert decision(proc) == "deny" and "AUTOGRAPH_INDEX_TARGET_BYTES" in context(proc)


def test_target_from_the_schema_is_named(memory, tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"index": {"target_lines": 120, "target_bytes": 15000}}))
    proc = run_guard(write_input(memory / "MEMORY.md", lines(165)), "--schema", schema)
    assert "to under 120 lines / 15,000 bytes" in context(proc)
    proc = run_guard(write_input(memory / "MEMORY.md", lines(201)), "--schema", schema)
    assert "to under 120 lines / 15,000 bytes" in reason(proc)
    schema.write_text(json.dumps({"index": {"target_lines": 0}}))  # invalid: the built-in caps, said
    proc = run_guard(write_input(memory / "MEMORY.md", lines(165)), "--schema", schema)
    assert decision(proc) == "allow" and "$.index.target_lines" in context(proc)
    assert "to under 140 lines / 17,500 bytes" in context(proc)


def test_schema_option_gives_names_and_caps(memory, tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"index": {"files": ["HOT.md"], "hard": {"lines": 20}}}))
    assert decision(run_guard(write_input(memory / "HOT.md", lines(21)), "--schema", schema)) == "deny"
    # the memory store's index (memory.index, MEMORY.md by default) is capped too, as check.py does
    assert decision(run_guard(write_input(memory / "MEMORY.md", lines(21)), "--schema", schema)) == "deny"
    assert decision(run_guard(write_input(memory / "notes.md", lines(21)), "--schema", schema)) == "allow"
    schema.write_text(json.dumps({"index": {"files": ["HOT.md"]}, "memory": {"index": "INDEX.md"}}))
    assert decision(run_guard(write_input(memory / "index.md", lines(201)), "--schema", schema)) == "deny"
    assert decision(run_guard(write_input(memory / "MEMORY.md", lines(201)), "--schema", schema)) == "allow"


def test_help_documents_codex_apply_patch_and_its_source():
    out = run_guard(b"", "--help").stdout.decode()
    for words in ("apply_patch", "tool_input.command", "codex-rs/hooks", "codex-rs/apply-patch", "Move to", "0.171"):
        assert words in out, words


def test_help_and_usage_errors():
    proc = run_guard(b"", "--help")
    assert proc.returncode == 0
    assert b"permissionDecision" in proc.stdout and b"AUTOGRAPH_INDEX_HARD_LINES" in proc.stdout
    help_text = proc.stdout.decode()
    assert "soft 160 / 20,000" in help_text and "140 lines / 17,500 bytes" in help_text and "150" not in help_text
    for key in ("AUTOGRAPH_INDEX_TARGET_LINES", "AUTOGRAPH_INDEX_TARGET_BYTES", "target_lines", "target_bytes"):
        assert key in help_text
    proc = run_guard(b"", "--shcema", "x")
    assert proc.returncode == 2 and b"unrecognized" in proc.stderr
    assert proc.stderr.decode().splitlines()[-1].startswith("autograph guard: error: ")


def _messages(proc) -> list[str]:
    """Every message of one guard run: its stderr lines, the deny reason and
    each line of additionalContext."""
    out = proc.stderr.decode("utf-8").splitlines()
    if proc.stdout.strip():
        spec = json.loads(proc.stdout)["hookSpecificOutput"]
        out += spec.get("additionalContext", "").splitlines()
        out += [spec["permissionDecisionReason"]] if "permissionDecisionReason" in spec else []
    return out


def test_every_message_starts_autograph_guard(memory, tmp_path):
    """Claude Code's own note about its index and ours must be told apart:
    every line the guard writes, on stdout or stderr, starts "autograph guard:"."""
    index = memory / "MEMORY.md"
    bad_schema = tmp_path / "bad.json"
    bad_schema.write_text('{"index": {"hard": 5}}')
    (memory / "over.md").write_text(lines(260))
    (memory / "folder").mkdir()
    (memory / "folder" / "MEMORY.md").mkdir()  # unreadable: a folder
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(index), "old_string": "a", "new_string": "b"}}
    runs = [
        run_guard(b"not json"),
        run_guard(b"[]"),
        run_guard(b'{"tool_name": "Write", "tool_input": []}'),
        run_guard(b'{"tool_name": "Write", "tool_input": {"content": "x"}}'),
        run_guard(write_input(index, lines(165))),  # the soft cap
        run_guard(write_input(index, lines(201))),  # a deny
        run_guard(write_input(index, lines(201)), env={"AUTOGRAPH_INDEX_HARD_LINES": "x"}),  # a deny and a note
        run_guard(write_input(memory / "folder" / "MEMORY.md", lines(300))),  # unreadable
        run_guard(json.dumps({**edit, "tool_input": {**edit["tool_input"], "replace_all": "yes"}})),  # invalid
        run_guard(write_input(index, lines(5)), "--schema", bad_schema),  # a schema that cannot be used
        run_guard(write_input(index, lines(230)), env={"AUTOGRAPH_INDEX_FILES": "over.md"}),
        run_guard(write_input(memory / "over.md", lines(230)), env={"AUTOGRAPH_INDEX_FILES": "over.md"}),
        run_guard(b"", "--bad-flag"),
    ]
    edits = [{"old_string": "topic", "new_string": "topic topic", "replace_all": True}] * 40
    index.write_text(lines(100))
    runaway = {"tool_name": "MultiEdit", "tool_input": {"file_path": str(index), "edits": edits}}
    runs.append(run_guard(json.dumps(runaway)))  # denied without being built
    said = [(line, run.stderr) for run in runs for line in _messages(run)]
    assert len(said) >= 15
    for line, _ in said:
        assert line.startswith("autograph guard: ") or line.startswith("usage: guard.py"), line
    tty = subprocess.run([sys.executable, str(GUARD)], stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert all(line.startswith("autograph guard: ") for line in tty.stderr.decode().splitlines())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    count=st.integers(0, 260),
    current=st.integers(0, 260),
    env=st.dictionaries(
        st.sampled_from(sorted(caps.ENV.values())), st.sampled_from(["0", "x", "50", "150", "170", "300"]), max_size=3
    ),
)
def test_property_every_note_and_reason_starts_autograph_guard(tmp_path, count, current, env):
    path = tmp_path / "MEMORY.md"
    path.write_text(lines(current))
    out, notes = caps.review(write_input(path, lines(count)).encode(), env)
    assert all(note.startswith("autograph guard: ") and "\n" not in note for note in notes)
    if out:
        spec = json.loads(out)["hookSpecificOutput"]
        assert all(line.startswith("autograph guard: ") for line in spec.get("additionalContext", "").splitlines())
        assert spec.get("permissionDecisionReason", "autograph guard: ").startswith("autograph guard: ")
        got, _ = caps.caps_from(None, env, strict=False)
        if "permissionDecisionReason" in spec or "cap" in spec.get("additionalContext", ""):
            assert f"to under {got.target_text()}" in out


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
    before, after = size.measure(current.encode("utf-8")), size.measure(result.encode("utf-8"))
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
    assert "permissionDecision" not in out


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
    assert "permissionDecision" not in out


def test_shrinking_write_through_the_subprocess(memory):
    (memory / "MEMORY.md").write_text(lines(240) + "x" * 30000 + "\n")
    assert decision(run_guard(write_input(memory / "MEMORY.md", lines(239)))) == "allow"


# ---------------------------------------------------------------------------
# Issue 7, item 7: the guard the user installed is the guard the schema describes

HOT_SCHEMA = {"index": {"files": ["HOT.md"], "hard": {"lines": 20}}}


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / "memory").mkdir(parents=True)
    (root / "schema.json").write_text(json.dumps(HOT_SCHEMA))
    return root


def test_schema_found_through_claude_project_dir(project, tmp_path):
    payload = write_input(project / "memory" / "HOT.md", lines(21))
    assert decision(run_guard(payload, cwd=tmp_path)) == "allow"  # no schema in sight: HOT.md is no index
    assert decision(run_guard(payload, env={"CLAUDE_PROJECT_DIR": str(project)}, cwd=tmp_path)) == "deny"
    assert "21 lines (limit 20)" in reason(run_guard(payload, env={"CLAUDE_PROJECT_DIR": str(project)}))


def test_schema_found_in_the_hook_inputs_cwd(project, tmp_path):
    data = json.loads(write_input(project / "memory" / "HOT.md", lines(21)))
    data["cwd"] = str(project)
    assert decision(run_guard(json.dumps(data), cwd=tmp_path)) == "deny"


def test_explicit_schema_wins_over_the_project_one(project, tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"index": {"files": ["COLD.md"], "hard": {"lines": 5}}}))
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    assert decision(run_guard(write_input(project / "COLD.md", lines(6)), "--schema", other, env=env)) == "deny"
    assert decision(run_guard(write_input(project / "HOT.md", lines(21)), "--schema", other, env=env)) == "allow"


BAD_SCHEMAS = [
    ('{"index": {"hard": {"lines": -1}}}', "$.index.hard.lines", "invalid-cap"),
    ("{not json", "not valid JSON", "not-json"),
    ('{"index": {"files": ["HOT.md"]}, "nonsense": 1}', "nonsense", "unknown-key"),
]


@pytest.mark.parametrize(
    ("text", "words", "how"),
    [
        *[pytest.param(text, words, how, id=f"{name}-{how}") for text, words, name in BAD_SCHEMAS
          for how in ("option", "project-dir")],
        # a missing --schema; a project without schema.json simply has none (nothing to say)
        pytest.param(None, "file not found", "option", id="missing-option"),
    ],
)  # fmt: skip
def test_bad_schema_never_blocks_and_says_so(project, tmp_path, text, words, how):
    schema = project / "schema.json"
    if text is None:
        schema.unlink()
        schema = tmp_path / "missing.json"
    else:
        schema.write_text(text)
    args, env = (("--schema", schema), {}) if how == "option" else ((), {"CLAUDE_PROJECT_DIR": str(project)})
    proc = run_guard(write_input(project / "src" / "app.py", "print(1)\n"), *args, env=env)
    assert decision(proc) == "allow", proc.stderr  # an ordinary write goes ahead: exit 0, no deny
    assert words.encode() in proc.stderr and b"built-in" in proc.stderr
    told = context(proc)
    assert words in told and "built-in index names (MEMORY.md) and caps (200 lines / 25,000 bytes)" in told
    proc = run_guard(write_input(project / "memory" / "MEMORY.md", lines(201)), *args, env=env)
    assert decision(proc) == "deny"  # the built-in caps still hold
    assert words in context(proc)


def test_path_is_normalised_before_the_index_test(memory, tmp_path):
    index = memory / "MEMORY.md"
    index.write_text(lines(200))
    (memory / "alias.md").symlink_to(index)
    proc = run_guard(write_input(memory / "alias.md", lines(201)))
    assert decision(proc) == "deny" and "alias.md (the index MEMORY.md) would have 201 lines" in reason(proc)
    edit = {
        "tool_name": "Edit",
        "tool_input": {"file_path": str(memory / "alias.md"), "old_string": "topic 199\n", "new_string": "x\ny\n"},
    }
    assert decision(run_guard(json.dumps(edit))) == "deny"  # judged on the index's 200 lines, not an empty file
    deep = tmp_path / "elsewhere" / "deep"
    deep.mkdir(parents=True)
    (tmp_path / "link").symlink_to(deep)
    (tmp_path / "elsewhere" / "MEMORY.md").write_text(lines(200))
    data = {
        "cwd": str(tmp_path),
        "tool_name": "Edit",
        "tool_input": {"file_path": "link/../MEMORY.md", "old_string": "topic 199\n", "new_string": "x\ny\n"},
    }
    assert decision(run_guard(json.dumps(data))) == "deny"  # ../ taken after the link, as the OS does
    dotted = write_input(memory / "sub" / ".." / "MEMORY.md", lines(201))
    assert decision(run_guard(dotted)) == "deny"


def _limited(megabytes: int):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))

    return limit


def run_limited(payload: str, megabytes: int = 400):
    return subprocess.run(
        [sys.executable, str(GUARD)],
        input=payload.encode(),
        capture_output=True,
        timeout=60,
        env=CLEAN_ENV,
        preexec_fn=_limited(megabytes),
    )


def test_runaway_multiedit_is_denied_without_building_it(memory):
    """40 replace_all edits that each double the text would need 2**40 times
    the index: denied from arithmetic, in bounded memory and time (today the
    simulation runs out of memory under the limit and the call is allowed)."""
    (memory / "MEMORY.md").write_text(lines(100))
    edits = [{"old_string": "topic", "new_string": "topic topic", "replace_all": True} for _ in range(40)]
    payload = json.dumps(
        {"tool_name": "MultiEdit", "tool_input": {"file_path": str(memory / "MEMORY.md"), "edits": edits}}
    )
    start = time.perf_counter()
    proc = run_limited(payload)
    elapsed = time.perf_counter() - start
    assert decision(proc) == "deny", proc.stderr
    assert elapsed < 5
    text = reason(proc)
    assert "would be at least" in text and "bytes (limit 25,000)" in text and "edit " in text and "MultiEdit" in text


def test_runaway_single_edit_is_denied_too(memory):
    (memory / "MEMORY.md").write_text(lines(100))
    edit = {
        "file_path": str(memory / "MEMORY.md"),
        "old_string": "\n",
        "new_string": "\n" + "x" * 5000,
        "replace_all": True,
    }
    proc = run_limited(json.dumps({"tool_name": "Edit", "tool_input": edit}))
    assert decision(proc) == "deny" and "this Edit" in reason(proc)


def test_shrinking_multiedit_of_a_large_index_is_allowed(memory):
    """A long MultiEdit that compacts an index over its cap (and over ten
    times its byte cap) is simulated and allowed."""
    body = "".join(f"- [Topic {i}](t{i}.md) — " + "long winded hook " * 10 + "\n" for i in range(2000))
    (memory / "MEMORY.md").write_text(body)
    assert len(body.encode()) > 10 * 25000
    edits = [{"old_string": "long winded hook " * 10, "new_string": "hook", "replace_all": True}]
    edits += [{"old_string": f"[Topic {i}]", "new_string": f"[T{i}]"} for i in range(40)]
    payload = json.dumps(
        {"tool_name": "MultiEdit", "tool_input": {"file_path": str(memory / "MEMORY.md"), "edits": edits}}
    )
    proc = run_limited(payload)
    assert decision(proc) == "allow" and "stays over its hard cap" in context(proc)


def test_growing_multiedit_under_the_cap_is_allowed(memory):
    (memory / "MEMORY.md").write_text(lines(50))
    edits = [{"old_string": "hook", "new_string": "short hook", "replace_all": True} for _ in range(3)]
    payload = json.dumps(
        {"tool_name": "MultiEdit", "tool_input": {"file_path": str(memory / "MEMORY.md"), "edits": edits}}
    )
    proc = run_limited(payload)
    assert decision(proc) == "allow" and proc.stdout == b""


def plugin_settings(folder: Path, enabled: dict, name: str = "settings.json") -> None:
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    (folder / ".claude" / name).write_text(json.dumps({"enabledPlugins": enabled}))


def test_defer_to_plugin_is_ignored_the_guard_that_runs_always_answers(project, tmp_path):
    """Earlier init.py versions wrote --defer-to-plugin; the plugin's hooks
    now step aside for init's install instead, so a guard that runs must
    answer, whether the plugin is enabled or not."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"CLAUDE_PROJECT_DIR": str(project), "HOME": str(home)}
    payload = write_input(project / "memory" / "MEMORY.md", lines(201))
    assert decision(run_guard(payload, "--defer-to-plugin", env=env)) == "deny"
    plugin_settings(project, {"autograph@autograph": True})
    assert decision(run_guard(payload, "--defer-to-plugin", env=env)) == "deny"


def test_whether_the_plugin_is_enabled_is_read_as_claude_code_merges_settings(project, tmp_path):
    """init.py installs no hooks while the plugin is enabled: local settings
    over the project's over the user's, the first that names it deciding."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"CLAUDE_PROJECT_DIR": str(project), "HOME": str(home)}
    assert caps.plugin_enabled(env) is None
    plugin_settings(project, {"autograph@autograph": True})
    assert caps.plugin_enabled(env) == str(project / ".claude" / "settings.json")
    plugin_settings(project, {"autograph@autograph": False}, "settings.local.json")  # local wins
    assert caps.plugin_enabled(env) is None
    (project / ".claude" / "settings.local.json").unlink()
    (project / ".claude" / "settings.json").unlink()
    plugin_settings(home, {"autograph@market": True, "other@market": False})  # the user's settings
    assert caps.plugin_enabled(env) == str(home / ".claude" / "settings.json")
    plugin_settings(project, {"autograph-extras@market": True})  # another plugin: not ours
    assert caps.plugin_enabled(env) == str(home / ".claude" / "settings.json")
    plugin_settings(home, {"autograph-extras@market": True})
    assert caps.plugin_enabled(env) is None
