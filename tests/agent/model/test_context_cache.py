"""Explicit context caching (``agent.model.context_cache``) with the real google-genai client.

The Gemini REST API is ``tests/fakes/gemini_rest.py`` on respx (caches kept by
``bench.cached_contents``); the gateway, ``GeminiBackend`` and google-genai run unchanged.
``MANUAL`` is an invented instruction long enough to be cached (~3,400 tokens); the
free-tier refusal's wording is as users report it (invented here, not a recorded body).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from google.genai import types
from pydantic import SecretStr

from agent.model.context_cache import ContextCache
from agent.model.gateway import CallContext, LLMGateway
from agent.model.gemini import GeminiBackend
from agent.model.pricing import call_cost, price_for, storage_cost_per_hour
from bench.cached_contents import RestError
from config.settings import DEFAULT_PRICES, ContextCacheSettings, GeminiSettings
from core.events import LLMCalled
from tests.fakes.gemini_rest import GeminiREST
from tests.fakes.sink import EventSink

MANUAL = "socbot manual\n" + "".join(
    f"Rule {i}: weigh each finding against the tool results that support it.\n" for i in range(200)
)
SHORT = "socbot stage: classifier\nDecide whether the message needs a plan."
FREE_TIER = RestError(
    429,
    "RESOURCE_EXHAUSTED",
    "TotalCachedContentStorageTokensPerModelFreeTier limit exceeded for model "
    "gemini-2.5-flash: limit=0, requested=3400",
)
LOOKUP = types.FunctionDeclaration(
    name="lookup_ip",
    description="Reputation of an IP address.",
    parameters_json_schema={"type": "object", "properties": {"ip": {"type": "string"}}},
)


class Clock:
    """Wall-clock seconds plus ``ahead``, which a test moves forward (shared by socbot and
    the fake server)."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gemini(clock: Clock) -> Iterator[GeminiREST]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        fake = GeminiREST(router)
        fake.store.clock = clock
        yield fake


def settings(**cache: Any) -> GeminiSettings:
    return GeminiSettings(
        api_key=SecretStr("test-gemini-key-not-real"),
        max_retries=0,
        timeout_s=5.0,
        context_cache=ContextCacheSettings(**{"enabled": True, **cache}),
    )


def backend(http: httpx.AsyncClient, clock: Clock, config: GeminiSettings) -> GeminiBackend:
    plain = GeminiBackend.from_settings(config, httpx_async_client=http)
    if plain.cache is None:
        return plain
    cache = ContextCache(
        plain.client.aio.caches, config.context_cache, config.prices, timeout_s=5.0, clock=clock
    )
    return GeminiBackend(plain.client, config, cache=cache)


def gateway(http: httpx.AsyncClient, clock: Clock, **cache: Any) -> LLMGateway:
    config = settings(**cache)
    return LLMGateway(backend(http, clock, config), config)


def ctx() -> CallContext:
    return CallContext("inv-cache", EventSink(), 1_000_000, time.monotonic() + 30)


def calls(c: CallContext) -> list[LLMCalled]:
    assert isinstance(c.sink, EventSink)
    return c.sink.llm_calls()


async def ask(gw: LLMGateway, c: CallContext, text: str = "alert", **kwargs: Any) -> None:
    contents = [types.Content(role="user", parts=[types.Part(text=text)])]
    kwargs.setdefault("system", MANUAL)
    turn = await gw.generate(c, stage="planner", contents=contents, **kwargs)
    assert turn.text == "ok"


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agent.model.context_cache"]


