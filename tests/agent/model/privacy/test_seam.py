"""The seam: a call's request pseudonymised, its answer restored, through the gateway."""

from __future__ import annotations

import json
import time

import pytest
from google.genai import types

from agent.model.gateway import CallContext, LLMGateway
from agent.model.privacy import Pseudonymiser, incoming, outgoing
from agent.pseudonyms import privacy_key, privacy_maps
from config.privacy_settings import PrivacySettings
from config.settings import ConfigError, Settings
from core.events import NullSink
from tests.fakes.model import ModelRequest, ScriptedModel, call_response, response
from tests.fakes.model import text_response as text

ON = PrivacySettings(enabled=True)


def mapped(*texts: str) -> Pseudonymiser:
    p = Pseudonymiser(ON)
    for t in texts:
        p.pseudonymise(t)
    return p


def test_every_text_of_a_request_is_pseudonymised_ids_and_signatures_kept() -> None:
    p = mapped()
    call = types.FunctionCall(id="c1", name="query_logs", args={"sql": "WHERE e='a@example.com'"})
    contents = [
        types.Content(role="user", parts=[types.Part(text="who is b@example.com?")]),
        types.Content(role="model", parts=[types.Part(function_call=call, thought_signature=b"s")]),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="c1", name="query_logs", response={"output": ["c@example.com"]}
                    )
                )
            ],
        ),
    ]
    declaration = types.FunctionDeclaration(name="t", description="mail d@example.com")
    config = types.GenerateContentConfig(
        system_instruction="for e@example.com",
        tools=[types.Tool(function_declarations=[declaration])],
    )
    sent, sent_config = outgoing(p, contents, config)
    blob = json.dumps([c.model_dump(mode="json") for c in sent]) + sent_config.model_dump_json()
    assert "example.com" not in blob
    assert sent[1].parts is not None and sent[1].parts[0].thought_signature == b"s"
    assert sent[1].parts[0].function_call is not None
    assert sent[1].parts[0].function_call.id == "c1"
    assert sent_config.system_instruction == "for EMAIL_1"  # the system is read first
    assert contents[0].parts is not None and contents[0].parts[0].text == "who is b@example.com?"


def test_an_answer_is_restored_in_text_calls_and_json_and_split_parts() -> None:
    p = mapped('x@example.com and "Jane" <EMAIL_1>')  # the second is data: a literal
    assert p.map.value_of("EMAIL_1") == "x@example.com"
    answer = response(
        [
            types.Part(text="EMAIL_"),
            types.Part(text="1 wrote; EMAIL_7 is unknown; LITERAL_1"),
            types.Part(function_call=types.FunctionCall(name="q", args={"e": ["EMAIL_1"]})),
        ]
    )
    back = incoming(p, answer, types.GenerateContentConfig())
    parts = back.candidates[0].content.parts  # type: ignore[index,union-attr]
    assert parts is not None
    assert parts[0].text == "x@example.com wrote; EMAIL_7 is unknown; EMAIL_1"
    assert parts[1].function_call is not None
    assert parts[1].function_call.args == {"e": ["x@example.com"]}
    structured = types.GenerateContentConfig(response_mime_type="application/json")
    p.map.token_for("PERSON", 'Jane "JD" Doe')
    back = incoming(p, text(json.dumps({"who": "PERSON_1"})), structured)
    assert json.loads(back.text or "") == {"who": 'Jane "JD" Doe'}


async def test_the_gateway_gives_a_call_without_a_map_one_of_its_own() -> None:
    settings = Settings(privacy=ON)
    model = ScriptedModel({"judge": lambda r: text(seen(r))})
    gateway = LLMGateway(model, settings.gemini, privacy=privacy_maps(settings))
    ctx = CallContext("learning:x", NullSink(), 100_000, time.monotonic() + 30)
    contents = [types.Content(role="user", parts=[types.Part(text="ask a@example.com")])]
    turn = await gateway.generate(
        ctx, stage="judge", system="socbot stage: judge", contents=contents
    )
    assert turn.text == "ask a@example.com"  # restored
    assert "a@example.com" not in str(model.requests[0].contents)
    assert ctx.privacy is not None and ctx.privacy.map.value_of("EMAIL_1") == "a@example.com"


async def test_an_unknown_pseudonym_in_a_tool_call_stays_as_written() -> None:
    settings = Settings(privacy=ON)
    model = ScriptedModel({"step": [call_response(("q", {"user": "USER_3"}))]})
    gateway = LLMGateway(model, settings.gemini, privacy=privacy_maps(settings))
    ctx = CallContext("i", NullSink(), 100_000, time.monotonic() + 30)
    contents = [types.Content(role="user", parts=[types.Part(text="socbot stage: step s1")])]
    turn = await gateway.generate(ctx, stage="step", system="", contents=contents)
    assert turn.function_calls[0].args == {"user": "USER_3"}


def test_off_means_no_map_and_on_without_a_key_does_not_start() -> None:
    assert privacy_maps(Settings()) is None and privacy_key(Settings()) is None
    with pytest.raises(ConfigError, match="SOCBOT_PRIVACY_KEY"):
        privacy_key(Settings(privacy=ON))


def seen(request: ModelRequest) -> str:
    return "".join(p.text or "" for c in request.contents for p in c.parts or [])
