"""Claude Code's ``settings.json`` edited as text: hook groups and top-level keys.

init.py owns a few bytes of a file the person owns too, so an edit touches
only its own span: the JSON is located in the text (:func:`_parse_value`
gives each value its start and end), a member or list item is inserted in
the file's own indentation and line endings (:func:`_insert_child`) and
removed with the comma and white space that joined it
(:func:`_remove_child`), so removing what was inserted gives the bytes back.

* Hooks (:func:`settings_with_hook`, :func:`settings_without_hook`): one
  group per event (``PreToolUse`` for the guard, ``SessionStart`` and
  ``Stop`` for ``session.py``); a handler whose command runs an autograph
  hook script (:data:`MARKS`) that is not ours is someone else's, and the
  file is refused rather than given a second one.
* Keys (:func:`settings_with_key`, :func:`settings_without_key`):
  ``autoMemoryDirectory``, which Claude Code reads from the user's, the
  local (``.claude/settings.local.json``) and policy settings.

A file that is not a JSON object, holds a key twice (Claude Code reads only
the last one), is nested too deeply to parse, or whose ``hooks`` are not
the documented shape raises :class:`HostError`; nothing is written.  A UTF-8
byte order mark at the start stays.  (code.claude.com/docs/en/settings,
/hooks, /memory.)
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = [
    "BOM_CHAR",
    "HostError",
    "MARKS",
    "hook_group",
    "hook_commands",
    "settings_with_hook",
    "settings_with_key",
    "settings_without_hook",
    "settings_without_key",
]

BOM_CHAR = "\ufeff"
# a hook command holding one of these runs an autograph hook script
MARKS = ("autograph/scripts/guard.py", "autograph/scripts/session.py")
HOOK_TIMEOUT = 10  # seconds; each hook answers in well under one


class HostError(ValueError):
    """A file to edit is not in a shape we can edit safely (exit code 2)."""


_WS = " \t\r\n"


class _Node:
    __slots__ = ("kind", "start", "end", "items", "value")

    def __init__(self, kind: str, start: int):
        self.kind, self.start, self.end = kind, start, start
        self.items: list = []  # object: (key, key_start, node); array: node
        self.value = None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _parse_value(text: str, i: int) -> _Node:
    from json.decoder import scanstring

    i = _skip(text, i)
    if i >= len(text):
        raise ValueError("unexpected end")
    ch = text[i]
    node = _Node("object" if ch == "{" else "array" if ch == "[" else "scalar", i)
    if ch in "{[":
        close = "}" if ch == "{" else "]"
        j = _skip(text, i + 1)
        if text[j : j + 1] == close:
            node.end = j + 1
            return node
        while True:
            if ch == "{":
                j = _skip(text, j)
                if text[j : j + 1] != '"':
                    raise ValueError("expected a key")
                key, after = scanstring(text, j + 1)
                k = _skip(text, after)
                if text[k : k + 1] != ":":
                    raise ValueError("expected ':'")
                child = _parse_value(text, k + 1)
                node.items.append((key, j, child))
            else:
                child = _parse_value(text, j)
                node.items.append(child)
            j = _skip(text, child.end)
            if text[j : j + 1] == ",":
                j += 1
                continue
            if text[j : j + 1] == close:
                node.end = j + 1
                return node
            raise ValueError(f"expected ',' or '{close}'")
    decoder = json.JSONDecoder()
    node.value, node.end = decoder.raw_decode(text, i)
    return node


def _member(node: _Node, key: str):
    for name, key_start, child in node.items:
        if name == key:
            return key_start, child
    return None


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _indent_unit(text: str) -> str:
    for line in text.replace("\r\n", "\n").split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _render(value, unit: str, level: int, newline: str) -> str:
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", newline + unit * level)


def _insert_child(text: str, container: _Node, rendered: str, unit: str, level: int, newline: str) -> str:
    """``text`` with ``rendered`` (a member ``"key": value`` or an array
    item) added as the last child of ``container``."""
    if container.items:
        last = container.items[-1]
        end = (last[2] if isinstance(last, tuple) else last).end
        return text[:end] + "," + newline + unit * level + rendered + text[end:]
    inner = newline + unit * level + rendered + newline + unit * (level - 1)
    return text[: container.start + 1] + inner + text[container.end - 1 :]


def _remove_child(text: str, container: _Node, index: int) -> str:
    """``text`` without the child at ``index`` of ``container``, and the comma
    and white space that joined it: the inverse of :func:`_insert_child`."""

    def span(i):
        item = container.items[i]
        return (item[1], item[2].end) if isinstance(item, tuple) else (item.start, item.end)

    count = len(container.items)
    if count == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    start, end = span(index)
    if index > 0:
        return text[: span(index - 1)[1]] + text[end:]
    return text[:start] + text[span(1)[0] :]


def _duplicate_key(node: _Node, path: str = "") -> str | None:
    """The dotted path of the first key an object holds twice, else None."""
    if node.kind == "object":
        seen: set[str] = set()
        for name, _, child in node.items:
            where = f"{path}.{name}" if path else name
            if name in seen:
                return where
            seen.add(name)
            found = _duplicate_key(child, where)
            if found:
                return found
    elif node.kind == "array":
        for index, child in enumerate(node.items):
            found = _duplicate_key(child, f"{path}[{index}]")
            if found:
                return found
    return None


def _marked(command: str) -> bool:
    command = command.replace("\\", "/")
    return any(mark in command for mark in MARKS)


def _handlers(group: _Node) -> list[tuple[int, _Node, str]]:
    """``(index, command node, command)`` of each handler of a hook group
    whose command runs an autograph hook script (:data:`MARKS`)."""
    if group.kind != "object":
        return []
    hooks = _member(group, "hooks")
    if hooks is None or hooks[1].kind != "array":
        return []
    out = []
    for index, handler in enumerate(hooks[1].items):
        command = _member(handler, "command") if handler.kind == "object" else None
        if command and isinstance(command[1].value, str) and _marked(command[1].value):
            out.append((index, command[1], command[1].value))
    return out


def _locate(text: str, where: Path) -> tuple[_Node, tuple | None]:
    """(top object, hooks member); raises HostError for a file that is not
    a JSON object, holds a key twice, is nested too deeply to parse, or whose
    ``hooks`` is not an object (or an event's value not a list)."""
    try:
        json.loads(text)
        top = _parse_value(text, 0)
        twice = _duplicate_key(top) if top.kind == "object" else None
    except RecursionError:
        raise HostError(
            f"{where}: nested too deeply to edit safely (hundreds of levels of lists or objects); "
            f"fix it, then run init again"
        ) from None
    except ValueError as exc:
        raise HostError(f"{where}: not valid JSON ({exc}); fix it, then run init again") from None
    if top.kind != "object":
        raise HostError(f"{where}: not a JSON object; fix it, then run init again")
    if twice is not None:
        raise HostError(
            f'{where}: the key "{twice}" is there more than once; Claude Code reads only the last one, so '
            f"merge them into one, then run init again"
        )
    hooks = _member(top, "hooks")
    if hooks is not None and hooks[1].kind != "object":
        raise HostError(f'{where}: "hooks" is not an object; fix it, then run init again')
    for name, _, child in hooks[1].items if hooks else ():
        if child.kind != "array":
            raise HostError(f'{where}: "hooks.{name}" is not a list; fix it, then run init again')
    return top, hooks


def hook_group(command: str, matcher: str | None) -> dict:
    """The hook group that runs ``command`` (``matcher`` None: none, as for
    ``Stop``)."""
    group: dict = {} if matcher is None else {"matcher": matcher}
    group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]
    return group


