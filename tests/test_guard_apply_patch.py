"""The index guard on Codex's ``apply_patch`` (issue 28).

Codex (the OpenAI CLI) runs a plugin's ``hooks/hooks.json`` PreToolUse hooks
for its patch tool with the hook input of codex-rs/hooks
(``PreToolUseCommandInput``): ``tool_name`` ``"apply_patch"`` and the patch
text in ``tool_input.command`` (a string), or ``tool_name`` ``"Bash"`` for a
shell command it runs as a patch (``apply_patch <<'EOF' ... EOF``).  The
recorded payloads in ``fixtures/apply_patch/`` are in that exact shape, with
``{{CWD}}`` for the folder each test builds.  Codex honours the same deny
object as Claude Code (``hookSpecificOutput.permissionDecision: "deny"``
with a reason), so :func:`decision` checks one shape.

The parser and the hunk application mirror codex-rs/apply-patch; they were
checked against ``codex --codex-run-as-apply-patch`` of @openai/codex
0.171.0 (the expected texts of the unit tests below are its outputs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from autograph.hosts import caps, patch
from conftest import SCRIPTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GUARD = SCRIPTS / "guard.py"
FIXTURES = Path(__file__).parent / "fixtures" / "apply_patch"
CLEAN_ENV = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith("AUTOGRAPH_INDEX_") and k not in ("CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR")
}


def entry(i: int) -> str:
    return f"- [Topic {i:03d}](topic-{i:03d}.md) — hook about topic {i:03d}"


def entries(start: int, stop: int, newline: str = "\n") -> str:
    return "".join(entry(i) + newline for i in range(start, stop))


def codex_input(command, cwd: Path, tool: str = "apply_patch") -> str:
    """A hook input as Codex writes it (the fields of PreToolUseCommandInput, in order)."""
    return json.dumps(
        {
            "session_id": "019a7c3e-5b1f-7d20-9c4e-3f8a2b6d1e07",
            "turn_id": "turn-1",
            "transcript_path": None,
            "cwd": str(cwd),
            "hook_event_name": "PreToolUse",
            "model": "gpt-5.5",
            "permission_mode": "default",
            "tool_name": tool,
            "tool_input": {"command": command},
            "tool_use_id": "call_0001",
        }
    )


def recorded(name: str, cwd: Path) -> str:
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    return text.replace("{{CWD}}", json.dumps(str(cwd))[1:-1])


def run_guard(stdin: str, *args, env: dict | None = None, preexec=None):
    return subprocess.run(
        [sys.executable, str(GUARD), *map(str, args)],
        input=stdin.encode("utf-8"),
        capture_output=True,
        timeout=60,
        env={**CLEAN_ENV, **(env or {})},
        preexec_fn=preexec,
    )


def decision(proc) -> str:
    """``deny`` or ``allow``, after checking the answer is the one object
    both Claude Code and Codex read (Codex rejects unknown keys and an
    "allow" without updatedInput, so neither may appear)."""
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    if not out.strip():
        assert out == ""
        return "allow"
    assert out.count("\n") == 1 and out.endswith("\n")
    answer = json.loads(out)
    assert set(answer) == {"hookSpecificOutput"}
    spec = answer["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert set(spec) <= {"hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext"}
    for key in ("permissionDecisionReason", "additionalContext"):
        if key in spec:
            assert all(line.startswith("autograph guard:") for line in spec[key].splitlines()), spec[key]
    if "permissionDecision" not in spec:
        assert "permissionDecisionReason" not in spec and spec["additionalContext"].strip()
        return "allow"
    assert spec["permissionDecision"] == "deny"
    assert spec["permissionDecisionReason"].strip()
    return "deny"


def reason(proc) -> str:
    return json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]


def context(proc) -> str:
    return json.loads(proc.stdout)["hookSpecificOutput"].get("additionalContext", "") if proc.stdout.strip() else ""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


# ---------------------------------------------------------------------------
# The recorded payloads

# name: (files before the call, decision, words the answer holds, MEMORY.md afterwards unchanged?)
CASES = {
    "grow": ({"MEMORY.md": entries(0, 200)}, "deny", ["MEMORY.md would have 205 lines (limit 200)", "200 lines"]),
    "shrink": ({"MEMORY.md": entries(0, 230)}, "allow", ["stays over its hard cap", "220 lines"]),
    "add_index": ({}, "deny", ["team/MEMORY.md would have 250 lines", "does not exist yet"]),
    "move_onto_index": (
        {"MEMORY.md": entries(0, 100), "drafts/memory-draft.md": entries(0, 240)},
        "deny",
        ["MEMORY.md would have 241 lines", "it has 100 lines"],
    ),
    "other_files": ({"MEMORY.md": entries(0, 400)}, "allow", []),
    "delete_index": ({"MEMORY.md": entries(0, 300)}, "allow", []),
    "hunk_not_applying": (
        {"MEMORY.md": entries(0, 50)},
        "allow",
        ["cannot be applied", "Failed to find expected lines in MEMORY.md", "host rejects it"],
    ),
    "heredoc_shell": ({"MEMORY.md": entries(0, 200)}, "deny", ["MEMORY.md would have 203 lines"]),
    "heredoc_argument": ({"MEMORY.md": entries(0, 200)}, "deny", ["MEMORY.md would have 201 lines"]),
    "crlf": ({"MEMORY.md": entries(0, 200, "\r\n")}, "deny", ["MEMORY.md would have 201 lines"]),
    "two_indexes": (
        {"MEMORY.md": entries(0, 210)},
        "deny",
        ["team/MEMORY.md would have 201 lines", "MEMORY.md stays over its hard cap"],
    ),
}


def test_every_recorded_payload_is_covered():
    assert sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_payload(name, tmp_path):
    files, expected, words = CASES[name]
    for relative, text in files.items():
        write(tmp_path / relative, text)
    before = {relative: (tmp_path / relative).read_bytes() for relative in files}
    payload = recorded(name, tmp_path)
    assert json.loads(payload)["cwd"] == str(tmp_path)
    proc = run_guard(payload)
    assert decision(proc) == expected, (proc.stdout, proc.stderr)
    said = (reason(proc) if expected == "deny" else "") + context(proc) + proc.stderr.decode()
    for word in words:
        assert word in said, (word, said)
    if not words:
        assert proc.stdout == b"" and proc.stderr == b""
    assert {relative: (tmp_path / relative).read_bytes() for relative in files} == before  # the guard writes nothing


def test_crlf_bytes_count_the_carriage_returns(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 150, "\r\n"))
    body = (
        "*** Begin Patch\r\n*** Update File: MEMORY.md\r\n@@\r\n "
        + entry(149)
        + "\r\n+"
        + entry(150)
        + "\r\n*** End Patch"
    )
    verdict_lines = []
    answer, notes = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV, section={"hard": {"bytes": 8000}})
    verdict_lines += notes
    expected = len((entries(0, 151, "\r\n")).encode())
    assert json.loads(answer)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert f"{expected:,} bytes (limit 8,000)" in json.loads(answer)["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_bash_command_that_is_not_a_patch_passes_silently(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 300))
    for command in ["ls -la", "cat MEMORY.md", "echo apply_patch", "grep -n '*** Begin Patch' notes.md"]:
        assert caps.review(codex_input(command, tmp_path, tool="Bash").encode(), CLEAN_ENV) == ("", [])


def test_cd_before_the_heredoc_moves_the_base(tmp_path):
    write(tmp_path / "team" / "MEMORY.md", entries(0, 200))
    script = (
        "cd team && apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: MEMORY.md\n@@\n "
        + entry(199)
        + "\n+"
        + entry(200)
        + "\n*** End Patch\nPATCH"
    )
    answer, _ = caps.review(codex_input(script, tmp_path, tool="Bash").encode(), CLEAN_ENV)
    assert "MEMORY.md would have 201 lines" in answer


def test_an_argv_command_is_read_too(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 200))
    body = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+" + entry(200) + "\n*** End Patch"
    for command in (["apply_patch", body], ["bash", "-lc", f"apply_patch <<'EOF'\n{body}\nEOF"]):
        answer, _ = caps.review(codex_input(command, tmp_path).encode(), CLEAN_ENV)
        assert "would have 201 lines" in answer, command


def test_index_names_are_case_insensitive_and_symlinks_resolved(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 200))
    (tmp_path / "link.md").symlink_to(tmp_path / "MEMORY.md")
    (tmp_path / "sub").mkdir()
    for name in ("link.md", "./sub/../MEMORY.md", str(tmp_path / "MEMORY.md")):
        body = f"*** Begin Patch\n*** Update File: {name}\n@@\n+" + entry(200) + "\n*** End Patch"
        answer, _ = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)
        assert "would have 201 lines" in answer, name
    body = "*** Begin Patch\n*** Add File: notes/memory.MD\n" + "".join("+" + entry(i) + "\n" for i in range(201))
    answer, _ = caps.review(codex_input(body + "*** End Patch", tmp_path).encode(), CLEAN_ENV)
    assert "notes/memory.MD would have 201 lines" in answer


def test_a_move_of_the_index_away_and_a_delete_are_allowed(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 300))
    body = "*** Begin Patch\n*** Update File: MEMORY.md\n*** Move to: archive/old.md\n@@\n+x\n*** End Patch"
    assert caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)[0] == ""


def test_a_move_that_shrinks_the_index_is_allowed(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 300))
    write(tmp_path / "compact.md", entries(0, 100))
    body = (
        "*** Begin Patch\n*** Update File: compact.md\n*** Move to: MEMORY.md\n@@\n+" + entry(100) + "\n*** End Patch"
    )
    answer, notes = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)
    assert answer == "" and notes == []


def test_a_patch_that_does_not_parse_passes_with_a_note_only_when_it_names_an_index(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 300))
    bad = "*** Begin Patch\n*** Frobnicate File: MEMORY.md\n*** End Patch"
    answer, notes = caps.review(codex_input(bad, tmp_path).encode(), CLEAN_ENV)
    assert "permissionDecision" not in answer and "not a valid hunk header" in answer and len(notes) == 1
    other = "*** Begin Patch\n*** Frobnicate File: app.py\n*** End Patch"
    assert caps.review(codex_input(other, tmp_path).encode(), CLEAN_ENV) == ("", [])
    assert "cannot be applied" in caps.review(codex_input(42, tmp_path).encode(), CLEAN_ENV)[0]  # not text


def test_what_lands_before_a_failing_operation_is_judged(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 10))
    body = (
        "*** Begin Patch\n*** Add File: MEMORY.md\n"
        + "".join("+" + entry(i) + "\n" for i in range(300))
        + "*** Update File: MEMORY.md\n@@\n-not there\n+x\n*** End Patch"
    )
    answer, _ = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)
    assert "would have 300 lines" in answer


def test_an_unreadable_index_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "MEMORY.md")
    body = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+x\n*** End Patch"
    answer, notes = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)
    assert "permissionDecision" not in answer and "cannot be read" in answer


def test_an_index_that_is_not_utf8_is_one_codex_cannot_update(tmp_path):
    (tmp_path / "MEMORY.md").write_bytes(b"\xff\xfe" + entries(0, 250).encode())
    body = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+x\n*** End Patch"
    answer, _ = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)
    assert "permissionDecision" not in answer and "not UTF-8" in answer


def test_soft_cap_note_for_a_patch_that_grows_the_index_to_it(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 159))
    body = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+" + entry(159) + "\n*** End Patch"
    answer, _ = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)
    assert "permissionDecision" not in answer and "at its soft cap" in answer and "140 lines" in answer


def test_schema_index_names_apply_to_patches(tmp_path):
    write(tmp_path / "INDEX.md", entries(0, 200))
    body = "*** Begin Patch\n*** Update File: INDEX.md\n@@\n+" + entry(200) + "\n*** End Patch"
    answer, _ = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV, files=["INDEX.md"])
    assert "INDEX.md would have 201 lines" in answer


# ---------------------------------------------------------------------------
# Hostile patches


def _limited(megabytes: int):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))

    return limit


def test_huge_added_text_is_denied_within_bounded_memory(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 10))
    line = "+" + "x" * 1000 + "\n"
    body = "*** Begin Patch\n*** Add File: MEMORY.md\n" + line * 40_000 + "*** End Patch"  # 40 MB
    start = time.perf_counter()
    proc = run_guard(codex_input(body, tmp_path), preexec=_limited(700))
    assert decision(proc) == "deny", proc.stderr
    assert "would be at least" in reason(proc) or "would have" in reason(proc)
    assert time.perf_counter() - start < 20


def test_a_move_of_a_huge_file_onto_the_index_is_denied(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 10))
    (tmp_path / "big.log").write_bytes(b"z\n" * 3_000_000)  # 6 MB: past 10 times the cap, sized before it is built
    body = "*** Begin Patch\n*** Update File: big.log\n*** Move to: MEMORY.md\n@@\n+tail\n*** End Patch"
    answer, _ = caps.review(codex_input(body, tmp_path).encode(), CLEAN_ENV)
    spec = json.loads(answer)["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny"
    assert spec["permissionDecisionReason"].startswith("autograph guard: MEMORY.md would be at least 6,000,00")


def test_many_hunks_are_bounded(tmp_path):
    write(tmp_path / "MEMORY.md", "a\n" * 20_000)
    hunk = "@@\n" + " a\n" * 200 + "-b\n+c\n"  # 200 lines of context that match everywhere, then a miss
    body = "*** Begin Patch\n*** Update File: MEMORY.md\n" + hunk * 2_000 + "*** End Patch"
    start = time.perf_counter()
    proc = run_guard(codex_input(body, tmp_path))
    elapsed = time.perf_counter() - start
    assert decision(proc) == "deny" and "too costly to check" in reason(proc)
    assert elapsed < 15


def test_many_small_hunks_that_apply_are_judged(tmp_path):
    write(tmp_path / "MEMORY.md", entries(0, 199))
    body = "*** Begin Patch\n*** Update File: MEMORY.md\n" + "".join(
        f"@@\n {entry(i)}\n+{entry(1000 + i)}\n" for i in range(0, 199, 2)
    )
    answer, _ = caps.review(codex_input(body + "*** End Patch", tmp_path).encode(), CLEAN_ENV)
    assert "MEMORY.md would have 299 lines" in answer


def test_guard_imports_patch_only_for_a_patch():
    code = f"""
