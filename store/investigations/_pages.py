"""How the list reads a page: its columns, its cursors, and the three orders.

Newest first and oldest first read ``ix_investigations_created`` (``created_at, id``)
one way or the other from the cursor. Most severe first reads each severity in turn,
critical to info and then runs without one, each newest first on
``ix_investigations_severity`` (``severity, created_at, id``), until the page is full:
a cursor there also names the severity it stopped in. Every read takes ``size + 1``
rows (one more: is there a next page); a search reads a page from each of its branches
(``store.schema.search``) and merges them.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import ColumnElement, Row, Select, and_, func, select, true, tuple_, union
from sqlalchemy.ext.asyncio import AsyncSession

from store.schema import AlertRow, Investigation

Order = Literal["newest", "oldest", "severity"]
ORDERS: tuple[Order, ...] = ("newest", "oldest", "severity")
SEVERITIES = ("critical", "high", "medium", "low", "info")  # most severe first
NONE = "-"  # in a cursor: the runs without a severity (running, questions)
TITLE_CHARS = 160
ALERT_CHARS = 200

Branches = Callable[[AsyncSession], Awaitable[list[ColumnElement[bool]]]]


def encode_cursor(created_at: datetime, investigation_id: str, severity: str | None = None) -> str:
    """Where the next page starts: after this row (in the severity order: after it in
    ``severity``'s run)."""
    tail = "" if severity is None else f"|{severity}"
    raw = f"{created_at.isoformat()}|{investigation_id}{tail}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str, str | None] | None:
    """The cursor's position (and severity), or ``None`` when it is not one of ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, _, rest = raw.partition("|")
        investigation_id, _, severity = rest.partition("|")
        return datetime.fromisoformat(at), investigation_id, severity or None
    except (ValueError, UnicodeDecodeError):
        return None


def columns(where: ColumnElement[bool], size: int, *, oldest: bool = False) -> Select[Any]:
    """The list's columns, ``size + 1`` rows, newest (or oldest) first."""
    title = func.coalesce(
        func.substr(Investigation.objective, 1, TITLE_CHARS),
        func.substr(Investigation.input, 1, TITLE_CHARS),
    )
    alert = (
        select(func.substr(AlertRow.title, 1, ALERT_CHARS))
        .where(AlertRow.investigation_id == Investigation.id)
        .order_by(AlertRow.created_at)
        .limit(1)
        .scalar_subquery()
    )
    order = (Investigation.created_at, Investigation.id)
    query: Any = (  # more columns than Select's typed overloads name
        select(
            Investigation.id,
            Investigation.created_at,
            Investigation.finished_at,
            Investigation.kind,
            Investigation.status,
            Investigation.verdict,
            Investigation.severity,
            Investigation.source,
            Investigation.conversation_id,
            title.label("title"),
            func.substr(Investigation.objective, 1, TITLE_CHARS).label("objective"),
            func.coalesce(alert, Investigation.record[("alert", "title")].as_string()).label(
                "alert_title"
            ),
            Investigation.record[("conclusion", "confidence")].as_string().label("confidence"),
            Investigation.record[("alert", "entities")].as_string().label("entities"),
            Investigation.usage["cost_usd"].as_float().label("cost_usd"),
        )
        .where(where)
        .order_by(*(c.asc() if oldest else c.desc() for c in order))
        .limit(size + 1)
    )
    return cast("Select[Any]", query)


async def read(
    session: AsyncSession,
    conditions: list[ColumnElement[bool]],
    size: int,
    branches: Branches | None,
    *,
    oldest: bool = False,
) -> list[Row[Any]]:
    """``size + 1`` rows that meet every condition (and one of the search's branches)."""
    if branches is None:
        return list(
            (await session.execute(columns(and_(true(), *conditions), size, oldest=oldest))).all()
        )
    pages = (
        select(columns(and_(*conditions, b), size, oldest=oldest).subquery())
        for b in await branches(session)
    )
    merged = union(*pages).subquery()
    key = (merged.c.created_at, merged.c.id)
    query = select(merged).order_by(*(c.asc() if oldest else c.desc() for c in key))
    return list((await session.execute(query.limit(size + 1))).all())


async def by_time(
    session: AsyncSession,
    conditions: list[ColumnElement[bool]],
    cursor: str | None,
    size: int,
    branches: Branches | None,
    *,
    oldest: bool,
) -> tuple[list[Row[Any]], str | None]:
    position = decode_cursor(cursor) if cursor else None
    if position is not None:
        key = tuple_(Investigation.created_at, Investigation.id)
        at = position[:2]
        conditions = [*conditions, key > at if oldest else key < at]
    found = await read(session, conditions, size, branches, oldest=oldest)
    rows = found[:size]
    more = len(found) > size
    return rows, encode_cursor(rows[-1].created_at, rows[-1].id) if more else None


async def by_severity(
    session: AsyncSession,
    conditions: list[ColumnElement[bool]],
    cursor: str | None,
    size: int,
    branches: Branches | None,
) -> tuple[list[Row[Any]], str | None]:
    """Most severe first: each severity's runs newest first, then those without one."""
    position = decode_cursor(cursor) if cursor else None
    levels: list[str | None] = [*SEVERITIES, None]
    start = 0
    if position is not None and (position[2] or NONE) in [*SEVERITIES, NONE]:
        start = ([*SEVERITIES, NONE]).index(position[2] or NONE)
    rows: list[Row[Any]] = []
    for n, level in enumerate(levels[start:], start):
        same = Investigation.severity == level if level else Investigation.severity.is_(None)
        where = [*conditions, same]
        if position is not None and n == start:
            where.append(tuple_(Investigation.created_at, Investigation.id) < position[:2])
        found = await read(session, where, size - len(rows), branches)
        rows += found
        if len(rows) > size:
            last = rows[size - 1]
            return rows[:size], encode_cursor(last.created_at, last.id, last.severity or NONE)
    return rows, None
