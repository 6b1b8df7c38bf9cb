"""The review: a draft's code check, a critic on the light model, at most a bounded rewrite.

Seeds 000 and 003 (output reflection), grounded in the one external truth a run has,
its tool results:

1. ``agent.review.grounding`` checks the draft in code (cited references exist and
   succeeded, quoted values appear in them, verdict rules hold).
2. A critic (``prompts/critic.j2``, light model, thinking off) scores it:
   ``{score, criteria: {answers_objective, grounded, consistent, actionable}, issues}``.
   It sees the objective, the draft, the code check and the step findings, never
   transcripts or the thread's history.
3. When the check fails or the score is below ``review.threshold``, the draft is
   rewritten with the check's problems and the critic's issues as feedback, then
   checked and scored again, at most ``max_rewrites`` times. The draft that checks
   and scores best is kept (a tie goes to the later one, which saw the feedback).

Any failure of the review itself (model error, deadline, budget, a bug) keeps the
best draft so far and records why: the review may improve a verdict, never block one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from agent.errors import AgentError
from agent.model.fence import user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.prompts import Prompts
from agent.review.grounding import CodeCheck, FindingCheck
from config.settings import ReviewSettings

log = logging.getLogger(__name__)

STAGE = "critic"
D = TypeVar("D")


class Criteria(BaseModel):
    """The critic's per-criterion scores, 0-1 each."""

    answers_objective: float = Field(ge=0, le=1)
    grounded: float = Field(ge=0, le=1)
    consistent: float = Field(ge=0, le=1)
    actionable: float = Field(ge=0, le=1)


class Critique(BaseModel):
    """The critic's structured output."""

    score: float = Field(ge=0, le=1, description="overall, 0.0-1.0")
    criteria: Criteria
    issues: list[str] = Field(description="specific, actionable fixes; empty when none")


class Review(BaseModel):
    """How the kept draft was checked: what people see, plus every draft for the record."""

    status: Literal["passed", "rewritten", "kept", "failed", "skipped"]
    kind: Literal["conclusion", "answer"] = "conclusion"
    findings: int = 0
    verified: int = 0
    unverified: list[FindingCheck] = Field(default_factory=list)
    verdict_problems: list[str] = Field(default_factory=list)
    technique_notes: list[str] = Field(default_factory=list, description="ATT&CK ids dropped")
    score: float | None = None
    criteria: Criteria | None = None
    issues: list[str] = Field(default_factory=list)
    rewrites: int = 0
    kept: int = Field(0, description="index of the kept draft; 0 is the first")
    note: str = Field("", description="why the review stopped early, when it did")
    drafts: list[dict[str, Any]] = Field(default_factory=list, description="every draft")

    @property
    def shown(self) -> bool:
        """Whether there is a check to show (not for a skipped review)."""
        return self.status != "skipped"

    def verification(self) -> str:
        """``5 of 5 findings verified against tool results``: what Slack shows."""
        if self.kind == "answer":
            missing = sum(len(f.problems) for f in self.unverified)
            if not missing:
                return "every value quoted was found in this answer's tool results"
            plural = "s" if missing != 1 else ""
            return f"{missing} quoted value{plural} not found in this answer's tool results"
        return f"{self.verified} of {self.findings} findings verified against tool results"

    def headline(self) -> str:
        """The verification plus the critic's score and the outcome, for the terminal."""
        text = self.verification()
        if self.score is not None:
            text += f" · critic score {self.score:.2f}"
        if self.status == "rewritten":
            text += " · rewritten after review"
        elif self.status == "failed":
            text += f" · review incomplete ({self.note})"
        return text

    def problems_of(self, index: int) -> list[str]:
        """Why finding ``index`` is unverified (empty when it is verified)."""
        return next((f.problems for f in self.unverified if f.index == index), [])


def review_markdown(review: Review) -> str:
    """The review for a terminal: verification, critic score and criteria, what was flagged."""
    lines = [f"**Review:** {review.headline()}"]
    if review.criteria is not None:
        scores = ", ".join(f"{k} {v:.2f}" for k, v in review.criteria.model_dump().items())
        lines.append(f"Critic criteria: {scores}")
    what = "answer" if review.kind == "answer" else "key finding {n}"
    for f in review.unverified:
        lines.append(f"- ⚠️ {what.format(n=f.index + 1)}: {'; '.join(f.problems)}")
    lines += [f"- ⚠️ {p}" for p in [*review.verdict_problems, *review.technique_notes]]
    return "\n".join(lines)


@dataclass
class Feedback:
    """What a rewrite is told: the draft it replaces and the issues to fix."""

    draft: str
    issues: list[str]


