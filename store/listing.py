"""Recent investigations and alerts for ``socbot list``, and ids as people type them.

``resolve_investigation`` turns ``last``, a full id or a unique prefix into the
investigation's id; ``recent_investigations`` and ``recent_alerts`` are the newest
rows first, with the alert (source, title) an investigation was about and its cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.orm import InstrumentedAttribute

from store.db import Database
from store.models import AlertRow, Investigation

Q = TypeVar("Q", bound="Select[*tuple[Any, ...]]")
Column = InstrumentedAttribute[Any]

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
        escaped = typed.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(Investigation.id.like(f"{escaped}%", escape="\\")).limit(6)
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


@dataclass(frozen=True)
class Filters:
    """What ``socbot list`` keeps: the newest ``limit`` rows since ``since`` with the
    given alert source, verdict and status (``None``: any)."""

    limit: int = 20
    since: datetime | None = None
    source: str | None = None
    verdict: str | None = None
    status: str | None = None

    def apply(self, query: Q, created: Column, verdict: Column, status: Column) -> Q:
        """``query`` with these filters on its columns, newest first."""
        if self.source is not None:
            query = query.where(AlertRow.source == self.source)
        if self.since is not None:
            query = query.where(created >= self.since)
        if self.verdict is not None:
            query = query.where(verdict == self.verdict)
        if self.status is not None:
            query = query.where(status == self.status)
        return query.order_by(created.desc()).limit(self.limit)


async def recent_investigations(db: Database, filters: Filters) -> list[Listed]:
    """The newest investigations first, with the alert each was about (if any)."""
    query = filters.apply(
        select(Investigation, AlertRow).outerjoin(
            AlertRow, AlertRow.investigation_id == Investigation.id
        ),
        Investigation.created_at,
        Investigation.verdict,
        Investigation.status,
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    return [_investigation(inv, alert) for inv, alert in rows]


async def recent_alerts(db: Database, filters: Filters) -> list[Listed]:
    """The newest alerts first, with their triage status and investigation's cost."""
    query = filters.apply(
        select(AlertRow, Investigation).outerjoin(
            Investigation, AlertRow.investigation_id == Investigation.id
        ),
        AlertRow.created_at,
        AlertRow.verdict,
        AlertRow.status,
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


def _investigation(inv: Investigation, alert: AlertRow | None) -> Listed:
    title = alert.title if alert else inv.input.strip().splitlines()[0] if inv.input.strip() else ""
    return Listed(
        id=inv.id,
        at=_utc(inv.created_at),
        kind=inv.kind,
        source=alert.source if alert else "chat",
        title=title,
        status=inv.status,
        verdict=inv.verdict,
        cost_usd=_cost(inv),
        investigation_id=inv.id,
    )


def _cost(inv: Investigation | None) -> float | None:
    cost = (inv.usage or {}).get("cost_usd") if inv is not None else None
    return float(cost) if isinstance(cost, int | float) else None


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)
