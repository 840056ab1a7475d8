"""Loading and validating ``schema.json``, with built-in defaults.

Where the schema comes from (:func:`load_schema`): ``--schema PATH`` if
given, else ``VAULT/schema.json``, else the built-in defaults, so every
command runs on a vault that has no schema at all.

Validation reports every problem at once, each with the JSON path of the
value (``$.node_types.person.status``) and what to do about it; a bad
schema raises :class:`SchemaError`, which commands turn into exit code 2.
Keys starting with ``_`` (``_comment``) are allowed anywhere and ignored.

A ``schema.json`` written for the earlier autograph project loads too:

* ``status_order`` may be an object of status -> rank (a number; lower
  sorts first), as that project wrote it.  It is read as the list of its
  statuses by rank, equal ranks in the order written.
* ``decay.domain_rates`` (that project's per-type rates, keyed by type
  despite the name) is read as ``decay.type_rates``.  Given both, their
  rates are merged; a type with a different rate in each is an error.
* Its keys this autograph does not read (:data:`EARLIER_KEYS`:
  ``region_fixes``, ``description_max_chars``, ``dedup_policy``,
  ``identity.fuzzy_name`` and a type's ``priority``, ``potential`` and
  ``source``) are set aside with a warning naming each; the warnings are
  :attr:`Schema.warnings`, which commands print on stderr.  Every other
  unknown key is still an error.
* A type that lists its ``status`` values without ``superseded`` and does
  not say ``supersedable`` (that project had no such key) is read as
  ``"supersedable": false``, with a warning naming its ``status`` and the
  fix.  :func:`validate` still reports it, as it does for a schema written
  now (``"supersedable": true`` with no ``superseded`` status is an error
  when loading too).
"""

from __future__ import annotations

import copy
import math
import os
import re
from functools import cached_property
from pathlib import Path, PurePosixPath

from ..read import jsonfile

__all__ = ["DEFAULTS", "EARLIER_KEYS", "Schema", "SchemaError", "load_schema", "validate"]


