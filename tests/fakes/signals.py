"""Waiting on what the fakes record, never on the clock.

A fake that records something (a Web API call, a model request, an ack) calls
``Changes.notify()``; a test waits with ``await changes.until(check)``, which
re-checks ``check()`` after every notification and returns as soon as it holds. The
time limit is only an upper bound for a test that would otherwise hang: it is
generous, so a loaded machine makes a test slower, never failing. ``check`` must
read what the notifier records (a change made after its last notification, e.g. by
the app once it has read the fake's answer, wakes nobody).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

WAIT_S = 30.0


class Changes:
    """A notification that something was recorded; ``until`` waits for a condition."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        """Wake every waiter (each re-checks its condition)."""
        self._event.set()
        self._event = asyncio.Event()

    async def until(self, check: Callable[[], bool], within_s: float = WAIT_S) -> None:
        """Return once ``check()`` holds, re-checked after each ``notify()``."""
        try:
            async with asyncio.timeout(within_s):
                while not check():
                    await self._event.wait()
        except TimeoutError:
            raise AssertionError(f"condition not met within {within_s} s") from None
