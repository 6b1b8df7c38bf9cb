"""How webhook deliveries stand, for ``socbot doctor`` and ``/metrics``.

Deliveries are ``notify`` rows of the work queue (``bot.notify.notifier``): waiting (queued,
possibly after a failed attempt: ``error`` says why), being sent, delivered, or failed
for good. ``delivery_status`` counts them and names the latest failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from store.db.engine import Database
from store.schema import WorkKind, WorkRow, WorkState

NOTIFY_KIND = WorkKind.NOTIFY


@dataclass(frozen=True)
class DeliveryStatus:
    queued: int  # waiting to be sent
    retrying: int  # of those, waiting after a failed attempt
    running: int
    delivered: int
    failed: int  # given up: the receiver refused them or kept failing
    last_error: str | None  # of the newest failed or retrying delivery

    def counts(self) -> dict[str, int]:
        """By state, for ``/metrics``."""
        return {
            "queued": self.queued,
            "retrying": self.retrying,
            "running": self.running,
            "delivered": self.delivered,
            "failed": self.failed,
        }

    @property
    def healthy(self) -> bool:
        return self.failed == 0 and self.retrying == 0


async def delivery_status(db: Database) -> DeliveryStatus:
    """Counts of webhook deliveries by state (one query each way, indexed by state)."""
    notify = WorkRow.kind == NOTIFY_KIND
    async with db.session() as session:
        rows = await session.execute(
            select(WorkRow.state, func.count()).where(notify).group_by(WorkRow.state)
        )
        counts = {str(state): int(n) for state, n in rows.all()}
        retrying = await session.scalar(
            select(func.count()).where(
                notify, WorkRow.state == WorkState.QUEUED, WorkRow.error.is_not(None)
            )
        )
        last_error = await session.scalar(
            select(WorkRow.error)
            .where(
                notify,
                WorkRow.error.is_not(None),
                WorkRow.state.in_((WorkState.QUEUED, WorkState.FAILED)),
            )
            .order_by(WorkRow.id.desc())
            .limit(1)
        )
    return DeliveryStatus(
        queued=counts.get(WorkState.QUEUED, 0),
        retrying=int(retrying or 0),
        running=counts.get(WorkState.RUNNING, 0),
        delivered=counts.get(WorkState.DONE, 0),
        failed=counts.get(WorkState.FAILED, 0),
        last_error=last_error,
    )
