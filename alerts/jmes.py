"""JMESPath for the alert formats: compiled once, searched without raising.

Besides the standard functions a format may use ``basename(s)`` (the last part of a
path or resource name) and ``before(s, sep)`` (the text before ``sep``).
"""

from __future__ import annotations

import math
from typing import Any

import jmespath
from jmespath import functions
from jmespath.exceptions import JMESPathError
from jmespath.parser import ParsedResult


class FormatError(ValueError):
    """A format file that cannot be used; the message names the file and the problem."""


class _Functions(functions.Functions):
    """JMESPath functions the formats may use besides the standard ones."""

    @functions.signature({"types": ["string", "null"]})
    def _func_basename(self, value: str | None) -> str | None:
        """The last part of a path or resource name: ``//x/zones/z/instances/web-1`` → ``web-1``."""
        return value.rstrip("/").rsplit("/", 1)[-1] or None if value else None

    @functions.signature({"types": ["string", "null"]}, {"types": ["string"]})
    def _func_before(self, value: str | None, separator: str) -> str | None:
        """The text before the first ``separator`` (all of it when there is none)."""
        return value.split(separator, 1)[0] if value else None


_OPTIONS = jmespath.Options(custom_functions=_Functions())


def compile_expression(expression: str, *, origin: str) -> ParsedResult:
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise FormatError(f"{origin}: bad expression {expression!r}: {exc}") from None


def search(expression: ParsedResult | None, doc: Any) -> Any:
    if expression is None:
        return None
    try:
        return expression.search(doc, options=_OPTIONS)
    except (JMESPathError, TypeError, ValueError):  # e.g. join() over a non-string
        return None


def truthy(value: Any) -> bool:
    return value not in (None, False, "", [], {})


def lower_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k).lower(): lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [lower_keys(v) for v in value]
    return value


def scalar(value: Any) -> Any:
    while isinstance(value, list) and value:
        value = value[0]
    return None if isinstance(value, list | dict) else value


def text(value: Any) -> str | None:
    value = scalar(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    return value.strip() or None if isinstance(value, str) else None


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        score = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        return None
    return score if math.isfinite(score) else None  # "NaN", "inf": no score


def flatten(value: Any) -> list[str]:
    if isinstance(value, list):
        return [v for item in value for v in flatten(item)]
    if isinstance(value, str):
        return [value]
    if isinstance(value, int) and not isinstance(value, bool):
        return [str(value)]
    return []
