"""Decay and recall (issue 10): the relevance maths, dates and ages (BR-32,
BR-34, BR-41 item 4), ``engine.py decay``, ``touch``, ``creative`` and
``stats``.  Hypothesis properties of the maths and of touch; parity with the
earlier autograph's formula computed independently here."""

from __future__ import annotations

import datetime
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SCRIPTS, require
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

from autograph.memory import decay
from autograph.read import (
    dates,
    frontmatter,  # noqa: E402
)
from autograph.read.vault import Vault  # noqa: E402
from autograph.schema.model import Schema, SchemaError, load_schema, validate  # noqa: E402

ENGINE = SCRIPTS / "engine.py"
D = datetime.date


def engine(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ENGINE), *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def engine_json(*args, cwd: Path | None = None) -> dict:
    proc = engine(*args, "--json", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def props(path: Path) -> dict:
    return frontmatter.parse(path.read_text(encoding="utf-8")).properties


def schema_file(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# The maths


def earlier_relevance(days, count, rate=0.015, floor=0.1):
    """The earlier project's calc_relevance, written out again from its
    description, plus the cap at 1 the issue adds (a future date is today)."""
    strength = 1 + math.log(max(count, 1))
    return max(floor, min(1.0, round(1 - rate / strength * max(days, 0), 3)))


def earlier_tier(days, current=None):
    if current == "core":
        return "core"
    return "active" if days <= 7 else "warm" if days <= 21 else "cold" if days <= 60 else "archive"


def test_worked_example_of_the_docs():
    assert decay.strength(3) == pytest.approx(2.0986, abs=1e-4)
    assert decay.relevance(30, 3) == 0.786
    assert decay.relevance(30, 1) == 0.55
    assert decay.tier_for(30) == "cold"


@pytest.mark.parametrize(
    ("days", "tier"),
    [(0, "active"), (7, "active"), (8, "warm"), (21, "warm"), (22, "cold"), (60, "cold"), (61, "archive")],
)
def test_tier_boundaries_are_inclusive(days, tier):
    assert decay.tier_for(days) == tier


def test_core_is_never_demoted_and_future_dates_count_as_today():
    assert decay.tier_for(500, "core") == "core"
    assert decay.tier_for(500, "Core") == "core"
    assert decay.relevance(-10, 1) == 1.0
    assert decay.relevance(10_000, 1) == 0.1


rates = st.floats(min_value=0, max_value=1)
floors = st.floats(min_value=0, max_value=1)
days_st = st.integers(min_value=-400, max_value=5000)
counts = st.integers(min_value=-5, max_value=10_000)


@given(days_st, counts, rates, floors)
def test_relevance_lies_between_floor_and_one(days, count, rate, floor):
    value = decay.relevance(days, count, rate, floor)
    assert floor <= value <= 1


@given(days_st, st.integers(min_value=0, max_value=400), counts, rates, floors)
def test_relevance_never_increases_with_days(days, more, count, rate, floor):
    assert decay.relevance(days + more, count, rate, floor) <= decay.relevance(days, count, rate, floor)


@given(days_st, counts, st.integers(min_value=0, max_value=1000), rates, floors)
def test_relevance_never_decreases_with_access_count(days, count, more, rate, floor):
    assert decay.relevance(days, count + more, rate, floor) >= decay.relevance(days, count, rate, floor)


TIER_VALUES = st.one_of(st.none(), st.sampled_from(["core", "active", "warm", "cold", "archive", "", "hot", "Cold"]))


@settings(max_examples=300)
@given(TIER_VALUES, st.one_of(st.none(), st.integers(min_value=-30, max_value=400)), st.one_of(st.none(), counts))
def test_a_touch_never_lowers_a_tier(stored, days, count):
    today = D(2026, 1, 31)
    properties = {}
    if stored is not None:
        properties["tier"] = stored
    if days is not None:
        properties["last_accessed"] = (today - datetime.timedelta(days=days)).isoformat()
    if count is not None:
        properties["access_count"] = count
    settings_ = decay.Settings()
    reading = decay.read_card("a.md", properties, today, settings_)
    values = decay.touch_values(reading, today, settings_)
    assert decay.tier_rank(values["tier"]) >= decay.tier_rank(stored)
    assert decay.tier_rank(values["tier"]) >= decay.tier_rank("active") or stored in ("archive", "cold", "Cold")
    assert values["access_count"] == (count + 1 if count is not None and count >= 0 else 1)
    # and the date written never makes the card older than it was
    if days is not None:
        assert (today - values["last_accessed"]).days <= max(days, 0)


# ---------------------------------------------------------------------------
# Dates


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01", D(2024, 5, 1)),
        ("2024-05-01T23:30", datetime.datetime(2024, 5, 1, 23, 30)),
        ("2024-05-01 23:30:15.25", datetime.datetime(2024, 5, 1, 23, 30, 15, 250000)),
        ("2024-05-01T23:30:00Z", datetime.datetime(2024, 5, 1, 23, 30, tzinfo=datetime.UTC)),
        (1_700_000_000, datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)),
        (1_700_000_000_000, datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)),
        ("", None),
        (None, None),
    ],
)
def test_parse_when(value, expected):
    assert dates.parse_when(value) == expected


