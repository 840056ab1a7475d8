"""Phone numbers as people write them (issue 24).

One number in its spellings (``00`` and ``+``, a ``(0)`` trunk mark after
any country code, separators, parentheses, ``tel:``) normalises to one form
(:func:`identity.normalise`), ``daily.py extract`` finds each spelling and
no amount, date, time, week or order number, and ``card.py set`` writes
nothing when a card holds the number it is given in another spelling.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import REPO, SCRIPTS
from hypothesis import assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(SCRIPTS))

from autograph.memory import daily  # noqa: E402
from autograph.read import identity  # noqa: E402
from autograph.read.vault import Vault  # noqa: E402
from autograph.schema.model import load_schema  # noqa: E402

# (as written, identity.default_country, normalised)
SPELLINGS = [
    ("0033 1 23 45 67 89", "+49", "+33123456789"),
    ("(0033 1 23 45 67 89", "+49", "+33123456789"),
    ("+33 (0)1 23 45 67 89", "+49", "+33123456789"),  # the (0) after any country code
    ("+33 1 23 45 67 89", "+49", "+33123456789"),
    ("0049 30 1234567", "+49", "+49301234567"),
    ("(0049 30 1234567", "+49", "+49301234567"),
    ("+49-30-123-4567", "+49", "+49301234567"),
    ("030 1234567", "+49", "+49301234567"),
    ("+49 (0)30 1234567", "+49", "+49301234567"),
    ("tel:+49-30-1234567", "+49", "+49301234567"),
    ("(+49) 30 1234567", "+49", "+49301234567"),
    ("030/123 45 67", "+49", "+49301234567"),
    ("030.123.4567", "+49", "+49301234567"),
    ("(030) 123-4567", "+49", "+49301234567"),
    ("(415) 555-0101", "+1", "+14155550101"),
    ("8 495 123-45-67", "+7", "+74951234567"),
    ("+39 (0)6 1234 5678", "+49", "+390612345678"),  # Italian numbers keep their 0 abroad
    # the trunk prefix written after the country code, as people do
    ("+49 030 1234567", "+49", "+49301234567"),
    ("0049 030 1234567", "+49", "+49301234567"),
    ("(+49) 030 1234567", "+49", "+49301234567"),
    ("+7 8 495 123-45-67", "+49", "+74951234567"),
    ("+7 812 123-45-67", "+49", "+78121234567"),  # 812 is Saint Petersburg's code, no trunk prefix
    ("+39 06 1234 5678", "+49", "+390612345678"),
    ("04321-1234", "+49", "+4943211234"),  # a five-digit area code, not a ZIP+4 code
    ("030 123 456", "+49", "+4930123456"),  # groups of three after a 0: no count
]


@pytest.mark.parametrize("value, country, expected", SPELLINGS)
def test_each_spelling_normalises_to_its_form(value, country, expected):
    assert identity.normalise(value, "phone", country) == expected


def test_extensions_stay_apart():
    assert identity.normalise("tel:+49-30-1234567;ext=12", "phone") == "+49301234567;ext=12"
    assert identity.normalise("(+49) 30 1234567 ext. 12", "phone") == "+49301234567;ext=12"


def extracted(make_vault, line: str, country: str = "+49") -> list[tuple[str, str]]:
    """``[(value, normalised)]`` of the phones ``daily.extract`` finds in a
    daily note holding ``line``, under ``default_country`` ``country``."""
    root = make_vault(
        {
            "2026-12-01.md": f"# Tuesday\n\nSee {line} then.\n",
            "schema.json": json.dumps({"identity": {"default_country": country}}),
        }
    )
    vault = Vault.open(root)
    found = daily.extract(vault.note("2026-12-01.md"), vault.resolver, load_schema(root))
    return [(item["value"], item["normalised"]) for item in found["phones"]]


@pytest.mark.parametrize("value, country, expected", SPELLINGS)
def test_daily_extract_finds_each_spelling(make_vault, value, country, expected):
    assert extracted(make_vault, value, country) == [(value.removeprefix("tel:"), expected)]


NEVER_PHONES = [
    "1 250 000 EUR",
    "$1,250,000",
    "€ 1.250.000",
    "1,250,000 USD",
    "1.250.000,00 €",
    "EUR 1 250 000",
    "2026-12-01",
    "01.12.2026",
    "12/01/2026",
    "14:30",
    "14:30-15:00",
    "2026-W49",
    "W49",
    "order 123 456 789",
    "invoice no. 2026/0001234",
    "Rechnung 123-456-789",
    "ticket #1234567",
    "Order ID: 123 456 789",
    "Kunden-Nr. 123 456 789",
    "1234567890123",
    # shaped as something else whatever surrounds them (a tester's finds)
    "Paid 1 250 000",
    "83 000 000 people",
    "Revenue: 12 500 000",
    "3.500.000",
    "2025-2026",
    "ISBN 978-3-16-148410-0",
    "version 1.2.3.4567",
    "ZIP 94107-1234",
    "1 250 000 руб.",
]


@pytest.mark.parametrize("line", NEVER_PHONES)
def test_daily_extract_finds_no_phone_in(make_vault, line):
    assert extracted(make_vault, line) == []


@pytest.mark.parametrize(
    "line",
    [
        "on 2026-12-01 call 030 1234567",
        "at 14:30 call 030 1234567",
        "01.12.2026 14:30-15:00: 030 1234567",
        "Tel. No. 030 1234567 (order 123 456 789)",
        "€ 1.250.000 from 030 1234567",
        "caller ID: 030 1234567",
        "just in case: 030 1234567",
    ],
)
def test_a_phone_next_to_a_date_time_amount_or_order_number_is_found(make_vault, line):
    assert extracted(make_vault, line) == [("030 1234567", "+49301234567")]


# ---------------------------------------------------------------------------
# The normalised form depends only on the digits (and the prefix)

SEPARATORS = st.sampled_from([" ", "-", ".", "/", "  ", " - ", " / "])


@st.composite
def written_numbers(draw):
    """``(prefix, digits, written)``: a number's digits grouped with random
    separators after ``+``, ``00`` (an opening parenthesis or ``tel:``
    before either, now and then) or no prefix (a national number, its
    area code in parentheses now and then)."""
    prefix = draw(st.sampled_from(["+", "00", ""]))
    first = draw(st.sampled_from("0123456789" if not prefix else "123456789"))
    if not prefix and first == "0":  # a national number starts with one trunk 0, never "00"
        first += draw(st.sampled_from("123456789"))
    digits = first + draw(st.text(alphabet="0123456789", min_size=5, max_size=12))
    cuts = sorted(draw(st.sets(st.integers(1, len(digits) - 1), max_size=6)))
    groups = [digits[a:b] for a, b in zip([0, *cuts], [*cuts, len(digits)], strict=True)]
    if len(groups[0]) >= 2 and draw(st.booleans()):  # "(030) 123 4567", "+(49) 30 ..."; never a "(0)" mark
        groups[0] = f"({groups[0]})"
    written = groups[0]
    for group in groups[1:]:
        written += draw(SEPARATORS) + group
    if prefix:
        written = prefix + draw(st.sampled_from(["", " "])) + written
        written = draw(st.sampled_from(["", "(", "tel:"])) + written
    return prefix, digits, written


@settings(max_examples=300, deadline=None)
@given(written_numbers(), st.sampled_from([None, "+49", "+1", "+7", "IT", "FR"]))
def test_the_normalised_form_depends_only_on_the_digits(number, country):
    """... but for a trunk prefix written after a country code ("+49 030"),
    which is dropped (the table above holds that rule)."""
    prefix, digits, written = number
    assume(not trunk_written(written))
    assert identity.normalise(written, "phone", country) == identity.normalise(prefix + digits, "phone", country)


def trunk_written(written: str) -> bool:
    """Whether ``written`` is a country code, a separator, then that
    country's trunk prefix ("+49 030 ...", "+7 8 495 ...")."""
    match = re.match(r"(?:\(|tel:)?(?:\+|00) *\(?([1-9][0-9]{0,2})\)?[ ./-]+(0(?=[1-9])|[18](?=[ ./-]))", written)
    if match is None:
        return False
    code = match.group(1)
    return code in set(identity.COUNTRY_CODES.values()) and identity.TRUNK_PREFIXES.get(code, "0") == match.group(2)


