"""Retired cards: a card that another card replaced, and which card that is.

A card is *retired* when its ``status`` is ``superseded``, or when its
``superseded_by`` names another card of the vault (resolved as Obsidian
resolves a link written in the card).  ``superseded_by`` text that names
nobody (``TBD``, ``n/a``, ``[[Nobody]]``) retires nothing.

Dedup leaves retired cards out of its groups, search ranks them down and
marks them, cards follow a retired card to its successor, and supersede
stamps them: all by this one rule.
"""

from __future__ import annotations

__all__ = ["no_successor", "retired", "successor"]


def no_successor(value) -> bool:
    """A ``superseded_by`` that says "nobody": empty, ``null``, ``false`` or
    one of :data:`identity.DEFAULT_IGNORE` (``n/a``, ``-``, ``none``, ...)."""
    from ..read.identity import DEFAULT_IGNORE

    if value is None or value is False or value == [] or value == {}:
        return True
    if isinstance(value, list):
        return all(no_successor(item) for item in value)
    return isinstance(value, str) and value.strip().lower() in DEFAULT_IGNORE


def successor(vault, cards, path: str, value) -> str | None:
    """The card (vault path) that ``value``, the ``superseded_by`` of the
    card at ``path``, names: a ``"[[Link]]"`` or a note name (or a list of
    them; the first that counts), resolved as Obsidian resolves a link
    written in ``path`` (:class:`links.Resolver`).  Only another card of
    ``cards`` (a set of paths, :meth:`Vault.cards`) counts; None for text
    that names no note (``TBD``, ``0``, ``[[Nobody]]``), a note that is no
    card (a hub) or the card itself."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            continue
        text = str(item).strip()
        if text.startswith("[[") and text.endswith("]]"):
            text = text[2:-2]
        target = text.split("|", 1)[0].split("#", 1)[0].strip()
        if not target:
            continue
        hit = vault.resolver.resolve(target, path).path
        if hit is not None and hit != path and hit in cards:
            return hit
    return None


def retired(vault, cards, path: str, properties: dict) -> bool:
    """Whether the card at ``path`` with ``properties`` is retired:
    ``status: superseded``, or a ``superseded_by`` that names another card
    (:func:`successor`).  ``superseded_by: TBD`` alone retires nothing.
    ``cards`` is a set of paths (:meth:`Vault.cards`)."""
    status = properties.get("status")
    if isinstance(status, str) and status.strip().lower() == "superseded":
        return True
    value = properties.get("superseded_by")
    return bool(value) and successor(vault, cards, path, value) is not None
