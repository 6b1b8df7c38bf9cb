"""``ModelBackend`` on the official ``anthropic`` SDK (``socbot[anthropic]``): Claude.

The request is translated from google-genai types (``agent.model.anthropic_request``)
and the answer back (``agent.model.anthropic_reply``), so the gateway and everything
above it do not know who answered.

Retries are ours, not the SDK's (its ``max_retries`` is 0): the SDK sleeps whatever a
``retry-after`` asks (hours, if a proxy says so), where an investigation must fail at
once when asked to wait longer than ``max_retry_wait_s``, as on Gemini; and ours log each
retry naming the provider. Retried: 408, 409, 429, 5xx, Anthropic's 529 (overloaded) and
transport errors, unless the API says ``x-should-retry: false``; the wait is the
server's ``retry-after-ms`` / ``retry-after`` when given, else exponential backoff with
jitter. Each attempt is bounded by ``timeout_s``; the gateway bounds the whole call by the
investigation's deadline, and cancelling the task cancels the HTTP request.

Structured outputs use the API's native JSON-schema output format (constrained
decoding, ``output_config.format``): unlike a forced tool it is allowed while extended
thinking is on, and the answer comes back as JSON text the gateway parses as it does
Gemini's — with its one repair turn for an answer pydantic refuses (a range the API
does not enforce). ``structured_outputs = "text"`` is for models without it.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import anthropic
from google.genai import types

from agent.errors import LLMUnavailable
from agent.model.anthropic_reply import to_response
from agent.model.anthropic_request import build_request
from agent.model.anthropic_schema import SchemaRefused
from agent.model.retry import Failure, RetryPolicy, with_retries
from config.anthropic_settings import AnthropicSettings
from config.settings import ConfigError, Settings
from tools.retry_after import retry_after

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class AnthropicBackend:
    """One ``AsyncAnthropic`` (or Bedrock / Vertex) client plus our bounded retries."""

    def __init__(self, client: Any, settings: AnthropicSettings) -> None:
        self.client = client
        self.settings = settings

    @classmethod
    def from_settings(cls, settings: Settings, *, http_client: Any = None) -> AnthropicBackend:
        """The client ``settings.anthropic`` describes; ``ConfigError`` without credentials.

        ``http_client`` (an ``anthropic.DefaultAsyncHttpxClient``) replaces the SDK's own.
        """
        own = settings.anthropic
        common: dict[str, Any] = {
            "max_retries": 0,  # ours is the only retry loop
            "timeout": own.timeout_s,
            "http_client": http_client,
        }
        client: Any
        if own.platform == "bedrock":  # AWS credentials as boto3 finds them
            client = anthropic.AsyncAnthropicBedrock(aws_region=own.aws_region, **common)
        elif own.platform == "vertex":  # Google application default credentials
            if own.vertex_project:
                common["project_id"] = own.vertex_project  # else the SDK asks ADC
            region = own.vertex_region or os.environ.get("CLOUD_ML_REGION") or "global"
            client = anthropic.AsyncAnthropicVertex(region=region, **common)
        else:
            key = os.environ.get(own.api_key_env)
            if not key:
                raise ConfigError(
                    f"No Anthropic API key: set {own.api_key_env}, or choose "
                    "anthropic.platform = 'bedrock' or 'vertex'."
                )
            client = anthropic.AsyncAnthropic(api_key=key, base_url=own.base_url, **common)
        return cls(client, own)

    async def aclose(self) -> None:
        """Close the SDK client (and its HTTP client)."""
        await self.client.close()

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        """One Messages API call with bounded retries; errors become ``LLMUnavailable``."""
        try:
            request = build_request(model, contents, config, self.settings)
        except SchemaRefused as exc:
            raise LLMUnavailable(f"A schema cannot be sent to Anthropic: {exc}.") from exc
        message = await self._create(model, request.params)
        return to_response(message, request.names)

    async def _create(self, model: str, params: dict[str, Any]) -> Any:
        def classify(exc: Exception) -> Failure:
            if isinstance(exc, anthropic.APIStatusError):
                if not _retryable(exc):
                    raise LLMUnavailable(_rejection(exc, model)) from exc
                problem = f"HTTP {exc.status_code} {_error_type(exc)}".strip()
                return Failure(problem, server_delay(exc.response.headers), exc)
            if isinstance(exc, anthropic.APIConnectionError | TimeoutError):
                return Failure(type(exc).__name__, None, exc)
            raise exc

        s = self.settings
        policy = RetryPolicy(
            "Anthropic", "rate limiting or overloaded", s.max_retries, s.retry_initial_s,
            s.max_retry_wait_s, s.timeout_s,
        )  # fmt: skip
        return await with_retries(
            lambda: self.client.messages.create(**params), policy, model, classify
        )


def _retryable(exc: anthropic.APIStatusError) -> bool:
    said = exc.response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return exc.status_code in RETRY_STATUS


def server_delay(headers: Any) -> float | None:
    """Seconds the API asked us to wait (``retry-after-ms``, else ``retry-after``)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    header = headers.get("retry-after")
    return (retry_after(header) or 0.0) if header else None


def _error_type(exc: anthropic.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(error.get("type") or "") if isinstance(error, dict) else ""


def _rejection(exc: anthropic.APIStatusError, model: str) -> str:
    """One sentence for a request Anthropic refused outright."""
    code = exc.status_code
    if code == 401:
        return "Anthropic rejected the API key; check ANTHROPIC_API_KEY (anthropic.api_key_env)."
    if code == 403:
        return "Anthropic refused access (403); check the key's workspace and model permissions."
    if code == 404:
        return f"Anthropic does not know the model {model!r}; check the model name."
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    said = error.get("message") if isinstance(error, dict) else None
    message = str(said or exc.message or "no details").strip()
    first = message.splitlines()[0][:200] if message else "no details"
    return f"Anthropic rejected the request ({code} {_error_type(exc)}): {first}"
