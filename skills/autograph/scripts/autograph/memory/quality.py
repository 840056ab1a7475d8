"""Memory quality: how right the memory is, as ``graph.py health`` shows it.

:func:`section` returns the ``memory`` section of the health report, four
findings and their counts, each found by the rule its own command uses:

* ``probable_duplicates``: cards that are probably one subject, one entry
  per subject: ``{"cards", "by", "key", "confidence"}``.  ``by`` is
  ``identity`` for a group of :func:`dedup.find_groups` (cards sharing an
  email, phone or handle; ``key`` its first evidence, ``email:a@b.c``;
  ``confidence`` ``high`` for a strong group, joined by email or phone,
  else ``medium``; ``cards`` canonical first) or ``name`` for name variants
  (:func:`variants.suggest`, joined by :func:`variants.join`; ``key`` the
  name key, ``full:robert smith``; its ``confidence``).  A card already in
  an identity group is not suggested by name again (dedup merges it first).
* ``identity_conflicts``: one identity value held by two or more live
  cards, ``{"key", "cards", "grouped"}``: ``key`` ``kind:value``, ``cards``
  in path order, ``grouped`` true when the cards are in one identity group
  (``dedup.py`` can merge them), false when dedup refuses to join them (a
  one-value identity field differs: a person decides).  Under
  ``identity.same_type_only`` / ``same_domain_only`` only cards of one type
  / one domain count together, as dedup groups them; a value more cards hold
  than ``identity.max_shared`` (a switchboard) is no identity.
* ``superseded_live``: a card whose ``superseded_by`` names another card
  (:func:`retirement.successor`) and whose ``status`` is not ``superseded``
  (``supersede.py``'s *still current*): ``{"path", "by", "status"}``, ``by``
  the card that supersedes it.
* ``unprocessed_daily``: a daily note (:func:`daily.daily_notes`) that
  ``daily.py mark`` has not marked processed, or that was edited by hand
  since (:func:`daily.state` ``new`` or ``changed``): ``{"path", "date",
  "state"}``.  A daily note that cannot be read is listed by health under
  ``unreadable`` or ``invalid_frontmatter`` instead.

``counts``: ``cards`` (every card, :meth:`Vault.cards`), ``daily_notes``,
the length of each list above, and ``flagged``: the cards named by at least
one finding (a card in a probable duplicate, an identity conflict,
superseded but live, or an unprocessed daily note), each counted once.
``share`` is ``flagged / cards`` (0 for a vault without cards), rounded to
four places: the memory share that ``identity.health_weight`` scores.

Live cards are cards that are not hubs, not retired (:func:`retirement.retired`)
and whose note reads and whose frontmatter parses.  The note index gives
every card's properties, so only the cards that can matter are read: those
holding an identity value another card holds, the cards of a name pair, the
daily notes.
"""

from __future__ import annotations

from ..read import identity as ident
from . import daily, dedup, variants
from .retirement import no_successor, retired, successor

__all__ = ["KEYS", "Fold", "section", "with_daily_notes"]

KEYS = ("probable_duplicates", "identity_conflicts", "superseded_live", "unprocessed_daily")


class _Only:
    """``vault`` whose :meth:`cards` are only those of ``cards`` (the
    vault's, in its order) in ``paths``, so a whole-vault finder reads only
    the cards that can matter; everything else is the vault's own."""

    def __init__(self, vault, cards: list[str], paths: set[str]):
        self._vault, self._cards = vault, [path for path in cards if path in paths]

    def cards(self, schema=None) -> list[str]:
        return list(self._cards)

    def __getattr__(self, name: str):
        return getattr(self._vault, name)


def section(vault, schema, index=None, graph=None) -> dict:
    """The memory section of ``vault`` (module docstring).  ``index``: a
    :class:`index.NoteIndex` (one is made when None); ``graph``: the vault's
    :class:`linkgraph.LinkGraph` or :class:`linkgraph.LinkTally` (ranks the
    cards of an identity group), built when a group is found and none is
    given.  One pass over the cards (:class:`Fold`)."""
    if index is None:
        from ..read.index import NoteIndex

        index = NoteIndex(vault)
    fold = Fold(vault, schema)
    for path, summary in index.each(vault.cards(schema)):
        fold.add(path, summary)
    return fold.section(index, graph)


