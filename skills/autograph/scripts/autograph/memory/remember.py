"""``card.py remember``: the search-first rule as code.

An agent that knows a fact about a subject calls ``remember TYPE TITLE
field=value...``; the engine looks the subject up and acts (DESIGN's
update-in-place protocol, no longer left to the agent's care):

==========================================================  ===========
what the lookup finds among live cards                      action
==========================================================  ===========
one card holds one of the identity values, no conflict      ``updated``
one card bears the title or an alias (:func:`names.fold`),  ``updated``
no conflict
the name matches but a one-value identity field conflicts   ``ambiguous``
(a stranger of the same name)
several cards, or a card of another type                    ``ambiguous``
nothing                                                     ``created``
==========================================================  ===========

A retired card that matches is followed to the card that replaced it
(``superseded_by``).  A card that matched only by name and whose identity
conflicts is a proven stranger: beside one clean identity match it does
not make the lookup ambiguous.  A *conflict* is a field under which the
card and the fact each hold one value, not the same (dedup's rule,
:func:`dedup.conflicts_between`): a list adds values and never conflicts.

Updating sets each value as ``card.py set`` does (old values to ``##
History``; equal values write nothing: ``unchanged``), except that a value
given for a field holding a list is added to the list, and a title the
card does not bear yet is added to its ``aliases`` (the next lookup by
that name finds it).  ``ambiguous`` writes nothing and lists the
``matches`` with ``why`` and ``conflicts`` and a ``suggested_title`` that
tells the subjects apart (give it with ``--new``).
"""

from __future__ import annotations

import datetime
from types import SimpleNamespace

from . import cards, variants
from .cards import Plan
from .errors import BadRequest
from .names import file_name, fold, name_matches, suggested_title

__all__ = ["lookup", "plan_remember"]

_BY = {"title": "title", "alias": "alias"}
_MAX_CHAIN = 20  # superseded_by hops followed before a chain counts as broken


def _given_card(schema, settings, values: dict):
    """The identity of the fact's values, as dedup reads a card's."""
    from .dedup import read_card

    return read_card(SimpleNamespace(properties=values, path="", data=b""), schema, settings)


def _conflicts(mine, theirs) -> list[dict]:
    """``[{field, ours, theirs}]``: one-value identity fields on which the
    fact and the card disagree (values as normalised)."""
    from .dedup import conflicts_between

    if mine is None or theirs is None:
        return []
    return [
        {"field": name, "ours": sorted(mine.values[name])[0], "theirs": sorted(theirs.values[name])[0]}
        for name in conflicts_between(mine, theirs)
    ]


class Lookup:
    """What :func:`lookup` found: ``matches`` (see there), ``old_identity``
    (``{path: {field}}``: identity values of the fact that a retired card
    on the way to ``path`` holds: the subject's old address, never a
    conflict and never written over its current one) and ``unreadable``
    (``[{path, error}]``: cards that cannot be read and may hold one of
    the identity values)."""

    def __init__(self, matches: list[dict], old_identity: dict, unreadable: list[dict]):
        self.matches = matches
        self.old_identity = old_identity
        self.unreadable = unreadable


def _names_of(title: str) -> list[str]:
    """The names a title is looked up by: itself, and its file name when
    only forbidden characters were replaced (a name cut to fit a file name
    would match another long name that starts alike)."""
    from .names import MAX_NAME_BYTES

    names = [title]
    if len(title.encode("utf-8")) <= MAX_NAME_BYTES:
        try:
            names.append(file_name(title))
        except BadRequest:
            pass
    return names