@pytest.mark.parametrize(
    "value",
    ["{{date}}", "{{date:YYYY-MM-DD}}", "<% tp.file.creation_date() %>", "soon", "2024-02-30", 20240501, 12, True,
     ["2024-05-01"], "2024-05-01T25:00", 1.5e9],
)  # fmt: skip
def test_not_a_date(value):
    with pytest.raises(dates.NotADate):
        dates.parse_when(value)


def test_br32_a_date_only_value_is_never_shifted_by_the_zone(case, tmp_path):
    vault = case("BR-32") / "vault"
    task = vault / "task.md"
    before = task.read_bytes()
    zone = dates.zone_of("America/Chicago")
    now = dates.parse_when("2021-04-11T09:00:00-05:00")
    today = dates.today_in(zone, now)
    properties = props(task)
    assert properties["due"] == "2021-04-01"  # 1: a calendar date, written back as it is
    assert dates.local_date(dates.parse_when(properties["due"]), zone) == D(2021, 4, 1)
    assert dates.local_date(dates.parse_when(properties["created"]), zone) == D(2021, 4, 1)  # 2: not 04-02
    assert dates.age_days(properties["due"], today, zone) == 10  # 3
    assert dates.age_days(properties["created"], today, zone) == 10
    # the same in every zone: a date and a wall-clock time are never converted
    for name in ("UTC", "Asia/Tokyo", "Pacific/Kiritimati", "Pacific/Pago_Pago"):
        assert dates.age_days(properties["due"], D(2021, 4, 11), dates.zone_of(name)) == 10
        assert dates.age_days(properties["created"], D(2021, 4, 11), dates.zone_of(name)) == 10
    # 4: decay (created is the last access) adds its tier and changes neither line
    schema = schema_file(tmp_path, {"timezone": "America/Chicago"})
    data = engine_json("decay", vault, "--schema", schema, "--now", "2021-04-11T09:00:00-05:00")
    assert data["transitions"] == {"none->warm": 1}
    after = task.read_bytes()
    assert after.replace(b"tier: warm\n", b"") == before


BR34 = [
    ("reviewed.md", "reviewed", "America/New_York", "2023-03-13T08:00:00-04:00", 1),
    ("seen.md", "last_seen", "America/Los_Angeles", "2022-06-15T22:30:00-07:00", 0),
    ("created.md", "created", "America/New_York", "2023-03-13T08:00:00-04:00", 72),
]


@pytest.mark.parametrize(("name", "key", "zone", "now", "age"), BR34, ids=[row[0] for row in BR34])
def test_br34_ages_are_local_calendar_days(case, name, key, zone, now, age):
    vault = case("BR-34") / "vault"
    tz = dates.zone_of(zone)
    today = dates.today_in(tz, dates.parse_when(now))
    assert dates.age_days(props(vault / name)[key], today, tz) == age


def test_br34_decay_counts_72_days_across_the_dst_change(case, tmp_path):
    vault = case("BR-34") / "vault"
    schema = schema_file(tmp_path, {"timezone": "America/New_York", "decay": {"store_relevance": True}})
    data = engine_json("decay", vault, "--schema", schema, "--now", "2023-03-13T08:00:00-04:00")
    assert data["transitions"] == {"none->archive": 1}  # created.md; the others have no date decay reads
    assert props(vault / "created.md")["relevance"] == earlier_relevance(72, 1)  # 1 - 0.015 * 72 = -0.08 -> floor
    assert sorted(item["path"] for item in data["skipped"]) == ["reviewed.md", "seen.md"]
    assert {item["reason"] for item in data["skipped"]} == {"undated"}


