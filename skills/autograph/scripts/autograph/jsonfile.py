"""Reading JSON that people and tools write: schema.json, discovery files.

``json.loads`` accepts what autograph must refuse: a key given twice (every
reader keeps only the last, so half of what was written is silently
ignored), and nesting so deep that it ends in a ``RecursionError``
traceback.  :func:`loads` turns both, and invalid JSON, into one
:class:`JSONError` whose message says where and what to do.
"""

from __future__ import annotations

import json
import re

__all__ = ["JSONError", "loads"]


class JSONError(ValueError):
    """The text is not JSON autograph accepts; the message says where."""


class _Duplicate(Exception):
    def __init__(self, key: str):
        self.key = key


def _pairs(pairs: list[tuple[str, object]]) -> dict:
    data: dict = {}
    for key, value in pairs:
        if key in data:
            raise _Duplicate(key)
        data[key] = value
    return data


def loads(text: str):
    """Parse ``text`` as JSON with every object's keys unique.

    Raises :class:`JSONError` for invalid JSON (line and column), a key
    that appears twice in one object (naming the lines of both), or nesting
    deeper than Python can parse.
    """
    try:
        return json.loads(text, object_pairs_hook=_pairs)
    except _Duplicate as dup:
        found = re.finditer(re.escape(json.dumps(dup.key, ensure_ascii=False)) + r"\s*:", text)
        lines = [str(text.count("\n", 0, m.start()) + 1) for m in found]
        where = f" (lines {', '.join(lines)})" if len(lines) > 1 else ""
        raise JSONError(
            f"key {json.dumps(dup.key, ensure_ascii=False)} appears twice in one object{where}; "
            "JSON readers keep only the last, so merge them into one"
        ) from None
    except json.JSONDecodeError as exc:
        raise JSONError(f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise JSONError("nested too deeply to be read (thousands of levels)") from None
