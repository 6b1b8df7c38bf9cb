"""``every``: a replica's own timer that asks for work now and every period, until
stopped (pruning, case reminders, the weekly digest). A failed turn is logged and the
next turn tries again; stopping wakes the wait at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


async def every(
    period_s: float, stopped: asyncio.Event, turn: Callable[[], Awaitable[object]], what: str
) -> None:
    """Run ``turn`` now and every ``period_s`` until ``stopped`` is set; a failure is
    logged as "could not ``what``" (fail open: tried again on the next turn)."""
    while not stopped.is_set():
        try:
            await turn()
        except Exception:
            log.exception("could not %s", what)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopped.wait(), period_s)
