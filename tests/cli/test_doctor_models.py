"""``socbot doctor``'s model checks: one 1-token call per configured provider, through
the real SDK clients on the wire fakes (Gemini REST, OpenAI Chat Completions)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import respx
from pydantic import SecretStr

from cli.doctor.models import model_checks
from config.settings import fixed_settings
from tests.fakes import openai_api as oa
from tests.fakes.gemini_rest import GeminiREST


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as mock:
        yield mock


async def test_each_configured_provider_answers_one_token(
    router: respx.MockRouter, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    gemini = GeminiREST(router, text="O")
    answer = oa.text("O", prompt_tokens=9, completion_tokens=1)
    api = oa.OpenAIAPI(respx.MockRouter(assert_all_called=False), {"": [answer]})
    cfg = fixed_settings(
        gemini={"api_key": SecretStr("test-gemini-key-not-real"), "max_retries": 0},
        models={"main": "openai:gpt-4.1-mini", "light": "gemini-2.5-flash-lite"},
    )
    factories = {"openai": lambda: oa.openai_backend(api, cfg)}
    checks = await model_checks(cfg, http, factories=factories)

    assert [(c.name, c.status) for c in checks] == [("openai", "ok"), ("gemini", "ok")]
    assert checks[0].detail.startswith("openai:gpt-4.1-mini answered a 1-token call (9 prompt")
    assert "at list prices" in checks[0].detail
    [body] = api.requests
    assert body["max_completion_tokens"] == 1 and body["model"] == "gpt-4.1-mini"
    assert "gemini-2.5-flash-lite" in checks[1].detail and len(gemini.generated) == 1


async def test_a_local_model_without_a_price_says_so_and_a_refusal_fails(
    http: httpx.AsyncClient,
) -> None:
    base = "http://127.0.0.1:8000/v1"
    script = {"": [oa.text("O"), oa.error(404, "The model `qwen3` does not exist.")]}
    api = oa.OpenAIAPI(respx.MockRouter(assert_all_called=False), script, base_url=base)
    cfg = fixed_settings(
        models={"main": "openai:qwen3:32b", "light": "openai:qwen3:32b"},
        openai={"base_url": base},
    )
    factories = {"openai": lambda: oa.openai_backend(api, cfg)}
    [check] = await model_checks(cfg, http, factories=factories)
    assert check.status == "ok" and "cost unknown" in check.detail
    [check] = await model_checks(cfg, http, factories=factories)
    assert check.status == "fail" and "does not know the model 'qwen3:32b'" in check.detail