def test_br41_placeholder_dates_are_not_dates_and_are_left_alone(case):
    vault = case("BR-41") / "vault"
    before = {p: p.read_bytes() for p in vault.rglob("*.md")}
    data = engine_json("decay", vault, "--today", "2030-01-01")
    reasons = {item["path"]: (item["reason"], item["detail"]) for item in data["skipped"]}
    assert reasons["Templates/City Template.md"][0] == "not-a-date"
    assert "placeholder" in reasons["Templates/City Template.md"][1]
    assert reasons["Templates/Person Template.md"][0] == "not-a-date"
    assert reasons["Acme.md"][0] == "undated"
    assert data["tiers"]["archive"] == 0 and data["edits"] == []  # never a very old note
    assert {p: p.read_bytes() for p in vault.rglob("*.md")} == before


def test_the_machine_zone_is_used_without_a_schema_zone():
    instant = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.UTC)
    assert dates.local_date(instant, None) == instant.astimezone().date()
    assert dates.today_in(None, D(2024, 5, 1)) == D(2024, 5, 1)


# ---------------------------------------------------------------------------
# decay


def card(**fields) -> str:
    lines = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\n{lines}---\nBody of the card.\n"


def test_decay_writes_only_changed_tiers_and_is_idempotent(make_vault):
    vault = make_vault(
        {
            "a.md": card(created="2026-01-30"),
            "b.md": card(created="2026-01-01", tier="cold"),
            "c.md": card(last_accessed="2025-01-01", updated="2026-01-30", tier="archive"),
            "d.md": card(created="2020-01-01", tier="core"),
        }
    )
    first = engine_json("decay", vault, "--today", "2026-01-31")
    assert first["transitions"] == {"none->active": 1}
    assert sorted(first["written"]) == ["a.md"]
    assert first["tiers"] == {"core": 1, "active": 1, "warm": 0, "cold": 1, "archive": 1}
    second = engine_json("decay", vault, "--today", "2026-01-31")
    assert second["edits"] == [] and second["run"] is None
    later = engine_json("decay", vault, "--today", "2026-02-08")  # a: 9 days -> warm
    assert later["transitions"] == {"active->warm": 1}
    assert props(vault / "d.md")["tier"] == "core"
    assert (vault / "a.md").read_text() == "---\ncreated: 2026-01-30\ntier: warm\n---\nBody of the card.\n"


def test_decay_never_writes_the_index_or_a_named_hub(make_vault):
    """MEMORY.md (index.files) and hubs named in hubs.names are lists of
    cards, not cards: decay gives them no tier, whatever their dates."""
    index = card(created="2026-01-01") + "- [[a]]\n"
    vault = make_vault(
        {
            "a.md": card(created="2026-01-30"),
            "MEMORY.md": index,
            "notes/memory log.md": index,  # neither the index file nor a hub's name
            "Index.md": index,  # hubs.names has "index"; compared without letter case
        }
    )
    report = engine_json("decay", vault, "--today", "2026-01-31")
    assert sorted(report["written"]) == ["a.md", "notes/memory log.md"]
    assert (vault / "MEMORY.md").read_text() == index
    assert (vault / "Index.md").read_text() == index


def test_decay_removes_a_stale_relevance_once_and_keeps_it_when_asked(make_vault, tmp_path):
    vault = make_vault({"a.md": card(created="2026-01-21", tier="warm", relevance=0.85, title="A")})
    data = engine_json("decay", vault, "--today", "2026-01-31")
    assert data["relevance_removed"] == 1 and data["transitions"] == {}
    assert (vault / "a.md").read_text() == card(created="2026-01-21", tier="warm", title="A")
    assert engine_json("decay", vault, "--today", "2026-01-31")["edits"] == []
    schema = schema_file(tmp_path, {"decay": {"store_relevance": True}})
    data = engine_json("decay", vault, "--today", "2026-01-31", "--schema", schema)
    assert props(vault / "a.md")["relevance"] == 0.85  # 1 - 0.015 * 10
    assert engine_json("decay", vault, "--today", "2026-01-31", "--schema", schema)["edits"] == []
    data = engine_json("decay", vault, "--today", "2026-02-01", "--schema", schema)
    assert [e["reason"] for e in data["edits"]] == ["relevance 0.85 -> 0.835"]


