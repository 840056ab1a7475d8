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

__all__ = ["Edge", "LinkGraph", "LinkTally", "build", "same_target"]


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

    def backlink_sources(self, path: str) -> list[str]:
        """The note of each link from another note that resolves to
        ``path`` (a note linking twice is named twice)."""
        return [edge.source for edge in self.incoming.get(path, ()) if edge.source != path]

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


class LinkTally:
    """What a report needs of the link graph, taken in one pass over the
    notes (:meth:`add` each note's summary, its ``targets`` filled, in vault
    order: :meth:`NoteIndex.each`) without keeping every link: the count
    of links, the broken and the ambiguous ones, the notes each note is
    linked from, the dead ends and the unreadable notes.  Anchors are
    checked at the end (:meth:`broken_anchors`), each target's outline
    asked of the index once.  The answers are :class:`LinkGraph`'s, in the
    memory of the findings and one source per link: a large vault's
    health never holds every note's links."""

    def __init__(self, vault: Vault, index: NoteIndex):
        self.vault, self.index = vault, index
        self.links = 0
        self.broken: list[Edge] = []
        self.ambiguous: list[Edge] = []
        self.dead_ends: list[str] = []
        self.unreadable: dict[str, str] = {}
        self._sources: dict[str, list[str]] = {}  # note -> the other note of each link that resolves to it
        self._checks: list[tuple] = []  # (target, fragment, note position, link position, source) per anchor
        self._added = 0
        self._canon = {path: path for path in vault.notes}

    def add(self, path: str, summary) -> None:
        """Count the links of note ``path`` (its :class:`index.Summary`,
        ``targets`` filled)."""
        position = self._added
        self._added += 1
        if summary.unreadable is not None:
            self.unreadable[path] = summary.unreadable
            return
        self.links += len(summary.links)
        leads_on = False
        for number, (link, (target, candidates, ambiguous)) in enumerate(
            zip(summary.links, summary.targets, strict=True)
        ):
            if target is None:
                self.broken.append(Edge(path, link, target, candidates, ambiguous))
            if ambiguous:
                self.ambiguous.append(Edge(path, link, target, candidates, ambiguous))
            if target is None:
                continue
            if target != path:
                sources = self._sources.get(target)
                if sources is None:  # the vault's own string for the path, not one more copy per note decoded
                    sources = self._sources[self._canon.get(target, target)] = []
                sources.append(path)
                leads_on = leads_on or target.endswith(".md")
            if link.fragment and target.endswith(".md"):
                self._checks.append((target, link.fragment, position, number, path))
        if not leads_on:
            self.dead_ends.append(path)

    def backlink_sources(self, path: str) -> list[str]:
        """As :meth:`LinkGraph.backlink_sources`."""
        return self._sources.get(path, [])

    def orphans(self, exclude=lambda path: False) -> list[str]:
        """As :meth:`LinkGraph.orphans`."""
        return [path for path in self.vault.notes if path not in self._sources and not exclude(path)]

    def broken_anchors(self) -> list[Edge]:
        """As :meth:`LinkGraph.broken_anchors`: the targets' outlines read
        in one pass (:meth:`NoteIndex.each_anchors`, in target order), each
        once; the links that fail read again from their notes."""
        checks = sorted(self._checks, key=lambda check: check[0])
        self._checks = []
        targets = list(dict.fromkeys(check[0] for check in checks))
        failed = []
        at = 0
        for target, keys, ids in self.index.each_anchors(targets):
            while at < len(checks) and checks[at][0] == target:
                _target, fragment, position, number, source = checks[at]
                at += 1
                if fragment.startswith("^"):
                    ok = fragment[1:].strip().lower() in ids
                else:
                    ok = find_heading(keys, fragment) is not None
                if not ok:
                    failed.append((position, number, source))
        found = []
        for _position, number, source in sorted(failed):
            summary = self.index.one(source)
            if number >= len(summary.links):
                continue  # the note changed since it was counted (read again without an index file)
            link = summary.links[number]
            if summary.targets is not None:
                target, candidates, ambiguous = summary.targets[number]
            else:  # its targets were not stored: found again
                target, candidates, ambiguous = self.vault.resolver.resolve(link.target, source)
            found.append(Edge(source, link, target, candidates, ambiguous))
        return found
