"""A ``card.py`` command as asked: its arguments read into a plan.

:func:`plan_command` takes the arguments of one command as ``card.py``
parses them (``field=value`` words, note names) and returns the plan of
:mod:`cards` or :mod:`remember`; :func:`read_source` reads ``--source``.
``card.py batch`` (:mod:`batch`) reads its JSON lines into the same calls.
"""

from __future__ import annotations

import datetime

from .cards import (
    Plan,
    find_card,
    named_card,
    parse_assignment,
    plan_link,
    plan_log,
    plan_new,
    plan_redact,
    plan_retire,
    plan_set,
)
from .daily import date_of
from .errors import BadRequest
from .remember import plan_remember
from .source import Source

__all__ = ["plan_command", "read_source", "secret_refused"]


def plan_command(vault, schema, command: str, request: dict, today: datetime.date) -> Plan:
    """The plan of one ``card.py`` command, ``new``, ``remember``, ``set``,
    ``log``, ``link`` or ``retire``; ``request`` holds its arguments under
    the names ``card.py`` parses them to (other keys are ignored):
    ``type``, ``title``, ``fields`` (``field=value`` words,
    :func:`parse_assignment`) and ``force`` for ``new``, with ``into``
    (NOTE) and ``new`` for ``remember``; for the others ``note`` (NOTE),
    with ``fields`` for ``set``, ``text`` (words, joined by spaces) for
    ``log``, ``others`` (OTHER names) for ``link`` and ``by`` (OTHER) for
    ``retire``; ``field`` or ``line`` for ``redact``.  ``force`` for
    ``set`` and ``remember`` writes an identity value another card holds;
    ``allow_secret`` stores a value or a line that looks like a secret
    (else refused: :func:`secret_refused`).  ``source`` (a note name, or
    None), for every command that writes a fact, is read by
    :func:`source.read_source`.  NOTE and OTHER are read by
    :func:`named_card`, NOTE first.  Raises :class:`BadRequest`
    (:class:`Ambiguous` too) for a request that cannot be carried out as
    asked."""
    given = request.get("source")
    source = read_source(vault, schema, given, today) if given is not None else None
    force = bool(request.get("force"))
    if command in ("new", "remember"):
        fields = [parse_assignment(word) for word in request["fields"]]
        refused = secret_refused(command, None, request, fields, title=request["title"])
        if refused is not None:
            return refused
        if command == "new":
            return plan_new(vault, schema, request["type"], request["title"], fields, today, force, source=source)
        into = named_card(vault, schema, request["into"]) if request.get("into") is not None else None
        return plan_remember(
            vault,
            schema,
            request["type"],
            request["title"],
            fields,
            today,
            source,
            into,
            request.get("new", False),
            force=force,
        )
    path = named_card(vault, schema, request["note"])
    if command == "redact":
        return plan_redact(vault, schema, path, request.get("field"), request.get("line"), today)
    if command == "set":
        fields = [parse_assignment(word) for word in request["fields"]]
        refused = secret_refused(command, path, request, fields)
        return refused or plan_set(vault, schema, path, fields, today, source, force=force)
    if command == "log":
        text = " ".join(request["text"])
        return secret_refused(command, path, request, text=text) or plan_log(vault, schema, path, text, today, source)
    if command == "link":
        return plan_link(
            vault, schema, path, [named_card(vault, schema, other) for other in request["others"]], today, source
        )
    return plan_retire(vault, schema, path, named_card(vault, schema, request["by"]), today, source)


def secret_refused(command: str, path, request: dict, fields=(), text=None, title=None) -> Plan | None:
    """The refused plan of a request that would store a secret
    (:func:`secrets.found_in`: reason ``secret``, exit 2, the value never
    shown); None when there is none or ``request["allow_secret"]``."""
    if request.get("allow_secret"):
        return None
    from .secrets import found_in, refusal

    found = found_in(fields, text, title)
    if not found:
        return None
    plan = Plan(command, path, refused=refusal(found))
    if command == "remember":
        plan.action = "refused"
    return plan


def read_source(vault, schema, name: str, today: datetime.date) -> Source:
    """The :class:`Source` that ``name`` (a path or a note name, read as
    ``card.py``'s NOTE is: :func:`cards.find_card`) names.  Raises
    :class:`BadRequest` when it names no note of the vault (a fact is
    never linked to a note that is not there) and :class:`Ambiguous`
    when it fits several."""
    if not name or not name.strip():
        raise BadRequest("--source is empty; give the note the fact came from (a path or a name)")
    path = find_card(vault, name)
    if path is None:
        raise BadRequest(f"--source {name!r} names no note of the vault; give the note the fact came from")
    day = date_of(vault, schema, path)
    if day is not None and day > today.isoformat():
        day = today.isoformat()  # a note dated ahead (a planned meeting) tells what is known today
    return Source(path, day)
