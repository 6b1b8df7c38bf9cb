"""Alert payload in, normalized ``Alert`` out, whatever system sent it.

``parse_alert`` unwraps transport envelopes (``alerts.envelopes``: SNS, EventBridge,
Pub/Sub push, ``Findings`` lists, Alertmanager groups), finds the first format of the
catalogue whose match rule fits (``alerts.catalogue``; the formats are TOML files in
``alerts/formats/`` plus the user's own) and reads title, severity, time, description
and entities with the format's JMESPath expressions. A payload no format knows is
kept as raw JSON with a best-effort title (``alerts.fallback``). Indicators (what the
tools look up) come from the whole payload (``alerts.indicators``) and from the
entities.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from alerts.catalogue import Catalogue, default_catalogue
from alerts.entities import entity_indicators
from alerts.fallback import unknown_alert
from alerts.indicators import MAX_INDICATORS, extract_indicators
from alerts.model import (
    MAX_DESCRIPTION,
    MAX_TITLE,
    Alert,
    Entity,
    EntityKind,
    Indicator,
    IndicatorKind,
    Severity,
    normalize_severity,
    one_line,
    parse_time,
    severity_word,
)

__all__ = [
    "Alert",
    "Entity",
    "EntityKind",
    "Indicator",
    "IndicatorKind",
    "Severity",
    "normalize_severity",
    "parse_alert",
    "parse_time",
    "severity_word",
]


def parse_alert(
    data: dict[str, Any],
    source_hint: str | None = None,
    *,
    catalogue: Catalogue | None = None,
    not_indicators: Iterable[str] = (),
) -> Alert:
    """Normalise one alert payload; never fails on an unknown shape.

    ``source_hint`` (``guardduty``, ``scc``, ``generic``...) tries the formats of that
    name or source first; a hint naming no format becomes the source of an unknown
    payload. ``not_indicators`` are names never reported (the forwarding bot's own).
    """
    parsed = (catalogue or default_catalogue()).parse(data, source_hint)
    fields = parsed.fields or unknown_alert(parsed, source_hint)
    excluded = {v.strip().lower() for v in not_indicators if v and v.strip()}
    entities = [e for e in fields.entities if e.value.lower() not in excluded]
    found = extract_indicators(parsed.raw) + entity_indicators(entities)
    indicators: dict[tuple[str, str], Indicator] = {}
    for indicator in found:
        if indicator.value.lower() not in excluded:
            indicators.setdefault((indicator.kind, indicator.value), indicator)
    return Alert(
        id=uuid.uuid4().hex,
        source=fields.source,
        title=one_line(fields.title, MAX_TITLE),
        severity=fields.severity,
        event_time=fields.event_time,
        indicators=list(indicators.values())[:MAX_INDICATORS],
        raw=parsed.raw,
        entities=entities,
        format=fields.format,
        description=one_line(fields.description, MAX_DESCRIPTION) if fields.description else None,
    )
