"""``ModelBackend`` on the real google-genai async client.

All traffic goes through httpx: the caller may inject its clients, otherwise one
``httpx.AsyncClient`` is created here (and closed by ``aclose``). google-genai's
own retries stay off (no ``retry_options``), so the bounded retry below is the
only one: exponential backoff with jitter on 408/429/5xx and transport errors,
honouring ``Retry-After`` / ``RetryInfo.retryDelay`` unless the server asks for
longer than ``max_retry_wait_s`` — then it fails at once instead of sleeping.

With ``gemini.context_cache.enabled``, a call without tools whose system instruction is
long enough names an explicit cache of it instead (``agent.model.context_cache``). A call
refused because that cache is gone is sent once more inline, transparently.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import ssl
from typing import Any

import certifi
import httpx
from google import genai
from google.auth.exceptions import GoogleAuthError
from google.genai import errors, types

from agent.errors import LLMUnavailable
from agent.model.context_cache import ContextCache, names_cached_content
from agent.model.retry import Failure, RetryPolicy, with_retries
from config.settings import ConfigError, GeminiSettings
from tools.retry_after import retry_after

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


class _CacheGone(Exception):
    """The call named a cached content Gemini no longer has (never leaves this module)."""


class GeminiBackend:
    """One google-genai ``Client`` plus our bounded retry policy."""

    def __init__(
        self,
        client: genai.Client,
        settings: GeminiSettings,
        *,
        owned_http: httpx.AsyncClient | None = None,
        cache: ContextCache | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self._owned_http = owned_http
        self.cache = cache

    @property
    def policy(self) -> RetryPolicy:
        s = self.settings
        return RetryPolicy(
            "Gemini", "rate limiting or unavailable", s.max_retries, s.retry_initial_s,
            s.max_retry_wait_s, s.timeout_s,
        )  # fmt: skip

    @classmethod
    def from_settings(
        cls,
        settings: GeminiSettings,
        *,
        httpx_client: httpx.Client | None = None,
        httpx_async_client: httpx.AsyncClient | None = None,
    ) -> GeminiBackend:
        """Build the client for the Gemini API (API key) or Vertex AI.

        Raises ``ConfigError`` with an actionable sentence when credentials are missing.
        """
        credentials = _credentials(settings)
        # Vertex AI may bring a client certificate (mTLS): the SDK makes that context.
        tls = None if settings.use_vertexai else tls_context()
        owned = None
        if httpx_async_client is None:
            owned = httpx_async_client = httpx.AsyncClient(verify=tls or True)
        options = types.HttpOptions(
            base_url=settings.base_url,
            api_version=settings.api_version or (None if settings.use_vertexai else "v1beta"),
            timeout=max(1, int(settings.timeout_s * 1000)),
            httpx_async_client=httpx_async_client,
            httpx_client=httpx_client,
            # The SDK's sync httpx client and its websockets (Live API) context.
            client_args={"verify": tls} if tls else None,
            async_client_args={"ssl": tls} if tls else None,
            retry_options=None,  # ours is the only retry loop
        )
        client = genai.Client(http_options=options, **credentials)
        cache = None
        if settings.context_cache.enabled:
            log.info(
                "explicit context caching on (ttl %.0fs, light model %s)",
                settings.context_cache.ttl_s,
                "too" if settings.context_cache.light_model else "not",
            )
            cache = ContextCache(
                client.aio.caches,
                settings.context_cache,
                settings.prices,
                timeout_s=settings.timeout_s,
            )
        return cls(client, settings, owned_http=owned, cache=cache)

    async def aclose(self) -> None:
        """Delete the context caches (best effort), then close the httpx client this
        backend created (injected ones stay open)."""
        if self.cache is not None:
            await self.cache.close()
        if self._owned_http is not None:
            await self._owned_http.aclose()

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        """One ``generateContent`` call with bounded retries; errors become ``LLMUnavailable``."""
        if config.automatic_function_calling is None:
            config = config.model_copy(
                update={
                    "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True)
                }
            )
        name = await self._cached(model, config)
        if name is not None:
            update = {"system_instruction": None, "cached_content": name}
            try:
                return await self._generate(model, contents, config.model_copy(update=update))
            except _CacheGone:
                assert self.cache is not None
                self.cache.forget(name)
                log.info("context cache %s is gone: sending this call inline", name)
        return await self._generate(model, contents, config)

    async def _cached(self, model: str, config: types.GenerateContentConfig) -> str | None:
        """The explicit cache this call may name instead of its system instruction."""
        system = config.system_instruction
        if self.cache is None or config.tools or config.tool_config or config.cached_content:
            return None
        light = model == self.settings.light_model != self.settings.model
        if light and not self.settings.context_cache.light_model:
            return None
        return await self.cache.name_for(model, system) if isinstance(system, str) else None

    async def _generate(
        self,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        async def call() -> types.GenerateContentResponse:
            return await self.client.aio.models.generate_content(
                model=model, contents=contents, config=config
            )

        def classify(exc: Exception) -> Failure:
            if isinstance(exc, errors.APIError):
                if config.cached_content and names_cached_content(exc):
                    raise _CacheGone from exc
                if exc.code not in RETRY_STATUS:
                    raise LLMUnavailable(_rejection(exc, model)) from exc
                problem = f"HTTP {exc.code} {exc.status or ''}".strip()
                return Failure(problem, server_delay(exc), exc)
            if isinstance(exc, GoogleAuthError):
                raise LLMUnavailable(
                    "Vertex AI credentials could not be loaded or refreshed; run "
                    "'gcloud auth application-default login' or set GOOGLE_APPLICATION_CREDENTIALS."
                ) from exc
            if isinstance(exc, json.JSONDecodeError):
                raise LLMUnavailable(
                    "Gemini (or a proxy in between) answered with something that is not JSON; "
                    "check SOCBOT_GEMINI_BASE_URL."
                ) from exc
            if isinstance(exc, httpx.TransportError | TimeoutError):
                return Failure(type(exc).__name__, None, exc)
            raise exc

        return await with_retries(call, self.policy, model, classify)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's TLS context for HTTPS clients: verifying, with the usual trust.

    Loading the CA bundle is ~30 ms of CPU per context, and by default httpx and
    google-genai each load their own (the SDK two: its httpx clients and websockets),
    three times before the first model request. One context serves them all: the
    trust httpx and the SDK use by default, ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when
    set, otherwise certifi's bundle.
    """
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if not cafile and not capath:
        cafile = certifi.where()
    return ssl.create_default_context(cafile=cafile, capath=capath)


