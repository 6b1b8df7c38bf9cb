"""Cases (and their concluded runs) for the cases list, stored in bulk: the page and store
tests' few, ``bench/bench_cases_page.py``'s 100,000. Invented data."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert

from store.db.engine import Database
from store.schema import CaseRow, CaseStatus, Investigation, InvestigationStatus

START = datetime(2026, 11, 1, tzinfo=UTC)
BATCH = 2000


@dataclass(frozen=True)
class Spec:
    """One case: opened ``minutes`` after ``START`` in ``channel`` (None: a terminal run)."""

    n: int
    channel: str | None = "CALERTS1"
    severity: str | None = "high"
    status: str = CaseStatus.OPEN
    owner: str | None = None
    disposition: str | None = None
    title: str = ""
    host: str | None = None
    minutes: float | None = None  # default: n

    @property
    def run_id(self) -> str:
        return f"run-{self.n:06d}"

    @property
    def opened(self) -> datetime:
        return START + timedelta(minutes=self.n if self.minutes is None else self.minutes)


def rows(spec: Spec) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run and case rows of ``spec``."""
    ts = f"{1_700_000_000 + spec.n}.000100"
    conversation = f"slack:{spec.channel}:{ts}" if spec.channel else f"cli-{spec.n}"
    entities = [{"kind": "host", "value": spec.host}] if spec.host else []
    title = spec.title or f"Odd login number {spec.n}"
    run = {
        "id": spec.run_id,
        "conversation_id": conversation,
        "kind": "alert",
        "status": InvestigationStatus.CONCLUDED,
        "input": "investigate",
        "verdict": "true_positive",
        "severity": spec.severity,
        "record": {"alert": {"title": title, "entities": entities}},
        "created_at": spec.opened,
        "finished_at": spec.opened + timedelta(seconds=90),
    }
    resolved = spec.status == CaseStatus.RESOLVED
    case = {
        "id": spec.n,
        "investigation_id": spec.run_id,
        "alert_id": f"alert-{spec.n}",
        "channel": spec.channel,
        "thread_ts": ts if spec.channel else None,
        "title": title,
        "status": spec.status,
        "revision": 1,
        "owner": spec.owner,
        "disposition": spec.disposition,
        "socbot_verdict": "true_positive",
        "severity": spec.severity,
        "created_at": spec.opened,
        "acknowledged_at": spec.opened + timedelta(minutes=5) if spec.owner else None,
        "resolved_at": spec.opened + timedelta(hours=2) if resolved else None,
        "updated_at": spec.opened,
    }
    return run, case


async def store(db: Database, specs: Iterable[Spec]) -> None:
    """Insert the runs and cases, ``BATCH`` a statement."""
    batch: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for spec in specs:
        batch.append(rows(spec))
        if len(batch) == BATCH:
            await _insert(db, batch)
            batch = []
    if batch:
        await _insert(db, batch)


async def _insert(db: Database, batch: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    async with db.session() as session:
        await session.execute(insert(Investigation), [run for run, _ in batch])
        await session.execute(insert(CaseRow), [case for _, case in batch])
