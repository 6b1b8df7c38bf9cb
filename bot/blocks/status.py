"""What an investigation's status message shows: the plan checklist, phase and activity.

``StatusView`` folds the engine's progress events into that state and renders it
with ``bot.blocks.investigation.plan_message``; ``bot.slack.progress`` decides when Slack sees it.
Event text is attacker-influenced (plans, reasons): it is escaped here.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from pydantic import ValidationError

from agent.concluder import Conclusion
from agent.planner import Plan, StepStatus
from agent.review.critic import Review
from bot.blocks.escape import escape, mrkdwn
from bot.blocks.investigation import plan_message
from bot.blocks.kit import Message
from core.events import (
    Answered,
    Concluded,
    Event,
    Failed,
    ModeChosen,
    PlanCreated,
    PlanUpdated,
    Reflected,
    Started,
    StepFinished,
    StepStarted,
    ToolCalled,
)
from store.schema import InvestigationStatus

log = logging.getLogger(__name__)

DONE = "✅ Done — see below."
CANCELLED = "🛑 Cancelled."


class OutcomeView(Protocol):
    """The parts of ``agent.engine.Outcome`` the thread is shown."""

    @property
    def investigation_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def conclusion(self) -> Conclusion | None: ...
    @property
    def plan(self) -> Plan | None: ...
    @property
    def limits_hit(self) -> list[str]: ...
    @property
    def error(self) -> str | None: ...
    @property
    def review(self) -> Review | None: ...
    @property
    def usage(self) -> dict[str, Any]: ...
    @property
    def record(self) -> dict[str, Any]: ...


class StatusView:
    """The live state of one investigation as its status message shows it."""

    def __init__(self, indicators: tuple[str, ...] = (), pages_url: str | None = None) -> None:
        self.indicators = indicators
        self.pages_url = pages_url
        self.investigation_id = ""
        self.plan: Plan | None = None
        self.phase = "🤔 Thinking…"
        self.activity = ""
        # a line above the status (an earlier run interrupted: ``bot.work.run_link``)
        self.note = ""

    def apply(self, event: Event) -> bool:
        """Update the state from ``event``; True when the status message changes."""
        self.investigation_id = self.investigation_id or event.investigation_id
        if isinstance(event, Started):
            self.phase = "🔎 Looking at the alert…" if event.kind == "alert" else "🤔 Thinking…"
        elif isinstance(event, ModeChosen):
            direct = event.mode == "direct"
            self.phase = "💬 Working on an answer…" if direct else "📝 Planning the investigation…"
        elif isinstance(event, PlanCreated | PlanUpdated):
            self._load_plan(event.plan)
            self.phase = "🔄 Investigating…"
            if isinstance(event, PlanUpdated) and event.changes:
                self.activity = "📝 Plan updated: " + mrkdwn("; ".join(event.changes)[:300])
        elif isinstance(event, StepStarted):
            self._set_status(event.step_id, "running")
            self.phase = f"🔄 Running step {escape(event.step_id)}…"
        elif isinstance(event, StepFinished):
            self._set_status(event.step_id, event.status)
        elif isinstance(event, ToolCalled):
            self.activity = _tool_line(event)
        elif isinstance(event, Reflected):
            self.phase = "🤔 Reviewing the results…"
        elif isinstance(event, Concluded | Answered):
            self.phase = DONE
        elif isinstance(event, Failed):
            self.phase = self._stopped(event.reason)
        else:
            return False  # LLMCalled and the like do not change what the analyst sees
        return True

    def cancelled(self) -> None:
        """The run was stopped: unfinished steps struck out."""
        self._mark_unfinished("cancelled")
        self.phase = CANCELLED

    def finished(self, outcome: OutcomeView) -> None:
        """The final state: the outcome's plan and how the run ended."""
        self.investigation_id = self.investigation_id or outcome.investigation_id
        if outcome.plan is not None:
            self.plan = outcome.plan.model_copy(deep=True)
        if outcome.status == InvestigationStatus.CANCELLED:
            self.cancelled()
        elif outcome.status == InvestigationStatus.FAILED:
            self.phase = self._stopped(outcome.error or "failed")
        else:
            self.phase = DONE

    def render(self) -> Message:
        """The status message for the current state."""
        status = self.phase + (f" · {self.activity}" if self.activity else "")
        if self.note:
            status = f"{self.note}\n{status}"
        return plan_message(
            self.plan,
            status_line=status,
            investigation_id=self.investigation_id or "pending",
            indicators=self.indicators,
            pages_url=self.pages_url,
        )

    def _stopped(self, reason: str) -> str:
        return "❌ Stopped: " + mrkdwn(reason[:300], self.indicators)

    def _load_plan(self, raw: dict[str, Any]) -> None:
        try:
            self.plan = Plan.model_validate(raw)
        except ValidationError:
            log.warning("slack progress got a plan it cannot read; keeping the last one")

    def _set_status(self, step_id: str, status: StepStatus) -> None:
        for step in self.plan.steps if self.plan else []:
            if step.id == step_id:
                step.status = status

    def _mark_unfinished(self, status: StepStatus) -> None:
        for step in self.plan.steps if self.plan else []:
            if step.status in ("pending", "running"):
                step.status = status


def _tool_line(event: ToolCalled) -> str:
    where = f" in step {escape(event.step_id)}" if event.step_id else ""
    seconds = f"{event.duration_ms / 1000:.1f} s"
    if event.ok:
        return f"🔧 Last tool: `{escape(event.tool)}`{where} ({seconds})"
    return f"⚠️ Tool `{escape(event.tool)}` failed{where} ({seconds})"
