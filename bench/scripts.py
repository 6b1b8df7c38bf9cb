"""Scripted investigations for the fake Gemini: what each stage answers.

All responders are stateless: a step answers according to how many model turns its
contents already hold, so concurrent investigations share one script. ``three_steps``
is the investigation ``socbot demo`` plays (``cli.demo.script``): its SQL is real and
runs against the bundled DuckDB sample (``examples/data``); ``lookup_ip`` goes to the
fake threat-intel server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.fake_gemini import GeminiRequest, Responder, Turn
from cli.demo.script import CONCLUSION, CRITIQUE, FINDINGS, FLOWS, OBJECTIVE, WINDOW
from cli.demo.script import STEPS as DEMO_STEPS

THINK = 120  # thinking tokens reported for main-model turns
RAW_SQL = f"SELECT * FROM {FLOWS} WHERE {WINDOW} ORDER BY event_time LIMIT 200"

STEPS: dict[str, tuple[str, str, list[str], list[Turn]]] = {
    step_id: (
        step.description,
        step.expected,
        list(step.tools),
        [
            *(Turn.call(*calls, thoughts_tokens=THINK) for calls in step.turns),
            Turn(text=step.findings, thoughts_tokens=THINK),
        ],
    )
    for step_id, step in DEMO_STEPS.items()
}


def _by_position(turns: Sequence[Turn]) -> Responder:
    def respond(request: GeminiRequest) -> Turn:
        return turns[min(request.model_turns, len(turns) - 1)]

    return respond


def _const(turn: Turn) -> Responder:
    return lambda _request: turn


def _step_router(steps: Mapping[str, Sequence[Turn]]) -> Responder:
    def respond(request: GeminiRequest) -> Turn:
        step_id = request.stage.split(" ", 1)[1] if " " in request.stage else ""
        return _by_position(steps[step_id])(request)

    return respond


def plan_json(step_ids: Sequence[str], *, chain: bool = False) -> dict[str, Any]:
    """The planner's answer for the given steps (independent, or each after the previous)."""
    steps = []
    for i, step_id in enumerate(step_ids):
        description, expected, tools, _ = _chain_step(step_id) if chain else STEPS[step_id]
        steps.append(
            {
                "id": step_id,
                "description": description,
                "tools": tools,
                "expected": expected,
                "depends_on": [step_ids[i - 1]] if chain and i else [],
            }
        )
    return {"objective": OBJECTIVE, "steps": steps}


def three_steps(*, achieved: bool = True) -> dict[str, Responder]:
    """Planner → 3 independent steps (3 model calls each, 4 tool calls) → reflect → conclude."""
    return {
        "classifier": _const(Turn.json({"needs_plan": True, "reason": "an investigation"})),
        "planner": _const(Turn.json(plan_json(["s1", "s2", "s3"]), thoughts_tokens=400)),
        "step": _step_router({k: v[3] for k, v in STEPS.items()}),
        "reflector": _const(
            Turn.json(
                {
                    "achieved": achieved,
                    "insights": ["Spray, IAM grant, mining"],
                    "plan_updates": [],
                },
                thoughts_tokens=200,
            )
        ),
        "concluder": _const(Turn.json(CONCLUSION, thoughts_tokens=300)),
        "critic": _const(Turn.json(CRITIQUE)),
        "direct": _const(Turn(text="185.220.101.42 is a known Tor exit node.")),
    }


def _chain_step(step_id: str) -> tuple[str, str, list[str], list[Turn]]:
    findings = f"{step_id}: " + FINDINGS.format(what=f"vpc_flow_logs for {step_id}") * 3
    return (
        f"Step {step_id}: review raw VPC flows of the window for anything new",
        "notable flows with timestamps",
        ["query_logs"],
        [Turn.call(("query_logs", {"sql": RAW_SQL}), thoughts_tokens=THINK), Turn(text=findings)],
    )


def chain(n: int) -> dict[str, Responder]:
    """Planner → ``n`` steps, each depending on the previous; every step fetches 200 raw
    rows (a large tool result) and reports ~1 KB of findings. Reflector never stops early."""
    ids = [f"s{i}" for i in range(1, n + 1)]
    return {
        "classifier": _const(Turn.json({"needs_plan": True, "reason": "an investigation"})),
        "planner": _const(Turn.json(plan_json(ids, chain=True))),
        "step": _step_router({i: _chain_step(i)[3] for i in ids}),
        "reflector": _const(Turn.json({"achieved": False, "insights": [], "plan_updates": []})),
        "concluder": _const(Turn.json(CONCLUSION)),
        "critic": _const(Turn.json(CRITIQUE)),
    }


INVENTED_IP = "198.51.100.77"  # in no tool result: the code check flags the finding


def review_rewrites() -> dict[str, Responder]:
    """``three_steps`` whose first conclusion quotes an IP no tool returned: the critic
    scores it low, the rewrite (asked with the review's issues) is grounded and passes."""

    def concluder(request: GeminiRequest) -> Turn:
        if "## Review of your previous draft" in request.user_text():
            return Turn.json(CONCLUSION, thoughts_tokens=300)
        bad = {
            "finding": f"{INVENTED_IP} also signed in",
            "evidence": "auth_logs",
            "evidence_refs": ["s1#1"],
        }
        draft = {**CONCLUSION, "key_findings": [*CONCLUSION["key_findings"], bad]}
        return Turn.json(draft, thoughts_tokens=300)

    def critic(request: GeminiRequest) -> Turn:
        if INVENTED_IP not in request.user_text():
            return Turn.json(CRITIQUE)
        issue = f"key_findings[3] quotes {INVENTED_IP}, which no cited result contains: drop it"
        scores = dict.fromkeys(CRITIQUE["criteria"], 0.5)
        return Turn.json({"score": 0.5, "criteria": scores, "issues": [issue]})

    return {**three_steps(), "concluder": concluder, "critic": critic}
