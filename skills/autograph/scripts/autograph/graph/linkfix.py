"""The plan of ``graph.py fix``: broken links whose intended target is certain, repaired.

A link is repaired only when it resolves nowhere (Obsidian's rules,
:class:`links.Resolver`) and exactly one file is what it meant, found by
one of these, in this order:

``moved``
    it named a file that autograph moved (``graph.py mv``, ``enforce.py
    --move``, dedup: the journal under ``.graph/journal/`` records every
    move of a run that was not undone), and that file still exists;
``markdown``
    a Markdown link whose encoding is off: the destination names a file
    when read without ``%``-decoding (a file called ``a%20b.md``), decoded
    twice (``%2520``), with ``+`` for spaces, or without a ``.md`` put
    after an attachment's name (``pic.png.md``);
``path``
    a path (``folder/Note``) whose folder is wrong, while exactly one file
    in the vault has its last part's name (not a path with a URI scheme,
    such as Dendron's ``dendron://vault/note``);
``alias``
    a bare ``[[Alias]]`` that is in the ``aliases`` of exactly one note: it
    becomes ``[[Target|Alias]]`` (Obsidian does not resolve aliases).

A link with several candidates is reported with them (``ambiguous``), never
guessed; one with none is reported (``unfixable``).  Full-text search is
never consulted (BR-25), letter case is never "fixed" (a link that resolves
is never touched, BR-18), and nothing inside code is a link (BR-16).  The
new link keeps its form (:func:`relink.new_target`), its ``#heading``,
``#^block``, ``|alias`` and embed ``!``.  Notes in templates folders are
never written: their repairable links are reported.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ..read.links import Resolver
from ..read.text import plural
from ..read.vault import GRAPH_DIR, TRASH_DIR
from ..write import journal, relink
from ..write.changes import Edit
from .listing import shown

__all__ = ["FixPlan", "fix_json", "fix_text", "journal_moves", "plan_fix"]


@dataclass
class FixPlan:
    """``edits`` (one :class:`Edit` per note); ``planned`` each
    repaired link ``{path, line, old, new, why}``; ``ambiguous`` each link
    with several candidates ``{path, line, target, candidates[]}``;
    ``unfixable`` each other broken link ``{path, line, target, why,
    suggestions[]}``: ``suggestions`` are notes a person may mean (the same
    name but for case, spaces, ``-`` and ``_``, or a ``title`` property
    equal to the link), never written."""

    edits: list = field(default_factory=list)
    planned: list[dict] = field(default_factory=list)
    ambiguous: list[dict] = field(default_factory=list)
    unfixable: list[dict] = field(default_factory=list)


# Commands whose runs write each moved file under its new name, then trash
# the old one, in the same order (autograph.graph.moves): the k-th new file of
# such a run is the k-th trashed one.
MOVE_COMMANDS = ("graph.py mv", "enforce.py --move")


def journal_moves(root) -> dict[str, tuple[str, str]]:
    """Every file autograph moved, ``old path -> (new path, run id)``,
    chains followed (a file moved twice maps to where it went last).

    From the journal of each run that finished and was not undone or
    rolled back: a ``move`` change that was written (a rename), and in a
    run of ``graph.py mv`` or ``enforce.py --move`` each file created
    paired with the file trashed in the same place of the order (such a
    run writes the new names, then trashes the old ones); in other runs, a
    file created with the very bytes of a file the run trashed.  Moves
    into ``.trash/`` are not moves."""
    graph = Path(root) / GRAPH_DIR
    runs = journal.runs(graph)
    undone = {run.undoes for run in runs if run.undoes}
    found: dict[str, tuple[str, str]] = {}
    for run in reversed(runs):  # oldest first, so a later move wins
        if run.id in undone or run.state != "done":
            continue
        done = [c for c in run.changes if c.result == "written"]
        for change in done:
            trash = TRASH_DIR + "/"
            if (
                change.op == "move"
                and change.to
                and not change.to.startswith(trash)
                and not change.path.startswith(trash)
            ):
                found[change.path] = (change.to, run.id)
        created = [c for c in done if c.op == "write" and c.before is None]
        trashed = [c for c in done if c.op == "trash"]
        if run.command in MOVE_COMMANDS and len(created) == len(trashed):
            pairs = zip(trashed, created, strict=True)
        else:
            by_bytes = {c.after: c for c in created}
            pairs = ((t, by_bytes[t.before]) for t in trashed if t.before in by_bytes)
        for old, new in pairs:
            found[old.path] = (new.path, run.id)
    final: dict[str, tuple[str, str]] = {}
    for old in found:
        new, run_id = found[old]
        seen = {old}
        while new in found and new not in seen:
            seen.add(new)
            new, run_id = found[new]
        if new != old:
            final[old] = (new, run_id)
    return final


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _key(text: str) -> str:
    text = unicodedata.normalize("NFC", text.strip()).lower()
    return text[:-3] if text.endswith(".md") else text


def _add_names(path: str, props: dict, aliases: dict, loose: dict, titles: dict) -> None:
    """Add note ``path``'s names: lower-cased alias -> the notes that list
    it in ``aliases`` (or the older ``alias``); for suggestions, its loose
    file name (:func:`_loose`) and its ``title``."""
    _add(loose, _loose(path.rsplit("/", 1)[-1]), path)
    for key, value in props.items():
        lowered = key.lower()
        if lowered in ("aliases", "alias"):
            for alias in value if isinstance(value, list) else [value]:
                if isinstance(alias, str) and alias.strip():
                    _add(aliases, _key(alias), path)
        elif lowered == "title" and isinstance(value, str) and value.strip():
            _add(titles, _key(value), path)


def _add(names: dict, key: str, path: str) -> None:
    """``names[key]``: the path alone, or a set of paths once a second comes
    (a large vault's every note has a name: a set each would cost more than
    the names)."""
    found = names.get(key)
    if found is None:
        names[key] = path
    elif isinstance(found, str):
        if found != path:
            names[key] = {found, path}
    else:
        found.add(path)


def _paths(names: dict, key: str) -> set[str]:
    """The paths :func:`_add` put under ``key``."""
    found = names.get(key)
    return set() if found is None else {found} if isinstance(found, str) else found


def name_of(target: str) -> str:
    """The last part of a link target (its file name as written)."""
    return target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _loose(name: str) -> str:
    """A name with letter case, spaces, ``-`` and ``_`` left out: how a
    person may misspell a file name (for suggestions only)."""
    return re.sub(r"[\s_-]+", "", _key(name))


def _candidates(span, text, source, resolver, moved, moved_resolver, aliases):
    """``(why, [paths])`` of what a broken link meant, or ``(None, [])``."""
    link = span.link
    target = link.target
    if moved_resolver is not None:
        was = moved_resolver.resolve(target, source)
        if was.path is not None and len(was.candidates) == 1:
            new, run_id = moved[was.path]
            if new in resolver._paths.values():
                return f"moved by autograph to {new} (run {run_id})", [new]
    if link.kind == "markdown":
        raw = text[span.tstart : span.tend]
        for variant, why in (
            (raw, "file name holds %-codes"),
            (unquote(target), "percent-encoded twice"),
            (target.replace("+", " "), "'+' for spaces"),
            (target[:-3] if target.lower().endswith(".md") else "", "'.md' after a file that is not a note"),
        ):
            if variant and variant != target:
                found = resolver.resolve(variant, source)
                if found.path is not None:
                    return f"Markdown link encoding: {why}", list(found.candidates)
    name = target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if _SCHEME.match(target):
        return None, []  # dendron://vault/note, a URL: another tool's address, not a folder path
    if "/" in target.replace("\\", "/").strip("/") and name:
        found = resolver.resolve(name, source)
        if found.path is not None:
            return "folder path out of date; the file name is in the vault", list(found.candidates)
    elif link.kind != "markdown":
        paths = _paths(aliases, _key(target))
        if paths:
            return "alias of the note", sorted(paths)
    return None, []


def plan_fix(vault, schema=None, index=None, settings=None, described: bool = False) -> FixPlan:
    """The repairs of every broken link of ``vault`` whose target is certain
    (see the module docstring), planned, not written.  ``index`` is a
    :class:`index.NoteIndex` (default: one without cache), ``settings``
    :func:`relink.link_settings` (default: the vault's); ``described``: each
    edit kept as :meth:`Edit.described` (a dry run that shows no diff)."""
    from ..read.index import NoteIndex

    index = index if index is not None else NoteIndex(vault)
    settings = settings if settings is not None else relink.link_settings(vault.root)
    broken: set[str] = set()
    aliases: dict[str, str | set[str]] = {}
    suggest: dict[str, str | set[str]] = {}
    titles: dict[str, str | set[str]] = {}
    for path, summary in index.each(vault.notes, targets=True):  # one pass, no summary kept
        if summary.unreadable is None and any(target is None for target, _, _ in summary.targets):
            broken.add(path)
        _add_names(path, summary.properties, aliases, suggest, titles)
    broken_in = sorted(broken)
    plan = FixPlan()
    if not broken_in:
        return plan
    resolver = vault.resolver
    moved = journal_moves(vault.root)
    moved_resolver = Resolver(list(moved)) if moved else None
    frozen = vault.frozen(schema)
    for path in broken_in:
        note = vault.note(path, keep=False)  # read once: a large vault's broken notes are not all held
        if note.text is None:
            continue
        text = note.text
        fixes = []
        for span in relink.link_spans(text):
            link = span.link
            if resolver.resolve(link.target, path).path is not None:
                continue
            why, candidates = _candidates(span, text, path, resolver, moved, moved_resolver, aliases)
            row = {"path": path, "line": link.line, "target": link.target}
            unfixable = {**row, "suggestions": []}
            if len(candidates) > 1:
                plan.ambiguous.append({**row, "candidates": candidates})
                continue
            if not candidates:
                hints = sorted(_paths(suggest, _loose(name_of(link.target))) | _paths(titles, _key(link.target)))
                plan.unfixable.append({**row, "why": "no file has that name, path or alias", "suggestions": hints[:5]})
                continue
            if path in frozen:
                plan.unfixable.append(
                    {**unfixable, "why": f"in a templates folder, never written ({why}: {candidates[0]})"}
                )
                continue
            new = relink.new_target(link.target, candidates[0], path, resolver, settings)
            if new is None:
                plan.unfixable.append({**unfixable, "why": f"no link of this form reaches {candidates[0]}"})
                continue
            fixes.append((span, new, why, why == "alias of the note", candidates[0]))
        if not fixes:
            continue
        rows = []
        plans = []
        for span, new, why, keep, _ in fixes:
            one = relink.rewrite_links(text, [(span, new)], keep)
            delta = len(one) - len(text)
            rows.append(
                {
                    "path": path,
                    "line": span.link.line,
                    "old": text[span.start : span.end],
                    "new": one[span.start : span.end + delta],
                    "why": why,
                }
            )
            plans.append((span, new, keep))
        new_text = _apply(text, plans)
        if not _safe(text, new_text, path, resolver, fixes):
            plan.unfixable.extend(
                {
                    "path": path,
                    "line": r["line"],
                    "target": r["old"],
                    "why": "the repaired note would not read back",
                    "suggestions": [],
                }
                for r in rows
            )
            continue
        plan.planned.extend(rows)
        edit = Edit(path, note.data, note.encode(new_text), f"fix: {len(rows)} broken link(s)")
        plan.edits.append(edit.described() if described else edit)
    return plan


def _apply(text: str, plans) -> str:
    """All repairs of one note, last first so earlier offsets hold."""
    for span, new, keep in sorted(plans, key=lambda item: item[0].start, reverse=True):
        text = relink.rewrite_links(text, [(span, new)], keep)
    return text


def _safe(text: str, new_text: str, source: str, resolver, fixes) -> bool:
    """Whether every link of ``new_text`` resolves as the same link of
    ``text`` did, and each repaired one to its candidate; the frontmatter
    still parses when it did."""
    from ..read import frontmatter as fm

    old_spans, new_spans = relink.link_spans(text), relink.link_spans(new_text)
    if len(old_spans) != len(new_spans):
        return False
    wanted = {span.start: candidate for span, *_, candidate in fixes}
    for old, new in zip(old_spans, new_spans, strict=True):
        was = resolver.resolve(old.link.target, source).path
        now = resolver.resolve(new.link.target, source).path
        if old.start in wanted:
            if now != wanted[old.start]:
                return False
        elif now != was:
            return False
    before, after = fm.parse(text), fm.parse(new_text)
    return not (before is not None and before.error is None and (after is None or after.error is not None))


def fix_json(root, plan: FixPlan, outcome: dict) -> dict:
    """``graph.py fix --json``: ``{vault, planned[], ambiguous[],
    unfixable[]}`` of ``plan`` (rows as in :class:`FixPlan`), then the keys
    of ``outcome`` (:func:`cli.carry_out`'s: edits, written, conflicts,
    failed, run)."""
    return {
        "vault": str(root),
        "planned": plan.planned,
        "ambiguous": plan.ambiguous,
        "unfixable": plan.unfixable,
        **outcome,
    }


def fix_text(plan: FixPlan, applied: bool) -> str:
    """The human report of ``graph.py fix`` before its write outcome: the
    repairs (made when ``applied``, else to make), the links with several
    candidates and those left broken, each list cut at
    :data:`listing.SHOWN` rows.  No final newline."""
    verb = "repaired" if applied else "to repair"
    lines = [f"{plural(len(plan.planned), 'broken link')} {verb} in {plural(len(plan.edits), 'note')}"]
    lines += shown([f"{r['path']}:{r['line']}  {r['old']} -> {r['new']}  ({r['why']})" for r in plan.planned])
    if plan.ambiguous:
        lines.append(f"{plural(len(plan.ambiguous), 'link')} with several candidates (not guessed):")
        lines += shown(
            [f"{r['path']}:{r['line']}  {r['target']} -> {', '.join(r['candidates'])}" for r in plan.ambiguous]
        )
    if plan.unfixable:
        lines.append(f"{plural(len(plan.unfixable), 'broken link')} left (no certain target):")
        lines += shown(
            [
                f"{r['path']}:{r['line']}  {r['target']}  ({r['why']})"
                + (f"; maybe {', '.join(r['suggestions'])}" if r.get("suggestions") else "")
                for r in plan.unfixable
            ]
        )
    return "\n".join(lines)
