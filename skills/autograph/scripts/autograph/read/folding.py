"""Text folded for comparison: names as people write them, and words as the index holds them.

:func:`fold_name` is the one comparison of names (a card's title or alias
with a name an agent gives, a search query with a note's names);
:func:`fold_text` the form of indexed text and of a query's words.  Both
drop the combining diacritics of :data:`MARKS`; only names also drop the
strokes of :data:`STROKES` and format characters.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MARKS", "fold_name", "fold_text", "nfc", "strip_marks", "without_format"]


# The combining diacritics of Latin, Greek and Cyrillic letters (and the
# general combining blocks): ``é`` is ``e`` with one.  Marks of other
# scripts are letters of their names and stay (the Devanagari virama, the
# kana voicing marks: か and が are two letters).
MARKS = "[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"


# Latin letters whose accent is no combining mark, so NFKD keeps them whole:
# written without it by anyone whose keyboard lacks them (Søren as Soren).
STROKES = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ŧ": "t", "ı": "i", "ŀ": "l", "ƀ": "b",
                          "æ": "ae", "œ": "oe", "þ": "th", "ð": "d"})  # fmt: skip


def fold_name(name: str) -> str:
    """``name`` as names compare (a card's title or alias with a name an
    agent gives, a search query with a note's names): NFKD, the
    diacritics of :data:`MARKS` dropped (``José`` is ``Jose``) and the
    Latin letters with a stroke written without it (``Søren`` is ``Soren``),
    case-folded, white space trimmed and collapsed, NFC.  Chinese,
    Japanese, Korean and Indic names stay as written.  ``""`` for white
    space."""
    if name.isascii():
        return " ".join(name.lower().split())
    name = without_format(name)
    text = re.sub(MARKS, "", unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", name).casefold()))
    text = text.translate(STROKES)
    return unicodedata.normalize("NFC", " ".join(text.split()))


def without_format(text: str) -> str:
    """``text`` without format characters (Unicode category Cf: zero-width
    spaces and joiners, bidirectional overrides, a byte order mark), which
    make two names that look the same differ."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def nfc(text: str) -> str:
    """``text`` in Unicode NFC."""
    return unicodedata.normalize("NFC", text)


def strip_marks(text: str) -> str:
    """``text`` NFC, without the combining diacritics of Latin, Greek and
    Cyrillic letters (``é`` -> ``e``, ``ή`` -> ``η``; kana voicing marks
    stay).  SQLite's ``remove_diacritics`` knows Latin only; this is applied
    to what is indexed and to every query, so both sides compare alike."""
    if text.isascii():
        return text
    if "\n" in text:  # the lines that are not ASCII only (no combining sequence spans a line break)
        return "\n".join(line if line.isascii() else strip_line(line) for line in text.split("\n"))
    return strip_line(text)


def strip_line(text: str) -> str:
    """One line of :func:`strip_marks` (a line that is not ASCII)."""
    return nfc(re.sub(MARKS, "", unicodedata.normalize("NFD", text)))


def fold_text(text: str) -> str:
    """``text`` as the index compares words: NFC, no diacritics, case-folded."""
    return strip_marks(text).casefold()
