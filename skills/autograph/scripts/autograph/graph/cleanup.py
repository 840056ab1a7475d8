"""Link cleanup: take links that resolve nowhere out of ``## Related`` sections.

A ``## Related`` section (an ATX heading of any level whose text is
``Related``, letter case ignored, up to the next heading of the same or a
higher level) lists where a card leads; ``enrich.py`` appends to it through
:mod:`sections`, whose heading rules this module shares.  A link there that
resolves to no file under Obsidian's rules (:class:`links.Resolver`) is a
phantom: an agent guessed a name that was never written, or the note went
away.  :func:`plan` removes
such links, and only those:

* a list item that holds nothing but the broken link (``- [[Gone]]``, also
  ``1. [[Gone]]``) is removed whole, line break included, unless the item
  goes on below it (a continuation or a nested item): then it is prose;
* anywhere else in the section (prose, a task item, a table cell, a quote,
  an item with more on its line) the link becomes its visible text: the
  alias, else the target as Obsidian shows it (``Gone > Heading``); a
  Markdown link becomes its label;
* a link that resolves (to a note or to any other file, whatever its
  ``#heading``), an embed (``![[...]]``), a link in frontmatter and every link
  outside a Related section is never changed; the broken ones are reported.

Links are found by :func:`links.scan` (code-aware: nothing inside code,
``%% comments %%``, HTML comments or math is a link), and headings inside
code are not headings.  Notes that are not UTF-8, whose frontmatter does not
parse, or that sit in a templates folder or ``ignore_folders`` are reported,
never written.  No byte outside a Related section changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..read.index import note_links
from ..read.links import _MD_DEST, Link
from ..write import sections
from ..write.changes import Edit

__all__ = ["HEADING", "Plan", "plan", "plan_note", "related_spans", "visible_text"]

HEADING = "related"

# A list item whose content is exactly one link: marker, then the link, then
# nothing but spaces (the link's own text is checked by offset, not here).
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_NEXT_ITEM = re.compile(r"([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]|\r?$)")
_NEXT_HEADING = re.compile(r"[ ]{0,3}#{1,6}(?:[ \t]|\r?$)")


@dataclass
class Plan:
    """What :func:`plan` found.

    ``edits``: one :class:`Edit` per note that changes.  ``removed``:
    ``{path, line, link, action, text}`` per link taken out (``action``
    ``"item"``: its list item went whole; ``"text"``: the link became
    ``text``).  ``reported``: ``{path, line, link, reason}`` per broken link
    left as it is.  ``skipped``: ``{path, reason}`` per note with broken
    links in a Related section that cannot be written."""

    edits: list[Edit] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)
    reported: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)


def related_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets in ``text`` (a whole note, or a body) of
    every Related section: an ATX heading ``Related`` of any level (letter
    case and spaces around it ignored), from its line's start to just
    before the next heading of the same or a higher level, or the end.
    Headings are found as :func:`sections.find` finds them (never inside
    code, comments or math, never in the frontmatter)."""
    if "elated" not in text and "ELATED" not in text:
        return []
    found = sections.headings(text)
    spans = []
    for k, (start, level, title, atx) in enumerate(found):
        if atx and title.casefold() == HEADING:
            end = next((s for s, lv, _, _ in found[k + 1 :] if lv <= level), len(text))
            spans.append((start, end))
    return spans


def visible_text(link: Link, text: str) -> str:
    """What a reader sees of ``link`` (written at ``text[link.start:link.end]``):
    the alias, else the target (``Note > Heading`` for a ``#heading`` part,
    as Obsidian shows it); a Markdown link's label, else its target."""
    if link.kind == "markdown":
        raw = text[link.start : link.end]
        # the label ends at the "](" whose "(...)" runs to the link's end
        k = raw.rfind("](")
        while k > 0 and _MD_DEST.fullmatch(raw, k + 1) is None:
            k = raw.rfind("](", 0, k)
        label = raw[1:k] if k > 0 else ""
        return label if label.strip() else link.target
    if link.alias is not None and link.alias.strip():
        return link.alias
    return " > ".join(part for part in [link.target, *link.fragment.split("#")] if part)


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Start of the line holding ``start``, and the offset of the line break
    ending the line that holds ``end`` (``len(text)`` at the end)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return line_start, len(text) if line_end < 0 else line_end


def _whole_item(text: str, link: Link, others: int, limit: int) -> tuple[int, int] | None:
    """The span to delete when ``link`` is all its list item holds, else None.

    ``others``: the other links on the line.  The item must end on its line:
    the next line (within the section, which ends at ``limit``) is blank,
    another item no deeper than this one, or there is none."""
    if others:
        return None
    line_start, line_end = _line_bounds(text, link.start, link.end)
    item = _ITEM.match(text, line_start)
    if item is None or item.end() != link.start or text[link.end : line_end].strip(" \t\r"):
        return None
    if line_end < len(text):
        nxt_end = text.find("\n", line_end + 1)
        nxt = text[line_end + 1 : len(text) if nxt_end < 0 else nxt_end]
        indent = len(text[line_start : item.end()]) - len(text[line_start : item.end()].lstrip(" \t"))
        follow = _NEXT_ITEM.match(nxt)
        ends = follow is not None and len(follow.group(1)) <= indent or _NEXT_HEADING.match(nxt) is not None
        if line_end + 1 < limit and nxt.strip(" \t\r") and not ends:
            return None
        return line_start, line_end + 1
    return line_start, line_end


