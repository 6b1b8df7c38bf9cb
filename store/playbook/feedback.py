"""Analysts' votes on verdicts (``feedback``): one row per analyst and investigation.

``vote`` is an upsert: a second click (or the 👎 dialog, or a correction written in
the thread) changes that analyst's vote instead of adding one, and says whether it
changed anything (``same``: nothing to learn again). A bare 👎 click on an
``incorrect`` vote keeps the verdict and reason the dialog gave. ``votable`` is the
gate for Slack votes: only a concluded investigation that socbot ran in that very
channel and thread can be voted on; anything else (an unknown id, another thread's
investigation, one still running) is refused.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from store.db.engine import Database
from store.investigations.conversations import conversation_id
from store.schema import Feedback, Investigation, InvestigationStatus, utcnow

Value = Literal["correct", "incorrect"]
Source = Literal["button", "modal", "thread"]
Voted = Literal["new", "changed", "same"]


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
            and row.status == InvestigationStatus.CONCLUDED
            and row.verdict is not None
        )

    async def latest_concluded(self, conversation: str) -> Investigation | None:
        """The conversation's most recent concluded investigation (what a correction is about)."""
        async with self.db.session() as session:
            return await session.scalar(
                select(Investigation)
                .where(
                    Investigation.conversation_id == conversation,
                    Investigation.status == InvestigationStatus.CONCLUDED,
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
    ) -> Voted:
        """Record or change ``user``'s vote: ``new``, ``changed``, or ``same`` (nothing
        written: the vote says what it said)."""
        now = utcnow()
        insert = sqlite_insert if self.db.is_sqlite else pg_insert
        mine = (Feedback.investigation_id == investigation_id, Feedback.user == user)
        async with self.db.session() as session:
            before = await session.scalar(select(Feedback).where(*mine))
            if before is not None and before.value == value and verdict is None and comment is None:
                verdict, comment = before.verdict, before.comment  # a bare click again
            values = {"value": value, "verdict": verdict, "comment": comment, "source": source}
            if before is not None and all(
                getattr(before, k) == values[k] for k in ("value", "verdict", "comment")
            ):
                return "same"
            await session.execute(_upsert(insert, investigation_id, user, values, now))
        return "new" if before is None else "changed"

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


def _upsert(
    insert: Any, investigation_id: str, user: str, values: dict[str, Any], now: datetime
) -> Any:
    """One analyst's vote on one investigation, inserted or replaced."""
    return (
        insert(Feedback)
        .values(
            investigation_id=investigation_id, user=user, created_at=now, updated_at=now, **values
        )
        .on_conflict_do_update(
            index_elements=[Feedback.investigation_id, Feedback.user],
            set_={**values, "updated_at": now},
        )
    )
