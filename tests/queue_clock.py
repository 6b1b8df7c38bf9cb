"""A work queue on a clock the test moves forward, for tests of leases and retry delays.

A lease of a second, waited out with a sleep, lapses early whenever a loaded machine
starves the replica that renews it, and a delay of 0.2 s is over before the next
statement runs. With ``AheadQueue`` leases are long (``LEASE_S``) and a test moves past
them (``move``) exactly when it means to: wall-clock time plus ``ahead``, the real
queue otherwise. Every replica sharing one ``AheadQueue`` sees the same clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from store.queue.work import WorkQueue

LEASE_S = 30.0  # far longer than any pause of a loaded machine between two statements


class AheadQueue(WorkQueue):
    """The real queue on wall-clock time plus ``ahead``, which the test moves forward."""

    ahead = timedelta(0)

    def _now(self) -> datetime:
        return super()._now() + self.ahead

    def move(self, seconds: float) -> None:
        """Move this queue's clock ``seconds`` forward."""
        self.ahead += timedelta(seconds=seconds)
