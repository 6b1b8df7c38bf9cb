"""The takeover rules one by one, on in-process SQLite and a clock the test sets.

What a replica that died leaves in triage goes back to ``deferred``
(``store.triage._stale.requeue_stale``), judged by the replicas' beats (``store.queue.replicas``); a
replica that stalled past its lease finds its launch taken and queues nothing
(``store.queue.work._launched``). Each rule is asserted exactly (statuses, times, launchers,
the boundary of a lease), so that the mutation group ``takeover``
(``scripts/mutation.py``) runs in seconds per mutant. The same rules across real
replicas, SQLite and PostgreSQL: ``test_launch_fence.py``, ``test_storms.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.sql.elements import ColumnElement

from store.db.engine import Database
from store.queue.replicas import Replicas, alive, beat
from store.queue.types import Submitted
from store.queue.work import Job, WorkQueue
from store.schema import AlertRow, ReplicaRow, WorkRow
from store.triage._stale import LAUNCH, requeue_stale

NOW = datetime(2026, 3, 1, 12, 0, 0)  # naive UTC, as SQLite stores it
LEASE = timedelta(seconds=30)
EARLIER = NOW - timedelta(hours=1)


async def add_alert(
    db: Database,
    alert_id: str,
    status: str | None,
    *,
    launch_by: str | None = None,
    status_at: datetime | None = EARLIER,
    storm: int = 1,
) -> None:
    async with db.session() as session:
        session.add(
            AlertRow(
                id=alert_id,
                source="generic",
                title=f"alert {alert_id}",  # invented: the rules read no content
                raw={},
                status=status,
                status_at=status_at,
                launch_by=launch_by,
                storm_id=storm,
            )
        )


async def add_work(db: Database, alert_id: str | None, state: str) -> None:
    async with db.session() as session:
        session.add(
            WorkRow(
                kind="alert" if alert_id else "mention",
                state=state,
                priority=1,
                thread=f"CA:{alert_id or 'mention'}",
                channel="CA",
                thread_ts=alert_id or "1700000000.000001",
                alert_id=alert_id,
                request={"text": ""},
                attempts=0,
                stop_requested=False,
                posted={},
                created_at=EARLIER,
            )
        )


async def seen(db: Database, name: str, at: datetime) -> None:
    async with db.session() as session:
        await beat(session, name, at)


async def statuses(db: Database) -> dict[str, tuple[str | None, datetime | None]]:
    async with db.session() as session:
        rows = (await session.scalars(select(AlertRow).order_by(AlertRow.id))).all()
        return {r.id: (r.status, _naive(r.status_at)) for r in rows}


def _naive(at: datetime | None) -> datetime | None:
    return at.replace(tzinfo=None) if at is not None else None


async def requeue(db: Database, *where: ColumnElement[bool]) -> None:
    async with db.session() as session:
        await requeue_stale(session, NOW, LEASE, *where)


async def test_beats_insert_once_then_move_the_time(db: Database) -> None:
    await seen(db, "r1", EARLIER)
    await seen(db, "r1", NOW)
    await seen(db, "r2", EARLIER)
    async with db.session() as session:
        rows = (await session.scalars(select(ReplicaRow).order_by(ReplicaRow.name))).all()
        assert [(r.name, _naive(r.seen_at)) for r in rows] == [("r1", NOW), ("r2", EARLIER)]
        assert set(await session.scalars(alive(NOW, LEASE))) == {"r1"}
        at_the_edge = alive(EARLIER + LEASE, LEASE)  # seen exactly one lease ago: alive
        assert set(await session.scalars(at_the_edge)) == {"r1", "r2"}
        past_it = alive(EARLIER + LEASE + timedelta(microseconds=1), LEASE)
        assert set(await session.scalars(past_it)) == {"r1"}


async def test_the_replicas_clock_is_naive_on_sqlite_only(db: Database) -> None:
    replicas = Replicas(db)
    await seen(db, "r9", EARLIER)
    before = replicas.now()
    await replicas.beat("r9")
    async with db.session() as session:
        row = await session.get(ReplicaRow, "r9")
        assert row is not None
        beaten = _naive(row.seen_at)
        assert before.tzinfo is None and beaten is not None and before <= beaten
    postgres = Database("postgresql+asyncpg://socbot@127.0.0.1:1/never")  # never connected
    try:
        assert Replicas(postgres).now().utcoffset() == timedelta(0)
    finally:
        await postgres.close()


async def test_investigating_goes_back_only_without_live_work(db: Database) -> None:
    for alert_id, work in (("a1", None), ("a2", "queued"), ("a3", "running"), ("a4", "done")):
        await add_alert(db, alert_id, "investigating")
        if work is not None:
            await add_work(db, alert_id, work)
    await add_work(db, None, "running")  # a mention's run: no alert (NOT IN must skip NULL)
    await requeue(db)
    assert await statuses(db) == {
        "a1": ("deferred", NOW),
        "a2": ("investigating", EARLIER),
        "a3": ("investigating", EARLIER),
        "a4": ("deferred", NOW),  # its work ended and nothing took it further: left behind
    }


async def test_a_queued_alert_goes_back_when_its_launcher_stopped_beating(db: Database) -> None:
    await seen(db, "live", NOW - LEASE)  # exactly one lease ago: alive
    await seen(db, "dead", NOW - LEASE - timedelta(seconds=1))
    await add_alert(db, "a1", "queued", launch_by="live")
    await add_alert(db, "a2", "queued", launch_by="dead")
    await add_alert(db, "a3", "queued", launch_by="never-beat")
    await add_alert(db, "a4", "queued", launch_by="dead")
    await add_work(db, "a4", "queued")  # launched: its row is stored
    await requeue(db)
    assert await statuses(db) == {
        "a1": ("queued", EARLIER),
        "a2": ("deferred", NOW),
        "a3": ("deferred", NOW),
        "a4": ("queued", EARLIER),
    }


async def test_a_queued_alert_without_a_launcher_waits_for_the_launch_time(db: Database) -> None:
    await add_alert(db, "a1", "queued", status_at=NOW - LAUNCH)  # exactly: not yet
    await add_alert(db, "a2", "queued", status_at=NOW - LAUNCH - timedelta(seconds=1))
    await add_alert(db, "a3", "queued", status_at=None)
    await add_alert(db, "a4", "queued", status_at=NOW)
    await requeue(db)
    assert await statuses(db) == {
        "a1": ("queued", NOW - LAUNCH),
        "a2": ("deferred", NOW),
        "a3": ("deferred", NOW),
        "a4": ("queued", NOW),
    }
    assert timedelta(seconds=300) == LAUNCH


async def test_other_statuses_and_other_storms_are_left_alone(db: Database) -> None:
    for status in ("received", "deferred", "done", "failed", None):
        await add_alert(db, f"s-{status}", status, launch_by="dead")
    await add_alert(db, "mine", "investigating", storm=1)
    await add_alert(db, "theirs", "investigating", storm=2)
    await requeue(db, AlertRow.storm_id == 1)
    found = await statuses(db)
    assert found.pop("mine") == ("deferred", NOW)
    assert found.pop("theirs") == ("investigating", EARLIER)
    assert found == {
        "s-received": ("received", EARLIER),
        "s-deferred": ("deferred", EARLIER),
        "s-done": ("done", EARLIER),
        "s-failed": ("failed", EARLIER),
        "s-None": (None, EARLIER),
    }


class FixedQueue(WorkQueue):
    """The real queue on a clock the test sets."""

    def _now(self) -> datetime:
        return NOW


def launch(alert_id: str, launcher: str) -> Job:
    return Job("alert", "CA", alert_id, alert_id=alert_id, launched_by=launcher)


async def test_only_the_named_launcher_of_a_queued_alert_stores_its_row(db: Database) -> None:
    queue = FixedQueue(db)
    await add_alert(db, "a1", "queued", launch_by="r1")
    await add_alert(db, "a2", "deferred", launch_by="r1")
    await add_alert(db, "a3", "queued", launch_by=None)
    assert await queue.submit(launch("a1", "r2")) == Submitted(None, refused="taken")
    assert await queue.submit(launch("a2", "r1")) == Submitted(None, refused="taken")
    assert await queue.submit(launch("a3", "r1")) == Submitted(None, refused="taken")
    assert await queue.submit(launch("missing", "r1")) == Submitted(None, refused="taken")
    stored = await queue.submit(launch("a1", "r1"))
    assert stored.id is not None and stored.refused is None
    assert await queue.submit(launch("a1", "r1")) == Submitted(None, refused="taken")  # once
    async with db.session() as session:
        works = (await session.scalars(select(WorkRow))).all()
        assert [(w.alert_id, w.state, w.thread_ts) for w in works] == [("a1", "queued", "a1")]
        launched = await session.get(AlertRow, "a1")
        assert launched is not None
        assert (launched.status, launched.launch_by) == ("queued", None)
        assert _naive(launched.status_at) == NOW  # launched now: not stale for LAUNCH
    assert (await statuses(db))["a2"] == ("deferred", EARLIER)
