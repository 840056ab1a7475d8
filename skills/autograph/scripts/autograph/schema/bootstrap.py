"""Frontmatter for notes that have none (``engine.py init``).

Each bare note gets, when the schema can say them: ``type`` (from the note's
folder: ``path_type_hints``, then the types' folders), ``status`` (the
type's default) and ``created`` (the best date available, see
:func:`created_date`).  A note whose block is present but empty gets the
same keys inside that block.  A note with a BOM keeps it; a block that does
not parse, or is not ``key: value`` pairs, is reported and left alone, so a
note never gets a second block (BR-02, BR-12, BR-14).
"""

from __future__ import annotations

import datetime
import os
import re

from ..read import frontmatter
from ..read.text import printable
from ..read.vault import Vault
from ..write.changes import Edit
from .model import Schema

__all__ = ["created_date", "init_data", "plan_init", "skipped_lines"]

_NAME_DATE = re.compile(r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])")


def created_date(vault: Vault, path: str) -> datetime.date:
    """The best creation date of a note without frontmatter.

    A ``YYYY-MM-DD`` date in its file name (daily notes, meetings) wins;
    else the local calendar date of the file's modification time (file
    systems do not reliably keep a creation time).
    """
    match = _NAME_DATE.search(path.rsplit("/", 1)[-1])
    if match:
        try:
            return datetime.date(*(int(part) for part in match.groups()))
        except ValueError:
            pass
    stamp = os.stat(os.path.join(str(vault.root), path)).st_mtime
    return datetime.datetime.fromtimestamp(stamp).date()


def plan_init(vault: Vault, schema: Schema) -> tuple[list[Edit], list[dict]]:
    """Edits that give bare notes frontmatter, and the notes skipped.

    Returns ``(edits, skipped)``; ``skipped`` holds ``{path, reason}`` for
    notes whose block does not parse or that cannot be read.  Notes in the
    templates folders and ``ignore_folders`` are left alone.
    """
    edits: list[Edit] = []
    skipped: list[dict] = []
    for path in vault.cards(schema):  # never a template: its notes would inherit the fields
        note = vault.note(path)
        if note.text is None:
            skipped.append({"path": path, "reason": note.error or "cannot be read"})
            continue
        block = note.frontmatter
        if block is not None and block.error is not None:
            skipped.append({"path": path, "reason": f"frontmatter does not parse: {block.error}"})
            continue
        if block is not None and block.properties:
            continue
        kind = schema.infer_type(path)
        values = {"type": kind, "status": schema.default_for(kind, "status") if kind else None}
        text = note.text
        try:
            values["created"] = created_date(vault, path)
            for key, value in values.items():
                if value is not None:
                    text = frontmatter.set_property(text, key, value)
        except (frontmatter.FrontmatterError, OSError, ValueError) as exc:
            # one note that cannot be edited never stops the run
            skipped.append({"path": path, "reason": f"not edited: {getattr(exc, 'strerror', None) or exc}"})
            continue
        after = note.encode(text)
        if after != note.data:
            edits.append(
                Edit(
                    path,
                    note.data,
                    after,
                    "frontmatter added: " + ", ".join(k for k, v in values.items() if v is not None),
                )
            )
    return edits, skipped


def init_data(outcome: dict, skipped: list[dict]) -> dict:
    """What ``engine.py init --json`` prints: ``outcome`` (what
    ``cli.carry_out`` returned: edits, written, conflicts, failed, run),
    then ``skipped`` (:func:`plan_init`'s ``[{path, reason}]``)."""
    return {**outcome, "skipped": skipped}


def skipped_lines(skipped: list[dict]) -> list[str]:
    """The human report's line for each note :func:`plan_init` skipped
    (they follow the report of the edits)."""
    return [f"skipped {printable(item['path'])}: {printable(item['reason'])}" for item in skipped]