def plan_note(note, resolver, writable: bool = True) -> tuple[str | None, list[dict], list[dict]]:
    """The cleaned text of one note (None: nothing to change), the links
    removed and the broken links reported (see :class:`Plan`).

    ``note`` is a :class:`note.Note` with text; ``resolver`` a
    :class:`links.Resolver` of the vault.  With ``writable`` False the broken
    links of its Related sections are reported instead of removed."""
    text = note.text
    path = note.path
    removed: list[dict] = []
    reported: list[dict] = []
    links = note_links(note)
    broken = [link for link in links if resolver.resolve(link.target, path).path is None]
    if not broken:
        return None, removed, reported
    spans = related_spans(text) if any(link.kind != "property" for link in broken) else []

    def section_of(link: Link):
        for start, end in spans:
            if start <= link.start < end:
                return start, end
        return None

    cuts: list[tuple[int, int, str]] = []
    for link in broken:
        row = {"path": path, "line": link.line, "link": _written(link, text)}
        span = section_of(link) if link.kind != "property" else None
        if link.kind == "property":
            reported.append({**row, "reason": "in frontmatter"})
        elif span is None:
            reported.append({**row, "reason": "outside a Related section"})
        elif link.embed:
            reported.append({**row, "reason": "an embed (never removed)"})
        elif not writable:
            reported.append({**row, "reason": "note not written (see skipped)"})
        else:
            others = sum(
                1 for other in links if other is not link and other.kind != "property" and _same_line(text, link, other)
            )
            whole = _whole_item(text, link, others, span[1])
            if whole is not None:
                cuts.append((whole[0], whole[1], ""))
                removed.append({**row, "action": "item", "text": ""})
            else:
                shown = visible_text(link, text)
                cuts.append((link.start, link.end, shown))
                removed.append({**row, "action": "text", "text": shown})
    if not cuts:
        return None, removed, reported
    for start, end, new in sorted(cuts, reverse=True):
        text = text[:start] + new + text[end:]
    return text, removed, reported


def _same_line(text: str, a: Link, b: Link) -> bool:
    low, high = (a, b) if a.start < b.start else (b, a)
    return "\n" not in text[low.end : high.start] if low.end <= high.start else True


def _written(link: Link, text: str) -> str:
    """The link as written in the note (a property link: its ``[[...]]`` form)."""
    if link.start >= 0:
        return text[link.start : link.end]
    inner = link.target + ("#" + link.fragment if link.fragment else "") + ("|" + link.alias if link.alias else "")
    return ("!" if link.embed else "") + "[[" + inner + "]]"


def plan(vault, schema=None, index=None) -> Plan:
    """Plan the cleanup of every note of ``vault`` (see the module docstring).

    ``index`` (a :class:`index.NoteIndex`) tells which notes have a broken
    link without reading the rest; those notes are read again and scanned
    afresh, so the edits hold the bytes on disk now.  Notes outside
    :meth:`vault.Vault.cards` (templates, ``ignore_folders``), notes that
    are not UTF-8 and notes whose frontmatter does not parse are never
    written: their broken Related links are reported.
    """
    from ..read.index import NoteIndex

    index = index if index is not None else NoteIndex(vault)
    resolver = vault.resolver
    cards = set(vault.cards(schema))
    result = Plan()
    index.prefetch(vault.notes)
    for path in vault.notes:
        summary = index.summary(path)
        if summary.unreadable is not None:
            continue
        if all(resolver.resolve(link.target, path).path is not None for link in summary.links):
            continue
        note = vault.note(path, keep=False)
        if note.text is None:
            result.skipped.append({"path": path, "reason": note.error or "unreadable"})
            continue
        block = note.frontmatter
        why = None
        if path not in cards:
            why = "in a templates folder or ignore_folders (never written)"
        elif block is not None and not block.valid:
            why = "frontmatter does not parse (never rewritten; enforce.py --repair)"
        new, removed, reported = plan_note(note, resolver, writable=why is None)
        if why is not None and any(r["reason"] == "note not written (see skipped)" for r in reported):
            result.skipped.append({"path": path, "reason": why})
        result.removed += removed
        result.reported += reported
        if new is not None and new != note.text:
            count = len(removed)
            reason = f"remove {count} broken link{'s' if count != 1 else ''} from Related"
            result.edits.append(Edit(path, note.data, note.encode(new), reason))
    return result
