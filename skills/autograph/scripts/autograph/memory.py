"""The memory store: an index of pointers plus one note per fact; doctor's checks.

A store is a folder holding the index (``MEMORY.md``, always loaded by the
agent host, so bounded by the caps of :mod:`caps`) and one Markdown note per
fact, each with frontmatter ``name``, ``description``, ``type`` (``user``,
``feedback``, ``project``, ``reference`` by default), ``created`` and
``updated``.  Retired notes live in ``archive/`` and need no pointer.  Where
the store is and which types it has come from the schema's ``memory`` key
(:attr:`schema.Schema.memory`).

:func:`doctor` reads a store and returns every problem, each reported once
with a ``kind`` (:data:`ISSUES`, :data:`WARNINGS`), the store-relative
``path``, a 1-based ``line`` (or None) and a message saying what to do.  It
never prints a secret it finds: a finding names the file, the line and the
kind of secret only.
"""

from __future__ import annotations

import datetime
import os
import posixpath
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

from . import caps as capsmod
from .index import note_links
from .note import BOM, Note
from .vault import Vault

__all__ = [
    "ISSUES",
    "MAX_INDEX_LINE",
    "WARNINGS",
    "check_note",
    "doctor",
    "find_secrets",
    "index_files",
    "index_lines",
    "locate_store",
]

# kind -> what to do about it (the human report prints it once per kind)
ISSUES = {
    "index-missing": "create the index (init.py, or copy assets/MEMORY.md into the store)",
    "index-unreadable": "make the index a readable UTF-8 file",
    "index-over-cap": "compact the index: one short pointer per note, detail in the notes, retired entries archived",
    "index-content": "move text out of the index into a note, and point to that note in one short line",
    "broken-pointer": "fix the pointer's file name, or remove the line",
    "pointer-outside": "point only at notes inside the store",
    "unreachable": "add a pointer line for the note to the index, link it from a note that has one, or archive it",
    "unreadable": "save the note as UTF-8 text",
    "frontmatter": "start the note with a frontmatter block: name, description, type, created, updated",
    "missing-field": "fill in the field",
    "bad-type": "use one of the store's types",
    "name-mismatch": "make name the file's name without .md (or rename the file)",
    "bad-date": "write dates as YYYY-MM-DD, with updated not before created",
    "missing-label": "add the labelled line (e.g. 'Why: ...') to the note's body",
    "secret": "delete the value; note only where it is kept (e.g. 'in the team password manager')",
}
WARNINGS = {
    "index-soft-cap": "compact the index soon",
    "duplicate-pointer": "keep one pointer per note",
    "skipped": "check the store's files",
}

# An index line longer than this is content, not a pointer; Claude Code's
# own advice is one line of under ~150 characters per entry.
MAX_INDEX_LINE = 200


def _finding(kind: str, path: str, line: int | None, message: str) -> dict:
    return {"kind": kind, "path": path, "line": line, "message": message}


def _quote(text: str, limit: int = 60) -> str:
    """A fragment of store text, quoted and bounded, for a message."""
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ---------------------------------------------------------------------------
# Secrets

_SECRET_PATTERNS = [
    ("a private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("an API key (sk-...)", re.compile(r"\bsk-(?:proj-|svcacct-|live-)?[A-Za-z0-9_-]{20,}")),
    ("a Stripe key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("a JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}")),
    ("a password in a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]{3,}@")),
]
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*"
    r"(?P<key>password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|access[_-]?token"
    r"|auth[_-]?token|token|client[_-]?secret|private[_-]?key)"
    r"(?![A-Za-z0-9_-])[\"'*_]*[ \t]*[:=][ \t]*(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s\"'`]+)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<.*>|\{\{.*\}\}|\$\{.*\}|\$[A-Z_][A-Z0-9_]*|%[A-Z_]+%|\[\[.*\]\]|\*+|x{3,}|\.{3,}|…"
    r"|redacted|\[redacted\]|\(redacted\)|none|null|nil|n/?a|tbd|todo|changeme|example|placeholder|secret"
    r"|[~./].*)$"
)


