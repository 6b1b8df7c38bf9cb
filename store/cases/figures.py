"""The cases' live figures for ``/metrics``: open cases by severity, the oldest unowned
open case's age, and the time to acknowledge and to resolve (median and 90th percentile
over the cases opened in the last ``WINDOW``) — the whole database's, the same on every
replica. The period report's figures are the quality half's (``socbot report``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from store.cases.opening import SEVERITIES
from store.db.engine import Database
from store.schema import CaseRow, CaseStatus, utcnow

WINDOW = timedelta(days=7)
SAMPLE = 20_000  # durations read at most per figure (the newest)
UNKNOWN = "unknown"


@dataclass(frozen=True)
class LiveFigures:
    open_by_severity: dict[str, int] = field(default_factory=dict)
    oldest_unowned_s: float = 0.0
    acknowledge_s: dict[str, float] = field(default_factory=dict)  # "0.5", "0.9"
    resolve_s: dict[str, float] = field(default_factory=dict)


def quantiles(values: list[float]) -> dict[str, float]:
    """Median and 90th percentile (nearest rank); empty for no values."""
    if not values:
        return {}
    ordered = sorted(values)
    out: dict[str, float] = {}
    for percent in (50, 90):
        rank = -(-percent * len(ordered) // 100)  # ceil: the nearest rank
        out[str(percent / 100)] = ordered[max(rank, 1) - 1]
    return out


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


async def live(db: Database, *, now: datetime | None = None) -> LiveFigures:
    now = now or utcnow()
    since = now - WINDOW
    if db.is_sqlite:
        since = since.replace(tzinfo=None)
    unresolved = CaseRow.status != CaseStatus.RESOLVED
    async with db.reading() as session:
        rows = await session.execute(
            select(CaseRow.severity, func.count()).where(unresolved).group_by(CaseRow.severity)
        )
        by_severity: dict[str, int] = {}
        for severity, n in rows:  # a label is one of the known words
            word = severity if severity in SEVERITIES else UNKNOWN
            by_severity[word] = by_severity.get(word, 0) + int(n)
        oldest = await session.scalar(
            select(func.min(CaseRow.created_at)).where(unresolved, CaseRow.owner.is_(None))
        )
        durations: dict[str, list[float]] = {}
        for name, column in (("ack", CaseRow.acknowledged_at), ("resolve", CaseRow.resolved_at)):
            pairs = await session.execute(
                select(CaseRow.created_at, column)
                .where(CaseRow.created_at >= since, column.is_not(None))
                .order_by(CaseRow.created_at.desc())
                .limit(SAMPLE)
            )
            durations[name] = [
                max((_aware(done) - _aware(opened)).total_seconds(), 0.0)
                for opened, done in pairs
                if done is not None
            ]
    return LiveFigures(
        open_by_severity=by_severity,
        oldest_unowned_s=(now - _aware(oldest)).total_seconds() if oldest else 0.0,
        acknowledge_s=quantiles(durations["ack"]),
        resolve_s=quantiles(durations["resolve"]),
    )
