"""Reading cases: one by id, by investigation or by alert, and their history."""

from __future__ import annotations

from sqlalchemy import select

from store.db.engine import Database
from store.schema import CaseEvent, CaseRow


async def get(db: Database, case_id: int) -> CaseRow | None:
    """The case ``case_id``, or None."""
    async with db.session() as session:
        return await session.get(CaseRow, case_id)


async def history(db: Database, case_id: int) -> list[CaseEvent]:
    """The case's decisions, oldest first."""
    async with db.session() as session:
        rows = await session.scalars(
            select(CaseEvent).where(CaseEvent.case_id == case_id).order_by(CaseEvent.revision)
        )
        return list(rows)
