"""``socbot doctor``'s model checks: one 1-token call per configured provider (the
providers of ``models.main`` and ``models.light``), its tokens and list-price cost.
Gemini's check is ``remote.gemini``; the others go through their backend as the
engine's calls do (``agent.model.providers``), without retries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli.doctor import remote
from cli.doctor.report import Check
from config.model_names import GEMINI, split_model
from config.settings import ConfigError, Settings

if TYPE_CHECKING:
    import httpx

    from agent.model.providers import Factory

FIXES = {
    "openai": "set the key's variable (openai.api_key_env, default OPENAI_API_KEY) or "
    "openai.base_url to a server that serves the model",
    "anthropic": "set ANTHROPIC_API_KEY, or install socbot[anthropic]",
}


async def model_checks(
    settings: Settings, http: httpx.AsyncClient, *, factories: dict[str, Factory] | None = None
) -> list[Check]:
    """One check per provider of the main and light models, main model first
    (``factories``: backends built otherwise, as ``RoutingBackend`` takes them)."""
    first: dict[str, str] = {}
    for name in (settings.models.main, settings.models.light):
        provider, bare = split_model(name)
        first.setdefault(provider, bare)
    checks = []
    for provider, model in first.items():
        if provider == GEMINI:
            gemini = settings.gemini.model_copy(update={"model": model})
            checks.append(await remote.gemini(settings.model_copy(update={"gemini": gemini}), http))
        else:
            checks.append(await one_token(settings, provider, model, factories))
    return checks


async def one_token(
    settings: Settings, provider: str, model: str, factories: dict[str, Factory] | None = None
) -> Check:
    """A 1-token call of ``provider:model`` through its backend."""
    from google.genai import types

    from agent.errors import AgentError
    from agent.model.pricing import call_cost, price_for
    from agent.model.providers import RoutingBackend

    quiet = settings.openai.model_copy(update={"max_retries": 0})
    routing = RoutingBackend(settings.model_copy(update={"openai": quiet}), factories=factories)
    name = f"{provider}:{model}"
    try:
        backend = routing.backend(provider)
        response = await backend.generate_content(
            model=model,
            contents=[types.Content(role="user", parts=[types.Part(text="Say OK.")])],
            config=types.GenerateContentConfig(max_output_tokens=1, temperature=0),
        )
    except ConfigError as exc:
        return Check.fail(provider, str(exc), FIXES.get(provider, ""))
    except AgentError as exc:
        return Check.fail(provider, f"{name}: {exc}", FIXES.get(provider, ""))
    finally:
        await routing.aclose()
    usage = response.usage_metadata
    prompt = (usage.prompt_token_count or 0) if usage else 0
    output = (usage.candidates_token_count or 0) if usage else 0
    thinking = (usage.thoughts_token_count or 0) if usage else 0
    price = price_for(settings.gemini.prices, response.model_version or name) or price_for(
        settings.gemini.prices, name
    )
    cost = "cost unknown: no price for this model (gemini.prices)"
    if price is not None:
        usd = call_cost(
            price,
            prompt_tokens=prompt,
            cached_tokens=0,
            output_tokens=output,
            thinking_tokens=thinking,
        )
        cost = f"${usd:.6f} at list prices"
    tokens = f"{prompt} prompt + {output + thinking} output tokens"
    return Check.ok(provider, f"{name} answered a 1-token call ({tokens}, {cost})")
