"""Slack bookkeeping: deliveries already handled, threads socbot is part of.

* Seen keys (``seen_events``) make deduplication survive restarts: ``claim(key)``
  inserts the key and says whether this caller was first. Old keys are pruned
  (Slack retries within minutes; a day is plenty). ``seen(key)`` asks without claiming:
  a workspace that refused streaming is remembered so (``bot.slack.stream_gate``).
* A thread socbot is part of is a conversation whose id is
  ``slack:<channel>:<thread_root_ts>`` — the same row the history hangs on, so
  "socbot is in this thread" and "this thread has history" cannot disagree.
* Analyst feedback on a verdict: ``store.playbook.feedback``.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import CursorResult, delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from store.db.engine import Database
from store.investigations.conversations import conversation_id
from store.schema import Conversation, SeenEvent, utcnow

log = logging.getLogger(__name__)

SEEN_TTL = timedelta(days=1)


class SlackStore:
    """Queries on ``seen_events`` and Slack conversations."""

    def __init__(self, db: Database, *, seen_ttl: timedelta = SEEN_TTL) -> None:
        self.db = db
        self.seen_ttl = seen_ttl

    async def claim(self, key: str) -> bool:
        """Record ``key`` as handled; True only for the first caller, ever (until pruned)."""
        insert = sqlite_insert if self.db.is_sqlite else pg_insert
        statement = (
            insert(SeenEvent)
            .values(key=key[:200], created_at=utcnow())
            .on_conflict_do_nothing(index_elements=[SeenEvent.key])
        )
        result = await self.db.write(lambda session: session.execute(statement))
        return isinstance(result, CursorResult) and result.rowcount == 1

    async def seen(self, key: str) -> bool:
        """True when ``key`` was claimed (and not pruned yet)."""
        async with self.db.session() as session:
            return await session.get(SeenEvent, key[:200]) is not None

    async def prune(self) -> int:
        """Delete seen keys older than the TTL; returns how many went."""
        cutoff = utcnow() - self.seen_ttl
        if self.db.is_sqlite:  # SQLite stores naive UTC datetimes
            cutoff = cutoff.replace(tzinfo=None)
        async with self.db.session() as session:
            result = await session.execute(delete(SeenEvent).where(SeenEvent.created_at < cutoff))
            removed = result.rowcount if isinstance(result, CursorResult) else 0
        if removed:
            log.info("pruned %d old seen-event keys", removed)
        return removed

    async def remember_thread(self, channel: str, thread_ts: str) -> str:
        """Mark the thread as one socbot is part of; returns its conversation id."""
        conv = conversation_id(channel, thread_ts)
        insert = sqlite_insert if self.db.is_sqlite else pg_insert
        now = utcnow()
        statement = (
            insert(Conversation)
            .values(id=conv, created_at=now, updated_at=now)
            .on_conflict_do_nothing(index_elements=[Conversation.id])
        )
        async with self.db.session() as session:
            await session.execute(statement)
        return conv

    async def is_known_thread(self, channel: str, thread_ts: str) -> bool:
        """True when socbot has taken part in this thread (survives restarts)."""
        async with self.db.session() as session:
            found = await session.get(Conversation, conversation_id(channel, thread_ts))
            return found is not None
