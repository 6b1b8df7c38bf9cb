"""Settings of the engine: the Gemini model and its prices, limits, review, playbook,
learning and alert formats. ``config.settings.Settings`` holds one of each."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from config.anthropic_prices import ANTHROPIC_PRICES
from config.model_names import price_key
from config.openai_prices import OPENAI_PRICES


class Section(BaseModel):
    """A settings section: an unknown key (a typo) is an error, never silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ModelPrice(Section):
    """List prices of one model, USD per 1M tokens (``*_long``: prompts over the threshold)."""

    input: float = Field(ge=0, description="prompt tokens not served from the cache")
    output: float = Field(ge=0, description="response tokens")
    cached_input: float = Field(
        ge=0, description="prompt tokens served from a cache (implicit or explicit)"
    )
    thinking: float | None = Field(None, ge=0, description="thinking tokens; default: output")
    long_context_tokens: int | None = Field(
        None, ge=1, description="prompt size above which the *_long prices apply"
    )
    input_long: float | None = Field(None, ge=0)
    output_long: float | None = Field(None, ge=0)
    cached_input_long: float | None = Field(None, ge=0)
    cache_storage: float | None = Field(
        None, ge=0, description="explicit context cache storage, USD per 1M tokens per hour"
    )


# a dated snapshot: gpt-5-mini-2025-08-07, claude-haiku-4-5-20251001
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


def price_for(prices: Mapping[str, ModelPrice], model: str) -> ModelPrice | None:
    """The entry for ``model``: exact name, else (Gemini) the longest key it starts
    with, (other providers) the name without its snapshot date."""
    try:
        name = price_key(model)
    except ValueError:
        return None
    if name in prices:
        return prices[name]
    if ":" in name:  # another provider's: exact, or a dated snapshot of a priced name
        return prices.get(_SNAPSHOT.sub("", name))
    keys = [k for k in prices if name.startswith(k)]
    return prices[max(keys, key=len)] if keys else None


# Gemini Developer API list prices, Standard (paid) tier, text, USD per 1M tokens, from
# https://ai.google.dev/gemini-api/docs/pricing. Output prices include thinking tokens;
# the cached price (10 % of input) is what implicit-cache hits are billed at. Checked
# 2026-11-22 against transcriptions of that page read 2026-09-20 and 2026-10-07
# (api-evangelist/gemini, api-evangelist/deepmind: plans/*-pricing.yml), which quote
# 2.5 Pro input 1.25 (<= 200k) / 2.50 (> 200k), 2.5 Flash input 0.30 and 2.5 Flash-Lite
# output 0.40 verbatim; the other figures match third-party copies of the page (2026)
# but no first-party copy of them was at hand: check them when the page changes.
# cache_storage (explicit context caching, USD per 1M tokens per hour of TTL; implicit
# caching has no storage price): 2.5 Pro $4.50, 2.5 Flash and Flash-Lite $1.00 on the same
# page, checked 2026-11-22 against quotes of its "Context caching price" rows ("$1.00 /
# 1,000,000 tokens per hour (storage price)" for 2.5 Flash, "$4.50 / ..." for 2.5 Pro).
ThinkingLevel = Literal["minimal", "low", "medium", "high"]
# tool loops think little per call (many calls, each a small decision); planning and the
# conclusion keep the model's default (high)
DEFAULT_THINKING_LEVELS: dict[str, ThinkingLevel] = {"step": "low", "direct": "low"}

