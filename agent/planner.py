"""The planner: turns a request (and alert) into an objective and a few tool-backed steps.

The model writes a ``PlanDraft``; code validates it (known tools only, known and
acyclic dependencies, at most ``max_steps``), renumbers the steps ``s1..sN`` and
returns a ``Plan``. An invalid draft is sent back once with the error quoted;
a second invalid draft raises ``PlanInvalid``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable
from typing import Literal

from google.genai import types
from pydantic import BaseModel, Field

from agent.errors import PlanInvalid
from agent.model.fence import user_turn
from agent.model.gateway import CallContext, LLMGateway

log = logging.getLogger(__name__)

StepStatus = Literal["pending", "running", "done", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"done", "failed", "cancelled"})


class StepDraft(BaseModel):
    """One step as the model writes it."""

    id: str = Field(description="short id, e.g. s1")
    description: str = Field(description="one concrete investigation action, with values")
    tools: list[str] = Field(description="exact names of the tools this step may call")
    expected: str = Field(description="what a useful result looks like")
    depends_on: list[str] = Field(description="ids of steps whose findings this step needs")


class PlanDraft(BaseModel):
    """The planner's structured output."""

    objective: str = Field(description="the goal of this task, one or two sentences")
    steps: list[StepDraft]
    used_bullets: list[str] = Field(
        default_factory=list, description="ids of the team playbook bullets this plan relies on"
    )


class Step(BaseModel):
    """A step of the plan, with its run state."""

    id: str
    description: str
    tools: list[str]
    expected: str
    depends_on: list[str] = Field(default_factory=list)
    status: StepStatus = "pending"
    findings: str = ""


class Plan(BaseModel):
    """The objective and the steps (cancelled ones stay, with status ``cancelled``)."""

    objective: str
    steps: list[Step]
    used_bullets: list[str] = Field(default_factory=list)

    def step(self, step_id: str) -> Step | None:
        """The step with this id, if any."""
        return next((s for s in self.steps if s.id == step_id), None)

    def pending(self) -> list[Step]:
        return [s for s in self.steps if s.status == "pending"]

    def ready(self) -> list[Step]:
        """Pending steps whose dependencies have all finished (done, failed or cancelled).

        A step whose dependency failed or was cancelled still runs (the reflector had
        its chance to cancel it); its prompt says which dependency did not complete.
        """
        state = {s.id: s.status for s in self.steps}
        return [
            s
            for s in self.steps
            if s.status == "pending" and all(state.get(d) in TERMINAL for d in s.depends_on)
        ]

    def skip_pending(self, reason: str) -> list[str]:
        """Cancel every pending step with ``reason``; returns their ids."""
        skipped = []
        for s in self.steps:
            if s.status == "pending":
                s.status = "cancelled"
                s.findings = f"Not run: {reason}."
                skipped.append(s.id)
        return skipped

    def next_id(self) -> str:
        """A fresh ``s<n>`` id, one past the highest used."""
        numbers = [int(m.group(1)) for s in self.steps if (m := re.fullmatch(r"s(\d+)", s.id))]
        return f"s{max(numbers, default=0) + 1}"


def validate_plan(draft: PlanDraft, tool_names: Collection[str], max_steps: int) -> Plan:
    """Check a draft and return it as a ``Plan`` with ids ``s1..sN``; else ``PlanInvalid``."""
    problems: list[str] = []
    if not draft.objective.strip():
        problems.append("the objective is empty")
    if not draft.steps:
        problems.append("the plan has no steps")
    if len(draft.steps) > max_steps:
        problems.append(f"the plan has {len(draft.steps)} steps; the maximum is {max_steps}")
    ids = [s.id for s in draft.steps]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"step ids are not unique: {', '.join(dupes)}")
    for s in draft.steps:
        problems.extend(step_problems(s.id, s.tools, s.depends_on, tool_names, set(ids)))
        if not s.description.strip():
            problems.append(f"step {s.id!r} has no description")
    if not problems:
        cycle = find_cycle({s.id: s.depends_on for s in draft.steps})
        if cycle:
            problems.append(f"dependency cycle: {' -> '.join(cycle)}")
    if problems:
        raise PlanInvalid("The plan is invalid: " + "; ".join(problems) + ".")
    mapping = {s.id: f"s{n}" for n, s in enumerate(draft.steps, start=1)}
    return Plan(
        objective=draft.objective.strip(),
        steps=[
            Step(
                id=mapping[s.id],
                description=s.description.strip(),
                tools=_unique(s.tools),
                expected=s.expected.strip(),
                depends_on=_unique(mapping[d] for d in s.depends_on),
            )
            for s in draft.steps
        ],
        used_bullets=_unique(draft.used_bullets),
    )


def step_problems(
    step_id: str,
    tools: list[str],
    depends_on: list[str],
    tool_names: Collection[str],
    step_ids: Collection[str],
) -> list[str]:
    """What is wrong with one step's tools and dependencies (empty when fine)."""
    problems = []
    unknown = [t for t in tools if t not in tool_names]
    if unknown:
        problems.append(
            f"step {step_id!r} names unknown tools {', '.join(map(repr, unknown))} "
            f"(available: {', '.join(sorted(tool_names)) or 'none'})"
        )
    if step_id in depends_on:
        problems.append(f"step {step_id!r} depends on itself")
    missing = [d for d in depends_on if d not in step_ids and d != step_id]
    if missing:
        problems.append(f"step {step_id!r} depends on unknown steps {', '.join(missing)}")
    return problems


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """A dependency cycle as a path (first id repeated at the end), or ``None``."""
    color: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        color[node] = 1
        stack.append(node)
        for dep in graph.get(node, []):
            if color.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if color.get(dep) is None and dep in graph:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        color[node] = 2
        return None

    for node in graph:
        if color.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


async def make_plan(
    gateway: LLMGateway,
    ctx: CallContext,
    *,
    system: str,
    user: str,
    tool_names: Collection[str],
    max_steps: int,
) -> Plan:
    """Ask for a plan, validate it, and repair once with the error quoted."""
    contents = user_turn(user)
    draft = await gateway.generate_structured(
        ctx, stage="planner", system=system, contents=contents, schema=PlanDraft
    )
    try:
        return validate_plan(draft, tool_names, max_steps)
    except PlanInvalid as exc:
        log.warning("plan rejected, asking for a repair: %s", exc)
        repair = [
            *contents,
            types.Content(role="model", parts=[types.Part(text=draft.model_dump_json())]),
            *user_turn(
                f"The plan was rejected:\n{ctx.fence('plan errors', str(exc))}\n"
                "Write the whole plan again, fixed. Use only the tools listed in the "
                f"instructions, at most {max_steps} steps, and depends_on only for earlier steps."
            ),
        ]
    draft = await gateway.generate_structured(
        ctx, stage="planner", system=system, contents=repair, schema=PlanDraft
    )
    return validate_plan(draft, tool_names, max_steps)
