"""graph.py report (issue 8): one self-contained HTML page of the vault's health.

The vault is a copy of ``examples/vault`` whose history is made the way a
vault gets one: drafts with broken links are added, then cleaned up step by
step, and the health report is appended to ``.graph/health-history.jsonl``
after each step (through the library, a day apart), the last line by a real
``graph.py health`` run.  Notes and links named like markup (``<script>``)
are added on the way.  Decay is not built yet, so its history is written
here in the format ``autograph/report.py`` documents.

The page is checked as text (it parses, holds no script and no URL, one
chart point per history line) and in headless Chromium (Debian's
``chromium``): screenshots at 390 px and 1280 px, light and dark, the
console read for uncaught errors, and the chart points counted in the DOM.
Without ``chromium`` those tests are skipped, and fail when
``AUTOGRAPH_REQUIRE_CORPORA=1`` (CI installs it, see ``.ci/run``).
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from autograph.graph import health
from autograph.read.vault import Vault
from autograph.schema.model import load_schema
from conftest import EXAMPLE_VAULT, SCRIPTS, copy_tree

GRAPH = SCRIPTS / "graph.py"
REPORT = Path(".graph") / "report.html"
DECAY = [
    {"core": 3, "active": 20, "warm": 12, "cold": 6, "archive": 1},
    {"core": 3, "active": 16, "warm": 14, "cold": 8, "archive": 2},
    {"core": 4, "active": 14, "warm": 13, "cold": 9, "archive": 3},
    {"core": 4, "active": 15, "warm": 11, "cold": 10, "archive": 4},
]
HOSTILE_NOTE = "ideas/<script>alert(3)"  # an unclosed <script> would swallow the rest of the page
HOSTILE_LINK = "</script><script>alert(2)</script>"
HOSTILE_TYPE = "<img src=x onerror=alert(1)>"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def graph(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GRAPH), *map(str, args)], capture_output=True, text=True, timeout=120)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def record(root: Path, when: datetime.datetime) -> float:
    """Append the vault's health report to its history, as graph.py health does."""
    vault = Vault.open(root)
    report = health.health_report(vault, load_schema(root, None))
    health.append_history(root, report, when.isoformat(timespec="seconds"))
    return report["score"]


def build_history(root: Path) -> list[float]:
    """Change the vault a step at a time and record its health after each
    step, a day apart; the last line comes from a real ``graph.py health``."""
    day = datetime.datetime(2026, 11, 1, 3, 0, tzinfo=datetime.UTC)
    scores = []

    def step(n: int) -> None:
        scores.append(record(root, day + datetime.timedelta(days=n)))

    for i in range(1, 7):
        write(root, f"inbox/Draft {i}.md", f"Draft {i}: see [[Missing idea {i}]] and [[Nobody {i}]].\n")
    step(0)
    for i, drafts in enumerate(([6, 5], [4], [3, 2], [1]), start=1):
        for n in drafts:
            (root / f"inbox/Draft {n}.md").unlink()
        step(i)
    write(root, "inbox/Unsorted.md", "Unsorted: [[Lost thread]], [[Another lost one]].\n")
    step(5)
    (root / "inbox/Unsorted.md").unlink()
    (root / "inbox").rmdir()
    write(
        root,
        HOSTILE_NOTE + ".md",
        f'---\ntype: "{HOSTILE_TYPE}"\ndescription: markup in names\n---\nSee [[Dana Reyes]] and [[{HOSTILE_LINK}]].\n',
    )
    step(6)
    proc = graph("health", root, "--json")
    assert proc.returncode == 0, proc.stderr
    scores.append(json.loads(proc.stdout)["score"])
    return scores


