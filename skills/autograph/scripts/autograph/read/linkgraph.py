"""The link graph of a vault: every link, where it resolves, and what follows.

Built in one pass over the notes (:func:`build`).  Orphans, dead ends and
backlinks use the *resolved target path* of each link (BR-21), never the raw
link text or its stem.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

from .index import NoteIndex, note_links  # noqa: F401  (note_links re-exported)
from .links import Link, find_heading
from .parallel import gc_paused
from .vault import Vault

__all__ = ["Edge", "LinkGraph", "build", "same_target"]


def same_target(a: str, b: str) -> bool:
    """Whether two link targets name the same note as Obsidian compares them:
    case-insensitive after NFC, ``.md`` optional."""

    def key(text: str) -> str:
        text = unicodedata.normalize("NFC", text.strip()).lower()
        return text[:-3] if text.endswith(".md") else text

    return key(a) == key(b)


class Edge(NamedTuple):
    """A link in note ``source``; ``target`` is the resolved vault path (None
    when broken); ``candidates`` every file it could mean."""

    source: str
    link: Link
    target: str | None
    candidates: tuple[str, ...]
    ambiguous: bool


@dataclass
class LinkGraph:
    """Links of a vault.  ``edges`` in note order then file order;
    ``unreadable`` maps a note that is not UTF-8 to the reason."""

    vault: Vault
    index: NoteIndex
    edges: list[Edge] = field(default_factory=list)
    outgoing: dict[str, list[Edge]] = field(default_factory=dict)
    incoming: dict[str, list[Edge]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    def backlinks(self, path: str) -> list[Edge]:
        """Links from other notes that resolve to ``path``."""
        return [edge for edge in self.incoming.get(path, ()) if edge.source != path]

    def orphans(self, exclude=lambda path: False) -> list[str]:
        """Notes no other note links to, except those ``exclude`` accepts (hubs)."""
        return [path for path in self.vault.notes if not self.backlinks(path) and not exclude(path)]

    def dead_ends(self) -> list[str]:
        """Notes with no resolved link to another note."""
        return [
            path
            for path in self.vault.notes
            if path not in self.unreadable
            and not any(e.target != path and e.target and e.target.endswith(".md") for e in self.outgoing.get(path, ()))
        ]

    def broken(self) -> list[Edge]:
        return [edge for edge in self.edges if edge.target is None]

    def ambiguous(self) -> list[Edge]:
        return [edge for edge in self.edges if edge.ambiguous]

    def broken_anchors(self) -> list[Edge]:
        """Resolved links whose ``#heading`` or ``#^block`` is not in the target.

        Headings compare as Obsidian's ``stripHeading`` (:func:`links.anchor_key`);
        ``A#B`` walks the outline (:func:`links.find_heading`, BR-39); block
        ids ignore case.  Anchors into attachments (``file.pdf#page=3``) are
        not checked.
        """
        found = []
        for edge in self.edges:
            fragment = edge.link.fragment
            if not fragment or edge.target is None or not edge.target.endswith(".md"):
                continue
            keys, ids = self.index.anchors(edge.target)
            if fragment.startswith("^"):
                ok = fragment[1:].strip().lower() in ids
            else:
                ok = find_heading(keys, fragment) is not None
            if not ok:
                found.append(edge)
        return found


def build(vault: Vault, index: NoteIndex | None = None) -> LinkGraph:
    """Resolve every link of every note (Obsidian's rules).

    ``index`` supplies the notes' links (parsed, or from the cache); without
    one, every note is read and nothing is cached.
    """
    index = index if index is not None else NoteIndex(vault)
    graph = LinkGraph(vault, index)

    def resolve(target: str, source: str):
        return vault.resolver.resolve(target, source)  # built only if a note needs it

    with gc_paused():
        index.prefetch(vault.notes)
        for path in vault.notes:
            summary = index.summary(path)
            if summary.unreadable is not None:
                graph.unreadable[path] = summary.unreadable
                continue
            out = graph.outgoing.setdefault(path, [])
            targets = summary.targets
            if targets is None:
                targets = [resolve(link.target, path) for link in summary.links]  # shared Resolutions
                index.set_targets(path, targets)
            for link, (target, candidates, ambiguous) in zip(summary.links, targets, strict=True):
                edge = Edge(path, link, target, candidates, ambiguous)
                graph.edges.append(edge)
                out.append(edge)
                if target is not None:
                    graph.incoming.setdefault(target, []).append(edge)
    return graph
