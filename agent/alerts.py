"""The normalized alert the engine investigates, whatever system sent it.

``parse_alert`` maps the known formats — an Amazon GuardDuty finding (bare, in
``{"Findings": [...]}`` or in an EventBridge envelope), a Google Security Command
Center finding or notification (also inside a Pub/Sub push envelope), a generic
``{title, severity, ...}`` — to title, severity, source, time and indicators. Anything
else is kept as raw JSON with a best-effort title.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

IndicatorKind = Literal[
    "ipv4", "ipv6", "domain", "url", "md5", "sha1", "sha256", "email", "principal"
]


class Indicator(BaseModel):
    kind: IndicatorKind
    value: str
    private: bool = Field(
        False, description="not public: RFC 1918/loopback/link-local IP or internal domain"
    )


class Alert(BaseModel):
    id: str = Field(description="our id (uuid hex)")
    source: str = Field(description="guardduty | scc | generic | slack | ...")
    title: str
    severity: str | None = None  # info | low | medium | high | critical, when known
    event_time: datetime | None = None
    indicators: list[Indicator] = Field(default_factory=list)
    raw: dict[str, Any]


Severity = Literal["info", "low", "medium", "high", "critical"]
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
_TIME_KEYS = (
    "event_time",
    "eventtime",
    "time",
    "timestamp",
    "@timestamp",
    "created_at",
    "createdat",
    "createtime",
    "date",
)
_TITLE_KEYS = (
    "title",
    "name",
    "summary",
    "alert_name",
    "alertname",
    "rule_name",
    "rule",
    "message",
    "description",
    "detail-type",
    "category",
    "type",
    "event",
)
_SEVERITY_KEYS = ("severity", "level", "priority")
_HINT_ALIASES = {
    "aws": "guardduty",
    "aws.guardduty": "guardduty",
    "gcp": "scc",
    "security-command-center": "scc",
    "securitycommandcenter": "scc",
}
MAX_TITLE = 200


class _Parsed(BaseModel):
    source: str
    title: str
    severity: Severity | None
    event_time: datetime | None


def parse_alert(data: dict[str, Any], source_hint: str | None = None) -> Alert:
    """Normalise one alert payload; never fails on an unknown shape.

    ``source_hint`` (``guardduty``, ``scc``, ``generic``...) tries that format first;
    a hint naming no known format becomes the source of an unrecognised payload.
    """
    # Imported here: tools.indicators imports this module's models.
    from tools.indicators import extract_indicators

    hint = (source_hint or "").strip().lower() or None
    hint = _HINT_ALIASES.get(hint, hint) if hint else None
    data = _unwrap_pubsub(data)
    order = sorted(_PARSERS, key=lambda name: name != hint)
    parsed = next((p for p in (_PARSERS[n](data) for n in order) if p is not None), None)
    if parsed is None:
        parsed = _unknown(data, hint)
    return Alert(
        id=uuid.uuid4().hex,
        source=parsed.source,
        title=_one_line(parsed.title),
        severity=parsed.severity,
        event_time=parsed.event_time,
        indicators=extract_indicators(data),
        raw=data,
    )


def normalize_severity(value: Any) -> Severity | None:
    """info/low/medium/high/critical from a word or a 0-10 (GuardDuty) / 0-100 score."""
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
    if not isinstance(value, int | float) or value < 0 or value > 100:
        return None
    score = float(value) if value <= 10 else float(value) / 10
    if score < 1:
        return "info"
    if score < 4:
        return "low"
    if score < 7:
        return "medium"
    return "high" if score < 9 else "critical"


def parse_time(value: Any) -> datetime | None:
    """An aware UTC datetime from ISO 8601 text or epoch seconds/milliseconds."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, str) and value.strip():
            text = value.strip()
            if text.isdigit():
                return parse_time(int(text))
            parsed = datetime.fromisoformat(text)
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def _guardduty(data: dict[str, Any]) -> _Parsed | None:
    finding: Any = data
    more = 0
    envelope_time = None
    if data.get("detail-type") == "GuardDuty Finding" or data.get("source") == "aws.guardduty":
        finding, envelope_time = data.get("detail"), data.get("time")
    elif isinstance(data.get("Findings"), list) and data["Findings"]:
        finding, more = data["Findings"][0], len(data["Findings"]) - 1
    if not isinstance(finding, dict):
        return None
    f = _lower_keys(finding)
    service = _lower_keys(f.get("service"))
    arn = str(f.get("arn", ""))
    from_guardduty = (
        ":guardduty:" in arn or service.get("servicename") == "guardduty" or "detectorid" in service
    )
    if not ("type" in f and "severity" in f and from_guardduty):
        return None
    title = _text(f.get("title")) or _text(f.get("type")) or "GuardDuty finding"
    if more:
        title += f" (+{more} more finding{'s' if more > 1 else ''})"
    when = (
        service.get("eventfirstseen") or f.get("updatedat") or f.get("createdat") or envelope_time
    )
    return _Parsed(
        source="guardduty",
        title=title,
        severity=normalize_severity(f.get("severity")),
        event_time=parse_time(when),
    )


