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

from . import cards
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


def lookup(vault, schema, kind: str | None, title: str, values: dict) -> list[dict]:
    """Every card the subject (type ``kind``, ``title``, ``{field:
    value}``) may be: ``[{path, title, type, retired, why: [{by, field,
    value}], conflicts: [{field, ours, theirs}], replaced_by}]`` in path
    order.  ``why`` says how it matched (``by`` ``identity``, ``title`` or
    ``alias``); a retired card carries ``replaced_by``, the live card at
    the end of its ``superseded_by`` chain (also listed, with the same
    ``why``), or None when the chain leads nowhere.  The two whole-vault
    lookups are :func:`cards.identity_matches` and
    :func:`names.name_matches`."""
    from .dedup import identity_settings, read_card
    from .retirement import retired, successor

    names = [title]
    try:
        names.append(file_name(title))
    except BadRequest:
        pass
    why: dict[str, list[dict]] = {}
    for match in cards.identity_matches(vault, schema, kind, values):
        why.setdefault(match["path"], []).append({"by": "identity", "field": match["field"], "value": match["value"]})
    for match in name_matches(vault, schema, names):
        why.setdefault(match["path"], []).append(
            {"by": _BY[match["by"]], "field": match["field"], "value": match["value"]}
        )
    settings = identity_settings(schema)
    mine = _given_card(schema, settings, values)
    live_cards = set(vault.cards(schema))
    found: dict[str, dict] = {}

    def entry(path: str, reasons: list[dict]) -> dict:
        note = vault.note(path, keep=False)
        props = note.properties
        item = found.get(path)
        if item is None:
            item = found[path] = {
                "path": path,
                "title": cards._stem(path),
                "type": cards.card_type(schema, path, props),
                "retired": retired(vault, live_cards, path, props),
                "why": [],
                "conflicts": _conflicts(mine, read_card(note, schema, settings)),
            }
        item["why"] += [r for r in reasons if r not in item["why"]]
        return item

    for path in sorted(why):
        item = entry(path, why[path])
        seen = {path}
        while item["retired"]:
            props = vault.note(item["path"], keep=False).properties
            value = props.get(cards.key_of(props, "superseded_by") or "superseded_by")
            after = successor(vault, live_cards, item["path"], value) if value else None
            if after is None or after in seen or len(seen) > _MAX_CHAIN:
                found[path]["replaced_by"] = None
                break
            seen.add(after)
            item = entry(after, why[path])
            found[path]["replaced_by"] = after
        else:
            if found[path]["retired"]:
                found[path]["replaced_by"] = item["path"]
    for item in found.values():
        item.setdefault("replaced_by", None)
    return sorted(found.values(), key=lambda item: item["path"])


def _same_kind(schema, kind: str | None, other: str | None) -> bool:
    if kind is None or other is None:
        return True  # a schema without types, or a card without one: the name decides
    return cards._known_type(schema, other) == cards._known_type(schema, kind) or other == kind.lower()


