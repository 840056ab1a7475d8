"""Secrets: values that must not be stored, indexed, shown or sent, found by their shape.

The one detector every layer uses: the memory-store doctor reports the
lines that hold one (:func:`find_secrets`, streamed over a file with
:class:`SecretScan`); the index, a daily note's extract, a model's request
and an agent's batch hold text with each one masked (:func:`mask`); a card
write refuses a value that looks like one (:func:`first_secret`).  What
they find is named by its kind only ("an API key (sk-...)"): the value
itself is never returned, so it cannot be printed.
"""

from __future__ import annotations

import io
import re

from .note import BOM

__all__ = [
    "REDACTED",
    "SecretScan",
    "find_secrets",
    "first_secret",
    "mask",
    "masked_words",
    "pieces",
    "redact",
    "secret_spans",
]

# Files are read in blocks of this many bytes (a line longer than a block is
# read in parts; a secret across two parts is still found).
_BLOCK = 1 << 20

# Each shape is (what, pattern, check, triggers).  The part hidden by
# redact() is the pattern's group "value" when it has one, else the whole
# match; check (if any) decides whether that value is real.  Triggers are
# ASCII byte strings, one of which every match contains (lowercase ones are
# looked for case-insensitively): scanning finds them at memory speed and
# runs the patterns only on the lines that hold one.

_KEYS = (
    r"password|passwd|pwd|pw|passphrase|secret|api[_-]?key|apikey|access[_-]?key|access[_-]?token"
    r"|auth[_-]?token|token|client[_-]?secret|private[_-]?key"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*"
    rf"(?P<key>{_KEYS})"
    r"(?![A-Za-z0-9_-])[\"'*_]*[ \t]*[:=][ \t]*(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s\"'`]+)"
)
# "the password is hunter2", "passphrase: ...": the keyword, an optional
# "for/of/to WORD", then ":" "=" "is" "was" or a space, then the value.
_PROSE = re.compile(
    r"(?i)(?<![A-Za-z0-9_-])(?P<key>password|passphrase|passwd)(?![A-Za-z0-9_-])"
    r"(?:[ \t]+(?:for|of|to)[ \t]+[^\s:=]+)?"
    r"(?:[ \t]*[:=][ \t]*|[ \t]+(?:(?:is|was)[ \t]*:?[ \t]*)?)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s\"'`]+)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<.*>|\{\{.*\}\}|\$\{.*\}|\$\(.*\)|\$[A-Z_][A-Z0-9_]*|%[A-Z_]+%|\[\[.*\]\]|\*+|x{3,}|\.{3,}|…"
    r"|redacted|\[redacted\]|\(redacted\)|none|null|nil|n/?a|tbd|todo|changeme|example|placeholder|secret"
    r"|[~./].*)$"
)
# Long runs of base64 (a private key's body, a key without a known prefix):
# hidden by redact() when they mix upper and lower case and digits, never
# reported on their own.
_KEYLIKE = re.compile(r"[A-Za-z0-9+/]{32,}={0,2}")
REDACTED = "[redacted]"


def _looks_secret(value: str) -> bool:
    """A value after ``password=``: long enough and not a word, a path, a
    variable or a placeholder (``<token>``, ``${API_KEY}``, ``***``)."""
    value = value.strip().strip("\"'`").strip()
    if len(value) < 6 or _PLACEHOLDER.match(value):
        return False
    if len(value) >= 20 or not value.isalpha():  # long, or with a digit or a symbol
        return True
    return value != value.lower() and value != value.upper()  # mixed case


def _value_like(value: str) -> bool:
    """A value after "password is": 6+ characters with a digit or a symbol,
    not a placeholder, a link or an address ("password is required" is prose)."""
    value = value.strip().strip("\"'`").strip()
    if _PLACEHOLDER.match(value):
        return False
    value = value.rstrip(".,;:!?)]}")
    if len(value) < 6 or _PLACEHOLDER.match(value) or "://" in value or value.startswith("[["):
        return False
    return not value.isalpha()  # a digit or a symbol


def _assignment(match: re.Match) -> str:
    key = match.group("key").lower().replace("-", "_")
    return f"a {key} value ({key} = ...)"


