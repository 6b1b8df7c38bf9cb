"""``AnthropicBackend`` under the real ``LLMGateway``, on the real ``anthropic.AsyncAnthropic``
against the wire-level fake (``tests.fakes.anthropic_api``), which refuses what the API
refuses: every request of these tests was accepted unless a test says otherwise."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel, Field

from agent.errors import LLMOutputInvalid, LLMRefused, LLMUnavailable
from agent.model.anthropic_backend import AnthropicBackend
from agent.model.gateway import CallContext, LLMGateway
from config.anthropic_settings import AnthropicSettings
from config.settings import ConfigError, GeminiSettings, fixed_settings
from tests.fakes.anthropic_api import (
    Answer,
    AnthropicAPI,
    Failure,
    overloaded,
    rate_limited,
    reply,
    text,
    thinking,
    tool_use,
)
from tests.fakes.sink import EventSink

# claude-sonnet-4-5 reaches end-of-life on 2026-11-30 (the SDK warns): Sonnet 4.6 instead
MAIN, LIGHT = "claude-sonnet-4-6", "claude-haiku-4-5"
MANUAL = "socbot manual\n" + "The environment, the tables and the tools. " * 200
LOOKUP = types.FunctionDeclaration(
    name="lookup_ip",
    description="Reputation of an IP address.",
    parameters_json_schema={
        "type": "object",
        "properties": {"ip": {"type": "string", "format": "ipv4"}},
        "required": ["ip"],
    },
)


class Score(BaseModel):
    score: float = Field(ge=0, le=1, description="overall, 0.0-1.0")
    issues: list[str]


def backend(api: AnthropicAPI, monkeypatch: pytest.MonkeyPatch, **own: Any) -> AnthropicBackend:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    own = {"retry_initial_s": 0.01, **own}
    settings = fixed_settings(anthropic=AnthropicSettings(**own))
    return AnthropicBackend.from_settings(settings, http_client=api.http_client())


def gateway(api: AnthropicAPI, monkeypatch: pytest.MonkeyPatch, **own: Any) -> LLMGateway:
    gemini = GeminiSettings(model=MAIN, light_model=LIGHT)
    return LLMGateway(backend(api, monkeypatch, **own), gemini)


def make_ctx() -> tuple[CallContext, EventSink]:
    sink = EventSink()
    return CallContext("inv-1", sink, 1_000_000, time.monotonic() + 30), sink


def task(stage: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=f"the case\nsocbot stage: {stage}")])]


def answered(turn_content: types.Content, call: types.FunctionCall) -> types.Content:
    result = types.FunctionResponse(id=call.id, name=call.name, response={"output": "clean"})
    return types.Content(role="user", parts=[types.Part(function_response=result)])


async def test_a_tool_loop_pairs_calls_and_results_by_id_and_caches_the_prefix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI(
        [
            reply(
                tool_use("lookup_ip", {"ip": "185.220.101.42"}),
                tool_use("lookup_ip", {"ip": "10.0.0.1"}),
            ),
            reply(text("Both addresses are clean.")),
        ]
    )
    gw = gateway(api, monkeypatch)
    ctx, sink = make_ctx()
    contents = task("step s1")
    first = await gw.generate(
        ctx, stage="step s1", system=MANUAL, contents=contents, tools=[LOOKUP]
    )
    assert [c.args for c in first.function_calls] == [{"ip": "185.220.101.42"}, {"ip": "10.0.0.1"}]
    ids = [c.id for c in first.function_calls]
    assert all(i and i.startswith("toolu_") for i in ids) and len(set(ids)) == 2
    contents.append(first.content)
    # the engine answers each call in its own turn: they must arrive as one user message
    contents += [answered(first.content, c) for c in reversed(first.function_calls)]
    second = await gw.generate(
        ctx, stage="step s1", system=MANUAL, contents=contents, tools=[LOOKUP]
    )
    assert second.text == "Both addresses are clean." and second.finish_reason == "STOP"
    assert api.refusals == []
    sent = api.requests[1]
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    results = sent["messages"][2]["content"]
    assert sorted(b["tool_use_id"] for b in results) == sorted(ids)
    assert sent["tools"][0]["input_schema"]["properties"]["ip"] == {
        "type": "string",
        "format": "ipv4",
    }
    assert sent["tool_choice"] == {"type": "auto"}
    assert "thinking" not in sent  # a step does not think by default
    marks = [b for b in [*sent["tools"], *sent["system"], *results] if b.get("cache_control")]
    assert len(marks) == 3  # the tools, the system, the last message
    # the second call read the whole first prompt from the cache
    assert api.usages[1]["cache_read_input_tokens"] > 0
    events = sink.llm_calls()
    assert events[1].cached_tokens == api.usages[1]["cache_read_input_tokens"]
    assert events[1].model == "anthropic:claude-sonnet-4-6"
    assert events[1].cost_usd is not None and events[1].cost_usd > 0


async def test_usage_counts_cache_reads_and_writes_in_the_prompt_and_prices_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI([reply(text("one")), reply(text("two"))])
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    for _ in range(2):
        await gw.generate(ctx, stage="classifier", system=MANUAL, contents=task("x"), light=True)
    first, second = api.usages
    assert first["cache_creation_input_tokens"] > 1024 and first["cache_read_input_tokens"] == 0
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    stage = ctx.usage.stages["classifier"]
    prompt = sum(
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        for u in api.usages
    )
    assert stage.prompt_tokens == prompt
    assert stage.cached_tokens == second["cache_read_input_tokens"]
    # Haiku 4.5: $1 input, $0.10 cache hits, $5 output per 1M tokens
    read = second["cache_read_input_tokens"]
    expected = ((prompt - read) * 1.0 + read * 0.10 + 24 * 5.0) / 1_000_000
    assert stage.cost_usd == pytest.approx(expected)
    assert api.requests[0]["model"] == LIGHT


async def test_structured_output_uses_the_native_schema_and_repairs_an_out_of_range_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI(
        [
            reply(text('{"score": 1.7, "issues": []}')),  # the API does not enforce maximum
            reply(text('{"score": 0.7, "issues": ["cite the log row"]}')),
        ]
    )
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    got = await gw.generate_structured(
        ctx, stage="critic", system=MANUAL, contents=task("critic"), schema=Score, thinking=False
    )
    assert got == Score(score=0.7, issues=["cite the log row"])
    assert api.refusals == []
    schema = api.requests[0]["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False
    assert "maximum: 1" in schema["properties"]["score"]["description"]
    repair = api.requests[1]["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert "could not be used" in repair[2]["content"][0]["text"]


async def test_structured_output_as_text_puts_the_schema_in_the_system(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI([reply(text('```json\n{"score": 0.2, "issues": []}\n```'))])
    gw = gateway(api, monkeypatch, structured_outputs="text")
    ctx, _ = make_ctx()
    got = await gw.generate_structured(
        ctx, stage="critic", system=MANUAL, contents=task("critic"), schema=Score
    )
    assert got.score == 0.2
    sent = api.requests[0]
    assert "output_config" not in sent
    assert '"additionalProperties":false' in sent["system"][0]["text"]


async def test_the_planner_thinks_and_its_signed_thinking_goes_back_unedited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI(
        [
            reply(thinking("Check the IP first."), tool_use("lookup_ip", {"ip": "1.2.3.4"})),
            reply(thinking("Clean."), text("plan")),
        ]
    )
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    contents = task("planner")
    first = await gw.generate(
        ctx, stage="planner", system=MANUAL, contents=contents, tools=[LOOKUP]
    )
    assert first.text == "" and len(first.function_calls) == 1
    contents += [first.content, answered(first.content, first.function_calls[0])]
    second = await gw.generate(
        ctx, stage="planner", system=MANUAL, contents=contents, tools=[LOOKUP]
    )
    assert second.text == "plan"  # the thought is not part of the answer
    assert api.refusals == []
    for body in api.requests:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert body["max_tokens"] == 8192 + 2048
    assert api.requests[1]["messages"][1]["content"][0]["type"] == "thinking"


async def test_an_edited_thinking_block_is_refused_by_the_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI(
        [reply(thinking("Check the IP first."), tool_use("lookup_ip", {"ip": "1.2.3.4"}))]
    )
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    contents = task("planner")
    first = await gw.generate(
        ctx, stage="planner", system=MANUAL, contents=contents, tools=[LOOKUP]
    )
    parts = list(first.content.parts or [])
    parts[0] = parts[0].model_copy(update={"text": "Ignore the IP."})
    contents += [
        types.Content(role="model", parts=parts),
        answered(first.content, first.function_calls[0]),
    ]
    with pytest.raises(LLMUnavailable, match="Invalid `signature`"):
        await gw.generate(ctx, stage="planner", system=MANUAL, contents=contents, tools=[LOOKUP])


async def test_a_forced_tool_turns_thinking_off(monkeypatch: pytest.MonkeyPatch) -> None:
    api = AnthropicAPI([reply(tool_use("lookup_ip", {"ip": "1.2.3.4"}), stop="tool_use")])
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    await gw.generate(
        ctx,
        stage="planner",
        system=MANUAL,
        contents=task("planner"),
        tools=[LOOKUP],
        tool_mode="ANY",
        allowed=["lookup_ip"],
    )
    assert api.refusals == []
    assert api.requests[0]["tool_choice"] == {"type": "tool", "name": "lookup_ip"}
    assert "thinking" not in api.requests[0]


async def test_overloaded_529_is_retried_then_answers(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    api = AnthropicAPI([overloaded(), reply(text("ok"))])
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    with caplog.at_level(logging.WARNING):
        turn = await gw.generate(ctx, stage="direct", system=MANUAL, contents=task("direct"))
    assert turn.text == "ok" and len(api.requests) == 2
    assert "HTTP 529 overloaded_error" in caplog.text and "retry 1/3" in caplog.text


async def test_a_rate_limit_waits_as_long_as_retry_after_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI([rate_limited("0.3"), reply(text("ok"))])
    gw = gateway(api, monkeypatch, retry_initial_s=5.0)
    ctx, _ = make_ctx()
    started = time.monotonic()
    turn = await gw.generate(ctx, stage="direct", system=MANUAL, contents=task("direct"))
    waited = time.monotonic() - started
    assert turn.text == "ok" and 0.3 <= waited < 5.0


@pytest.mark.parametrize(
    ("answers", "problem"),
    [
        ([rate_limited("120")], "asks to retry in 120s"),
        ([overloaded()] * 4, "after 4 attempts"),
        ([Failure(529, "overloaded_error", headers={"x-should-retry": "false"})], "rejected"),
        ([Failure(401, "authentication_error")], "rejected the API key"),
        ([Failure(404, "not_found_error")], "does not know the model 'claude-sonnet-4-6'"),
        ([Failure(400, "invalid_request_error", "prompt is too long")], "prompt is too long"),
    ],
)
async def test_failures_become_the_engines_errors_naming_anthropic(
    monkeypatch: pytest.MonkeyPatch, answers: list[Answer], problem: str
) -> None:
    api = AnthropicAPI(list(answers))
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    with pytest.raises(LLMUnavailable, match="Anthropic") as caught:
        await gw.generate(ctx, stage="direct", system=MANUAL, contents=task("direct"))
    assert problem in str(caught.value)
    assert len(api.requests) == len(answers)


async def test_refusal_and_max_tokens_stop_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    api = AnthropicAPI([reply(text("I can't"), stop="refusal"), reply(stop="max_tokens")])
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    with pytest.raises(LLMRefused, match="SAFETY"):
        await gw.generate(ctx, stage="direct", system=MANUAL, contents=task("direct"))
    with pytest.raises(LLMOutputInvalid, match="output token limit"):
        await gw.generate(ctx, stage="direct", system=MANUAL, contents=task("direct"))


def test_no_key_is_a_config_error_naming_the_variable() -> None:
    settings = fixed_settings(anthropic=AnthropicSettings(api_key_env="TEAM_CLAUDE_KEY"))
    with pytest.raises(ConfigError, match="TEAM_CLAUDE_KEY"):
        AnthropicBackend.from_settings(settings)


CASE = "".join(f"<<<DATA-f00d alert field {i}\n{'value ' * 60}\nDATA-f00d>>>\n" for i in range(6))


async def test_the_next_stage_reads_the_case_file_from_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = AnthropicAPI([reply(text("plan")), reply(text("reflection"))])
    gw = gateway(api, monkeypatch)
    ctx, _ = make_ctx()
    results = "".join(f"<<<DATA-f00d step s{i}\nfound {i}\nDATA-f00d>>>\n" for i in range(3))
    for stage, turn in (("planner", CASE), ("reflector", CASE + results)):
        task = [
            types.Content(role="user", parts=[types.Part(text=f"{turn}socbot stage: {stage}\n")])
        ]
        await gw.generate(ctx, stage=stage, system=MANUAL, contents=task, thinking=False)
    assert api.refusals == []
    sent = api.requests[1]["messages"][0]["content"]
    assert "".join(b["text"] for b in sent) == CASE + results + "socbot stage: reflector\n"
    assert len(sent) == 6 + 3 + 1  # one block per data item, then the task
    assert [i for i, b in enumerate(sent) if b.get("cache_control")] == [8, 9]
    first = api.usages[0]
    planner_prompt = first["input_tokens"] + first["cache_creation_input_tokens"]
    # the reflector read all the planner sent but its task section (a dozen tokens)
    assert planner_prompt - 20 < api.usages[1]["cache_read_input_tokens"] < planner_prompt


def test_text_blocks_cut_before_data_and_task_and_keep_every_byte() -> None:
    from agent.model.anthropic_cache import text_blocks

    source = "\n<<<DATA-a x\n1\nDATA-a>>>\n\n<<<DATA-a y\n2\nDATA-a>>>\nsocbot stage: step s1\n"
    blocks = text_blocks(source)
    assert "".join(b["text"] for b in blocks) == source
    assert [b["text"][:9] for b in blocks] == ["\n<<<DATA-", "<<<DATA-a", "socbot st"]
    assert text_blocks("plain") == [{"type": "text", "text": "plain"}]
    assert text_blocks("x\n \n") == [{"type": "text", "text": "x\n \n"}]


def test_bedrock_and_vertex_through_the_sdks_own_clients() -> None:
    import anthropic

    vertex = AnthropicSettings(platform="vertex", vertex_project="p1", vertex_region="us-east5")
    client = AnthropicBackend.from_settings(fixed_settings(anthropic=vertex)).client
    assert isinstance(client, anthropic.AsyncAnthropicVertex)
    assert (client.region, client.project_id, client.max_retries) == ("us-east5", "p1", 0)
    bedrock = AnthropicSettings(platform="bedrock", aws_region="eu-west-1")
    client = AnthropicBackend.from_settings(fixed_settings(anthropic=bedrock)).client
    assert isinstance(client, anthropic.AsyncAnthropicBedrock)
    assert (client.aws_region, client.max_retries) == ("eu-west-1", 0)
