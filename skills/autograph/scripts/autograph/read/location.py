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
from pathlib import Path

__all__ = ["ENVIRONMENT", "LITTER", "MARKERS", "find_vault", "is_vault", "same_folder", "start_of", "within"]

ENVIRONMENT = "AUTOGRAPH_VAULT"

# What makes a folder a vault: Obsidian's settings folder, autograph's schema,
# or autograph's own folder (a vault autograph has written to).  Folders are
# folders and the schema a file: a stray file called ".obsidian" marks nothing.
MARKERS = ((".obsidian", True), ("schema.json", False), (".graph", True))

# What earlier versions left in any folder they took for a vault (a refused
# call's lock, a search run in a code repository or a home folder): a
# .graph/ that holds only these does not make a vault of the folder.
LITTER = ("writer.lock", "search.sqlite", "search.sqlite-wal", "search.sqlite-shm", "search.sqlite-journal")


def is_vault(folder: str | os.PathLike) -> bool:
    """True when ``folder`` holds one of :data:`MARKERS` (a broken or
    unreadable entry counts as absent; nothing is read but ``stat`` and
    the names in ``.graph/``).  A ``.graph/`` that holds only
    :data:`LITTER` marks nothing."""
    for name, is_dir in MARKERS:
        path = os.path.join(folder, name)
        if not (os.path.isdir(path) if is_dir else os.path.isfile(path)):
            continue
        if name != ".graph":
            return True
        try:
            if any(entry not in LITTER for entry in os.listdir(path)):
                return True
        except OSError:
            continue
    return False


def find_vault(start: str | os.PathLike) -> Path | None:
    """The nearest folder from ``start`` upward (``start`` itself first, then
    each parent to the file system's root) that :func:`is_vault`; None when
    none is.  ``start`` is made absolute against the current folder, and its
    symlinks are kept as written (``cd ~/link-to-vault/people`` finds
    ``~/link-to-vault``, as the shell shows it), so the answer reads as the
    person typed it."""
    folder = Path(os.path.abspath(start))
    while True:
        if is_vault(folder):
            return folder
        if folder.parent == folder:
            return None
        folder = folder.parent


def start_of(path: str, cwd: str | os.PathLike | None = None) -> Path | None:
    """The folder discovery starts from for a note path on the command line:
    the path itself when it is a folder, its parent when it is a file (or a
    new name in a folder that exists, as ``graph.py mv``'s NEW); None when
    ``path`` names nothing on disk (a note's name, resolved as a wikilink
    once the vault is known)."""
    full = Path(os.path.join(cwd or os.getcwd(), os.path.expanduser(path)))
    if full.is_dir():
        return full
    if full.exists() or full.is_symlink():
        return full.parent
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
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
