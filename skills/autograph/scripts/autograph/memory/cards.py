"""Card operations: the update-in-place protocol of ``card.py``, as plans.

One function per command: :func:`plan_new`, :func:`plan_set`,
:func:`plan_log`, :func:`plan_link`, :func:`plan_retire`.  Each reads the
vault and returns a :class:`Plan` (the :class:`Edit` of each card it
would write, what changed, or why it refuses); none writes a file.  The
caller writes with ``cli.carry_out`` (``card.py`` does, under the vault's
writer lock).

The rules that make a vault hold one card per subject and one current value
per field:

* ``new`` refuses a card whose identity (``identity.match_fields``,
  normalised by :mod:`identity`) is held by an existing card, or whose file
  name (or note name) exists, naming that card;
* ``set`` compares the parsed values (identity values by their
  normalised form) and does nothing when they are equal (no write, no
  touch); otherwise it rewrites only that key's lines
  (:func:`frontmatter.set_property`) and appends the old value to
  ``## History`` (:func:`sections.history_line`);
* ``set`` refuses an identity value another live card holds unless
  forced (``identity-taken``; a forced one leaves a ``## Log`` line dedup
  reads), and autograph's own fields (:data:`OWN_FIELDS`); a secret-shaped
  value never goes to ``## History`` (``card.py`` refuses storing one
  unless allowed: :mod:`secrets`);
* ``log``, ``link`` and ``retire`` append to ``## Log`` and ``## Related``
  through :mod:`sections`; ``redact`` (:func:`plan_redact`) takes a
  secret out;
* every card a command writes is also touched (:func:`decay.plan_touch`:
  ``access_count`` + 1, ``tier``, ``last_accessed``) in the same one write,
  and gets ``updated`` set to today.
"""

from __future__ import annotations

import datetime
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..read import frontmatter as fm
from ..read import identity as ident
from ..read.location import is_inside
from ..read.text import printable
from ..write import sections
from ..write.changes import Edit
from .errors import Ambiguous, BadRequest
from .names import FORBIDDEN, file_name, link_form

__all__ = [
    "identity_needle",
    "FORBIDDEN",
    "Ambiguous",
    "BadRequest",
    "Plan",
    "REFUSED_EXIT",
    "alias_matches",
    "card_type",
    "field_lines",
    "json_value",
    "key_of",
    "exit_code",
    "find_card",
    "find_cards",
    "file_name",
    "identity_matches",
    "link_form",
    "named_card",
    "OWN_FIELDS",
    "parse_assignment",
    "parse_value",
    "plan_link",
    "plan_log",
    "plan_new",
    "plan_redact",
    "plan_retire",
    "plan_set",
    "report",
    "report_lines",
]

LIST_TYPES = {"tags", "aliases", "multitext", "list"}  # Obsidian property types that hold lists


class _NotEditable(Exception):
    """The card cannot be rewritten: unreadable, not UTF-8, frontmatter that
    does not parse, a value with comments, a section inside open code."""


@dataclass
class Plan:
    """What one ``card.py`` command would write.

    ``path`` is the card the command is about (vault-relative).  ``edits``
    holds one :class:`Edit` per card written (none: nothing to do).
    ``changes`` lists what changed: ``{path, field, old, new}`` for a
    property, ``{path, section, line}`` for a line added to a section.
    ``refused`` is None, or ``{reason, message, matches[{path, field,
    value}]}`` with ``reason`` one of ``identity-match``, ``exists``,
    ``by-itself``, ``by-superseded`` (exit 1), ``missing-required`` (exit 2,
    ``missing[]`` lists the fields), ``not-supersedable`` (exit 2) and
    ``not-editable`` (exit 4).  ``notes`` are things reported, not done."""

    command: str
    path: str | None = None
    edits: list = field(default_factory=list)
    changes: list = field(default_factory=list)
    refused: dict | None = None
    notes: list = field(default_factory=list)
    # remember's: created, updated, unchanged, ambiguous or refused; the cards looked at; a distinct title
    action: str | None = None
    matches: list = field(default_factory=list)
    suggested_title: str | None = None
    secrets: list = field(default_factory=list)  # redact's: the text taken out, never reported


# ---------------------------------------------------------------------------
# field=value


def parse_value(text: str):
    """The value of ``field=value`` as YAML reads one flow value: ``[a, b]``
    a list, ``{k: v}`` a mapping, ``3`` a number, ``true`` a bool, empty or
    ``null`` None, ``"3"`` or ``'3'`` text.  Unquoted text is taken whole
    (``a: b``, ``x # y`` stay text: a command-line word has no comments) and
    typed as :func:`frontmatter.resolve_plain` types it (``01234``, ``1.10``,
    ``yes`` stay text).  ``[[Acme]]`` is the link ``"[[Acme]]"``, also as a
    list item.  Text holding a line break stays as written.  Raises
    :class:`BadRequest` for a quoted or bracketed value that is not YAML."""
    if "\n" in text or "\r" in text:
        return text
    stripped = text.strip(" \t")
    if stripped[:1] in ("'", '"', "[", "{"):
        try:
            values, _ = fm.loads("v: " + stripped)
        except fm.FrontmatterError as exc:
            raise BadRequest(f"{text!r} is not one YAML value ({exc.reason}); quote it to keep it as text") from None
        return _wikilinks(values["v"])
    return _day_or(fm.resolve_plain(stripped))


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _day_or(value):
    """An unquoted ``2020-01-01`` is a date, written unquoted as Obsidian's
    date property writes it (YAML reads it as a date too); other text as it is."""
    if isinstance(value, str) and _ISO_DAY.fullmatch(value):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            return value
    return value


def _wikilinks(value):
    """``[[Acme]]`` read as YAML is a list holding a list holding ``Acme``;
    nobody means that in a property, and the shell has already eaten the
    quotes of ``company="[[Acme]]"``: such a value, alone or in a list, is
    the link ``"[[Acme]]"`` (what Obsidian writes)."""
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], list) and len(value[0]) == 1 and isinstance(value[0][0], str):
            return f"[[{value[0][0]}]]"
        return [_wikilinks(item) for item in value]
    return value


def parse_assignment(text: str) -> tuple[str, object]:
    """``field=value`` split at the first ``=``: ``(field, value)`` with the
    value read by :func:`parse_value`.  Raises :class:`BadRequest` without a
    ``=`` or with an empty field name."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise BadRequest(f"{text!r}: expected field=value (like role=CEO, tags=[a, b])")
    if any(ch in name for ch in "\n\r\t#:") or name.startswith(("-", "[", "{", "'", '"')):
        raise BadRequest(f"{name!r} cannot be a property name")
    return name, parse_value(value)


# ---------------------------------------------------------------------------
# Names and lookups


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).lower()


def _same_names(files: list[str], path: str, name: str) -> tuple[list[str], list[str]]:
    """``(same file, same name)`` for a new card at ``path`` named
    ``name``, compared by :func:`_fold`: the files at ``path``, and the
    other notes named ``name`` anywhere, then the other files (not notes)
    named ``name`` (``[[name]]`` reaches ``atlas.png`` before a note
    ``atlas.png.md``).  One pass over a large vault's files, folding none
    that cannot be equal: an ASCII name of another length (folding ASCII
    keeps its length)."""
    wanted = [_fold(path), _fold(name + ".md"), _fold(name)]
    sizes = {len(text) for text in wanted}
    same_file, notes, others = [], [], []
    for file in files:
        base = file.rsplit("/", 1)[-1]
        if file.isascii():
            if len(file) not in sizes and len(base) not in sizes:
                continue
            whole, last = file.lower(), base.lower()
        else:
            whole, last = _fold(file), _fold(base)
        if whole == wanted[0]:
            same_file.append(file)
        elif last == wanted[1] and file.endswith(".md"):
            notes.append(file)
        elif last == wanted[2] and not file.endswith(".md"):
            others.append(file)
    return same_file, notes + others


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def canonical_type(schema, kind: str) -> str:
    """The schema's name of type ``kind`` (its letter case, or the type a
    ``type_aliases`` entry maps it to); ``kind`` itself when the schema has
    no types.  Raises :class:`BadRequest` for a type the schema lacks."""
    types = schema.node_types
    if not types:
        return kind
    by_fold = {name.lower(): name for name in types}
    found = by_fold.get(kind.strip().lower())
    if found is None:
        alias = {k.lower(): v for k, v in schema.type_aliases.items()}.get(kind.strip().lower())
        found = by_fold.get(alias.lower()) if isinstance(alias, str) else None
    if found is None:
        raise BadRequest(f"unknown type {kind!r}; the schema's types are: {', '.join(sorted(types))}")
    return found


def _known_type(schema, kind: str | None) -> str | None:
    """The schema's name of ``kind``, or None when it has no such type."""
    if kind is None:
        return None
    try:
        return canonical_type(schema, kind)
    except BadRequest:
        return None


