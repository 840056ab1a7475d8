"""doctor.py keeps secrets secret (issue 7, item 9).

A secret found in the store is reported by file, line and kind, and no
finding of any kind prints it: every quoted fragment passes through one
redaction.  The scan covers every text file of the store, notes that are not
UTF-8, and the shapes listed in the issue; files are read as streams, so a
runaway index costs linear time and constant memory.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from autograph.hosts import caps, store_doctor
from autograph.schema.model import load_schema
from conftest import SCRIPTS
from hypothesis import given, settings
from hypothesis import strategies as st

DOCTOR = SCRIPTS / "doctor.py"
SETTINGS = load_schema(None).memory
CAPS, _ = caps.caps_from(None, {})


def doctor(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRAPH_INDEX_")}
    return subprocess.run(
        [sys.executable, str(DOCTOR), *map(str, args)], capture_output=True, text=True, timeout=120, env=env
    )


def note(stem: str, kind: str = "user", body: str = "A fact.\n", **fields) -> str:
    props = {
        "name": stem,
        "description": f"What {stem} holds",
        "type": kind,
        "created": "2026-01-05",
        "updated": "2026-02-01",
        **fields,
    }
    head = "".join(f"{k}: {v}\n" for k, v in props.items() if v is not None)
    return f"---\n{head}---\n{body}"


# ---------------------------------------------------------------------------
# No finding prints a secret

# Each value below is a secret; the comment names the finding that quoted it
# before redaction existed.
DB_PASSWORD = "Tr0ub4dor&3-db"  # index-content: the non-pointer line "- db password: ..."
TYPE_SECRET = "hunter22-Type"  # bad-type
DATE_SECRET = "S3cret!Date"  # bad-date
NAME_SECRET = "abcdEFGH1234name"  # name-mismatch
TOKEN = "sk-ant-api03-" + "Q7x" * 10  # broken-pointer
URL_PASSWORD = "Passw0rd99url"  # pointer-outside (a password in a URL)
LEAKS = [DB_PASSWORD, TYPE_SECRET, DATE_SECRET, NAME_SECRET, TOKEN, URL_PASSWORD, "Q7xQ7xQ7x"]

LEAKY_STORE = {
    "MEMORY.md": (
        "# Memory\n"
        "- [Typed](typed.md) — bad type\n"
        "- [Dated](dated.md) — bad date\n"
        "- [Named](named.md) — bad name\n"
        f"- db password: {DB_PASSWORD}\n"
        f"- [Token]({TOKEN}.md) — broken\n"
        f"- [DB](postgres://atlas:{URL_PASSWORD}@db.internal/x.md) — outside\n"
    ),
    "typed.md": note("typed", kind=f"password={TYPE_SECRET}"),
    "dated.md": note("dated", created=f"'pw={DATE_SECRET}'"),
    "named.md": note("named").replace("name: named", f"name: api_key={NAME_SECRET}"),
}


def test_no_finding_prints_a_secret(make_vault):
    store = make_vault(LEAKY_STORE, name="store")
    human = doctor(store)
    report = json.loads(doctor(store, "--json").stdout)
    assert human.returncode == 1
    for output in (human.stdout + human.stderr, json.dumps(report)):
        for secret in LEAKS:
            assert secret not in output
    found = {(f["kind"], f["path"], f["line"]) for f in report["issues"]}
    # every finding that quoted the store's text is still reported, redacted
    for expected in [
        ("secret", "MEMORY.md", 5),
        ("index-content", "MEMORY.md", 5),
        ("broken-pointer", "MEMORY.md", 6),
        ("secret", "MEMORY.md", 6),
        ("pointer-outside", "MEMORY.md", 7),
        ("secret", "MEMORY.md", 7),
        ("bad-type", "typed.md", 4),
        ("secret", "typed.md", 4),
        ("bad-date", "dated.md", 5),
        ("secret", "dated.md", 5),
        ("name-mismatch", "named.md", 2),
        ("secret", "named.md", 2),
    ]:
        assert expected in found, (expected, sorted(found))
    quoting = [f["message"] for f in report["issues"] if f["kind"] != "secret"]
    assert sum("[redacted]" in m for m in quoting) >= 6, quoting


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password=hunter22", "hunter22"),
        ("- db password: Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("the password is hunter2 for now", "hunter2"),
        ("pw=S3cretVal", "S3cretVal"),
        ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("postgres://atlas:S3cretPass@db/x", "S3cretPass"),
        ("npm_" + "a1B2" * 9, "a1B2a1B2"),
        ("DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "Ab1+" * 22 + "==", "Ab1+Ab1+"),
        ("MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM4fPn9FcGxb2s8uS9Qp1kLq0wT", "MIIEpAIBAAKCAQEA3Tz2"),
    ],
)
def test_redact_hides_the_value(text, secret):
    shown = store_doctor.redact(text)
    assert secret not in shown and "[redacted]" in shown
    assert secret not in store_doctor._quote(text) and secret not in store_doctor._quote("x" * 50 + text)


def test_redact_keeps_ordinary_text():
    for text in ("feedback-one-page-summaries.md", "2026-02-30", "Feedback", "password is required", "a.md.bak"):
        assert store_doctor.redact(text) == text


# ---------------------------------------------------------------------------
# The shapes


@pytest.mark.parametrize(
    "line",
    [
        "pw=S3cretVal",
        "db_pw: Tr0ub4dor",
        "NPM_TOKEN npm_" + "a1B2c3D4e5" * 3 + "f6G7h8",
        "token hf_" + "AbCdEfGhIj" * 3 + "KlMn",
        "DefaultEndpointsProtocol=https;AccountName=atlas;AccountKey=" + "Ab1+" * 22 + "==;EndpointSuffix=x",
        "twilio SK" + "0123456789abcdef" * 2,
        "the password is hunter2",
        "Password: hunter2!",
        "passphrase is 'tr0ub4dor-horse'",
        "The staging password is Tr0ub4dor&3.",
    ],
)
def test_new_secret_shapes_found(line):
    found = store_doctor.find_secrets(f"first line\n{line}\nlast line\n")
    assert [n for n, _ in found] == [2], found


@pytest.mark.parametrize(
    "line",
    [
        "password is required",
        "The password is stored in the team vault.",
        "password is in 1Password",
        "Reset the password-protected share.",
        "passphrase is correct horse battery staple",
        "SK is the country code",
        "keep the password manager open",
        "password: see [[reference-vault]]",
        "the password is ${DB_PASSWORD}",
        "azure_static_web_apps_api_token: '$(web-app-token)'",
    ],
)
def test_prose_that_is_not_a_secret(line):
    assert store_doctor.find_secrets(line) == []


_PARTS = [
    "x",
    " ",
    "\n",
    "é",
    "password=hunter22",
    "the password is Tr0ub4dor&3",
    "ghp_" + "a1B2" * 9,
    "pw=S3cretVal",
    "key",
    "token: abc",
    "\r\n",
    "y" * 40,
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=60), st.integers(min_value=1, max_value=64))
def test_scan_does_not_depend_on_the_block_size(parts, block):
    text = "".join(parts)
    whole = store_doctor.find_secrets(text)
    data = text.encode()
    scan = store_doctor._SecretScan()
    streamed = []
    for piece, line, continued in store_doctor._pieces(io.BytesIO(data), block):
        streamed += scan.feed(piece, line, continued)
    streamed += scan.finish()
    assert [n for n, _ in streamed] == [n for n, _ in whole]
    lines = text.split("\n")
    for number, _ in whole:  # each reported line holds a secret, and redaction hides it
        assert store_doctor.redact(lines[number - 1]) != lines[number - 1]


def test_every_text_file_is_scanned(make_vault):
    files = {
        "MEMORY.md": "- [A](a.md) — a\n",
        "a.md": note("a"),
        "notes.txt": f"login: admin\npassword={DB_PASSWORD}\n",
        "deploy/config.yaml": "db:\n  url: postgres://atlas:S3cretPass@db.internal/atlas\n",
        ".env": "OPENAI_API_KEY=sk-proj-" + "Ab3" * 10 + "\n",
        "picture.png": b"\x89PNG\r\n\x1a\n\x00\x00password=hunter22\n",  # binary: not text
        "latin1.md": note("latin1", body=f"caf\xe9\npassword={DB_PASSWORD}\n").encode("latin-1"),
    }
    store = make_vault(files, name="store")
    proc = doctor(store, "--json")
    report = json.loads(proc.stdout)
    secrets = sorted((f["path"], f["line"]) for f in report["issues"] if f["kind"] == "secret")
    assert secrets == [(".env", 1), ("deploy/config.yaml", 2), ("latin1.md", 9), ("notes.txt", 2)]
    assert ("unreadable", "latin1.md") in {(f["kind"], f["path"]) for f in report["issues"]}
    assert DB_PASSWORD not in proc.stdout and "S3cretPass" not in proc.stdout


def test_secret_in_an_index_that_is_not_utf8(make_vault):
    store = make_vault({"MEMORY.md": b"- [A](a.md) \x97 caf\xe9\napi_key: 'abcdEFGH1234'\n", "a.md": note("a")})
    report = store_doctor.doctor(store, SETTINGS, CAPS)
    assert sorted((f["kind"], f["line"]) for f in report["issues"]) == [("index-unreadable", None), ("secret", 2)]


def test_secret_on_a_very_long_line_is_found(make_vault):
    line = "x " * 1_500_000 + "password=hunter22 " + "y " * 1_500_000
    store = make_vault({"MEMORY.md": "- [A](a.md) — a\n", "a.md": note("a"), "log.txt": f"one\n{line}\nthree\n"})
    report = store_doctor.doctor(store, SETTINGS, CAPS)
    assert [(f["kind"], f["path"], f["line"]) for f in report["issues"]] == [("secret", "log.txt", 2)]


def test_secret_across_the_parts_of_a_long_line(make_vault, monkeypatch):
    """Files are read in blocks and a line longer than a block in parts: a
    secret cut by any part boundary is still found, on the right line, in a
    note, another file and the index alike."""
    monkeypatch.setattr(store_doctor, "_BLOCK", 16)
    for shift in range(0, 40, 3):
        line = "x" * shift + " api_key=abcdEFGH1234 " + "y" * 50
        text = f"short\n{line}\nlast\n"
        assert store_doctor.find_secrets(text) == [(2, "a api_key value (api_key = ...)")], shift
        store = make_vault(
            {"MEMORY.md": f"- [A](a.md) — a\n{line}\n", "a.md": note("a", body=text), "log.txt": text},
            name=f"s{shift}",
        )
        report = store_doctor.doctor(store, SETTINGS, CAPS)
        secrets = [(f["path"], f["line"]) for f in report["issues"] if f["kind"] == "secret"]
        assert secrets == [("MEMORY.md", 2), ("a.md", 9), ("log.txt", 2)], shift
        assert sorted(f["kind"] for f in report["issues"] if f["path"] == "MEMORY.md") == ["index-content", "secret"]


# ---------------------------------------------------------------------------
# A runaway index: linear time, constant memory


def _runaway_index(path: Path, megabytes: int) -> None:
    """An index an agent kept appending to: pointers to real and missing
    notes, prose, comments and a secret now and then."""
    block = "".join(
        [
            "- [A](a.md) — the first note\n",
            "- [Gone](gone-note.md) — a note that is not there\n",
            "Some detail that belongs in a note, not in the index, written at length.\n",
            "<!-- a comment\n that spans lines -->\n",
            "## A heading\n",
            "- [[a]] — the same note again, as a wikilink\n",
            "password=hunter22 was the old one\n",
        ]
        * 20
    ).encode()
    with open(path, "wb") as handle:
        handle.write(b"# Memory\n")
        for _ in range((megabytes << 20) // len(block)):
            handle.write(block)


def test_findings_beyond_the_limit_are_counted_not_listed(make_vault):
    limit = store_doctor.MAX_LISTED
    index = "".join(f"- [G{i}](gone-{i}.md) — gone\n" for i in range(limit + 50))
    store = make_vault({"MEMORY.md": index, "a.md": note("a")}, name="store")
    proc = doctor(store, "--json")
    report = json.loads(proc.stdout)
    listed = [f for f in report["issues"] if f["kind"] == "broken-pointer"]
    assert len(listed) == limit and [f["line"] for f in listed] == list(range(1, limit + 1))
    assert report["counts"]["broken-pointer"] == limit + 50
    assert report["omitted"] == {"broken-pointer": 50}
    human = doctor(store).stdout
    assert f"... and 50 more not listed: at most {limit} of one kind per file" in human
    assert f"{limit + 50 + 1:,} issues: {limit + 50} broken-pointer, 1 unreachable" in human


def _run_measured(args: list[str]) -> tuple[int, str, float, int]:
    """Run a command: (exit code, stdout, CPU seconds, peak RSS in KiB), the
    last two of that child alone (os.wait4), so other load does not count."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRAPH_INDEX_")}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    return proc.returncode, out.decode(), usage.ru_utime + usage.ru_stime, usage.ru_maxrss


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs os.wait4 for a child's own time and memory")
def test_runaway_index_costs_linear_time_and_constant_memory(make_vault):
    """A 24 MiB index (the issue's took 4 min 47 s and 430 MB at 200 MiB):
    memory stays what a tiny store costs plus a few buffers; time is a
    small multiple of reading the file once; every line is still read."""
    store = make_vault({"a.md": note("a")}, name="store")
    index = store / "MEMORY.md"
    index.write_text("- [A](a.md) — a\n")
    doctor_json = [sys.executable, str(DOCTOR), str(store), "--json"]
    code, out, small_cpu, small_rss = _run_measured(doctor_json)
    assert code == 0, out
    _runaway_index(index, 24)
    size = index.stat().st_size
    floors = []  # the floor: reading the file once, line by line (best of three)
    for _ in range(3):
        start = time.process_time()
        with open(index, encoding="utf-8", errors="replace") as handle:
            for _ in handle:
                pass
        floors.append(time.process_time() - start)
    floor = min(floors)
    code, out, cpu, rss = _run_measured(doctor_json)
    assert code == 1
    # memory: a tiny store's plus a few buffers, not in proportion to the file (24 MiB)
    assert rss - small_rss < 16 * 1024, (rss, small_rss)
    # time: the old reader took about 280 times the floor; this one about 40
    assert cpu - small_cpu < 100 * floor, (cpu, small_cpu, floor)
    report = json.loads(out)
    assert report["index_size"]["bytes"] == size
    counts = report["counts"]
    assert counts["index-over-cap"] == 1
    assert counts["secret"] > 50_000 and counts["broken-pointer"] > 50_000  # every line was read ...
    listed = [f for f in report["issues"] if f["kind"] == "secret"]
    assert len(listed) == store_doctor.MAX_LISTED  # ... and the findings listed are bounded
    assert report["omitted"]["secret"] == counts["secret"] - len(listed)
    assert "hunter22" not in out
