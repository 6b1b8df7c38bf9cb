"""Applying reflection updates: ids by code, cancelled steps final, duplicates and caps."""

from __future__ import annotations

from agent.planner import Plan, Step
from agent.reflector import PlanUpdate, StepSpec, apply_updates

TOOLS = ["query_logs", "lookup_ip"]


def make_plan() -> Plan:
    return Plan(
        objective="o",
        steps=[
            Step(
                id="s1",
                description="Look up 203.0.113.7",
                tools=["lookup_ip"],
                expected="e",
                status="done",
                findings="Tor exit",
            ),
            Step(
                id="s2",
                description="Count logins from 203.0.113.7",
                tools=["query_logs"],
                expected="e",
            ),
            Step(id="s3", description="Check VPN logs", tools=["query_logs"], expected="e"),
        ],
    )


def spec(
    description: str, tools: list[str] | None = None, deps: list[str] | None = None
) -> StepSpec:
    return StepSpec(
        description=description,
        tools=tools or ["query_logs"],
        expected="rows",
        depends_on=deps or [],
    )


def test_add_gets_a_fresh_id_from_code() -> None:
    plan = make_plan()
    applied = apply_updates(
        plan,
        [
            PlanUpdate(
                type="add_step", step_id="s2", step=spec("What did alice do next", deps=["s2"])
            )
        ],
        TOOLS,
        8,
    )
    assert applied.changes == ["added s4: What did alice do next"]
    assert plan.steps[-1].id == "s4" and plan.steps[-1].depends_on == ["s2"]


def test_update_only_touches_pending_steps() -> None:
    plan = make_plan()
    applied = apply_updates(
        plan,
        [
            PlanUpdate(
                type="update_step",
                step_id="s2",
                step=spec("Count logins from 203.0.113.7 in 7 days"),
            ),
            PlanUpdate(type="update_step", step_id="s1", step=spec("Re-check the IP")),
            PlanUpdate(type="update_step", step_id="s9", step=spec("Nothing")),
        ],
        TOOLS,
        8,
    )
    assert plan.step("s2").description.endswith("in 7 days")  # type: ignore[union-attr]
    assert plan.step("s1").description == "Look up 203.0.113.7"  # type: ignore[union-attr]
    assert len(applied.changes) == 1
    assert "s1 is done" in applied.rejected[0] and "no step 's9'" in applied.rejected[1]


def test_cancelled_step_stays_and_cannot_be_readded_or_revived() -> None:
    plan = make_plan()
    applied = apply_updates(
        plan,
        [
            PlanUpdate(type="cancel_step", step_id="s3", reason="no VPN in use"),
            PlanUpdate(type="add_step", step=spec("check  VPN logs!")),
            PlanUpdate(type="update_step", step_id="s3", step=spec("Check VPN logs again")),
            PlanUpdate(type="cancel_step", step_id="s1", reason="done anyway"),
        ],
        TOOLS,
        8,
    )
    s3 = plan.step("s3")
    assert s3 is not None and s3.status == "cancelled" and "no VPN in use" in s3.findings
    assert applied.cancelled == ["s3"]
    assert len(plan.steps) == 3
    assert [r.split(":")[0] for r in applied.rejected] == [
        "add rejected",
        "update rejected",
        "cancel rejected",
    ]
    assert "duplicates step s3 (cancelled)" in applied.rejected[0]


def test_unknown_tools_deps_and_cycles_are_rejected() -> None:
    plan = make_plan()
    applied = apply_updates(
        plan,
        [
            PlanUpdate(type="add_step", step=spec("Scan the host", tools=["nmap"])),
            PlanUpdate(type="add_step", step=spec("Follow s7", deps=["s7"])),
            PlanUpdate(type="update_step", step_id="s2", step=spec("Count logins", deps=["s4"])),
            PlanUpdate(type="add_step", step=spec("Follow s2", deps=["s2"])),
            PlanUpdate(type="update_step", step_id="s2", step=spec("Count logins", deps=["s4"])),
        ],
        TOOLS,
        8,
    )
    assert applied.changes == ["added s4: Follow s2"]
    assert "unknown tools 'nmap'" in applied.rejected[0]
    assert "unknown steps s7" in applied.rejected[1]
    assert "unknown steps s4" in applied.rejected[2]
    assert "dependency cycle" in applied.rejected[3]


def test_step_cap_counts_every_step_including_cancelled() -> None:
    plan = make_plan()
    applied = apply_updates(
        plan,
        [
            PlanUpdate(type="add_step", step=spec("One more")),
            PlanUpdate(type="add_step", step=spec("Two more")),
        ],
        TOOLS,
        4,
    )
    assert [s.id for s in plan.steps] == ["s1", "s2", "s3", "s4"]
    assert applied.step_cap_hit and "maximum" in applied.rejected[0]
