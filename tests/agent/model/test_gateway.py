"""LLMGateway behaviour against the scripted model (real google.genai.types responses)."""

from __future__ import annotations

import asyncio
import time

import pytest
from google.genai import types
from pydantic import BaseModel

from agent.errors import (
    BudgetExceeded,
    DeadlineExceeded,
    LLMOutputInvalid,
    LLMRefused,
    LLMUnavailable,
)
from agent.model.gateway import CallContext, LLMGateway
from agent.model.thinking import least_thinking
from config.settings import GeminiSettings
from core.usage import Usage
from tests.fakes.model import (
    FAKE_THOUGHT_SIGNATURE,
    Delayed,
    ScriptedModel,
    blocked_response,
    call_response,
    json_response,
    response,
    text_response,
)
from tests.fakes.sink import EventSink

SETTINGS = GeminiSettings(model="gemini-main", light_model="gemini-light")
LOOKUP = types.FunctionDeclaration(
    name="lookup_ip",
    description="Reputation of an IP address.",
    parameters_json_schema={"type": "object", "properties": {"ip": {"type": "string"}}},
)
QUERY = types.FunctionDeclaration(name="query_logs", description="Run one SELECT.")


class Verdict(BaseModel):
    needs_plan: bool
    reason: str


def make_ctx(budget: int = 100_000, seconds: float = 30.0) -> tuple[CallContext, EventSink]:
    sink = EventSink()
    return CallContext("inv-1", sink, budget, time.monotonic() + seconds), sink


def user(text: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=text)])]


def system(stage: str) -> str:
    return f"socbot stage: {stage}\nYou are socbot."


async def test_usage_is_accounted_per_stage_and_emitted() -> None:
    model = ScriptedModel(
        {
            "planner": [text_response("plan", prompt_tokens=900, output_tokens=50)],
            "step s1": [
                call_response(("lookup_ip", {"ip": "185.220.101.42"}), thoughts_tokens=120),
                text_response("done", prompt_tokens=1500, output_tokens=20, cached_tokens=800),
            ],
        }
    )
    gw = LLMGateway(model, SETTINGS)
    ctx, sink = make_ctx()
    started = time.monotonic()
    await gw.generate(ctx, stage="planner", system=system("planner"), contents=user("go"))
    for _ in range(2):
        await gw.generate(
            ctx, stage="step s1", system=system("step s1"), contents=user("go"), tools=[LOOKUP]
        )
    elapsed_ms = (time.monotonic() - started) * 1000

    stages = ctx.usage.as_dict()["stages"]
    assert isinstance(stages, dict)
    assert stages["planner"]["calls"] == 1
    assert stages["planner"]["prompt_tokens"] == 900
    assert stages["planner"]["output_tokens"] == 50
    step = stages["step s1"]
    assert step["calls"] == 2
    assert step["prompt_tokens"] == 1200 + 1500
    assert step["thinking_tokens"] == 120
    assert step["cached_tokens"] == 800
    assert ctx.usage.calls == 3
    expected_total = 900 + 50 + step["prompt_tokens"] + step["output_tokens"] + 120
    assert ctx.usage.total_tokens == expected_total
    events = sink.llm_calls()
    assert [e.stage for e in events] == ["planner", "step s1", "step s1"]
    assert events[0].model == "gemini-2.5-flash"  # the response's modelVersion
    assert events[1].thinking_tokens == 120
    assert all(e.investigation_id == "inv-1" for e in events)
    # each call timed (unrounded in the usage), one after another within the test's own clock
    timed = [ctx.usage.stages[name].latency_ms for name in ("planner", "step s1")]
    assert all(ms > 0 for ms in timed) and sum(timed) <= elapsed_ms


async def test_budget_spent_raises_before_calling() -> None:
    model = ScriptedModel({"planner": [text_response("never")]})
    ctx, sink = make_ctx(budget=1000)
    ctx.usage.add("classifier", prompt_tokens=990, output_tokens=10)
    with pytest.raises(BudgetExceeded, match="1000"):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="planner", system=system("planner"), contents=user("go")
        )
    assert model.requests == []
    assert sink.events == []


async def test_deadline_passed_raises_before_calling() -> None:
    model = ScriptedModel({"planner": [text_response("never")]})
    ctx, _ = make_ctx(seconds=-1)
    with pytest.raises(DeadlineExceeded):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="planner", system=system("planner"), contents=user("go")
        )
    assert model.requests == []


