"""Work as rows (``work``): the durable queue every replica claims from.

Each unit of work — an alert to investigate, a mention, a thread follow-up — is a
row: ``queued`` → ``running`` → ``done`` | ``failed`` | ``cancelled``. Listeners and
the webhook only ``submit`` rows; workers ``claim`` them. A claim is one transaction
that (on PostgreSQL under an advisory lock, so that replicas take turns; rows read
``FOR UPDATE SKIP LOCKED``; on SQLite the one process's transaction):

* takes over rows whose lease expired (their replica died): back to ``queued``
  (``posted["restarted"]`` set, so that the thread is told once), or ``failed``
  after ``max_attempts``;
* starts the most urgent rows first (``priority``: alert severity, alerts before
  chat) but each thread's rows in their order, never two running in one thread (a
  partial unique index enforces it too);
* keeps the global limit of running rows, and for people's requests the limits per
  requester and per channel, across every replica.

A running row has an ``owner`` and a lease its worker renews; ``renew`` tells the
worker which of its rows someone asked to stop (``stop_requested``). ``finish``
settles a row once: whichever of "done" and "cancelled" commits first is the outcome.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, and_, exists, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from store.db import Database
from store.models import WorkRow, utcnow
from store.slack import conversation_id

CHAT_KINDS = ("mention", "followup")
ACTIVE = ("queued", "running")
_CLAIM_LOCK = 0x50C_B08  # PostgreSQL advisory lock id held while claiming
SEVERITY_PRIORITY = {"critical": 50, "high": 40, "medium": 30, "low": 25, "info": 22}
ALERT_PRIORITY = 20  # an alert of unknown severity still goes before chat
CHAT_PRIORITY = 10


def priority(kind: str, severity: str | None = None) -> int:
    """Alerts by severity, then people's questions (higher goes first)."""
    if kind in CHAT_KINDS:
        return CHAT_PRIORITY
    return SEVERITY_PRIORITY.get((severity or "").lower(), ALERT_PRIORITY)


@dataclass(frozen=True)
class QueueLimits:
    """Limits that hold across every replica (``work`` settings)."""

    running: int = 3
    running_per_user: int = 2
    running_per_channel: int = 3
    queued_per_user: int = 5
    queued_per_channel: int = 20


@dataclass(frozen=True)
class Job:
    """Work to queue: what, where (the Slack thread), for whom, how urgent."""

    kind: str  # "alert" | "mention" | "followup"
    channel: str
    thread_ts: str
    text: str = ""  # the request (mentions, follow-ups)
    requester: str | None = None  # Slack user id of a person's request
    alert_id: str | None = None
    priority: int = CHAT_PRIORITY

    @property
    def thread(self) -> str:
        return conversation_id(self.channel, self.thread_ts)


@dataclass(frozen=True)
class Work:
    """A row as a worker sees it."""

    id: int
    kind: str
    channel: str
    thread_ts: str
    thread: str
    requester: str | None
    alert_id: str | None
    request: dict[str, Any]
    attempts: int
    posted: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def text(self) -> str:
        return str(self.request.get("text", ""))

    @classmethod
    def of(cls, row: WorkRow) -> Work:
        return cls(
            id=row.id,
            kind=row.kind,
            channel=row.channel,
            thread_ts=row.thread_ts,
            thread=row.thread,
            requester=row.requester,
            alert_id=row.alert_id,
            request=dict(row.request or {}),
            attempts=row.attempts,
            posted=dict(row.posted or {}),
            error=row.error,
        )


@dataclass(frozen=True)
class Submitted:
    """``id`` of the new row, or ``refused`` saying which limit was reached."""

    id: int | None
    refused: str | None = None  # "user" | "channel"


@dataclass
class Claimed:
    started: list[Work] = field(default_factory=list)
    given_up: list[Work] = field(default_factory=list)  # expired max_attempts times: failed
    queued: int = 0  # rows still waiting in the whole queue


@dataclass
class _Load:
    """What runs now: threads, and people's requests per requester and per channel."""

    running: int
    threads: set[str]
    users: Counter[str]
    channels: Counter[str]

    @classmethod
    def of(cls, rows: list[WorkRow]) -> _Load:
        load = cls(0, set(), Counter(), Counter())
        for row in rows:
            load.add(row)
        return load

    def add(self, row: WorkRow) -> None:
        self.running += 1
        self.threads.add(row.thread)
        if row.kind in CHAT_KINDS:
            self.channels[row.channel] += 1
            if row.requester:
                self.users[row.requester] += 1

    def admits(self, row: WorkRow, limits: QueueLimits) -> bool:
        if row.thread in self.threads:
            return False
        if row.kind not in CHAT_KINDS:
            return True
        if row.requester and self.users[row.requester] >= limits.running_per_user:
            return False
        return self.channels[row.channel] < limits.running_per_channel