def lookup(vault, schema, kind: str | None, title: str, values: dict) -> Lookup:
    """Every card the subject (type ``kind``, ``title``, ``{field:
    value}``) may be: :class:`Lookup` whose ``matches`` are ``[{path, title,
    type, retired, replaced_by, why: [{by, field, value}], conflicts:
    [{field, ours, theirs}]}]``, the strongest first (:func:`_strength_order`).
    ``why`` says how it matched (``by`` ``identity``, ``title``, ``alias`` or
    ``variant``, :func:`variants.matches`); a retired card carries
    ``replaced_by``, the live card at the end of its ``superseded_by``
    chain (listed too, its ``why`` entries those of the retired card with
    ``via``, the retired card's path), or None when the chain leads
    nowhere.  The whole-vault lookups are :func:`cards.identity_matches`,
    :func:`names.name_matches` and :func:`variants.matches`."""
    from .dedup import identity_settings, read_card
    from .retirement import retired, successor

    why: dict[str, list[dict]] = {}
    unreadable: list[dict] = []
    for match in cards.identity_matches(vault, schema, kind, values, unreadable=unreadable):
        reason = {"by": "identity", "field": match["field"], "value": match["value"]}
        why.setdefault(match["path"], []).append({**reason, "old": True} if match.get("old") else reason)
    for match in name_matches(vault, schema, _names_of(title), qualified=True):
        why.setdefault(match["path"], []).append(
            {"by": _BY[match["by"]], "field": match["field"], "value": match["value"]}
        )
    for match in variants.matches(vault, schema, title, exclude=set(why)):  # Bob for Robert Smith: asked about
        why[match["path"]] = [{"by": "variant", **{k: v for k, v in match.items() if k != "path"}}]
    settings = identity_settings(schema)
    mine = _given_card(schema, settings, values)
    live_cards = vault.card_set(schema)
    found: dict[str, dict] = {}
    identities: dict[str, object] = {}
    old_identity: dict[str, set[str]] = {}

    def entry(path: str, reasons: list[dict]) -> dict:
        note = vault.note(path, keep=False)
        props = note.properties
        item = found.get(path)
        if item is None:
            identities[path] = read_card(note, schema, settings)
            item = found[path] = {
                "path": path,
                "title": cards._stem(path),
                "type": cards.card_type(schema, path, props),
                "retired": retired(vault, live_cards, path, props),
                "replaced_by": None,
                "why": [],
                "conflicts": _conflicts(mine, identities[path]),
            }
            old = _old_values(note, item["conflicts"], mine, settings)
            if old:  # a value the card held before (its History): the subject's old address, no conflict
                item["conflicts"] = [c for c in item["conflicts"] if c["field"] not in old]
                old_identity.setdefault(path, set()).update(old)
        item["why"] += [r for r in reasons if r not in item["why"]]
        return item

    for path in sorted(why):
        item = entry(path, why[path])
        chain = [path]
        while item["retired"]:
            props = vault.note(item["path"], keep=False).properties
            value = props.get(cards.key_of(props, "superseded_by") or "superseded_by")
            after = successor(vault, live_cards, item["path"], value) if value else None
            if after is None or after in chain or len(chain) > _MAX_CHAIN:
                break
            chain.append(after)
            item = entry(after, [{**w, "via": path} for w in why[path] if "via" not in w])
        if item["retired"]:
            continue
        for step in chain[:-1]:
            found[step]["replaced_by"] = item["path"]
        if len(chain) > 1:  # an identity a retired card of the chain holds is the subject's old one
            held = _held(identities, chain[:-1])
            old = {
                c["field"] for c in item["conflicts"] if mine and mine.values[c["field"]] <= held.get(c["field"], set())
            }
            item["conflicts"] = [c for c in item["conflicts"] if c["field"] not in old]
            old |= {w["field"] for w in item["why"] if w["by"] == "identity" and "via" in w}
            old_identity.setdefault(item["path"], set()).update(old)
    for item in found.values():
        item["conflicts"] = _changes_dropped(item, settings)
    return Lookup(sorted(found.values(), key=_strength_order), old_identity, unreadable)


_BY_ORDER = {"identity": 0, "title": 1, "alias": 2, "variant": 3}
_VARIANT_ORDER = {"full": 0, "initial": 1, "given": 2}


def _strength_order(item: dict) -> tuple:
    """Matches by how surely they name the subject: an identity match first,
    then a title, an alias, a name variant (a full name over an initial
    over a given name), conflicts last; then by path."""
    best = min((_BY_ORDER.get(w["by"], 4) for w in item["why"]), default=4)
    variant = min((_VARIANT_ORDER.get(w.get("name_key", "").split(":")[0], 3) for w in item["why"]), default=3)
    return (bool(item["conflicts"]), best, variant, item["path"])


