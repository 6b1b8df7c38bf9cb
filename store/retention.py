"""Data lifetime: rows older than their kind's ``retention.*_days`` are deleted.

``Pruner.prune`` deletes in batches of ``retention.batch`` rows, one short transaction
each (on SQLite the one writer is free between batches, so serving goes on), and
``Pruner.plan`` counts what would go (``socbot db prune --dry-run``). Rows in use are
never pruned: an alert still in triage or awaited by queued or running work, a running
investigation, queued or running work. A pruned investigation takes its trace and the
thread history it wrote with it, and the alerts it concluded keep their verdict and
summary but no longer point at it, so history and ``search_past_alerts`` never meet a
dangling id.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, delete, func, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from config.retention import RetentionSettings
from store.db.engine import Database
from store.queue.types import PRUNE_KIND, priority
from store.schema import (
    AlertGroup,
    AlertRow,
    AlertStatus,
    AlertStorm,
    BulletTag,
    Feedback,
    Investigation,
    InvestigationStatus,
    LearningRun,
    LearningStatus,
    Message,
    PrivacyMap,
    SeenEvent,
    TraceEvent,
    WorkRow,
    WorkState,
    utcnow,
)

IN_TRIAGE = (
    AlertStatus.RECEIVED,
    AlertStatus.QUEUED,
    AlertStatus.INVESTIGATING,
    AlertStatus.DEFERRED,
)
FINISHED_WORK = (WorkState.DONE, WorkState.FAILED, WorkState.CANCELLED)


@dataclass(frozen=True)
class Target:
    """One table's rows of a kind: its key columns and which rows are old enough."""

    key: Sequence[Any]
    where: Callable[[datetime], list[ColumnElement[bool]]]
    cascade: Callable[[AsyncSession, list[Any]], Awaitable[None]] | None = None


def _kinds() -> dict[str, tuple[str, list[Target]]]:
    """Each kind: its ``retention`` setting and its tables, in deletion order."""
    return {
        "trace": (  # first: what an investigation takes with it is counted here
            "trace_days",
            [
                Target(
                    [TraceEvent.id],
                    lambda c: [
                        TraceEvent.created_at < c,
                        TraceEvent.investigation_id.not_in(_running()),
                    ],
                )
            ],
        ),
        "investigations": (
            "investigations_days",
            [
                Target(
                    [Investigation.id],
                    lambda c: [
                        Investigation.created_at < c,
                        Investigation.status != InvestigationStatus.RUNNING,
                    ],
                    _investigations_go,
                ),
                # A conversation's pseudonyms go with its last investigation.
                Target([PrivacyMap.conversation_id], lambda c: [PrivacyMap.updated_at < c]),
            ],
        ),
        "alerts": (
            "alerts_days",
            [
                Target(
                    [AlertRow.id],
                    lambda c: [
                        AlertRow.created_at < c,
                        AlertRow.status.is_(None) | AlertRow.status.not_in(IN_TRIAGE),
                        AlertRow.id.not_in(_awaited()),
                    ],
                )
            ],
        ),
        "feedback": (
            "feedback_days",
            [
                Target([Feedback.id], lambda c: [Feedback.updated_at < c]),
                Target(
                    [BulletTag.investigation_id, BulletTag.bullet_id],
                    lambda c: [BulletTag.updated_at < c],
                ),
            ],
        ),
        "alert_groups": (
            "alert_groups_days",
            [
                Target([AlertGroup.leader_id], lambda c: [AlertGroup.started_at < c]),
                Target([AlertStorm.id], lambda c: [AlertStorm.ended_at < c]),
            ],
        ),
        "work": (
            "work_days",
            [
                Target(
                    [WorkRow.id],
                    lambda c: [WorkRow.state.in_(FINISHED_WORK), WorkRow.finished_at < c],
                ),
                Target([SeenEvent.key], lambda c: [SeenEvent.created_at < c]),
            ],
        ),
        "learning_runs": (
            "learning_runs_days",
            [
                Target(
                    [LearningRun.id],
                    lambda c: [
                        LearningRun.created_at < c,
                        LearningRun.status != LearningStatus.RUNNING,
                    ],
                )
            ],
        ),
    }


