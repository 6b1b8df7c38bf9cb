"""List prices of OpenAI models, USD per 1M tokens, keyed ``openai:<model>`` in the same
table as Gemini's (``config.agent_settings.DEFAULT_PRICES``).

Standard tier, text, from OpenAI's pricing page (https://openai.com/api/pricing) as
quoted by third-party copies read 2026-11-28 (no first-party copy was at hand here):
gpt-5 / gpt-5-mini at $1.25 / $0.25 input and $10 / $2 output were quoted alike by several;
the cached prices (10 % of input for gpt-5.x, 25 % for gpt-4.1 and o-series, 50 % for
gpt-4o) are the page's as usually quoted. Check them when the page changes and override
them in ``[gemini.prices]`` (``"openai:gpt-5-mini" = {...}``). Reasoning tokens are billed
at the output price (``thinking`` unset). OpenAI names are matched exactly or with a
snapshot date (``openai:gpt-5-mini-2025-08-07``), never by prefix: ``o3-pro`` is not
``o3``. A model served by another endpoint (``openai:qwen3:32b`` on a local server) has
no price: its cost is unknown, never $0 — give it one if it has one.
"""

from __future__ import annotations

# Plain values: config.agent_settings makes them ModelPrice entries of DEFAULT_PRICES.
OPENAI_PRICES: dict[str, dict[str, float]] = {
    "openai:gpt-5": {"input": 1.25, "output": 10.0, "cached_input": 0.125},
    "openai:gpt-5-mini": {"input": 0.25, "output": 2.0, "cached_input": 0.025},
    "openai:gpt-5-nano": {"input": 0.05, "output": 0.40, "cached_input": 0.005},
    "openai:gpt-4.1": {"input": 2.0, "output": 8.0, "cached_input": 0.50},
    "openai:gpt-4.1-mini": {"input": 0.40, "output": 1.60, "cached_input": 0.10},
    "openai:gpt-4.1-nano": {"input": 0.10, "output": 0.40, "cached_input": 0.025},
    "openai:gpt-4o": {"input": 2.50, "output": 10.0, "cached_input": 1.25},
    "openai:gpt-4o-mini": {"input": 0.15, "output": 0.60, "cached_input": 0.075},
    "openai:o3": {"input": 2.0, "output": 8.0, "cached_input": 0.50},
    "openai:o4-mini": {"input": 1.10, "output": 4.40, "cached_input": 0.275},
}