class SchemaError(ValueError):
    """``schema.json`` is unreadable or invalid; ``problems`` lists each one."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        super().__init__(
            f"{source}: " + "; ".join(problems)
            if len(problems) == 1
            else f"{source}: {len(problems)} problems:\n" + "\n".join(f"  - {p}" for p in problems)
        )


DEFAULTS: dict = {
    "node_types": {},
    "hubs": {"names": ["MEMORY", "index", "_index"], "types": ["moc", "index", "hub"]},
    "decay": {
        "rate": 0.015,
        "floor": 0.1,
        "tiers": {"active": 7, "warm": 21, "cold": 60},
        "type_rates": {},
        "store_relevance": False,
    },
    # Claude Code loads the first 200 lines or 25KB of MEMORY.md (code.claude.com/docs/en/memory); from 160
    # lines or about 20,000 bytes it asks for "under 140 lines" (CLI 2.1.332): the soft caps and the target
    "index": {
        "files": ["MEMORY.md"],
        "soft": {"lines": 160, "bytes": 20000},
        "hard": {"lines": 200, "bytes": 25000},
        "target_lines": 140,
        "target_bytes": 17500,
    },
    "memory": {"folder": "memory", "index": "MEMORY.md", "archive": "archive"},
    "journal": {"keep_days": 30, "max_mb": 200},
}

# The memory store preset (schema key "memory.types"): the four kinds of note
# an agent keeps, after Claude Code's auto memory.  ``labels`` are lines the
# body must hold ("Why: ...").
MEMORY_FIELDS = ["name", "description", "type", "created", "updated"]
MEMORY_TYPES: dict = {
    "user": {
        "description": "Who the user is: role, expertise, preferences that shape the work",
        "required": MEMORY_FIELDS,
        "labels": [],
    },
    "feedback": {
        "description": "How the user wants the work done: a correction or a confirmed approach",
        "required": MEMORY_FIELDS,
        "labels": ["Why", "How to apply"],
    },
    "project": {
        "description": "Ongoing work: goals, decisions, deadlines, who does what",
        "required": MEMORY_FIELDS,
        "labels": ["Why", "How to apply"],
    },
    "reference": {
        "description": "Where information lives outside the store: systems, dashboards, documents",
        "required": MEMORY_FIELDS,
        "labels": [],
    },
}

# Keys of the earlier autograph project's schema.json that this autograph
# does not read: where they sit ("" the top level, "identity", "node_types.*"
# every type) -> key -> what to do instead.  Loading sets them aside with a
# warning; every other unknown key stays an error.
_REMOVE = "remove it to silence this warning"
EARLIER_KEYS: dict[str, dict[str, str]] = {
    "": {
        "region_fixes": "field_fixes.region corrects region values the same way; move its entries there",
        "description_max_chars": f"descriptions are not cut to a length; {_REMOVE}",
        "dedup_policy": f"duplicates are found by identity (the identity key); {_REMOVE}",
    },
    "identity": {
        "fuzzy_name": f"cards are never matched by name alone; {_REMOVE}",
    },
    "node_types.*": {
        "priority": f"values of a property are corrected with field_fixes; {_REMOVE}",
        "potential": f"values of a property are corrected with field_fixes; {_REMOVE}",
        "source": f"values of a property are corrected with field_fixes; {_REMOVE}",
    },
}


# ---------------------------------------------------------------------------
# Validation: one small checker per shape


def _is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_str_map(value) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for k, v in value.items() if not k.startswith("_"))


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def folder_problem(folder: str, hidden_ok: bool = False) -> str | None:
    """Why a folder from data is not a place inside the vault, or None.

    A part starting with ``.`` (``.obsidian``, ``.trash``, ``notes/.drafts``)
    is a problem unless ``hidden_ok``: Obsidian never indexes such a folder,
    so notes written there are seen by neither Obsidian nor autograph (and
    ``.obsidian`` is Obsidian's settings).  ``hidden_ok`` is for folders
    that are only left out (``ignore_folders``) and for the memory store
    (``memory.folder``, ``.memory`` by default: the agent host reads it as
    files, not through Obsidian)."""
    if folder.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", folder):
        return 'is an absolute path; give a folder relative to the vault, like "people"'
    parts = PurePosixPath(folder.replace("\\", "/")).parts
    if ".." in parts:
        return "leaves the vault with '..'; give a folder inside the vault"
    if not hidden_ok and any(part.startswith(".") for part in parts):
        return "is a hidden folder (a name starting with '.'), which Obsidian never shows or indexes; pick another"
    return None


_NODE_TYPE_KEYS = {"description", "folder", "required", "status", "supersedable", "defaults"}

# Obsidian's property types (.obsidian/types.json), and other names for them.
PROPERTY_TYPES = {"text", "multitext", "number", "checkbox", "date", "datetime", "aliases", "tags"}
PROPERTY_TYPE_ALIASES = {
    "string": "text",
    "str": "text",
    "list": "multitext",
    "int": "number",
    "integer": "number",
    "float": "number",
    "bool": "checkbox",
    "boolean": "checkbox",
}


def _check_node_types(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f'{path}: expected an object of type name -> definition, like {{"person": {{...}}}}')
        return
    for name, spec in value.items():
        if name.startswith("_"):
            continue
        where = f"{path}.{name}"
        if not isinstance(spec, dict):
            problems.append(f"{where}: expected an object with description, folder, required and status")
            continue
        for key in spec:
            if key not in _NODE_TYPE_KEYS and not key.startswith("_"):
                problems.append(f"{where}.{key}: unknown key; known keys are {', '.join(sorted(_NODE_TYPE_KEYS))}")
        if "description" in spec and not isinstance(spec["description"], str):
            problems.append(f"{where}.description: expected a string")
        if "folder" in spec:
            folder = spec["folder"]
            if not isinstance(folder, str):
                problems.append(f'{where}.folder: expected a string such as "people"')
            elif (why := folder_problem(folder)) is not None:
                problems.append(f"{where}.folder: {folder!r} {why}")
        for key in ("required", "status"):
            if key in spec and not _is_str_list(spec[key]):
                problems.append(f"{where}.{key}: expected a list of strings")
        if "supersedable" in spec and not isinstance(spec["supersedable"], bool):
            problems.append(f"{where}.supersedable: expected true or false")
        if "defaults" in spec:
            defaults = spec["defaults"]
            if not isinstance(defaults, dict) or not all(
                isinstance(v, (str, int, float, bool, list)) for k, v in defaults.items() if not k.startswith("_")
            ):
                problems.append(f'{where}.defaults: expected property -> default value, like {{"status": "active"}}')
        statuses = spec.get("status")
        if _is_str_list(statuses) and statuses and "superseded" not in statuses and spec.get("supersedable", True):
            problems.append(
                f'{where}.status: lacks "superseded", the status a card gets when a newer card replaces it; '
                f'add "superseded" to the list, or set "supersedable": false for a type that is never replaced'
            )


def _check_hubs(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f'{path}: expected an object like {{"names": ["MEMORY"], "types": ["moc"]}}')
        return
    for key, item in value.items():
        if key.startswith("_"):
            continue
        if key not in ("names", "types"):
            problems.append(f"{path}.{key}: unknown key; known keys are names, types")
        elif not _is_str_list(item):
            problems.append(f"{path}.{key}: expected a list of strings")


def _check_decay(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path}: expected an object with rate, floor and tiers")
        return
    for key, item in value.items():
        where = f"{path}.{key}"
        if key.startswith("_"):
            continue
        if key in ("rate", "floor"):
            if not _is_number(item) or not 0 <= item <= 1:
                problems.append(f"{where}: expected a number between 0 and 1")
        elif key == "tiers":
            if not isinstance(item, dict) or not all(
                _is_number(v) and v >= 0 for k, v in item.items() if not k.startswith("_")
            ):
                problems.append(f'{where}: expected days per tier, like {{"active": 7, "warm": 21, "cold": 60}}')
                continue
            for name in item:
                if not name.startswith("_") and name not in _TIER_DAYS:
                    problems.append(f"{where}.{name}: unknown tier; the tiers with days are active, warm, cold")
            days = {**_TIER_DAYS, **{k: v for k, v in item.items() if k in _TIER_DAYS}}
            if not days["active"] <= days["warm"] <= days["cold"]:
                problems.append(
                    f"{where}: expected active <= warm <= cold days (now {days['active']:g}, {days['warm']:g}, "
                    f"{days['cold']:g}; missing ones are 7, 21, 60)"
                )
        elif key == "store_relevance":
            if not isinstance(item, bool):
                problems.append(f"{where}: expected true (keep relevance in the notes) or false (only the tier)")
        elif key == "stale_days":
            if not _is_number(item) or item < 0:
                problems.append(f"{where}: expected a number of days, 0 or more (default 90)")
        elif key == "health_weight":
            if not _is_number(item) or not 0 <= item <= 100:
                problems.append(f"{where}: expected a number of score points from 0 to 100 (default 0: not scored)")
        elif key in ("type_rates", "domain_rates"):
            if not isinstance(item, dict) or not all(
                _is_number(v) and 0 <= v <= 1 for k, v in item.items() if not k.startswith("_")
            ):
                problems.append(f'{where}: expected type -> rate between 0 and 1, like {{"daily": 0.02}}')
        else:
            problems.append(
                f"{where}: unknown key; known keys are rate, floor, tiers, type_rates, store_relevance, "
                "stale_days, health_weight"
            )
    # domain_rates: the earlier autograph's name for type_rates (keyed by type)
    earlier, rates = value.get("domain_rates"), value.get("type_rates")
    for kind, rate in earlier.items() if isinstance(earlier, dict) and isinstance(rates, dict) else ():
        other = rates.get(kind)
        if not kind.startswith("_") and _is_number(rate) and _is_number(other) and other != rate:
            problems.append(
                f"{path}.domain_rates.{kind}: {rate} disagrees with {path}.type_rates.{kind} ({other}); "
                f"domain_rates is the earlier autograph's name for type_rates, so give the rate once, in type_rates"
            )


_TIER_DAYS = {"active": 7, "warm": 21, "cold": 60}


def _check_timezone(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f'{path}: expected an IANA time zone name, like "Europe/Berlin" or "America/Chicago"')
        return
    from ..read.dates import zone_of

    try:
        zone_of(value)
    except ValueError:
        problems.append(
            f'{path}: unknown time zone {value!r}; use an IANA name such as "Europe/Berlin" '
            "(the system's time zone database must know it; pip's tzdata package provides one)"
        )


def _check_folder_map(value, path: str, problems: list[str]) -> None:
    if not _is_str_map(value):
        problems.append(f"{path}: expected an object of folder -> name (strings)")
        return
    for folder in value:
        if not folder.startswith("_") and (why := folder_problem(folder)) is not None:
            problems.append(f"{path}.{folder}: folder {why}")


def _check_str_map(value, path: str, problems: list[str]) -> None:
    if not _is_str_map(value):
        problems.append(f"{path}: expected an object whose values are strings")


def _check_properties(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f'{path}: expected property -> type, like {{"due": "date"}}')
        return
    for name, kind in value.items():
        if name.startswith("_"):
            continue
        if not isinstance(kind, str) or (kind not in PROPERTY_TYPES and kind not in PROPERTY_TYPE_ALIASES):
            problems.append(
                f"{path}.{name}: unknown property type {kind!r}; use one of {', '.join(sorted(PROPERTY_TYPES))}"
            )


def _check_fields_object(*keys: tuple[str, type, str]):
    """A checker for an object whose known keys each hold one kind of value."""

    def check(value, path: str, problems: list[str]) -> None:
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object with {', '.join(k for k, _, _ in keys)}")
            return
        known = {name: (kind, hint) for name, kind, hint in keys}
        for key, item in value.items():
            if key.startswith("_"):
                continue
            if key not in known:
                problems.append(f"{path}.{key}: unknown key; known keys are {', '.join(sorted(known))}")
                continue
            kind, hint = known[key]
            ok = (
                _is_str_list(item)
                if kind is list
                else (isinstance(item, kind) and not (kind is int and isinstance(item, bool)))
            )
            if not ok:
                problems.append(f"{path}.{key}: expected {hint}")

    return check


def _check_str_list(value, path: str, problems: list[str]) -> None:
    if not _is_str_list(value):
        problems.append(f"{path}: expected a list of strings")


def _is_rank(value) -> bool:
    return _is_number(value) and math.isfinite(value)


def _check_status_order(value, path: str, problems: list[str]) -> None:
    """``status_order``: statuses from most to least current, as a list, or
    as the earlier autograph wrote it, an object of status -> rank."""
    if isinstance(value, dict):
        for status, rank in value.items():
            if not status.startswith("_") and not _is_rank(rank):
                problems.append(
                    f"{path}.{status}: expected a number, the status's rank (lower sorts first), like "
                    f'{{"active": 1, "done": 2}}; or give status_order as a list, most current first'
                )
    elif not _is_str_list(value):
        problems.append(
            f'{path}: expected a list of strings, most current status first, like ["active", "done"] '
            f'(or an object of status -> rank, like {{"active": 1, "done": 2}})'
        )


def status_list(value) -> list[str]:
    """``status_order`` as a list, most current first: a list as it is; an
    object of status -> rank by rank, equal ranks in the order written."""
    if isinstance(value, dict):
        ranked = [(rank, status) for status, rank in value.items() if not status.startswith("_") and _is_rank(rank)]
        return [status for _, status in sorted(ranked, key=lambda pair: pair[0])]
    return [status for status in value if isinstance(status, str)] if isinstance(value, list) else []


def _check_folder_list(value, path: str, problems: list[str]) -> None:
    if not _is_str_list(value):
        problems.append(f'{path}: expected a list of folders, like ["Templates"]')
        return
    for index, folder in enumerate(value):
        if not folder.strip("/ "):
            problems.append(f"{path}[{index}]: empty folder; name a folder inside the vault")
        elif (why := folder_problem(folder, hidden_ok=True)) is not None:
            problems.append(f"{path}[{index}]: folder {why}")


def _check_journal(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f'{path}: expected an object like {{"keep_days": 30, "max_mb": 200}}')
        return
    for key, item in value.items():
        if key.startswith("_"):
            continue
        if key not in ("keep_days", "max_mb"):
            problems.append(f"{path}.{key}: unknown key; known keys are keep_days, max_mb")
        elif not _is_number(item) or item < 0:
            problems.append(f"{path}.{key}: expected a number, 0 or more")


def _check_session(value, path: str, problems: list[str]) -> None:
    """``session``: what ``session.py start`` tells a session; ``budget_tokens``
    a whole number of tokens, 1 or more (default 150)."""
    if not isinstance(value, dict):
        problems.append(f'{path}: expected an object like {{"budget_tokens": 150}}')
        return
    for key, item in value.items():
        if key.startswith("_"):
            continue
        if key != "budget_tokens":
            problems.append(f"{path}.{key}: unknown key; known keys are budget_tokens")
        elif not isinstance(item, int) or isinstance(item, bool) or item < 1:
            problems.append(f"{path}.{key}: expected a whole number of tokens, 1 or more (default 150)")


def _check_field_fixes(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict) or not all(_is_str_map(v) for k, v in value.items() if not k.startswith("_")):
        problems.append(
            f'{path}: expected field -> {{wrong value: right value}}, like {{"status": {{"ongoing": "active"}}}}'
        )
        return
    for field_name, fixes in value.items():
        if field_name.startswith("_"):
            continue
        for start in fixes:
            chain, current = [start], fixes[start]
            while current in fixes and current not in chain:
                chain.append(current)
                current = fixes[current]
            if current in chain and not start.startswith("_"):
                loop = " -> ".join(repr(v) for v in chain + [current])
                problems.append(
                    f"{path}.{field_name}.{start}: {loop} goes round in a circle; remove one of these mappings"
                )
                break


def _check_object(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path}: expected an object")


def _check_string(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, str):
        problems.append(f"{path}: expected a string")


def _check_version(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value != 1:
        problems.append(f"{path}: expected 1 (the only schema version so far)")


def _file_problem(name: str) -> str | None:
    if not name.strip() or name.endswith(("/", "\\")):
        return 'is not a file name; give a path relative to the vault, like "MEMORY.md"'
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return 'is an absolute path; give a path relative to the vault, like "MEMORY.md"'
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "leaves the vault with '..'; give a path inside the vault"
    return None


_INDEX_TARGETS = {"target_lines": "lines", "target_bytes": "bytes"}


def _check_index(value, path: str, problems: list[str]) -> None:
    """``index``: the always-loaded index files, their caps (``soft`` and
    ``hard`` objects of ``lines`` and ``bytes``) and the compaction target
    (the flat ``target_lines`` and ``target_bytes``: positive whole numbers;
    a target above the soft cap is lowered to it where the caps are used)."""
    if not isinstance(value, dict):
        problems.append(
            f'{path}: expected an object like {{"files": ["MEMORY.md"], "hard": {{"lines": 200, "bytes": 25000}}}}'
        )
        return
    for key, item in value.items():
        where = f"{path}.{key}"
        if key.startswith("_"):
            continue
        if key == "files":
            if not _is_str_list(item) or not item:
                problems.append(f'{where}: expected a non-empty list of index files, like ["MEMORY.md"]')
                continue
            for name in item:
                if (why := _file_problem(name)) is not None:
                    problems.append(f"{where}: {name!r} {why}")
        elif key in ("soft", "hard"):
            if not isinstance(item, dict):
                problems.append(f'{where}: expected {{"lines": N, "bytes": N}}')
                continue
            for dim, number in item.items():
                if dim.startswith("_"):
                    continue
                if dim not in ("lines", "bytes"):
                    problems.append(f"{where}.{dim}: unknown key; known keys are bytes, lines")
                elif not isinstance(number, int) or isinstance(number, bool) or number <= 0:
                    problems.append(f"{where}.{dim}: expected a positive whole number of {dim}")
        elif key in _INDEX_TARGETS:
            if not isinstance(item, int) or isinstance(item, bool) or item <= 0:
                problems.append(
                    f"{where}: expected a positive whole number of {_INDEX_TARGETS[key]} to compact the index to"
                )
        else:
            problems.append(f"{where}: unknown key; known keys are files, hard, soft, target_bytes, target_lines")
    soft, hard = value.get("soft"), value.get("hard")
    for dim in ("lines", "bytes") if isinstance(soft, dict) and isinstance(hard, dict) else ():
        low, high = soft.get(dim), hard.get(dim)
        if _is_number(low) and _is_number(high) and low > high:
            problems.append(
                f"{path}.soft.{dim}: {low} is above the hard cap {high}; "
                f"the soft cap warns before the hard cap is reached, so make it smaller"
            )


_MOC_GROUPS = ("domain", "type")


def _check_moc(value, path: str, problems: list[str]) -> None:
    """``moc``: how ``moc.py generate`` groups cards (``group_by``), where it
    writes (``folder``) and the size of one page (``caps``)."""
    if not isinstance(value, dict):
        problems.append(f'{path}: expected an object like {{"group_by": "domain", "folder": "MOC"}}')
        return
    for key, item in value.items():
        where = f"{path}.{key}"
        if key.startswith("_"):
            continue
        if key == "group_by":
            if item not in _MOC_GROUPS:
                problems.append(f'{where}: expected "domain" or "type", not {item!r}')
        elif key == "folder":
            if not isinstance(item, str):
                problems.append(f'{where}: expected a folder such as "MOC" ("" for the vault\'s root)')
            elif (why := folder_problem(item)) is not None:
                problems.append(f"{where}: {item!r} {why}")
        elif key == "caps":
            if not isinstance(item, dict):
                problems.append(f'{where}: expected {{"lines": N, "bytes": N}}')
                continue
            for dim, number in item.items():
                if dim.startswith("_"):
                    continue
                if dim not in _MOC_MIN:
                    problems.append(f"{where}.{dim}: unknown key; known keys are bytes, lines")
                elif not isinstance(number, int) or isinstance(number, bool) or number < _MOC_MIN[dim]:
                    problems.append(
                        f"{where}.{dim}: expected a whole number of {dim}, at least {_MOC_MIN[dim]} "
                        "(a page must hold its header and some entries)"
                    )
        else:
            problems.append(f"{where}: unknown key; known keys are caps, folder, group_by")


# the smallest page caps: the header of a page and a few entries must fit
_MOC_MIN = {"lines": 20, "bytes": 2000}


_MEMORY_KEYS = {"folder", "index", "archive", "types"}
_MEMORY_TYPE_KEYS = {"description", "required", "labels"}


def _check_memory(value, path: str, problems: list[str]) -> None:
    """``memory``: where the memory store lives and its note types."""
    if not isinstance(value, dict):
        problems.append(f'{path}: expected an object like {{"folder": "memory", "types": {{...}}}}')
        return
    for key, item in value.items():
        where = f"{path}.{key}"
        if key.startswith("_"):
            continue
        if key not in _MEMORY_KEYS:
            problems.append(f"{where}: unknown key; known keys are {', '.join(sorted(_MEMORY_KEYS))}")
        elif key in ("folder", "archive"):
            if not isinstance(item, str):
                example = "memory" if key == "folder" else "archive"
                problems.append(f'{where}: expected a folder name such as "{example}"')
            elif (why := folder_problem(item, hidden_ok=True)) is not None:  # the agent's store, read as files
                problems.append(f"{where}: {item!r} {why}")
        elif key == "index":
            if not isinstance(item, str) or not item.strip() or "/" in item or "\\" in item:
                problems.append(f'{where}: expected the index\'s file name in the store, like "MEMORY.md"')
        elif not isinstance(item, dict) or not any(not k.startswith("_") for k in item):
            problems.append(
                f"{where}: expected an object of type name -> definition, like "
                f'{{"feedback": {{"required": ["name"], "labels": ["Why"]}}}}'
            )
        else:
            for name, spec in item.items():
                if name.startswith("_"):
                    continue
                at = f"{where}.{name}"
                if not isinstance(spec, dict):
                    problems.append(f"{at}: expected an object with description, required and labels")
                    continue
                for field_name, field_value in spec.items():
                    if field_name.startswith("_"):
                        continue
                    if field_name not in _MEMORY_TYPE_KEYS:
                        problems.append(
                            f"{at}.{field_name}: unknown key; known keys are {', '.join(sorted(_MEMORY_TYPE_KEYS))}"
                        )
                    elif field_name == "description" and not isinstance(field_value, str):
                        problems.append(f"{at}.description: expected a string")
                    elif field_name != "description" and (
                        not _is_str_list(field_value) or not all(v.strip(" :") for v in field_value)
                    ):
                        problems.append(f"{at}.{field_name}: expected a list of non-empty strings")


_check_identity_basics = _check_fields_object(
    ("match_fields", list, 'a list of property names, like ["email", "phone"]'),
    ("ignore_values", list, "a list of strings"),
    ("same_type_only", bool, "true or false"),
    ("same_domain_only", bool, "true or false"),
    ("max_shared", int, "a whole number"),
    ("default_country", str, 'a calling code like "+49" or a country code like "DE"'),
    ("nicknames", dict, '{"Pepe": ["José"]}: a given-name form and the full names it stands for'),
    ("health_weight", (int, float), "a number of score points from 0 to 100 (default 0: not scored)"),
)


def _check_identity(value, path: str, problems: list[str]) -> None:
    """``identity``: ``match_fields`` as a list of names or ``{field: kind}``
    (kinds of :data:`identity.KINDS`), ``default_country`` a calling code or
    a known ISO country code, ``health_weight`` score points from 0 to 100."""
    from ..read import identity

    fields = value.get("match_fields") if isinstance(value, dict) else None
    if isinstance(fields, dict):
        value = {k: v for k, v in value.items() if k != "match_fields"}
        for name, kind in fields.items():
            if name.startswith("_"):
                continue
            if kind not in identity.KINDS:
                problems.append(
                    f"{path}.match_fields.{name}: expected one of the kinds {', '.join(identity.KINDS)}, not {kind!r}"
                )
    _check_identity_basics(value, path, problems)
    weight = value.get("health_weight") if isinstance(value, dict) else None
    if isinstance(weight, (int, float)) and not (_is_number(weight) and 0 <= weight <= 100):
        problems.append(
            f"{path}.health_weight: expected a number of score points from 0 to 100 (default 0: the memory "
            "section of graph.py health is shown, not scored)"
        )
    nicknames = value.get("nicknames") if isinstance(value, dict) else None
    for form, full in (nicknames or {}).items() if isinstance(nicknames, dict) else ():
        if not form.startswith("_") and not (
            (isinstance(full, str) and full.strip()) or (_is_str_list(full) and full and all(f.strip() for f in full))
        ):
            problems.append(f'{path}.nicknames.{form}: expected a full name or a list of them, like ["José"]')
    country = value.get("default_country") if isinstance(value, dict) else None
    if isinstance(country, str) and identity.country_code(country) is None:
        problems.append(
            f'{path}.default_country: {country!r} is neither a calling code like "+49" nor a known country code '
            'like "DE"'
        )


_TOP_LEVEL = {
    "$schema": _check_string,
    "version": _check_version,
    "description": _check_string,
    "node_types": _check_node_types,
    "type_aliases": _check_str_map,
    "field_fixes": _check_field_fixes,
    "domain_inference": _check_folder_map,
    "path_type_hints": _check_str_map,
    "status_order": _check_status_order,
    "status_defaults": _check_str_map,
    "richness_fields": _check_fields_object(("bonus_fields", list, "a list of property names")),
    "conflict_fields": _check_fields_object(("fields", list, "a list of property names")),
    "identity": _check_identity,
    "properties": _check_properties,
    "decay": _check_decay,
    "journal": _check_journal,
    "timezone": _check_timezone,
    "ignore_tags": _check_str_list,
    "ignore_folders": _check_folder_list,
    "entity_extraction": _check_object,
    "hubs": _check_hubs,
    "index": _check_index,
    "memory": _check_memory,
    "moc": _check_moc,
    "session": _check_session,
}


def _set_aside_earlier(data, statuses: bool = False) -> tuple[object, list[str]]:
    """``data`` without the earlier autograph's keys this one does not read
    (:data:`EARLIER_KEYS`), and a warning ``"$.path: ..."`` for each, in the
    order written.  With ``statuses`` (loading), a type whose status list
    lacks ``superseded`` and that does not say ``supersedable`` also gets
    ``"supersedable": false``, with a warning naming its ``status``.
    ``data`` itself is not changed."""
    if not isinstance(data, dict):
        return data, []
    warnings: list[str] = []

    def without(section: dict, where: str, keys: dict[str, str]) -> dict:
        kept = {}
        for key, item in section.items():
            if key in keys:
                warnings.append(
                    f"{where}.{key}: a key of the earlier autograph that this autograph does not read, "
                    f"so it is ignored; {keys[key]}"
                )
            elif where == "$" and key == "identity" and isinstance(item, dict):
                kept[key] = without(item, "$.identity", EARLIER_KEYS["identity"])
            elif where == "$" and key == "node_types" and isinstance(item, dict):
                kept[key] = {
                    name: without(spec, f"$.node_types.{name}", EARLIER_KEYS["node_types.*"])
                    if isinstance(spec, dict) and not name.startswith("_")
                    else spec
                    for name, spec in item.items()
                }
            else:
                kept[key] = item
                if statuses and key == "status" and where.startswith("$.node_types.") and _unsupersedable(section):
                    kept["supersedable"] = False
                    warnings.append(
                        f'{where}.status: lists no "superseded" and the type does not say "supersedable" (as in '
                        'the earlier autograph\'s schemas), so it is read as "supersedable": false: its cards are '
                        'never retired; add "superseded" to the list, or set "supersedable": false, to silence this '
                        "warning"
                    )
        return kept

    return without(data, "$", EARLIER_KEYS[""]), warnings


def _unsupersedable(spec: dict) -> bool:
    """Whether a type lists statuses without ``superseded`` and says
    nothing of ``supersedable`` (validation calls that an error)."""
    statuses = spec.get("status")
    return _is_str_list(statuses) and bool(statuses) and "superseded" not in statuses and "supersedable" not in spec


def _current_forms(data: dict) -> dict:
    """A validated schema with the earlier autograph's forms in this one's:
    ``status_order`` as a list, ``decay.domain_rates`` merged into
    ``decay.type_rates`` (which wins for a type in both; validation made
    sure they agree)."""
    data = dict(data)
    if isinstance(data.get("status_order"), dict):
        data["status_order"] = status_list(data["status_order"])
    decay = data.get("decay")
    if isinstance(decay, dict) and "domain_rates" in decay:
        decay = dict(decay)
        data["decay"] = decay
        decay["type_rates"] = {**decay.pop("domain_rates"), **decay.get("type_rates", {})}
    return data


def validate(data) -> list[str]:
    """Every problem of a parsed schema, as ``"$.json.path: what to do"``.

    The earlier autograph's keys in :data:`EARLIER_KEYS` are no problem
    (loading warns about them).  A type listing statuses without
    ``superseded`` is one here, as a schema written now (a draft) must
    name it or say ``"supersedable": false``; loading reads it as the
    latter, with a warning."""
    data, _ = _set_aside_earlier(data)
    if not isinstance(data, dict):
        return ['$: expected a JSON object with keys such as "node_types"']
    problems: list[str] = []
    for key, value in data.items():
        if key.startswith("_"):
            continue
        check = _TOP_LEVEL.get(key)
        if check is None:
            problems.append(f"$.{key}: unknown key; known keys are {', '.join(sorted(_TOP_LEVEL))}")
        else:
            check(value, f"$.{key}", problems)
    types = data.get("node_types")
    if isinstance(types, dict) and types:
        names = {name for name in types if not name.startswith("_")}
        for key, what in (("type_aliases", "maps to"), ("path_type_hints", "hints")):
            mapping = data.get(key)
            for name, target in mapping.items() if isinstance(mapping, dict) else ():
                if not name.startswith("_") and isinstance(target, str) and target not in names:
                    problems.append(
                        f"$.{key}.{name}: {what} {target!r}, which is not in node_types; add the type or fix the entry"
                    )
        defaults = data.get("status_defaults")
        for name, status in defaults.items() if isinstance(defaults, dict) else ():
            spec = types.get(name)
            allowed = spec.get("status") if isinstance(spec, dict) else None
            if name.startswith("_") or not isinstance(status, str):
                continue
            if name != "default" and spec is None:
                problems.append(
                    f'$.status_defaults.{name}: {name!r} is not in node_types; use a type name or "default"'
                )
            elif _is_str_list(allowed) and allowed and status not in allowed:
                problems.append(
                    f"$.status_defaults.{name}: {status!r} is not in $.node_types.{name}.status; "
                    "add it there or pick one of its statuses"
                )
    hints = data.get("path_type_hints")
    for folder in hints if isinstance(hints, dict) else ():
        if not folder.startswith("_") and (why := folder_problem(folder)) is not None:
            problems.append(f"$.path_type_hints.{folder}: folder {why}")
    return problems


# ---------------------------------------------------------------------------
# The loaded schema


class Schema:
    """A validated schema merged over :data:`DEFAULTS`.

    ``data`` is the merged dictionary, with the earlier autograph's forms
    in this one's (``status_order`` a list, ``decay.domain_rates`` merged
    into ``decay.type_rates``, the keys of :data:`EARLIER_KEYS` left out);
    ``source`` the file it came from (None for the built-in defaults);
    ``warnings`` one line per key of the earlier autograph that was set
    aside or type read as not supersedable, ``"SOURCE: $.path: what to
    do"``, for commands to print on stderr (never on stdout, which
    ``--json`` keeps for its object).
    """

    # A plain class, not a dataclass: dataclasses imports inspect, about 10 ms
    # of every command's start (half of what a warm search.py query costs
    # beyond reading the vault).
    __slots__ = ("data", "source", "warnings", "__dict__")  # __dict__: cached_property

    def __init__(self, data: dict, source: Path | None = None, warnings: tuple[str, ...] = ()):
        self.data = data
        self.source = source
        self.warnings = tuple(warnings)

    def __repr__(self) -> str:
        return f"Schema(source={self.source!r}, warnings={len(self.warnings)})"

    @property
    def node_types(self) -> dict:
        return {k: v for k, v in self.data.get("node_types", {}).items() if not k.startswith("_")}

    @cached_property
    def hub_names(self) -> set[str]:
        return {name.lower() for name in self.data["hubs"].get("names", [])}

    @cached_property
    def hub_types(self) -> set[str]:
        return {name.lower() for name in self.data["hubs"].get("types", [])}

    def is_hub(self, stem: str, properties: dict) -> bool:
        """Index and Map-of-Content notes: by file stem or by ``type``."""
        kind = properties.get("type")
        return stem.lower() in self.hub_names or (isinstance(kind, str) and kind.lower() in self.hub_types)

    @property
    def journal_keep(self) -> tuple[float, float]:
        """``(keep_days, max_mb)``: how long and how much journal of applied
        runs ``.graph/journal/`` keeps (schema key ``journal``)."""
        section = self.section("journal")
        return (float(section.get("keep_days", 30)), float(section.get("max_mb", 200)))

    @property
    def ignore_folders(self) -> list[str]:
        """Vault-relative folders whose notes are never written (templates,
        archives): ``ignore_folders``, without leading or trailing ``/``."""
        return [folder.strip("/") for folder in self.data.get("ignore_folders", [])]

    @property
    def index_files(self) -> list[str]:
        """Vault-relative paths of the always-loaded index files (``index.files``)."""
        return list(self.section("index").get("files") or DEFAULTS["index"]["files"])

    @property
    def moc(self) -> dict:
        """How ``moc.py generate`` writes Maps of Content (schema key ``moc``):
        ``group_by`` (``"domain"``, the default, or ``"type"``), ``folder``
        (vault-relative, ``""`` = the root; default the ``moc`` type's folder,
        else ``"MOC"``) and ``lines``/``bytes``, the most one page may hold
        (default the index's hard caps, :attr:`index_caps`: 200 / 25,000)."""
        section = self.section("moc")
        folder = section.get("folder")
        if not isinstance(folder, str):
            folder = self.folder_of("moc")
        caps = {k: v for k, v in (section.get("caps") or {}).items() if not k.startswith("_")}
        return {
            "group_by": section.get("group_by", "domain"),
            "folder": (folder if folder is not None else "MOC").strip("/"),
            **{dim: int(caps.get(dim, self.index_caps[dim])) for dim in ("lines", "bytes")},
        }

    @property
    def index_caps(self) -> dict[str, int]:
        """The index's hard caps, ``{"lines": N, "bytes": N}`` (``index.hard``;
        default 200 lines, 25,000 bytes)."""
        hard = self.section("index").get("hard") or {}
        return {dim: int(hard.get(dim, DEFAULTS["index"]["hard"][dim])) for dim in ("lines", "bytes")}

    @property
    def memory(self) -> dict:
        """The memory store: ``folder`` (vault-relative; ``""`` = the vault
        itself), ``index`` (the index's file name in the store), ``archive``
        (the folder of retired notes in the store) and ``types`` (type name ->
        ``{"description", "required", "labels"}``; the :data:`MEMORY_TYPES`
        preset unless the schema gives its own)."""
        section = self.section("memory")
        types = {k: v for k, v in (section.get("types") or MEMORY_TYPES).items() if not k.startswith("_")}
        return {
            "folder": str(section.get("folder", DEFAULTS["memory"]["folder"])).strip("/"),
            "index": section.get("index") or DEFAULTS["memory"]["index"],
            "archive": str(section.get("archive") or DEFAULTS["memory"]["archive"]).strip("/"),
            "types": {
                name: {
                    "description": spec.get("description", ""),
                    "required": list(spec.get("required", MEMORY_FIELDS)),
                    "labels": [label.strip().rstrip(":：").strip() for label in spec.get("labels", [])],
                }
                for name, spec in types.items()
            },
        }

    def section(self, key: str) -> dict:
        """A top-level object of the schema without its ``_comment`` keys."""
        value = self.data.get(key)
        return {k: v for k, v in value.items() if not k.startswith("_")} if isinstance(value, dict) else {}

    @property
    def type_aliases(self) -> dict[str, str]:
        return self.section("type_aliases")

    @property
    def status_order(self) -> list[str]:
        """Statuses from most to least current (``status_order``; from an
        object of status -> rank, by rank)."""
        return status_list(self.data.get("status_order"))

    @property
    def type_rates(self) -> dict[str, float]:
        """Type -> decay rate per day (``decay.type_rates``, and the earlier
        autograph's ``decay.domain_rates``; type_rates wins for a type in both)."""
        decay = self.section("decay")
        rates: dict[str, float] = {}
        for key in ("domain_rates", "type_rates"):
            found = decay.get(key)
            rates.update(
                {k: v for k, v in found.items() if not k.startswith("_") and _is_number(v)}
                if isinstance(found, dict)
                else {}
            )
        return rates

    def decay_rate(self, kind) -> float:
        """The relevance a card of type ``kind`` loses per day: its type's rate
        (:attr:`type_rates`), else ``decay.rate``."""
        rate = self.type_rates.get(kind) if isinstance(kind, str) else None
        if rate is None:
            rate = self.section("decay").get("rate", DEFAULTS["decay"]["rate"])
        return float(rate)

    @property
    def field_fixes(self) -> dict[str, dict[str, str]]:
        """Property -> {wrong value: right value}; the only way a status
        outside its enum is ever rewritten."""
        return {
            k: {w: r for w, r in v.items() if not w.startswith("_")} for k, v in self.section("field_fixes").items()
        }

    @property
    def properties(self) -> dict[str, str]:
        """Property -> Obsidian property type (``text``, ``number``, ...)."""
        return {k: PROPERTY_TYPE_ALIASES.get(v, v) for k, v in self.section("properties").items()}

    def statuses(self, kind: str) -> list[str]:
        """The allowed statuses of a type (empty: any status)."""
        return list(self.node_types.get(kind, {}).get("status") or [])

    def supersedable(self, kind: str | None) -> bool:
        """Whether a card of type ``kind`` may get ``status: superseded``:
        not when the type says ``"supersedable": false``, nor when it lists
        its statuses without ``superseded`` (an explicit ``"status": []``
        included: a type with no status, such as ``daily``).  A type the
        schema does not know (None) may."""
        spec = self.node_types.get(kind, {}) if kind else {}
        if spec.get("supersedable", True) is False:
            return False
        statuses = spec.get("status")
        return not isinstance(statuses, list) or "superseded" in statuses

    def required(self, kind: str) -> list[str]:
        return list(self.node_types.get(kind, {}).get("required") or [])

    def folder_of(self, kind: str) -> str | None:
        """The folder cards of a type live in (``""`` = the vault's root), or None."""
        folder = self.node_types.get(kind, {}).get("folder")
        return folder.strip("/") if isinstance(folder, str) else None

    def default_for(self, kind: str, name: str):
        """The value the schema gives a missing property, or None.

        From the type's ``defaults``; for ``status`` also ``status_defaults``
        (the type's entry, then ``default``), kept only if the type allows it.
        """
        spec = self.node_types.get(kind, {})
        value = (spec.get("defaults") or {}).get(name)
        if value is None and name == "status":
            defaults = self.section("status_defaults")
            value = defaults.get(kind, defaults.get("default"))
            allowed = self.statuses(kind)
            if allowed and value not in allowed:
                value = None
        return value

    def infer_type(self, path: str) -> str | None:
        """The type a note's folder suggests: the longest matching folder among
        ``path_type_hints`` and the types' ``folder``s; None when none matches.
        Deterministic: ties go to the hint, then to the type name."""
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        candidates = [(hint.strip("/"), 0, kind) for hint, kind in self.section("path_type_hints").items()]
        candidates += [(f, 1, kind) for kind in self.node_types if (f := self.folder_of(kind))]
        best = None
        for prefix, rank, kind in candidates:
            if prefix and (folder == prefix or folder.startswith(prefix + "/")):
                key = (-len(prefix), rank, kind)
                if best is None or key < best[0]:
                    best = (key, kind)
        return best[1] if best else None

    def infer_domain(self, path: str) -> str | None:
        """The domain of a note's folder (``domain_inference``, longest prefix)."""
        best = None
        for prefix, domain in self.section("domain_inference").items():
            prefix = prefix.strip("/")
            if prefix and (path == prefix or path.startswith(prefix + "/")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), domain)
        return best[1] if best else None