# How surely a kind of identity value names one subject: an email is one
# person's, a phone may be a desk's or change hands, a handle is renamed.
_STRENGTH = {"email": 3, "phone": 2, "handle": 1, "url": 1, "exact": 0}


def _changes_dropped(item: dict, settings) -> list[dict]:
    """``item``'s conflicts without those a stronger identity match settles:
    a card found by its email whose phone differs is the subject with a new
    phone (a change of fact, written with its History line), not a
    stranger.  A conflict on a kind as strong as the strongest match, or
    with no identity match at all, stays."""
    kinds = settings.kinds
    held = [_STRENGTH.get(kinds.get(w["field"].lower(), "exact"), 0) for w in item["why"] if w["by"] == "identity"]
    if not held or not item["conflicts"]:
        return item["conflicts"]
    strongest = max(held)
    return [c for c in item["conflicts"] if _STRENGTH.get(kinds.get(c["field"], "exact"), 0) >= strongest]


def _old_values(note, conflicts: list[dict], mine, settings) -> set[str]:
    """The fields of ``conflicts`` whose given value the card held before
    (an old value in its ``## History``)."""
    from ..read import identity as ident
    from .asof import history

    if not conflicts or mine is None or "History" not in (note.text or ""):
        return set()
    fields = {c["field"] for c in conflicts}
    old: dict[str, set[str]] = {}
    for line in history(note.text):
        name = line["field"].lower()
        if name not in fields:
            continue
        for value in (line["old"], line["new"] if line["kind"] != "change" else None):
            for item in value if isinstance(value, list) else [value]:
                norm = ident.normalise(item, settings.kinds[name], settings.country, settings.ignore) if item else None
                if norm is not None:
                    old.setdefault(name, set()).add(norm)
    return {name for name in fields if mine.values[name] <= old.get(name, set())}


def _held(identities: dict, paths: list[str]) -> dict[str, set[str]]:
    """``{field: normalised values}`` the cards of ``paths`` hold."""
    held: dict[str, set[str]] = {}
    for path in paths:
        card = identities.get(path)
        for name, values in (card.values if card is not None else {}).items():
            held.setdefault(name, set()).update(values)
    return held


def _same_kind(schema, kind: str | None, other: str | None) -> bool:
    if kind is None or other is None:
        return True  # a schema without types, or a card without one: the name decides
    return cards._known_type(schema, other) == cards._known_type(schema, kind) or other == kind.lower()


def _by_identity(match: dict) -> bool:
    return any(w["by"] == "identity" for w in match["why"])


def _choose(schema, kind: str | None, found: Lookup) -> tuple[str | None, str, bool]:
    """``(path, why, distinct)``: the card to update among the lookup's
    matches; or None, why the lookup is ambiguous ("" when nothing
    matched) and whether a card of another title is the way out (no match
    holds the identity, so ``--new`` with ``suggested_title`` may be it)."""
    matches = found.matches
    live = [m for m in matches if not m["retired"]]
    if found.unreadable and not any(_by_identity(m) and not m["conflicts"] for m in live):
        told = ", ".join(f"{u['path']} ({u['error']})" for u in found.unreadable)
        return None, f"{told} cannot be read and may hold this identity: repair it first, or give --into PATH", False
    variant = [m for m in live if all(w["by"] == "variant" for w in m["why"])]
    if variant and len(variant) == len(live):  # only another spelling of the name: never written on its own
        open_ = [m for m in variant if not m["conflicts"] and _same_kind(schema, kind, m["type"])]
        if not open_:
            return None, "", True  # each holds another identity or is of another type: other subjects
        told = ", ".join(f"{m['path']} ({m['why'][0]['name_key']})" for m in open_)
        return (
            None,
            f"{told} {'bears' if len(open_) == 1 else 'bear'} another spelling of this name; if one is this "
            "subject, give it with --into PATH",
            True,
        )
    live = [m for m in live if m not in variant]
    if not live:
        if matches:
            paths = ", ".join(m["path"] for m in matches)
            return (
                None,
                f"{paths} matches but is retired and no current card replaces it: --into PATH writes there",
                True,
            )
        return None, "", True
    clean = [m for m in live if _by_identity(m) and not m["conflicts"]]
    strangers = [m for m in live if m["conflicts"] and not _by_identity(m)]
    if len(clean) == 1 and len(live) == len(strangers) + 1:
        chosen = clean[0]  # the others bear the name but hold another identity: other subjects
    elif len(live) == 1:
        chosen = live[0]
    else:
        told = f"{len(live)} cards match: {', '.join(m['path'] for m in live)}; give the one meant with --into PATH"
        return None, told, not clean
    if chosen["conflicts"]:
        c = chosen["conflicts"][0]
        told = (
            f"{chosen['path']} matches but holds another {c['field']} ({c['theirs']}, not {c['ours']}): "
            f"another subject; if it is the same one and its {c['field']} changed, change it first "
            f"(card.py set PATH {c['field']}=...)"
        )
        return None, told, not _by_identity(chosen)
    if not _same_kind(schema, kind, chosen["type"]):
        return None, f"{chosen['path']} matches but is a {chosen['type']}, not a {kind}; --into PATH writes there", True
    return chosen["path"], "", False


