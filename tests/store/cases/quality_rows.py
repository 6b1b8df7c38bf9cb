"""Cases stored from ``core.quality.Outcome`` rows (with their runs' usage, wall clock and
holdout), in bulk: the seeded 200 for the tests, 100,000 for ``bench/bench_quality.py``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import insert

from core.quality import Outcome
from store.db.engine import Database
from store.schema import CaseRow, CaseStatus, Investigation, InvestigationStatus, run_figures


def opened_at(outcome: Outcome, k: int) -> datetime:
    """A time inside the outcome's ISO week (Wednesday, minutes apart by ``k``)."""
    year, _, week = outcome.week.partition("-W")
    day = date.fromisocalendar(int(year), int(week), 3)
    return datetime(day.year, day.month, day.day, 8, tzinfo=UTC) + timedelta(seconds=7 * k)


def rows(
    outcome: Outcome, k: int, *, ack_s: float, resolve_s: float, at: datetime | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The investigation and case rows of one case (``outcome.count`` must be 1), opened
    ``at`` (default: inside its week)."""
    at = at or opened_at(outcome, k)
    run_id = f"inv-{outcome.case_id if outcome.case_id is not None else k}"
    decided = outcome.disposition is not None
    ts = f"{1_700_000_000 + k}.000100"
    run: dict[str, Any] = {
        "id": run_id,
        "conversation_id": f"slack:CALERTS1:{ts}",
        "kind": "alert",
        "status": InvestigationStatus.CONCLUDED,
        "input": "investigate",
        "verdict": outcome.verdict,
        "record": {"playbook": {"holdout": True}} if outcome.holdout else {"playbook": {}},
        "usage": {"total_tokens": outcome.tokens, "cost_usd": outcome.cost_usd},
        "created_at": at,
        "finished_at": at + timedelta(seconds=outcome.seconds),
    }
    case = {
        "investigation_id": run_id,
        "alert_id": f"alert-{run_id}",
        "channel": "CALERTS1",
        "thread_ts": ts,
        "title": f"case {k}",
        "status": CaseStatus.RESOLVED if decided else CaseStatus.OPEN,
        "revision": 2 if decided else 1,
        "owner": None if outcome.auto_resolved or not decided else "U0ANALYST",
        "disposition": outcome.disposition,
        "socbot_verdict": outcome.verdict,
        "source": outcome.source,
        "format": outcome.format,
        "model": outcome.model,
        "policy_rule": None if outcome.rule == "none" else outcome.rule,
        "severity": outcome.severity,
        "used_bullets": outcome.bullets,
        "auto_resolved": outcome.auto_resolved,
        "audit": outcome.audited,
        "audit_disposition": outcome.audit_disposition,
        **run_figures(run["usage"], run["record"], at, run["finished_at"]),
        "created_at": at,
        "acknowledged_at": at + timedelta(seconds=ack_s)
        if decided and not outcome.auto_resolved
        else None,
        "resolved_at": at + timedelta(seconds=resolve_s) if decided else None,
        "updated_at": at,
    }
    return run, case


async def store(
    db: Database,
    outcomes: Iterable[Outcome],
    *,
    ack_s: Any = None,
    resolve_s: Any = None,
    at: Any = None,
) -> None:
    """Insert the cases, 2,000 rows a statement; ``ack_s(k)`` and ``resolve_s(k)`` give the
    k-th case's time to acknowledge and to resolve (default: k minutes and k hours)."""
    ack = ack_s or (lambda k: 60.0 * (k + 1))
    resolve = resolve_s or (lambda k: 3600.0 * (k + 1))
    batch: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for k, outcome in enumerate(outcomes):
        when = at(k) if at else None
        batch.append(rows(outcome, k, ack_s=ack(k), resolve_s=resolve(k), at=when))
        if len(batch) == 2000:
            await _insert(db, batch)
            batch = []
    if batch:
        await _insert(db, batch)


async def _insert(db: Database, batch: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    async with db.session() as session:
        await session.execute(insert(Investigation), [run for run, _ in batch])
        await session.execute(insert(CaseRow), [case for _, case in batch])
