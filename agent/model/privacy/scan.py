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
from typing import Any

import ahocorasick_rs

_LONGEST = ahocorasick_rs.MatchKind.LeftmostLongest
_ALNUM = re.compile(r"[^\W_]")  # what ``str.isalnum`` accepts (the same characters)
_WORD = re.compile(r"\w")  # ``str.isalnum`` or ``_``
_GLUE = re.compile(r"[A-Za-z0-9_]")
_ASCII = bytes(range(128))


_LAST = [("", "")]  # the last text read and its answer (one tuple: replaced atomically)


def non_ascii(text: str) -> str:
    """The characters of ``text`` that are not ASCII, in order: its UTF-8 without the ASCII
    bytes (a few characters of a mostly ASCII text, read in C without a pattern's walk).
    The same text object is asked about several times in a row: the last answer is kept."""
    last = _LAST[0]
    if last[0] is text:
        return last[1]
    raw = text.encode("utf-8", "surrogatepass")  # (JSON can hold a lone surrogate)
    found = raw.translate(None, _ASCII).decode("utf-8", "surrogatepass")
    _LAST[0] = (text, found)
    return found


def _extra_cases() -> re.Pattern[str] | None:
    """The letters (not ASCII) that IGNORECASE reads as other letters than their lower case
    (Python's own table: a dotless i and i, a long s and s, the two lower sigmas …); None
    where the table is not there (then only ASCII text takes a fast path)."""
    try:
        from re._casefix import _EXTRA_CASES as cases  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover (another Python)
        return None
    letters = {c for k, v in cases.items() for c in (k, *v) if c > 127}
    return re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(letters)) + "]")


_EXTRA_CASES = _extra_cases()


def plain_case(text: str, lowered: str) -> bool:
    """Whether the lowered spellings found in ``lowered`` (``text.lower()``, same offsets)
    are exactly what IGNORECASE finds in ``text``: no character lowers to more than one
    (``İ``) and none is a letter IGNORECASE reads as another (in the text or a spelling)."""
    return (  # (what lowers to other than ASCII is the lowering of what is not ASCII)
        _EXTRA_CASES is not None
        and len(lowered) == len(text)
        and _EXTRA_CASES.search(non_ascii(text).lower()) is None
    )


# A spelling's letters IGNORECASE also reads as an ASCII letter (``\u0131`` as ``i``, a
# long s as ``s``): the spelling is also looked for with those (in lowered text, ``I`` is
# ``i``). Every other such letter matches only letters ``plain_case`` turns away.
_AS_ASCII = {"\u0131": "\u0131i", "\u017f": "\u017fs"}
_MOST_VARIANTS = 256


def variants(word: str) -> list[str] | None:
    """Every spelling of a lowered ``word`` that lowered text ``plain_case`` allows can hold
    where IGNORECASE finds ``word``; None past ``_MOST_VARIANTS``."""
    if "\u0131" not in word and "\u017f" not in word:
        return [word]
    if 2 ** sum(word.count(c) for c in _AS_ASCII) > _MOST_VARIANTS:
        return None
    return ["".join(c) for c in itertools.product(*(_AS_ASCII.get(ch, ch) for ch in word))]


class Spellings:
    """Known spellings and their pseudonyms, found in lowered text: what the
    case-insensitive pattern of the same spellings finds in the text itself, where
    ``plain_case`` allows it and the spellings are ``complete``."""

    def __init__(self, aliases: dict[str, str]) -> None:
        # spelling -> pseudonym: a spelling keeps its own; a variant takes that of the
        # first spelling it is one of (as IGNORECASE reads it).
        table = dict(aliases)
        self.complete = True  # every spelling's variants are in the table
        for word, token in aliases.items():
            more = variants(word)
            if more is None:
                self.complete = False
            for variant in more or ():
                table.setdefault(variant, token)
        words = sorted(table)
        self.index = {w: n for n, w in enumerate(words)}
        self.tokens = [table[w] for w in words]  # the pseudonym of each match's index
        encoded = [w.encode() for w in words]  # (a word with other than ASCII never matches)
        self.automaton = ahocorasick_rs.BytesAhoCorasick(encoded, matchkind=_LONGEST)
        self.words = words
        self._unicode: list[ahocorasick_rs.AhoCorasick] = []  # built at first other text
        self._pattern: list[re.Pattern[str]] = []  # compiled at the first glued match

    def pattern(self) -> re.Pattern[str]:
        """The same words as a trie, not glued to a letter or digit after them."""
        if not self._pattern:
            self._pattern.append(re.compile(rf"(?:{trie_regex(self.words)})(?![^\W_])"))
        return self._pattern[0]

    def find(self, haystack: str) -> list[tuple[int, int, int]]:
        """``(index, start, end)`` of the pattern's matches in a lowered ``haystack`` that
        do not continue a word before them (``index``: of the pseudonym in ``tokens``).

        The automaton's leftmost-longest matches are the pattern's while each ends
        before a non-alphanumeric character; where one does not, the pattern would try a
        shorter spelling there, so from that match on the pattern itself takes over."""
        if haystack.isascii():
            found = self.automaton.find_matches_as_indexes(haystack.encode())
        else:
            if not self._unicode:
                self._unicode.append(ahocorasick_rs.AhoCorasick(self.words, matchkind=_LONGEST))
            found = self._unicode[0].find_matches_as_indexes(haystack)
        padded = haystack + " "  # what stands after the end, and before the start ([-1])
        glued = _ALNUM.search("".join([padded[end] for _, _, end in found]))
        if glued is not None:  # (rare: a known spelling glued to a longer word)
            cut = glued.start()
            rest = self.pattern().finditer(haystack, found[cut][1])
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


_FOLDED = re.compile("[\u0131\u0130\u017f\u212a]")  # what IGNORECASE reads as i, s or k


def candidates(kinds: tuple[str, ...], text: str) -> list[int]:
    """Every start of a kind word in ``text`` where a look-alike may start. In ASCII text
    the kind words overlap no other kind word but at their start (no start is passed
    over); so in text whose other characters are none of ``_FOLDED`` (each read as one
    ``?``: the same offsets); in other text every match is reported, overlapping or not."""
    if text.isascii():
        found = starts(kinds).find_matches_as_indexes(text.encode())
    elif _FOLDED.search(non_ascii(text)) is None:
        found = starts(kinds).find_matches_as_indexes(text.encode("ascii", "replace"))
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
        encoded = [t.encode() for t in values]  # (ASCII: KIND_n)
        self.ascii = ahocorasick_rs.BytesAhoCorasick(encoded, matchkind=_LONGEST)

    def restore(self, text: str) -> str:
        """``text`` with each pseudonym standing alone replaced by its value (read as ASCII
        bytes, any other character as one ``?``: a pseudonym holds none, the same offsets;
        a lone surrogate too)."""
        raw = text.encode() if text.isascii() else text.encode("ascii", "replace")
        matches = self.ascii.find_matches_as_indexes(raw)
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


def trie_regex(words: list[str]) -> str:
    """One regular expression matching any of ``words``, longest first, as a trie."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(c) + emit(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return emit(trie)
