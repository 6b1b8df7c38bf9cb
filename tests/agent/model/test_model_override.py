"""An investigation on another model than ``gemini.model`` (a policy rule's ``model``),
through the real google-genai client on the Gemini REST API (``tests/fakes/gemini_rest.py``
on respx: the network edge only).

The gateway sends the investigation's calls to the overriding model, light stages still
to ``gemini.light_model``; usage counts the calls per model, and the cost is the
overriding model's list price.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
import respx
from google.genai import types
from pydantic import SecretStr

from agent.model.gateway import CallContext, LLMGateway
from agent.model.gemini import GeminiBackend
from agent.model.pricing import call_cost, price_for
from config.settings import DEFAULT_PRICES, GeminiSettings
from core.events import LLMCalled
from tests.fakes.gemini_rest import GeminiREST
from tests.fakes.sink import EventSink

SETTINGS = GeminiSettings(
    api_key=SecretStr("test-gemini-key-not-real"),
    max_retries=0,
    timeout_s=5.0,
    model="gemini-2.5-pro",
    light_model="gemini-3-flash",
)
CHEAP = "gemini-2.5-flash-lite"


@pytest.fixture
def gemini() -> Iterator[GeminiREST]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield GeminiREST(router)


def requested_models(gemini: GeminiREST) -> list[str]:
    return [str(call.request.url).rsplit("/", 1)[-1] for call in gemini.generate.calls]


async def ask(gw: LLMGateway, ctx: CallContext, *, light: bool = False) -> None:
    contents = [types.Content(role="user", parts=[types.Part(text="Is 192.0.2.7 known?")])]
    turn = await gw.generate(
        ctx, stage="direct", system="socbot stage: direct", contents=contents, light=light
    )
    assert turn.text == "ok"


async def test_the_overriding_model_answers_and_is_accounted(
    http: httpx.AsyncClient, gemini: GeminiREST
) -> None:
    gw = LLMGateway(GeminiBackend.from_settings(SETTINGS, httpx_async_client=http), SETTINGS)
    sink = EventSink()
    ctx = CallContext("inv-cheap", sink, 1_000_000, time.monotonic() + 30, model=CHEAP)
    await ask(gw, ctx)
    await ask(gw, ctx)
    await ask(gw, ctx, light=True)

    assert requested_models(gemini) == [
        f"{CHEAP}:generateContent",
        f"{CHEAP}:generateContent",
        "gemini-3-flash:generateContent",  # a light stage keeps the light model
    ]
    assert ctx.usage.models == {CHEAP: 2, "gemini-3-flash": 1}
    assert ctx.usage.as_dict()["models"] == {CHEAP: 2, "gemini-3-flash": 1}
    called = [e for e in sink.events if isinstance(e, LLMCalled)]
    assert [e.model for e in called] == [CHEAP, CHEAP, "gemini-3-flash"]
    price = price_for(DEFAULT_PRICES, CHEAP)
    assert price is not None
    first = called[0]
    expected = call_cost(
        price,
        prompt_tokens=first.prompt_tokens,
        cached_tokens=0,
        output_tokens=first.output_tokens,
        thinking_tokens=0,
    )
    assert first.cost_usd == pytest.approx(expected)
    pro = price_for(DEFAULT_PRICES, "gemini-2.5-pro")
    assert pro is not None and first.cost_usd is not None
    assert first.cost_usd < call_cost(  # what gemini.model would have cost
        pro,
        prompt_tokens=first.prompt_tokens,
        cached_tokens=0,
        output_tokens=first.output_tokens,
        thinking_tokens=0,
    )


async def test_without_an_override_the_configured_model_answers(
    http: httpx.AsyncClient, gemini: GeminiREST
) -> None:
    gw = LLMGateway(GeminiBackend.from_settings(SETTINGS, httpx_async_client=http), SETTINGS)
    ctx = CallContext("inv-plain", EventSink(), 1_000_000, time.monotonic() + 30)
    await ask(gw, ctx)
    assert requested_models(gemini) == ["gemini-2.5-pro:generateContent"]
    assert ctx.usage.models == {"gemini-2.5-pro": 1}