class WorkQueue:
    """Queries on ``work`` (see the module docstring)."""

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

    async def submit(self, job: Job) -> Submitted:
        """Store a queued row, unless a queued-work limit of a person's request is reached."""
        async with self.db.session() as session:
            if job.kind in CHAT_KINDS:
                refused = await self._queued_limit(session, job.channel, job.requester)
                if refused is not None:
                    return Submitted(None, refused=refused)
            row = WorkRow(
                kind=job.kind,
                state="queued",
                priority=job.priority,
                thread=job.thread,
                channel=job.channel,
                thread_ts=job.thread_ts,
                requester=job.requester,
                alert_id=job.alert_id,
                request={"text": job.text},
                attempts=0,
                stop_requested=False,
                posted={},
                created_at=utcnow(),
            )
            session.add(row)
            await session.flush()
            return Submitted(row.id)

    async def _queued_limit(
        self, session: AsyncSession, channel: str, requester: str | None
    ) -> str | None:
        waiting = (WorkRow.state == "queued", WorkRow.kind.in_(CHAT_KINDS))
        if requester is not None:
            mine = await session.scalar(
                select(func.count()).where(*waiting, WorkRow.requester == requester)
            )
            if int(mine or 0) >= self.limits.queued_per_user:
                return "user"
        here = await session.scalar(
            select(func.count()).where(*waiting, WorkRow.channel == channel)
        )
        if int(here or 0) >= self.limits.queued_per_channel:
            return "channel"
        return None

    async def claim(self, owner: str, free: int) -> Claimed:
        """Take over expired rows, then start up to ``free`` rows for ``owner``."""
        claimed = Claimed()
        now = self._now()
        async with self.db.session() as session:
            if not self.db.is_sqlite:
                await session.execute(
                    text("SELECT pg_advisory_xact_lock(:id)"), {"id": _CLAIM_LOCK}
                )
            claimed.given_up = await self._expire(session, now)
            free = max(free, 0)
            rows = await session.execute(select(WorkRow).where(WorkRow.state == "running"))
            load = _Load.of(list(rows.scalars()))
            room = min(free, self.limits.running - load.running)
            candidates = await self._candidates(session, now, room * 4 + 20) if room > 0 else []
            for row in candidates:
                if room <= 0:
                    break
                if not load.admits(row, self.limits):
                    continue
                row.state, row.owner, row.attempts = "running", owner, row.attempts + 1
                row.lease_until = now + self.lease
                load.add(row)
                room -= 1
                claimed.started.append(Work.of(row))
            claimed.queued = int(
                await session.scalar(select(func.count()).where(WorkRow.state == "queued")) or 0
            )
        return claimed

    async def _candidates(self, session: AsyncSession, now: datetime, limit: int) -> list[WorkRow]:
        """Queued rows that are first in their thread, most urgent first."""
        earlier = aliased(WorkRow)
        statement = (
            select(WorkRow)
            .where(WorkRow.state == "queued")
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
        return list((await session.execute(statement)).scalars())

    async def _expire(self, session: AsyncSession, now: datetime) -> list[Work]:
        """Rows whose replica stopped renewing: queued again, or failed at the last attempt."""
        statement = select(WorkRow).where(WorkRow.state == "running", WorkRow.lease_until < now)
        if not self.db.is_sqlite:
            statement = statement.with_for_update(skip_locked=True)
        given_up: list[Work] = []
        for row in (await session.execute(statement)).scalars():
            row.owner, row.lease_until = None, None
            if row.attempts >= self.max_attempts:
                row.state, row.finished_at = "failed", now
                row.error = f"socbot restarted {row.attempts} times during this investigation"
                given_up.append(Work.of(row))
            else:
                row.state = "queued"
                row.posted = {**(row.posted or {}), "restarted": True}
        return given_up

    async def renew(self, owner: str, ids: list[int]) -> tuple[set[int], set[int]]:
        """Extend the leases of ``owner``'s rows: (still ours, asked to stop)."""
        if not ids:
            return set(), set()
        async with self.db.session() as session:
            await session.execute(
                update(WorkRow)
                .where(WorkRow.id.in_(ids), WorkRow.owner == owner, WorkRow.state == "running")
                .values(lease_until=self._now() + self.lease)
            )
            rows = await session.execute(
                select(WorkRow.id, WorkRow.stop_requested).where(
                    WorkRow.id.in_(ids), WorkRow.owner == owner, WorkRow.state == "running"
                )
            )
            ours = {(row_id, stop) for row_id, stop in rows}
        return {i for i, _ in ours}, {i for i, stop in ours if stop}

    async def finish(self, work_id: int, owner: str, state: str, error: str | None = None) -> bool:
        """Settle a running row of ``owner``; False if it was settled (or taken) already."""
        return await self._settle(
            (WorkRow.id == work_id, WorkRow.owner == owner, WorkRow.state == "running"),
            state=state,
            error=error,
            finished_at=self._now(),
            lease_until=None,
        )

    async def retry_later(self, work_id: int, owner: str, delay_s: float, error: str) -> bool:
        """A dependency failed: queued again after ``delay_s``, or failed after the last attempt.

        True when the row will run again.
        """
        async with self.db.session() as session:
            row = await session.get(WorkRow, work_id)
            if row is None or row.owner != owner or row.state != "running":
                return False
            row.owner, row.lease_until, row.error = None, None, error
            if row.attempts >= self.max_attempts:
                row.state, row.finished_at = "failed", self._now()
                return False
            row.state, row.not_before = "queued", self._now() + timedelta(seconds=delay_s)
            return True

    async def release(self, owner: str) -> int:
        """Shutdown: ``owner``'s running rows go back to the queue (not counted as attempts)."""
        async with self.db.session() as session:
            result = await session.execute(
                update(WorkRow)
                .where(WorkRow.owner == owner, WorkRow.state == "running")
                .values(state="queued", owner=None, lease_until=None, attempts=WorkRow.attempts - 1)
            )
            return result.rowcount if isinstance(result, CursorResult) else 0

    async def stop(self, thread: str) -> tuple[list[Work], list[Work]]:
        """Stop a thread's work: (queued rows now cancelled, running rows asked to stop)."""
        async with self.db.session() as session:
            rows = list(
                (
                    await session.execute(
                        select(WorkRow).where(WorkRow.thread == thread, WorkRow.state.in_(ACTIVE))
                    )
                ).scalars()
            )
            cancelled, asked = [], []
            for row in rows:
                if row.state == "queued":
                    row.state, row.finished_at = "cancelled", self._now()
                    cancelled.append(Work.of(row))
                else:
                    row.stop_requested = True
                    asked.append(Work.of(row))
            return cancelled, asked

    async def record_post(self, work_id: int, key: str, value: Any) -> None:
        """Remember what was posted for a row (``posted[key]``): a takeover won't repeat it."""
        async with self.db.session() as session:
            row = await session.get(WorkRow, work_id)
            if row is not None:
                row.posted = {**(row.posted or {}), key: value}

    async def position(self, work_id: int) -> int | None:
        """A queued row's place in line (1: next), None once it is not queued."""
        async with self.db.session() as session:
            row = await session.get(WorkRow, work_id)
            if row is None or row.state != "queued":
                return None
            ahead = await session.scalar(
                select(func.count()).where(
                    WorkRow.state == "queued",
                    (WorkRow.priority > row.priority)
                    | ((WorkRow.priority == row.priority) & (WorkRow.id < row.id)),
                )
            )
            return int(ahead or 0) + 1

    async def get(self, work_id: int) -> WorkRow | None:
        async with self.db.session() as session:
            return await session.get(WorkRow, work_id)

    async def active(self, thread: str) -> list[Work]:
        """The thread's queued and running rows, oldest first."""
        async with self.db.session() as session:
            rows = await session.execute(
                select(WorkRow)
                .where(WorkRow.thread == thread, WorkRow.state.in_(ACTIVE))
                .order_by(WorkRow.id)
            )
            return [Work.of(r) for r in rows.scalars()]

    async def counts(self) -> dict[str, int]:
        """Rows queued and running right now, across every replica (``/healthz``)."""
        async with self.db.session() as session:
            rows = await session.execute(
                select(WorkRow.state, func.count())
                .where(WorkRow.state.in_(ACTIVE))
                .group_by(WorkRow.state)
            )
            found = {state: int(n) for state, n in rows}
        return {state: found.get(state, 0) for state in ACTIVE}

    async def _settle(self, where: tuple[Any, ...], **values: Any) -> bool:
        async with self.db.session() as session:
            result = await session.execute(update(WorkRow).where(*where).values(**values))
            return isinstance(result, CursorResult) and result.rowcount == 1
