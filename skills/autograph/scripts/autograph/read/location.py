"""Where the vault is, found as git finds a repository.

A command is told its vault (``--vault``, a positional ``VAULT``, the
``AUTOGRAPH_VAULT`` variable) or finds it: the nearest folder, upward from
a note path on its command line or from the current folder, that holds one
of :data:`MARKERS`.  This module holds that search and the one test of
whether two names are one folder; which name wins, and what a command does
when nothing is found, is ``cli``'s (DESIGN 3, "Command-line conventions").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = [
    "ENVIRONMENT",
    "MARKERS",
    "find_vault",
    "holder",
    "is_inside",
    "is_vault",
    "same_folder",
    "start_of",
    "within",
]

ENVIRONMENT = "AUTOGRAPH_VAULT"

# What makes a folder a vault, in two tiers.  Obsidian's settings folder or
# autograph's schema say so outright (folders are folders and the schema a
# file: a stray file called ".obsidian" marks nothing).  A .graph/ says only
# that autograph ran there, and earlier versions ran in whatever folder they
# were started in (caches, a health history, a lock in a home folder or a code
# repository, or in a vault's subfolder), so it counts only when it holds a
# journal (autograph wrote notes there) and no folder above holds a mark of
# the first tier.
MARKERS = ((".obsidian", True), ("schema.json", False), (".graph/journal", True))


# Another tool's schema.json (a JSON Schema document, a GraphQL introspection)
# is no autograph schema: a code repository holding one is no vault.
_FOREIGN_SCHEMA = re.compile(rb'"\$schema"\s*:\s*"https?://json-schema\.org|"__schema"\s*:')


def _marked(folder: str | os.PathLike, names) -> bool:
    for name, is_dir in names:
        path = os.path.join(folder, name)
        if not (os.path.isdir(path) if is_dir else os.path.isfile(path)):
            continue
        if name == "schema.json" and _foreign(path):
            continue
        return True
    return False


def _foreign(path: str) -> bool:
    """True when the ``schema.json`` at ``path`` is another tool's: its
    first 4 KB say it is a JSON Schema (``"$schema"`` on json-schema.org)
    or a GraphQL introspection (``"__schema"``).  An unreadable one is
    taken for autograph's (the command then says what is wrong with it)."""
    try:
        with open(path, "rb") as handle:
            return bool(_FOREIGN_SCHEMA.search(handle.read(4096)))
    except OSError:
        return False


def is_vault(folder: str | os.PathLike) -> bool:
    """True when ``folder`` holds one of :data:`MARKERS` (a broken or
    unreadable entry counts as absent, and so does another tool's
    ``schema.json``: only its first 4 KB are read)."""
    return _marked(folder, MARKERS)


def find_vault(start: str | os.PathLike) -> Path | None:
    """The vault ``start`` lies in: the nearest folder from ``start`` upward
    (``start`` itself first, then each parent to the file system's root)
    holding ``.obsidian/`` or ``schema.json``; else the nearest holding
    ``.graph/journal/``; None when none does.  ``start`` is made absolute
    against the current folder, and its symlinks are kept as written (``cd
    ~/link-to-vault/people`` finds ``~/link-to-vault``, as the shell shows
    it), so the answer reads as the person typed it."""
    folder = Path(os.path.abspath(start))
    real = Path(os.path.realpath(folder))
    # as typed first; then through the symlinks on the way (a note reached by a link into a vault)
    for chain in ([folder, *folder.parents], [real, *real.parents] if real != folder else []):
        for names in (MARKERS[:2], MARKERS[2:]):
            for candidate in chain:
                if _marked(candidate, names):
                    return candidate
    return None


def holder(folder: str | os.PathLike) -> Path | None:
    """The Obsidian vault above ``folder`` (as typed or through its
    symlinks) when ``folder`` holds neither ``.obsidian/`` nor
    ``schema.json`` but a parent holds ``.obsidian/``: Obsidian opens that parent as one vault, so ``folder``
    is a folder of it, and links from the rest of it would go unseen.  (A
    ``schema.json`` above does not count: a code repository has its own.)"""
    here = Path(os.path.abspath(folder))
    if _marked(here, MARKERS[:2]):  # a journal does not make a folder of an Obsidian vault a vault
        return None
    real = Path(os.path.realpath(here))
    for parent in [*here.parents, *(real.parents if real != here else ())]:
        if _marked(parent, MARKERS[:1]):
            return parent
    return None


def start_of(path: str, cwd: str | os.PathLike | None = None) -> Path | None:
    """The folder discovery starts from for a note path on the command line:
    the path itself when it is a folder, its parent when it is a file (or a
    new name in a folder that exists, as ``graph.py mv``'s NEW); None when
    ``path`` names nothing on disk (a note's name, resolved as a wikilink
    once the vault is known)."""
    try:
        typed = os.path.expanduser(path)
        full = Path(typed if os.path.isabs(typed) else os.path.join(cwd or os.getcwd(), typed))
        if full.is_dir():
            return full
        if full.exists() or full.is_symlink():
            return full.parent
    except OSError:  # a folder on the way that cannot be searched: as if the path named nothing
        pass
    return None


def same_folder(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when ``a`` and ``b`` are one folder (by device and inode, so a
    symlink, a trailing slash or ``..`` does not make two); False when
    either cannot be ``stat``-ed."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def within(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """True when ``path`` is ``root`` or inside it, compared by real path
    (symlinks resolved), so a link out of the vault is outside."""
    return is_inside(os.path.realpath(path), os.path.realpath(root))


def is_inside(real: str, real_root: str) -> bool:
    """True when the real path ``real`` is ``real_root`` or below it (both
    already resolved: the one comparison confinement and discovery share)."""
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)
