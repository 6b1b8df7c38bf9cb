"""Pace Slack writes: new messages per channel, and edits per workspace.

Slack allows roughly one message per second per channel (bursts are tolerated,
sustained floods get HTTP 429). ``Pacer.slot(channel)`` hands out start times one
``1 / rate_per_s`` apart per channel: the first caller in a quiet channel goes at
once, the others wait their turn. Different channels never wait for each other.

Turns are given in two classes, FIFO within each: messages of investigations that
are running (status message, conclusion, errors, replies to a person) go first;
``slot(channel, background=True)`` — alert cards and queue notices — waits until no
such message is waiting in the channel. So a backlog of cards during an alert storm
never starves the conclusions of the investigations already running. A caller
cancelled while waiting gives its turn up (nothing is posted).

Edits of an existing message (``chat.update``, Slack tier 3: about 50 a minute per
workspace) take a different path: ``bot.slack.progress`` coalesces them per message (at
most one a second, latest state wins) and every sink shares this pacer's
``update_slot()``, a FIFO token bucket of ``updates_per_min`` with a small burst, so
several investigations running at once stay inside the workspace budget.
``update_slot(background=True)`` (alert group cards, the storm message) takes a token
only while at least one more is left for the live status of running investigations,
so many edited cards never delay those.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


@dataclass
class _Channel:
    """One channel's turn keeping: next free start time and who waits, best first."""

    next_at: float
    waiting: list[tuple[int, int, asyncio.Future[None]]] = field(default_factory=list)
    pump: asyncio.Task[None] | None = None


class Pacer:
    """Per-channel spacing of new messages (urgent first) and a shared budget for edits.

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
        self._channels: dict[str, _Channel] = {}
        self._order = itertools.count()
        self._update_rate = updates_per_min / 60.0
        self._burst = float(update_burst)
        self._tokens = float(update_burst)  # may go negative: callers queued behind
        self._refilled = clock()

    def waiting(self, channel: str) -> int:
        """How many posts wait for a turn in ``channel`` (both classes)."""
        state = self._channels.get(channel)
        return 0 if state is None else sum(1 for *_, f in state.waiting if not f.done())

    def _state(self, channel: str) -> _Channel:
        now = self._clock()
        if len(self._channels) > 1000:  # forget channels that have been quiet
            self._channels = {
                c: s for c, s in self._channels.items() if s.next_at > now or s.waiting
            }
        return self._channels.setdefault(channel, _Channel(next_at=now))

    def _take(self, state: _Channel) -> None:
        now = self._clock()
        state.next_at = max(now, state.next_at) + self.interval

    async def _pump(self, state: _Channel) -> None:
        """Hand out the channel's turns, best waiter first, one per interval."""
        try:
            while state.waiting:
                delay = state.next_at - self._clock()
                if delay > 0:
                    await asyncio.sleep(delay)
                while state.waiting:
                    *_, turn = heapq.heappop(state.waiting)
                    if not turn.done():  # a cancelled waiter gave its turn up
                        self._take(state)
                        turn.set_result(None)
                        break
        finally:
            state.pump = None

    def _refill(self) -> None:
        now = self._clock()
        elapsed, self._refilled = now - self._refilled, now
        self._tokens = min(self._burst, self._tokens + elapsed * self._update_rate)

    def _reserve_update(self) -> float:
        """Take one edit token (FIFO); returns seconds until it is really available."""
        self._refill()
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self._update_rate

    @asynccontextmanager
    async def slot(self, channel: str, *, background: bool = False) -> AsyncIterator[None]:
        """Wait for this caller's turn to post in ``channel``, then post inside.

        ``background`` posts (cards, notices) go only when no urgent post is waiting.
        """
        state = self._state(channel)
        if not state.waiting and state.next_at <= self._clock():
            self._take(state)  # a quiet channel: go at once
        else:
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(state.waiting, (int(background), next(self._order), turn))
            if state.pump is None:
                state.pump = asyncio.create_task(self._pump(state), name=f"pacer {channel}")
            await turn
        yield

    @asynccontextmanager
    async def update_slot(self, *, background: bool = False) -> AsyncIterator[None]:
        """Wait for a share of the workspace's ``chat.update`` budget, then edit inside.

        ``background`` edits wait while fewer than two tokens are left (one stays spare).
        """
        if background:
            while True:
                self._refill()
                if self._tokens >= 2.0:
                    self._tokens -= 1.0
                    break
                await asyncio.sleep((2.0 - self._tokens) / self._update_rate)
        else:
            delay = self._reserve_update()
            if delay > 0:
                await asyncio.sleep(delay)
        yield
