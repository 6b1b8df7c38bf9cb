"""The period report computed by scanning the cases (the computation before the tally, kept
only here): what the tally-based ``store.cases.report.period_report`` must equal."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from core.quality import nearest_rank
from store.cases import quality
from store.cases.report import build
from store.cases.tally import days
from store.db.engine import Database
from store.schema import CaseRow, CaseStatus
from store.schema.case_tally import bucket, middle


def _aware(at: datetime | None) -> datetime | None:
    return at.replace(tzinfo=UTC) if at is not None and at.tzinfo is None else at


async def spans(db: Database, since: datetime, until: datetime) -> dict[str, list[float]]:
    """The exact seconds to acknowledge and to a person's resolution, one per case."""
    query = select(
        CaseRow.created_at,
        CaseRow.acknowledged_at,
        CaseRow.resolved_at,
        CaseRow.status,
        CaseRow.auto_resolved,
    ).where(CaseRow.created_at >= since, CaseRow.created_at < until)
    found: dict[str, list[float]] = {"acknowledge": [], "resolve": []}
    async with db.session() as session:
        for opened, ack, done, status, auto in (await session.execute(query)).all():
            start = _aware(opened)
            assert start is not None
            if ack is not None:
                found["acknowledge"].append((_aware(ack) - start).total_seconds())  # type: ignore[operator]
            if status == CaseStatus.RESOLVED and not auto and done is not None:
                found["resolve"].append((_aware(done) - start).total_seconds())  # type: ignore[operator]
    return found


def exact(values: list[float], p: float) -> float | None:
    """The nearest rank, exactly."""
    return sorted(values)[nearest_rank(p, len(values))] if values else None


def bucketed(values: list[float], p: float) -> float | None:
    """The nearest rank as the tally's histogram gives it: its bucket's middle."""
    found = exact(values, p)
    return None if found is None else round(middle(bucket(found)), 1)


async def scan_report(db: Database, since: datetime, until: datetime) -> dict[str, Any]:
    """The report from one grouped scan of the cases, their counts and their spans."""
    since, until = days(since, until)
    found = await quality.outcomes(db, since, until)
    query = select(CaseRow.status, CaseRow.disposition).where(
        CaseRow.created_at >= since, CaseRow.created_at < until
    )
    async with db.session() as session:
        counts = Counter((str(s), d) for s, d in (await session.execute(query)).all())
    took = await spans(db, since, until)
    missed = await quality.disagreements(db, since, until)
    return build(
        {"all": found, "playbook": found, "rule": found},
        dict(counts),
        {p: bucketed(took["acknowledge"], p) for p in (0.5, 0.9)},
        {p: bucketed(took["resolve"], p) for p in (0.5, 0.9)},
        [d.as_dict() for d in missed],
        since,
        until,
    )


def same(a: Any, b: Any, where: str = "") -> None:
    """``a`` equals ``b``: counts and text exactly, sums of floats to 1e-9."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{k}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (where, a, b)
    else:
        assert a == b and type(a) is type(b), (where, a, b)
