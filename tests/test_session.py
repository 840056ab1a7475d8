"""session.py as Claude Code runs it: SessionStart and Stop hooks, a process with the hook's JSON on stdin.

start: no vault, no output; the context's lines (vault, index headroom,
health, the look-up rule) within the budget; CLAUDE_ENV_FILE written once;
the session's record under .graph/sessions/, and what happens when it
cannot be written or the session id is unsafe.  stop: the checkpoint asked
once per session, only after autograph wrote (a journaled run, or the index
changed), never while stop_hook_active, and with --plugin only when the
plugin's option is on.  The budget rule is a hypothesis property; the
bench's measurement runs on a small vault (ratio to ``python -c pass`` <= 3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from autograph.hosts import session
from conftest import REPO, SCRIPTS
from hypothesis import given
from hypothesis import strategies as st

SESSION = SCRIPTS / "session.py"
CARD = SCRIPTS / "card.py"
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRAPH_", "CLAUDE_"))}


def run_session(*args, stdin: bytes | str = b"", env: dict | None = None, cwd: Path | None = None):
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    return subprocess.run(
        [sys.executable, str(SESSION), *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=30,
        env={**CLEAN_ENV, **(env or {})},
        cwd=cwd,
    )


def start_input(cwd: Path, sid="s-1", source="startup") -> bytes:
    data = {"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd)}
    return json.dumps({**data, "hook_event_name": "SessionStart", "source": source}).encode()


def stop_input(cwd: Path, sid="s-1", active=False, event="Stop") -> bytes:
    data = {"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd), "permission_mode": "default"}
    return json.dumps(
        {**data, "hook_event_name": event, "stop_hook_active": active, "last_assistant_message": "ok"}
    ).encode()


def notes_of(proc) -> list[str]:
    lines = proc.stderr.decode("utf-8").splitlines()
    assert all(line.startswith("session.py:") for line in lines), lines
    return lines


def context(proc) -> str:
    """The additionalContext, after checking the shape: exit 0, one JSON
    object on one line, exactly the SessionStart keys, every line tagged."""
    assert proc.returncode == 0, proc.stderr
    notes_of(proc)
    out = proc.stdout.decode("utf-8")
    assert out.count("\n") == 1 and out.endswith("\n"), out
    answer = json.loads(out)
    assert set(answer) == {"hookSpecificOutput"}
    spec = answer["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "additionalContext"} and spec["hookEventName"] == "SessionStart"
    text = spec["additionalContext"]
    assert text and all(line.startswith("autograph: ") for line in text.split("\n")), text
    return text


def silent(proc) -> None:
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""
    notes_of(proc)


def decision(proc) -> str:
    """The Stop answer's reason, after checking its shape."""
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert out.count("\n") == 1 and out.endswith("\n"), out
    answer = json.loads(out)
    assert set(answer) == {"decision", "reason"} and answer["decision"] == "block"
    assert answer["reason"].startswith("autograph: ")
    return answer["reason"]


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "memory").mkdir()
    (root / "memory" / "MEMORY.md").write_text("# Memory\n\n- [Dana](dana.md) — the COO\n", encoding="utf-8")
    (root / "people" / "team").mkdir(parents=True)
    return root


def record_path(root: Path, sid="s-1") -> Path:
    return root / ".graph" / "sessions" / f"{sid}.json"


def write_schema(root: Path, data: dict) -> None:
    (root / "schema.json").write_text(json.dumps(data), encoding="utf-8")


