"""What a vault actually uses: folders, types, statuses, properties, tags, links.

:func:`discover` reads every note once (through the note index) and returns a
JSON-ready description that :mod:`drafting` turns into a draft schema.  It
never writes to the vault.
"""

from __future__ import annotations

import datetime
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from ..read import jsonfile
from ..read.frontmatter import is_placeholder
from ..read.index import NoteIndex
from ..read.linkgraph import build
from ..read.tags import normalize as normalize_tags
from ..read.vault import Vault

__all__ = ["discover", "value_kind"]

EXAMPLES = 5
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[-+][0-9:]+)?\Z")


def value_kind(value) -> str:
    """The kind of a property value, named after Obsidian's property types:
    ``empty``, ``checkbox``, ``number``, ``date``, ``datetime``, ``text``,
    ``list`` or ``mapping``; or ``placeholder`` for a template's
    ``{{date}}`` or ``<% tp.file.title %>`` (BR-41: text to be filled in,
    not a date, a list or a mapping; :func:`frontmatter.is_placeholder`)."""
    if value is None:
        return "empty"
    if is_placeholder(value):
        return "placeholder"
    if isinstance(value, bool):
        return "checkbox"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        if _DATE.match(value):
            return "date"
        if _DATETIME.match(value):
            return "datetime"
        return "text"
    if isinstance(value, list):
        return "list"
    return "mapping"


def _filled(value):
    """``value`` without template placeholders: None for a placeholder, a
    list without its placeholder items; a placeholder is no status or tag."""
    if isinstance(value, list):
        return [item for item in value if not is_placeholder(item)]
    return None if is_placeholder(value) else value


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _example(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _obsidian_types(root: Path) -> dict[str, str]:
    """Property types from ``.obsidian/types.json`` (Obsidian's own record)."""
    try:
        data = json.loads(jsonfile.read_text(root / ".obsidian" / "types.json"))  # never a FIFO or device
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    types = data.get("types") if isinstance(data, dict) else None
    if not isinstance(types, dict):
        return {}
    return {k: v for k, v in types.items() if isinstance(k, str) and isinstance(v, str)}


def discover(vault: Vault, index: NoteIndex | None = None) -> dict:
    """Describe what ``vault`` uses.  Keys (stable; see ``discover.py --help``):

    ``vault``, ``scanned`` (ISO time), ``notes`` (every note),
    ``templates`` {folders, notes}, ``folders`` {folder: notes directly in
    it, ``""`` = root}, ``frontmatter`` {valid, invalid, none},
    ``without_frontmatter`` [path], ``invalid_frontmatter`` [{path, line,
    column, error}], ``unreadable`` [{path, error}], ``types`` {type:
    {explicit, inferred, folders {folder: n}, statuses {status: n}, keys {key:
    n}}}, ``keys`` {key: {count, kinds {kind: n}, examples [..]}},
    ``obsidian_types`` {property: type} from ``.obsidian/types.json``,
    ``tags`` {tag: n}, ``links`` {total, resolved, broken, embeds,
    markdown, in_properties, per_note}.

    A template placeholder (``created: {{date}}`` in a note outside the
    templates folders) is its own kind, ``placeholder`` (:func:`value_kind`),
    and counts as no status, tag or type.

    Notes in the templates folders (:attr:`Vault.template_folders`) count
    in ``notes``, ``templates`` and ``links`` only: their placeholders are
    not what the vault's notes hold, and enforce never checks them.

    Explicit types are string ``type`` properties; a note without one gets
    the type most notes of its folder state explicitly (counted as
    ``inferred``), if any.
    """
    graph = build(vault, index)
    index = graph.index
    folders: Counter = Counter()
    state: Counter = Counter()
    without: list[str] = []
    invalid: list[dict] = []
    unreadable: list[dict] = []
    types: dict[str, dict] = {}
    folder_types: dict[str, Counter] = defaultdict(Counter)
    keys: dict[str, dict] = {}
    tags: Counter = Counter()
    untyped: list[str] = []

    def type_entry(name: str) -> dict:
        return types.setdefault(
            name, {"explicit": 0, "inferred": 0, "folders": Counter(), "statuses": Counter(), "keys": Counter()}
        )

    cards = set(vault.cards())
    templates = 0
    for path in vault.notes:
        if path not in cards:
            templates += 1  # a template's placeholders ({{date}}) are not what the vault's notes hold
            continue
        folders[_folder(path)] += 1
        summary = index.summary(path)
        if summary.unreadable is not None:
            unreadable.append({"path": path, "error": summary.unreadable})
            continue
        state[summary.frontmatter] += 1
        if summary.frontmatter == "none":
            without.append(path)
        elif summary.error is not None:
            line, column, reason = summary.error
            invalid.append({"path": path, "line": line, "column": column, "error": reason})
        properties = summary.properties
        for key, value in properties.items():
            entry = keys.setdefault(key, {"count": 0, "kinds": Counter(), "examples": []})
            entry["count"] += 1
            entry["kinds"][value_kind(value)] += 1
            if value is not None and len(entry["examples"]) < EXAMPLES:
                example = _example(value)
                if example not in entry["examples"]:
                    entry["examples"].append(example)
        for tag in normalize_tags(_filled(properties.get("tags"))):
            tags[tag] += 1
        kind = properties.get("type")
        if is_placeholder(kind):
            continue  # type: {{type}} is a template's, neither a type nor a note without one
        if isinstance(kind, str) and kind.strip():
            entry = type_entry(kind)
            entry["explicit"] += 1
            entry["folders"][_folder(path)] += 1
            folder_types[_folder(path)][kind] += 1
            status = properties.get("status")
            for item in _filled(status if isinstance(status, list) else [status]):
                if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                    entry["statuses"][str(item)] += 1
            entry["keys"].update(properties.keys())
        elif summary.frontmatter != "invalid":
            untyped.append(path)

    for path in untyped:
        common = folder_types.get(_folder(path))
        if common:
            type_entry(common.most_common(1)[0][0])["inferred"] += 1

    edges = graph.edges
    links = {
        "total": len(edges),
        "resolved": sum(1 for e in edges if e.target is not None),
        "broken": sum(1 for e in edges if e.target is None),
        "embeds": sum(1 for e in edges if e.link.embed),
        "markdown": sum(1 for e in edges if e.link.kind == "markdown"),
        "in_properties": sum(1 for e in edges if e.link.kind == "property"),
        "per_note": round(len(edges) / len(vault.notes), 2) if vault.notes else 0.0,
    }

    def plain(counter: Counter) -> dict:
        return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))

    return {
        "vault": str(vault.root),
        "scanned": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "notes": len(vault.notes),
        "templates": {"folders": vault.template_folders, "notes": templates},
        "folders": dict(sorted(folders.items())),
        "frontmatter": {"valid": state["valid"], "invalid": state["invalid"], "none": state["none"]},
        "without_frontmatter": without,
        "invalid_frontmatter": invalid,
        "unreadable": unreadable,
        "types": {
            name: {
                "explicit": t["explicit"],
                "inferred": t["inferred"],
                "folders": plain(t["folders"]),
                "statuses": plain(t["statuses"]),
                "keys": plain(t["keys"]),
            }
            for name, t in sorted(types.items())
        },
        "keys": {
            key: {"count": k["count"], "kinds": plain(k["kinds"]), "examples": k["examples"]}
            for key, k in sorted(keys.items(), key=lambda item: (-item[1]["count"], item[0]))
        },
        "obsidian_types": _obsidian_types(vault.root),
        "tags": plain(tags),
        "links": links,
    }
