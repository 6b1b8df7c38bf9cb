"""One way to write a time on the pages: UTC with its zone, and how long ago; durations
as ``5 m 06 s``. Times stored without a zone (SQLite) are UTC."""

from __future__ import annotations

from datetime import UTC, datetime

from markupsafe import Markup


def utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def stamp(value: datetime | None, *, seconds: bool = True) -> str:
    """``2026-11-28 02:35:16 UTC`` (``—`` for none)."""
    at = utc(value)
    if at is None:
        return "—"
    return at.strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")


def span(seconds: float | None) -> str:
    """``840 ms``, ``3.2 s``, ``5 m 06 s``, ``2 h 05 m``, ``3 d 04 h``."""
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{max(seconds, 0) * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} m {whole % 60:02d} s"
    if whole < 86400:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} m"
    return f"{whole // 86400} d {whole % 86400 // 3600:02d} h"


def between(start: datetime | None, end: datetime | None) -> float | None:
    """Seconds from ``start`` to ``end`` (None when either is missing)."""
    a, b = utc(start), utc(end)
    return None if a is None or b is None else (b - a).total_seconds()


def ago(value: datetime | None, now: datetime | None = None) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``2 d ago``; ``in 5 min`` for the future."""
    gone = between(value, now or datetime.now(UTC))
    if gone is None:
        return ""
    later = gone < 0
    gone = abs(gone)
    if gone < 45:
        return "just now"
    if gone < 3600:
        words = f"{round(gone / 60)} min"
    elif gone < 86400:
        words = f"{round(gone / 3600)} h"
    else:
        words = f"{round(gone / 86400)} d"
    return f"in {words}" if later else f"{words} ago"


def when(value: datetime | None, *, seconds: bool = True) -> Markup:
    """``<time>`` with the UTC stamp and, beneath it in small type, how long ago."""
    at = utc(value)
    if at is None:
        return Markup("—")
    return Markup('<time datetime="{}">{}</time> <small class="ago">{}</small>').format(
        at.isoformat(), stamp(at, seconds=seconds), ago(at)
    )
