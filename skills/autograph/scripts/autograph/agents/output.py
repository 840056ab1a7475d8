"""The JSON an agents' command hands over (``orchestrate.py``'s batches,
plans and schema drafts): on stdout, or written to the file named by ``-o``.

An output is not a note: it is written through :func:`derived.write_output`
(a new file, or an existing regular file with ``--force``; never through a
symlink or FIFO, never in a note's place in the vault) and is not journaled.
The texts here are the lines the scripts print about it.
"""

from __future__ import annotations

from ..read import jsonfile
from ..read.text import printable

__all__ = ["OutputError", "json_text", "would_write", "write", "wrote"]


class OutputError(ValueError):
    """The output file changed while it was written (bad usage: run again, exit 2)."""


def json_text(data, indent: int = 1) -> str:
    """``data`` as the JSON text an output holds: indented by ``indent``,
    key order as built, one final line break."""
    return jsonfile.dumps(data, indent=indent) + "\n"


def write(output: str, text: str, force: bool, vault=None) -> str:
    """Write ``text`` (UTF-8) to the file ``output``; returns the path
    written (``str``).  ``force``: replace an existing file; ``vault``: the
    root of the vault read, whose notes an output never replaces.  Raises
    :class:`OutputError` when the file changes while it is written,
    ``TargetError`` when it may not be written (it exists without
    ``force``, a symlink, a note), OSError for I/O failures."""
    from ..write import derived
    from ..write.replace import Conflict

    try:
        return str(derived.write_output(output, text.encode("utf-8"), overwrite=force, vault=vault))
    except Conflict:
        raise OutputError(f"{printable(output)} changed while it was written; run again") from None


def would_write(output: str, text: str) -> str:
    """The dry run's line: ``would write OUT (N bytes)``."""
    return f"would write {printable(output)} ({len(text.encode('utf-8'))} bytes)"


def wrote(target: str, summary: dict) -> str:
    """The line after a write: ``wrote OUT: key value, ...`` with the
    ``summary``'s figures (a list counted by its length)."""
    figures = ", ".join(f"{k} {len(v) if isinstance(v, list) else v}" for k, v in summary.items())
    return f"wrote {printable(target)}: {figures}"
