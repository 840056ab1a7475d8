"""Identity keys: which properties say who a card is, and how their values compare.

The one normaliser of identity values in the library: search (``search.py
--identity``), dedup and ``card.py`` all compare values through
:func:`normalise`, so an agent that looks up ``@Alice`` finds the card that
holds ``alice`` under ``telegram``.

The schema names the identity fields in ``identity.match_fields``: a list
of property names (the kind of each comes from :data:`WELL_KNOWN`, else
``exact``) or an object ``{field: kind}``.  Kinds:

* ``email``: the address inside ``<...>`` when there is one (``Race
  <race@example.com>``, ``<race@example.com>``), trimmed, lower case, a
  leading ``mailto:`` dropped;
* ``handle``: trimmed, a leading ``@`` dropped, lower case;
* ``phone``: digits only (separators ``-`` ``.`` ``/``, spaces and
  parentheses dropped), with ``+`` and the country code kept when the
  number has them (``+`` or ``00``, an opening parenthesis before either
  read past; a ``tel:`` before it dropped, and the ``(0)`` trunk mark
  written after a country code, ``+33 (0)1 ...``, except after Italy's,
  San Marino's and the Vatican's, whose numbers keep their ``0`` when dialled
  from abroad); a national number (no country code) gets
  ``identity.default_country``'s code when that key is set, its trunk
  prefix dropped (``0``; ``1`` in North America, ``8`` in Russia and
  Kazakhstan, none in Italy, whose numbers keep their ``0``), else it stays
  national and matches only a national number with the same digits.  An
  extension (``ext. 12``, ``x12``, ``;ext=12``) is kept as ``;ext=12``:
  two people may share a switchboard, never an extension;
* ``url``: scheme and host in lower case, ``www.`` and a trailing ``/``
  dropped, the query kept;
* ``exact``: trimmed, NFC-normalised, otherwise as written.

A value is one identity under every field of its kind: ``handle:
@ivan_p`` and ``telegram: ivan_p`` are the same person's (lookups and
dedup's grouping match by kind); a conflict is only ever within one field.

Invisible format characters (a zero-width space pasted with an address)
are dropped from emails, handles and phones.

Values in ``identity.ignore_values`` (compared trimmed and in lower case)
are no identity at all.

A card may hold several values of a field as a list, or as one text of
addresses, handles or phone numbers separated by commas or semicolons
(``"a@x.com, b@y.org"``): :func:`values_of` gives each of them.  Such a
text is split only when every piece holds an ``@``, or every piece is a
phone number (so ``Smith, Jo <jo@x.com>`` stays one value, and so do a
name with a comma and ``+49 30 1, ext. 2``).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "COUNTRY_CODES",
    "NOT_DIGITS",
    "DEFAULT_FIELDS",
    "DEFAULT_IGNORE",
    "KINDS",
    "TRUNK_PREFIXES",
    "WELL_KNOWN",
    "country_code",
    "field_kinds",
    "fields_by_kind",
    "holding",
    "normalise",
    "values_of",
]

# bytes.translate's delete table for the bytes that are not ASCII digits: a
# phone number's digits, however it is written, to look for in raw text
NOT_DIGITS = bytes(b for b in range(256) if not 48 <= b <= 57)

KINDS = ("email", "handle", "phone", "url", "exact")

# Property names whose kind is known without the schema saying it.
WELL_KNOWN = {
    "email": "email",
    "e-mail": "email",
    "mail": "email",
    "emails": "email",
    "phone": "phone",
    "phones": "phone",
    "mobile": "phone",
    "tel": "phone",
    "telephone": "phone",
    "whatsapp": "phone",
    "signal": "phone",
    "handle": "handle",
    "telegram": "handle",
    "twitter": "handle",
    "x": "handle",
    "github": "handle",
    "gitlab": "handle",
    "instagram": "handle",
    "mastodon": "handle",
    "bluesky": "handle",
    "threads": "handle",
    "linkedin": "handle",
    "discord": "handle",
    "slack": "handle",
    "username": "handle",
    "skype": "handle",
    "url": "url",
    "website": "url",
    "homepage": "url",
    "web": "url",
}

# The earlier project's defaults, when the schema names no identity fields.
DEFAULT_FIELDS = ("email", "telegram", "handle", "phone")
DEFAULT_IGNORE = ("", "n/a", "-", "none", "unknown")

# identity.default_country: a calling code ("+49", "49") or one of these
# ISO 3166 alpha-2 codes.
COUNTRY_CODES = {
    "AR": "54", "AT": "43", "AU": "61", "BE": "32", "BG": "359", "BR": "55", "BY": "375", "CA": "1",
    "CH": "41", "CL": "56", "CN": "86", "CO": "57", "CY": "357", "CZ": "420", "DE": "49", "DK": "45",
    "EE": "372", "EG": "20", "ES": "34", "FI": "358", "FR": "33", "GB": "44", "GE": "995", "GR": "30",
    "HK": "852", "HR": "385", "HU": "36", "ID": "62", "IE": "353", "IL": "972", "IN": "91", "IS": "354",
    "IT": "39", "JP": "81", "KR": "82", "KZ": "7", "LT": "370", "LU": "352", "LV": "371", "MX": "52",
    "MY": "60", "NG": "234", "NL": "31", "NO": "47", "NZ": "64", "PH": "63", "PK": "92", "PL": "48",
    "PT": "351", "RO": "40", "RS": "381", "RU": "7", "SA": "966", "SE": "46", "SG": "65", "SI": "386",
    "SK": "421", "TH": "66", "TR": "90", "TW": "886", "UA": "380", "UK": "44", "US": "1", "VN": "84",
    "ZA": "27",
}  # fmt: skip

_CALLING = re.compile(r"\+?[1-9][0-9]{0,3}")
_NOT_DIGIT = re.compile(r"[^0-9]")
_BRACKETED = re.compile(r"<([^<>]*@[^<>]*)>")  # the address of "Name <address>"
_SEPARATOR = re.compile(r"[,;]")
_PHONE_LIKE = re.compile(r"(?:tel:\s*)?\(?\+?[0-9 ()./-]*[0-9][0-9 ()./-]*", re.I)
_EXTENSION = re.compile(r"\s*(?:;\s*ext=|(?:ext(?:ension)?\.?|x|#)\s*)([0-9]+)\s*$", re.I)
# "+49 (0)30 ...", "+33(0)1 ...": the 0 is dialled at home only; the country
# code (1 to 3 digits, "(+49)" too) must stand apart for the mark to be read
_TRUNK_ZERO = re.compile(r"^((?:\+|00) *\(?([1-9][0-9]{0,2})\)?[ ./-]*)\(0\)")
TRUNK_PREFIXES = {"1": "1", "7": "8", "39": "", "378": "", "379": ""}  # else "0"
# The trunk prefix written after the country code, as people do: "+49 030 ...",
# "0049-030-...", "+7 8 495 ..." (dialled at home only).  A separator must
# follow the code, so its digits are known; a "0" must come before a digit
# (no national number starts with 0), an "8" or "1" stand alone ("+7 812" is
# Saint Petersburg's area code).
_TRUNK_AFTER_CODE = re.compile(r"^((?:\+|00) *([1-9][0-9]{0,2})\)?[ ./-]+)(?:0(?=[1-9])|([18])(?=[ ./-]))")


def country_code(value) -> str | None:
    """The calling code (digits) of ``identity.default_country``, or None
    when ``value`` is not one (a calling code or a known ISO code)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _CALLING.fullmatch(text):
        return text.lstrip("+")
    return COUNTRY_CODES.get(text.upper())


