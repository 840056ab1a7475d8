"""Text shown to a person: escapes for what a terminal would act on, plurals, tallies.

Note names, property values and a model's answers are data: an ESC in a
file name must not drive the terminal that lists it, and a line break in a
name must not start a new line of a report.  The command-line reports
(:func:`cli.printable`) and the HTML report's text (:func:`svg.esc`) show
them through this one rule (:func:`printable`).  :func:`plural` words a
count the same way in every report, :func:`counts` a tally.
"""

from __future__ import annotations

import re

__all__ = ["counts", "plural", "printable"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]|[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (ESC, CR, NUL, line
    breaks inside names) and stray surrogates shown as escapes
    (``\\x1b``, ``\\n``, ``\\udcff``); other text as it is."""
    if _CONTROL.search(text) is None and "\n" not in text:
        return text
    return _CONTROL.sub(
        lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"),
        text.replace("\n", "\\n"),
    )


def plural(count: int, word: str) -> str:
    """``"1 link"``, ``"2 links"``, ``"0 links"``: ``word`` with an ``s``
    unless ``count`` is 1 (every word the reports count takes an ``s``)."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def counts(pairs, sep: str = ", ") -> str:
    """A tally as the reports show one: ``"active 3, warm 2"``, each name
    with its count, in the order of ``pairs`` (a mapping's items, or
    ``(name, count)`` pairs such as ``Counter.most_common()``)."""
    return sep.join(f"{name} {n}" for name, n in pairs)
