"""Relevance and tiers: the decay maths, ages, and the plans of
``engine.py decay``, ``touch``, ``creative`` and ``stats``.

The formula is the earlier autograph project's (``calc_relevance`` and
``calc_tier`` in its ``common.py``), kept so that the ``relevance`` and
``tier`` fields its users' vaults already hold stay meaningful; it is an
Ebbinghaus-style forgetting curve made linear, with the access count as the
memory's strength::

    strength  = 1 + ln(max(access_count, 1))
    relevance = max(floor, min(1, round(1 - rate(type) / strength * days, 3)))

``days`` is the card's age (whole calendar days since its last access, 0
for a date in the future); ``rate(type)`` is ``decay.type_rates[type]``,
else ``decay.rate`` (0.015); ``floor`` is ``decay.floor`` (0.1).  The tier
follows from the age alone: ``active`` up to ``decay.tiers.active`` days
(7), ``warm`` up to ``warm`` (21), ``cold`` up to ``cold`` (60), then
``archive``; each boundary day belongs to the warmer tier.  ``core`` is set
by a person and never changed by decay.

Worked example (the defaults): a card read 3 times (strength 1 + ln 3 =
2.0986), last accessed 30 days ago: relevance = 1 - 0.015 / 2.0986 * 30 =
0.786, tier ``cold`` (30 > 21, <= 60).  Read once, the same card has
relevance 1 - 0.015 * 30 = 0.55.

Dates (:func:`last_access`): the last access is ``last_accessed``, else
``updated``, else ``created`` (the first of them that holds a value).  A
value may be a date (``2024-05-01``), a date-time without an offset (the
vault's wall-clock time), a date-time with an offset or ``Z`` (an instant),
or an integer of epoch seconds (10 digits) or milliseconds (13 digits),
read by :mod:`dates` (read/dates.py).  Ages are whole calendar days in the vault's time zone (``schema.timezone``,
else the machine's): the local date of "now" minus the local date of the
value, never a division of a time span by 86,400 seconds (BR-32, BR-34).
A value that is none of these (a template placeholder, ``soon``, another
integer) is *not a date*: reported, and the card left alone.  A card
without any of the three is *undated*: reported, never treated as old.

Everything takes "today" (the vault's calendar date of "now") as an
argument; nothing here reads the clock except :func:`dates.today_in` and
:func:`history_time`, when the caller gives no date.
"""

from __future__ import annotations

import datetime
import math
import os
from collections import Counter

from ..read.dates import NotADate, age_days, today_in, zone_of
from ..schema.model import DEFAULTS, Schema

# frontmatter and store are imported by the functions that write: reading a
# card's tier (search's rerank, stats) needs neither, and they are a third of
# a warm search's start-up.

__all__ = [
    "CardCache",
    "creative",
    "DATE_KEYS",
    "HISTORY",
    "history_time",
    "last_access",
    "plan_decay",
    "plan_touch",
    "read_cards",
    "Reading",
    "reading_of",
    "record_run",
    "relevance",
    "Settings",
    "stats",
    "StatsTally",
    "strength",
    "tier_for",
    "TIERS",
]

TIERS = ("core", "active", "warm", "cold", "archive")  # warmest first; core is set by a person
_RANK = {"archive": 0, "cold": 1, "warm": 2, "active": 3, "core": 4}
DATE_KEYS = ("last_accessed", "updated", "created")
STALE_DAYS = 90
HISTORY = "decay-history.jsonl"  # report.DECAY_HISTORY: one line of tier counts per run (format in report.py)


# ---------------------------------------------------------------------------
# The maths


def strength(access_count) -> float:
    """``1 + ln(max(access_count, 1))``: how slowly a card decays."""
    return 1.0 + math.log(max(access_count, 1))


def relevance(days, access_count=1, rate: float = 0.015, floor: float = 0.1) -> float:
    """The relevance of a card ``days`` days after its last access (see the
    module docstring): ``max(floor, min(1, round(1 - rate / strength * days,
    3)))`` with ``strength = 1 + ln(max(access_count, 1))``.  A negative
    ``days`` (a date in the future) counts as 0, so the result lies in
    ``[floor, 1]`` (for a floor of at most 1)."""
    days = max(days, 0)
    value = round(1 - rate / strength(access_count) * days, 3)
    return max(floor, min(1.0, value))


