"""The gateway on an ``openai:`` model: the real openai SDK client against the Chat
Completions fake (``tests/fakes/openai_api.py``, the network edge only)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import respx
from google.genai import types
from pydantic import BaseModel

from agent.errors import LLMOutputInvalid, LLMRefused, LLMUnavailable
from agent.model.gateway import CallContext, LLMGateway
from agent.model.providers import RoutingBackend
from config.settings import Settings, fixed_settings
from core.events import LLMCalled
from tests.fakes import openai_api as oa
from tests.fakes.sink import EventSink

MAIN = "openai:gpt-5-mini"
SNAP = "gpt-5-mini-2025-08-07"  # the snapshot OpenAI says it served
LOOKUP = types.FunctionDeclaration(
    name="intel.lookup_ip",  # an MCP-style name OpenAI refuses as is
    description="Reputation of an IP address.",
    parameters_json_schema={"type": "object", "properties": {"ip": {"type": "string"}}},
)


class Verdict(BaseModel):
    needs_plan: bool
    reason: str
    note: str | None = None


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    yield respx.MockRouter(assert_all_called=False)


def settings(**openai: Any) -> Settings:
    return fixed_settings(models={"main": MAIN, "light": "openai:gpt-4.1-mini"}, openai=openai)


def gateway(api: oa.OpenAIAPI, cfg: Settings) -> LLMGateway:
    backend = RoutingBackend(cfg, factories={"openai": lambda: oa.openai_backend(api, cfg)})
    return LLMGateway(backend, cfg.gemini, cfg.models)


def ctx() -> tuple[CallContext, EventSink]:
    sink = EventSink()
    return CallContext("inv-oa", sink, 100_000, time.monotonic() + 30), sink


def user(text: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=text)])]


SYSTEM = "socbot stage: direct\nYou are socbot."


async def test_a_tool_loop_keeps_call_ids_and_maps_names_back(router: respx.MockRouter) -> None:
    api = oa.OpenAIAPI(
        router,
        {
            "direct": [
                oa.calls(("intel_lookup_ip", {"ip": "192.0.2.7"}), reasoning_tokens=12, model=SNAP),
                oa.text("192.0.2.7 is a known scanner.", cached_tokens=100, model=SNAP),
            ]
        },
    )
    gw, (c, sink) = gateway(api, settings()), ctx()
    contents = user("Is 192.0.2.7 known?")
    turn = await gw.generate(c, stage="direct", system=SYSTEM, contents=contents, tools=[LOOKUP])
    [call] = turn.function_calls
    assert (call.name, call.args) == ("intel.lookup_ip", {"ip": "192.0.2.7"})
    assert call.id and call.id.startswith("call_")
    contents.append(turn.content)
    reply = types.FunctionResponse(id=call.id, name=call.name, response={"result": "scanner"})
    contents.append(types.Content(role="user", parts=[types.Part(function_response=reply)]))
    turn = await gw.generate(c, stage="direct", system=SYSTEM, contents=contents, tools=[LOOKUP])
    assert turn.text == "192.0.2.7 is a known scanner."

    first, second = api.requests
    assert first["model"] == "gpt-5-mini" and "temperature" not in first
    assert first["tools"][0]["function"]["name"] == "intel_lookup_ip"
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": call.id,
        "content": '{"result": "scanner"}',
    }
    called = [e for e in sink.events if isinstance(e, LLMCalled)]
    assert [e.model for e in called] == ["openai:gpt-5-mini-2025-08-07"] * 2
    assert (called[0].thinking_tokens, called[0].output_tokens) == (12, 18)
    assert called[1].cached_tokens == 100
    assert c.usage.models == {"openai:gpt-5-mini-2025-08-07": 2}


async def test_structured_output_is_strict_and_optional_fields_come_back_none(
    router: respx.MockRouter,
) -> None:
    answer = {"needs_plan": True, "reason": "an alert", "note": None}
    api = oa.OpenAIAPI(router, {"classifier": [oa.structured(answer, model="gpt-4.1-mini")]})
    gw, (c, _) = gateway(api, settings()), ctx()
    verdict = await gw.generate_structured(
        c,
        stage="classifier",
        system="socbot stage: classifier",
        contents=user("x"),
        schema=Verdict,
        light=True,
        thinking=False,
    )
    assert verdict == Verdict(needs_plan=True, reason="an alert")
    [body] = api.requests
    assert body["model"] == "gpt-4.1-mini" and body["temperature"] == 0.2
    assert "reasoning_effort" not in body  # gpt-4.1 takes none (the fake refuses it)
    fmt = body["response_format"]["json_schema"]
    assert fmt["strict"] is True and fmt["schema"]["required"] == ["needs_plan", "reason", "note"]


async def test_a_garbled_structured_answer_is_repaired(router: respx.MockRouter) -> None:
    fixed = oa.structured({"needs_plan": False, "reason": "chat"})
    api = oa.OpenAIAPI(router, {"classifier": [oa.text('```json\n{"needs_plan": 1'), fixed]})
    gw, (c, _) = gateway(api, settings()), ctx()
    verdict = await gw.generate_structured(
        c, stage="classifier", system="socbot stage: classifier", contents=user("x"), schema=Verdict
    )
    assert verdict.reason == "chat"
    assert api.requests[1]["messages"][-1]["role"] == "user"  # the repair turn
    assert api.requests[1]["messages"][-2]["role"] == "assistant"


async def test_reasoning_effort_per_stage(router: respx.MockRouter) -> None:
    api = oa.OpenAIAPI(router, {"step": lambda body: oa.text("done"), "direct": [oa.text("ok")]})
    gw, (c, _) = gateway(api, settings()), ctx()
    step = "socbot stage: step s1"
    await gw.generate(c, stage="step s1", system=step, contents=user("x"))
    await gw.generate(c, stage="direct", system=SYSTEM, contents=user("x"), thinking=False)
    assert [b.get("reasoning_effort") for b in api.requests] == ["low", "minimal"]


async def test_a_refusal_is_llm_refused(router: respx.MockRouter) -> None:
    api = oa.OpenAIAPI(router, {"direct": [oa.completion({"refusal": "I can't help."})]})
    gw, (c, _) = gateway(api, settings()), ctx()
    with pytest.raises(LLMRefused, match="The OpenAI endpoint stopped answering"):
        await gw.generate(c, stage="direct", system=SYSTEM, contents=user("x"))


async def test_a_bad_key_is_one_sentence(router: respx.MockRouter) -> None:
    api = oa.OpenAIAPI(router, {"direct": [oa.error(401, "Incorrect API key provided")]})
    gw, (c, _) = gateway(api, settings()), ctx()
    with pytest.raises(LLMUnavailable, match="rejected the API key"):
        await gw.generate(c, stage="direct", system=SYSTEM, contents=user("x"))


async def test_rate_limits_are_retried_by_the_sdk_honouring_retry_after(
    router: respx.MockRouter,
) -> None:
    slow = oa.error(429, "Rate limit reached", **{"retry-after-ms": "10"})
    api = oa.OpenAIAPI(router, {"direct": [slow, oa.error(503, "overloaded"), oa.text("ok")]})
    gw, (c, _) = gateway(api, settings(max_retries=2)), ctx()
    started = time.monotonic()
    turn = await gw.generate(c, stage="direct", system=SYSTEM, contents=user("x"))
    assert turn.text == "ok" and len(api.requests) == 3
    assert time.monotonic() - started < 5


async def test_retries_exhausted_is_llm_unavailable(router: respx.MockRouter) -> None:
    api = oa.OpenAIAPI(router, {"direct": lambda body: oa.error(500, "boom")})
    gw, (c, _) = gateway(api, settings(max_retries=1)), ctx()
    with pytest.raises(LLMUnavailable, match=r"unavailable \(500\)"):
        await gw.generate(c, stage="direct", system=SYSTEM, contents=user("x"))
    assert len(api.requests) == 2


async def test_invalid_tool_arguments_are_resent_then_reported(router: respx.MockRouter) -> None:
    bad = oa.calls(("intel_lookup_ip", "{'ip': 192.0.2.7"))
    api = oa.OpenAIAPI(router, {"direct": [bad, bad]})
    gw, (c, _) = gateway(api, settings()), ctx()
    with pytest.raises(LLMOutputInvalid, match="unusable reply in stage 'direct' twice"):
        await gw.generate(c, stage="direct", system=SYSTEM, contents=user("x"), tools=[LOOKUP])
    assert len(api.requests) == 2


async def test_azure_openai_calls_the_deployment_with_its_api_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoint = "https://soc-team.openai.azure.com"
    router = respx.MockRouter(assert_all_called=False)
    api = oa.OpenAIAPI(
        router, {"direct": [oa.text("ok")]}, base_url=f"{endpoint}/openai/deployments/gpt-5-mini"
    )
    cfg = settings(base_url=endpoint, azure_api_version="2024-10-21")
    gw, (c, _) = gateway(api, cfg), ctx()
    turn = await gw.generate(c, stage="direct", system=SYSTEM, contents=user("x"))
    assert turn.text == "ok"
    [call] = api.route.calls
    assert call.request.url.params["api-version"] == "2024-10-21"
    assert call.request.headers["api-key"] == "sk-test-not-real"