# ---------------------------------------------------------------------------
# card.py set: the number the card holds, in another spelling, is no change


def card_vault(tmp_path):
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    schema = json.loads((REPO / "schema.example.json").read_text(encoding="utf-8"))
    assert schema["identity"]["default_country"] == "+49" and schema["identity"]["match_fields"]["phone"] == "phone"
    (root / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    card = root / "people" / "Dana Reyes.md"
    card.write_text(
        "---\ntype: person\ndescription: Ops lead\nstatus: active\nphone: 030 1234567\nemail: dana@acme.com\n"
        "handle: dana_r\n---\nDana.\n",
        encoding="utf-8",
    )
    return root, card


def set_field(root, *assignments) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "card.py"), "set", "Dana Reyes", *assignments, "--vault", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize(
    "assignment",
    ["phone=+49 30 1234567", "phone=0049 (0)30 123-4567", "email=Dana@Acme.COM", "handle=@Dana_R"],
)
def test_set_with_the_same_identity_in_another_spelling_writes_nothing(tmp_path, assignment):
    root, card = card_vault(tmp_path)
    before = card.read_bytes()
    code, report = set_field(root, assignment)
    assert code == 0, report
    assert report["written"] == []
    assert card.read_bytes() == before  # no value, no ## History line, no touch


def test_set_with_another_number_still_writes_it_and_its_history(tmp_path):
    root, card = card_vault(tmp_path)
    code, report = set_field(root, "phone=+49 30 7654321")
    assert code == 0 and report["written"] == ["people/Dana Reyes.md"], report
    text = card.read_text(encoding="utf-8")
    assert "phone: +49 30 7654321\n" in text
    assert "phone: 030 1234567 → +49 30 7654321" in text
