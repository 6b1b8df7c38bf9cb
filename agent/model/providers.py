"""Models named ``provider:model``, and the backend that routes each call to its
provider's backend.

``RoutingBackend`` is the ``ModelBackend`` the runtime hands the gateway: it splits the
model name (``config.model_names``), builds a provider's backend the first time one of
its models is asked for (``prepare`` builds those of the main and light models at
start-up, so missing credentials fail before anything runs) and passes the bare model
name on. Gemini's features (the explicit context cache, thought signatures, thinking
levels) stay inside ``GeminiBackend``: only Gemini models reach it. The Anthropic
backend is imported when an ``anthropic:`` model is first named; a build without it
says so in one sentence.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from google.genai import types

from agent.errors import LLMUnavailable
from agent.model.llm import ModelBackend
from config.model_names import GEMINI, canonical, split_model
from config.settings import ConfigError, Settings

log = logging.getLogger(__name__)

Factory = Callable[[], ModelBackend]


class RoutingBackend:
    """Dispatches each call by the model's provider; builds each backend once, lazily."""

    def __init__(
        self,
        settings: Settings,
        *,
        http: httpx.AsyncClient | None = None,
        factories: dict[str, Factory] | None = None,
    ) -> None:
        self.settings = settings
        self._http = http
        self._factories = factories or {}
        self.backends: dict[str, ModelBackend] = {}

    def prepare(self, models: Iterable[str]) -> None:
        """Build the backends of ``models`` now; ``ConfigError`` says what is missing."""
        for name in models:
            self._backend(split_model(name)[0])

    def backend(self, provider: str) -> ModelBackend:
        """The backend of ``provider`` (built on first use); ``ConfigError`` if it cannot be."""
        return self._backend(provider)

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        """The call, sent to the backend of the model's provider with the bare name."""
        try:
            provider, bare = split_model(model)
            backend = self._backend(provider)
        except (ValueError, ConfigError) as exc:
            raise LLMUnavailable(str(exc)) from exc
        return await backend.generate_content(model=bare, contents=contents, config=config)

    async def aclose(self) -> None:
        """Close every backend built (each closes what it opened)."""
        for backend in self.backends.values():
            close = getattr(backend, "aclose", None)
            if close is not None:
                await close()
        self.backends.clear()

    def _backend(self, provider: str) -> ModelBackend:
        backend = self.backends.get(provider)
        if backend is None:
            factory = self._factories.get(provider)
            backend = factory() if factory is not None else self._build(provider)
            self.backends[provider] = backend
            log.info("model provider %s ready", provider)
        return backend

    def _build(self, provider: str) -> ModelBackend:
        if provider == GEMINI:
            from agent.model.gemini import GeminiBackend

            return GeminiBackend.from_settings(self.settings.gemini, httpx_async_client=self._http)
        if provider == "openai":
            try:
                from agent.model.openai_backend import OpenAIBackend
            except ModuleNotFoundError as exc:  # the SDK is an extra
                raise ConfigError(
                    "An openai: model is configured but the openai SDK is not installed: "
                    "install socbot[openai]."
                ) from exc
            return OpenAIBackend.from_settings(self.settings)
        if provider == "anthropic":
            return _anthropic(self.settings)
        raise ConfigError(f"unknown model provider {provider!r}")  # split_model refuses it first


def _anthropic(settings: Settings) -> ModelBackend:
    try:
        module: Any = importlib.import_module("agent.model.anthropic_backend")
    except ModuleNotFoundError as exc:
        missing = "this socbot build has no Anthropic backend"
        if exc.name == "anthropic":
            missing = "the anthropic SDK is not installed: install socbot[anthropic]"
        raise ConfigError(f"An anthropic: model is configured but {missing}.") from exc
    backend: ModelBackend = module.AnthropicBackend.from_settings(settings)
    return backend


def configured_models(settings: Settings) -> list[str]:
    """The main and light models, canonical, without repeats."""
    return list(dict.fromkeys(canonical(m) for m in (settings.models.main, settings.models.light)))
