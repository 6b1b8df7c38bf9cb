"""Reading cases: one by id or by investigation, lists for people and scripts, history.

``Listing`` filters what the terminal and the pages ask for (status, owner, unowned,
severity), newest first or oldest first ("by age")."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import select

from store.db.engine import Database
from store.schema import CaseEvent, CaseRow, CaseStatus

LIST_LIMIT = 500


@dataclass(frozen=True)
class Listing:
    """Which cases to list (every filter set must hold)."""

    status: CaseStatus | None = None  # None: every status
    open_only: bool = False  # open or acknowledged
    owner: str | None = None
    unowned: bool = False
    severity: str | None = None
    oldest_first: bool = False
    limit: int = 50


async def get(db: Database, case_id: int) -> CaseRow | None:
    """The case ``case_id``, or None."""
    async with db.reading() as session:
        return await session.get(CaseRow, case_id)


async def of_run(db: Database, investigation_id: str) -> CaseRow | None:
    """The case an investigation opened, or None."""
    async with db.reading() as session:
        return await session.scalar(
            select(CaseRow).where(CaseRow.investigation_id == investigation_id)
        )


async def listed(db: Database, listing: Listing) -> list[CaseRow]:
    """The cases ``listing`` asks for."""
    statement = select(CaseRow)
    if listing.status is not None:
        statement = statement.where(CaseRow.status == listing.status)
    if listing.open_only:
        statement = statement.where(CaseRow.status != CaseStatus.RESOLVED)
    if listing.owner is not None:
        statement = statement.where(CaseRow.owner == listing.owner)
    if listing.unowned:
        statement = statement.where(CaseRow.owner.is_(None))
    if listing.severity is not None:
        statement = statement.where(CaseRow.severity == listing.severity)
    order = (
        (CaseRow.created_at, CaseRow.id)
        if listing.oldest_first
        else (CaseRow.created_at.desc(), CaseRow.id.desc())
    )
    statement = statement.order_by(*order).limit(max(1, min(listing.limit, LIST_LIMIT)))
    async with db.reading() as session:
        return list((await session.scalars(statement)).all())


async def newest_open_in(db: Database, channels: Collection[str]) -> CaseRow | None:
    """The newest open (or acknowledged) case in one of ``channels``; none for none."""
    wanted = [c for c in channels if c]
    if not wanted:
        return None
    statement = (
        select(CaseRow)
        .where(CaseRow.channel.in_(wanted), CaseRow.status != CaseStatus.RESOLVED)
        .order_by(CaseRow.created_at.desc(), CaseRow.id.desc())
        .limit(1)
    )
    async with db.reading() as session:
        return await session.scalar(statement)


async def history(db: Database, case_id: int) -> list[CaseEvent]:
    """The case's decisions, oldest first."""
    async with db.reading() as session:
        rows = await session.scalars(
            select(CaseEvent).where(CaseEvent.case_id == case_id).order_by(CaseEvent.revision)
        )
        return list(rows)


async def event(db: Database, case_id: int, revision: int) -> CaseEvent | None:
    """The decision that made ``revision`` of the case."""
    async with db.reading() as session:
        return await session.scalar(
            select(CaseEvent).where(CaseEvent.case_id == case_id, CaseEvent.revision == revision)
        )
