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
there a next page), a severity at a time, each on an index that holds the view's cases of
one severity in age order — ``ix_cases_queue`` (``severity, created_at, id`` of the
unresolved cases), ``ix_cases_queue_owner`` (the same after ``owner``: mine, unowned),
``ix_cases_status`` (``status, severity, created_at``: resolved). Most severe first reads
critical to info, then the cases without a severity, then any other word, one after
another until the page is full, and its cursor also names the severity it stopped in (the
investigation list's cursors, ``store.investigations.browse.encode_cursor``); by age it
reads a page of each severity and merges them. So every read is an index range in order,
whatever the view, the order or the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    literal_column,
    select,
    tuple_,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession

from core.ids import row_id
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
OTHER_WORDS = 20  # severity words beyond the known ones read at most (a guard)
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
    return CaseRow.channel.in_(sorted(c for c in visibility.channels if c))  # (): none


def in_view(view: View, me: str) -> list[ColumnElement[bool]]:
    """What keeps a case in ``view`` for the viewer ``me``."""
    if view == "resolved":
        return [CaseRow.status == CaseStatus.RESOLVED]
    unresolved = CaseRow.status != literal_column("'resolved'")  # as the indexes say
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
_GAPS = list(zip([None, *sorted(LEVELS)], [*sorted(LEVELS), None], strict=True))
Bucket = str | None  # a severity word, or None: the cases without one
Position = tuple[datetime, int, str | None]  # a cursor's: after this row (in this bucket)
Found = tuple[list[Any], str | None]  # a page's rows and the next page's cursor


def _key(row: Any) -> tuple[datetime, int]:
    return (_naive(row.created_at), row.id)


def _naive(at: datetime) -> datetime:
    return at.replace(tzinfo=None) if at.tzinfo is None else at.astimezone(UTC).replace(tzinfo=None)


def _position(cursor: str | None) -> Position | None:
    found = decode_cursor(cursor) if cursor else None
    number = row_id(found[1]) if found is not None else None
    if found is None or number is None:
        return None
    return found[0], number, found[2]


class _Reader:
    """Reads of one page, in one session: a bucket (one severity) at a time, each on an
    index that holds the view's rows of that severity in age order."""

    def __init__(
        self,
        session: AsyncSession,
        where: list[ColumnElement[bool]],
        seen: ColumnElement[bool] | None,
        size: int,
    ) -> None:
        self.session = session
        self.where = where  # the view's
        self.seen = [] if seen is None else [seen]  # who sees what
        self.size = size

    async def buckets(self) -> list[Bucket]:
        """The known severities most severe first, then none, then any other word the
        view's cases hold, found by a loose index scan: in each gap between the known
        words (in their text order) the first word there, one seek each, all in one
        statement (again after each word found: rare)."""
        words: list[str] = []
        gaps: list[tuple[str | None, str | None]] = list(_GAPS)
        while gaps and len(words) < OTHER_WORDS:
            firsts = (await self.session.execute(select(*(self._first(*g) for g in gaps)))).one()
            gaps = [(w, gap[1]) for gap, w in zip(gaps, firsts, strict=True) if w is not None]
            words += [w for w, _ in gaps if w is not None]
        return [*LEVELS, None, *sorted(words)]

    def _first(self, low: str | None, high: str | None) -> Any:
        """The view's first severity word strictly between ``low`` and ``high``."""
        where = [*self.where, CaseRow.severity.is_not(None)]
        where += [CaseRow.severity > low] if low is not None else []
        where += [CaseRow.severity < high] if high is not None else []
        found = select(CaseRow.severity).where(*where).order_by(CaseRow.severity).limit(1)
        return found.scalar_subquery()

    def query(
        self,
        bucket: Bucket,
        after: tuple[datetime, int] | None,
        limit: int,
        *,
        newest: bool = False,
    ) -> Any:  # a Select of more columns than its typed overloads name
        """Up to ``limit + 1`` rows of ``bucket`` after ``after``, oldest (newest) first."""
        same = CaseRow.severity == bucket  # None: IS NULL
        where = [*self.where, *self.seen, same]
        if after is not None:
            key = tuple_(CaseRow.created_at, CaseRow.id)
            where.append(key < after if newest else key > after)
        order = (CaseRow.created_at, CaseRow.id)
        query = (
            select(*_COLUMNS)
            .where(*where)
            .order_by(*(c.desc() if newest else c.asc() for c in order))
            .limit(limit + 1)
        )
        return query

    async def by_severity(self, position: Position | None) -> Found:
        """Most severe first, each severity oldest first: the buckets one after another."""
        buckets = await self.buckets()
        start = 0
        if position is not None:
            word = None if position[2] in (None, OTHER) else position[2]
            start = buckets.index(word) if word in buckets else len(buckets)
        rows: list[Any] = []
        for n, bucket in enumerate(buckets[start:], start):
            after = position[:2] if position is not None and n == start else None
            statement = self.query(bucket, after, self.size - len(rows))
            rows += list((await self.session.execute(statement)).all())
            if len(rows) > self.size:
                last = rows[self.size - 1]
                return rows[: self.size], encode_cursor(
                    last.created_at, str(last.id), last.severity or OTHER
                )
        return rows, None

    async def by_age(self, position: Position | None, *, newest: bool) -> Found:
        """Oldest (newest) first: a page from each bucket, in one statement, merged."""
        after = position[:2] if position is not None else None
        pages = [
            select(self.query(b, after, self.size, newest=newest).subquery())
            for b in await self.buckets()
        ]
        rows = list((await self.session.execute(union_all(*pages))).all())
        rows.sort(key=_key, reverse=newest)
        if len(rows) <= self.size:
            return rows, None
        last = rows[self.size - 1]
        return rows[: self.size], encode_cursor(last.created_at, str(last.id))


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
    position = _position(cursor)
    async with db.reading() as session:
        reader = _Reader(session, in_view(view, me), visible(visibility), size)
        if order == "severity":
            rows, after = await reader.by_severity(position)
        else:
            rows, after = await reader.by_age(position, newest=order == "newest")
        return CasePage(await _with_entities(session, rows), after)


async def _with_entities(session: AsyncSession, rows: list[Any]) -> list[ListedCase]:
    """The rows with their runs' alert entities (one read for the page)."""
    ids = sorted({r.investigation_id for r in rows})
    entities: dict[str, str | None] = {}
    if ids:
        statement = select(
            Investigation.id, Investigation.record[("alert", "entities")].as_string()
        ).where(Investigation.id.in_(ids))
        entities = {str(i): e for i, e in (await session.execute(statement)).all()}
    return [
        ListedCase(
            **{**r._asdict(), "title": (r.title or "")[:TITLE_CHARS]},
            entities=entities.get(r.investigation_id),
        )
        for r in rows
    ]
