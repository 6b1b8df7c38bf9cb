"""``provider:model`` names and the routing backend: a bare name is Gemini, an unknown
provider is refused when settings or a policy rule are read, each call goes to its
provider's backend (built once, on first use) with the bare name, and Gemini's own
features stay with Gemini models. Real SDK clients on wire fakes (Gemini REST, OpenAI
Chat Completions)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
import respx
from google.genai import types
from pydantic import SecretStr, ValidationError

from agent.errors import LLMUnavailable
from agent.model.gateway import CallContext, LLMGateway
from agent.model.providers import RoutingBackend, configured_models
from agent.model.thinking import thinking_config
from alerts.policy.load import Loaded, parse_rules
from config.model_names import canonical, split_model
from config.settings import DEFAULT_PRICES, ConfigError, fixed_settings
from core.events import LLMCalled
from store.investigations.usage import UsageRow, summarise
from tests.fakes import openai_api as oa
from tests.fakes.gemini_rest import GeminiREST
from tests.fakes.sink import EventSink


@pytest.mark.parametrize(
    ("name", "split"),
    [
        ("gemini-2.5-flash", ("gemini", "gemini-2.5-flash")),
        ("gemini:gemini-2.5-flash", ("gemini", "gemini-2.5-flash")),
        ("openai:gpt-5-mini", ("openai", "gpt-5-mini")),
        ("openai:qwen3:32b", ("openai", "qwen3:32b")),  # Ollama's tag survives
        ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
    ],
)
def test_names_split_into_provider_and_model(name: str, split: tuple[str, str]) -> None:
    assert split_model(name) == split


@pytest.mark.parametrize("name", ["opnai:gpt-5", "qwen3:32b", "openai:", "vertex:gemini-2.5-pro"])
def test_an_unknown_provider_or_no_model_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match=r"provider|names no model"):
        split_model(name)


def test_gemini_stays_bare_and_others_keep_their_provider() -> None:
    assert canonical("gemini:gemini-2.5-pro") == "gemini-2.5-pro"
    assert canonical("openai:gpt-5") == "openai:gpt-5"


def test_models_default_to_the_gemini_settings_of_old() -> None:
    cfg = fixed_settings(gemini={"model": "gemini-2.5-pro"})
    assert (cfg.models.main, cfg.models.light) == ("gemini-2.5-pro", "gemini-2.5-flash-lite")
    cfg = fixed_settings(models={"main": "gemini:gemini-3-flash", "light": "openai:gpt-5-nano"})
    assert configured_models(cfg) == ["gemini-3-flash", "openai:gpt-5-nano"]


def test_an_unknown_provider_in_settings_fails_at_start_up() -> None:
    with pytest.raises(ValidationError, match="known providers: gemini, openai, anthropic"):
        fixed_settings(models={"main": "azure:gpt-5"})


def test_a_policy_rule_may_name_a_priced_model_of_any_provider() -> None:
    rule = 'id = "cheap"\naction = "investigate"\nmode = "direct"\nmodel = "{model}"'
    out = Loaded()
    parse_rules(
        f"[[rule]]\n{rule.format(model='openai:gpt-5-nano')}\n",
        "p.toml",
        out,
        set(),
        DEFAULT_PRICES,
    )
    assert [r.rule.model for r in out.rules] == ["openai:gpt-5-nano"] and out.errors == []
    for model, problem in [
        ("opnai:gpt-5-nano", "known providers"),
        ("openai:qwen3:32b", "no price"),
    ]:
        out = Loaded()
        parse_rules(f"[[rule]]\n{rule.format(model=model)}\n", "p.toml", out, set(), DEFAULT_PRICES)
        assert out.rules == [] and problem in out.errors[0]


def test_thinking_levels_apply_to_gemini_3_and_other_providers_only() -> None:
    levels = {"step": "low"}
    assert thinking_config("gemini-2.5-flash", "step s1", thinking=True, levels=levels) is None
    for model in ("gemini-3-flash-preview", "openai:gpt-5-mini"):
        config = thinking_config(model, "step s1", thinking=True, levels=levels)
        assert config is not None and config.thinking_level == types.ThinkingLevel.LOW
    least = thinking_config("openai:gpt-5-mini", "critic", thinking=False, levels=levels)
    assert least is not None and least.thinking_level == types.ThinkingLevel.MINIMAL
    least = thinking_config("gemini-2.5-flash", "critic", thinking=False, levels=levels)
    assert least is not None and least.thinking_budget == 0


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as mock:
        yield mock


async def test_one_gateway_calls_each_model_on_its_provider(
    router: respx.MockRouter, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    gemini = GeminiREST(router)
    api = oa.OpenAIAPI(respx.MockRouter(assert_all_called=False), {"direct": [oa.text("ok")] * 2})
    cfg = fixed_settings(
        gemini={"api_key": SecretStr("test-gemini-key-not-real"), "max_retries": 0},
        models={"main": "openai:gpt-5-mini", "light": "gemini-2.5-flash-lite"},
    )
    built: list[str] = []

    def openai_backend() -> object:
        built.append("openai")
        return oa.openai_backend(api, cfg)

    routing = RoutingBackend(cfg, http=http, factories={"openai": openai_backend})
    gw = LLMGateway(routing, cfg.gemini, cfg.models)
    sink = EventSink()
    ctx = CallContext("inv-mixed", sink, 100_000, time.monotonic() + 30)
    user = [types.Content(role="user", parts=[types.Part(text="hi")])]
    system = "socbot stage: direct"
    for light in (False, True, False):
        turn = await gw.generate(ctx, stage="direct", system=system, contents=user, light=light)
        assert turn.text == "ok"
    await routing.aclose()

    assert built == ["openai"]  # once, on first use
    assert [b["model"] for b in api.requests] == ["gpt-5-mini", "gpt-5-mini"]
    assert [str(c.request.url).rsplit("/", 1)[-1] for c in gemini.generate.calls] == [
        "gemini-2.5-flash-lite:generateContent"
    ]
    by_model = ctx.usage.as_dict()["by_model"]
    assert {m: u["calls"] for m, u in by_model.items()} == {  # type: ignore[attr-defined]
        "openai:gpt-5-mini": 2,
        "gemini-2.5-flash-lite": 1,
    }
    row = UsageRow("inv-mixed", datetime.now(UTC), "cli:1", "question", ctx.usage.as_dict())
    per_model = summarise([row], "model")
    assert per_model["openai:gpt-5-mini"].usage.cost_usd > 0
    assert per_model["gemini-2.5-flash-lite"].usage.calls == 1
    called = [e.model for e in sink.events if isinstance(e, LLMCalled)]
    assert called == [
        "openai:gpt-5-mini",
        "gemini-2.5-flash-lite",
        "openai:gpt-5-mini",
    ]


async def test_an_anthropic_model_without_its_backend_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agent.model.anthropic_backend", None)  # not importable
    cfg = fixed_settings(models={"main": "anthropic:claude-sonnet-4-5"})
    routing = RoutingBackend(cfg)
    with pytest.raises(ConfigError, match="anthropic: model is configured but this socbot build"):
        routing.prepare(configured_models(cfg))
    with pytest.raises(LLMUnavailable, match="no Anthropic backend"):
        await routing.generate_content(
            model="anthropic:claude-haiku-4-5", contents=[], config=types.GenerateContentConfig()
        )


def test_an_openai_model_without_the_sdk_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agent.model.openai_backend", None)  # as if not installed
    cfg = fixed_settings(models={"main": "openai:gpt-5-mini"})
    with pytest.raises(ConfigError, match=r"install socbot\[openai\]"):
        RoutingBackend(cfg).prepare(configured_models(cfg))
