"""The one link rewriter: retarget links to notes that move, keeping each link's form.

Everything that changes the text of a link goes through here: ``graph.py
mv`` and ``enforce.py --move`` (:func:`plan_retarget` over a move's
mapping), ``graph.py fix`` (:func:`rewrite_links` for single broken links),
dedup's redirect of links to a merged card (``keep_text=True``).

What a rewrite changes is the link's *path part* only: ``#heading``,
``#^block``, ``|alias``, an embed's ``!`` and size, a table's ``\\|``, the
brackets and every byte around the link stay.  The new path part keeps the
link's form (:func:`new_target`):

* a bare name (``[[Note]]``) stays the bare name of the new file while that
  resolves to it, else becomes the shortest path that does (or, for a note
  whose vault says so in ``.obsidian/app.json`` ``newLinkFormat``, the
  absolute or relative path);
* a path (``[[folder/Note]]``) stays a path: the full vault path when it was
  one, else the shortest path of two or more parts that resolves;
* a relative path (``./``, ``../``) stays relative to the linking note;
* ``.md`` written stays written; a Markdown link stays a Markdown link with
  its destination percent-encoded as it was (or in ``<...>``).

A link is rewritten only when the move changes where it resolves (Obsidian's
rules, :class:`links.Resolver`): one that still resolves to the moved file
under its old text is left byte for byte.  Links inside code, comments and
math are never touched (they are not links, :func:`links.scan`).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import unicodedata
from typing import NamedTuple
from urllib.parse import quote

from ..read import frontmatter as fm
from ..read.links import _MD_DEST, Resolver, property_links, scan

__all__ = [
    "Change",
    "Plan",
    "Span",
    "link_settings",
    "link_spans",
    "new_target",
    "plan_details",
    "plan_retarget",
    "resolver_after",
    "rewrite_links",
    "retarget_text",
]


class Change(NamedTuple):
    """One rewritten link: ``path`` the vault path of the note whose text
    changes, ``line`` the 1-based file line of the link, ``old`` the link's
    text as written (``[[A. Example]]``), ``new`` what replaces it."""

    path: str
    line: int
    old: str
    new: str


class Span(NamedTuple):
    """A link located in a note's whole text: the link (``links.Link``; for
    a frontmatter link ``kind`` is ``"property"``), ``start``/``end`` of the
    whole link (from ``!`` or ``[``), and ``tstart``/``tend`` of its path
    part as written (for a Markdown link, the raw, percent-encoded text)."""

    link: object
    start: int
    end: int
    tstart: int
    tend: int
    angle: bool = False  # a Markdown destination written in <...>
    quote: str = ""  # a frontmatter link inside a YAML quoted scalar: its quote


# ---------------------------------------------------------------------------
# Where the links of a text are


def link_spans(text: str) -> list[Span]:
    """Every link of a note's whole text (frontmatter included) with the
    offsets of its path part, in text order.

    Body links are :func:`links.scan`'s.  In the frontmatter only the
    wikilinks Obsidian reads as links count (those in string values,
    :func:`links.property_links`): a ``[[x]]`` in a YAML comment or in an
    unquoted nested list is left alone.  A note whose frontmatter does not
    parse yields its body links only (its frontmatter is never rewritten).
    """
    block = fm.parse(text)
    body = block.body if block is not None else 0
    spans: list[Span] = []
    if block is not None and block.error is None and block.properties and "[[" in text[:body]:
        spans += _property_spans(text, block)
    for link in scan(text, body, text.count("\n", 0, body) + 1):
        span = _wiki_span(text, link) if link.kind == "wikilink" else _markdown_span(text, link)
        if span is not None:
            spans.append(span)
    return spans


def _property_spans(text: str, block) -> list[Span]:
    """The spans of the wikilinks Obsidian reads in frontmatter values: per
    top-level entry, the raw ``[[...]]`` of its lines matched to the links
    of its parsed value (so a ``[[x]]`` in a comment or an unquoted nested
    list, which YAML does not read as a string, is no link)."""
    found: list[Span] = []
    line_starts = [block.start]
    for _ in range(text.count("\n", block.start, block.end)):
        line_starts.append(text.index("\n", line_starts[-1]) + 1)
    line_starts.append(block.end)
    for entry in block.entries:
        value = block.properties.get(entry.key)
        wanted: dict[tuple, int] = {}
        for link in property_links({entry.key: value}):
            key = (link.target, link.fragment, link.alias, link.embed)
            wanted[key] = wanted.get(key, 0) + 1
        if not wanted:
            continue
        start = line_starts[min(entry.start, len(line_starts) - 1)]
        end = line_starts[min(entry.end, len(line_starts) - 1)]
        first_line = text.count("\n", 0, start) + 1
        for link in scan(text[:end], start, first_line, regions=[]):
            if link.kind != "wikilink":
                continue
            quote = _yaml_quote(text, link.start)
            link = link._replace(
                kind="property",
                target=_unquote(link.target, quote),
                fragment=_unquote(link.fragment, quote),
                alias=None if link.alias is None else _unquote(link.alias, quote),
                key=entry.key,
            )
            key = (link.target, link.fragment, link.alias, link.embed)
            if wanted.get(key, 0) > 0:
                wanted[key] -= 1
                span = _wiki_span(text, link)
                if span is not None:
                    found.append(span._replace(quote=quote))
    return found


def _wiki_span(text: str, link) -> Span | None:
    open_at = link.start + (1 if link.embed else 0)
    if text[open_at : open_at + 2] != "[[":
        return None
    inner_start = open_at + 2
    inner = text[inner_start : link.end - 2]
    bar = inner.find("|")
    head = inner if bar < 0 else (inner[: bar - 1] if bar > 0 and inner[bar - 1] == "\\" else inner[:bar])
    hash_at = head.find("#")
    part = head if hash_at < 0 else head[:hash_at]
    lead = len(part) - len(part.lstrip())
    stripped = part.strip()
    start = inner_start + lead
    return Span(link, link.start, link.end, start, start + len(stripped))


def _yaml_quote(text: str, at: int) -> str:
    """The quote of the YAML scalar that holds offset ``at`` on its line
    (``'``, ``"``), or ``""`` for a plain one.  A quote opens a scalar only
    where a scalar starts (the line start, or after ``:``, ``-``, ``[``,
    ``,``, ``{`` and spaces); ``''`` inside single quotes and ``\\"`` inside
    double quotes do not close it."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    state, i, last = "", 0, ""
    while i < len(line):
        ch = line[i]
        if not state:
            if ch in "'\"" and last in ("", ":", "-", "[", ",", "{"):
                state = ch
            elif ch not in " \t":
                last = ch
        elif state == "'" and ch == "'":
            if line[i + 1 : i + 2] == "'":
                i += 1
            else:
                state, last = "", "'"
        elif state == '"' and ch == "\\":
            i += 1
        elif state == '"' and ch == '"':
            state, last = "", '"'
        i += 1
    return state


def _unquote(text: str, quote: str) -> str:
    """Link text as YAML reads it inside a scalar quoted with ``quote``."""
    if quote == "'":
        return text.replace("''", "'")
    if quote == '"' and "\\" in text:
        return text.replace('\\"', '"').replace("\\\\", "\\")
    return text


def _markdown_span(text: str, link) -> Span | None:
    at = text.find("](", link.start, link.end)
    while at >= 0:
        dest = _MD_DEST.match(text, at + 1)
        if dest is not None and dest.end() == link.end:
            raw_start, raw = dest.start(1), dest.group(1)
            angle = raw.startswith("<")
            if angle:
                raw_start, raw = raw_start + 1, raw[1:-1]
            path = raw.partition("#")[0]
            return Span(link, link.start, link.end, raw_start, raw_start + len(path), angle)
        at = text.find("](", at + 1, link.end)
    return None


# ---------------------------------------------------------------------------
# The vault's link settings


def link_settings(root) -> dict:
    """``{"format": "shortest"|"relative"|"absolute", "markdown": bool}``
    from ``ROOT/.obsidian/app.json`` (``newLinkFormat``,
    ``useMarkdownLinks``); Obsidian's defaults (shortest, wikilinks) when the
    file is missing or unreadable.  Used when a link must change form."""
    settings = {"format": "shortest", "markdown": False}
    try:
        with open(os.path.join(root, ".obsidian", "app.json"), "rb") as handle:
            data = json.loads(handle.read(1 << 20).decode("utf-8"))
    except (OSError, ValueError):
        return settings
    if isinstance(data, dict):
        if data.get("newLinkFormat") in ("shortest", "relative", "absolute"):
            settings["format"] = data["newLinkFormat"]
        if isinstance(data.get("useMarkdownLinks"), bool):
            settings["markdown"] = data["useMarkdownLinks"]
    return settings


# ---------------------------------------------------------------------------
# Choosing the new path part


def _strip_md(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _same(written: str, path: str) -> bool:
    """Whether link text ``written`` is the full vault path ``path`` (as
    Obsidian compares: case-insensitive after NFC, ``.md`` optional)."""

    def key(text: str) -> str:
        return _strip_md(unicodedata.normalize("NFC", text.replace("\\", "/").strip().lstrip("/")).lower())

    return key(written) == key(path)


def new_target(
    written: str, desired: str, source: str, resolver: Resolver, settings: dict | None = None, old: str | None = None
) -> str | None:
    """The path part a link written as ``written`` in note ``source`` should
    have so that ``resolver`` resolves it to vault path ``desired``, in the
    same form (see the module docstring); None when no text of that form
    resolves there (then nothing is rewritten).

    ``old`` is the vault path the link resolved to before (a full vault path
    written as such stays a full vault path).  ``written`` is unescaped
    (a Markdown link's ``%20`` decoded)."""
    settings = settings or {"format": "shortest"}
    is_note = desired.endswith(".md")
    keep_md = is_note and written.lower().endswith(".md")
    full = desired if (keep_md or not is_note) else desired[:-3]

    def ok(candidate: str) -> bool:
        return bool(candidate) and resolver.resolve(candidate, source).path == desired

    def relative() -> str:
        rel = posixpath.relpath(full, _folder(source) or ".")
        return rel if rel.startswith("../") else "./" + rel

    def suffixes(minimum: int):
        parts = full.split("/")
        for n in range(minimum, len(parts) + 1):
            yield "/".join(parts[-n:])

    if written.startswith(("./", "../")):
        candidate = relative()
        return candidate if ok(candidate) else None
    if "/" in written.replace("\\", "/").strip("/"):
        if old is not None and _same(written, old):
            return full if ok(full) else None
        return next((c for c in suffixes(2) if ok(c)), full if ok(full) else None)
    # a bare name
    name = full.rsplit("/", 1)[-1]
    if ok(name):
        return name
    fallback = settings.get("format", "shortest")
    if fallback == "absolute" and ok(full):
        return full
    if fallback == "relative":
        candidate = relative()
        if ok(candidate):
            return candidate
    return next((c for c in suffixes(2) if ok(c)), None)


_MD_ESCAPE = re.compile(r"[\x00-\x20()<>%#^|\[\]\\\x7f]")
_ENCODED_NON_ASCII = re.compile(r"%[89A-Fa-f][0-9A-Fa-f]")


def _encode_markdown(path: str, raw: str, angle: bool) -> str:
    """``path`` as a Markdown destination in the style of ``raw`` (the old
    destination): in ``<...>`` as it is; else with spaces and characters
    that end or confuse a destination percent-encoded, and non-ASCII
    encoded too when the old one had it encoded."""
    if angle:
        return path
    encoded = _MD_ESCAPE.sub(lambda m: quote(m.group(), safe=""), path)
    if _ENCODED_NON_ASCII.search(raw):
        encoded = "".join(ch if ch.isascii() else quote(ch, safe="") for ch in encoded)
    return encoded


def _in_table(text: str, at: int) -> bool:
    line_start = text.rfind("\n", 0, at) + 1
    return text[line_start:at].lstrip().startswith("|")


def _rewrite_one(text: str, span: Span, new_path: str, keep_text: bool) -> str:
    """The new text of one link (``text[span.start:span.end]`` rewritten)."""
    link = span.link
    if link.kind == "markdown":
        raw = text[span.tstart : span.tend]
        replacement = _encode_markdown(new_path, raw, span.angle)
    elif span.quote == "'":
        replacement = new_path.replace("'", "''")
    elif span.quote == '"':
        replacement = new_path.replace("\\", "\\\\").replace('"', '\\"')
    else:
        replacement = new_path
    new = text[span.start : span.tstart] + replacement + text[span.tend : span.end]
    if keep_text and link.kind != "markdown" and link.alias is None and not link.embed:
        shown = link.target + (" > " + link.fragment.replace("#", " > ") if link.fragment else "")
        if shown and (new_path != link.target or link.fragment):
            bar = "\\|" if _in_table(text, span.start) else "|"
            new = new[:-2] + bar + shown + "]]"
    return new


def rewrite_links(text: str, plans: list[tuple[Span, str]], keep_text: bool = False) -> str:
    """``text`` with each ``(span, new path part)`` of ``plans`` rewritten
    (spans from :func:`link_spans` of this very text, not overlapping).
    Every byte outside the path parts stays (and, with ``keep_text``, the
    alias added after an alias-less wikilink's path and fragment)."""
    out = []
    at = 0
    for span, path in sorted(plans, key=lambda item: item[0].start):
        out.append(text[at : span.start])
        out.append(_rewrite_one(text, span, path, keep_text))
        at = span.end
    out.append(text[at:])
    return "".join(out)


# ---------------------------------------------------------------------------
# Retargeting


def resolver_after(resolver: Resolver, mapping: dict[str, str], files=None) -> Resolver:
    """A resolver of the vault once ``mapping``'s moves are done: ``files``
    (default: the files ``resolver`` knows) with each old path replaced by
    its new one, and a path mapped to None removed."""
    known = list(files) if files is not None else list(resolver._paths.values())
    after = []
    for path in known:
        new = mapping.get(path, path)
        if new is not None:
            after.append(new)
    return Resolver(after)


def _wanted(span: Span, source: str, resolver, later, mapping) -> str | None:
    """The path the link must resolve to after the change, when the change
    would send it elsewhere; None when it needs no rewrite."""
    link = span.link
    if not link.target:
        return None  # [[#heading]]: the note itself, wherever it is
    before = resolver.resolve(link.target, source).path
    if before is None:
        return None  # broken before: not ours to guess (graph.py fix)
    desired = mapping.get(before, before)
    if desired is None:
        return None
    if later.resolve(link.target, mapping.get(source) or source).path == desired:
        return None
    return desired


def retarget_text(
    text: str,
    source: str,
    resolver: Resolver,
    mapping: dict[str, str],
    keep_text: bool = False,
    after_resolver: Resolver | None = None,
    settings: dict | None = None,
) -> tuple[str, list[Change]]:
    """Rewrite the links of one note so that each keeps its target across the moves of ``mapping``.

    ``text`` is the note's whole text (frontmatter included) at vault path
    ``source``; ``mapping`` maps old vault paths to new ones.  Every link
    (wikilink, embed, Markdown link, wikilink in a frontmatter value) that
    ``resolver`` (the vault now) resolves to a file is rewritten when the
    resolver after the change (``after_resolver``; default: ``resolver``'s
    files with the moves done) would not resolve it to that file's new path
    (``mapping[old]``, or the same path for a file that does not move): the
    links into the moved files, and links elsewhere that a moved file would
    take over (a new same-named note in the linking note's folder).  When
    ``source`` itself moves, its links are resolved from its new path.
    With ``keep_text`` an alias-less wikilink gets its old visible text as
    alias (``[[A. Example]]`` -> ``[[Alex Example|A. Example]]``, BR-28).
    ``settings`` are :func:`link_settings` (how a link that must change
    form is written).  A link that cannot be written in its form so that it
    resolves (or a frontmatter value that would no longer parse) is left
    as it is.  Returns ``(new text, [Change])``; broken links, links inside
    code and ``[[#heading]]`` links are never changed.
    """
    later = after_resolver if after_resolver is not None else resolver_after(resolver, mapping)
    new_source = mapping.get(source) or source
    plans: list[tuple[Span, str]] = []
    for span in link_spans(text):
        desired = _wanted(span, source, resolver, later, mapping)
        if desired is None:
            continue
        link = span.link
        old = resolver.resolve(link.target, source).path
        path = new_target(link.target, desired, new_source, later, settings, old)
        if path is not None and _reads_back(text, span, path, keep_text, desired, new_source, later):
            plans.append((span, path))
    if not plans:
        return text, []
    new_text = rewrite_links(text, plans, keep_text)
    if text[: _fm_end(text)] != new_text[: _fm_end(new_text)] and not _frontmatter_ok(text, new_text):
        # a path that YAML cannot hold in that value's quoting: leave the frontmatter
        plans = [(span, path) for span, path in plans if span.link.kind != "property"]
        new_text = rewrite_links(text, plans, keep_text)
    if len(link_spans(new_text)) != len(link_spans(text)):
        return text, []  # a rewrite that would merge or split links: never written
    changes = [
        Change(source, span.link.line, text[span.start : span.end], _rewrite_one(text, span, path, keep_text))
        for span, path in sorted(plans, key=lambda item: item[0].start)
    ]
    return new_text, changes


def _reads_back(text: str, span: Span, path: str, keep_text: bool, desired: str, source: str, later) -> bool:
    """Whether the rewritten link, read alone, is one link of the same kind,
    fragment and alias that resolves to ``desired`` (a name with ``]]``,
    ``|`` or ``#`` in it would not be)."""
    new = _unquote(_rewrite_one(text, span, path, keep_text), span.quote)
    found = scan(new, 0, 1, regions=[])
    if len(found) != 1:
        return False
    link, old = found[0], span.link
    kind = "wikilink" if old.kind == "property" else old.kind
    same = (link.kind, link.fragment, link.embed) == (kind, old.fragment, old.embed)
    return same and later.resolve(link.target, source).path == desired


def _fm_end(text: str) -> int:
    block = fm.parse(text)
    return block.body if block is not None else 0


def _frontmatter_ok(text: str, new_text: str) -> bool:
    """Whether a rewritten frontmatter still parses, with as many property
    links as before (each rewritten link was read back alone already)."""
    before, after = fm.parse(text), fm.parse(new_text)
    if after is None or after.error is not None:
        return False
    return len(property_links(after.properties)) == len(property_links(before.properties if before else {}))


def plan_retarget(
    vault,
    mapping: dict[str, str],
    keep_text: bool = False,
    texts: dict[str, str] | None = None,
    index=None,
    *,
    after_resolver: Resolver | None = None,
    settings: dict | None = None,
):
    """The edits of every note with a link whose target the moves of ``mapping`` change.

    ``mapping`` maps old vault paths to new ones (a file merged away maps
    to its survivor).  ``texts`` gives pending new texts of notes the
    caller is editing anyway (path -> whole text): those notes are
    rewritten on top of that text and their edit carries both changes (one
    Edit per path, ``before`` = the bytes on disk).  ``index`` is a
    :class:`index.NoteIndex` to find the notes cheaply (default: one without
    cache).  ``after_resolver`` and ``settings`` as for
    :func:`retarget_text` (default settings: the vault's ``app.json``).

    An edit of a note that itself moves is keyed by its current (old) path:
    the caller who moves it applies that edit at the new path after the
    move.  Notes that are not UTF-8 are skipped (never rewritten).
    Returns ``(edits, changes)``: ``list[Edit]`` in vault order and
    every :class:`Change`.
    """
    plan = plan_details(vault, mapping, keep_text, texts, index, after_resolver=after_resolver, settings=settings)
    return plan.edits, plan.changes


class Plan(NamedTuple):
    """What :func:`plan_details` found: ``edits`` and ``changes`` as
    :func:`plan_retarget` returns them; ``left`` the links that would not
    resolve to their file's new path after the change, each ``{path, line,
    target, was, now, why}`` (``was`` the file it resolved to, ``now`` where
    it would resolve, or null); ``texts`` the new text of each edited note."""

    edits: list
    changes: list[Change]
    left: list[dict]
    texts: dict[str, str]


def plan_details(
    vault,
    mapping: dict[str, str],
    keep_text: bool = False,
    texts: dict[str, str] | None = None,
    index=None,
    *,
    after_resolver: Resolver | None = None,
    settings: dict | None = None,
    frozen=(),
) -> Plan:
    """:func:`plan_retarget`, with what it cannot rewrite.  ``frozen`` are
    notes that must not be written (a templates folder): their links that
    need a rewrite are reported in ``left``, never edited."""
    from ..read.index import NoteIndex
    from .changes import Edit

    texts = texts or {}
    resolver = vault.resolver
    later = after_resolver if after_resolver is not None else resolver_after(resolver, mapping, vault.files)
    if settings is None:
        settings = link_settings(vault.root)
    index = index if index is not None else NoteIndex(vault)
    frozen = set(frozen)
    names = {_name_key(p) for pair in mapping.items() for p in pair if p}
    plan = Plan([], [], [], {})
    for path in vault.notes:
        if path not in texts and not _needs_rewrite(index, path, resolver, later, mapping, names):
            continue
        note = vault.note(path)
        if note.text is None:
            continue
        text = texts.get(path, note.text)
        new_source = mapping.get(path) or path
        if path in frozen:
            new_text, found = text, []
        else:
            new_text, found = retarget_text(text, path, resolver, mapping, keep_text, later, settings)
        plan.left.extend(_left(text, new_text, path, new_source, resolver, later, mapping, path in frozen))
        plan.changes.extend(found)
        after = note.encode(new_text)
        if after != note.data:
            why = f"{len(found)} link(s) retargeted" if found else "pending edit"
            plan.edits.append(Edit(path, note.data, after, why))
            plan.texts[path] = new_text
    return plan


def _left(text, new_text, source, new_source, resolver, later, mapping, frozen) -> list[dict]:
    """The links of ``new_text`` that do not resolve to the new path of the
    file the same link of ``text`` resolved to (link order is kept by a
    rewrite, so the two lists pair up)."""
    found = []
    old_spans, new_spans = link_spans(text), link_spans(new_text)
    if len(old_spans) != len(new_spans):  # cannot happen: a rewrite keeps every link
        raise AssertionError(f"{source}: a rewrite changed the number of links")
    for old, new in zip(old_spans, new_spans, strict=True):
        if not old.link.target:
            continue
        was = resolver.resolve(old.link.target, source).path
        if was is None or mapping.get(was, was) is None:
            continue
        now = later.resolve(new.link.target, new_source).path
        if now != mapping.get(was, was):
            why = "in a templates folder: never written" if frozen else "no link of the same form resolves to it"
            found.append(
                {"path": source, "line": new.link.line, "target": new.link.target, "was": was, "now": now, "why": why}
            )
    return found


def _name_key(target: str) -> str:
    """The name part of a link target or path as the resolver indexes it:
    the last part, lower-cased after NFC, without ``.md``."""
    name = target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].strip()
    if not name.isascii():
        name = unicodedata.normalize("NFC", name)
    return _strip_md(name.lower())


def _needs_rewrite(index, path: str, resolver, later, mapping, names: set[str] | None = None) -> bool:
    """Whether a link of note ``path`` may resolve elsewhere after the
    change.  ``names`` (the :func:`_name_key` of every old and new path)
    skips links whose name no moved file has: the resolver's candidates
    for a target are only files of that name, so those cannot change,
    unless the note itself moves (its folder ranks the candidates)."""
    summary = index.summary(path)
    if summary.unreadable is not None:
        return False
    new_source = mapping.get(path) or path
    moves_itself = new_source != path
    for link in summary.links:
        if not link.target:
            continue
        if names is not None and not moves_itself and _name_key(link.target) not in names:
            continue
        before = resolver.resolve(link.target, path).path
        if before is None:
            continue
        desired = mapping.get(before, before)
        if desired is not None and later.resolve(link.target, new_source).path != desired:
            return True
    return False
