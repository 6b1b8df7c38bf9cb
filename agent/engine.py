"""The engine: classify → (direct loop | plan → waves of steps → reflect → conclude).

``Engine.run`` reads like the diagram in DESIGN.md. Every run is an investigation
row plus an append-only trace (every progress event goes to the trace recorder and
to the caller's sink). Hard limits always hold: steps, waves, tool calls per step,
a wall-clock deadline and a token budget; a slice of the deadline and budget is
kept for the conclusion, so a run that hits a limit still concludes and says so.
With ``limits.speculative_conclusion`` the conclusion is started beside the last
reflection when no step is pending, and used unless that reflection adds a step
(``agent.waves`` explains the rule; ``agent.concluder.Speculation`` the mechanics).

Dependency policy: a step whose dependency failed or was cancelled still runs
after it (its prompt names the missing dependency) unless the reflector cancels
it; a cancelled step is never run.

``run`` never raises for model, tool or limit failures (``Outcome.status`` is
``failed`` with a one-sentence ``error``); on cancellation it records the
investigation as cancelled and re-raises ``asyncio.CancelledError``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from google.genai import types

from agent.alerts import Alert
from agent.classifier import classify
from agent.concluder import Conclusion, Speculation, conclude, fallback_conclusion, to_markdown
from agent.errors import AgentError
from agent.events import (
    Answered,
    Concluded,
    Failed,
    FanOut,
    ModeChosen,
    PlanCreated,
    Sink,
    Started,
)
from agent.executor import ToolRunner, tool_loop
from agent.gateway import CallContext, LLMGateway
from agent.history import History
from agent.planner import Plan, make_plan
from agent.prompts import Fence, Prompts, Rendered, alert_text, history_text
from agent.usage import Usage
from agent.waves import WaveRunner
from config.settings import Settings
from store.investigations import InvestigationStore
from tools.base import ToolRegistry

log = logging.getLogger(__name__)

ERROR_CHARS = 300


@dataclass
class Request:
    """What to work on: an analyst's message, and the alert when there is one."""

    conversation_id: str
    text: str
    alert: Alert | None = None


@dataclass
class Outcome:
    """How a run ended. ``record`` is the full investigation record (``--json``)."""

    investigation_id: str
    mode: Literal["direct", "planned"]
    status: Literal["answered", "concluded", "failed", "cancelled"]
    answer: str | None = None
    conclusion: Conclusion | None = None
    plan: Plan | None = None
    limits_hit: list[str] = field(default_factory=list)
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)


@dataclass
class Run:
    """The state of one investigation while it runs."""

    id: str
    request: Request
    sink: Sink
    work: CallContext  # steps, planning, reflection: stops short of the reserve
    final: CallContext  # the conclusion / direct answer: the whole budget
    fence: Fence
    runner: ToolRunner
    started: float
    variables: dict[str, Any]
    mode: Literal["direct", "planned"] = "planned"
    plan: Plan | None = None
    limits_hit: list[str] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)