def tier_for(days, current=None, tiers: tuple[float, float, float] = (7, 21, 60)) -> str:
    """The tier of a card ``days`` days after its last access: ``active`` up
    to ``tiers[0]`` days, ``warm`` up to ``tiers[1]``, ``cold`` up to
    ``tiers[2]``, then ``archive`` (boundaries inclusive); ``core`` when the
    card's ``current`` tier is ``core`` (in any letter case)."""
    if isinstance(current, str) and current.strip().lower() == "core":
        return "core"
    active, warm, cold = tiers
    if days <= active:
        return "active"
    if days <= warm:
        return "warm"
    if days <= cold:
        return "cold"
    return "archive"


def tier_rank(tier) -> int:
    """Order of tiers, coldest first: archive 0 .. active 3, core 4; -1 for
    no tier or a name that is not a tier."""
    return _RANK.get(tier.strip().lower(), -1) if isinstance(tier, str) else -1


class Settings:
    """The decay settings of a schema (``schema.decay`` and ``timezone``):
    ``rate``, ``floor``, ``tiers`` (days active, warm, cold), ``type_rates``,
    ``store_relevance``, ``stale_days``, ``zone`` (None: the machine's)."""

    # Plain classes here, not dataclasses: dataclasses imports inspect, ~10 ms
    # of a search.py query, which reads tiers through this module.
    __slots__ = ("rate", "floor", "tiers", "type_rates", "store_relevance", "stale_days", "zone")

    def __init__(
        self,
        rate: float = 0.015,
        floor: float = 0.1,
        tiers: tuple[float, float, float] = (7, 21, 60),
        type_rates: dict | None = None,
        store_relevance: bool = False,
        stale_days: float = STALE_DAYS,
        zone: datetime.tzinfo | None = None,
    ):
        self.rate, self.floor, self.tiers = rate, floor, tiers
        self.type_rates = {} if type_rates is None else type_rates
        self.store_relevance, self.stale_days, self.zone = store_relevance, stale_days, zone

    @classmethod
    def of(cls, schema: Schema) -> Settings:
        section = schema.section("decay")
        base = DEFAULTS["decay"]
        tiers = {**base["tiers"], **(section.get("tiers") or {})}
        return cls(
            rate=float(section.get("rate", base["rate"])),
            floor=float(section.get("floor", base["floor"])),
            tiers=(float(tiers["active"]), float(tiers["warm"]), float(tiers["cold"])),
            type_rates=schema.type_rates,
            store_relevance=bool(section.get("store_relevance", False)),
            stale_days=float(section.get("stale_days", STALE_DAYS)),
            zone=zone_of(schema.data.get("timezone")),
        )

    def today(self, when: datetime.date | datetime.datetime | None = None) -> datetime.date:
        """The vault's date of ``when`` (:func:`dates.today_in` in ``zone``):
        a date as it is (``--today``), a date-time as the vault's clock reads
        it (``--now``), None for the clock's now."""
        return today_in(self.zone, when)

    def rate_for(self, kind) -> float:
        rate = self.type_rates.get(kind) if isinstance(kind, str) else None
        return float(rate) if rate is not None else self.rate

    def relevance(self, days: int, access_count: int, kind) -> float:
        return relevance(days, access_count, self.rate_for(kind), self.floor)

    def tier(self, days: int, current=None) -> str:
        return tier_for(days, current, self.tiers)

    def midpoint(self, tier: str) -> int:
        """Days back a touch dates a card it moves up into ``tier`` (the
        earlier project's graduated recall): the middle of the tier's
        interval, rounded down; 0 for ``active`` entered from no tier."""
        active, warm, cold = self.tiers
        return {"active": int(active // 2), "warm": int((active + warm) // 2), "cold": int((warm + cold) // 2)}.get(
            tier, 0
        )


# ---------------------------------------------------------------------------
# Properties


def _get(properties: dict, key: str, folded: dict | None = None):
    """``properties[key]``, else the one key that differs only in letter
    case (Obsidian treats them as one property).  ``folded`` is
    :func:`_folded` of ``properties``, when the caller looks up several keys."""
    if key in properties:
        return properties[key]
    if folded is None:
        folded = _folded(properties)
    return folded.get(key)


def _folded(properties: dict) -> dict:
    """Lower-cased key -> value of the keys not written in lower case (a
    key two of them fold to is left out: which one is meant cannot be told)."""
    found: dict = {}
    for key, value in properties.items():
        if not key.islower():
            lower = key.lower()
            found[lower] = None if lower in found else value
    return found


def last_access(properties: dict, folded: dict | None = None) -> tuple[str | None, object]:
    """``(key, value)`` of the card's last access: the first of
    :data:`DATE_KEYS` that holds a value; ``(None, None)`` when none does."""
    if folded is None:
        folded = _folded(properties)
    for key in DATE_KEYS:
        value = _get(properties, key, folded)
        if value is not None and not (isinstance(value, str) and not value.strip()):
            return key, value
    return None, None


def access_count(value) -> int | None:
    """A stored ``access_count`` as a whole number, None when absent or not
    one (then the maths use 1, as the earlier project did)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


# ---------------------------------------------------------------------------
# Reading cards


class Reading:
    """A card as the decay sees it on ``today``.

    ``problem`` is None for a card the maths apply to, else ``undated``,
    ``not-a-date``, ``invalid-frontmatter`` or ``unreadable`` (with
    ``detail``).  ``days``, ``tier`` (what it should be), ``relevance`` are
    set when the card has a date (and for ``core``, ``tier`` always)."""

    __slots__ = (
        "path", "properties", "size", "stored_tier", "kind", "count", "date_key",
        "days", "tier", "relevance", "problem", "detail",
    )  # fmt: skip

    def __init__(self, path: str, properties: dict, size: int = 0, *, problem: str | None = None, detail: str = ""):
        self.path, self.properties, self.size = path, properties, size
        self.stored_tier = self.kind = self.count = self.date_key = None
        self.days = self.tier = self.relevance = None
        self.problem, self.detail = problem, detail

    def __repr__(self) -> str:
        return f"Reading({self.path!r}, tier={self.tier!r}, problem={self.problem!r})"

    @property
    def core(self) -> bool:
        return tier_rank(self.stored_tier) == _RANK["core"]


def read_card(path: str, properties: dict, today: datetime.date, settings: Settings, size: int = 0) -> Reading:
    """What the decay makes of one card's ``properties`` on ``today``."""
    reading = Reading(path, properties, size)
    folded = _folded(properties)
    reading.stored_tier = _get(properties, "tier", folded)
    reading.kind = _get(properties, "type", folded)
    reading.count = access_count(_get(properties, "access_count", folded))
    key, value = last_access(properties, folded)
    reading.date_key = key
    if key is not None:
        try:
            reading.days = age_days(value, today, settings.zone)
        except NotADate as exc:
            reading.problem, reading.detail = "not-a-date", f"{key}: {_show(value)} is {exc}"
    elif not reading.core:
        reading.problem, reading.detail = "undated", "no last_accessed, updated or created"
    if reading.days is not None:
        reading.tier = settings.tier(reading.days, reading.stored_tier)
        reading.relevance = settings.relevance(reading.days, reading.count or 1, reading.kind)
    elif reading.core:
        reading.tier = "core"
    return reading


def reading_of(path: str, summary, today: datetime.date, settings: Settings, size: int = 0) -> Reading:
    """:func:`read_card` of a card's :class:`index.Summary`: a card that
    cannot be read or whose frontmatter does not parse is a problem."""
    if summary.unreadable is not None:
        return Reading(path, {}, problem="unreadable", detail=summary.unreadable)
    if summary.frontmatter == "invalid":
        line, column, reason = summary.error or (0, 0, "does not parse")
        detail = f"frontmatter does not parse (line {line}, column {column}): {reason}"
        return Reading(path, {}, problem="invalid-frontmatter", detail=detail)
    return read_card(path, summary.properties, today, settings, max(size, 0))


def _show(value) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 60 else text[:57] + "..."


CACHE_NAME = "cache/decay.json"
CACHE_FORMAT = 1


class CardCache:
    """What decay read from each card, kept in ``.graph/cache/decay.json``:
    per note its stamp (size, modification and change time in nanoseconds,
    as the note cache keys its rows) and the few properties decay looks at
    (:data:`_KEPT`), or why it could not read them.  A nightly run stats
    every card and reads only those whose stamp moved.  Loading every note's
    summary from the index file (links and headings included) costs a warm
    run more than this one, a tenth of reading the vault.  Plain
    JSON, never trusted: a damaged or foreign file is ignored."""

    def __init__(self, vault, use: bool = True):
        self.vault = vault
        self.use = use
        self.rows: dict[str, list] = {}
        self.dirty = False
        if use:
            self._load()

    def _header(self) -> dict:
        return {"format": CACHE_FORMAT, "vault": str(self.vault.root.resolve())}

    def _load(self) -> None:
        import json

        from ..read import jsonfile
        from ..read.vault import GRAPH_DIR

        try:
            data = json.loads(jsonfile.read_bytes(self.vault.root / GRAPH_DIR / CACHE_NAME, limit=1 << 30))
        except (OSError, ValueError, RecursionError):  # NotAFile is a ValueError
            return
        if isinstance(data, dict) and data.get("header") == self._header() and isinstance(data.get("rows"), dict):
            self.rows = data["rows"]

    def get(self, path: str, stamp: list | None) -> list | None:
        row = self.rows.get(path)
        if stamp is not None and isinstance(row, list) and len(row) == 4 and row[0] == stamp:
            return row
        return None

    def put(self, path: str, stamp: list | None, reading: Reading) -> None:
        if stamp is None:
            return
        kept = {k: v for k, v in reading.properties.items() if k.lower() in _KEPT}
        self.rows[path] = [stamp, kept, reading.problem, reading.detail]
        self.dirty = True

    def save(self, paths: list[str]) -> None:
        """Write the rows of ``paths`` (the vault's cards) when any changed;
        a cache that cannot be written is computed again next run."""
        if not (self.use and self.dirty):
            return
        import json

        from ..read.jsonfile import PAIRED_SURROGATES as _PAIRED
        from ..write import derived
        from ..write.confine import PathError, TargetError
        from ..write.replace import Conflict

        def dumps(data) -> str:
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

        # a lone surrogate is written as its JSON escape (the file stays
        # UTF-8); a row where two would read back as one character is left out
        rows = {path: self.rows[path] for path in paths if path in self.rows}
        rows = {path: row for path, row in rows.items() if not _PAIRED.search(dumps([path, row]))}
        text = dumps({"header": self._header(), "rows": rows})
        try:
            derived.write_derived(self.vault.root, CACHE_NAME, text.encode("utf-8", "backslashreplace"), durable=False)
        except (OSError, ValueError, Conflict, PathError, TargetError):
            pass


def _stamp(root: str, path: str) -> list | None:
    try:
        info = os.stat(f"{root}/{path}")
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def read_cards(
    vault, schema: Schema, today: datetime.date, settings: Settings | None = None, index=None, cache=None
) -> list[Reading]:
    """A :class:`Reading` of every card (:meth:`Vault.cards`), in vault order.

    ``index``: a :class:`index.NoteIndex` whose summaries give the properties
    (``graph.py health``, which has one loaded).  Else each card's
    frontmatter is read, except where ``cache`` (a :class:`CardCache`) holds
    the card's row for its current stamp; the rows read are put in it."""
    settings = settings or Settings.of(schema)
    cards = vault.cards(schema)
    if index is not None:
        return [reading_of(path, summary, today, settings, index.size(path)) for path, summary in index.each(cards)]
    from ..read import parallel

    root = str(vault.root)
    with parallel.gc_paused():
        stamps = {path: _stamp(root, path) for path in cards} if cache is not None else {}
        readings: dict[str, Reading] = {}
        todo = []
        for path in cards:
            row = cache.get(path, stamps[path]) if cache is not None else None
            if row is None:
                todo.append(path)
            elif row[2] in ("unreadable", "invalid-frontmatter"):
                readings[path] = Reading(path, {}, row[0][0], problem=row[2], detail=row[3])
            else:
                readings[path] = read_card(path, row[1], today, settings, row[0][0])
        if len(todo) >= PARALLEL_MIN and parallel.can_fork():
            fresh = _read_in_two(vault, todo, today, settings)
        else:
            fresh = [_read_note(vault.note(path, keep=False), today, settings) for path in todo]
        for reading in fresh:
            readings[reading.path] = reading
            if cache is not None:
                cache.put(reading.path, stamps[reading.path], reading)
        return [readings[path] for path in cards]


PARALLEL_MIN = 2000  # cards to read before a second process pays for its start (as index.PARALLEL_MIN)
_KEPT = frozenset({"tier", "type", "access_count", "relevance", "description", *DATE_KEYS})


def _read_in_two(vault, paths: list[str], today: datetime.date, settings: Settings) -> list[Reading]:
    """:func:`_read_note` of every card of ``paths`` on two processes
    (:func:`parallel.map_in_two`), keeping only the properties decay looks
    at, so what comes back from the child is small."""
    from ..read import parallel

    def read(path: str) -> Reading:
        reading = _read_note(vault.note(path, keep=False), today, settings)
        reading.properties = {k: v for k, v in reading.properties.items() if k.lower() in _KEPT}
        return reading

    def quiet() -> None:  # in the child: its cards are counted here when they arrive
        vault.progress = None

    found = parallel.map_in_two(read, paths, in_child=quiet)
    if vault.progress is not None:
        vault.progress.step(len(paths[1::2]))
    return found


def _read_note(note, today: datetime.date, settings: Settings) -> Reading:
    if note.text is None:
        return Reading(note.path, {}, len(note.data), problem="unreadable", detail=note.error or "cannot be read")
    block = note.frontmatter
    if block is not None and block.error is not None:
        detail = f"frontmatter does not parse (line {block.error.line}, column {block.error.column}): "
        return Reading(note.path, {}, len(note.data), problem="invalid-frontmatter", detail=detail + block.error.reason)
    return read_card(note.path, note.properties, today, settings, len(note.data))


# ---------------------------------------------------------------------------
# decay


def _same_number(stored, value: float) -> bool:
    return isinstance(stored, int | float) and not isinstance(stored, bool) and stored == value


def decay_text(note, reading: Reading, settings: Settings) -> tuple[str, list[str]]:
    """The note's text after decay, and what changed (``[]``: nothing)."""
    from ..read import frontmatter as fm

    text, done = note.text, []
    props = reading.properties
    if not reading.core and reading.tier is not None and reading.stored_tier != reading.tier:
        text = fm.set_property(text, "tier", reading.tier)
        done.append(f"tier {_tier_name(reading.stored_tier)} -> {reading.tier}")
    stored = _get(props, "relevance")
    if settings.store_relevance:
        if not reading.core and reading.relevance is not None and not _same_number(stored, reading.relevance):
            text = fm.set_property(text, "relevance", reading.relevance)
            done.append(f"relevance {_show(stored) if stored is not None else 'none'} -> {reading.relevance}")
    elif stored is not None or "relevance" in props:
        if reading.problem is None:
            text = fm.delete_property(text, "relevance")
            done.append("relevance removed (decay.store_relevance is false)")
    return text, done


def _tier_name(tier) -> str:
    if tier is None:
        return "none"
    return tier if isinstance(tier, str) else "other"


class Plan:
    """What a decay (or touch) run would write and what it found:
    ``edits``, ``readings``, ``transitions`` (Counter of ``"a->b"``),
    ``relevance_removed``, ``skipped`` ({path, reason, detail}) and, for a
    touch, ``results`` (one per note)."""

    def __init__(self, readings: list | None = None):
        self.edits: list = []
        self.readings: list = [] if readings is None else readings
        self.transitions: Counter = Counter()
        self.relevance_removed: list = []
        self.skipped: list = []
        self.results: list = []

    def tiers(self) -> dict[str, int]:
        """Cards per tier once the plan is written (cards without a tier
        that decay can tell are left out)."""
        counts = dict.fromkeys(TIERS, 0)
        for reading in self.readings:
            tier = reading.tier
            if tier is None and tier_rank(reading.stored_tier) >= 0:
                tier = reading.stored_tier.strip().lower()
            if tier is not None:
                counts[tier] += 1
        return counts

    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(item["reason"] for item in self.skipped))