def card_type(schema, path: str, properties: dict) -> str | None:
    """The type of the card at ``path`` in lower case: its ``type`` property
    (the schema's name of it, a ``type_aliases`` spelling made canonical),
    else the type its folder gives (:meth:`model.Schema.infer_type`); None
    when neither says."""
    kind = properties.get("type")
    if isinstance(kind, str) and kind.strip():
        try:
            return canonical_type(schema, kind).lower()
        except BadRequest:
            return kind.strip().lower()
    inferred = schema.infer_type(path)
    return inferred.lower() if inferred else None


def identity_matches(
    vault, schema, kind: str | None, values: dict, exclude: str | None = None, unreadable: list | None = None
) -> list[dict]:
    """The cards that hold one of the identity values of ``values`` (a
    would-be card's ``{field: value}``): ``[{path, field, value,
    retired}]``, live cards first (the one to update), retired ones
    (:func:`retirement.retired`) after them, each part by path.  Fields and
    kinds come from the schema's ``identity`` (``match_fields``, ``default_country``, ``ignore_values``), compared
    through :func:`identity.normalise`, as search and dedup compare them.
    The settings and their defaults are dedup's
    (:func:`dedup.identity_settings`), so ``new`` refuses what dedup would
    merge: with ``identity.same_type_only`` (default false: a ``contact``
    and a ``person`` with one email are one entity, BR-28) only cards of
    type ``kind``; a value already held by ``max_shared`` cards or more
    (default 8: with the new card, more than dedup allows) is a shared one
    (a company's number), not an identity.  A card whose ``## History``
    shows it held the value before (its old email) holds it too, marked
    ``old: true``.  ``unreadable``, when given,
    gets ``{path, error}`` of each card whose properties cannot be read
    (not UTF-8, frontmatter that does not parse) and whose bytes may hold
    one of the values: it may be the card, unseen."""
    from .dedup import identity_settings

    settings = identity_settings(schema)
    kinds, country, ignore = settings.kinds, settings.country, settings.ignore
    max_shared, same_type = settings.max_shared, settings.same_type_only
    wanted: dict[tuple[str, str], object] = {}  # (kind, normalised value) -> the value as given
    for key, value in values.items():
        name = key.lower()
        if name not in kinds:
            continue
        for item in ident.values_of({name: value}, name):
            norm = ident.normalise(item, kinds[name], country, ignore)
            if norm is not None:
                wanted[(kinds[name], norm)] = item
    if not wanted:
        return []
    fields_of = ident.fields_by_kind(kinds)  # a value matches any field of its kind: handle= finds telegram:
    needles = [identity_needle(norm, kind) for kind, norm in wanted]
    holders: dict[tuple[str, str], list[dict]] = {key: [] for key in wanted}
    held_by: dict[str, dict] = {}  # path -> properties of the cards read
    for path, props, text, problem in _may_be_holders(vault, schema, needles, exclude):
        if problem is not None:  # not read, not UTF-8, or frontmatter that does not parse
            if unreadable is not None:
                unreadable.append({"path": path, "error": problem})
            continue
        held_by[path] = props
        if same_type and kind is not None and card_type(schema, path, props) != kind.lower():
            continue
        for kind_of_value, norm in wanted:
            held = ident.holding(props, fields_of[kind_of_value], kind_of_value, norm, country, ignore)
            if held is not None:
                holders[(kind_of_value, norm)].append({"path": path, "field": held[0], "value": held[1]})
                continue
            held = _held_before(text, fields_of[kind_of_value], kind_of_value, norm, country, ignore)
            if held is not None:  # the subject's old address, in its History: still the subject
                holders[(kind_of_value, norm)].append({"path": path, "field": held[0], "value": held[1], "old": True})
    found = []
    for found_here in holders.values():
        if 0 < len(found_here) < max_shared:
            found.extend(found_here)
    if found:
        from .retirement import retired

        cards = vault.card_set(schema)
        for item in found:
            item["retired"] = retired(vault, cards, item["path"], held_by[item["path"]])
    return sorted(found, key=lambda item: (item["retired"], item["path"], item["field"]))  # live cards first


def _may_be_holders(vault, schema, needles: list, exclude: str | None):
    """``(path, properties, text with its History, problem)`` of each card
    (but ``exclude``) that may hold a value of ``needles`` (:func:`identity_needle`;
    a None there: any card may): the one whole-vault look-up by identity.

    Answered from the index file every command reads
    (:func:`index_file.lookup`: its rows keep each card's frontmatter and
    History lower-cased, and their digits), so only the candidates it names
    are looked at; a card it does not hold as it is now (changed since, or
    planned in this run and not written yet: ``card.py batch``) is read, as
    is every card when there is no index file."""
    from ..write import index_file

    cards = vault.cards(schema)
    found = index_file.lookup(vault, *_candidates(needles))
    read = cards
    if found is not None:
        rows, fresh = found
        yield from _from_rows(vault, rows, fresh.intersection(cards) - {exclude}, needles)
        read = [path for path in cards if path not in fresh]
    for path in read:
        if path == exclude:
            continue
        note = vault.note(path, keep=False)
        if None not in needles and not _may_hold(note.data, needles):
            continue  # cheap: most cards hold none of the values
        problem = note.unwritable
        yield path, (note.properties if problem is None else None), note.text, problem


def _from_rows(vault, rows: list[tuple], wanted: set[str], needles: list):
    """:func:`_may_be_holders` for the rows of the index file among ``wanted``."""
    for path, props, history, unknown in rows:
        if path not in wanted:
            continue
        if unknown is not None:  # its bytes decide, as above
            note = vault.note(path, keep=False)
            problem = note.unwritable
            if problem is not None:
                if None in needles or _may_hold(note.data, needles):
                    yield path, None, None, problem
                continue
            yield path, note.properties, note.text, None
            continue
        yield path, json.loads(props) if props else {}, history, None


def _candidates(needles: list) -> tuple[str, list]:
    """The query of the index file's rows that may hold a value of
    ``needles``: ``(path, properties as JSON, History text, why its
    properties are unknown)``, and its parameters."""
    sql = "SELECT path, props, history, unreadable FROM docs"
    params: list = []
    if None not in needles:
        terms = ["unreadable IS NOT NULL", "instr(probe, '\\') > 0"]
        for only_digits, needle in needles:
            terms.append(f"instr({'digits' if only_digits else 'probe'}, ?) > 0")
            params.append(needle.decode("ascii"))
        sql += " WHERE " + " OR ".join(terms)
    return sql, params


def _held_before(text: str | None, names: list[str], kind: str, wanted: str, country, ignore):
    """``(field, value)``: the field of ``names`` whose ``## History`` shows
    it held the identity ``wanted`` (normalised) before (an old value of a
    change, a past value); None when it never did."""
    if not text or "History" not in text:
        return None
    from .asof import history

    fields = {name.lower() for name in names}
    for line in history(text):
        if line["field"].lower() not in fields:
            continue
        for value in (line["old"], line["new"] if line["kind"] != "change" else None):
            for item in value if isinstance(value, list) else [value]:
                if item is not None and ident.normalise(item, kind, country, ignore) == wanted:
                    return line["field"], item
    return None


