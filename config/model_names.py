"""Model names: ``provider:model`` everywhere a model is named; a bare name is Gemini.

``split_model("openai:gpt-5-mini") == ("openai", "gpt-5-mini")``,
``split_model("gemini-2.5-flash") == ("gemini", "gemini-2.5-flash")``. Only the first
colon separates the provider, so a local server's ``openai:qwen3:32b`` keeps its tag.
An unknown provider (``opnai:…``, or a bare ``qwen3:32b``) is a ``ValueError``: a
settings validator turns it into a start-up error, never a silent fallback to Gemini.

``canonical`` is the one spelling kept in usage, traces and the price table: Gemini's
models bare (as before providers existed), the others with their provider.
"""

from __future__ import annotations

PROVIDERS = ("gemini", "openai", "anthropic")
_LABELS = {"gemini": "Gemini", "openai": "The OpenAI endpoint", "anthropic": "Anthropic"}
GEMINI = "gemini"


def split_model(name: str) -> tuple[str, str]:
    """``(provider, model)`` of a model name; ``ValueError`` for an unknown provider."""
    provider, sep, bare = name.strip().partition(":")
    if not sep:
        return GEMINI, provider
    if provider not in PROVIDERS:
        raise ValueError(
            f"model {name!r} names the provider {provider!r}; known providers: "
            + ", ".join(PROVIDERS)
            + " (a bare name means gemini)"
        )
    if not bare:
        raise ValueError(f"model {name!r} names no model after {provider + ':'!r}")
    return provider, bare


def canonical(name: str) -> str:
    """The one spelling of a model name: Gemini bare, the others ``provider:model``."""
    provider, bare = split_model(name)
    return bare if provider == GEMINI else f"{provider}:{bare}"


def provider_of(name: str) -> str:
    """The provider that serves ``name``."""
    return split_model(name)[0]


def price_key(name: str) -> str:
    """The name a price is looked up by: Gemini's without ``models/``, others canonical."""
    provider, bare = split_model(name)
    if provider == GEMINI:
        return bare.rsplit("/", 1)[-1]  # "models/gemini-2.5-flash" → "gemini-2.5-flash"
    return f"{provider}:{bare}"


def provider_label(name: str) -> str:
    """The provider answering ``name`` as an error message names it (``Gemini``)."""
    return _LABELS[provider_of(name)]
