"""The automaton scans (``ahocorasick_rs``) find exactly what the plain patterns find:
known spellings, the map's own pseudonyms, look-alike starts, US number ends, e-mail
addresses and a table's marked cells (hypothesis compares each with its pattern)."""

from __future__ import annotations

import re
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.model.privacy.columns import _table
from agent.model.privacy.detect import (
    _AT_DOMAIN,
    _LOCAL_RUN,
    _US_END,
    _emails,
    _us_ends,
)
from agent.model.privacy.scan import Spellings, Tokens, _cases, _folds, splice, trie_regex
from agent.model.privacy.tokens import (
    _CONFUSABLE,
    KINDS,
    LOOKALIKE,
    TOKEN,
    PseudonymMap,
    lookalikes,
    skeleton,
)

_WORDS = st.lists(st.text("ab1.-@", min_size=1, max_size=5), min_size=1, max_size=6)
_HAYSTACK = st.text("ab1.-@ _x", max_size=60)


def _pattern(words: list[str]) -> re.Pattern[str]:
    return re.compile(rf"(?:{trie_regex(sorted(words))})(?![^\W_])")


@settings(max_examples=500, deadline=None)
@given(_WORDS, _HAYSTACK)
def test_known_spellings_are_the_patterns_matches(words: list[str], haystack: str) -> None:
    aliases = {w: f"USER_{n}" for n, w in enumerate(sorted(set(words)), 1)}
    pattern = _pattern(list(aliases))
    expected = [
        (m.start(), m.end(), aliases[m.group(0)])
        for m in pattern.finditer(haystack)
        if not (m.start() and haystack[m.start() - 1].isalnum())
    ]
    finder = Spellings(aliases)
    assert [(s, e, finder.tokens[i]) for i, s, e in finder.find(haystack)] == expected


def test_a_spelling_glued_to_a_word_gives_way_to_a_shorter_one() -> None:
    aliases = {"ab": "USER_1", "ab@x.io": "EMAIL_1", "x": "USER_2"}
    finder = Spellings(aliases)
    found = [(s, e, finder.tokens[i]) for i, s, e in finder.find("ab@x.io1 ab@x.io ab-x")]
    assert found == [
        (0, 2, "USER_1"),  # "ab@x.io" is glued to "1": the pattern takes "ab" there
        (3, 4, "USER_2"),
        (9, 16, "EMAIL_1"),
        (17, 19, "USER_1"),
        (20, 21, "USER_2"),
    ]


def _regex_restore(pmap: PseudonymMap, text: str) -> str:
    """``restore`` as the pattern does it (the reference)."""

    def one(match: re.Match[str]) -> str:
        start = match.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return match.group(0)
        found = pmap.value_of(match.group(0))
        return match.group(0) if found is None else found

    return TOKEN.sub(one, text)


_PIECES = st.sampled_from(
    [
        *("USER_1", "USER_12", "USER_2", "EMAIL_1", "LITERAL_1", "ID_1"),
        *("_", "x", "1", " ", "é", "-", "\ud800"),  # (a lone surrogate: JSON can carry one)
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join), st.integers(1, 12))
def test_restore_is_the_patterns(text: str, users: int) -> None:
    pmap = PseudonymMap()
    for n in range(users):
        pmap.token_for("USER", f"person{n}")
    pmap.token_for("LITERAL", "user 1", key="user 1")
    assert pmap.restore(text) == _regex_restore(pmap, text)


def test_restore_reads_a_pseudonym_only_where_it_stands_alone() -> None:
    values = {"USER_1": "jdoe", "USER_12": "asmith"}
    text = "USER_1, USER_12 xUSER_1 USER_1x _USER_1 USER_1_ USER_123 é USER_1é"
    assert (
        Tokens(values).restore(text)
        == "jdoe, asmith xUSER_1 USER_1x _USER_1 USER_1_ USER_123 é jdoeé"
    )
    # ASCII text (read as bytes): the longest pseudonym still wins
    assert Tokens(values).restore("USER_12 USER_1 USER_123") == "asmith jdoe USER_123"


def test_a_kind_word_in_every_case() -> None:
    assert _cases("ip") == ["ip", "iP", "Ip", "IP"]


def test_splice() -> None:
    assert splice("abcdef", [(1, 1, 2), (0, 4, 6)], ["YZ!", "X"]) == "aXcdYZ!"
    assert splice("abc", [], ["X"]) == "abc"


_LOOK = st.sampled_from(
    ["user", "USER", "User", "_", "__", " ", "-", "3", "12", ".", "ip", "IP", "x"]
)


# Also what IGNORECASE reads as a letter of a kind word (dotless and dotted i, long s),
# Cyrillic and Greek look-alikes (read through the skeleton) and other text.
_UNICODE_LOOK = st.sampled_from(
    ["\u0131p", "\u0130D", "u\u017fer", "\u0406\u0420", "\u0415MAIL", "\u0399d", "\u00e9", "_", "3"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_LOOK, _UNICODE_LOOK), max_size=10).map("".join))
def test_lookalike_starts_find_the_patterns_matches(text: str) -> None:
    assert lookalikes(text) == [m.span() for m in LOOKALIKE.finditer(skeleton(text))]


_SKELETON_ALPHABET = "".join(map(chr, _CONFUSABLE)) + "aZ3_ é\u0416"


