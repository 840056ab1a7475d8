"""The size of a file as an agent host loads it: lines and bytes, read safely.

An agent host loads an index (``MEMORY.md``) up to a number of lines or
bytes; the guard, check.py, the store doctor and moc.py (which splits a Map
of Content to stay under its caps) all measure alike:

* **Counting** (:func:`count_lines`, :func:`measure`, :func:`measure_file`,
  :func:`loaded_lines`): lines count ``\\n`` only; a last line without
  ``\\n`` counts; CRLF counts once; a lone ``\\r``, U+2028, form feeds and
  the other breaks ``str.splitlines`` knows are not line breaks (BR-35).  A
  UTF-8 BOM at the start is not a line but its 3 bytes count.  Bytes are
  bytes on disk (UTF-8), not characters.
* **Reading** (:func:`open_regular`, :func:`read_regular`): every file is
  opened without blocking and checked to be a regular file before it is
  read, and read up to a limit, so an index or settings file that is a FIFO
  or a device (``/dev/zero``) never hangs the guard or fills memory
  (:class:`NotRegular`, an ``OSError`` whose message says what it is).

Only ``os`` and ``stat``: the guard hook imports this before every write.
"""

from __future__ import annotations

import os
import stat

__all__ = [
    "MEASURE_LIMIT",
    "NotRegular",
    "Size",
    "count_lines",
    "loaded_lines",
    "measure",
    "measure_fd",
    "measure_file",
    "open_regular",
    "read_regular",
]


BOM = b"\xef\xbb\xbf"


# Files larger than this are not sized at all: the guard lets the call
# through and says why, check.py reports the size as too large to count.
MEASURE_LIMIT = 1 << 30


class Size(tuple):
    """``(lines, bytes)`` of a file or text; ``size.lines``, ``size.bytes``."""

    __slots__ = ()

    def __new__(cls, lines: int, nbytes: int):
        return tuple.__new__(cls, (lines, nbytes))

    @property
    def lines(self) -> int:
        return self[0]

    @property
    def bytes(self) -> int:
        return self[1]

    def get(self, dimension: str) -> int:
        """The size in ``"lines"`` or ``"bytes"``."""
        return self[0] if dimension == "lines" else self[1]


def count_lines(data: bytes | str) -> int:
    """Lines as the index loader counts them (BR-35).

    ``data.count("\\n")``, plus one for a last line without ``\\n``; an empty
    file has 0 lines and a trailing newline adds none.  CRLF counts once; a
    lone ``\\r``, U+2028, ``\\x0c`` and ``\\x1c`` are not breaks (so never
    ``str.splitlines``).  A leading UTF-8 BOM is not a line.
    """
    if isinstance(data, str):
        if data.startswith("\ufeff"):
            data = data[1:]
        return data.count("\n") + (0 if not data or data.endswith("\n") else 1)
    if data.startswith(BOM):
        data = data[3:]
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def measure(data: bytes) -> Size:
    """``Size(lines, bytes)`` of file content; bytes include a BOM and CRs."""
    return Size(count_lines(data), len(data))


class NotRegular(OSError):
    """A path that is not a regular file (a FIFO, a device, a socket) or is
    larger than autograph reads; ``strerror`` (and ``str``) say which."""

    def __init__(self, message: str):
        super().__init__(message)
        self.strerror = message


def open_regular(path: str | os.PathLike) -> int:
    """A read-only descriptor of ``path`` (symlinks followed), opened
    without blocking and checked with ``fstat``: a FIFO would block the
    open (or the read) for ever and a device never ends, so anything but a
    regular file raises :class:`NotRegular` naming what it is; a folder
    raises ``IsADirectoryError``.  The caller closes the descriptor."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", os.fspath(path))
        if not stat.S_ISREG(mode):
            from .jsonfile import file_kind  # only here: the guard hook imports no more than it needs

            raise NotRegular(f"is {file_kind(mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _too_large(size: int, limit: int) -> NotRegular:
    return NotRegular(f"is {size:,} bytes, more than the {limit:,} autograph reads")


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), at
    most ``limit`` of them: a larger file (or one that grows past it while
    read) raises :class:`NotRegular`."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise _too_large(size, limit)
        chunks, total = [], 0
        while chunk := os.read(fd, min(max(size + 1, 1 << 16), limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large(total, limit)
    finally:
        os.close(fd)
    return b"".join(chunks)


def measure_fd(fd: int, chunk: int, limit: int) -> Size:
    """``Size`` of the open file ``fd``, read with ``pread`` in ``chunk``
    bytes (its offset is left as it was).  Raises :class:`NotRegular` when
    it holds, or grows while read to, more than ``limit`` bytes."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise _too_large(size, limit)
    lines = total = 0
    last = b""
    first = True
    while True:
        block = os.pread(fd, max(chunk, 3) if first else chunk, total)  # a BOM is never split
        if not block:
            break
        total += len(block)
        if total > limit:  # grown while read
            raise _too_large(total, limit)
        if first and block.startswith(BOM):
            block = block[3:]
        first = False
        if block:
            lines += block.count(b"\n")
            last = block[-1:]
    if last and last != b"\n":
        lines += 1
    return Size(lines, total)


def measure_file(path: str | os.PathLike, chunk: int = 1 << 20, limit: int = MEASURE_LIMIT) -> Size:
    """``Size`` of a file, read in chunks so a planted multi-gigabyte file
    costs time, not memory.  Raises OSError (missing, a folder, unreadable),
    and :class:`NotRegular` for a FIFO, a device or a file over ``limit``
    bytes (never blocks, never reads without end)."""
    fd = open_regular(path)
    try:
        return measure_fd(fd, chunk, limit)
    finally:
        os.close(fd)


def loaded_lines(data: bytes, hard_lines: int, hard_bytes: int) -> int:
    """How many whole lines of ``data`` a host loading the first
    ``hard_lines`` lines or ``hard_bytes`` bytes (whichever comes first) gets."""
    body = data[3:] if data.startswith(BOM) else data
    budget = hard_bytes - (len(data) - len(body))
    count = pos = 0
    while count < hard_lines and pos < len(body):
        end = body.find(b"\n", pos)
        end = len(body) if end < 0 else end + 1
        if end > budget:
            break
        count += 1
        pos = end
    return count
