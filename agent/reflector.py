"""The reflector: after each wave, decides whether the objective is met and adjusts the plan.

It sees the objective, the completed and pending steps and this wave's results,
never the conversation history. Code applies its ``plan_updates`` under rules the
model cannot bend: new ids are assigned here (``s<n>``), only pending steps can
be updated or cancelled, cancelled steps stay in the plan and are never re-run,
a step duplicating an existing or cancelled one is rejected, unknown tools and
dependencies are rejected, and the total number of steps stays within the cap.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from agent.model.fence import user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.planner import Plan, Step, find_cycle, step_problems

log = logging.getLogger(__name__)


class StepSpec(BaseModel):
    """The content of an added or updated step (the id is assigned by code)."""

    description: str
    tools: list[str]
    expected: str
    depends_on: list[str] = Field(default_factory=list)


class PlanUpdate(BaseModel):
    """One change to the plan."""

    type: Literal["add_step", "update_step", "cancel_step"]
    step_id: str = Field("", description="the step to update or cancel; empty for add_step")
    step: StepSpec | None = Field(None, description="the new content for add/update")
    reason: str = ""


class Reflection(BaseModel):
    """The reflector's structured output."""

    achieved: bool = Field(description="true when the objective can already be answered")
    insights: list[str] = Field(description="facts and interpretations worth keeping")
    plan_updates: list[PlanUpdate] = Field(default_factory=list)


@dataclass
class Applied:
    """What ``apply_updates`` did: accepted changes, rejected ones, and cap hits."""

    changes: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    step_cap_hit: bool = False


def apply_updates(
    plan: Plan, updates: list[PlanUpdate], tool_names: Collection[str], max_steps: int
) -> Applied:
    """Apply the accepted updates to ``plan`` in place, in order."""
    applied = Applied()
    for update in updates:
        if update.type == "add_step":
            outcome = _add(plan, update, tool_names, max_steps)
            if outcome == "cap":
                applied.step_cap_hit = True
                outcome = f"add rejected: the plan already has {max_steps} steps (the maximum)"
        elif update.type == "update_step":
            outcome = _update(plan, update, tool_names)
        else:
            outcome = _cancel(plan, update)
        if outcome.startswith(("added", "updated", "cancelled")):
            applied.changes.append(outcome)
            if update.type == "cancel_step":
                applied.cancelled.append(update.step_id)
        else:
            applied.rejected.append(outcome)
            log.info("plan update rejected: %s", outcome)
    return applied


def _add(plan: Plan, update: PlanUpdate, tool_names: Collection[str], max_steps: int) -> str:
    spec = update.step
    if spec is None or not spec.description.strip():
        return "add rejected: no step given"
    if len(plan.steps) >= max_steps:
        return "cap"
    twin = _duplicate_of(plan, spec.description)
    if twin is not None:
        return f"add rejected: duplicates step {twin.id} ({twin.status})"
    new_id = plan.next_id()
    problems = step_problems(
        new_id, spec.tools, spec.depends_on, tool_names, {s.id for s in plan.steps}
    )
    if problems:
        return "add rejected: " + "; ".join(problems)
    plan.steps.append(
        Step(
            id=new_id,
            description=spec.description.strip(),
            tools=list(dict.fromkeys(spec.tools)),
            expected=spec.expected.strip(),
            depends_on=list(dict.fromkeys(spec.depends_on)),
        )
    )
    return f"added {new_id}: {_short(spec.description)}"


def _update(plan: Plan, update: PlanUpdate, tool_names: Collection[str]) -> str:
    target = plan.step(update.step_id)
    spec = update.step
    if target is None:
        return f"update rejected: no step {update.step_id!r}"
    if target.status != "pending":
        return f"update rejected: step {target.id} is {target.status}, only pending steps change"
    if spec is None or not spec.description.strip():
        return f"update rejected: no new content for step {target.id}"
    twin = _duplicate_of(plan, spec.description, ignore=target.id)
    if twin is not None:
        return f"update rejected: step {target.id} would duplicate step {twin.id}"
    problems = step_problems(
        target.id, spec.tools, spec.depends_on, tool_names, {s.id for s in plan.steps}
    )
    graph = {s.id: s.depends_on for s in plan.steps} | {target.id: spec.depends_on}
    cycle = None if problems else find_cycle(graph)
    if cycle:
        problems.append(f"dependency cycle: {' -> '.join(cycle)}")
    if problems:
        return "update rejected: " + "; ".join(problems)
    target.description = spec.description.strip()
    target.tools = list(dict.fromkeys(spec.tools))
    target.expected = spec.expected.strip()
    target.depends_on = list(dict.fromkeys(spec.depends_on))
    return f"updated {target.id}: {_short(spec.description)}"


def _cancel(plan: Plan, update: PlanUpdate) -> str:
    target = plan.step(update.step_id)
    if target is None:
        return f"cancel rejected: no step {update.step_id!r}"
    if target.status != "pending":
        return f"cancel rejected: step {target.id} is {target.status}"
    target.status = "cancelled"
    reason = update.reason.strip() or "no longer needed"
    target.findings = f"Cancelled by reflection: {reason}"
    return f"cancelled {target.id}: {_short(reason)}"


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9.:/@_-]+", " ", text.lower()).split())


def _duplicate_of(plan: Plan, description: str, ignore: str | None = None) -> Step | None:
    wanted = _norm(description)
    return next((s for s in plan.steps if s.id != ignore and _norm(s.description) == wanted), None)


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def reflect(gateway: LLMGateway, ctx: CallContext, *, system: str, user: str) -> Reflection:
    """One reflection call (no history: the prompt carries the plan and the wave)."""
    return await gateway.generate_structured(
        ctx,
        stage="reflector",
        system=system,
        contents=user_turn(user),
        schema=Reflection,
    )