@given(st.text(_SKELETON_ALPHABET, max_size=40) | st.text(max_size=40))
def test_the_skeleton_is_the_tables_translation(text: str) -> None:
    assert skeleton(text) == text.translate(_CONFUSABLE)


def test_the_folds_are_all_that_ignorecase_reads_as_a_kind_words_letter() -> None:
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    for letter in set("".join(KINDS).lower()):
        read = set(re.findall(f"(?i){letter}", every))
        assert read == set("".join(_folds(letter))), letter
    assert _folds("ip") == [a + b for a in "i\u0131I\u0130" for b in "pP"]


def test_a_lookalike_in_text_that_is_not_ascii() -> None:
    text = "\u00e9 \u0131p_3 USER 4 \u0406\u0420-5 user5 x_USER_6"
    assert [text[a:b] for a, b in lookalikes(text)] == [
        "\u0131p_3",
        "USER 4",
        "\u0406\u0420-5",
        "USER_6",
    ]


@settings(max_examples=500, deadline=None)
@given(st.text("0123456789-._a \u00fc\u0663\u00a0\u00b2", max_size=40))
def test_us_ends_are_the_patterns(text: str) -> None:
    assert _us_ends(text) == [m.end() for m in _US_END.finditer(text)]


def _window_emails(text: str) -> list[str]:
    """E-mails as the detector found them before (a 64-character window reversed)."""
    found, end = [], 0
    for at in (m.start() for m in re.finditer(r"@|%40", text)):
        domain = _AT_DOMAIN.match(text, at)
        if at < end or domain is None:
            continue
        local = _LOCAL_RUN.match(text[max(0, at - 64) : at][::-1])
        start = at - (local.end() if local else 0)
        while start < at and text[start] == ".":
            start += 1
        if start < at:
            end = domain.end()
            found.append(text[start:end])
    return found


_MAIL = st.sampled_from(
    ["a", ".", "@", "%40", "x.io", "X.Io", " ", "b" * 30, "+", "-", "40", "\u0130", "\u212a"]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_MAIL, max_size=12).map("".join))
def test_emails_local_parts_read_backwards(text: str) -> None:
    """Each once, in the order met; also without ``%40`` (read from the runs around each @)
    and in ASCII (a domain read without IGNORECASE); ``İ`` and the Kelvin sign are letters
    to IGNORECASE."""
    assert _emails(text) == list(dict.fromkeys(_window_emails(text)))
    plain = text.replace("%40", "%")
    assert _emails(plain) == list(dict.fromkeys(_window_emails(plain)))


def test_an_emails_local_part_is_its_last_64_characters() -> None:
    for text in ("x" * 6 + "y" * 64 + "@a.io", "x" * 6 + "y" * 64 + "%40a.io"):
        assert _emails(text) == _window_emails(text) == ["y" * 64 + text[70:]]


def test_emails_in_non_ascii_text_keep_ignorecase_letters() -> None:
    assert _emails("j@ex\u0130mple.com j@\u212aey.io j@\u212aey.io") == [
        "j@ex\u0130mple.com",
        "j@\u212aey.io",
    ]


def _slow_table(columns: list[Any], rows: list[Any], marked: frozenset[str]) -> tuple[Any, Any]:
    wanted = [i for i, c in enumerate(columns) if str(c).lower() in marked]
    found = (
        (i, row[i])
        for row in (rows if wanted else ())
        if isinstance(row, list)
        for i in wanted
        if i < len(row) and isinstance(row[i], str)
    )
    nested = [c for r in rows if type(r) is list for c in r if type(c) in (dict, list)]
    return list(dict.fromkeys(found)), nested


_CELL = st.one_of(
    st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.none(), st.just({"x": "a"})
)


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 4).flatmap(lambda w: st.lists(st.lists(_CELL, min_size=w, max_size=w))))
def test_a_rectangle_is_read_as_row_by_row(rows: list[list[Any]]) -> None:
    columns = ["user", "email", "other", "name"][: len(rows[0]) if rows else 2]
    marked = frozenset({"user", "name", "email"})
    assert _table(columns, rows, marked) == _slow_table(columns, rows, marked)
    ragged = [*rows, ["a"]]
    assert _table(columns, ragged, marked) == _slow_table(columns, ragged, marked)


@settings(max_examples=400, deadline=None)
@given(
    st.integers(1, 4).flatmap(lambda w: st.lists(st.lists(_CELL, min_size=w, max_size=w))),
    st.sets(st.tuples(st.sampled_from(["user", "email", "name"]), st.sampled_from("abc"))),
)
def test_a_rectangle_whose_cells_are_done_gives_none(
    rows: list[list[Any]], done: set[tuple[str, str]]
) -> None:
    """Cells read before (``done``) may be left out, and only when all of them are (a
    rectangle's are)."""
    columns = ["user", "email", "other", "name"][: len(rows[0]) if rows else 2]
    marked = frozenset({"user", "name", "email"})
    for table in (rows, [*rows, ["a"]]):
        cells, nested = _table(columns, table, marked, done)
        slow_cells, slow_nested = _slow_table(columns, table, marked)
        assert nested == slow_nested
        new = [(i, v) for i, v in slow_cells if (columns[i], v) not in done]
        assert cells == slow_cells or (cells == [] and not new)
    if rows and all(
        type(v) not in (dict, list) and (c not in marked or type(v) is not str or (c, v) in done)
        for row in rows
        for c, v in zip(columns, row, strict=True)
    ):
        assert _table(columns, rows, marked, done) == ([], [])  # (a rectangle: none read)
