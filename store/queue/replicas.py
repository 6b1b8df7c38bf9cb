"""Which replicas are alive: each worker beats (``replicas.seen_at``) every third of a
lease, so that work a replica began outside the work queue (an alert it admitted and is
posting the card of: ``alerts.launch_by``) is taken over once that replica stops beating.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from store.db.engine import Database
from store.schema import ReplicaRow, utcnow


async def beat(session: AsyncSession, name: str, now: datetime) -> None:
    """Record that ``name`` is alive at ``now`` (in the caller's transaction)."""
    await session.run_sync(beat_in, name, now)


def beat_in(session: Session, name: str, now: datetime) -> None:
    """``beat`` on a synchronous session (``Database.write``)."""
    row = session.get(ReplicaRow, name)
    if row is None:
        session.add(ReplicaRow(name=name, seen_at=now))
    else:
        row.seen_at = now


def alive(now: datetime, lease: timedelta) -> Select[str]:
    """The names of replicas seen within ``lease`` of ``now`` (a sub-query)."""
    return select(ReplicaRow.name).where(ReplicaRow.seen_at >= now - lease)


class Replicas:
    """Beats of one database's replicas."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def now(self) -> datetime:
        now = utcnow()
        return now.replace(tzinfo=None) if self.db.is_sqlite else now  # SQLite: naive UTC

    async def beat(self, name: str) -> None:
        """``name`` is alive now."""
        async with self.db.session() as session:
            await beat(session, name, self.now())