def _prose(match: re.Match) -> str:
    key = match.group("key").lower()
    return f"a {key} in prose ({key} is ...)"


_SHAPES: list[tuple] = [
    ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", None, [b"PRIVATE KEY"]),
    ("an AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", None, [b"AKIA", b"ASIA", b"ABIA", b"ACCA"]),
    (
        "a GitHub token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        None,
        [b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_", b"github_pat_"],
    ),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}", None, [b"glpat-"]),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", None, [b"xox"]),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{30,}", None, [b"npm_"]),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}", None, [b"hf_"]),
    ("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", None, [b"sk-"]),
    ("an API key (sk-...)", r"\bsk-(?:proj-|svcacct-|live-)?[A-Za-z0-9_-]{20,}", None, [b"sk-"]),
    ("a Stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", None, [b"k_live_", b"k_test_"]),
    ("a Twilio API key", r"\bSK[0-9a-fA-F]{32}\b", None, [b"SK"]),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}", None, [b"AIza"]),
    (
        "a JSON Web Token",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        None,
        [b"eyJ"],
    ),
    ("a bearer token", r"(?i)\bbearer[ \t]+(?P<value>[A-Za-z0-9._~+/=-]{20,})", None, [b"bearer"]),
    ("a password in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<value>[^\s@/]{3,})@", None, [b"://"]),
    (
        "an Azure account key",
        r"(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<value>[A-Za-z0-9+/]{20,}={0,2})",
        None,
        [b"key"],
    ),
    (_assignment, _ASSIGNMENT, _looks_secret, [b"pass", b"pw", b"secret", b"key", b"token"]),
    (_prose, _PROSE, _value_like, [b"pass"]),
]
_SHAPES = [
    (what, re.compile(pattern) if isinstance(pattern, str) else pattern, check, triggers)
    for what, pattern, check, triggers in _SHAPES
]
# (trigger, shapes it may start, case-insensitive, gate), each trigger once
_TRIGGERS: list[tuple[bytes, frozenset, bool, int | None]] = []
# Bytes few notes hold, the fewest first (measured on obsidian-hub: "X" is in 3%
# of its notes, "_" in 5%, "K" 9%, "J" 9%, "V" 12%).  A trigger that is matched
# as written is looked for only in a text that holds its first byte in this list
# (its gate, one memchr): most notes hold no "_", so the ten tokens written with
# one cost nothing there.
_RARE = b"XZ_QKJqV"


def _triggers() -> None:
    merged: dict[tuple[bytes, bool], set] = {}
    for rank, (_, pattern, _, triggers) in enumerate(_SHAPES):
        for trigger in triggers:
            fold = trigger == trigger.lower() and bool(pattern.flags & re.IGNORECASE)
            merged.setdefault((trigger.lower() if fold else trigger, fold), set()).add(rank)
    _TRIGGERS[:] = [
        (trigger, frozenset(ranks), fold, None if fold else next((b for b in _RARE if b in trigger), None))
        for (trigger, fold), ranks in merged.items()
    ]


_triggers()
# What every match of a shape holds, found faster than the shape: a line
# without it is not matched against the shape at all.  An assignment's key,
# then its "=" or ":" (its pattern tries each word of a line that says "token"
# or "secret" in prose, a third of the time of masking a note that does).
_NEEDS = {
    rank: re.compile(r"(?i)(?:pass(?:word|wd|phrase)|pwd?|secret|key|token)[\"'*_]*[ \t]*[:=]")
    for rank, shape in enumerate(_SHAPES)
    if shape[1] is _ASSIGNMENT
}
# A line longer than twice this is scanned in windows this wide around
# each trigger, so one enormous line costs time in proportion to its size.
_WINDOW = 4096
# What the scan found on a short line, by its bytes: a runaway file repeats
# its lines.  Bounded (cleared when full).
_VERDICT_LINE = 512
_VERDICTS = 2048
_verdicts: dict[tuple[bytes, frozenset], tuple[int, str] | None] = {}


