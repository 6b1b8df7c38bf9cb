"""The Anthropic fake refuses what the Messages API refuses, and answers as it does
(checked through the real SDK, which parses its answers and raises on its errors)."""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_api import (
    AnthropicAPI,
    overloaded,
    reply,
    sign,
    signed,
    text,
    thinking,
    tool_use,
)
from tests.fakes.anthropic_rules import problem

CALL = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
TOOL = {"name": "lookup", "input_schema": {"type": "object", "properties": {}}}


def body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-haiku-4-5", "max_tokens": 100, "messages": list(messages), **extra}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


HI = text("hi")
LOOP = (user(HI), assistant(CALL), user(RESULT))
CACHED = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}


@pytest.mark.parametrize(
    ("request_body", "refusal"),
    [
        ({"model": "m", "messages": [user(HI)]}, "max_tokens"),
        (body(), "at least one message"),
        (body(assistant(HI)), "first message"),
        (body(user(HI), user(HI)), "alternate"),
        (body(user()), "non-empty content"),
        (body(user(text(""))), "text content blocks must be non-empty"),
        (body(user(text(" \n"))), "non-whitespace"),
        (body(user(HI), assistant(CALL), user(HI)), "without `tool_result`"),
        (body(user(HI), assistant(HI), user(RESULT)), "unexpected `tool_use_id`"),
        (body(user(HI), assistant(CALL), user(HI, RESULT)), "must come first"),
        (body(*LOOP, tools=[{**TOOL, "name": "a.b"}]), "pattern"),
        (body(*LOOP, tools=[{**TOOL, "input_schema": {"type": "string"}}]), "'object'"),
        (body(user(HI), tool_choice={"type": "any"}), "while providing tools"),
        (body(user(HI), tools=[TOOL], tool_choice={"type": "tool", "name": "x"}), "not found"),
        (body(user(*[CACHED] * 5)), "maximum of 4"),
        (
            body(
                user(HI),
                output_config={
                    "format": {
                        "type": "json_schema",
                        "schema": {"type": "object", "properties": {}},
                    }
                },
            ),
            "additionalProperties",
        ),
        (
            body(
                user(HI),
                output_config={
                    "format": {
                        "type": "json_schema",
                        "schema": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {"n": {"type": "number", "minimum": 0}},
                        },
                    }
                },
            ),
            "'minimum' is not supported",
        ),
        (body(user(HI), thinking={"type": "enabled", "budget_tokens": 500}), "1024"),
        (body(user(HI), thinking={"type": "enabled", "budget_tokens": 2000}), "greater than"),
        (
            body(
                *LOOP,
                max_tokens=5000,
                tools=[TOOL],
                thinking={"type": "enabled", "budget_tokens": 2000},
            ),
            "must start with a thinking block",
        ),
        (
            body(
                user(HI),
                max_tokens=5000,
                tools=[TOOL],
                tool_choice={"type": "any"},
                thinking={"type": "enabled", "budget_tokens": 2000},
            ),
            "forces tool use",
        ),
        (
            body(
                user(HI),
                assistant({"type": "thinking", "thinking": "b", "signature": sign("a")}, CALL),
                user(RESULT),
            ),
            "Invalid `signature`",
        ),
    ],
)
def test_refused(request_body: dict[str, Any], refusal: str) -> None:
    found = problem(request_body, signed)
    assert found is not None and refusal in found


def test_accepted_shapes() -> None:
    good = body(
        user(HI),
        assistant(thinking("plan"), CALL),
        user(RESULT, HI),
        max_tokens=5000,
        tools=[TOOL],
        thinking={"type": "enabled", "budget_tokens": 2000},
        system=[CACHED],
        output_config={
            "format": {
                "type": "json_schema",
                "schema": {"type": "object", "properties": {}, "additionalProperties": False},
            }
        },
    )
    assert problem(good, signed) is None
    assert problem(body(user(*[CACHED] * 4)), signed) is None
    assert problem(copy.deepcopy(body(*LOOP)), signed) is None


async def test_the_sdk_reads_its_answers_and_errors() -> None:
    api = AnthropicAPI(
        [overloaded(), reply(thinking("t"), tool_use("lookup", {"q": 1})), reply(text("ok"))]
    )
    client = anthropic.AsyncAnthropic(api_key="k", http_client=api.http_client(), max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        await client.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=[user(HI)])  # type: ignore[list-item]
    assert (
        caught.value.status_code == 529 and caught.value.body["error"]["type"] == "overloaded_error"
    )  # type: ignore[index]
    message = await client.messages.create(
        model="claude-haiku-4-5", max_tokens=10, messages=[user(HI)]
    )  # type: ignore[list-item]
    assert [b.type for b in message.content] == ["thinking", "tool_use"]
    assert message.stop_reason == "tool_use" and message.usage.input_tokens > 0
    with pytest.raises(anthropic.BadRequestError, match="alternate"):
        await client.messages.create(
            model="claude-haiku-4-5", max_tokens=10, messages=[user(HI), user(HI)]
        )  # type: ignore[list-item]
    await client.close()
