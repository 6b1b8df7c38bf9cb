"""Data lifetime as background work: one replica prunes, in batches, below all else.

Every replica looks every ``retention.interval_s`` (and at start) whether pruning is
due (``store.retention.request_prune``: no prune row waiting or running, none finished
within the interval) and queues a ``prune`` row; whichever worker claims it runs
``Pruner.prune`` in the background pool (never an investigation's slot, only when no
alert or request waits for one), a short transaction per batch. Nothing is said in
Slack; the counts go to the log.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from bot.work.learning import Silent
from bot.work.periodic import every
from bot.work.worker import Coordinator, ThreadRef
from store.queue.types import PRUNE_KIND
from store.queue.work import Work
from store.retention import Pruner, request_prune

log = logging.getLogger(__name__)


class PruneWork:
    """Queues prune rows when due and runs them (a ``Runner`` for the ``prune`` kind)."""

    def __init__(self, pruner: Pruner, coordinator: Coordinator) -> None:
        self.pruner = pruner
        self.coordinator = coordinator
        self.interval = timedelta(seconds=pruner.settings.interval_s)
        self._stopped = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        coordinator.register({PRUNE_KIND: self}, reporter=Silent())

    def start(self) -> None:
        if self._loop is None:
            self._loop = asyncio.create_task(self._schedule(), name="prune schedule")

    async def close(self) -> None:
        self._stopped.set()
        if self._loop is not None:
            await asyncio.gather(self._loop, return_exceptions=True)

    async def _schedule(self) -> None:
        await every(self.interval.total_seconds(), self._stopped, self._request, "queue pruning")

    async def _request(self) -> None:
        if await request_prune(self.pruner.db, self.interval) is not None:
            self.coordinator.nudge()

    async def run(self, thread: ThreadRef, work: Work) -> None:
        deleted = await self.pruner.prune()
        log.info("pruned past their lifetime: %s", {k: n for k, n in deleted.items() if n})

    async def dropped(self, work: Work) -> None:
        log.info("pruning row %s ended without running", work.id)
