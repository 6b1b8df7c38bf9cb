"""Work as rows (``work``): the durable queue every replica claims from.

Each unit of work — an alert to investigate, a mention, a thread follow-up — is a
row: ``queued`` → ``running`` → ``done`` | ``failed`` | ``cancelled``. Listeners and
the webhook only ``submit`` rows; workers ``claim`` them (``store.queue._claims``: the
takeover of expired leases, priority, thread order and limits across replicas).

A running row has an ``owner`` and a lease its worker renews; ``renew`` tells the
worker which of its rows someone asked to stop (``stop_requested``). ``finish``
settles a row once: whichever of "done" and "cancelled" commits first is the outcome.
``posted`` keeps what was posted for the row, so that a takeover repeats nothing.
The row shapes and ``priority`` live in ``store.queue.types``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.queue._claims import ClaimingQueue
from store.queue.types import (
    ACTIVE,
    CHAT_KINDS,
    CHAT_PRIORITY,
    WAITING_KINDS,
    Claimed,
    Job,
    QueueLimits,
    Submitted,
    Work,
    priority,
)
from store.schema import AlertRow, AlertStatus, WorkRow, WorkState, utcnow

__all__ = [
    "ACTIVE",
    "CHAT_KINDS",
    "CHAT_PRIORITY",
    "Claimed",
    "Job",
    "QueueLimits",
    "Submitted",
    "Work",
    "WorkQueue",
    "priority",
]


class WorkQueue(ClaimingQueue):
    """Queries on ``work`` (see the module docstring); ``claim`` is ``ClaimingQueue``'s."""

    async def submit(self, job: Job) -> Submitted:
        """Store a queued row, unless a queued-work limit of a person's request is reached."""
        async with self.db.session() as session:
            if job.kind in CHAT_KINDS:
                refused = await self._queued_limit(session, job.channel, job.requester)
                if refused is not None:
                    return Submitted(None, refused=refused)
            if job.launched_by is not None and not await _launched(session, job, self._now()):
                return Submitted(None, refused="taken")
            row = WorkRow(
                kind=job.kind,
                state=WorkState.QUEUED,
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
        waiting = (WorkRow.state == WorkState.QUEUED, WorkRow.kind.in_(CHAT_KINDS))
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

    async def renew(self, owner: str, ids: list[int]) -> tuple[set[int], set[int]]:
        """Extend the leases of ``owner``'s rows: (still ours, asked to stop)."""
        if not ids:
            return set(), set()
        async with self.db.session() as session:
            await session.execute(
                update(WorkRow)
                .where(
                    WorkRow.id.in_(ids), WorkRow.owner == owner, WorkRow.state == WorkState.RUNNING
                )
                .values(lease_until=self._now() + self.lease)
            )
            rows = await session.execute(
                select(WorkRow.id, WorkRow.stop_requested).where(
                    WorkRow.id.in_(ids), WorkRow.owner == owner, WorkRow.state == WorkState.RUNNING
                )
            )
            ours = {(row_id, stop) for row_id, stop in rows}
        return {i for i, _ in ours}, {i for i, stop in ours if stop}

    async def finish(
        self, work_id: int, owner: str, state: WorkState, error: str | None = None
    ) -> bool:
        """Settle a running row of ``owner``; False if it was settled (or taken) already."""
        return await self._settle(
            (WorkRow.id == work_id, WorkRow.owner == owner, WorkRow.state == WorkState.RUNNING),
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
            if row is None or row.owner != owner or row.state != WorkState.RUNNING:
                return False
            row.owner, row.lease_until, row.error = None, None, error
            if row.attempts >= self.max_attempts:
                row.state, row.finished_at = WorkState.FAILED, self._now()
                return False
            row.state, row.not_before = WorkState.QUEUED, self._now() + timedelta(seconds=delay_s)
            return True

    async def release(self, owner: str) -> int:
        """Shutdown: ``owner``'s running rows go back to the queue (not counted as attempts)."""
        async with self.db.session() as session:
            result = await session.execute(
                update(WorkRow)
                .where(WorkRow.owner == owner, WorkRow.state == WorkState.RUNNING)
                .values(
                    state=WorkState.QUEUED,
                    owner=None,
                    lease_until=None,
                    attempts=WorkRow.attempts - 1,
                )
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
                if row.state == WorkState.QUEUED:
                    row.state, row.finished_at = WorkState.CANCELLED, self._now()
                    cancelled.append(Work.of(row))
                else:
                    row.stop_requested = True
                    asked.append(Work.of(row))
            return cancelled, asked

    async def record_post(
        self,
        work_id: int,
        key: str,
        value: Any,
        *,
        owner: str | None = None,
        attempt: int | None = None,
        once: bool = False,
    ) -> bool:
        """Remember what was posted for a row (``posted[key]``): a takeover won't repeat it.

        With ``owner``, only while ``owner`` runs the row (a replica that lost it
        records nothing), and with ``attempt`` only while it runs that attempt (the same
        replica may have taken its own lapsed row over); with ``once`` only if ``key`` is
        not recorded yet. False when nothing was recorded.
        """
        async with self.db.session() as session:
            statement = select(WorkRow).where(WorkRow.id == work_id)
            if once and not self.db.is_sqlite:  # read and write under the row's lock
                statement = statement.with_for_update()
            row = (await session.execute(statement)).scalar_one_or_none()
            if row is None or (
                owner is not None and (row.owner, row.state) != (owner, WorkState.RUNNING)
            ):
                return False
            if attempt is not None and row.attempts != attempt:
                return False
            if once and key in (row.posted or {}):
                return False
            row.posted = {**(row.posted or {}), key: value}
            return True

    async def position(self, work_id: int) -> int | None:
        """A queued row's place in line (1: next), None once it is not queued."""
        async with self.db.session() as session:
            row = await session.get(WorkRow, work_id)
            if row is None or row.state != WorkState.QUEUED:
                return None
            ahead = await session.scalar(
                select(func.count()).where(
                    WorkRow.state == WorkState.QUEUED,
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
        """Rows queued and running right now, across every replica (``/healthz``; the
        replicas' own bookkeeping, pruning, and alerts a budget holds left out)."""
        async with self.db.session() as session:
            rows = await session.execute(
                select(WorkRow.state, func.count())
                .where(WorkRow.state.in_(ACTIVE), WorkRow.kind.not_in(WAITING_KINDS))
                .group_by(WorkRow.state)
            )
            found = {state: int(n) for state, n in rows}
        return {state: found.get(state, 0) for state in ACTIVE}

    async def oldest_queued_at(self) -> datetime | None:
        """When the longest-waiting queued row was stored (``/metrics``), or ``None``."""
        async with self.db.session() as session:
            oldest = await session.scalar(
                select(func.min(WorkRow.created_at)).where(
                    WorkRow.state == WorkState.QUEUED, WorkRow.kind.not_in(WAITING_KINDS)
                )
            )
        if oldest is None:
            return None
        return oldest if oldest.tzinfo else oldest.replace(tzinfo=UTC)

    async def _settle(self, where: tuple[Any, ...], **values: Any) -> bool:
        async with self.db.session() as session:
            result = await session.execute(update(WorkRow).where(*where).values(**values))
            return isinstance(result, CursorResult) and result.rowcount == 1


async def _launched(session: AsyncSession, job: Job, now: datetime) -> bool:
    """Whether ``job``'s alert is still queued and launched by ``job.launched_by``; if
    so it is launched now (``launch_by`` cleared, in the transaction that stores its work
    row). A replica that stalled past its lease finds its launch taken over (the alert
    deferred and admitted again elsewhere: ``store.triage._stale``) and queues nothing.

    The row lock of this update orders it with ``requeue_stale``'s: whichever commits
    second sees the other's row (a cleared launcher is not stale for ``LAUNCH``)."""
    launched = await session.execute(
        update(AlertRow)
        .where(
            AlertRow.id == job.alert_id,
            AlertRow.status == AlertStatus.QUEUED,
            AlertRow.launch_by == job.launched_by,
        )
        .values(launch_by=None, status_at=now)
    )
    return isinstance(launched, CursorResult) and launched.rowcount == 1