async def test_call_is_bounded_by_the_remaining_deadline() -> None:
    model = ScriptedModel({"planner": [Delayed(text_response("late"), 60.0)]})
    ctx, _ = make_ctx(seconds=0.05)
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="during"):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="planner", system=system("planner"), contents=user("go")
        )
    assert time.monotonic() - started < 10.0  # cut at the deadline, not the model's 60 s


async def test_backend_errors_pass_through() -> None:
    model = ScriptedModel({"planner": [LLMUnavailable("Gemini is unavailable.")]})
    ctx, _ = make_ctx()
    with pytest.raises(LLMUnavailable):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="planner", system=system("planner"), contents=user("go")
        )


async def test_malformed_function_call_is_retried_once() -> None:
    malformed = response([], finish_reason="MALFORMED_FUNCTION_CALL")
    model = ScriptedModel(
        {"step s1": [malformed, call_response(("lookup_ip", {"ip": "10.0.0.1"}))]}
    )
    ctx, sink = make_ctx()
    turn = await LLMGateway(model, SETTINGS).generate(
        ctx, stage="step s1", system=system("step s1"), contents=user("go"), tools=[LOOKUP]
    )
    assert [c.name for c in turn.function_calls] == ["lookup_ip"]
    assert len(model.requests) == 2
    assert model.requests[0].contents == model.requests[1].contents
    assert [e.finish_reason for e in sink.llm_calls()] == ["MALFORMED_FUNCTION_CALL", "STOP"]
    assert ctx.usage.stages["step s1"].calls == 2


async def test_malformed_twice_is_output_invalid() -> None:
    malformed = response([], finish_reason="MALFORMED_FUNCTION_CALL")
    model = ScriptedModel({"step s1": [malformed, malformed]})
    ctx, _ = make_ctx()
    with pytest.raises(LLMOutputInvalid, match="MALFORMED_FUNCTION_CALL"):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="step s1", system=system("step s1"), contents=user("go"), tools=[LOOKUP]
        )
    assert len(model.requests) == 2


@pytest.mark.parametrize("reason", ["SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII"])
async def test_policy_stops_are_refusals(reason: str) -> None:
    model = ScriptedModel({"direct": [response([], finish_reason=reason)]})
    ctx, sink = make_ctx()
    with pytest.raises(LLMRefused, match=reason):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="direct", system=system("direct"), contents=user("go")
        )
    assert len(model.requests) == 1
    assert ctx.usage.calls == 1  # refused calls still cost tokens
    assert sink.llm_calls()[0].finish_reason == reason


async def test_blocked_prompt_is_a_refusal() -> None:
    model = ScriptedModel({"direct": [blocked_response("PROHIBITED_CONTENT")]})
    ctx, _ = make_ctx()
    with pytest.raises(LLMRefused, match="blocked the request"):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="direct", system=system("direct"), contents=user("go")
        )


async def test_max_tokens_without_output_is_invalid_but_partial_text_is_kept() -> None:
    model = ScriptedModel(
        {
            "direct": [
                response([], finish_reason="MAX_TOKENS", thoughts_tokens=8000),
                text_response("The IP is a Tor exit", finish_reason="MAX_TOKENS"),
            ]
        }
    )
    gw = LLMGateway(model, SETTINGS)
    ctx, _ = make_ctx()
    with pytest.raises(LLMOutputInvalid, match="token limit"):
        await gw.generate(ctx, stage="direct", system=system("direct"), contents=user("go"))
    assert len(model.requests) == 1
    turn = await gw.generate(ctx, stage="direct", system=system("direct"), contents=user("go"))
    assert turn.text == "The IP is a Tor exit"
    assert turn.finish_reason == "MAX_TOKENS"


async def test_empty_turn_is_retried_then_invalid() -> None:
    empty = response([types.Part(text="")])
    model = ScriptedModel({"direct": [empty, empty]})
    ctx, _ = make_ctx()
    with pytest.raises(LLMOutputInvalid):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="direct", system=system("direct"), contents=user("go")
        )
    assert len(model.requests) == 2


async def test_request_config_for_a_restricted_tool_step() -> None:
    model = ScriptedModel({"step s2": [call_response(("lookup_ip", {"ip": "1.1.1.1"}))]})
    ctx, _ = make_ctx()
    turn = await LLMGateway(model, SETTINGS).generate(
        ctx,
        stage="step s2",
        system=system("step s2"),
        contents=user("go"),
        tools=[LOOKUP, QUERY],
        allowed=["lookup_ip"],
        tool_mode="ANY",
    )
    (req,) = model.requests
    assert req.model == "gemini-main"
    assert req.stage == "step s2"
    assert req.tool_names == ["lookup_ip", "query_logs"]
    assert req.allowed_function_names == ["lookup_ip"]
    assert req.config.tool_config is not None
    fcc = req.config.tool_config.function_calling_config
    assert fcc is not None and fcc.mode == types.FunctionCallingConfigMode.ANY
    afc = req.config.automatic_function_calling
    assert afc is not None and afc.disable is True
    assert req.config.thinking_config is None
    assert req.config.temperature == SETTINGS.temperature
    # The whole model turn is kept, thought signature included.
    assert turn.content.role == "model"
    assert turn.content.parts is not None
    assert turn.content.parts[0].thought_signature == FAKE_THOUGHT_SIGNATURE