def _scc(data: dict[str, Any]) -> _Parsed | None:
    inner = data.get("finding")
    finding: dict[str, Any] = inner if isinstance(inner, dict) else data
    name = str(finding.get("name", ""))
    is_scc = "category" in finding and (
        "findingClass" in finding or "/sources/" in name or "notificationConfigName" in data
    )
    if not is_scc:
        return None
    title = _text(finding.get("category")) or "Security Command Center finding"
    resource = _lower_keys(data.get("resource"))
    target = (
        _text(resource.get("displayname"))
        or str(finding.get("resourceName", "")).rsplit("/", 1)[-1]
    )
    if target:
        title = f"{title} on {target}"
    return _Parsed(
        source="scc",
        title=title,
        severity=normalize_severity(finding.get("severity")),
        event_time=parse_time(finding.get("eventTime") or finding.get("createTime")),
    )


def _generic(data: dict[str, Any]) -> _Parsed | None:
    title = _text(data.get("title"))
    if not title:
        return None
    f = _lower_keys(data)
    return _Parsed(
        source="generic",
        title=title,
        severity=_first_severity(f),
        event_time=_first_time(f),
    )


def _unknown(data: dict[str, Any], hint: str | None) -> _Parsed:
    f = _lower_keys(data)
    nested = [_lower_keys(v) for v in data.values() if isinstance(v, dict)]
    title = next(
        (t for layer in (f, *nested) for k in _TITLE_KEYS if (t := _text(layer.get(k)))), None
    )
    if title is None:
        keys = ", ".join(list(data)[:5]) or "empty"
        title = f"Unrecognised alert ({keys})"
    return _Parsed(
        source=hint or "unknown",
        title=title,
        severity=_first_severity(f),
        event_time=_first_time(f),
    )


_PARSERS: dict[str, Callable[[dict[str, Any]], _Parsed | None]] = {
    "guardduty": _guardduty,
    "scc": _scc,
    "generic": _generic,
}


def _unwrap_pubsub(data: dict[str, Any]) -> dict[str, Any]:
    """The JSON inside a Pub/Sub push envelope ``{"message": {"data": base64}}``."""
    message = data.get("message")
    if not (isinstance(message, dict) and isinstance(message.get("data"), str)):
        return data
    try:
        inner = json.loads(base64.b64decode(message["data"], validate=True))
    except (binascii.Error, ValueError):
        return data
    return inner if isinstance(inner, dict) else data


def _first_severity(f: dict[str, Any]) -> Severity | None:
    return next((s for k in _SEVERITY_KEYS if (s := normalize_severity(f.get(k)))), None)


def _first_time(f: dict[str, Any]) -> datetime | None:
    return next((t for k in _TIME_KEYS if (t := parse_time(f.get(k)))), None)


def _lower_keys(value: Any) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in value.items()} if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 1] + "…"
