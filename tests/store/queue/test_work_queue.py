"""The work queue on real SQLite and real PostgreSQL: priority, thread order, limits,
leases and takeover, stop, and several replicas claiming at once. Leases and retry
delays are moved past by the test (``AheadQueue``), never slept through."""

from __future__ import annotations

import asyncio
from typing import Any

from store.db.engine import Database
from store.queue.work import Job, QueueLimits, WorkQueue, priority
from tests.pg_server import PostgresServer
from tests.queue_clock import LEASE_S, AheadQueue


async def mention(q: WorkQueue, thread: str, user: str = "U1", channel: str = "C1") -> int:
    submitted = await q.submit(Job("mention", channel, thread, "hi", requester=user))
    assert submitted.id is not None, submitted.refused
    return submitted.id


async def alert(q: WorkQueue, thread: str, severity: str, channel: str = "CALERT") -> int:
    submitted = await q.submit(
        Job("alert", channel, thread, alert_id=thread, priority=priority("alert", severity))
    )
    assert submitted.id is not None
    return submitted.id


async def test_a_critical_alert_starts_before_one_users_flood(any_db: Database) -> None:
    q = WorkQueue(
        any_db,
        QueueLimits(running=3, running_per_user=2, queued_per_user=50, queued_per_channel=50),
    )
    for i in range(30):
        await mention(q, f"1.{i:03d}")
    critical = await alert(q, "9.000", "critical")
    low = await alert(q, "9.001", "low")
    started = (await q.claim("r1", 3)).started
    assert [w.id for w in started][:2] == [critical, low]
    assert len([w for w in started if w.requester == "U1"]) == 1  # the third slot
    # the user's limit holds while their runs run
    assert [w.kind for w in (await q.claim("r1", 3)).started] == []
    assert await q.finish(critical, "r1", "done")
    assert [w.requester for w in (await q.claim("r1", 3)).started] == ["U1"]


async def test_one_thread_runs_its_work_in_order(any_db: Database) -> None:
    q = WorkQueue(any_db)
    first = await mention(q, "1.0")
    # a later, more urgent row in the same thread waits for the first
    same = await q.submit(Job("alert", "C1", "1.0", priority=priority("alert", "critical")))
    started = (await q.claim("r1", 3)).started
    assert [w.id for w in started] == [first]
    assert (await q.claim("r1", 3)).started == []
    await q.finish(first, "r1", "done")
    assert [w.id for w in (await q.claim("r1", 3)).started] == [same.id]


async def test_queued_limits_per_user_and_channel(any_db: Database) -> None:
    q = WorkQueue(any_db, QueueLimits(queued_per_user=2, queued_per_channel=3))
    await mention(q, "1.1")
    await mention(q, "1.2")
    refused = await q.submit(Job("mention", "C1", "1.3", requester="U1"))
    assert refused.id is None and refused.refused == "user"
    await mention(q, "1.4", user="U2")
    refused = await q.submit(Job("mention", "C1", "1.5", requester="U3"))
    assert refused.refused == "channel"
    assert (await q.submit(Job("mention", "C2", "1.6", requester="U3"))).id
    await alert(q, "2.0", "high", channel="C1")  # alerts are never refused here


async def test_an_expired_lease_is_taken_over_then_given_up(any_db: Database) -> None:
    q = AheadQueue(any_db, lease_s=LEASE_S, max_attempts=2)
    row = await mention(q, "1.0")
    assert [w.id for w in (await q.claim("dead", 1)).started] == [row]
    assert (await q.claim("alive", 1)).started == []  # the lease holds
    q.move(LEASE_S + 1)
    taken = (await q.claim("alive", 1)).started
    assert [(w.id, w.attempts, w.posted.get("restarted")) for w in taken] == [(row, 2, True)]
    assert not await q.finish(row, "dead", "done")  # the dead owner's late finish is refused
    q.move(LEASE_S + 1)
    claimed = await q.claim("third", 1)
    assert claimed.started == [] and [w.id for w in claimed.given_up] == [row]
    stored = await q.get(row)
    assert stored is not None and stored.state == "failed"


async def test_renewing_keeps_the_lease_and_reports_stop_requests(any_db: Database) -> None:
    q = AheadQueue(any_db, lease_s=LEASE_S)
    a, b = await mention(q, "1.0"), await mention(q, "2.0")
    assert len((await q.claim("r1", 2)).started) == 2
    for _ in range(3):
        q.move(LEASE_S / 2)
        ours, stop = await q.renew("r1", [a, b])
        assert ours == {a, b} and stop == set()
    # 1.5 leases after the claim: without the renewals both rows would be taken over
    assert (await q.claim("r2", 2)).started == []
    cancelled, asked = await q.stop("slack:C1:1.0")
    assert cancelled == [] and [w.id for w in asked] == [a]
    assert (await q.renew("r1", [a, b]))[1] == {a}
    assert await q.finish(a, "r1", "cancelled")
    assert not await q.finish(a, "r1", "done")  # one outcome per run