def identity_needle(norm: str, kind: str) -> tuple[bool, bytes] | None:
    """What the bytes of a card that holds the normalised identity ``norm``
    must contain: ``(digits only?, bytes)``; None when no cheap test is
    sure (text that is not ASCII may be written in another Unicode form)."""
    if kind == "phone":
        digits = norm.lstrip("+")
        return (True, digits[-6:].encode("ascii")) if digits.isascii() and digits.isdigit() else None
    if kind == "url":  # the host alone: "www.", a case or a trailing "/" may differ in the card's bytes
        norm = norm.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    if not norm.isascii():
        return None
    return False, norm.lower().encode("ascii")


def _may_hold(data: bytes, needles: list) -> bool:
    """Whether a card's bytes may hold one of the values (a false yes is
    fine: the parsed values decide; a false no is not: a YAML escape such as
    ``\x40`` may spell any value, so a backslash always says yes)."""
    if b"\\" in data:
        return True
    lowered = data.lower()
    digits = None
    for only_digits, needle in needles:
        if only_digits:
            if digits is None:
                digits = data.translate(None, ident.NOT_DIGITS)
            if needle in digits:
                return True
        elif needle in lowered:
            return True
    return False


def alias_matches(vault, schema, name: str, exclude: str | None = None) -> list[dict]:
    """The cards whose ``aliases`` hold ``name`` (compared trimmed, NFC and
    without case): ``[{path, field: "aliases", value}]`` in vault order.
    An alias is a name of the card (``dedup.py`` keeps a merged card's old
    name there; search finds it), so ``new`` refuses it as it refuses a
    note name."""
    from .names import fold, named_cards, named_rows

    wanted = _fold(name.strip())
    if not wanted:
        return []
    needle = wanted.encode("utf-8") if wanted.isascii() else None
    # the index's folded names hold every alias this rule matches (its fold folds more)
    rows = named_rows(vault, schema, {fold(wanted)}, False) if fold(wanted) else None
    found = []
    for path in named_cards(vault, schema, rows):
        if path == exclude:
            continue
        props = rows.get(path) if rows is not None else None
        if props is None:  # not in the index as it is now: the note decides
            note = vault.note(path, keep=False)
            data = note.data or b""
            if needle is not None and b"\\" not in data and needle not in data.lower():
                continue  # cheap: a YAML escape may spell any text, so a backslash always reads on
            props = note.properties
        for alias in ident.values_of(props, "aliases"):
            if isinstance(alias, str) and _fold(alias.strip()) == wanted:
                found.append({"path": path, "field": "aliases", "value": alias})
                break
    return found


def find_card(vault, text: str, cwd: str | None = None) -> str | None:
    """The vault path of the note ``text`` names, for ``card.py``'s NOTE
    and OTHER: a file path (absolute or relative to ``cwd``) inside the
    vault, an exact vault path (``.md`` optional when it names a folder),
    else a name resolved as a
    wikilink written at the vault's root (:class:`links.Resolver`): first
    the whole text (a file may be named ``Pipe | Name``), then its link part
    (``[[Name|alias]]``, ``Name#Heading``).  None when no note matches.

    Raises :class:`Ambiguous` when the name fits several notes (two files
    whose paths differ only in letter case or Unicode form, or one name in
    several folders): writing to the one Obsidian would pick is a guess, and
    ``graph.py health`` lists such links as ambiguous.  An exact path is
    never ambiguous.  Raises :class:`BadRequest` for an absolute path, or a
    file from ``cwd``, outside the vault that no note's name matches."""
    import os

    name = text.strip()
    if name.startswith("[[") and name.endswith("]]"):
        name = name[2:-2].strip()
    notes = vault.note_set
    slashed = name.replace("\\", "/")
    # a path: "people/Dana Reyes" or "Dana Reyes.md"; a bare "Dana Reyes" is a name, even when a
    # root note is called so (a stray root note must not capture the card's name)
    for exact in (slashed, slashed + ".md" if "/" in slashed else None):
        if exact in notes:
            return exact
    try:
        here = cwd or os.getcwd()
    except OSError:  # the current folder was deleted: only vault paths and names remain
        here = str(vault.root)
    real = os.path.realpath(os.path.join(here, name))
    root = os.path.realpath(str(vault.root))
    inside = is_inside(real, root)
    link = name.split("|", 1)[0].split("#", 1)[0].strip()
    resolver = None
    if os.path.isfile(real) and inside:
        rel = os.path.relpath(real, root).replace(os.sep, "/")
        if rel in notes:
            return rel
    if not inside and (os.path.isabs(name) or os.path.isfile(real)):
        resolver = vault.resolver_for([(slashed, ""), (link, "")])
    if resolver is not None and not any(resolver.resolve(t, "").path in notes for t in (slashed, link) if t):
        # a file of another folder (the agent's project, another vault): never a name in this one
        raise BadRequest(
            f"{printable(name)!r} is outside the vault {printable(str(vault.root))}; give a note of the vault"
        )
    resolver = resolver or vault.resolver_for([(slashed, ""), (link, "")])
    for target in dict.fromkeys((slashed, link)):
        if not target:
            continue
        hit = resolver.resolve(target, "")
        if hit.path not in notes:
            continue
        same = [c for c in hit.candidates if c in notes and _fold(c) == _fold(hit.path)]
        if hit.ambiguous or len(same) > 1:
            candidates = [c for c in hit.candidates if c in notes]
            raise Ambiguous(
                f"{target!r} names {len(candidates)} notes: {', '.join(candidates)}; give the path of the one meant",
                candidates,
            )
        return hit.path
    return None


def find_cards(vault, schema, names: list[str]) -> list[str]:
    """The vault path of the card each of ``names`` names (:func:`named_card`:
    a path, a title, an alias), in their order, for ``engine.py touch``.
    Raises :class:`Ambiguous` for a name that fits several notes (touching
    one would be a guess) and :class:`BadRequest` naming every name that
    fits no note."""
    paths, missing = [], []
    for name in names:
        path = _named(vault, schema, name) if name.strip() else None
        if path is None:
            missing.append(name)
        else:
            paths.append(path)
    if missing:
        raise BadRequest("no note named " + ", ".join(repr(printable(m)) for m in missing) + " in the vault")
    return paths


def named_card(vault, schema, name: str) -> str:
    """The vault path of the card ``card.py``'s NOTE or OTHER ``name`` names.

    A path (``people/Dana Reyes``, ``Dana Reyes.md``) is taken as given
    (:func:`find_card`).  A name is any name of the card: its file name
    (resolved as a wikilink), one of its ``aliases`` (a nickname, a title
    kept there by ``new`` or a merge), or a title whose file name had to be
    sanitised (``Decision: use X`` is ``Decision use X.md``), compared as
    :func:`names.fold` compares names.  Raises :class:`Ambiguous` for a
    name that fits several notes or that two cards bear (one as its title,
    another as an alias), :class:`BadRequest` for an empty name and for a
    name no card bears (pointing to ``card.py new``)."""
    if not name.strip():
        raise BadRequest("NOTE is empty; give a note's path or name")
    path = _named(vault, schema, name)
    if path is None:
        raise BadRequest(
            f"no note named {printable(name)!r} in the vault (card.py new or card.py remember creates one)"
        )
    return path


def _current(vault, schema, paths: list[str]) -> list[str]:
    """``paths`` without the retired cards that another of them replaced
    (a name a retired card shares with its successor is the successor's)."""
    if len(paths) < 2:
        return paths
    from .retirement import retired, successor

    cards = vault.card_set(schema)
    kept = []
    for path in paths:
        props = vault.note(path, keep=False).properties
        after = props.get(key_of(props, "superseded_by") or "superseded_by")
        if retired(vault, cards, path, props) and after and successor(vault, cards, path, after) in paths:
            continue
        kept.append(path)
    return kept


