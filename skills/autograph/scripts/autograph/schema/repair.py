"""Explicit repairs of frontmatter that does not parse or reads wrong.

Only ``enforce.py --repair`` calls these, and it shows the diff first.  Each
repair fixes one known kind of fault and touches only the lines at fault:

* tabs used for indentation become two spaces each (BR-15);
* an unquoted value holding ``: `` is wrapped in double quotes (BR-06);
* a value YAML reads as a comment (``tags: #a #b``, ``- #a``) becomes what
  was meant: tags as a block list without ``#``, other values quoted (BR-05).

:func:`repair` applies them until the block parses and nothing is left to
repair; a result that still does not parse is never returned.
"""

from __future__ import annotations

import re

from ..read import frontmatter

__all__ = ["repair"]

_KEY_VALUE = re.compile(r"^([ \t]*[^\s#'\"\-?][^:]*?:)[ \t]+(.*?)[ \t]*$")
_COMMENT_KEY = re.compile(r"^([ \t]*)([^\s#'\"][^:]*?):[ \t]+(#\S.*?)[ \t]*$")
_COMMENT_ITEM = re.compile(r"^([ \t]*-[ \t]+)#(\S.*?)[ \t]*$")
_TAG_KEYS = {"tags", "tag"}


def _split(block: str) -> list[str]:
    return block.split("\n")


def _fix_tabs(lines: list[str]) -> bool:
    changed = False
    for i, line in enumerate(lines):
        stripped = line.lstrip(" \t")
        lead = line[: len(line) - len(stripped)]
        if "\t" in lead and stripped.strip():
            lines[i] = lead.replace("\t", "  ") + stripped
            changed = True
    return changed


def _quote_colon_value(lines: list[str], index: int) -> bool:
    match = _KEY_VALUE.match(lines[index].rstrip("\r"))
    if not match or match.group(2)[:1] in ("'", '"', "[", "{", "|", ">"):
        return False
    cr = "\r" if lines[index].endswith("\r") else ""
    lines[index] = f"{match.group(1)} {frontmatter.double_quote(match.group(2))}{cr}"
    return True


def _fix_comment_values(lines: list[str]) -> bool:
    changed = False
    out: list[str] = []
    for line in lines:
        cr = "\r" if line.endswith("\r") else ""
        body = line[: len(line) - len(cr)]
        key = _COMMENT_KEY.match(body)
        item = _COMMENT_ITEM.match(body)
        if key and key.group(2).strip() in _TAG_KEYS:
            indent, name, tags = key.groups()
            out.append(f"{indent}{name}:{cr}")
            out.extend(f"{indent}  - {tag.lstrip('#')}{cr}" for tag in tags.split() if tag.lstrip("#"))
            changed = True
        elif key:
            indent, name, value = key.groups()
            out.append(f"{indent}{name}: {frontmatter.double_quote(value)}{cr}")
            changed = True
        elif item:
            out.append(f"{item.group(1)}{item.group(2)}{cr}")
            changed = True
        else:
            out.append(line)
    lines[:] = out
    return changed


def repair(text: str) -> tuple[str, list[str]] | None:
    """Repair the frontmatter of ``text`` (a note without its BOM).

    Returns ``(new text, what was done)`` when a repair applies and the
    result parses, else None.  The body and every line not at fault keep
    their bytes.
    """
    block = frontmatter.parse(text)
    if block is None:
        return None
    lines = _split(text[block.start : block.end])
    done: list[str] = []
    for _ in range(100):  # each pass fixes at least one line, or stops
        source = "\n".join(lines)
        try:
            frontmatter.loads(source, first_line=2)
            error = None
        except frontmatter.FrontmatterError as exc:
            error = exc
        if error is not None and "tab used for indentation" in error.reason and _fix_tabs(lines):
            done.append("tabs in indentation replaced by two spaces")
            continue
        if (
            error is not None
            and "inside an unquoted value" in error.reason
            and _quote_colon_value(lines, error.line - 2)
        ):
            done.append(f"line {error.line}: value with ': ' quoted")
            continue
        if _fix_comment_values(lines):
            done.append("values read as YAML comments rewritten")
            continue
        break
    new_source = "\n".join(lines)
    if not done:
        return None
    new_text = text[: block.start] + new_source + text[block.end :]
    repaired = frontmatter.parse(new_text)
    if repaired is None or repaired.error is not None:
        return None
    return new_text, done