def write_decay(root: Path) -> None:
    lines = []
    for i, tiers in enumerate(DECAY):
        when = datetime.datetime(2026, 11, 4 + 7 * i, 2, 0, tzinfo=datetime.UTC)
        lines.append(json.dumps({"time": when.isoformat(timespec="seconds"), "tiers": tiers}))
    (root / ".graph" / "decay-history.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> tuple[Path, list[float]]:
    """The example vault with a health history and a decay history, and its report."""
    root = copy_tree(EXAMPLE_VAULT, tmp_path_factory.mktemp("report") / "vault")
    scores = build_history(root)
    write_decay(root)
    proc = graph("report", root)
    assert proc.returncode == 0, proc.stderr
    return root, scores


class Page(HTMLParser):
    """Tags, attributes, text and nesting errors of an HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.tips: list[str] = []  # the <title> of each chart point

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)
        if self.stack[-2:] == ["circle", "title"]:
            self.tips.append(data)

    def count(self, tag: str, cls: str) -> int:
        return sum(1 for t, attrs in self.tags if t == tag and cls in (attrs.get("class") or "").split())


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def test_report_parses_and_holds_no_script_or_url(vault):
    root, scores = vault
    text = (root / REPORT).read_text(encoding="utf-8")
    page = parse(text)
    assert page.errors == [] and page.stack == []
    assert [t for t, _ in page.tags if t in ("script", "iframe", "object", "embed", "link", "img", "base")] == []
    assert not any(name.startswith("on") for _, attrs in page.tags for name in attrs)
    for marker in ("http:", "https:", "//", "url("):
        assert marker not in text, marker
    # vault text is there, as text: escaped in the source, whole in what the page shows
    shown = "".join(page.text)
    assert "<script>alert(3)" in shown and HOSTILE_LINK in shown and HOSTILE_TYPE in shown
    assert "&lt;script&gt;alert(3)" in text and "<script" not in text.lower()
    csp = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0] and "script-src" not in csp[0]


def test_report_chart_has_one_point_per_history_line(vault):
    root, scores = vault
    assert len(scores) == 8 and len(set(scores)) >= 4, scores  # a history that moves
    lines = (root / ".graph" / "health-history.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(scores)
    page = parse((root / REPORT).read_text(encoding="utf-8"))
    assert page.count("circle", "point") == len(scores)
    assert page.count("polygon", "area") == len(DECAY[0])  # one band per tier
    # each point's tooltip (its <title>) gives its time and score, in history order
    assert [float(tip.rsplit(": ", 1)[1]) for tip in page.tips] == scores
    assert page.tips[0].startswith("2026-11-01 03:00")


def test_report_json_counts(vault, tmp_path):
    root, scores = vault
    out = tmp_path / "r.html"
    proc = graph("report", root, "--json", "-o", out)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["path"] == str(out) and data["written"] is True and data["bytes"] == out.stat().st_size
    sections = data["sections"]
    assert set(sections) == {
        "health", "trend", "tiers", "memory", "folders", "most_linked", "least_linked", "compliance",
    }  # fmt: skip
    assert set(sections["memory"]) == {
        "probable_duplicates", "identity_conflicts", "superseded_live", "unprocessed_daily", "flagged", "share",
    }  # fmt: skip
    assert sections["trend"] == {"points": len(scores)}
    assert sections["tiers"] == {"points": len(DECAY)}
    assert sections["health"]["score"] == scores[-1]
    assert set(sections["health"]) == {"score", "notes", "links", "broken_links", "orphans", "conflict_copies"}
    assert set(sections["folders"]) == {"folders", "with_findings"}
    assert set(sections["compliance"]) == {"score", "cards", "findings", "types"}
    assert sections["most_linked"] == 10 and sections["least_linked"] == 10
    assert sections["compliance"]["types"] >= 2


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_dry_run_writes_nothing(tmp_path):
    root = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    before = snapshot(root)
    proc = graph("report", root, "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["written"] is False and data["path"] == str((root / REPORT).resolve())
    assert snapshot(root) == before and not (root / ".graph").exists()
    proc = graph("report", root, "--dry-run", "-o", tmp_path / "r.html")
    assert proc.returncode == 0 and "would write" in proc.stdout
    assert not (tmp_path / "r.html").exists()


def test_without_decay_or_history_the_page_says_so(tmp_path):
    root = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    proc = graph("report", root)
    assert proc.returncode == 0, proc.stderr
    text = (root / REPORT).read_text(encoding="utf-8")
    page = parse(text)
    assert page.errors == []
    assert "Decay has not run" in text and "No history yet" in text
    assert page.count("circle", "point") == 0 and page.count("polygon", "area") == 0
    # nothing but the report and the index under .graph/: no history line added
    assert sorted(p.name for p in (root / ".graph").iterdir()) == ["index.sqlite", "report.html"]


def test_damaged_history_lines_are_skipped(tmp_path):
    root = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    (root / ".graph").mkdir()
    good = [{"time": f"2026-11-0{i}T03:00:00+00:00", "score": 90 + i} for i in range(1, 4)]
    lines = [json.dumps(good[0]), "not json", '{"score": NaN}', '{"score": "97"}', "[1, 2]", json.dumps(good[1])]
    lines += ['{"time": 5, "score": 1}', json.dumps(good[2])]
    (root / ".graph" / "health-history.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    decay = ['{"time": "2026-11-01", "tiers": {"core": 1, "warm": -2, "cold": 1.5, "odd": 4}}', '{"tiers": 3}', "x"]
    (root / ".graph" / "decay-history.jsonl").write_text("\n".join(decay) + "\n", encoding="utf-8")
    data = json.loads(graph("report", root, "--json").stdout)
    assert data["sections"]["trend"] == {"points": 3} and data["sections"]["tiers"] == {"points": 1}
    page = parse((root / REPORT).read_text(encoding="utf-8"))
    assert page.count("circle", "point") == 3
    assert page.count("rect", "area") == 2  # one run: a bar of core and odd


def test_output_file_needs_force_and_a_regular_file(tmp_path):
    root = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    out = tmp_path / "report.html"
    assert graph("report", root, "-o", out).returncode == 0
    first = out.read_bytes()
    out.write_bytes(b"mine")
    proc = graph("report", root, "-o", out)
    assert proc.returncode == 2 and "--force" in proc.stderr and out.read_bytes() == b"mine"
    assert graph("report", root, "-o", out, "--force").returncode == 0
    assert out.read_bytes()[:200] == first[:200]
    link = tmp_path / "link.html"
    link.symlink_to(out)
    proc = graph("report", root, "-o", link, "--force")
    assert proc.returncode == 2 and "symlink" in proc.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = graph("report", root, "-o", fifo, "--force")
    assert proc.returncode == 2, proc.stderr
    proc = graph("report", root, "-o", tmp_path / "missing" / "r.html")
    assert proc.returncode == 2 and "not an existing folder" in proc.stderr
    assert not (root / ".graph" / "report.html").exists()  # -o writes that file instead


# ---------------------------------------------------------------------------
# Headless Chromium

BROWSER_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
BROWSER_FLAGS += ["--disable-extensions", "--disable-background-networking", "--mute-audio"]


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's chromium; skipped when missing, failed when CI requires it."""
    found = shutil.which("chromium")
    if found is None:
        message = "chromium not found (apt-get install -y chromium; .ci/run does)"
        if os.environ.get("AUTOGRAPH_REQUIRE_CORPORA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


def browse(binary: str, page: Path, profile: Path, *flags: str) -> subprocess.Popen:
    """Start chromium on ``page`` with its console logged to stderr."""
    profile.mkdir(parents=True, exist_ok=True)
    argv = [binary, *BROWSER_FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *flags]
    return subprocess.Popen(
        [*argv, page.as_uri()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace"
    )


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"chromium did not finish in 60 s: {err[-2000:]}")
    assert proc.returncode == 0, err[-2000:]
    return out, err


def console(stderr: str) -> list[str]:
    """The page's console lines (chromium logs them as CONSOLE) and uncaught errors."""
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]


def png_pixel(path: Path, x: int, y: int) -> tuple[int, int, int, tuple[int, int]]:
    """The RGB of pixel (x, y) of a PNG and its size, decoding rows up to y only."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = depth = kind = 0
    while pos < len(data):
        length, name = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if name == b"IHDR":
            width, height, depth, kind = struct.unpack(">IIBB", chunk[:10])
        elif name == b"IDAT":
            idat += chunk
        pos += 12 + length
    assert depth == 8 and kind in (2, 6), (depth, kind)
    channels = 3 if kind == 2 else 4
    stride = width * channels
    raw = zlib.decompressobj().decompress(idat, (stride + 1) * (y + 1))
    previous = bytearray(stride)
    for row in range(y + 1):
        line = raw[row * (stride + 1) : (row + 1) * (stride + 1)]
        kind_, cur = line[0], bytearray(line[1:])
        for i in range(stride):
            a = cur[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind_ == 1:
                cur[i] = (cur[i] + a) & 255
            elif kind_ == 2:
                cur[i] = (cur[i] + b) & 255
            elif kind_ == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif kind_ == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        previous = cur
    r, g, b = previous[x * channels : x * channels + 3]
    return r, g, b, (width, height)


SHOT_DIR = os.environ.get("AUTOGRAPH_REPORT_SHOTS")  # keep the screenshots there to look at them


def test_report_in_headless_chromium(vault, chromium, tmp_path):
    root, scores = vault
    page = root / REPORT
    shots = {
        "phone": ("390,2000", False),
        "desktop": ("1280,2000", False),
        "phone-dark": ("390,2000", True),
        "desktop-dark": ("1280,2000", True),
    }
    runs = {}
    for name, (size, dark) in shots.items():
        flags = [f"--screenshot={tmp_path / (name + '.png')}", f"--window-size={size}"]
        runs[name] = browse(chromium, page, tmp_path / f"profile-{name}", *flags, *(["--force-dark-mode"] * dark))
    runs["dom"] = browse(chromium, page, tmp_path / "profile-dom", "--dump-dom")
    # a page that throws: proof that an uncaught error would be seen
    control = tmp_path / "control.html"
    control.write_text("<!DOCTYPE html><title>c</title><script>throw new Error('boom')</script>", encoding="utf-8")
    runs["control"] = browse(chromium, control, tmp_path / "profile-control", "--dump-dom")
    results = {name: finish(proc) for name, proc in runs.items()}

    control_log = results["control"][1]
    assert any("Uncaught" in line and "boom" in line for line in console(control_log)), control_log[-3000:]
    for name in [*shots, "dom"]:
        assert console(results[name][1]) == [], (name, console(results[name][1]))

    dom = parse(results["dom"][0])
    assert dom.count("circle", "point") == len(scores)
    assert dom.count("polygon", "area") == len(DECAY[0])
    assert [t for t, _ in dom.tags if t == "script"] == []
    assert "<script>alert(3)" in "".join(dom.text)

    for name, (size, dark) in shots.items():
        shot = tmp_path / f"{name}.png"
        r, g, b, (width, height) = png_pixel(shot, 2, 2)
        assert (width, height) == tuple(map(int, size.split(","))), name
        light = (r + g + b) / 3
        assert (light < 60) if dark else (light > 200), (name, (r, g, b))
        if SHOT_DIR:
            Path(SHOT_DIR).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(SHOT_DIR) / shot.name)


def test_output_never_takes_a_notes_place_even_with_force(tmp_path):
    root = copy_tree(EXAMPLE_VAULT, tmp_path / "vault")
    note = root / "people" / "Grace Liu.md"
    before = note.read_bytes()
    proc = graph("report", root, "-o", note, "--force")
    assert proc.returncode == 2 and "outside the vault or under .graph/" in proc.stderr
    assert note.read_bytes() == before
