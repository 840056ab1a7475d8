"""The memory store: an index of pointers plus one note per fact; doctor's checks.

A store is a folder holding the index (``MEMORY.md``, always loaded by the
agent host, so bounded by the caps of :mod:`caps`) and one Markdown note per
fact, in one of two formats:

- Claude Code's current one: frontmatter ``name`` (a short kebab-case slug,
  the name other notes link to as ``[[name]]``), ``description`` and a
  ``metadata`` mapping holding ``type``; no dates.  A note is in this format
  when its frontmatter has a ``metadata`` mapping and no top-level ``type``
  (:func:`note_format`).
- the older one (autograph's, and earlier Claude Code versions'):
  ``name``, ``description``, a top-level ``type``, ``created`` and
  ``updated``.

The types are ``user``, ``feedback``, ``project``, ``reference`` by default.
Retired notes live in ``archive/`` and need no pointer.  Where the store is
and which types it has come from the schema's ``memory`` key
(:attr:`model.Schema.memory`).  A folder is a store when it holds the index
(any letter case, or a symlink named like it) or, without one, when at least
half of its live notes (and at least one) carry memory frontmatter: a
``name``, a ``description`` and a ``type`` (or ``metadata.type``) of the
store's types.

:func:`doctor` reads a store and returns every problem, each reported once
with a ``kind`` (:data:`ISSUES`, :data:`WARNINGS`), the store-relative
``path``, a 1-based ``line`` (or None) and a message saying what to do; and,
as :data:`INFO` (never a problem), the ``[[name]]`` links of notes in Claude
Code's format that name no memory yet: Claude Code asks for them, as marks
of memories worth writing later.

Secrets: every text file of the store is scanned (notes that are not UTF-8
too, decoded with replacement), and a secret is named by file, line and kind
only.  Every finding's message passes through :func:`redact`, so no quoted
fragment (an index line, a type, a date, a name, a pointer) can print one.

Pointers and links resolve as the host's file system opens them: exact
letter case where the file system is case-sensitive, a symlink inside the
store followed, one out of it refused.  A ``[[name]]`` in a note that opens
no file resolves by the ``name:`` of a note (compared as slugs: letter case,
spaces, ``_`` and ``-`` alike) when the linking note or the named one is in
Claude Code's format; two notes of the older format never connect by name,
so a store of the older format reads exactly as before.  Files are read as streams in blocks,
so a runaway index costs time in proportion to its size and constant memory;
at most :data:`MAX_LISTED` findings of one kind are listed per file (the
rest are counted).
"""

from __future__ import annotations

import codecs
import datetime
import io
import os
import posixpath
import re
import stat
import unicodedata
from pathlib import Path
from urllib.parse import unquote

from ..read.index import note_links
from ..read.note import Note
from ..read.secrets import SecretScan as _SecretScan
from ..read.secrets import find_secrets, pieces, redact
from ..read.vault import Vault, VaultError
from . import caps as capsmod

__all__ = [
    "INFO",
    "ISSUES",
    "MAX_INDEX_LINE",
    "MAX_LISTED",
    "WARNINGS",
    "NotAStore",
    "check_note",
    "doctor",
    "find_secrets",
    "index_files",
    "index_lines",
    "locate_store",
    "note_format",
    "redact",
]

# kind -> what to do about it (the human report prints it once per kind)
ISSUES = {
    "index-missing": "create the index (init.py, or copy assets/MEMORY.md into the store)",
    "index-unreadable": "make the index a readable UTF-8 file",
    "index-outside": "make the index a file inside the store, not a symlink to a file outside it",
    "index-over-cap": (
        "compact to under its target: one short pointer per note, detail in notes, retired entries archived"
    ),
    "index-content": "move text out of the index into a note, and point to that note in one short line",
    "broken-pointer": "fix the pointer's file name (letter case counts), or remove the line",
    "pointer-outside": "point only at notes inside the store",
    "unreachable": "add a pointer line for the note to the index, link it from a note that has one, or archive it",
    "unreadable": "save the note as UTF-8 text",
    "frontmatter": "start the note with frontmatter: name, description, metadata.type (or type, created, updated)",
    "missing-field": "fill in the field",
    "bad-type": "use one of the store's types",
    "name-mismatch": "make name the file's name without .md (or rename the file); a name with spaces is a title",
    "bad-date": "write dates as YYYY-MM-DD, with updated not before created",
    "missing-label": "add the labelled line (e.g. 'Why: ...') to the note's body",
    "secret": "delete the value; note only where it is kept (e.g. 'in the team password manager')",
}
WARNINGS = {
    "index-soft-cap": "compact it to under its target (index.target_lines, index.target_bytes)",
    "duplicate-pointer": "keep one pointer per note",
    "skipped": "check the store's files",
}
# Findings that are no problem at all (reported, exit code unaffected)
INFO = {
    "unwritten-link": "nothing to fix: a [[name]] that names no memory yet marks one worth writing later",
}

# An index line longer than this is content, not a pointer; Claude Code's
# own advice is one line of under ~150 characters per entry.
MAX_INDEX_LINE = 200

# At most this many findings of one kind are listed per file; the rest are
# counted (``counts``, ``omitted``), so a runaway file costs constant memory.
MAX_LISTED = 100

# A file with a NUL byte in its first this many bytes is binary, not scanned.
_SNIFF = 8192


class NotAStore(VaultError):
    """The folder is not a memory store (no index, no memory notes)."""


def _finding(kind: str, path: str, line: int | None, message: str) -> dict:
    """One finding; its message is redacted (:func:`redact`), whatever it quotes."""
    return {"kind": kind, "path": path, "line": line, "message": redact(message)}


def _quote(text: str, limit: int = 60) -> str:
    """A fragment of store text, redacted, quoted and bounded, for a message.
    Redaction runs before the cut, so a cut never leaves part of a secret."""
    text = redact(text.strip()[:4096])
    return repr(text if len(text) <= limit else text[:limit] + "...")