def plan_decay(vault, schema: Schema, today: datetime.date, index=None, cache=None, described: bool = False) -> Plan:
    """Edits that bring every card's ``tier`` (and ``relevance`` when
    ``decay.store_relevance``) to what ``today`` gives, by surgical
    frontmatter edits, only for cards whose stored values change; with
    ``store_relevance`` false a ``relevance`` key is removed.  ``core``
    cards keep their tier.  Cards that are undated, hold a value that is
    not a date, or whose frontmatter does not parse are skipped with the
    reason.  ``described``: each edit kept as :meth:`Edit.described` (a
    dry run that shows no diff)."""
    from ..read import frontmatter as fm
    from ..write.changes import Edit

    settings = Settings.of(schema)
    plan = Plan(readings=read_cards(vault, schema, today, settings, index, cache))
    for reading in plan.readings:
        if reading.problem is not None:
            plan.skipped.append({"path": reading.path, "reason": reading.problem, "detail": reading.detail})
        if reading.problem in ("unreadable", "invalid-frontmatter"):
            continue
        if not _needs_edit(reading, settings):
            continue
        note = vault.note(reading.path, keep=False)
        if note.text is None or (note.frontmatter is not None and note.frontmatter.error is not None):
            continue  # changed since the cache was made; the next run sees it
        current = read_card(reading.path, note.properties, today, settings, len(note.data))
        try:
            text, done = decay_text(note, current, settings)
        except fm.FrontmatterError as exc:
            plan.skipped.append({"path": reading.path, "reason": "not-editable", "detail": str(exc)})
            continue
        if not done:
            continue
        after = note.encode(text)
        if after != note.data:
            edit = Edit(reading.path, note.data, after, "; ".join(done))
            plan.edits.append(edit.described() if described else edit)
            if any(step.startswith("tier ") for step in done):
                plan.transitions[f"{_tier_name(current.stored_tier)}->{current.tier}"] += 1
            if any(step.startswith("relevance removed") for step in done):
                plan.relevance_removed.append(reading.path)
    return plan


