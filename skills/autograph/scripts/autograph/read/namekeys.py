"""Name keys: the forms under which two names may be one person.

An agent writes a name as it heard it: ``Bob`` one day, ``Robert Smith``
the next, ``R. Smith`` in a meeting note, ``Schaefer`` for ``Schäfer``,
``Maria Ivanova`` for ``Мария Иванова``.  :func:`keys` gives a name's
*name keys*: two names that share one may be one person
(:mod:`autograph.memory.variants` decides how strongly, and suggests).
Here, in the read layer, because the index file keeps every note's keys
(:func:`stored_keys`): a look-up by name variant reads only the cards that
share one.

A name key is built from the name's words, each

* folded as :func:`folding.fold_name` folds names (case, accents of Latin,
  Greek and Cyrillic letters, Latin letters with a stroke);
* Cyrillic and Greek transliterated to Latin (:data:`CYRILLIC`,
  :data:`GREEK`), then spelled loosely (:func:`_loose`: ``iya`` is ``ia``,
  ``y`` is ``i``, ``x`` is ``ks``, doubled letters single), so ``Мария`` and
  ``Maria`` meet; Chinese, Japanese and Korean names are not transliterated
  and match only as written;
* a German umlaut also written out (``ä`` as ``ae``: ``Schäfer`` meets
  ``Schaefer``);
* a given name also as its full form (:data:`NICKNAMES`, extended by the
  schema's ``identity.nicknames``: ``{"Pepe": ["José"]}``).

Three kinds of key: ``full`` (every word), ``initial`` (``R. Smith``: an
initial and the last word, matched only against a name written with an
initial) and ``given`` (a name of one word, ``Bob``: matched against the
first word of a longer name, the weakest).  A name holding a digit
(``Meeting 2026-11-20``) or a one-word name shorter than three letters has
no key.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata

from .folding import fold_name as fold

__all__ = ["CYRILLIC", "GREEK", "NICKNAMES", "keys", "nicknames_of", "nicknames_stamp", "stored_keys"]

CYRILLIC = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z", "и": "i",
    "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
    "у": "u", "ф": "f", "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "y", "ь": "",
    "э": "e", "ю": "yu", "я": "ya", "і": "i", "ї": "yi", "є": "ye", "ґ": "g", "ў": "u",
}  # fmt: skip
GREEK = {
    "α": "a", "β": "v", "γ": "g", "δ": "d", "ε": "e", "ζ": "z", "η": "i", "θ": "th", "ι": "i", "κ": "k",
    "λ": "l", "μ": "m", "ν": "n", "ξ": "x", "ο": "o", "π": "p", "ρ": "r", "σ": "s", "ς": "s", "τ": "t",
    "υ": "y", "φ": "f", "χ": "ch", "ψ": "ps", "ω": "o",
}  # fmt: skip
_TRANSLIT = str.maketrans({**CYRILLIC, **GREEK})
_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})

# Common given-name forms and the full names they stand for (lower case).
NICKNAMES: dict[str, tuple[str, ...]] = {
    "bob": ("robert",), "bobby": ("robert",), "rob": ("robert",), "robbie": ("robert",), "bert": ("robert", "albert"),
    "bill": ("william",), "billy": ("william",), "will": ("william",), "liam": ("william",),
    "kate": ("katherine", "catherine", "kathryn"), "katie": ("katherine", "catherine"),
    "kathy": ("katherine", "kathryn"), "cathy": ("catherine",),
    "mike": ("michael",), "mick": ("michael",), "jim": ("james",), "jimmy": ("james",), "jamie": ("james",),
    "tom": ("thomas",), "tommy": ("thomas",), "dick": ("richard",), "rick": ("richard",), "rich": ("richard",),
    "liz": ("elizabeth",), "beth": ("elizabeth",), "betty": ("elizabeth",), "lisa": ("elizabeth",),
    "alex": ("alexander", "alexandra", "alexei"), "sasha": ("alexander", "alexandra"),
    "nick": ("nicholas", "nikolai"), "chris": ("christopher", "christine", "christina"),
    "dan": ("daniel",), "danny": ("daniel",), "dave": ("david",), "joe": ("joseph",), "sam": ("samuel", "samantha"),
    "ben": ("benjamin",), "matt": ("matthew",), "tony": ("anthony",), "steve": ("steven", "stephen"),
    "jenny": ("jennifer",), "jen": ("jennifer",), "sue": ("susan",), "peggy": ("margaret",),
    "maggie": ("margaret",), "meg": ("margaret",), "ted": ("edward", "theodore"), "ed": ("edward",),
    "eddie": ("edward",), "andy": ("andrew",), "fred": ("frederick",), "harry": ("henry", "harold"),
    "hank": ("henry",), "jack": ("john",), "johnny": ("john",), "pat": ("patrick", "patricia"),
    "pepe": ("jose",), "paco": ("francisco",), "pancho": ("francisco",), "nacho": ("ignacio",),
    "lupe": ("guadalupe",), "chema": ("jose maria",), "dima": ("dmitri",), "misha": ("mikhail",),
    "kolya": ("nikolai",), "katya": ("ekaterina",), "masha": ("maria",), "sveta": ("svetlana",),
    "vanya": ("ivan",), "seryozha": ("sergei",), "lena": ("elena",), "natasha": ("natalia",),
    "hans": ("johannes",), "sepp": ("josef",), "fritz": ("friedrich",),
}  # fmt: skip


def nicknames_of(schema) -> dict[str, tuple[str, ...]]:
    """:data:`NICKNAMES` with the schema's ``identity.nicknames`` (``{"Pepe":
    ["José"]}``: a form and the full names it stands for) added, each
    folded and loosely spelled as a name key's words are."""
    table = {_word(k): tuple(_word(v) for v in vs) for k, vs in NICKNAMES.items()}
    extra = schema.section("identity").get("nicknames") if schema is not None else None
    if isinstance(extra, dict):
        for form, full in extra.items():
            values = [full] if isinstance(full, str) else full if isinstance(full, list) else []
            words = tuple(_word(v) for v in values if isinstance(v, str) and v.strip())
            if isinstance(form, str) and form.strip() and words:
                table[_word(form)] = tuple(dict.fromkeys(table.get(_word(form), ()) + words))
    return table


