"""The auto-resolution's own checks (store/cases/auto.py) on SQLite: its UPDATE refuses every
state but an open, unowned, never auto-resolved case on the judgement it read — even at the
revision it read (states no transition makes are written directly) —, the alert's own
severity counts, what the operator reads in the log, and an audit's own guard."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from sqlalchemy import select, update

from alerts.policy.auto_resolve import read, record, refusal
from store.cases import auto, records
from store.db.engine import Database
from store.schema import AlertRow, CaseDisposition, CaseRow, CaseStatus, WorkKind, WorkRow
from tests.store.cases.auto_support import a_rule, concluded_case, resolver

AUTO = a_rule(auto_resolve=True)
DRAWN = a_rule(auto_resolve={"audit_share": 1})


async def set_case(db: Database, case_id: int, **values: Any) -> None:
    async with db.session() as session:
        await session.execute(update(CaseRow).values(**values).where(CaseRow.id == case_id))


@pytest.mark.parametrize(
    "changed",
    [
        {"status": CaseStatus.ACKNOWLEDGED},
        {"owner": "UANA00001"},
        {"auto_resolved": True},
        {"investigation_id": "run-newer"},
        {"socbot_verdict": "benign"},
        {"socbot_confidence": "medium"},
    ],
)
async def test_the_update_refuses_any_other_state_at_the_same_revision(
    db: Database, changed: dict[str, Any]
) -> None:
    case = await concluded_case(db, 1, AUTO)
    await set_case(db, case.id, **changed)  # the revision stays what the resolver read
    assert await resolver(db)(case) is None
    now = await records.get(db, case.id)
    assert now is not None and (now.revision, now.resolved_by) == (case.revision, None)


async def test_the_closed_case_is_not_escalated(db: Database) -> None:
    case = await concluded_case(db, 1, AUTO)
    await set_case(db, case.id, escalated=True)  # whatever was there before
    done = await resolver(db)(case)
    assert done is not None and done.case.escalated is False


@pytest.mark.parametrize(("severity", "closed"), [("low", True), ("critical", False)])
async def test_the_alerts_own_severity_counts(db: Database, severity: str, closed: bool) -> None:
    async with db.session() as session:  # another alert first: the query must pick its own
        for alert_id, level in (("alert-0", "low"), ("alert-1", severity), ("alert-2", "low")):
            session.add(
                AlertRow(id=alert_id, source="guardduty", title="t", severity=level, raw={})
            )
    case = await concluded_case(db, 1, AUTO, severity="low")
    assert (await resolver(db)(case) is not None) is closed


async def test_what_the_operator_reads_in_the_log(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    refused = await concluded_case(db, 1, AUTO, confidence="medium")
    unruled = await concluded_case(db, 2, None)
    with caplog.at_level(logging.INFO, logger="store.cases.auto"):
        assert await resolver(db)(refused) is None
        assert await resolver(db)(unruled) is None
    why = refusal(read(record(AUTO)), "false_positive", "medium", (None, "low", "low"))
    assert why is not None
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", f"case {refused.id} not auto-resolved by gd-noise: {why}")
    ]


async def test_an_audit_needs_an_auto_resolved_drawn_case(db: Database) -> None:
    case = await concluded_case(db, 1, None)
    await set_case(db, case.id, audit=True)  # drawn, never auto-resolved: no audit
    tp = CaseDisposition.TRUE_POSITIVE
    assert await auto.audit(db, case.id, "U1", tp, seen=case.revision, via="cli") is None
    drawn = await resolver(db)(await concluded_case(db, 2, DRAWN))
    assert drawn is not None  # against socbot's false_positive, but capture not asked
    assert await auto.audit(db, drawn.case.id, "U1", tp, seen=drawn.case.revision, via="cli")
    async with db.reading() as session:
        kinds = list(await session.scalars(select(WorkRow.kind)))
    assert WorkKind.CASE_CAPTURE not in kinds and WorkKind.CASE_POST in kinds
