"""The optional LLM judge of ``socbot eval --judge``: a rubric score beside the gates.

The judge reads the scenario's ground truth and the conclusion, both fenced as data
(``prompts/eval_judge.j2``), on its own model (``evals.judge_model``) with its own token
budget and deadline, and answers a score from 0 to 1 with four criteria. It never
changes a gate or ``passed``; it fails open (no score, a note) when the model fails.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, Field

from agent.errors import AgentError
from agent.model.fence import Fence, user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.model.llm import ModelBackend
from agent.prompts import Prompts
from agent.pseudonyms import privacy_maps
from config.settings import Settings
from core.events import NullSink
from core.usage import Usage
from evals.scenario import Scenario

STAGE = "eval_judge"


class Rubric(BaseModel):
    verdict_reasoning: float = Field(ge=0, le=1)
    evidence: float = Field(ge=0, le=1)
    completeness: float = Field(ge=0, le=1)
    actionable: float = Field(ge=0, le=1)


class Grade(BaseModel):
    """The judge's structured answer."""

    score: float = Field(ge=0, le=1)
    criteria: Rubric
    notes: str = ""


class Judge:
    def __init__(self, backend: ModelBackend, settings: Settings) -> None:
        models = settings.models.with_main(settings.evals.judge_model)
        self.gateway = LLMGateway(backend, settings.gemini, models, privacy=privacy_maps(settings))
        self.settings = settings.evals
        self.prompts = Prompts()

    async def grade(
        self, scenario: Scenario, conclusion: dict[str, Any]
    ) -> tuple[Grade | None, str, float]:
        """(grade or None, a note when there is none, USD spent)."""
        fence = Fence()
        usage = Usage()
        ctx = CallContext(
            f"eval-judge-{scenario.id}",
            NullSink(),
            self.settings.judge_token_budget,
            time.monotonic() + self.settings.judge_timeout_s,
            usage,
            fence,
        )
        truth = scenario.truth.model_dump(mode="json")
        prompt = self.prompts.render(
            STAGE,
            data=fence,
            truth=json.dumps(truth, indent=1, ensure_ascii=False),
            conclusion=json.dumps(conclusion, indent=1, ensure_ascii=False),
        )
        try:
            grade = await self.gateway.generate_structured(
                ctx,
                stage=STAGE,
                system=prompt.system,
                contents=user_turn(prompt.user),
                schema=Grade,
                thinking=False,
            )
        except AgentError as exc:  # fail open: the judge is a quality signal, not a gate
            return None, f"judge failed: {exc}", usage.total().cost_usd
        return grade, "", usage.total().cost_usd
