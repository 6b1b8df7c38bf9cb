"""Gemini 3.x: the fake Gemini refuses what the real API refuses (a function-call turn
sent back without its thought signature), and socbot keeps every signature through
tool loops, structured-output repairs, the review's rewrite and a follow-up on the
thread's history; thinking levels per stage (budgets stay for 2.5).

The real runtime, engine and google-genai client against ``bench.fake_gemini`` (HTTP on
loopback) with the bench's scripted investigation (``bench.scripts``: its alert is
``examples/alerts``' genuine SCC finding, the answers are invented for the bench).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types

from agent.engine import Request
from agent.model.gateway import LLMGateway
from bench import bench_cost, scripts
from bench.common import measure, remote, runtime
from bench.fake_gemini import FAKE_SIGNATURE, GeminiRequest, Turn
from config.settings import GeminiSettings
from core.events import NullSink
from tests.agent.model.test_gateway import Verdict, make_ctx, system, user
from tests.fakes.model import ScriptedModel, json_response

GEMINI3 = {"model": "gemini-3-flash-preview", "light_model": "gemini-3-flash-preview"}


def call_turn(signature: str | None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": "query_logs", "args": {"sql": "SELECT 1"}}}
    if signature is not None:
        part["thoughtSignature"] = signature
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "socbot stage: step s1\nlook at the logs"}]},
            {"role": "model", "parts": [part]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "query_logs", "response": {"rows": []}}}],
            },
        ]
    }


@pytest.mark.parametrize(
    ("model", "signature", "status"),
    [
        ("gemini-3-flash-preview", None, 400),  # dropped: refused, as the real API does
        ("gemini-3-pro-preview", "Zm9yZ2Vk", 400),  # not the one it gave: corrupted
        ("gemini-3-flash-preview", FAKE_SIGNATURE, 200),
        ("gemini-2.5-flash", None, 200),  # 2.5 does not enforce it
    ],
)
async def test_the_fake_refuses_a_call_turn_without_its_signature_on_gemini_3(
    model: str, signature: str | None, status: int
) -> None:
    script = {"step": lambda _r: Turn(text="no rows")}
    async with remote(script, latency_s=0.0) as rem:
        url = f"{rem.gemini.base_url}/v1beta/models/{model}:generateContent"
        async with httpx.AsyncClient() as client:
            answer = await client.post(url, json=call_turn(signature))
    assert answer.status_code == status, answer.text
    if status == 400:
        message = answer.json()["error"]["message"]
        assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"
        assert "thought signature" in message or "thought_signature" in message
        assert rem.gemini.refused_signatures == [message]


def repaired_once(responder: Any) -> Any:
    """The stage's first answer is not JSON: the gateway asks for a repair, sending the
    model's turn back (with its signature)."""

    def answer(request: GeminiRequest) -> Turn:
        return Turn(text="not json {") if request.model_turns == 0 else responder(request)

    return answer


async def test_signatures_survive_tool_loops_repairs_the_review_and_history(
    tmp_path: Path,
) -> None:
    script = scripts.review_rewrites()
    script = {**script, "planner": repaired_once(script["planner"])}
    request = bench_cost.request_for("scc")
    async with (
        remote(script, latency_s=0.0) as rem,
        runtime(rem, tmp_path, gemini=GEMINI3) as (rt, timer),
    ):
        result = await measure(rt, timer, rem, request)
        follow_up = Request(
            conversation_id=request.conversation_id, text="is 185.220.101.42 known bad?"
        )
        answered = await rt.engine.run(follow_up, NullSink())
    assert result.outcome.status == "concluded"
    assert answered.status == "concluded"  # planned again, on the thread's history
    gemini = rem.gemini
    assert gemini.refused_signatures == []  # every call turn went back signed
    assert gemini.unsigned_turns == 0  # text turns (the repair, the rewrite) too
    assert gemini.returned_turns >= 12  # three steps' tool loops, a repair: all checked
    stages = {c.stage.split(" ", 1)[0] for c in gemini.calls}
    assert {"classifier", "planner", "step", "reflector", "concluder", "critic"} <= stages
    assert {c.model for c in gemini.calls} == {"gemini-3-flash-preview"}
    assert all(c.status == 200 for c in gemini.calls)


@pytest.mark.parametrize(
    ("model", "stage", "thinking", "expected"),
    [
        ("gemini-3-flash-preview", "step s2", True, types.ThinkingConfig(thinking_level="LOW")),
        ("gemini-3-pro-preview", "planner", True, types.ThinkingConfig(thinking_level="HIGH")),
        ("gemini-3-flash-preview", "concluder", True, None),  # not listed: model default
        ("gemini-3-flash-preview", "critic", False, types.ThinkingConfig(thinking_level="LOW")),
        ("gemini-2.5-flash", "step s2", True, None),  # 2.5 keeps its budget
        ("gemini-2.5-flash", "classifier", False, types.ThinkingConfig(thinking_budget=0)),
    ],
)
async def test_thinking_level_per_stage_on_gemini_3_only(
    model: str, stage: str, thinking: bool, expected: types.ThinkingConfig | None
) -> None:
    settings = GeminiSettings(
        model=model, light_model=model, thinking_levels={"step": "low", "planner": "high"}
    )
    scripted = ScriptedModel({stage: [json_response(Verdict(needs_plan=False, reason="x"))]})
    ctx, _ = make_ctx()
    await LLMGateway(scripted, settings).generate_structured(
        ctx,
        stage=stage,
        system=system(stage),
        contents=user("hello"),
        schema=Verdict,
        thinking=thinking,
    )
    (sent,) = scripted.requests
    assert sent.config.thinking_config == expected
