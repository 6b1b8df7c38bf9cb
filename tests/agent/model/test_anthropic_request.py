"""The translation to and from the Messages API, each request judged by the fake API's
rules (``tests.fakes.anthropic_rules``): what is built is what the API accepts."""

from __future__ import annotations

from typing import Any

from anthropic.types import Message
from google.genai import types

from agent.model.anthropic_reply import to_response
from agent.model.anthropic_request import REDACTED, Request, build_request
from config.anthropic_settings import AnthropicSettings
from tests.fakes.anthropic_api import sign, signed
from tests.fakes.anthropic_rules import problem

SETTINGS = AnthropicSettings()
MODEL = "claude-sonnet-4-6"


def decl(name: str = "lookup_ip") -> types.FunctionDeclaration:
    return types.FunctionDeclaration(
        name=name,
        description="d",
        parameters=types.Schema(
            type=types.Type.OBJECT, properties={"ip": types.Schema(type=types.Type.STRING)}
        ),
    )


def config(**extra: Any) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(system_instruction="socbot manual\nrules", **extra)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def calls(*pairs: tuple[str | None, str]) -> types.Content:
    parts = [types.Part(function_call=types.FunctionCall(id=i, name=n, args={})) for i, n in pairs]
    return types.Content(role="model", parts=parts)


def result(ident: str | None, name: str) -> types.Content:
    answer = types.FunctionResponse(id=ident, name=name, response={"output": 1})
    return types.Content(role="user", parts=[types.Part(function_response=answer)])


def build(
    contents: list[types.Content], cfg: types.GenerateContentConfig | None = None, **own: Any
) -> Request:
    settings = SETTINGS.model_copy(update=own) if own else SETTINGS
    request = build_request(MODEL, contents, cfg or config(), settings)
    assert problem(request.params, signed) is None
    return request


def test_unanswered_calls_get_an_error_result_and_ids_are_stable() -> None:
    contents = [user("go"), calls((None, "a"), (None, "b")), result(None, "b"), user("and?")]
    first = build(contents).params["messages"]
    again = build(contents).params["messages"]
    assert first == again  # the generated ids do not change between calls
    uses = [b["id"] for b in first[1]["content"]]
    assert uses == ["call_1_0", "call_1_1"]
    answers = first[2]["content"]
    assert [(b["type"], b.get("tool_use_id")) for b in answers] == [
        ("tool_result", "call_1_1"),
        ("tool_result", "call_1_0"),
        ("text", None),
    ]
    assert answers[1]["is_error"] is True and "not run" in answers[1]["content"]


def test_a_result_of_no_call_becomes_text_and_an_error_result_is_flagged() -> None:
    error = types.FunctionResponse(id="toolu_1", name="a", response={"error": "boom"})
    contents = [
        user("go"),
        calls(("toolu_1", "a")),
        types.Content(role="user", parts=[types.Part(function_response=error)]),
        result("toolu_9", "ghost"),
    ]
    blocks = build(contents).params["messages"][2]["content"]
    assert (blocks[0]["tool_use_id"], blocks[0]["is_error"]) == ("toolu_1", True)
    assert blocks[0]["content"] == '{"error": "boom"}'
    assert blocks[1]["type"] == "text" and blocks[1]["text"].startswith("Result of ghost:")


def test_tool_names_the_api_refuses_are_mapped_and_mapped_back() -> None:
    cfg = config(tools=[types.Tool(function_declarations=[decl("intel.lookup:ip")])])
    request = build([user("go")], cfg)
    sent = request.params["tools"][0]["name"]
    assert sent != "intel.lookup:ip" and request.names[sent] == "intel.lookup:ip"
    assert request.params["tools"][0]["input_schema"]["properties"] == {"ip": {"type": "string"}}
    message = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": sent, "input": {"ip": "1.2.3.4"}}
            ],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    call = to_response(message, request.names).candidates[0].content.parts[0].function_call  # type: ignore[index, union-attr]
    assert call is not None and call.name == "intel.lookup:ip" and call.id == "toolu_1"
    history = [
        user("go"),
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        result("toolu_1", "intel.lookup:ip"),
    ]
    again = build(history, cfg).params["messages"][1]["content"][0]
    assert again["name"] == sent