async def test_a_replica_that_lost_its_row_can_neither_keep_nor_extend_it(
    any_db: Database,
) -> None:
    """A stalled replica wakes after its row was taken over: its renewal reports the row
    as no longer its own and leaves the new owner's lease as it was."""
    q = AheadQueue(any_db, lease_s=LEASE_S)
    row = await mention(q, "1.0")
    assert [w.id for w in (await q.claim("stalled", 1)).started] == [row]
    q.move(LEASE_S + 1)
    assert [w.id for w in (await q.claim("alive", 1)).started] == [row]
    q.move(LEASE_S * 0.75)
    assert await q.renew("stalled", [row]) == (set(), set())
    q.move(LEASE_S * 0.5)  # past the lease "alive" took; "alive" did not renew it
    assert [w.id for w in (await q.claim("third", 1)).started] == [row]
    assert await q.renew("alive", [row]) == (set(), set())
    assert (await q.get(row)).owner == "third"  # type: ignore[union-attr]


async def test_renewing_some_rows_touches_those_rows_only(any_db: Database) -> None:
    """A renewal names its rows: the others keep their leases, a settled row stays settled."""
    q = AheadQueue(any_db, lease_s=LEASE_S)
    a, b = await mention(q, "1.0"), await mention(q, "2.0")
    c = await mention(q, "3.0", user="U2")  # one user runs two at most
    assert len((await q.claim("r1", 3)).started) == 3
    assert await q.finish(c, "r1", "done")
    q.move(LEASE_S * 0.75)
    assert await q.renew("r1", [a, c]) == ({a}, set())
    q.move(LEASE_S * 0.5)  # past b's lease (not renewed), within a's
    assert [w.id for w in (await q.claim("r2", 3)).started] == [b]
    done = await q.get(c)
    assert done is not None and (done.state, done.lease_until) == ("done", None)


async def test_stop_cancels_queued_rows_and_release_hands_running_ones_back(
    any_db: Database,
) -> None:
    q = WorkQueue(any_db, QueueLimits(running=1))
    a, b = await mention(q, "1.0"), await mention(q, "2.0", user="U2")
    assert [w.id for w in (await q.claim("r1", 1)).started] == [a]
    cancelled, _ = await q.stop("slack:C1:2.0")
    assert [w.id for w in cancelled] == [b]
    assert await q.release("r1") == 1
    again = (await q.claim("r2", 1)).started
    assert [(w.id, w.attempts) for w in again] == [(a, 1)]  # a release is not an attempt
    assert await q.counts() == {"queued": 0, "running": 1}


async def test_retry_later_waits_then_runs_again(any_db: Database) -> None:
    q = AheadQueue(any_db, max_attempts=2)
    row = await mention(q, "1.0")
    await q.claim("r1", 1)
    assert await q.retry_later(row, "r1", 20.0, "model quota")
    assert (await q.claim("r1", 1)).started == []
    q.move(10.0)
    assert (await q.claim("r1", 1)).started == []  # not before the delay is over
    q.move(11.0)
    assert [w.id for w in (await q.claim("r1", 1)).started] == [row]
    assert not await q.retry_later(row, "r1", 20.0, "model quota")  # last attempt: failed
    stored = await q.get(row)
    assert stored is not None and stored.state == "failed" and stored.error == "model quota"


async def test_three_replicas_claiming_at_once_keep_every_limit(postgres: PostgresServer) -> None:
    url = postgres.create_database("wq_replicas")
    replicas = [Database(url) for _ in range(3)]
    await replicas[0].create()
    limits = QueueLimits(running=4, running_per_user=1, queued_per_user=100, queued_per_channel=100)
    queues = [WorkQueue(r, limits) for r in replicas]
    for i in range(40):
        await mention(queues[0], f"{i % 10}.0", user=f"U{i % 6}")
    for i in range(20):
        await alert(queues[0], f"a{i}.0", "high")
    starts: list[tuple[str, Any]] = []
    running_seen: list[int] = []
    # Each replica's first claim (one row each, within the limit of 4) is made before any
    # replica finishes a row: on a fast machine one replica could otherwise run them all.
    first_claims = asyncio.Barrier(len(queues))

    async def replica(name: str, q: WorkQueue) -> None:
        started = (await q.claim(name, 1)).started
        assert len(started) == 1
        starts.extend((name, w) for w in started)
        await first_claims.wait()
        assert await q.finish(started[0].id, name, "done")
        idle = 0
        while idle < 5:
            started = (await q.claim(name, 2)).started
            idle = 0 if started else idle + 1
            running_seen.append((await q.counts())["running"])
            starts.extend((name, w) for w in started)
            await asyncio.sleep(0.01)
            for w in started:
                assert await q.finish(w.id, name, "done")

    await asyncio.gather(*(replica(f"r{i}", q) for i, q in enumerate(queues)))
    ids = [w.id for _, w in starts]
    assert len(ids) == 60 and len(set(ids)) == 60  # each row ran exactly once
    assert max(running_seen) <= 4
    assert {name for name, _ in starts} == {"r0", "r1", "r2"}
    for r in replicas:
        await r.close()


async def test_a_run_whose_row_its_own_replica_took_over_records_nothing(db: Database) -> None:
    queue = AheadQueue(db, lease_s=LEASE_S)
    submitted = await queue.submit(Job("mention", "C1", "1.0", "hi"))
    assert submitted.id is not None
    [first] = (await queue.claim("r1", 1)).started
    queue.move(LEASE_S + 1)  # r1's event loop stalled past its own lease ...
    [second] = (await queue.claim("r1", 1)).started  # ... its next claim took the row over
    assert (first.attempts, second.attempts) == (1, 2)
    # the stalled first run may not record (and so not post) its outcome any more
    assert not await queue.record_post(first.id, "outcome_ts", ["1.1"], owner="r1", attempt=1)
    assert await queue.record_post(first.id, "outcome_ts", ["1.2"], owner="r1", attempt=2)
