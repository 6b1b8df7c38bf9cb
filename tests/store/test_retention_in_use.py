"""Alerts in use are never pruned, however old: one still received, queued,
investigating or deferred stays; past ``alerts_days`` in any other state it goes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from alerts.parse import parse_alert
from config.retention import RetentionSettings
from store.db.engine import Database
from store.retention import Pruner
from store.schema import AlertRow, AlertStatus, WorkKind, WorkState, utcnow
from store.triage.alerts import AlertStore
from tests.store.test_retention_edges import add, work

IN_USE = ["received", "queued", "investigating", "deferred"]
DONE_WITH = ["concluded", "failed", "cancelled", "grouped", "ignored", "suppressed", None]
ONLY_ALERTS = RetentionSettings(
    alerts_days=180,
    investigations_days=0,
    trace_days=0,
    feedback_days=0,
    alert_groups_days=0,
    work_days=0,
    learning_runs_days=0,
)


async def old_alert(db: Database, status: str | None, days: int = 400) -> str:
    parsed = parse_alert({"title": f"invented {status} alert", "severity": "low"})
    await AlertStore(db).save(parsed, status=status)
    async with db.session() as session:
        await session.execute(
            update(AlertRow)
            .where(AlertRow.id == parsed.id)
            .values(created_at=utcnow() - timedelta(days=days))
        )
    return parsed.id


@pytest.mark.parametrize("status", IN_USE)
async def test_an_old_alert_in_use_is_kept(db: Database, status: str) -> None:
    kept = await old_alert(db, status)
    pruner = Pruner(db, ONLY_ALERTS)
    assert (await pruner.plan())["alerts"] == 0
    assert (await pruner.prune())["alerts"] == 0
    stored = await AlertStore(db).get(kept)
    assert stored is not None and stored.status == status


@pytest.mark.parametrize("status", DONE_WITH)
async def test_an_old_alert_done_with_goes(db: Database, status: str | None) -> None:
    gone = await old_alert(db, status)
    young = await old_alert(db, status, days=179)
    assert (await Pruner(db, ONLY_ALERTS).prune())["alerts"] == 1
    assert await AlertStore(db).get(gone) is None
    assert await AlertStore(db).get(young) is not None


async def awaiting(db: Database, alert_id: str, state: WorkState) -> None:
    """A ``policy_deferred`` work row pointing at ``alert_id``, in ``state``."""
    await add(db, work(WorkKind.POLICY_DEFERRED, state, alert_id=alert_id))


@pytest.mark.parametrize("state", [WorkState.QUEUED, WorkState.RUNNING])
async def test_an_old_held_alert_is_kept_while_its_work_waits(
    db: Database, state: WorkState
) -> None:
    held = await old_alert(db, "over_budget")
    await awaiting(db, held, state)
    pruner = Pruner(db, ONLY_ALERTS)
    assert (await pruner.plan())["alerts"] == 0
    assert (await pruner.prune())["alerts"] == 0
    assert await AlertStore(db).get(held) is not None


@pytest.mark.parametrize("state", [WorkState.DONE, WorkState.FAILED, WorkState.CANCELLED])
async def test_an_old_held_alert_goes_once_its_work_ended(db: Database, state: WorkState) -> None:
    held = await old_alert(db, "over_budget")
    await awaiting(db, held, state)
    assert (await Pruner(db, ONLY_ALERTS).prune())["alerts"] == 1
    assert await AlertStore(db).get(held) is None


def test_every_status_is_placed_on_one_side() -> None:
    """A new status must be placed here. ``over_budget`` is kept only while a queued or
    running work row points at it: its ``policy_deferred`` row may end without taking it up
    (``DeferredRunner.dropped``), so keeping every held alert for ever is no answer."""
    assert set(IN_USE) | {s for s in DONE_WITH if s} | {"over_budget"} == set(AlertStatus)