def test_tool_modes() -> None:
    tools = [types.Tool(function_declarations=[decl("a"), decl("b"), decl("c")])]

    def mode(m: str, allowed: list[str] | None = None) -> dict[str, Any]:
        fc = types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode(m), allowed_function_names=allowed
        )
        return build(
            [user("go")],
            config(tools=tools, tool_config=types.ToolConfig(function_calling_config=fc)),
        ).params

    assert mode("NONE")["tool_choice"] == {"type": "none"}
    assert mode("AUTO")["tool_choice"] == {"type": "auto"}
    several = mode("ANY", ["a", "c"])
    assert several["tool_choice"] == {"type": "any"} and [t["name"] for t in several["tools"]] == [
        "a",
        "c",
    ]
    assert mode("ANY")["tool_choice"] == {"type": "any"} and len(mode("ANY")["tools"]) == 3


def test_thinking_budget_from_the_config_the_stage_and_the_model() -> None:
    asked = config(thinking_config=types.ThinkingConfig(thinking_budget=5000))
    assert build([user("x")], asked).params["thinking"]["budget_tokens"] == 5000
    small = config(thinking_config=types.ThinkingConfig(thinking_budget=100))
    assert build([user("x")], small).params["thinking"]["budget_tokens"] == 1024
    off = config(thinking_config=types.ThinkingConfig(thinking_budget=0))
    assert "thinking" not in build([user("socbot stage: planner")], off).params
    planner = build([user("case\nsocbot stage: planner\n")]).params
    assert planner["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "thinking" not in build([user("socbot stage: step s1")]).params
    other = build_request("claude-3-5-haiku", [user("socbot stage: planner")], config(), SETTINGS)
    assert "thinking" not in other.params
    # a tool loop whose call turn is not signed cannot think
    loop = [user("socbot stage: planner"), calls(("toolu_1", "a")), result("toolu_1", "a")]
    assert "thinking" not in build(loop).params


def test_signed_and_redacted_thinking_go_back_unedited() -> None:
    parts = [
        types.Part(text="why", thought=True, thought_signature=sign("why").encode()),
        types.Part(thought=True, part_metadata={REDACTED: "opaque"}),
        types.Part(text="summary", thought=True),  # no signature: not Claude's, dropped
        types.Part(function_call=types.FunctionCall(id="toolu_1", name="a", args={})),
    ]
    loop = [
        user("socbot stage: planner"),
        types.Content(role="model", parts=parts),
        result("toolu_1", "a"),
    ]
    params = build(loop).params
    assert params["messages"][1]["content"][:2] == [
        {"type": "thinking", "thinking": "why", "signature": sign("why")},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    assert (
        len(params["messages"][1]["content"]) == 3 and params["thinking"]["budget_tokens"] == 2048
    )


def test_system_as_content_and_caching_off() -> None:
    cfg = types.GenerateContentConfig(
        system_instruction=types.Content(parts=[types.Part(text="a"), types.Part(text="b")])
    )
    params = build([user("x")], cfg, prompt_cache=False).params
    assert params["system"] == [{"type": "text", "text": "ab"}]
    assert "cache_control" not in str(params)


def test_never_more_than_four_breakpoints() -> None:
    tools = [types.Tool(function_declarations=[decl()])]
    contents = [
        user("<<<DATA-x a\n1\nDATA-x>>>\nsocbot stage: step s1\n"),
        calls(("toolu_1", "lookup_ip")),
        result("toolu_1", "lookup_ip"),
    ]
    contents.append(user("<<<DATA-x b\n2\nDATA-x>>>\nsocbot stage: step s1\n"))
    params = build(contents, config(tools=tools)).params
    marked = [b for m in params["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marked) + 2 == 4  # tools and system, then two of the three candidates
