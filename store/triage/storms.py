"""A channel's alert storm in the database, so that every replica triages alike.

One ``StormStore`` per triage channel (``bot.intake.triage``). Its decisions are transactions
holding the channel's lock — on PostgreSQL a transaction-level advisory lock keyed by
the channel, on SQLite the one writer's ``BEGIN IMMEDIATE`` transaction — so that
replicas receiving alerts at the same moment take turns:

* ``place`` — a new alert (``received``: stored, not yet placed) joins the group of
  its key started within the grouping window (``alert_groups``), or leads a new group:
  ``queued`` while fewer than ``capacity`` alerts of the storm are queued or
  investigating and none is deferred, else ``deferred``. Once only: the replica that
  places it launches it. It joins the channel's open storm (``alert_storms``; one per
  channel, a partial unique index), opening one when the channel was idle.
* ``admit`` — deferred alerts of the storm become ``queued``, most severe first,
  while there is room (first, alerts that a dead replica left half-launched are
  deferred again: ``requeue_stale``). A queued alert names its launching replica
  (``launch_by``, which beats: ``store.queue.replicas``) until its work row exists.
* ``move`` — an alert's new status; the storm ends when none of its alerts is queued,
  investigating or deferred any more.

A storm's counts are its alerts counted by status. Who posts its storm message and
its groups' cards: ``store.triage.storm_posts``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.db.engine import Database
from store.schema import AlertRow, AlertStatus, AlertStorm, utcnow
from store.triage import _placing
from store.triage._placing import Channel, Placed
from store.triage._stale import requeue_stale
from store.triage.alerts import StoredAlert, stored_alert
from store.triage.states import ACTIVE, in_channel, severity_rank

__all__ = ["Placed", "StormStore", "StormView"]


@dataclass(frozen=True)
class StormView:
    """A storm as stored: counts by status, its storm message, whether it is over."""

    id: int
    since: datetime
    over: bool
    board_ts: str | None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def waiting(self) -> int:
        return self.counts.get(AlertStatus.QUEUED, 0) + self.counts.get(AlertStatus.DEFERRED, 0)


class StormStore:
    """The storm state of ``channel`` (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        channel: str,
        *,
        capacity: int,
        window_s: float,
        replica: str | None = None,
        lease_s: float = 30.0,
    ) -> None:
        self.db = db
        self.channel = channel
        self.capacity = capacity
        self.window = timedelta(seconds=window_s)
        self.replica = replica  # launches what this store queues (``launch_by``)
        self.lease = timedelta(seconds=lease_s)  # a replica silent this long is dead
        self.facts = Channel(channel, capacity, self.window, replica, db.is_sqlite)
        # this process's decisions take turns before they take a connection: on PostgreSQL
        # a storm's placements would otherwise each hold one, waiting for the channel's lock
        self._turn = asyncio.Lock()

    def _now(self) -> datetime:
        now = utcnow()
        return now.replace(tzinfo=None) if self.db.is_sqlite else now  # SQLite: naive UTC

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[AsyncSession]:
        """A transaction holding the channel's lock (SQLite: the write lock)."""
        async with self._turn, self.db.session() as session:
            await session.run_sync(_placing.lock, self.facts)
            yield session

    async def place(
        self, alert_id: str, key: str, *, thread_ts: str | None = None
    ) -> Placed | None:
        """Group, queue or defer the stored alert ``alert_id`` (group key ``key``); None
        when it was placed already (by another replica's sweep: that one launches it)."""
        digest = hashlib.sha256(key.encode()).hexdigest()
        async with self._turn:  # run to its end, never across the loop's turns (_placing)
            return await self.db.write(
                _placing.place, self.facts, alert_id, digest, self._now(), thread_ts
            )

    async def admit(self) -> list[StoredAlert]:
        """Deferred alerts of the open storm now ``queued``, most severe first (room)."""
        now = self._now()
        async with self._locked() as session:
            storm = await session.run_sync(_placing.current, self.channel)
            if storm is None:
                return []
            await requeue_stale(session, now, self.lease, AlertRow.storm_id == storm.id)
            counts = await session.run_sync(_placing.counts, storm.id)
            room = (
                self.capacity
                - counts.get(AlertStatus.QUEUED, 0)
                - counts.get(AlertStatus.INVESTIGATING, 0)
            )
            if room <= 0 or not counts.get(AlertStatus.DEFERRED):
                return []
            rows = await session.scalars(
                select(AlertRow)
                .where(AlertRow.storm_id == storm.id, AlertRow.status == AlertStatus.DEFERRED)
                .order_by(severity_rank(), AlertRow.created_at, AlertRow.id)
                .limit(room)
            )
            admitted = list(rows)
            for row in admitted:
                row.status, row.status_at = AlertStatus.QUEUED, now
            await session.run_sync(_placing.launching, self.replica, admitted, now)
            return [stored_alert(row) for row in admitted]

    async def move(self, alert_id: str, status: AlertStatus) -> int | None:
        """Put the alert in ``status``; its storm ends when it was the last one active.

        Returns the alert's storm id (None: not triaged in a storm).
        """
        now = self._now()
        async with self._locked() as session:
            row = await session.get(AlertRow, alert_id)
            if row is None:
                return None
            row.status, row.status_at = status, now
            if row.storm_id is not None and status not in ACTIVE:
                storm = await session.get(AlertStorm, row.storm_id)
                if storm is not None and storm.ended_at is None:
                    await session.flush()
                    if not await _active(session, storm.id):
                        storm.ended_at = now
            return row.storm_id

    async def adopt(self, *, own_rows_only: bool, exclude: Sequence[str]) -> int | None:
        """At start-up: this channel's alerts that an earlier run (or a replica that
        died) left active join the open storm, opened for them; those no work row runs
        are deferred again. Returns the open storm's id, None when the channel is idle."""
        now = self._now()
        scope = in_channel(self.channel if own_rows_only else None, exclude)
        async with self._locked() as session:
            storm = await session.run_sync(_placing.current, self.channel)
            strays = select(func.count()).where(AlertRow.status.in_(ACTIVE), *scope)
            if storm is not None:
                strays = strays.where(
                    or_(AlertRow.storm_id.is_(None), AlertRow.storm_id != storm.id)
                )
            if await session.scalar(strays):
                if storm is None:
                    storm = await session.run_sync(_placing.open_storm, self.channel, now)
                await session.execute(
                    update(AlertRow)
                    .where(AlertRow.status.in_(ACTIVE), *scope)
                    .values(storm_id=storm.id)
                )
            if storm is None:
                return None
            await requeue_stale(session, now, self.lease, AlertRow.storm_id == storm.id)
            return storm.id

    async def view(self, storm_id: int | None = None) -> StormView | None:
        """The storm ``storm_id``, or the channel's open storm (None: idle)."""
        async with self.db.reading() as session:
            if storm_id is None:
                storm = await session.run_sync(_placing.current, self.channel)
            else:
                storm = await session.get(AlertStorm, storm_id)
            if storm is None:
                return None
            counts = await session.run_sync(_placing.counts, storm.id)
            return StormView(
                storm.id, storm.since, storm.ended_at is not None, storm.board_ts, counts
            )


async def _active(session: AsyncSession, storm_id: int) -> int:
    found = await session.scalar(
        select(func.count()).where(AlertRow.storm_id == storm_id, AlertRow.status.in_(ACTIVE))
    )
    return int(found or 0)
