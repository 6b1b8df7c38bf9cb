"""The concluder: a verdict with evidence from this task's steps, and its Markdown form.

It sees only this task: the objective, the request and alert (as data), the steps
with status and findings, the reflections' insights and the limits that were hit.
When even the conclusion call fails, ``fallback_conclusion`` builds an
``inconclusive`` one from the findings in code, so a run always ends with one.

``Speculation`` is a conclusion call started early, while the run's last
reflection is still running (see ``agent.waves``); the run uses it or throws it
away once the reflection is in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.model.fence import user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.planner import Plan
from core.events import Event, LLMCalled, Sink
from core.usage import Usage

log = logging.getLogger(__name__)

STAGE = "concluder"
SPECULATIVE_STAGE = "concluder_speculative"
REWRITE_STAGE = "concluder_rewrite"  # a rewrite after the review (same prompt, with feedback)

Verdict = Literal["true_positive", "false_positive", "benign", "inconclusive"]
Severity = Literal["info", "low", "medium", "high", "critical"]
Confidence = Literal["low", "medium", "high"]

VERDICT_LABELS: dict[str, str] = {
    "true_positive": "True positive",
    "false_positive": "False positive",
    "benign": "Benign",
    "inconclusive": "Inconclusive",
}
STATUS_MARKS: dict[str, str] = {
    "done": "[done]",
    "failed": "[failed]",
    "cancelled": "[cancelled]",
    "pending": "[not run]",
    "running": "[interrupted]",
}


class KeyFinding(BaseModel):
    """One finding and the evidence it rests on."""

    finding: str
    evidence: str = Field(description="the concrete data: query result, counts, timestamps, ids")
    evidence_refs: list[str] = Field(
        default_factory=list,
        description="references of the tool results this rests on (e.g. s2#3), or 'alert'",
    )


class Technique(BaseModel):
    """An ATT&CK technique the verdict supports: the model names the id; code keeps it only
    when the bundled catalogue knows it as current, and fills name and tactic from there
    (``agent.review.techniques``)."""

    id: str = Field(description="ATT&CK Enterprise technique id, e.g. T1110 or T1110.003")
    name: str = Field("", description="filled in by code from the ATT&CK catalogue")
    tactic: str = Field("", description="filled in by code from the ATT&CK catalogue")

    def label(self) -> str:
        """``T1110.003 Password Spraying (Credential Access)``."""
        name = f" {self.name}" if self.name else ""
        return f"{self.id}{name}" + (f" ({self.tactic})" if self.tactic else "")


class Conclusion(BaseModel):
    """The concluder's structured output."""

    verdict: Verdict
    severity: Severity
    confidence: Confidence
    summary: str = Field(description="two to four sentences for the analyst")
    key_findings: list[KeyFinding]
    uncertainties: list[str] = Field(description="what was not checked or could not be settled")
    recommendations: list[str]
    techniques: list[Technique] = Field(
        default_factory=list,
        description="ATT&CK techniques the key findings show happened; empty when none",
    )
    used_bullets: list[str] = Field(
        default_factory=list, description="ids of the team playbook bullets this verdict relies on"
    )
    compromised: list[str] = Field(
        default_factory=list,
        description="accounts and hosts the key findings show were compromised; empty when none",
    )


async def conclude(
    gateway: LLMGateway, ctx: CallContext, *, system: str, user: str, stage: str = STAGE
) -> Conclusion:
    """One conclusion call on this task's results only."""
    return await gateway.generate_structured(
        ctx,
        stage=stage,
        system=system,
        contents=user_turn(user),
        schema=Conclusion,
    )


