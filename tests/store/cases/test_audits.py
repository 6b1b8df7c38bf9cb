"""The blind reviews (store/cases/audits.py) on SQLite: which cases await one, a review on the
case as read even when another decision moved it, the race lost to a concurrent review, and
a review against socbot's verdict queued for the team's pack in the review's transaction."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from store.cases import audits, auto, records, transitions
from store.cases.audits import GONE, MOVED, NOT_DRAWN, REVIEWED
from store.cases.transitions import Decided
from store.db.engine import Database
from store.schema import CaseAction, CaseDisposition, CaseRow, WorkKind, WorkRow
from tests.store.cases.auto_support import a_rule, concluded_case, resolver

TP, FP, BENIGN = CaseDisposition.TRUE_POSITIVE, CaseDisposition.FALSE_POSITIVE, "benign"


async def auto_case(db: Database, n: int = 1, share: float = 1.0) -> CaseRow:
    case = await concluded_case(db, n, a_rule(auto_resolve={"audit_share": share}))
    done = await resolver(db)(case)
    assert done is not None
    return done.case


async def captures(db: Database) -> list[dict[str, Any]]:
    async with db.reading() as session:
        rows = await session.scalars(
            select(WorkRow).where(WorkRow.kind == WorkKind.CASE_CAPTURE).order_by(WorkRow.id)
        )
        return [dict(r.request) for r in rows]


async def test_the_drawn_unanswered_cases_await_a_review_oldest_first(db: Database) -> None:
    first, second = await auto_case(db, 1), await auto_case(db, 2)
    await auto_case(db, 3, share=0.0)  # not drawn
    human = await concluded_case(db, 4, None)  # a person's case
    answered = await auto_case(db, 5)
    assert isinstance(await audits.review(db, answered, "U1", TP, via="cli"), Decided)
    async with db.session() as session:  # the first opened last; drawn, never auto-resolved
        later = second.created_at + timedelta(hours=1)
        await session.execute(update(CaseRow).values(created_at=later).where(CaseRow.id == 1))
        await session.execute(update(CaseRow).values(audit=True).where(CaseRow.id == human.id))
    assert [c.id for c in await audits.awaiting(db, limit=50)] == [second.id, first.id]
    assert [c.id for c in await audits.awaiting(db, limit=1)] == [second.id]


async def test_a_review_is_recorded_as_whoever_gave_it(db: Database) -> None:
    case = await auto_case(db)
    done = await audits.review(db, case, "cli:ana", TP, via="cli")
    assert isinstance(done, Decided)
    assert (done.event.action, done.event.actor, done.event.via) == (
        CaseAction.AUDITED,
        "cli:ana",
        "cli",
    )
    now = await records.get(db, case.id)
    assert now is not None and (now.audit_disposition, now.audit_by) == (TP, "cli:ana")
    assert await audits.review(db, now, "U2", FP, via="slack") == REVIEWED
    assert await audits.review(db, case, "U2", FP, via="slack") == REVIEWED  # as read before


async def test_what_takes_no_review(db: Database) -> None:
    undrawn = await auto_case(db, 1, share=0.0)
    human = await concluded_case(db, 2, None)
    assert await audits.review(db, undrawn, "U1", TP, via="cli") == NOT_DRAWN
    assert await audits.review(db, human, "U1", TP, via="cli") == NOT_DRAWN
    assert await audits.review(db, None, "U1", TP, via="cli") == GONE
    # drawn but not auto-resolved (a state no transition makes): still no review
    async with db.session() as session:
        await session.execute(update(CaseRow).values(audit=True).where(CaseRow.id == human.id))
    assert await audits.review(db, await records.get(db, human.id), "U1", TP, via="cli") == (
        NOT_DRAWN
    )


@pytest.mark.parametrize("capture", [False, True])
async def test_a_decision_in_between_is_read_again(db: Database, capture: bool) -> None:
    case = await auto_case(db)  # as the reviewer read it: revision 2
    assert await transitions.reopen(db, case.id, "ULEAD", seen=2, via="slack")
    done = await audits.review(db, case, "U1", TP, via="slack", capture=capture)
    assert isinstance(done, Decided) and done.event.revision == 4
    assert done.case.audit_disposition == TP
    assert [r["revision"] for r in await captures(db)] == [4] * capture


async def test_a_concurrent_review_wins_and_the_other_is_told(db: Database) -> None:
    case = await auto_case(db)
    assert await auto.audit(db, case.id, "U2", FP, seen=case.revision, via="slack")
    assert await audits.review(db, case, "U1", TP, via="slack") == REVIEWED
    now = await records.get(db, case.id)
    assert now is not None and (now.audit_disposition, now.audit_by) == (FP, "U2")


@pytest.mark.parametrize("attempts", [None, 1, 3])
async def test_a_case_that_keeps_moving_is_given_up_after_the_attempts(
    db: Database, monkeypatch: pytest.MonkeyPatch, attempts: int | None
) -> None:
    """Another decision lands before every attempt: tried ``attempts`` times (2 unless
    told), each on the revision read again, then MOVED."""
    case = await auto_case(db)
    real, tried = auto.audit, []

    async def moved_first(*args: Any, **kwargs: Any) -> Decided | None:
        tried.append(kwargs["seen"])
        async with db.session() as session:
            await session.execute(
                update(CaseRow).values(revision=CaseRow.revision + 1).where(CaseRow.id == case.id)
            )
        return await real(*args, **kwargs)

    monkeypatch.setattr(auto, "audit", moved_first)
    kwargs = {} if attempts is None else {"attempts": attempts}
    assert await audits.review(db, case, "U1", TP, via="cli", **kwargs) == MOVED  # type: ignore[arg-type]
    assert tried == [2, 3, 4][: attempts or 2]
    assert (await records.get(db, case.id)).audit_disposition is None  # type: ignore[union-attr]


async def test_a_review_against_socbot_is_captured_in_its_transaction(db: Database) -> None:
    missed, agreed, duplicate, unasked = [await auto_case(db, n) for n in range(1, 5)]
    assert isinstance(await audits.review(db, missed, "U1", TP, via="slack", capture=True), Decided)
    for case, answer in ((agreed, BENIGN), (duplicate, CaseDisposition.DUPLICATE)):
        done = await audits.review(db, case, "U1", answer, via="slack", capture=True)  # type: ignore[arg-type]
        assert isinstance(done, Decided)
    assert isinstance(await audits.review(db, unasked, "U1", TP, via="cli"), Decided)
    assert await captures(db) == [
        {
            "case_id": missed.id,
            "revision": 3,
            "investigation_id": missed.investigation_id,
            "disposition": "true_positive",
            "verdict": "false_positive",
            "audit": True,
        }
    ]


async def test_a_resolution_captures_the_analysts_disposition_not_an_audit(db: Database) -> None:
    case = await concluded_case(db, 1, None)
    resolution = transitions.Resolution(TP)
    assert await transitions.resolve(db, case.id, "U1", resolution, seen=1, via="cli", capture=True)
    [request] = await captures(db)
    assert (request["disposition"], request["audit"]) == ("true_positive", False)