def test_decay_reports_undated_and_bad_dates_and_never_treats_them_as_old(make_vault):
    vault = make_vault(
        {
            "none.md": "no frontmatter\n",
            "empty.md": card(title="x"),
            "bad.md": card(last_accessed="yesterday", created="2020-01-01"),
            "int.md": card(created=12345),
            "broken.md": "---\nkey: [unclosed\n---\n",
            "Templates/T.md": card(created="{{date}}"),
            ".obsidian/templates.json": json.dumps({"folder": "Templates"}),
        }
    )
    data = engine_json("decay", vault, "--today", "2026-01-31")
    reasons = {item["path"]: item["reason"] for item in data["skipped"]}
    assert reasons == {
        "none.md": "undated",
        "empty.md": "undated",
        "bad.md": "not-a-date",
        "int.md": "not-a-date",
        "broken.md": "invalid-frontmatter",
    }
    assert data["skipped_by_reason"] == {"undated": 2, "not-a-date": 2, "invalid-frontmatter": 1}
    assert data["edits"] == []
    assert sum(data["tiers"].values()) == 0


def test_decay_reads_epoch_seconds_and_milliseconds(make_vault):
    day = datetime.datetime(2026, 1, 20, 12, tzinfo=datetime.UTC)
    vault = make_vault({"s.md": card(created=int(day.timestamp())), "ms.md": card(created=int(day.timestamp() * 1000))})
    schema = schema_file(vault.parent, {"timezone": "UTC"})
    data = engine_json("decay", vault, "--today", "2026-01-31", "--schema", schema)
    assert data["transitions"] == {"none->warm": 2}  # 11 days


def test_decay_keeps_every_other_byte(make_vault):
    text = (
        "---\r\ntitle: 'Quoted'   # a comment\r\ntags:\r\n  - one\r\n  -\r\ncreated: 2026-01-01\r\n"
        "tier: active\r\nrelevance: 0.9\r\n---\r\nBody\r\n"
    )
    vault = make_vault({"a.md": b"\xef\xbb\xbf" + text.encode()})
    engine_json("decay", vault, "--today", "2026-01-31")
    after = (vault / "a.md").read_bytes()
    assert (
        after == b"\xef\xbb\xbf" + text.replace("tier: active", "tier: cold").replace("relevance: 0.9\r\n", "").encode()
    )


def test_decay_dry_run_writes_nothing_and_a_run_appends_the_tier_history(make_vault):
    vault = make_vault({"a.md": card(created="2026-01-30")})
    before = (vault / "a.md").read_bytes()
    proc = engine("decay", vault, "--today", "2026-01-31", "--dry-run", "--diff")
    assert proc.returncode == 0 and "+tier: active" in proc.stdout
    assert (vault / "a.md").read_bytes() == before
    assert not (vault / ".graph" / "decay-history.jsonl").exists()
    engine_json("decay", vault, "--today", "2026-01-31")
    engine_json("decay", vault, "--today", "2026-02-20")
    from autograph.graph import report

    history = report.read_decay_history(vault)
    assert [entry["tiers"]["active"] for entry in history] == [1, 0]
    assert [entry["tiers"]["warm"] for entry in history] == [0, 1]
    assert history[0]["time"] == "2026-01-31"


def test_decay_keeps_a_card_cache_and_reads_only_changed_cards(make_vault):
    vault = make_vault({f"n{i}.md": card(created=f"2026-01-{10 + i:02d}") for i in range(10)})
    first = engine_json("decay", vault, "--today", "2026-01-31")
    assert len(first["written"]) == 10
    cache = vault / ".graph" / "cache" / "decay.json"
    assert cache.exists()
    assert engine_json("decay", vault, "--today", "2026-01-31")["edits"] == []  # written notes read again
    rows = json.loads(cache.read_text())["rows"]
    assert rows["n0.md"][1] == {"created": "2026-01-10", "tier": "warm"}
    (vault / "n0.md").write_text(card(created="2026-01-30", tier="warm"))  # changed by a person
    assert engine_json("decay", vault, "--today", "2026-01-31")["transitions"] == {"warm->active": 1}
    cache.write_text("{not json")  # a damaged cache is ignored
    assert engine_json("decay", vault, "--today", "2026-01-31")["edits"] == []
    assert engine_json("stats", vault, "--today", "2026-01-31")["tiers"]["active"] == 1
    before = cache.read_bytes()
    engine_json("decay", vault, "--today", "2026-01-31", "--dry-run")
    assert cache.read_bytes() == before


def test_decay_type_rates_and_the_earlier_domain_rates(make_vault, tmp_path):
    vault = make_vault({"p.md": card(type="person", created="2026-01-01"), "x.md": card(created="2026-01-01")})
    schema = schema_file(tmp_path, {"decay": {"store_relevance": True, "domain_rates": {"person": 0.005}}})
    engine_json("decay", vault, "--today", "2026-01-31", "--schema", schema)
    assert props(vault / "p.md")["relevance"] == 0.85  # 1 - 0.005 * 30
    assert props(vault / "x.md")["relevance"] == 0.55


