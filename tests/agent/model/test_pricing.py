"""Money per call, stage and investigation from the list prices in the settings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from google.genai import types

from agent.model.gateway import CallContext, LLMGateway
from agent.model.pricing import Pricer, call_cost, price_for
from config.settings import DEFAULT_PRICES, GeminiSettings, ModelPrice, load_settings
from core.events import LLMCalled
from tests.fakes.model import ScriptedModel, text_response
from tests.fakes.sink import EventSink

FLASH = DEFAULT_PRICES["gemini-2.5-flash"]
PRO = DEFAULT_PRICES["gemini-2.5-pro"]


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("gemini-2.5-flash", "gemini-2.5-flash"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),  # not the shorter flash prefix
        ("gemini-2.5-flash-lite-preview-09-2025", "gemini-2.5-flash-lite"),
        ("gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"),
        ("gemini-9-ultra", None),
    ],
)
def test_a_model_is_priced_by_name_or_longest_prefix(model: str, entry: str | None) -> None:
    expected = DEFAULT_PRICES[entry] if entry else None
    assert price_for(DEFAULT_PRICES, model) is expected


def test_cached_tokens_are_part_of_the_prompt_and_billed_at_the_cached_price() -> None:
    # 10k prompt tokens of which 8k cached, 500 out, 300 thinking on 2.5 Flash:
    # 2k * 0.30 + 8k * 0.03 + 500 * 2.50 + 300 * 2.50 (thinking = output) per 1M.
    cost = call_cost(
        FLASH, prompt_tokens=10_000, cached_tokens=8_000, output_tokens=500, thinking_tokens=300
    )
    assert cost == pytest.approx((2_000 * 0.30 + 8_000 * 0.03 + 800 * 2.50) / 1e6)
    uncached = call_cost(
        FLASH, prompt_tokens=10_000, cached_tokens=0, output_tokens=500, thinking_tokens=300
    )
    assert cost < uncached


def test_pro_prompts_over_200k_are_billed_wholly_at_the_long_tier() -> None:
    short = call_cost(
        PRO, prompt_tokens=200_000, cached_tokens=0, output_tokens=1000, thinking_tokens=0
    )
    long = call_cost(
        PRO, prompt_tokens=200_001, cached_tokens=1, output_tokens=1000, thinking_tokens=0
    )
    assert short == pytest.approx((200_000 * 1.25 + 1000 * 10.0) / 1e6)
    assert long == pytest.approx((200_000 * 2.50 + 1 * 0.25 + 1000 * 15.0) / 1e6)


def test_a_separate_thinking_price_is_used_when_configured() -> None:
    price = ModelPrice(input=1, output=2, cached_input=0.5, thinking=4)
    assert call_cost(
        price, prompt_tokens=0, cached_tokens=0, output_tokens=0, thinking_tokens=1_000_000
    ) == pytest.approx(4.0)


def test_configured_prices_add_to_the_built_in_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "socbot.toml"
    config.write_text(
        "[gemini]\n"
        'prices."gemini-2.5-flash" = { input = 0.2, output = 2.0, cached_input = 0.02 }\n'
        'prices."my-tuned-model" = { input = 3.0, output = 9.0, cached_input = 0.3 }\n'
    )
    monkeypatch.setenv("SOCBOT_CONFIG", str(config))
    prices = load_settings().gemini.prices
    assert prices["gemini-2.5-flash"].input == 0.2
    assert prices["my-tuned-model"].output == 9.0
    assert prices["gemini-2.5-pro"] == PRO  # the others keep their defaults


def test_an_unpriced_model_costs_none_and_is_warned_about_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pricer = Pricer(DEFAULT_PRICES)
    counts = {"prompt_tokens": 10, "cached_tokens": 0, "output_tokens": 1, "thinking_tokens": 0}
    assert pricer.cost("mystery-1", "mystery-1", **counts) is None
    assert pricer.cost("mystery-1", "mystery-1", **counts) is None
    assert [r.message for r in caplog.records].count(
        "no price for model mystery-1: its calls are not costed"
    ) == 1
    # the served model's version is unknown, the requested name is priced
    assert pricer.cost("gemini-flash-2025", "gemini-2.5-flash", **counts) == pytest.approx(
        (10 * 0.30 + 1 * 2.50) / 1e6
    )


async def test_each_call_stage_and_investigation_carries_its_cost() -> None:
    model = ScriptedModel(
        {
            "planner": [
                text_response("plan", prompt_tokens=4000, output_tokens=100, thoughts_tokens=300)
            ],
            "step s1": [
                text_response("a", prompt_tokens=3000, output_tokens=50, cached_tokens=2048),
                text_response("b", prompt_tokens=3500, output_tokens=50, cached_tokens=3000),
            ],
        }
    )
    gateway = LLMGateway(model, GeminiSettings())
    sink = EventSink()
    ctx = CallContext("inv-1", sink, 1_000_000, time.monotonic() + 30)
    contents = [types.Content(role="user", parts=[types.Part(text="go")])]
    await gateway.generate(ctx, stage="planner", system="socbot stage: planner", contents=contents)
    for _ in range(2):
        step_turn = [types.Content(role="user", parts=[types.Part(text="socbot stage: step s1")])]
        await gateway.generate(ctx, stage="step s1", system="socbot manual", contents=step_turn)

    calls = [e for e in sink.events if isinstance(e, LLMCalled)]
    expected = [
        (4000 * 0.30 + 400 * 2.50) / 1e6,
        (952 * 0.30 + 2048 * 0.03 + 50 * 2.50) / 1e6,
        (500 * 0.30 + 3000 * 0.03 + 50 * 2.50) / 1e6,
    ]
    assert [c.cost_usd for c in calls] == pytest.approx(expected)
    usage = ctx.usage.as_dict()
    assert usage["cost_usd"] == pytest.approx(sum(expected), abs=1e-6)
    stages = usage["stages"]
    assert isinstance(stages, dict)
    assert stages["step s1"]["cost_usd"] == pytest.approx(expected[1] + expected[2], abs=1e-6)
    assert usage["unpriced_calls"] == 0
