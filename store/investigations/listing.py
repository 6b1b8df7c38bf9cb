"""``socbot list``: recent investigations and alerts as rows, and ids as people type them.

``resolve_investigation`` turns ``last``, a full id or a unique prefix into the
investigation's id. ``recent_investigations`` is the first page of the list reader
the web pages use (``store.investigations.browse``), every run visible; ``recent_alerts`` reads the
alerts table, newest first, with its investigation's status and cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, select

from store.db.engine import Database
from store.investigations.browse import EVERYONE, BrowseStore, Filters, escape_like
from store.investigations.browse import Listed as Run
from store.schema import AlertRow, Investigation

LAST = "last"
MIN_PREFIX = 4


class IdNotFound(LookupError):
    """No investigation, or several, match what was typed; the message says which."""


@dataclass(frozen=True)
class Listed:
    """One row of ``socbot list`` (an investigation, or an alert with ``--alerts``)."""

    id: str
    at: datetime
    kind: str  # "alert" | "question" | the alert's triage status
    source: str
    title: str
    status: str
    verdict: str | None
    cost_usd: float | None
    investigation_id: str | None

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "at": self.at.isoformat()}


async def resolve_investigation(db: Database, typed: str) -> str:
    """The id of the newest investigation (``last``), or the one ``typed`` is the id or a
    prefix of (at least ``MIN_PREFIX`` characters); ``IdNotFound`` otherwise."""
    query = select(Investigation.id)
    if typed.lower() == LAST:
        query = query.order_by(Investigation.created_at.desc()).limit(1)
    elif len(typed) < MIN_PREFIX:
        raise IdNotFound(f"{typed!r} is too short: give {MIN_PREFIX} or more characters of an id")
    else:
        query = query.where(Investigation.id.like(f"{escape_like(typed)}%", escape="\\")).limit(6)
    async with db.session() as session:
        ids = list(await session.scalars(query))
    if typed in ids or len(ids) == 1:
        return typed if typed in ids else ids[0]
    if not ids:
        raise IdNotFound(
            "no investigation in this database"
            if typed.lower() == LAST
            else f"no investigation {typed!r} in this database"
        )
    shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
    raise IdNotFound(f"{typed!r} is the start of several investigations ({shown}): type more")


async def recent_investigations(db: Database, filters: Filters, limit: int = 20) -> list[Listed]:
    """The newest ``limit`` investigations that pass ``filters``."""
    page = await BrowseStore(db).page(filters, EVERYONE, cursor=None, size=limit)
    return [_run(row) for row in page.rows]


def _run(row: Run) -> Listed:
    lines = row.title.strip().splitlines()
    return Listed(
        id=row.id,
        at=_utc(row.created_at),
        kind=row.kind,
        source=row.source or ("chat" if row.kind == "question" else "-"),
        title=lines[0] if lines else "",
        status=row.status,
        verdict=row.verdict,
        cost_usd=row.cost_usd,
        investigation_id=row.id,
    )


async def recent_alerts(db: Database, filters: Filters, limit: int = 20) -> list[Listed]:
    """The newest ``limit`` alerts (source, time, verdict and triage status as filtered),
    with their investigation's status and cost."""
    conditions: list[ColumnElement[bool]] = []
    for column, wanted in (
        (AlertRow.source, filters.source),
        (AlertRow.verdict, filters.verdict),
        (AlertRow.status, filters.status),
    ):
        if wanted is not None:
            conditions.append(column == wanted)
    if filters.since is not None:
        conditions.append(AlertRow.created_at >= filters.since)
    query = (
        select(AlertRow, Investigation)
        .outerjoin(Investigation, AlertRow.investigation_id == Investigation.id)
        .where(*conditions)
        .order_by(AlertRow.created_at.desc())
        .limit(limit)
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    return [
        Listed(
            id=alert.id,
            at=_utc(alert.created_at),
            kind="alert",
            source=alert.source,
            title=alert.title,
            status=alert.status or (inv.status if inv else "stored"),
            verdict=alert.verdict,
            cost_usd=_cost(inv),
            investigation_id=alert.investigation_id,
        )
        for alert, inv in rows
    ]


def _cost(inv: Investigation | None) -> float | None:
    cost = (inv.usage or {}).get("cost_usd") if inv is not None else None
    return float(cost) if isinstance(cost, int | float) else None


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)