def _values(assignments: list[tuple[str, object]]) -> dict:
    values: dict[str, object] = {}
    for key, value in assignments:
        values[cards.key_of(values, key) or key] = value
    return values


def _merged(schema, props: dict, values: dict) -> list[tuple[str, object]]:
    """The assignments that record ``values`` on a card holding ``props``:
    a value for a field that holds a list is added to it (a new email
    beside the old one), identity values compared as :func:`identity.normalise`
    compares them; a field that holds an equal value is left out."""
    from ..read import frontmatter as fm
    from ..read import identity as ident
    from .dedup import identity_settings

    settings = identity_settings(schema)
    out = []
    for key, value in values.items():
        written = cards.key_of(props, key)
        old = props.get(written) if written is not None else None
        if isinstance(old, list) and value is not None:
            kind = settings.kinds.get(key.lower())

            def same(a, b, kind=kind) -> bool:
                if kind is not None:
                    na = ident.normalise(a, kind, settings.country, settings.ignore)
                    if na is not None and na == ident.normalise(b, kind, settings.country, settings.ignore):
                        return True
                return fm.same_value(a, b)

            added = [v for v in (value if isinstance(value, list) else [value]) if not any(same(v, o) for o in old)]
            if not added:
                continue
            value = [*old, *added]
        out.append((key, value))
    return out


def _with_alias(props: dict, title: str, path: str, matches: list[dict]) -> list[tuple[str, object]]:
    """``aliases`` with ``title`` added when the card at ``path`` does not
    bear it yet (neither as its file name nor as an alias) and no other
    card does (a name two cards share would stop every lookup by it)."""
    from ..read.identity import values_of

    held = [a for a in values_of(props, "aliases") if isinstance(a, str)]
    if fold(title) == fold(cards._stem(path)) or any(fold(a) == fold(title) for a in held):
        return []
    if any(m["path"] != path and any(w["by"] in ("title", "alias") for w in m["why"]) for m in matches):
        return []
    return [("aliases", [*held, title])]