def _named(vault, schema, name: str) -> str | None:
    """:func:`named_card`'s lookup: the path, or None when no card bears the name."""
    from .names import name_matches

    path = find_card(vault, name)
    text = name.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].strip()
    text = text.split("|", 1)[0].split("#", 1)[0].strip() if "|" in text or "#" in text else text
    as_path = "/" in text.replace("\\", "/") or text.lower().endswith(".md")
    if path is not None and as_path:
        return path
    try:
        sanitised = file_name(text)
    except BadRequest:
        sanitised = text
    bearers = name_matches(vault, schema, [text, sanitised])
    others = [m["path"] for m in bearers if m["path"] != path]
    if path is not None and not others:
        return path
    candidates = _current(vault, schema, ([path] if path is not None else []) + others)
    if len(candidates) > 1:
        raise Ambiguous(
            f"{text!r} is a name of {len(candidates)} cards: {', '.join(candidates)}; give the path of the one meant",
            candidates,
        )
    return candidates[0] if candidates else None


def _link_target(vault, value, source: str) -> str | None:
    """The path a ``"[[Link]]"`` (or plain name) property value resolves to."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0].split("#", 1)[0].strip()
    return vault.resolver.resolve(text, source).path if text else None


# ---------------------------------------------------------------------------
# A card being edited


def _same(old, new) -> bool:
    """Equal values; a date and its ISO text are one day (the parser reads
    ``updated: 2020-01-01`` as text, ``field=2020-01-01`` gives a date)."""
    if isinstance(old, datetime.date) != isinstance(new, datetime.date):
        day, other = (old, new) if isinstance(old, datetime.date) else (new, old)
        return not isinstance(day, datetime.datetime) and isinstance(other, str) and other == day.isoformat()
    return fm.same_value(old, new)


def _same_identity(schema, key: str, old, new) -> bool:
    """Whether ``old`` and ``new`` are one identity in two spellings
    (``030 1234567`` and ``+49 30 1234567``, an email in another letter
    case, a URL with ``www.``): ``key`` is an identity field
    (``identity.match_fields``) of kind phone, email, handle or url and both values, each a scalar or each a list,
    normalise (:func:`identity.normalise`, with the schema's
    ``default_country`` and ``ignore_values``) to the same forms in the
    same order.  An ignored or empty value is never the same identity."""
    section = schema.section("identity")
    kind = ident.field_kinds(section).get(key.lower())
    if kind not in ("phone", "email", "handle", "url") or isinstance(old, list) != isinstance(new, list):
        return False
    country = section.get("default_country")
    ignore = section.get("ignore_values", ident.DEFAULT_IGNORE)

    def forms(value) -> list:
        items = value if isinstance(value, list) else [value]
        return [ident.normalise(item, kind, country, ignore) for item in items]

    before, after = forms(old), forms(new)
    return bool(before) and None not in before and before == after


def _empty(value) -> bool:
    return value is None or value == "" or value == [] or value == {}


def key_of(properties: dict, key: str) -> str | None:
    """The key as written in the card: exact, else ignoring letter case (as
    Obsidian finds a property, and as :func:`frontmatter.set_property` edits it)."""
    if key in properties:
        return key
    folded = key.lower()
    return next((k for k in properties if isinstance(k, str) and k.lower() == folded), None)


def _is_list_field(schema, key: str) -> bool:
    """Whether ``key`` holds a list: ``tags``, ``aliases``, or a list type in
    the schema's ``properties``."""
    kinds = {name.lower(): kind for name, kind in schema.properties.items()}
    return key.lower() in ("tags", "aliases") or kinds.get(key.lower()) in LIST_TYPES


class _Draft:
    """The new text of one card, built by surgical edits; ``edit()`` gives
    the one :class:`Edit` (touch included) or None when unchanged."""

    def __init__(self, vault, schema, path: str):
        self.vault = vault
        self.path = path
        if not vault.is_card(path, schema):
            raise _NotEditable(
                f"{path}: not a card (a template, in ignore_folders, an index file or a hub); card.py writes only cards"
            )
        self.note = vault.note(path)
        if self.note.text is None:
            raise _NotEditable(f"{path}: {self.note.error}")
        block = self.note.frontmatter
        if block is not None and block.error is not None:
            raise _NotEditable(f"{path}: the frontmatter does not parse ({block.error}); repair it first")
        self.text = self.note.text
        self.changes: list[dict] = []
        # what edit() writes as updated: None today, an ISO day (the facts' day), False as it is
        self.updated: str | None | bool = None

    @property
    def properties(self) -> dict:
        block = fm.parse(self.text)
        return block.properties if block is not None else {}

    @property
    def body(self) -> str:
        block = fm.parse(self.text)
        return self.text[block.body :] if block is not None else self.text

    def set_any(self) -> bool:
        """Whether a property was set (not only lines added)."""
        return any("field" in change for change in self.changes)

    def set(self, key: str, value) -> bool:
        """Set ``key`` (found ignoring case); False when it already holds an
        equal value.  Records the change."""
        props = self.properties
        written = key_of(props, key)
        old = props[written] if written is not None else None
        if written is not None and _same(old, value):
            return False
        if written is None and value is None:
            return False
        try:
            self.text = fm.set_property(self.text, written or key, value)
        except fm.FrontmatterError as exc:
            raise _NotEditable(f"{self.path}: {key} cannot be rewritten ({exc})") from None
        self.changes.append({"path": self.path, "field": written or key, "old": old, "new": value})
        return True

    def append(self, heading: str, lines: list[str]) -> None:
        if not lines:
            return
        try:
            self.text = sections.append(self.text, heading, lines)
        except ValueError as exc:
            raise _NotEditable(f"{self.path}: {exc}") from None
        self.changes.extend({"path": self.path, "section": heading, "line": line} for line in lines)

    def related(self) -> set[str]:
        """Paths the links of the card's ``## Related`` section resolve to."""
        from ..read.links import scan

        found = sections.find(self.text, "Related")
        if found is None:
            return set()
        start, end = found
        paths = set()
        for link in scan(self.text[start:end]):
            hit = self.vault.resolver.resolve(link.target, self.path).path if link.target else None
            if hit is not None:
                paths.add(hit)
        return paths

    def link(self, target: str) -> bool:
        """Add ``- [[target]]`` under ``## Related`` unless a link there
        already resolves to ``target``."""
        if target == self.path or target in self.related():
            return False
        form = link_form(self.vault, self.path, target)
        if any(ch in form for ch in "[]|#^"):
            raise BadRequest(f"{target}: its name holds a character a wikilink cannot hold ([ ] | # ^); rename it")
        self.append("Related", [f"- [[{form}]]"])
        return True

    def edit(self, schema, today: datetime.date, reason: str) -> Edit | None:
        """The card's one write: ``updated`` set to today, then the touch
        folded in; None when nothing changed."""
        if not self.changes:
            return None
        if self.updated is not False and not any(c.get("field", "").lower() == "updated" for c in self.changes):
            when = today if self.updated is None else datetime.date.fromisoformat(self.updated)
            try:
                self.text = fm.set_property(self.text, key_of(self.properties, "updated") or "updated", when)
            except fm.FrontmatterError as exc:
                raise _NotEditable(f"{self.path}: updated cannot be rewritten ({exc})") from None
        after = _touched(self.vault, schema, self.path, self.note.encode(self.text), today)
        return Edit(self.path, self.note.data, after, reason)


