"""The weekly digest, once per ISO week across replicas.

The digest of a week (Monday 00:00 UTC to the next Monday, ``core.quality.iso_week``) is
due from the Monday that ends it. ``claim`` inserts the week's ``case_digests`` row and,
in the same transaction, the ``case_digest`` work row that posts it
(``bot.decisions.case_digest``): the first replica to commit is the only one that
inserted it, every other finds the key taken and queues nothing, today or after any
restart (the row is never pruned: one a week).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import CursorResult
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from core.quality import iso_week
from store.db.engine import Database
from store.schema import CaseDigest, WorkKind, WorkRow, WorkState, utcnow

DIGEST_PRIORITY = 15  # like a case's thread message: quick, after alerts


def last_week(now: datetime) -> tuple[str, datetime, datetime]:
    """The ISO week that ended last before ``now``: its name, its Monday 00:00 UTC and
    the next Monday's (the period ``[since, until)`` of its report)."""
    now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    until = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    since = until - timedelta(days=7)
    return iso_week(since.date()), since, until


async def claim(db: Database, channel: str, now: datetime | None = None) -> str | None:
    """Queue the digest of the last ended week, if no replica has; its week, or None."""
    week, since, until = last_week(now or utcnow())
    insert = sqlite_insert if db.is_sqlite else pg_insert
    statement = (
        insert(CaseDigest)
        .values(week=week, channel=channel[:32], created_at=utcnow())
        .on_conflict_do_nothing(index_elements=[CaseDigest.week])
    )
    async with db.session() as session:
        result = await session.execute(statement)
        if not isinstance(result, CursorResult) or result.rowcount != 1:
            return None
        session.add(
            WorkRow(
                kind=WorkKind.CASE_DIGEST,
                state=WorkState.QUEUED,
                priority=DIGEST_PRIORITY,
                thread=f"digest:{week}",
                channel=channel[:32],
                thread_ts="",
                request={"week": week, "since": since.isoformat(), "until": until.isoformat()},
                attempts=0,
                stop_requested=False,
                posted={},
                created_at=utcnow(),
            )
        )
    return week