def plan_remember(
    vault,
    schema,
    kind: str,
    title: str,
    assignments: list[tuple[str, object]],
    today: datetime.date,
    source=None,
    into: str | None = None,
    new: bool = False,
    force: bool = False,
) -> Plan:
    """Plan ``card.py remember``: look the subject up (:func:`lookup`) and
    create, update or refuse, as the module docstring's table says.
    ``into`` (a vault path) updates that card, refused when a one-value
    identity field conflicts; ``new`` creates a card though a name
    matches, under a title no card bears.  ``source`` is a
    :class:`source.Source`.

    The plan's ``action`` is ``created``, ``updated``, ``unchanged``,
    ``ambiguous`` (``refused.reason`` ``ambiguous``, exit 1) or
    ``refused`` (``identity-conflict``, ``title-taken``,
    ``missing-required``: exit 2); ``matches`` and ``suggested_title`` as
    described there.  Raises :class:`BadRequest` for an unknown type or a
    bad value.  ``force``: an identity value another live card holds is
    written anyway (else refused as ``card.py set`` refuses it,
    ``identity-taken``)."""
    kind = cards.canonical_type(schema, kind)
    title, named = _title(vault, schema, title)
    if named is not None and into is None and not new:
        into = named  # a path or a link names the card: no lookup by name
    values = _values(assignments)
    own = [k for k in values if k.lower() in OWN]
    if own:
        raise BadRequest(f"{', '.join(own)}: autograph keeps these itself (decay and touch); leave them out")
    given_type = values.pop(cards.key_of(values, "type") or "type", None)
    if given_type is not None and cards.canonical_type(schema, str(given_type)) != kind:
        raise BadRequest(f"type={given_type} disagrees with the type {kind!r} given first")
    if into is not None:
        found = lookup(vault, schema, kind, title, values)
        matches = [m for m in found.matches if m["path"] == into] or [_entry_for(vault, schema, into, values)]
        if matches[0]["conflicts"]:
            c = matches[0]["conflicts"][0]
            return _refused(
                Plan("remember", into),
                "identity-conflict",
                f"{into} holds another {c['field']} ({c['theirs']}, not {c['ours']}); if its {c['field']} changed, "
                f"change it with card.py set {into} {c['field']}=..., else it is another subject (--new)",
                matches,
                None,
            )
        return _update(vault, schema, into, title, values, today, source, found, matches, force)
    found = lookup(vault, schema, kind, title, values)
    if new:
        return _create_new(vault, schema, kind, title, values, today, source, found.matches)
    chosen, why, distinct = _choose(schema, kind, found)
    if chosen is not None:
        return _update(vault, schema, chosen, title, values, today, source, found, found.matches, force)
    if why:
        matches = found.matches + [_unreadable_entry(u) for u in found.unreadable]
        return _ambiguous(vault, schema, kind, title, values, why, matches, distinct)
    plan = cards.plan_new(vault, schema, kind, title, list(values.items()), today, source=source, looked_up=True)
    return _created(plan, vault, schema, kind, title, values)


# autograph's own bookkeeping: a fact never sets it (created and updated are dates a fact may carry)
OWN = cards.OWN_FIELDS


