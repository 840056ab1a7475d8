"""Duplicate cards: which cards are one entity, and how two cards become one.

Grouping (:func:`find_groups`) reads only identity keys: the properties the
schema names in ``identity.match_fields`` (see :mod:`identity`, the one
normaliser search also uses), each value normalised by its field's kind.
Two cards are linked when they hold the same normalised value under fields
of the same kind (``handle:ivan_p``: ``handle: "@ivan_p"`` on one card,
``telegram: ivan_p`` on the other).  Rules, in order:

* a name never groups: file names, titles and ``aliases`` are no key (BR-30);
* a key held by more than ``identity.max_shared`` cards (default 8; a
  company switchboard, a team address) is no identity: ignored for linking
  and for conflicts, and reported in ``shared``;
* gates: with ``identity.same_type_only`` (default false: a ``contact`` and
  a ``person`` with one email are one entity, BR-28) only cards of one type
  link; with ``identity.same_domain_only`` (default true) only cards of one
  domain (the ``domain`` property, else ``domain_inference``);
* two cards each holding one value under the same identity field, and not
  the same one, are never in one group (BR-28 item 3); a list (several
  phones) adds values and never conflicts, and neither do values under two
  fields of one kind.  Keys are tried strongest kind first (``email``,
  ``phone``, then ``handle`` and ``url``, then ``exact``), so a join that
  would bring a conflict into a group is refused and reported in ``refused``;
* cards the schema does not count as cards (templates, ``ignore_folders``),
  hubs, notes that cannot be read or whose frontmatter does not parse, and
  retired cards (``status: superseded``, or a ``superseded_by`` naming
  another card: :func:`retirement.retired`) are left out.

A group is *strong* when its members are linked by ``email`` or ``phone``
kind keys alone; only strong groups are merged without a reviewed manifest.

The canonical card of a group (the one that stays) is, in this order: the
one more other notes link to (distinct linking notes outside the group, as
:mod:`linkgraph` resolves links), the richer one (more non-empty
properties, then a longer body), the newer one (``updated``, else
``created``), the shorter path, the path first in code-point order.

Merging (:func:`plan_merge`) makes one card of a group and returns the
plan; nothing is written here (``cli.carry_out`` writes it).  For each
other member, in path order, into the canonical card:

* properties the canonical card lacks (or holds empty) are copied, their
  lines as written (quotes kept); lists are joined (the canonical's items
  first, then new ones); a value equal to the canonical's (identity values
  compared normalised) adds nothing; any other value stays as it is in the
  canonical card and the member's goes to ``## History`` as a dated line
  naming its source (:func:`sections.history_line`):
  ``- 2026-12-01: type: contact (from [[A. Example]])``;
* the member's file name and its ``aliases`` join the canonical's
  ``aliases`` (a surgical edit of that key);
* its body is merged section by section: text before the first heading
  after the canonical's text before its first heading, a section under the
  canonical's section with the same heading (same level, text compared
  without case), a section the canonical lacks at the end; a list item the
  section already holds is not repeated, nor a paragraph or a piece of
  code it already holds as the same lines: a merge written once whose
  member stayed (not trashed) adds nothing the second time; every other
  line is kept; a History line whose field and value the canonical card
  already records (from any day or source) is not added again;
* every link to the member, in every note, is rewritten to the canonical
  card, keeping its visible text as the alias (``[[A. Example]]`` ->
  ``[[Alex Example|A. Example]]``, :func:`relink.plan_retarget`);
* the member file goes to ``.trash/<run-id>/`` (:class:`Trash`).
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass, field

from ..read import frontmatter as fm
from ..read import identity as ident
from ..write.merge import merge_paragraphs

__all__ = [
    "Card",
    "conflicts_between",
    "copy_groups",
    "find_groups",
    "FORCED",
    "forced_line",
    "forced_values",
    "Group",
    "groups_from_manifest",
    "identity_settings",
    "manifest",
    "ManifestError",
    "merge_text",
    "plan_merge",
    "read_card",
    "Refusal",
    "Report",
    "sha256",
    "STRONG_KINDS",
]

STRONG_KINDS = ("email", "phone")
_KIND_ORDER = {"email": 0, "phone": 0, "handle": 1, "url": 1, "exact": 2}
DEFAULT_MAX_SHARED = 8


def sha256(data: bytes) -> str:
    """Hex SHA-256 of a file's bytes (the manifest's content hash)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Settings:
    """The schema's ``identity`` section, read once."""

    kinds: dict[str, str]
    country: str | None
    ignore: tuple[str, ...]
    same_type_only: bool
    same_domain_only: bool
    max_shared: int
    zone: object = None  # the vault's time zone (schema ``timezone``; None: the machine's), for card dates


def identity_settings(schema) -> Settings:
    """:class:`Settings` of ``schema`` (a :class:`model.Schema`), with the
    defaults documented in the module docstring."""
    section = schema.section("identity")
    return Settings(
        kinds=ident.field_kinds(section),
        country=section.get("default_country"),
        ignore=tuple(section.get("ignore_values", ident.DEFAULT_IGNORE)),
        same_type_only=bool(section.get("same_type_only", False)),
        same_domain_only=bool(section.get("same_domain_only", True)),
        max_shared=int(section.get("max_shared", DEFAULT_MAX_SHARED)),
        zone=_zone(schema),
    )


def _zone(schema):
    from ..read.dates import zone_of

    try:
        return zone_of(schema.data.get("timezone"))
    except ValueError:  # an unknown name: the schema check reports it
        return None


@dataclass
class Card:
    """One card's identity: ``values`` maps a field (lower case) to the set
    of its normalised values, ``kinds`` each field to its kind (the
    schema's), ``single`` names the fields held as one value (not a list:
    only those can conflict)."""

    path: str
    type: str | None
    domain: str | None
    values: dict[str, frozenset[str]]
    sha256: str
    kinds: dict[str, str] = field(default_factory=dict)
    single: frozenset[str] = frozenset()
    backlinks: int = 0
    richness: tuple[int, int] = (0, 0)
    newer: str = ""  # ISO date of updated/created, "" when none


@dataclass(frozen=True)
class Refusal:
    """Two cards that share ``key`` but differ under ``field``."""

    paths: tuple[str, str]
    key: str
    field: str
    values: tuple[tuple[str, ...], tuple[str, ...]]

    def as_dict(self) -> dict:
        return {
            "paths": list(self.paths),
            "key": self.key,
            "reason": f"conflicting identity key {self.field}",
            "field": self.field,
            "values": [list(v) for v in self.values],
        }