async def test_concurrent_first_calls_create_one_cache_that_later_calls_reuse(
    http: httpx.AsyncClient,
    gemini: GeminiREST,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gw = gateway(http, clock)
    c = ctx()
    with caplog.at_level(logging.INFO, logger="agent.model.context_cache"):
        await asyncio.gather(*(ask(gw, c, f"alert {i}") for i in range(5)))
        await ask(gw, c, "the reflector's turn")

    assert gemini.store.calls == [("create", "cachedContents/fake1")]
    created = gemini.store.created[0]
    assert created["model"] == "models/gemini-2.5-flash"
    assert created["systemInstruction"]["parts"][0]["text"] == MANUAL
    assert created["ttl"] == "3600s"
    for body in gemini.generated:
        assert body["cachedContent"] == "cachedContents/fake1"
        assert "systemInstruction" not in body
    tokens = gemini.store.caches["cachedContents/fake1"].tokens
    flash = price_for(DEFAULT_PRICES, "gemini-2.5-flash")
    assert flash is not None
    for event in calls(c):  # usage: the cache's tokens reported, billed at the cached price
        assert event.cached_tokens == tokens < event.prompt_tokens
        expected = call_cost(
            flash,
            prompt_tokens=event.prompt_tokens,
            cached_tokens=tokens,
            output_tokens=event.output_tokens,
            thinking_tokens=0,
        )
        assert event.cost_usd == pytest.approx(expected, abs=1e-8)
    assert len(calls(c)) == 6
    hourly = storage_cost_per_hour(flash, tokens)
    assert hourly is not None
    assert messages(caplog) == [
        f"context cache cachedContents/fake1 created for gemini-2.5-flash: {tokens} tokens, "
        f"expires in 3600s, storage ${hourly:.4f} per hour"
    ]


async def test_one_cache_per_model_and_text(
    http: httpx.AsyncClient, gemini: GeminiREST, clock: Clock
) -> None:
    gw = gateway(http, clock, light_model=True)
    c = ctx()
    await ask(gw, c)
    await ask(gw, c, light=True)  # the critic on the light model
    await ask(gw, c, system=MANUAL + "Rule 201: a changed manual is another cache.\n")
    await ask(gw, c, light=True)
    models = [c.model for c in gemini.store.caches.values()]
    flash, lite = "models/gemini-2.5-flash", "models/gemini-2.5-flash-lite"
    assert models == [flash, lite, flash]
    assert [body["cachedContent"] for body in gemini.generated] == [
        "cachedContents/fake1",
        "cachedContents/fake2",
        "cachedContents/fake3",
        "cachedContents/fake2",
    ]


async def test_short_instructions_calls_with_tools_and_the_light_model_are_sent_inline(
    http: httpx.AsyncClient, gemini: GeminiREST, clock: Clock
) -> None:
    gw = gateway(http, clock)
    c = ctx()
    await ask(gw, c, system=SHORT)  # under the model's minimum
    await ask(gw, c, tools=[LOOKUP])  # a request naming a cache may not offer tools
    await ask(gw, c, light=True)  # gemini.context_cache.light_model is off by default
    assert gemini.store.calls == []
    texts = [b["systemInstruction"]["parts"][0]["text"] for b in gemini.generated]
    assert texts == [SHORT, MANUAL, MANUAL]
    assert "cachedContent" not in str(gemini.generated)
    assert gemini.generated[1]["tools"][0]["functionDeclarations"][0]["name"] == "lookup_ip"


async def test_setting_off_makes_no_cached_contents_call(
    http: httpx.AsyncClient, gemini: GeminiREST, clock: Clock
) -> None:
    config = settings(enabled=False)
    model = backend(http, clock, config)
    assert model.cache is None
    gw = LLMGateway(model, config)
    c = ctx()
    await asyncio.gather(*(ask(gw, c, f"alert {i}") for i in range(3)))
    await model.aclose()
    assert not gemini.caches.called
    assert all(b["systemInstruction"]["parts"][0]["text"] == MANUAL for b in gemini.generated)


async def test_a_cache_near_expiry_is_extended_and_an_expired_one_replaced(
    http: httpx.AsyncClient, gemini: GeminiREST, clock: Clock
) -> None:
    gw = gateway(http, clock, ttl_s=3600, refresh_before_s=120)
    c = ctx()
    await ask(gw, c)
    clock.ahead += 3600 - 60  # a minute left: this call extends it
    await ask(gw, c)
    assert gemini.store.calls == [
        ("create", "cachedContents/fake1"),
        ("patch", "cachedContents/fake1"),
    ]
    expires = gemini.store.caches["cachedContents/fake1"].expires
    assert expires == pytest.approx(clock() + 3600, abs=5)
    clock.ahead += 3600 + 1  # idle for longer than the TTL: gone, a new one is made
    await ask(gw, c)
    assert gemini.store.calls[2:] == [("create", "cachedContents/fake2")]
    assert [b["cachedContent"] for b in gemini.generated] == [
        "cachedContents/fake1",
        "cachedContents/fake1",
        "cachedContents/fake2",
    ]


async def test_a_cache_that_is_gone_is_dropped_and_the_call_resent_inline_once(
    http: httpx.AsyncClient, gemini: GeminiREST, clock: Clock
) -> None:
    gw = gateway(http, clock)
    c = ctx()
    await ask(gw, c)
    clock.ahead += 600
    gemini.store.caches.clear()  # evicted or deleted on the server's side
    await ask(gw, c)
    first, retry = gemini.generated[1], gemini.generated[2]
    assert first["cachedContent"] == "cachedContents/fake1"
    assert "cachedContent" not in retry
    assert retry["systemInstruction"]["parts"][0]["text"] == MANUAL
    assert retry["contents"] == first["contents"]
    assert len(calls(c)) == 2  # one call recorded, not two
    assert calls(c)[1].cached_tokens == 0
    await ask(gw, c)  # the next call makes a new cache
    assert gemini.generated[3]["cachedContent"] == "cachedContents/fake2"


async def test_a_cache_gone_right_after_creation_holds_caching_off(
    http: httpx.AsyncClient,
    gemini: GeminiREST,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gw = gateway(http, clock, retry_after_s=600)
    c = ctx()
    await ask(gw, c)
    gemini.store.caches.clear()
    with caplog.at_level(logging.INFO, logger="agent.model.context_cache"):
        await ask(gw, c)
        await ask(gw, c)
    assert [name for name, _ in gemini.store.calls] == ["create"]
    assert "cachedContent" not in gemini.generated[-1]
    assert len(messages(caplog)) == 1
    assert "reported gone right after it was made" in messages(caplog)[0]


async def test_a_refused_creation_sends_inline_logs_once_and_retries_later(
    http: httpx.AsyncClient,
    gemini: GeminiREST,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gemini.store.refuse = FREE_TIER
    gw = gateway(http, clock, retry_after_s=600)
    c = ctx()
    with caplog.at_level(logging.INFO, logger="agent.model.context_cache"):
        await asyncio.gather(*(ask(gw, c, f"alert {i}") for i in range(3)))
        await ask(gw, c)
    assert gemini.store.calls == [("create", "")]  # once, not per call, no 429 retry
    assert len(gemini.generated) == 4
    assert all(b["systemInstruction"]["parts"][0]["text"] == MANUAL for b in gemini.generated)
    assert messages(caplog) == [
        "context cache for gemini-2.5-flash not used (HTTP 429 RESOURCE_EXHAUSTED "
        "TotalCachedContentStorageTokensPerModelFreeTier limit exceeded for model "
        "gemini-2.5-flash: limit=0, requested=3400): sending the system instruction inline "
        "for 600s"
    ]
    assert len(calls(c)) == 4
    clock.ahead += 601
    gemini.store.refuse = None
    await ask(gw, c)
    assert gemini.generated[-1]["cachedContent"] == "cachedContents/fake1"


async def test_caches_are_deleted_at_shutdown(
    http: httpx.AsyncClient,
    gemini: GeminiREST,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = settings(light_model=True)
    model = backend(http, clock, config)
    gw = LLMGateway(model, config)
    c = ctx()
    await ask(gw, c)
    await ask(gw, c, light=True)
    assert model.cache is not None
    assert model.cache.storage_cost_per_hour() > 0
    with caplog.at_level(logging.INFO, logger="agent.model.context_cache"):
        await model.aclose()
    assert gemini.store.calls[2:] == [
        ("delete", "cachedContents/fake1"),
        ("delete", "cachedContents/fake2"),
    ]
    assert gemini.store.caches == {}
    assert messages(caplog) == ["deleted 2 context cache(s)"]
    assert model.cache.storage_cost_per_hour() == 0


async def test_a_failed_delete_at_shutdown_is_logged_not_raised(
    http: httpx.AsyncClient,
    gemini: GeminiREST,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = settings()
    model = backend(http, clock, config)
    await ask(LLMGateway(model, config), ctx())
    gemini.store.caches.clear()
    with caplog.at_level(logging.INFO, logger="agent.model.context_cache"):
        await model.aclose()
    assert messages(caplog) == [
        "context cache cachedContents/fake1 not deleted (HTTP 403 PERMISSION_DENIED "
        "CachedContent not found (or permission denied)); it expires by itself"
    ]


def test_refresh_must_come_before_expiry() -> None:
    with pytest.raises(ValueError, match="refresh_before_s must be shorter than ttl_s"):
        ContextCacheSettings(ttl_s=600, refresh_before_s=600)


@pytest.mark.parametrize(
    ("model", "per_hour"),
    [
        ("gemini-2.5-flash", 0.005),  # $1.00 per 1M tokens per hour
        ("gemini-2.5-flash-lite", 0.005),
        ("models/gemini-2.5-pro", 0.0225),  # $4.50
        ("gemini-unknown", None),
    ],
)
def test_storage_is_priced_per_hour_apart_from_calls(model: str, per_hour: float | None) -> None:
    cost = storage_cost_per_hour(price_for(DEFAULT_PRICES, model), 5000)
    assert cost == (None if per_hour is None else pytest.approx(per_hour))
