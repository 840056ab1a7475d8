"""caps: counting lines and bytes as the index loader does, caps from the
schema and the environment, the file after a tool call, and the decision."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from autograph.hosts import caps
from autograph.hosts.caps import Caps
from autograph.read import size
from autograph.read.size import Size
from autograph.schema.model import DEFAULTS, load_schema, validate
from conftest import EXAMPLE_VAULT, SCRIPTS
from hypothesis import given
from hypothesis import strategies as st

DEFAULT_CAPS, _ = caps.caps_from(None, {})

# ---------------------------------------------------------------------------
# Counting (BR-35's rule)


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", 0),
        ("a", 1),
        ("a\n", 1),
        ("a\nb", 2),
        ("a\nb\n", 2),
        ("a\n\n", 2),  # a trailing empty line counts
        ("a\r\nb\r\n", 2),  # CRLF counts once
        ("a\rb", 1),  # a lone CR is not a break
        ("a\u2028b\x0cc\x1cd\x85e", 1),  # nor are the breaks str.splitlines knows
        ("\ufeff", 0),  # a BOM is not a line
        ("\ufeffa\n", 1),
    ],
)
def test_count_lines(text, lines):
    assert size.count_lines(text) == lines
    assert size.count_lines(text.encode("utf-8")) == lines


def test_bytes_are_utf8_bytes_not_characters():
    data = "é — 日本\n".encode()
    assert size.measure(data) == Size(1, len(data))
    assert size.measure(data).bytes == 2 + 1 + 3 + 1 + 6 + 1 and len("é — 日本\n") == 7


def test_bom_and_crs_count_as_bytes():
    assert size.measure(b"\xef\xbb\xbfa\r\n") == Size(1, 6)


@given(st.binary(max_size=300), st.integers(min_value=1, max_value=7))
def test_measure_file_streams_to_the_same_size(tmp_path_factory, data, chunk):
    path = tmp_path_factory.mktemp("m") / "MEMORY.md"
    path.write_bytes(data)
    assert size.measure_file(path, chunk=chunk) == size.measure(data)


def test_measure_file_with_a_bom_split_across_chunks(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"\xef\xbb\xbf")
    assert size.measure_file(path, chunk=1) == Size(0, 3)
    path.write_bytes(b"\xef\xbb\xbfa\nb")
    assert size.measure_file(path, chunk=2) == size.measure(path.read_bytes()) == Size(2, 6)


def test_measure_file_of_a_missing_file_raises(tmp_path):
    with pytest.raises(OSError):
        size.measure_file(tmp_path / "nope.md")


def test_loaded_lines_stop_at_the_line_cap_or_the_byte_cap():
    data = b"".join(b"- [T](t.md) \xe2\x80\x94 hook %03d\n" % i for i in range(250))
    assert size.loaded_lines(data, 200, 25000) == 200
    line = len(b"- [T](t.md) \xe2\x80\x94 hook 000\n")
    assert size.loaded_lines(data, 200, line * 10 + 5) == 10  # the 11th line is cut: not whole
    assert size.loaded_lines(b"a\nb", 200, 25000) == 2
    assert size.loaded_lines(b"", 200, 25000) == 0


# ---------------------------------------------------------------------------
# Caps from the schema and the environment


def test_default_caps_are_claude_codes_and_agree_with_the_schema_defaults():
    """Claude Code 2.1.332 loads 200 lines / 25KB and, from 160 lines or
    about 20,000 bytes, asks for "under 140 lines": one threshold, one target."""
    assert DEFAULT_CAPS.hard == {"lines": 200, "bytes": 25000}
    assert DEFAULT_CAPS.soft == {"lines": 160, "bytes": 20000}
    assert DEFAULT_CAPS.target == {"lines": 140, "bytes": 17500}
    assert DEFAULTS["index"]["hard"] == caps.DEFAULT_HARD
    assert DEFAULTS["index"]["soft"] == caps.DEFAULT_SOFT
    assert DEFAULTS["index"]["target_lines"] == caps.DEFAULT_TARGET["lines"]
    assert DEFAULTS["index"]["target_bytes"] == caps.DEFAULT_TARGET["bytes"]
    assert DEFAULTS["index"]["files"] == caps.DEFAULT_FILES
    assert DEFAULT_CAPS.as_dict() == {
        "soft": {"lines": 160, "bytes": 20000},
        "hard": {"lines": 200, "bytes": 25000},
        "target": {"lines": 140, "bytes": 17500},
        "sources": {},
    }
    assert DEFAULT_CAPS.target_text() == "140 lines / 17,500 bytes"


def test_schema_section_then_environment():
    section = {"soft": {"lines": 100}, "hard": {"lines": 120, "bytes": 9000}}
    got, warnings = caps.caps_from(section, {})
    assert got.hard == {"lines": 120, "bytes": 9000} and got.soft == {"lines": 100, "bytes": 9000}  # soft <= hard
    got, _ = caps.caps_from(section, {"AUTOGRAPH_INDEX_HARD_LINES": " 400 ", "AUTOGRAPH_INDEX_SOFT_BYTES": "5000"})
    assert got.hard["lines"] == 400 and got.soft["bytes"] == 5000
    assert got.as_dict()["sources"] == {
        "hard.lines": "AUTOGRAPH_INDEX_HARD_LINES",
        "soft.bytes": "AUTOGRAPH_INDEX_SOFT_BYTES",
    }
    assert warnings == []


def test_target_from_the_schema():
    got, _ = caps.caps_from({"target_lines": 120, "target_bytes": 15000}, {})
    assert got.target == {"lines": 120, "bytes": 15000}
    assert got.soft == caps.DEFAULT_SOFT and got.hard == caps.DEFAULT_HARD
    got, _ = caps.caps_from({"target_lines": 90}, {})
    assert got.target == {"lines": 90, "bytes": 17500}  # the other dimension keeps its default
    schema = load_schema(None, None)
    assert caps.caps_from(schema.section("index"), {})[0].target == caps.DEFAULT_TARGET


def test_target_from_the_environment_over_the_schema():
    env = {"AUTOGRAPH_INDEX_TARGET_LINES": " 100 ", "AUTOGRAPH_INDEX_TARGET_BYTES": "12000"}
    got, warnings = caps.caps_from({"target_lines": 120}, env)
    assert got.target == {"lines": 100, "bytes": 12000} and warnings == []
    assert got.as_dict()["sources"] == {
        "target.lines": "AUTOGRAPH_INDEX_TARGET_LINES",
        "target.bytes": "AUTOGRAPH_INDEX_TARGET_BYTES",
    }
    assert got.as_dict()["target"] == {"lines": 100, "bytes": 12000}


def test_target_above_the_soft_cap_is_lowered_to_it():
    got, _ = caps.caps_from({"target_lines": 180, "target_bytes": 30000}, {})
    assert got.target == got.soft == {"lines": 160, "bytes": 20000}
    got, _ = caps.caps_from({"soft": {"lines": 100}}, {})  # a lower soft cap takes the default target with it
    assert got.target == {"lines": 100, "bytes": 17500}
    got, _ = caps.caps_from(None, {"AUTOGRAPH_INDEX_TARGET_LINES": "500", "AUTOGRAPH_INDEX_SOFT_LINES": "170"})
    assert got.target["lines"] == 170 and got.soft["lines"] == 170
    assert Caps({"lines": 5, "bytes": 50}, {"lines": 10, "bytes": 100}).target == {"lines": 5, "bytes": 50}


a_cap = st.integers(min_value=1, max_value=10**7)
a_pair = st.fixed_dictionaries({"lines": a_cap, "bytes": a_cap})


@given(soft=a_pair, hard=a_pair, target=st.none() | a_pair)
def test_property_for_any_caps_target_is_at_most_soft_is_at_most_hard(soft, hard, target):
    got = Caps(soft, hard, target=target)
    for d in ("lines", "bytes"):
        assert 1 <= got.target[d] <= got.soft[d] <= got.hard[d] == hard[d]
        assert got.soft[d] == min(soft[d], hard[d])
        assert got.target[d] == min((target or caps.DEFAULT_TARGET)[d], got.soft[d])


@given(
    section=st.fixed_dictionaries(
        {},
        optional={
            "soft": st.fixed_dictionaries({}, optional={"lines": a_cap, "bytes": a_cap}),
            "hard": st.fixed_dictionaries({}, optional={"lines": a_cap, "bytes": a_cap}),
            "target_lines": a_cap,
            "target_bytes": a_cap,
        },
    ),
    env=st.dictionaries(st.sampled_from(sorted(caps.ENV.values())), st.integers(-3, 10**6).map(str), max_size=6),
)
def test_property_caps_from_any_schema_and_environment_keeps_the_order(section, env):
    got, warnings = caps.caps_from(section, env, strict=False)
    for d in ("lines", "bytes"):
        assert 1 <= got.target[d] <= got.soft[d] <= got.hard[d]
    bad = sorted(name for name, value in env.items() if int(value) <= 0)
    assert len(warnings) == len(bad) and all(name in w for name, w in zip(bad, sorted(warnings), strict=True))
    assert set(got.as_dict()) == {"soft", "hard", "target", "sources"}


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5", "2e3"])
def test_bad_environment_value_is_an_error_or_a_warning(value):
    env = {"AUTOGRAPH_INDEX_HARD_BYTES": value}
    with pytest.raises(caps.CapsError, match="AUTOGRAPH_INDEX_HARD_BYTES"):
        caps.caps_from(None, env)
    got, warnings = caps.caps_from(None, env, strict=False)
    assert got.hard["bytes"] == 25000
    assert len(warnings) == 1 and "AUTOGRAPH_INDEX_HARD_BYTES" in warnings[0]


@pytest.mark.parametrize("name", ["AUTOGRAPH_INDEX_TARGET_LINES", "AUTOGRAPH_INDEX_TARGET_BYTES"])
@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5", "2e3"])
def test_bad_target_in_the_environment_is_an_error_or_ignored_with_a_note(name, value):
    with pytest.raises(caps.CapsError, match=name):
        caps.caps_from(None, {name: value})
    got, warnings = caps.caps_from({"target_lines": 120}, {name: value}, strict=False)
    assert got.target == {"lines": 120, "bytes": 17500}  # the schema's target, as if the variable were unset
    assert len(warnings) == 1 and name in warnings[0] and "positive whole number" in warnings[0]
    assert "such as 200" not in warnings[0]  # the example given is a target, not the hard cap


def test_empty_environment_value_is_unset():
    got, warnings = caps.caps_from(None, {"AUTOGRAPH_INDEX_HARD_LINES": ""})
    assert got.hard["lines"] == 200 and warnings == []


def test_index_names():
    assert caps.index_names(None, {}) == {"memory.md"}
    assert caps.index_names(["MEMORY.md", ".memory/Index.md"], {}) == {"memory.md", "index.md"}
    assert caps.index_names(["MEMORY.md"], {"AUTOGRAPH_INDEX_FILES": "NOTES.md, other.md"}) == {"notes.md", "other.md"}


def test_over_is_strictly_greater_and_near_is_at_or_over():
    assert DEFAULT_CAPS.over(Size(200, 25000)) == []
    assert DEFAULT_CAPS.over(Size(201, 25001)) == ["lines", "bytes"]
    assert DEFAULT_CAPS.near(Size(159, 19999)) == []
    assert DEFAULT_CAPS.near(Size(160, 20000)) == ["lines", "bytes"]


# ---------------------------------------------------------------------------
# The schema's "index" and "memory" keys


def test_schema_index_and_memory_validate():
    good = {
        "index": {
            "files": ["MEMORY.md", ".memory/MEMORY.md"],
            "soft": {"lines": 100},
            "hard": {"bytes": 30000},
            "target_lines": 80,
            "target_bytes": 12000,
        },
        "memory": {
            "folder": ".memory",
            "index": "MEMORY.md",
            "archive": "archive",
            "types": {"feedback": {"description": "d", "required": ["name"], "labels": ["Why:"]}},
        },
    }
    assert validate(good) == []


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"index": []}, "$.index"),
        ({"index": {"files": []}}, "$.index.files"),
        ({"index": {"files": ["../MEMORY.md"]}}, "$.index.files"),
        ({"index": {"files": ["/abs/MEMORY.md"]}}, "$.index.files"),
        ({"index": {"hard": {"lines": 0}}}, "$.index.hard.lines"),
        ({"index": {"hard": {"lines": True}}}, "$.index.hard.lines"),
        ({"index": {"soft": {"lines": 250}, "hard": {"lines": 200}}}, "$.index.soft.lines"),
        ({"index": {"hard": {"chars": 3}}}, "$.index.hard.chars"),
        ({"index": {"cap": 3}}, "$.index.cap"),
        ({"index": {"target_lines": 0}}, "$.index.target_lines"),
        ({"index": {"target_bytes": True}}, "$.index.target_bytes"),
        ({"index": {"target_lines": "140"}}, "$.index.target_lines"),
        ({"index": {"target": {"lines": 140}}}, "$.index.target"),
        ({"memory": "memory"}, "$.memory"),
        ({"memory": {"folder": "../x"}}, "$.memory.folder"),
        ({"memory": {"index": "sub/MEMORY.md"}}, "$.memory.index"),
        ({"memory": {"types": {}}}, "$.memory.types"),
        ({"memory": {"types": {"user": {"required": "name"}}}}, "$.memory.types.user.required"),
        ({"memory": {"types": {"user": {"labels": [""]}}}}, "$.memory.types.user.labels"),
        ({"memory": {"types": {"user": {"fields": []}}}}, "$.memory.types.user.fields"),
        ({"memory": {"store": "x"}}, "$.memory.store"),
    ],
)
def test_schema_index_and_memory_errors_name_the_json_path(data, where):
    problems = validate(data)
    assert len(problems) == 1, problems
    assert problems[0].startswith(where + ":")


def test_schema_memory_accessor_defaults_and_preset(tmp_path):
    memory = load_schema(None).memory
    assert memory["folder"] == "memory" and memory["index"] == "MEMORY.md" and memory["archive"] == "archive"
    assert sorted(memory["types"]) == ["feedback", "project", "reference", "user"]
    assert memory["types"]["feedback"]["labels"] == ["Why", "How to apply"]
    assert memory["types"]["project"]["labels"] == ["Why", "How to apply"]
    assert memory["types"]["user"]["labels"] == []
    (tmp_path / "schema.json").write_text('{"memory": {"types": {"note": {"labels": ["Source:"]}}}}')
    memory = load_schema(tmp_path).memory
    assert list(memory["types"]) == ["note"]  # a schema's own types replace the preset
    assert memory["types"]["note"]["labels"] == ["Source"]
    assert memory["types"]["note"]["required"] == ["name", "description", "type", "created", "updated"]


# ---------------------------------------------------------------------------
# The file after a tool call


def after(operation, tool_input, current=b""):
    return caps.after_call(operation, tool_input, current)


def test_write_and_create_give_the_new_content():
    assert after("write", {"content": "a\n"}, b"old") == b"a\n"
    assert after("write", {"file_text": "b"}, b"old") == b"b"
    assert after("create", {"file_text": "c\n"}) == b"c\n"
    assert after("write", {}, b"old") == b""


def test_edit_replaces_the_first_occurrence_or_all():
    assert after("edit", {"old_string": "x", "new_string": "yy"}, b"x x") == b"yy x"
    assert after("edit", {"old_string": "x", "new_string": "yy", "replace_all": True}, b"x x") == b"yy yy"


def test_edit_that_cannot_apply_changes_nothing():
    assert after("edit", {"old_string": "zz", "new_string": "q"}, b"abc") == b"abc"
    assert after("edit", {"old_string": "", "new_string": "q"}, b"abc") == b"abc"


def test_edit_with_empty_old_string_creates_a_new_file():
    assert after("edit", {"old_string": "", "new_string": "a\nb\n"}, b"") == b"a\nb\n"


def test_multiedit_applies_in_order_on_the_running_result():
    edits = [{"old_string": "a", "new_string": "b"}, {"old_string": "b", "new_string": "c\nc"}]
    assert after("multiedit", {"edits": edits}, b"a") == b"c\nc"
    edits = [{"old_string": "nope", "new_string": "x"}, {"old_string": "a", "new_string": "a\na"}]
    assert after("multiedit", {"edits": edits}, b"a") == b"a\na"  # the failing edit is skipped
    with pytest.raises(caps.InvalidCall, match="edits"):
        after("multiedit", {"edits": "junk"}, b"a")  # the host rejects the call


def test_edit_on_a_crlf_file_matches_lf_text_and_keeps_crlf():
    current = b"- a\r\n- b\r\n"
    result = after("edit", {"old_string": "- a\n- b", "new_string": "- a\n- b\n- c"}, current)
    assert result == b"- a\r\n- b\r\n- c\r\n"


def test_text_editor_commands():
    assert after("str_replace", {"old_str": "b", "new_str": "b\nc"}, b"a\nb\n") == b"a\nb\nc\n"
    assert after("insert", {"insert_line": 0, "new_str": "z"}, b"a\nb") == b"z\na\nb"
    assert after("insert", {"insert_line": 2, "new_str": "z"}, b"a\nb") == b"a\nb\nz"
    with pytest.raises(caps.InvalidCall, match="not a line of the file"):
        after("insert", {"insert_line": 9, "new_str": "z"}, b"a\nb")  # out of range: the tool refuses it
    assert after("insert", {"insert_line": "1", "insert_text": "z"}, b"a\nb") == b"a\nz\nb"


def test_text_that_is_not_utf8_keeps_its_bytes():
    current = b"caf\xe9\n- a\n"  # Latin-1
    result = after("edit", {"old_string": "- a", "new_string": "- a\n- b"}, current)
    assert result == b"caf\xe9\n- a\n- b\n"


# The simulation is bounded: an edit's size is worked out before it is built

small_text = st.text(st.sampled_from("ab\r\n"), max_size=12)
an_edit = st.fixed_dictionaries({"old_string": small_text, "new_string": small_text, "replace_all": st.booleans()})


@given(current=small_text, edits=st.lists(an_edit, max_size=6), limit=st.integers(0, 60))
def test_property_a_limited_simulation_builds_the_same_result_or_proves_it_too_large(current, edits, limit):
    data = current.encode()
    try:
        bounded = caps.after_call("multiedit", {"edits": edits}, data, limit)
    except caps.TooLarge as exc:
        assert exc.size > limit and 1 <= exc.step <= len(edits)
        # honest: the text after that edit, built without a limit, is at least that long
        partial = caps.after_call("multiedit", {"edits": edits[: exc.step]}, data)
        assert len(partial) >= exc.size
    else:
        assert bounded == caps.after_call("multiedit", {"edits": edits}, data)


def test_a_runaway_replace_all_is_refused_before_it_is_built():
    edits = [{"old_string": "a", "new_string": "aa", "replace_all": True}] * 64  # 2**64 characters
    with pytest.raises(caps.TooLarge) as caught:
        caps.after_call("multiedit", {"edits": edits}, b"a" * 1000, limit=250_000)
    assert caught.value.step == 8 and caught.value.size == 256_000  # 1,000 doubled 8 times
    with pytest.raises(caps.TooLarge):
        caps.after_call("edit", {"old_string": "a", "new_string": "b" * 300, "replace_all": True}, b"a" * 1000, 250_000)
    shrink = [{"old_string": "aa", "new_string": "a", "replace_all": True}] * 64
    assert caps.after_call("multiedit", {"edits": shrink}, b"a" * 1_000_000, limit=1_000_000) == b"a"


# ---------------------------------------------------------------------------
# Which schema, and whether the plugin answers instead


def test_find_schema_prefers_the_project_dir_then_the_cwd(tmp_path):
    project, cwd = tmp_path / "p", tmp_path / "c"
    project.mkdir()
    cwd.mkdir()
    assert caps.find_schema({}, str(cwd)) is None
    (cwd / "schema.json").write_text("{}")
    assert caps.find_schema({}, str(cwd)) == str(cwd / "schema.json")
    assert caps.find_schema({"CLAUDE_PROJECT_DIR": str(project)}, str(cwd)) == str(cwd / "schema.json")
    (project / "schema.json").write_text("{}")
    assert caps.find_schema({"CLAUDE_PROJECT_DIR": str(project)}, str(cwd)) == str(project / "schema.json")


def test_plugin_enabled_reads_settings_as_claude_code_merges_them(tmp_path):
    project, home = tmp_path / "p", tmp_path / "h"
    (project / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    env = {"CLAUDE_PROJECT_DIR": str(project), "HOME": str(home)}

    def put(path, plugins):
        path.write_text(json.dumps({"enabledPlugins": plugins}))

    assert caps.plugin_enabled(env) is None
    put(home / ".claude" / "settings.json", {"autograph@m": True})
    assert caps.plugin_enabled(env) == str(home / ".claude" / "settings.json")
    put(project / ".claude" / "settings.json", {"autograph@m": False})
    assert caps.plugin_enabled(env) is None  # the project's settings win over the user's
    put(project / ".claude" / "settings.local.json", {"autograph@m": True})
    assert caps.plugin_enabled(env) == str(project / ".claude" / "settings.local.json")
    (project / ".claude" / "settings.local.json").write_text("{broken")
    assert caps.plugin_enabled(env) is None  # unreadable: passed over
    assert caps.plugin_enabled({**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "none")}) is None


def test_tool_target():
    assert caps.tool_target("Write", {"file_path": "/m/MEMORY.md"}) == ("/m/MEMORY.md", "write")
    assert caps.tool_target("MultiEdit", {"file_path": 3}) == ("", "multiedit")
    assert caps.tool_target("str_replace_based_edit_tool", {"command": "insert", "path": "/m/MEMORY.md"}) == (
        "/m/MEMORY.md",
        "insert",
    )
    assert caps.tool_target("str_replace_based_edit_tool", {"command": "view", "path": "/m/MEMORY.md"}) is None
    assert caps.tool_target("Read", {"file_path": "/m/MEMORY.md"}) is None
    assert caps.tool_target("Bash", {"command": "echo >> MEMORY.md"}) is None
    assert caps.tool_target("Write", "junk") is None


# ---------------------------------------------------------------------------
# The decision


@pytest.mark.parametrize(
    ("before", "after_", "deny", "grown"),
    [
        (Size(200, 10000), Size(201, 10050), True, ["lines"]),
        (Size(200, 10000), Size(200, 10050), False, []),
        (Size(0, 0), Size(201, 100), True, ["lines"]),  # a new file over the cap
        (Size(250, 10000), Size(240, 9000), False, []),  # over, but shrinking
        (Size(250, 10000), Size(250, 10000), False, []),  # over, unchanged
        (Size(250, 10000), Size(240, 12000), False, []),  # lines shrink, bytes grow under their cap
        (Size(250, 26000), Size(240, 26500), True, ["bytes"]),  # both over: bytes grew
        (Size(10, 24000), Size(10, 25001), True, ["bytes"]),
        (None, Size(500, 90000), False, []),  # unreadable current file: never denies
    ],
)
def test_judge(before, after_, deny, grown):
    verdict = caps.judge(before, after_, DEFAULT_CAPS)
    assert verdict.deny is deny
    assert verdict.grown == grown


def test_deny_reason_gives_counts_caps_and_how_to_compact():
    verdict = caps.judge(Size(250, 26000), Size(240, 26500), DEFAULT_CAPS)
    reason = caps.deny_reason("MEMORY.md", verdict, DEFAULT_CAPS)
    assert reason.startswith("autograph guard: MEMORY.md would be 26,500 bytes (limit 25,000);")
    assert "lines (limit" not in reason  # lines shrank: only the dimension that grew is named
    assert "Compact" in reason and "shrink" in reason and "AUTOGRAPH_INDEX_FILES" in reason
    assert "to under 140 lines / 17,500 bytes" in reason  # the target, as Claude Code names it


def test_deny_reasons_name_the_target_in_force():
    custom, _ = caps.caps_from({"target_lines": 90, "target_bytes": 9000}, {})
    verdict = caps.judge(Size(200, 100), Size(201, 100), custom)
    assert "to under 90 lines / 9,000 bytes" in caps.deny_reason("MEMORY.md", verdict, custom)
    reason = caps.too_large_reason("MEMORY.md", caps.TooLarge(300_000, 2), Size(10, 100), custom, "MultiEdit")
    assert reason.startswith("autograph guard: MEMORY.md would be at least 300,000 bytes")
    assert "to under 90 lines / 9,000 bytes" in reason


def test_caps_over_and_near_with_custom_caps():
    custom = Caps({"lines": 5, "bytes": 50}, {"lines": 10, "bytes": 100})
    assert custom.near(Size(5, 10)) == ["lines"] and custom.over(Size(11, 10)) == ["lines"]


# ---------------------------------------------------------------------------
# check.py


def check(*args, env: dict | None = None):
    base = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRAPH_INDEX_")}
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "check.py"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **(env or {})},
    )


def index_text(n: int) -> str:
    return "".join(f"- [Topic {i:03d}](topic-{i:03d}.md) — hook about topic {i:03d}\n" for i in range(n))


@pytest.mark.parametrize(
    ("n", "code", "status"), [(10, 0, "ok"), (159, 0, "ok"), (160, 0, "soft"), (200, 0, "soft"), (201, 1, "over")]
)
def test_check_exit_codes_and_status(tmp_path, n, code, status):
    path = tmp_path / "MEMORY.md"
    path.write_text(index_text(n), encoding="utf-8")
    proc = check(path, "--json")
    assert proc.returncode == code, proc.stderr
    report = json.loads(proc.stdout)
    assert report["status"] == status
    row = report["files"][0]
    assert (row["lines"], row["bytes"]) == (n, len(index_text(n).encode("utf-8")))
    assert row["loaded_lines"] == min(n, 200)
    assert report["caps"]["hard"] == {"lines": 200, "bytes": 25000}
    assert report["caps"]["soft"] == {"lines": 160, "bytes": 20000}
    assert report["caps"]["target"] == {"lines": 140, "bytes": 17500}
    assert set(row) == {"path", "lines", "bytes", "loaded_lines", "status", "over", "near", "advice"}
    if status == "ok":
        assert row["advice"] is None
    else:
        assert row["advice"].startswith("compact it to under 140 lines / 17,500 bytes: ")


def test_check_human_output(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_text(index_text(165))
    proc = check(path)
    assert proc.returncode == 0
    assert proc.stdout.startswith("check.py: warning: ") and "soft cap of 160 lines" in proc.stdout
    assert "compact it to under 140 lines / 17,500 bytes" in proc.stdout
    path.write_text(index_text(212))
    proc = check(path)
    assert proc.returncode == 1
    assert "over the hard cap of 200 lines; the host loads only the first 200 lines and drops 12" in proc.stdout
    assert "compact it to under 140 lines / 17,500 bytes" in proc.stdout
    path.write_text(index_text(3))
    assert "3 lines" in check(path).stdout and "ok" in check(path).stdout
    for text in (index_text(3), index_text(165), index_text(212)):
        path.write_text(text)
        out = check(path).stdout.splitlines()
        assert all(line.startswith(("check.py: ", "  ")) for line in out), out  # advice is indented below


def test_check_names_the_target_of_the_schema_and_the_environment(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_text(index_text(165))
    (tmp_path / "schema.json").write_text('{"index": {"target_lines": 120, "target_bytes": 15000}}')
    proc = check(path, "--json")
    report = json.loads(proc.stdout)
    assert report["caps"]["target"] == {"lines": 120, "bytes": 15000}
    assert "to under 120 lines / 15,000 bytes" in report["files"][0]["advice"]
    assert "to under 120 lines / 15,000 bytes" in check(path).stdout
    proc = check(path, "--json", env={"AUTOGRAPH_INDEX_TARGET_LINES": "100"})
    report = json.loads(proc.stdout)
    assert report["caps"]["target"] == {"lines": 100, "bytes": 15000}
    assert report["caps"]["sources"] == {"target.lines": "AUTOGRAPH_INDEX_TARGET_LINES"}
    proc = check(path, env={"AUTOGRAPH_INDEX_TARGET_BYTES": "lots"})  # strict: an error, exit 2
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("check.py: ") and "AUTOGRAPH_INDEX_TARGET_BYTES" in proc.stderr


def test_check_byte_cap_counts_bytes_not_characters(tmp_path):
    path = tmp_path / "MEMORY.md"
    line = "- [記憶](k.md) — " + "説明" * 30 + "\n"
    path.write_text(line * 130, encoding="utf-8")
    assert len(line * 130) < 25000 < len((line * 130).encode("utf-8"))
    report = json.loads(check(path, "--json").stdout)
    assert report["files"][0]["over"] == ["bytes"]
    assert report["files"][0]["loaded_lines"] == 25000 // len(line.encode("utf-8"))


def test_check_a_vault_finds_its_indexes(tmp_path):
    (tmp_path / "MEMORY.md").write_text(index_text(5))
    (tmp_path / ".memory").mkdir()
    (tmp_path / ".memory" / "MEMORY.md").write_text(index_text(230))
    (tmp_path / "schema.json").write_text('{"memory": {"folder": ".memory"}}')
    proc = check(tmp_path, "--json")
    assert proc.returncode == 1
    assert [(r["path"], r["status"]) for r in json.loads(proc.stdout)["files"]] == [
        ("MEMORY.md", "ok"),
        (".memory/MEMORY.md", "over"),
    ]


def test_check_example_vault():
    proc = check(EXAMPLE_VAULT, "--json")
    assert proc.returncode == 0, proc.stderr
    assert [r["path"] for r in json.loads(proc.stdout)["files"]] == ["MEMORY.md", ".memory/MEMORY.md"]


def test_check_schema_and_environment_caps(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_text(index_text(30))
    (tmp_path / "schema.json").write_text('{"index": {"soft": {"lines": 20}, "hard": {"lines": 25}}}')
    assert check(path).returncode == 1  # schema.json next to the index
    assert check(path, env={"AUTOGRAPH_INDEX_HARD_LINES": "40"}).returncode == 0
    other = tmp_path / "other.json"
    other.write_text('{"index": {"hard": {"lines": 100}}}')
    assert check(path, "--schema", other).returncode == 0


@pytest.mark.parametrize("setup", ["missing", "empty-folder", "directory-index", "bad-env", "bad-schema"])
def test_check_usage_errors_exit_2(tmp_path, setup):
    env = None
    target = tmp_path / "MEMORY.md"
    if setup == "missing":
        target = tmp_path / "nope.md"
    elif setup == "empty-folder":
        target = tmp_path
    elif setup == "directory-index":
        target.mkdir()
        target = tmp_path
    elif setup == "bad-env":
        target.write_text("- a\n")
        env = {"AUTOGRAPH_INDEX_SOFT_BYTES": "-1"}
    else:
        target.write_text("- a\n")
        (tmp_path / "schema.json").write_text('{"index": {"hard": 5}}')
    proc = check(target, env=env)
    assert proc.returncode == 2
    assert proc.stdout == "" and proc.stderr.strip() and "Traceback" not in proc.stderr


def test_check_help_and_misspelled_flag():
    proc = check("--help")
    assert proc.returncode == 0 and "loaded_lines" in proc.stdout
    assert check(".", "--jsn").returncode == 2


def test_schema_example_holds_the_index_caps_and_the_memory_preset():
    from autograph.schema.model import MEMORY_TYPES
    from conftest import REPO

    schema = load_schema(None, REPO / "schema.example.json")
    assert schema.section("index")["hard"] == caps.DEFAULT_HARD and schema.section("index")["soft"] == caps.DEFAULT_SOFT
    assert caps.caps_from(schema.section("index"), {})[0].target == caps.DEFAULT_TARGET
    assert {"target_lines", "target_bytes"} <= set(json.loads((REPO / "schema.example.json").read_text())["index"])
    assert schema.memory["types"] == MEMORY_TYPES