def _choose(schema, kind: str | None, matches: list[dict]) -> tuple[str | None, str]:
    """The card to update among ``matches`` (:func:`lookup`), or None with
    why the lookup is ambiguous ("" when nothing matched)."""
    live = [m for m in matches if not m["retired"]]
    if not live:
        if matches:
            return None, "a retired card matches and no current card replaces it"
        return None, ""
    by_identity = [m for m in live if any(w["by"] == "identity" for w in m["why"]) and not m["conflicts"]]
    strangers = [m for m in live if m["conflicts"] and all(w["by"] != "identity" for w in m["why"])]
    if len(by_identity) == 1 and len(live) == len(strangers) + 1:
        chosen = by_identity[0]  # the others bear the name but hold another identity: other subjects
    elif len(live) == 1:
        chosen = live[0]
    else:
        return None, f"{len(live)} cards match: {', '.join(m['path'] for m in live)}"
    if chosen["conflicts"]:
        fields = ", ".join(c["field"] for c in chosen["conflicts"])
        return None, f"{chosen['path']} bears the name but holds another {fields}: another subject of the same name"
    if not _same_kind(schema, kind, chosen["type"]):
        return None, f"{chosen['path']} matches but is a {chosen['type']}, not a {kind}"
    return chosen["path"], ""


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
                    na = cards.ident.normalise(a, kind, settings.country, settings.ignore)
                    if na is not None and na == cards.ident.normalise(b, kind, settings.country, settings.ignore):
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
    if any(m["path"] != path and any(w["by"] != "identity" for w in m["why"]) for m in matches):
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
    bad value."""
    kind = cards.canonical_type(schema, kind)
    title = title.strip()
    if title.lower().endswith(".md") and title[:-3].strip():
        title = title[:-3].strip()
    if not title:
        raise BadRequest("TITLE is empty; give the subject's name")
    values = _values(assignments)
    given_type = values.pop(cards.key_of(values, "type") or "type", None)
    if given_type is not None and cards.canonical_type(schema, str(given_type)) != kind:
        raise BadRequest(f"type={given_type} disagrees with the type {kind!r} given first")
    if into is not None:
        matches = [m for m in lookup(vault, schema, kind, title, values) if m["path"] == into]
        matches = matches or [_entry_for(vault, schema, into, values)]
        if matches[0]["conflicts"]:
            fields = ", ".join(c["field"] for c in matches[0]["conflicts"])
            return _refused(
                Plan("remember", into),
                "identity-conflict",
                f"{into} holds another {fields}; it is another subject (remember without --into, or with --new)",
                matches,
                None,
            )
        return _update(vault, schema, into, title, values, today, source, matches)
    matches = lookup(vault, schema, kind, title, values)
    if new:
        return _create_new(vault, schema, kind, title, values, today, source, matches)
    chosen, why = _choose(schema, kind, matches)
    if chosen is not None:
        return _update(vault, schema, chosen, title, values, today, source, matches)
    if matches:
        return _ambiguous(vault, schema, kind, title, values, why, matches)
    plan = cards.plan_new(vault, schema, kind, title, list(values.items()), today, source=source, looked_up=True)
    return _created(plan, vault, schema, kind, title, values)


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
        "why": [],
        "conflicts": _conflicts(_given_card(schema, settings, values), read_card(note, schema, settings)),
        "replaced_by": None,
    }


def _refused(plan: Plan, reason: str, message: str, matches: list[dict], suggested: str | None) -> Plan:
    plan.refused = {"reason": reason, "message": message, "matches": matches, "suggested_title": suggested}
    plan.action = "ambiguous" if reason == "ambiguous" else "refused"
    plan.matches = matches
    plan.suggested_title = suggested
    return plan


def _ambiguous(vault, schema, kind, title, values, why: str, matches: list[dict]) -> Plan:
    others = [vault.note(m["path"], keep=False).properties for m in matches]
    suggested = suggested_title(vault, schema, kind, title, values, others)
    message = (
        f"{why}; if one of them is this subject, give it with --into PATH; if none is, create a card "
        f"with --new and a title that tells them apart, such as {suggested!r}"
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
                "why": [{"by": "title", "field": "name", "value": m["value"]}],
                "conflicts": [],
                "replaced_by": None,
            }
            for m in plan.refused["matches"]
        ]
        return _ambiguous(vault, schema, kind, title, values, plan.refused["message"].split(";")[0], matches)
    plan.action = "refused"
    return plan


def _update(vault, schema, path: str, title: str, values: dict, today, source, matches: list[dict]) -> Plan:
    props = vault.note(path).properties
    assignments = _merged(schema, props, values)
    assignments += _with_alias(props, title, path, matches)
    plan = cards.plan_set(vault, schema, path, assignments, today, source) if assignments else Plan("set", path)
    plan.command = "remember"
    plan.matches = matches
    if plan.refused is None:
        plan.action = "updated" if plan.edits else "unchanged"
    else:
        plan.action = "refused"
    return plan