class Speculation:
    """A conclusion call started while the run's last reflection still runs.

    ``start`` runs ``write`` on its own task with its own ``CallContext``: the same
    deadline, the token budget that was left when it started, a private ``Usage``,
    and the run's sink with its ``LLMCalled`` events labelled ``concluder_speculative``
    (they are emitted live, before anyone knows whether the call will be used).
    Exactly one of three things happens to it:

    - ``take``: the run uses it; its usage is counted under ``concluder``.
    - ``discard``: the reflection changed the plan; the call is left to finish so its
      tokens are counted (under ``concluder_speculative``) but its result is ignored.
    - ``close`` before a decision (the run was cancelled or crashed): cancelled, and
      whatever it spent is counted under ``concluder_speculative``.

    ``close`` must be called when the run ends: it cancels a call still in flight.
    """

    def __init__(self, task: asyncio.Task[Conclusion], usage: Usage, into: Usage) -> None:
        self.task = task
        self.usage = usage
        self.into = into
        self.state: Literal["running", "used", "discarded"] = "running"
        self.reason = ""
        self._accounted = False

    @classmethod
    def start(
        cls,
        ctx: CallContext,
        write: Callable[[CallContext], Coroutine[Any, Any, Conclusion]],
    ) -> Speculation:
        """Start ``write(own_ctx)`` now, on a task of its own."""
        own = CallContext(
            ctx.investigation_id,
            _Labelled(ctx.sink, SPECULATIVE_STAGE),
            max(ctx.token_budget - ctx.usage.total_tokens, 0),
            ctx.deadline,
            Usage(),
            ctx.fence,
            ctx.model,
            ctx.privacy,
        )
        return cls(asyncio.create_task(write(own)), own.usage, ctx.usage)

    async def take(self) -> Conclusion:
        """The speculative conclusion (or the call's error): the run uses it."""
        self.state = "used"
        try:
            return await self.task
        finally:
            self._account()

    def discard(self, reason: str) -> None:
        """Do not use the result; count its tokens when the call finishes."""
        self.state, self.reason = "discarded", reason
        self.task.add_done_callback(lambda _: self._account())

    async def close(self) -> None:
        """Cancel the call if it still runs, and count what it spent."""
        if self.state == "running":
            self.state, self.reason = "discarded", "the run ended before it was decided"
        if not self.task.done():
            self.task.cancel()
            await asyncio.wait([self.task])
        self._account()

    def _account(self) -> None:
        if self._accounted or not self.task.done():
            return
        self._accounted = True
        if not self.task.cancelled() and (exc := self.task.exception()) is not None:
            if self.state != "used":
                log.info("a discarded speculative conclusion failed: %s", exc)
        stage = STAGE if self.state == "used" else SPECULATIVE_STAGE
        self.into.absorb(self.usage, stage=stage)


class _Labelled:
    """Passes events on, with ``LLMCalled.stage`` replaced by ``stage``."""

    def __init__(self, sink: Sink, stage: str) -> None:
        self.sink = sink
        self.stage = stage

    async def emit(self, event: Event) -> None:
        if isinstance(event, LLMCalled):
            event = event.model_copy(update={"stage": self.stage})
        await self.sink.emit(event)


def fallback_conclusion(
    plan: Plan, insights: Sequence[str], reason: str, alert_severity: str | None = None
) -> Conclusion:
    """An ``inconclusive`` conclusion assembled from the findings, without the model."""
    severity: Severity = "info"
    for level in ("info", "low", "medium", "high", "critical"):
        if alert_severity and alert_severity.lower() == level:
            severity = level
    done = [s for s in plan.steps if s.status == "done" and s.findings]
    not_done = [s for s in plan.steps if s.status != "done"]
    return Conclusion(
        verdict="inconclusive",
        severity=severity,
        confidence="low",
        summary=(
            f"No verdict could be written because {reason.rstrip('.')}. "
            f"{len(done)} of {len(plan.steps)} steps completed; their findings are listed "
            "below for an analyst to review."
        ),
        key_findings=[KeyFinding(finding=s.description, evidence=_clip(s.findings)) for s in done],
        uncertainties=[
            *(f"Step {s.id} ({s.status}): {s.description}" for s in not_done),
            *insights,
        ],
        recommendations=["Review the findings manually and re-run the investigation."],
    )


def _clip(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_markdown(conclusion: Conclusion, plan: Plan | None, limits_hit: Sequence[str] = ()) -> str:
    """The conclusion for a terminal (and the history): verdict, findings, steps."""
    lines = [
        f"**Verdict:** {VERDICT_LABELS[conclusion.verdict]} · "
        f"severity {conclusion.severity} · confidence {conclusion.confidence}",
        "",
        conclusion.summary.strip(),
    ]
    if conclusion.techniques:
        lines += ["", "**ATT&CK:** " + "; ".join(t.label() for t in conclusion.techniques)]
    if conclusion.key_findings:
        lines += ["", "**Key findings**"]
        lines += [f"- {k.finding} — _{k.evidence}_" for k in conclusion.key_findings]
    if conclusion.uncertainties:
        lines += ["", "**Uncertainties / not checked**"]
        lines += [f"- {u}" for u in conclusion.uncertainties]
    if conclusion.recommendations:
        lines += ["", "**Recommendations**"]
        lines += [f"{n}. {r}" for n, r in enumerate(conclusion.recommendations, start=1)]
    if limits_hit:
        lines += ["", "**Limits hit:** " + "; ".join(limits_hit)]
    if plan is not None and plan.steps:
        lines += ["", f"**Objective:** {plan.objective}", "", "**Steps**"]
        lines += [
            f"- {STATUS_MARKS.get(s.status, s.status)} {s.id}: {s.description}" for s in plan.steps
        ]
    return "\n".join(lines)