def _title(vault, schema, given: str) -> tuple[str, str | None]:
    """``(title, card)``: the subject's name in TITLE, and the card it names
    when TITLE is a path of a card of the vault (``people/Dana Reyes.md``,
    as every other card command takes) or a wikilink that resolves to one
    (``[[Dana Reyes|Dana]]``, as Obsidian resolves it): that card is meant,
    as with ``--into``.  Otherwise the text itself (``NATS / JetStream`` is
    a title) and None.  Raises :class:`BadRequest` when empty."""
    title = given.strip()
    link = title.startswith("[[") and title.endswith("]]")
    if link:
        title = title[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
    slashed = title.replace("\\", "/")
    if link or "/" in slashed or slashed.lower().endswith(".md"):
        path = cards.find_card(vault, title)
        if path is not None and path in vault.cards(schema):
            return cards._stem(path), path
    if title.lower().endswith(".md") and title[:-3].strip():
        title = title[:-3].strip()
    if not title:
        raise BadRequest("TITLE is empty; give the subject's name")
    return title, None


def _unreadable_entry(item: dict) -> dict:
    return {
        "path": item["path"],
        "title": cards._stem(item["path"]),
        "type": None,
        "retired": False,
        "replaced_by": None,
        "why": [],
        "conflicts": [],
    }


def _entry_for(vault, schema, path: str, values: dict) -> dict:
    """A :func:`lookup` entry for the card ``--into`` names though the
    lookup did not find it (the agent knows better than the names)."""
    from .dedup import identity_settings, read_card

    settings = identity_settings(schema)
    note = vault.note(path, keep=False)
    return {
        "path": path,
        "title": cards._stem(path),
        "type": cards.card_type(schema, path, note.properties),
        "retired": False,
        "replaced_by": None,
        "why": [],
        "conflicts": _conflicts(_given_card(schema, settings, values), read_card(note, schema, settings)),
    }


def _refused(plan: Plan, reason: str, message: str, matches: list[dict], suggested: str | None) -> Plan:
    plan.refused = {"reason": reason, "message": message, "matches": matches, "suggested_title": suggested}
    plan.action = "ambiguous" if reason == "ambiguous" else "refused"
    plan.matches = matches
    plan.suggested_title = suggested
    return plan


def _ambiguous(vault, schema, kind, title, values, why: str, matches: list[dict], distinct: bool) -> Plan:
    """The ``ambiguous`` plan; ``distinct``: no match holds the identity, so
    the subject may be another one, and ``suggested_title`` names it."""
    suggested = None
    if distinct:
        others = [vault.note(m["path"], keep=False).properties for m in matches if m["path"].endswith(".md")]
        suggested = suggested_title(vault, schema, kind, title, values, others)
    message = why + (
        f"; if none of them is this subject, create its card with --new and a title that tells them apart, "
        f"such as {suggested!r}"
        if suggested
        else ""
    )
    return _refused(Plan("remember", None), "ambiguous", message, matches, suggested)


def _create_new(vault, schema, kind, title, values, today, source, matches) -> Plan:
    named = [m for m in matches if any(w["by"] in ("title", "alias") for w in m["why"])]
    held = [m for m in matches if any(w["by"] == "identity" for w in m["why"]) and not m["retired"]]
    if named:
        others = [vault.note(m["path"], keep=False).properties for m in named]
        suggested = suggested_title(vault, schema, kind, title, values, others)
        return _refused(
            Plan("remember", None),
            "title-taken",
            f"--new needs a title no card bears; {', '.join(m['path'] for m in named)} bears {title!r}: "
            f"give one that tells them apart, such as {suggested!r}",
            matches,
            suggested,
        )
    if held:
        return _refused(
            Plan("remember", None),
            "ambiguous",
            f"{', '.join(m['path'] for m in held)} holds the same identity: it is this subject "
            "(remember without --new updates it; card.py new --force makes a second card)",
            matches,
            None,
        )
    plan = cards.plan_new(vault, schema, kind, title, list(values.items()), today, source=source, looked_up=True)
    return _created(plan, vault, schema, kind, title, values)


def _created(plan: Plan, vault, schema, kind, title, values) -> Plan:
    """``plan_new``'s plan as remember's: a note of that name that is no
    card (a daily note, a hub) makes it ambiguous, a missing field refused."""
    plan.command = "remember"
    plan.matches = []
    if plan.refused is None:
        plan.action = "created"
        return plan
    reason = plan.refused["reason"]
    if reason == "exists":
        matches = [
            {
                "path": m["path"],
                "title": cards._stem(m["path"]),
                "type": None,
                "retired": False,
                "replaced_by": None,
                "why": [{"by": "title", "field": "name", "value": m["value"]}],
                "conflicts": [],
            }
            for m in plan.refused["matches"]
        ]
        return _ambiguous(vault, schema, kind, title, values, plan.refused["message"].split(";")[0], matches, True)
    plan.action = "refused"
    return plan


def _update(
    vault, schema, path: str, title: str, values: dict, today, source, found, matches: list[dict], force=False
) -> Plan:
    props = vault.note(path).properties
    old = {f.lower() for f in found.old_identity.get(path, ())}
    kept = {k: v for k, v in values.items() if k.lower() not in old}  # an old address stays on the retired card
    assignments = _merged(schema, props, kept)
    assignments += _with_alias(props, title, path, matches)
    plan = (
        cards.plan_set(vault, schema, path, assignments, today, source, first_lines=True, force=force)
        if assignments
        else Plan("set", path)
    )
    plan.command = "remember"
    plan.matches = matches
    plan.notes += [
        f"{k}: {v} is an old value of the subject (in ## History, or on a card {path} replaced); not written"
        for k, v in values.items()
        if k.lower() in old
    ]
    plan.notes += [
        f"{m['path']} bears another spelling of this name ({m['why'][0]['name_key']}); if it is the same subject, "
        "dedup.py suggests merging them"
        for m in matches
        if m["path"] != path and not m["retired"] and all(w["by"] == "variant" for w in m["why"])
    ]
    via = sorted({w["via"] for m in matches if m["path"] == path for w in m["why"] if "via" in w})
    if via:
        plan.notes.append(
            f"{', '.join(via)} matched but is retired: {path} replaced it (superseded_by) and was updated"
        )
    if plan.refused is None:
        plan.action = "updated" if plan.edits else "unchanged"
    else:
        plan.action = "refused"
    return plan
