"""JSON from the network, parsed so that hostile input is refused, never a crash.

``loads_object`` accepts one UTF-8 JSON object and refuses, with a short reason
that never quotes the input: invalid UTF-8, nesting deeper than ``MAX_DEPTH``
(checked before parsing, so ``[[[[…`` cannot reach Python's recursion limit),
duplicate keys (two parsers could read two different alerts), ``NaN`` and
``Infinity``, numbers too large to be real, unpaired surrogates, NUL characters
(PostgreSQL text cannot hold them) and any top-level value that is not a
non-empty object.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64
MAX_NUMBER_CHARS = 100
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class BadJson(ValueError):
    """The input is not acceptable JSON; the message is safe to show and to log."""


def loads_object(
    raw: bytes | str, *, what: str = "body", max_depth: int = MAX_DEPTH
) -> dict[str, Any]:
    """One non-empty JSON object from ``raw`` (see the module docstring)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadJson(f"{what} is not valid UTF-8") from None
    if nesting_depth(raw) > max_depth:
        raise BadJson(f"{what} is nested deeper than {max_depth} levels")
    try:
        data = json.loads(
            raw,
            object_pairs_hook=_object,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=_float,
        )
    except BadJson:
        raise
    except ValueError:
        raise BadJson(f"{what} is not valid JSON") from None
    if not isinstance(data, dict) or not data:
        raise BadJson(f"{what} must be a non-empty JSON object")
    _check_strings(data, what)
    return data


def nesting_depth(text: str) -> int:
    """How deeply arrays and objects nest in ``text`` (strings skipped), without recursion."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = deepest = 0
    for char in brackets:
        depth += 1 if char in "[{" else -1
        if depth > deepest:
            deepest = depth
    return deepest


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        raise BadJson("a JSON object has the same key twice")
    return data


def _constant(_name: str) -> Any:
    raise BadJson("NaN and Infinity are not JSON numbers")


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise BadJson(f"a number is longer than {MAX_NUMBER_CHARS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if len(text) > MAX_NUMBER_CHARS or not math.isfinite(value):
        raise BadJson("a number is out of range")
    return value


def _check_strings(value: Any, what: str) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadJson(f"{what} contains an unpaired surrogate (invalid Unicode)") from None
        if "\x00" in value:
            raise BadJson(f"{what} contains a NUL character")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key, what)
            _check_strings(item, what)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, what)
