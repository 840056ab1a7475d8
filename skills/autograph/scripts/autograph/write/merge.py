"""The merge of another writer's edit: what a merge keeps, as pure functions of bytes.

An edit and another writer's edit, both made from the same bytes, are merged
only when they changed separate lines (:func:`merge3`, neither overlapping
nor touching) and, for a note, when the result means what both meant
(:func:`merge_note`: the frontmatter parses, the properties are theirs with
our changed keys, a key both changed refuses).  :func:`edited_on_top` finds,
in a file that holds our edit with someone else's on top, their version
without ours (what an undo puts back), only where that is certain.

The store calls these when a write lands during its own (write/replace.py)
and after a run (write/store.py); nothing here touches a file.

:func:`merge_paragraphs` is the paragraph rule of a merge of two copies of
one card (dedup, a sync client's conflict copy): a paragraph the other copy
holds grown by a line replaces the one the card holds, rather than standing
beside it with every line but one repeated.
"""

from __future__ import annotations

import re

from .changes import Edit

__all__ = ["edited_on_top", "merge3", "merge_note", "merge_paragraphs"]


def merge_note(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """:func:`merge3` for a note, kept only when the result means what both
    edits meant: its frontmatter parses (as theirs does), it has one block
    (a second would be body), its properties are theirs with our changed
    keys (a key both changed, or a key written twice, refuses the merge),
    and a body only one side changed is that side's body.  Else None: a
    line merge that is not a note merge (``type`` twice) is a conflict."""
    merged = merge3(base, ours, theirs)
    if merged is None:
        return None
    from ..read import frontmatter
    from ..read.note import Note

    notes = [Note.from_bytes("x.md", data) for data in (base, ours, theirs, merged)]
    if any(note.text is None for note in notes):
        return None
    blocks = [note.frontmatter for note in notes]
    b, o, t, m = blocks
    if any(block is not None and not block.valid for block in (o, t, m)):
        return None
    if (m is not None) != (t is not None or (o is not None and b is None)):
        return None
    props = [block.properties if block is not None else {} for block in blocks]
    pb, po, pt, pm = props
    changed = {k for k in pb.keys() | po.keys() if k not in pb or k not in po or not _same_value(pb[k], po[k])}
    expected = dict(pt)
    for key in changed:
        if key in pt and (key not in pb or not _same_value(pt[key], pb[key])):
            return None  # both changed it
        if key in po:
            expected[key] = po[key]
        else:
            expected.pop(key, None)
    if not _same_value(expected, pm):
        return None
    bodies = [note.body for note in notes]
    if bodies[1] == bodies[0] and bodies[3] != bodies[2]:
        return None
    if bodies[2] == bodies[0] and bodies[3] != bodies[1]:
        return None
    if frontmatter.parse(bodies[3]) is not None and frontmatter.parse(bodies[2]) is None:
        return None  # a second block at the top of the body
    return merged


def _same_value(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def merge3(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """Three-way line merge: ``ours`` and ``theirs`` both made from ``base``.

    Returns the merge when the two changed separate lines (neither overlapping
    nor touching, so each change keeps its context), else None.  Lines keep
    their endings; used to put an edit on top of a concurrent one."""
    import difflib

    base_lines = base.splitlines(keepends=True)

    def hunks(other: bytes) -> list[tuple[int, int, list[bytes]]]:
        lines = other.splitlines(keepends=True)
        matcher = difflib.SequenceMatcher(None, base_lines, lines, autojunk=False)
        return [(i1, i2, lines[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]

    mine, others = hunks(ours), hunks(theirs)
    for a1, a2, _ in mine:
        for b1, b2, _ in others:
            if a1 <= b2 and b1 <= a2:
                return None
    out: list[bytes] = []
    at = 0
    for i1, i2, lines in sorted(mine + others, key=lambda h: (h[0], h[1])):
        out.extend(base_lines[at:i1])
        out.extend(lines)
        at = i2
    out.extend(base_lines[at:])
    return b"".join(out)


def edited_on_top(change, now: bytes | None) -> bytes | None:
    """When ``now`` holds our edit with another writer's on top, their
    version without ours (what an undo puts back; ``b""`` for a file we
    created, which has none); else None (a conflict).

    Two cases are told apart with certainty: lines appended to what we
    wrote (the most common edit on top), and an edit on lines apart from
    ours, with a line of context between (:func:`merge3` both ways: taking
    ours out of ``now``, then putting it back, gives ``now``).  Anything
    closer is a conflict: with repeated lines a line diff can place their
    edit on the wrong line, and an undo must not change a line nobody
    edited."""
    if now is None or not isinstance(change, Edit) or not change.after:
        return None
    before, after = change.before, change.after
    if now.startswith(after):
        if before is None:
            return b""
        tail = now[len(after) :]
        if before and not before.endswith((b"\n", b"\r")) and after.endswith((b"\n", b"\r")):
            before += b"\r\n" if after.endswith(b"\r\n") else after[-1:]  # their line starts a line
        return before + tail
    if before is None or _slides(before, after) or _slides(after, now):
        return None
    theirs = merge3(after, before, now)
    if theirs is None or merge3(before, after, theirs) != now:
        return None
    return theirs


def _slides(old: bytes, new: bytes) -> bool:
    """Whether a change from ``old`` to ``new`` could be placed one line up
    or down (the lines it adds or removes repeat the line beside them, as
    blank lines do): a line diff then picks one place of several, and a
    merge built on it could move an edit to a line its writer never touched."""
    import difflib

    a, b = old.splitlines(True), new.splitlines(True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for lines, start, stop in ((a, i1, i2), (b, j1, j2)):
            if start < stop and (
                (start > 0 and lines[start - 1] == lines[stop - 1])
                or (stop < len(lines) and lines[stop] == lines[start])
            ):
                return True
    return False


def merge_paragraphs(
    have: list[str], content: list[str], have_code: list[bool] | None = None, content_code: list[bool] | None = None
) -> tuple[list[str], list[str], list[bool]]:
    """Fold the paragraphs of ``content`` (lines another copy of a card
    holds) into ``have`` (the lines the card holds in the same place), where
    one is a version of the other.

    Lines keep their line breaks; a paragraph is a run of non-blank lines
    outside code (``have_code`` and ``content_code`` flag the lines in code
    or a comment, found with :func:`read.regions.code_regions` when not
    given; code is never folded).  Lines are compared without line ends and
    trailing spaces.  For each paragraph Q of ``content``, in order:

    * when a paragraph the card holds has every line of Q, in Q's order
      (the same paragraph, or Q is a shorter version): Q is dropped;
    * else, when Q has every line of a paragraph P the card holds, in P's
      order (P grew: a line added at its end, start or middle): P becomes
      P with Q's other lines in Q's order (P's lines as the card wrote them,
      the new ones with P's line break; a list grows at its end), and Q is
      dropped.  A new line the card holds in another paragraph (a list item
      anywhere), or an earlier paragraph of ``content`` that stays holds, is
      not added again; when no new line is left, nothing changes;
    * else Q stays in ``content`` for the caller to place.

    A dropped paragraph goes with the blank lines after it.  Returns
    ``(have, content, content_code)``, new lists: ``have`` keeps every line
    it held, in its order; every line of ``content`` is in one of the two (a
    list item compared without its indent); a paragraph each side holds once
    is in the two together once.  Raises ValueError when a list of code
    flags is not one flag per line.
    """
    have, content = list(have), list(content)
    have_code = list(have_code) if have_code is not None else _code_flags(have)
    content_code = list(content_code) if content_code is not None else _code_flags(content)
    if len(have_code) != len(have) or len(content_code) != len(content):
        raise ValueError("a code flag per line")
    keep = [True] * len(content)
    stays: list[list[str]] = []  # the paragraphs of content kept so far
    for start, end in _paragraphs(content, content_code):
        q = [_key(line) for line in content[start:end]]
        runs = _paragraphs(have, have_code)
        held = [[_key(line) for line in have[a:b]] for a, b in runs]
        if any(_within(q, p) for p in held):
            _drop(keep, content, content_code, start, end)
            continue
        grown = next((n for n, p in enumerate(held) if len(p) < len(q) and _within(p, q)), None)
        if grown is None:
            stays.append(q)
            continue
        a, b = runs[grown]
        elsewhere = {line for n, p in enumerate(held) if n != grown for line in p}
        elsewhere.update(line for p in stays for line in p)  # the caller places these too
        elsewhere |= {line.strip() for line in have if _is_item(line)}  # a list item, however indented
        merged = _grow(have[a:b], content[start:end], elsewhere)
        have[a:b] = merged
        have_code[a:b] = [False] * len(merged)
        _drop(keep, content, content_code, start, end)
    kept = [n for n, k in enumerate(keep) if k]
    return have, [content[n] for n in kept], [content_code[n] for n in kept]


def _key(line: str) -> str:
    return line.rstrip()


_ITEM = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)")


def _is_item(line: str) -> bool:
    return _ITEM.match(line.rstrip("\r\n")) is not None


def _blank(line: str) -> bool:
    return not line.strip()


def _code_flags(lines: list[str]) -> list[bool]:
    """Whether each line starts in code or a comment (as the card's body reads)."""
    from ..read.regions import code_regions, inside

    regions = code_regions("".join(lines))
    starts = [s for s, _ in regions]
    flags, pos = [], 0
    for line in lines:
        flags.append(inside(regions, starts, pos))
        pos += len(line)
    return flags


def _paragraphs(lines: list[str], code: list[bool]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of non-blank lines outside code."""
    runs, n = [], 0
    while n < len(lines):
        if code[n] or _blank(lines[n]):
            n += 1
            continue
        end = n + 1
        while end < len(lines) and not code[end] and not _blank(lines[end]):
            end += 1
        runs.append((n, end))
        n = end
    return runs


def _within(small: list[str], big: list[str]) -> bool:
    """Every line of ``small`` is in ``big``, in the same order."""
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


def _grow(mine: list[str], theirs: list[str], elsewhere: set[str]) -> list[str]:
    """The paragraph ``mine`` with the lines ``theirs`` adds to it, placed as
    in ``theirs`` (``mine`` is a subsequence of ``theirs``); an added line
    already in ``elsewhere`` (another paragraph of the card, or a list item
    it holds) or in ``mine`` itself is left out (a line is held once,
    wherever: a second merge with the same copy then adds nothing).  A list grows at its end: when ``mine`` and the
    added lines are all list items, they follow ``mine`` (the card's items
    first, as a merge joins lists).  Every line ends as ``mine`` ends its
    lines; the last as ``mine``'s last."""
    newline = next((line[len(line.rstrip("\r\n")) :] for line in mine if line.endswith("\n")), "\n")
    ending = mine[-1][len(mine[-1].rstrip("\r\n")) :]
    out, added, at = [], [], 0
    elsewhere = elsewhere | {_key(line) for line in mine}
    for line in theirs:
        if at < len(mine) and _key(line) == _key(mine[at]):
            out.append(mine[at].rstrip("\r\n"))
            at += 1
        elif _key(line) not in elsewhere and not (_is_item(line) and line.strip() in elsewhere):
            out.append(line.rstrip("\r\n"))
            added.append(line)
    if added and all(_is_item(line) for line in mine + added):
        out = [line.rstrip("\r\n") for line in mine] + [line.rstrip("\r\n") for line in added]
    return [line + newline for line in out[:-1]] + [out[-1] + ending]


def _drop(keep: list[bool], lines: list[str], code: list[bool], start: int, end: int) -> None:
    """Mark the paragraph ``lines[start:end]`` and the blank lines after it dropped."""
    while end < len(lines) and not code[end] and _blank(lines[end]):
        end += 1
    keep[start:end] = [False] * (end - start)
