"""Pace new Slack messages per channel: about one ``chat.postMessage`` per second.

Slack allows roughly one message per second per channel (bursts are tolerated,
sustained floods get HTTP 429). ``Pacer.slot(channel)`` hands out start times in
call order (FIFO): the first caller in a quiet channel goes at once, each next
one ``1 / rate_per_s`` seconds after the previous. Different channels never wait
for each other. Updates of an existing message (``chat.update``) do not go
through the pacer; ``bot.progress`` coalesces them per message instead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class Pacer:
    """Per-channel FIFO spacing of new messages. Share one per Slack workspace."""

    def __init__(
        self, rate_per_s: float = 1.0, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError(f"rate_per_s must be positive, got {rate_per_s!r}")
        self.interval = 1.0 / rate_per_s
        self._clock = clock
        self._next: dict[str, float] = {}

    def _reserve(self, channel: str) -> float:
        """Book the next free start time for ``channel``; returns seconds to wait."""
        now = self._clock()
        if len(self._next) > 1000:  # forget channels that have been quiet
            self._next = {c: t for c, t in self._next.items() if t > now}
        start = max(now, self._next.get(channel, now))
        self._next[channel] = start + self.interval
        return start - now

    @asynccontextmanager
    async def slot(self, channel: str) -> AsyncIterator[None]:
        """Wait for this caller's turn to post in ``channel`` (FIFO), then post inside."""
        delay = self._reserve(channel)
        if delay > 0:
            await asyncio.sleep(delay)
        yield