class Engine:
    """Runs investigations; one instance serves many concurrent runs."""

    def __init__(
        self,
        *,
        gateway: LLMGateway,
        registry: ToolRegistry,
        history: History,
        investigations: InvestigationStore,
        settings: Settings,
        prompts: Prompts | None = None,
    ) -> None:
        self.gateway = gateway
        self.registry = registry
        self.history = history
        self.investigations = investigations
        self.settings = settings
        self.limits = settings.limits
        self.prompts = prompts or Prompts()

    async def run(self, request: Request, sink: Sink) -> Outcome:
        """Investigate or answer ``request``, emitting progress events to ``sink``."""
        run = await self._start(request, sink)
        try:
            outcome = await self._execute(run)
        except asyncio.CancelledError:
            await self._record_ended(run, "cancelled", "The investigation was cancelled.")
            raise
        except Exception:  # a bug: record the run as failed, then let it surface
            log.exception("investigation %s crashed", run.id)
            await self._record_ended(run, "failed", "socbot hit an internal error.")
            raise
        await self._finish(run, outcome)
        return outcome

    async def _execute(self, run: Run) -> Outcome:
        history = history_text(await self.history.load(run.request.conversation_id))
        run.variables["history"] = history
        mode, reason = await self._choose_mode(run)
        run.mode = mode
        await run.sink.emit(ModeChosen(investigation_id=run.id, mode=mode, reason=reason))
        try:
            if mode == "direct":
                return await self._direct(run)
            return await self._planned(run)
        except AgentError as exc:
            return await self._failed(run, str(exc))

    async def _choose_mode(self, run: Run) -> tuple[Literal["direct", "planned"], str]:
        if run.request.alert is not None:
            return "planned", "alerts are always investigated with a plan"
        prompt = self.prompts.render("classifier", **run.variables)
        try:
            verdict = await classify(
                self.gateway, run.work, system=prompt.system, contents=_user(prompt.user)
            )
        except AgentError as exc:  # fail open: answer directly
            log.warning("classifier failed, answering directly: %s", exc)
            return "direct", "the classifier failed; answering directly"
        run.record["classification"] = verdict.model_dump()
        return ("planned" if verdict.needs_plan else "direct"), verdict.reason

    async def _direct(self, run: Run) -> Outcome:
        tools = self.registry.names()
        prompt = self.prompts.render(
            "direct",
            tool_catalogue=self.registry.catalogue_text(tools),
            max_calls=self.limits.max_direct_tool_calls,
            **run.variables,
        )
        try:
            async with asyncio.timeout(max(run.final.deadline - time.monotonic(), 0.0)):
                result = await tool_loop(
                    self.gateway,
                    run.final,
                    run.runner,
                    stage="direct",
                    system=prompt.system,
                    contents=_user(prompt.user),
                    tools=tools,
                    max_calls=self.limits.max_direct_tool_calls,
                )
        except TimeoutError:
            run.limits_hit.append("deadline: the deadline passed before an answer was ready")
            return await self._failed(run, "The deadline passed before an answer was ready.")
        if result.forced_summary:
            run.limits_hit.append(
                f"max_direct_tool_calls: all {self.limits.max_direct_tool_calls} tool calls used"
            )
        answer = result.text or "I could not produce an answer."
        await self.history.append(run.request.conversation_id, run.request.text, answer, run.id)
        await run.sink.emit(Answered(investigation_id=run.id, text=answer))
        return self._outcome(run, "answered", answer=answer)

    async def _planned(self, run: Run) -> Outcome:
        started = time.monotonic()
        prompt = self.prompts.render(
            "planner",
            source=_source(run.request),
            tool_catalogue=self.registry.catalogue_text(),
            disabled_tools=self.registry.disabled,
            max_steps=self.limits.max_steps,
            max_tool_calls=self.limits.max_tool_calls_per_step,
            **run.variables,
        )
        plan = await make_plan(
            self.gateway,
            run.work,
            system=prompt.system,
            contents=_user(prompt.user),
            tool_names=self.registry.names(),
            max_steps=self.limits.max_steps,
        )
        run.plan = plan
        run.record["plan_versions"].append(plan.model_dump())
        run.record["timings"]["plan_ms"] = _ms(started)
        await run.sink.emit(PlanCreated(investigation_id=run.id, plan=plan.model_dump()))
        waves = WaveRunner(self, run)
        try:
            insights = await waves.run_all()
            conclusion = await self._conclude(run, plan, insights, waves.speculation)
        finally:
            await waves.close_speculations()
        summary = f"Objective: {plan.objective}\n\n{to_markdown(conclusion, None, run.limits_hit)}"
        await self.history.append(
            run.request.conversation_id, _history_user_text(run.request), summary, run.id
        )
        await run.sink.emit(
            Concluded(
                investigation_id=run.id,
                conclusion=conclusion.model_dump(),
                limits_hit=run.limits_hit,
            )
        )
        return self._outcome(run, "concluded", conclusion=conclusion)

    async def _conclude(
        self, run: Run, plan: Plan, insights: list[str], speculation: Speculation | None
    ) -> Conclusion:
        """The conclusion: the speculative one when the waves left one to use, else a call now."""
        started = time.monotonic()
        try:
            if speculation is not None:
                conclusion = await speculation.take()
            else:
                prompt = self._conclusion_prompt(run, plan, insights)
                conclusion = await self._write_conclusion(prompt, run.final)
        except (AgentError, TimeoutError) as exc:
            log.warning("conclusion failed, concluding from the findings: %s", exc)
            reason = str(exc) if isinstance(exc, AgentError) else "the deadline passed"
            run.limits_hit.append(f"conclusion: written without the model ({reason})")
            alert = run.request.alert
            conclusion = fallback_conclusion(
                plan, insights, reason, alert.severity if alert else None
            )
        run.record["timings"]["conclude_ms"] = _ms(started)  # speculative: the wait left
        return conclusion

    def speculate(self, run: Run, plan: Plan, insights: list[str]) -> Speculation:
        """Start writing the conclusion now, from the plan and insights as they are."""
        prompt = self._conclusion_prompt(run, plan, insights)  # rendered before anything changes
        return Speculation.start(run.final, lambda ctx: self._write_conclusion(prompt, ctx))

    def _conclusion_prompt(self, run: Run, plan: Plan, insights: list[str]) -> Rendered:
        return self.prompts.render(
            "concluder",
            source=_source(run.request),
            objective=plan.objective,
            steps=plan.steps,
            insights=insights,
            limits_hit=run.limits_hit,
            disabled_tools=self.registry.disabled,
            **run.variables,
        )

    async def _write_conclusion(self, prompt: Rendered, ctx: CallContext) -> Conclusion:
        async with asyncio.timeout(max(ctx.deadline - time.monotonic(), 0.001)):
            return await conclude(self.gateway, ctx, system=prompt.system, user=prompt.user)

    async def _start(self, request: Request, sink: Sink) -> Run:
        investigation_id = uuid.uuid4().hex
        kind: Literal["alert", "question"] = "alert" if request.alert else "question"
        await self.investigations.create(
            investigation_id, request.conversation_id, kind, _history_user_text(request)
        )
        fan = FanOut(self.investigations.recorder(investigation_id), sink)
        now = time.monotonic()
        deadline = now + self.limits.deadline_s
        grace = min(self.limits.conclude_grace_s, self.limits.deadline_s * 0.2)
        reserve = min(self.limits.conclude_reserve_tokens, self.limits.token_budget // 5)
        usage = Usage()
        fence = Fence()
        run = Run(
            id=investigation_id,
            request=request,
            sink=fan,
            work=CallContext(
                investigation_id, fan, self.limits.token_budget - reserve, deadline - grace, usage
            ),
            final=CallContext(investigation_id, fan, self.limits.token_budget, deadline, usage),
            fence=fence,
            runner=ToolRunner(
                self.registry, investigation_id=investigation_id, sink=fan, fence=fence
            ),
            started=now,
            variables={
                "data": fence,
                "request": request.text,
                "alert": alert_text(request.alert) if request.alert else None,
                "environment": self.settings.environment,
                "tables": self.settings.logs.tables,
                "now": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
            },
            record={"timings": {}, "reflections": [], "waves": [], "plan_versions": []},
        )
        await fan.emit(
            Started(
                investigation_id=investigation_id,
                kind=kind,
                conversation_id=request.conversation_id,
            )
        )
        return run

    async def _failed(self, run: Run, message: str) -> Outcome:
        error = _sentence(message)
        await run.sink.emit(Failed(investigation_id=run.id, reason=error))
        return self._outcome(run, "failed", error=error)

    def _outcome(
        self,
        run: Run,
        status: Literal["answered", "concluded", "failed", "cancelled"],
        *,
        answer: str | None = None,
        conclusion: Conclusion | None = None,
        error: str | None = None,
    ) -> Outcome:
        usage = run.work.usage.as_dict()
        run.record["timings"]["total_ms"] = _ms(run.started)
        run.record.update(
            investigation_id=run.id,
            conversation_id=run.request.conversation_id,
            kind="alert" if run.request.alert else "question",
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
        )

    async def _finish(self, run: Run, outcome: Outcome) -> None:
        await self.investigations.finish(
            run.id,
            status=outcome.status,
            mode=outcome.mode,
            objective=outcome.plan.objective if outcome.plan else None,
            verdict=outcome.conclusion.verdict if outcome.conclusion else None,
            record=outcome.record,
            usage=outcome.usage,
            error=outcome.error,
        )

    async def _record_ended(
        self, run: Run, status: Literal["failed", "cancelled"], reason: str
    ) -> None:
        """Best-effort bookkeeping when a run ends by cancellation or a bug."""
        outcome = self._outcome(run, status, error=reason)
        try:
            await run.sink.emit(Failed(investigation_id=run.id, reason=reason))
            await self._finish(run, outcome)
        except Exception:  # fail open: bookkeeping must not mask the original exception
            log.exception("could not record investigation %s as %s", run.id, status)


def _user(text: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=text)])]


def _source(request: Request) -> str | None:
    return request.alert.source if request.alert else None


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def _sentence(message: str) -> str:
    """One short user-safe sentence from an error message."""
    text = " ".join(message.split()) or "The investigation failed."
    if len(text) > ERROR_CHARS:
        text = text[: ERROR_CHARS - 1] + "…"
    return text


def _alert_ref(alert: Alert | None) -> dict[str, Any] | None:
    if alert is None:
        return None
    return {
        "id": alert.id,
        "source": alert.source,
        "title": alert.title,
        "severity": alert.severity,
    }


def _history_user_text(request: Request) -> str:
    """The user's turn as the conversation remembers it (alerts by title and indicators)."""
    alert = request.alert
    if alert is None:
        return request.text
    indicators = ", ".join(f"{i.kind} {i.value}" for i in alert.indicators[:20])
    line = f"[alert from {alert.source}: {alert.title}" + (
        f"; {indicators}]" if indicators else "]"
    )
    return f"{request.text}\n{line}" if request.text else line