def _matches(text: str, ranks=None) -> list[tuple[int, tuple[int, int], str]]:
    """``(rank, span to hide, what)`` for each real secret in ``text``
    (shapes ``ranks``, all by default)."""
    out = []
    for rank in range(len(_SHAPES)) if ranks is None else ranks:
        what, pattern, check, _ = _SHAPES[rank]
        need = _NEEDS.get(rank)
        if need is not None and need.search(text) is None:
            continue
        for match in pattern.finditer(text):
            has_value = "value" in pattern.groupindex
            if check is not None and not check(match.group("value")):
                continue
            label = what(match) if callable(what) else what
            out.append((rank, match.span("value") if has_value else match.span(), label))
    return out


def _first(text: str, rank: int) -> str | None:
    """What the first real secret of shape ``rank`` in ``text`` is, or None."""
    what, pattern, check, _ = _SHAPES[rank]
    need = _NEEDS.get(rank)
    if need is not None and need.search(text) is None:
        return None
    for match in pattern.finditer(text):
        if check is None or check(match.group("value")):
            return what(match) if callable(what) else what
    return None


def redact(text: str) -> str:
    """``text`` with every secret value replaced by ``[redacted]``: the same
    shapes the scan reports (:func:`find_secrets`), plus long mixed-case
    base64 runs such as a private key's body.  Every finding's message
    passes through here."""
    return _hidden(text, _spans(text))


def _spans(text: str, ranks=None, keylike: bool = True) -> list[tuple[int, int]]:
    """The spans :func:`redact` hides in ``text`` (shapes ``ranks``, all by
    default); long mixed-case runs only beside a secret unless ``keylike``
    (an id in a URL is no secret)."""
    spans = [span for _, span, _ in _matches(text, ranks)]
    if not spans and not keylike:
        return spans
    for match in _KEYLIKE.finditer(text):
        run = match.group()
        if any(c.isupper() for c in run) and any(c.islower() for c in run) and any(c.isdigit() for c in run):
            spans.append(match.span())
    return spans


