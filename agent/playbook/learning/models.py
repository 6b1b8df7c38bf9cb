"""Seed 001's data models (``Insight``, ``BulletEvaluation``, ``ReflectionResult``) and the
Curator's delta operations. All are pydantic models that round-trip through JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Tag = Literal["helpful", "harmful", "neutral"]
Kind = Literal["fact", "pattern", "anti_pattern", "skill"]


class Insight(BaseModel):
    """What one run teaches (seed 001 requirement 1)."""

    reasoning: str = Field(description="how the investigation reasoned, briefly")
    error_identification: str = Field(description="what went wrong, or 'none'")
    root_cause_analysis: str = Field(description="why it went wrong (missing context, a bad rule)")
    correct_approach: str = Field(description="what should have been done")
    key_insight: str = Field(description="the lesson, as one short reusable instruction or fact")


class BulletEvaluation(BaseModel):
    """A tag for one playbook bullet the run used (seed 001 requirement 2)."""

    bullet_id: str
    tag: Tag
    reason: str = ""


class Reflection(BaseModel):
    """The Reflector's structured output for one round."""

    insights: list[Insight]
    bullet_evaluations: list[BulletEvaluation] = Field(default_factory=list)


class ReflectionResult(BaseModel):
    """Everything the Reflector returns (seed 001 requirement 3)."""

    trajectory_id: str = Field(description="the investigation id the trajectory is from")
    insights: list[Insight] = Field(default_factory=list)
    bullet_evaluations: list[BulletEvaluation] = Field(default_factory=list)
    rounds: int = 0
    error: str | None = None


class TriggerDraft(BaseModel):
    """Triggers as the Curator proposes them."""

    keywords: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    indicators: list[str] = Field(default_factory=list)
    indicator_kinds: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)


class DeltaOp(BaseModel):
    """One change to the playbook; never a rewrite of the whole of it."""

    op: Literal["add", "update", "merge", "retire"]
    targets: list[str] = Field(
        default_factory=list, description="ids of existing bullets changed, merged or retired"
    )
    content: str = Field("", description="the bullet text (empty for retire)")
    kind: Kind = "fact"
    scope: str = Field("global", description="global, source:<alert source>, channel:<id>")
    triggers: TriggerDraft = Field(default_factory=TriggerDraft)
    reason: str = ""


class Curation(BaseModel):
    """The Curator's structured output."""

    operations: list[DeltaOp]


def as_json(model: BaseModel) -> dict[str, Any]:
    """A model as JSON-ready data (what the learning run record stores)."""
    return model.model_dump(mode="json")
