"""Incoming links: the backlinks of one note, and the orphans (notes nothing links to).

``graph.py backlinks`` and ``graph.py orphans``.  A note is named as a
person types it (:func:`note_name`: a file path, a vault path or a link);
it is resolved by Obsidian's rules (:class:`links.Resolver`), so the
backlinks are the links that open that note in Obsidian.  A name that no
note has still has links: the broken links that use it are listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..read import linkgraph
from ..read.index import NoteIndex
from ..read.text import plural, printable
from ..read.vault import Vault
from ..schema.model import Schema
from ..write.derived import save_index
from . import health

__all__ = [
    "Backlinks",
    "NoteError",
    "backlinks_json",
    "backlinks_text",
    "find",
    "note_name",
    "orphan_notes",
    "orphans_json",
    "orphans_text",
]


class NoteError(ValueError):
    """NOTE names nothing the command can use (empty, a file outside the
    vault, no note and no link with that name); the message says which."""


@dataclass
class Backlinks:
    """The links to one note.  ``name`` the note as a link target (as
    :func:`note_name` read it); ``path`` its vault path, or None when no
    note has that name (``rows`` are then the broken links that use it);
    ``rows`` each link ``{source, line, target, kind}`` (``line`` 1-based,
    ``target`` as written); ``sources`` the notes they are in, sorted;
    ``ambiguity`` a line for stderr when ``name`` could mean several files
    (which one was taken), else None."""

    name: str
    path: str | None
    rows: list[dict] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    ambiguity: str | None = None


def note_name(vault: Vault, name: str) -> str:
    """NOTE as given: a vault path, a file path (absolute or from the
    current folder), or a link (``[[Dana Reyes#Role|Dana]]`` -> ``Dana Reyes``).
    Raises :class:`NoteError` for an empty NOTE or a file outside the vault."""
    if not name.strip():
        raise NoteError("NOTE is empty; give a note's path or name")
    if name in vault.files:  # a vault path is read as one, wherever the command runs (as card.py does)
        return name
    path = Path(name)
    if path.is_file():
        try:
            return path.resolve().relative_to(vault.root.resolve()).as_posix()
        except ValueError:
            raise NoteError(f"{name!r} is not inside the vault {vault.root}") from None
    text = name.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0].split("#", 1)[0].strip()
    while text.startswith("./"):
        text = text[2:]
    return text


def find(vault: Vault, index: NoteIndex, note: str) -> Backlinks:
    """The backlinks of ``note`` (:func:`note_name` reads it): every link
    from another note that resolves to it, in link-graph order.  The link
    graph is built through ``index``, whose cache is then saved unless the
    name is refused (a refused call writes nothing).  Raises :class:`NoteError` when ``note`` is
    refused by :func:`note_name`, or when no note has that name and no
    link uses it."""
    name = note_name(vault, note)
    graph = linkgraph.build(vault, index)
    resolution = vault.resolver.resolve(name, "")
    path = name if name in vault.files else resolution.path
    ambiguity = None
    if path is not None:
        if resolution.ambiguous and path == resolution.path:
            ambiguity = f"{name!r} could mean {len(resolution.candidates)} files; using {path}"
        edges = graph.backlinks(path)
    else:
        # no such note: the links that name it are broken; list them
        edges = [e for e in graph.broken() if linkgraph.same_target(e.link.target, name)]
        if not edges:
            raise NoteError(f"no note matches {name!r} in {vault.root}, and no link names it")
    save_index(index)
    rows = [{"source": e.source, "line": e.link.line, "target": e.link.text, "kind": e.link.kind} for e in edges]
    return Backlinks(name, path, rows, sorted({row["source"] for row in rows}), ambiguity)


def backlinks_json(found: Backlinks) -> dict:
    """``graph.py backlinks --json``: ``{note, backlinks[], sources[]}``."""
    return {"note": found.path, "backlinks": found.rows, "sources": found.sources}


def backlinks_text(found: Backlinks) -> str:
    """The human report of ``graph.py backlinks``: a count line, then every
    link as ``source:line  target``.  No final newline."""
    if found.path:
        what = printable(found.path)
    else:
        what = f"{printable(found.name)} (no such note; these links are broken)"
    lines = [f"{what}: {plural(len(found.rows), 'backlink')} from {plural(len(found.sources), 'note')}"]
    lines += [f"  {printable(row['source'])}:{row['line']}  {printable(row['target'])}" for row in found.rows]
    return "\n".join(lines)


def orphan_notes(vault: Vault, schema: Schema, index: NoteIndex) -> list[str]:
    """The notes no other note links to, hubs (:func:`health.hubs`)
    excepted, in vault order.  The link graph is built through ``index``,
    whose cache is then saved."""
    graph = linkgraph.build(vault, index)
    save_index(index)
    return graph.orphans(exclude=set(health.hubs(vault, schema, index)).__contains__)


def orphans_json(orphans: list[str]) -> dict:
    """``graph.py orphans --json``: ``{orphans[], count}``."""
    return {"orphans": orphans, "count": len(orphans)}


def orphans_text(orphans: list[str]) -> str:
    """The human report of ``graph.py orphans``: the count, then each path.
    No final newline."""
    return "\n".join([plural(len(orphans), "orphan"), *(f"  {printable(path)}" for path in orphans)])
