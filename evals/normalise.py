"""Text as the scorer compares it: lower case, refanged, IPv6 in one form, plain numbers.

A conclusion may write ``185.220.101[.]42``, ``hxxps://evil[.]example``,
``2001:DB8:0:0::1`` or ``1,204``; a scenario's ground truth writes each value once.
Both go through ``normalise`` and a value is found when it appears with no letter or
digit glued to either side (``12`` is not found in ``120``). Refanging is
``alerts.defang``'s, as in intake, the review and the intel lookups.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from alerts.defang import refang

_IPV6 = re.compile(r"(?<![0-9a-f:])[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:%\w+)?(?![0-9a-f:])")
_MAPPED = re.compile(r"::ffff:(\d{1,3}(?:\.\d{1,3}){3})\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_SPACE = re.compile(r"\s+")


def _ipv6(match: re.Match[str]) -> str:
    text = match.group(0)
    try:
        address = ipaddress.IPv6Address(text.split("%", 1)[0])
    except ValueError:
        return text
    mapped = address.ipv4_mapped
    return str(mapped) if mapped is not None else address.compressed


def normalise(text: str) -> str:
    """``text`` lower-cased, refanged, IPv6 compressed, thousands separators and runs of
    white space collapsed."""
    out = refang(text.lower())
    out = _MAPPED.sub(r"\1", out)
    out = _IPV6.sub(_ipv6, out)
    out = _THOUSANDS.sub("", out)
    return _SPACE.sub(" ", out).strip()


def contains(haystack: str, value: str) -> bool:
    """Whether normalised ``value`` appears in normalised ``haystack`` as a whole token."""
    needle = normalise(value)
    if not needle:
        return False
    pattern = rf"(?<![0-9a-z]){re.escape(needle)}(?![0-9a-z])"
    return re.search(pattern, haystack) is not None


def found(haystack: str, values: Iterable[str]) -> tuple[list[str], list[str]]:
    """``values`` split into those found in ``haystack`` (normalised already) and the rest."""
    hits: list[str] = []
    misses: list[str] = []
    for value in values:
        (hits if contains(haystack, value) else misses).append(value)
    return hits, misses
