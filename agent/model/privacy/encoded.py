"""Text hidden in base64 in a tool result or an alert (``powershell -enc …``, a mail body,
a token's payload): the runs that decode to readable text, and that text.

A run counts when it is at least ``MIN_CHARS`` long, stands alone (no base64 character
glued to either end), decodes strictly (standard or URL-safe alphabet, padding optional)
and its bytes are UTF-8 or UTF-16LE text (PowerShell's ``-EncodedCommand``) with no
control characters but whitespace. Hashes and binary blobs decode to no text and are left
alone. Bounded: at most ``MAX_RUNS`` runs a text, each at most ``MAX_CHARS``; text
decoded from text is looked at again, up to ``DEPTH`` encodings deep.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator

MIN_CHARS = 16
MAX_CHARS = 65_536
MAX_RUNS = 200
DEPTH = 3
_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
# Each byte as "a" (a base64 character, either alphabet) or " ": the runs are then found
# with ``bytes.find`` (a regular expression tried at every character costs ten times more).
_MASK = bytes(ord("a") if i in _ALPHABET else ord(" ") for i in range(256))
_LONG_ENOUGH = b"a" * MIN_CHARS
_STANDARD = str.maketrans("-_", "+/")  # the URL-safe alphabet read as the standard one


def runs(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each run of ``MIN_CHARS`` or more base64 characters (with up to
    two ``=`` after it) standing alone in ``text``."""
    mask = text.encode("ascii", "replace").translate(_MASK)  # one byte a character
    at = 0
    while (start := mask.find(_LONG_ENOUGH, at)) >= 0:
        end = mask.find(b" ", start)
        end = len(mask) if end < 0 else end
        at = end
        while end < len(text) and end - at < 2 and text[end] == "=":
            end += 1
        yield start, end


def encoded_texts(text: str, depth: int = DEPTH) -> Iterator[tuple[str, str]]:
    """``(run, decoded text)`` for each base64 run of ``text`` that decodes to text;
    runs inside decoded text come too, with the outer run they are hidden in."""
    found = 0
    for start, end in runs(text):
        run = text[start:end]
        decoded = _decoded(run) if len(run) <= MAX_CHARS else None
        if decoded is None:
            continue
        found += 1
        if found > MAX_RUNS:
            return
        yield run, decoded
        if depth > 1:
            for _inner, deeper in encoded_texts(decoded, depth - 1):
                yield run, deeper


def _decoded(run: str) -> str | None:
    padded = run.translate(_STANDARD) + "=" * (-len(run) % 4)
    try:
        raw = base64.b64decode(padded, validate=True)  # strict: any stray character fails
    except (binascii.Error, ValueError):
        return None
    return _text(raw)


def _text(raw: bytes) -> str | None:
    """``raw`` as text (UTF-8, else UTF-16LE), or None when it is not readable text."""
    for codec in ("utf-8", "utf-16-le"):
        try:
            text = raw.decode(codec)
        except UnicodeDecodeError:
            continue
        if text and all(c.isprintable() or c in "\r\n\t" for c in text):
            return text
    return None
