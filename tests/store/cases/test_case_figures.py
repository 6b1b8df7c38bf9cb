"""The run's figures on the case: copied when the case opens, kept when the run finishes
again or a newer run takes the case, and filled by migration 0015 for stored cases."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from store.cases import records
from store.cases.opening import open_for_run
from store.db import migrate
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.schema import InvestigationStatus, run_figures
from tests.store.cases.case_support import a_case, concluded

T0 = datetime(2026, 11, 2, 8, tzinfo=UTC)


@pytest.mark.parametrize(
    ("usage", "record", "expected"),
    [
        (
            {"total_tokens": 1200, "cost_usd": 0.25},
            {"playbook": {"holdout": True}},
            (1200, 0.25, 1),
        ),
        ({"total_tokens": "9" * 9, "cost_usd": -3}, {"playbook": {"holdout": "1"}}, (0, 0.0, 0)),
        ({"total_tokens": True, "cost_usd": float("nan")}, {"playbook": []}, (0, 0.0, False)),
        ({"total_tokens": float("inf")}, None, (0, 0.0, False)),
        (None, "not a record", (0, 0.0, False)),
    ],
)
def test_figures_take_only_numbers_and_a_true_holdout(
    usage: object, record: object, expected: tuple[int, float, bool]
) -> None:
    found = run_figures(usage, record, T0, T0 + timedelta(seconds=42.5))
    assert (found["tokens"], found["cost_usd"], found["holdout"]) == expected
    assert found["seconds"] == 42.5
    assert run_figures(usage, record, T0.replace(tzinfo=None), T0)["seconds"] == 0.0
    assert run_figures(usage, record, T0, None)["seconds"] == 0.0
    assert run_figures(usage, record, T0, T0 - timedelta(seconds=5))["seconds"] == 0.0


async def _finish(db: Database, run_id: str, tokens: int, cost: float, holdout: bool) -> None:
    await InvestigationStore(db).finish(
        run_id,
        status=InvestigationStatus.CONCLUDED,
        mode="planned",
        objective="o",
        verdict="true_positive",
        record={"alert": {"id": "alert-1"}, "playbook": {"holdout": holdout}},
        usage={"total_tokens": tokens, "cost_usd": cost},
        error=None,
    )


async def test_the_case_copies_and_keeps_its_runs_figures(any_db: Database) -> None:
    case = await a_case(any_db)
    assert (case.tokens, case.cost_usd, case.holdout) == (0, 0.0, False)
    assert case.seconds >= 0.0
    await _finish(any_db, "run-1", 5000, 0.5, True)  # the run finishes after the case opened
    found = await records.get(any_db, case.id)
    assert found is not None and (found.tokens, found.cost_usd, found.holdout) == (5000, 0.5, True)
    await concluded(any_db, "run-2")  # the alert investigated again
    await _finish(any_db, "run-2", 700, 0.07, False)
    taken = await open_for_run(any_db, "run-2")
    assert taken is not None and taken.id == case.id
    assert (taken.tokens, taken.cost_usd, taken.holdout) == (700, 0.07, False)


async def test_migration_0015_fills_the_stored_cases(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}")
    await migrate.upgrade(db.engine, "0014")
    async with db.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO investigations (id, conversation_id, kind, status, input, record,"
                " usage, created_at, finished_at) VALUES ('inv1', 'slack:C1:1.0', 'alert',"
                " 'concluded', 'x', :record, :usage, '2026-11-02 08:00:00',"
                " '2026-11-02 08:01:30')"
            ),
            {
                "record": json.dumps({"playbook": {"holdout": True}}),
                "usage": json.dumps({"total_tokens": 4321, "cost_usd": 0.125}),
            },
        )
        await conn.execute(
            text(
                "INSERT INTO cases (investigation_id, title, status, revision, escalated,"
                " used_bullets, auto_resolved, audit, created_at, updated_at) VALUES"
                " ('inv1', 't', 'open', 1, 0, 0, 0, 0, '2026-11-02 08:01:30',"
                " '2026-11-02 08:01:30')"
            )
        )
    await db.create()
    assert await migrate.current(db.engine) == migrate.head()
    case = await records.get(db, 1)
    assert case is not None
    assert (case.tokens, case.cost_usd, case.seconds, case.holdout) == (4321, 0.125, 90.0, True)
    await db.close()
