"""Progress events the engine emits, and the sink interface that receives them.

Slack, the terminal and the trace recorder are sinks. A sink must not raise into
the engine: ``FanOut`` logs and drops sink failures (progress is a quality
feature; the investigation goes on).
"""

from __future__ import annotations

import logging
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

log = logging.getLogger(__name__)


class Event(BaseModel):
    """One progress event of one investigation; ``type`` names the subclass."""

    type: str
    investigation_id: str


class Started(Event):
    type: Literal["started"] = "started"
    kind: Literal["alert", "question"]
    conversation_id: str


class ModeChosen(Event):
    type: Literal["mode_chosen"] = "mode_chosen"
    mode: Literal["direct", "planned"]
    reason: str


class PlanCreated(Event):
    type: Literal["plan_created"] = "plan_created"
    plan: dict[str, Any]  # Plan.model_dump(): objective + steps with status


class StepStarted(Event):
    type: Literal["step_started"] = "step_started"
    step_id: str
    description: str


# what the trace keeps of a tool result: its JSON whole up to this many characters (64 KiB);
# ``result_chars`` counts the rest, so a page says "first N of M characters"
STORED_RESULT_CHARS = 65_536


class ToolCalled(Event):
    type: Literal["tool_called"] = "tool_called"
    step_id: str | None
    ref: str | None = Field(None, description="evidence reference, e.g. s2#3")
    tool: str
    args: dict[str, Any]
    ok: bool
    duration_ms: float
    result_chars: int
    truncated: bool
    result_preview: str = Field(
        "", description="the result's JSON before the model's cut, up to STORED_RESULT_CHARS"
    )
    error: str | None = Field(None, description="why the call failed (ok is false)")


class StepFinished(Event):
    type: Literal["step_finished"] = "step_finished"
    step_id: str
    status: Literal["done", "failed", "cancelled"]
    summary: str


class Reflected(Event):
    type: Literal["reflected"] = "reflected"
    wave: int
    reflection: dict[str, Any]


class PlanUpdated(Event):
    type: Literal["plan_updated"] = "plan_updated"
    plan: dict[str, Any]
    changes: list[str]


class ApprovalAsked(Event):
    type: Literal["approval_asked"] = "approval_asked"
    tool: str
    args: dict[str, Any]
    why: str
    estimate: str | None = None


class ApprovalDecided(Event):
    type: Literal["approval_decided"] = "approval_decided"
    tool: str
    approved: bool
    by: str | None = Field(None, description="who decided (a Slack user id), if a person did")
    at: str = Field(description="when, ISO 8601 UTC")
    note: str


class LLMCalled(Event):
    type: Literal["llm_called"] = "llm_called"
    stage: str
    model: str
    prompt_tokens: int
    output_tokens: int
    thinking_tokens: int
    cached_tokens: int
    latency_ms: float
    finish_reason: str | None
    cost_usd: float | None = None  # at list prices; None when the model has no price


class PlaybookSelected(Event):
    """The team playbook's bullets chosen for this run (before planning)."""

    type: Literal["playbook_selected"] = "playbook_selected"
    bullets: list[dict[str, Any]]  # {id, score, reasons}
    tokens: int
    holdout: bool = False  # drawn to run without the playbook (learning.holdout_share)


class PlaybookUsed(Event):
    """Bullets a stage says it relied on (only ids that were in its prompt)."""

    type: Literal["playbook_used"] = "playbook_used"
    stage: str
    bullet_ids: list[str]


class Answered(Event):
    """Direct mode's final answer."""

    type: Literal["answered"] = "answered"
    text: str


class Reviewed(Event):
    """The review of a conclusion or direct answer: every draft, check and critique."""

    type: Literal["reviewed"] = "reviewed"
    kind: Literal["conclusion", "answer"]
    review: dict[str, Any]  # agent.review.critic.Review.model_dump()


class Concluded(Event):
    type: Literal["concluded"] = "concluded"
    conclusion: dict[str, Any]
    limits_hit: list[str] = Field(default_factory=list)


class Failed(Event):
    type: Literal["failed"] = "failed"
    reason: str  # one sentence, safe to show a user


class Sink(Protocol):
    """Receives progress events (Slack, terminal, trace recorder)."""

    async def emit(self, event: Event) -> None:
        """Handle one event; should not raise (``FanOut`` guards the engine anyway)."""
        ...


class NullSink:
    """A sink that drops every event."""

    async def emit(self, event: Event) -> None:
        """Drop ``event``."""
        return None


class FanOut:
    """Sends each event to every sink; a failing sink is logged, never raised."""

    def __init__(self, *sinks: Sink) -> None:
        self.sinks = sinks

    async def emit(self, event: Event) -> None:
        """Pass ``event`` to each sink in order."""
        for sink in self.sinks:
            try:
                await sink.emit(event)
            except Exception:  # fail open: progress must not end an investigation
                log.exception("progress sink %r failed on %s", sink, event.type)
