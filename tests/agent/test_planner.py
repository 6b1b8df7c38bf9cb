"""Plan validation: known tools, known and acyclic dependencies, the step cap, renumbering."""

from __future__ import annotations

import pytest

from agent.errors import PlanInvalid
from agent.planner import Plan, PlanDraft, Step, StepDraft, find_cycle, validate_plan

TOOLS = {"query_logs", "lookup_ip", "search_alerts"}


def draft(*steps: tuple[str, list[str], list[str]]) -> PlanDraft:
    return PlanDraft(
        objective="Find out whether 203.0.113.7 logged in",
        steps=[
            StepDraft(id=i, description=f"step {i}", tools=t, expected="rows", depends_on=d)
            for i, t, d in steps
        ],
    )


def test_valid_plan_is_renumbered_and_dependencies_follow() -> None:
    plan = validate_plan(
        draft(("a", ["lookup_ip"], []), ("b", ["query_logs", "query_logs"], ["a"])), TOOLS, 5
    )
    assert [s.id for s in plan.steps] == ["s1", "s2"]
    assert plan.steps[1].depends_on == ["s1"]
    assert plan.steps[1].tools == ["query_logs"]
    assert all(s.status == "pending" and s.findings == "" for s in plan.steps)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([("s1", ["check_malware"], [])], "unknown tools 'check_malware'"),
        ([("s1", ["query_logs"], ["s2"]), ("s2", ["query_logs"], ["s1"])], "dependency cycle"),
        ([("s1", ["query_logs"], ["s1"])], "depends on itself"),
        ([("s1", ["query_logs"], ["s9"])], "unknown steps s9"),
        ([("s1", ["lookup_ip"], []), ("s1", ["lookup_ip"], [])], "not unique"),
        ([(f"s{n}", ["lookup_ip"], []) for n in range(1, 5)], "maximum is 3"),
        ([], "no steps"),
    ],
)
def test_invalid_plans_are_rejected_with_the_reason(
    steps: list[tuple[str, list[str], list[str]]], message: str
) -> None:
    with pytest.raises(PlanInvalid, match=message):
        validate_plan(draft(*steps), TOOLS, 3)


def test_find_cycle_reports_the_path() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": [], "b": ["a"], "c": ["a", "b"]}) is None


def test_ready_steps_wait_for_dependencies_and_run_after_failures() -> None:
    plan = Plan(
        objective="o",
        steps=[
            Step(id="s1", description="a", tools=["x"], expected="e"),
            Step(id="s2", description="b", tools=["x"], expected="e", depends_on=["s1"]),
            Step(id="s3", description="c", tools=["x"], expected="e"),
        ],
    )
    assert [s.id for s in plan.ready()] == ["s1", "s3"]
    plan.steps[0].status = "failed"
    assert [s.id for s in plan.ready()] == ["s2", "s3"]
    assert plan.next_id() == "s4"
    assert plan.skip_pending("limit") == ["s2", "s3"]
    assert plan.steps[1].status == "cancelled" and "limit" in plan.steps[1].findings
