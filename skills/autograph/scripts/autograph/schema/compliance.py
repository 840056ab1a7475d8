"""Schema compliance: findings per rule and per note, a score, and safe fixes.

:func:`check` reads every note and returns a :class:`Report`: one
:class:`Finding` per problem (rule, severity, file, 1-based line, message,
and the fix when the schema allows one).  :func:`plan_fixes` turns the
fixable findings into :class:`Edit` objects made of surgical
frontmatter edits only; nothing is written here.

The rules (``RULES``) never guess: a status outside its type's list is
reported, never replaced, unless ``field_fixes`` maps it; a type is never
replaced by an inferred one; a note whose frontmatter does not parse is
reported and left alone (see :mod:`repair` for the explicit repairs).

A fix writes its final value at once (a fixed note has nothing left to fix)
and never drops a comment: a value that holds comments is reported, not
fixed.  Property names are read as Obsidian reads them, ignoring letter
case: a fix edits the note's ``Status``, never adds a second ``status``.
A template placeholder (``{{date}}``, ``<% tp.file.title %>``:
:func:`frontmatter.is_placeholder`) is never rewritten by a fix: no mapping
applies to it, and a tags fix keeps such an item as it is written (BR-41).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ..read import frontmatter
from ..read.note import Note
from ..read.vault import Vault
from ..write.changes import Edit
from .model import Schema

__all__ = ["RULES", "Finding", "Report", "check", "check_note", "plan_fixes", "score"]

ERROR, WARNING, INFO = "error", "warning", "info"

# rule id -> (severity, what it checks)
RULES: dict[str, tuple[str, str]] = {
    "unreadable": (ERROR, "the note is not UTF-8 or cannot be read"),
    "invalid-frontmatter": (ERROR, "the frontmatter does not parse (repair: enforce.py --repair)"),
    "no-frontmatter": (WARNING, "the note has no frontmatter (fix: engine.py init)"),
    "missing-type": (ERROR, "the schema has types and the note has no type"),
    "type-alias": (ERROR, "the type is another spelling of a schema type (type_aliases)"),
    "unknown-type": (ERROR, "the type is not in node_types"),
    "field-fix": (ERROR, "a value the schema maps to another (field_fixes)"),
    "status-not-allowed": (ERROR, "the status is not in its type's status list"),
    "missing-required": (ERROR, "a property the note's type requires is missing or empty"),
    "tags-format": (WARNING, "tags written with '#' or with empty items"),
    "yaml-comment": (WARNING, "a value that YAML reads as a comment ('#' after a space)"),
    "property-type": (WARNING, "a value does not match the property's type (properties)"),
    "misplaced": (WARNING, "the note is not in its type's folder"),
    "quoted-date": (INFO, "a date property written in quotes"),
    "tab-in-value": (INFO, "a tab character inside a value"),
}
WEIGHT = {ERROR: 1.0, WARNING: 0.5, INFO: 0.0}


@dataclass
class Finding:
    """One problem in one note.  ``fix`` is ``{"key", "value"}`` (the value
    to set) when the schema allows fixing it, else None.  ``folder`` is,
    for a misplaced card, the folder its type lives in (``""``: the vault
    root), which ``enforce.py --move`` moves it to."""

    path: str
    line: int
    rule: str
    message: str
    severity: str = ""
    key: str | None = None
    fix: dict | None = None
    folder: str | None = None

    def __post_init__(self):
        self.severity = self.severity or RULES[self.rule][0]

    def as_dict(self) -> dict:
        data = asdict(self)
        data["fixable"] = self.fix is not None
        if self.folder is None:
            del data["folder"]
        return data


@dataclass
class Report:
    """Findings of a whole vault and its compliance score (0-100)."""

    notes: int
    findings: list[Finding] = field(default_factory=list)

    @property
    def score(self) -> float:
        return score(self.notes, self.findings)

    def by_rule(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.rule] = counts.get(finding.rule, 0) + 1
        return dict(sorted(counts.items()))

    def by_note(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.path] = counts.get(finding.path, 0) + 1
        return counts

    def fixable(self) -> list[Finding]:
        return [f for f in self.findings if f.fix is not None]


def score(notes: int, findings: list[Finding]) -> float:
    """Compliance 0-100: the mean over notes of 1 - the heaviest finding's
    weight (error 1, warning 0.5, info 0); 100 for an empty vault.  Depends on
    the findings only, never on output options."""
    if not notes:
        return 100.0
    worst: dict[str, float] = {}
    for finding in findings:
        worst[finding.path] = max(worst.get(finding.path, 0.0), WEIGHT[finding.severity])
    return round(100 * (1 - sum(worst.values()) / notes), 1)


# ---------------------------------------------------------------------------
# Checking one note

_COMMENT_VALUE = re.compile(r"^([ \t]*)(-[ \t]+|[^\s#'\"][^:]*?:[ \t]+)(#\S.*)$")
_TAB_IN_VALUE = re.compile(r"\S[^\t]*\t[ \t]*[^\s#]")  # a tab with value text on both sides
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[-+][0-9]{2}:?[0-9]{2})?\Z"
)


def _raw_lines(note: Note) -> list[str]:
    block = note.frontmatter
    if block is None or note.text is None:
        return []
    return [line.rstrip("\r") for line in note.text[block.start : block.end].split("\n")]


def _type_ok(kind: str, value) -> bool:
    """Whether ``value`` fits Obsidian property type ``kind`` (empty always fits)."""
    if value is None:
        return True
    if kind == "text":
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    if kind in ("multitext", "aliases", "tags"):
        return isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "checkbox":
        return isinstance(value, bool)
    if kind == "date":
        return isinstance(value, str) and bool(_DATE.match(value))
    if kind == "datetime":
        return isinstance(value, str) and bool(_DATETIME.match(value) or _DATE.match(value))
    return True


def _normal_tags(value):
    """Tags as Obsidian reads them, in their final form at once: every '#'
    that starts a tag dropped, the spaces around the text trimmed, empty items
    dropped (``"# spaced"`` -> ``"spaced"``, ``"# #x"`` -> ``"x"``).  A fixed
    point: applied to its own result it changes nothing."""
    if isinstance(value, list):
        cleaned = []
        for item in value:
            if frontmatter.is_placeholder(item):
                pass  # kept as written: "- {{title}}" stays unquoted
            elif isinstance(item, str):
                item = _TAG_HASH.sub(r"\1", item).strip()
                if not item:
                    continue
            elif item is None:
                continue
            cleaned.append(item)
        return cleaned
    if isinstance(value, str) and "#" in value and not frontmatter.is_placeholder(value):
        cleaned = _TAG_HASH.sub(r"\1", value).strip()
        return cleaned or None
    return value


_TAG_HASH = re.compile(r"(^|[\s,])#+")


def _settled(schema: Schema, name: str, value):
    """The value a fix writes for property ``name`` (schema spelling): the
    end of the schema's mappings, reached in one step, so that checking the
    fixed note offers no further fix.  ``field_fixes`` chains are followed to
    their end, a type also through ``type_aliases``, tags are normalised.  A
    loop of mappings (``a -> b -> a``) leaves the value as it is."""
    if name == "tags":
        return _normal_tags(value)
    fixes = schema.field_fixes.get(name, {})
    aliases = schema.type_aliases if name == "type" else {}
    seen = [value]
    while isinstance(value, str) and not frontmatter.is_placeholder(value):
        target = aliases.get(value, fixes.get(value, value))
        if target == value:
            return value
        if target in seen:
            return seen[0]
        seen.append(target)
        value = target
    return value


def _strip_comment(line: str) -> str:
    """A frontmatter line without its trailing ``# comment`` (outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "#" and i > 0 and line[i - 1] in " \t":
            return line[:i].rstrip(" \t")
    return line.rstrip(" \t")


