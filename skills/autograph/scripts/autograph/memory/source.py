"""Where a fact came from: ``card.py --source NOTE``.

A fact an agent writes from a note (a daily note, a meeting) names that
note: the ``## History`` and ``## Log`` lines it adds end in ``(from
[[NOTE]])``, the one source form :func:`sections.history_line` writes (a
merge's lines say the same), so a person can open the note the fact came
from.  The note's day (:func:`daily.date_of`: a daily note's date, else its
``created``; never after today) is the fact's evidence for the recency
rule (:mod:`recency`): a fact older than the evidence of the value a card
holds goes to ``## History`` as a past value and leaves the current value
alone, so re-reading last month's notes never undoes this week's facts.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

__all__ = ["FIRST", "PAST", "Source", "first_line", "past_line"]

# Marks a History line that records a value a card held at a past day, not
# a change: "- 2026-11-01: role: VP (past value, from [[2026-11-01]])".
PAST = "past value"
# Marks the line of a field's first value on a card that existed before it:
# "- 2026-12-03: team: Ops (first value, from [[2026-12-03]])".  The day it
# got a value is the evidence of that value (recency.fact_evidence), and
# show --as-of knows the field was empty before.
FIRST = "first value"


@dataclass(frozen=True)
class Source:
    """The note a fact came from: ``path`` (vault-relative) and ``day``
    (ISO ``YYYY-MM-DD``, None when the note gives no date: its facts then
    count as today's)."""

    path: str
    day: str | None

    def link(self, vault, card: str) -> str:
        """The link text, written in the card at ``card``, that reaches the
        source note (:func:`names.link_form`): ``2026-12-01``, or a path
        where the name is ambiguous."""
        from .names import link_form

        return link_form(vault, card, self.path)

    def check(self, card: str) -> None:
        """Raise :class:`errors.BadRequest` when the source is the card the
        fact is written to (a card is not where its own facts came from)."""
        from .errors import BadRequest

        if card == self.path:
            raise BadRequest(f"--source {self.path} is the card written to; give the note the fact came from")

    def day_or(self, today: datetime.date) -> str:
        """The day to date a line with: the source's, else ``today``."""
        return self.day or today.isoformat()


def past_line(day: str, field: str, value, link: str) -> str:
    """The ``## History`` line for a value the card held on ``day`` that
    is older than its current one: ``- 2026-11-01: role: VP (past value,
    from [[2026-11-01]])``."""
    from ..write.sections import flow_text

    return f"- {day}: {field}: {flow_text(value)} ({PAST}, from [[{link}]])"


def first_line(day: str, field: str, value, link: str | None) -> str:
    """The ``## History`` line for the first value of ``field`` on a card
    that existed without it: ``- 2026-12-03: team: Ops (first value, from
    [[2026-12-03]])`` (``, from ...`` only with a source)."""
    from ..write.sections import history_line

    line = history_line(day, field, value)
    return f"{line} ({FIRST}, from [[{link}]])" if link else f"{line} ({FIRST})"
