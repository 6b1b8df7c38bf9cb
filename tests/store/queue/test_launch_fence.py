"""An alert's launch is fenced (``store.queue.work._launched``): a replica that stalled past its
lease while posting an alert's card finds the launch taken over by another replica and
queues nothing, so the alert is investigated once; of the two cards posted, the one
recorded first is the alert's (``store.triage.storm_posts``). On SQLite and on PostgreSQL, two
replicas (two engines on one database)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from store.db.engine import Database
from store.queue.types import Submitted
from store.queue.work import Job, WorkQueue
from store.schema import AlertRow, WorkRow
from store.triage.alerts import AlertStore
from store.triage.storm_posts import StormPosts
from store.triage.storms import StormStore
from tests.store.triage.test_storms import CHANNEL, other, stored

__all__ = ["other"]  # the second replica's engine (a fixture)

LEASE_S = 0.2


def replica(db: Database, name: str) -> StormStore:
    return StormStore(db, CHANNEL, capacity=3, window_s=900, replica=name, lease_s=LEASE_S)


def job(alert_id: str, launcher: str, card_ts: str) -> Job:
    return Job("alert", CHANNEL, card_ts, alert_id=alert_id, launched_by=launcher)


async def rows_of(db: Database, alert_id: str) -> int:
    async with db.session() as session:
        count = select(func.count()).where(WorkRow.alert_id == alert_id)
        return int(await session.scalar(count) or 0)


async def launcher_of(db: Database, alert_id: str) -> tuple[str | None, str | None]:
    async with db.session() as session:
        row = await session.get(AlertRow, alert_id)
        assert row is not None
        return row.status, row.launch_by


async def test_a_launch_taken_over_queues_nothing_for_the_stalled_replica(
    any_db: Database, other: Database
) -> None:
    alert = await stored(any_db, "Odd login from a new country", "9.9.9.1")
    slow, taker = replica(any_db, "r1"), replica(other, "r2")
    placed = await slow.place(alert.id, "key")
    assert placed is not None and placed.status == "queued"
    await asyncio.sleep(LEASE_S * 3)  # r1 posts its card past its lease, never beating
    admitted = await taker.admit()  # r1 looks dead: the alert is deferred and r2 admits it
    assert [a.id for a in admitted] == [alert.id]
    assert await launcher_of(any_db, alert.id) == ("queued", "r2")

    late = await WorkQueue(any_db).submit(job(alert.id, "r1", "1700000000.000001"))
    assert late == Submitted(None, refused="taken")
    assert await rows_of(any_db, alert.id) == 0
    mine = await WorkQueue(other).submit(job(alert.id, "r2", "1700000000.000002"))
    assert mine.id is not None
    assert await rows_of(any_db, alert.id) == 1
    assert await launcher_of(any_db, alert.id) == ("queued", None)  # launched: has its row


async def test_a_launch_in_time_is_never_taken_over_later(
    any_db: Database, other: Database
) -> None:
    alert = await stored(any_db, "Odd login from a new country", "9.9.9.2")
    first, second = replica(any_db, "r1"), replica(other, "r2")
    assert (await first.place(alert.id, "key")) is not None
    submitted = await WorkQueue(any_db).submit(job(alert.id, "r1", "1700000000.000003"))
    assert submitted.id is not None
    await asyncio.sleep(LEASE_S * 3)  # r1 stops beating after its row is stored
    assert await second.admit() == []
    assert await launcher_of(any_db, alert.id) == ("queued", None)
    assert await rows_of(any_db, alert.id) == 1


async def test_a_job_without_a_launcher_is_queued_as_before(any_db: Database) -> None:
    alert = await stored(any_db, "Odd login from a new country", "9.9.9.3")
    submitted = await WorkQueue(any_db).submit(Job("alert", CHANNEL, "1.1", alert_id=alert.id))
    assert submitted.id is not None


async def test_the_card_recorded_first_is_the_alerts_and_its_groups(
    any_db: Database, other: Database
) -> None:
    """A stalled launcher and its taker both posted a card: the first recorded wins, the
    other learns which one is the alert's (``StormPosts.alert_card_posted``)."""
    alert = await stored(any_db, "Odd login from a new country", "9.9.9.4")
    assert (await replica(any_db, "r1").place(alert.id, "key")) is not None
    ours, theirs = "1700000000.000011", "1700000000.000012"
    won = await StormPosts(other).alert_card_posted(alert.id, CHANNEL, theirs)
    lost = await StormPosts(any_db).alert_card_posted(alert.id, CHANNEL, ours)
    assert (won, lost) == (theirs, theirs)
    assert await card_of(any_db, alert.id) == (CHANNEL, theirs)
    group = await StormPosts(any_db).group(alert.id)
    assert group is not None and group.card_ts == theirs


async def test_two_cards_recorded_at_once_agree_on_one(any_db: Database, other: Database) -> None:
    alert = await stored(any_db, "Odd login from a new country", "9.9.9.5")
    assert (await replica(any_db, "r1").place(alert.id, "key")) is not None
    recorded = await asyncio.gather(
        StormPosts(any_db).alert_card_posted(alert.id, CHANNEL, "1700000000.000021"),
        StormPosts(other).alert_card_posted(alert.id, CHANNEL, "1700000000.000022"),
    )
    assert recorded[0] == recorded[1] in ("1700000000.000021", "1700000000.000022")
    assert await card_of(any_db, alert.id) == (CHANNEL, recorded[0])


async def test_a_message_in_another_channel_is_no_card_here(any_db: Database) -> None:
    alert = await stored(any_db, "Odd login from a new country", "9.9.9.6")
    await AlertStore(any_db).set_slack_message(alert.id, "COTHER01", "1600000000.000001")
    posts = StormPosts(any_db)
    assert await posts.alert_card_posted(alert.id, CHANNEL, "1700000000.000031") == (
        "1700000000.000031"
    )
    assert await card_of(any_db, alert.id) == (CHANNEL, "1700000000.000031")
    with pytest.raises(LookupError):
        await posts.alert_card_posted("no-such-alert", CHANNEL, "1700000000.000032")


async def card_of(db: Database, alert_id: str) -> tuple[str | None, str | None]:
    stored_alert = await AlertStore(db).get(alert_id)
    assert stored_alert is not None
    return stored_alert.slack_channel, stored_alert.slack_ts
