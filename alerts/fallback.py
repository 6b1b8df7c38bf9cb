"""What socbot makes of a payload no format knows: the raw JSON and a readable title.

The title is the best text found under a title-like key (``title``, ``summary``,
``message``, ``name``...) at the shallowest depth, read from the innermost layer
outwards; a value that is no title (an id, a GUID, a ``CONSTANT_NAME``, a single
word such as ``User``) is passed over. Without one the title says the alert is
unrecognised, never a bare key name.
"""

from __future__ import annotations

import re
from typing import Any

from alerts.catalogue import Fields, Parsed
from alerts.entities import clean_entities, walk_entities
from alerts.model import normalize_severity, parse_time

MAX_DEPTH = 4
_TITLE_KEYS = (
    "title",
    "summary",
    "alertname",
    "alert_name",
    "rulename",
    "rule_name",
    "displayname",
    "display_name",
    "name",
    "subject",
    "rule",
    "message",
    "msg",
    "description",
    "output",
    "text",
    "detail-type",
    "category",
    "event",
)
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
_SEVERITY_KEYS = ("severity", "level", "priority")
_ID_LIKE = re.compile(
    r"^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f:_-]{16,}"
    r"|[A-Z0-9]+(?:_[A-Z0-9]+)+|[\w.:/-]*\d[\w.:/-]*|[\w-]+)$",
    re.I,
)


def unknown_alert(parsed: Parsed, source_hint: str | None) -> Fields:
    """Fields for a payload no format matched."""
    raw = parsed.raw
    layers = list(reversed(parsed.unwrapped.layers))
    top = {str(k).lower(): v for k, v in layers[0].items()}
    hints = parsed.unwrapped.hints
    title = next((t for layer in layers if (t := best_title(layer))), None)
    title = title or _text(hints.get("title"))
    source = (source_hint or "").strip().lower() or "unknown"
    times = [top.get(k) for k in _TIME_KEYS] + [hints.get("time")]
    return Fields(
        source=source,
        format=None,
        title=title or f"Unrecognised {'' if source == 'unknown' else source + ' '}alert",
        severity=next((s for k in _SEVERITY_KEYS if (s := normalize_severity(top.get(k)))), None),
        event_time=next((when for v in times if (when := parse_time(v))), None),
        entities=clean_entities(walk_entities(raw)),
    )


def best_title(data: dict[str, Any]) -> str | None:
    """The shallowest meaningful text under a title-like key, or None."""
    level: list[dict[str, Any]] = [data]
    for _ in range(MAX_DEPTH):
        for key in _TITLE_KEYS:
            for layer in level:
                text = _text(_lowered(layer).get(key))
                if text and _meaningful(text):
                    return text
        level = [c for layer in level for c in _children(layer)]
        if not level:
            break
    return None


def _children(data: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for value in data.values():
        if isinstance(value, dict):
            out.append(value)
        elif isinstance(value, list):
            out += [v for v in value[:5] if isinstance(v, dict)]
    return out


def _lowered(data: dict[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in data.items()}


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return " ".join(value.split()) or None


def _meaningful(text: str) -> bool:
    """Words a person would read as a title: not an id, GUID, constant or lone word."""
    long_enough = len(text) >= 12 or len(text.split()) >= 3
    return long_enough and not _ID_LIKE.match(text) and any(c.isalpha() for c in text)
