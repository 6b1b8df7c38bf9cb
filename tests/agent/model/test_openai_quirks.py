"""OpenAI-compatible servers' quirks (vLLM, Ollama, llama.cpp, LiteLLM): each is
repaired or gives one clear error, never a crash. The real openai SDK client against the
Chat Completions fake in its ``compatible`` mode (``tests/fakes/openai_api.py``)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
import respx
from google.genai import types
from pydantic import BaseModel

from agent.errors import LLMUnavailable
from agent.model.gateway import CallContext, LLMGateway
from agent.model.providers import RoutingBackend
from config.settings import ConfigError, Settings, fixed_settings
from tests.fakes import openai_api as oa
from tests.fakes.sink import EventSink

LOCAL = "http://127.0.0.1:11434/v1"
MODEL = "openai:qwen3:32b"
LOOKUP = types.FunctionDeclaration(
    name="lookup_ip",
    description="Reputation of an IP address.",
    parameters_json_schema={"type": "object", "properties": {"ip": {"type": "string"}}},
)
QUERY = types.FunctionDeclaration(name="query_logs", description="Run one SELECT.")
SYSTEM = "socbot stage: direct\nYou are socbot."


class Verdict(BaseModel):
    needs_plan: bool
    reason: str


def local(**openai: Any) -> Settings:
    cfg = {"base_url": LOCAL, "strict_schemas": False, "tool_choice_required": False, **openai}
    return fixed_settings(models={"main": MODEL, "light": MODEL}, openai=cfg)


def gateway(api: oa.OpenAIAPI, cfg: Settings) -> LLMGateway:
    backend = RoutingBackend(cfg, factories={"openai": lambda: oa.openai_backend(api, cfg)})
    return LLMGateway(backend, cfg.gemini, cfg.models)


def ctx() -> CallContext:
    return CallContext("inv-local", EventSink(), 100_000, time.monotonic() + 30)


def user(text: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=text)])]


def server(script: dict[str, Any]) -> oa.OpenAIAPI:
    return oa.OpenAIAPI(
        respx.MockRouter(assert_all_called=False), script, base_url=LOCAL, compatible=True
    )


async def test_a_local_server_needs_no_key_and_gets_no_strict_schema() -> None:
    api = server({"classifier": [oa.structured({"needs_plan": True, "reason": "x"})]})
    verdict = await gateway(api, local()).generate_structured(
        ctx(),
        stage="classifier",
        system="socbot stage: classifier",
        contents=user("x"),
        schema=Verdict,
    )
    assert verdict.needs_plan
    [body] = api.requests
    assert "strict" not in body["response_format"]["json_schema"]
    assert body["temperature"] == 0.2 and "reasoning_effort" not in body
    assert api.route.calls[0].request.headers["authorization"] == "Bearer no-key"


async def test_strict_schemas_on_a_server_without_them_is_one_clear_error() -> None:
    api = server({"classifier": [oa.structured({"needs_plan": True, "reason": "x"})]})
    with pytest.raises(LLMUnavailable, match=r"rejected the request .*strict JSON schemas"):
        await gateway(api, local(strict_schemas=True)).generate_structured(
            ctx(),
            stage="classifier",
            system="socbot stage: classifier",
            contents=user("x"),
            schema=Verdict,
        )


@pytest.mark.parametrize("mode", ["json_object", "text"])
async def test_json_in_text_where_the_server_has_no_schema_mode(mode: str) -> None:
    api = server({"classifier": [oa.text('```json\n{"needs_plan": false, "reason": "q"}\n```')]})
    verdict = await gateway(api, local(structured_output=mode)).generate_structured(
        ctx(),
        stage="classifier",
        system="socbot stage: classifier",
        contents=user("x"),
        schema=Verdict,
    )
    assert verdict == Verdict(needs_plan=False, reason="q")
    [body] = api.requests
    assert '"needs_plan"' in body["messages"][0]["content"]  # the schema, in the prompt
    expected = {"type": "json_object"} if mode == "json_object" else None
    assert body.get("response_format") == expected


async def test_tool_choice_auto_only_offers_just_the_allowed_tools() -> None:
    api = server({"direct": [oa.calls(("lookup_ip", {"ip": "192.0.2.7"}))]})
    turn = await gateway(api, local()).generate(
        ctx(),
        stage="direct",
        system=SYSTEM,
        contents=user("x"),
        tools=[LOOKUP, QUERY],
        allowed=["lookup_ip"],
        tool_mode="ANY",
    )
    assert turn.function_calls[0].name == "lookup_ip"
    [body] = api.requests
    assert "tool_choice" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup_ip"]


async def test_tool_choice_required_on_an_auto_only_server_is_one_clear_error() -> None:
    api = server({"direct": [oa.calls(("lookup_ip", {"ip": "192.0.2.7"}))]})
    with pytest.raises(LLMUnavailable, match="tool choice is the only one supported"):
        await gateway(api, local(tool_choice_required=True)).generate(
            ctx(),
            stage="direct",
            system=SYSTEM,
            contents=user("x"),
            tools=[LOOKUP],
            allowed=["lookup_ip"],
            tool_mode="ANY",
        )


@pytest.mark.parametrize(
    "message",
    [
        {"reasoning_content": "The user asks about an IP.", "content": "It is a scanner."},
        {"reasoning": "The user asks about an IP.", "content": "It is a scanner."},
        {"content": "<think>The user asks about an IP.</think>\n\nIt is a scanner."},
    ],
)
async def test_reasoning_text_never_leaks_into_the_answer_or_back(message: dict[str, Any]) -> None:
    api = server({"direct": [oa.completion(message), oa.text("fine")]})
    gw, c, contents = gateway(api, local()), ctx(), user("Is 192.0.2.7 known?")
    turn = await gw.generate(c, stage="direct", system=SYSTEM, contents=contents)
    assert turn.text == "It is a scanner."
    assert [p.text for p in turn.content.parts or [] if p.thought] == ["The user asks about an IP."]
    contents += [turn.content, *user("And 192.0.2.8?")]
    await gw.generate(c, stage="direct", system=SYSTEM, contents=contents)
    assert api.requests[1]["messages"][2] == {"role": "assistant", "content": "It is a scanner."}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [('```json\n{"ip": "192.0.2.7"}\n```', {"ip": "192.0.2.7"}), ("", {})],
)
async def test_tool_arguments_in_a_fence_or_empty_are_repaired(
    arguments: str, expected: dict[str, Any]
) -> None:
    api = server({"direct": [oa.calls(("lookup_ip", arguments))]})
    turn = await gateway(api, local()).generate(
        ctx(), stage="direct", system=SYSTEM, contents=user("x"), tools=[LOOKUP]
    )
    assert turn.function_calls[0].args == expected


async def test_arguments_that_are_no_json_object_are_asked_again() -> None:
    api = server(
        {
            "direct": [
                oa.calls(("lookup_ip", "ip=192.0.2.7")),
                oa.calls(("lookup_ip", '{"ip": "192.0.2.7"}')),
            ]
        }
    )
    turn = await gateway(api, local()).generate(
        ctx(), stage="direct", system=SYSTEM, contents=user("x"), tools=[LOOKUP]
    )
    assert turn.function_calls[0].args == {"ip": "192.0.2.7"} and len(api.requests) == 2


async def test_http_200_with_an_error_body_is_one_clear_error() -> None:
    body = {"error": {"message": "model 'qwen3:32b' not found, try pulling it first", "code": 404}}
    api = server({"direct": [httpx.Response(200, json=body)]})
    with pytest.raises(
        LLMUnavailable, match="answered qwen3:32b with an error: model 'qwen3:32b' not found"
    ):
        await gateway(api, local()).generate(
            ctx(), stage="direct", system=SYSTEM, contents=user("x")
        )


async def test_an_answer_that_is_no_json_is_one_clear_error() -> None:
    api = server({"direct": [httpx.Response(200, text="<html>proxy login</html>")]})
    with pytest.raises(LLMUnavailable, match="not a JSON object"):
        await gateway(api, local()).generate(
            ctx(), stage="direct", system=SYSTEM, contents=user("x")
        )


def test_the_openai_api_without_a_key_fails_at_start_up() -> None:
    cfg = fixed_settings(models={"main": "openai:gpt-5-mini"})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        RoutingBackend(cfg).prepare([cfg.models.main])


async def test_a_local_model_without_a_price_costs_unknown_never_zero() -> None:
    from bot.blocks.stats import RunStats
    from core.events import LLMCalled

    api = server({"direct": [oa.text("ok", prompt_tokens=500, completion_tokens=20)]})
    sink = EventSink()
    c = CallContext("inv-local", sink, 100_000, time.monotonic() + 30)
    await gateway(api, local()).generate(c, stage="direct", system=SYSTEM, contents=user("x"))
    [called] = [e for e in sink.events if isinstance(e, LLMCalled)]
    assert (called.model, called.prompt_tokens, called.cost_usd) == (MODEL, 500, None)
    usage = c.usage.as_dict()
    assert (usage["llm_calls"], usage["unpriced_calls"]) == (1, 1)
    assert c.usage.total().cost_text() == "unknown"
    assert RunStats.from_outcome(usage, {}).text() == "1 model call · cost unknown"


async def test_gemini_history_without_call_ids_pairs_by_name_and_never_leaves_a_call_open() -> None:
    api = server({"direct": [oa.text("ok")]})
    call = types.FunctionCall(name="lookup_ip", args={"ip": "192.0.2.7"})  # Gemini: no id
    lone = types.FunctionResponse(name="query_logs", response={"rows": []})  # no call of it
    open_call = types.FunctionCall(name="query_logs", args={"sql": "SELECT 1"})
    contents = [
        *user("x"),
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(
            role="user",
            parts=[
                types.Part(function_response=types.FunctionResponse(name="lookup_ip", response={})),
                types.Part(function_response=lone),
            ],
        ),
        types.Content(role="model", parts=[types.Part(function_call=open_call)]),
        *user("go on"),
    ]
    turn = await gateway(api, local()).generate(
        ctx(), stage="direct", system=SYSTEM, contents=contents, tools=[LOOKUP, QUERY]
    )
    assert turn.text == "ok"  # the fake refuses unpaired calls and results, as OpenAI does
    roles = [m["role"] for m in api.requests[0]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user", "assistant", "tool", "user"]
