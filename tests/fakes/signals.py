"""Waiting on what the fakes record, never on the clock.

A fake that records something (a Web API call, a model request, an ack) calls
``Changes.notify()``; a test waits with ``await changes.until(check)``, which
re-checks ``check()`` after every notification and returns as soon as it holds. The
time limit is only an upper bound for a test that would otherwise hang: it is
generous, so a loaded machine makes a test slower, never failing. ``check`` must
read what the notifier records (a change made after its last notification, e.g. by
the app once it has read the fake's answer, wakes nobody). ``check`` may be async (a
query): a notification while it runs makes it run again.

``writes(db)`` is notified after each committed write to the database: tests wait on
rows (work, alert statuses, learning runs) with ``await writes(db).until(check)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from store.db.engine import Database

WAIT_S = 30.0


class Changes:
    """A notification that something was recorded; ``until`` waits for a condition."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        """Wake every waiter (each re-checks its condition)."""
        self._event.set()
        self._event = asyncio.Event()

    async def until(
        self, check: Callable[[], bool | Awaitable[bool]], within_s: float = WAIT_S
    ) -> None:
        """Return once ``check()`` holds, re-checked after each ``notify()``."""
        try:
            async with asyncio.timeout(within_s):
                while True:
                    changed = self._event  # a notification during an async check is kept
                    result = check()
                    if result if isinstance(result, bool) else await result:
                        return
                    await changed.wait()
        except TimeoutError:
            raise AssertionError(f"condition not met within {within_s} s") from None


def writes(*dbs: Database) -> Changes:
    """A ``Changes`` notified after each committed write to any of ``dbs``."""
    changes = Changes()
    for db in dbs:
        db.watch_writes(changes.notify)
    return changes
