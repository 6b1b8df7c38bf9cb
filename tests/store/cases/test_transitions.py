"""Cases' transitions on SQLite and PostgreSQL: each recorded once, in order, told once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import func, select, update

from store.cases import records, transitions
from store.cases.opening import open_for_run
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.schema import (
    CaseAction,
    CaseDisposition,
    CaseEvent,
    CaseRow,
    CaseStatus,
    WorkKind,
    WorkRow,
    utcnow,
)
from tests.store.cases.case_support import CHANNEL, THREAD, a_case, concluded


async def posts(db: Database) -> list[dict[str, object]]:
    async with db.session() as session:
        rows = await session.scalars(
            select(WorkRow).where(WorkRow.kind == WorkKind.CASE_POST).order_by(WorkRow.id)
        )
        return [dict(r.request) for r in rows]


async def test_a_case_copies_the_run_and_opens_once(any_db: Database) -> None:
    case = await a_case(any_db, used_bullets=("b1",))
    assert (case.status, case.revision, case.owner) == (CaseStatus.OPEN, 1, None)
    assert (case.channel, case.thread_ts, case.alert_id) == (CHANNEL, THREAD, "alert-1")
    assert (case.socbot_verdict, case.socbot_severity, case.socbot_confidence) == (
        "true_positive",
        "high",
        "high",
    )
    assert (case.source, case.format, case.model, case.severity) == (
        "guardduty",
        "guardduty",
        "gemini-test",
        "high",
    )
    assert case.used_bullets is True
    again = await open_for_run(any_db, "run-1")
    assert again is not None and again.id == case.id
    history = await records.history(any_db, case.id)
    assert [(e.action, e.revision) for e in history] == [(CaseAction.OPENED, 1)]
    assert await posts(any_db) == []  # the conclusion's buttons say it: nothing posted


async def test_the_same_alert_run_again_keeps_its_case(any_db: Database) -> None:
    case = await a_case(any_db)
    await concluded(any_db, "run-2", verdict="benign")
    again = await open_for_run(any_db, "run-2")
    assert again is not None and again.id == case.id
    assert (again.investigation_id, again.socbot_verdict) == ("run-2", "benign")


async def test_an_older_runs_conclusion_does_not_take_the_case_back(any_db: Database) -> None:
    case = await a_case(any_db)
    await concluded(any_db, "run-2", verdict="benign")
    await open_for_run(any_db, "run-2")
    again = await open_for_run(any_db, "run-1")  # a click on the first conclusion
    assert again is not None and again.id == case.id
    assert (again.investigation_id, again.socbot_verdict) == ("run-2", "benign")


async def test_only_a_concluded_run_opens_a_case(any_db: Database) -> None:
    assert await open_for_run(any_db, "nope") is None


async def test_take_assign_resolve_reopen(any_db: Database) -> None:
    case = await a_case(any_db)
    taken = await transitions.take(any_db, case.id, "UANA", seen=1, via="slack")
    assert taken is not None and taken.case.owner == "UANA"
    assert taken.case.status == CaseStatus.ACKNOWLEDGED and taken.case.acknowledged_at
    first_ack = taken.case.acknowledged_at
    assert await transitions.take(any_db, case.id, "UANA", seen=2, via="slack") is None
    given = await transitions.assign(any_db, case.id, "UANA", "UBOB", seen=2, via="slack")
    assert given is not None and given.case.owner == "UBOB"
    assert given.case.acknowledged_at == first_ack  # the first acknowledgement counts
    resolution = Resolution(CaseDisposition.FALSE_POSITIVE, True, " noisy ", "the VPN range")
    done = await transitions.resolve(any_db, case.id, "UCAROL", resolution, seen=3, via="cli")
    assert done is not None
    assert (done.case.status, done.case.disposition, done.case.owner) == (
        CaseStatus.RESOLVED,
        "false_positive",
        "UBOB",  # the owner stays the owner
    )
    assert (done.case.reason, done.case.missed, done.case.resolved_by) == (
        "noisy",
        "the VPN range",
        "UCAROL",
    )
    assert await transitions.resolve(any_db, case.id, "UB", resolution, seen=4, via="cli") is None
    back = await transitions.reopen(any_db, case.id, "UBOB", seen=4, via="slack")
    assert back is not None and back.case.status == CaseStatus.ACKNOWLEDGED
    assert back.case.disposition is None and back.case.resolved_at is None
    assert await transitions.reopen(any_db, case.id, "UBOB", seen=5, via="slack") is None
    history = await records.history(any_db, case.id)
    assert [(e.action, e.actor, e.owner) for e in history] == [
        (CaseAction.OPENED, "socbot", None),
        (CaseAction.TAKEN, "UANA", "UANA"),
        (CaseAction.ASSIGNED, "UANA", "UBOB"),
        (CaseAction.RESOLVED, "UCAROL", "UBOB"),
        (CaseAction.REOPENED, "UBOB", "UBOB"),
    ]
    assert history[3].detail == {"escalated": True, "reason": "noisy", "missed": "the VPN range"}
    assert [p["revision"] for p in await posts(any_db)] == [2, 3, 4, 5]


async def test_resolving_an_unowned_case_makes_it_the_resolvers(any_db: Database) -> None:
    case = await a_case(any_db)
    done = await transitions.resolve(
        any_db, case.id, "UANA", Resolution(CaseDisposition.BENIGN), seen=1, via="slack"
    )
    assert done is not None and done.case.owner == "UANA" and done.case.acknowledged_at


async def test_a_stale_revision_changes_nothing(any_db: Database) -> None:
    case = await a_case(any_db)
    assert await transitions.take(any_db, case.id, "UANA", seen=1, via="slack") is not None
    assert await transitions.take(any_db, case.id, "UBOB", seen=1, via="slack") is None
    stored = await records.get(any_db, case.id)
    assert stored is not None and (stored.owner, stored.revision) == ("UANA", 2)


async def test_two_deciders_at_once_one_wins_recorded_once(any_db: Database) -> None:
    """Two separate engines (two replicas) on the same database decide at the same time."""
    case = await a_case(any_db)
    other = Database(str(any_db.engine.url.render_as_string(hide_password=False)))
    try:
        for _ in range(5):
            stored = await records.get(any_db, case.id)
            assert stored is not None
            seen = stored.revision
            results = await asyncio.gather(
                transitions.take(any_db, case.id, "UANA", seen=seen, via="slack"),
                transitions.take(other, case.id, "UBOB", seen=seen, via="slack"),
            )
            assert sum(r is not None for r in results) == 1
        async with any_db.session() as session:
            events = await session.scalar(select(func.count()).select_from(CaseEvent))
        assert events == 6  # opened + five decisions, each once
        assert len(await posts(any_db)) == 5
    finally:
        await other.close()


async def test_reminders_are_due_once_by_severity(any_db: Database) -> None:
    high = await a_case(any_db, "run-h", alert_id="a-h", severity="high")
    low = await a_case(any_db, "run-l", alert_id="a-l", severity="low")
    owned = await a_case(any_db, "run-o", alert_id="a-o", severity="critical")
    await transitions.take(any_db, owned.id, "UANA", seen=1, via="slack")
    after = {"high": timedelta(minutes=30), "critical": timedelta(minutes=10)}
    assert await transitions.due_reminders(any_db, after) == []
    past = utcnow() - timedelta(hours=1)
    async with any_db.session() as session:
        await session.execute(update(CaseRow).values(created_at=past))
    assert await transitions.due_reminders(any_db, after) == [(high.id, 1)]
    assert low.id not in dict(await transitions.due_reminders(any_db, after))
    reminded = await transitions.remind(any_db, high.id, seen=1)
    assert reminded is not None and reminded.event.actor == "socbot"
    assert await transitions.remind(any_db, high.id, seen=2) is None
    assert await transitions.due_reminders(any_db, after) == []
    assert await posts(any_db) == [
        {"case_id": owned.id, "revision": 2},
        {"case_id": high.id, "revision": 2},
    ]


async def test_listing(any_db: Database) -> None:
    one = await a_case(any_db, "run-1", alert_id="a1", severity="high")
    two = await a_case(any_db, "run-2", alert_id="a2", severity="low")
    await transitions.take(any_db, two.id, "UANA", seen=1, via="cli")
    mine = await records.listed(any_db, records.Listing(owner="UANA"))
    assert [c.id for c in mine] == [two.id]
    unowned = await records.listed(any_db, records.Listing(unowned=True, open_only=True))
    assert [c.id for c in unowned] == [one.id]
    by_age = await records.listed(any_db, records.Listing(oldest_first=True))
    assert [c.id for c in by_age] == [one.id, two.id]
    assert (await records.of_run(any_db, "run-2")) is not None