def _hidden(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with ``spans`` (overlapping or not) replaced by ``[redacted]``."""
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, pos = [], 0
    for start, end in merged:
        out += [text[pos:start], REDACTED]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _hays(data: bytes):
    """``(trigger, shape ranks, the bytes to look in)`` for each of
    :data:`_TRIGGERS` that ``data`` may hold (its gate byte is there, or it
    has none): ``data``, or for a case-insensitive trigger ``data`` lowered
    (once; lowering ASCII keeps every offset)."""
    lowered = None
    held: dict[int, bool] = {}
    for trigger, ranks, fold, gate in _TRIGGERS:
        if gate is not None:
            there = held.get(gate)
            if there is None:
                there = held[gate] = gate in data
            if not there:
                continue
        if fold and lowered is None:
            lowered = data.lower()
        yield trigger, ranks, lowered if fold else data


def _scan_bytes(data: bytes, first_line: int, held: list | None = None) -> list[tuple[int, str]]:
    """``(line, what)`` for each line of ``data`` (whole lines, or part of
    one; ``first_line`` is the number of its first line) holding a secret.
    Lines are decoded with replacement, so bytes that are not UTF-8 hide
    nothing; one finding per line, the first shape in :data:`_SHAPES` order.
    With ``held``, a line whose text runs to the end of ``data`` (cut there)
    is not judged: its number goes to ``held``, to be judged with more."""
    windows: dict[tuple[int, int, int], set] = {}  # (line start, window start, window end) -> shape ranks
    size = len(data)
    for trigger, ranks, hay in _hays(data):
        at = hay.find(trigger)
        while at >= 0:
            start = hay.rfind(b"\n", 0, at) + 1
            end = hay.find(b"\n", at)
            end = size if end < 0 else end
            if end - start <= 2 * _WINDOW:
                key = (start, start, end)
                following = end
            else:  # an enormous line: a window around this trigger
                key = (start, max(start, at - _WINDOW), min(end, at + _WINDOW))
                following = at + _WINDOW
            windows.setdefault(key, set()).update(ranks)
            at = hay.find(trigger, following) if following < size else -1
    if not windows:
        return []
    best: dict[int, tuple[int, str]] = {}
    number, pos = first_line, 0
    for (line_start, start, end), ranks in sorted(windows.items()):
        number += data.count(b"\n", pos, line_start)
        pos = line_start
        if held is not None and end == size:
            if number not in held:
                held.append(number)
            continue
        chunk = data[start:end]
        key = (chunk, frozenset(ranks)) if end - start <= _VERDICT_LINE else None
        verdict = _verdicts.get(key, False) if key is not None else False
        if verdict is False:
            verdict = None
            text = chunk.decode("utf-8", "replace")
            for rank in sorted(ranks):
                what = _first(text, rank)
                if what is not None:
                    verdict = (rank, what)
                    break
            if key is not None:
                if len(_verdicts) >= _VERDICTS:
                    _verdicts.clear()
                _verdicts[key] = verdict
        if verdict is not None and (number not in best or verdict[0] < best[number][0]):
            best[number] = verdict
    return [(line, what) for line, (_, what) in sorted(best.items()) if held is None or line not in held]


def pieces(handle, block: int | None = None):
    """Read a binary file in blocks: ``(data, line, continued)`` for each
    piece.  A piece is whole lines, except that a line longer than a block
    comes in parts (``continued`` for each part after the first); ``line`` is
    the number of the piece's first line.  A UTF-8 BOM at the start is
    dropped.  At most about two blocks are held at once."""
    block = block or _BLOCK
    carry = b""
    line, continued, first = 1, False, True
    while True:
        data = handle.read(block)
        if first:
            first = False
            while 0 < len(data) < 3 and BOM.startswith(data):  # a short read inside the BOM
                more = handle.read(3 - len(data))
                if not more:
                    break
                data += more
            if data.startswith(BOM):
                data = data[3:]
        if not data:
            if carry:
                yield carry, line, continued
            return
        if carry:
            data, carry = carry + data, b""
        cut = data.rfind(b"\n") + 1
        if cut:
            yield (data if cut == len(data) else data[:cut]), line, continued
            line += data.count(b"\n", 0, cut)
            continued = False
            carry = data[cut:]
        elif len(data) >= block:
            yield data, line, continued
            continued = True
        else:
            carry = data


class SecretScan:
    """Secrets in a file fed piece by piece (:func:`pieces`); a secret
    across two parts of a long line is found through an overlap.  A piece
    that ends inside a line may cut a value short ("token: abc" of
    "token: abcé"), so what its last line holds is decided with the next
    part, or by :meth:`finish` at the end of the file."""

    OVERLAP = 2 * _WINDOW  # a window held at a cut lies wholly in the next scan

    def __init__(self) -> None:
        self.tail = b""
        self.last = 0
        self.held = b""  # the text of a piece that ended inside a line it may judge wrongly
        self.held_line = 0

    def feed(self, data: bytes, line: int, continued: bool) -> list[tuple[int, str]]:
        text = self.tail + data if continued else data
        found = self.finish() if not continued else []
        cut = bool(text) and not text.endswith(b"\n")  # its last line may go on in the next piece
        held: list[int] = []
        found += [(n, what) for n, what in _scan_bytes(text, line, held if cut else None) if n > self.last]
        if found:
            self.last = max(self.last, found[-1][0])
        self.tail = text[-self.OVERLAP :]
        self.held, self.held_line = (text, line) if held else (b"", 0)
        return found

    def finish(self) -> list[tuple[int, str]]:
        """Judge what the last piece left open (the file ended there)."""
        if not self.held:
            return []
        text, line, self.held = self.held, self.held_line, b""
        found = [(n, what) for n, what in _scan_bytes(text, line) if n > self.last]
        if found:
            self.last = max(self.last, found[-1][0])
        return found


def find_secrets(text: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each line of ``text`` holding a secret value: a
    private key block, a token or API key of a known shape (GitHub, GitLab,
    Slack, npm, Hugging Face, Anthropic, OpenAI, Stripe, Twilio, Google, AWS,
    Azure, JWT, bearer), a password in a URL, an assignment such as
    ``password=...``/``api_key: ...``/``pw=...`` whose value looks real, or
    prose such as "the password is hunter2" (6+ characters with a digit or
    a symbol).  One finding per line; the value itself is never returned,
    so it cannot be printed."""
    scan = SecretScan()
    found: list[tuple[int, str]] = []
    for data, line, continued in pieces(io.BytesIO(text.encode("utf-8", "surrogatepass"))):
        found.extend(scan.feed(data, line, continued))
    return found + scan.finish()


# A private key block, BEGIN to END (or to the end of the text when it is
# cut): its body lines hold no keyword, so the whole block is hidden.
_KEY_BLOCK = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)