import io, runpy, sys
sys.argv = [{str(GUARD)!r}]
sys.stdin = io.TextIOWrapper(io.BytesIO(b'{{"tool_name": "Bash", "tool_input": {{"command": "ls"}}}}'))
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
print("autograph.hosts.patch" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=CLEAN_ENV)
    assert proc.stdout.strip() == "False", proc.stderr


# ---------------------------------------------------------------------------
# The parser and the application, as Codex 0.171 does them


def apply(text: str, body: str) -> str:
    (op,) = patch.parse(body)
    return patch.apply_update(text, op.chunks, "f")


def test_update_examples_checked_against_codex():
    update = "*** Begin Patch\n*** Update File: f\n{}\n*** End Patch".format
    assert apply("a\r\nb\r\nc", update("@@\n b\n+x")) == "a\r\nb\r\nx\r\nc\r\n"
    assert apply("a\nb", update("@@\n+x")) == "a\nb\nx\n"
    assert apply("a\n\n", update("@@\n+x")) == "a\n\nx\n"
    assert apply("a\n\n", update("@@\n-\n@@\n+x")) == "a\nx\n"
    assert apply("x \u201cq\u201d y\n", update('@@\n-x "q" y\n+z')) == "z\n"
    assert apply("a\nb\na\n", update("@@\n-a\n+z\n*** End of File")) == "a\nb\nz\n"
    assert apply("a\n \nb\n", update("@@\n a\n\n-b\n+c")) == "a\n \nc\n"  # context lines stay the file's own
    assert apply("a \r\nb\n", update("@@\n a\n-b\n+c")) == "a \r\nc\r\n"
    assert apply("a\rb\n", update("@@\n-b\n+c")) == "a\rc\r"  # a lone CR ends a line
    assert apply("a\n", update("@@ \n-a\n+b")) == "b\n"  # a blank @@ context is none
    assert apply("a\nz\n", update("*** End of File\n-a\n+b")) == "b\nz\n"
    assert apply(" ", update(" ")) == " \n"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("bad", "first line of the patch must be '*** Begin Patch'"),
        ("*** Begin Patch\n*** Add File: a\n+x", "last line of the patch must be '*** End Patch'"),
        ("*** Begin Patch\n*** Update File: f\n*** End Patch", "Update file hunk for path 'f' is empty"),
        ("*** Begin Patch\n*** Update File: f\n\t\n*** End Patch", "Unexpected line found in update hunk"),
        ("*** Begin Patch\n*** Update File: f\n-a\n\t\n*** End Patch", "Expected update hunk to start with a @@"),
        ("*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch", "does not contain any lines"),
        ("*** Begin Patch\n*** Copy File: f\n*** End Patch", "is not a valid hunk header"),
    ],
)
def test_patches_codex_rejects(body, words):
    with pytest.raises(patch.PatchError, match=words.replace("*", r"\*").replace("(", r"\(")):
        patch.parse(body)


