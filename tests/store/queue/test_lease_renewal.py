"""Leases on PostgreSQL while claims queue for the claim lock (every replica's claims
take turns under one advisory lock; on a busy database a claim can wait for seconds).

Found by the replica-process storm (tests/bot/scenarios/test_replica_processes.py): a lease counted
from before the wait was already over when the claim committed, and renewals queued
behind claims, so live replicas' runs were taken over and restarted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from sqlalchemy import text

from store.db.engine import Database
from store.queue._claims import _CLAIM_LOCK
from store.queue.work import Job, QueueLimits, WorkQueue
from store.schema import utcnow
from tests.bot.work.test_worker import GatedRunner, NoticeRecorder, threads, worker
from tests.fakes.signals import WAIT_S, writes
from tests.queue_clock import LEASE_S, AheadQueue

RENEWED_LEASE_S = 3.0  # renewed every second: a replica would have to stall for 2 s to lose it
WAITING = text(
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


@asynccontextmanager
async def claim_lock_held(db: Database) -> AsyncIterator[None]:
    """Another replica's claim holds the claim lock for the duration of the block."""
    async with db.engine.connect() as connection:
        await connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": _CLAIM_LOCK})
        try:
            yield
        finally:
            await connection.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": _CLAIM_LOCK})


async def claims_waiting(db: Database) -> int:
    async with db.engine.connect() as connection:
        return int(await connection.scalar(WAITING) or 0)


async def a_claim_waits(db: Database) -> None:
    """Return once a claim waits for the claim lock. No event tells it (the wait is inside
    PostgreSQL): its lock table is polled, briefly, as the claim is already on its way."""
    async with asyncio.timeout(WAIT_S):
        while True:
            if await claims_waiting(db):
                return
            await asyncio.sleep(0.01)


async def test_a_lease_starts_when_the_claim_gets_the_lock(pg_db: Database) -> None:
    queue = AheadQueue(pg_db, lease_s=LEASE_S)
    await queue.submit(Job("mention", "C1", "1.0001", "hi", requester="U1"))
    async with claim_lock_held(pg_db):
        claim = asyncio.create_task(queue.claim("r1", 1))
        await a_claim_waits(pg_db)
        queue.move(LEASE_S * 1.5)  # the claim waits longer than a lease
        assert not claim.done()
        lock_released = utcnow() + queue.ahead
    (work,) = (await claim).started
    row = await queue.get(work.id)
    assert row is not None and row.lease_until is not None
    assert row.lease_until >= lock_released + timedelta(seconds=LEASE_S * 0.9)
    assert (await queue.claim("r2", 1)).started == []  # not "expired" at birth


async def test_leases_are_renewed_while_a_claim_waits_for_the_lock(pg_db: Database) -> None:
    queue = WorkQueue(pg_db, QueueLimits(running=2), lease_s=RENEWED_LEASE_S)
    runner, reporter = GatedRunner(), NoticeRecorder()
    coordinator = worker(queue, runner, reporter)
    (thread,) = threads(1)
    assert await coordinator.submit(thread, Job("mention", "C1", thread.thread_ts, "hi"))
    await runner.ran_once(thread)
    (row,) = await queue.active(thread.conversation_id)
    async with claim_lock_held(pg_db):
        coordinator.nudge()  # its next claim waits for the lock ...
        await a_claim_waits(pg_db)
        held_from = utcnow()

        async def renewed_meanwhile() -> bool:
            stored = await queue.get(row.id)
            assert stored is not None and stored.lease_until is not None
            return stored.lease_until > held_from + timedelta(seconds=RENEWED_LEASE_S)

        await writes(pg_db).until(renewed_meanwhile)  # ... and the lease is renewed meanwhile
        assert await claims_waiting(pg_db) == 1  # the claim still waits
    assert (await queue.claim("r2", 1)).started == []  # never taken from a live replica
    runner.gate.set()
    await coordinator.wait_idle()
    assert runner.ran == [thread] and reporter.texts == []
    await coordinator.shutdown()