# ---------------------------------------------------------------------------
# Parity with the earlier project's formula


def test_parity_with_the_earlier_formula(make_vault, tmp_path):
    rng = random.Random(10)
    today = D(2026, 1, 31)
    files, expected = {}, {}
    rates = {"person": 0.005, "daily": 0.02}
    for i in range(300):
        days = rng.choice([0, 1, 7, 8, 21, 22, 60, 61, 90, 400, -3, rng.randint(0, 200)])
        count = rng.choice([None, 0, 1, 2, 5, 40, "x"])
        kind = rng.choice([None, "person", "daily", "idea"])
        tier = rng.choice([None, "core", "active", "warm", "cold", "archive"])
        when = today - datetime.timedelta(days=days)
        form = rng.choice(["date", "datetime", "epoch"])
        value = (
            when.isoformat()
            if form == "date"
            else f"{when.isoformat()}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            if form == "datetime"
            else int(datetime.datetime(when.year, when.month, when.day, 12, tzinfo=datetime.UTC).timestamp())
        )
        key = rng.choice(["last_accessed", "updated", "created"])
        fields = {key: value}
        if kind:
            fields["type"] = kind
        if count is not None:
            fields["access_count"] = count
        if tier:
            fields["tier"] = tier
        files[f"c{i:03d}.md"] = card(**fields)
        n = count if isinstance(count, int) else 1
        rate = rates.get(kind, 0.015)
        expected[f"c{i:03d}.md"] = (
            earlier_tier(days, tier),
            None if tier == "core" else earlier_relevance(days, n, rate),
        )
    vault = make_vault(files)
    schema = schema_file(tmp_path, {"timezone": "UTC", "decay": {"store_relevance": True, "type_rates": rates}})
    data = engine_json("decay", vault, "--today", today.isoformat(), "--schema", schema)
    assert data["skipped"] == []
    for name, (tier, relevance) in expected.items():
        got = props(vault / name)
        assert got["tier"] == tier, name
        assert got.get("relevance") == relevance, name


# ---------------------------------------------------------------------------
# touch


@pytest.mark.parametrize(
    ("tier", "tier_after", "days_back"),
    [
        ("archive", "cold", 40),
        ("cold", "warm", 14),
        ("warm", "active", 3),
        ("active", "active", 0),
        (None, "active", 0),
        ("core", "core", 0),
        ("unheard-of", "active", 0),
    ],
)
def test_touch_graduated_recall(make_vault, tier, tier_after, days_back):
    fields = {"created": "2024-01-01", "access_count": 2}
    if tier:
        fields["tier"] = tier
    vault = make_vault({"people/Ann Lee.md": card(**fields)})
    data = engine_json("touch", "Ann Lee", "--vault", vault, "--today", "2026-01-31")
    got = props(vault / "people/Ann Lee.md")
    assert got["tier"] == tier_after
    assert got["access_count"] == 3
    assert got["last_accessed"] == (D(2026, 1, 31) - datetime.timedelta(days=days_back)).isoformat()
    assert "relevance" not in got
    assert data["touched"][0]["tier"] == tier_after


def test_touch_then_decay_drifts_back_down(make_vault):
    vault = make_vault({"a.md": card(created="2024-01-01", tier="archive")})
    engine_json("touch", "a.md", "--vault", vault, "--today", "2026-01-31")
    assert props(vault / "a.md")["tier"] == "cold"
    assert engine_json("decay", vault, "--today", "2026-01-31")["edits"] == []  # 40 days: cold, consistent
    assert engine_json("decay", vault, "--today", "2026-02-21")["transitions"] == {"cold->archive": 1}


def test_touch_keeps_a_more_recent_access_and_writes_relevance_when_stored(make_vault, tmp_path):
    vault = make_vault({"a.md": card(last_accessed="2026-01-30", tier="archive", relevance=0.1)})
    schema = schema_file(tmp_path, {"decay": {"store_relevance": True}})
    engine_json("touch", "a", "--vault", vault, "--today", "2026-01-31", "--schema", schema)
    got = props(vault / "a.md")
    assert got["last_accessed"] == "2026-01-30" and got["tier"] == "active"
    assert got["relevance"] == earlier_relevance(1, 1)