def _touched(vault, schema, path: str, data: bytes, today: datetime.date) -> bytes:
    """``data`` (the card's new bytes) with the touch of :func:`decay.plan_touch`
    applied: the same values ``engine.py touch`` would write, computed on
    the new text, so the card is written once; none for a card the run
    touched already (:attr:`Vault.touched_in_run`).  A note that is no card
    (templates, ``ignore_folders``) is not touched."""
    from . import decay

    if path in vault.touched_in_run:  # one run of card.py batch is one access, however many lines name the card
        return data
    plan = decay.plan_touch(vault.with_text(path, data), schema, [path], today)
    return plan.edits[0].after if plan.edits else data


def _refusal(plan: Plan, exc: _NotEditable) -> Plan:
    plan.refused = {"reason": "not-editable", "message": str(exc), "matches": []}
    plan.edits = []
    return plan


def _finish(plan: Plan, drafts: list[_Draft], schema, today, reason: str) -> Plan:
    try:
        edits = [d.edit(schema, today, reason) for d in drafts]
    except _NotEditable as exc:
        return _refusal(plan, exc)
    plan.edits = [e for e in edits if e is not None]
    plan.changes = [c for d in drafts for c in d.changes]
    return plan


def _day(today: datetime.date) -> str:
    return today.isoformat()


# ---------------------------------------------------------------------------
# The commands


def plan_new(
    vault,
    schema,
    kind: str,
    title: str,
    assignments: list[tuple[str, object]],
    today: datetime.date,
    force=False,
    source=None,
    looked_up=False,
) -> Plan:
    """Plan a new card of type ``kind`` titled ``title`` with the fields of
    ``assignments`` (``[(field, value)]``, last one wins).

    The card goes to ``schema.folder_of(kind)`` as ``file_name(title).md``
    (``title`` becomes an alias when its name had to change), with ``type``,
    the given fields, the type's required fields from the schema's
    ``defaults``/``status_defaults``, ``created`` and ``updated`` (today),
    and the touch.  Refused (``plan.refused``) when a card holds one of its
    identity values (:func:`identity_matches`) or a note of that name exists
    anywhere in the vault (``force`` allows both, but never overwrites a
    file), and when a required field has no value.  A refusal for a name
    gives ``suggested_title`` (:func:`names.suggested_title`), a title that
    tells the two apart (None for an identity match: the same subject).
    ``source`` (a :class:`source.Source`): the card's ``created`` and
    ``updated`` are the source's day (its facts are that old).
    ``looked_up``: the caller has looked the identity and the aliases up
    already (``remember``); only file names are checked.  Raises
    :class:`BadRequest` for an unknown type or an empty title."""
    kind = canonical_type(schema, kind)
    _own_fields(assignments)
    title = title.strip()
    if title.lower().endswith(".md") and title[:-3].strip():
        title = title[:-3].strip()  # a file name given as the title: Foo.md is Foo, not Foo.md.md
    name = file_name(title)
    folder = schema.folder_of(kind) or ""
    path = f"{folder}/{name}.md" if folder else f"{name}.md"
    plan = Plan("new", path)
    parts = folder.split("/") if folder else []
    for depth in range(1, len(parts) + 1):
        place = Path(vault.root, *parts[:depth])
        if place.exists() and not place.is_dir():
            raise BadRequest(f"the {kind} folder {folder!r} cannot hold cards: {place.name!r} is a file, not a folder")
    values: dict[str, object] = {}
    for key, value in assignments:
        existing = key_of(values, key)
        values[existing or key] = value
    given_type = values.pop(key_of(values, "type") or "type", None)
    if given_type is not None and canonical_type(schema, str(given_type)) != kind:
        raise BadRequest(f"type={given_type} disagrees with the type {kind!r} given first")
    forced: list[dict] = []  # live cards holding an identity value of this one, created anyway (--force)
    if not looked_up:
        unread: list[dict] = []
        matches = identity_matches(vault, schema, kind, values, unreadable=unread)
        plan.notes += [
            f"{u['path']} cannot be read ({u['error']}) and may hold this card's identity; check it before "
            "keeping two cards"
            for u in unread
        ]
        forced = [m for m in matches if force and not m.get("retired")]
        if matches and not force:
            names = ", ".join(sorted({m["path"] for m in matches}))
            plan.refused = {
                "reason": "identity-match",
                "message": f"a card with the same identity exists: {names} (update it with card.py set; "
                "--force creates another card)",
                "matches": matches,
                "suggested_title": None,
            }
            return plan
    same_file, same_name = _same_names(vault.files, path, name)
    if same_file or (same_name and not force):
        found = same_file or same_name
        apart = _suggest(vault, schema, kind, title, values, found)
        plan.refused = {
            "reason": "exists",
            "message": f"a note named {name!r} exists: {', '.join(found)}; if it is this subject, update it "
            f"(card.py set, or card.py remember); if not, give a title that tells them apart, such as {apart!r}",
            "matches": [{"path": p, "field": "name", "value": _stem(p)} for p in found],
            "suggested_title": apart,
        }
        return plan
    aliased = []
    if not (force or looked_up):  # the file name, when it differs from the title, is looked up too
        aliased = alias_matches(vault, schema, title) or (name != title and alias_matches(vault, schema, name)) or []
    if aliased:
        names = ", ".join(m["path"] for m in aliased)
        plan.refused = {
            "reason": "exists",
            "message": f"{title!r} is an alias of {names} (a name of that card, kept there by a merge or by "
            "hand); if it is this subject, update it (card.py set PATH); --force creates another card",
            "matches": aliased,
            "suggested_title": _suggest(vault, schema, kind, title, values, [m["path"] for m in aliased]),
        }
        return plan
    fields: dict[str, object] = {"type": kind}
    fields.update(values)
    spec = schema.node_types.get(kind, {})
    wanted = list(schema.required(kind))
    if "status" not in wanted and (schema.statuses(kind) or "status" in (spec.get("defaults") or {})):
        wanted.append("status")
    wanted += [k for k in (spec.get("defaults") or {}) if not k.startswith("_") and k not in wanted]
    for key in wanted:
        if key_of(fields, key) is None and key not in ("created", "updated"):
            default = schema.default_for(kind, key)
            if default is not None:
                fields[key] = default
    if name != title and key_of(fields, "aliases") is None:
        fields["aliases"] = [title]
    known = datetime.date.fromisoformat(source.day) if source is not None and source.day else today
    fields.setdefault("created", known)
    fields.setdefault("updated", known)
    missing = [key for key in schema.required(kind) if _empty(fields.get(key_of(fields, key) or key))]
    if missing:
        plan.refused = {
            "reason": "missing-required",
            "message": f"a {kind} card needs {', '.join(missing)}; give them as field=value",
            "missing": missing,
            "matches": [],
        }
        return plan
    allowed = schema.statuses(kind)
    status = fields.get(key_of(fields, "status") or "status")
    if allowed and status is not None and status not in allowed:
        raise BadRequest(f"status {status!r} is not one of the {kind} statuses: {', '.join(allowed)}")
    text = ""
    for key, value in fields.items():
        text = fm.set_property(text, key, value)
    if source is not None:  # where the card came from, for the person who reads it
        text = sections.append(
            text, "Log", [f"- {known.isoformat()}: first noted (from [[{source.link(vault, path)}]])"]
        )
    if forced:  # as set --force leaves it: dedup.py --apply lists the pair for review, never merges it unattended
        from .dedup import forced_line

        lines = [forced_line(_day(today), m["field"], m["value"], link_form(vault, path, m["path"])) for m in forced]
        text = sections.append(text, "Log", lines)
        plan.notes += [
            f"{m['field']}: {m['path']} holds the same value; created with --force (dedup.py merges the two "
            "only from a reviewed manifest)"
            for m in forced
        ]
    data = text.encode("utf-8")
    after = _touched(vault, schema, path, data, today)
    plan.edits = [Edit(path, None, after, f"new {kind} card")]
    plan.changes = [{"path": path, "field": k, "old": None, "new": v} for k, v in fields.items()]
    if source is not None or forced:
        plan.changes += [{"path": path, "section": "Log", "line": line} for line in sections.items(text, "Log")]
    return plan


