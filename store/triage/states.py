"""Where stored alerts are in triage (``alerts.status``), for any channel.

``status`` follows a webhook alert, or one forwarded into an alert channel, through
triage (``bot.intake.triage``): ``received`` (stored with the alert, in the same transaction as
the 202 or the Slack ack promises it, not placed yet: any replica's sweep places it) →
``queued`` → ``investigating`` → ``concluded`` / ``failed`` /
``cancelled``; or ``grouped`` under the alert that is investigated for it
(``group_id``; it gets that verdict), or ``deferred`` (stored, investigated when there
is room). The decisions that must hold across replicas (grouping, admission, the end
of a storm) are ``store.triage.storms``'; these are the plain reads and writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import case, func, or_, select, update
from sqlalchemy.sql.elements import ColumnElement

from store.db.engine import Database
from store.schema import AlertRow, AlertStatus, utcnow
from store.triage.alerts import StoredAlert, stored_alert

SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
# a storm lasts while one of its alerts is
ACTIVE = (AlertStatus.QUEUED, AlertStatus.INVESTIGATING, AlertStatus.DEFERRED)


def severity_rank() -> ColumnElement[int]:
    """Most severe first (``ORDER BY``); unknown severities last."""
    return case(SEVERITY_ORDER, value=func.lower(AlertRow.severity), else_=len(SEVERITY_ORDER))


def in_channel(
    channel: str | None, exclude_channels: Sequence[str] | None
) -> list[ColumnElement[bool]]:
    """``channel``: alerts living in that Slack channel; ``exclude_channels``: alerts not
    in Slack or in none of those channels."""
    conditions: list[ColumnElement[bool]] = []
    if channel is not None:
        conditions.append(AlertRow.slack_channel == channel)
    if exclude_channels:
        conditions.append(
            or_(AlertRow.slack_channel.is_(None), AlertRow.slack_channel.not_in(exclude_channels))
        )
    return conditions


class AlertStatuses:
    """Queries on ``alerts.status`` (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def set(self, alert_id: str, status: AlertStatus, **values: Any) -> None:
        """Put the alert in ``status`` (with other columns of its row, e.g. ``group_id``)."""
        async with self.db.session() as session:
            await session.execute(
                update(AlertRow)
                .where(AlertRow.id == alert_id)
                .values(status=status, status_at=utcnow(), **values)
            )

    async def counts(
        self, *, channel: str | None = None, exclude_channels: Sequence[str] | None = None
    ) -> dict[str, int]:
        """How many stored alerts are in each status (NULL not counted), filtered as
        ``in_channel`` says."""
        query = (
            select(AlertRow.status, func.count())
            .where(AlertRow.status.is_not(None), *in_channel(channel, exclude_channels))
            .group_by(AlertRow.status)
        )
        async with self.db.reading() as session:
            rows = (await session.execute(query)).all()
        return {str(status): int(count) for status, count in rows}

    async def by_status(
        self,
        status: AlertStatus,
        *,
        limit: int = 100,
        channel: str | None = None,
        exclude_channels: Sequence[str] | None = None,
        for_s: float = 0.0,
    ) -> list[StoredAlert]:
        """Alerts in ``status`` (filtered as ``in_channel`` says) for at least ``for_s``
        seconds, most severe first, then oldest first."""
        since = utcnow() - timedelta(seconds=for_s)
        query = (
            select(AlertRow)
            .where(AlertRow.status == status, *in_channel(channel, exclude_channels))
            .where(or_(AlertRow.status_at.is_(None), AlertRow.status_at <= since))
            .order_by(severity_rank(), AlertRow.created_at, AlertRow.id)
            .limit(limit)
        )
        async with self.db.reading() as session:
            rows = list(await session.scalars(query))
        return [stored_alert(row) for row in rows]

    async def conclude_group(self, leader_id: str) -> None:
        """Give the alerts grouped under ``leader_id`` its verdict (once it has one)."""
        async with self.db.session() as session:
            leader = await session.get(AlertRow, leader_id)
            if leader is None or leader.verdict is None:
                return
            await session.execute(
                update(AlertRow)
                .where(AlertRow.group_id == leader_id, AlertRow.status == AlertStatus.GROUPED)
                .values(
                    verdict=leader.verdict,
                    summary=leader.summary,
                    investigation_id=leader.investigation_id,
                )
            )