def test_touch_resolves_names_and_paths_and_refuses_unknown_notes(make_vault):
    vault = make_vault(
        {
            "people/Ann.md": card(created="2026-01-01"),
            "Templates/T.md": card(created="{{date}}"),
            ".obsidian/templates.json": json.dumps({"folder": "Templates"}),
        }
    )
    data = engine_json("touch", "[[Ann]]", "Templates/T.md", "--vault", vault, "--today", "2026-01-31")
    assert [item["path"] for item in data["touched"]] == ["people/Ann.md"]
    assert data["skipped"][0]["reason"] == "not-a-card"
    assert (vault / "Templates/T.md").read_text() == card(created="{{date}}")
    data = engine_json("touch", "Ann.md", "--vault", vault, "--today", "2026-01-31", cwd=vault / "people")
    assert props(vault / "people/Ann.md")["access_count"] == 2
    proc = engine("touch", "Nobody", "--vault", vault)
    assert proc.returncode == 2 and "Nobody" in proc.stderr


def test_touch_refuses_a_name_that_fits_several_notes(make_vault):
    """As card.py reads a NOTE: touching one of two notes named Acme is a
    guess; the candidates are named, a path picks one."""
    vault = make_vault({"a/Acme.md": card(created="2026-01-01"), "b/Acme.md": card(created="2026-01-01")})
    proc = engine("touch", "Acme", "--vault", vault)
    assert proc.returncode == 2 and "a/Acme.md" in proc.stderr and "b/Acme.md" in proc.stderr
    assert "access_count" not in (vault / "a/Acme.md").read_text() + (vault / "b/Acme.md").read_text()
    data = engine_json("touch", "b/Acme", "--vault", vault, "--today", "2026-01-31")
    assert [item["path"] for item in data["touched"]] == ["b/Acme.md"]


def test_touch_reports_a_bad_date_and_still_counts(make_vault):
    vault = make_vault({"a.md": card(last_accessed="someday", access_count="many")})
    data = engine_json("touch", "a", "--vault", vault, "--today", "2026-01-31")
    assert "someday" in data["touched"][0]["note"]
    got = props(vault / "a.md")
    assert got["access_count"] == 1 and got["last_accessed"] == "2026-01-31" and got["tier"] == "active"


def test_touch_dry_run_and_invalid_frontmatter(make_vault):
    vault = make_vault({"a.md": card(created="2026-01-01"), "b.md": "---\nx: [\n---\n"})
    data = engine_json("touch", "a", "b", "--vault", vault, "--dry-run")
    assert data["written"] == [] and len(data["edits"]) == 1
    assert data["skipped"][0]["reason"] == "invalid-frontmatter"
    assert (vault / "a.md").read_text() == card(created="2026-01-01")


# ---------------------------------------------------------------------------
# creative and stats


def cold_vault(make_vault):
    files = {f"c{i:02d}.md": card(created=f"2025-{1 + i % 12:02d}-01", description=f"card {i}") for i in range(40)}
    files["fresh.md"] = card(created="2026-01-30")
    return make_vault(files)


def test_creative_same_seed_same_cards_and_only_cold_ones(make_vault):
    vault = cold_vault(make_vault)
    one = engine_json("creative", vault, "-n", "4", "--seed", "7", "--today", "2026-01-31")
    two = engine_json("creative", vault, "-n", "4", "--seed", "7", "--today", "2026-01-31")
    assert one["picks"] == two["picks"] and len(one["picks"]) == 4
    assert all(p["tier"] in ("cold", "archive") for p in one["picks"])
    assert "fresh.md" not in {p["path"] for p in one["picks"]}
    other = engine_json("creative", vault, "-n", "4", "--seed", "8", "--today", "2026-01-31")
    assert other["picks"] != one["picks"]
    day = engine_json("creative", vault, "--today", "2026-01-31")
    assert day["seed"] == "2026-01-31" and len(day["picks"]) == 5
    assert engine_json("creative", vault, "--today", "2026-01-31")["picks"] == day["picks"]
    assert not (vault / ".graph" / "journal").exists()  # no --touch: nothing written


def test_creative_touch_moves_the_picks_up(make_vault):
    vault = cold_vault(make_vault)
    data = engine_json("creative", vault, "-n", "2", "--seed", "1", "--touch", "--today", "2026-01-31")
    assert len(data["written"]) == 2
    for item in data["touched"]:
        assert props(vault / item["path"])["access_count"] == 1


