"""A note on disk: its bytes, encoding, BOM, newline style, frontmatter and body.

A note is read once as bytes.  Text is decoded as strict UTF-8 after an
optional BOM; a file that is not UTF-8 keeps ``text = None`` and an
``error`` saying where decoding failed, and is never rewritten.  Because
strict decoding is lossless, ``note.encode(text)`` of the unchanged text
gives back the original bytes exactly (BOM, CRLF and all).  A note whose
lines all end in a lone CR is read with ``\n`` line ends and written back
with CRs.
"""

from __future__ import annotations

import errno
import os
import stat
from functools import cached_property
from pathlib import Path

from . import frontmatter as fm

BOM = b"\xef\xbb\xbf"

__all__ = ["BOM", "Note", "decode", "read_note"]


def decode(data: bytes) -> tuple[str | None, bool, str | None]:
    """Decode note bytes: ``(text without BOM, had BOM, error message)``.

    Only UTF-8 is accepted (with or without a BOM); anything else returns
    ``text = None`` and a message naming the first bad byte offset.
    """
    bom = data.startswith(BOM)
    try:
        return data[3:].decode("utf-8") if bom else data.decode("utf-8"), bom, None
    except UnicodeDecodeError as exc:
        offset = exc.start + (3 if bom else 0)
        return None, bom, f"not valid UTF-8 (byte 0x{data[offset]:02x} at offset {offset}); the file is never rewritten"


class Note:
    """One Markdown note of a vault.

    ``path`` is vault-relative with ``/``.  ``text`` excludes the BOM and
    keeps line endings as they are.  ``frontmatter`` is None when the note
    has no block; ``properties`` is ``{}`` when it has none or it is invalid.
    ``cr``: lone CR line endings (classic Mac), which ``text`` holds as
    ``\n``.  ``stamp``: ``(size, mtime_ns, ctime_ns)`` as read (read_note's
    fstat).  Two notes are equal only when they are one object.
    """

    # a plain class: dataclasses imports inspect, about 12 ms of the start
    # of a command that reads notes (a search index built from nothing)
    def __init__(
        self,
        path: str,
        data: bytes,
        text: str | None,
        bom: bool,
        error: str | None = None,
        cr: bool = False,
        stamp: tuple[int, int, int] | None = None,
    ):
        self.path, self.data, self.text, self.bom = path, data, text, bom
        self.error, self.cr, self.stamp = error, cr, stamp

    def __repr__(self) -> str:
        return f"Note(path={self.path!r}, bytes={len(self.data)}, error={self.error!r})"

    @classmethod
    def from_bytes(cls, path: str, data: bytes) -> Note:
        text, bom, error = decode(data)
        cr = text is not None and "\r" in text and "\n" not in text
        if cr:
            # One line-ending style, read as Obsidian reads it (a line per CR),
            # so its frontmatter is found and it never gets a second block;
            # encode() turns the line ends back into CRs, byte for byte.
            text = text.replace("\r", "\n")
        return cls(path, data, text, bom, error, cr)

    @cached_property
    def frontmatter(self) -> fm.Frontmatter | None:
        return fm.parse(self.text) if self.text is not None else None

    @property
    def properties(self) -> dict:
        block = self.frontmatter
        return block.properties if block is not None else {}

    @property
    def body_offset(self) -> int:
        """Offset in ``text`` where the body starts: after the frontmatter
        block, valid or not (0 when there is none)."""
        block = self.frontmatter
        return block.body if block is not None else 0

    @property
    def body(self) -> str:
        """Text after the frontmatter block (the Markdown a reader sees)."""
        return (self.text or "")[self.body_offset :]

    @property
    def body_line(self) -> int:
        """1-based file line number of the body's first line."""
        return (self.text or "").count("\n", 0, self.body_offset) + 1

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.endswith(".md") else name

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def newline(self) -> str:
        text = self.text or ""
        nl = text.find("\n")
        return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"

    def encode(self, text: str) -> bytes:
        """The file bytes for ``text``, keeping this note's BOM and, in a note
        whose lines end in a lone CR, that line-ending style."""
        if self.cr:
            text = text.replace("\r\n", "\r").replace("\n", "\r")
        return (BOM if self.bom else b"") + text.encode("utf-8")

    @property
    def unwritable(self) -> str | None:
        """Why autograph never rewrites this note, or None: it was not read
        or is not UTF-8 (:attr:`error`), or its frontmatter does not parse
        (DESIGN 3: reported, not rewritten, but by an explicit repair)."""
        if self.text is None:
            return self.error or "unreadable"
        block = self.frontmatter
        if block is not None and not block.valid:
            return "frontmatter does not parse (never rewritten; enforce.py --repair)"
        return None

    def with_property(self, key: str, value) -> bytes:
        """File bytes with one property set (see :func:`frontmatter.set_property`).

        Raises :class:`frontmatter.FrontmatterError` for invalid frontmatter and
        ValueError for a file that is not UTF-8.
        """
        return self.encode(fm.set_property(self._editable_text(), key, value))

    def without_property(self, key: str) -> bytes:
        """File bytes with one property removed (unchanged if absent)."""
        return self.encode(fm.delete_property(self._editable_text(), key))

    def _editable_text(self) -> str:
        if self.text is None:
            raise ValueError(f"{self.path}: {self.error}")
        return self.text


def read_note(root: Path | str, path: str, limit: int | None = None) -> Note:
    """Read the note at vault-relative ``path`` under ``root``.

    Raises OSError when it cannot be read, or is not a regular file (a FIFO
    put in its place after the walk would otherwise block the read).  A
    note larger than ``limit`` bytes comes back unread, with ``text = None``
    and an ``error`` saying so."""
    # os.read on the descriptor, not a file object: a vault-wide pass reads
    # thousands of notes, and the buffered reader costs as much as the read
    fd = os.open(os.path.join(root, path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        stamp = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if limit is not None and info.st_size > limit:
            return Note(path, b"", None, False, f"larger than {limit:,} bytes; not read", stamp=stamp)
        data = os.read(fd, info.st_size + 1)
        if data:  # until end of file: it may have grown since fstat
            chunks = [data]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)
    note = Note.from_bytes(path, data)
    note.stamp = stamp
    return note