def _suggest(vault, schema, kind: str, title: str, values: dict, paths: list[str]) -> str:
    from .names import suggested_title

    others = [vault.note(p, keep=False).properties for p in paths if p.endswith(".md")]
    return suggested_title(vault, schema, kind, title, values, others)


def _check_status(schema, draft: _Draft, key: str, value) -> None:
    """Raise :class:`BadRequest` for a ``status`` its type does not allow."""
    if key.lower() != "status" or value is None:
        return
    kind = _known_type(schema, card_type(schema, draft.path, draft.properties))
    allowed = schema.statuses(kind) if kind else []
    if allowed and value not in allowed:
        raise BadRequest(f"status {value!r} is not one of the {kind} statuses: {', '.join(allowed)}")


def plan_set(
    vault,
    schema,
    path: str,
    assignments: list[tuple[str, object]],
    today: datetime.date,
    source=None,
    first_lines: bool = False,
    force: bool = False,
) -> Plan:
    """Plan setting each ``(field, value)`` of ``assignments`` on the card
    at ``path``.  A field that already holds an equal value (parsed values
    compared, ``3`` is not ``"3"``; an identity field of kind phone, email
    or handle compared by :func:`identity.normalise`, so ``+49 30 1234567``
    equals ``030 1234567`` under ``default_country`` ``+49``) is left alone;
    when all are, the plan is empty (no write, no touch).  A changed
    field's old value goes to ``## History`` as ``- DAY: field: old →
    new`` (a field that had no value adds no line; setting an empty value
    records ``- DAY: field: old``).  A field that holds a list keeps a
    list: a single value becomes a one-item list (as for a field of a list
    type in ``properties``).

    ``source`` (a :class:`source.Source`, the note the facts came from):
    lines are dated with its day and end in ``(from [[NOTE]])``; a value
    whose source day is older than the evidence of the value the card holds
    (:func:`recency.evidence`) is not set but recorded in ``## History`` as
    a past value (:func:`source.past_line`, once); ``updated`` becomes the
    newest day of the facts the card holds.  With a source (or
    ``first_lines``, as ``remember`` asks), a field that had no value gets
    a first-value line (:func:`source.first_line`; ``aliases`` aside): the
    day its value began, for the recency rule and ``show --as-of``.

    autograph's own fields (:data:`OWN_FIELDS`) raise :class:`BadRequest`:
    the touch of the same write would overwrite them.  An identity value
    (``identity.match_fields``) another live card holds is refused
    (``identity-taken``, exit 2, naming that card) unless ``force``; a
    forced one leaves a ``## Log`` line (:func:`dedup.forced_line`) on
    which ``dedup.py --apply`` lists the pair for review instead of
    merging it.  A value that looks like a secret (:mod:`secrets`), old
    or new, never goes to ``## History``."""
    from . import recency
    from .secrets import value_secret
    from .source import first_line, past_line

    _own_fields(assignments)
    if source is not None:
        source.check(path)
    plan = Plan("set", path)
    try:
        draft = _Draft(vault, schema, path)
        day = source.day_or(today) if source is not None else _day(today)
        link = source.link(vault, path) if source is not None else None
        zone = _zone(schema)
        lines, past = [], []
        for key, value in assignments:
            _check_status(schema, draft, key, value)
            props = draft.properties
            written = key_of(props, key)
            old = props.get(written) if written is not None else None
            if (
                value is not None
                and not isinstance(value, list)
                and (isinstance(old, list) or (old is None and _is_list_field(schema, key)))
            ):
                value = [value]
            if written is not None and (_same(old, value) or _same_identity(schema, written, old, value)):
                continue  # the value the card holds, maybe spelled another way: no change
            secret = value_secret(written or key, old) or value_secret(written or key, value)
            added = (
                isinstance(old, list) and isinstance(value, list) and all(any(_same(o, v) for v in value) for o in old)
            )
            if source is not None and source.day is not None and not _empty(old) and not added:
                held = recency.fact_evidence(props, draft.body, written or key, zone)
                if held is not None and source.day < held:  # an older fact: History only, once
                    line = past_line(source.day, written or key, value, link)
                    if secret:  # a secret is never kept in History
                        plan.notes.append(f"{written or key}: a secret-shaped value is never kept in ## History")
                    elif line not in past and not _recorded(draft.text, source.day, written or key, value):
                        past.append(line)
                    continue
            if secret and draft.set(key, value):
                plan.notes.append(f"{written or key}: a secret-shaped value is never kept in ## History")
            elif draft.set(key, value):
                if not _empty(old):  # a list given items keeps its old value in History too
                    lines.append(sections.history_line(day, written or key, _day_or(old), value, link))
                elif (source is not None or first_lines) and not _empty(value) and key.lower() != "aliases":
                    lines.append(first_line(day, written or key, value, link))
        draft.append("History", lines + past)
        if source is not None:  # only past values: the card's facts are as new as they were
            draft.updated = _later(draft.properties, source.day, zone) if draft.set_any() else False
        taken = _shared_identity(vault, schema, plan, draft)
        if taken and not force:
            return _identity_taken(plan, taken)
        from .dedup import forced_line

        draft.append(
            "Log", [forced_line(day, m["field"], m["value"], link_form(vault, path, m["path"])) for m in taken]
        )
        plan.notes += [
            f"{m['field']}: {m['path']} holds the same value; written with --force (dedup.py merges the two "
            "only from a reviewed manifest)"
            for m in taken
        ]
    except _NotEditable as exc:
        return _refusal(plan, exc)
    _retired_note(vault, schema, plan, path)
    changed = [c["field"] for c in draft.changes if "field" in c] or [k for k, _ in assignments]
    return _finish(plan, [draft], schema, today, "set " + ", ".join(changed))


# autograph's own bookkeeping: every write's touch sets them (engine.py touch, decay); a fact never does
OWN_FIELDS = ("access_count", "last_accessed", "tier", "relevance")


def _own_fields(assignments) -> None:
    """Raise :class:`BadRequest` for a field of :data:`OWN_FIELDS`: the touch
    of the same write would overwrite it, so the report would lie."""
    own = [key for key, _ in assignments if str(key).strip().lower() in OWN_FIELDS]
    if own:
        raise BadRequest(
            f"{', '.join(dict.fromkeys(own))}: autograph keeps these itself (every write touches the card; "
            "engine.py touch and engine.py decay set them); card.py does not set them"
        )


def _recorded(text: str, day: str, key: str, value) -> bool:
    """Whether the card's ``## History`` already says ``key`` held ``value``
    on ``day`` (a change to it that day, or a past value): the same note
    read again adds no line."""
    from .asof import history

    return any(
        line["day"] == day and line["field"].casefold() == key.casefold() and _same(line["new"], value)
        for line in history(text)
    )


def _zone(schema):
    from .dedup import identity_settings

    return identity_settings(schema).zone


def _later(properties: dict, day: str | None, zone) -> str | None:
    """The ``updated`` a card gets from a fact of ``day``: the later of
    ``day`` and the day it holds (a fact read from last week's note does not
    make the card's facts older); None when ``day`` is None (today)."""
    if day is None:
        return None
    from .recency import day_of

    held = day_of(properties.get(key_of(properties, "updated") or "updated"), zone)
    return max(day, held) if held else day


def _retired_note(vault, schema, plan: Plan, path: str) -> None:
    """Note when the card set is retired: a fact written there is hidden
    from an agent that follows ``superseded_by`` to the card replacing it."""
    from .retirement import retired, successor

    props = vault.note(path).properties
    cards = vault.card_set(schema)
    if not retired(vault, cards, path, props):
        return
    after = successor(vault, cards, path, props["superseded_by"]) if props.get("superseded_by") else None
    if after is not None:
        plan.notes.append(f"{path} is retired: {after} replaced it (superseded_by); a new fact belongs there")
    else:
        plan.notes.append(f"{path} is retired (status: superseded); a new fact belongs on the card that replaced it")


