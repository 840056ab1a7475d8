"""Maps of Content: one generated index note per domain (or per type).

:func:`plan` groups the vault's cards (:meth:`vault.Vault.cards`) by the
schema's ``moc.group_by``: ``"domain"`` (the ``domain`` property, each of
them when it is a list, else the folder's ``domain_inference``) or ``"type"`` (the ``type`` property, through
``type_aliases``).  Group names that differ only in letter case or Unicode
normalisation are one group (:func:`key_of`; named as most of its cards
spell it).  Cards without a group are counted, not listed.  Each group gets
the note ``<moc.folder>/<group> MOC.md``; a group keeps the page it already
has (a newcomer whose file name folds to it gets `` (2)``):

* frontmatter ``generated_by: autograph`` (the mark of a generated note:
  see :func:`is_generated`), ``type: moc`` (a hub, never an orphan) and a
  ``description``;
* group names and statuses in headings as one line of plain text
  (:func:`heading_text`: no second heading, link or tag from a value);
* entries under one ``## <status>`` heading per status, in the schema's
  ``status_order`` (statuses it does not name next, by name; cards without a
  status last, under ``## (no status)``), then by title (the ``title``
  property, else the file name) ignoring case;
* each entry ``- [[link]] — description``: the shortest link that the
  vault's resolver resolves to that card from the MOC (the file name when
  it is unique, else the shortest path suffix), with ``|title`` when the
  title differs; a name a wikilink cannot hold (``# | ^ [ ]``) gets a
  Markdown link.  A description is one line of at most
  :data:`DESCRIPTION_CHARS` characters.

A page never exceeds the caps (``moc`` caps, default the index's hard caps:
200 lines, 25,000 bytes): a longer map is split into ``<group> MOC.md``,
``<group> MOC 2.md``, ... each with a line linking the parts.

The text depends only on the vault (no dates, no clock), so an unchanged
vault plans no write.  A file at a MOC's path that is not generated (a note
a person wrote) is never written over: its group is reported as blocked.
Generated MOCs no group needs any more go to the trash: only pages in
``moc.folder`` named as pages are (:func:`is_page_path`), and only when
every line of their body is one moc.py writes; a marked note elsewhere (a
person's copy of a map) is never touched.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ..read.generated import MARK, is_generated, is_page_path

# store, frontmatter and links are imported where used

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from ..read.links import Resolver

__all__ = [
    "DESCRIPTION_CHARS",
    "MocError",
    "Plan",
    "heading_text",
    "key_of",
    "link_to",
    "plan",
]

DESCRIPTION_CHARS = 200
NO_STATUS = "(no status)"
SUFFIX = " MOC"
NAV_ALL = 30  # up to this many parts, every page links every part; above, first/previous/next/last

_UNSAFE_NAME = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f]+')
_WIKI_UNSAFE = set("#|^[]")
# what would open a comment, math or a code block spanning the lines after it
_SPANNING = re.compile(r"%%|<!--|\$\$|`{3,}|~{3,}")


class MocError(ValueError):
    """The MOCs cannot be planned as the schema asks (a folder that is never
    written, caps too small for one entry)."""


@dataclass
class Entry:
    path: str
    title: str
    status: str | None
    description: str


@dataclass
class Plan:
    """What :func:`plan` found.

    ``changes``: :class:`Edit` (new or changed pages) and
    :class:`Trash` (generated pages no longer needed).  ``pages``:
    ``{path, group, part, parts, entries, lines, bytes, change}`` per page
    (``change``: ``"new"``, ``"changed"`` or ``"unchanged"``).
    ``blocked``: ``{group, path, reason}`` per group not written because a
    note someone wrote holds one of its names.  ``ungrouped``: cards without
    a group.  ``trashed``: the pages trashed.  ``not_owned``: notes marked
    as generated that are not named as pages in ``folder`` (a person's copy
    of a map, pages of an earlier ``moc.folder``) and pages no group
    needs that hold a line a person wrote: never trashed.  ``group_by``, ``folder`` and ``caps`` echo the settings."""

    group_by: str
    folder: str
    caps: dict
    changes: list = field(default_factory=list)
    pages: list[dict] = field(default_factory=list)
    blocked: list[dict] = field(default_factory=list)
    ungrouped: int = 0
    trashed: list[str] = field(default_factory=list)
    not_owned: list[str] = field(default_factory=list)


def _one_line(value, limit: int) -> str:
    text = " ".join(value.split()) if isinstance(value, str) else ""
    text = _SPANNING.sub(lambda m: " ".join(m.group()), text)
    if len(text) > limit:
        cut = text[: limit - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2 :] else cut).rstrip() + "…"
    return text


def key_of(name: str) -> str:
    """A group name or vault path as names are compared here: NFC, then
    case-folded (``Person``, ``person`` and a decomposed ``Café`` and a
    composed one are each one name, as to Obsidian's resolver and to a
    case-insensitive file system)."""
    return unicodedata.normalize("NFC", name).casefold()


_MARKUP = re.compile(r"[\\\[\]#*`<>|]")


def heading_text(value: str) -> str:
    """``value`` as text that stays one plain heading or bold run: one line
    (:func:`_one_line`), with the characters that would make a link, a tag,
    another heading, emphasis, code or HTML of it escaped with ``\\``
    (``st\\n## x`` -> ``st \\#\\# x``; ``[[Home]]`` -> ``\\[\\[Home\\]\\]``)."""
    return _MARKUP.sub(lambda m: "\\" + m.group(), _one_line(value, 300))


def _groups_of(path: str, properties: dict, schema, group_by: str) -> list[str]:
    """The groups a card is listed in: its type (one), or each of its
    domains (``domain: [work, family]`` is in two maps), else its folder's
    inferred domain; ``[]`` for none."""
    if group_by == "type":
        kind = properties.get("type")
        if not isinstance(kind, str) or not kind.strip():
            return []
        kind = kind.strip()
        return [schema.type_aliases.get(kind, kind)]
    domain = properties.get("domain")
    named = [d.strip() for d in (domain if isinstance(domain, list) else [domain]) if isinstance(d, str) and d.strip()]
    if named:
        return named
    inferred = schema.infer_domain(path)
    return [inferred] if inferred else []


def file_stem(group: str) -> str:
    """The file name (without ``.md``) of a group's first page: characters
    no file or link name may hold become ``-``."""
    name = _UNSAFE_NAME.sub("-", group).strip(" .-") or "unnamed"
    return name[:120] + SUFFIX


def link_to(path: str, source: str, resolver: Resolver, title: str | None = None) -> str:
    """A link from note ``source`` to file ``path``: ``[[target]]`` with the
    shortest target (file name, else a longer path suffix, else the whole
    path, else the path with its extension) that ``resolver`` resolves to
    ``path`` without ambiguity (a note at the root whose name others share
    is its own exact path, which Obsidian prefers), and
    ``|title`` when ``title`` differs from that target.  A path a wikilink
    cannot hold becomes ``[title](path%20encoded.md)``."""
    stem = path[:-3] if path.endswith(".md") else path
    shown = title if title and not (_WIKI_UNSAFE & set(title)) and "\n" not in title else None
    if _WIKI_UNSAFE & set(path):
        from urllib.parse import quote

        label = (title or stem.rsplit("/", 1)[-1]).replace("[", "(").replace("]", ")")
        return f"[{label}]({quote(path, safe='/')})"
    parts = stem.split("/")
    target = path  # the whole path with its extension, when no shorter form resolves ("a.png.md")
    for k in range(1, len(parts) + 1):
        candidate = "/".join(parts[-k:])
        found = resolver.resolve(candidate, source)
        if found.path == path and (not found.ambiguous or k == len(parts)):
            target = candidate
            break
    alias = f"|{shown}" if shown is not None and shown != target else ""
    return f"[[{target}{alias}]]"


def _entries(vault, schema, index, group_by: str) -> tuple[dict[str, list[Entry]], int, list[str], list[str]]:
    """Cards by group, the count of cards without one, the generated pages
    found (paths: marked notes named as pages in ``moc.folder``) and the
    other marked notes (never written or trashed)."""
    cards = set(vault.cards(schema))
    groups: dict[str, list[Entry]] = {}
    ungrouped = 0
    spellings: dict[str, dict[str, list[Entry]]] = {}
    generated: list[str] = []
    kept: list[str] = []
    for path, summary in index.each(vault.notes):  # a note at a time: no summary kept
        if summary.unreadable is not None:
            continue
        props = summary.properties
        if is_generated(props):
            (generated if is_page_path(path, schema.moc["folder"]) else kept).append(path)
            continue
        if path not in cards:
            continue
        groups_of = _groups_of(path, props, schema, group_by)
        if not groups_of:
            ungrouped += 1
            continue
        title = props.get("title")
        title = _one_line(title, 300) if isinstance(title, str) and title.strip() else summary.stem
        status = props.get("status")
        status = heading_text(status) if isinstance(status, str) and status.strip() else None
        description = _one_line(props.get("description"), DESCRIPTION_CHARS)
        entry = Entry(path, title, status, description)
        seen = set()
        for group in groups_of:
            group = unicodedata.normalize("NFC", group)
            if key_of(group) not in seen:  # "work" and "Work" are one map, where it is listed once
                seen.add(key_of(group))
                spellings.setdefault(key_of(group), {}).setdefault(group, []).append(entry)
    for found in spellings.values():
        # one group per name as Obsidian and the file system compare names; the spelling most cards use
        group = min(found, key=lambda name: (-len(found[name]), name))
        groups[group] = [entry for entries in found.values() for entry in entries]
    return groups, ungrouped, generated, kept


def _sorted(entries: list[Entry], order: list[str]) -> list[Entry]:
    rank = {heading_text(status): i for i, status in enumerate(order) if isinstance(status, str)}

    def key(entry: Entry):
        status = entry.status
        place = (0, rank[status], "") if status in rank else (1, 0, status) if status is not None else (2, 0, "")
        return (place, entry.title.casefold(), entry.title, entry.path)

    return sorted(entries, key=key)


def _names(groups: list[str], folder: str, owners: dict[str, str] | None = None) -> dict[str, str]:
    """Group -> path of its first page, distinct ignoring case (:func:`key_of`;
    a group whose file name folds to a taken one gets `` (2)``).  ``owners``
    maps the path of an existing first page to the :func:`key_of` of the
    group it holds: that group keeps its page (a newcomer never takes over
    a map people link to)."""
    taken: set[str] = set()
    names = {}
    owners = owners or {}
    prefix = folder + "/" if folder else ""
    for group in sorted(groups):
        stem = file_stem(group)
        mine = re.escape(key_of(prefix + stem)) + r"(?: \(\d+\))?\.md"
        for page, owner in sorted(owners.items()):
            if (
                owner == key_of(group)
                and re.fullmatch(mine, key_of(page))
                and key_of(page[len(prefix) : -3]) not in taken
            ):
                taken.add(key_of(page[len(prefix) : -3]))
                names[group] = page  # spelled as it is written
                break
    for group in sorted(groups):
        if group in names:
            continue
        stem = file_stem(group)
        name, n = stem, 1
        while key_of(name) in taken:
            n += 1
            name = f"{stem} ({n})"
        taken.add(key_of(name))
        names[group] = f"{folder}/{name}.md" if folder else f"{name}.md"
    return names


def _owners(vault, generated: list[str]) -> dict[str, str]:
    """Each generated first page -> :func:`key_of` of the group it holds
    (its ``# `` heading, as :func:`_header` writes it)."""
    owners = {}
    for path in generated:
        if re.search(r" MOC \d+\.md$", path):
            continue  # a later part: the first page names the group
        text = vault.note(path, keep=False).text or ""
        match = re.search(r"^# (.+)$", text, re.MULTILINE)
        if match:
            owners[path] = key_of(re.sub(r"\\(.)", r"\1", match.group(1)))
    return owners


def _page_path(first: str, part: int) -> str:
    return first if part == 1 else f"{first[:-3]} {part}.md"


def _header(group: str, group_by: str, count: int, part: int, parts: int, nav: str) -> list[str]:
    # a property value Obsidian reads links in: no [[...]] from a group name
    what = f"{group_by} {_one_line(group, 300).replace('[', '(').replace(']', ')')}"
    description = f"Map of Content of {what}: {count} card{'s' if count != 1 else ''}"
    if parts > 1:
        description += f" (part {part} of {parts})"
    from ..read.frontmatter import format_scalar

    lines = [
        "---",
        f"{MARK[0]}: {MARK[1]}",
        "type: moc",
        f"description: {format_scalar(description)}",
        "---",
        "",
        f"# {heading_text(group)}",
        "",
        f"Cards of {group_by} **{heading_text(group)}**, by status, then title. Generated by"
        " `moc.py generate`: edits here are replaced on its next run (remove `generated_by` to keep"
        " this note as your own).",
        "",
    ]
    if nav:
        lines += [nav, ""]
    return lines


def _nav(links: list[str], part: int, full: bool | None = None) -> str:
    """The line linking the parts, for part ``part`` of ``len(links)``:
    every part up to :data:`NAV_ALL` parts (``full``), else the first, the
    previous, the next and the last."""
    parts = len(links)
    if parts == 1:
        return ""
    if full if full is not None else parts <= NAV_ALL:
        shown = [f"**{n}**" if n == part else links[n - 1] for n in range(1, parts + 1)]
        return f"Part {part} of {parts}: " + " · ".join(shown)
    shown = [f"first {links[0]}"]
    if part > 1:
        shown.append(f"previous {links[part - 2]}")
    if part < parts:
        shown.append(f"next {links[part]}")
    shown.append(f"last {links[-1]}")
    return f"Part {part} of {parts}: " + " · ".join(shown)


def _widest_nav(first: str, parts: int, resolver: Resolver) -> str:
    """A nav line at least as wide as that of any page of any split into at
    most ``parts`` parts: the widest full line of ``min(parts, NAV_ALL)``
    parts and the widest short line of ``parts`` parts.  Both widths only
    grow with the part count, so pages cut for this reserve still fit when
    the cut makes fewer parts than guessed."""
    if parts == 1:
        return ""
    few = _nav_links(first, min(parts, NAV_ALL), resolver)
    many = _nav_links(first, parts, resolver)
    navs = [_nav(few, n, True) for n in range(1, len(few) + 1)] if len(few) > 1 else []
    navs += [_nav(many, n, False) for n in (1, 2, parts - 1, parts)]
    return max(navs, key=lambda line: len(line.encode("utf-8")))


def _nav_links(first: str, parts: int, resolver: Resolver) -> list[str]:
    """``[[name|n]]`` for each part: the bare file name when no other file
    has it (pages are made together, so it will be theirs alone), else
    the whole path."""
    links = []
    for n in range(1, parts + 1):
        path = _page_path(first, n)
        name = path[:-3].rsplit("/", 1)[-1]
        found = resolver.resolve(name, first)
        target = name if found.path in (None, path) and not (found.ambiguous and found.path != path) else path[:-3]
        links.append(f"[[{target}|{n}]]")
    return links


def _size(lines: list[str]) -> tuple[int, int]:
    """``(lines, bytes)`` of ``lines`` written one per line (none holds a
    line break), as :func:`size.measure` counts the file."""
    return len(lines), sum(len(line.encode("utf-8")) for line in lines) + len(lines)


def _paginate(
    group: str, group_by: str, entries: list[tuple[str | None, str]], first: str, caps: dict, resolver: Resolver
) -> list[list[str]]:
    """The lines of each page.  ``entries``: (status, entry line) in order.
    The header of a page is sized for the part count guessed, and the
    guess grows until the pages made agree with it."""
    count = len(entries)
    sizes = [_size([line])[1] for _, line in entries]
    parts = 1
    for _ in range(20):
        widest = _widest_nav(first, parts, resolver)
        head_lines, head_bytes = _size(_header(group, group_by, count, parts, parts, widest))
        room_lines, room_bytes = caps["lines"] - head_lines, caps["bytes"] - head_bytes
        pages: list[list[str]] = []
        body: list[str] = []
        used = [0, 0]
        status = object()
        for (entry_status, line), size in zip(entries, sizes, strict=True):
            heading = f"## {entry_status or NO_STATUS}"
            add = ([""] if body else []) + [heading, ""] if entry_status != status else []
            add_lines, add_bytes = _size(add)
            if body and (used[0] + add_lines + 1 > room_lines or used[1] + add_bytes + size > room_bytes):
                pages.append(body)
                body, used = [], [0, 0]
                add = [heading, ""]
                add_lines, add_bytes = _size(add)
            if not body and (add_lines + 1 > room_lines or add_bytes + size > room_bytes):
                raise MocError(
                    f"{first}: one entry does not fit in a page of {caps['lines']} lines and {caps['bytes']} bytes; "
                    "raise moc.caps in the schema"
                )
            body += add + [line]
            used = [used[0] + add_lines + 1, used[1] + add_bytes + size]
            status = entry_status
        pages.append(body)
        if len(pages) <= parts:  # fewer parts than guessed: their headers are no wider (_widest_nav)
            parts = len(pages)
            links = _nav_links(first, parts, resolver)
            return [_header(group, group_by, count, n, parts, _nav(links, n)) + page for n, page in enumerate(pages, 1)]
        parts = len(pages)
    raise MocError(f"{first}: the pages do not settle; raise moc.caps in the schema")


def plan(vault, schema, index=None) -> Plan:
    """Plan the Maps of Content of ``vault`` (see the module docstring).

    ``index``: a :class:`index.NoteIndex` for the notes' properties (default:
    every note is read).  Raises :class:`MocError` when ``moc.folder`` is a
    folder whose notes are never written (a templates folder or in
    ``ignore_folders``) or the caps cannot hold one entry.
    """
    from ..read.index import NoteIndex
    from ..read.links import Resolver
    from ..read.size import measure
    from ..write.changes import Edit, Trash

    settings = schema.moc
    folder, group_by = settings["folder"], settings["group_by"]
    caps = {"lines": settings["lines"], "bytes": settings["bytes"]}
    for kept in [*vault.template_folders, *schema.ignore_folders]:
        kept = kept.strip("/")
        if kept and (folder == kept or folder.startswith(kept + "/")):
            raise MocError(
                f"moc.folder {folder!r} is inside {kept!r}, a folder whose notes are never written; "
                "choose another moc.folder"
            )
    index = index if index is not None else NoteIndex(vault)
    groups, ungrouped, generated, kept = _entries(vault, schema, index, group_by)
    result = Plan(group_by, folder, caps, ungrouped=ungrouped, not_owned=kept)
    existing = {key_of(path): path for path in vault.files}
    generated_keys = {key_of(path) for path in generated}
    names = _names(list(groups), folder, _owners(vault, generated))
    order = schema.status_order
    # Links are chosen against the vault as it will be.  The page paths
    # depend on the links' lengths, so the first round assumes the first
    # pages only, and a round is repeated with the pages the last one made
    # until they agree (a page named like a card can change that card's
    # shortest link).
    others = [path for path in vault.files if key_of(path) not in generated_keys]
    planned = sorted(set(names.values()))
    for _ in range(4):
        resolver = Resolver(sorted(set(others) | set(planned)))
        made = {}
        for group in sorted(groups):
            first = names[group]
            entries = [(entry.status, _entry_line(entry, first, resolver)) for entry in _sorted(groups[group], order)]
            pages = _paginate(group, group_by, entries, first, caps, resolver)
            made[group] = ([_page_path(first, n) for n in range(1, len(pages) + 1)], pages)
        now = sorted(path for paths, _ in made.values() for path in paths)
        if now == planned:
            break
        planned = now
    wanted: set[str] = set()
    for group, (paths, pages) in sorted(made.items()):
        blocked = [p for p in paths if key_of(p) in existing and key_of(p) not in generated_keys]
        if blocked:
            for path in blocked:
                result.blocked.append(
                    {
                        "group": group,
                        "path": existing[key_of(path)],
                        "reason": "a note that was not generated has this name; it is never written over",
                    }
                )
            # its generated pages stay as they are: the group is not written
            wanted.update(existing[key_of(p)] for p in paths if key_of(p) in existing)
            continue
        for n, (path, lines) in enumerate(zip(paths, pages, strict=True), 1):
            path = existing.get(key_of(path), path)
            wanted.add(path)
            data = ("\n".join(lines) + "\n").encode("utf-8")
            before = vault.note(path, keep=False).data if path in vault.files else None
            change = "new" if before is None else "unchanged" if before == data else "changed"
            size = measure(data)
            result.pages.append(
                {
                    "path": path,
                    "group": group,
                    "part": n,
                    "parts": len(paths),
                    "entries": sum(1 for line in lines if line.startswith("- ")),
                    "lines": size.lines,
                    "bytes": size.bytes,
                    "change": change,
                }
            )
            if change != "unchanged":
                reason = f"Map of Content of {group_by} {group}"
                if len(paths) > 1:
                    reason += f", part {n} of {len(paths)}"
                result.changes.append(Edit(path, before, data, ("update " if before else "create ") + reason))
    for path in generated:
        if path in wanted:
            continue
        note = vault.note(path, keep=False)
        if note.text is None or not is_generated(note.properties):
            continue
        if _written_by_us(note.body):
            result.changes.append(Trash(path, note.data, "generated Map of Content no group needs any more"))
            result.trashed.append(path)
        else:
            result.not_owned.append(path)  # a person wrote in it: kept, never trashed
    return result


# the lines of a page's body moc.py writes (see _header, _paginate, _entry_line, _nav)
_OUR_LINE = re.compile(
    r"(?:# .*|## .*|Cards of .* Generated by `moc\.py generate`.*|Part \d+ of \d+: .*"
    r"|- (?:\[\[[^\]]+\]\]|\[[^\]]*\]\([^)\s]*\))(?: — .*)?|)"
)


def _written_by_us(body: str) -> bool:
    """Whether every line of a page's body is one moc.py writes (a person's
    own line, "- my notes", is not): only such a page may go to the trash."""
    return all(_OUR_LINE.fullmatch(line) for line in body.splitlines())


def _entry_line(entry: Entry, source: str, resolver: Resolver) -> str:
    line = "- " + link_to(entry.path, source, resolver, entry.title)
    return line + (f" — {entry.description}" if entry.description else "")
