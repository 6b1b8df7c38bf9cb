"""The real google-genai client, through respx, on the Gemini REST API.

Payloads in ``tests/fixtures/gemini/`` have the REST API's shapes (camelCase,
base64 ``thoughtSignature``, ``usageMetadata``, ``google.rpc`` error details).
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import google.auth
import google.auth.exceptions
import google.oauth2.credentials
import httpx
import pytest
import respx
from google.genai import types
from pydantic import BaseModel, SecretStr

from agent.errors import LLMOutputInvalid, LLMRefused, LLMUnavailable
from agent.model.gateway import CallContext, LLMGateway
from agent.model.gemini import GeminiBackend, tls_context
from config.settings import ConfigError, GeminiSettings
from core.events import LLMCalled
from tests.fakes.sink import EventSink

FIXTURES = Path(__file__).parents[2] / "fixtures" / "gemini"
KEY = "test-gemini-key-not-real"
API = "https://generativelanguage.googleapis.com/v1beta/models"
MAIN = f"{API}/gemini-2.5-flash:generateContent"
LIGHT = f"{API}/gemini-2.5-flash-lite:generateContent"
SETTINGS = GeminiSettings(
    api_key=SecretStr(KEY),
    retry_initial_s=0.001,
    max_retries=2,
    max_retry_wait_s=5.0,
    timeout_s=5.0,
)
LOOKUP = types.FunctionDeclaration(
    name="lookup_ip",
    description="Reputation of an IP address.",
    parameters_json_schema={
        "type": "object",
        "properties": {"ip": {"type": "string"}},
        "required": ["ip"],
    },
)
QUERY = types.FunctionDeclaration(
    name="query_logs",
    description="Run one read-only SELECT.",
    parameters_json_schema={
        "type": "object",
        "properties": {"sql": {"type": "string"}},
        "required": ["sql"],
    },
)


class NeedsPlan(BaseModel):
    needs_plan: bool
    reason: str


def payload(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def ok(name: str) -> httpx.Response:
    return httpx.Response(200, json=payload(name))


def err(name: str, headers: dict[str, str] | None = None) -> httpx.Response:
    body = payload(name)
    return httpx.Response(body["error"]["code"], json=body, headers=headers)


def body(route: respx.Route, i: int = 0) -> Any:
    return json.loads(route.calls[i].request.content)


def ctx() -> CallContext:
    return CallContext("inv-http", EventSink(), 1_000_000, time.monotonic() + 30)


def user(text: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=text)])]


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as mock:
        yield mock


def gateway(http: httpx.AsyncClient, **overrides: Any) -> LLMGateway:
    settings = SETTINGS.model_copy(update=overrides)
    return LLMGateway(GeminiBackend.from_settings(settings, httpx_async_client=http), settings)


async def test_function_call_round_trip(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    route = router.post(MAIN).mock(side_effect=[ok("function_call.json"), ok("text_answer.json")])
    gw = gateway(http)
    c = ctx()
    system = "socbot stage: step s1\nCheck the IP."
    contents = user("Is 185.220.101.42 malicious?")
    kwargs: dict[str, Any] = {
        "tools": [LOOKUP, QUERY],
        "allowed": ["lookup_ip"],
        "tool_mode": "ANY",
    }

    turn = await gw.generate(c, stage="step s1", system=system, contents=contents, **kwargs)
    assert [(f.name, f.args) for f in turn.function_calls] == [
        ("lookup_ip", {"ip": "185.220.101.42"})
    ]
    contents += [
        turn.content,
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(
                    name="lookup_ip", response={"result": {"tor_exit": True}}
                )
            ],
        ),
    ]
    answer = await gw.generate(c, stage="step s1", system=system, contents=contents, **kwargs)
    assert answer.text.startswith("185.220.101.42 is a Tor exit node")
    assert answer.function_calls == []

    first, second = body(route, 0), body(route, 1)
    request = route.calls[0].request
    assert request.headers["x-goog-api-key"] == KEY
    assert first["systemInstruction"]["parts"][0]["text"] == system
    assert first["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup_ip"]}
    }
    names = [d["name"] for d in first["tools"][0]["functionDeclarations"]]
    assert names == ["lookup_ip", "query_logs"]
    assert "automatic" not in json.dumps(first).lower()  # AFC is client-side and off
    assert first["generationConfig"]["temperature"] == SETTINGS.temperature
    # The model turn goes back verbatim, thought signature included.
    sent_back = second["contents"][1]
    fixture_part = payload("function_call.json")["candidates"][0]["content"]["parts"][0]
    assert sent_back["role"] == "model"
    assert sent_back["parts"][0]["functionCall"] == fixture_part["functionCall"]
    assert sent_back["parts"][0]["thoughtSignature"] == fixture_part["thoughtSignature"]
    assert second["contents"][2]["parts"][0]["functionResponse"] == {
        "name": "lookup_ip",
        "response": {"result": {"tor_exit": True}},
    }


async def test_parallel_function_calls(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    route = router.post(MAIN).mock(side_effect=[ok("parallel_calls.json"), ok("text_answer.json")])
    gw = gateway(http)
    c = ctx()
    contents = user("Investigate 185.220.101.42")
    system = "socbot stage: step s1"
    turn = await gw.generate(
        c, stage="step s1", system=system, contents=contents, tools=[LOOKUP, QUERY]
    )
    assert [f.name for f in turn.function_calls] == ["lookup_ip", "query_logs"]
    replies = [
        types.Part.from_function_response(name=f.name or "", response={"result": i})
        for i, f in enumerate(turn.function_calls)
    ]
    contents += [turn.content, types.Content(role="user", parts=replies)]
    await gw.generate(c, stage="step s1", system=system, contents=contents, tools=[LOOKUP, QUERY])
    sent = body(route, 1)["contents"]
    assert [p["functionCall"]["name"] for p in sent[1]["parts"]] == ["lookup_ip", "query_logs"]
    assert [p["functionResponse"]["name"] for p in sent[2]["parts"]] == [
        "lookup_ip",
        "query_logs",
    ]
    assert body(route, 0)["toolConfig"]["functionCallingConfig"] == {"mode": "AUTO"}


async def test_structured_output_on_the_light_model(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(LIGHT).mock(return_value=ok("structured.json"))
    out = await gateway(http).generate_structured(
        ctx(),
        stage="classifier",
        system="socbot stage: classifier",
        contents=user("GuardDuty alert ..."),
        schema=NeedsPlan,
        light=True,
        thinking=False,
    )
    assert out.needs_plan is True
    assert out.reason.startswith("The message is a GuardDuty alert")
    config = body(route)["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == NeedsPlan.model_json_schema()
    thinking = config["thinkingConfig"]
    assert thinking.get("thinkingBudget", thinking.get("thinking_budget")) == 0
    assert "tools" not in body(route)


async def test_usage_is_recorded(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    router.post(MAIN).mock(return_value=ok("text_answer.json"))
    c = ctx()
    await gateway(http).generate(
        c, stage="direct", system="socbot stage: direct", contents=user("q")
    )
    stage = c.usage.stages["direct"]
    assert (stage.calls, stage.prompt_tokens, stage.output_tokens) == (1, 2301, 21)
    assert (stage.thinking_tokens, stage.cached_tokens) == (95, 1024)
    assert c.usage.total_tokens == 2301 + 21 + 95
    assert isinstance(c.sink, EventSink)
    (event,) = c.sink.events
    assert isinstance(event, LLMCalled)
    assert event.model == "gemini-2.5-flash"
    assert event.finish_reason == "STOP"
    assert event.cached_tokens == 1024


async def test_429_then_200_is_retried(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    route = router.post(MAIN).mock(
        side_effect=[err("error_429_short.json"), ok("text_answer.json")]
    )
    turn = await gateway(http).generate(
        ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
    )
    assert turn.text
    assert route.call_count == 2


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(lambda: err("error_503.json"), id="503"),
        pytest.param(lambda: err("error_500.json", {"Retry-After": "0"}), id="500-retry-after"),
        pytest.param(lambda: httpx.Response(408, text="Request Timeout"), id="408-plain"),
        pytest.param(lambda: httpx.ConnectError("connection refused"), id="connect-error"),
    ],
)
async def test_transient_failures_are_retried(
    http: httpx.AsyncClient, router: respx.MockRouter, failure: Any
) -> None:
    route = router.post(MAIN).mock(side_effect=[failure(), ok("text_answer.json")])
    backend = GeminiBackend.from_settings(SETTINGS, httpx_async_client=http)
    response = await backend.generate_content(
        model="gemini-2.5-flash", contents=user("q"), config=types.GenerateContentConfig()
    )
    assert response.text
    assert route.call_count == 2


async def test_429_asking_for_an_hour_fails_fast(
    http: httpx.AsyncClient, router: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    route = router.post(MAIN).mock(return_value=err("error_429_quota.json"))
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="3600s") as info:
        await gateway(http, max_retry_wait_s=30.0).generate(
            ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
        )
    assert time.monotonic() - started < 10  # no wait: the 30 s retry wait would show
    assert route.call_count == 1
    assert KEY not in str(info.value) and KEY not in caplog.text


async def test_retry_after_header_is_honoured_when_too_long(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(MAIN).mock(return_value=err("error_503.json", {"Retry-After": "120"}))
    with pytest.raises(LLMUnavailable, match="120s"):
        await GeminiBackend.from_settings(SETTINGS, httpx_async_client=http).generate_content(
            model="gemini-2.5-flash", contents=user("q"), config=types.GenerateContentConfig()
        )
    assert route.call_count == 1


async def test_500_exhausted_is_unavailable(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(MAIN).mock(return_value=err("error_500.json"))
    with pytest.raises(LLMUnavailable, match="after 3 attempts"):
        await gateway(http).generate(
            ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
        )
    assert route.call_count == 3  # our retries only: the SDK does not multiply them


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("error_400_api_key.json", "Gemini rejected the API key"),
        ("error_403_permission.json", "refused access"),
        ("error_404_model.json", "does not know the model"),
    ],
)
async def test_rejections_fail_at_once_with_one_sentence(
    http: httpx.AsyncClient,
    router: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
    fixture: str,
    message: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    route = router.post(MAIN).mock(return_value=err(fixture))
    with pytest.raises(LLMUnavailable, match=message) as info:
        await gateway(http).generate(
            ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
        )
    assert route.call_count == 1
    assert "\n" not in str(info.value)
    assert KEY not in str(info.value) and KEY not in caplog.text


async def test_non_json_answer_is_unavailable(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(MAIN).mock(return_value=httpx.Response(200, text="<html>login</html>"))
    with pytest.raises(LLMUnavailable, match="not JSON"):
        await gateway(http).generate(
            ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
        )
    assert route.call_count == 1


async def test_per_call_timeout(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    started_calls: list[float] = []

    async def slow(request: httpx.Request) -> httpx.Response:
        started_calls.append(time.monotonic())
        await asyncio.sleep(60.0)
        return ok("text_answer.json")

    router.post(MAIN).mock(side_effect=slow)
    backend = GeminiBackend.from_settings(
        SETTINGS.model_copy(update={"timeout_s": 0.05, "max_retries": 1}),
        httpx_async_client=http,
    )
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="TimeoutError"):
        await backend.generate_content(
            model="gemini-2.5-flash", contents=user("q"), config=types.GenerateContentConfig()
        )
    assert time.monotonic() - started < 10.0  # both cut at 0.05 s, not the server's 60 s
    assert len(started_calls) == 2  # one timed-out attempt, one retry


async def test_max_tokens_without_output(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    route = router.post(MAIN).mock(return_value=ok("max_tokens_empty.json"))
    c = ctx()
    with pytest.raises(LLMOutputInvalid, match="token limit"):
        await gateway(http).generate(
            c, stage="direct", system="socbot stage: direct", contents=user("q")
        )
    assert route.call_count == 1
    assert c.usage.stages["direct"].thinking_tokens == 8191


async def test_structured_max_tokens_then_repaired(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(MAIN).mock(side_effect=[ok("max_tokens_empty.json"), ok("structured.json")])
    out = await gateway(http).generate_structured(
        ctx(), stage="planner", system="socbot stage: planner", contents=user("q"), schema=NeedsPlan
    )
    assert out.needs_plan is True
    repair = body(route, 1)["contents"]
    assert len(repair) == 2  # no empty model turn is sent back
    assert "token limit" in repair[-1]["parts"][0]["text"]


async def test_malformed_function_call_is_retried(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(MAIN).mock(
        side_effect=[ok("malformed_function_call.json"), ok("function_call.json")]
    )
    turn = await gateway(http).generate(
        ctx(), stage="step s1", system="socbot stage: step s1", contents=user("q"), tools=[LOOKUP]
    )
    assert [f.name for f in turn.function_calls] == ["lookup_ip"]
    assert route.call_count == 2
    assert body(route, 0) == body(route, 1)


async def test_malformed_json_is_repaired_once(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(LIGHT).mock(
        side_effect=[ok("structured_invalid.json"), ok("structured.json")]
    )
    out = await gateway(http).generate_structured(
        ctx(),
        stage="classifier",
        system="socbot stage: classifier",
        contents=user("q"),
        schema=NeedsPlan,
        light=True,
    )
    assert out.needs_plan is True
    sent = body(route, 1)["contents"]
    assert sent[1] == {"role": "model", "parts": [{"text": '{\n  "needs_plan": "yes"\n}'}]}
    assert sent[2]["role"] == "user"
    assert "reason" in sent[2]["parts"][0]["text"]


async def test_malformed_json_twice_is_invalid(
    http: httpx.AsyncClient, router: respx.MockRouter
) -> None:
    route = router.post(MAIN).mock(return_value=ok("structured_invalid.json"))
    with pytest.raises(LLMOutputInvalid):
        await gateway(http).generate_structured(
            ctx(),
            stage="reflector",
            system="socbot stage: reflector",
            contents=user("q"),
            schema=NeedsPlan,
        )
    assert route.call_count == 2


async def test_safety_stop_is_refused(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    router.post(MAIN).mock(return_value=ok("safety.json"))
    with pytest.raises(LLMRefused, match="SAFETY"):
        await gateway(http).generate(
            ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
        )


async def test_base_url_override(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    route = router.post(
        "https://gemini-proxy.corp.example/v1beta/models/gemini-2.5-flash:generateContent"
    ).mock(return_value=ok("text_answer.json"))
    await gateway(http, base_url="https://gemini-proxy.corp.example/").generate(
        ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
    )
    assert route.call_count == 1


async def test_vertex_express_mode_url(http: httpx.AsyncClient, router: respx.MockRouter) -> None:
    route = router.post(
        "https://aiplatform.googleapis.com/v1beta1/publishers/google/models/"
        "gemini-2.5-flash:generateContent"
    ).mock(return_value=ok("text_answer.json"))
    await gateway(http, use_vertexai=True).generate(
        ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
    )
    assert route.calls[0].request.headers["x-goog-api-key"] == KEY


async def test_vertex_project_with_application_default_credentials(
    http: httpx.AsyncClient, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = google.oauth2.credentials.Credentials(token="ya29.test-token")  # type: ignore[no-untyped-call]
    monkeypatch.setattr(google.auth, "default", lambda **_: (token, "acme-soc"))
    route = router.post(
        "https://europe-west1-aiplatform.googleapis.com/v1beta1/projects/acme-soc/locations/"
        "europe-west1/publishers/google/models/gemini-2.5-flash:generateContent"
    ).mock(return_value=ok("text_answer.json"))
    await gateway(
        http, api_key=None, use_vertexai=True, project="acme-soc", location="europe-west1"
    ).generate(ctx(), stage="direct", system="socbot stage: direct", contents=user("q"))
    assert route.calls[0].request.headers["authorization"] == "Bearer ya29.test-token"


async def test_vertex_without_credentials_is_unavailable(
    http: httpx.AsyncClient, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_credentials(**_: Any) -> Any:
        raise google.auth.exceptions.DefaultCredentialsError("no ADC")  # type: ignore[no-untyped-call]

    monkeypatch.setattr(google.auth, "default", no_credentials)
    with pytest.raises(LLMUnavailable, match="application-default login"):
        await gateway(http, api_key=None, use_vertexai=True, project="acme-soc").generate(
            ctx(), stage="direct", system="socbot stage: direct", contents=user("q")
        )


async def test_injected_async_client_carries_the_traffic() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return ok("text_answer.json")

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        backend = GeminiBackend.from_settings(SETTINGS, httpx_async_client=client)
        response = await backend.generate_content(
            model="gemini-2.5-flash", contents=user("q"), config=types.GenerateContentConfig()
        )
        await backend.aclose()
        assert not client.is_closed  # an injected client belongs to the caller
    assert response.text
    assert [str(r.url) for r in seen] == [MAIN]


async def test_owned_client_is_used_and_closed(router: respx.MockRouter) -> None:
    route = router.post(MAIN).mock(return_value=ok("text_answer.json"))
    backend = GeminiBackend.from_settings(SETTINGS)
    await backend.generate_content(
        model="gemini-2.5-flash", contents=user("q"), config=types.GenerateContentConfig()
    )
    assert route.call_count == 1  # respx sees it: the traffic went through httpx
    await backend.aclose()
    assert backend._owned_http is not None and backend._owned_http.is_closed


async def test_one_tls_context_serves_httpx_and_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CA bundle is loaded once (~30 ms of start-up each), not by every client."""
    made: list[ssl.SSLContext] = []
    create = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(create(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(ssl, "create_default_context", counted)
    tls_context.cache_clear()
    try:
        async with httpx.AsyncClient(verify=tls_context()) as client:
            backend = GeminiBackend.from_settings(SETTINGS, httpx_async_client=client)
            owned = GeminiBackend.from_settings(SETTINGS)
            await owned.aclose()
        assert len(made) == 1  # not one more for the SDK's sync httpx client and websockets
        (context,) = made
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert context.cert_store_stats()["x509_ca"] > 50  # certifi's bundle
        assert backend.client._api_client._websocket_ssl_ctx["ssl"] is context
    finally:
        tls_context.cache_clear()


def test_vertex_ai_keeps_the_sdks_own_tls_for_client_certificates() -> None:
    backend = GeminiBackend.from_settings(SETTINGS.model_copy(update={"use_vertexai": True}))
    assert backend.client._api_client._websocket_ssl_ctx["ssl"] is not tls_context()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (GeminiSettings(), "GEMINI_API_KEY"),
        (GeminiSettings(use_vertexai=True), "GOOGLE_CLOUD_PROJECT"),
    ],
)
def test_missing_credentials_are_a_config_error(settings: GeminiSettings, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GeminiBackend.from_settings(settings)