def history(root: Path, *entries) -> Path:
    (root / ".graph").mkdir(exist_ok=True)
    path = root / ".graph" / "health-history.jsonl"
    path.write_text("".join(e if isinstance(e, str) else json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def entry(score, broken=0, invalid=0, when="2026-11-20T09:00:00+01:00") -> dict:
    return {
        "time": when,
        "score": score,
        "notes": 10,
        "links": 30,
        "broken_links": broken,
        "invalid_frontmatter": invalid,
    }


# ---------------------------------------------------------------------------
# start: where, and what it says


def test_no_vault_and_no_store_means_no_output_at_all(tmp_path):
    plain = tmp_path / "code"
    plain.mkdir()
    proc = run_session("start", stdin=start_input(plain), cwd=plain)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert not (plain / ".graph").exists()


def test_the_vault_is_found_upward_from_the_hook_cwd(vault, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    text = context(run_session("start", stdin=start_input(vault / "people" / "team"), cwd=elsewhere))
    lines = text.split("\n")
    assert lines[0] == f"autograph: vault {vault} (pass it to scripts as --vault)"
    size = (vault / "memory" / "MEMORY.md").stat().st_size
    assert lines[1] == (
        f"autograph: index memory/MEMORY.md: 3 lines / {size} bytes (soft 160 / 20,000, hard 200 / 25,000, "
        "compact to under 140 / 17,500)"
    )
    assert lines[2].startswith("autograph: no health run yet")
    assert lines[3].startswith(f"autograph: look a subject up before writing: python3 {SCRIPTS / 'card.py'} remember")
    assert len(text.encode("utf-8")) <= 600


def test_the_vault_from_claude_project_dir_and_from_the_environment(vault, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    text = context(run_session("start", stdin=start_input(plain), env={"CLAUDE_PROJECT_DIR": str(vault)}))
    assert f"autograph: vault {vault} " in text
    text = context(run_session("start", stdin=start_input(plain), env={"AUTOGRAPH_VAULT": str(vault)}))
    assert f"autograph: vault {vault} (set as AUTOGRAPH_VAULT in your shell)" in text  # it has it already


def test_a_named_vault_that_is_no_folder_says_so_and_answers_nothing(tmp_path):
    proc = run_session("start", "--vault", tmp_path / "gone", stdin=start_input(tmp_path))
    assert proc.returncode == 0 and proc.stdout == b""
    assert notes_of(proc) == [f"session.py: --vault {tmp_path / 'gone'} is not a folder"]


def test_a_store_without_a_vault_is_sized_and_holds_the_record(tmp_path):
    project = tmp_path / "code"
    store = project / "memory"
    store.mkdir(parents=True)
    (store / "MEMORY.md").write_text("- one\n- two\n", encoding="utf-8")
    text = context(run_session("start", "--store", store, stdin=start_input(project)))
    assert f"autograph: memory store {store} (no vault)" in text
    assert "autograph: index MEMORY.md: 2 lines / 12 bytes" in text  # the store line names its folder
    assert "health" not in text  # a store has no health history
    assert record_path(store).is_file()


def test_the_schema_names_the_store_and_its_index(vault):
    write_schema(vault, {"memory": {"folder": ".memory", "index": "INDEX.md"}})
    (vault / ".memory").mkdir()
    (vault / ".memory" / "INDEX.md").write_text("- a\n", encoding="utf-8")
    text = context(run_session("start", stdin=start_input(vault)))
    assert "autograph: index .memory/INDEX.md: 1 line / 4 bytes" in text
    record = json.loads(record_path(vault).read_text())
    assert record["index"]["path"] == str(vault / ".memory" / "INDEX.md")


def test_a_vault_without_a_store_says_nothing_of_an_index(vault):
    (vault / "memory" / "MEMORY.md").unlink()
    (vault / "memory").rmdir()
    text = context(run_session("start", stdin=start_input(vault)))
    assert "index" not in text
    (vault / "memory").mkdir()  # a store folder without its index yet
    text = context(run_session("start", stdin=start_input(vault)))
    assert "autograph: index memory/MEMORY.md does not exist yet" in text


def test_a_schema_that_is_not_json_falls_back_to_the_defaults(vault):
    (vault / "schema.json").write_text("{not json", encoding="utf-8")
    proc = run_session("start", stdin=start_input(vault))
    assert "autograph: index memory/MEMORY.md: 3 lines" in context(proc)
    assert any("cannot be used" in note for note in notes_of(proc))


# ---------------------------------------------------------------------------
# start: the index against its caps


def index_of(vault: Path, lines: int) -> None:
    text = "".join(f"- [Topic {i}](topic-{i}.md) — one line\n" for i in range(lines))
    (vault / "memory" / "MEMORY.md").write_text(text, encoding="utf-8")


def test_an_index_at_its_soft_cap_is_named_and_told_to_compact(vault):
    index_of(vault, 170)
    text = context(run_session("start", stdin=start_input(vault)))
    line = next(line for line in text.split("\n") if line.startswith("autograph: index"))
    assert line.startswith("autograph: index memory/MEMORY.md reached its soft cap: 170 lines / ")
    assert line.endswith("compact it to under 140 lines / 17,500 bytes")


def test_an_index_over_its_hard_cap_is_named_first_among_the_facts(vault):
    index_of(vault, 230)
    full = context(run_session("start", stdin=start_input(vault))).split("\n")
    over, rule = full[1], full[-1]
    assert over.startswith("autograph: index memory/MEMORY.md is over its hard cap: 230 lines / ")
    assert over.endswith("compact it to under 140 lines / 17,500 bytes now")
    room = len(over.encode()) + len(rule.encode()) + 1 + len(full[0].encode())  # not quite the vault's line too
    write_schema(vault, {"session": {"budget_tokens": room // 4}})
    assert context(run_session("start", stdin=start_input(vault))).split("\n") == [over, rule]


def test_the_schema_and_environment_caps_are_used(vault):
    index_of(vault, 30)
    write_schema(vault, {"index": {"soft": {"lines": 20}, "hard": {"lines": 40}}})
    text = context(run_session("start", stdin=start_input(vault)))
    assert "reached its soft cap: 30 lines" in text and "hard 40 / 25,000" in text
    text = context(run_session("start", stdin=start_input(vault), env={"AUTOGRAPH_INDEX_HARD_LINES": "25"}))
    assert "is over its hard cap: 30 lines" in text


def test_an_index_that_is_a_fifo_is_never_waited_on(vault):
    (vault / "memory" / "MEMORY.md").unlink()
    os.mkfifo(vault / "memory" / "MEMORY.md")
    text = context(run_session("start", stdin=start_input(vault)))
    assert "autograph: index memory/MEMORY.md cannot be sized (is a FIFO" in text


# ---------------------------------------------------------------------------
# start: health


def test_no_health_run_yet(vault):
    assert "autograph: no health run yet" in context(run_session("start", stdin=start_input(vault)))


def test_the_last_score_and_its_change_since_the_run_before(vault):
    history(vault, entry(71.0), entry(80.0, broken=9), entry(82.5, broken=3, invalid=2))
    text = context(run_session("start", stdin=start_input(vault)))
    assert (
        "autograph: health 82.5/100 on 2026-11-20, +2.5 since the run before; broken links 3, invalid frontmatter 2"
    ) in text


def test_one_run_has_no_change_and_damaged_lines_are_skipped(vault):
    history(vault, entry(64.0, broken=1), "not json\n", '{"score": NaN}\n', '{"score": "high"}\n', "[1]\n")
    text = context(run_session("start", stdin=start_input(vault)))
    assert "autograph: health 64/100 on 2026-11-20; broken links 1, invalid frontmatter 0" in text
    history(vault, entry(90.0), entry(87.25), '{"time": "2026-11-21", "score": 85')  # a last line cut by a crash
    text = context(run_session("start", stdin=start_input(vault, sid="s-2")))
    assert "autograph: health 87.2/100 on 2026-11-20, -2.8 since the run before; broken links 0" in text


def test_only_the_end_of_a_long_history_is_read(vault, monkeypatch):
    lines = [json.dumps(entry(50 + i % 40, broken=i % 7)) + "\n" for i in range(40000)]
    path = history(vault, *lines)
    assert path.stat().st_size > 2 * (1 << 20)
    read = []
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: read.append(n) or real(fd, n, at))
    found = session.health_tail(str(vault))
    assert [e["score"] for e in found] == [50 + 39999 % 40, 50 + 39998 % 40]
    assert sum(read) <= 1 << 16


def test_a_history_of_one_huge_line_then_garbage_is_read_within_the_limit(vault, monkeypatch):
    history(vault, entry(70.0), "x" * (3 << 20) + "\n")
    read = []
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: read.append(n) or real(fd, n, at))
    assert session.health_tail(str(vault)) == []  # the good line is past the most read: no history shown
    assert max(read) <= 1 << 20


# ---------------------------------------------------------------------------
# start: the budget


def test_the_default_budget_is_150_tokens(vault, tmp_path):
    index_of(vault, 170)
    history(vault, entry(80.0), entry(81.0, broken=12, invalid=3))
    text = context(run_session("start", stdin=start_input(vault)))
    assert len(text.encode("utf-8")) <= 600 and len(text.split("\n")) == 4  # a usual path: all of it
    deep = tmp_path / ("a-folder-with-a-rather-long-name-" * 4) / "vault"
    deep.parent.mkdir()
    vault.rename(deep)
    text = context(run_session("start", stdin=start_input(deep)))
    assert len(text.encode("utf-8")) <= 600
    assert "look a subject up" in text and "soft cap" in text  # the most important lines stay
    assert "health" not in text


def test_a_small_budget_drops_whole_lines_least_important_first(vault):
    history(vault, entry(80.0), entry(81.0))
    full = context(run_session("start", stdin=start_input(vault))).split("\n")
    assert [line.split()[1] for line in full] == ["vault", "index", "health", "look"]
    # health goes first, then the index's headroom, then the vault; the rule stays
    for kept in (full, [full[0], full[1], full[3]], [full[0], full[3]], [full[3]]):
        size = len("\n".join(kept).encode("utf-8"))
        tokens = -(-size // 4)  # just enough: 4 bytes a token, rounded up
        write_schema(vault, {"session": {"budget_tokens": tokens}})
        text = context(run_session("start", stdin=start_input(vault)))
        assert text.split("\n") == kept
        assert len(text.encode("utf-8")) <= tokens * 4


def test_a_tiny_budget_cuts_the_rule_between_words_or_says_nothing(vault):
    write_schema(vault, {"session": {"budget_tokens": 10}})
    text = context(run_session("start", stdin=start_input(vault)))
    assert len(text.encode("utf-8")) <= 40 and text.endswith(" …")
    assert "autograph: look a subject up before writing:".startswith(text[: -len(" …")])
    write_schema(vault, {"session": {"budget_tokens": 3}})
    proc = run_session("start", stdin=start_input(vault))
    silent(proc)
    assert record_path(vault).is_file()  # recorded all the same


@pytest.mark.parametrize("bad", [0, -5, "150", 1.5, True, None])
def test_a_budget_that_is_no_positive_whole_number_is_the_default_with_a_note(vault, bad):
    write_schema(vault, {"session": {"budget_tokens": bad}})
    proc = run_session("start", stdin=start_input(vault))
    assert "look a subject up" in context(proc)
    if bad is not None:
        assert any("session.budget_tokens" in note for note in notes_of(proc))


def test_the_session_key_is_valid_schema(vault):
    from autograph.schema.model import load_schema, validate
    from jsonschema import Draft202012Validator

    json_schema = json.loads((REPO / "skills" / "autograph" / "schema.schema.json").read_text(encoding="utf-8"))
    good = {"session": {"budget_tokens": 200, "_comment": "a short start"}}
    assert validate(good) == [] and not list(Draft202012Validator(json_schema).iter_errors(good))
    write_schema(vault, good)
    load_schema(vault)
    for bad in ({"session": {"budget_tokens": 0}}, {"session": {"budget": 9}}, {"session": 150}):
        assert validate(bad), bad
        assert list(Draft202012Validator(json_schema).iter_errors(bad)), bad


def _lines_strategy():
    word = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Zs", "Cc"]), min_size=1, max_size=12)
    text = st.lists(word, min_size=1, max_size=12).map(lambda words: "autograph: " + " ".join(words))
    return st.lists(st.tuples(st.integers(0, 4), text), max_size=6)


@given(_lines_strategy(), st.integers(1, 400))
def test_fit_keeps_the_most_important_lines_whole_in_order_within_the_budget(lines, budget):
    kept = session.fit(lines, budget)
    assert len("\n".join(kept).encode("utf-8")) <= budget
    ranked = sorted(range(len(lines)), key=lambda i: (lines[i][0], i))
    whole = [text for _, text in lines]
    if kept and kept[-1].endswith(" …") and kept[-1] not in whole:
        # cut: only when the most important line alone does not fit; whole words, at least one after the tag
        assert len(kept) == 1 and len(lines[ranked[0]][1].encode("utf-8")) > budget
        words = kept[0][: -len(" …")].split(" ")
        assert lines[ranked[0]][1].split(" ")[: len(words)] == words and len(words) >= 2
        return
    count = len(kept)
    chosen = sorted(ranked[:count])
    assert kept == [lines[i][1] for i in chosen]  # the top `count` by importance, in the order shown
    if count < len(lines):  # one more would not fit
        more = sorted(ranked[: count + 1])
        assert len("\n".join(lines[i][1] for i in more).encode("utf-8")) > budget


# ---------------------------------------------------------------------------
# start: CLAUDE_ENV_FILE


def test_the_env_file_gets_the_vault_once_per_session(vault, tmp_path):
    env_file = tmp_path / "env" / "hook.sh"
    env_file.parent.mkdir()
    env_file.write_text("export OTHER=1", encoding="utf-8")  # no final newline
    env = {"CLAUDE_ENV_FILE": str(env_file)}
    for source in ("startup", "resume", "compact"):
        text = context(run_session("start", stdin=start_input(vault, source=source), env=env))
        assert "(set as AUTOGRAPH_VAULT in your shell)" in text
    assert env_file.read_text() == f"export OTHER=1\nexport AUTOGRAPH_VAULT={vault}\n"
    result = subprocess.run(["sh", "-c", f'. {env_file}; printf %s "$AUTOGRAPH_VAULT"'], capture_output=True)
    assert result.stdout.decode() == str(vault)


def test_the_env_file_quotes_the_path_for_the_shell(tmp_path):
    odd = tmp_path / "it's a vault $HOME"
    (odd / ".obsidian").mkdir(parents=True)
    env_file = tmp_path / "env.sh"  # absent: created
    context(run_session("start", stdin=start_input(odd), env={"CLAUDE_ENV_FILE": str(env_file)}))
    result = subprocess.run(["sh", "-c", f'. {env_file}; printf %s "$AUTOGRAPH_VAULT"'], capture_output=True)
    assert result.stdout.decode() == str(odd)


def test_an_env_file_that_is_a_fifo_is_never_waited_on(vault, tmp_path):
    fifo = tmp_path / "env.fifo"
    os.mkfifo(fifo)
    reader_done = threading.Event()

    def reader():  # with a reader, a write would succeed: it must still be refused
        with open(fifo, "rb") as handle:
            handle.read()
        reader_done.set()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    time.sleep(0.05)
    proc = run_session("start", stdin=start_input(vault), env={"CLAUDE_ENV_FILE": str(fifo)})
    text = context(proc)
    assert "(pass it to scripts as --vault)" in text
    assert any("CLAUDE_ENV_FILE" in note and "not a regular file" in note for note in notes_of(proc))
    with open(fifo, "wb"):
        pass  # let the reader go
    thread.join(5)


# ---------------------------------------------------------------------------
# start: the record


def test_the_start_is_recorded_with_the_journal_and_the_index(vault):
    (vault / ".graph" / "journal" / "20260101T000000.000000Z-1-aaaaaa").mkdir(parents=True)
    context(run_session("start", stdin=start_input(vault)))
    record = json.loads(record_path(vault).read_text())
    assert record["session"] == "s-1" and record["source"] == "startup" and record["checkpoint"] is None
    assert record["journal"] == {"newest": "20260101T000000.000000Z-1-aaaaaa", "runs": 1}
    info = (vault / "memory" / "MEMORY.md").stat()
    assert record["index"]["stat"]["size"] == info.st_size and record["index"]["stat"]["mtime_ns"] == info.st_mtime_ns
    # a resume keeps the start as it was
    before = record_path(vault).read_text()
    context(run_session("start", stdin=start_input(vault, source="resume")))
    again = json.loads(record_path(vault).read_text())
    assert again["started"] == record["started"] and again["journal"] == record["journal"]
    assert [r["source"] for r in again["resumed"]] == ["resume"]
    assert before != record_path(vault).read_text()


def test_old_records_are_pruned_and_recent_ones_kept(vault):
    folder = vault / ".graph" / "sessions"
    folder.mkdir(parents=True)
    old, recent, other = folder / "old.json", folder / "recent.json", folder / "notes.txt"
    for path in (old, recent, other):
        path.write_text("{}")
    eight_days = time.time() - 8 * 86400
    os.utime(old, (eight_days, eight_days))
    os.utime(other, (eight_days, eight_days))
    context(run_session("start", stdin=start_input(vault)))
    assert not old.exists() and recent.exists() and other.exists() and record_path(vault).exists()


@pytest.mark.parametrize(
    "sid", ["../escape", "a/b", "a\\b", ".hidden", "x" * 129, "", "nul\x00byte", 42, ["s"]], ids=repr
)
def test_an_unsafe_session_id_is_not_recorded_but_the_context_is_given(vault, tmp_path, sid):
    proc = run_session("start", stdin=start_input(vault, sid=sid))
    assert "look a subject up" in context(proc)
    if sid != "":  # an empty id is no id
        assert any("session id" in note for note in notes_of(proc))
    sessions = vault / ".graph" / "sessions"
    assert not sessions.exists() or list(sessions.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vault"]


def test_a_graph_folder_that_cannot_hold_the_record_is_a_note(vault):
    (vault / ".graph").mkdir()
    (vault / ".graph" / "sessions").write_text("not a folder")
    proc = run_session("start", stdin=start_input(vault))
    assert "look a subject up" in context(proc)
    assert any("cannot be recorded" in note for note in notes_of(proc))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through chmod; the next test covers it")
def test_a_read_only_graph_folder_is_a_note(vault):
    (vault / ".graph").mkdir()
    (vault / ".graph").chmod(0o555)
    try:
        proc = run_session("start", stdin=start_input(vault))
        assert "look a subject up" in context(proc)
        assert any("cannot be recorded" in note for note in notes_of(proc))
    finally:
        (vault / ".graph").chmod(0o755)


def test_a_read_only_file_system_is_a_note(vault, monkeypatch):
    from autograph.write import replace

    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(replace, "replace_file", refuse)
    out, notes = session.start(start_input(vault), scripts=str(SCRIPTS), environ={})
    assert "look a subject up" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert notes and "Read-only file system" in notes[-1] and notes[-1].startswith("session.py: ")


# ---------------------------------------------------------------------------
# start: input


@pytest.mark.parametrize("payload", [b"not json", b"[1, 2]", b"\xff\xfe", b'{"a": ' * 2000])
def test_bad_input_means_no_output_and_one_line(vault, payload):
    proc = run_session("start", stdin=payload, cwd=vault)
    assert proc.returncode == 0 and proc.stdout == b""
    assert len(notes_of(proc)) == 1


def test_no_input_reads_the_current_folder(vault):
    text = context(run_session("start", stdin=b"", cwd=vault / "people"))
    assert f"autograph: vault {vault} " in text
    assert not (vault / ".graph" / "sessions").exists()  # no session id, no record


def test_start_imports_neither_argparse_nor_the_command_line_helpers(vault, tmp_path):
    out = tmp_path / "modules.txt"
    code = (
        "import runpy, sys\n"
        "out, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]\n"
        "before = set(sys.modules)\n"
        "sys.argv = [script, *args]\n"
        "try:\n"
        "    runpy.run_path(script, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "open(out, 'w').write('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    for args in (["start"], ["start", "--vault", str(vault), "--json"]):
        proc = subprocess.run(
            [sys.executable, "-c", code, str(out), str(SESSION), *args],
            input=start_input(vault),
            capture_output=True,
            timeout=30,
            env=CLEAN_ENV,
        )
        assert "look a subject up" in context(proc)
        modules = set(out.read_text().split())
        assert "autograph.hosts.session" in modules
        assert not modules & {"argparse", "autograph.cli", "sqlite3", "hashlib"}
        assert not {m for m in modules if m.startswith(("autograph.graph", "autograph.memory", "autograph.schema"))}
        assert "autograph.read.index" not in modules and "autograph.read.note" not in modules


def test_help_lists_the_keys_and_the_registration():
    proc = run_session("--help")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    for needed in ("hookSpecificOutput", "additionalContext", '"decision": "block"', "session.budget_tokens"):
        assert needed in out
    assert "startup|resume|clear|compact" in out and "CLAUDE_PLUGIN_OPTION_CHECKPOINT" in out
    assert run_session().returncode == 2
    assert run_session("start", "--what").returncode == 2
    assert run_session("stop", "--schema", "x").returncode == 2  # stop reads no schema


# ---------------------------------------------------------------------------
# stop


def started(vault: Path, sid="s-1", **env) -> None:
    context(run_session("start", stdin=start_input(vault, sid=sid), env=env))
    assert record_path(vault, sid).is_file()


def remember(vault: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(CARD), "remember", "person", "Dana Reyes", "email=dana@acme.com", "--vault", str(vault)],
        capture_output=True,
        timeout=60,
        env=CLEAN_ENV,
    )
    assert proc.returncode == 0, proc.stderr


def test_no_writes_since_the_start_means_nothing_to_ask(vault):
    remember(vault)  # before the session: not its write
    started(vault)
    silent(run_session("stop", stdin=stop_input(vault)))
    assert json.loads(record_path(vault).read_text())["checkpoint"] is None


def test_a_journaled_run_since_the_start_asks_once_per_session(vault):
    started(vault)
    remember(vault)
    reason = decision(run_session("stop", stdin=stop_input(vault / "people")))
    assert "since this session started, 1 autograph run wrote 1 file (Dana Reyes.md)" in reason
    assert "Report to the user what you added, updated and retired" in reason
    assert f"python3 {SCRIPTS / 'check.py'} {vault / 'memory' / 'MEMORY.md'}" in reason
    assert json.loads(record_path(vault).read_text())["checkpoint"]["runs"] == 1
    remember(vault)
    silent(run_session("stop", stdin=stop_input(vault)))  # once
    # another session asks for its own
    started(vault, sid="s-2")
    (vault / "memory" / "MEMORY.md").write_text("- changed\n")
    assert "the index memory/MEMORY.md changed" in decision(run_session("stop", stdin=stop_input(vault, sid="s-2")))


def test_an_index_change_since_the_start_asks(vault):
    started(vault)
    path = vault / "memory" / "MEMORY.md"
    path.write_text(path.read_text() + "- [Lee](lee.md) — the CTO\n")
    reason = decision(run_session("stop", stdin=stop_input(vault)))
    assert "since this session started, the index memory/MEMORY.md changed" in reason


def test_an_index_created_since_the_start_asks(vault):
    (vault / "memory" / "MEMORY.md").unlink()
    started(vault)
    (vault / "memory" / "MEMORY.md").write_text("- new\n")
    assert "changed" in decision(run_session("stop", stdin=stop_input(vault)))


def test_stop_hook_active_another_event_or_no_record_means_nothing(vault):
    started(vault)
    remember(vault)
    silent(run_session("stop", stdin=stop_input(vault, active=True)))
    for event in ("SubagentStop", "PreCompact", "SessionStart", None):
        silent(run_session("stop", stdin=stop_input(vault, event=event)))
    silent(run_session("stop", stdin=stop_input(vault, sid="never-started")))
    silent(run_session("stop", stdin=b"", cwd=vault))  # no input: no event
    assert json.loads(record_path(vault).read_text())["checkpoint"] is None
    assert decision(run_session("stop", stdin=stop_input(vault)))  # still asks, once


def test_bad_stop_input_means_no_output_and_one_line(vault):
    proc = run_session("stop", stdin=b"{oops", cwd=vault)
    assert proc.returncode == 0 and proc.stdout == b"" and len(notes_of(proc)) == 1
    silent(run_session("stop", stdin=stop_input(vault, sid="../../etc")))


@pytest.mark.parametrize("option, asks", [(None, False), ("false", False), ("0", False), ("true", True), ("1", True)])
def test_plugin_asks_only_when_the_option_is_on(vault, option, asks):
    started(vault)
    remember(vault)
    env = {} if option is None else {"CLAUDE_PLUGIN_OPTION_CHECKPOINT": option}
    proc = run_session("stop", "--plugin", stdin=stop_input(vault), env=env)
    if asks:
        assert decision(proc)
    else:
        silent(proc)
        assert decision(run_session("stop", stdin=stop_input(vault), env=env))  # without --plugin it always acts


def test_stop_finds_the_record_from_the_project_when_the_cwd_moved(vault, tmp_path):
    started(vault)
    remember(vault)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    assert decision(run_session("stop", stdin=stop_input(elsewhere), env={"CLAUDE_PROJECT_DIR": str(vault)}))


def test_a_record_that_cannot_be_marked_means_no_question(vault, monkeypatch):
    started(vault)
    (vault / "memory" / "MEMORY.md").write_text("- changed\n")
    from autograph.write import replace

    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(replace, "replace_file", refuse)
    out, notes = session.stop(stop_input(vault), scripts=str(SCRIPTS), environ={})
    assert out == "" and "no checkpoint asked" in notes[0]


def test_a_store_session_asks_about_its_index(tmp_path):
    store = tmp_path / "code" / "memory"
    store.mkdir(parents=True)
    (store / "MEMORY.md").write_text("- one\n")
    context(run_session("start", "--store", store, stdin=start_input(tmp_path / "code")))
    (store / "MEMORY.md").write_text("- one\n- two\n")
    reason = decision(run_session("stop", "--store", store, stdin=stop_input(tmp_path / "code")))
    assert "the index MEMORY.md changed" in reason and str(store / "MEMORY.md") in reason


def test_an_empty_name_is_bad_usage(vault):
    for option in ("--vault", "--store", "--schema"):
        proc = run_session("start", f"{option}=", stdin=start_input(vault))
        assert proc.returncode == 2 and b"is empty" in proc.stderr and proc.stdout == b""


# ---------------------------------------------------------------------------
# speed


def test_start_costs_at_most_three_times_a_bare_python(tmp_path):
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import session_start as bench
        from common import bench_env
    finally:
        sys.path.remove(str(REPO / "bench"))
    vault = tmp_path / "vault"
    bench.build(vault, 300, history=5000, runs=50)
    tries = []
    for _ in range(3):  # wall time on a shared machine: another attempt when a burst of load hit this one
        result = bench.measure(vault, 9, bench_env(tmp_path), tmp_path)
        assert "autograph: health " in result["context"] and "look a subject up" in result["context"]
        assert result["cpu_ratio"] <= 3, result  # the CPU the hook spends: steady whatever the load
        tries.append(result)
        if result["ratio"] <= 3:
            break
    assert min(r["ratio"] for r in tries) <= 3, tries


def test_init_s_start_says_when_the_plugin_is_enabled_too(vault, tmp_path):
    """The plugin's hooks step aside for init.py's, but Claude Code lists
    both skills: init's session start says how to keep one install."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    env = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(vault)}
    assert "installed twice" not in context(run_session("start", stdin=start_input(vault), env=env))
    (home / ".claude" / "settings.json").write_text('{"enabledPlugins": {"autograph@autograph": true}}')
    told = context(run_session("start", stdin=start_input(vault, sid="s-2"), env=env))
    assert "installed twice" in told and "init.py claude --user" in told  # these scripts are not in the vault
    plugin = {**env, "CLAUDE_PLUGIN_ROOT": str(tmp_path)}  # the plugin's own hook never says so
    assert "installed twice" not in context(run_session("start", stdin=start_input(vault, sid="s-3"), env=plugin))


def test_the_store_claude_code_loads_is_found_without_a_vault(tmp_path):
    """The plugin's hook names no store: it finds the one Claude Code loads,
    through autoMemoryDirectory (init.py writes it) or Claude Code's own
    folder for the project; control characters in a path never start a line."""
    from autograph.hosts import claude_memory

    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "code\nproject"
    project.mkdir()
    env = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
    assert run_session("start", stdin=start_input(project), env=env).stdout == b""  # no vault, no store
    own = claude_memory.project_memory_dir(project, env)
    own.mkdir(parents=True)
    (own / "MEMORY.md").write_text("- [A](a.md) — a\n")
    told = context(run_session("start", stdin=start_input(project, sid="s-2"), env=env))
    assert "1 line / 18 bytes" in told and all(line.startswith("autograph:") for line in told.splitlines())
    store = tmp_path / "store"
    store.mkdir()
    (store / "MEMORY.md").write_text("- [A](a.md) — a\n- [B](b.md) — b\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": str(store)}))
    told = context(run_session("start", stdin=start_input(project, sid="s-3"), env=env))
    assert f"memory store {store}" in told and "2 lines" in told
