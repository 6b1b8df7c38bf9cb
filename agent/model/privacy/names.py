"""Other spellings of a person's name the conversation already knows.

A full name learnt from the alert or a marked column (``John Smith``) is also written
``Smith, John``, ``J. Smith``, ``J.Smith``, ``Smith, J.``, ``john.smith`` or
``john_smith`` in free text (a ticket, a mail header, an account name); each of them gets
the same pseudonym as the name, and restores to the name as first met. The spellings are
lower-case: the matcher ignores case. Only names of two to four words of letters (an
apostrophe or hyphen inside, a dotted middle initial) have other spellings.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")  # letters, an apostrophe or hyphen inside
_INITIAL = re.compile(r"[^\W\d_]\.")


def name_spellings(value: str) -> list[str]:
    """The other spellings of the full name ``value`` (none for anything else)."""
    words = value.split()
    if not 2 <= len(words) <= 4:
        return []
    first, middle, last = words[0], words[1:-1], words[-1]
    if not (_WORD.fullmatch(first) and _WORD.fullmatch(last)) or min(len(first), len(last)) < 2:
        return []
    if not all(_WORD.fullmatch(w) or _INITIAL.fullmatch(w) for w in middle):
        return []
    f, s, i = first.lower(), last.lower(), first[0].lower()
    found = [f"{s}, {f}", f"{i}. {s}", f"{i}.{s}", f"{s}, {i}.", f"{f}.{s}", f"{f}_{s}"]
    if middle:
        found.append(f"{f} {s}")  # "Mary Ann Smith" is also "Mary Smith"
    return found
