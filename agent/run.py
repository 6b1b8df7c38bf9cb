"""One investigation run: the request, its state while it runs, and how it ended.

``open_run`` creates the investigation row, the trace recorder and the call contexts (``work``
stops short of the deadline and token shares kept for the conclusion and its review; ``final``
short of the review's; ``review_ctx`` may use all). ``outcome`` builds ``Outcome.record`` (what
``--json`` prints, the row stores) and ``Outcome.evidence`` (each successful call by reference);
``close_run`` stores it, ``record_ended`` too for a run ended by cancellation or a bug.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from agent.concluder import Conclusion
from agent.executor import ToolRunner
from agent.model.fence import Fence
from agent.model.gateway import CallContext
from agent.planner import Plan
from agent.prompts import Manual, alert_text
from agent.review.critic import Review
from alerts.parse import Alert
from config.settings import Settings
from core.approvals import Approver
from core.events import Failed, FanOut, Sink, Started
from core.scope import NOTHING, Scope
from core.usage import Usage
from store.investigations.runs import InvestigationStore
from store.schema import InvestigationStatus, RunEnd
from tools.base import ToolRegistry

log = logging.getLogger(__name__)

ERROR_CHARS = 300
ALERT_ENTITIES = 20  # of the alert's entities, in the record

Mode = Literal["direct", "planned"]
Status = RunEnd  # how a run ends: what ``investigations.status`` stores for it


@dataclass
class Request:
    """What to work on: an analyst's message, and the alert when there is one."""

    conversation_id: str
    text: str
    alert: Alert | None = None
    user: str | None = None  # who asked (a Slack user id), when known
    mode: Mode | None = None  # imposed (the alert policy's rule), else the engine chooses
    model: str | None = None  # instead of models.main (the alert policy's rule; priced)
    approver: Approver | None = None  # asked before risky calls (None: they are refused)
    scope: Scope = NOTHING  # the past alerts its tools may see (``core.scope``; none unless set)

    @property
    def kind(self) -> Literal["alert", "question"]:
        """``alert`` when there is an alert to investigate, else ``question``."""
        return "alert" if self.alert else "question"

    @property
    def source(self) -> str | None:
        """The alert's source (it selects per-source prompts), if there is an alert."""
        return self.alert.source if self.alert else None


def alert_request_text(alert: Alert) -> str:
    """What the engine is asked for an alert, from Slack, the terminal, MCP or an eval alike
    (the alert itself travels as data, beside the text)."""
    return f"Investigate this {alert.source} alert: {alert.title}"


@dataclass
class Outcome:
    """How a run ended. ``record`` is the full investigation record (``--json``)."""

    investigation_id: str
    mode: Mode
    status: Status
    answer: str | None = None
    conclusion: Conclusion | None = None
    plan: Plan | None = None
    limits_hit: list[str] = field(default_factory=list)
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    review: Review | None = None
    unavailable: bool = False  # failed because the model was unavailable: worth a retry
    evidence: dict[str, str] = field(default_factory=dict)


@dataclass
class Run:
    """The state of one investigation while it runs."""

    id: str
    request: Request
    sink: Sink
    work: CallContext  # steps, planning, reflection: stops short of the reserve
    final: CallContext  # the conclusion / direct answer: stops short of the review's share
    review_ctx: CallContext  # the review of the conclusion or answer: the whole budget
    runner: ToolRunner
    started: float
    variables: dict[str, Any]
    mode: Mode = "planned"
    plan: Plan | None = None
    limits_hit: list[str] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)
    review: Review | None = None

    def manual_variables(self) -> dict[str, Any]:
        """The fence and what the shared manual (``_manual.j2``) is rendered from."""
        return {k: self.variables[k] for k in ("data", "environment", "tables", "manual")}