def record_run(
    vault, schema: Schema, cache: CardCache, today: datetime.date, tiers: dict[str, int], written: int, when=None
) -> list[str]:
    """Keep what a decay run that wrote leaves for the runs after it:
    ``cache``'s rows of the vault's cards (:meth:`CardCache.save`) and one
    line of :data:`HISTORY` in ``.graph/``, ``{"time", "today", "tiers",
    "written"}``: ``time`` is :func:`history_time` of ``when``, ``today``
    the vault's date (YYYY-MM-DD), ``tiers`` the cards per tier after the
    run (:meth:`Plan.tiers`), ``written`` how many notes it wrote.

    Returns the warnings for the person, ``[]`` when all was kept: a line
    that cannot be appended (an I/O failure, a ``.graph`` that leaves the
    vault) costs the tiers chart a point, never the run's writes, which
    stand."""
    import json

    from ..write import derived
    from ..write.confine import PathError

    cache.save(vault.cards(schema))
    line = {"time": history_time(today, when), "today": today.isoformat(), "tiers": tiers, "written": written}
    try:
        derived.append_line(vault.root, HISTORY, json.dumps(line, ensure_ascii=False))
    except (OSError, PathError) as exc:
        return [f"the tier counts were not added to .graph/{HISTORY}: {exc}"]
    return []