def _merge(base: dict, override: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load_schema(vault: str | Path | None = None, path: str | Path | None = None) -> Schema:
    """Load the schema for ``vault``: ``path`` if given, else
    ``VAULT/schema.json``, else the built-in defaults.

    Raises :class:`SchemaError` for a missing ``path``, one that is not a
    regular file (a FIFO, a device) or is over :data:`jsonfile.MAX_BYTES`,
    invalid JSON (with line and column) or a schema that does not validate.
    A schema of the earlier autograph loads in this one's forms; the keys it
    sets aside are named in :attr:`Schema.warnings` (it prints nothing).
    """
    if path is None and vault is not None and (Path(vault) / "schema.json").exists():
        path = Path(vault) / "schema.json"  # a folder or FIFO of that name is an error, not "no schema"
    if path is None:
        return Schema(copy.deepcopy(DEFAULTS))
    path = Path(path)
    try:
        text = jsonfile.read_text(path)
    except jsonfile.NotAFile as exc:
        raise SchemaError(str(path), [f"{exc}; give the path of a schema.json file"]) from None
    except FileNotFoundError:
        if path.is_symlink():
            why = f"a symlink to {os.readlink(path)}, which does not exist; point it at a schema.json or remove it"
            raise SchemaError(str(path), [why]) from None
        raise SchemaError(
            str(path), ["file not found; give the path of a schema.json, or leave out --schema"]
        ) from None
    except IsADirectoryError:
        raise SchemaError(str(path), ["is a folder; give the path of a schema.json file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(
            str(path), [f"cannot read the file ({exc}); give the path of a readable schema.json"]
        ) from None
    try:
        data, warnings = _set_aside_earlier(jsonfile.loads(text), statuses=True)
        problems = validate(data)
        if problems:
            raise SchemaError(str(path), problems)
        return Schema(_merge(DEFAULTS, _current_forms(data)), path, tuple(f"{path}: {w}" for w in warnings))
    except jsonfile.JSONError as exc:
        raise SchemaError(str(path), [str(exc)]) from None
    except RecursionError:
        raise SchemaError(str(path), ["nested too deeply; compare it with schema.example.json"]) from None
