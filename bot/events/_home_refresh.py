"""When App Homes are published again (``bot.events.home``): who opened theirs lately, and
at most one publish per person per ``every_s``, changes in between coalesced.

Kept in this replica's memory: who opened Home (the ``REMEMBERED`` most recent people, for
``REMEMBER_S``) and when each Home was last published. A restart forgets them — the next
opening of the Home tab publishes it again — and a change told on another replica
refreshes the Homes that replica saw opened. A change re-publishes at most ``most``
people's Homes (the most recent openers), so one change never becomes a publish storm.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable

log = logging.getLogger(__name__)

REMEMBER_S = 3600.0  # a Home opened longer ago is not refreshed any more
REMEMBERED = 1000  # people remembered at most
MOST = 50  # Homes re-published for one change at most

Publish = Callable[[str], Awaitable[None]]


class Refresher:
    """Debounced re-publishing of the Homes of people who opened theirs lately."""

    def __init__(
        self,
        publish: Publish,
        *,
        every_s: float,
        remember_s: float = REMEMBER_S,
        most: int = MOST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.publish = publish
        self.every_s = every_s
        self.remember_s = remember_s
        self.most = most
        self.clock = clock
        self._opened: OrderedDict[str, float] = OrderedDict()  # oldest first
        self._last: dict[str, float] = {}  # when each Home was last published
        self._due: dict[str, asyncio.TimerHandle] = {}
        self._running: set[asyncio.Task[None]] = set()

    def opened(self, user: str) -> None:
        """``user`` opened their Home tab now."""
        self._opened[user] = self.clock()
        self._opened.move_to_end(user)
        while len(self._opened) > REMEMBERED:
            gone, _ = self._opened.popitem(last=False)
            self._last.pop(gone, None)

    def fresh(self, user: str) -> bool:
        """Whether ``user``'s Home was published less than ``every_s`` ago or is due."""
        return user in self._due or self.clock() - self._last.get(user, -math.inf) < self.every_s

    def published(self, user: str) -> None:
        self._last[user] = self.clock()

    def recent(self) -> list[str]:
        """Who opened their Home within ``remember_s``, the most recent first."""
        now = self.clock()
        return [u for u, at in reversed(self._opened.items()) if now - at <= self.remember_s]

    def soon(self, users: Iterable[str]) -> list[str]:
        """Publish the Homes of ``users`` (the first ``most``) once ``every_s`` has passed
        since each was last published; one already due stays as it is. Who was newly
        scheduled."""
        scheduled: list[str] = []
        loop = asyncio.get_running_loop()
        now = self.clock()
        for user in list(users)[: self.most]:
            if user in self._due:
                continue  # coalesced into the publish already due
            wait = max(0.0, self._last.get(user, -math.inf) + self.every_s - now)
            self._due[user] = loop.call_later(wait, self._start, user)
            scheduled.append(user)
        return scheduled

    def due(self) -> dict[str, float]:
        """Whose Homes wait to be published again, in how many seconds (the loop's clock)."""
        now = asyncio.get_running_loop().time()
        return {user: handle.when() - now for user, handle in self._due.items()}

    def _start(self, user: str) -> None:
        self._due.pop(user, None)
        task = asyncio.create_task(self._publish(user), name=f"home {user}")
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _publish(self, user: str) -> None:
        try:
            await self.publish(user)
        except Exception:  # fail open: the next change or opening publishes it again
            log.exception("could not publish %s's Home", user)

    async def close(self) -> None:
        for handle in self._due.values():
            handle.cancel()
        self._due.clear()
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