def history_time(today: datetime.date, when=None) -> str:
    """The ``time`` of a :data:`HISTORY` line (ISO 8601): ``when`` itself
    when it is a date-time (``--now``), ``today`` when ``when`` is a date
    (``--today``: a run for a given day is told by that day), else the
    clock's now to the second, with the machine's offset."""
    if isinstance(when, datetime.datetime):
        return when.isoformat()
    if when is not None:
        return today.isoformat()
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def _needs_edit(reading: Reading, settings: Settings) -> bool:
    props = reading.properties
    has_relevance = "relevance" in props or _get(props, "relevance") is not None
    if not settings.store_relevance and has_relevance and reading.problem is None:
        return True
    if reading.core or reading.tier is None:
        return False
    if reading.stored_tier != reading.tier:
        return True
    return settings.store_relevance and not _same_number(_get(props, "relevance"), reading.relevance)


# ---------------------------------------------------------------------------
# touch


def touch_values(reading: Reading, today: datetime.date, settings: Settings) -> dict:
    """What a touch sets: ``access_count`` (+1; a missing or unusable count
    becomes 1), ``tier`` and ``last_accessed`` by graduated recall, and
    ``relevance`` for that age (used only with ``store_relevance``).

    One tier up per touch: archive -> cold, cold -> warm, warm -> active,
    with ``last_accessed`` set to the middle of the new tier's interval
    (:meth:`Settings.midpoint`: 40, 14 and 3 days back with the default
    tiers), so the card drifts back down unless touched again; an active
    card, a card with no tier (it is in use: the earlier project made it
    cold) and a tier name decay does not know become active today; ``core``
    stays core, dated today.  A last access more recent than that date is
    kept (a touch never makes a card older), and the tier is then the one
    its date gives if that is warmer."""
    count = (reading.count + 1) if reading.count is not None and reading.count >= 0 else 1
    rank = tier_rank(reading.stored_tier)
    if reading.core:
        tier, back = "core", 0
    elif rank in (_RANK["archive"], _RANK["cold"], _RANK["warm"]):
        tier = ("cold", "warm", "active")[rank]
        back = settings.midpoint(tier)
    else:
        tier, back = "active", 0
    when = today - datetime.timedelta(days=back)
    kept = False
    if reading.days is not None and reading.problem is None and today - datetime.timedelta(days=reading.days) > when:
        when, kept = today - datetime.timedelta(days=max(reading.days, 0)), True
    days = (today - when).days
    if tier != "core" and tier_rank(settings.tier(days)) > tier_rank(tier):
        tier = settings.tier(days)
    return {
        "access_count": count,
        "tier": tier,
        "last_accessed": when,
        "kept_date": kept and reading.date_key == "last_accessed",
        "relevance": 1.0 if tier == "core" else settings.relevance(days, count, reading.kind),
        "days": days,
    }