def _shared_identity(vault, schema, plan: Plan, draft: _Draft) -> list[dict]:
    """The identity values just set that another live card holds now
    (:func:`identity_matches`: ``[{path, field, value}]``, ``field`` the
    one set here); a retired card holding one, or a card whose History
    shows it held one, is only noted (an old address moves on)."""
    values = {c["field"]: c["new"] for c in draft.changes if "field" in c and c["new"] is not None}
    if not values:
        return []
    from ..read import identity as ident
    from .dedup import identity_settings

    settings = identity_settings(schema)
    kind = _known_type(schema, card_type(schema, draft.path, draft.properties))
    taken = []
    for match in identity_matches(vault, schema, kind, values, exclude=draft.path):
        if match["retired"] or match.get("old"):
            plan.notes.append(
                f"{match['field']}: {match['path']} held the same value ({'retired' if match['retired'] else 'before'})"
            )
            continue
        norm = ident.normalise(
            match["value"], settings.kinds[match["field"].lower()], settings.country, settings.ignore
        )
        for field_set, value in values.items():  # the field of this card that takes it (handle= matches telegram:)
            kind_set = settings.kinds.get(field_set.lower())
            items = ident.values_of({field_set: value}, field_set)
            if kind_set is not None and any(
                ident.normalise(i, kind_set, settings.country, settings.ignore) == norm for i in items
            ):
                taken.append(
                    {"path": match["path"], "field": field_set, "value": match["value"], "held": match["field"]}
                )
                break
    return taken


def _identity_taken(plan: Plan, taken: list[dict]) -> Plan:
    """Refuse a plan that would give the card another live card's identity."""
    told = "; ".join(f"{m['field']}: {m['path']} holds {printable(str(m['value']))!r}" for m in taken)
    plan.refused = {
        "reason": "identity-taken",
        "message": f"{told} (another card's identity: nightly dedup.py --apply would merge the two). If it is "
        "the same subject, merge them (dedup.py --manifest, then --apply-manifest); if the value is wrong, "
        "give the right one; --force writes it anyway (dedup.py then asks for a review before merging)",
        "matches": [{"path": m["path"], "field": m["held"], "value": m["value"], "retired": False} for m in taken],
    }
    plan.edits, plan.changes = [], []
    return plan


def plan_log(vault, schema, path: str, text: str, today: datetime.date, source=None) -> Plan:
    """Plan the line ``- DAY: text`` under the card's ``## Log``; nothing
    when the same line is there already (a repeated call the same day).
    With ``source`` (a :class:`source.Source`) the line is dated with its
    day and ends in ``(from [[NOTE]])``, and ``updated`` becomes that day
    if it is later than the one the card holds (:func:`plan_set`).  Raises
    :class:`BadRequest` for empty text or text with a line break."""
    text = text.strip()
    if not text or "\n" in text or "\r" in text:
        raise BadRequest("TEXT must be one non-empty line")
    if source is not None:
        source.check(path)
    plan = Plan("log", path)
    try:
        draft = _Draft(vault, schema, path)
        if source is not None:
            line = f"- {source.day_or(today)}: {text} (from [[{source.link(vault, path)}]])"
            draft.updated = _later(draft.properties, source.day, _zone(schema))
        else:
            line = f"- {_day(today)}: {text}"
        if line not in sections.items(draft.text, "Log"):
            draft.append("Log", [line])
    except _NotEditable as exc:
        return _refusal(plan, exc)
    return _finish(plan, [draft], schema, today, "log")


def plan_link(vault, schema, path: str, others: list[str], today: datetime.date, source=None) -> Plan:
    """Plan ``- [[OTHER]]`` under the card's ``## Related`` for each of
    ``others`` (vault paths of notes) that no link there resolves to yet,
    in the shortest form that resolves to it (:func:`link_form`).  With
    ``source`` (a :class:`source.Source`), ``updated`` becomes its day if
    later than the card's (a link from last week's note does not make the
    card's facts today's)."""
    if source is not None:
        source.check(path)
    plan = Plan("link", path)
    try:
        draft = _Draft(vault, schema, path)
        if source is not None:
            draft.updated = _later(draft.properties, source.day, _zone(schema))
        for other in others:
            if other == path:
                plan.notes.append(f"{other}: a card is not linked to itself")
            elif not draft.link(other):
                plan.notes.append(f"{other}: already under ## Related")
    except _NotEditable as exc:
        return _refusal(plan, exc)
    return _finish(plan, [draft], schema, today, "link")


def plan_retire(vault, schema, path: str, by: str, today: datetime.date, source=None) -> Plan:
    """Plan superseding the card at ``path`` by the card at ``by``: ``status:
    superseded``, ``superseded_by: "[[BY]]"``, each card linked from the
    other's ``## Related``, and ``## History`` lines for what changed
    (``superseded_by`` included when it had no value).  Both cards are
    touched; nothing when all is in place.

    Refused (``plan.refused``, nothing written): ``by-itself`` when ``by``
    is ``path``; ``by-superseded`` when ``by`` is itself retired (``status:
    superseded``, or a ``superseded_by`` naming another card: a cycle or a
    chain would leave no current card; ``matches`` names it and what
    supersedes it); ``not-supersedable`` when the card's type cannot be
    superseded (:meth:`model.Schema.supersedable`: ``supersedable: false``,
    or a status list without ``superseded``).  With ``source`` (a
    :class:`source.Source`) the History lines are dated with its day and
    name it."""
    from .retirement import successor

    if source is not None:
        source.check(path)
    plan = Plan("retire", path)
    if by == path:
        plan.refused = {
            "reason": "by-itself",
            "message": f"{path}: a card cannot be superseded by itself; give the card that replaces it",
            "matches": [{"path": by, "field": "superseded_by", "value": by}],
        }
        return plan
    try:
        old, new = _Draft(vault, schema, path), _Draft(vault, schema, by)
        props = old.properties
        kind = _known_type(schema, card_type(schema, path, props))
        if not schema.supersedable(kind):
            plan.refused = {
                "reason": "not-supersedable",
                "message": f"{path}: the type {kind!r} cannot be superseded (its schema entry says "
                '"supersedable": false or lists statuses without "superseded"); nothing written',
                "matches": [],
            }
            return plan
        by_props = new.properties
        by_status = by_props.get(key_of(by_props, "status") or "status")
        by_key = key_of(by_props, "superseded_by")
        next_card = successor(vault, vault.card_set(schema), by, by_props.get(by_key)) if by_key else None
        if next_card is not None or (isinstance(by_status, str) and by_status.strip().lower() == "superseded"):
            told = f"superseded by {next_card}" if next_card else "status: superseded"
            plan.refused = {
                "reason": "by-superseded",
                "message": f"{by} is itself retired ({told}); retire {path} by a current card"
                + (
                    " (retiring a card by the card it replaced leaves neither current)"
                    if next_card == path
                    else f" (such as {next_card})"
                    if next_card
                    else ""
                ),
                "matches": [
                    {"path": by, "field": by_key or "status", "value": by_props.get(by_key) if by_key else by_status}
                ],
            }
            return plan
        lines = []
        day = source.day_or(today) if source is not None else _day(today)
        link = source.link(vault, path) if source is not None else None
        written = key_of(props, "status")
        before = props.get(written) if written else None
        if old.set("status", "superseded"):
            lines.append(sections.history_line(day, written or "status", before, "superseded", link))
        written = key_of(props, "superseded_by")
        before = props.get(written) if written else None
        if _link_target(vault, before, path) != by:
            value = f"[[{link_form(vault, path, by)}]]"
            old.set("superseded_by", value)
            lines.append(sections.history_line(day, written or "superseded_by", before, value, link))
        old.append("History", lines)
        old.link(by)
        new.link(path)
        if source is not None:
            old.updated = _later(old.properties, source.day, _zone(schema))
            new.updated = _later(new.properties, source.day, _zone(schema))
    except _NotEditable as exc:
        return _refusal(plan, exc)
    return _finish(plan, [old, new], schema, today, f"retire {path} by {by}")


