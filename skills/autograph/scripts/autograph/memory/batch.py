"""``card.py batch``: a day's facts in one process, one lock, one journal run.

Each line of the input is one JSON object, an operation of ``card.py``::

    {"op": "remember", "type": "person", "title": "Dana Reyes", "fields": {"role": "COO"}, "source": "2026-12-01"}
    {"op": "set", "note": "Dana Reyes", "fields": {"role": "COO"}, "source": "2026-12-01"}
    {"op": "log", "note": "Dana Reyes", "text": "Agreed the Q3 plan", "source": "2026-12-01"}
    {"op": "link", "note": "Dana Reyes", "others": ["Acme Robotics"]}
    {"op": "retire", "note": "D. Reyes", "by": "Dana Reyes"}
    {"op": "touch", "note": "Dana Reyes"}

``remember`` also takes ``into`` and ``new`` (as ``--into`` and ``--new``);
``remember`` and ``set`` take ``force``, ``remember``, ``set`` and ``log``
``allow_secret`` (as ``--force`` and ``--allow-secret``: another card's
identity, a value that looks like a secret; each refused otherwise);
``source`` is optional everywhere but ``touch``.  Field values are JSON
values (a string is text; an ISO date string ``2026-12-01`` is a date).

Lines are planned in order, each on the vault as the lines before it left
it (:meth:`Vault.with_text`), so line 7 may update the card line 2
created, also in a dry run.  A line that is not JSON, names an unknown op
or fails is reported and the others go on.  The edits of all lines are
written together by the caller, one edit per file (the first line's
``before``, the last line's ``after``), as one journaled run.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from dataclasses import dataclass, field

from ..read import frontmatter as fm
from ..write.changes import Edit
from . import cards
from .errors import BadRequest

__all__ = ["Line", "OPS", "line_outcome", "plan_batch", "results"]

# op -> (required keys, optional keys)
OPS = {
    "remember": (("type", "title"), ("fields", "source", "into", "new", "force", "allow_secret")),
    "set": (("note", "fields"), ("source", "force", "allow_secret")),
    "log": (("note", "text"), ("source", "allow_secret")),
    "link": (("note", "others"), ("source",)),
    "retire": (("note", "by"), ("source",)),
    "touch": (("note",), ()),
}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass
class Line:
    """One input line: its number (1-based), the op, and either the
    :class:`cards.Plan` it made or the ``error`` that stopped it (``code``
    2: malformed or bad usage)."""

    number: int
    op: str | None
    plan: cards.Plan | None = None
    error: str | None = None
    code: int = 0
    paths: list[str] = field(default_factory=list)


def _value(value):
    if isinstance(value, str) and _DATE.fullmatch(value):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def _fields(given) -> list[tuple[str, object]]:
    if given is None:
        return []
    if not isinstance(given, dict):
        raise BadRequest('"fields" must be an object: {"role": "COO"}')
    out = []
    for key, value in given.items():
        if "=" in key:
            raise BadRequest(f"{key!r} cannot be a property name")
        name, _ = cards.parse_assignment(f"{key}=")  # the same checks of the name as field=value
        out.append((name, _value(value)))
    return out


def _finite(value) -> None:
    """Raise :class:`BadRequest` for a value no frontmatter holds: a float
    that is not finite (``1e400``), text that is not Unicode (``"\\ud800"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise BadRequest(f"{value} is not a number a property can hold")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRequest("a string holds a lone surrogate (\\ud800...), which is not text") from None
    elif isinstance(value, list):
        for item in value:
            _finite(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _finite(key)
            _finite(item)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON a property can hold")


def _flag(value, name: str = "new") -> bool:
    if not isinstance(value, bool):
        raise BadRequest(f'"{name}" must be true or false, not {json.dumps(value)}')
    return value


def _text(op: dict, key: str) -> str:
    value = op.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f'"{key}" must be a non-empty string')
    return value


def _plan(vault, schema, op: dict, today: datetime.date) -> cards.Plan:
    from .commands import read_source, secret_refused
    from .decay import plan_touch
    from .remember import plan_remember

    name = op.get("op")
    if name not in OPS:
        raise BadRequest(f"unknown op {name!r}; one of: {', '.join(OPS)}")
    required, optional = OPS[name]
    missing = [key for key in required if key not in op]
    unknown = [key for key in op if key != "op" and key not in required + optional]
    if missing or unknown:
        told = [f"missing {', '.join(missing)}"] if missing else []
        told += [f"unknown key {', '.join(unknown)}"] if unknown else []
        raise BadRequest(f"{name}: {'; '.join(told)} (keys: {', '.join(required + optional)})")
    source = read_source(vault, schema, _text(op, "source"), today) if op.get("source") is not None else None
    flags = {key: _flag(op.get(key, False), key) for key in ("force", "allow_secret")}
    if name == "remember":
        fields = _fields(op.get("fields"))
        refused = secret_refused(name, None, flags, fields, title=_text(op, "title"))
        if refused is not None:
            return refused
        into = cards.named_card(vault, schema, _text(op, "into")) if op.get("into") is not None else None
        return plan_remember(
            vault,
            schema,
            _text(op, "type"),
            _text(op, "title"),
            fields,
            today,
            source,
            into,
            _flag(op.get("new", False)),
            force=flags["force"],
        )
    path = cards.named_card(vault, schema, _text(op, "note"))
    if name == "set":
        assignments = _fields(op["fields"])
        if not assignments:
            raise BadRequest('set: "fields" is empty')
        refused = secret_refused(name, path, flags, assignments)
        return refused or cards.plan_set(vault, schema, path, assignments, today, source, force=flags["force"])
    if name == "log":
        refused = secret_refused(name, path, flags, text=_text(op, "text"))
        return refused or cards.plan_log(vault, schema, path, _text(op, "text"), today, source)
    if name == "link":
        others = op["others"] if isinstance(op["others"], list) else [op["others"]]
        if not others or not all(isinstance(o, str) for o in others):
            raise BadRequest('link: "others" must be a name or a list of names')
        return cards.plan_link(vault, schema, path, [cards.named_card(vault, schema, o) for o in others], today, source)
    if name == "retire":
        return cards.plan_retire(vault, schema, path, cards.named_card(vault, schema, _text(op, "by")), today, source)
    if path in vault.touched_in_run:
        return cards.Plan("touch", path, notes=[f"{path}: touched already in this run (one run, one access)"])
    touched = plan_touch(vault, schema, [path], today)
    plan = cards.Plan("touch", path, edits=list(touched.edits))
    plan.notes = [f"{s['path']}: {s['reason']}" for s in getattr(touched, "skipped", [])]
    return plan


def plan_batch(vault, schema, data: bytes, today: datetime.date) -> tuple[list[Line], list[Edit]]:
    """Plan every line of ``data`` (JSON Lines, UTF-8) in order, each on the
    vault as the lines before it left it.  Returns the :class:`Line` of each
    non-blank line and the edits to write together (one per file, in the
    order first planned).  A line that is not UTF-8, not one JSON object,
    or holds a value no property can hold (``NaN``, ``1e400``, a lone
    surrogate) is a malformed line.  Nothing is written."""
    lines: list[Line] = []
    merged: dict[str, Edit] = {}
    view = vault
    for number, raw_bytes in enumerate(data.split(b"\n"), 1):
        if not raw_bytes.strip():
            continue
        try:
            raw = raw_bytes.decode("utf-8-sig" if number == 1 else "utf-8")
            op = json.loads(raw, parse_constant=_reject_constant)
            _finite(op)
        except UnicodeDecodeError as exc:
            lines.append(Line(number, None, error=f"not UTF-8 ({exc.reason} at byte {exc.start})", code=2))
            continue
        except (ValueError, BadRequest) as exc:
            lines.append(Line(number, None, error=f"not one JSON object: {exc}", code=2))
            continue
        if not isinstance(op, dict):
            lines.append(Line(number, None, error="not one JSON object", code=2))
            continue
        line = Line(number, op.get("op") if isinstance(op.get("op"), str) else None)
        lines.append(line)
        try:
            plan = _plan(view, schema, op, today)
        except (BadRequest, fm.FrontmatterError) as exc:  # one line's bad request never stops the others
            line.error, line.code = str(exc), 2
            continue
        line.plan = plan
        for edit in plan.edits:
            first = merged.get(edit.path)
            reason = edit.reason if first is None else f"{first.reason}; {edit.reason}"
            merged[edit.path] = Edit(edit.path, edit.before if first is None else first.before, edit.after, reason)
            view = view.with_text(edit.path, edit.after)
            line.paths.append(edit.path)
        view.touched_in_run = view.touched_in_run | set(line.paths)
    return lines, list(merged.values())


def line_outcome(line: Line, outcome: dict) -> dict:
    """The part of the run's ``outcome`` (``cli.carry_out``'s) that is this
    line's: its edits, the paths written, conflicts and failures on them,
    and the run id."""
    mine = set(line.paths)
    return {
        "edits": [{"path": e.path, "reason": e.reason} for e in (line.plan.edits if line.plan else [])],
        "written": [p for p in outcome["written"] if p in mine],
        "conflicts": [c for c in outcome["conflicts"] if c["path"] in mine],
        "failed": [f for f in outcome["failed"] if f["path"] in mine],
        "run": outcome["run"] if mine & set(outcome["written"]) else None,
    }


def results(lines: list[Line], outcome: dict, today: datetime.date) -> tuple[list[dict], list[int], int]:
    """``(results, failed, code)`` of a carried-out batch: per line its
    ``{line, op, error}`` (not planned) or ``{line, op, ...}`` of
    :func:`cards.report` on its part of ``outcome``
    (:func:`line_outcome`); the numbers of the lines that did not succeed;
    and the run's exit code (``card.py``'s: 2 before 4 before 1, else 0)."""
    found, codes = [], []
    for line in lines:
        if line.plan is None:
            found.append({"line": line.number, "op": line.op, "error": line.error})
            codes.append(line.code)
            continue
        mine = line_outcome(line, outcome)
        codes.append(cards.exit_code(line.plan, 4 if mine["conflicts"] or mine["failed"] else 0))
        found.append({"line": line.number, "op": line.op, **cards.report(line.plan, today, mine)})
    failed = [r["line"] for r, c in zip(found, codes, strict=True) if c]
    return found, failed, next((c for c in (2, 4, 1) if c in codes), 0)
