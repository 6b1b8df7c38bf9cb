"""The concluder: a verdict with evidence from this task's steps, and its Markdown form.

It sees only this task: the objective, the request and alert (as data), the steps
with status and findings, the reflections' insights and the limits that were hit.
When even the conclusion call fails, ``fallback_conclusion`` builds an
``inconclusive`` one from the findings in code, so a run always ends with one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from google.genai import types
from pydantic import BaseModel, Field

from agent.gateway import CallContext, LLMGateway
from agent.planner import Plan

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


class Conclusion(BaseModel):
    """The concluder's structured output."""

    verdict: Verdict
    severity: Severity
    confidence: Confidence
    summary: str = Field(description="two to four sentences for the analyst")
    key_findings: list[KeyFinding]
    uncertainties: list[str] = Field(description="what was not checked or could not be settled")
    recommendations: list[str]


async def conclude(gateway: LLMGateway, ctx: CallContext, *, system: str, user: str) -> Conclusion:
    """One conclusion call on this task's results only."""
    return await gateway.generate_structured(
        ctx,
        stage="concluder",
        system=system,
        contents=[types.Content(role="user", parts=[types.Part(text=user)])],
        schema=Conclusion,
    )


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
