"""The work queue's rules one by one, on in-process SQLite and a clock the test sets.

Claim limits (global, per requester, per channel, per thread, the background pool),
priority order, ``not_before``, the candidate window, expiry (queued again or failed at
the last attempt), renewal only for the owner, finish once, release and stop: each
asserted exactly (states, owners, leases, attempts, errors), so that the mutation group
``work_queue`` (``scripts/mutation.py``) runs in seconds per mutant. The end-to-end
queue tests (several replicas, PostgreSQL) are in ``test_work_queue.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from store.db.engine import Database
from store.queue.work import Job, QueueLimits, WorkQueue, priority
from store.schema import WorkRow

NOW = datetime(2026, 3, 1, 12, 0, 0)  # naive UTC, as SQLite stores it
LEASE = timedelta(seconds=30)
# one requester's flood of mentions, every one held back by a per-requester limit of 0
FLOOD = QueueLimits(running=10, running_per_user=0, queued_per_user=99, queued_per_channel=99)


class FixedQueue(WorkQueue):
    """The real queue on a clock the test sets (``at``)."""

    at = NOW

    def _now(self) -> datetime:
        return self.at


async def submit(q: WorkQueue, job: Job) -> int:
    submitted = await q.submit(job)
    assert submitted.id is not None, submitted.refused
    return submitted.id


async def mention(q: WorkQueue, ts: str, user: str | None = "U1", channel: str = "C1") -> int:
    return await submit(q, Job("mention", channel, ts, "hi", requester=user))


async def alert(q: WorkQueue, ts: str, severity: str = "high", channel: str = "CA") -> int:
    return await submit(
        q, Job("alert", channel, ts, alert_id=ts, priority=priority("alert", severity))
    )


async def learn(q: WorkQueue, ts: str) -> int:
    return await submit(q, Job("learn", "CL", ts, priority=priority("learn")))


async def set_row(db: Database, row_id: int, **values: Any) -> None:
    async with db.session() as session:
        await session.execute(update(WorkRow).where(WorkRow.id == row_id).values(**values))


async def row(q: WorkQueue, row_id: int) -> WorkRow:
    found = await q.get(row_id)
    assert found is not None
    return found


async def started(q: WorkQueue, owner: str = "r1", free: int = 10) -> list[int]:
    return [w.id for w in (await q.claim(owner, free)).started]


# -- claim: who starts, in which order, within which limits


async def test_a_claim_starts_rows_by_priority_then_age_with_owner_lease_and_attempt(
    db: Database,
) -> None:
    q = FixedQueue(db, QueueLimits(running=4), lease_s=30)
    chat = await mention(q, "1.0")
    low = await alert(q, "2.0", "low")
    critical = await alert(q, "3.0", "critical")
    low2 = await alert(q, "4.0", "low")
    claimed = await q.claim("r1", 4)
    assert [w.id for w in claimed.started] == [critical, low, low2, chat]
    assert [(w.attempts, w.state) for w in claimed.started] == [(1, "running")] * 4
    assert claimed.queued == 0 and claimed.given_up == []
    stored = await row(q, critical)
    assert (stored.state, stored.owner, stored.attempts) == ("running", "r1", 1)
    assert stored.lease_until == NOW + LEASE


async def test_a_claim_starts_no_more_than_it_has_room_for(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=3))
    ids = [await alert(q, f"{i}.0") for i in range(5)]
    claimed = await q.claim("r1", 2)  # the replica's free slots
    assert [w.id for w in claimed.started] == ids[:2] and claimed.queued == 3
    claimed = await q.claim("r2", 5)  # the global limit: one more
    assert [w.id for w in claimed.started] == ids[2:3] and claimed.queued == 2
    assert await started(q, "r3", 5) == []
    assert await started(q, "r3", 0) == []
    assert await started(q, "r3", -1) == []


async def test_one_free_slot_starts_one_row_with_no_background_pool(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=1, running_background=0))
    first = await alert(q, "1.0")
    await learn(q, "2.0")
    assert await started(q, free=1) == [first]
    assert await q.finish(first, "r1", "done")
    assert await started(q, free=1) == []  # learning has no pool: it never runs


async def test_no_free_slot_starts_nothing(db: Database) -> None:
    q = FixedQueue(db)
    await alert(q, "1.0")
    assert await started(q, "r1", 0) == []
    assert await started(q, "r1", -2) == []
    assert len(await started(q, "r1", 1)) == 1


async def test_a_row_waits_for_the_earlier_active_rows_of_its_thread(db: Database) -> None:
    q = FixedQueue(db)
    first = await mention(q, "1.0")
    second = await submit(q, Job("followup", "C1", "1.0", "more", requester="U2"))
    critical = await submit(q, Job("alert", "C1", "1.0", priority=priority("alert", "critical")))
    other = await mention(q, "2.0", user="U3")
    assert await started(q) == [first, other]  # the thread's first, and another thread
    assert await q.finish(first, "r1", "done")  # a settled row blocks nothing
    assert await started(q) == [second]
    assert await q.finish(second, "r1", "failed", "boom")
    assert await started(q) == [critical]


async def test_the_limits_per_requester_and_per_channel_count_running_rows(db: Database) -> None:
    limits = QueueLimits(running=10, running_per_user=2, running_per_channel=3)
    q = FixedQueue(db, limits)
    u1 = [await mention(q, f"1.{i}") for i in range(3)]
    u2 = [await mention(q, f"2.{i}", user="U2") for i in range(2)]
    anonymous = [await mention(q, f"3.{i}", user=None, channel="C2") for i in range(4)]
    alerts = [await alert(q, f"4.{i}", channel="C1") for i in range(4)]
    # alerts have no per-channel limit; U1 runs two, U2 the channel's third; no requester:
    # only the channel limit
    assert await started(q) == [*alerts, *u1[:2], u2[0], *anonymous[:3]]
    assert await q.finish(u1[0], "r1", "done")  # U1 and C1 have room for one again
    assert await started(q) == [u1[2]]
    assert await q.finish(anonymous[0], "r1", "done")
    assert await started(q) == [anonymous[3]]


async def test_a_request_without_requester_is_limited_by_its_channel_only(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=10, running_per_user=1, running_per_channel=2))
    a, b, c = [await mention(q, f"1.{i}", user=None) for i in range(3)]
    assert await started(q) == [a, b]
    assert c not in await started(q)


async def test_background_work_runs_in_its_own_pool(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=1, running_background=1))
    first = await learn(q, "1.0")
    second = await learn(q, "2.0")
    busy = await alert(q, "3.0")
    # the alert takes the one investigation slot, the first learning row the pool's
    assert await started(q) == [busy, first]
    assert await started(q) == []  # the pool is full, and so is the slot
    assert await q.finish(first, "r1", "done")
    assert await started(q) == [second]  # no alert waits: the pool runs without room


async def test_the_background_pool_holds_as_many_rows_as_its_limit(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=3, running_background=2))
    a, b, c = [await learn(q, f"{i}.0") for i in range(3)]
    assert await started(q) == [a, b]
    assert await started(q) == []
    assert await q.finish(a, "r1", "done")
    assert await started(q) == [c]


async def test_background_work_takes_no_investigation_slot_whatever_its_order(
    db: Database,
) -> None:
    q = FixedQueue(db, QueueLimits(running=1, running_background=1))
    background = await learn(q, "1.0")
    chat = await mention(q, "2.0")
    await set_row(db, chat, priority=priority("learn"))  # same priority: after by age
    assert await started(q) == [background, chat]


async def test_background_work_yields_to_an_alert_waiting_for_a_slot(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=1, running_background=2))
    busy = await alert(q, "1.0")
    assert await started(q) == [busy]
    waiting = await alert(q, "2.0")
    background = await learn(q, "3.0")
    assert await started(q) == []  # the alert waits: learning does not start before it
    assert await q.finish(busy, "r1", "done")
    assert await started(q) == [waiting, background]  # room for the alert: both run


async def test_a_request_blocked_by_its_own_limit_does_not_hold_background_work(
    db: Database,
) -> None:
    q = FixedQueue(db, QueueLimits(running=5, running_per_user=1, running_background=1))
    first = await mention(q, "1.0")
    assert await started(q) == [first]
    await mention(q, "2.0")  # U1's second: over their limit, not waiting for a slot
    background = await learn(q, "3.0")
    assert await started(q) == [background]


async def test_a_thread_that_runs_a_row_starts_no_other(db: Database) -> None:
    """Even a later row of the thread running (state set by hand) holds the earlier one."""
    q = FixedQueue(db, QueueLimits(running=3, running_background=3))
    earlier = await learn(q, "1.0")
    later = await submit(q, Job("prune", "CL", "1.0", priority=priority("prune")))
    await set_row(db, later, state="running", owner="r0", lease_until=NOW + LEASE)
    chat = await mention(q, "2.0")
    chat_later = await mention(q, "2.0", user="U2")
    await set_row(db, chat_later, state="running", owner="r0", lease_until=NOW + LEASE)
    other = await submit(q, Job("prune", "CL", "3.0", priority=priority("prune")))
    assert await started(q) == [other]
    assert (await row(q, earlier)).state == (await row(q, chat)).state == "queued"


async def test_the_background_pool_is_separate_from_the_running_limit(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=2, running_background=1))
    a = await learn(q, "1.0")
    x, y = [await alert(q, f"{i}.5") for i in range(2)]
    assert await started(q) == [x, y, a]  # both slots and the pool's one
    z = await alert(q, "3.5")
    assert await started(q) == []
    assert (await row(q, z)).state == "queued"


async def test_not_before_holds_a_row_until_that_instant(db: Database) -> None:
    q = FixedQueue(db)
    held = await alert(q, "1.0", "critical")
    await set_row(db, held, not_before=NOW + timedelta(seconds=1))
    later = await alert(q, "2.0", "low")
    assert await started(q) == [later]
    q.at = NOW + timedelta(seconds=1)  # exactly then
    assert await started(q) == [held]


async def test_a_claim_reads_four_candidates_per_free_slot_plus_twenty(db: Database) -> None:
    """A flood of rows the limits hold back delays a later row by one claim at most."""
    q = FixedQueue(db, FLOOD)
    for i in range(24):  # room 1 reads 24 candidates: all held back by U1's limit
        await mention(q, f"1.{i:02d}")
    last = await mention(q, "2.0", user=None)
    assert await started(q, free=1) == []
    assert await started(q, free=2) == [last]  # room 2 reads 28


async def test_a_claim_window_of_exactly_the_candidates_needed(db: Database) -> None:
    q = FixedQueue(db, FLOOD)
    for i in range(23):
        await mention(q, f"1.{i:02d}")
    last = await mention(q, "2.0", user=None)
    assert await started(q, free=1) == [last]  # the 24th candidate is read


async def test_without_free_slots_a_claim_reads_twenty_candidates_for_the_pool(
    db: Database,
) -> None:
    q = FixedQueue(db, FLOOD)
    for i in range(20):
        await mention(q, f"1.{i:02d}")
    background = await learn(q, "2.0")
    assert await started(q, free=0) == []  # the 21st candidate
    await set_row(db, 1, state="done")
    assert await started(q, free=0) == [background]


# -- expiry: takeover of a dead replica's rows


async def test_an_expired_lease_is_queued_again_with_its_posts_and_a_restart_mark(
    db: Database,
) -> None:
    q = FixedQueue(db, lease_s=30, max_attempts=2)
    work = await mention(q, "1.0")
    assert await started(q, "dead") == [work]
    assert await q.record_post(work, "status_ts", "1.1", owner="dead")
    q.at = NOW + LEASE  # the lease's last instant: still held
    assert await started(q, "alive") == []
    q.at = NOW + LEASE + timedelta(microseconds=1)
    claimed = await q.claim("alive", 0)  # taken over even without a free slot
    assert claimed.started == [] and claimed.given_up == [] and claimed.queued == 1
    stored = await row(q, work)
    assert (stored.state, stored.owner, stored.lease_until) == ("queued", None, None)
    assert stored.posted == {"status_ts": "1.1", "restarted": True}
    assert (stored.attempts, stored.finished_at, stored.error) == (1, None, None)
    [again] = (await q.claim("alive", 1)).started
    assert (again.id, again.attempts, again.posted["restarted"]) == (work, 2, True)


async def test_an_expired_row_at_its_last_attempt_fails(db: Database) -> None:
    q = FixedQueue(db, lease_s=30, max_attempts=2)
    work = await mention(q, "1.0")
    for attempt in (1, 2):
        assert await started(q, f"r{attempt}") == [work]
        q.at += LEASE + timedelta(seconds=1)
    claimed = await q.claim("r3", 1)
    assert claimed.started == [] and claimed.queued == 0
    [given_up] = claimed.given_up
    error = "socbot restarted 2 times during this investigation"
    assert (given_up.id, given_up.state, given_up.error) == (work, "failed", error)
    stored = await row(q, work)
    assert (stored.state, stored.owner, stored.lease_until) == ("failed", None, None)
    assert (stored.finished_at, stored.error, stored.attempts) == (q.at, error, 2)
    assert stored.posted == {"restarted": True}


async def test_only_running_rows_expire(db: Database) -> None:
    """A settled row that still names a lease (as a hand-edited one may) is left alone."""
    q = FixedQueue(db)
    done = await alert(q, "1.0")
    await set_row(db, done, state="done", owner="r0", lease_until=NOW - LEASE)
    claimed = await q.claim("r1", 1)
    assert claimed.started == claimed.given_up == [] and claimed.queued == 0
    stored = await row(q, done)
    assert (stored.state, stored.owner, stored.posted) == ("done", "r0", {})


async def test_by_default_a_row_is_tried_three_times_with_thirty_second_leases(
    db: Database,
) -> None:
    q = FixedQueue(db)
    work = await alert(q, "1.0")
    for _ in range(3):
        assert await started(q) == [work]
        assert (await row(q, work)).lease_until == q.at + LEASE
        q.at += LEASE + timedelta(seconds=1)
    assert [w.id for w in (await q.claim("r1", 1)).given_up] == [work]


async def test_the_real_clock_gives_sqlite_naive_utc_leases(db: Database) -> None:
    q = WorkQueue(db, lease_s=60)
    work = await alert(q, "1.0")
    before = datetime.now(UTC).replace(tzinfo=None)  # SQLite stores naive UTC
    assert await started(q) == [work]
    after = datetime.now(UTC).replace(tzinfo=None)
    lease = (await row(q, work)).lease_until
    assert lease is not None and lease.tzinfo is None
    assert before + timedelta(seconds=60) <= lease <= after + timedelta(seconds=60)
    assert await started(q, "r2") == []  # not expired now


# -- renew, finish, release, stop


async def test_renew_extends_only_the_owners_running_rows_it_names(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=5, running_per_user=5, running_per_channel=5))
    a, b, c = [await mention(q, f"{i}.0") for i in range(3)]
    theirs = await mention(q, "9.0", user="U9")
    assert await started(q, "r1", 3) == [a, b, c]
    assert await started(q, "r2", 1) == [theirs]
    assert await q.finish(c, "r1", "done")
    await set_row(db, b, stop_requested=True)
    q.at = NOW + timedelta(seconds=10)
    ours, stop = await q.renew("r1", [a, b, c, theirs])
    assert (ours, stop) == ({a, b}, {b})
    leases = {i: (await row(q, i)).lease_until for i in (a, b, c, theirs)}
    assert leases == {a: q.at + LEASE, b: q.at + LEASE, c: None, theirs: NOW + LEASE}
    assert await q.renew("r1", []) == (set(), set())
    renewed = q.at
    q.at = NOW + timedelta(seconds=20)
    assert await q.renew("r1", [a]) == ({a}, set())
    assert (await row(q, a)).lease_until == q.at + LEASE
    assert (await row(q, b)).lease_until == renewed + LEASE  # not named: not renewed


async def test_finish_settles_the_owners_running_row_once(db: Database) -> None:
    q = FixedQueue(db)
    work = await alert(q, "1.0")
    queued = await alert(q, "2.0")
    await started(q, "r1", 1)
    assert not await q.finish(work, "r2", "done")  # not its owner
    assert not await q.finish(queued, "r1", "done")  # not running
    assert (await row(q, queued)).state == "queued"
    q.at = NOW + timedelta(seconds=5)
    assert await q.finish(work, "r1", "failed", "quota")
    stored = await row(q, work)
    assert (stored.state, stored.error, stored.lease_until) == ("failed", "quota", None)
    assert (stored.finished_at, stored.owner) == (q.at, "r1")
    assert not await q.finish(work, "r1", "done")
    assert (await row(q, work)).state == "failed"


async def test_finish_without_error_stores_none(db: Database) -> None:
    q = FixedQueue(db)
    work = await alert(q, "1.0")
    await started(q)
    assert await q.finish(work, "r1", "done")
    stored = await row(q, work)
    assert (stored.state, stored.error, stored.finished_at) == ("done", None, NOW)


async def test_release_hands_back_only_the_owners_running_rows(db: Database) -> None:
    q = FixedQueue(db, QueueLimits(running=5))
    a, b, done = [await alert(q, f"{i}.0") for i in range(3)]
    theirs = await alert(q, "9.0")
    assert await started(q, "r1", 3) == [a, b, done]
    assert await started(q, "r2", 1) == [theirs]
    assert await q.finish(done, "r1", "done")
    assert await q.release("r1") == 2
    for i in (a, b):
        stored = await row(q, i)
        assert (stored.state, stored.owner, stored.lease_until, stored.attempts) == (
            "queued",
            None,
            None,
            0,
        )
    assert (await row(q, done)).state == "done"
    assert (await row(q, theirs)).owner == "r2"
    assert await q.release("r1") == 0


async def test_stop_cancels_queued_rows_and_asks_running_ones(db: Database) -> None:
    q = FixedQueue(db)
    running = await mention(q, "1.0")
    assert await started(q) == [running]
    queued = await submit(q, Job("followup", "C1", "1.0", "more", requester="U1"))
    other = await mention(q, "2.0", user="U2")
    q.at = NOW + timedelta(seconds=3)
    cancelled, asked = await q.stop("slack:C1:1.0")
    assert [(w.id, w.state) for w in cancelled] == [(queued, "cancelled")]
    assert [(w.id, w.state) for w in asked] == [(running, "running")]
    stopped = await row(q, queued)
    assert (stopped.state, stopped.finished_at) == ("cancelled", q.at)
    asked_row = await row(q, running)
    assert (asked_row.state, asked_row.stop_requested, asked_row.finished_at) == (
        "running",
        True,
        None,
    )
    untouched = await row(q, other)
    assert (untouched.state, untouched.stop_requested) == ("queued", False)
    assert await q.finish(running, "r1", "cancelled")
    assert await q.stop("slack:C1:1.0") == ([], [])  # settled rows are left alone