def test_stats(make_vault):
    vault = make_vault(
        {
            "a.md": card(created="2026-01-30", type="person", access_count=3),
            "b.md": card(created="2025-01-01", type="person"),
            "c.md": card(created="2020-01-01", tier="core"),
            "d.md": card(title="undated"),
        }
    )
    data = engine_json("stats", vault, "--today", "2026-01-31")
    assert data["tiers"] == {"core": 1, "active": 1, "warm": 0, "cold": 0, "archive": 1}
    assert data["by_type"]["person"]["active"] == 1 and data["by_type"]["(no type)"]["core"] == 1
    assert data["undated"] == 1 and data["dated"] == 3
    assert data["stale"] == 2 and data["stale_share"] == round(2 / 3, 4)
    assert data["never_touched"] == 3 and data["never_touched_share"] == 0.75
    assert data["working_set_bytes"] == (vault / "a.md").stat().st_size
    assert engine("stats", vault).returncode == 0


# ---------------------------------------------------------------------------
# Schema and command line


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"timezone": "Mars/Olympus"}, ["$.timezone", "unknown time zone"]),
        ({"timezone": 5}, ["$.timezone", "IANA"]),
        ({"decay": {"store_relevance": "yes"}}, ["$.decay.store_relevance", "true"]),
        ({"decay": {"tiers": {"active": 30, "warm": 21}}}, ["$.decay.tiers", "active <= warm <= cold"]),
        ({"decay": {"tiers": {"hot": 3}}}, ["$.decay.tiers.hot", "unknown tier"]),
        ({"decay": {"stale_days": -1}}, ["$.decay.stale_days"]),
        ({"decay": {"health_weight": 101}}, ["$.decay.health_weight"]),
    ],
)
def test_schema_checks_the_decay_keys(data, words):
    problems = validate(data)
    assert len(problems) == 1, problems
    for word in words:
        assert word in problems[0]


def test_schema_decay_defaults_and_example(tmp_path):
    assert validate({"timezone": "Europe/Berlin", "decay": {"store_relevance": True, "stale_days": 30}}) == []
    settings_ = decay.Settings.of(Schema(load_schema().data))
    assert (settings_.rate, settings_.floor, settings_.tiers, settings_.store_relevance) == (
        0.015,
        0.1,
        (7, 21, 60),
        False,
    )
    example = load_schema(None, Path(__file__).resolve().parents[1] / "schema.example.json")
    assert example.data["timezone"] and "store_relevance" in example.data["decay"]
    with pytest.raises(SchemaError):
        load_schema(None, schema_file(tmp_path, {"timezone": "Nowhere/Land"}))


def test_bad_today_and_now_are_usage_errors(make_vault):
    vault = make_vault({"a.md": card(created="2026-01-01")})
    for args in (["--today", "31.01.2026"], ["--now", "soon"], ["--today", "2026-01-31", "--now", "2026-01-31T00:00"]):
        proc = engine("decay", vault, *args)
        assert proc.returncode == 2, args
    assert engine("creative", vault, "-n", "-1").returncode == 2


@pytest.mark.parametrize("command", ["decay", "touch", "creative", "stats"])
def test_help_lists_the_json_keys(command):
    proc = engine(command, "--help")
    assert proc.returncode == 0 and "JSON keys (--json)" in proc.stdout and "--today" in proc.stdout


# ---------------------------------------------------------------------------
# Real vaults


def _typed_and_bodies(vault: Path) -> dict:
    found = {}
    for path in sorted(vault.rglob("*.md")):
        if ".graph" in path.parts:
            continue
        data = path.read_bytes()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            found[path] = (data, None)
            continue
        block = frontmatter.parse(text)
        owned = ("tier", "relevance")
        properties = {k: v for k, v in (block.properties if block else {}).items() if k not in owned}
        found[path] = (text[block.body if block else 0 :], properties)
    return found


def _writable_copy(source: Path, dest: Path) -> Path:
    from conftest import copy_tree

    return copy_tree(require(source), dest)


