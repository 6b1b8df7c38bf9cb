"""The one reader of investigation lists: filtered, newest first, one keyset page at a time.

The pages' list and ``socbot list`` (``store.investigations.listing``) both read here.
``BrowseStore.page`` never counts or offsets: it reads ``size + 1`` rows after the
cursor, newest first, oldest first or most severe first (``store.investigations._pages``
says on which index), so the hundredth page costs what the first does. Filters narrow
the scan: verdict, status, the conclusion's severity and the alert's source (columns
``finish`` fills from the record), the Slack channel (``slack:<channel>:…``
conversations), a date range, and a search (whole words, on an index:
``store.schema.search``) in the request text, the objective, the run's digest and the
linked alerts' indicators, and whether eval runs are shown. ``Visibility`` is who is
asking: the channels they may see and whether terminal runs are theirs (``EVERYONE``:
all).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, false, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from store.db.engine import Database
from store.investigations._pages import ORDERS as ORDERS
from store.investigations._pages import Order as Order
from store.investigations._pages import by_severity, by_time
from store.investigations._pages import decode_cursor as decode_cursor
from store.investigations._pages import encode_cursor as encode_cursor
from store.schema import AlertRow, Investigation
from store.schema.search import branches

SOURCES_TTL_S = 60.0
ALERTS_SHOWN = 50  # of a group's alerts, on its investigation's page
EVAL_PREFIX = "eval-"  # the conversation id of a run ``socbot eval`` made (evals.runner)


@dataclass(frozen=True)
class Visibility:
    """What one viewer may list: ``channels=None`` is every channel (an admin)."""

    channels: frozenset[str] | None
    terminal: bool


EVERYONE = Visibility(channels=None, terminal=True)


@dataclass(frozen=True)
class Filters:
    """What the list keeps (``None``: any)."""

    verdict: str | None = None
    status: str | None = None
    severity: str | None = None
    source: str | None = None
    channel: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    text: str | None = None
    evals: bool | None = None  # eval runs: only them (True), none (False), or with the rest


@dataclass(frozen=True)
class Listed:
    """One row of the list."""

    id: str
    created_at: datetime
    finished_at: datetime | None
    kind: str
    status: str
    verdict: str | None
    severity: str | None
    source: str | None
    conversation_id: str
    title: str  # the objective, else the request
    objective: str | None
    alert_title: str | None  # the (first) alert's
    confidence: str | None  # the conclusion's
    entities: str | None  # the alert's, as the record holds them (JSON text)
    cost_usd: float | None

    @property
    def channel(self) -> str | None:
        return channel_of(self.conversation_id)

    @property
    def is_eval(self) -> bool:
        """A run ``socbot eval`` made (hidden from the pages' list unless asked for)."""
        return self.conversation_id.startswith(EVAL_PREFIX)


@dataclass(frozen=True)
class Page:
    rows: list[Listed]
    next_cursor: str | None


def channel_of(conversation_id: str) -> str | None:
    """``C0123`` for ``slack:C0123:<ts>``; ``None`` for terminal and other runs."""
    kind, _, rest = conversation_id.partition(":")
    channel = rest.split(":", 1)[0] if kind == "slack" else ""
    return channel or None


def escape_like(text: str) -> str:
    """``text`` with ``LIKE``'s wildcards taken literally (use ``escape="\\"``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _in_channel(channel: str) -> ColumnElement[bool]:
    return Investigation.conversation_id.like(escape_like(f"slack:{channel}:") + "%", escape="\\")


def _visible(visibility: Visibility) -> ColumnElement[bool] | None:
    if visibility.channels is None:
        return None if visibility.terminal else Investigation.conversation_id.like("slack:%")
    allowed = [_in_channel(c) for c in sorted(visibility.channels)]
    return or_(*allowed) if allowed else false()


def _conditions(filters: Filters, visibility: Visibility) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    if (seen := _visible(visibility)) is not None:
        out.append(seen)
    if filters.verdict:
        out.append(Investigation.verdict == filters.verdict)
    if filters.status:
        out.append(Investigation.status == filters.status)
    if filters.severity:
        out.append(Investigation.severity == filters.severity)
    if filters.channel:
        out.append(_in_channel(filters.channel))
    if filters.evals is not None:
        of_eval = Investigation.conversation_id.like(EVAL_PREFIX + "%")
        out.append(of_eval if filters.evals else ~of_eval)
    if filters.since:
        out.append(Investigation.created_at >= filters.since)
    if filters.until:
        out.append(Investigation.created_at < filters.until)
    return out


class BrowseStore:
    """Reads for the pages: the list, and the alerts of one investigation."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._sources: tuple[float, list[str]] = (-SOURCES_TTL_S, [])

    async def sources(self, *, fresh: bool = False) -> list[str]:
        """The alert sources stored runs came from (read on the source index, kept a minute)."""
        at, known = self._sources
        if fresh or time.monotonic() - at > SOURCES_TTL_S:
            async with self.db.reading() as session:
                found = await session.scalars(
                    select(Investigation.source).where(Investigation.source.is_not(None)).distinct()
                )
                known = sorted({s for s in found if s}, key=str.lower)
            self._sources = (time.monotonic(), known)
        return known

    async def page(
        self,
        filters: Filters,
        visibility: Visibility,
        *,
        cursor: str | None,
        size: int = 50,
        order: Order = "newest",
    ) -> Page:
        """Up to ``size`` investigations after ``cursor``, in ``order``. The source is
        matched without regard to case, as each stored spelling (on the source index)."""
        conditions = _conditions(filters, visibility)
        if filters.source:
            wanted = filters.source.strip().lower()
            spellings = [s for s in await self.sources() if s.lower() == wanted]
            if not spellings:  # a source first stored in the last minute
                spellings = [s for s in await self.sources(fresh=True) if s.lower() == wanted]
            conditions.append(Investigation.source.in_(spellings) if spellings else false())
        text = filters.text
        sqlite = self.db.is_sqlite

        async def found_by(session: AsyncSession) -> list[ColumnElement[bool]]:
            return await branches(session, text or "", sqlite=sqlite)

        search = found_by if text else None
        async with self.db.reading() as session:
            if order == "severity":
                rows, after = await by_severity(session, conditions, cursor, size, search)
            else:
                oldest = order == "oldest"
                rows, after = await by_time(
                    session, conditions, cursor, size, search, oldest=oldest
                )
        return Page([Listed(**row._asdict()) for row in rows], after)

    async def alerts_of(self, investigation_id: str) -> list[dict[str, Any]]:
        """The stored alerts this investigation ran for (a group's leader and members),
        first stored first: id, title, source, event time, Slack channel and message."""
        async with self.db.reading() as session:
            found = await session.execute(
                select(
                    AlertRow.id,
                    AlertRow.title,
                    AlertRow.source,
                    AlertRow.event_time,
                    AlertRow.slack_channel,
                    AlertRow.slack_ts,
                )
                .where(AlertRow.investigation_id == investigation_id)
                .order_by(AlertRow.created_at)
                .limit(ALERTS_SHOWN)
            )
            return [dict(row._asdict()) for row in found]

    async def tool_result(self, investigation_id: str, seq: int) -> str | None:
        """The stored result (up to 64 KiB) of one ``tool_called`` event of this investigation."""
        from store.schema import TraceEvent

        async with self.db.session() as session:
            payload = await session.scalar(
                select(TraceEvent.payload).where(
                    TraceEvent.id == seq,
                    TraceEvent.investigation_id == investigation_id,
                    TraceEvent.type == "tool_called",
                )
            )
        return str(payload.get("result_preview") or "") if isinstance(payload, dict) else None

    async def status(self, investigation_id: str) -> tuple[str, int] | None:
        """The run's status and how many trace events it has: what the live page polls."""
        from store.schema import TraceEvent

        async with self.db.session() as session:
            status = await session.scalar(
                select(Investigation.status).where(Investigation.id == investigation_id)
            )
            if status is None:
                return None
            events = await session.scalar(
                select(func.count(TraceEvent.id)).where(
                    TraceEvent.investigation_id == investigation_id
                )
            )
            return status, int(events or 0)


def listed_as_dict(row: Listed) -> dict[str, Any]:
    finished = row.finished_at.isoformat() if row.finished_at else None
    return {
        **row.__dict__,
        "channel": row.channel,
        "eval": row.is_eval,
        "created_at": row.created_at.isoformat(),
        "finished_at": finished,
    }
