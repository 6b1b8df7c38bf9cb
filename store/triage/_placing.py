"""``StormStore``'s statements as plain code on a synchronous ``Session``: ``place`` runs
through ``Database.write`` (on SQLite, to its end on a thread of its own: the one write
lock is held for its statements only, never across turns of the app's busy loop, where the
acknowledging front's alert inserts waited for it — 8 ms a placement at p50, up to 980 ms,
in a storm); the other decisions call the same helpers through ``run_sync``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from store.queue.replicas import beat_in
from store.schema import AlertGroup, AlertRow, AlertStatus, AlertStorm

_LOCK_SPACE = 0x50CB  # PostgreSQL advisory lock space of storm decisions (key: channel)


@dataclass(frozen=True)
class Placed:
    """Where ``place`` put an alert: ``status``, its storm, its group's leader."""

    status: AlertStatus  # grouped, queued or deferred
    storm_id: int
    leader_id: str


@dataclass(frozen=True)
class Channel:
    """What a placement needs to know of its ``StormStore``."""

    name: str
    capacity: int
    window: timedelta
    replica: str | None
    is_sqlite: bool


def lock(session: Session, channel: Channel) -> None:
    """Hold the channel's lock for the transaction (SQLite: its ``BEGIN IMMEDIATE`` did)."""
    if not channel.is_sqlite:
        key = zlib.crc32(channel.name.encode()) - 2**31  # a signed int4
        session.execute(
            text("SELECT pg_advisory_xact_lock(:space, :key)"),
            {"space": _LOCK_SPACE, "key": key},
        )


def place(
    session: Session,
    channel: Channel,
    alert_id: str,
    digest: str,
    now: datetime,
    thread_ts: str | None,
) -> Placed | None:
    """``StormStore.place`` in the caller's transaction (see its docstring)."""
    lock(session, channel)
    row = session.get(AlertRow, alert_id)
    if row is None:
        raise LookupError(f"alert {alert_id!r} is not stored")
    if row.status not in (None, AlertStatus.RECEIVED):
        return None
    storm = open_storm(session, channel.name, now)
    row.storm_id, row.status_at = storm.id, now
    group = open_group(session, channel, digest, now)
    if group is not None:
        group.members += 1
        row.status, row.group_id = AlertStatus.GROUPED, group.leader_id
        leader = session.get(AlertRow, group.leader_id)
        if leader is not None and leader.verdict is not None:  # concluded already
            row.verdict, row.summary = leader.verdict, leader.summary
            row.investigation_id = leader.investigation_id
        return Placed(AlertStatus.GROUPED, storm.id, group.leader_id)
    session.add(
        AlertGroup(
            leader_id=alert_id,
            channel=channel.name,
            key=digest,
            started_at=now,
            members=0,
            thread_ts=thread_ts,
        )
    )
    counted = counts(session, storm.id)
    busy = counted.get(AlertStatus.QUEUED, 0) + counted.get(AlertStatus.INVESTIGATING, 0)
    room = not counted.get(AlertStatus.DEFERRED) and busy < channel.capacity
    row.status = AlertStatus.QUEUED if room else AlertStatus.DEFERRED
    if room:
        launching(session, channel.replica, [row], now)
    return Placed(row.status, storm.id, alert_id)


def launching(session: Session, replica: str | None, rows: list[AlertRow], now: datetime) -> None:
    """``rows`` are queued by ``replica``, which posts their cards (it is alive)."""
    for row in rows:
        row.launch_by = replica
    if replica is not None and rows:
        beat_in(session, replica, now)


def current(session: Session, channel: str) -> AlertStorm | None:
    """The channel's open storm (None: idle)."""
    query = select(AlertStorm).where(AlertStorm.channel == channel, AlertStorm.ended_at.is_(None))
    return session.scalars(query.limit(1)).first()


def open_storm(session: Session, channel: str, now: datetime) -> AlertStorm:
    """The channel's open storm, opened now when it was idle."""
    storm = current(session, channel)
    if storm is None:
        storm = AlertStorm(channel=channel, since=now)
        session.add(storm)
        session.flush()
    return storm


def open_group(session: Session, channel: Channel, key: str, now: datetime) -> AlertGroup | None:
    if channel.window <= timedelta(0):
        return None
    query = (
        select(AlertGroup)
        .where(AlertGroup.channel == channel.name, AlertGroup.key == key)
        .where(AlertGroup.started_at >= now - channel.window)
        .order_by(AlertGroup.started_at.desc())
        .limit(1)
    )
    return session.scalars(query).first()


def counts(session: Session, storm_id: int) -> dict[str, int]:
    """The storm's alerts counted by status."""
    rows = session.execute(
        select(AlertRow.status, func.count())
        .where(AlertRow.storm_id == storm_id, AlertRow.status.is_not(None))
        .group_by(AlertRow.status)
    )
    return {str(status): int(n) for status, n in rows}
