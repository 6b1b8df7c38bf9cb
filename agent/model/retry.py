"""One bounded retry policy for every model backend (Gemini, Anthropic, OpenAI).

Each attempt is bounded by ``timeout_s``. A failure the backend's ``classify`` calls
retryable (a ``Failure``: what went wrong, and the wait the server asked for, if any) is
retried up to ``retries`` times; every other failure is raised by ``classify`` itself
(translated into the engine's errors). The wait is the server's (``Retry-After``,
``retry-after-ms``, ``RetryInfo.retryDelay``) unless it asks for longer than
``max_wait_s`` — then the call fails at once instead of sleeping — else exponential
backoff with jitter from ``initial_s``, capped at ``max_wait_s``. Each retry is logged
naming the provider; the gateway bounds the whole call by the investigation's deadline.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from agent.errors import LLMUnavailable

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """A failure worth another attempt."""

    problem: str  # for the log line and the error ("HTTP 503 UNAVAILABLE", "ConnectError")
    asked: float | None  # seconds the server asked to wait; None: it did not say
    cause: Exception


@dataclass(frozen=True)
class RetryPolicy:
    provider: str  # "Gemini", "Anthropic", "The OpenAI endpoint"
    busy: str  # what a retry-after says: "rate limiting or unavailable"
    retries: int
    initial_s: float
    max_wait_s: float
    timeout_s: float | None = None  # each attempt; None: the client's own timeout

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter, capped at ``max_wait_s``."""
        base = min(self.max_wait_s, self.initial_s * 2.0**attempt)
        return base * random.uniform(0.5, 1.0)

    def wait(self, failure: Failure, attempt: int, model: str) -> float:
        """Seconds before the next attempt; ``LLMUnavailable`` when there is none."""
        retries = max(0, self.retries)
        if failure.asked is not None and failure.asked > self.max_wait_s:
            raise LLMUnavailable(
                f"{self.provider} is {self.busy} ({failure.problem}) and asks to retry in "
                f"{failure.asked:.0f}s, longer than the {self.max_wait_s:.0f}s "
                "this investigation may wait."
            ) from failure.cause
        if attempt >= retries:
            raise LLMUnavailable(
                f"{self.provider} is unavailable ({failure.problem}) after {retries + 1} attempts."
            ) from failure.cause
        wait = failure.asked if failure.asked is not None else self.backoff(attempt)
        log.warning(
            "%s call to %s failed (%s), retry %d/%d in %.2fs",
            self.provider,
            model,
            failure.problem,
            attempt + 1,
            retries,
            wait,
        )
        return wait


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    model: str,
    classify: Callable[[Exception], Failure],
) -> T:
    """``await call()`` under ``policy``; ``classify`` raises what is not worth retrying."""
    attempt = 0
    while True:
        try:
            async with asyncio.timeout(policy.timeout_s):
                return await call()
        except Exception as exc:  # classify re-raises (translated) whatever it does not retry
            failure = classify(exc)
        await asyncio.sleep(policy.wait(failure, attempt, model))
        attempt += 1
