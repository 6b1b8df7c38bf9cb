"""The alert-only baseline (``socbot eval run --alert-only``): the same model concludes
from the alert alone.

The run is the engine's own (``agent.run.open_run``, the concluder's prompt and schema,
the review, the investigation stored) with an empty plan and no tools: no table is
catalogued and the registry is empty, so the conclusion can only rest on the alert.
Its figures sit beside the investigation's (``summary.alert_only``): what investigating
adds is the difference.
"""

from __future__ import annotations

from agent import concluding
from agent.engine import Engine
from agent.errors import AgentError
from agent.planner import Plan
from agent.run import Outcome, Request, close_run, failed, open_run, outcome
from config.settings import Settings
from core.events import NullSink
from store.schema import InvestigationStatus
from tools.base import ToolRegistry

OBJECTIVE = "Decide from the alert alone (no tool is available): verdict, severity, why"


def alert_only_settings(settings: Settings) -> Settings:
    """``settings`` with no log table and no runbook: nothing to query."""
    logs = settings.logs.model_copy(update={"tables": [], "runbooks_dir": None})
    return settings.model_copy(update={"logs": logs})


def no_tools() -> ToolRegistry:
    return ToolRegistry()


async def conclude_alert_only(engine: Engine, request: Request) -> Outcome:
    """The conclusion of ``request``'s alert with an empty plan, reviewed as usual."""
    run = await open_run(
        request,
        NullSink(),
        investigations=engine.investigations,
        registry=engine.registry,
        settings=engine.settings,
    )
    plan = Plan(objective=OBJECTIVE, steps=[])
    run.plan = plan
    try:
        conclusion, by_model = await concluding.conclude_plan(engine.kit, run, plan, [], None)
        conclusion = await concluding.review(engine.kit, run, plan, [], conclusion, by_model)
        result = outcome(run, InvestigationStatus.CONCLUDED, conclusion=conclusion)
    except AgentError as exc:
        result = await failed(run, str(exc))
    await close_run(engine.investigations, result)
    return result
