"""Dates as notes write them: a property's value read as a date, in the vault's time zone.

The text of a date property is the truth (the frontmatter parser keeps it a
string); this module reads it when a date is needed: ``2026-11-30``, a
date-time with or without an offset (``2026-11-30T09:15``,
``2026-11-30 09:15:00+01:00``), and epoch seconds or milliseconds (Dendron
writes those).  A naive date-time is wall-clock time in the vault's zone
(schema ``timezone``, else the machine's); an instant is converted to it.
Template placeholders (``{{date}}``, ``<% tp.date.now() %>``) are not dates.

Used by decay (ages and tiers), dedup and supersede (which value is newer),
the schema (a valid ``timezone``) and health.
"""

from __future__ import annotations

import datetime
import re

__all__ = ["NotADate", "age_days", "local_date", "parse_when", "today_in", "zone_of"]


class NotADate(ValueError):
    """A date property whose value is not a date the decay understands."""


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


_DATETIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?)"
    r" ?([Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?\Z"
)


def zone_of(name) -> datetime.tzinfo | None:
    """The time zone named ``name`` (an IANA name such as ``Europe/Berlin``,
    or ``UTC``); None (the machine's zone) for no name.  Raises ValueError
    for a name the system's time zone database does not know."""
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{name!r} is not a time zone name")
    if name.strip().upper() in ("UTC", "Z", "ETC/UTC"):
        return datetime.UTC
    import zoneinfo

    try:
        return zoneinfo.ZoneInfo(name.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc


def parse_when(value) -> datetime.date | datetime.datetime | None:
    """A date property's value as a ``date``, a naive ``datetime`` (wall-clock
    time in the vault's zone) or an aware one (an instant; epoch integers
    too).  None when the value is empty (no value); raises :class:`NotADate`
    for anything else."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise NotADate("a boolean")
    if isinstance(value, datetime.datetime | datetime.date):
        return value
    if isinstance(value, int):
        if 10**9 <= value < 10**10:
            return datetime.datetime.fromtimestamp(value, datetime.UTC)
        if 10**12 <= value < 10**13:
            return datetime.datetime.fromtimestamp(value / 1000, datetime.UTC)
        raise NotADate("an integer that is neither epoch seconds (10 digits) nor milliseconds (13 digits)")
    if not isinstance(value, str):
        raise NotADate(f"a {'list' if isinstance(value, list) else type(value).__name__}")
    if ("{{" in value or "<%" in value) and _is_placeholder(value):
        raise NotADate("a template placeholder")
    text = value.strip()
    try:
        if _DATE.match(text):
            return datetime.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
        match = _DATETIME.match(text)
        if match:
            day, clock, offset = match.groups()
            offset = (offset or "").upper()
            return datetime.datetime.fromisoformat(f"{day}T{clock.replace(',', '.')}{offset}")
    except ValueError as exc:  # 2024-02-30, 25:00
        raise NotADate(f"no such date or time ({exc})") from None
    raise NotADate("not a date, a date-time or epoch seconds")


def local_date(when: datetime.date | datetime.datetime, zone: datetime.tzinfo | None) -> datetime.date:
    """The calendar date of a parsed value in the vault's ``zone`` (None: the
    machine's): a date is itself, a naive date-time is wall-clock time there
    (its own date), an instant is converted to the zone first."""
    if isinstance(when, datetime.datetime):
        if when.tzinfo is None:
            return when.date()
        return (when.astimezone(zone) if zone is not None else when.astimezone()).date()
    return when


def today_in(zone: datetime.tzinfo | None, now: datetime.date | datetime.datetime | None = None) -> datetime.date:
    """The vault's calendar date of ``now``: a date is taken as it is, a
    date-time as :func:`local_date` reads it, None means the clock's now."""
    if now is None:
        now = datetime.datetime.now(datetime.UTC)
    return local_date(now, zone)


def age_days(value, today: datetime.date, zone: datetime.tzinfo | None = None) -> int | None:
    """Whole calendar days from a date property's ``value`` to ``today`` in
    the vault's ``zone``: negative for a value in the future, None when
    empty.  Raises :class:`NotADate`."""
    when = parse_when(value)
    return None if when is None else (today - local_date(when, zone)).days


def _is_placeholder(value: str) -> bool:
    from .frontmatter import is_placeholder  # only for values that hold {{ or <%

    return is_placeholder(value)
