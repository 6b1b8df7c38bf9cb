"""The end of a planned run: the conclusion, then its review (and rewrites).

The conclusion is the speculative one when the waves started one that still holds
(``agent.waves``), else written now; when the model cannot write it in time, code
writes it from the findings (``fallback_conclusion``) and says so in the limits.
The review (``agent.review.critic``) checks the draft's findings against the tool
results, has a critic score it, and rewrites it when it falls short. Whatever the
review did, the conclusion keeps only the ATT&CK techniques the bundled catalogue
knows, named by it (``agent.review.techniques``).
"""

from __future__ import annotations

import asyncio
import logging
import time

from agent.concluder import (
    REWRITE_STAGE,
    STAGE,
    Conclusion,
    Speculation,
    conclude,
    fallback_conclusion,
)
from agent.errors import AgentError
from agent.kit import Kit
from agent.model.gateway import CallContext
from agent.planner import Plan
from agent.prompts import Rendered
from agent.review.critic import Feedback, Review, Subject
from agent.review.grounding import check_conclusion
from agent.review.techniques import with_catalogue
from agent.run import Run, ms_since
from core.events import Reviewed

log = logging.getLogger(__name__)


async def conclude_plan(
    kit: Kit, run: Run, plan: Plan, insights: list[str], speculation: Speculation | None
) -> tuple[Conclusion, bool]:
    """The conclusion (the speculative one when the waves left one to use, else a call
    now) and whether the model wrote it (else code did, from the findings)."""
    started = time.monotonic()
    by_model = True
    try:
        if speculation is not None:
            conclusion = await speculation.take()
        else:
            prompt = _prompt(kit, run, plan, insights)
            conclusion = await _write(kit, prompt, run.final)
    except (AgentError, TimeoutError) as exc:
        log.warning("conclusion failed, concluding from the findings: %s", exc)
        reason = str(exc) if isinstance(exc, AgentError) else "the deadline passed"
        run.limits_hit.append(f"conclusion: written without the model ({reason})")
        alert = run.request.alert
        conclusion = fallback_conclusion(plan, insights, reason, alert.severity if alert else None)
        by_model = False
    run.record["timings"]["conclude_ms"] = ms_since(started)  # speculative: the wait left
    return conclusion, by_model


async def review(
    kit: Kit, run: Run, plan: Plan, insights: list[str], draft: Conclusion, by_model: bool
) -> Conclusion:
    """The draft checked, scored and, when it falls short, rewritten (``agent.review.critic``)."""
    alert = run.request.alert
    skip = kit.reviewer.skip_reason("planned", [alert.severity if alert else None, draft.severity])
    if skip is None and not by_model:
        skip = "the conclusion was written without the model"
    if skip is not None:
        run.review = Review(status="skipped", note=skip)
        return with_catalogue(draft)
    started = time.monotonic()
    evidence = run.runner.evidence
    trusted = f"{run.request.text}\n{run.variables['alert'] or ''}"

    async def rewrite(feedback: Feedback) -> Conclusion:
        prompt = _prompt(kit, run, plan, insights, feedback)
        return await _write(kit, prompt, run.review_ctx, stage=REWRITE_STAGE)

    subject = Subject[Conclusion](
        kind="conclusion",
        check=lambda c: check_conclusion(c, evidence, trusted=trusted, steps=plan.steps),
        show=lambda c: c.model_dump_json(indent=1),
        rewrite=rewrite,
        variables={
            **run.manual_variables(),
            "objective": plan.objective,
            "steps": plan.steps,
            "evidence_index": evidence.index(),
        },
        source=run.request.source,
        max_rewrites=kit.settings.review.max_rewrites,
    )
    conclusion, run.review = await kit.reviewer.review(run.review_ctx, draft, subject)
    run.record["timings"]["review_ms"] = ms_since(started)
    await run.sink.emit(
        Reviewed(investigation_id=run.id, kind="conclusion", review=run.review.model_dump())
    )
    return with_catalogue(conclusion)


def speculate(kit: Kit, run: Run, plan: Plan, insights: list[str]) -> Speculation:
    """Start writing the conclusion now, from the plan and insights as they are."""
    prompt = _prompt(kit, run, plan, insights)  # rendered before anything changes
    return Speculation.start(run.final, lambda ctx: _write(kit, prompt, ctx))


def _prompt(
    kit: Kit, run: Run, plan: Plan, insights: list[str], feedback: Feedback | None = None
) -> Rendered:
    return kit.prompts.render(
        "concluder",
        source=run.request.source,
        objective=plan.objective,
        steps=plan.steps,
        insights=insights,
        limits_hit=run.limits_hit,
        evidence_index=run.runner.evidence.index(),
        feedback=feedback,
        **run.variables,
    )


async def _write(kit: Kit, prompt: Rendered, ctx: CallContext, stage: str = STAGE) -> Conclusion:
    async with asyncio.timeout(max(ctx.deadline - time.monotonic(), 0.001)):
        return await conclude(kit.gateway, ctx, system=prompt.system, user=prompt.user, stage=stage)
