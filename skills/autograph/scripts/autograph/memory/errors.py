"""A request a memory command cannot carry out as asked (``card.py`` exits 2).

Shared by the modules that read a request (:mod:`cards`, :mod:`names`,
:mod:`remember`, :mod:`commands`, :mod:`batch`), so none of them imports
another for its errors.
"""

from __future__ import annotations

__all__ = ["Ambiguous", "BadRequest"]


class BadRequest(ValueError):
    """A request the command cannot carry out as asked: an unknown type, a
    NOTE or OTHER that names no note, a value that does not parse (exit 2)."""


class Ambiguous(BadRequest):
    """A NOTE name that Obsidian's rules find in several notes;
    ``candidates`` lists their paths, the one a link would reach first."""

    def __init__(self, message: str, candidates: list[str]):
        super().__init__(message)
        self.candidates = candidates
