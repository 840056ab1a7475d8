"""Lists in the human reports of ``graph.py``: long lists cut short, the rest counted.

A vault with thousands of broken links must not print thousands of lines:
a terminal shows at most :data:`SHOWN` rows of a list and says how many
more there are (``--json`` lists all); a line of stderr names at most a
few items (:func:`listed`).  Every row goes through :func:`text.printable`:
note names and errors are data, never terminal commands.
"""

from __future__ import annotations

from ..read.text import printable

__all__ = ["SHOWN", "listed", "section", "shown"]

SHOWN = 20  # rows of a list a human report shows


def shown(rows: list[str]) -> list[str]:
    """The lines of ``rows`` indented by two spaces, at most :data:`SHOWN`
    of them, then ``"  ... N more (--json lists all)"`` when there are more."""
    out = [f"  {printable(row)}" for row in rows[:SHOWN]]
    if len(rows) > SHOWN:
        out.append(f"  ... {len(rows) - SHOWN} more (--json lists all)")
    return out


def section(title: str, rows: list[str]) -> list[str]:
    """``"TITLE (N):"`` and :func:`shown` of ``rows``; no lines at all when
    ``rows`` is empty (a report names only what it found)."""
    if not rows:
        return []
    return [f"{title} ({len(rows)}):", *shown(rows)]


def listed(items: list[str], most: int = 5) -> str:
    """The first ``most`` of ``items``, "; "-joined, and how many more: one
    line of stderr stays readable when hundreds of notes are named.  The
    items are joined as given (not made printable)."""
    more = f"; and {len(items) - most} more" if len(items) > most else ""
    return "; ".join(items[:most]) + more