class Fold:
    """The memory section, taken in one pass over the cards: :meth:`add`
    each card's :class:`index.Summary` in vault order (a caller's own pass,
    as ``graph.py health``'s), then :meth:`section`.  What it keeps of a
    card is what a finding can use: the identity keys of the live ones,
    a ``superseded_by`` value, whether a daily rule can take it; never its
    properties, so a large vault's pass holds a few sets of paths."""

    def __init__(self, vault, schema):
        self.vault, self.schema = vault, schema
        self.cards = 0
        self._card_set = vault.card_set(schema)
        self._settings = dedup.identity_settings(schema)
        self._holders: dict[str, set[str]] = {}  # kind:key -> the live cards holding it
        self._eligible: set[str] = set()  # cards that read, parse and are not retired (variants.suggest's)
        self._successors: list[tuple] = []  # (path, superseded_by, status) of readable cards naming one
        self._daily: list[str] = []  # cards a daily rule can take
        config = daily.settings(vault, schema)
        self._daily_rule = (
            {"daily"} | {alias.lower() for alias, kind in schema.type_aliases.items() if kind == "daily"},
            config.folder + "/" if config.folder else "",
            daily.moment_pattern(config.format),
            config,
        )

    def add(self, path: str, summary) -> bool:
        """Take what the findings use of card ``path``; returns whether a
        daily rule can take it (:meth:`may_be_daily`)."""
        self.cards += 1
        readable = summary.unreadable is None and summary.frontmatter != "invalid"
        props = summary.properties if readable else {}
        daily_rule = self.may_be_daily(path, props)
        if daily_rule:
            self._daily.append(path)
        if not readable:
            return daily_rule
        is_retired = retired(self.vault, self._card_set, path, props)
        if not is_retired:
            self._eligible.add(path)
            if not self.schema.is_hub(summary.stem, props):
                self._hold(path, props)
        key = dedup.find_key(props, "superseded_by")
        value = props.get(key) if key is not None else None
        if not no_successor(value):
            self._successors.append((path, value, props.get("status")))
        return daily_rule

    def _hold(self, path: str, props: dict) -> None:
        settings = self._settings
        held = {key.lower() for key in props if isinstance(key, str)}
        for name in held.intersection(settings.kinds):
            kind = settings.kinds[name]
            for value in ident.values_of(props, name):
                key = ident.normalise(value, kind, settings.country, settings.ignore)
                if key is not None:
                    self._holders.setdefault(f"{kind}:{key}", set()).add(path)

    def may_be_daily(self, path: str, props: dict) -> bool:
        """Whether a daily rule can take card ``path`` (its ``type``, its
        inferred type, or its place and name as the daily notes' format)."""
        kinds, prefix, pattern, _config = self._daily_rule
        kind = props.get("type")
        return bool(
            (isinstance(kind, str) and kind.strip().lower() in kinds)
            or (self.schema.infer_type(path) or "").lower() in kinds
            or (path.startswith(prefix) and pattern.fullmatch(path[len(prefix) : -3]))
        )

    def section(self, index, graph=None) -> dict:
        """The memory section (module docstring) of the cards added."""
        vault, schema = self.vault, self.schema
        cards = vault.cards(schema)
        wanted = {path for paths in self._holders.values() if len(paths) > 1 for path in paths}
        report = (
            dedup.find_groups(_Only(vault, cards, wanted), schema, graph=graph, index=index)
            if wanted
            else dedup.Report()
        )
        grouped = {path for group in report.groups for path in group.members}
        duplicates = [
            {
                "cards": list(group.members),
                "by": "identity",
                "key": group.evidence[0]["key"] if group.evidence else "",
                "confidence": "high" if group.strong else "medium",
            }
            for group in report.groups
        ]
        names = variants.join(variants.suggest(vault, schema, grouped=grouped, index=index, eligible=self._eligible))
        duplicates += [
            {"cards": item.cards, "by": "name", "key": item.name_key, "confidence": item.confidence}
            for item in sorted(names, key=lambda item: item.cards)
        ]
        conflicts = _conflicts(schema, report)
        superseded = self._superseded_live()
        notes, unprocessed = self._unprocessed_daily()
        return _section(duplicates, conflicts, superseded, unprocessed, self.cards, notes)

    def _superseded_live(self) -> list[dict]:
        """Cards whose ``superseded_by`` names another card and whose
        ``status`` is not ``superseded`` (``supersede.py``'s still current)."""
        found = []
        for path, value, status in self._successors:
            by = successor(self.vault, self._card_set, path, value)
            if by is not None and not (isinstance(status, str) and status.strip().lower() == "superseded"):
                found.append({"path": path, "by": by, "status": status})
        return found

    def _unprocessed_daily(self) -> tuple[int, list[dict]]:
        """``(daily notes, [{path, date, state}])``: the daily notes
        (:func:`daily.daily_notes`) and those not processed.  Only the cards
        a daily rule can take (by their path, or a daily ``type``) are read."""
        return _unprocessed(self.vault, self.schema, self._daily_rule[3], self._daily)