def test_a_heredoc_argument_and_markers_with_whitespace_parse():
    ops = patch.parse(
        "<<'EOF'\n  *** Begin Patch \n*** Add File: a.md\n+hi\n*** Delete File: b.md\n*** End Patch\t\nEOF\n"
    )
    assert [(op.kind, op.path, op.contents) for op in ops] == [("add", "a.md", "hi\n"), ("delete", "b.md", "")]


def test_a_move_onto_itself_deletes_the_file_as_codex_does():
    (op,) = patch.parse("*** Begin Patch\n*** Update File: f\n*** Move to: f\n@@\n+b\n*** End Patch")
    after, error = patch.simulate([op], lambda p: p, lambda k: True, lambda k: "a\n", lambda: 10**6)
    assert error is None and after == {"f": None}


def test_the_limit_is_checked_before_the_text_is_built():
    (op,) = patch.parse("*** Begin Patch\n*** Update File: f\n@@\n+" + "x" * 100 + "\n*** End Patch")
    with pytest.raises(patch.Oversize) as caught:
        patch.apply_update("a\n" * 10, op.chunks, "f", limit=50)
    assert caught.value.size > 50


def _patch_text(hunks: list[tuple[list[str], list[str]]]) -> str:
    body = ["*** Begin Patch", "*** Update File: MEMORY.md"]
    for old_lines, new_lines in hunks:
        body.append("@@")
        # lines common to both ends are context; the rest are removed, then added
        lead = 0
        while lead < min(len(old_lines), len(new_lines)) and old_lines[lead] == new_lines[lead]:
            lead += 1
        trail = 0
        while (
            trail < min(len(old_lines), len(new_lines)) - lead
            and old_lines[len(old_lines) - 1 - trail] == new_lines[len(new_lines) - 1 - trail]
        ):
            trail += 1
        body += [" " + line for line in old_lines[:lead]]
        body += ["-" + line for line in old_lines[lead : len(old_lines) - trail]]
        body += ["+" + line for line in new_lines[lead : len(new_lines) - trail]]
        body += [" " + line for line in old_lines[len(old_lines) - trail :]]
    body.append("*** End Patch")
    return "\n".join(body)