def plan_touch(vault, schema: Schema, paths: list[str], today: datetime.date) -> Plan:
    """Edits that touch each card of ``paths`` (vault-relative; see
    :func:`touch_values`).  A card whose frontmatter does not parse or that
    cannot be read is skipped; a last access that is not a date is reported
    and the touch still counts (``last_accessed`` is autograph's field)."""
    from ..read import frontmatter as fm
    from ..write.changes import Edit

    settings = Settings.of(schema)
    plan = Plan()
    seen = set()
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        if not vault.is_card(path, schema):
            plan.skipped.append(
                {"path": path, "reason": "not-a-card", "detail": "in a templates folder or ignore_folders"}
            )
            continue
        note = vault.note(path, keep=False)
        reading = _read_note(note, today, settings)
        if reading.problem in ("unreadable", "invalid-frontmatter"):
            plan.skipped.append({"path": path, "reason": reading.problem, "detail": reading.detail})
            continue
        values = touch_values(reading, today, settings)
        result = {
            "path": path,
            "tier_before": reading.stored_tier if isinstance(reading.stored_tier, str) else None,
            "tier": values["tier"],
            "access_count": values["access_count"],
            "last_accessed": values["last_accessed"].isoformat(),
            "note": reading.detail if reading.problem == "not-a-date" else None,
        }
        try:
            text = fm.set_property(note.text, "access_count", values["access_count"])
            if values["tier"] != reading.stored_tier:
                text = fm.set_property(text, "tier", values["tier"])
            if not values["kept_date"]:
                text = fm.set_property(text, "last_accessed", values["last_accessed"])
            if settings.store_relevance:
                text = fm.set_property(text, "relevance", values["relevance"])
            else:
                text = fm.delete_property(text, "relevance")
        except fm.FrontmatterError as exc:
            plan.skipped.append({"path": path, "reason": "not-editable", "detail": str(exc)})
            continue
        after = note.encode(text)
        plan.results.append(result)
        if after != note.data:
            reason = f"touched: access_count {values['access_count']}, tier {_tier_name(reading.stored_tier)}"
            reason += f" -> {values['tier']}, last_accessed {values['last_accessed'].isoformat()}"
            plan.edits.append(Edit(path, note.data, after, reason))
    return plan