def _as_test(ours) -> callable:
    if callable(ours):
        return ours
    known = {ours} if isinstance(ours, str) else set(ours)
    return lambda command: command in known


def hook_commands(text: str | None, where: Path) -> list[tuple[str, str]]:
    """``(event, command)`` of every handler in ``text`` that runs an
    autograph hook script."""
    if text is None or not text.strip(BOM_CHAR + " \t\r\n"):
        return []
    top, hooks = _locate(text.lstrip(BOM_CHAR), where)
    out = []
    for event, _, groups in hooks[1].items if hooks else ():
        for group in groups.items:
            out += [(event, command) for _, _, command in _handlers(group)]
    return out


def settings_with_hook(
    text: str | None, command: str, where: Path, ours=(), event: str = "PreToolUse", matcher: str | None = None
) -> str:
    """``settings.json`` text with our hook group for ``event``: unchanged if
    a handler there runs ``command`` already, its command replaced in place
    when a handler runs an earlier command of ours (``ours``: commands, or a
    test of a command), else a new group appended to ``hooks.<event>``
    (created when missing).  A handler of ``event`` that runs another
    autograph hook script is someone else's: it is never rewritten, and since
    two would answer every call, the file is refused (HostError) naming it.
    A UTF-8 byte order mark at the start stays there."""
    if text is not None and text.startswith(BOM_CHAR):
        return BOM_CHAR + settings_with_hook(text[1:], command, where, ours, event, matcher)
    group = hook_group(command, matcher)
    if text is None or not text.strip():
        return json.dumps({"hooks": {event: [group]}}, indent=2) + "\n"
    earlier = _as_test(ours)
    newline, unit = _newline(text), _indent_unit(text)
    top, hooks = _locate(text, where)
    found = _member(hooks[1], event) if hooks else None
    if found is not None:
        exact = earlier_node = None
        for number, item in enumerate(found[1].items):
            for _, node, value in _handlers(item):
                if value == command:
                    exact = node
                elif earlier(value):
                    earlier_node = earlier_node or node
                elif _same_script(value, command):
                    raise HostError(
                        f"{where}: hooks.{event}[{number}] runs {value!r}, an autograph hook init did not write "
                        f"(no install record names it); remove that hook (init registers its own), "
                        f"then run init again"
                    )
        if exact is not None:
            return text
        if earlier_node is not None:
            return text[: earlier_node.start] + json.dumps(command, ensure_ascii=False) + text[earlier_node.end :]
        return _insert_child(text, found[1], _render(group, unit, 3, newline), unit, 3, newline)
    if hooks is not None:
        rendered = json.dumps(event) + ": " + _render([group], unit, 2, newline)
        return _insert_child(text, hooks[1], rendered, unit, 2, newline)
    rendered = '"hooks": ' + _render({event: [group]}, unit, 1, newline)
    return _insert_child(text, top, rendered, unit, 1, newline)