@dataclass
class Group:
    """Cards of one entity.  ``members`` starts with ``canonical``; the
    others follow in path order.  ``evidence`` lists each key shared by two
    or more members: ``{"key": "email:a@b.c", "field", "kind", "value",
    "paths"}``."""

    canonical: str
    members: list[str]
    evidence: list[dict]
    strong: bool
    hashes: dict[str, str] = field(default_factory=dict)
    ranking: list[dict] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)  # conflict fields whose current values differ
    settled: str | None = None  # the card supersede.py keeps current (it retires the others); None: none
    reviewed: bool = False  # read from a manifest a person reviewed: a forced identity does not hold it back
    copy: bool = False  # the others are a sync client's conflict copies of canonical (copy_groups)

    def as_dict(self) -> dict:
        found = {
            "canonical": self.canonical,
            "members": [{"path": p, "sha256": self.hashes.get(p)} for p in self.members],
            "evidence": self.evidence,
            "strong": self.strong,
            "ranking": self.ranking,
            "differs": self.differs,
            "settled": self.settled,
        }
        if self.copy:
            found["copy"] = True
        return found


@dataclass
class Report:
    """What :func:`find_groups` found: ``cards`` examined, ``groups``,
    ``refused`` joins, ``shared`` keys ignored for being held by too many
    cards (``{"key", "cards"}``), ``skipped`` notes (``{"path", "reason"}``);
    ``suggestions`` the caller adds (:func:`variants.suggest`)."""

    cards: int = 0
    groups: list[Group] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    shared: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    by_path: dict[str, Card] = field(default_factory=dict)
    suggestions: list = field(default_factory=list)  # variants.Suggestion: one name in other spellings, to review


