"""``socbot usage`` files each investigation under its real source, also a run that
ended before its alert was stored (cancelled, or failed and handed back to the queue),
and an alert run that nothing says the source of as ``unknown``, never a guess.

The runs are real: the engine on the runtime the commands use, with the scripted model
at the network edge, once on SQLite and once on PostgreSQL (the source is read with a
JSON path in SQL on both).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from agent.run import Request
from alerts.parse import parse_alert
from cli.runtime import open_runtime
from config.settings import Settings
from core.events import NullSink
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.investigations.usage import UNKNOWN, UsageStore, summarise
from store.triage.alerts import AlertStore
from tests.cli.test_cli import ALERTS
from tests.cli.test_show_trace import PLAN  # one step, searching past alerts
from tests.fakes.model import ModelRequest, ScriptedModel, json_response


async def test_a_run_cancelled_before_its_alert_was_stored_keeps_the_alerts_source(
    any_db: Database,
) -> None:
    alert = parse_alert(json.loads((ALERTS / "leveret-scc.json").read_text()))
    assert alert.source not in ("alert", UNKNOWN)
    in_step = asyncio.Event()

    async def hang(_request: ModelRequest) -> object:
        in_step.set()
        await asyncio.Event().wait()  # until cancelled, as Ctrl-C or a stopping replica does
        raise AssertionError("not cancelled")

    url = any_db.engine.url.render_as_string(hide_password=False)
    since = datetime.now(UTC) - timedelta(minutes=1)
    model = ScriptedModel({"planner": [json_response(PLAN)], "step": hang})
    async with open_runtime(Settings(database_url=url), backend=model) as rt:
        run = asyncio.create_task(
            rt.engine.run(
                Request(conversation_id="cli:0123456789ab", text="Investigate.", alert=alert),
                NullSink(),
            )
        )
        await in_step.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        # nothing stored the alert (the terminal stores it after its run, Slack links it)
        assert await AlertStore(rt.db).get(alert.id) is None
        rows = await UsageStore(rt.db).rows(since)

    (row,) = rows
    cancelled = await InvestigationStore(any_db).get(row.investigation_id)
    assert cancelled is not None and cancelled.status == "cancelled"
    assert row.source == alert.source
    assert row.usage["llm_calls"] == 1  # the planner's call is counted under it
    assert set(summarise(rows, "source")) == {alert.source}


async def test_an_alert_run_that_names_no_source_is_unknown_and_a_question_stays_one(
    any_db: Database,
) -> None:
    """Rows as a run leaves them when its record says nothing of its alert (a record cut
    short before the engine wrote one; invented rows, no alert stored for either)."""
    investigations = InvestigationStore(any_db)
    since = datetime.now(UTC) - timedelta(minutes=1)
    for inv_id, kind in (("inv-alert", "alert"), ("inv-question", "question")):
        await investigations.create(inv_id, f"slack:C0SOC:{inv_id}", kind, "x")
        await investigations.finish(
            inv_id,
            status="failed",
            mode=None,
            objective=None,
            verdict=None,
            record={"alert": None},
            usage={"calls": 0},
            error="Gemini is unavailable.",
        )
    rows = await UsageStore(any_db).rows(since)
    assert {r.investigation_id: r.source for r in rows} == {
        "inv-alert": UNKNOWN,
        "inv-question": "question",
    }
