"""Recent alerts in given Slack channels, newest first: what the assistant pane offers a
person (``bot.events.pane``) — only from channels the caller has already checked they may
see; an empty list of channels finds nothing (fail closed)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import select

from store.db.engine import Database
from store.schema import AlertRow, Investigation
from store.triage.alerts import StoredAlert, stored_alert

RECENT_LIMIT = 20


async def recent_in(
    db: Database,
    channels: Collection[str],
    *,
    since: datetime | None = None,
    thread_ts: str | None = None,
    limit: int = RECENT_LIMIT,
) -> list[StoredAlert]:
    """Alerts posted in ``channels`` (``thread_ts``: only the one of that thread), newest
    first by when socbot received them (``since``: received since), each with its
    investigation's outline (objective, verdict)."""
    wanted = [c for c in channels if c]
    if not wanted:
        return []
    when = AlertRow.created_at
    query = select(AlertRow, Investigation).outerjoin(
        Investigation, Investigation.id == AlertRow.investigation_id
    )
    query = query.where(AlertRow.slack_channel.in_(wanted), AlertRow.slack_ts.is_not(None))
    if thread_ts is not None:
        query = query.where(AlertRow.slack_ts == thread_ts)
    if since is not None:
        query = query.where(when >= since)
    query = query.order_by(when.desc(), AlertRow.id.desc()).limit(max(1, limit))
    async with db.reading() as session:
        rows = (await session.execute(query)).all()
    return [stored_alert(row, inv) for row, inv in rows]
