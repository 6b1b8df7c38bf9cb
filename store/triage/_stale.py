"""What a replica that died left behind in triage, found and sent back (``store.triage.storms``).

An alert is ``investigating`` only while its work row runs, and ``queued`` without a
work row only while the replica that admitted it (``launch_by``) posts its card; a
replica that stops beating (``store.queue.replicas``) has died, and its alerts go back to
``deferred`` for the pump to admit again, in order.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from store.queue.replicas import alive
from store.schema import AlertRow, AlertStatus, WorkRow, WorkState

LAUNCH = timedelta(seconds=300)  # queued this long with no work row nor launcher: stale


async def requeue_stale(
    session: AsyncSession, now: datetime, lease: timedelta, *where: ColumnElement[bool]
) -> None:
    """Alerts a dead replica left behind go back to ``deferred``: ``investigating`` with no
    queued or running work row, or ``queued`` without one while the replica launching
    it (``launch_by``) has not beaten for ``lease`` (rows without a launcher: after
    ``LAUNCH``)."""
    has_work = select(WorkRow.alert_id).where(
        WorkRow.state.in_((WorkState.QUEUED, WorkState.RUNNING)), WorkRow.alert_id.is_not(None)
    )
    stale = or_(
        and_(AlertRow.launch_by.is_not(None), AlertRow.launch_by.not_in(alive(now, lease))),
        and_(
            AlertRow.launch_by.is_(None),
            or_(AlertRow.status_at.is_(None), AlertRow.status_at < now - LAUNCH),
        ),
    )
    await session.execute(
        update(AlertRow)
        .where(*where, AlertRow.id.not_in(has_work))
        .where(
            or_(
                AlertRow.status == AlertStatus.INVESTIGATING,
                and_(AlertRow.status == AlertStatus.QUEUED, stale),
            )
        )
        .values(status=AlertStatus.DEFERRED, status_at=now)
    )