# Secrets: the detector is read/secrets.py, shared with the index, card.py,
# daily.py, enrich.py and orchestrate.py; the doctor streams files through it.

# Files are read in blocks of this many bytes (a line longer than a block is
# read in parts; a secret across two parts is still found).
_BLOCK = 1 << 20


def _pieces(handle, block: int | None = None):
    """:func:`secrets.pieces` in blocks of :data:`_BLOCK` bytes."""
    return pieces(handle, block or _BLOCK)


# ---------------------------------------------------------------------------
# The index

_POINTER = re.compile(
    r"""^[ \t]{0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+
    (?:\[(?P<title>(?:[^\[\]\\\n]|\\.|\[[^\[\]\n]*\])*)\]
        \((?P<dest><[^<>\n]*>|[^\s()<>]+)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'))?[ \t]*\)
     |\[\[(?P<wiki>[^\[\]\n]+)\]\])
    (?P<rest>.*)$""",
    re.X,
)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_RULE = re.compile(r"^[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"(?:---|\.\.\.)[ \t]*\r?")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_REMOTE = {"http", "https", "mailto", "ftp", "ftps", "tel"}
# A frontmatter block at the top of the index that is not closed within
# this many lines or characters is not one: its lines are read as the body.
_FRONTMATTER_LINES = 1000
_FRONTMATTER_CHARS = 1 << 16
# Of a line longer than this, only the start is kept for classifying it.
_LINE_HEAD = 1 << 16


class IndexLine:
    """One line of the index body: ``kind`` is ``"pointer"`` (then
    ``target`` is the link as written and ``wiki`` says which form) or
    ``"content"``; blank lines, headings, rules and comments are skipped.
    ``length`` is the line's length in characters (``text`` may hold only
    the start of an enormous line)."""

    __slots__ = ("line", "kind", "text", "target", "wiki", "length")

    def __init__(self, line: int, kind: str, text: str, target: str = "", wiki: bool = False, length: int = -1):
        self.line, self.kind, self.text, self.target, self.wiki = line, kind, text, target, wiki
        self.length = len(text) if length < 0 else length


class _IndexLines:
    """Classifies the lines of an index fed one at a time, in order
    (:func:`index_lines` on a whole text, or a stream): a frontmatter block
    at the top and ``<!-- comments -->`` (across lines too) are skipped."""

    def __init__(self) -> None:
        self.state = "first"  # first -> frontmatter (a block may be open) -> body
        self.held: list[tuple[int, str, int]] = []
        self.held_chars = 0
        self.comment = False

    def feed(self, number: int, text: str, length: int) -> list[IndexLine]:
        if self.state == "body":
            return self._body(number, text, length)
        if self.state == "first":
            self.state = "body"
            head = text[3:-1] if text.endswith("\r") else text[3:]
            if text.startswith("---") and not head.strip(" \t"):
                self.state = "frontmatter"
                self.held = [(number, text, length)]
                return []
            return self._body(number, text, length)
        if _FENCE.fullmatch(text):  # the block closes: the body starts on the next line
            self.state, self.held = "body", []
            return []
        self.held.append((number, text, length))
        self.held_chars += len(text)
        if len(self.held) > _FRONTMATTER_LINES or self.held_chars > _FRONTMATTER_CHARS:
            return self._release()
        return []

    def close(self) -> list[IndexLine]:
        """Lines still held at the end: a block that never closed is body."""
        return self._release() if self.state == "frontmatter" else []

    def _release(self) -> list[IndexLine]:
        self.state = "body"
        held, self.held = self.held, []
        return [item for args in held for item in self._body(*args)]

    def _uncomment(self, text: str) -> str:
        """``text`` with the parts inside ``<!-- -->`` blanked out."""
        out, pos = [], 0
        while pos < len(text):
            if self.comment:
                end = text.find("-->", pos)
                if end < 0:
                    out.append(" " * (len(text) - pos))
                    break
                out.append(" " * (end + 3 - pos))
                pos = end + 3
                self.comment = False
            else:
                begin = text.find("<!--", pos)
                if begin < 0:
                    out.append(text[pos:])
                    break
                out += [text[pos:begin], "    "]
                pos = begin + 4
                self.comment = True
        return "".join(out)

    def _body(self, number: int, text: str, length: int) -> list[IndexLine]:
        if self.comment or "<!--" in text:
            text = self._uncomment(text)
        line = text.rstrip("\r") if text.endswith("\r") else text
        length -= len(text) - len(line)
        match = _POINTER.match(line)  # a pointer is never blank, a heading or a rule
        if match is not None:
            wiki = match.group("wiki")
            if wiki is not None:
                return [IndexLine(number, "pointer", line, wiki, True, length)]
            return [IndexLine(number, "pointer", line, match.group("dest"), False, length)]
        if not line.strip() or _HEADING.match(line) or _RULE.match(line):
            return []
        return [IndexLine(number, "content", line, "", False, length)]


def index_lines(text: str) -> list[IndexLine]:
    """Classify the lines of an index (``text`` without BOM): pointers
    ``- [Title](note.md) — hook`` or ``- [[note]] — hook`` (any list marker,
    numbered too), and content (anything else but blank lines, headings,
    thematic breaks, ``<!-- comments -->`` and a frontmatter block)."""
    reader = _IndexLines()
    out: list[IndexLine] = []
    for number, line in enumerate(text.split("\n"), 1):
        out += reader.feed(number, line, len(line))
    return out + reader.close()


class _Opener:
    """Store-relative paths opened as the host's file system opens them:
    exact letter case (and Unicode form) where the file system is
    case-sensitive, a symlink inside the store followed to its note, one
    out of the store refused."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.root = str(vault.root)
        self.real = os.path.realpath(self.root)
        self.files = set(vault.files)
        self._inodes: dict[tuple[int, int], str] | None = None

    def inside(self, real: str) -> bool:
        return real == self.real or real.startswith(self.real.rstrip(os.sep) + os.sep)

    def by_inode(self, full: str) -> str | None:
        """The store path of the file ``full`` opens (through a symlink, or
        another letter case on a case-insensitive file system)."""
        try:
            info = os.stat(full)
        except (OSError, ValueError):
            return None
        if self._inodes is None:
            self._inodes = {}
            for path in self.vault.files:
                try:
                    other = os.stat(os.path.join(self.root, path))
                except (OSError, ValueError):
                    continue
                self._inodes.setdefault((other.st_dev, other.st_ino), path)
        return self._inodes.get((info.st_dev, info.st_ino))

    def open(self, rel: str) -> tuple[str, str | None]:
        """``("note", store path)``, ``("outside", None)`` (a symlink out of
        the store) or ``("missing", None)`` for store-relative ``rel``."""
        if rel in self.files:
            return "note", rel
        full = os.path.join(self.root, rel)
        try:
            info = os.stat(full)
        except (OSError, ValueError):
            return "missing", None
        if not stat.S_ISREG(info.st_mode):
            return "missing", None
        if not self.inside(os.path.realpath(full)):
            return "outside", None
        path = self.by_inode(full)
        return ("note", path) if path else ("missing", None)

    @staticmethod
    def _join(source: str, path: str) -> str | None:
        """``path`` joined to ``source``'s folder; None when it leaves the store."""
        norm = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
        return None if norm == ".." or norm.startswith("../") or norm.startswith("/") else norm

    def markdown(self, dest: str, source: str, written: bool = False) -> tuple[str, str | None]:
        """Where a Markdown link written in ``source`` leads: ``"note"``,
        ``"remote"`` (a web or mail address), ``"outside"`` or
        ``"missing"``.  ``dest`` is the path part, already decoded, unless
        ``written`` (then ``#``/``?`` parts are dropped and ``%`` decoded)."""
        scheme = _SCHEME.match(dest)
        if scheme and len(scheme.group(1)) > 1:
            return ("remote", None) if scheme.group(1).lower() in _REMOTE else ("outside", None)
        path = dest
        if written:
            path = unquote(path.split("#", 1)[0].split("?", 1)[0])
        path = path.replace("\\", "/")
        if not path:
            return "note", source  # a link to a heading of the same file
        if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
            return "outside", None
        norm = self._join(source, path)
        if norm is None:
            return "outside", None
        for candidate in (norm, norm + ".md"):
            status, found = self.open(candidate)
            if status != "missing":
                return status, found
        return "missing", None

    def wiki(self, target: str, source: str) -> tuple[str, str | None]:
        """Where ``[[target]]`` written in ``source`` leads: the file the
        name opens next to ``source`` (``.md`` optional), else the note
        Obsidian finds by that name anywhere in the store, when the name is
        spelled exactly as that file is."""
        name = target.split("|", 1)[0].split("#", 1)[0].strip().replace("\\", "/")
        if not name:
            return "note", source
        norm = self._join(source, name.lstrip("/") if name.startswith("/") else name)
        if norm is None:
            return "outside", None
        for candidate in (norm,) if norm.lower().endswith(".md") else (norm + ".md", norm):
            status, found = self.open(candidate)
            if status != "missing":
                return status, found
        found = self.vault.resolver.resolve(name, source).path
        if found and any(found == spelled or found.endswith("/" + spelled) for spelled in (name, name + ".md")):
            return "note", found
        return "missing", None

    def pointer(self, item: IndexLine, index: str) -> tuple[str, str | None]:
        """Where an index pointer leads (see :meth:`markdown`)."""
        if item.wiki:
            return self.wiki(item.target, index)
        dest = item.target[1:-1] if item.target.startswith("<") else item.target
        return self.markdown(dest, index, written=True)

    def link(self, link, source: str) -> tuple[str, str | None]:
        """Where a link of a note (:func:`index.note_links`) leads."""
        if link.kind == "markdown":
            return self.markdown(link.target, source) if link.target else ("note", source)
        return self.wiki(link.target, source)


# ---------------------------------------------------------------------------
# Notes

_DATE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?"
)


