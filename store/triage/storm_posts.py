"""The messages of alert storms that any replica edits: who posts them, where they are.

The storm message of a storm (``alert_storms.board_ts``) and the note of a forwarded
alert's group (``alert_groups.card_ts``) are each posted once: by the replica whose
``claim_*`` succeeds (an ``UPDATE`` that only one transaction can win; a claim lapses
after ``CLAIM``, should its replica die while posting). Once posted, every replica
edits them. A webhook group's card is posted by the replica that admitted its
leader (``alert_card_posted``). Two replicas may post one: the first launcher stalled
past its lease with its card in flight, and the replica that took the launch over
posted another. The card recorded first is the alert's (its thread runs the
investigation); the other poster edits its own to point there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import CursorResult, Update, or_, select, update

from store.db.engine import Database
from store.schema import AlertGroup, AlertRow, AlertStorm, utcnow

CLAIM = timedelta(seconds=60)  # a claim to post a message lapses (its replica died)


@dataclass(frozen=True)
class GroupView:
    """A group as stored: how many joined its leader, where its card or note is."""

    leader_id: str
    members: int
    thread_ts: str | None  # a forwarded leader's message: the note goes in its thread
    card_ts: str | None  # the card (webhook) or the note (forwarded), once posted


class StormPosts:
    """Queries on the posted messages of storms and groups (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def claim_board(self, storm_id: int) -> bool:
        """True for the one replica that is to post the open storm's message now."""
        now = _now(self.db)
        return await self._claim(
            update(AlertStorm)
            .where(AlertStorm.id == storm_id, AlertStorm.board_ts.is_(None))
            .where(AlertStorm.ended_at.is_(None))
            .where(
                or_(
                    AlertStorm.board_claimed_at.is_(None),
                    AlertStorm.board_claimed_at < now - CLAIM,
                )
            )
            .values(board_claimed_at=now)
        )

    async def board_posted(self, storm_id: int, ts: str | None) -> None:
        """The storm message is ``ts`` (None: it could not be posted; the claim lapses)."""
        async with self.db.session() as session:
            await session.execute(
                update(AlertStorm)
                .where(AlertStorm.id == storm_id)
                .values(board_ts=ts, board_claimed_at=None)
            )

    async def group(self, leader_id: str) -> GroupView | None:
        async with self.db.reading() as session:
            row = await session.get(AlertGroup, leader_id)
            if row is None:
                return None
            return GroupView(row.leader_id, row.members, row.thread_ts, row.card_ts)

    async def claim_note(self, leader_id: str) -> bool:
        """True for the one replica that is to post a forwarded group's note now."""
        now = _now(self.db)
        return await self._claim(
            update(AlertGroup)
            .where(AlertGroup.leader_id == leader_id, AlertGroup.card_ts.is_(None))
            .where(
                or_(AlertGroup.card_claimed_at.is_(None), AlertGroup.card_claimed_at < now - CLAIM)
            )
            .values(card_claimed_at=now)
        )

    async def alert_card_posted(self, alert_id: str, channel: str, ts: str) -> str:
        """Record ``ts`` in ``channel`` as the alert's card, and its group's, unless a card
        of the alert in ``channel`` is recorded already; the alert's card (``ts`` or that
        one). One ``UPDATE`` that only one transaction can win."""
        async with self.db.session() as session:
            first = await session.execute(
                update(AlertRow)
                .where(AlertRow.id == alert_id)
                .where(
                    or_(
                        AlertRow.slack_ts.is_(None),
                        AlertRow.slack_channel.is_(None),
                        AlertRow.slack_channel != channel,
                    )
                )
                .values(slack_channel=channel, slack_ts=ts)
            )
            if isinstance(first, CursorResult) and first.rowcount == 1:
                await session.execute(
                    update(AlertGroup)
                    .where(AlertGroup.leader_id == alert_id)
                    .values(card_ts=ts, card_claimed_at=None)
                )
                return ts
            recorded = await session.scalar(
                select(AlertRow.slack_ts).where(AlertRow.id == alert_id)
            )
        if recorded is None:
            raise LookupError(f"alert {alert_id!r} is not stored")
        return recorded

    async def card_posted(self, leader_id: str, ts: str | None) -> None:
        """The group's card or note is ``ts`` (None: not posted; the claim lapses)."""
        async with self.db.session() as session:
            await session.execute(
                update(AlertGroup)
                .where(AlertGroup.leader_id == leader_id)
                .values(card_ts=ts, card_claimed_at=None)
            )

    async def _claim(self, statement: Update) -> bool:
        async with self.db.session() as session:
            result = await session.execute(statement)
            return isinstance(result, CursorResult) and result.rowcount == 1


def _now(db: Database) -> datetime:
    now = utcnow()
    return now.replace(tzinfo=None) if db.is_sqlite else now  # SQLite: naive UTC