def _unprocessed(vault, schema, config, paths: list[str]) -> tuple[int, list[dict]]:
    """``(daily notes, [{path, date, state}])`` among the cards ``paths``
    (:func:`daily.daily_notes` with ``config``), and those not processed,
    in the order of ``paths``."""
    if not paths:
        return 0, []
    # each path asked whether it is a card, not the vault's cards listed: a patch asks of a few
    cards = [path for path in paths if vault.is_card(path, schema)]
    only = _Only(vault, cards, set(cards))
    notes, _skipped = daily.daily_notes(only, schema, config)
    found = []
    for note in notes:
        state = daily.state(vault.note(note.path, keep=False))
        if state in ("new", "changed"):
            found.append({"path": note.path, "date": note.date, "state": state})
    return len(notes), found


def _section(duplicates, conflicts, superseded, unprocessed, cards: int, daily_notes: int) -> dict:
    """The memory section of its four findings, with their counts and share."""
    flagged = {path for item in duplicates + conflicts for path in item["cards"]}
    flagged.update(item["path"] for item in superseded + unprocessed)
    counts = {
        "cards": cards,
        "daily_notes": daily_notes,
        "probable_duplicates": len(duplicates),
        "identity_conflicts": len(conflicts),
        "superseded_live": len(superseded),
        "unprocessed_daily": len(unprocessed),
        "flagged": len(flagged),
    }
    return {
        "probable_duplicates": duplicates,
        "identity_conflicts": conflicts,
        "superseded_live": superseded,
        "unprocessed_daily": unprocessed,
        "counts": counts,
        "share": round(len(flagged) / cards, 4) if cards else 0.0,
    }


def with_daily_notes(memory: dict, vault, schema, paths: list[str]) -> dict:
    """The memory section ``memory`` (:func:`section`'s) with the daily
    notes among the cards ``paths`` taken again: whether each is processed
    (:func:`daily.state`, which reads the note's text alone).  For notes
    whose path and properties are those ``memory`` was taken from, so
    whether each is a daily note, and its date, are as they were (the
    caller's to know); no other finding reads a note's text but the
    ranking of identity groups, which holds none of ``paths``."""
    gone = set(paths)
    _count, found = _unprocessed(vault, schema, daily.settings(vault, schema), sorted(paths))
    unprocessed = sorted(
        [item for item in memory["unprocessed_daily"] if item["path"] not in gone] + found,
        key=lambda item: item["path"],
    )
    counts = memory["counts"]
    return _section(
        memory["probable_duplicates"],
        memory["identity_conflicts"],
        memory["superseded_live"],
        unprocessed,
        counts["cards"],
        counts["daily_notes"],
    )


def _conflicts(schema, report: dedup.Report) -> list[dict]:
    """Each identity value that two or more live cards hold (module
    docstring), from the cards :func:`dedup.find_groups` read."""
    settings = dedup.identity_settings(schema)
    ignored = {item["key"] for item in report.shared}
    group_of = {path: group.canonical for group in report.groups for path in group.members}
    holders: dict[tuple, list[str]] = {}
    for path, card in sorted(report.by_path.items()):
        gate = (
            card.type if settings.same_type_only else None,
            card.domain if settings.same_domain_only else None,
        )
        keys = {f"{card.kinds[name]}:{value}" for name, values in card.values.items() for value in values}
        for key in sorted(keys - ignored):
            holders.setdefault((key, gate), []).append(path)
    found = []
    for (key, _gate), paths in sorted(holders.items(), key=lambda item: (item[0][0], item[1])):
        if len(paths) > 1:
            grouped = group_of.get(paths[0]) is not None and len({group_of.get(p) for p in paths}) == 1
            found.append({"key": key, "cards": paths, "grouped": grouped})
    return found