_GEMINI_3_PRO = ModelPrice(
    input=2.00,
    output=12.00,
    cached_input=0.20,
    long_context_tokens=200_000,
    input_long=4.00,
    output_long=18.00,
    cached_input_long=0.40,
    cache_storage=4.50,
)
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gemini-2.5-pro": ModelPrice(
        input=1.25,
        output=10.0,
        cached_input=0.125,
        long_context_tokens=200_000,
        input_long=2.50,
        output_long=15.0,
        cached_input_long=0.25,
        cache_storage=4.50,
    ),
    "gemini-2.5-flash": ModelPrice(input=0.30, output=2.50, cached_input=0.03, cache_storage=1.0),
    "gemini-2.5-flash-lite": ModelPrice(
        input=0.10, output=0.40, cached_input=0.01, cache_storage=1.0
    ),
    # Gemini 3.x (names by prefix: gemini-3-flash-preview, gemini-3-pro-preview,
    # gemini-3.1-pro-preview). Source: the same pricing page; checked 2026-11-25 against a
    # quote of it taken 2026-07-04 ("Gemini 3 Flash Preview ... Input price $0.50 (text /
    # image / video) ... Output price (including thinking tokens) $3.00 ... Context caching
    # price $0.05") and third-party copies for 3 Pro / 3.1 Pro Preview ($2.00 input, $12.00
    # output up to 200k-token prompts; $4.00 / $18.00 above). NOT confirmed from a
    # first-party copy: the 3 Pro cached prices ($0.20 / $0.40, 10 % of input as for every
    # other model here) and the 3.x cache storage (assumed as 2.5's: $1.00 Flash, $4.50
    # Pro); override them in [gemini.prices] when the page says otherwise. A search of the
    # stored copies reachable from here on 2026-11-25 found no first-party copy of the
    # pricing page (Developer API or Vertex AI): see docs/models.md.
    "gemini-3-flash": ModelPrice(input=0.50, output=3.00, cached_input=0.05, cache_storage=1.0),
    "gemini-3-pro": _GEMINI_3_PRO,
    "gemini-3.1-pro": _GEMINI_3_PRO,
    **{name: ModelPrice(**values) for name, values in OPENAI_PRICES.items()},
}
DEFAULT_PRICES.update({k: ModelPrice(**v) for k, v in ANTHROPIC_PRICES.items()})


class ContextCacheSettings(Section):
    """Explicit context caching of long system instructions (``agent.model.context_cache``)."""

    enabled: bool = Field(
        False,
        description="cache the shared manual explicitly (storage is billed per hour: opt in)",
    )
    ttl_s: float = Field(3600.0, ge=60, description="lifetime of a cache; extended while in use")
    refresh_before_s: float = Field(
        120.0, ge=0, description="a call finding less than this left extends the cache's TTL"
    )
    retry_after_s: float = Field(
        600.0, ge=0, description="after a failed creation, send inline this long before retrying"
    )
    light_model: bool = Field(
        False,
        description="cache for the light model (the critic) too; on 2.5 Flash-Lite that pays "
        "only from ~11 critic calls an hour",
    )

    @model_validator(mode="after")
    def _refresh_within_ttl(self) -> ContextCacheSettings:
        if self.refresh_before_s >= self.ttl_s:
            raise ValueError("refresh_before_s must be shorter than ttl_s")
        return self


