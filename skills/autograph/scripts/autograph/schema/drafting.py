"""A draft ``schema.json`` from a discovery (:func:`discovery.discover`).

The draft states what the vault already does, never what it might mean: it
invents no types (only explicit ``type`` values become node types), maps no
value to a merely similar one (only spellings that differ in letter case or
spacing are folded: ``Active`` -> ``active``), and leaves every description
for a person to write.  It always validates (:func:`model.validate`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from ..read.frontmatter import is_placeholder
from .model import DEFAULTS, PROPERTY_TYPES, folder_problem, validate

__all__ = ["draft_schema"]

FOLDER_SHARE = 0.8  # a folder hints a type when this share of its typed notes have it
MIN_HINT_NOTES = 3
KIND_TO_PROPERTY = {
    "checkbox": "checkbox",
    "number": "number",
    "date": "date",
    "datetime": "datetime",
    "list": "multitext",
}


def _slug(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def _fold(value: str) -> str:
    return " ".join(value.split()).casefold()


def _status_fixes(statuses: dict[str, int]) -> dict[str, str]:
    """Spellings that differ only in case or spacing -> the most used one."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for status, count in statuses.items():
        groups.setdefault(_fold(status), []).append((count, status))
    fixes = {}
    for variants in groups.values():
        if len(variants) > 1:
            variants.sort(key=lambda item: (-item[0], item[1]))
            winner = variants[0][1]
            fixes.update({status: winner for _, status in variants[1:]})
    return fixes


def draft_schema(discovery: dict, coverage: float = 0.9) -> dict:
    """A draft schema for the vault ``discovery`` describes.

    * ``node_types``: one per explicit ``type`` value, with the folder most of
      its notes live in (3 notes or more, at least half of the type's notes,
      80% of that folder's typed notes), ``required`` = the
      properties at least ``coverage`` (0..1) of its notes have, ``status`` =
      the statuses in use (plus ``"superseded"``);
    * ``field_fixes.status``: case and spacing variants of a status;
    * ``path_type_hints``: folders whose typed notes are at least 80% one
      type (3 notes or more);
    * ``status_defaults``: the most used status of a type that requires one;
    * ``domain_inference``: each top-level folder -> a slug of its name;
    * ``properties``: Obsidian's ``.obsidian/types.json``, else a kind every
      value of a property shares (3 values or more);
    * ``decay`` and ``hubs``: the built-in defaults.

    Template placeholders (``{{date}}``, ``<% tp.file.title %>``; the
    ``placeholder`` kind) are no evidence: no type, status or property type
    comes from them, and a property whose other values share a kind keeps it.

    Raises ValueError for a discovery without the keys it needs or a
    coverage outside 0..1.
    """
    if not 0 <= coverage <= 1:
        raise ValueError("coverage must be between 0 and 1")
    try:
        types = discovery["types"]
        keys = discovery["keys"]
        folders = discovery["folders"]
    except (KeyError, TypeError):
        raise ValueError("not a discovery: expected the JSON that discover.py --json prints") from None

    # one spelling per status across the vault: field_fixes apply to every
    # type, so variants are folded vault-wide to the most used spelling
    every_status: Counter = Counter()
    for info in types.values():
        every_status.update(
            {s: n for s, n in info.get("statuses", {}).items() if isinstance(s, str) and not is_placeholder(s)}
        )
    status_fixes = _status_fixes(dict(every_status))
    node_types: dict[str, dict] = {}
    status_defaults: dict[str, str] = {}
    for name, info in sorted(types.items()):
        explicit = info.get("explicit", 0)
        if not explicit or name.startswith("_") or is_placeholder(name):
            continue
        spec: dict = {"description": f"TODO: describe the {name} type ({explicit} notes have it)"}
        places = Counter(info.get("folders", {}))
        if places:
            # a folder is the type's home only on evidence: most of the type's
            # notes are there and the type is most of that folder's typed notes
            folder, count = places.most_common(1)[0]
            typed_there = sum(t.get("folders", {}).get(folder, 0) for t in types.values())
            if (
                count >= MIN_HINT_NOTES
                and count / explicit >= 0.5
                and count / typed_there >= FOLDER_SHARE
                and folder_problem(folder) is None
            ):
                spec["folder"] = folder
        spec["required"] = sorted(
            key for key, count in info.get("keys", {}).items() if key != "type" and count / explicit >= coverage
        )
        statuses: Counter = Counter()
        for status, count in info.get("statuses", {}).items():
            if isinstance(status, str) and not is_placeholder(status):
                statuses[status_fixes.get(status, status)] += count
        allowed = sorted(statuses, key=lambda s: (-statuses[s], s))
        if allowed:
            spec["status"] = allowed + ([] if "superseded" in allowed else ["superseded"])
            if "status" in spec["required"]:
                status_defaults[name] = allowed[0]
        node_types[name] = spec

    hints: dict[str, str] = {}
    per_folder: dict[str, Counter] = {}
    for name, info in types.items():
        if is_placeholder(name):
            continue
        for folder, count in info.get("folders", {}).items():
            per_folder.setdefault(folder, Counter())[name] += count
    for folder, counts in sorted(per_folder.items()):
        name, count = counts.most_common(1)[0]
        if (
            folder
            and folder_problem(folder) is None
            and name in node_types
            and count >= MIN_HINT_NOTES
            and count / sum(counts.values()) >= FOLDER_SHARE
        ):
            hints[folder] = name

    domains = {}
    for folder in folders:
        top = folder.split("/", 1)[0]
        # "_x" keys are comments; a discovery edited by hand may hold anything
        if top and top not in domains and not top.startswith("_") and folder_problem(top) is None:
            domains[top] = _slug(top) or unicodedata.normalize("NFC", top).casefold()

    properties = {key: kind for key, kind in discovery.get("obsidian_types", {}).items() if kind in PROPERTY_TYPES}
    for key, info in keys.items():
        kinds = {k: n for k, n in info.get("kinds", {}).items() if k not in ("empty", "placeholder")}
        if key in properties or key in ("tags", "aliases", "type") or len(kinds) != 1:
            continue
        ((kind, count),) = kinds.items()
        if kind in KIND_TO_PROPERTY and count >= 3:
            properties[key] = KIND_TO_PROPERTY[kind]

    schema: dict = {"version": 1, "description": "Draft from discover.py; review every TODO before enforce --apply"}
    schema["node_types"] = node_types
    if status_fixes:
        schema["field_fixes"] = {"status": status_fixes}
    if hints:
        schema["path_type_hints"] = hints
    if status_defaults:
        schema["status_defaults"] = status_defaults
    if domains:
        schema["domain_inference"] = domains
    if properties:
        schema["properties"] = dict(sorted(properties.items()))
    schema["decay"] = DEFAULTS["decay"]
    schema["hubs"] = DEFAULTS["hubs"]
    problems = validate(schema)
    if problems:  # a bug here, not bad input: the draft is built to validate
        raise AssertionError("draft schema does not validate: " + "; ".join(problems))
    return schema
