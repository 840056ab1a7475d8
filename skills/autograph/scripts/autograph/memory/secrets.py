"""Secrets in cards: what ``card.py`` refuses to write, never shows, and takes out again.

A card is read by every agent that looks its subject up, indexed, journaled
and sent to a model by ``enrich.py``; a password or an API key written
there spreads to all of them.  So (the detector is :mod:`read.secrets`):

* a value or a line that looks like a secret is refused (:func:`found_in`,
  :func:`refusal`: exit 2, the kind named, the value never), unless the
  request says ``allow_secret`` (``--allow-secret``);
* a value a command reports (``--json`` changes, ``card.py show``) is shown
  as ``[redacted]`` when it looks like one (:func:`shown_changes`,
  :func:`shown_fields`);
* an old value that looks like one never goes to ``## History``
  (:func:`value_secret` tells ``card.py set``);
* ``card.py redact`` takes one out of the card (``cards.plan_redact``),
  then out of the journal's copies and the index (:func:`purge`).

A value is judged with its field's name: ``password: hunter2`` is a
secret, ``hunter2`` alone may be a word.
"""

from __future__ import annotations

from ..read.secrets import REDACTED, first_secret, mask

__all__ = [
    "REDACTED",
    "found_in",
    "purge",
    "purge_written",
    "purged_lines",
    "refusal",
    "shown_changes",
    "shown_fields",
    "value_secret",
]


def _strings(value) -> list[str]:
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [str(key), *_strings(item)]]
    if value is None or isinstance(value, bool):
        return []
    return [value.isoformat() if hasattr(value, "isoformat") else str(value)]


def value_secret(field: str, value) -> str | None:
    """What ``value`` of property ``field`` looks like when it is a secret
    (``"a password value (password = ...)"``), judged with the field's
    name and each item of a list on its own; None when it does not."""
    for text in _strings(value):
        what = first_secret(f"{field}: {text}")
        if what is not None:
            return what
    return None


def found_in(assignments=(), text: str | None = None, title: str | None = None) -> list[dict]:
    """``[{field, what}]``: each ``(field, value)`` of ``assignments``, the
    ``text`` of a log line (field ``text``) and a card's ``title`` (field
    ``title``) that looks like a secret."""
    found = []
    for field, value in assignments:
        what = value_secret(field, value)
        if what is not None:
            found.append({"field": field, "what": what})
    for name, line in (("title", title), ("text", text)):
        what = first_secret(line) if line else None
        if what is not None:
            found.append({"field": name, "what": what})
    return found


def refusal(found: list[dict]) -> dict:
    """The ``refused`` of a plan that would store the secrets ``found``
    (:func:`found_in`): reason ``secret`` (exit 2), ``fields`` naming where,
    and a message that names each kind, never the value."""
    told = "; ".join(f"{item['field']} looks like {item['what']}" for item in found)
    return {
        "reason": "secret",
        "message": f"{told}: not written (a card is read by every agent, indexed and journaled). Keep it in a "
        "password manager and note only where it is kept; --allow-secret stores it on purpose",
        "matches": [],
        "fields": [item["field"] for item in found],
    }


def shown_changes(changes: list[dict]) -> list[dict]:
    """A plan's ``changes`` as a command reports them: a value or a line
    that looks like a secret as ``[redacted]``."""
    shown = []
    for change in changes:
        if "field" in change:
            field = str(change["field"])
            change = {
                **change,
                "old": REDACTED if value_secret(field, change["old"]) else change["old"],
                "new": REDACTED if value_secret(field, change["new"]) else change["new"],
            }
        elif isinstance(change.get("line"), str):
            change = {**change, "line": mask(change["line"])}
        shown.append(change)
    return shown


def shown_fields(fields: dict) -> dict:
    """A card's ``{field: value}`` as ``card.py show`` prints it: a value
    that looks like a secret as ``[redacted]``."""
    return {key: REDACTED if value_secret(str(key), value) else value for key, value in fields.items()}


def purge_written(root, schema, plan, outcome: dict) -> dict:
    """:func:`purge` of what a ``card.py redact`` ``plan`` took out, once
    its card was written (``outcome``: ``cli.carry_out``'s); else nothing
    purged: ``{"journal": [], "index": False}``."""
    if plan.path not in outcome["written"]:  # a dry run, a refused or skipped write
        return {"journal": [], "index": False}
    return purge(root, schema, plan.secrets)


def purged_lines(purged: dict) -> list[str]:
    """The human report of :func:`purge`'s result, a line each."""
    from ..read.text import plural

    return [
        f"taken out of {plural(len(purged['journal']), 'journaled run')}",
        "index: rebuilt without it" if purged["index"] else "index: no index file to purge",
    ]


def purge(root, schema, pieces: list[str]) -> dict:
    """Take ``pieces`` (the text of a secret ``card.py redact`` removed
    from a card) out of what autograph keeps beside the vault: each
    journaled run's copy of the files before it and its recorded arguments
    (:func:`journal.scrub_secret`: that run can no longer put those bytes
    back), and the index file (brought up to date, its full-text segments
    merged and the file vacuumed, so no freed page keeps the old row).
    Returns ``{"journal": [run ids changed], "index": bool}``."""
    from pathlib import Path

    from ..read.vault import GRAPH_DIR, Vault
    from ..write import journal

    graph = Path(root) / GRAPH_DIR
    runs: set[str] = set()
    for piece in pieces:
        if len(piece.strip()) >= 4:  # a shorter piece would match bytes that are no secret
            runs.update(journal.scrub_secret(graph, piece.encode("utf-8", "surrogatepass")))
    return {"journal": sorted(runs), "index": _purge_index(Vault.open(root), schema)}


def _purge_index(vault, schema) -> bool:
    """Bring the index file up to date (the redacted card's row replaced),
    then merge its full-text segments and vacuum it; False when there is no
    index file or another process held it (the next update replaces the
    row; a vacuum then waits for the next redact)."""
    import sqlite3

    from ..write.index_file import INDEX_NAME, open_index

    if not (vault.root / ".graph" / INDEX_NAME).is_file():
        return False
    index = open_index(vault, schema)
    try:
        if index.path is None or index.readonly or index.stale:
            return False
        con = index.con
        con.execute("INSERT INTO fts(fts) VALUES('optimize')")
        con.commit()
        con.execute("VACUUM")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True
    except sqlite3.Error:
        return False
    finally:
        index.close()