@dataclass
class Draft(Generic[D]):
    value: D
    check: CodeCheck
    critique: Critique | None = None
    error: str | None = None

    def good_enough(self, threshold: float) -> bool:
        return self.check.passed and (self.critique is None or self.critique.score >= threshold)

    def at_least_as_good_as(self, other: Draft[D]) -> bool:
        mine = (self.check.passed, -self.check.problem_count)
        theirs = (other.check.passed, -other.check.problem_count)
        if mine != theirs:
            return mine > theirs
        if self.critique is None or other.critique is None:
            return True  # unscored: the code check decides; the later draft saw the feedback
        return self.critique.score >= other.critique.score


@dataclass
class Subject(Generic[D]):
    """What is reviewed, and how: one per conclusion or direct answer."""

    kind: Literal["conclusion", "answer"]
    check: Callable[[D], CodeCheck]
    show: Callable[[D], str]  # the draft as the critic and the rewrite see it
    rewrite: Callable[[Feedback], Awaitable[D]]
    variables: dict[str, Any] = field(default_factory=dict)  # objective, steps, evidence...
    source: str | None = None
    max_rewrites: int = 1
    score_rewrites: bool = True  # False: a rewrite is judged by the code check alone


class Reviewer:
    """Runs reviews for one engine."""

    def __init__(self, gateway: LLMGateway, prompts: Prompts, settings: ReviewSettings) -> None:
        self.gateway = gateway
        self.prompts = prompts
        self.settings = settings

    def skip_reason(self, mode: str, severities: list[str | None]) -> str | None:
        """Why this run is not reviewed, or None when it is."""
        s = self.settings
        if not s.enabled:
            return "the review is turned off"
        if s.planned_only and mode != "planned":
            return "only planned investigations are reviewed"
        wanted = set(s.severities)
        if wanted and not any(v and v.lower() in wanted for v in severities):
            return "severity not among review.severities"
        return None

    async def review(self, ctx: CallContext, first: D, subject: Subject[D]) -> tuple[D, Review]:
        """The best draft of ``first`` and its rewrites, and how it was reviewed."""
        try:
            drafts = [Draft(first, subject.check(first))]
        except Exception as exc:  # fail open: a bug in the check must not lose the draft
            log.exception("the code check failed; keeping the draft unreviewed")
            return first, Review(status="failed", kind=subject.kind, note=_why(exc))
        note = ""
        try:
            while True:
                current = drafts[-1]
                current.critique = await self._critique(ctx, current, subject)
                if current.good_enough(self.settings.threshold):
                    break
                if len(drafts) > subject.max_rewrites:
                    break
                issues = current.check.issues() + current.critique.issues
                value = await subject.rewrite(Feedback(subject.show(current.value), issues))
                drafts.append(Draft(value, subject.check(value)))
                if not subject.score_rewrites:
                    break
        except (AgentError, TimeoutError) as exc:  # model error, deadline, budget
            note = _why(exc) if str(exc) else "the deadline passed"
            drafts[-1].error = note
            log.warning("review stopped, keeping the best draft so far: %s", note)
        except Exception as exc:  # fail open: a review never blocks the conclusion
            note = _why(exc)
            drafts[-1].error = note
            log.exception("review crashed, keeping the best draft so far")
        kept = 0
        for n in range(1, len(drafts)):
            if drafts[n].at_least_as_good_as(drafts[kept]):
                kept = n
        return drafts[kept].value, _summary(drafts, kept, note, subject, self.settings.threshold)

    async def _critique(self, ctx: CallContext, draft: Draft[D], subject: Subject[D]) -> Critique:
        prompt = self.prompts.render(
            STAGE,
            source=subject.source,
            kind=subject.kind,
            draft=subject.show(draft.value),
            check_issues=draft.check.issues(),
            **subject.variables,
        )
        critique: Critique = await self.gateway.generate_structured(
            ctx,
            stage=STAGE,
            system=prompt.system,
            contents=user_turn(prompt.user),
            schema=Critique,
            light=True,
            thinking=False,
        )
        return critique


def _summary(
    drafts: list[Draft[D]], kept: int, note: str, subject: Subject[D], threshold: float
) -> Review:
    best = drafts[kept]
    status: Literal["passed", "rewritten", "kept", "failed"]
    if kept > 0:
        status = "rewritten"
    elif note:
        status = "failed"
    elif best.critique is not None and best.good_enough(threshold):
        status = "passed"
    else:
        status = "kept"
    return Review(
        status=status,
        kind=subject.kind,
        findings=len(best.check.findings),
        verified=best.check.verified,
        unverified=[f for f in best.check.findings if not f.verified],
        verdict_problems=best.check.verdict_problems,
        technique_notes=best.check.technique_notes,
        score=best.critique.score if best.critique else None,
        criteria=best.critique.criteria if best.critique else None,
        issues=best.critique.issues if best.critique else [],
        rewrites=len(drafts) - 1,
        kept=kept,
        note=note,
        drafts=[
            {
                "draft": subject.show(d.value),
                "check": d.check.model_dump(),
                "critique": d.critique.model_dump() if d.critique else None,
                "error": d.error,
            }
            for d in drafts
        ],
    )


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return text or type(exc).__name__