def _same_script(found: str, command: str) -> bool:
    """Both commands run the same autograph hook script (by :data:`MARKS`)."""
    found, command = found.replace("\\", "/"), command.replace("\\", "/")
    return any(mark in found and mark in command for mark in MARKS)


def settings_without_hook(text: str, where: Path, ours=()) -> str:
    """``settings.json`` text without our hooks (``ours``: the commands init
    wrote, or a test of a command), in every event: the whole group when our
    handler is its only one, else just our handler; an emptied event list
    and an emptied ``hooks`` object go too.  Other hooks stay, and so does a
    byte order mark at the start."""
    if text.startswith(BOM_CHAR):
        return BOM_CHAR + settings_without_hook(text[1:], where, ours)
    mine = _as_test(ours)
    while True:
        top, hooks = _locate(text, where)
        if hooks is None:
            return text
        for event_index, (_event, _, groups) in enumerate(hooks[1].items):
            hit = next(
                ((i, g, h) for i, g in enumerate(groups.items) for h in _handlers(g) if mine(h[2])),
                None,
            )
            if hit is None:
                continue
            index, group, handler = hit
            members = _member(group, "hooks")[1]
            if len(members.items) > 1:
                text = _remove_child(text, members, handler[0])
            elif len(groups.items) > 1:
                text = _remove_child(text, groups, index)
            elif len(hooks[1].items) > 1:
                text = _remove_child(text, hooks[1], event_index)
            else:
                text = _remove_child(text, top, [name for name, _, _ in top.items].index("hooks"))
            break
        else:
            return text


def settings_with_key(text: str | None, key: str, value, where: Path, ours=(), same=None) -> str:
    """``settings.json`` text whose top-level ``key`` is ``value``: unchanged
    when it is already; the value replaced in place when the one there is
    ours (``ours``: values, or a test of a value: what an earlier install
    wrote); else, when absent, a member appended.  A value init did not
    write is the person's: HostError naming it, nothing changed, unless
    ``same(current, value)`` says it means the same (it then stays as
    written)."""
    if text is not None and text.startswith(BOM_CHAR):
        return BOM_CHAR + settings_with_key(text[1:], key, value, where, ours, same)
    if text is None or not text.strip():
        return json.dumps({key: value}, indent=2, ensure_ascii=False) + "\n"
    top, _ = _locate(text, where)
    found = _member(top, key)
    if found is not None:
        node = found[1]
        current = json.loads(text[node.start : node.end])
        if current == value or (same is not None and same(current, value)):
            return text
        if not _as_test(ours)(current):
            raise HostError(
                f"{where}: {key} is already set to {json.dumps(current, ensure_ascii=False)}, which init did not "
                f"write; to keep it, pass that folder as --store; to use another, remove the key, then run "
                f"init again"
            )
        return text[: node.start] + json.dumps(value, ensure_ascii=False) + text[node.end :]
    newline, unit = _newline(text), _indent_unit(text)
    rendered = json.dumps(key) + ": " + _render(value, unit, 1, newline)
    return _insert_child(text, top, rendered, unit, 1, newline)


def settings_without_key(text: str, key: str, where: Path, ours=()) -> str:
    """``settings.json`` text without the top-level ``key`` when its value is
    ours (``ours``: values, or a test); anything else there stays."""
    if text.startswith(BOM_CHAR):
        return BOM_CHAR + settings_without_key(text[1:], key, where, ours)
    top, _ = _locate(text, where)
    found = _member(top, key)
    if found is None or not _as_test(ours)(json.loads(text[found[1].start : found[1].end])):
        return text
    return _remove_child(text, top, [name for name, _, _ in top.items].index(key))