_LETTERS = re.compile(r"[^\W\d_]+")
_DOUBLED = re.compile(r"(.)\1+")


@functools.lru_cache(maxsize=8192)  # a vault's names share most of their words
def _loose(word: str) -> str:
    """A word spelled as transliterations of one name differ least:
    ``mariya`` and ``maria`` are ``maria``, ``dmitriy`` and ``dmitri``
    ``dmitri``, ``aleksey`` and ``alexei`` ``aleksei``."""
    word = word.replace("x", "ks").replace("iya", "ia").replace("yu", "iu").replace("ya", "ia").replace("j", "i")
    word = word.replace("y", "i").replace("kh", "h").replace("ph", "f")
    return _DOUBLED.sub(r"\1", word)


def _latin(folded: str) -> str:
    """A folded name in Latin letters: Greek digraphs first (``ου`` is
    ``ou``, ``μπ`` ``b``, ``ντ`` ``d``), then letter by letter."""
    if folded.isascii():
        return folded
    for greek, latin in (("ου", "ou"), ("μπ", "b"), ("ντ", "d"), ("γκ", "g")):
        folded = folded.replace(greek, latin)
    return folded.translate(_TRANSLIT)


def _word(text: str) -> str:
    """One word (or words) of a name as a key holds it."""
    folded = _latin(fold(text))
    return " ".join(_loose(w) for w in _LETTERS.findall(folded))


def _words(name: str) -> list[list[str]]:
    """The spellings of a name as lists of key words: folded and
    transliterated, and (when it has an umlaut) with the umlauts written out."""
    forms = [name]
    if not name.isascii():  # an ASCII name has no umlaut
        lowered = unicodedata.normalize("NFC", name).casefold()
        if lowered != lowered.translate(_UMLAUTS):
            forms.append(lowered.translate(_UMLAUTS))
    found = []
    for form in forms:
        words = [_loose(w) for w in _LETTERS.findall(_latin(fold(form)))]
        if words and words not in found:
            found.append(words)
    return found


_INITIAL = re.compile(r"^\s*([^\W\d_])\s*\.\s*|^\s*([^\W\d_])\s+(?=\S)")


def keys(name: str, nicknames: dict[str, tuple[str, ...]] | None = None) -> set[tuple[str, str]]:
    """The name keys of ``name``: ``{(kind, key)}`` with ``kind`` ``full``,
    ``initial`` or ``given`` (see the module docstring).  ``nicknames``:
    :func:`nicknames_of`'s table (default: the built-in one)."""
    table = nicknames if nicknames is not None else nicknames_of(None)
    found: set[tuple[str, str]] = set()
    if not name or not name.strip() or any(map(str.isdigit, name)):
        return found  # "Meeting 2026-11-20", "o0": no one's name
    written_initial = _INITIAL.match(name) is not None
    for words in _words(name):
        if len(words) == 1:
            word = words[0]
            if len(word) < 3 and word.isascii() and not table.get(word):
                continue  # "Al", "o": too short to say who
            found.add(("given", word))
            found.update(("given", full.split()[0]) for full in table.get(word, ()))
            continue
        givens = [words[0], *(full for full in table.get(words[0], ()))]
        last = words[-1]
        if written_initial and len(words[0]) == 1:
            found.add(("initial", f"{words[0]} {last}"))
            continue
        for given in givens:
            found.add(("full", " ".join([given, *words[1:]])))
            found.add(("initial-of", f"{given[0]} {last}"))
        found.add(("first-of", words[0]))
        found.update(("first-of", full.split()[0]) for full in table.get(words[0], ()))
    return found


def nicknames_stamp(schema) -> str:
    """The schema's ``identity.nicknames`` as one text: the stored keys
    (:func:`stored_keys`) are derived again when it changes."""
    extra = schema.section("identity").get("nicknames") if schema is not None else None
    return json.dumps(extra, sort_keys=True, ensure_ascii=True, default=repr)


def stored_keys(stem: str, properties: dict, table: dict[str, tuple[str, ...]]) -> str:
    """The name keys of a note's names (its file name ``stem``, its
    ``aliases`` and ``title``), as the index file keeps them: one
    ``kind<TAB>key`` a line, sorted, with a line break before the first, so
    ``instr(keys, '\t' || key || '\n')`` finds a key of any kind.  ""
    when the note has no name key."""
    names = [stem]
    aliases = properties.get("aliases")
    for alias in aliases if isinstance(aliases, list) else [aliases]:
        if isinstance(alias, str):
            names.append(alias)
    if isinstance(properties.get("title"), str):
        names.append(properties["title"])
    found: set[tuple[str, str]] = set()
    for name in dict.fromkeys(names):
        found |= keys(name, table)
    return "".join(sorted(f"\n{kind}\t{key}" for kind, key in found)) + "\n" if found else ""
