"""Reading JSON that people and tools write: schema.json, discovery files.

``json.loads`` accepts what autograph must refuse: a key given twice (every
reader keeps only the last, so half of what was written is silently
ignored), and nesting so deep that it ends in a ``RecursionError``
traceback.  :func:`loads` turns both, and invalid JSON, into one
:class:`JSONError` whose message says where and what to do.

:func:`read_text` reads such a file only when it is a regular file of at
most :data:`MAX_BYTES` (a FIFO would block for ever, ``/dev/zero`` would
fill memory), and :func:`dumps` writes JSON text that encodes as UTF-8 even
when a value holds a lone surrogate (a ``"\\ud800"`` escape in a note).
"""

from __future__ import annotations

import json
import os
import re
import stat

__all__ = [
    "MAX_BYTES",
    "PAIRED_SURROGATES",
    "file_kind",
    "JSONError",
    "NotAFile",
    "dumps",
    "dumps_storable",
    "loads",
    "read_bytes",
    "read_stream",
    "read_text",
]

# Two lone surrogates, high then low: written as JSON escapes they read back
# as the one character they pair into, so a cache leaves such values out.
PAIRED_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]")

MAX_BYTES = 64 * 1024 * 1024  # far above any schema or discovery of a real vault


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


class NotAFile(ValueError):
    """The path is not a regular file of at most :data:`MAX_BYTES`; the
    message says what it is (a FIFO, a device, too large)."""


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for a message: ``"a FIFO
    (named pipe)"``, ``"a folder"``, ``"a socket"``, a device, else ``"a
    special file"`` (``mode`` as ``os.stat`` gives it)."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "a special file"


def _too_large(limit: int) -> NotAFile:
    return NotAFile(f"is larger than {limit // (1024 * 1024)} MiB, the most autograph reads of a JSON file")


def read_bytes(path: str | os.PathLike, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file (a symlink to one
    is fine) of at most ``limit`` bytes.

    It is opened without blocking and checked before it is read, so a FIFO
    or a device never hangs the run or fills memory.  Raises
    :class:`NotAFile` for anything else or a larger file,
    ``FileNotFoundError``, ``IsADirectoryError`` and other ``OSError``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", os.fspath(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise _too_large(limit)
        chunks, total, want = [], 0, info.st_size + 1
        while chunk := os.read(fd, want):  # a file that grows while read stops at the limit
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large(limit)
            want = 1 << 20
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text(path: str | os.PathLike, limit: int = MAX_BYTES, encoding: str = "utf-8-sig") -> str:
    """:func:`read_bytes` decoded (a UTF-8 BOM is skipped); also raises
    ``UnicodeDecodeError``."""
    return read_bytes(path, limit).decode(encoding)


def read_stream(stream, limit: int = MAX_BYTES, encoding: str = "utf-8-sig") -> str:
    """The text of a binary ``stream`` (standard input), at most ``limit``
    bytes: an endless input is refused with :class:`NotAFile`."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise _too_large(limit)
    return data.decode(encoding)


def dumps(data, **options) -> str:
    """``json.dumps(data, ensure_ascii=False, **options)`` with every lone
    surrogate written as its ``\\uXXXX`` escape, so the text encodes as
    UTF-8 and reads back as the same strings."""
    text = json.dumps(data, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # a surrogate can only be inside a JSON string, where its escape means it
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def dumps_storable(data, **options) -> str | None:
    """:func:`dumps`, or None when ``data`` holds a lone high surrogate next
    to a lone low one (:data:`PAIRED_SURROGATES`): no JSON text reads back
    as those two, so whoever stores it keeps nothing rather than another
    value."""
    text = json.dumps(data, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        if PAIRED_SURROGATES.search(text):
            return None
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