class GeminiSettings(Section):
    api_key: SecretStr | None = None
    use_vertexai: bool = False
    project: str | None = None
    location: str | None = None
    base_url: str | None = None
    model: str = "gemini-2.5-flash"
    light_model: str = "gemini-2.5-flash-lite"
    timeout_s: float = 120.0
    max_retries: int = 4
    max_retry_wait_s: float = 30.0
    retry_initial_s: float = Field(1.0, ge=0, description="first backoff; doubles per retry")
    api_version: str | None = Field(
        None, description="REST API version; default v1beta (Gemini API) / SDK's (Vertex AI)"
    )
    temperature: float = 0.2
    thinking_levels: dict[str, ThinkingLevel] = Field(
        default_factory=lambda: dict(DEFAULT_THINKING_LEVELS),
        description="Gemini 3 models: thinking level per stage (classifier, planner, step, "
        "reflector, concluder, direct, critic, rewrite, ...); a stage not listed thinks at the "
        "model's default (high); 3 Pro takes low and high only. Gemini 2.5 keeps budgets",
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=lambda: dict(DEFAULT_PRICES),
        description="list prices per model (a model name, or a prefix of one), USD per 1M "
        "tokens; entries add to or replace the built-in table for the shipped models",
        examples=[{"gemini-2.5-flash": {"input": 0.3, "output": 2.5, "cached_input": 0.03}}],
    )

    context_cache: ContextCacheSettings = Field(default_factory=ContextCacheSettings)

    @field_validator("prices", mode="after")
    @classmethod
    def _with_default_prices(cls, value: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        return {**DEFAULT_PRICES, **value}


class Limits(Section):
    max_steps: int = Field(8, ge=1, description="steps per plan, including added ones")
    max_waves: int = Field(4, ge=1)
    max_tool_calls_per_step: int = Field(6, ge=1)
    max_direct_tool_calls: int = Field(8, ge=0)
    max_parallel_steps: int = Field(4, ge=1)
    deadline_s: float = Field(600.0, gt=0, description="wall clock per investigation")
    token_budget: int = Field(
        500_000, ge=1000, description="prompt+output tokens per investigation"
    )
    conclude_grace_s: float = Field(
        30.0, ge=0, description="part of deadline_s kept for the conclusion (at most 20%)"
    )
    conclude_reserve_tokens: int = Field(
        20_000, ge=0, description="part of token_budget kept for the conclusion (at most 20%)"
    )
    tool_result_chars: int = Field(8_000, ge=500, description="tool result size seen by the model")
    history_chars: int = Field(
        24_000, ge=2000, description="conversation history sent to the model"
    )
    speculative_conclusion: bool = Field(
        True,
        description="write the conclusion while the last reflection runs (nothing pending); "
        "discarded if the reflection adds steps",
    )


class ReviewSettings(Section):
    """The review of conclusions and direct answers (``agent.review.critic``)."""

    enabled: bool = Field(True, description="check conclusions against tool results, then a critic")
    planned_only: bool = Field(False, description="review planned investigations only")
    severities: list[Literal["info", "low", "medium", "high", "critical"]] = Field(
        default_factory=list,
        description="review only when the alert's or the draft's severity is listed; empty = all",
    )
    threshold: float = Field(0.7, ge=0, le=1, description="critic score below this: rewrite")
    max_rewrites: int = Field(1, ge=0, le=2, description="rewrites of one conclusion")
    reserve_tokens: int = Field(
        30_000, ge=0, description="part of token_budget kept for the review (at most 20%)"
    )
    grace_s: float = Field(
        45.0, ge=0, description="part of deadline_s kept for the review (at most 20%)"
    )


class PlaybookSettings(Section):
    """Selecting the team playbook's active bullets for a prompt (agent/playbook/selection.py)."""

    enabled: bool = True
    max_bullets: int = Field(8, ge=0, description="bullets per investigation, at most")
    max_tokens: int = Field(1200, ge=0, description="size of the playbook section, at most")
    prior_helpful: float = Field(
        1.0, ge=0, description="prior helpful count: a new bullet is not ignored"
    )
    prior_harmful: float = Field(1.0, ge=0, description="prior harmful count")


class LearningSettings(Section):
    """Learning from analysts' feedback: Reflector + Curator, under human review."""

    enabled: bool = True
    reflection_rounds: int = Field(
        1, ge=1, le=5, description="Reflector passes: each refines the insights of the one before"
    )
    review_channel: str | None = Field(
        None, description="channel id where proposals are posted; none = CLI review only"
    )
    approvers: list[str] = Field(
        default_factory=list,
        description="Slack user ids who may approve, edit or reject proposals; empty = nobody "
        "in Slack (use `socbot playbook`)",
    )
    auto_approve: bool = Field(False, description="proposals become active without review")
    token_budget: int = Field(60_000, ge=1000, description="tokens per learning run")
    deadline_s: float = Field(180.0, gt=0, description="wall clock per learning run")
    max_evidence_chars: int = Field(600, ge=100, description="evidence shown per proposal")
    max_running: int = Field(
        1, ge=1, description="learning runs at once across replicas (beside investigations)"
    )
    settle_s: float = Field(
        5.0, ge=0, description="a run starts this long after the first vote; later votes join it"
    )
    holdout_share: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="share of investigations drawn at random to run without the playbook, so "
        "`socbot report` measures its effect (randomised) instead of comparing runs that "
        "happened to find bullets (confounded); 0 = off",
    )


class AlertSettings(Section):
    """How alert payloads are read (``alerts.catalogue``)."""

    formats_dir: str | None = Field(
        None,
        description="a directory of alert format TOML files added to the built-in catalogue "
        "(a file with a built-in format's name replaces it)",
    )