def field_kinds(section: dict | None) -> dict[str, str]:
    """``{field: kind}`` of a schema's ``identity`` section (None or {}:
    :data:`DEFAULT_FIELDS`).  Field names are compared in lower case."""
    fields = (section or {}).get("match_fields")
    if fields is None:
        fields = list(DEFAULT_FIELDS)
    if isinstance(fields, dict):
        return {k.lower(): v for k, v in fields.items() if not k.startswith("_")}
    return {name.lower(): WELL_KNOWN.get(name.lower(), "exact") for name in fields}


def normalise(value, kind: str, default_country: str | None = None, ignore=DEFAULT_IGNORE) -> str | None:
    """``value`` in its comparable form for ``kind``, or None when it is
    no identity (empty, an ignored value, not text or a number)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = unicodedata.normalize("NFC", str(value)).strip()
    if text.lower() in {item.strip().lower() for item in ignore}:
        return None
    if kind != "exact" and not text.isascii():
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf").strip()
    if kind == "email":
        bracketed = _BRACKETED.search(text)
        if bracketed is not None:
            text = bracketed.group(1).strip()
        text = text.lower()
        if text.startswith("mailto:"):
            text = text[7:].strip()
    elif kind == "handle":
        text = text.lstrip("@").strip().lower()
    elif kind == "phone":
        text = _phone(text, default_country)
    elif kind == "url":
        text = _url(text)
    return text or None


_URL = re.compile(r"^([a-z][a-z0-9+.-]*://)?([^/?#]*)([^?#]*)(.*)$", re.I | re.S)


def _url(text: str) -> str:
    """A URL compared as a browser would open it: scheme and host in lower
    case, a ``www.`` before the host and a ``/`` ending the path dropped,
    the path, query and fragment as written."""
    scheme, host, path, rest = _URL.match(text).groups()
    host = host.lower()
    if host.startswith("www."):
        host = host[4:]
    return (scheme or "").lower() + host + path.rstrip("/") + rest


def holding(properties: dict, names: list[str], kind: str, wanted: str, country=None, ignore=DEFAULT_IGNORE):
    """``(field, value)``: the first of ``names`` (fields of ``kind``, see
    :func:`fields_by_kind`) under which ``properties`` hold a value that
    :func:`normalise` makes ``wanted``, with that value as written; None
    when none does."""
    for name in names:
        for held in values_of(properties, name):
            if normalise(held, kind, country, ignore) == wanted:
                return name, held
    return None


def fields_by_kind(kinds: dict[str, str]) -> dict[str, list[str]]:
    """``{kind: [field, ...]}`` of a ``{field: kind}`` map (:func:`field_kinds`),
    fields in the schema's order: a value is looked up under every field of
    its kind (``handle=@ivan`` finds the card holding it under ``telegram``)."""
    found: dict[str, list[str]] = {}
    for name, kind in kinds.items():
        found.setdefault(kind, []).append(name)
    return found


def _phone(text: str, default_country: str | None) -> str:
    if text[:4].lower() == "tel:":
        text = text[4:].strip()
    extension = _EXTENSION.search(text)
    if extension is not None:
        text = text[: extension.start()]
    text = text.lstrip("( \t")  # "(+49) 30 ...", "(0033 1 ...": the parenthesis opens the number
    text = _TRUNK_ZERO.sub(_without_trunk_mark, text)
    text = _TRUNK_AFTER_CODE.sub(_without_trunk_written, text)
    international = text.startswith("+") or text.startswith("00")
    digits = _NOT_DIGIT.sub("", text)
    if international:
        digits = digits[2:] if text.startswith("00") else digits
        number = "+" + digits if digits else ""
    else:
        code = country_code(default_country) if default_country else None
        if code and digits:
            trunk = TRUNK_PREFIXES.get(code, "0")
            if trunk and digits.startswith(trunk) and (code != "1" or len(digits) == 11):
                digits = digits[len(trunk) :]
            number = "+" + code + digits
        else:
            number = digits
    return number + ";ext=" + extension.group(1) if number and extension is not None else number


_CALLING_CODES = frozenset(COUNTRY_CODES.values())


def _without_trunk_written(match: re.Match) -> str:
    """The country code before a trunk prefix written as a digit, the
    prefix dropped: when the code is a known one and the digit is its trunk
    prefix (``0``; ``8`` after ``+7``, ``1`` after ``+1``; Italy has none)."""
    code, digit = match.group(2), match.group(3) or "0"
    if code in _CALLING_CODES and TRUNK_PREFIXES.get(code, "0") == digit:
        return match.group(1)
    return match.group(0)


def _without_trunk_mark(match: re.Match) -> str:
    """The country code before a ``(0)``, the mark dropped; kept where the
    country has no trunk prefix (Italy: ``+39 (0)6`` is dialled ``+39 06``)."""
    return match.group(0) if TRUNK_PREFIXES.get(match.group(2)) == "" else match.group(1)


def values_of(properties: dict, field: str) -> list:
    """The values a card holds under ``field`` (any letter case): a scalar
    or each item of a list, a text of several addresses or handles
    (``"a@x.com, b@y.org"``, every piece with an ``@``) split into them."""
    found = []
    for key, value in properties.items():
        if isinstance(key, str) and key.lower() == field:
            for item in value if isinstance(value, list) else [value]:
                found.extend(_pieces(item))
    return found


def _pieces(value) -> list:
    """``value``, or its pieces when it is a text of several ``@`` values
    separated by commas or semicolons."""
    if not isinstance(value, str) or _SEPARATOR.search(value) is None:
        return [value]
    pieces = [piece.strip() for piece in _SEPARATOR.split(value)]
    pieces = [piece for piece in pieces if piece]
    if len(pieces) > 1 and (
        all("@" in piece for piece in pieces)
        or all(_PHONE_LIKE.fullmatch(piece) and len(_NOT_DIGIT.sub("", piece)) >= 7 for piece in pieces)
    ):
        return pieces
    return [value]
