"""Claude list prices, USD per 1M tokens, keyed ``anthropic:<model>`` (a name, or
its dated snapshot: the backend reports the served model as
``anthropic:claude-haiku-4-5-20251001``).
claude-sonnet-4-5 reaches end-of-life on 2026-11-30, claude-opus-4-5 on 2027-01-22 (the
SDK's ``DEPRECATED_MODELS``).

``config.agent_settings.DEFAULT_PRICES`` takes them in (plain numbers here, so this module
imports nothing). ``cached_input`` is the cache-hit price (0.1 x input). Cache writes
(``cache_creation_input_tokens``) are 1.25 x input for the 5-minute cache — Sonnet 4.5
$3.75, Haiku 4.5 $1.25, Opus 4.5 $6.25, Opus 4 / 4.1 $18.75 — but the gateway has no count
of them yet, so they are billed at the input price: a call that writes the cache is
under-costed by 0.25 x input x written tokens (see docs/models.md).

Source: Anthropic's pricing page (docs.anthropic.com/en/docs/about-claude/pricing, a copy
read 2026-11-28 for Opus 4 / 4.1 and Sonnet 4's $3 / $15 and the > 200k tier $6 / $22.50)
and platform.claude.com model pages; Sonnet 4.5 / 4.6, Haiku 4.5 and Opus 4.5 / 4.6 from
third-party copies of that page (2026), not confirmed from a first-party copy.
"""

from __future__ import annotations

ANTHROPIC_PRICES: dict[str, dict[str, float]] = {
    "anthropic:claude-sonnet-4-5": {
        "input": 3.0,
        "output": 15.0,
        "cached_input": 0.30,
        "long_context_tokens": 200_000,  # the 1M-context beta's > 200k tier
        "input_long": 6.0,
        "output_long": 22.50,
        "cached_input_long": 0.60,
    },
    "anthropic:claude-sonnet-4-6": {"input": 3.0, "output": 15.0, "cached_input": 0.30},
    "anthropic:claude-haiku-4-5": {"input": 1.0, "output": 5.0, "cached_input": 0.10},
    "anthropic:claude-opus-4-5": {"input": 5.0, "output": 25.0, "cached_input": 0.50},
    "anthropic:claude-opus-4-6": {"input": 5.0, "output": 25.0, "cached_input": 0.50},
    "anthropic:claude-opus-4-1": {"input": 15.0, "output": 75.0, "cached_input": 1.50},
    "anthropic:claude-opus-4-0": {"input": 15.0, "output": 75.0, "cached_input": 1.50},
    "anthropic:claude-opus-4": {"input": 15.0, "output": 75.0, "cached_input": 1.50},
}
