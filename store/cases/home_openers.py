"""Who opened their App Home lately (``bot.events.home``): recorded in the database, so the
replica that tells a change refreshes the Homes opened on every replica.

One row a person (``store.schema.HomeOpener``), its time moved forward on each opening;
``recent`` reads the newest first within a window, at most ``limit`` of them (an index on
``opened_at``). A row older than the window is only ignored: there is one a person at most.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from store.db.engine import Database
from store.schema import HomeOpener, utcnow


async def opened(db: Database, user: str, at: datetime | None = None) -> None:
    """``user`` opened their Home tab ``at`` (now)."""
    when = at or utcnow()
    insert = sqlite_insert if db.is_sqlite else pg_insert
    statement = (
        insert(HomeOpener)
        .values(user_id=user, opened_at=when)
        .on_conflict_do_update(index_elements=[HomeOpener.user_id], set_={"opened_at": when})
    )
    async with db.session() as session:
        await session.execute(statement)


async def recent(
    db: Database, within: timedelta, limit: int, now: datetime | None = None
) -> list[str]:
    """Who opened their Home within ``within`` of ``now``, the most recent first, at most
    ``limit`` people."""
    since = (now or utcnow()) - within
    if db.is_sqlite:
        since = since.replace(tzinfo=None)  # SQLite: naive UTC
    statement = (
        select(HomeOpener.user_id)
        .where(HomeOpener.opened_at >= since)
        .order_by(HomeOpener.opened_at.desc(), HomeOpener.user_id)
        .limit(limit)
    )
    async with db.reading() as session:
        return list(await session.scalars(statement))