async def test_auto_mode_sends_no_allowed_names_and_no_tools_means_no_tool_config() -> None:
    model = ScriptedModel({"direct": [text_response("a"), text_response("b")]})
    gw = LLMGateway(model, SETTINGS)
    ctx, _ = make_ctx()
    await gw.generate(
        ctx,
        stage="direct",
        system=system("direct"),
        contents=user("go"),
        tools=[LOOKUP],
        allowed=["lookup_ip"],
    )
    await gw.generate(ctx, stage="direct", system=system("direct"), contents=user("go"))
    first, second = model.requests
    assert first.allowed_function_names is None
    assert first.config.tool_config is not None
    fcc = first.config.tool_config.function_calling_config
    assert fcc is not None and fcc.mode == types.FunctionCallingConfigMode.AUTO
    assert second.config.tools is None and second.config.tool_config is None


async def test_light_call_uses_light_model_without_thinking() -> None:
    model = ScriptedModel({"classifier": [json_response(Verdict(needs_plan=False, reason="hi"))]})
    ctx, _ = make_ctx()
    out = await LLMGateway(model, SETTINGS).generate_structured(
        ctx,
        stage="classifier",
        system=system("classifier"),
        contents=user("hello"),
        schema=Verdict,
        light=True,
        thinking=False,
    )
    assert out == Verdict(needs_plan=False, reason="hi")
    (req,) = model.requests
    assert req.model == "gemini-light"
    assert req.config.thinking_config == types.ThinkingConfig(thinking_budget=0)
    assert req.config.response_mime_type == "application/json"
    assert req.config.response_json_schema == Verdict.model_json_schema()
    assert req.config.tools is None


async def test_structured_repair_succeeds() -> None:
    model = ScriptedModel(
        {
            "classifier": [
                json_response({"needs_plan": "maybe"}),
                json_response({"needs_plan": True, "reason": "alert-like question"}),
            ]
        }
    )
    ctx, _ = make_ctx()
    out = await LLMGateway(model, SETTINGS).generate_structured(
        ctx, stage="classifier", system=system("classifier"), contents=user("q"), schema=Verdict
    )
    assert out.needs_plan is True
    first, repair = model.requests
    assert len(repair.contents) == len(first.contents) + 2
    bad_turn, ask = repair.contents[-2:]
    assert bad_turn.role == "model"
    assert bad_turn.parts is not None and bad_turn.parts[0].text == '{"needs_plan": "maybe"}'
    assert ask.role == "user" and ask.parts is not None
    ask_text = ask.parts[0].text or ""
    assert "reason" in ask_text and "needs_plan" in ask_text  # quotes the validation error
    assert "only the corrected JSON" in ask_text
    assert ctx.usage.stages["classifier"].calls == 2


async def test_structured_repair_failure_is_output_invalid() -> None:
    model = ScriptedModel(
        {"reflector": [text_response("Sure! Here is the JSON:"), text_response("{not json")]}
    )
    ctx, _ = make_ctx()
    with pytest.raises(LLMOutputInvalid, match="after one repair attempt"):
        await LLMGateway(model, SETTINGS).generate_structured(
            ctx, stage="reflector", system=system("reflector"), contents=user("q"), schema=Verdict
        )
    assert len(model.requests) == 2


async def test_structured_max_tokens_counts_as_invalid_json() -> None:
    model = ScriptedModel(
        {
            "concluder": [
                text_response('{"needs_plan": true, "rea', finish_reason="MAX_TOKENS"),
                json_response({"needs_plan": True, "reason": "short"}),
            ]
        }
    )
    ctx, _ = make_ctx()
    out = await LLMGateway(model, SETTINGS).generate_structured(
        ctx, stage="concluder", system=system("concluder"), contents=user("q"), schema=Verdict
    )
    assert out.reason == "short"
    ask = model.requests[1].contents[-1]
    assert ask.parts is not None and "token limit" in (ask.parts[0].text or "")