def _text_of(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def read_card(note, schema, settings: Settings) -> Card | None:
    """The identity of ``note`` (a :class:`note.Note`), or None when it holds
    no identity value."""
    props = note.properties
    values: dict[str, frozenset[str]] = {}
    single = set()
    for name, kind in settings.kinds.items():
        found = set()
        for held in ident.values_of(props, name):
            key = ident.normalise(held, kind, settings.country, settings.ignore)
            if key is not None:
                found.add(key)
        if found:
            values[name] = frozenset(found)
            if len(found) == 1:  # one value, a scalar or a list of one: another one is a conflict
                single.add(name)
    if not values:
        return None
    kind = _text_of(props.get("type"))
    if kind is not None:
        kind = schema.type_aliases.get(kind, kind).lower()
    else:
        inferred = schema.infer_type(note.path)
        kind = inferred.lower() if inferred else None
    domain = _text_of(props.get("domain")) or schema.infer_domain(note.path)
    kinds = {name: settings.kinds[name] for name in values}
    return Card(
        note.path, kind, domain.lower() if domain else None, values, sha256(note.data), kinds, frozenset(single)
    )


def conflicts_between(a: Card, b: Card, ignored: set[str] = frozenset()) -> list[str]:
    """Fields under which ``a`` and ``b`` each hold one value, and not the
    same one: a conflict is only ever within one single-valued field (a
    list, such as several phones, adds values and never conflicts; values
    under two fields of one kind are the same identity, never a conflict).
    Values in ``ignored`` (``kind:value`` keys held by too many cards) do
    not count."""
    found = []
    for name in sorted(a.single & b.single):
        kind = a.kinds.get(name, "exact")
        va = {v for v in a.values[name] if f"{kind}:{v}" not in ignored}
        vb = {v for v in b.values[name] if f"{kind}:{v}" not in ignored}
        if va and vb and va != vb:
            found.append(name)
    return found


class _Components:
    """Union-find over card paths that keeps each component's members."""

    def __init__(self, paths):
        self.parent = {p: p for p in paths}
        self.members = {p: [p] for p in paths}

    def find(self, p: str) -> str:
        while self.parent[p] != p:
            self.parent[p] = self.parent[self.parent[p]]
            p = self.parent[p]
        return p

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if len(self.members[ra]) < len(self.members[rb]):
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.members[ra].extend(self.members.pop(rb))


def card_date(props: dict, zone=None) -> str:
    """The ISO date of a card's ``updated`` (else ``created``), "" when it
    has none: the calendar date in the vault's ``zone`` (a ``tzinfo``; None:
    the machine's), so a time with an offset gives the same date on every
    machine (dates.local_date)."""
    from ..read.dates import NotADate, local_date, parse_when

    for key in ("updated", "created"):
        try:
            when = parse_when(props.get(key))
        except NotADate:
            continue
        if when is not None:
            return local_date(when, zone).isoformat()
    return ""


def find_groups(vault, schema, graph=None, index=None) -> Report:
    """Group the cards of ``vault`` that are one entity (module docstring).

    ``graph`` (a :class:`linkgraph.LinkGraph`) counts backlinks for the
    canonical choice; built when a group is found and none is given.
    Deterministic: the same vault gives the same groups in the same order
    (by canonical path)."""
    settings = identity_settings(schema)
    report = Report()
    cards: dict[str, Card] = {}
    props_of: dict[str, dict] = {}
    bodies: dict[str, int] = {}
    from .retirement import retired

    card_paths = vault.cards(schema)
    card_set = set(card_paths)
    for path in card_paths:
        note = vault.note(path, keep=False)
        if note.unwritable:
            report.skipped.append({"path": path, "reason": note.unwritable})
            continue
        props = note.properties
        if schema.is_hub(note.stem, props) or retired(vault, card_set, path, props):
            continue
        report.cards += 1
        card = read_card(note, schema, settings)
        if card is None:
            continue
        cards[path] = card
        props_of[path] = props
        bodies[path] = len(note.body.strip())
    report.by_path = cards

    buckets: dict[str, list[str]] = {}  # "kind:value" -> the cards holding it under any field of that kind
    for path, card in cards.items():
        for key in dict.fromkeys(k for name, values in card.values.items() for k in _keys(card.kinds[name], values)):
            buckets.setdefault(key, []).append(path)
    ignored = set()
    for key, paths in sorted(buckets.items()):
        if len(paths) > settings.max_shared:
            ignored.add(key)
            report.shared.append({"key": key, "cards": len(paths)})

    def kind_of(key: str) -> str:
        return key.split(":", 1)[0]

    def gate(path: str) -> tuple:
        card = cards[path]
        return (
            card.type if settings.same_type_only else None,
            card.domain if settings.same_domain_only else None,
        )

    shared_keys = sorted(
        (key for key, paths in buckets.items() if len(paths) > 1 and key not in ignored),
        key=lambda key: (_KIND_ORDER.get(kind_of(key), 3), key),
    )
    components = _Components(cards)
    strong_roots: dict[str, str] | None = None
    for key in shared_keys:
        if strong_roots is None and kind_of(key) not in STRONG_KINDS:
            strong_roots = {p: components.find(p) for p in cards}
        classes: dict[tuple, list[str]] = {}
        for path in buckets[key]:
            classes.setdefault(gate(path), []).append(path)
        for members in classes.values():
            first = members[0]
            for other in members[1:]:
                ra, rb = components.find(first), components.find(other)
                if ra == rb:
                    continue
                clash = _clash(components.members[ra], components.members[rb], cards, ignored)
                if clash is not None:
                    a, b, name = clash
                    report.refused.append(
                        Refusal(
                            (first, other),
                            key,
                            name,
                            (tuple(sorted(cards[a].values[name])), tuple(sorted(cards[b].values[name]))),
                        )
                    )
                    continue
                components.union(first, other)
    if strong_roots is None:
        strong_roots = {p: components.find(p) for p in cards}

    found = [sorted(m) for root, m in components.members.items() if len(m) > 1]
    if not found:
        return report
    if graph is None:
        from ..read import linkgraph

        graph = linkgraph.build(vault, index)
    from .recency import conflict_fields, settle

    fields = conflict_fields(schema)
    for members in found:
        group = _make_group(members, cards, props_of, bodies, buckets, ignored, kind_of, graph, strong_roots, settings)
        differs, current = settle({p: vault.note(p, keep=False) for p in group.members}, fields, settings.zone)
        if current is not None and not all(schema.supersedable(cards[p].type) for p in group.members if p != current):
            current = None  # supersede.py cannot retire these: dedup merges them (never two cards for good)
        group.differs, group.settled = sorted(differs), current
        report.groups.append(group)
    report.groups.sort(key=lambda g: g.canonical)
    return report


def copy_groups(vault, schema) -> list[Group]:
    """A group for each card with sync conflict copies beside it
    (:mod:`read.conflicts`): the card canonical, its copies the members,
    never strong, so they are folded in only from a reviewed manifest
    (what a copy adds joins the card, the copy goes to ``.trash/``, its name
    never becomes an alias)."""
    from ..read.conflicts import conflict_copies

    copies: dict[str, list[str]] = {}
    for copy, original in conflict_copies(vault.notes).items():
        if original in vault.files and vault.is_card(original, schema):
            copies.setdefault(original, []).append(copy)
    groups = []
    for original, found in sorted(copies.items()):
        members = [original, *sorted(found)]
        evidence = [{"key": f"copy:{copy}", "kind": "conflict-copy", "paths": [original, copy]} for copy in found]
        hashes = {path: sha256(vault.note(path, keep=False).data) for path in members}
        groups.append(Group(original, members, evidence, False, hashes, copy=True))
    return groups


def _clash(left: list[str], right: list[str], cards: dict[str, Card], ignored: set[str]):
    for a in left:
        for b in right:
            names = conflicts_between(cards[a], cards[b], ignored)
            if names:
                return a, b, names[0]
    return None


def _make_group(members, cards, props_of, bodies, buckets, ignored, kind_of, graph, strong_roots, settings) -> Group:
    inside = set(members)
    for path in members:
        card = cards[path]
        sources = {source for source in graph.backlink_sources(path) if source not in inside}
        card.backlinks = len(sources)
        props = props_of[path]
        card.richness = (sum(1 for v in props.values() if v not in (None, "", [], {})), bodies[path])
        card.newer = card_date(props, settings.zone)
    ranked = sorted(members, key=lambda p: rank_key(cards[p]))
    evidence = []
    for kind_value in sorted(
        {k for p in members for n, vs in cards[p].values.items() for k in _keys(cards[p].kinds[n], vs)}
    ):
        if kind_value in ignored:
            continue
        holders = [p for p in buckets.get(kind_value, ()) if p in inside]
        if len(holders) > 1:
            kind, value = kind_value.split(":", 1)
            names = sorted(
                {n for p in holders for n, vs in cards[p].values.items() if cards[p].kinds[n] == kind and value in vs}
            )
            evidence.append(
                {"key": kind_value, "field": names[0], "fields": names, "kind": kind, "value": value, "paths": holders}
            )
    strong = len({strong_roots[p] for p in members}) == 1
    return Group(
        ranked[0],
        ranked,
        evidence,
        strong,
        {p: cards[p].sha256 for p in members},
        [
            {
                "path": p,
                "backlinks": cards[p].backlinks,
                "properties": cards[p].richness[0],
                "body_chars": cards[p].richness[1],
                "date": cards[p].newer or None,
            }
            for p in ranked
        ],
    )


def _keys(kind: str, values) -> list[str]:
    return [f"{kind}:{v}" for v in values]


def rank_key(card: Card) -> tuple:
    """Sort key of the canonical rule: first sorts first (module docstring)."""
    day = card.newer or "0000-00-00"
    return (-card.backlinks, -card.richness[0], -card.richness[1], _invert(day), len(card.path), card.path)


def _invert(day: str) -> tuple:
    # newer first: compare the negated digits of the ISO date
    return tuple(-int(part) for part in day.split("-"))


# ---------------------------------------------------------------------------
# Merging


@dataclass
class MergePlan:
    """What :func:`plan_merge` would do: ``changes`` (:class:`Edit` and
    :class:`Trash`, for ``cli.carry_out``), ``merged`` (one entry per
    group: ``{"canonical", "members", "history", "aliases", "links"}``) and
    ``refused`` (``{"members", "reason"}``: groups not merged) and
    ``links`` (each rewritten link: ``{"path", "line", "old", "new"}``) and
    ``links_left`` (links that cannot follow, as :func:`relink.plan_details`
    gives them: ``{"path", "line", "target", "was", "now", "why"}``)."""

    changes: list = field(default_factory=list)
    merged: list[dict] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    links: list[dict] = field(default_factory=list)
    links_left: list[dict] = field(default_factory=list)


_EMPTY = (None, "", [], {})


def link_name(vault, source: str, target: str) -> str:
    """The shortest link text for ``target`` that resolves to it from ``source``."""
    stem = target.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.endswith(".md") else stem
    if vault.resolver.resolve(stem, source).path == target:
        return stem
    return target[:-3] if target.endswith(".md") else target


def _same_value(name: str, a, b, kinds: dict[str, str], settings: Settings) -> bool:
    if a == b and type(a) is type(b):
        return True
    kind = kinds.get(name.lower())
    if kind is not None:
        na = ident.normalise(a, kind, settings.country, settings.ignore)
        return na is not None and na == ident.normalise(b, kind, settings.country, settings.ignore)
    return False


def find_key(props: dict, key: str) -> str | None:
    """The key of ``props`` that is ``key``: written so, else the one key
    written in another letter case; None when absent or ambiguous."""
    if key in props:
        return key
    folded = [k for k in props if isinstance(k, str) and k.lower() == key.lower()]
    return folded[0] if len(folded) == 1 else None


def _split_lines(text: str) -> list[str]:
    """Lines of ``text`` with their line breaks (only ``\\n`` splits)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _copy_entry(text: str, key: str, value, member) -> str:
    """``text`` with ``key: value`` added, copying the member note's lines
    for it as written when they read back as the same value, else written
    by :func:`frontmatter.set_property`."""
    block = fm.parse(text)
    source = member.frontmatter
    entry = next((e for e in source.entries if e.key == key), None) if source is not None else None
    if block is not None and block.valid and block.entries and entry is not None:
        indent = block.entries[0].prefix[: len(block.entries[0].prefix) - len(block.entries[0].prefix.lstrip(" "))]
        own = entry.prefix[: len(entry.prefix) - len(entry.prefix.lstrip(" "))]
        if indent == own:
            lines = _split_lines(member.text[source.start : source.end])[entry.start : entry.end]
            raw = "".join(line.rstrip("\r\n") + block.newline for line in lines)
            new = text[: block.end] + raw + text[block.end :]
            after = fm.parse(new)
            if (
                after is not None
                and after.valid
                and after.properties.get(key) == value
                and {k: v for k, v in after.properties.items() if k != key} == block.properties
            ):
                return new
    return fm.set_property(text, key, value)


_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ITEM = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)")


def _heading_key(line: str) -> tuple[int, str] | None:
    match = _HEADING.fullmatch(line.rstrip("\r\n"))
    if match is None:
        return None
    title = (match.group(2) or "").strip()
    core = title.rstrip("#")
    if core != title and (not core or core[-1] in " \t"):
        title = core.strip()
    return len(match.group(1)), unicodedata.normalize("NFC", title).casefold()


def _body_sections(body: str) -> list[list]:
    """``[[key, lines, code flags]]``: the text before the first heading
    (key None), then one entry per ATX heading outside code (key: its level
    and its text without case), each with its lines (line breaks kept)."""
    from ..read.regions import code_regions, inside

    regions = code_regions(body)
    starts = [s for s, _ in regions]
    sections: list[list] = [[None, [], []]]
    pos = 0
    for line in _split_lines(body):
        code = inside(regions, starts, pos)
        found = None if code else _heading_key(line)
        if found is not None:
            sections.append([found, [line], [False]])
        else:
            sections[-1][1].append(line)
            sections[-1][2].append(code)
        pos += len(line)
    return sections


def _blank(line: str) -> bool:
    return not line.strip()


def _is_item(line: str) -> bool:
    return _ITEM.match(line.rstrip("\r\n")) is not None


def merge_body(body: str, other: str, newline: str) -> str:
    """``body`` with every line of ``other`` (another card's body) merged in
    (module docstring); ``newline`` is the canonical note's line break."""
    mine = _body_sections(body)
    for key, lines, code in _body_sections(other):
        heading = lines[0] if key is not None else None
        content = lines[1:] if key is not None else lines
        flags = code[1:] if key is not None else code
        target = next((s for s in mine if s[0] == key), None)
        if target is not None:
            # a paragraph the other copy grew (a line added) replaces the card's, in its place
            first = 0 if target[0] is None else 1
            grown, content, flags = merge_paragraphs(target[1][first:], content, None, flags)
            target[1] = target[1][:first] + grown
            content, flags = _not_yet_in(content, flags, target[1])
            present = {line.strip() for line in target[1] if _is_item(line)}
            content = [
                line for line, in_code in zip(content, flags, strict=True)
                if in_code or not _is_item(line) or line.strip() not in present
            ]  # fmt: skip
        while content and _blank(content[0]):
            content.pop(0)
        while content and _blank(content[-1]):
            content.pop()
        if not content and (target is not None or heading is None):
            continue
        content = [line.rstrip("\r\n") + newline for line in content]
        if target is None:
            last = mine[-1][1]
            _end_line(last, newline)
            if last and not _blank(last[-1]):
                last.append(newline)
            mine.append([key, [heading.rstrip("\r\n") + newline, *content], []])
            continue
        lines_of = target[1]
        first = 0 if target[0] is None else 1
        keep = len(lines_of)
        while keep > first and _blank(lines_of[keep - 1]):
            keep -= 1
        head, tail = lines_of[:keep], lines_of[keep:]
        _end_line(head, newline)
        written = [line for line in head[first:] if not _blank(line)]
        if written and not (_is_item(written[-1]) and _is_item(content[0])):
            head.append(newline)
        if not tail and target is not mine[-1]:
            content.append(newline)
        target[1] = head + content + tail
    return "".join(line for s in mine for line in s[1])


def _not_yet_in(content: list[str], flags: list[bool], have: list[str]) -> tuple[list[str], list[bool]]:
    """``content`` (lines and their code flags) without what the section
    ``have`` already holds: each paragraph (a run of non-blank lines outside
    code) and each piece of code (a run of code lines) found there as a run
    of the same lines (line ends and trailing spaces aside; a list item the
    section holds elsewhere may be missing from the run, as a first merge
    leaves it), with the blank lines after it.  A merge written once whose
    member stayed (not trashed) then adds nothing the second time; a piece
    of code goes whole or not at all."""
    held = [line.rstrip() for line in have]
    items = {line.strip() for line in have if _is_item(line)}
    lines = [line.rstrip() for line in content]

    def found(start: int, end: int) -> bool:
        for at in range(len(held)):
            j, k = start, at
            while j < end:
                if k < len(held) and lines[j] == held[k]:
                    j, k = j + 1, k + 1
                elif not flags[j] and _is_item(content[j]) and content[j].strip() in items:
                    j += 1  # a first merge left it out: the section holds it
                else:
                    break
            if j == end and k > at:
                return True
        return False

    keep = [True] * len(content)
    i = 0
    while i < len(content):
        if not flags[i] and not lines[i]:
            i += 1
            continue
        end = _piece_end(lines, flags, i)
        if found(i, end):
            while end < len(content) and not flags[end] and not lines[end]:
                end += 1
            keep[i:end] = [False] * (end - i)
        i = end
    return [c for c, k in zip(content, keep, strict=True) if k], [f for f, k in zip(flags, keep, strict=True) if k]


def _piece_end(lines: list[str], flags: list[bool], start: int) -> int:
    """Where the run of lines at ``start`` ends: a paragraph at a blank line
    or code; a piece of code at the fence that closes it (CommonMark: the
    opening fence's character, at least as many, nothing else), else at
    the end of the code lines.  Two pieces of code a merge left side by
    side (the paragraph between them held already) stay two pieces."""
    end = start + 1
    if not flags[start]:
        while end < len(lines) and not flags[end] and lines[end]:
            end += 1
        return end
    opening = lines[start].strip()
    char = opening[:1]
    if char in ("`", "~") and opening.startswith(char * 3):
        size = len(opening) - len(opening.lstrip(char))
        while end < len(lines) and flags[end]:
            line = lines[end].strip()
            end += 1
            if len(line) >= size and not line.strip(char):
                return end
        return end
    while end < len(lines) and flags[end]:
        end += 1
    return end


def _end_line(lines: list[str], newline: str) -> None:
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline


def _fold(name) -> str:
    return unicodedata.normalize("NFC", str(name)).strip().casefold()


def merge_text(
    vault, path: str, text: str, member, settings: Settings, day: str, evidence: dict | None = None, named: bool = True
) -> tuple[str, list[str], list[str]]:
    """The text of the canonical note at ``path`` (``text``, the text so
    far) with ``member`` (a :class:`note.Note`) merged in, before links are
    rewritten: ``(text, history lines added, aliases added)``.  Of two
    values of a field the one with the newer evidence is current
    (:mod:`recency`); ``evidence`` keeps, across the members of one group,
    the evidence day of each field's current value (filled as fields are
    met).  autograph's own fields (:data:`recency.OWN_FIELDS`) are left to
    the caller (:func:`recency.own_fields`).  Raises
    :class:`frontmatter.FrontmatterError` when a property cannot be edited
    and ValueError when a History line would land in unclosed code.
    ``named=False`` (a sync conflict copy): the member's file name is no
    name of the card, so it does not join ``aliases``."""
    from ..write import sections
    from . import recency

    evidence = {} if evidence is None else evidence
    block = fm.parse(text)
    props = dict(block.properties) if block is not None else {}
    own_body = text[block.body :] if block is not None else text
    history: list[str] = []
    # written as the rewrite of links to the member will leave it (to this
    # card, the member's name kept as its text), so it is no link to rewrite
    source = f"{link_name(vault, path, path)}|{link_name(vault, path, member.path)}"
    comments, loose = _comments(member)  # a YAML comment is kept with its value, or in History
    for key, value in member.properties.items():
        if not isinstance(key, str) or key.lower() == "aliases" or value in _EMPTY:
            continue
        if key.lower() in recency.OWN_FIELDS:
            comments.pop(key, None)
            continue
        own = find_key(props, key)
        current = props.get(own) if own is not None else None
        comment = comments.pop(key, None)
        if own is None:
            text = _copy_entry(text, key, value, member)  # its lines as written, its comment too
            comment = None
        elif current in _EMPTY:
            text = fm.set_property(text, own, value)
        elif isinstance(current, list) or isinstance(value, list):
            old = current if isinstance(current, list) else [current]
            extra = [v for v in (value if isinstance(value, list) else [value]) if v not in old]
            if extra:
                text = fm.set_property(text, own, old + extra)
        elif not _same_value(key, current, value, settings.kinds, settings):
            fold = own.casefold()
            if fold not in evidence:
                evidence[fold] = recency.evidence(props, own_body, own, settings.zone)
            ours, theirs = evidence[fold], recency.evidence(member.properties, member.body, key, settings.zone)
            # a change line dated with the newer value's evidence keeps that evidence for the next
            # merge or supersede run (the card's updated becomes the merge day)
            if recency.newest([ours, theirs]) == 1:  # the member's value is newer: it becomes current
                text = fm.set_property(text, own, value)
                history.append(sections.history_line(theirs, own, current, value, source))
                evidence[fold] = theirs
            elif ours is not None and (theirs is None or theirs < ours):
                line = sections.history_line(ours, own, value, current, source)
                history.append(_with_comment(line, comment))
                comment = None
            else:  # no dates, or the same day: the canonical card's value stays (BR-28)
                history.append(_with_comment(sections.history_line(theirs or day, own, value, None, source), comment))
                comment = None
        if comment:  # the value is kept; the person's note on it would be lost (a rerun adds it once)
            history.append(_with_comment(sections.history_line(day, own or key, value, None, source), comment))
        props = fm.parse(text).properties
    for key, comment in comments.items():  # on an empty value or aliases
        value = member.properties.get(key)
        history.append(_with_comment(sections.history_line(day, key, value, None, source), comment))
    history += [f"- {day}: {line} (from [[{source}]])" for line in loose]
    aliases = _aliases(props)
    taken = {_fold(a) for a in aliases} | {_fold(vault_stem(path))}
    added = []
    for name in ([vault_stem(member.path)] if named else []) + _aliases(member.properties):
        if _fold(name) not in taken:
            taken.add(_fold(name))
            added.append(name)
    if added:
        text = fm.set_property(text, find_key(props, "aliases") or "aliases", aliases + added)
    block = fm.parse(text)
    at = block.body if block is not None else 0
    moved = _relocated_body(vault, member, path)
    for name, body in ((path, text[at:]), (member.path, moved)):
        if _ends_in_code(body):
            raise ValueError(f"{name} ends inside code or a comment that is never closed (a fence, %%, <!--, $$)")
    clash = _block_clash(text[at:], moved)
    if clash is not None:
        raise ValueError(
            f"the block id ^{clash} is in {path} and {member.path} on different lines, and a link to it "
            "must name one block; rename one of them, then merge"
        )
    merged = merge_body(text[at:], moved, sections.newline_of(text))
    had = _block_lines(text[at:])
    twice = sorted(name for name, lines in _block_lines(merged).items() if len(lines) > max(len(had.get(name, [])), 1))
    if twice:  # the same line under two headings is kept under each
        raise ValueError(
            f"the block id ^{twice[0]} would be in {path} twice (the two cards hold its line under different "
            "headings), and a link to it must name one block; move or rename one of them, then merge"
        )
    text = text[:at] + merged
    recorded = {_history_key(line) for line in text[at:].splitlines()} - {None}
    history = [line for line in history if _history_key(line) not in recorded]  # merged before: once is enough
    text = sections.append(text, "History", history)
    return text, history, added


def _own_fields(text: str, cards: list[dict], day: str, settings: Settings, schema) -> str:
    """``text`` (the merged card) with autograph's own fields combined
    from ``cards`` (:func:`recency.own_fields`), and its ``tier`` and
    ``relevance`` (where it holds them) recomputed from those on the merge
    ``day`` as ``engine.py decay`` would; each written only where it
    differs from what the text holds."""
    import datetime

    from . import decay, recency

    values = recency.own_fields(cards, day, settings.zone)
    merged = {**fm.parse(text).properties, **values}
    reading = decay.read_card("", merged, datetime.date.fromisoformat(day), decay.Settings.of(schema))
    held = {str(k).casefold() for k in merged}
    if reading.tier is not None and "tier" in held:
        values["tier"] = reading.tier
    if reading.relevance is not None and "relevance" in held:
        values["relevance"] = reading.relevance
    for key, value in values.items():
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            value = datetime.date.fromisoformat(value)  # a day written as a day, not as quoted text
        props = fm.parse(text).properties
        own = find_key(props, key)
        if own is None or str(props.get(own)) != str(value):
            text = fm.set_property(text, own or key, value)
    return text


def _with_comment(line: str, comment: str | None) -> str:
    """A History line with a YAML comment before its source, as written in YAML."""
    return line.replace(" (from [[", f"  # {comment} (from [[", 1) if comment else line


def _comments(note) -> tuple[dict[str, str], list[str]]:
    """The YAML comments of ``note``'s frontmatter: ``{key: comment}`` for a
    comment after a one-line entry's value, and as whole lines, in order,
    the others (``# met at the offsite`` on a line of its own; ``tags: - a
    # first tag`` for one after an item of ``tags``).  A ``#`` is a comment
    only where taking it and what follows off the line, or the line off the
    block, leaves every property as it was: never one inside quotes or in a
    block scalar's text."""
    block = note.frontmatter
    if block is None or not block.valid or "#" not in note.text[block.start : block.end]:
        return {}, []
    lines = note.text[block.start : block.end].split("\n")
    want = block.properties

    def same(changed: list[str]) -> bool:
        try:
            return fm.same_value(fm.loads("\n".join(changed))[0], want)
        except fm.FrontmatterError:
            return False

    first = {entry.start: entry.key for entry in block.entries}
    owner = {i: entry.key for entry in block.entries for i in range(entry.start, entry.end)}
    after: dict[str, str] = {}
    loose: list[str] = []
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        if "#" not in line:
            continue
        if line.lstrip().startswith("#"):
            if line.strip("# \t") and same(lines[:i] + lines[i + 1 :]):
                loose.append(line.strip())
            continue
        for match in re.finditer(r"[ \t]#", line):
            cut = line[: match.start()].rstrip(" \t")
            comment = line[match.end() :].strip()
            if comment and same([*lines[:i], cut, *lines[i + 1 :]]):
                if i in first:
                    after[first[i]] = comment
                elif i in owner:
                    loose.append(f"{owner[i]}: {cut.strip()}  # {comment}")
                break
    return after, loose


def _relocated_body(vault, member, path: str) -> str:
    """The body of ``member`` (a :class:`note.Note`) with its links
    rewritten to reach, written in ``path`` (the canonical card), the files
    they reach from the member's own path: a relative link
    (``[x](../a.md)``, ``[[./b]]``) or a name that a note in ``path``'s
    folder would take keeps its target, and a link to the member itself
    goes to ``path`` (:func:`relink.retarget_text` as if the member moved
    to ``path``, its old text kept as alias)."""
    from ..write import relink

    later = relink.resolver_after(vault.resolver, {member.path: None})
    text, _ = relink.retarget_text(
        member.text, member.path, vault.resolver, {member.path: path}, keep_text=True, after_resolver=later
    )
    block = fm.parse(text)
    return text[block.body :] if block is not None else text


_HISTORY_LINE = re.compile(r"[-*+] \d{4}-\d{2}-\d{2}: (.+?)(?: \(from \[\[[^\]]*\]\]\))?[ \t]*")


def _history_key(line: str) -> str | None:
    """``field: value`` of a ``## History`` line (:func:`sections.history_line`),
    its day and source aside; None for another line."""
    match = _HISTORY_LINE.fullmatch(line.rstrip("\r\n"))
    return match.group(1) if match else None


def _block_lines(body: str) -> dict[str, list[str]]:
    """Block id (lower case, outside code) -> the lines that end with it, stripped."""
    from ..read.links import block_lines

    found: dict[str, list[str]] = {}
    for key, line in block_lines(body):
        found.setdefault(key, []).append(line)
    return found


def _block_clash(body: str, other: str) -> str | None:
    """A block id that ``other`` (a member's body) has on a line ``body``
    (the canonical card's) lacks while ``body`` has it too: merged, the
    card would hold it twice and links to either block would reach the
    first (Obsidian).  The same line in both is merged once: no clash."""
    theirs = _block_lines(other)
    if not theirs:
        return None
    mine = _block_lines(body)
    return next((name for name in sorted(theirs) if name in mine and set(theirs[name]) - set(mine[name])), None)


def _ends_in_code(body: str) -> bool:
    """Whether a line added after ``body`` would be code (an unclosed fence
    or comment): merged lines would vanish into it, or it into them."""
    from ..read.regions import code_regions, inside

    probe = body + ("" if not body or body.endswith("\n") else "\n") + "x\n"
    regions = code_regions(probe)
    return inside(regions, [s for s, _ in regions], len(probe) - 2)


def vault_stem(path: str) -> str:
    """A note's name: its file name without ``.md``."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def _aliases(props: dict) -> list:
    key = find_key(props, "aliases")
    value = props.get(key) if key is not None else None
    if isinstance(value, list):
        return [v for v in value if v not in _EMPTY]
    return [value] if value not in _EMPTY else []


def _member_notes(vault, paths: list[str]) -> tuple[list, str | None]:
    """The notes of a group, or why it cannot be merged: one that is never
    rewritten, or that the store would not replace (read-only, hard links):
    the merge would be half made, its links retargeted to a card that
    never got the merged text, or a member left beside it."""
    from ..write.confine import would_refuse

    notes = []
    for path in paths:
        note = vault.note(path)
        why = note.unwritable or would_refuse(os.path.join(vault.root, path))
        if why:
            return [], f"{path}: {why}"
        notes.append(note)
    return notes, None


def plan_merge(vault, schema, groups: list[Group], day: str, index=None, ignored: set[str] = frozenset()) -> MergePlan:
    """The plan that merges each of ``groups`` into its canonical card
    (module docstring), dated ``day`` (ISO date) in ``## History``.

    A group is refused (in ``refused``, nothing of it planned) when a
    member cannot be read or edited, is no card (a template: never
    written), when it overlaps an earlier group, or
    when two members hold different values under one identity field
    (``"conflicting identity key email"``; keys in ``ignored`` do not
    count).  Links in every other note that resolve to a merged member are
    rewritten in the same plan."""
    from ..write.changes import Edit, Trash

    settings = identity_settings(schema)
    card_paths = set(vault.cards(schema))
    plan = MergePlan()
    mapping: dict[str, str] = {}
    texts: dict[str, str] = {}
    originals: dict[str, object] = {}
    taken: set[str] = set()
    for group in groups:
        members = [group.canonical, *[p for p in group.members if p != group.canonical]]
        reason = None
        if len(set(members)) < 2:
            reason = "a group needs two or more members"
        elif taken & set(members):
            reason = "a member is in another group too"
        elif group.copy and not (members[0] in card_paths and _copies_of(members[0], members[1:])):
            reason = f"not sync conflict copies of the card {members[0]}"
        elif not group.copy and not set(members) <= card_paths:
            outside = sorted(set(members) - card_paths)
            reason = f"not a card (a template, an ignored folder, or no note): {', '.join(outside)}"
        notes, problem = _member_notes(vault, members) if reason is None else ([], None)
        reason = reason or problem
        if reason is None:
            cards = [read_card(n, schema, settings) for n in notes]
            for i, a in enumerate(cards):
                for b in cards[i + 1 :]:
                    names = conflicts_between(a, b, ignored) if a is not None and b is not None else []
                    if names and reason is None:
                        reason = f"conflicting identity key {names[0]} ({a.path}, {b.path})"
            if reason is None and not group.reviewed:
                reason = _forced_identity(notes, cards, settings)
        text = notes[0].text if notes else ""
        added_history, added_aliases = [], []
        if reason is None:
            try:
                evidence: dict = {}
                for note in notes[1:]:
                    text, history, aliases = merge_text(
                        vault, notes[0].path, text, note, settings, day, evidence, named=not group.copy
                    )
                    added_history += history
                    added_aliases += aliases
                text = _own_fields(text, [n.properties for n in notes], day, settings, schema)
            except (fm.FrontmatterError, ValueError) as exc:
                reason = f"cannot merge into {notes[0].path}: {exc}"
        if reason is not None:
            plan.refused.append({"members": members, "reason": reason})
            continue
        taken.update(members)
        originals[notes[0].path] = notes[0]
        texts[notes[0].path] = text
        for note in notes[1:]:
            mapping[note.path] = notes[0].path
            originals[note.path] = note
        plan.merged.append(
            {
                "canonical": notes[0].path,
                "members": members[1:],
                "history": added_history,
                "aliases": added_aliases,
            }
        )
    if not mapping:
        return plan
    relinked = _retarget(vault, schema, mapping, texts, index)
    edits, changes = relinked.edits, relinked.changes
    plan.links_left = relinked.left
    by_path = {edit.path: edit for edit in edits}
    for entry in plan.merged:
        canonical = entry["canonical"]
        note = originals[canonical]
        after = by_path.pop(canonical).after if canonical in by_path else note.encode(texts[canonical])
        names = ", ".join(entry["members"])
        plan.changes.append(Edit(canonical, note.data, after, f"merge {names}"))
    relinks = [by_path[path] for path in sorted(by_path) if path not in mapping]
    plan.changes.extend(relinks)
    linking = _linking_notes(vault, relinks, set(mapping))
    for path in sorted(mapping):
        # the member goes only once its text is in the canonical card and the links to it point there
        after = (mapping[path], *sorted(linking.get(path, ())))
        plan.changes.append(Trash(path, originals[path].data, f"merged into {mapping[path]}", after))
    plan.links = [{"path": c.path, "line": c.line, "old": c.old, "new": c.new} for c in changes]
    for entry in plan.merged:  # History lines as written, their source links rewritten too
        for change in changes:
            if change.path == entry["canonical"]:
                entry["history"] = [line.replace(change.old, change.new) for line in entry["history"]]
    return plan


# The ## Log line card.py set --force leaves when it gives a card an identity
# value another card holds: "- 2026-12-01: email: dana@acme.com set with
# --force though [[Dana Reyes]] holds it (...)".  Such a pair is merged only
# from a reviewed manifest: one agent's mistaken fact never trashes a card
# unattended.
FORCED = "set with --force though"
_FORCED_LINE = re.compile(r"^[-*+] (\d{4}-\d{2}-\d{2}): ([^:\n]+?): (.*) " + re.escape(FORCED) + r" \[\[")


def forced_line(day: str, field: str, value, other: str) -> str:
    """The ``## Log`` line of an identity value ``field: value`` that
    ``card.py set --force`` gave a card though the card ``other`` (a link
    text) holds it."""
    from ..write.sections import flow_text

    return (
        f"- {day}: {field}: {flow_text(value)} {FORCED} [[{other}]] holds it "
        "(dedup.py merges the two only from a reviewed manifest)"
    )


def forced_values(text: str) -> list[tuple[str, object]]:
    """``(field, value)`` of each :func:`forced_line` in the ``## Log`` of a
    card's ``text``."""
    if FORCED not in text:
        return []
    from ..write import sections

    found = []
    for line in sections.items(text, "Log"):
        match = _FORCED_LINE.match(line)
        if match is not None:
            try:
                value = fm.loads("v: " + match.group(3))[0].get("v")
            except fm.FrontmatterError:
                value = match.group(3)
            found.append((match.group(2).strip(), value))
    return found


def _forced_identity(notes: list, cards: list, settings: Settings) -> str | None:
    """Why a group is held for review: a member got an identity value
    another member holds by ``card.py set --force`` (:func:`forced_line`);
    None when none did."""
    for note, card in zip(notes, cards, strict=True):
        for name, value in forced_values(note.text or ""):
            kind = settings.kinds.get(name.lower())
            norm = ident.normalise(value, kind, settings.country, settings.ignore) if kind else None
            others = [
                c.path
                for c in cards
                if c is not None and c is not card and any(norm in v for n, v in c.values.items() if c.kinds[n] == kind)
            ]
            if norm is not None and others:
                return (
                    f"{note.path} got its {name} by card.py set --force though {others[0]} held it: "
                    "review the pair (dedup.py --manifest, then --apply-manifest) before merging"
                )
    return None


def _linking_notes(vault, edits, members: set[str]) -> dict[str, set[str]]:
    """``{member: {path of each edit in edits whose note links to it now}}``:
    the rewrites a member's trash must wait for."""
    from ..write.relink import link_spans

    resolver = vault.resolver
    found: dict[str, set[str]] = {}
    for edit in edits:
        text = vault.note(edit.path).text
        for span in link_spans(text or ""):
            if not span.link.target:
                continue
            target = resolver.resolve(span.link.target, edit.path).path
            if target in members:
                found.setdefault(target, set()).add(edit.path)
    return found


def _retarget(vault, schema, mapping: dict[str, str], texts: dict[str, str], index):
    """The :class:`relink.Plan` that points every link to a key of
    ``mapping`` at its value (keep_text), resolved afterwards in the vault
    without the merged files; notes in templates folders and
    ``ignore_folders`` are never written: their links are in ``left``.
    Hubs and the index are not cards but are written: their links to a
    merged card must follow it."""
    from ..read.links import Resolver
    from ..write import relink

    later = Resolver([path for path in vault.files if path not in mapping])
    frozen = vault.frozen(schema)
    return relink.plan_details(
        vault, mapping, keep_text=True, texts=texts, index=index, after_resolver=later, frozen=frozen
    )


# ---------------------------------------------------------------------------
# The manifest: groups written for review, merged later as reviewed

MANIFEST_FORMAT = "autograph-dedup-manifest"


def manifest(report: Report, vault_root, suggestions=(), vault=None) -> dict:
    """The manifest of ``report``'s groups (see references/dedup.md):
    ``{"format", "version": 1, "vault", "groups": [Group.as_dict()]}``.
    ``suggestions`` (:class:`variants.Suggestion`, cards of one name in
    another spelling, joined where they share a card: :func:`variants.join`)
    follow as groups to review, each with ``"suggested":
    true``, its ``name_key``, ``evidence`` and ``confidence``, its members'
    hashes read from ``vault``, and as ``canonical`` the card with the
    longest title (a full name over a nickname)."""
    groups = [group.as_dict() for group in report.groups]
    for item in suggestions:
        canonical = max(item.cards, key=lambda p: (len(p.rsplit("/", 1)[-1]), p))
        members = [canonical, *[p for p in item.cards if p != canonical]]
        groups.append(
            {
                "canonical": canonical,
                "members": [{"path": p, "sha256": sha256(vault.note(p).data) if vault else None} for p in members],
                "evidence": [{"key": f"name:{item.name_key}", "kind": "name"}, *item.evidence],
                "strong": False,
                "suggested": True,
                "name_key": item.name_key,
                "confidence": item.confidence,
            }
        )
    return {"format": MANIFEST_FORMAT, "version": 1, "vault": str(vault_root), "groups": groups}


def _copies_of(card: str, paths: list[str]) -> bool:
    """Whether every one of ``paths`` is named as a sync conflict copy of
    ``card`` (:func:`conflicts.original_of`)."""
    from ..read.conflicts import original_of

    return bool(paths) and all(original_of(path, {card}) == card for path in paths)


class ManifestError(ValueError):
    """A manifest that is not one :func:`manifest` writes (exit code 2)."""


def groups_from_manifest(vault, data) -> tuple[list[Group], list[dict]]:
    """The groups of a manifest (parsed JSON) whose members still hold the
    bytes the manifest hashed: ``(groups, stale)``, ``stale`` as
    ``{"members", "reason"}``.  A member whose ``sha256`` is null or absent
    is taken as it is now.  Raises :class:`ManifestError` for a manifest of
    another shape and :class:`PathError` for a path that leaves the
    vault."""
    from ..write.confine import confine

    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT or not isinstance(data.get("groups"), list):
        raise ManifestError(f'not a dedup manifest: expected an object with "format": "{MANIFEST_FORMAT}" and "groups"')
    groups, stale = [], []
    for n, item in enumerate(data["groups"]):
        where = f"groups[{n}]"
        members = item.get("members") if isinstance(item, dict) else None
        if not isinstance(members, list) or not all(
            isinstance(m, dict) and isinstance(m.get("path"), str) for m in members
        ):
            raise ManifestError(f'{where}: expected "members": [{{"path": ..., "sha256": ...}}, ...]')
        paths = [m["path"] for m in members]
        canonical = item.get("canonical", paths[0] if paths else None)
        if not isinstance(canonical, str) or canonical not in paths:
            raise ManifestError(f'{where}: "canonical" must be the path of one of its members')
        for path in paths:
            confine(vault.root, path)
            if not path.endswith(".md"):
                raise ManifestError(f"{where}: {path!r} is not a note (.md)")
        reason = None
        for member in members:
            path, wanted = member["path"], member.get("sha256")
            if path not in vault.files:
                reason = f"{path} is gone"
                break
            note = vault.note(path)
            if wanted is not None and sha256(note.data) != wanted:
                reason = f"{path} changed since the manifest was written"
                break
        if reason is not None:
            stale.append({"members": paths, "reason": reason})
            continue
        others = [p for p in paths if p != canonical]
        if item.get("copy") is True and not _copies_of(canonical, others):
            raise ManifestError(f'{where}: "copy" groups hold a card and sync conflict copies of it')
        groups.append(
            Group(
                canonical,
                [canonical, *others],
                item.get("evidence") or [],
                bool(item.get("strong")),
                {m["path"]: m.get("sha256") for m in members},
                reviewed=True,
                copy=item.get("copy") is True,
            )
        )
    return groups, stale