# ---------------------------------------------------------------------------
# card.py: the request and the report


# card.py's exit code for a refused plan, by reason: 1 the card or the name
# exists (cli.EXIT_FOUND), 2 bad usage (cli.EXIT_USAGE); any other reason
# (not-editable) 4, the write skipped (cli.EXIT_SKIPPED).  Numbers: the
# library sits below cli and does not import it.
REFUSED_EXIT = {
    "identity-taken": 2,
    "secret": 2,
    "identity-match": 1,
    "exists": 1,
    "by-itself": 1,
    "by-superseded": 1,
    "missing-required": 2,
    "not-supersedable": 2,
    "ambiguous": 1,
    "identity-conflict": 2,
    "title-taken": 2,
}


def exit_code(plan: Plan, outcome_code: int) -> int:
    """``card.py``'s exit code: for a refused plan, :data:`REFUSED_EXIT` of
    its reason (4 for a reason not there); else ``outcome_code``, the code of
    what was written (``cli.outcome_code``: 0, or 4 when a write was
    skipped)."""
    if plan.refused is None:
        return outcome_code
    return REFUSED_EXIT.get(plan.refused["reason"], 4)


def report(plan: Plan, today: datetime.date, outcome: dict) -> dict:
    """What ``card.py --json`` prints: ``command``, ``path`` (the card),
    ``today`` (YYYY-MM-DD), ``refused`` (see :class:`Plan`), ``changes``,
    ``notes``, then ``outcome`` (what ``cli.carry_out`` returned: edits,
    written, conflicts, failed, run).  Dates in values are ISO 8601 text;
    a value or a line that looks like a secret is ``[redacted]``."""
    from .secrets import shown_changes

    data = {
        "command": plan.command,
        "path": plan.path,
        "today": today.isoformat(),
        "refused": _json_value(plan.refused),
        "changes": _json_value(shown_changes(plan.changes)),
        "notes": plan.notes,
        **outcome,
    }
    if plan.command == "remember":
        refused = plan.refused or {}
        data["action"] = plan.action
        data["matches"] = _json_value(plan.matches)
        data["suggested_title"] = plan.suggested_title
        data["missing"] = list(refused.get("missing", []))
    return data


def json_value(value):
    """``value`` (property values, a plan's changes) with dates as ISO 8601
    text, ready for JSON."""
    return _json_value(value)


def field_lines(fields: dict) -> list[str]:
    """``  name: value`` lines (values as YAML flow text) for a person."""
    return [f"  {printable(str(k))}: {printable(sections.flow_text(_json_value(v)))}" for k, v in fields.items()]


def _json_value(value):
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def report_lines(plan: Plan) -> list[str]:
    """The human report of ``plan``, before the edits: why it was refused
    (then nothing else), or that there is nothing to change, each change
    (``field: old → new`` as YAML flow values, or the line added to a
    section) and the notes.  A plan with edits is followed by the report
    of the writes (``cli.print_outcome``)."""
    if plan.refused is not None:
        return [f"refused ({plan.refused['reason']}): {printable(plan.refused['message'])}"]
    from .secrets import shown_changes

    lines = [] if plan.edits else [f"nothing to change: {printable(plan.path or '')} already says it"]
    for change in shown_changes(plan.changes):
        if "field" in change:
            old = "(none)" if change["old"] is None else sections.flow_text(change["old"])
            lines.append(
                f"  {printable(change['path'])}: {change['field']}: {printable(old)} → "
                f"{printable(sections.flow_text(change['new']))}"
            )
        else:
            lines.append(f"  {printable(change['path'])}: ## {change['section']}: {printable(change['line'])}")
    lines += [f"note: {printable(note)}" for note in plan.notes]
    return lines


# ---------------------------------------------------------------------------
# card.py redact


def plan_redact(vault, schema, path: str, field: str | None, line: int | None, today: datetime.date) -> Plan:
    """Plan taking a secret out of the card at ``path``: the property
    ``field`` (deleted) and every ``## History`` line of it that holds its
    value or looks like a secret; or line ``line`` (1-based, of the body):
    the secrets in it hidden as ``[redacted]`` (a private key block whole),
    the whole line removed when the detector sees none there (the person
    knows better).  ``plan.secrets`` lists the text taken out, for
    :func:`secrets.purge` (the journal's copies, the index).  Raises
    :class:`BadRequest` when there is nothing of the kind to take out."""
    from ..read.secrets import REDACTED, mask, secret_spans

    plan = Plan("redact", path)
    try:
        draft = _Draft(vault, schema, path)
        draft.updated = False  # not a fact: updated stays
        text = draft.text
        newline = sections.newline_of(text)
        lines = text.split("\n")
        if field is not None:
            props = draft.properties
            written = key_of(props, field)
            held = [s for s in _value_strings(props.get(written)) if s.strip()] if written is not None else []
            if written is not None:
                try:
                    text = fm.delete_property(text, written)
                except fm.FrontmatterError as exc:
                    raise _NotEditable(f"{path}: {written} cannot be removed ({exc})") from None
            dropped = _history_of(text, written or field, held)
            if written is None and not dropped:
                raise BadRequest(f"{path} has no {field} and no ## History line of it; nothing to redact")
            for item in dropped:
                text = text.replace(item + newline, "", 1) if item + newline in text else text.replace(item, "", 1)
            plan.secrets = held + [piece for item in dropped for piece in secret_spans(item)]
            if written is not None:
                draft.changes.append({"path": path, "field": written, "old": REDACTED, "new": None})
            draft.changes += [{"path": path, "section": "History", "line": REDACTED} for _ in dropped]
        else:
            body_line = text.count("\n", 0, fm.parse(text).body if fm.parse(text) is not None else 0) + 1
            last = len(lines) - 1 if text.endswith("\n") else len(lines)
            if line is None or not body_line <= line <= last or not lines[line - 1].strip():
                raise BadRequest(
                    f"--line {line}: give a line of {path}'s body that holds text (lines {body_line}-{last}); "
                    "a property is redacted by its FIELD"
                )
            start = line - 1
            end = start + 1
            if "PRIVATE KEY" in lines[start] and "-----BEGIN" in lines[start]:
                while end < len(lines) and "-----END" not in lines[end - 1]:
                    end += 1
            old = "\n".join(lines[start:end])
            hidden = mask(old)
            plan.secrets = secret_spans(old) if hidden != old else [old.strip()]
            lines[start:end] = [hidden] if hidden != old and end - start == 1 else []
            text = "\n".join(lines)
            draft.changes.append({"path": path, "section": _section_at(lines, start), "line": REDACTED})
        draft.text = text
    except _NotEditable as exc:
        return _refusal(plan, exc)
    return _finish(plan, [draft], schema, today, "redact")


def _value_strings(value) -> list[str]:
    if isinstance(value, list):
        return [s for item in value for s in _value_strings(item)]
    if value is None or isinstance(value, (bool, dict)):
        return []
    return [value.isoformat() if hasattr(value, "isoformat") else str(value)]


def _history_of(text: str, field: str, held: list[str]) -> list[str]:
    """The ``## History`` lines of ``field`` that hold one of ``held`` (its
    values) or look like a secret."""
    from ..read.secrets import first_secret
    from .asof import LINE

    found = []
    for item in sections.items(text, "History"):
        match = LINE.match(item)
        if match is None or match.group(2).strip().casefold() != field.casefold():
            continue
        if any(value in item for value in held if len(value) >= 4) or first_secret(item) is not None:
            found.append(item)
    return found


def _section_at(lines: list[str], index: int) -> str:
    """The heading of the section line ``index`` is in ("body" before any)."""
    for text in reversed(lines[:index]):
        if text.startswith("#") and text.lstrip("#").startswith(" "):
            return text.lstrip("#").strip()
    return "body"
