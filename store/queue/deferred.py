"""Alerts a budget rule held back, waiting in the work queue for their window to free.

An alert beyond its rule's budget (``store.triage.policy.take_budget`` said no) is stored with
status ``over_budget`` and gets a work row of kind ``policy_deferred`` (``defer``),
``not_before`` the end of the budget's hour or day. The rows of one rule and source
share one queue thread (``thread_of``), so the queue starts them one at a time in the
order they arrived (``store.queue._claims``: the first row of a thread goes first); a row
that finds the window still spent is put back to wait for the next one (``wait``),
holding the rest of its thread behind it. Nothing lives in a timer in memory: the rows
survive a crash, and any replica sharing the database may claim them.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import CursorResult, func, select, update

from store.db.engine import Database
from store.queue.types import ACTIVE, DEFERRED_KIND, priority
from store.schema import WorkKind, WorkRow, WorkState, utcnow


def thread_of(rule_id: str, source: str) -> str:
    """The queue thread of one rule's held alerts of one source (arrival order)."""
    return f"policy:{rule_id}:{source[:32]}"


def period_end(start: datetime, per: str) -> datetime:
    """When a budget period that began at ``start`` ends (``store.triage.policy.period_start``)."""
    return start + (timedelta(days=1) if per == "day" else timedelta(hours=1))


class DeferredAlerts:
    """Work rows of alerts held by a budget (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _stored(self, at: datetime) -> datetime:
        return at.replace(tzinfo=None) if self.db.is_sqlite else at  # SQLite: naive UTC

    async def defer(
        self,
        alert_id: str,
        rule_id: str,
        source: str,
        channel: str,
        until: datetime,
        severity: str | None = None,
    ) -> int:
        """Queue ``alert_id`` (arrived in ``channel``) to be tried again at ``until``."""
        thread = thread_of(rule_id, source)
        async with self.db.session() as session:
            row = WorkRow(
                kind=DEFERRED_KIND,
                state=WorkState.QUEUED,
                priority=priority(WorkKind.ALERT, severity),
                thread=thread,
                channel=channel[:32],
                thread_ts="budget-" + hashlib.sha256(thread.encode()).hexdigest()[:24],
                alert_id=alert_id,
                request={"rule": rule_id, "source": source[:32]},
                attempts=0,
                not_before=self._stored(until),
                stop_requested=False,
                posted={},
                created_at=utcnow(),
            )
            session.add(row)
            await session.flush()
            return row.id

    async def waiting(self, rule_id: str, source: str) -> int:
        """How many alerts of this rule and source are held (queued or being tried)."""
        async with self.db.session() as session:
            found = await session.scalar(
                select(func.count()).where(
                    WorkRow.thread == thread_of(rule_id, source),
                    WorkRow.kind == DEFERRED_KIND,
                    WorkRow.state.in_(ACTIVE),
                )
            )
        return int(found or 0)

    async def wait(self, work_id: int, attempt: int, until: datetime) -> bool:
        """The window is still spent: the running row waits again until ``until``.

        Only while the row runs the ``attempt`` it was claimed for (a row taken over
        meanwhile is the new owner's); not counted as an attempt. False: not put back.
        """
        async with self.db.session() as session:
            result = await session.execute(
                update(WorkRow)
                .where(
                    WorkRow.id == work_id,
                    WorkRow.state == WorkState.RUNNING,
                    WorkRow.attempts == attempt,
                )
                .values(
                    state=WorkState.QUEUED,
                    owner=None,
                    lease_until=None,
                    attempts=WorkRow.attempts - 1,
                    not_before=self._stored(until),
                )
            )
            return isinstance(result, CursorResult) and result.rowcount == 1
