"""The Slack Web API client socbot posts with.

The client talks to ``slack.api_url`` (``SOCBOT_SLACK_API_URL``; enterprise
proxies, tests) or Slack itself, and retries — boundedly — what Slack asks to be
retried: 429 after ``Retry-After`` (unless Slack asks for longer than
``max_retry_after_s``), 5xx and dropped connections with exponential backoff.
"""

from __future__ import annotations

import asyncio
import logging
import random

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.interval_calculator import RetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from bot.observe import metrics
from config.settings import SlackSettings
from tools.retry_after import retry_after as parse_retry_after

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"
MAX_RETRIES = 3
MAX_RETRY_AFTER_S = 30.0
BACKOFF_S = 0.5


class Backoff(RetryIntervalCalculator):
    """``base * 2**attempt`` with up to 25 % jitter (never more than the base allows)."""

    def __init__(self, base_s: float) -> None:
        self.base_s = base_s

    def calculate_sleep_duration(self, current_attempt: int) -> float:
        interval = float(self.base_s * 2 ** int(current_attempt))
        return interval * (1 + random.random() / 4)


class RateLimitRetry(AsyncRateLimitErrorRetryHandler):
    """429: wait ``Retry-After`` seconds, if that is at most ``max_wait_s``."""

    def __init__(self, max_retry_count: int, max_wait_s: float) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_s = max_wait_s

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        metrics.SLACK_RATE_LIMITED.inc()
        wait = retry_after(response)
        if wait > self.max_wait_s:
            log.warning("Slack asks to wait %.0fs; not retrying", wait)
            return False
        return True

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        wait = retry_after(response) if response is not None else 1.0
        log.info("Slack rate limit: retrying in %.1fs", wait)
        metrics.SLACK_RETRIES.labels("rate_limit").inc()
        state.next_attempt_requested = True
        await asyncio.sleep(wait + random.random() * 0.05)
        state.increment_current_attempt()


class ServerErrorRetry(AsyncRetryHandler):
    """5xx from Slack (or a proxy in front of it): exponential backoff."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is not None and 500 <= response.status_code <= 599:
            metrics.SLACK_RETRIES.labels("server_error").inc()
            return True
        return False


def retry_after(response: HttpResponse) -> float:
    """The ``Retry-After`` header in seconds (1 when absent or unreadable)."""
    for name, values in response.headers.items():
        if name.lower() == "retry-after" and values:
            wait = parse_retry_after(values[0])
            return 1.0 if wait is None else wait
    return 1.0


def build_client(
    slack: SlackSettings,
    *,
    max_retries: int = MAX_RETRIES,
    max_retry_after_s: float = MAX_RETRY_AFTER_S,
    backoff_s: float = BACKOFF_S,
) -> AsyncWebClient:
    """The Web API client for ``slack.bot_token`` at ``slack.api_url`` (or Slack's)."""
    token = slack.bot_token.get_secret_value() if slack.bot_token else None
    base_url = slack.api_url or DEFAULT_API_URL
    if not base_url.endswith("/"):
        base_url += "/"
    backoff = Backoff(backoff_s)
    handlers: list[AsyncRetryHandler] = [
        AsyncConnectionErrorRetryHandler(max_retry_count=max_retries, interval_calculator=backoff),
        RateLimitRetry(max_retries, max_retry_after_s),
        ServerErrorRetry(max_retry_count=max_retries, interval_calculator=backoff),
    ]
    return AsyncWebClient(token=token, base_url=base_url, timeout=30, retry_handlers=handlers)
