"""``ModelBackend`` on the official ``openai`` SDK's Chat Completions API: the OpenAI
API, Azure OpenAI, and every server that speaks it (vLLM, Ollama, LM Studio,
llama.cpp, OpenRouter, a LiteLLM proxy).

The request is translated from google-genai types (``agent.model.openai_request``) and
the answer back (``agent.model.openai_response``), so the gateway does not know who
answered. Retries are the SDK's own (``openai.max_retries``: 408/409/429/5xx and
connection errors, honouring ``Retry-After`` / ``retry-after-ms`` up to two minutes;
each retry is logged by the ``openai`` logger); the gateway's deadline bounds them all.
Failures become the engine's errors, naming the endpoint: ``LLMUnavailable`` for
credentials, refusals of the request, exhausted retries and servers that answer with an
error body; the gateway turns an unusable turn into ``LLMOutputInvalid``.
"""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING, Any

from google.genai import types

from agent.errors import LLMUnavailable
from agent.model.openai_request import build_request
from agent.model.openai_response import ServerError, read_response
from config.settings import ConfigError, OpenAISettings, Settings

if TYPE_CHECKING:
    import httpx2
    import openai

log = logging.getLogger(__name__)
LOCAL_KEY = "no-key"  # sent to a server that needs none (the SDK insists on some key)


class OpenAIBackend:
    """One ``AsyncOpenAI`` (or ``AsyncAzureOpenAI``) client for every ``openai:`` model."""

    def __init__(
        self, client: openai.AsyncOpenAI, settings: OpenAISettings, *, official: bool
    ) -> None:
        self.client = client
        self.settings = settings
        self.official = official  # OpenAI or Azure: max_completion_tokens, not max_tokens
        self.translate_s = 0.0  # time spent translating, both ways (bench)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, http_client: httpx2.AsyncClient | None = None
    ) -> OpenAIBackend:
        """The client for ``settings.openai``; ``ConfigError`` when the SDK or a key is
        missing."""
        import openai  # an extra: agent.model.providers says so when it is missing

        cfg = settings.openai
        base_url = cfg.base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = os.environ.get(cfg.api_key_env)
        if not key:
            if base_url is None or cfg.azure_api_version:
                raise ConfigError(
                    f"An openai: model is configured but {cfg.api_key_env} is not set "
                    "(or set openai.base_url to a local server that needs no key)."
                )
            key = LOCAL_KEY
        common: dict[str, Any] = {
            "api_key": key,
            "timeout": cfg.timeout_s,
            "max_retries": cfg.max_retries,
            "default_headers": dict(cfg.headers) or None,
            "http_client": http_client,
        }
        if cfg.azure_api_version:
            if base_url is None:
                raise ConfigError("Azure OpenAI needs openai.base_url: the resource's endpoint.")
            client: openai.AsyncOpenAI = openai.AsyncAzureOpenAI(
                azure_endpoint=base_url, api_version=cfg.azure_api_version, **common
            )
        else:
            client = openai.AsyncOpenAI(base_url=base_url, **common)
        official = base_url is None or cfg.azure_api_version is not None
        official = official or "api.openai.com" in (base_url or "")
        return cls(client, cfg, official=official)

    async def aclose(self) -> None:
        """Close the SDK's HTTP client (an injected one too: the backend owns it)."""
        await self.client.close()

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        """One Chat Completions call; errors become ``LLMUnavailable``."""
        import openai

        started = time.perf_counter()
        request = build_request(model, contents, config, self.settings, official=self.official)
        self.translate_s += time.perf_counter() - started
        try:
            completion = await self.client.chat.completions.create(**request.kwargs)
        except openai.APIStatusError as exc:
            raise LLMUnavailable(_rejection(exc, model)) from exc
        except openai.APIConnectionError as exc:
            kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "cannot be reached"
            raise LLMUnavailable(
                f"The OpenAI endpoint {kind} ({model}) after {self.settings.max_retries + 1} "
                "attempts; check openai.base_url and the network path."
            ) from exc
        except openai.APIResponseValidationError as exc:
            raise LLMUnavailable(f"The OpenAI endpoint answered {model} unreadably.") from exc
        started = time.perf_counter()
        try:
            response = read_response(completion, request.names, model)
        except ServerError as exc:
            raise LLMUnavailable(
                f"The OpenAI endpoint answered {model} with an error: {str(exc)[:200]}"
            ) from exc
        self.translate_s += time.perf_counter() - started
        return response


def _rejection(exc: Any, model: str) -> str:
    """One sentence for a request the endpoint refused (after the SDK's retries)."""
    code = exc.status_code
    message = _message(exc)
    if code == 401:
        return "The OpenAI endpoint rejected the API key; check openai.api_key_env's variable."
    if code == 403:
        return f"The OpenAI endpoint refused access to {model} (403): {message}"
    if code == 404:
        return f"The OpenAI endpoint does not know the model {model!r}; check models.main/light."
    if code == 429:
        return f"The OpenAI endpoint is rate limiting {model} (429) after the SDK's retries."
    if code >= 500:
        return f"The OpenAI endpoint is unavailable ({code}) after the SDK's retries."
    return f"The OpenAI endpoint rejected the request for {model} ({code}): {message}"


def _message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        text = error.get("message") if isinstance(error, dict) else None
        if text:
            return str(text).strip().splitlines()[0][:200]
    return str(exc.message or "no details").strip().splitlines()[0][:200]