async def test_structured_accepts_a_fenced_json_block() -> None:
    fenced = '```json\n{"needs_plan": false, "reason": "greeting"}\n```'
    model = ScriptedModel({"classifier": [text_response(fenced)]})
    ctx, _ = make_ctx()
    out = await LLMGateway(model, SETTINGS).generate_structured(
        ctx, stage="classifier", system=system("classifier"), contents=user("q"), schema=Verdict
    )
    assert out.reason == "greeting"


async def test_structured_refusal_is_not_repaired() -> None:
    model = ScriptedModel({"planner": [response([], finish_reason="SAFETY")]})
    ctx, _ = make_ctx()
    with pytest.raises(LLMRefused):
        await LLMGateway(model, SETTINGS).generate_structured(
            ctx, stage="planner", system=system("planner"), contents=user("q"), schema=Verdict
        )
    assert len(model.requests) == 1


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gemini-2.5-flash-lite", types.ThinkingConfig(thinking_budget=0)),
        ("gemini-2.5-flash", types.ThinkingConfig(thinking_budget=0)),
        ("gemini-2.5-pro", types.ThinkingConfig(thinking_budget=128)),
        ("models/gemini-3-pro-preview", types.ThinkingConfig(thinking_level="LOW")),
    ],
)
def test_least_thinking_per_model_family(model: str, expected: types.ThinkingConfig) -> None:
    assert least_thinking(model) == expected


def test_usage_as_dict_totals() -> None:
    usage = Usage()
    usage.add(
        "planner",
        prompt_tokens=10,
        output_tokens=5,
        thinking_tokens=3,
        latency_ms=12.34,
        cost_usd=0.0012345678,
    )
    usage.add("step s1", prompt_tokens=7, cached_tokens=4)  # a model without a price
    d = usage.as_dict()
    assert d["llm_calls"] == 2
    assert d["total_tokens"] == 25
    assert d["cached_tokens"] == 4
    assert (d["cost_usd"], d["unpriced_calls"]) == (0.001235, 1)
    assert d["stages"] == {
        "planner": {
            "calls": 1,
            "prompt_tokens": 10,
            "output_tokens": 5,
            "thinking_tokens": 3,
            "cached_tokens": 0,
            "latency_ms": 12.3,
            "cost_usd": 0.001235,
            "unpriced_calls": 0,
        },
        "step s1": {
            "calls": 1,
            "prompt_tokens": 7,
            "output_tokens": 0,
            "thinking_tokens": 0,
            "cached_tokens": 4,
            "latency_ms": 0.0,
            "cost_usd": 0.0,
            "unpriced_calls": 1,
        },
    }


def test_usage_absorb_counts_another_usage_under_one_stage() -> None:
    usage, side = Usage(), Usage()
    usage.add("concluder", prompt_tokens=100, output_tokens=10)
    side.add("concluder", prompt_tokens=90, output_tokens=9, thinking_tokens=1)
    side.add("concluder", prompt_tokens=95, output_tokens=5, latency_ms=3.0)
    usage.absorb(side, stage="concluder_speculative")
    usage.absorb(Usage(), stage="nothing")  # an empty usage adds no stage
    assert set(usage.stages) == {"concluder", "concluder_speculative"}
    spec = usage.stages["concluder_speculative"]
    assert (spec.calls, spec.total_tokens, spec.latency_ms) == (2, 200, 3.0)
    assert usage.total_tokens == 310 and usage.calls == 3


# ---------------------------------------------------------------- the fake itself


async def test_scripted_model_fails_loudly_on_unscripted_stage() -> None:
    model = ScriptedModel({"planner": [text_response("x")]})
    ctx, _ = make_ctx()
    with pytest.raises(AssertionError, match="'reflector'"):
        await LLMGateway(model, SETTINGS).generate(
            ctx, stage="reflector", system=system("reflector"), contents=user("go")
        )


async def test_scripted_model_step_fallback_callable_and_overlap() -> None:
    seen: list[str] = []

    def any_step(request: object) -> types.GenerateContentResponse:
        seen.append("called")
        return text_response("generic step")

    model = ScriptedModel(
        {"step s1": [text_response("specific")], "step": any_step}, delay={"step": 0.05}
    )
    gw = LLMGateway(model, SETTINGS)
    ctx, _ = make_ctx()
    turns = await asyncio.gather(
        *(
            gw.generate(ctx, stage=s, system=system(s), contents=user("go"))
            for s in ("step s1", "step s2", "step s3")
        )
    )
    assert [t.text for t in turns] == ["specific", "generic step", "generic step"]
    assert model.max_in_flight == 3
    assert len(seen) == 2
    assert [r.stage for r in model.requests_for("step")] == ["step s1", "step s2", "step s3"]
    assert model.remaining() == {}
