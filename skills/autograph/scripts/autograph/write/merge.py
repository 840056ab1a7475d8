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
"""

from __future__ import annotations

from .changes import Edit

__all__ = ["edited_on_top", "merge3", "merge_note"]


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