def _credentials(settings: GeminiSettings) -> dict[str, Any]:
    """``genai.Client`` keyword arguments for the configured backend."""
    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    if not settings.use_vertexai:
        if not api_key:
            raise ConfigError(
                "No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or use Vertex AI "
                "with GOOGLE_GENAI_USE_VERTEXAI=true and GOOGLE_CLOUD_PROJECT."
            )
        return {"api_key": api_key}
    if settings.project:
        return {
            "vertexai": True,
            "project": settings.project,
            "location": settings.location or "global",
        }
    if api_key:  # Vertex AI express mode
        return {"vertexai": True, "api_key": api_key}
    raise ConfigError(
        "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION), "
        "or an API key for Vertex AI express mode."
    )


def server_delay(exc: errors.APIError) -> float | None:
    """Seconds the server asked us to wait (``RetryInfo.retryDelay`` or ``Retry-After``)."""
    delays: list[float] = []
    body: Any = exc.details
    error = body.get("error", body) if isinstance(body, dict) else {}
    details = error.get("details") if isinstance(error, dict) else None
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                delays.append(float(match.group(1)))
    response = exc.response
    if isinstance(response, httpx.Response):
        header = response.headers.get("retry-after")
        if header:
            delays.append(retry_after(header) or 0.0)  # an unreadable header asks for no wait
    return max(delays) if delays else None


def _rejection(exc: errors.APIError, model: str) -> str:
    """One sentence for a request Gemini refused outright (4xx other than 408/429)."""
    text = f"{exc.message or ''} {exc.details}".lower()
    if "api_key_invalid" in text or "api key not valid" in text or "api key expired" in text:
        return "Gemini rejected the API key; check GEMINI_API_KEY."
    if exc.code in (401, 403):
        return (
            f"Gemini refused access ({exc.code} {exc.status or ''}); check the API key or the "
            "Vertex AI permissions of the service account."
        )
    if exc.code == 404:
        return f"Gemini does not know the model {model!r}; check the gemini model settings."
    message = (exc.message or "no details").strip().splitlines()[0][:200]
    return f"Gemini rejected the request ({exc.code} {exc.status or ''}): {message}"
