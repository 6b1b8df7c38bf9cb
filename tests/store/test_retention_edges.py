"""Data lifetime at its edges (``store.retention``): a row exactly as old as its kind's
lifetime stays and one a second older goes, at the ``now`` given; a one-day lifetime is a
lifetime; deletion goes in batches of ``retention.batch``; a pruned investigation takes its
trace even where traces are kept for ever; the prune row asked for is an ordinary queued
row of its own kind. Rows are invented for the test."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select

from config.retention import RetentionSettings
from store.db.engine import Database
from store.queue.types import PRUNE_KIND, priority
from store.retention import KINDS, Pruner, request_prune
from store.schema import (
    AlertGroup,
    AlertRow,
    AlertStatus,
    AlertStorm,
    BulletTag,
    Feedback,
    Investigation,
    LearningRun,
    PrivacyMap,
    SeenEvent,
    TraceEvent,
    WorkKind,
    WorkRow,
    WorkState,
    utcnow,
)

NOW = datetime(2026, 6, 1, 12, 0, 0)  # naive UTC, as SQLite stores it
NONE = {f"{kind}_days": 0 for kind in KINDS}


def only(kind: str, days: int, **extra: Any) -> RetentionSettings:
    return RetentionSettings(**{**NONE, f"{kind}_days": days, **extra})


def investigation(name: str, created: datetime) -> Investigation:
    return Investigation(
        id=f"inv-{name}",
        conversation_id=f"slack:C1:{name}",
        kind="alert",
        input=f"invented {name}",
        status="concluded",
        created_at=created,
    )


def alert(name: str, created: datetime) -> AlertRow:
    return AlertRow(
        id=f"alert-{name}",
        title=f"invented {name}",
        severity="low",
        source="invented",
        raw={},
        status=AlertStatus.CONCLUDED,
        created_at=created,
    )


def work(kind: str, state: WorkState, *, alert_id: str | None = None, **when: Any) -> WorkRow:
    return WorkRow(
        kind=kind,
        state=state,
        priority=5,
        thread=f"invented:{kind}:{alert_id}",
        channel="C1",
        thread_ts="",
        request={},
        attempts=0,
        stop_requested=False,
        posted={},
        alert_id=alert_id,
        created_at=when.pop("created_at", utcnow()),
        **when,
    )


async def add(db: Database, *rows: Any) -> None:
    async with db.session() as session:
        session.add_all(rows)


async def ids(db: Database, column: Any) -> set[Any]:
    async with db.session() as session:
        return set((await session.scalars(select(column))).all())


async def test_exactly_as_old_as_the_lifetime_stays_a_second_older_goes(db: Database) -> None:
    edge, past = NOW - timedelta(days=30), NOW - timedelta(days=30, seconds=1)
    await add(db, investigation("edge", edge), investigation("past", past))
    await add(db, alert("edge", edge), alert("past", past))
    await add(
        db,
        *(
            TraceEvent(investigation_id="inv-x", type="t", payload={}, created_at=w)
            for w in (edge, past)
        ),
        LearningRun(investigation_id="inv-x", status="done", created_at=edge),
        LearningRun(investigation_id="inv-y", status="done", created_at=past),
    )
    lifetimes = ("trace", "investigations", "alerts", "learning_runs")
    everything = RetentionSettings(**{**NONE, **{f"{kind}_days": 30 for kind in lifetimes}})
    pruner = Pruner(db, everything)
    expected = {kind: int(kind in lifetimes) for kind in KINDS}
    assert await pruner.plan(NOW) == expected
    assert await pruner.prune(NOW) == expected
    assert await ids(db, Investigation.id) == {"inv-edge"}
    assert await ids(db, AlertRow.id) == {"alert-edge"}
    assert await ids(db, TraceEvent.created_at) == {edge}
    assert await ids(db, LearningRun.investigation_id) == {"inv-x"}


async def test_the_edge_holds_for_every_other_table(db: Database) -> None:
    edge, past = NOW - timedelta(days=30), NOW - timedelta(days=30, seconds=1)
    for name, when in (("edge", edge), ("past", past)):
        await add(
            db,
            PrivacyMap(conversation_id=f"slack:C1:{name}", sealed=b"invented", updated_at=when),
            Feedback(investigation_id=f"inv-{name}", user="U1", value="correct", updated_at=when),
            BulletTag(
                investigation_id=f"inv-{name}", bullet_id="b-1", tag="helpful", updated_at=when
            ),
            AlertGroup(leader_id=f"alert-{name}", channel="C1", key=name, started_at=when),
            AlertStorm(channel=f"C-{name}", since=when, ended_at=when),
            work(WorkKind.MENTION, WorkState.DONE, finished_at=when),
            SeenEvent(key=f"Ev-{name}", created_at=when),
        )
    kinds = ("investigations", "feedback", "alert_groups", "work")
    pruner = Pruner(db, RetentionSettings(**{**NONE, **{f"{k}_days": 30 for k in kinds}}))
    past_rows = {"investigations": 1, "feedback": 2, "alert_groups": 2, "work": 2}  # one a table
    assert await pruner.prune(NOW) == {kind: past_rows.get(kind, 0) for kind in KINDS}
    assert await ids(db, PrivacyMap.conversation_id) == {"slack:C1:edge"}
    assert await ids(db, Feedback.investigation_id) == {"inv-edge"}
    assert await ids(db, BulletTag.investigation_id) == {"inv-edge"}
    assert await ids(db, AlertGroup.leader_id) == {"alert-edge"}
    assert await ids(db, AlertStorm.channel) == {"C-edge"}
    assert await ids(db, WorkRow.finished_at) == {edge}
    assert await ids(db, SeenEvent.key) == {"Ev-edge"}


async def test_plan_and_prune_read_the_now_they_are_given(db: Database) -> None:
    await add(db, investigation("today", utcnow().replace(tzinfo=None)))
    later = utcnow() + timedelta(days=400)
    pruner = Pruner(db, only("investigations", 90))
    assert (await pruner.plan())["investigations"] == 0
    assert (await pruner.plan(later))["investigations"] == 1
    assert (await pruner.prune(later))["investigations"] == 1


async def test_a_one_day_lifetime_is_a_lifetime(db: Database) -> None:
    await add(db, investigation("yesterday", NOW - timedelta(days=2)))
    assert Pruner(db, only("investigations", 1)).cutoffs(NOW) == {
        "investigations": NOW - timedelta(days=1)
    }
    assert (await Pruner(db, only("investigations", 1)).prune(NOW))["investigations"] == 1


async def test_rows_go_in_batches_of_the_setting(db: Database) -> None:
    old = NOW - timedelta(days=100)
    await add(db, *(investigation(f"b{n}", old) for n in range(5)))
    await add(
        db,
        *(
            BulletTag(
                investigation_id=f"inv-b{n}", bullet_id=f"b-{n}", tag="helpful", updated_at=old
            )
            for n in range(5)
        ),
    )
    deletes: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().upper().startswith("DELETE FROM"):
            deletes.append(statement.split()[2].strip('"'))

    event.listen(db.engine.sync_engine, "before_cursor_execute", seen)
    settings = RetentionSettings(
        **{**NONE, "investigations_days": 90, "feedback_days": 90}, batch=2
    )
    counts = await Pruner(db, settings).prune(NOW)
    assert (counts["investigations"], counts["feedback"]) == (5, 5)
    assert deletes.count("investigations") == 3 and deletes.count("bullet_tags") == 3
    assert await ids(db, BulletTag.bullet_id) == set()


async def test_a_pruned_investigation_takes_its_trace_when_traces_are_kept(db: Database) -> None:
    await add(db, investigation("old", NOW - timedelta(days=200)))
    await add(
        db,
        TraceEvent(investigation_id="inv-old", type="t", payload={}, created_at=NOW),
        TraceEvent(investigation_id="inv-other", type="t", payload={}, created_at=NOW),
    )
    assert (await Pruner(db, only("investigations", 90)).prune(NOW))["investigations"] == 1
    assert await ids(db, TraceEvent.investigation_id) == {"inv-other"}


@pytest.mark.parametrize("state", [WorkState.QUEUED, WorkState.RUNNING])
async def test_work_for_another_alert_does_not_keep_an_old_one(
    db: Database, state: WorkState
) -> None:
    old = NOW - timedelta(days=400)
    await add(db, alert("done-with", old), alert("held", old))
    await add(db, work(WorkKind.POLICY_DEFERRED, state, alert_id="alert-held"))
    await add(db, work(WorkKind.MENTION, WorkState.QUEUED))  # no alert at all
    assert (await Pruner(db, only("alerts", 180)).prune(NOW))["alerts"] == 1
    assert await ids(db, AlertRow.id) == {"alert-held"}


async def test_the_prune_row_is_an_ordinary_queued_row_of_its_kind(db: Database) -> None:
    before = utcnow().replace(tzinfo=None)
    await add(db, work(WorkKind.MENTION, WorkState.QUEUED))  # other work never blocks it
    await add(db, work(WorkKind.ALERT, WorkState.DONE, finished_at=utcnow()))
    made = await request_prune(db, timedelta(hours=1))
    assert made is not None
    async with db.session() as session:
        row = await session.get(WorkRow, made)
        assert row is not None
        assert (row.kind, row.state, row.priority, row.thread) == (
            PRUNE_KIND,
            WorkState.QUEUED,
            priority(PRUNE_KIND),
            PRUNE_KIND,
        )
        assert (row.channel, row.thread_ts, row.request, row.posted) == ("", "", {}, {})
        assert (row.attempts, row.stop_requested, row.finished_at) == (0, False, None)
        assert before <= row.created_at.replace(tzinfo=None) <= utcnow().replace(tzinfo=None)
        queued = await session.scalar(
            select(func.count()).where(
                WorkRow.kind == PRUNE_KIND, WorkRow.state == WorkState.QUEUED
            )
        )
    assert queued == 1