def _date(value) -> tuple | None:
    """A sortable ``(date, time)`` for ``YYYY-MM-DD`` (optionally with an ISO
    time), or None when the value is not a real calendar date."""
    if not isinstance(value, str):
        return None
    match = _DATE.fullmatch(value.strip())
    if match is None:
        return None
    y, mo, d, h, mi, s = (int(g) if g else 0 for g in match.groups())
    try:
        return datetime.date(y, mo, d), datetime.time(h, mi, s)
    except ValueError:
        return None


def _slug(text: str) -> str:
    return re.sub(r"[\W_]+", "-", unicodedata.normalize("NFKC", text).casefold()).strip("-")


def _stem(path: str) -> str:
    """The file name without ``.md`` (in any letter case: ``Note.MD``)."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _is_title(name: str) -> bool:
    """A ``name`` with spaces is a short title (Claude Code writes
    ``name: Git workflow`` in ``feedback_git_workflow.md``), not a file name."""
    return any(c.isspace() for c in name.strip())


def _name_matches(name: str, stem: str, types) -> bool:
    """``name`` is the file's name: compared case-insensitively with spaces,
    ``_`` and ``-`` alike; a type prefix on the file (``feedback_x.md`` for
    ``name: x``, as Claude Code writes) is allowed."""
    want, have = _slug(name), _slug(stem)
    return want == have or any(have == f"{_slug(kind)}-{want}" for kind in types)


def _label_pattern(label: str) -> re.Pattern:
    words = r"[ \t]+".join(re.escape(word) for word in label.split())
    return re.compile(
        r"(?im)^[ \t]*(?:>[ \t]*)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?:#{1,6}[ \t]+)?(?:\*\*|__|\*|_)?[ \t]*"
        + words
        + r"[ \t]*(?:\*\*|__|\*|_)?[ \t]*[:：]"
    )


def _has_label(body: str, label: str) -> bool:
    """Whether ``body`` has a line labelled ``label:`` (``Why:``, ``**Why:**``,
    ``- How to apply:``, ``## Why:``), outside code and comments."""
    from ..read.regions import code_regions

    pattern = _label_pattern(label)
    regions = None
    for match in pattern.finditer(body):
        if regions is None:
            regions = code_regions(body)
        if not any(start <= match.start() < end for start, end in regions):
            return True
    return False


def _empty(value) -> bool:
    return value is None or (
        isinstance(value, (str, list, dict)) and not (value.strip() if isinstance(value, str) else value)
    )


# Claude Code's current format: what its system prompt asks each field to hold
_CLAUDE_FIELDS = {
    "name": "name: <short-kebab-case-slug>",
    "description": "description: <one-line summary, used to decide relevance during recall>",
}
# Fields the older format requires and Claude Code's current one does not have
# (its type is metadata.type; it writes no dates)
_OLDER_ONLY = ("type", "created", "updated")


def note_format(props: dict) -> str:
    """Which of the two memory note formats ``props`` (a note's parsed
    frontmatter) are in: ``"metadata"``, Claude Code's current format (a
    ``metadata`` mapping, which holds the ``type``, and no top-level
    ``type``), or ``"type"``, the older format (a top-level ``type`` and the
    dates ``created`` and ``updated``).  Anything else, no frontmatter too,
    is ``"type"``: it is checked as the older format always was."""
    return "metadata" if "type" not in props and isinstance(props.get("metadata"), dict) else "type"


def _type_of(props: dict):
    """A note's type as written: ``metadata.type`` in Claude Code's current
    format, the top-level ``type`` in the older one (None when absent)."""
    return props["metadata"].get("type") if note_format(props) == "metadata" else props.get("type")


def _child_line(note: Note, block, key: str, child: str) -> int | None:
    """The 1-based line of ``child:`` in the block mapping under the
    top-level ``key`` (the key's own line for a flow mapping, or when
    ``child`` is not there); None when ``key`` has no line."""
    entry = next((e for e in block.entries if e.key == key), None)
    if entry is None:
        return None
    lines = note.text[block.start : block.end].split("\n")
    pattern = re.compile(rf"""([ \t]+)["']?{re.escape(child)}["']?[ \t]*:""")
    indent = None
    for i in range(entry.start + 1, min(entry.end, len(lines))):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if indent is None:  # the first child sets the mapping's indent
            indent = len(line) - len(line.lstrip(" \t"))
        match = pattern.match(line)
        if match and len(match.group(1)) == indent:
            return i + 2
    return entry.start + 2


def _date_findings(path: str, props: dict, line_of: dict) -> list[dict]:
    """``bad-date`` findings for the ``created`` and ``updated`` a note has:
    not a real date, or updated before created (a missing date is no finding
    here)."""
    out = []
    dates = {}
    for field in ("created", "updated"):
        value = props.get(field)
        if _empty(value):
            continue
        parsed = _date(value)
        if parsed is None:
            out.append(
                _finding(
                    "bad-date",
                    path,
                    line_of.get(field),
                    f"{field} {_quote(str(value))} is not a real date (YYYY-MM-DD)",
                )
            )
        else:
            dates[field] = parsed
    if len(dates) == 2 and dates["updated"] < dates["created"]:
        out.append(
            _finding(
                "bad-date",
                path,
                line_of.get("updated"),
                f"updated {dates['updated'][0]} is before created {dates['created'][0]}",
            )
        )
    return out


def _label_findings(note: Note, kind: str, types: dict) -> list[dict]:
    """``missing-label`` findings: the labelled lines type ``kind`` asks for
    that the note's body lacks."""
    body = note.body
    return [
        _finding("missing-label", note.path, None, f"{kind} notes need a line '{label}: ...' in the body; none found")
        for label in types[kind]["labels"]
        if not _has_label(body, label)
    ]


def _bad_type(path: str, line: int | None, field: str, kind, types: dict) -> dict:
    """The ``bad-type`` finding for ``field`` (``type`` or ``metadata.type``)
    holding ``kind``, which is not one of ``types``: the allowed values, and
    the right spelling when only the letter case is wrong."""
    names = ", ".join(types)
    hint = f"; write it as {kind.lower()!r}" if isinstance(kind, str) and kind.lower() in types else ""
    message = f"{field} {_quote(str(kind))} is not one of the store's types ({names}){hint}"
    return _finding("bad-type", path, line, message)


def check_note(note: Note, types: dict) -> list[dict]:
    """Problems of one memory note, as a list of ``{"kind", "path", "line",
    "message"}`` (:data:`ISSUES` kinds; ``line`` 1-based or None).

    ``types`` maps type names to ``{"required", "labels"}``
    (:attr:`Schema.memory` ``["types"]``).  A note without a valid
    frontmatter block gets that one finding and no field findings.  Which
    fields are checked depends on the note's format (:func:`note_format`):

    - Claude Code's current format: ``metadata.type`` is one of ``types``;
      ``name`` and ``description`` are required (and any field the type
      requires beyond the older format's own), the dates are not; a
      ``name`` is the slug other notes link to, not the file's name, so it
      need not match the file name.
    - the older format: every field the type requires (by default name,
      description, type, created, updated); a top-level ``type`` of
      ``types``; a name without spaces must be the file's name (a name
      with spaces is a title).

    In both, dates present must be real (``YYYY-MM-DD``, an ISO time
    allowed) with ``updated`` not before ``created``, and a known type's
    labelled lines (``Why:``, ``How to apply:``) must be in the body.
    """
    path = note.path
    block = note.frontmatter
    if block is None:
        return [
            _finding(
                "frontmatter",
                path,
                1,
                "no frontmatter block: the note must start with '---', then name, description and "
                "'metadata:' holding 'type:' (Claude Code's format; or type, created, updated), then '---'",
            )
        ]
    if not block.valid:
        error = block.error
        return [
            _finding(
                "frontmatter",
                path,
                error.line,
                f"frontmatter does not parse: {error.reason} (column {error.column}); fix it there",
            )
        ]
    if note_format(block.properties) == "metadata":
        return _check_metadata_note(note, types)
    props = block.properties
    line_of = {entry.key: entry.start + 2 for entry in block.entries}
    kind = props.get("type")
    known = isinstance(kind, str) and kind in types
    if known:
        required = types[kind]["required"]
    else:
        required = list(dict.fromkeys(field for spec in types.values() for field in spec["required"]))
    out: list[dict] = []
    for field in required:
        value = props.get(field)
        if _empty(value):
            what = "is empty" if field in props else "is missing"
            out.append(_finding("missing-field", path, line_of.get(field, 1), f"{field} {what}"))
    if not _empty(kind) and not known:
        out.append(_bad_type(path, line_of.get("type"), "type", kind, types))
    description = props.get("description")
    if not _empty(description) and not isinstance(description, str):
        out.append(_finding("missing-field", path, line_of.get("description"), "description is not one line of text"))
    name = props.get("name")
    stem = _stem(path)
    if not _empty(name) and not _is_title(str(name)) and not _name_matches(str(name), stem, types):
        out.append(
            _finding(
                "name-mismatch",
                path,
                line_of.get("name"),
                f"name {_quote(str(name))} does not match the file name {_quote(stem)}",
            )
        )
    out += _date_findings(path, props, line_of)
    if known:
        out += _label_findings(note, kind, types)
    return out


def _check_metadata_note(note: Note, types: dict) -> list[dict]:
    """:func:`check_note` for a note in Claude Code's current format."""
    path = note.path
    block = note.frontmatter
    props = block.properties
    line_of = {entry.key: entry.start + 2 for entry in block.entries}
    metadata = props["metadata"]
    kind = metadata.get("type")
    known = isinstance(kind, str) and kind in types
    specs = [types[kind]] if known else list(types.values())
    extra = [field for spec in specs for field in spec["required"] if field not in (*_OLDER_ONLY, *_CLAUDE_FIELDS)]
    out: list[dict] = []
    for field in dict.fromkeys([*_CLAUDE_FIELDS, *extra]):
        value = props.get(field)
        if not _empty(value):
            if isinstance(value, (list, dict)) or (field == "description" and not isinstance(value, str)):
                out.append(_finding("missing-field", path, line_of.get(field), f"{field} is not one line of text"))
            continue
        what = "is empty" if field in props else "is missing"
        if field in _CLAUDE_FIELDS:
            what += f": {'write' if field in props else 'add'} '{_CLAUDE_FIELDS[field]}' to the frontmatter"
            if field == "name":
                what += " (the name other memories link to as [[name]])"
        out.append(_finding("missing-field", path, line_of.get(field, 1), f"{field} {what}"))
    type_line = _child_line(note, block, "metadata", "type")
    if _empty(kind):
        what = "is empty: write" if "type" in metadata else "is missing: add"
        out.append(
            _finding(
                "missing-field",
                path,
                type_line,
                f"metadata.type {what} 'type: <{' | '.join(types)}>', indented under 'metadata:'",
            )
        )
    elif not known:
        out.append(_bad_type(path, type_line, "metadata.type", kind, types))
    out += _date_findings(path, props, line_of)
    if known:
        out += _label_findings(note, kind, types)
    return out


# ---------------------------------------------------------------------------
# The store


def locate_store(folder: str | os.PathLike, memory: dict) -> Path:
    """The store for ``folder``: ``folder/<memory.folder>`` when that folder
    exists (``folder`` is a vault or project holding a store), else
    ``folder`` itself (it is the store, as Claude Code's memory folder is)."""
    root = Path(folder)
    sub = memory.get("folder") or ""
    if sub and (root / sub).is_dir():
        return root / sub
    return root


def _archived(path: str, archive: str) -> bool:
    return bool(archive) and (path.casefold() + "/").startswith(archive.casefold() + "/")


class _Findings:
    """Findings as they are found: at most :data:`MAX_LISTED` of one kind
    per file are kept (a message is built only for those), the rest counted."""

    def __init__(self) -> None:
        self.issues: list[dict] = []
        self.warnings: list[dict] = []
        self.info: list[dict] = []
        self.total: dict[str, int] = {}
        self.omitted: dict[str, int] = {}
        self._listed: dict[tuple[str, str], int] = {}

    def add(self, kind: str, path: str, line: int | None, message) -> None:
        """Record a finding; ``message`` is text or a function making it."""
        self.total[kind] = self.total.get(kind, 0) + 1
        listed = self._listed.get((path, kind), 0)
        if listed >= MAX_LISTED:
            self.omitted[kind] = self.omitted.get(kind, 0) + 1
            return
        self._listed[(path, kind)] = listed + 1
        text = message() if callable(message) else message
        where = self.warnings if kind in WARNINGS else self.info if kind in INFO else self.issues
        where.append(_finding(kind, path, line, text))

    def extend(self, other: _Findings) -> None:
        for finding in other.issues + other.warnings + other.info:
            self.add(finding["kind"], finding["path"], finding["line"], finding["message"])
        for kind, number in other.omitted.items():
            self.total[kind] = self.total.get(kind, 0) + number
            self.omitted[kind] = self.omitted.get(kind, 0) + number


def _memory_note(props: dict, types: dict) -> bool:
    """Whether properties are a memory note's: a name, a description and a
    type of the store's (in any letter case), top-level or, in Claude Code's
    current format, ``metadata.type``."""
    kind = _type_of(props)
    return (
        isinstance(kind, str)
        and kind.strip().lower() in {t.lower() for t in types}
        and not _empty(props.get("name"))
        and not _empty(props.get("description"))
    )


def _require_store(vault: Vault, live: list[str], index: str, types: dict) -> None:
    """Raise :class:`NotAStore` unless at least half of the ``live`` notes
    (and at least one) carry memory frontmatter.  Stops reading notes as
    soon as the answer is known."""
    yes = no = 0
    for path in live:
        if _memory_note(vault.note(path).properties, types):
            yes += 1
        else:
            no += 1
        if yes * 2 >= len(live) or no * 2 > len(live):
            break
    if yes and yes * 2 >= len(live):
        return
    kinds = "|".join(types)
    held = (
        f"fewer than half of its {len(live)} notes carry memory frontmatter "
        f"(name, description, type or metadata.type: {kinds})"
        if live
        else "it holds no notes"
    )
    raise NotAStore(
        f"{vault.root} is not a memory store: there is no {index} and {held}; give the store's folder "
        f'(where {index} is), name it in schema.json as "memory.folder", or create one with init.py'
    )


def _open_regular(full: str):
    """A binary file object for ``full``, or OSError when it is not a
    regular file (a FIFO is never waited on)."""
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file", full)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _scan_file(handle, path: str, found: _Findings, text_only: bool = True) -> None:
    """Report the secrets of one file, streamed; a file with a NUL byte
    near its start is binary and skipped when ``text_only``."""
    if text_only:
        head = handle.read(_SNIFF)
        if b"\0" in head:
            return
        handle.seek(0)
    scan = _SecretScan()
    for data, line, continued in _pieces(handle):
        for number, what in scan.feed(data, line, continued):
            found.add("secret", path, number, f"looks like {what}; the value is not shown")
    for number, what in scan.finish():
        found.add("secret", path, number, f"looks like {what}; the value is not shown")


def _dot_files(vault: Vault) -> list[str]:
    """Files whose name starts with ``.`` (``.env``) in the store's folders:
    the walk leaves them out of the notes, the secret scan does not."""
    folders = {""} | {path.rsplit("/", 1)[0] for path in vault.files if "/" in path}
    out = []
    for folder in sorted(folders):
        try:
            with os.scandir(os.path.join(str(vault.root), folder)) as entries:
                for entry in entries:
                    if entry.name.startswith(".") and entry.is_file(follow_symlinks=False):
                        rel = f"{folder}/{entry.name}" if folder else entry.name
                        try:
                            rel.encode("utf-8")
                        except UnicodeEncodeError:
                            continue
                        out.append(rel)
        except OSError:
            continue
    return sorted(out)


def doctor(store: str | os.PathLike, memory: dict, caps: capsmod.Caps) -> dict:
    """Validate the memory store at ``store`` (a folder).

    ``memory`` is :attr:`Schema.memory` (index name, archive folder, types);
    ``caps`` the index caps.  Returns ``{"store", "index", "notes",
    "archived", "index_size", "issues", "warnings", "info", "counts",
    "omitted"}``:
    ``notes`` and ``archived`` count live and archived notes (``*.md`` in
    any letter case); ``index_size`` is :func:`caps.check_file`'s result
    (None without a readable index); ``issues`` and ``warnings`` are lists
    of ``{"kind", "path", "line", "message"}`` (store-relative paths, 1-based
    lines, None when the whole file is meant) sorted by path and line, at
    most :data:`MAX_LISTED` of one kind per file; ``info`` is a list of the
    same shape holding :data:`INFO` findings, which are no problem (the
    ``[[name]]`` links of notes in Claude Code's format that name no memory
    yet, one per note and name); ``counts`` maps each issue
    kind found to its number, listed or not; ``omitted`` maps each kind to
    the findings not listed.  Raises :class:`vault.VaultError` when
    ``store`` is not a folder and :class:`NotAStore` when it is not a store.
    """
    vault = Vault.open(store)
    opener = _Opener(vault)
    root = str(vault.root)
    found = _Findings()
    index_rel = memory["index"]
    archive = memory["archive"]
    types = memory["types"]

    # Where the index is, as the host opens it
    index_full = os.path.join(root, index_rel)
    state, canonical = "missing", None
    if os.path.lexists(index_full):
        if not opener.inside(os.path.realpath(index_full)):
            state = "outside"
        elif os.path.isfile(index_full):
            state = "file"
            canonical = index_rel if index_rel in opener.files else opener.by_inode(index_full)
            if canonical and canonical.lower() == index_rel.lower():
                index_rel = canonical  # a case-insensitive file system: the name as it is on disk
        else:
            state = "broken" if not os.path.exists(index_full) else "other"
    for warning in vault.warnings:
        where = warning.split(":", 1)[0]
        if not (state == "outside" and where == index_rel):  # reported once, as index-outside
            found.add("skipped", where, None, warning)
    notes = [p for p in vault.files if p.lower().endswith(".md") and p != canonical]
    live = [p for p in notes if not _archived(p, archive)]
    near = [p for p in vault.files if p.lower() == memory["index"].lower()]
    if state == "missing" and not near:
        _require_store(vault, live, memory["index"], types)

    size = None
    start: set[str] = set()
    readable = False
    if state in ("missing", "broken"):
        hint = f"; found {_quote(near[0])}: rename it to {_quote(memory['index'])}" if near else ""
        what = f"{memory['index']!r} is a broken symlink" if state == "broken" else f"no index {memory['index']!r}"
        found.add("index-missing", memory["index"], None, f"the store has {what}{hint}")
    elif state == "outside":
        found.add(
            "index-outside",
            index_rel,
            None,
            f"{index_rel} is a symlink to {os.path.realpath(index_full)}, outside the store; "
            "it is not read (nothing outside the store is)",
        )
    elif state == "other":
        found.add("index-unreadable", index_rel, None, "cannot read the index (not a regular file)")
    else:
        try:
            size = capsmod.check_file(index_full, caps)
            with _open_regular(index_full) as handle:
                readable = _check_index(handle, index_rel, opener, size, caps, found, start)
        except OSError as exc:
            found.add("index-unreadable", index_rel, None, f"cannot read the index ({exc.strerror or exc})")
            size = None
    indexes = {index_rel, canonical}

    names = _Names()
    for path in notes:
        note = vault.note(path)
        if note.text is None:
            found.add("unreadable", path, None, f"cannot check the note: {note.error}")
        else:
            names.add(path, note.properties)
            if not _archived(path, archive):
                for finding in check_note(note, types):
                    found.add(finding["kind"], finding["path"], finding["line"], finding["message"])
        if note.data:  # read already (not UTF-8 too): scan those bytes
            _scan_file(io.BytesIO(note.data), path, found, text_only=False)
    others = [p for p in vault.files if p not in indexes and not (p.lower().endswith(".md") and vault.note(p).data)]
    for path in sorted(set(others) | set(_dot_files(vault)) - indexes):
        try:
            with _open_regular(os.path.join(root, path)) as handle:
                _scan_file(handle, path, found, text_only=not path.lower().endswith(".md"))
        except OSError:
            continue  # a file that cannot be read is reported by the note checks, or is not a note

    for path in live:
        if path in names.modern:
            _unwritten_links(vault.note(path), opener, names, found)
    if readable:  # without a readable index, reachability is unknown: one finding says why
        reached = _reachable(vault, opener, start, indexes, names)
        for path in live:
            if path not in reached:
                found.add(
                    "unreachable",
                    path,
                    None,
                    f"not reachable from {index_rel}: no pointer to it, no link from a note that has one",
                )
    issues = sorted(found.issues, key=lambda f: (f["path"], f["line"] or 0))
    warnings = sorted(found.warnings, key=lambda f: (f["path"], f["line"] or 0))
    info = sorted(found.info, key=lambda f: (f["path"], f["line"] or 0))
    counts = {kind: found.total[kind] for kind in dict.fromkeys(f["kind"] for f in issues)}
    return {
        "store": root,
        "index": index_rel if state in ("file", "outside", "other") else None,
        "notes": len(live),
        "archived": len(notes) - len(live),
        "index_size": size,
        "issues": issues,
        "warnings": warnings,
        "info": info,
        "counts": counts,
        "omitted": dict(sorted(found.omitted.items())),
    }


def _check_index(
    handle, index_rel: str, opener: _Opener, size: dict, caps: capsmod.Caps, found: _Findings, start: set
) -> bool:
    """Read the index once, as a stream: caps, content lines, pointers and
    secrets.  Adds the notes the index points at to ``start`` (where
    reachability starts).  Returns False when the index is not UTF-8: then
    only that and its secrets are reported."""
    if size["over"]:
        dims = " and ".join(f"{size[d]:,} {d} (limit {caps.hard[d]:,})" for d in size["over"])
        dropped = size["lines"] - size["loaded_lines"]
        found.add(
            "index-over-cap",
            index_rel,
            None,
            f"the index has {dims}; the host loads only its first {size['loaded_lines']} "
            f"lines and silently drops the other {dropped}; compact it to under {caps.target_text()}",
        )
    elif size["near"]:
        dims = " and ".join(f"{size[d]:,} {d} (soft cap {caps.soft[d]:,})" for d in size["near"])
        found.add("index-soft-cap", index_rel, None, f"the index has {dims}; compact it to under {caps.target_text()}")
    lines = _Findings()  # what the lines say; dropped if the index is not UTF-8
    seen: dict[str, int] = {}
    resolved: dict[tuple[str, bool], tuple[str, str | None]] = {}
    run: list = []  # [first line number, its text, last line number, count] of consecutive content lines

    def flush() -> None:
        if run:
            first, text, last, count = run
            span = f"line {first}" if count == 1 else f"lines {first}-{last}"
            lines.add(
                "index-content",
                index_rel,
                first,
                lambda: (
                    f"{span} {'is' if count == 1 else 'are'} not a pointer "
                    f"('- [Title](note.md) — hook'): {_quote(text)}"
                ),
            )
            run.clear()

    def check(item: IndexLine) -> None:
        if item.kind == "content":
            content(item.line, item.text)
        else:
            pointer(item.line, item.target, item.wiki, item.length)

    def content(number: int, text: str) -> None:
        if run and run[2] == number - 1:
            run[2], run[3] = number, run[3] + 1
            return
        flush()
        run.extend([number, text, number, 1])

    def pointer(number: int, target: str, wiki: bool, length: int) -> None:
        if run:
            flush()
        if length > MAX_INDEX_LINE:
            lines.add(
                "index-content",
                index_rel,
                number,
                f"pointer line is {length:,} characters (limit {MAX_INDEX_LINE}): "
                f"keep the hook short and move the detail into the note",
            )
        key = (target, wiki)
        hit = resolved.get(key)
        if hit is None:
            if len(resolved) >= 4096:  # bounded: a runaway index of distinct targets
                resolved.clear()
            hit = resolved[key] = opener.pointer(IndexLine(number, "pointer", "", target, wiki), index_rel)
        status, path = hit
        if status == "missing":
            lines.add(
                "broken-pointer",
                index_rel,
                number,
                lambda: (
                    f"points to {_quote(target)}, which is not in the store "
                    "(as the file system opens it: letter case counts)"
                ),
            )
        elif status == "outside":
            lines.add("pointer-outside", index_rel, number, lambda: f"points to {_quote(target)}, outside the store")
        elif status == "note" and path is not None and path != index_rel:
            if path in seen:
                first = seen[path]
                lines.add(
                    "duplicate-pointer", index_rel, number, lambda: f"{path} is already pointed to on line {first}"
                )
            else:
                seen[path] = number
                start.add(path)

    classify = _IndexLines()
    secrets = _SecretScan()
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    valid = True
    partial: list = []  # [line number, head, length] of a line longer than a block

    def decode(data: bytes, final: bool = False) -> str:
        nonlocal decoder, valid
        if valid:
            pending = decoder.getstate()[0]
            try:
                return decoder.decode(data, final)
            except UnicodeDecodeError:
                valid = False
                decoder = codecs.getincrementaldecoder("utf-8")("replace")
                data = pending + data
        return decoder.decode(data, final)

    def line_done(number: int, text: str, length: int) -> None:
        for item in classify.feed(number, text, length):
            check(item)

    body = classify._body
    pointer_match = _POINTER.match

    for data, first_line, continued in _pieces(handle):
        for number, what in secrets.feed(data, first_line, continued):
            found.add("secret", index_rel, number, f"looks like {what}; the value is not shown")
        text = decode(data)
        parts = text.split("\n")
        tail = parts.pop()
        number = first_line
        if continued and partial:
            if not parts:  # the middle of an enormous line
                partial[2] += len(tail)
                if len(partial[1]) < _LINE_HEAD:
                    partial[1] += tail[: _LINE_HEAD - len(partial[1])]
                continue
            line_done(
                partial[0], partial[1] + parts[0][: max(0, _LINE_HEAD - len(partial[1]))], partial[2] + len(parts[0])
            )
            partial.clear()
            parts = parts[1:]
            number += 1
        if classify.state == "body":  # the common case, inline: no call per line for most lines
            for part in parts:
                if classify.comment or "<!--" in part or len(part) > _LINE_HEAD:
                    for item in body(number, part[:_LINE_HEAD], len(part)):
                        check(item)
                elif (match := pointer_match(part)) is not None:
                    wiki = match.group("wiki")
                    length = len(part) - (len(part) - len(part.rstrip("\r")) if part.endswith("\r") else 0)
                    pointer(number, match.group("dest") if wiki is None else wiki, wiki is not None, length)
                elif run and run[2] == number - 1 and part.strip() and part[0] not in " \t#-*_":
                    run[2], run[3] = number, run[3] + 1  # one more line of content
                else:
                    for item in body(number, part, len(part)):
                        check(item)
                number += 1
        else:
            for part in parts:
                line_done(number, part[:_LINE_HEAD], len(part))
                number += 1
        if tail:
            partial[:] = [number, tail[:_LINE_HEAD], len(tail)]
    for number, what in secrets.finish():
        found.add("secret", index_rel, number, f"looks like {what}; the value is not shown")
    rest = decode(b"", final=True)
    if partial:
        line_done(partial[0], (partial[1] + rest)[:_LINE_HEAD], partial[2] + len(rest))
    for item in classify.close():
        check(item)
    flush()
    if not valid:
        found.add("index-unreadable", index_rel, None, "cannot read the index (not valid UTF-8)")
        return False
    found.extend(lines)
    return True


class _Names:
    """The ``name:`` of every note of the store (archived too), by slug, and
    which notes are in Claude Code's current format (:func:`note_format`):
    where a ``[[name]]`` that opens no file leads."""

    def __init__(self) -> None:
        self.by_slug: dict[str, list[str]] = {}
        self.modern: set[str] = set()

    def add(self, path: str, props: dict) -> None:
        """Record the note at ``path`` with parsed frontmatter ``props``."""
        if note_format(props) == "metadata":
            self.modern.add(path)
        name = props.get("name")
        if isinstance(name, (str, int, float)) and not isinstance(name, bool):
            slug = _slug(str(name))
            if slug:
                self.by_slug.setdefault(slug, []).append(path)

    def resolve(self, target: str, source: str) -> list[str]:
        """The notes a ``[[target]]`` written in ``source`` names: those whose
        ``name:`` has the slug of ``target`` (alias, heading and a ``.md``
        ending dropped), when ``source`` or the named note is in Claude
        Code's format (two notes of the older format never connect by name)."""
        if not self.modern:
            return []
        name = target.split("|", 1)[0].split("#", 1)[0].strip()
        if name.lower().endswith(".md"):
            name = name[:-3]
        paths = self.by_slug.get(_slug(name), []) if name else []
        if source in self.modern:
            return list(paths)
        return [path for path in paths if path in self.modern]


def _unwritten_links(note: Note, opener: _Opener, names: _Names, found: _Findings) -> None:
    """Add an ``unwritten-link`` (:data:`INFO`) for each ``[[name]]`` in the
    body of ``note`` (a note in Claude Code's format) that opens no file and
    names no note: once per name, at its first line."""
    if note.text is None:
        return
    seen: set[str] = set()
    for link in note_links(note):
        if link.kind != "wikilink" or link.embed or not link.target.strip():
            continue
        slug = _slug(link.target)
        if slug in seen:
            continue
        status, _ = opener.link(link, note.path)
        if status != "missing" or names.resolve(link.target, note.path):
            continue
        seen.add(slug)
        target = link.target.strip()
        shown = target if len(target) <= 60 else target[:60] + "..."
        found.add(
            "unwritten-link",
            note.path,
            link.line,
            f"[[{shown}]] names no memory yet (no note has that file name or name:): "
            "a memory worth writing later, not a problem",
        )


def _reachable(vault: Vault, opener: _Opener, start: set[str], indexes: set, names: _Names | None = None) -> set[str]:
    """Notes reachable from ``start`` by following links (wikilinks, Markdown
    links, links in properties) from note to note, as the host opens them;
    a wikilink that opens no file leads to the notes ``names`` resolves it
    to (:meth:`_Names.resolve`)."""
    reached: set[str] = set()
    queue = sorted(path for path in start if path.lower().endswith(".md"))
    while queue:
        path = queue.pop()
        if path in reached:
            continue
        reached.add(path)
        note = vault.note(path)
        if note.text is None:
            continue
        for link in note_links(note):
            status, target = opener.link(link, path)
            if status == "missing" and link.kind != "markdown" and names is not None:
                targets = names.resolve(link.target, path)
            else:
                targets = [target] if status == "note" and target is not None else []
            for target in targets:
                if target.lower().endswith(".md") and target not in reached and target not in indexes:
                    queue.append(target)
    return reached


def index_files(folder: str | os.PathLike, index_paths: list[str], memory: dict) -> list[str]:
    """Folder-relative paths of the index files under ``folder`` that exist:
    the schema's ``index.files``, then the memory store's index
    (``<memory.folder>/<memory.index>``) when the store folder exists."""
    root = Path(folder)
    names = list(index_paths)
    sub = memory.get("folder") or ""
    if not sub or (root / sub).is_dir():
        names.append(posixpath.join(sub, memory["index"]) if sub else memory["index"])
    out: list[str] = []
    for name in names:
        name = posixpath.normpath(name.replace("\\", "/"))
        if name not in out and os.path.lexists(root / name):
            out.append(name)
    return out
