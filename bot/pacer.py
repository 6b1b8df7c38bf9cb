"""Pace Slack writes: new messages per channel, and edits per workspace.

Slack allows roughly one message per second per channel (bursts are tolerated,
sustained floods get HTTP 429). ``Pacer.slot(channel)`` hands out start times in
call order (FIFO): the first caller in a quiet channel goes at once, each next
one ``1 / rate_per_s`` seconds after the previous. Different channels never wait
for each other.

Edits of an existing message (``chat.update``, Slack tier 3: about 50 a minute per
workspace) take a different path: ``bot.progress`` coalesces them per message (at
most one a second, latest state wins) and every sink shares this pacer's
``update_slot()``, a FIFO token bucket of ``updates_per_min`` with a small burst, so
several investigations running at once stay inside the workspace budget.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class Pacer:
    """Per-channel FIFO spacing of new messages and a shared budget for edits.

    Share one per Slack workspace (one bot token).
    """

    def __init__(
        self,
        rate_per_s: float = 1.0,
        *,
        updates_per_min: float = 50.0,
        update_burst: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate_per_s <= 0 or updates_per_min <= 0 or update_burst < 1:
            raise ValueError(
                f"rate_per_s and updates_per_min must be positive, got {rate_per_s!r}, "
                f"{updates_per_min!r} (burst {update_burst!r})"
            )
        self.interval = 1.0 / rate_per_s
        self._clock = clock
        self._next: dict[str, float] = {}
        self._update_rate = updates_per_min / 60.0
        self._burst = float(update_burst)
        self._tokens = float(update_burst)  # may go negative: callers queued behind
        self._refilled = clock()

    def _reserve(self, channel: str) -> float:
        """Book the next free start time for ``channel``; returns seconds to wait."""
        now = self._clock()
        if len(self._next) > 1000:  # forget channels that have been quiet
            self._next = {c: t for c, t in self._next.items() if t > now}
        start = max(now, self._next.get(channel, now))
        self._next[channel] = start + self.interval
        return start - now

    def _reserve_update(self) -> float:
        """Take one edit token (FIFO); returns seconds until it is really available."""
        now = self._clock()
        elapsed, self._refilled = now - self._refilled, now
        self._tokens = min(self._burst, self._tokens + elapsed * self._update_rate)
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self._update_rate

    @asynccontextmanager
    async def slot(self, channel: str) -> AsyncIterator[None]:
        """Wait for this caller's turn to post in ``channel`` (FIFO), then post inside."""
        delay = self._reserve(channel)
        if delay > 0:
            await asyncio.sleep(delay)
        yield

    @asynccontextmanager
    async def update_slot(self) -> AsyncIterator[None]:
        """Wait for a share of the workspace's ``chat.update`` budget, then edit inside."""
        delay = self._reserve_update()
        if delay > 0:
            await asyncio.sleep(delay)
        yield
