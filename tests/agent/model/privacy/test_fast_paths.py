"""The detector's fast paths find what the plain patterns find: US numbers looked for only
where one can end, ASCII text taken as already normalised."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.model.privacy.detect import PHONE_US, _us_numbers
from agent.model.privacy.tokens import normalise

_PHONE_ALPHABET = st.sampled_from(list("0123456789-.() +x_a\n\"'"))


@settings(max_examples=400, deadline=None)
@given(st.lists(_PHONE_ALPHABET, max_size=80).map("".join))
def test_us_numbers_are_the_patterns_matches(text: str) -> None:
    assert [m.span() for m in _us_numbers(text)] == [m.span() for m in PHONE_US.finditer(text)]


def test_us_numbers_in_a_log_line() -> None:
    line = "call (212) 555-0187 or 415.555.0132, ref 1-800-555-0199; 212-555-0100x, 555-0100-9"
    assert [m.group(0) for m in _us_numbers(line)] == [
        "(212) 555-0187",
        "415.555.0132",
        "800-555-0199",
    ]


@given(st.text(max_size=60))
def test_ascii_is_returned_as_normalised(text: str) -> None:
    ascii_text = text.encode("ascii", "ignore").decode()
    assert normalise(ascii_text) == unicodedata.normalize("NFKC", ascii_text)
    assert normalise(ascii_text) is ascii_text
