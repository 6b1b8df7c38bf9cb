"""When App Homes are published again (``bot.events.home``): at most one publish per
person per ``every_s``, changes in between coalesced, at most ``most`` people a change (the
most recent openers: who opened their Home lately is in the database,
``store.cases.home_openers``), so one change never becomes a publish storm.

When each Home was last published is kept in this replica's memory: each replica keeps
its own pace (with two replicas a person's Home may be published twice in ``every_s``),
and a restart forgets it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable

log = logging.getLogger(__name__)

REMEMBER_S = 3600.0  # a Home opened longer ago is not refreshed any more
REMEMBERED = 1000  # openers read at most, publish times kept at most (then pruned)
MOST = 50  # Homes re-published for one change at most

Publish = Callable[[str], Awaitable[None]]


class Refresher:
    """Debounced re-publishing of Homes, each at most once per ``every_s``."""

    def __init__(
        self,
        publish: Publish,
        *,
        every_s: float,
        most: int = MOST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.publish = publish
        self.every_s = every_s
        self.most = most
        self.clock = clock
        self._last: dict[str, float] = {}  # when each Home was last published
        self._due: dict[str, asyncio.TimerHandle] = {}
        self._running: set[asyncio.Task[None]] = set()

    def fresh(self, user: str) -> bool:
        """Whether ``user``'s Home was published less than ``every_s`` ago or is due."""
        return user in self._due or self.clock() - self._last.get(user, -math.inf) < self.every_s

    def published(self, user: str) -> None:
        now = self._last[user] = self.clock()
        if len(self._last) > REMEMBERED:  # only a publish within ``every_s`` holds one back
            self._last = {u: at for u, at in self._last.items() if now - at < self.every_s}

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
