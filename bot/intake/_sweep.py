"""A triage's sweep on a timer of its own (``bot.intake.triage``), so that nothing waits after a
crash: alerts stored but never placed (``received``: the process that answered 202 died
before triage) are placed, and alerts a dead replica was launching go back to be
admitted again, in order, within a lease and a sweep of the replica's last beat.

A ``received`` alert is left ``grace_s`` (two sweep periods) to the process that stored
it, which dispatches it itself, policy first (an alert answered by the acknowledging
front: once it is handed over, ``bot.intake.alert_handover``); only then is it the
sweep's. Two placings never happen (placing is done once), but a sweep placing an alert
whose hand-over was still on its way would skip the alert policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

GRACE_PERIODS = 2  # sweep periods a received alert waits for its own dispatch


class Sweeper:
    """Calls ``sweep`` every ``period_s`` until ``stop``; never cancelled mid-transaction."""

    def __init__(self, sweep: Callable[[], Awaitable[None]], period_s: float, name: str) -> None:
        self.sweep = sweep
        self.period_s = period_s
        self.name = name
        self._stopped = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def grace_s(self) -> float:
        """How long a ``received`` alert is left to its own dispatch (see the docstring)."""
        return GRACE_PERIODS * self.period_s

    def start(self) -> None:
        if self._task is None and not self._stopped.is_set():
            self._task = asyncio.create_task(self._loop(), name=self.name)

    def stop(self) -> None:
        """No sweep after the one in progress (if any)."""
        self._stopped.set()

    async def close(self) -> None:
        self.stop()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _loop(self) -> None:
        while not self._stopped.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.period_s)
            if self._stopped.is_set():
                return
            try:
                await self.sweep()
            except Exception:  # fail open: the database may be back on the next turn
                log.exception("%s: sweep failed", self.name)
