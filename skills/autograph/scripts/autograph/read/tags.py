"""Tags as Obsidian reads them from the ``tags`` property.

Obsidian accepts a list or a single string (comma- or space-separated), drops
a leading ``#`` (``"#gamma"`` is the tag ``gamma``) and ignores empty items;
an unquoted ``- #alpha`` is a YAML comment, so that item is empty (BR-05).
"""

from __future__ import annotations

import re

__all__ = ["normalize"]

_SEPARATORS = re.compile(r"[,\s]+")


def normalize(value) -> list[str]:
    """The tags a ``tags`` value stands for, in order, without duplicates.

    ``None`` -> ``[]``; ``"a, #b c"`` -> ``["a", "b", "c"]``;
    ``[None, "beta", "#gamma"]`` -> ``["beta", "gamma"]``.  Numbers become
    text (``2024`` -> ``"2024"``); nested lists and mappings are ignored.
    """
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            continue
        for part in _SEPARATORS.split(str(item)):
            tag = part.lstrip("#").strip()
            if tag and tag not in found:
                found.append(tag)
    return found
