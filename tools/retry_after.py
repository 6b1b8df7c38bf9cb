"""``Retry-After`` header parsing, shared by the Gemini backend and the intel services."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or HTTP date).

    ``None`` when the header is absent or unreadable; a date in the past is 0.
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