def test_obsidian_hub_decay_after_init(fast_tmp):
    """Issue 10: decay on a copy of obsidian-hub after ``engine.py init
    --apply`` changes nothing but the fields it owns; a second run writes
    nothing; with store_relevance false, runs at +8, +22 and +61 days write
    exactly the notes whose tier changed."""
    from conftest import CORPORA

    vault = _writable_copy(CORPORA / "obsidian-hub", fast_tmp / "hub")
    assert engine("init", vault, "--apply").returncode == 0
    # init dates each note it gives frontmatter by its file name or file time
    dated = {}
    for path in Vault.open(vault).cards(load_schema(vault)):
        created = props_safe(vault / path).get("created")
        if created:
            dated[path] = dates.parse_when(created)
    assert dated
    start = max(dated.values())
    before = _typed_and_bodies(vault)
    first = engine_json("decay", vault, "--today", start.isoformat())
    assert len(first["written"]) == len(dated)
    assert _typed_and_bodies(vault) == before
    assert engine_json("decay", vault, "--today", start.isoformat())["written"] == []
    counts = []
    for offset in (8, 22, 61):
        today = start + datetime.timedelta(days=offset)
        tiers_before = {p: props_safe(vault / p).get("tier") for p in dated}  # read from the files
        data = engine_json("decay", vault, "--today", today.isoformat())
        tiers_after = {p: props_safe(vault / p).get("tier") for p in dated}
        changed = sorted(p for p in dated if tiers_before[p] != tiers_after[p])
        assert sorted(data["written"]) == changed
        for path, created in dated.items():
            assert tiers_after[path] == decay.tier_for((today - created).days)
        counts.append(len(changed))
        assert _typed_and_bodies(vault) == before
    assert first["skipped_by_reason"]["undated"] > 6000  # obsidian-hub's notes carry no dates
    print(f"obsidian-hub: {len(dated)} dated cards; written at +8, +22, +61 days: {counts}")
    assert counts == [
        sum(decay.tier_for((start - c).days + o) != decay.tier_for((start - c).days + p) for c in dated.values())
        for p, o in ((0, 8), (8, 22), (22, 61))
    ]


def props_safe(path: Path) -> dict:
    try:
        block = frontmatter.parse(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError:
        return {}
    return block.properties if block is not None and block.error is None else {}


def test_dendron_site_epoch_milliseconds(tmp_path):
    """dendron-site stores created/updated as epoch milliseconds: every card
    gets a tier, only the owned fields change, a second run writes nothing."""
    from conftest import CORPORA

    vault = _writable_copy(CORPORA / "dendron-site", tmp_path / "dendron")
    before = _typed_and_bodies(vault)
    data = engine_json("decay", vault, "--today", "2021-06-01")
    assert len(data["written"]) > 900
    assert sum(n for k, n in data["tiers"].items()) >= 900
    assert _typed_and_bodies(vault) == before
    assert engine_json("decay", vault, "--today", "2021-06-01")["written"] == []


# ---------------------------------------------------------------------------
# graph.py health


def test_health_shows_the_stale_share_and_tiers_unscored_by_default(make_vault, tmp_path):
    from autograph.graph import health
    from autograph.read.index import NoteIndex

    vault = make_vault(
        {
            "a.md": card(created="2026-01-30", description="x"),
            "b.md": card(created="2025-01-01", description="[[a]]"),
            "c.md": card(title="undated"),
        }
    )
    opened = Vault.open(vault)
    today = D(2026, 1, 31)
    report = health.report_for(opened, load_schema(vault), NoteIndex(opened), today)
    assert report["stale_share"] == 0.5
    assert report["tiers"] == {"core": 0, "active": 1, "warm": 0, "cold": 0, "archive": 1}
    assert report["recall"]["dated"] == 2 and report["recall"]["undated"] == 1
    assert "stale" not in report["penalties"]
    entry = health.history_entry(report, "2026-01-31T03:00:00+00:00")
    assert entry["stale_share"] == 0.5 and entry["tiers"]["archive"] == 1
    weighted = load_schema(None, schema_file(tmp_path, {"decay": {"health_weight": 10}}))
    scored = health.health_report(Vault.open(vault), weighted, None, today)
    assert scored["penalties"]["stale"] == 5.0
    assert scored["score"] == pytest.approx(report["score"] - 5.0, abs=0.11)
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "graph.py"), "health", str(vault)], capture_output=True, text=True
    )
    assert "dated cards" in proc.stdout


def test_the_history_file_is_the_one_the_report_reads():
    from autograph.graph import report

    assert decay.HISTORY == report.DECAY_HISTORY


def test_decay_cache_stays_utf8_with_a_lone_surrogate(make_vault):
    """A card value holding a lone surrogate (a "\\ud800" escape) is kept in
    .graph/cache/decay.json as its JSON escape: the file is UTF-8 and the
    next run reads it back to the same report."""
    card = '---\ncreated: 2026-11-01\ntype: "\\ud800x"\n---\n'
    root = make_vault({"a.md": card, "b.md": "---\ncreated: 2026-10-01\n---\n"})
    first = engine_json("decay", root, "--today", "2026-12-01", "--dry-run")
    engine_json("decay", root, "--today", "2026-12-01")
    data = (root / ".graph" / "cache" / "decay.json").read_bytes()
    assert "\ud800x" in json.loads(data.decode("utf-8"))["rows"]["a.md"][1]["type"]
    again = engine_json("decay", root, "--today", "2026-12-01", "--dry-run")
    assert again["tiers"] == first["tiers"]
