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

import hashlib
import zlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.db.engine import Database
from store.queue.replicas import beat
from store.schema import AlertGroup, AlertRow, AlertStatus, AlertStorm, utcnow
from store.triage._stale import requeue_stale
from store.triage.alerts import StoredAlert, stored_alert
from store.triage.states import ACTIVE, in_channel, severity_rank

_LOCK_SPACE = 0x50CB  # PostgreSQL advisory lock space of storm decisions (key: channel)


@dataclass(frozen=True)
class Placed:
    """Where ``place`` put an alert: ``status``, its storm, its group's leader."""

    status: AlertStatus  # grouped, queued or deferred
    storm_id: int
    leader_id: str


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

    def _now(self) -> datetime:
        now = utcnow()
        return now.replace(tzinfo=None) if self.db.is_sqlite else now  # SQLite: naive UTC

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[AsyncSession]:
        """A transaction holding the channel's lock (SQLite: the write lock)."""
        async with self.db.session() as session:
            if not self.db.is_sqlite:
                key = zlib.crc32(self.channel.encode()) - 2**31  # a signed int4
                await session.execute(
                    text("SELECT pg_advisory_xact_lock(:space, :key)"),
                    {"space": _LOCK_SPACE, "key": key},
                )
            yield session

    async def place(
        self, alert_id: str, key: str, *, thread_ts: str | None = None
    ) -> Placed | None:
        """Group, queue or defer the stored alert ``alert_id`` (group key ``key``); None
        when it was placed already (by another replica's sweep: that one launches it)."""
        digest = hashlib.sha256(key.encode()).hexdigest()
        now = self._now()
        async with self._locked() as session:
            row = await session.get(AlertRow, alert_id)
            if row is None:
                raise LookupError(f"alert {alert_id!r} is not stored")
            if row.status not in (None, AlertStatus.RECEIVED):
                return None
            storm = await self._open(session, now)
            row.storm_id, row.status_at = storm.id, now
            group = await self._open_group(session, digest, now)
            if group is not None:
                group.members += 1
                row.status, row.group_id = AlertStatus.GROUPED, group.leader_id
                leader = await session.get(AlertRow, group.leader_id)
                if leader is not None and leader.verdict is not None:  # concluded already
                    row.verdict, row.summary = leader.verdict, leader.summary
                    row.investigation_id = leader.investigation_id
                return Placed(AlertStatus.GROUPED, storm.id, group.leader_id)
            session.add(
                AlertGroup(
                    leader_id=alert_id,
                    channel=self.channel,
                    key=digest,
                    started_at=now,
                    members=0,
                    thread_ts=thread_ts,
                )
            )
            counts = await _counts(session, storm.id)
            busy = counts.get(AlertStatus.QUEUED, 0) + counts.get(AlertStatus.INVESTIGATING, 0)
            room = not counts.get(AlertStatus.DEFERRED) and busy < self.capacity
            row.status = AlertStatus.QUEUED if room else AlertStatus.DEFERRED
            if room:
                await self._launching(session, [row], now)
            return Placed(row.status, storm.id, alert_id)

    async def admit(self) -> list[StoredAlert]:
        """Deferred alerts of the open storm now ``queued``, most severe first (room)."""
        now = self._now()
        async with self._locked() as session:
            storm = await self._current(session)
            if storm is None:
                return []
            await requeue_stale(session, now, self.lease, AlertRow.storm_id == storm.id)
            counts = await _counts(session, storm.id)
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
            await self._launching(session, admitted, now)
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
            storm = await self._current(session)
            strays = select(func.count()).where(AlertRow.status.in_(ACTIVE), *scope)
            if storm is not None:
                strays = strays.where(
                    or_(AlertRow.storm_id.is_(None), AlertRow.storm_id != storm.id)
                )
            if await session.scalar(strays):
                storm = storm or await self._open(session, now)
                await session.execute(
                    update(AlertRow)
                    .where(AlertRow.status.in_(ACTIVE), *scope)
                    .values(storm_id=storm.id)
                )
            if storm is None:
                return None
            await requeue_stale(session, now, self.lease, AlertRow.storm_id == storm.id)
            return storm.id

    async def _launching(self, session: AsyncSession, rows: list[AlertRow], now: datetime) -> None:
        """``rows`` are queued by this replica, which posts their cards (it is alive)."""
        for row in rows:
            row.launch_by = self.replica
        if self.replica is not None and rows:
            await beat(session, self.replica, now)

    async def view(self, storm_id: int | None = None) -> StormView | None:
        """The storm ``storm_id``, or the channel's open storm (None: idle)."""
        async with self.db.reading() as session:
            if storm_id is None:
                storm = await self._current(session)
            else:
                storm = await session.get(AlertStorm, storm_id)
            if storm is None:
                return None
            counts = await _counts(session, storm.id)
            return StormView(
                storm.id, storm.since, storm.ended_at is not None, storm.board_ts, counts
            )

    async def _current(self, session: AsyncSession) -> AlertStorm | None:
        query = select(AlertStorm).where(
            AlertStorm.channel == self.channel, AlertStorm.ended_at.is_(None)
        )
        return (await session.scalars(query.limit(1))).first()

    async def _open(self, session: AsyncSession, now: datetime) -> AlertStorm:
        storm = await self._current(session)
        if storm is None:
            storm = AlertStorm(channel=self.channel, since=now)
            session.add(storm)
            await session.flush()
        return storm

    async def _open_group(
        self, session: AsyncSession, key: str, now: datetime
    ) -> AlertGroup | None:
        if self.window <= timedelta(0):
            return None
        query = (
            select(AlertGroup)
            .where(AlertGroup.channel == self.channel, AlertGroup.key == key)
            .where(AlertGroup.started_at >= now - self.window)
            .order_by(AlertGroup.started_at.desc())
            .limit(1)
        )
        return (await session.scalars(query)).first()


async def _counts(session: AsyncSession, storm_id: int) -> dict[str, int]:
    rows = await session.execute(
        select(AlertRow.status, func.count())
        .where(AlertRow.storm_id == storm_id, AlertRow.status.is_not(None))
        .group_by(AlertRow.status)
    )
    return {str(status): int(n) for status, n in rows}


async def _active(session: AsyncSession, storm_id: int) -> int:
    found = await session.scalar(
        select(func.count()).where(AlertRow.storm_id == storm_id, AlertRow.status.in_(ACTIVE))
    )
    return int(found or 0)
