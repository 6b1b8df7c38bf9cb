"""The Reflector (seed 001): lessons and bullet tags from a run and its ground truth.

``Reflector.reflect`` renders ``prompts/learning/reflector.j2`` (a per-source
override ``prompts/<source>/learning/reflector.j2`` wins), asks for a ``Reflection``
(structured output) and repeats ``rounds`` times, each round seeing the previous
round's insights (seed 001 requirement 8); the last round's insights are the result.
Tags are kept only for bullets the run used. A failed model call ends the loop with
the insights so far and the error in ``ReflectionResult.error`` (requirement 5.3);
an unavailable model before any round is done raises ``LLMUnavailable`` (the run is
tried again later).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from agent.errors import AgentError, LLMUnavailable
from agent.model.fence import Fence, user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.playbook.learning.models import BulletEvaluation, Insight, Reflection, ReflectionResult
from agent.playbook.learning.trajectory import GroundTruth, Trajectory
from agent.prompts import Prompts

log = logging.getLogger(__name__)

STAGE = "playbook_reflector"
TEMPLATE = "learning/reflector"


class Reflector:
    """Analyses one trajectory against its ground truth."""

    def __init__(self, gateway: LLMGateway, prompts: Prompts) -> None:
        self.gateway = gateway
        self.prompts = prompts

    async def reflect(
        self, ctx: CallContext, trajectory: Trajectory, truth: GroundTruth, *, rounds: int = 1
    ) -> ReflectionResult:
        """Up to ``rounds`` passes; raises only ``LLMUnavailable``, and only before a round."""
        used = [b for b in trajectory.bullets if b["id"] in trajectory.used]
        insights: list[Insight] = []
        evaluations: list[BulletEvaluation] = []
        for done in range(max(rounds, 1)):
            fence = Fence()
            prompt = self.prompts.render(
                TEMPLATE,
                source=trajectory.source,
                data=fence,
                truth=truth.as_text(),
                trajectory=trajectory.as_text(),
                bullets=_lines(used),
                previous=json.dumps([i.model_dump() for i in insights], indent=1)
                if insights
                else "",
            )
            try:
                out = await self.gateway.generate_structured(
                    ctx,
                    stage=STAGE,
                    system=prompt.system,
                    contents=user_turn(prompt.user),
                    schema=Reflection,
                )
            except AgentError as exc:
                if isinstance(exc, LLMUnavailable) and not done:
                    raise  # nothing learned yet: the run is worth trying again later
                log.warning("reflection of %s failed: %s", trajectory.investigation_id, exc)
                return ReflectionResult(
                    trajectory_id=trajectory.investigation_id,
                    insights=insights,
                    bullet_evaluations=evaluations,
                    rounds=done,
                    error=str(exc),
                )
            insights = out.insights
            evaluations = _only_used(out.bullet_evaluations, {b["id"] for b in used})
        return ReflectionResult(
            trajectory_id=trajectory.investigation_id,
            insights=insights,
            bullet_evaluations=evaluations,
            rounds=max(rounds, 1),
        )


def _lines(bullets: Sequence[dict[str, str]]) -> str:
    return "\n".join(f"[{b['id']}] ({b['kind']}) {b['content']}" for b in bullets)


def _only_used(evaluations: list[BulletEvaluation], used: set[str]) -> list[BulletEvaluation]:
    """One tag per used bullet (the first given); tags for other ids are dropped."""
    seen: dict[str, BulletEvaluation] = {}
    for evaluation in evaluations:
        if evaluation.bullet_id in used and evaluation.bullet_id not in seen:
            seen[evaluation.bullet_id] = evaluation
    return list(seen.values())
