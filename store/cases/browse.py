"""The cases list of the pages: the cases one viewer may see, in a view, one keyset page at
a time.

Who may see a case is the investigation list's rule (``store.investigations.browse``'s
``Visibility``, which ``bot.web.auth.access.Access`` decides): every case for an admin
(``channels=None``), otherwise the cases of the viewer's channels — a case's ``channel``
is its run's Slack channel, copied when it opened — and never a terminal run's. Views:
``mine`` (unresolved, owned by the viewer), ``unowned`` (unresolved, no owner), ``open``
(unresolved) and ``resolved``. Orders: ``severity`` (most severe first, then the oldest
first: what waited longest), ``oldest`` and ``newest``.

A page never counts or offsets: it reads ``size + 1`` rows after the cursor (one more: is
there a next page). Oldest and newest first read ``ix_cases_created`` (``created_at,
id``); most severe first reads each severity in turn on ``ix_cases_severity``
(``severity, created_at, id``), critical to info and then the cases without a known one,
until the page is full, and its cursor also names the severity it stopped in (the
investigation list's cursors, ``store.investigations.browse.encode_cursor``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import ColumnElement, and_, false, or_, select, true, tuple_

from store.cases.opening import SEVERITIES
from store.db.engine import Database
from store.investigations.browse import Visibility, decode_cursor, encode_cursor
from store.schema import CaseRow, CaseStatus, Investigation

View = Literal["mine", "unowned", "open", "resolved"]
VIEWS: tuple[View, ...] = ("open", "mine", "unowned", "resolved")
Order = Literal["severity", "oldest", "newest"]
ORDERS: tuple[Order, ...] = ("severity", "oldest", "newest")
LEVELS: tuple[str, ...] = tuple(reversed(SEVERITIES))  # most severe first
OTHER = "-"  # in a cursor: the cases without a known severity
UNRESOLVED = (CaseStatus.OPEN, CaseStatus.ACKNOWLEDGED)
TITLE_CHARS = 300


@dataclass(frozen=True)
class ListedCase:
    """One row of the cases list."""

    id: int
    investigation_id: str
    title: str
    severity: str | None
    status: str
    owner: str | None
    disposition: str | None
    escalated: bool
    channel: str | None
    created_at: datetime
    resolved_at: datetime | None
    entities: str | None  # the run's alert entities as its record holds them (JSON text)


@dataclass(frozen=True)
class CasePage:
    rows: list[ListedCase]
    next_cursor: str | None


def visible(visibility: Visibility) -> ColumnElement[bool] | None:
    """The cases ``visibility`` lets one see (None: all)."""
    if visibility.channels is None:
        return None if visibility.terminal else CaseRow.channel.is_not(None)
    wanted = sorted(c for c in visibility.channels if c)
    return CaseRow.channel.in_(wanted) if wanted else false()


def in_view(view: View, me: str) -> list[ColumnElement[bool]]:
    """What keeps a case in ``view`` for the viewer ``me``."""
    if view == "resolved":
        return [CaseRow.status == CaseStatus.RESOLVED]
    unresolved = CaseRow.status.in_(UNRESOLVED)
    if view == "mine":
        return [unresolved, CaseRow.owner == me]
    if view == "unowned":
        return [unresolved, CaseRow.owner.is_(None)]
    return [unresolved]


_COLUMNS = (
    CaseRow.id,
    CaseRow.investigation_id,
    CaseRow.title,
    CaseRow.severity,
    CaseRow.status,
    CaseRow.owner,
    CaseRow.disposition,
    CaseRow.escalated,
    CaseRow.channel,
    CaseRow.created_at,
    CaseRow.resolved_at,
)


async def _read(
    db: Database, where: list[ColumnElement[bool]], size: int, *, newest: bool = False
) -> list[Any]:
    key = (CaseRow.created_at, CaseRow.id)
    statement = (
        select(*_COLUMNS)
        .where(and_(true(), *where))
        .order_by(*(c.desc() if newest else c.asc() for c in key))
        .limit(size + 1)
    )
    async with db.reading() as session:
        return list((await session.execute(statement)).all())


def _after(position: tuple[datetime, str, str | None], *, newest: bool) -> ColumnElement[bool]:
    key = tuple_(CaseRow.created_at, CaseRow.id)
    at = (position[0], int(position[1]))
    return key < at if newest else key > at


def _position(cursor: str | None) -> tuple[datetime, str, str | None] | None:
    found = decode_cursor(cursor) if cursor else None
    return found if found is not None and found[1].isdigit() else None


def _level(level: str) -> ColumnElement[bool]:
    if level != OTHER:
        return CaseRow.severity == level
    return or_(CaseRow.severity.is_(None), CaseRow.severity.not_in(LEVELS))


async def page(
    db: Database,
    visibility: Visibility,
    *,
    me: str,
    view: View = "open",
    order: Order = "severity",
    cursor: str | None = None,
    size: int = 50,
) -> CasePage:
    """Up to ``size`` cases of ``view`` that ``visibility`` shows, after ``cursor``."""
    where = in_view(view, me)
    if (seen := visible(visibility)) is not None:
        where.append(seen)
    position = _position(cursor)
    rows: list[Any] = []
    after: str | None = None
    if order != "severity":
        newest = order == "newest"
        if position is not None:
            where.append(_after(position, newest=newest))
        found = await _read(db, where, size, newest=newest)
        rows = found[:size]
        if len(found) > size:
            after = encode_cursor(rows[-1].created_at, str(rows[-1].id))
    else:
        levels = [*LEVELS, OTHER]
        start = 0
        if position is not None and (position[2] or OTHER) in levels:
            start = levels.index(position[2] or OTHER)
        for n, level in enumerate(levels[start:], start):
            same = [*where, _level(level)]
            if position is not None and n == start:
                same.append(_after(position, newest=False))
            rows += await _read(db, same, size - len(rows))
            if len(rows) > size:
                rows = rows[:size]
                last = rows[-1]
                word = last.severity if last.severity in LEVELS else OTHER
                after = encode_cursor(last.created_at, str(last.id), word)
                break
    return CasePage(await _with_entities(db, rows), after)


async def _with_entities(db: Database, rows: list[Any]) -> list[ListedCase]:
    """The rows with their runs' alert entities (one read for the page)."""
    ids = sorted({r.investigation_id for r in rows})
    entities: dict[str, str | None] = {}
    if ids:
        statement = select(
            Investigation.id, Investigation.record[("alert", "entities")].as_string()
        ).where(Investigation.id.in_(ids))
        async with db.reading() as session:
            entities = {str(i): e for i, e in (await session.execute(statement)).all()}
    return [
        ListedCase(
            **{**r._asdict(), "title": (r.title or "")[:TITLE_CHARS]},
            entities=entities.get(r.investigation_id),
        )
        for r in rows
    ]
