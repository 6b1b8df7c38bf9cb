"""Storm state in the database (store/triage/storms.py, store/triage/storm_posts.py): two replicas
(two engines on one database) decide alike, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import update

from alerts.parse import Alert, parse_alert
from store.db.engine import Database
from store.queue.work import Job, WorkQueue
from store.schema import AlertRow, utcnow
from store.triage._stale import LAUNCH
from store.triage.alerts import AlertStore
from store.triage.states import AlertStatuses
from store.triage.storm_posts import StormPosts
from store.triage.storms import StormStore

CHANNEL = "C0WEBHOOK"


@pytest.fixture
async def other(any_db: Database) -> AsyncIterator[Database]:
    """A second replica: its own engine on the same database."""
    second = Database(any_db.engine.url.render_as_string(hide_password=False))
    yield second
    await second.close()


async def stored(db: Database, title: str, ip: str, severity: str = "high") -> Alert:
    """An alert as the webhook stores it (invented payload in the generic format)."""
    alert = parse_alert({"title": title, "severity": severity, "source_ip": ip}, "generic")
    await AlertStore(db).save(alert)
    return alert


def stores(a: Database, b: Database, capacity: int = 3) -> tuple[StormStore, StormStore]:
    return (
        StormStore(a, CHANNEL, capacity=capacity, window_s=900),
        StormStore(b, CHANNEL, capacity=capacity, window_s=900),
    )


async def test_similar_alerts_on_two_replicas_at_once_make_one_group(
    any_db: Database, other: Database
) -> None:
    alerts = [await stored(any_db, f"SSH brute force x {n}", "8.8.8.8") for n in range(16)]
    a, b = stores(any_db, other)
    placed = await asyncio.gather(
        *((a if n % 2 else b).place(alert.id, "same key") for n, alert in enumerate(alerts))
    )
    leaders = [p for p in placed if p.status != "grouped"]
    assert len(leaders) == 1 and leaders[0].status == "queued"
    assert {p.leader_id for p in placed} == {leaders[0].leader_id}
    assert len({p.storm_id for p in placed}) == 1
    group = await StormPosts(other).group(leaders[0].leader_id)
    assert group is not None and group.members == 15
    assert await AlertStatuses(any_db).counts() == {"queued": 1, "grouped": 15}


async def test_admission_holds_across_replicas_and_the_storm_ends_when_all_are_done(
    any_db: Database, other: Database
) -> None:
    alerts = [await stored(any_db, f"Odd login {n}", f"9.9.{n}.1") for n in range(10)]
    a, b = stores(any_db, other)
    placed = await asyncio.gather(
        *((a if n % 2 else b).place(alert.id, f"key {n}") for n, alert in enumerate(alerts))
    )
    assert sorted(p.status for p in placed) == ["deferred"] * 7 + ["queued"] * 3
    storm = placed[0].storm_id
    queued = [p.leader_id for p in placed if p.status == "queued"]
    for alert_id in queued[:2]:
        await a.move(alert_id, "concluded")
    admitted = await asyncio.gather(a.admit(), b.admit(), a.admit())
    assert sum(len(batch) for batch in admitted) == 2  # the room, not twice the room
    view = await b.view()
    assert view is not None and view.id == storm and not view.over
    assert view.counts == {"queued": 3, "deferred": 5, "concluded": 2}

    replicas = [a, b]
    for turn in range(5):  # replicas take turns concluding what runs and admitting more
        for row in await AlertStatuses(any_db).by_status("queued", limit=20):
            await replicas[turn % 2].move(row.id, "failed" if turn % 2 else "concluded")
        assert len(await replicas[turn % 2].admit()) <= 3
    ended = await a.view(storm)
    assert ended is not None and ended.over and await a.view() is None
    assert sum(ended.counts.values()) == 10

    later = await stored(any_db, "Port scan", "7.7.7.7")
    assert (await b.place(later.id, "k")).storm_id != storm  # a new storm


async def test_one_replica_posts_the_storm_message_and_a_group_note(
    any_db: Database, other: Database
) -> None:
    alert = await stored(any_db, "Impossible travel", "8.8.4.4")
    a, _ = stores(any_db, other)
    placed = await a.place(alert.id, "k", thread_ts="1700000000.000100")
    posts = [StormPosts(any_db), StormPosts(other)]
    won = await asyncio.gather(*(posts[n % 2].claim_board(placed.storm_id) for n in range(6)))
    assert won.count(True) == 1
    await posts[0].board_posted(placed.storm_id, "1700000001.000200")
    assert not await posts[1].claim_board(placed.storm_id)  # posted: everyone edits it
    view = await a.view()
    assert view is not None and view.board_ts == "1700000001.000200"

    notes = await asyncio.gather(*(posts[n % 2].claim_note(alert.id) for n in range(4)))
    assert notes.count(True) == 1
    await posts[1].card_posted(alert.id, None)  # the post failed: the claim lapses
    assert await posts[0].claim_note(alert.id)


async def test_a_restart_adopts_what_an_earlier_run_left_and_defers_the_stale(
    any_db: Database,
) -> None:
    crashed = await stored(any_db, "Odd login a", "9.9.1.1")  # investigating, no work row
    running = await stored(any_db, "Odd login b", "9.9.2.1")  # investigating, its row runs
    launching = await stored(any_db, "Odd login c", "9.9.3.1")  # queued, card being posted
    forgotten = await stored(any_db, "Odd login d", "9.9.4.1")  # queued long ago, no row
    statuses = AlertStatuses(any_db)
    for alert, status in (
        (crashed, "investigating"),
        (running, "investigating"),
        (launching, "queued"),
        (forgotten, "queued"),
    ):
        await statuses.set(alert.id, status)
    async with any_db.session() as session:
        await session.execute(
            update(AlertRow)
            .where(AlertRow.id == forgotten.id)
            .values(status_at=utcnow() - LAUNCH - timedelta(seconds=5))
        )
    await WorkQueue(any_db).submit(Job("alert", CHANNEL, "1.0", alert_id=running.id))

    store = StormStore(any_db, CHANNEL, capacity=3, window_s=900)
    storm = await store.adopt(own_rows_only=False, exclude=())
    view = await store.view()
    assert view is not None and view.id == storm
    assert view.counts == {"deferred": 2, "investigating": 1, "queued": 1}
    assert {a.id for a in await statuses.by_status("deferred")} == {crashed.id, forgotten.id}