def check_note(note: Note, schema: Schema) -> list[Finding]:
    """Every finding for one note.  Fixes are computed in order, each on the
    value the previous fixes leave (an alias is resolved before its type's
    required properties are looked up)."""
    path = note.path
    if note.text is None:
        return [Finding(path, 1, "unreadable", note.error or "cannot be read")]
    block = note.frontmatter
    if block is None:
        if schema.node_types:
            return [Finding(path, 1, "no-frontmatter", "no frontmatter; engine.py init adds type, status and created")]
        return []
    if block.error is not None:
        err = block.error
        return [Finding(path, err.line, "invalid-frontmatter", str(err))]

    found: list[Finding] = []
    lines = _raw_lines(note)
    entries = {entry.key: entry for entry in block.entries}
    entry_line = {key: entry.start + 2 for key, entry in entries.items()}
    props = dict(block.properties)
    # a flow-style block ({...}) has no lines per key, so nothing in it can be edited surgically
    editable = bool(block.entries) or not block.properties

    def name_of(name: str) -> str:
        """The note's spelling of property ``name``: Obsidian reads names
        that differ only in letter case as one property (``Status`` is
        ``status``), so a fix edits the key the note has, never adds a second."""
        if name in block.properties:
            return name
        folded = name.lower()
        return next((key for key in block.properties if key.lower() == folded), name)

    def add(rule: str, key: str | None, message: str, fix=None, line: int | None = None) -> None:
        if fix is not None and not editable:
            message += " (not fixable: the frontmatter is one flow mapping; edit it by hand)"
            fix = None
        elif fix is not None and (problem := frontmatter.edit_problem(note.text, key)) is not None:
            message += f" (not fixable: {problem.reason})"  # comments inside the value are never dropped
            fix = None
        fix = {"key": key, "value": fix} if fix is not None else None
        found.append(Finding(path, line or entry_line.get(key, 1), rule, message, key=key, fix=fix))

    in_block_scalar = set()
    for entry in block.entries:
        if lines[entry.start][len(entry.prefix) :].strip()[:1] in ("|", ">"):
            in_block_scalar.update(range(entry.start + 1, entry.end))
    for i, line in enumerate(lines):
        if i in in_block_scalar:
            if "\t" in line and _TAB_IN_VALUE.search(line):
                add("tab-in-value", None, f"tab inside value, line {i + 2}", line=i + 2)
            continue
        if line.lstrip(" \t").startswith("#"):
            continue  # a comment line
        match = _COMMENT_VALUE.match(line)
        if match:
            tag = match.group(3).split()[0]
            add("yaml-comment", None, f'value is a YAML comment; quote it as "{tag}" or drop the #', line=i + 2)
        elif "\t" in line and _TAB_IN_VALUE.search(_strip_comment(line)):
            add("tab-in-value", None, f"tab inside value, line {i + 2}", line=i + 2)

    node_types = schema.node_types
    kind_key = name_of("type")
    kind = props.get(kind_key)
    if node_types:
        if kind is None or kind == "":
            inferred = schema.infer_type(path)
            if inferred is not None:
                inferred = _settled(schema, "type", inferred)
            add(
                "missing-type",
                kind_key,
                "missing required field type" + (f"; the folder suggests {inferred!r}" if inferred else ""),
                fix=inferred,
                line=None if kind_key in entry_line else 1,
            )
            kind = inferred
        elif not isinstance(kind, str):
            add("unknown-type", kind_key, f"type is {type(kind).__name__}, not a name; write one of the schema's types")
            kind = None
        else:
            target = _settled(schema, "type", kind)
            if target != kind:
                if kind in schema.type_aliases:
                    add("type-alias", kind_key, f"type {kind!r} is written {target!r} in this schema", fix=target)
                else:
                    add("field-fix", kind_key, f"{kind_key} {kind!r} is written {target!r} in this schema", fix=target)
                props[kind_key] = kind = target
            if kind not in node_types:
                add("unknown-type", kind_key, f"type {kind!r} is not in node_types")
                kind = None
    if kind is not None:
        props[kind_key] = kind

    for name in schema.field_fixes:
        key = name_of(name)
        value = props.get(key)
        if name == "type" or not isinstance(value, str):
            continue  # the type's mappings are settled above
        target = _settled(schema, name, value)
        if target != value:
            add("field-fix", key, f"{key} {value!r} is written {target!r} in this schema", fix=target)
            props[key] = target

    tags_key = name_of("tags")
    tags_entry = entries.get(tags_key)
    commented = tags_entry is not None and any(
        f.rule == "yaml-comment" and tags_entry.start + 2 <= f.line < tags_entry.end + 2 for f in found
    )
    if tags_key in props and not commented:  # a '#tag' read as a comment is for --repair, not dropped
        normal = _normal_tags(props[tags_key])
        if normal != props[tags_key]:
            add("tags-format", tags_key, "tags are read without '#' and empty items; normalise them", fix=normal)
            props[tags_key] = normal

    if isinstance(kind, str) and kind in node_types:
        allowed = schema.statuses(kind)
        status_key = name_of("status")
        status = props.get(status_key)
        if allowed and status is not None:
            values = status if isinstance(status, list) else [status]
            bad = [v for v in values if not isinstance(v, str) or v not in allowed]
            if bad:
                add(
                    "status-not-allowed",
                    status_key,
                    f"status {bad[0]!r} is not allowed for {kind}; use one of {', '.join(allowed)}"
                    " (or map it in field_fixes.status)",
                )
        for name in schema.required(kind):
            key = name_of(name)
            value = props.get(key)
            if value is None or value == "" or value == []:
                default = schema.default_for(kind, name)
                if default is not None:
                    default = _settled(schema, name, default)
                    if default is None or default == "" or default == []:
                        default = None  # a default that settles to nothing fixes nothing
                add(
                    "missing-required",
                    key,
                    f"missing required field {name} for type {kind}"
                    + ("" if default is not None else " (no default in the schema)"),
                    fix=default,
                    line=entry_line.get(key, 1),
                )
                if default is not None:
                    props[key] = default
        folder = schema.folder_of(kind)
        if folder is not None:
            here = path.rsplit("/", 1)[0] if "/" in path else ""
            if here != folder and not here.startswith(folder + "/" if folder else "\0"):
                add(
                    "misplaced",
                    kind_key,
                    f"a {kind} card belongs in {folder or 'the vault root'}/, not {here or 'the root'}/",
                )
                found[-1].folder = folder

    for name, expected in schema.properties.items():
        key = name_of(name)
        value = props.get(key)
        if key in props and not _type_ok(expected, value):
            add("property-type", key, f"{key} should be {expected}, found {_describe(value)}")
        elif expected in ("date", "datetime") and isinstance(value, str) and key in entries:
            entry = entries[key]
            if lines[entry.start][len(entry.prefix) :].strip()[:1] in ("'", '"'):
                add("quoted-date", key, f"{key} is a quoted date; Obsidian's Date type writes it unquoted")
    return found