def _awaited() -> Select[Any]:
    """Alerts a queued or running work row still points at (a held ``over_budget`` alert's
    ``policy_deferred`` row, an alert's own run): never pruned from under it."""
    return select(WorkRow.alert_id).where(
        WorkRow.alert_id.is_not(None), WorkRow.state.not_in(FINISHED_WORK)
    )


def _running() -> Select[Any]:
    return select(Investigation.id).where(Investigation.status == InvestigationStatus.RUNNING)


async def _investigations_go(session: AsyncSession, ids: list[Any]) -> None:
    """What goes with pruned investigations: their trace, the history they wrote; the
    alerts they concluded keep their verdict but lose the link."""
    await session.execute(delete(TraceEvent).where(TraceEvent.investigation_id.in_(ids)))
    await session.execute(delete(Message).where(Message.investigation_id.in_(ids)))
    await session.execute(
        update(AlertRow).where(AlertRow.investigation_id.in_(ids)).values(investigation_id=None)
    )


KINDS: tuple[str, ...] = tuple(_kinds())


class Pruner:
    """Deletes (or counts) rows past their lifetime (see the module docstring)."""

    def __init__(self, db: Database, settings: RetentionSettings) -> None:
        self.db = db
        self.settings = settings

    def cutoffs(self, now: datetime | None = None) -> dict[str, datetime]:
        """The oldest time kept, per kind (kinds kept for ever are left out)."""
        now = now or utcnow()
        if self.db.is_sqlite:
            now = now.replace(tzinfo=None)  # SQLite stores naive UTC
        out = {}
        for kind, (setting, _) in _kinds().items():
            days = int(getattr(self.settings, setting))
            if days > 0:
                out[kind] = now - timedelta(days=days)
        return out

    async def plan(self, now: datetime | None = None) -> dict[str, int]:
        """How many rows each kind would lose now (``--dry-run``)."""
        counts = dict.fromkeys(KINDS, 0)
        kinds = _kinds()
        async with self.db.session() as session:
            for kind, cutoff in self.cutoffs(now).items():
                for target in kinds[kind][1]:
                    query = select(func.count()).select_from(target.key[0].table)
                    found = await session.scalar(query.where(*target.where(cutoff)))
                    counts[kind] += int(found or 0)
        return counts

    async def prune(self, now: datetime | None = None) -> dict[str, int]:
        """Delete what is past its lifetime, batch by batch; rows deleted per kind."""
        counts = dict.fromkeys(KINDS, 0)
        kinds = _kinds()
        for kind, cutoff in self.cutoffs(now).items():
            for target in kinds[kind][1]:
                while deleted := await self._batch(target, cutoff):
                    counts[kind] += deleted
                    await asyncio.sleep(0)  # between transactions: others take their turn
        return counts

    async def _batch(self, target: Target, cutoff: datetime) -> int:
        key = target.key
        query: Select[Any] = select(*key).where(*target.where(cutoff)).limit(self.settings.batch)
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
            if not rows:
                return 0
            if len(key) == 1:
                ids = [row[0] for row in rows]
                if target.cascade is not None:
                    await target.cascade(session, ids)
                await session.execute(delete(key[0].table).where(key[0].in_(ids)))
            else:
                pairs = [tuple(row) for row in rows]
                await session.execute(delete(key[0].table).where(tuple_(*key).in_(pairs)))
            return len(rows)


async def request_prune(db: Database, interval: timedelta) -> int | None:
    """Queue a prune row unless one is queued or running, or one finished within
    ``interval`` (every replica asks; the rows share one thread, so one runs at a time).
    The new row's id, or None."""
    now = utcnow()
    since = now - interval
    if db.is_sqlite:
        now, since = now.replace(tzinfo=None), since.replace(tzinfo=None)
    async with db.session() as session:
        recent = await session.scalar(
            select(func.count()).where(
                WorkRow.kind == PRUNE_KIND,
                WorkRow.state.in_((WorkState.QUEUED, WorkState.RUNNING))
                | (WorkRow.finished_at >= since),
            )
        )
        if recent:
            return None
        row = WorkRow(
            kind=PRUNE_KIND,
            state=WorkState.QUEUED,
            priority=priority(PRUNE_KIND),
            thread=PRUNE_KIND,
            channel="",
            thread_ts="",
            request={},
            attempts=0,
            stop_requested=False,
            posted={},
            created_at=now,
        )
        session.add(row)
        await session.flush()
        return row.id