def mask(text: str) -> str:
    """``text`` with each secret hidden as ``[redacted]`` (a private key
    block line by line, so the text keeps its lines): what the index
    holds, what a daily note's extract lists and what a model or an agent
    is sent.  ``text`` itself when it holds none, found at memory speed:
    only the lines holding a trigger of a shape are matched, and only
    against the shapes that trigger starts."""
    if "PRIVATE KEY" in text:
        text = _KEY_BLOCK.sub(lambda m: "\n".join([REDACTED] * (m.group().count("\n") + 1)), text)
    data = text.encode("utf-8", "surrogatepass")
    lines = _trigger_lines(data)
    if not lines:
        return text
    out, pos = [], 0
    for start, (end, ranks) in sorted(lines.items()):
        line = data[start:end].decode("utf-8", "surrogatepass")
        hidden = _hidden(line, _spans(line, sorted(ranks), keylike=False))
        if hidden is not line:
            out += [data[pos:start], hidden.encode("utf-8", "surrogatepass")]
            pos = end
    if not out:
        return text
    out.append(data[pos:])
    return b"".join(out).decode("utf-8", "surrogatepass")


def _trigger_lines(data: bytes) -> dict[int, tuple[int, set]]:
    """``{line start: (line end, shape ranks)}`` for each line of ``data``
    holding a trigger (bytes: lowering ASCII keeps every offset)."""
    lines: dict[int, tuple[int, set]] = {}
    size = len(data)
    for trigger, ranks, hay in _hays(data):
        narrow = _NARROW.get(trigger)
        if narrow is not None:  # a trigger in every link: its lines found by a pattern led by it, in C
            for match in narrow.finditer(data):
                start = data.rfind(b"\n", 0, match.start()) + 1
                end = data.find(b"\n", match.start())
                lines.setdefault(start, (size if end < 0 else end, set()))[1].update(ranks)
            continue
        at = hay.find(trigger)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = size if end < 0 else end
            lines.setdefault(start, (end, set()))[1].update(ranks)
            at = hay.find(trigger, end)
    return lines


# "://" is in every link: :func:`mask` finds the lines where it may start a
# password in a URL (user:password@) by this pattern, which a match of that
# shape always holds, rather than matching every line with a link.
_NARROW = {b"://": re.compile(rb"://[^\s:/@]+:[^\s@/]{3,}@")}


def secret_spans(text: str) -> list[str]:
    """The pieces of ``text`` that :func:`mask` hides, each once, longest
    first: what ``card.py redact`` takes out of the journal's copies."""
    found = [m.group() for m in _KEY_BLOCK.finditer(text)] if "PRIVATE KEY" in text else []
    for line in text.split("\n"):
        found += [line[a:b] for a, b in _spans(line, keylike=False)]
    return sorted(set(found), key=lambda piece: (-len(piece), piece))


def first_secret(text: str) -> str | None:
    """What the first secret of ``text`` looks like ("an API key
    (sk-...)", "a password value (password = ...)"), or None; never the
    value."""
    found = find_secrets(text)
    return found[0][1] if found else None


def masked_words(words: list[str]) -> list[str]:
    """Command-line ``words`` with what looks like a secret hidden: the
    value of a ``field=value`` word, and any word inside a secret the words
    spell together (``the password is hunter22`` given as four words).  The
    journal records every run's command line so (:func:`store.apply`): a
    secret stored with ``--allow-secret`` is not kept there too."""
    pieces = [p for p in secret_spans(" ".join(words)) if len(p) >= 4]
    out = []
    for word in words:
        name, sep, value = word.partition("=")
        if sep and name and first_secret(f"{name}: {value}") is not None:
            word = f"{name}={REDACTED}"
        for piece in pieces:
            if piece in word:
                word = word.replace(piece, REDACTED)
            elif len(word) >= 4 and word in piece:
                word = REDACTED
        out.append(word)
    return out
