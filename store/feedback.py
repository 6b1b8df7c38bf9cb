"""Analysts' votes on verdicts (``feedback``): one row per analyst and investigation.

``vote`` is an upsert: a second click (or the 👎 dialog, or a correction written in
the thread) changes that analyst's vote instead of adding one. ``votable`` is the
gate for Slack votes: only a concluded investigation that socbot ran in that very
channel and thread can be voted on; anything else (an unknown id, another thread's
investigation, one still running) is refused.
"""

from __future__ import annotations

from typing import Literal

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from store.db import Database
from store.models import Feedback, Investigation, utcnow
from store.slack import conversation_id

Value = Literal["correct", "incorrect"]
Source = Literal["button", "modal", "thread"]


class FeedbackStore:
    """Queries on ``feedback`` (and the investigation a vote is about)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def votable(self, investigation_id: str, channel: str, thread_ts: str) -> bool:
        """True only for a concluded investigation socbot ran in this Slack thread."""
        if not investigation_id or not channel or not thread_ts:
            return False
        async with self.db.session() as session:
            row = await session.get(Investigation, investigation_id)
        return (
            row is not None
            and row.conversation_id == conversation_id(channel, thread_ts)
            and row.status == "concluded"
            and row.verdict is not None
        )

    async def latest_concluded(self, conversation: str) -> Investigation | None:
        """The conversation's most recent concluded investigation (what a correction is about)."""
        async with self.db.session() as session:
            return await session.scalar(
                select(Investigation)
                .where(
                    Investigation.conversation_id == conversation,
                    Investigation.status == "concluded",
                    Investigation.verdict.is_not(None),
                )
                .order_by(Investigation.created_at.desc(), Investigation.id.desc())
                .limit(1)
            )

    async def vote(
        self,
        investigation_id: str,
        user: str,
        value: Value,
        *,
        verdict: str | None = None,
        comment: str | None = None,
        source: Source = "button",
    ) -> bool:
        """Record or change ``user``'s vote; True when it replaced an earlier one."""
        now = utcnow()
        insert = sqlite_insert if self.db.is_sqlite else pg_insert
        values = {"value": value, "verdict": verdict, "comment": comment, "source": source}
        statement = (
            insert(Feedback)
            .values(
                investigation_id=investigation_id,
                user=user,
                created_at=now,
                updated_at=now,
                **values,
            )
            .on_conflict_do_update(
                index_elements=[Feedback.investigation_id, Feedback.user],
                set_={**values, "updated_at": now},
            )
        )
        async with self.db.session() as session:
            before = await session.scalar(
                select(Feedback.id).where(
                    Feedback.investigation_id == investigation_id, Feedback.user == user
                )
            )
            await session.execute(statement)
        return before is not None

    async def votes(self, investigation_id: str) -> list[Feedback]:
        """Every analyst's current vote on the investigation."""
        async with self.db.session() as session:
            return list(
                await session.scalars(
                    select(Feedback)
                    .where(Feedback.investigation_id == investigation_id)
                    .order_by(Feedback.id)
                )
            )
