"""Money per model call, from the list prices in ``GeminiSettings.prices``.

Gemini reports ``promptTokenCount`` including the tokens served from the cache
(``cachedContentTokenCount``), which are billed at the cached-input price; thinking
tokens are billed at the output price unless a model's entry says otherwise. A prompt
over ``long_context_tokens`` is billed wholly at the ``*_long`` prices (Gemini 2.5 Pro's
>200k tier). A model that is not in the table costs ``None`` (unknown), never 0.

Tokens served from an explicit context cache are reported the same way and billed at
the same cached price; the cache's storage (``cache_storage``, per 1M tokens per hour
of its lifetime) is not a per-call cost: ``storage_cost_per_hour`` prices it apart.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from config.agent_settings import price_for as price_for  # a rule's model is checked there
from config.settings import ModelPrice

log = logging.getLogger(__name__)


def call_cost(
    price: ModelPrice,
    *,
    prompt_tokens: int,
    cached_tokens: int,
    output_tokens: int,
    thinking_tokens: int,
) -> float:
    """USD for one call with these token counts."""
    long = price.long_context_tokens is not None and prompt_tokens > price.long_context_tokens
    input_price = price.input_long if long and price.input_long is not None else price.input
    output_price = price.output_long if long and price.output_long is not None else price.output
    cached_price = price.cached_input
    if long and price.cached_input_long is not None:
        cached_price = price.cached_input_long
    thinking_price = price.thinking if price.thinking is not None else output_price
    cached = min(cached_tokens, prompt_tokens)
    total = (
        (prompt_tokens - cached) * input_price
        + cached * cached_price
        + output_tokens * output_price
        + thinking_tokens * thinking_price
    )
    return total / 1_000_000


def storage_cost_per_hour(price: ModelPrice | None, tokens: int) -> float | None:
    """USD per hour of keeping ``tokens`` in an explicit cache; ``None`` when unpriced."""
    if price is None or price.cache_storage is None:
        return None
    return tokens * price.cache_storage / 1_000_000


class Pricer:
    """Prices the calls of one gateway; warns once per model that has no price."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self.prices = prices
        self._unpriced: set[str] = set()

    def cost(
        self,
        served: str,
        requested: str,
        *,
        prompt_tokens: int,
        cached_tokens: int,
        output_tokens: int,
        thinking_tokens: int,
    ) -> float | None:
        """USD of one call at the served model's price (else the requested one's)."""
        price = price_for(self.prices, served) or price_for(self.prices, requested)
        if price is None:
            if requested not in self._unpriced:
                self._unpriced.add(requested)
                log.warning("no price for model %s: its calls are not costed", requested)
            return None
        return call_cost(
            price,
            prompt_tokens=prompt_tokens,
            cached_tokens=cached_tokens,
            output_tokens=output_tokens,
            thinking_tokens=thinking_tokens,
        )