# ---------------------------------------------------------------------------
# creative and stats


def creative(readings: list[Reading], n: int, seed) -> list[Reading]:
    """Up to ``n`` cards from the coldest tiers (``archive`` and ``cold`` as
    their dates give them today) for a person or an agent to look at again,
    drawn with ``random.Random(str(seed))``: the same seed and cards give the
    same picks.  Cards are considered in path order, so the draw does not
    depend on the order the vault was walked."""
    pool = sorted((r for r in readings if r.tier in ("archive", "cold")), key=lambda r: r.path)
    if n <= 0 or not pool:
        return []
    import random  # only creative draws

    return random.Random(str(seed)).sample(pool, min(n, len(pool)))


def stats(readings, settings: Settings) -> dict:
    """Tiers overall and per type (as the dates give them today; ``core`` as
    stored), cards undated or with a value that is not a date, the stale
    share (cards last accessed more than ``decay.stale_days``, 90, days ago,
    of the dated cards), the never-touched share (no ``access_count`` of 1
    or more, of all cards) and bytes per tier, with the working set (active
    + warm) in bytes and in tokens (about 4 bytes each)."""
    tally = StatsTally(settings)
    for reading in readings:
        tally.add(reading)
    return tally.result()


class StatsTally:
    """:func:`stats`, a reading at a time: a pass over a large vault adds
    each card's reading and keeps none of them."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.tiers = dict.fromkeys(TIERS, 0)
        self.by_type: dict[str, dict[str, int]] = {}
        self.size = dict.fromkeys(TIERS, 0)
        self.cards = self.dated = self.stale = self.never = 0
        self.problems: Counter = Counter()

    def add(self, reading: Reading) -> None:
        """Count one card's reading."""
        self.count(self.part(reading))

    def part(self, reading: Reading) -> list:
        """What ``reading`` adds to the tally, as a JSON-ready list
        ``[never touched, dated, stale, tier or None, problem, size, type]``:
        kept per card, so a later report takes it out again
        (:meth:`count` with ``sign`` -1) when the card changes."""
        never = reading.count is None or reading.count < 1
        dated = reading.days is not None
        stale = dated and reading.days > self.settings.stale_days
        tier = reading.tier
        kind = reading.kind if isinstance(reading.kind, str) and reading.kind.strip() else "(no type)"
        return [never, dated, stale, tier, reading.problem or "undated", reading.size, kind]

    def count(self, part: list, sign: int = 1) -> None:
        """Add (``sign`` 1) or take out (-1) a card's :meth:`part`."""
        never, dated, stale, tier, problem, size, kind = part
        self.cards += sign
        self.never += sign * bool(never)
        self.dated += sign * bool(dated)
        self.stale += sign * bool(stale)
        if tier is None:
            self.problems[problem] += sign
            return
        self.tiers[tier] += sign
        self.size[tier] += sign * size
        counts = self.by_type.setdefault(kind, dict.fromkeys(TIERS, 0))
        counts[tier] += sign
        if not any(counts.values()):  # as a tally that never counted the type
            del self.by_type[kind]

    def dump(self) -> dict:
        """The tally's counts, JSON-ready (:meth:`load` takes them back)."""
        return {
            "tiers": self.tiers,
            "by_type": self.by_type,
            "size": self.size,
            "counts": [self.cards, self.dated, self.stale, self.never],
            "problems": dict(self.problems),
        }

    @classmethod
    def load(cls, settings: Settings, data: dict) -> StatsTally:
        """A tally holding the counts of :meth:`dump`'s ``data``.  Raises
        KeyError, TypeError or ValueError for data of another shape."""
        tally = cls(settings)
        if set(data["tiers"]) != set(TIERS) or set(data["size"]) != set(TIERS):
            raise ValueError("not a tally of these tiers")
        tally.tiers = {tier: int(data["tiers"][tier]) for tier in TIERS}
        tally.size = {tier: int(data["size"][tier]) for tier in TIERS}
        tally.by_type = {str(k): {tier: int(v[tier]) for tier in TIERS} for k, v in data["by_type"].items()}
        tally.cards, tally.dated, tally.stale, tally.never = map(int, data["counts"])
        tally.problems = Counter({str(k): int(v) for k, v in data["problems"].items()})
        return tally

    def result(self) -> dict:
        """The :func:`stats` dict of the readings added."""
        size, problems, cards, dated = self.size, self.problems, self.cards, self.dated
        working = size["active"] + size["warm"]
        return {
            "cards": cards,
            "tiers": self.tiers,
            "by_type": dict(sorted(self.by_type.items())),
            "undated": problems["undated"],
            "not_dates": problems["not-a-date"],
            "unreadable": problems["unreadable"] + problems["invalid-frontmatter"],
            "dated": dated,
            "stale": self.stale,
            "stale_days": self.settings.stale_days,
            "stale_share": round(self.stale / dated, 4) if dated else 0.0,
            "never_touched": self.never,
            "never_touched_share": round(self.never / cards, 4) if cards else 0.0,
            "bytes": size,
            "working_set_bytes": working,
            "working_set_tokens": working // 4,
        }
