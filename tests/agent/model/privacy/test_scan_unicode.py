"""Known values in text that is not ASCII: searched lowered with the automaton where that
finds exactly what the case-insensitive pattern finds (``plain_case``), else with the
pattern. Hypothesis compares both over letters that lower plainly and those that do not
(dotless and dotted i, long s, Kelvin sign, final sigma, sharp s)."""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.model.privacy import Pseudonymiser
from agent.model.privacy.scan import _EXTRA_CASES, _extra_cases, non_ascii, plain_case, variants
from config.privacy_settings import PrivacySettings

_LETTERS = "aAe\u00e9\u00c91.-sS\u017f\u0131iI\u0130\u03c3\u03c2\u03a3kK\u212a\u00df _x\u00fc\u00dc"
_WORDS = st.lists(
    st.text(_LETTERS.replace(" ", ""), min_size=1, max_size=5), min_size=1, max_size=6
)


def _pseudonymiser(words: list[str]) -> Pseudonymiser:
    p = Pseudonymiser(PrivacySettings(enabled=True))
    for n, word in enumerate(sorted({w.lower() for w in words}), 1):
        p._aliases[word] = f"USER_{n}"
    return p


def _by_pattern(p: Pseudonymiser, text: str) -> list[tuple[int, int, str]]:
    """What the case-insensitive pattern finds (the reference)."""
    pattern = p._compiled()
    return [
        (m.start(), m.end(), p._token_of(m.group(0)))
        for m in pattern.finditer(text)
        if not (m.start() and text[m.start() - 1].isalnum())
    ]


def _found(p: Pseudonymiser, text: str) -> list[tuple[int, int, str]]:
    spans, news = p._known(text)
    return [(s, e, news[i]) for i, s, e in spans]


def _same(p: Pseudonymiser, text: str) -> None:
    assert _found(p, text) == _by_pattern(p, text)


@settings(max_examples=800, deadline=None)
@given(_WORDS, st.text(_LETTERS, max_size=40))
def test_known_spellings_in_any_text_are_the_patterns_matches(words: list[str], text: str) -> None:
    _same(_pseudonymiser(words), text)


@settings(max_examples=300, deadline=None)
@given(_WORDS, st.text("aAiIsSkK1 _x.-", max_size=30))
def test_known_spellings_in_ascii_text(words: list[str], text: str) -> None:
    _same(_pseudonymiser(words), text)


@settings(max_examples=300, deadline=None)
@given(_WORDS, st.text(max_size=40))
def test_known_spellings_in_random_text(words: list[str], text: str) -> None:
    _same(_pseudonymiser(words), text)


def test_a_name_with_an_accent_in_a_mostly_ascii_text() -> None:
    p = _pseudonymiser(["jos\u00e9 garc\u00eda", "jdoe"])
    text = "login JOS\u00c9 GARC\u00cdA (jdoe) from Jos\u00e9 Garc\u00eda's laptop; xjdoe"
    assert plain_case(text, text.lower())
    assert [text[s:e] for s, e, _ in _found(p, text)] == [
        "JOS\u00c9 GARC\u00cdA",
        "jdoe",
        "Jos\u00e9 Garc\u00eda",
    ]


def test_the_longest_spelling_wins_outside_ascii_too() -> None:
    p = _pseudonymiser(["jos\u00e9", "jos\u00e9@x.io"])
    assert _found(p, "JOS\u00c9@X.IO \u00e9 jos\u00e9") == [(0, 9, "USER_2"), (12, 16, "USER_1")]


def test_a_text_that_does_not_lower_plainly_goes_to_the_pattern() -> None:
    # The dotted I lowers to two characters; a dotless i is read as i by IGNORECASE.
    assert not plain_case("SM\u0130TH", "SM\u0130TH".lower())
    assert not plain_case("sm\u0131th", "sm\u0131th")
    p = _pseudonymiser(["smith"])
    for text in ("SM\u0130TH x", "Sm\u0131th x", "\u03a3 smith"):
        assert _found(p, text) == _by_pattern(p, text)
        assert _found(p, text), text


def test_lowering_is_how_ignorecase_compares_every_plain_letter() -> None:
    """IGNORECASE compares ``_sre.unicode_tolower`` of both sides, and for the table's
    letters their extra cases too; every other character lowers (``str.lower``) to one
    character that is exactly that, over all of Unicode."""
    assert _EXTRA_CASES is not None
    for code in range(sys.maxunicode + 1):
        lower = chr(code).lower()
        if len(lower) == 1 and not _EXTRA_CASES.search(lower):
            assert _sre.unicode_tolower(code) == ord(lower), hex(code)


def test_the_extra_cases_are_pythons_own_table() -> None:
    table = _extra_cases()
    assert table is not None
    for letter in "\u0131\u017f\u00b5\u03bc\u03c2\u03c3\u03d0\u03b2\u1e9b\ufb05":
        assert table.fullmatch(letter), hex(ord(letter))
    for other in "iksX\x7f\x80\u00e9\u00df\u212a\u0130[]":
        assert not table.fullmatch(other), hex(ord(other))


def test_non_ascii_is_the_characters_beyond_ascii() -> None:
    assert non_ascii("a\u00e9b\U0001f600c\ud800") == "\u00e9\U0001f600\ud800"
    assert non_ascii("plain") == ""


def test_a_dotless_i_is_found_as_ignorecase_reads_it_in_ascii_text() -> None:
    p = _pseudonymiser(["ali y\u0131lmaz", "\u017fmith"])
    ascii_text = "ALI YILMAZ and SMITH"
    assert _found(p, ascii_text) == [(0, 10, "USER_1"), (15, 20, "USER_2")]
    text = "Ali Y\u0131lmaz, ali yilmaz; \u00e9 SMITH"
    assert _found(p, text) == _by_pattern(p, text)
    assert len(_found(p, text)) == 3


def test_a_spelling_with_too_many_variants_is_read_by_the_pattern() -> None:
    word = "\u0131" * 9  # 512 ways to write it in lowered text
    assert variants(word) is None
    p = _pseudonymiser([word, "jdoe"])
    for text in ("I" * 9 + " jdoe", "JDOE " + "i\u0131" * 4 + "I"):
        assert _found(p, text) == _by_pattern(p, text)
        assert len(_found(p, text)) == 2


def test_a_lone_surrogate_from_json_is_read_not_a_crash() -> None:
    """JSON can carry a lone surrogate (``"\\ud800"``): it is no character (the model
    reads U+FFFD), and the values around it are still found and restored."""
    p = Pseudonymiser(PrivacySettings(enabled=True), marked=["user_name", "full_name"])
    table = {"columns": ["user_name", "full_name"], "rows": [["jdoe", "Zo\u00eb M\u00fcller"]]}
    p.pseudonymise(json.dumps(table))
    text = json.loads('"x \\ud800 JDOE, Zo\u00eb M\u00fcller, USER_7 \\udfff"')
    out = p.pseudonymise(text)
    assert out == "x \ufffd USER_1, PERSON_1, LITERAL_1 \ufffd"
    assert p.restore(out) == "x \ufffd jdoe, Zo\u00eb M\u00fcller, USER_7 \ufffd"
    assert p.restore("USER_1\ud800PERSON_1 \u00e9") == "jdoe\ud800Zo\u00eb M\u00fcller \u00e9"
