"""Faults found by testing init.py, guard.py and check.py against hostile files.

* An install record that names paths outside the skill folder (it may come
  with a clone: ``.claude/`` is often committed) is refused, nothing removed.
* A settings.json, AGENTS.md, install record or index that is a FIFO or a
  device never hangs a command: init refuses it, check reports it, the guard
  lets the call through and says why.
* A symlinked settings.json or AGENTS.md whose target's folder does not
  exist is refused; no folder is ever created where a link points.
* A settings.json nested ~1000 levels deep is a clear refusal; one with a
  UTF-8 BOM is edited with the BOM kept byte for byte.
* Tool input the host rejects (insert_line Infinity, replace_all "false")
  never gives an internal error or a deny: it passes with a note.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from autograph.hosts import caps, wiring
from autograph.read import size as read_size
from conftest import SCRIPTS

INIT = SCRIPTS / "init.py"
GUARD = SCRIPTS / "guard.py"
CHECK = SCRIPTS / "check.py"
OURS = "autograph/scripts/guard.py"
TIMEOUT = 20  # a hang shows as subprocess.TimeoutExpired, never as a stuck run
CLEAN_ENV = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith("AUTOGRAPH_INDEX_") and k not in ("CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR")
}


def run(script: Path, *args, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT,
        env={**CLEAN_ENV, **(env or {})},
    )


def text(proc) -> str:
    return proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")


def snapshot(root: Path) -> dict:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), root)] = "dir"
        for name in files:
            path = Path(folder) / name
            info = path.lstat()
            out[os.path.relpath(path, root)] = (
                path.read_bytes() if stat.S_ISREG(info.st_mode) else stat.S_IFMT(info.st_mode),
                stat.S_IMODE(info.st_mode),
            )
    return out


def skill_dir(project: Path) -> Path:
    return project / ".claude" / "skills" / "autograph"


def our_groups(settings: dict) -> list:
    return [
        g
        for g in settings.get("hooks", {}).get("PreToolUse", [])
        if any(OURS in h.get("command", "") for h in g.get("hooks", []))
    ]


def char_device(path: Path) -> Path:
    """A character device like /dev/zero at ``path`` (root only; never the
    machine's /dev)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    except OSError as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return path


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# App\n")
    return root


def installed(project: Path) -> Path:
    proc = run(INIT, "claude", "--project", project)
    assert proc.returncode == 0, text(proc)
    return skill_dir(project) / wiring.RECORD


def edit_record(record: Path, change) -> None:
    data = json.loads(record.read_text())
    change(data)
    record.write_text(json.dumps(data, indent=2))


# ---------------------------------------------------------------------------
# 1. Paths from the install record are confined


@pytest.mark.parametrize(
    "name",
    ["../../../victim.txt", "scripts/../../../../victim.txt", "ABSOLUTE", "..\\..\\..\\victim.txt"],
    ids=["dotdot", "dotdot-inside", "absolute", "backslash-dotdot"],
)
def test_a_record_naming_a_file_outside_the_skill_folder_is_refused_and_nothing_removed(project, name):
    victim = project / "victim.txt"
    victim.write_text("victim\n")
    record = installed(project)
    name = str(victim) if name == "ABSOLUTE" else name
    edit_record(record, lambda d: d["files"].__setitem__(name, hashlib.sha256(b"victim\n").hexdigest()))
    before = snapshot(project)
    for args in (("--uninstall",), ()):
        proc = run(INIT, "claude", "--project", project, *args)
        assert proc.returncode == 2, text(proc)
        assert "Traceback" not in text(proc)
        assert "install record" in text(proc) and json.dumps(name) in text(proc)
        assert snapshot(project) == before  # nothing removed or written
    assert victim.read_text() == "victim\n"


@pytest.mark.parametrize("name", ["src", "ABSOLUTE", "../outside", ".claude/../src"])
def test_a_record_naming_a_folder_init_never_creates_is_refused(project, tmp_path, name):
    (project / "src").mkdir()
    (tmp_path / "outside").mkdir()
    record = installed(project)
    name = str(tmp_path / "outside") if name == "ABSOLUTE" else name
    edit_record(record, lambda d: d["dirs"].append(name))
    proc = run(INIT, "claude", "--project", project, "--uninstall")
    assert proc.returncode == 2 and "dirs" in text(proc), text(proc)
    assert (project / "src").is_dir() and (tmp_path / "outside").is_dir()
    assert record.is_file()


def test_a_record_file_behind_a_symlink_out_of_the_skill_folder_is_kept(project, tmp_path):
    """A link in the skill folder is the folder's state, not the record's:
    the file it leads to is never removed, the rest is uninstalled."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("victim\n")
    record = installed(project)
    (skill_dir(project) / "out").symlink_to(outside, target_is_directory=True)
    edit_record(record, lambda d: d["files"].__setitem__("out/victim.txt", hashlib.sha256(b"victim\n").hexdigest()))
    proc = run(INIT, "claude", "--project", project, "--uninstall", "--json")
    assert proc.returncode == 0, text(proc)
    [action] = [a for a in json.loads(proc.stdout)["actions"] if a["path"].endswith("out/victim.txt")]
    assert action["action"] == "kept" and "symbolic link" in action["note"]
    assert (outside / "victim.txt").read_text() == "victim\n"


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("index", "../../elsewhere/MEMORY.md"),
        lambda d: d["edits"][".claude/settings.json"].__setitem__("original", 5),
        lambda d: d["files"].__setitem__("", "0" * 64),
    ],
    ids=["index-dotdot", "edit-original-not-text", "empty-name"],
)
def test_other_bad_record_entries_are_refused_without_a_traceback(project, change):
    record = installed(project)
    edit_record(record, change)
    before = snapshot(project)
    proc = run(INIT, "claude", "--project", project, "--uninstall")
    assert proc.returncode == 2 and "install record" in text(proc), text(proc)
    assert "Traceback" not in text(proc)
    assert snapshot(project) == before


def test_a_good_record_still_uninstalls_everything(project):
    installed(project)
    proc = run(INIT, "claude", "--project", project, "--uninstall")
    assert proc.returncode == 0, text(proc)
    assert not (project / ".claude").exists()


# ---------------------------------------------------------------------------
# 2. FIFOs and devices never hang a command


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("host", "config"), [("claude", ".claude/settings.json"), ("codex", "AGENTS.md")], ids=["settings", "agents"]
)
def test_init_refuses_a_fifo_config_without_hanging(project, host, config):
    fifo(project / config)
    before = snapshot(project)
    for args in ((), ("--uninstall",)):
        proc = run(INIT, host, "--project", project, *args)
        assert proc.returncode == 2, text(proc)
        assert "FIFO" in text(proc) and "Traceback" not in text(proc)
    assert snapshot(project) == before


def test_init_refuses_a_settings_link_to_a_device(project, tmp_path):
    device = char_device(tmp_path / "zero")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(device)
    proc = run(INIT, "claude", "--project", project)
    assert proc.returncode == 2 and "character device" in text(proc), text(proc)


def test_a_fifo_in_the_skill_folder_is_refused_on_install_and_kept_on_uninstall(project):
    record = installed(project)
    guard = skill_dir(project) / "scripts" / "guard.py"
    guard.unlink()
    fifo(guard)
    proc = run(INIT, "claude", "--project", project)
    assert proc.returncode == 2 and "FIFO" in text(proc), text(proc)
    proc = run(INIT, "claude", "--project", project, "--uninstall", "--json")
    assert proc.returncode == 0, text(proc)
    [action] = [a for a in json.loads(proc.stdout)["actions"] if a["path"].endswith("scripts/guard.py")]
    assert action["action"] == "kept" and "FIFO" in action["note"]
    assert stat.S_ISFIFO(guard.lstat().st_mode) and not record.exists()


def test_a_fifo_install_record_never_hangs(project):
    record = installed(project)
    record.unlink()
    fifo(record)
    assert run(INIT, "claude", "--project", project).returncode == 2
    proc = run(INIT, "claude", "--project", project, "--uninstall", "--json")
    assert proc.returncode == 0, text(proc)
    assert stat.S_ISFIFO(record.lstat().st_mode)


def guard_call(tool: str, path: Path, **tool_input) -> bytes:
    key = "path" if tool == "str_replace_based_edit_tool" else "file_path"
    return json.dumps({"tool_name": tool, "tool_input": {key: str(path), **tool_input}}).encode()


CALLS = [
    ("Write", {"content": "- a\n" * 300}),
    ("Edit", {"old_string": "a", "new_string": "- b\n" * 300}),
    ("MultiEdit", {"edits": [{"old_string": "a", "new_string": "- b\n" * 300}]}),
    ("str_replace_based_edit_tool", {"command": "insert", "insert_line": 0, "new_str": "- b\n" * 300}),
]


def allowed_with_note(proc) -> str:
    """The guard let the call through (exit 0, no deny) and told the model why."""
    assert proc.returncode == 0, proc.stderr
    spec = json.loads(proc.stdout)["hookSpecificOutput"]
    assert "permissionDecision" not in spec
    assert b"internal error" not in proc.stderr
    return spec["additionalContext"]


@pytest.mark.parametrize(("tool", "tool_input"), CALLS, ids=[c[0] for c in CALLS])
def test_guard_never_hangs_on_a_fifo_index(tmp_path, tool, tool_input):
    index = fifo(tmp_path / "memory" / "MEMORY.md")
    note = allowed_with_note(run(GUARD, stdin=guard_call(tool, index, **tool_input)))
    assert "FIFO" in note and "allowed" in note


@pytest.mark.parametrize(("tool", "tool_input"), CALLS, ids=[c[0] for c in CALLS])
def test_guard_never_reads_a_device_index(tmp_path, tool, tool_input):
    device = char_device(tmp_path / "zero")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "MEMORY.md").symlink_to(device)
    note = allowed_with_note(run(GUARD, stdin=guard_call(tool, tmp_path / "memory" / "MEMORY.md", **tool_input)))
    assert "character device" in note


def test_a_fifo_settings_file_is_passed_over_when_looking_for_the_plugin(tmp_path):
    """init.py asks whether the plugin is enabled before planning: a FIFO
    where a settings file belongs is never opened for a blocking read."""
    from autograph.hosts import caps

    project = tmp_path / "p"
    fifo(project / ".claude" / "settings.local.json")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"enabledPlugins": {"autograph@autograph": true}}')
    env = {"CLAUDE_PROJECT_DIR": str(project), "HOME": str(tmp_path)}
    assert caps.plugin_enabled(env) == str(tmp_path / ".claude" / "settings.json")


@pytest.mark.parametrize("target", ["store", "index"])
def test_check_reports_a_fifo_index_with_exit_2(tmp_path, target):
    store = tmp_path / "store"
    fifo(store / "MEMORY.md")
    proc = run(CHECK, store if target == "store" else store / "MEMORY.md")
    assert proc.returncode == 2, text(proc)
    assert "FIFO" in text(proc) and "Traceback" not in text(proc)


def test_check_reports_a_device_index_with_exit_2(tmp_path):
    device = char_device(tmp_path / "zero")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "MEMORY.md").symlink_to(device)
    proc = run(CHECK, tmp_path / "store")
    assert proc.returncode == 2 and "character device" in text(proc), text(proc)


def test_caps_readers_refuse_what_is_not_a_regular_file(tmp_path):
    path = fifo(tmp_path / "MEMORY.md")
    result: list = []

    def size():
        for call in (lambda: read_size.measure_file(path), lambda: caps.check_file(path, caps.caps_from({}, {})[0])):
            try:
                call()
                result.append("read")
            except read_size.NotRegular as exc:
                result.append(str(exc))

    worker = threading.Thread(target=size, daemon=True)
    worker.start()
    worker.join(TIMEOUT)
    assert not worker.is_alive(), "blocked on a FIFO"
    assert result == ["is a FIFO (named pipe), not a regular file"] * 2
    assert isinstance(caps.read_current(str(path), need_bytes=True), caps.UNREADABLE)
    big = tmp_path / "big.md"
    big.write_bytes(b"- a\n" * 10)
    with pytest.raises(read_size.NotRegular, match="more than"):
        read_size.measure_file(big, limit=20)


# ---------------------------------------------------------------------------
# 3. No folder is created where a symlinked settings.json / AGENTS.md points


@pytest.mark.parametrize(
    ("host", "config"), [("claude", ".claude/settings.json"), ("codex", "AGENTS.md")], ids=["settings", "agents"]
)
def test_a_link_into_a_missing_folder_is_refused(project, tmp_path, host, config):
    outside = tmp_path / "dotfiles"
    outside.mkdir()
    link = project / config
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(outside / "nonexist" / Path(config).name)
    before = snapshot(project)
    proc = run(INIT, host, "--project", project)
    assert proc.returncode == 2, text(proc)
    assert "does not exist" in text(proc) and "nonexist" in text(proc)
    assert not (outside / "nonexist").exists()
    assert snapshot(project) == before and link.is_symlink()


def test_a_link_to_a_missing_file_in_an_existing_folder_is_written_there(project, tmp_path):
    outside = tmp_path / "dotfiles"
    outside.mkdir()
    link = project / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(outside / "settings.json")
    assert run(INIT, "claude", "--project", project).returncode == 0
    assert len(our_groups(json.loads((outside / "settings.json").read_text()))) == 1
    assert run(INIT, "claude", "--project", project, "--uninstall").returncode == 0
    assert link.is_symlink() and os.listdir(outside) == []


def test_apply_never_creates_a_folder_where_a_link_points(project, tmp_path):
    """The folder a link points to vanishes between the plan and the write:
    the write fails, and no folder is made."""
    outside = tmp_path / "dotfiles"
    outside.mkdir()
    link = project / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(outside / "settings.json")
    layout = wiring.layout("claude", project, False, None)
    actions = wiring.plan_install(layout, SCRIPTS.parent)
    outside.rmdir()
    skipped = wiring.apply(actions)
    assert [a.path for a in skipped] == [link]
    assert skipped[0].failed and not outside.exists()


# ---------------------------------------------------------------------------
# 4. Deep nesting, a BOM


def test_deeply_nested_settings_is_a_clear_refusal(project):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"a": ' + "[" * 990 + "]" * 990 + "}")
    before = snapshot(project)
    for args in ((), ("--uninstall",)):
        proc = run(INIT, "claude", "--project", project, *args)
        assert proc.returncode == 2, text(proc)
        assert "nested too deeply" in text(proc) and "Traceback" not in text(proc)
    assert snapshot(project) == before


def test_a_deeply_nested_record_is_no_record(project):
    record = installed(project)
    record.write_text("[" * 100000 + "]" * 100000)
    proc = run(INIT, "claude", "--project", project, "--uninstall")
    assert proc.returncode == 0 and "Traceback" not in text(proc), text(proc)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_settings_with_a_bom_keep_it_byte_for_byte(project, newline):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = ("\ufeff{" + newline + '    "model": "opus"' + newline + "}" + newline).encode("utf-8")
    settings.write_bytes(original)
    proc = run(INIT, "claude", "--project", project, "--json")
    assert proc.returncode == 0, text(proc)
    [action] = [a for a in json.loads(proc.stdout)["actions"] if a["what"] == "hooks in settings.json"]
    assert "byte order mark" in action["note"]
    data = settings.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf{") and data.count(b"\xef\xbb\xbf") == 1
    assert len(our_groups(json.loads(data.decode("utf-8-sig")))) == 1
    assert run(INIT, "claude", "--project", project).returncode == 0  # a second run changes nothing
    assert settings.read_bytes() == data
    assert run(INIT, "claude", "--project", project, "--uninstall").returncode == 0
    assert settings.read_bytes() == original


def test_settings_with_a_bom_edited_since_keep_it_on_uninstall(project):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'\xef\xbb\xbf{\n  "model": "opus"\n}\n')
    assert run(INIT, "claude", "--project", project).returncode == 0
    settings.write_bytes(settings.read_bytes().replace(b'"opus"', b'"sonnet"'))
    assert run(INIT, "claude", "--project", project, "--uninstall").returncode == 0
    assert settings.read_bytes() == b'\xef\xbb\xbf{\n  "model": "sonnet"\n}\n'


def test_the_guard_sees_a_plugin_enabled_in_settings_with_a_bom(tmp_path):
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_bytes(b'\xef\xbb\xbf{"enabledPlugins": {"autograph@m": true}}')
    assert caps.plugin_enabled({"CLAUDE_PROJECT_DIR": str(project), "HOME": str(tmp_path)}) is not None


# ---------------------------------------------------------------------------
# 4. Tool input the host rejects


def index_of(tmp_path: Path, lines: int) -> Path:
    index = tmp_path / "memory" / "MEMORY.md"
    index.parent.mkdir(exist_ok=True)
    index.write_text("".join(f"- [T{i}](t{i}.md) — hook\n" for i in range(lines)))
    return index


@pytest.mark.parametrize(
    "line", ["Infinity", "-Infinity", "NaN", "-1", "1e400", "1.5", "202", "99999999999999999999999999999999999", '"x"']
)
def test_an_insert_line_that_is_not_a_line_of_the_file_passes_with_a_note(tmp_path, line):
    index = index_of(tmp_path, 200)
    payload = (
        '{"tool_name": "str_replace_based_edit_tool", "tool_input": {"command": "insert", '
        f'"path": {json.dumps(str(index))}, "insert_line": {line}, "new_str": "- extra"}}}}'
    )
    note = allowed_with_note(run(GUARD, stdin=payload.encode()))
    assert "insert_line" in note and "not valid input" in note


def test_a_valid_insert_line_is_still_judged(tmp_path):
    index = index_of(tmp_path, 200)
    for line in (200, 200.0, "200"):
        payload = guard_call("str_replace_based_edit_tool", index, command="insert", insert_line=line, new_str="- x")
        proc = run(GUARD, stdin=payload)
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", line


@pytest.mark.parametrize("value", ["false", "true", 1, None, []])
def test_replace_all_that_is_not_a_boolean_is_an_invalid_call_never_a_deny(tmp_path, value):
    index = index_of(tmp_path, 149)
    index.write_text(index.read_text() + "x\n" * 50)
    # replacing every "x" would pass the cap; replacing the first one would not
    edit = {"old_string": "x\n", "new_string": "x\n- more\n", "replace_all": value}
    note = allowed_with_note(run(GUARD, stdin=guard_call("Edit", index, **edit)))
    assert "replace_all" in note
    note = allowed_with_note(run(GUARD, stdin=guard_call("MultiEdit", index, edits=[edit])))
    assert "replace_all" in note


def test_replace_all_true_and_false_are_still_judged(tmp_path):
    index = index_of(tmp_path, 149)
    index.write_text(index.read_text() + "x\n" * 50)
    edit = {"old_string": "x\n", "new_string": "x\n- more\n"}
    proc = run(GUARD, stdin=guard_call("Edit", index, **edit, replace_all=True))
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    proc = run(GUARD, stdin=guard_call("Edit", index, **edit, replace_all=False))
    assert "permissionDecision" not in json.loads(proc.stdout or b'{"hookSpecificOutput": {}}')["hookSpecificOutput"]


def test_after_call_names_the_field_the_host_rejects():
    with pytest.raises(caps.InvalidCall, match="replace_all"):
        caps.after_call("edit", {"old_string": "a", "new_string": "b", "replace_all": "false"}, b"a a")
    with pytest.raises(caps.InvalidCall, match="new_string"):
        caps.after_call("edit", {"old_string": "a", "new_string": 3}, b"a")
    with pytest.raises(caps.InvalidCall, match="content"):
        caps.after_call("write", {"content": None}, b"")
    for line in (float("inf"), float("nan"), -1, 10**40, 1.5, True, None):
        with pytest.raises(caps.InvalidCall, match="insert_line"):
            caps.after_call("insert", {"insert_line": line, "new_str": "z"}, b"a\nb")
    assert caps.after_call("insert", {"insert_line": 1.0, "new_str": "z"}, b"a\nb") == b"a\nz\nb"
