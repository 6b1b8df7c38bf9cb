"""The classifier: does this message need a plan, or can the direct loop answer it?

Light model, thinking off, with the conversation history (a follow-up about an
earlier conclusion needs no plan). Alerts never reach it: they are always planned.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent.concluder import Verdict
from agent.model.fence import user_turn
from agent.model.gateway import CallContext, LLMGateway


class Classification(BaseModel):
    """The classifier's structured output."""

    needs_plan: bool = Field(description="true for a multi-step investigation")
    reason: str = Field(description="one short sentence")
    feedback: bool = Field(
        False, description="true when the message corrects or confirms socbot's earlier verdict"
    )
    verdict: Verdict | None = Field(
        None, description="with feedback: the verdict the analyst says is right, if named"
    )


async def classify(
    gateway: LLMGateway, ctx: CallContext, *, system: str, user: str
) -> Classification:
    """One light, non-thinking call deciding between direct and planned mode."""
    return await gateway.generate_structured(
        ctx,
        stage="classifier",
        system=system,
        contents=user_turn(user),
        schema=Classification,
        light=True,
        thinking=False,
    )