async def open_run(
    request: Request,
    sink: Sink,
    *,
    investigations: InvestigationStore,
    registry: ToolRegistry,
    settings: Settings,
) -> Run:
    """Record the investigation as running and build its state; emits ``Started``."""
    limits = settings.limits
    investigation_id = uuid.uuid4().hex
    await investigations.create(
        investigation_id, request.conversation_id, request.kind, history_user_text(request)
    )
    fan = FanOut(investigations.recorder(investigation_id), sink)
    now = time.monotonic()
    deadline = now + limits.deadline_s
    grace = min(limits.conclude_grace_s, limits.deadline_s * 0.2)
    reserve = min(limits.conclude_reserve_tokens, limits.token_budget // 5)
    review_grace, review_reserve = 0.0, 0
    if settings.review.enabled:
        review_grace = min(settings.review.grace_s, limits.deadline_s * 0.2)
        review_reserve = min(settings.review.reserve_tokens, limits.token_budget // 5)
    usage, fence = Usage(), Fence()

    def context(tokens: int, until: float) -> CallContext:
        """The run's calls, within ``tokens`` and by ``until``, on the request's model."""
        return CallContext(investigation_id, fan, tokens, until, usage, fence, request.model)

    run = Run(
        id=investigation_id,
        request=request,
        sink=fan,
        work=context(
            limits.token_budget - reserve - review_reserve, deadline - grace - review_grace
        ),
        final=context(limits.token_budget - review_reserve, deadline - review_grace),
        review_ctx=context(limits.token_budget, deadline),
        runner=ToolRunner(
            registry, investigation_id=investigation_id, sink=fan, fence=fence, request=request
        ),
        started=now,
        variables={
            "data": fence,
            "request": request.text,
            "alert": alert_text(request.alert) if request.alert else None,
            "environment": settings.environment,
            "tables": settings.logs.tables,
            "manual": Manual(  # the shared system instruction's deployment facts
                catalogue=registry.catalogue_text(),
                disabled=dict(registry.disabled),
                max_steps=limits.max_steps,
                max_tool_calls=limits.max_tool_calls_per_step,
            ),
            "now": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
            "playbook": [],  # the team playbook's bullets, chosen before planning
        },
        record={
            "timings": {},
            "reflections": [],
            "waves": [],
            "plan_versions": [],
            "playbook": {"loaded": [], "used": [], "used_by": {}, "reasons": {}, "tokens": 0},
        },
    )
    await fan.emit(
        Started(
            investigation_id=investigation_id,
            kind=request.kind,
            conversation_id=request.conversation_id,
        )
    )
    return run


def outcome(
    run: Run,
    status: Status,
    *,
    answer: str | None = None,
    conclusion: Conclusion | None = None,
    error: str | None = None,
) -> Outcome:
    """The run's ``Outcome``, with its full record filled in."""
    usage = run.work.usage.as_dict()
    run.record["timings"]["total_ms"] = ms_since(run.started)
    run.record.update(
        investigation_id=run.id,
        conversation_id=run.request.conversation_id,
        kind=run.request.kind,
        request=run.request.text,
        alert=_alert_ref(run.request.alert),
        mode=run.mode,
        status=status,
        objective=run.plan.objective if run.plan else None,
        plan=run.plan.model_dump() if run.plan else None,
        conclusion=conclusion.model_dump() if conclusion else None,
        answer=answer,
        limits_hit=list(run.limits_hit),
        error=error,
        usage=usage,
        review=run.review.model_dump() if run.review else None,
    )
    return Outcome(
        investigation_id=run.id,
        mode=run.mode,
        status=status,
        answer=answer,
        conclusion=conclusion,
        plan=run.plan,
        limits_hit=list(run.limits_hit),
        error=error,
        usage=usage,
        record=run.record,
        review=run.review,
        evidence={r: i.searchable() for r, i in run.runner.evidence.items.items() if i.ok},
    )


async def failed(run: Run, message: str) -> Outcome:
    """End the run as ``failed`` with one user-safe sentence; emits ``Failed``."""
    error = _sentence(message)
    await run.sink.emit(Failed(investigation_id=run.id, reason=error))
    return outcome(run, InvestigationStatus.FAILED, error=error)


async def close_run(investigations: InvestigationStore, result: Outcome) -> None:
    """Store the run's final summary and record."""
    await investigations.finish(
        result.investigation_id,
        status=result.status,
        mode=result.mode,
        objective=result.plan.objective if result.plan else None,
        verdict=result.conclusion.verdict if result.conclusion else None,
        record=result.record,
        usage=result.usage,
        error=result.error,
    )


async def record_ended(
    investigations: InvestigationStore,
    run: Run,
    status: Literal[InvestigationStatus.FAILED, InvestigationStatus.CANCELLED],
    reason: str,
) -> None:
    """Best-effort bookkeeping when a run ends by cancellation or a bug."""
    result = outcome(run, status, error=reason)
    try:
        await run.sink.emit(Failed(investigation_id=run.id, reason=reason))
        await close_run(investigations, result)
    except Exception:  # fail open: bookkeeping must not mask the original exception
        log.exception("could not record investigation %s as %s", run.id, status)


def ms_since(started: float) -> float:
    """Milliseconds since the ``time.monotonic()`` value ``started``, to 0.1 ms."""
    return round((time.monotonic() - started) * 1000, 1)


def history_user_text(request: Request) -> str:
    """The user's turn as the conversation remembers it (alerts by title and indicators)."""
    alert = request.alert
    if alert is None:
        return request.text
    indicators = ", ".join(f"{i.kind} {i.value}" for i in alert.indicators[:20])
    line = f"[alert from {alert.source}: {alert.title}{'; ' + indicators if indicators else ''}]"
    return f"{request.text}\n{line}" if request.text else line


def _sentence(message: str) -> str:
    """One short user-safe sentence from an error message."""
    text = " ".join(message.split()) or "The investigation failed."
    return text[: ERROR_CHARS - 1] + "…" if len(text) > ERROR_CHARS else text


def _alert_ref(alert: Alert | None) -> dict[str, Any] | None:
    if alert is None:
        return None
    ref = {"id": alert.id, "source": alert.source, "title": alert.title}
    when = alert.event_time.isoformat() if alert.event_time else None  # entities: list, search
    entities = [e.model_dump() for e in alert.entities[:ALERT_ENTITIES]]
    return {**ref, "severity": alert.severity, "event_time": when, "entities": entities}
