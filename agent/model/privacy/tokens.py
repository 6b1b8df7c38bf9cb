"""Pseudonyms and their map: ``USER_3`` is the third user of one conversation.

A pseudonym carries no information: its number is the order in which the conversation
met the value (no hash a dictionary could reverse). ``PseudonymMap`` hands them out
and reads them back, and only its own: ``restore`` is an allowlist, a token it never
handed out stays as written (refused, never guessed).

Data cannot forge a pseudonym: text that already looks like one, in any spelling
(``user 3``, ``USER-3``, fullwidth or Cyrillic look-alike letters, a zero-width space
inside), is itself a value of kind ``LITERAL`` and gets a pseudonym of its own, so it
can only ever be restored to the very text it was.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable

from agent.model.privacy.scan import Tokens, candidates, non_ascii

KINDS = ("USER", "EMAIL", "PERSON", "PHONE", "HOST", "IP", "ID", "ENCODED", "LITERAL")
# What the conclusion's footer calls each kind (singular, plural).
NOUNS = {
    "USER": ("user", "users"),
    "EMAIL": ("e-mail address", "e-mail addresses"),
    "PERSON": ("name", "names"),
    "PHONE": ("phone number", "phone numbers"),
    "HOST": ("host", "hosts"),
    "IP": ("IP address", "IP addresses"),
    "ID": ("identifier", "identifiers"),
    "ENCODED": ("encoded text", "encoded texts"),  # base64 holding any of the above
}
_KIND_WORDS = "|".join(KINDS)
# A token as socbot writes it: the kind, one underscore, the number, nothing glued on.
# (The start is checked in ``restore``: a leading look-behind makes the scan slow.)
TOKEN = re.compile(rf"(?:{_KIND_WORDS})_[1-9][0-9]{{0,6}}(?![A-Za-z0-9_])")
# Anything that reads like one (run on the look-alike skeleton): the kind word in any
# case with underscores (``user_3``), or in capitals with any separators or none
# (``USER 3``, ``USER-3``, ``USER3``); never the start of an address (``IP 10.0.0.1``).
LOOKALIKE = re.compile(
    rf"(?<![A-Za-z])(?:(?i:{_KIND_WORDS})_+|(?:{_KIND_WORDS})[\s_\-.:#/\\|·~]*)"
    r"[0-9]+(?![0-9]|\.[0-9])"
)
# Latin look-alikes of the letters the kind words use (Cyrillic, Greek), one to one.
_CONFUSABLE = str.maketrans(
    "\u0410\u0412\u0415\u041d\u0406\u041a\u041c\u041e\u0420\u0405\u0422\u0425\u0423\u0430\u0435\u0456"
    "\u043e\u0440\u0455\u0441\u0445\u0443\u0391\u0392\u0395\u0397\u0399\u039a\u039c\u039d\u039f\u03a1"
    "\u03a4\u03a5\u03a7\u03bf\u03b9\u03c1\u03c5",
    "ABEHIKMOPSTXYaeiopscxyABEHIKMNOPTYXoipu",
)
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\ufeff]"
)


_SURROGATE = re.compile("[\ud800-\udfff]")


def normalise(text: str) -> str:
    """NFKC, without the invisible characters that split words, a lone surrogate read as
    U+FFFD: what the model reads."""
    if text.isascii():
        return text  # ASCII is NFKC already and holds no invisible character
    text = unicodedata.normalize("NFKC", text)
    others = non_ascii(text)
    if _SURROGATE.search(others):  # (JSON can carry one alone: it is no character)
        text = _SURROGATE.sub("\ufffd", text)
    return _INVISIBLE.sub("", text) if _INVISIBLE.search(others) else text


# The same letters as one class: ``str.translate`` with a table looks up every character
# (15 ms over 100 kB); only the few look-alikes found are replaced.
_CONFUSABLES = re.compile("[" + "".join(map(chr, _CONFUSABLE)) + "]")


def skeleton(text: str) -> str:
    """``text`` with Cyrillic and Greek look-alikes read as Latin (same length)."""
    if _CONFUSABLES.search(non_ascii(text)) is None:
        return text  # (found in the few characters that are not ASCII, not in 100 kB)
    return _CONFUSABLES.sub(lambda m: chr(_CONFUSABLE[ord(m.group())]), text)


def lookalikes(text: str) -> list[tuple[int, int]]:
    """Where ``text`` (normalised) holds look-alikes of pseudonyms, as (start, end): the
    matches of ``LOOKALIKE`` in its skeleton, tried only where a kind word starts (the
    pattern tried at every character of 100 kB costs tens of milliseconds)."""
    seen = text if text.isascii() else skeleton(text)  # (ASCII is its own skeleton)
    found: list[tuple[int, int]] = []
    end = 0
    for start in candidates(KINDS, seen):  # where a look-alike may start
        if start < end:
            continue
        m = LOOKALIKE.match(seen, start)
        if m is not None:
            found.append(m.span())
            end = m.end()
    return found


def match_key(value: str) -> str:
    """How two spellings of one value are known to be the same."""
    return normalise(value).casefold()


class PseudonymMap:
    """One conversation's values and their pseudonyms, both ways."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], str] = {}  # (kind, match key) -> token
        self._values: dict[str, str] = {}  # token -> the value as first met
        self._keys: dict[str, str] = {}  # token -> its key
        self._counts: dict[str, int] = {}
        self.version = 0  # grows with every new value
        self._finder: tuple[int, Tokens] | None = None  # (version, its pseudonyms)

    def token_for(self, kind: str, value: str, *, key: str | None = None) -> str:
        """The value's pseudonym, handed out on first sight; ``key`` says which spellings
        are one value (default: ``match_key(value)``)."""
        if kind not in KINDS:
            raise ValueError(f"unknown pseudonym kind {kind!r}")
        slot = (kind, match_key(value) if key is None else key)
        token = self._by_key.get(slot)
        if token is None:
            number = self._counts.get(kind, 0) + 1
            self._counts[kind] = number
            token = f"{kind}_{number}"
            self._by_key[slot] = token
            self._values[token] = value
            self._keys[token] = slot[1]
            self.version += 1
        return token

    def known(self, kind: str, key: str) -> str | None:
        """The pseudonym of the value with this key, if it has one."""
        return self._by_key.get((kind, key))

    def value_of(self, token: str) -> str | None:
        """The real value of a pseudonym this map handed out; None for any other text."""
        return self._values.get(token)

    def values(self) -> Iterable[tuple[str, str]]:
        """Every (token, value), oldest first."""
        return self._values.items()

    def restore(self, text: str) -> str:
        """``text`` with this map's pseudonyms replaced by their values; others untouched."""
        if "_" not in text or not self._values:
            return text
        if self._finder is None or self._finder[0] != self.version:
            self._finder = (self.version, Tokens(self._values))
        return self._finder[1].restore(text)

    def counts(self) -> dict[str, int]:
        """Values per kind (look-alikes neutralised are not personal data: left out)."""
        return {k: n for k, n in self._counts.items() if k != "LITERAL"}

    def dumps(self) -> bytes:
        """The map as JSON bytes (sealed before it is stored)."""
        rows = [[t, v, self._keys[t]] for t, v in self._values.items()]
        return json.dumps(rows, ensure_ascii=False).encode()

    @classmethod
    def loads(cls, data: bytes) -> PseudonymMap:
        """A map from ``dumps``; tokens are handed out again in their order."""
        found = cls()
        for token, value, key in json.loads(data):
            kind = str(token).rsplit("_", 1)[0]
            if found.token_for(kind, str(value), key=str(key)) != token:
                raise ValueError("a stored pseudonym map is out of order")
        return found


def footer(counts: dict[str, int]) -> str:
    """``personal data pseudonymised for the model: 4 users, 2 e-mail addresses``; or ``""``."""
    parts = [
        f"{n} {NOUNS[k][0] if n == 1 else NOUNS[k][1]}"
        for k, n in sorted(counts.items(), key=lambda kv: KINDS.index(kv[0]))
        if n and k in NOUNS
    ]
    return "personal data pseudonymised for the model: " + ", ".join(parts) if parts else ""
