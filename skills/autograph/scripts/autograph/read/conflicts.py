"""Sync conflict copies: the files a sync client leaves beside a note when
two devices changed it at once.

A copy holds one device's version of a note under another name.  It is an
artefact, never a card: no identity look-up, refusal, dedup canonical or
Map of Content may take it for the subject (agents wrote facts into copies,
and dedup kept a copy and trashed the real note, before this rule).  It is
reported with the note it copies (``graph.py health``), for a person to
fold in and remove.

The names the clients give a copy of ``Note.md`` (the table the code
below holds), with where each form is described; those marked "as
reported" were not checked against the vendor's own page:

* Syncthing: ``Note.sync-conflict-20261201-120000-ABCDEFG.md`` (date,
  time, the changing device's short id; docs.syncthing.net, "Conflicting
  Changes", and the tools that resolve them);
* Nextcloud: ``Note (conflicted copy 2026-12-01 120000).md``
  (docs.nextcloud.com, user manual, desktop client "Conflicts");
* Dropbox: ``Note (Dana's conflicted copy 2026-12-01).md`` (the editor's
  name, "conflicted copy", the date; help.dropbox.com,
  syncing-uploads/conflicted-copy);
* Obsidian Sync, set to create conflict files: ``Note (Conflicted copy
  DEVICE 202612011200).md`` (as reported);
* ownCloud: ``Note_conflict-20261201-120000.md`` (as reported in
  owncloud/android#815, "_conflict+date");
* iCloud Drive, as the load run of issue 30 saw it: ``Note (conflict
  2026-12-01).md``;
* OneDrive: ``Note (conflicted copy ...).md`` like Dropbox's, or, on
  "keep both", the device's name appended, ``Note-LAPTOP-AB12CD3.md`` (as
  reported).

OneDrive's form is taken only when the note it copies is beside it and
the suffix is a Windows device name as Windows makes them up
(``DESKTOP-``/``LAPTOP-`` and seven letters or digits): ``Plan-B.md`` is a
note.  iCloud's other form, ``Note 2.md``, is left alone: a person names
notes so.
"""

from __future__ import annotations

import re

__all__ = ["conflict_copies", "may_be_copy", "original_of"]

# each: the copy's name (without .md) -> the name of the note it copies
_FORMS = (
    re.compile(r"(?P<name>.+)\.sync-conflict-\d{8}-\d{6}(?:-[0-9A-Z]{7})?", re.S),  # Syncthing
    # Dropbox, Nextcloud, Obsidian Sync
    re.compile(r"(?P<name>.+?) \((?:[^()]*'s )?[Cc]onflicted [Cc]opy(?: [^()]*)?\)", re.S),
    re.compile(r"(?P<name>.+?) \([Cc]onflict \d[^()]*\)", re.S),  # iCloud Drive, as seen (dated)
    re.compile(r"(?P<name>.+)_conflict-\d{8}-\d{6}", re.S),  # ownCloud
)
_ONEDRIVE = re.compile(r"(?P<name>.+)-(?:DESKTOP|LAPTOP)-[0-9A-Z]{7}", re.S)


def may_be_copy(name: str) -> bool:
    """Whether a file name (or path) holds a mark of one of the forms: False
    for nearly every note, told without a pattern (a vault's every note
    is asked)."""
    return "onflict" in name or "-DESKTOP-" in name or "-LAPTOP-" in name


def original_of(path: str, notes: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The vault path of the note that note ``path`` is a sync conflict copy
    of (the same folder, the name without the client's mark), or None when
    ``path`` is not named as a copy.  ``notes``: the vault's notes; the
    OneDrive form needs its note there (see the module docstring), the
    others are copies whether or not the note is still there."""
    folder, _, name = path.rpartition("/")
    if not name.endswith(".md"):
        return None
    stem = name[:-3]
    if not may_be_copy(stem):
        return None
    prefix = folder + "/" if folder else ""
    for form in _FORMS:
        found = form.fullmatch(stem)
        if found is not None:
            return prefix + found["name"] + ".md"
    found = _ONEDRIVE.fullmatch(stem)
    if found is not None and prefix + found["name"] + ".md" in notes:
        return prefix + found["name"] + ".md"
    return None


def conflict_copies(notes: list[str]) -> dict[str, str]:
    """``{copy: note it copies}`` of the vault's ``notes`` (vault paths), in
    path order."""
    known = set(notes)
    found = {}
    for path in notes:
        original = original_of(path, known)
        if original is not None:
            found[path] = original
    return found
