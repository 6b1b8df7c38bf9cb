"""Pseudonym maps of conversations ([privacy]): sealed bytes in, sealed bytes out.

The store never sees a map in the clear: ``agent.model.privacy.sealed`` seals it with
the key from the environment before it comes here. A map lives as long as its
conversation's investigations (``store.retention``: kind ``investigations``).
"""

from __future__ import annotations

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from store.db.engine import Database
from store.schema import PrivacyMap, utcnow


class PrivacyMaps:
    """Queries on ``privacy_maps``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def load(self, conversation_id: str) -> bytes | None:
        """The conversation's sealed map, or None when it has none yet."""
        async with self.db.reading() as session:
            row = await session.get(PrivacyMap, conversation_id)
            return None if row is None else bytes(row.sealed)

    async def save(self, conversation_id: str, sealed: bytes) -> None:
        """Store the conversation's sealed map (replacing the one before)."""
        insert = sqlite_insert if self.db.is_sqlite else pg_insert
        now = utcnow()
        statement = (
            insert(PrivacyMap)
            .values(conversation_id=conversation_id, sealed=sealed, updated_at=now)
            .on_conflict_do_update(
                index_elements=[PrivacyMap.conversation_id],
                set_={"sealed": sealed, "updated_at": now},
            )
        )
        async with self.db.session() as session:
            await session.execute(statement)
