"""Claiming work rows (``store.queue.work``): takeover of expired leases, then new starts.

A claim is one transaction (on PostgreSQL under an advisory lock, so that replicas
take turns; rows read ``FOR UPDATE SKIP LOCKED``; on SQLite the one process's
transaction) that:

* takes over rows whose lease expired (their replica died): back to ``queued``
  (``posted["restarted"]`` set, so that the thread is told once), or ``failed``
  after ``max_attempts``;
* starts the most urgent rows first (``priority``: alert severity, alerts before
  chat) but each thread's rows in their order, never two running in one thread (a
  partial unique index enforces it too);
* keeps the global limit of running rows, and for people's requests the limits per
  requester and per channel, across every replica;
* runs background rows (``learn``: learning from feedback) in their own pool
  (``running_background``), never in a person's thread and only when no alert or
  request is waiting for a slot.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, exists, func, select, text
from sqlalchemy.orm import Session, aliased

from store.db.engine import Database
from store.queue.types import ACTIVE, BACKGROUND_KINDS, CHAT_KINDS, Claimed, QueueLimits, Work
from store.schema import WorkRow, WorkState, utcnow

_CLAIM_LOCK = 0x50C_B08  # PostgreSQL advisory lock id held while claiming


@dataclass
class _Load:
    """What runs now: threads, and people's requests per requester and per channel."""

    running: int
    threads: set[str]
    users: Counter[str]
    channels: Counter[str]
    background: int = 0

    @classmethod
    def of(cls, rows: list[WorkRow]) -> _Load:
        load = cls(0, set(), Counter(), Counter())
        for row in rows:
            load.add(row)
        return load

    def add(self, row: WorkRow) -> None:
        self.threads.add(row.thread)
        if row.kind in BACKGROUND_KINDS:
            self.background += 1
            return
        self.running += 1
        if row.kind in CHAT_KINDS:
            self.channels[row.channel] += 1
            if row.requester:
                self.users[row.requester] += 1

    def admits(self, row: WorkRow, limits: QueueLimits) -> bool:
        if row.thread in self.threads:
            return False
        if row.kind in BACKGROUND_KINDS:
            return self.background < limits.running_background
        if row.kind not in CHAT_KINDS:
            return True
        if row.requester and self.users[row.requester] >= limits.running_per_user:
            return False
        return self.channels[row.channel] < limits.running_per_channel


class ClaimingQueue:
    """The claim side of ``store.queue.work.WorkQueue`` (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        limits: QueueLimits | None = None,
        *,
        lease_s: float = 30.0,
        max_attempts: int = 3,
    ) -> None:
        self.db = db
        self.limits = limits or QueueLimits()
        self.lease = timedelta(seconds=lease_s)
        self.max_attempts = max_attempts

    def _now(self) -> datetime:
        now = utcnow()
        return now.replace(tzinfo=None) if self.db.is_sqlite else now  # SQLite: naive UTC

    async def claim(self, owner: str, free: int) -> Claimed:
        """Take over expired rows, then start up to ``free`` rows for ``owner`` (run to its
        end without a turn of the loop: ``Database.write``)."""
        return await self.db.write(self._claim, owner, free)

    def _claim(self, session: Session, owner: str, free: int) -> Claimed:
        claimed = Claimed()
        if not self.db.is_sqlite:
            session.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _CLAIM_LOCK})
        now = self._now()  # after waiting for the lock: a lease starts when it is taken
        claimed.given_up = self._expire(session, now)
        free = max(free, 0)
        rows = session.execute(select(WorkRow).where(WorkRow.state == WorkState.RUNNING))
        load = _Load.of(list(rows.scalars()))
        room = min(free, self.limits.running - load.running)
        spare = self.limits.running_background - load.background
        candidates = (
            self._candidates(session, now, max(room, 0) * 4 + 20) if room > 0 or spare > 0 else []
        )
        waiting = False  # an alert or a request that could run waits for a slot
        for row in candidates:
            background = row.kind in BACKGROUND_KINDS
            if not load.admits(row, self.limits) or (background and waiting):
                continue
            if not background and room <= 0:
                waiting = True
                continue
            row.state, row.owner, row.attempts = WorkState.RUNNING, owner, row.attempts + 1
            row.lease_until = now + self.lease
            load.add(row)
            room -= 0 if background else 1
            claimed.started.append(Work.of(row))
        claimed.queued = int(
            session.scalar(select(func.count()).where(WorkRow.state == WorkState.QUEUED)) or 0
        )
        return claimed

    def _candidates(self, session: Session, now: datetime, limit: int) -> list[WorkRow]:
        """Queued rows that are first in their thread, most urgent first."""
        earlier = aliased(WorkRow)
        statement = (
            select(WorkRow)
            .where(WorkRow.state == WorkState.QUEUED)
            .where((WorkRow.not_before.is_(None)) | (WorkRow.not_before <= now))
            .where(
                ~exists().where(
                    and_(
                        earlier.thread == WorkRow.thread,
                        earlier.id < WorkRow.id,
                        earlier.state.in_(ACTIVE),
                    )
                )
            )
            .order_by(WorkRow.priority.desc(), WorkRow.id)
            .limit(limit)
        )
        if not self.db.is_sqlite:
            statement = statement.with_for_update(skip_locked=True, of=WorkRow)
        return list((session.execute(statement)).scalars())

    def _expire(self, session: Session, now: datetime) -> list[Work]:
        """Rows whose replica stopped renewing: queued again, or failed at the last attempt."""
        statement = select(WorkRow).where(
            WorkRow.state == WorkState.RUNNING, WorkRow.lease_until < now
        )
        if not self.db.is_sqlite:
            statement = statement.with_for_update(skip_locked=True)
        given_up: list[Work] = []
        for row in (session.execute(statement)).scalars():
            row.owner, row.lease_until = None, None
            if row.attempts >= self.max_attempts:
                row.state, row.finished_at = WorkState.FAILED, now
                row.error = f"socbot restarted {row.attempts} times during this investigation"
                given_up.append(Work.of(row))
            else:
                row.state = WorkState.QUEUED
                row.posted = {**(row.posted or {}), "restarted": True}
        return given_up
