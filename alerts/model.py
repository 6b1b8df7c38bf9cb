"""The normalized alert (``Alert``), its indicators and entities, and the value parsers
(severity words and scores, times) that the alert formats share.

``alerts.parse.parse_alert`` builds an ``Alert`` from a payload.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

IndicatorKind = Literal[
    "ipv4", "ipv6", "domain", "url", "md5", "sha1", "sha256", "email", "principal"
]
EntityKind = Literal[
    "user", "host", "ip", "domain", "url", "email", "process", "file", "hash", "resource"
]
Severity = Literal["info", "low", "medium", "high", "critical"]


class Indicator(BaseModel):
    kind: IndicatorKind
    value: str
    private: bool = Field(
        False, description="not public: RFC 1918/loopback/link-local IP or internal domain"
    )


class Entity(BaseModel):
    """Something the alert is about, with its part in it when the format says."""

    kind: EntityKind
    value: str
    role: str | None = Field(None, description="actor | source | target | destination | ...")


class Alert(BaseModel):
    id: str = Field(description="our id (uuid hex)")
    source: str = Field(description="guardduty | scc | generic | slack | ...")
    title: str
    severity: str | None = None  # info | low | medium | high | critical, when known
    event_time: datetime | None = None
    indicators: list[Indicator] = Field(default_factory=list)
    raw: dict[str, Any]
    entities: list[Entity] = Field(default_factory=list)
    format: str | None = Field(None, description="catalogue format that matched; None: unknown")
    description: str | None = None


_SEVERITY_WORDS: dict[str, Severity] = {
    "informational": "info",
    "information": "info",
    "info": "info",
    "notice": "info",
    "none": "info",
    "low": "low",
    "minor": "low",
    "medium": "medium",
    "moderate": "medium",
    "warning": "medium",
    "warn": "medium",
    "high": "high",
    "major": "high",
    "important": "high",
    "error": "high",
    "critical": "critical",
    "severe": "critical",
    "fatal": "critical",
    "emergency": "critical",
}
MAX_TITLE = 200
MAX_DESCRIPTION = 2_000


def normalize_severity(value: Any) -> Severity | None:
    """info/low/medium/high/critical from a word or a 0-10 / 0-100 score."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _SEVERITY_WORDS:
            return _SEVERITY_WORDS[word]
        try:
            value = float(word)
        except ValueError:
            return None
    if not isinstance(value, int | float) or not 0 <= value <= 100:  # NaN is not
        return None
    score = float(value) if value <= 10 else float(value) / 10
    if score < 1:
        return "info"
    if score < 4:
        return "low"
    if score < 7:
        return "medium"
    return "high" if score < 9 else "critical"


def severity_word(value: Any) -> Severity | None:
    """The severity a plain word names (``High``, ``warning``), numbers not considered."""
    return _SEVERITY_WORDS.get(value.strip().lower()) if isinstance(value, str) else None


def parse_time(value: Any) -> datetime | None:
    """An aware UTC datetime from ISO 8601 text or epoch seconds/milliseconds/nanoseconds."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, int | float):
            seconds = float(value)
            while seconds > 1e11:  # milliseconds, microseconds, nanoseconds
                seconds /= 1000
            return datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, str) and value.strip():
            text = value.strip()
            if text.isdigit():
                return parse_time(int(text))
            parsed = _iso(text) if text[:4].isdigit() and text[4:5] == "-" else _legacy(text)
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def _iso(text: str) -> datetime:
    """ISO 8601, also with more than six fractional digits (Falco, .NET: nanoseconds)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        head, dot, rest = text.partition(".")
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if not dot or digits <= 6:
            raise
        return datetime.fromisoformat(f"{head}.{rest[:6]}{rest[digits:]}")


def _legacy(text: str) -> datetime:
    """``2016 Jan 29 13:08:36`` (OSSEC, Wazuh 2.x), else ISO 8601."""
    try:
        return datetime.strptime(text, "%Y %b %d %H:%M:%S")
    except ValueError:
        return _iso(text)


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