def _describe(value) -> str:
    kind = {bool: "checkbox", int: "number", float: "number", str: "text", list: "list", dict: "mapping"}
    return f"{kind.get(type(value), type(value).__name__)} {value!r}"


def check(vault: Vault, schema: Schema) -> Report:
    """Check every card of ``vault`` against ``schema`` (each note read once).
    Notes in templates folders and ``ignore_folders`` are not cards: they are
    neither checked nor fixed (:meth:`Vault.cards`)."""
    cards = vault.cards(schema)
    report = Report(len(cards))
    for path in cards:  # not kept: a large vault's notes are never all in memory (a fix reads its note again)
        report.findings.extend(check_note(vault.note(path, keep=False), schema))
    return report


def plan_fixes(vault: Vault, report: Report) -> tuple[list[Edit], list[dict]]:
    """One :class:`Edit` per note with fixable findings: each fix a
    surgical ``set_property`` on the text the previous fix left, so only the
    lines of the fixed keys change.

    Returns ``(edits, skipped)``: ``skipped`` holds ``{path, reason}`` for
    notes whose frontmatter cannot be edited (a flow mapping such as
    ``{type: x}``, a value that holds YAML comments; :func:`check_note`
    already offers no fix for these, so this catches a note changed since):
    they are reported, and every other note is planned."""
    by_note: dict[str, list[Finding]] = {}
    for finding in report.fixable():
        by_note.setdefault(finding.path, []).append(finding)
    edits: list[Edit] = []
    skipped: list[dict] = []
    for path, findings in by_note.items():
        note = vault.note(path, keep=False)  # the edit keeps the bytes it needs
        text = note.text
        try:
            for finding in findings:
                text = frontmatter.set_property(text, finding.fix["key"], finding.fix["value"])
        except (frontmatter.FrontmatterError, ValueError) as exc:
            skipped.append({"path": path, "reason": f"not edited: {exc}"})
            continue
        after = note.encode(text)
        if after != note.data:
            reasons = ", ".join(sorted({f.rule for f in findings}))
            edits.append(Edit(path, note.data, after, reasons))
    return edits, skipped
