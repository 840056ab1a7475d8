"""Notes autograph generated: the Maps of Content ``moc.py generate`` writes.

A generated Map of Content carries ``generated_by: autograph`` and ``type:
moc`` in its frontmatter (:func:`is_generated`) and is named as moc.py names
pages, directly in the schema's ``moc.folder`` (:func:`is_page_path`).  The
vault walk leaves such notes out of :meth:`vault.Vault.cards` (they are
rewritten whole, so nothing else may edit them) and health does not count
them as cards; moc.py writes and trashes only them.  A marked note anywhere
else is a person's copy of a map: their own.
"""

from __future__ import annotations

import re

__all__ = ["MARK", "generated_paths", "is_generated", "is_page_path"]


MARK = ("generated_by", "autograph")


def is_generated(properties: dict) -> bool:
    """Whether a note's properties mark it as a generated MOC:
    ``generated_by: autograph`` and ``type: moc``.  A note without both is
    someone's own and is never written over or trashed."""
    by, kind = properties.get(MARK[0]), properties.get("type")
    return by == MARK[1] and isinstance(kind, str) and kind.lower() == "moc"


# the names moc.plan() gives pages: "<group> MOC.md", "<group> MOC (2).md", "<group> MOC 3.md"
_PAGE_NAME = re.compile(r" MOC(?: \(\d+\))?(?: \d+)?\.md$")


def is_page_path(path: str, folder: str) -> bool:
    """Whether vault path ``path`` is named as :func:`moc.plan` names pages in
    ``folder`` (``<group> MOC[ (n)][ k].md`` directly in it).  Only such a
    note, when marked (:func:`is_generated`), is moc.py's own: a marked note
    anywhere else (a person's copy of a map, with their notes in it) is
    never written or trashed."""
    prefix = folder + "/" if folder else ""
    return path.startswith(prefix) and "/" not in path[len(prefix) :] and bool(_PAGE_NAME.search(path))


def generated_paths(vault, schema) -> set[str]:
    """The generated MOCs in ``moc.folder``: notes named as :func:`moc.plan`
    names pages whose frontmatter :func:`is_generated` accepts.  Reads only
    those few notes, so :meth:`vault.Vault.cards` can leave them out."""
    folder = schema.moc["folder"]
    found = set()
    for path in vault.notes:
        if " MOC" in path and is_page_path(path, folder):  # (the test first: 100k notes, 30 ms to 3)
            note = vault.note(path, keep=False)
            if note.text is not None and is_generated(note.properties):
                found.add(path)
    return found
