"""Data lifetime (``store.retention``) on SQLite and PostgreSQL: what is past its
kind's lifetime goes, in batches; rows in use stay; a pruned investigation leaves no
dangling id in the thread history or in the past alerts a search finds.

The rows are invented for the test (ids and texts say so); their ages are set in the
past directly, as the rows would be after months of use.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update

from alerts.parse import parse_alert
from config.retention import RetentionSettings
from core.scope import EVERYTHING
from store.db.engine import Database
from store.investigations.conversations import ConversationStore
from store.investigations.runs import InvestigationStore
from store.playbook.feedback import FeedbackStore
from store.queue.work import Job, WorkQueue
from store.retention import KINDS, Pruner, request_prune
from store.schema import (
    AlertGroup,
    AlertRow,
    Feedback,
    Investigation,
    SeenEvent,
    TraceEvent,
    WorkRow,
    utcnow,
)
from store.triage.alerts import AlertStore

SETTINGS = RetentionSettings(
    alerts_days=180, investigations_days=90, trace_days=30, feedback_days=60, batch=2
)


async def aged(db: Database, model: Any, column: Any, key: Any, value: Any, days: int) -> None:
    when = utcnow() - timedelta(days=days)
    async with db.session() as session:
        await session.execute(update(model).where(key == value).values({column: when}))


async def investigation(db: Database, name: str, days: int, *, status: str = "concluded") -> str:
    store = InvestigationStore(db)
    inv = f"inv-{name}"
    await store.create(inv, f"slack:C1:{name}", "alert", f"invented alert {name}")
    if status != "running":
        await store.finish(
            inv,
            status=status,
            mode="planned",
            objective="o",
            verdict="benign",
            record={},
            usage={},
            error=None,
        )
    await store.append_events([(inv, "tool_called", {"result": "invented log row"})] * 3)
    await ConversationStore(db).append_many(
        f"slack:C1:{name}", [("user", f"question {name}"), ("model", f"answer {name}")], inv
    )
    await aged(db, Investigation, Investigation.created_at, Investigation.id, inv, days)
    await aged(db, TraceEvent, TraceEvent.created_at, TraceEvent.investigation_id, inv, days)
    return inv


async def alert(db: Database, title: str, days: int, inv: str | None, status: str | None) -> str:
    parsed = parse_alert({"title": title, "severity": "low", "source_ip": "198.51.100.7"})
    await AlertStore(db).save(parsed, investigation_id=inv, status=status)
    if inv is not None:
        await AlertStore(db).set_verdict(parsed.id, verdict="benign", summary=f"{title} ok")
    await aged(db, AlertRow, AlertRow.created_at, AlertRow.id, parsed.id, days)
    return parsed.id


async def count(db: Database, model: Any) -> int:
    async with db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def test_prune_deletes_by_lifetime_and_keeps_what_is_in_use(any_db: Database) -> None:
    db = any_db
    gone = await investigation(db, "old", 200)
    unlinked = await investigation(db, "middle", 120)  # past 90 days; its alert is not
    running = await investigation(db, "stuck", 200, status="running")
    fresh = await investigation(db, "new", 5)
    await aged(db, TraceEvent, TraceEvent.created_at, TraceEvent.investigation_id, fresh, 40)
    old_alert = await alert(db, "invented old alert", 200, gone, "concluded")
    kept_alert = await alert(db, "invented middle alert", 120, unlinked, "concluded")
    waiting = await alert(db, "invented deferred alert", 200, None, "deferred")
    await FeedbackStore(db).vote(gone, "UOLD", "correct")
    await aged(db, Feedback, Feedback.updated_at, Feedback.user, "UOLD", 100)
    await FeedbackStore(db).vote(fresh, "UNEW", "correct")
    queue = WorkQueue(db)
    done = (await queue.submit(Job("mention", "C1", "1.0", "invented"))).id
    async with db.session() as session:
        await session.execute(
            update(WorkRow).where(WorkRow.id == done).values(state="done", finished_at=utcnow())
        )
        session.add(SeenEvent(key="Ev-invented"))
        session.add(AlertGroup(leader_id=old_alert, channel="C1", key="k", members=0))
    await aged(db, WorkRow, WorkRow.finished_at, WorkRow.id, done, 30)
    await aged(db, SeenEvent, SeenEvent.created_at, SeenEvent.key, "Ev-invented", 30)
    await aged(db, AlertGroup, AlertGroup.started_at, AlertGroup.leader_id, old_alert, 40)
    waits = (await queue.submit(Job("mention", "C1", "2.0", "invented"))).id
    await aged(db, WorkRow, WorkRow.created_at, WorkRow.id, waits, 30)

    pruner = Pruner(db, SETTINGS)
    planned = await pruner.plan()
    expected = {
        "trace": 9,  # past trace_days, but not those of the running investigation
        "investigations": 2,  # old and middle; the running one stays
        "alerts": 1,  # the old one; the deferred one is still in triage
        "feedback": 1,
        "alert_groups": 1,
        "work": 2,  # the finished row and the delivery id; the queued row stays
        "learning_runs": 0,
    }
    assert planned == expected and set(planned) == set(KINDS)
    assert await pruner.prune() == expected  # in batches of 2
    assert await pruner.plan() == dict.fromkeys(KINDS, 0)

    inv = InvestigationStore(db)
    assert await inv.get(gone) is None and await inv.get(unlinked) is None
    assert (await inv.get(running)) is not None and (await inv.get(fresh)) is not None
    assert await inv.trace(gone) == [] and await inv.trace(fresh) == []
    assert [e["payload"] for e in await inv.trace(running)] == [{"result": "invented log row"}] * 3
    history = ConversationStore(db)
    assert await history.messages("slack:C1:old") == []
    assert [m.content for m in await history.messages("slack:C1:new")] == [
        "question new",
        "answer new",
    ]
    alerts = AlertStore(db)
    found = await alerts.search(scope=EVERYTHING, indicator="198.51.100.7")
    assert {a.id for a in found} == {kept_alert, waiting}
    [middle] = [a for a in found if a.id == kept_alert]
    assert (middle.investigation_id, middle.verdict, middle.investigation) == (None, "benign", {})
    assert await alerts.get(old_alert) is None
    assert [v.user for v in await FeedbackStore(db).votes(fresh)] == ["UNEW"]
    assert await count(db, AlertGroup) == 0 and await count(db, SeenEvent) == 0
    assert [r.id for r in await queue.active("slack:C1:2.0")] == [waits]


async def test_zero_days_keeps_a_kind_for_ever(any_db: Database) -> None:
    await investigation(any_db, "ancient", 3000)
    forever = RetentionSettings(investigations_days=0, trace_days=0)
    assert await Pruner(any_db, forever).prune() == dict.fromkeys(KINDS, 0)
    assert await count(any_db, Investigation) == 1 and await count(any_db, TraceEvent) == 3


async def test_one_prune_row_at_a_time_and_once_per_interval(any_db: Database) -> None:
    hour = timedelta(hours=1)
    first = await request_prune(any_db, hour)
    assert first is not None
    assert await request_prune(any_db, hour) is None  # one is queued
    async with any_db.session() as session:
        await session.execute(
            update(WorkRow).where(WorkRow.id == first).values(state="done", finished_at=utcnow())
        )
    assert await request_prune(any_db, hour) is None  # one finished within the hour
    await aged(any_db, WorkRow, WorkRow.finished_at, WorkRow.id, first, 1)
    assert await request_prune(any_db, hour) is not None
