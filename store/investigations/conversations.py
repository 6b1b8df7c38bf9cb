"""Conversations and their messages: what a thread's history is made of.

A conversation id is opaque (Slack: ``channel:thread_ts``; terminal: a uuid). Only
user messages and final answers / conclusions are stored here; plans, tool calls
and reflections live in the investigation trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from store.db.engine import Database
from store.schema import Conversation, Message, utcnow

Role = Literal["user", "model"]


def conversation_id(channel: str, thread_ts: str) -> str:
    """The conversation id of a Slack thread: ``slack:<channel>:<thread_root_ts>``."""
    return f"slack:{channel}:{thread_ts}"


@dataclass(frozen=True)
class StoredMessage:
    """One message of a thread, oldest first when listed."""

    id: int
    role: Role
    content: str
    investigation_id: str | None
    created_at: datetime


class ConversationStore:
    """Queries on ``conversations`` and ``messages``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def ensure(self, conversation_id: str) -> None:
        """Create the conversation if it does not exist yet (safe under concurrency)."""
        async with self.db.session() as session:
            await _ensure(session, self.db.is_sqlite, conversation_id)

    async def exists(self, conversation_id: str) -> bool:
        """Whether the conversation has been stored."""
        async with self.db.session() as session:
            found = await session.get(Conversation, conversation_id)
            return found is not None

    async def append(
        self,
        conversation_id: str,
        role: Role,
        content: str,
        investigation_id: str | None = None,
    ) -> None:
        """Append one message (creating the conversation if needed)."""
        await self.append_many(conversation_id, [(role, content)], investigation_id)

    async def append_many(
        self,
        conversation_id: str,
        messages: list[tuple[Role, str]],
        investigation_id: str | None = None,
    ) -> None:
        """Append several messages in one transaction, in the order given."""
        async with self.db.session() as session:
            await _ensure(session, self.db.is_sqlite, conversation_id)
            for role, content in messages:
                session.add(
                    Message(
                        conversation_id=conversation_id,
                        role=role,
                        content=content,
                        investigation_id=investigation_id,
                    )
                )
            await session.execute(
                update(Conversation)
                .where(Conversation.id == conversation_id)
                .values(updated_at=utcnow())
            )

    async def messages(self, conversation_id: str) -> list[StoredMessage]:
        """Every message of the conversation, oldest first."""
        async with self.db.session() as session:
            rows = await session.scalars(
                select(Message)
                .where(Message.conversation_id == conversation_id)
                .order_by(Message.id)
            )
            return [
                StoredMessage(
                    id=row.id,
                    role="model" if row.role == "model" else "user",
                    content=row.content,
                    investigation_id=row.investigation_id,
                    created_at=row.created_at,
                )
                for row in rows
            ]

    async def count(self, conversation_id: str) -> int:
        """How many messages the conversation holds."""
        async with self.db.session() as session:
            total = await session.scalar(
                select(func.count())
                .select_from(Message)
                .where(Message.conversation_id == conversation_id)
            )
            return int(total or 0)


async def _ensure(session: AsyncSession, is_sqlite: bool, conversation_id: str) -> None:
    insert = sqlite_insert if is_sqlite else pg_insert
    now = utcnow()
    statement = (
        insert(Conversation)
        .values(id=conversation_id, created_at=now, updated_at=now)
        .on_conflict_do_nothing(index_elements=[Conversation.id])
    )
    await session.execute(statement)
