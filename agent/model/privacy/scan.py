"""Native multi-string scans (``ahocorasick_rs``) that find what the plain patterns find.

Python's ``re`` walks a 100 kB result once per pattern and costs 1 to 3 ms each time; an
Aho-Corasick automaton finds every known spelling in one pass for a fraction of that
(over ASCII text as bytes: a character is one byte, no offsets to translate). What
stands around each match is read with ``map`` and one pattern search, not a Python loop.
Each function here returns exactly what its pattern would (hypothesis tests compare
them): the automaton proposes, the pattern still decides wherever they could differ.
"""

from __future__ import annotations

import functools
import itertools
import re

import ahocorasick_rs

_LONGEST = ahocorasick_rs.MatchKind.LeftmostLongest
_ALNUM = re.compile(r"[^\W_]")  # what ``str.isalnum`` accepts (the same characters)
_WORD = re.compile(r"\w")  # ``str.isalnum`` or ``_``
_GLUE = re.compile(r"[A-Za-z0-9_]")


class Spellings:
    """Known spellings and their pseudonyms, found in lowered ASCII text as the pattern
    of the same spellings finds them (``pattern.finditer``)."""

    def __init__(self, aliases: dict[str, str], pattern: re.Pattern[str]) -> None:
        words = sorted(aliases)
        self.index = {w: n for n, w in enumerate(words)}
        self.tokens = [aliases[w] for w in words]  # the pseudonym of each match's index
        encoded = [w.encode() for w in words]  # (a word with other than ASCII never matches)
        self.automaton = ahocorasick_rs.BytesAhoCorasick(encoded, matchkind=_LONGEST)
        self.pattern = pattern  # the same words as a trie, not glued to a letter or digit

    def find(self, haystack: str) -> list[tuple[int, int, int]]:
        """``(index, start, end)`` of the pattern's matches in an ASCII ``haystack`` that
        do not continue a word before them (``index``: of the pseudonym in ``tokens``).

        The automaton's leftmost-longest matches are the pattern's while each ends
        before a non-alphanumeric character; where one does not, the pattern would try a
        shorter spelling there, so from that match on the pattern itself takes over."""
        found = self.automaton.find_matches_as_indexes(haystack.encode())
        padded = haystack + " "  # what stands after the end, and before the start ([-1])
        glued = _ALNUM.search("".join([padded[end] for _, _, end in found]))
        if glued is not None:  # (rare: a known spelling glued to a longer word)
            cut = glued.start()
            rest = self.pattern.finditer(haystack, found[cut][1])
            found[cut:] = [(self.index[m.group(0)], *m.span()) for m in rest]
        elif _ALNUM.search("".join([padded[start - 1] for _, start, _ in found])) is None:
            return found  # (the usual case: nothing glued on either side)
        return [s for s in found if not padded[s[1] - 1].isalnum()]


def _cases(word: str) -> list[str]:
    """Every upper/lower-case spelling of an ASCII ``word``."""
    return ["".join(c) for c in itertools.product(*((ch.lower(), ch.upper()) for ch in word))]


# What IGNORECASE also reads as an ASCII letter (Python's ``re`` documents these four).
_FOLDS = {"i": "i\u0131I\u0130", "k": "kK\u212a", "s": "sS\u017f"}


def _folds(word: str) -> list[str]:
    """Every spelling of ``word`` that ``(?i:word)`` matches."""
    letters = (_FOLDS.get(ch.lower(), ch.lower() + ch.upper()) for ch in word)
    return ["".join(c) for c in itertools.product(*letters)]


@functools.cache  # built at first use (not at import)
def starts(kinds: tuple[str, ...]) -> ahocorasick_rs.BytesAhoCorasick:
    """An automaton for where a pseudonym look-alike can start in ASCII text (as bytes): a
    kind word in any case followed by ``_``, or the kind word in capitals."""
    words = [w + "_" for k in kinds for w in _cases(k)] + list(kinds)
    dfa = ahocorasick_rs.Implementation.DFA  # (a few hundred words: small, and fastest)
    return ahocorasick_rs.BytesAhoCorasick([w.encode() for w in words], implementation=dfa)


@functools.cache
def unicode_starts(kinds: tuple[str, ...]) -> ahocorasick_rs.AhoCorasick:
    """The same for any text: the kind words also as IGNORECASE reads them (``IP`` with a
    dotless i)."""
    words = [w + "_" for k in kinds for w in _folds(k)] + list(kinds)
    return ahocorasick_rs.AhoCorasick(words)


def candidates(kinds: tuple[str, ...], text: str) -> list[int]:
    """Every start of a kind word in ``text`` where a look-alike may start. In ASCII text
    the kind words overlap no other kind word but at their start (no start is passed
    over); in other text every match is reported, overlapping or not."""
    if text.isascii():
        found = starts(kinds).find_matches_as_indexes(text.encode())
    else:
        found = unicode_starts(kinds).find_matches_as_indexes(text, overlapping=True)
    return sorted({start for _, start, _ in found})


def splice(text: str, spans: list[tuple[int, int, int]], news: list[str]) -> str:
    """``text`` with each ``(index, start, end)`` span (in order, not overlapping) replaced
    by ``news[index]``."""
    out: list[str] = []
    append = out.append
    at = 0
    for index, start, end in spans:
        append(text[at:start])
        append(news[index])
        at = end
    append(text[at:])
    return "".join(out)


class Tokens:
    """A map's own pseudonyms, found as ``TOKEN.finditer`` finds them where they stand
    alone: not after a letter, digit or ``_``, nor before an ASCII letter, digit or ``_``."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = list(values.values())
        tokens = list(values)
        self.automaton = ahocorasick_rs.AhoCorasick(tokens, matchkind=_LONGEST)
        encoded = [t.encode() for t in tokens]  # (ASCII: KIND_n)
        self.ascii = ahocorasick_rs.BytesAhoCorasick(encoded, matchkind=_LONGEST)

    def restore(self, text: str) -> str:
        """``text`` with each pseudonym standing alone replaced by its value."""
        if text.isascii():
            matches = self.ascii.find_matches_as_indexes(text.encode())
        else:
            matches = self.automaton.find_matches_as_indexes(text)
        padded = text + " "  # what stands after the end, and before the start ([-1])
        before = "".join([padded[start - 1] for _, start, _ in matches])
        after = "".join([padded[end] for _, _, end in matches])
        if _WORD.search(before) is not None or _GLUE.search(after) is not None:
            matches = [
                match
                for match, b, a in zip(matches, before, after, strict=True)
                if not (b.isalnum() or b == "_" or a in _GLUED)
            ]
        return splice(text, matches, self.values)


_GLUED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
