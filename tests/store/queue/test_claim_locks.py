"""A claim on PostgreSQL skips the rows another transaction holds (``FOR UPDATE SKIP
LOCKED``): a ``stop`` or a renewal writing a row never stalls every replica's claims,
and no claim overwrites a row while someone else changes it."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from store.db.engine import Database
from store.queue.work import Job, WorkQueue, priority
from tests.fakes.signals import WAIT_S
from tests.queue_clock import LEASE_S, AheadQueue

LOCK_ROW = text("SELECT id FROM work WHERE id = :id FOR UPDATE")


async def alert(q: WorkQueue, ts: str, severity: str) -> int:
    submitted = await q.submit(Job("alert", "CA", ts, priority=priority("alert", severity)))
    assert submitted.id is not None
    return submitted.id


async def test_a_claim_skips_the_rows_another_transaction_holds(pg_db: Database) -> None:
    q = AheadQueue(pg_db, lease_s=LEASE_S)
    held = await alert(q, "1.0", "critical")
    free = await alert(q, "2.0", "low")
    async with pg_db.engine.connect() as other:
        await other.execute(LOCK_ROW, {"id": held})
        async with asyncio.timeout(WAIT_S):  # a claim that waited for the lock: stalled
            claimed = await q.claim("r1", 2)
        assert [w.id for w in claimed.started] == [free]
        await other.rollback()
    assert [w.id for w in (await q.claim("r1", 2)).started] == [held]
    # both leases lapse; the takeover skips the expired row another transaction holds
    q.move(LEASE_S + 1)
    async with pg_db.engine.connect() as other:
        await other.execute(LOCK_ROW, {"id": held})
        async with asyncio.timeout(WAIT_S):
            claimed = await q.claim("r2", 2)
        assert [(w.id, w.attempts) for w in claimed.started] == [(free, 2)]
        await other.rollback()
    stored = await q.get(held)
    assert stored is not None and (stored.state, stored.owner) == ("running", "r1")
    assert [w.id for w in (await q.claim("r2", 2)).started] == [held]


async def test_leases_on_postgresql_are_utc_whatever_the_local_time_zone(
    pg_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica in New York writes the same instants as one in UTC (an aware clock)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        q = WorkQueue(pg_db, lease_s=60)
        work = await alert(q, "1.0", "high")
        before = datetime.now(UTC)
        assert [w.id for w in (await q.claim("r1", 1)).started] == [work]
        after = datetime.now(UTC)
        stored = await q.get(work)
        assert stored is not None and stored.lease_until is not None
        lease = timedelta(seconds=60)
        assert before + lease <= stored.lease_until <= after + lease
    finally:
        monkeypatch.undo()
        time.tzset()
