"""Codex's ``config.toml`` edited as text: the one feature flag that turns hooks on.

Codex runs hooks only while the feature ``hooks`` is on (``[features]
hooks = true``; ``codex_hooks`` is its older, deprecated name).  Since Codex
0.1xx it is on by default, so init writes the flag only where the file does
not set it, and never changes a value the person set: a ``false`` there is
theirs (init reports that hooks stay off).  (developers.openai.com/codex/hooks,
/config-reference.)

The edit touches only its own line: ``hooks = true`` inserted right after
the ``[features]`` header, or a ``[features]`` table appended at the end of
the file when there is none; removing it gives the bytes back.  The text
before and after is parsed with :mod:`tomllib` and must mean the same apart
from the flag, so a header inside a multi-line string, an inline
``features = {...}`` table or dotted ``features.x`` keys are refused
(:class:`HostError`) rather than guessed at.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from .settings_text import BOM_CHAR, HostError

__all__ = ["FLAG_LINE", "feature_state", "toml_with_flag", "toml_without_flag"]

FLAG = "hooks"
ALIASES = ("hooks", "codex_hooks")
FLAG_LINE = "hooks = true"
_HEADER = re.compile(r"^[ \t]*\[[ \t]*features[ \t]*\][ \t]*(#.*)?$")


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _parse(text: str, where: Path) -> dict:
    try:
        return tomllib.loads(text.lstrip(BOM_CHAR))
    except tomllib.TOMLDecodeError as exc:
        raise HostError(f"{where}: not valid TOML ({exc}); fix it, then run init again") from None


def feature_state(text: str | None, where: Path) -> bool | None:
    """The hooks feature as ``text`` sets it: True, False, or None (not set:
    Codex's default, on)."""
    if text is None or not text.strip(BOM_CHAR + " \t\r\n"):
        return None
    features = _parse(text, where).get("features")
    if not isinstance(features, dict):
        return None
    for name in ALIASES:
        if isinstance(features.get(name), bool):
            return features[name]
    return None


def _header_line(text: str) -> int | None:
    """The index of the ``[features]`` header line, else None."""
    for number, line in enumerate(text.split("\n")):
        if _HEADER.match(line.rstrip("\r").lstrip(BOM_CHAR) if number == 0 else line.rstrip("\r")):
            return number
    return None


def _same_but_flag(before: str, after: str, where: Path) -> None:
    """Raise HostError unless ``after`` parses as ``before`` plus our flag."""
    old, new = _parse(before, where) if before.strip() else {}, _parse(after, where)
    features = dict(new.get("features") or {})
    if features.pop(FLAG, None) is not True:
        raise HostError(f"{where}: init could not add hooks = true to [features] safely; add it by hand")
    new = {**new, "features": features}
    if not features and "features" not in old:
        new.pop("features")
    if new != old:
        raise HostError(f"{where}: init could not add hooks = true to [features] safely; add it by hand")


def toml_with_flag(text: str | None, where: Path) -> str:
    """``config.toml`` text with ``hooks = true`` under ``[features]``: the
    text unchanged when the flag (or ``codex_hooks``) is set either way; the
    line inserted after the ``[features]`` header; else a ``[features]``
    table appended (after one blank line), or written as the whole file."""
    if text is not None and feature_state(text, where) is not None:
        return text
    base = text or ""
    newline = _newline(base)
    table = f"[features]{newline}{FLAG_LINE}{newline}"
    if not base.strip(BOM_CHAR + " \t\r\n"):
        after = base + table
    else:
        header = _header_line(base)
        if header is not None:
            lines = base.split("\n")
            lines.insert(header + 1, FLAG_LINE + ("\r" if lines[header].endswith("\r") else ""))
            after = "\n".join(lines)
        elif "features" in _parse(base, where):
            raise HostError(
                f"{where}: features is not written as a plain [features] table (an inline table, dotted keys, "
                f"a quoted or nested header); add hooks = true to it by hand (Codex runs hooks only while that "
                f"feature is on), then run init again"
            )
        else:
            after = base + ("" if base.endswith("\n") else newline) + newline + table
    _same_but_flag(base, after, where)
    return after


def toml_without_flag(text: str, where: Path, drop_table: bool = False) -> str:
    """``config.toml`` text without the ``hooks = true`` line init put right
    after the ``[features]`` header; with ``drop_table`` (init created the
    table) the header goes too when nothing else is in the table, with the
    blank line init put before it.  Anything else stays."""
    header = _header_line(text)
    if header is None:
        return text
    lines = text.split("\n")
    if header + 1 >= len(lines) or lines[header + 1].rstrip("\r").strip() != FLAG_LINE:
        return text
    rest = [line for line in lines[header + 2 :] if line.strip()]
    if drop_table and (not rest or rest[0].lstrip().startswith("[")):
        start = header - 1 if header >= 1 and not lines[header - 1].strip() and header >= 2 else header
        del lines[start : header + 2]
    else:
        del lines[header + 1]
    return "\n".join(lines)