line_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line_text, max_size=12), st.lists(line_text, max_size=12))
def test_property_a_whole_file_patch_gives_the_edited_text(old, new):
    """Any text, any replacement: a patch whose one hunk is the whole file
    (context where the two agree) gives the new text, with a final newline."""
    text = "".join(line + "\n" for line in old)
    body = _patch_text([(old, new)])
    if not old and not new:
        return  # nothing to say: Codex rejects an Update without lines
    (op,) = patch.parse(body)
    expected = "".join(line + "\n" for line in new)
    if old and [line.strip(patch.WHITESPACE) for line in old] == [""] * len(old) and not new:
        return  # blank-only old text is matched by the whitespace-insensitive passes elsewhere
    assert patch.apply_update(text, op.chunks, "MEMORY.md") == expected


@st.composite
def edits(draw):
    count = draw(st.integers(0, 30))
    words = draw(st.lists(line_text, min_size=count, max_size=count))
    lines = [f"{i:03d} {word}" for i, word in enumerate(words)]  # distinct lines: each hunk has one place
    hunks, edited, position = [], [], 0
    while position <= len(lines) and draw(st.booleans()):
        start = draw(st.integers(position, len(lines)))
        end = draw(st.integers(start, min(len(lines), start + 4)))
        before = draw(st.integers(0, min(2, start - position)))
        after = draw(st.integers(0, min(2, len(lines) - end)))
        replacement = [f"new {word}" for word in draw(st.lists(line_text, max_size=3))]
        if start == end and not replacement or start - before == end + after:
            break
        edited += lines[position : start - before]
        old_lines = lines[start - before : end + after]
        new_lines = lines[start - before : start] + replacement + lines[end : end + after]
        hunks.append((old_lines, new_lines))
        edited += new_lines
        position = end + after
    edited += lines[position:]
    return lines, hunks, edited


@settings(max_examples=300, deadline=None)
@given(edits(), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_property_random_edits_as_a_patch_give_the_edited_text(case, newline, final):
    """Random text, random edits: the patch made of them (each with up to
    two lines of context), parsed and applied, gives the edited text, in
    the file's own line ending."""
    lines, hunks, edited = case
    if not hunks or not lines:
        return
    text = newline.join(lines) + (newline if final else "")
    if newline not in text:  # one line and no line break: nothing says which ending the file uses
        newline = "\n"
    (op,) = patch.parse(_patch_text(hunks))
    assert patch.apply_update(text, op.chunks, "MEMORY.md") == "".join(line + newline for line in edited)
    after, error = patch.simulate(
        patch.parse(_patch_text(hunks)), lambda p: p, lambda k: True, lambda k: text, lambda: 10**7
    )
    assert error is None and after == {"MEMORY.md": "".join(line + newline for line in edited)}
