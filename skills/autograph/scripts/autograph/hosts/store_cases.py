"""Paths of a memory store that differ only in letter case: doctor's ``case-collision`` warning.

``foo.md`` beside ``FOO.md`` are two notes on Linux; a checkout or sync of
the store on macOS or Windows (case-insensitive file systems) keeps one of
them and loses the other.  The groups are :func:`graph.health.case_collisions`
of the store's files (notes and every other file, archived ones too), the
same rule ``graph.py health`` reports for a vault.  A warning, not an issue:
the store works on the file system it is on.
"""

from __future__ import annotations

import os

__all__ = ["KIND", "case_warnings", "with_case_warnings"]


KIND = "case-collision"
HINT = "rename one (or merge them): a macOS or Windows checkout keeps only one"


def case_warnings(store: str | os.PathLike) -> list[dict]:
    """One ``{"kind": "case-collision", "path", "line": None, "message"}``
    per group of the store's files whose paths differ only in letter case
    (``path``: the group's first in code-point order, store-relative with
    ``/``; ``message`` names every path of the group), in path order.
    Raises :class:`read.vault.VaultError` when ``store`` is not a folder."""
    from ..graph.health import case_collisions
    from ..read.vault import Vault

    found = []
    for group in case_collisions(Vault.open(store).files):
        names = ", ".join(group)
        message = f"{names} differ only in letter case; {HINT}"
        found.append({"kind": KIND, "path": group[0], "line": None, "message": message})
    return found


def with_case_warnings(report: dict, store: str | os.PathLike) -> dict:
    """``report`` (:func:`store_doctor.doctor`'s) with the store's
    :func:`case_warnings` among its ``warnings``, kept in path and line
    order; the same dict, changed in place."""
    found = case_warnings(store)
    if found:
        report["warnings"] = sorted(report["warnings"] + found, key=lambda f: (f["path"], f["line"] or 0))
    return report
