"""Where Claude Code keeps a project's auto-memory when nothing redirects it.

Claude Code writes a project's memory to
``<config>/projects/<key>/memory/``: ``<config>`` is ``$CLAUDE_CONFIG_DIR``
or ``~/.claude``; ``<key>`` is the project's folder (the root of the git
repository holding it, so every subfolder shares one memory) with every
UTF-16 code unit that is not an ASCII letter or digit replaced by ``-``; a
key longer than 200 characters keeps its first 200 and gains ``-`` and a
base-36 hash of the whole path.  Measured with the pinned CLI (2.1.332): the
memory section of the system prompt it sends names this folder, for plain,
dotted, spaced, accented and 230-character folder names and for a subfolder
of a repository.  The ``autoMemoryDirectory`` setting (user, local or
policy settings only) moves it elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..read.size import read_regular

__all__ = ["MAX_KEY", "auto_memory_settings", "project_key", "project_memory_dir", "repository_root"]

MAX_KEY = 200


def _units(text: str):
    """The UTF-16 code units of ``text`` (JavaScript's string indices)."""
    for ch in text:
        point = ord(ch)
        if point < 0x10000:
            yield point
        else:
            point -= 0x10000
            yield 0xD800 + (point >> 10)
            yield 0xDC00 + (point & 0x3FF)


def _hash36(text: str) -> str:
    """Java's ``String.hashCode`` of ``text`` as a 32-bit integer, its
    absolute value in base 36 (what Claude Code appends to a long key)."""
    value = 0
    for unit in _units(text):
        value = ((value << 5) - value + unit) & 0xFFFFFFFF
    if value >= 1 << 31:
        value -= 1 << 32
    value = abs(value)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def project_key(path: str) -> str:
    """The folder name Claude Code gives the project at absolute ``path``."""
    key = "".join(chr(u) if u < 128 and chr(u).isalnum() else "-" for u in _units(path))
    if len(key) <= MAX_KEY:
        return key
    return f"{key[:MAX_KEY]}-{_hash36(path)}"


def repository_root(folder: Path) -> Path:
    """The nearest folder at or above ``folder`` holding ``.git``, else
    ``folder`` itself; for a linked worktree (``.git`` a file naming a
    ``gitdir`` that has a ``commondir``) the main working tree's folder, as
    Claude Code shares one memory among a repository's worktrees (measured
    with the pinned CLI)."""
    for candidate in [folder, *folder.parents]:
        dot_git = candidate / ".git"
        if not os.path.lexists(dot_git):
            continue
        main = _main_worktree(dot_git) if dot_git.is_file() else None
        return main or candidate
    return folder


def _main_worktree(dot_git: Path) -> Path | None:
    """The main working tree of the linked worktree whose ``.git`` file is
    ``dot_git``; None when it is not one (a submodule) or cannot be read."""
    try:
        line = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
        if not line.startswith("gitdir:"):
            return None
        gitdir = dot_git.parent / line[len("gitdir:") :].strip()
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, IndexError):
        return None
    return common.parent if common.name == ".git" else None


def project_memory_dir(project: str | os.PathLike, environ=None) -> Path:
    """Claude Code's own auto-memory folder for ``project`` (absolute,
    through its repository's root), under ``$CLAUDE_CONFIG_DIR`` or
    ``$HOME/.claude``."""
    environ = os.environ if environ is None else environ
    home = Path(environ.get("HOME") or Path.home())
    config = Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    root = repository_root(Path(os.path.abspath(project)))
    return config / "projects" / project_key(str(root)) / "memory"


SETTINGS_LIMIT = 1 << 20  # the most read of one settings file


def auto_memory_settings(environ, project: str | None) -> list[tuple[str, str]]:
    """``(settings file, folder)`` for each settings file that sets
    ``autoMemoryDirectory`` as Claude Code honours it (measured with the
    pinned CLI: an absolute path or one under ``~/``, expanded with
    ``$HOME``; a relative one is ignored), in the order Claude Code prefers
    them: the project's ``.claude/settings.local.json``, then the user's
    ``settings.json`` (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``).  Files that
    cannot be read (and a FIFO or device there, never waited on) are passed
    over."""
    home = environ.get("HOME") or os.path.expanduser("~")
    paths = [os.path.join(project, ".claude", "settings.local.json")] if project else []
    paths.append(os.path.join(environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "settings.json"))
    out = []
    for path in paths:
        try:
            data = json.loads(read_regular(path, SETTINGS_LIMIT).decode("utf-8-sig"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        value = data.get("autoMemoryDirectory") if isinstance(data, dict) else None
        if isinstance(value, str) and value.startswith(("/", "~/")):
            out.append((path, os.path.abspath(home + value[1:] if value.startswith("~/") else value)))
    return out