def _looks_secret(value: str) -> bool:
    """A value after ``password=``: long enough and not a word, a path, a
    variable or a placeholder (``<token>``, ``${API_KEY}``, ``***``)."""
    value = value.strip().strip("\"'`").strip()
    if len(value) < 6 or _PLACEHOLDER.match(value):
        return False
    if len(value) >= 20:
        return True
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return has_digit or has_symbol or mixed


def find_secrets(text: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each line of ``text`` holding a secret value: a
    private key block, a token or API key of a known shape, a password in a
    URL, or an assignment such as ``password=...``/``api_key: ...`` whose
    value looks real.  One finding per line; the value itself is never
    returned, so it cannot be printed."""
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), 1):
        for what, pattern in _SECRET_PATTERNS:
            if pattern.search(line):
                found.append((number, what))
                break
        else:
            for match in _ASSIGNMENT.finditer(line):
                if _looks_secret(match.group("value")):
                    key = match.group("key").lower().replace("-", "_")
                    found.append((number, f"a {key} value ({key} = ...)"))
                    break
    return found


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
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_REMOTE = {"http", "https", "mailto", "ftp", "ftps", "tel"}


class IndexLine:
    """One line of the index body: ``kind`` is ``"pointer"`` (then
    ``target`` is the link as written and ``wiki`` says which form) or
    ``"content"``; blank lines, headings, rules and comments are skipped."""

    __slots__ = ("line", "kind", "text", "target", "wiki")

    def __init__(self, line: int, kind: str, text: str, target: str = "", wiki: bool = False):
        self.line, self.kind, self.text, self.target, self.wiki = line, kind, text, target, wiki


def index_lines(text: str) -> list[IndexLine]:
    """Classify the lines of an index (``text`` without BOM): pointers
    ``- [Title](note.md) — hook`` or ``- [[note]] — hook`` (any list marker,
    numbered too), and content (anything else but blank lines, headings,
    thematic breaks, ``<!-- comments -->`` and a frontmatter block)."""
    from .frontmatter import parse as parse_frontmatter

    block = parse_frontmatter(text)
    start = block.body if block is not None else 0
    body = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text[start:])
    first = text.count("\n", 0, start) + 1
    out: list[IndexLine] = []
    for offset, raw in enumerate(body.split("\n")):
        line = raw.rstrip("\r")
        if not line.strip() or _HEADING.match(line) or _RULE.match(line):
            continue
        number = first + offset
        match = _POINTER.match(line)
        if match is None:
            out.append(IndexLine(number, "content", line))
        elif match.group("wiki") is not None:
            out.append(IndexLine(number, "pointer", line, match.group("wiki"), True))
        else:
            out.append(IndexLine(number, "pointer", line, match.group("dest")))
    return out


def _resolve_pointer(item: IndexLine, index_rel: str, vault: Vault, files_lower: dict) -> tuple[str, str | None]:
    """``(status, path)``: status ``"note"`` (path resolved), ``"remote"``
    (a web or mail address), ``"outside"`` or ``"missing"``."""
    if item.wiki:
        target = item.target.split("|", 1)[0].split("#", 1)[0].strip()
        resolution = vault.resolver.resolve(target, index_rel) if target else None
        return ("note", resolution.path) if resolution and resolution.path else ("missing", None)
    dest = item.target[1:-1] if item.target.startswith("<") else item.target
    scheme = _SCHEME.match(dest)
    if scheme and len(scheme.group(1)) > 1:
        return ("remote", None) if scheme.group(1).lower() in _REMOTE else ("outside", None)
    path = unquote(dest.split("#", 1)[0].split("?", 1)[0]).replace("\\", "/")
    if not path:
        return "note", index_rel  # a link to a heading of the index itself
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return "outside", None
    folder = posixpath.dirname(index_rel)
    norm = posixpath.normpath(posixpath.join(folder, path))
    if norm == ".." or norm.startswith("../"):
        return "outside", None
    for candidate in (norm, norm + ".md"):
        found = files_lower.get(unicodedata.normalize("NFC", candidate).lower())
        if found is not None:
            return "note", found
    return "missing", None


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
    from .links import code_regions

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


def check_note(note: Note, types: dict) -> list[dict]:
    """Problems of one memory note: frontmatter, required fields, type,
    name, dates and labelled lines (see :data:`ISSUES`).  A note without a
    valid frontmatter block gets that one finding and no field findings."""
    path = note.path
    block = note.frontmatter
    if block is None:
        return [
            _finding(
                "frontmatter",
                path,
                1,
                "no frontmatter block: the note must start with '---', then "
                "name, description, type, created, updated, then '---'",
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
        names = ", ".join(types)
        hint = f"; write it as {kind.lower()!r}" if isinstance(kind, str) and kind.lower() in types else ""
        out.append(
            _finding(
                "bad-type",
                path,
                line_of.get("type"),
                f"type {_quote(str(kind))} is not one of the store's types ({names}){hint}",
            )
        )
    description = props.get("description")
    if not _empty(description) and not isinstance(description, str):
        out.append(_finding("missing-field", path, line_of.get("description"), "description is not one line of text"))
    name = props.get("name")
    if not _empty(name) and not _name_matches(str(name), note.stem, types):
        out.append(
            _finding(
                "name-mismatch",
                path,
                line_of.get("name"),
                f"name {_quote(str(name))} does not match the file name {_quote(note.stem)}",
            )
        )
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
    if known:
        body = note.body
        for label in types[kind]["labels"]:
            if not _has_label(body, label):
                out.append(
                    _finding(
                        "missing-label", path, None, f"{kind} notes need a line '{label}: ...' in the body; none found"
                    )
                )
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


def doctor(store: str | os.PathLike, memory: dict, caps: capsmod.Caps) -> dict:
    """Validate the memory store at ``store`` (a folder).

    ``memory`` is :attr:`Schema.memory` (index name, archive folder, types);
    ``caps`` the index caps.  Returns ``{"store", "index", "notes",
    "archived", "index_size", "issues", "warnings", "counts"}``: ``notes``
    and ``archived`` count live and archived notes; ``index_size`` is
    :func:`caps.check_file`'s result (None without an index); ``issues`` and
    ``warnings`` are lists of ``{"kind", "path", "line", "message"}``
    (store-relative paths, 1-based lines, None when the whole file is meant)
    sorted by path and line; ``counts`` maps each issue kind found to its
    number.  Raises :class:`vault.VaultError` when ``store`` is not a folder.
    """
    vault = Vault.open(store)
    issues: list[dict] = []
    warnings: list[dict] = [_finding("skipped", w.split(":", 1)[0], None, w) for w in vault.warnings]
    index_rel = memory["index"]
    archive = memory["archive"]
    types = memory["types"]
    files_lower = {unicodedata.normalize("NFC", path).lower(): path for path in vault.files}
    if index_rel not in vault.files and (vault.root / index_rel).is_file():  # a case-insensitive file system
        index_rel = next((p for p in vault.files if p.lower() == index_rel.lower()), index_rel)
    notes = [p for p in vault.notes if p != index_rel]
    live = [p for p in notes if not _archived(p, archive)]
    size = None
    start: list[str] = []
    readable = False
    index_path = vault.root / index_rel
    if not index_path.exists():
        near = [p for p in vault.files if p.lower() == memory["index"].lower()]
        hint = f"; found {near[0]!r}: rename it to {memory['index']!r}" if near else ""
        issues.append(
            _finding("index-missing", memory["index"], None, f"the store has no index {memory['index']!r}{hint}")
        )
    else:
        try:
            size = capsmod.check_file(index_path, caps)
            data = index_path.read_bytes()
            text = (data[3:] if data.startswith(BOM) else data).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not valid UTF-8"
            issues.append(_finding("index-unreadable", index_rel, None, f"cannot read the index ({reason})"))
            text = None
        if text is not None:
            readable = True
            start = _check_index(text, index_rel, vault, files_lower, size, caps, issues, warnings)
            for line, what in find_secrets(text):
                issues.append(_finding("secret", index_rel, line, f"looks like {what}; the value is not shown"))
    for path in notes:
        note = vault.note(path)
        if note.text is None:
            issues.append(_finding("unreadable", path, None, f"cannot check the note: {note.error}"))
            continue
        if not _archived(path, archive):
            issues.extend(check_note(note, types))
        for line, what in find_secrets(note.text):
            issues.append(_finding("secret", path, line, f"looks like {what}; the value is not shown"))
    if readable:  # without a readable index, reachability is unknown: one finding says why
        reached = _reachable(vault, start)
        for path in live:
            if path not in reached:
                issues.append(
                    _finding(
                        "unreachable",
                        path,
                        None,
                        f"not reachable from {index_rel}: no pointer to it, no link from a note that has one",
                    )
                )
    issues.sort(key=lambda f: (f["path"], f["line"] or 0))
    warnings.sort(key=lambda f: (f["path"], f["line"] or 0))
    counts: dict[str, int] = {}
    for finding in issues:
        counts[finding["kind"]] = counts.get(finding["kind"], 0) + 1
    return {
        "store": str(vault.root),
        "index": index_rel if index_path.exists() else None,
        "notes": len(live),
        "archived": len(notes) - len(live),
        "index_size": size,
        "issues": issues,
        "warnings": warnings,
        "counts": counts,
    }


def _check_index(
    text: str,
    index_rel: str,
    vault: Vault,
    files_lower: dict,
    size: dict | None,
    caps: capsmod.Caps,
    issues: list,
    warnings: list,
) -> list[str]:
    """Index findings (caps, content lines, pointers); returns the notes the
    index points at, where reachability starts."""
    if size is not None and size["over"]:
        dims = " and ".join(f"{size[d]:,} {d} (limit {caps.hard[d]:,})" for d in size["over"])
        dropped = size["lines"] - size["loaded_lines"]
        issues.append(
            _finding(
                "index-over-cap",
                index_rel,
                None,
                f"the index has {dims}; the host loads only its first {size['loaded_lines']} "
                f"lines and silently drops the other {dropped}",
            )
        )
    elif size is not None and size["near"]:
        dims = " and ".join(f"{size[d]:,} {d} (soft cap {caps.soft[d]:,})" for d in size["near"])
        warnings.append(_finding("index-soft-cap", index_rel, None, f"the index has {dims}"))
    start: list[str] = []
    seen: dict[str, int] = {}
    run: list[IndexLine] = []

    def flush() -> None:
        if run:
            span = f"line {run[0].line}" if len(run) == 1 else f"lines {run[0].line}-{run[-1].line}"
            issues.append(
                _finding(
                    "index-content",
                    index_rel,
                    run[0].line,
                    f"{span} {'is' if len(run) == 1 else 'are'} not a pointer "
                    f"('- [Title](note.md) — hook'): {_quote(run[0].text)}",
                )
            )
            run.clear()

    for item in index_lines(text):
        if item.kind == "content":
            if run and run[-1].line != item.line - 1:
                flush()
            run.append(item)
            continue
        flush()
        if len(item.text) > MAX_INDEX_LINE:
            issues.append(
                _finding(
                    "index-content",
                    index_rel,
                    item.line,
                    f"pointer line is {len(item.text)} characters (limit {MAX_INDEX_LINE}): "
                    f"keep the hook short and move the detail into the note",
                )
            )
        status, path = _resolve_pointer(item, index_rel, vault, files_lower)
        if status == "missing":
            issues.append(
                _finding(
                    "broken-pointer",
                    index_rel,
                    item.line,
                    f"points to {_quote(item.target)}, which is not in the store",
                )
            )
        elif status == "outside":
            issues.append(
                _finding("pointer-outside", index_rel, item.line, f"points to {_quote(item.target)}, outside the store")
            )
        elif status == "note" and path is not None:
            if path in seen and path != index_rel:
                warnings.append(
                    _finding(
                        "duplicate-pointer", index_rel, item.line, f"{path} is already pointed to on line {seen[path]}"
                    )
                )
            seen.setdefault(path, item.line)
            start.append(path)
    flush()
    return start


def _reachable(vault: Vault, start: list[str]) -> set[str]:
    """Notes reachable from ``start`` by following links (wikilinks, Markdown
    links, links in properties) from note to note."""
    reached: set[str] = set()
    queue = [path for path in start if path.endswith(".md")]
    while queue:
        path = queue.pop()
        if path in reached:
            continue
        reached.add(path)
        note = vault.note(path)
        if note.text is None:
            continue
        for link in note_links(note):
            target = vault.resolver.resolve(link.target, path).path if link.target else None
            if target is not None and target.endswith(".md") and target not in reached:
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
