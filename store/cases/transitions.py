"""A case's decisions, one store function each: take, assign, resolve, reopen, remind.

Every decision is one transaction: a conditional ``UPDATE`` of the case that names the
revision the decider saw (``revision = :seen``) and the states it may start from, the
``case_events`` row of the new revision, and — for a case with a thread — the
``case_post`` work row that tells the thread (``bot.decisions.case_posts``). Of two
clicks, or two replicas, deciding at once, the first commit wins; the other finds the
revision moved on and changes nothing (``None``): a decision is recorded once, and told
once. A decision that would change nothing (taking your own case, assigning it to its
owner, resolving a resolved case) is refused the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, CursorResult, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.cases.captures import queue_capture
from store.db.engine import Database
from store.schema import (
    CaseAction,
    CaseDisposition,
    CaseEvent,
    CaseRow,
    CaseStatus,
    WorkKind,
    WorkRow,
    WorkState,
    utcnow,
)

SOCBOT = "socbot"  # the actor of socbot's own decisions (reminders, auto-resolution)
POST_PRIORITY = 15  # like webhook deliveries: quick, after alerts
REASON_CHARS = 1000


@dataclass(frozen=True)
class Resolution:
    """What an analyst decided the alert was."""

    disposition: CaseDisposition
    escalated: bool = False
    reason: str | None = None
    missed: str | None = None  # what socbot missed, when the disposition differs from it


@dataclass(frozen=True)
class Decided:
    """A decision that was recorded: the case after it and its event."""

    case: CaseRow
    event: CaseEvent


@dataclass(frozen=True)
class _Change:
    action: CaseAction
    actor: str
    via: str
    allowed: ColumnElement[bool]  # the states this decision may start from
    values: dict[str, Any]
    detail: dict[str, Any] = field(default_factory=dict)
    post: bool = True  # tell the thread
    capture: bool = False  # a disagreement goes to the team's pack (``store.cases.captures``)
    thread: str | None = None  # the post's work thread; None: the case's own (``thread_key``)


def thread_key(case_id: int) -> str:
    """The ``work.thread`` of a case's posts: one after another, apart from its runs."""
    return f"case:{case_id}"


def _now(db: Database) -> datetime:
    now = utcnow()
    return now.replace(tzinfo=None) if db.is_sqlite else now  # SQLite: naive UTC


def _not_resolved() -> ColumnElement[bool]:
    return CaseRow.status != CaseStatus.RESOLVED


def _owner_is_not(user: str) -> ColumnElement[bool]:
    return or_(CaseRow.owner.is_(None), CaseRow.owner != user)


async def take(db: Database, case_id: int, user: str, *, seen: int, via: str) -> Decided | None:
    """``user`` owns the case now (from no owner or from another)."""
    return await assign(db, case_id, user, user, seen=seen, via=via)


async def assign(
    db: Database, case_id: int, actor: str, assignee: str, *, seen: int, via: str
) -> Decided | None:
    """``actor`` gives the case to ``assignee`` (taken, when that is the actor)."""
    action = CaseAction.TAKEN if actor == assignee else CaseAction.ASSIGNED
    values = {
        "owner": assignee,
        "status": CaseStatus.ACKNOWLEDGED,
        "acknowledged_at": _first(_now(db)),
    }
    allowed = and_(_not_resolved(), _owner_is_not(assignee))
    return await _decide(db, case_id, seen, _Change(action, actor, via, allowed, values))


async def resolve(
    db: Database,
    case_id: int,
    actor: str,
    resolution: Resolution,
    *,
    seen: int,
    via: str,
    capture: bool = False,
) -> Decided | None:
    """The analyst's verdict: resolved with a disposition (an unowned case becomes the
    resolver's); with ``capture``, a disposition against socbot's verdict also queues its
    capture into the team's pack, in the same transaction."""
    now = _now(db)
    detail = {
        "escalated": resolution.escalated,
        "reason": _cut(resolution.reason),
        "missed": _cut(resolution.missed),
    }
    values = {
        "status": CaseStatus.RESOLVED,
        "disposition": resolution.disposition,
        "escalated": resolution.escalated,
        "reason": detail["reason"],
        "missed": detail["missed"],
        "resolved_by": actor,
        "resolved_at": now,
        "acknowledged_at": _first(now),
        "owner": func.coalesce(CaseRow.owner, actor),  # an owner stays the owner
    }
    change = _Change(
        CaseAction.RESOLVED, actor, via, _not_resolved(), values, detail, capture=capture
    )
    return await _decide(db, case_id, seen, change)


async def reopen(db: Database, case_id: int, actor: str, *, seen: int, via: str) -> Decided | None:
    """A resolved case is open again; its disposition is withdrawn until the next one."""
    values: dict[str, Any] = {
        "status": CaseStatus.ACKNOWLEDGED,
        "disposition": None,
        "escalated": False,
        "reason": None,
        "missed": None,
        "resolved_by": None,
        "resolved_at": None,
    }
    allowed = CaseRow.status == CaseStatus.RESOLVED
    return await _decide(
        db, case_id, seen, _Change(CaseAction.REOPENED, actor, via, allowed, values)
    )


async def remind(db: Database, case_id: int, *, seen: int) -> Decided | None:
    """Mark an unowned open case reminded, once (the reminder is told by its work row)."""
    allowed = and_(
        CaseRow.status == CaseStatus.OPEN, CaseRow.owner.is_(None), CaseRow.reminded_at.is_(None)
    )
    change = _Change(CaseAction.REMINDED, SOCBOT, "auto", allowed, {"reminded_at": _now(db)})
    return await _decide(db, case_id, seen, change)


async def due_reminders(
    db: Database, unowned_after: dict[str, timedelta], *, limit: int = 100
) -> list[tuple[int, int]]:
    """``(case id, revision)`` of open unowned cases not yet reminded whose severity has a
    delay in ``unowned_after`` and that have waited longer than it."""
    now = _now(db)
    waited = [
        and_(CaseRow.severity == severity, CaseRow.created_at <= now - after)
        for severity, after in unowned_after.items()
    ]
    if not waited:
        return []
    async with db.reading() as session:
        rows = await session.execute(
            select(CaseRow.id, CaseRow.revision)
            .where(
                CaseRow.status == CaseStatus.OPEN,
                CaseRow.owner.is_(None),
                CaseRow.reminded_at.is_(None),
                or_(*waited),
            )
            .order_by(CaseRow.created_at)
            .limit(limit)
        )
        return [(int(i), int(r)) for i, r in rows]


async def _decide(db: Database, case_id: int, seen: int, change: _Change) -> Decided | None:
    async with db.session() as session:
        result = await session.execute(
            update(CaseRow)
            .where(CaseRow.id == case_id, CaseRow.revision == seen, change.allowed)
            .values(**change.values, revision=seen + 1, updated_at=_now(db))
            .execution_options(synchronize_session=False)
        )
        if not isinstance(result, CursorResult) or result.rowcount != 1:
            return None
        case = await session.get(CaseRow, case_id, populate_existing=True)
        assert case is not None
        event = CaseEvent(
            case_id=case_id,
            revision=seen + 1,
            action=change.action,
            actor=change.actor,
            via=change.via,
            owner=case.owner,
            disposition=case.disposition,
            detail=change.detail,
            created_at=_now(db),
        )
        session.add(event)
        if change.post:
            _queue_post(session, case, seen + 1, change.thread)
        if change.capture:
            queue_capture(session, case, seen + 1, change.action)
        await session.flush()
        return Decided(case, event)


def _queue_post(
    session: AsyncSession, case: CaseRow, revision: int, thread: str | None = None
) -> None:
    """The work row that tells the case's thread about ``revision`` (none without one)."""
    if not case.channel or not case.thread_ts:
        return
    session.add(
        WorkRow(
            kind=WorkKind.CASE_POST,
            state=WorkState.QUEUED,
            priority=POST_PRIORITY,
            thread=thread or thread_key(case.id),
            channel=case.channel,
            thread_ts=case.thread_ts,
            request={"case_id": case.id, "revision": revision},
            attempts=0,
            stop_requested=False,
            posted={},
            created_at=utcnow(),
        )
    )


def _first(now: datetime) -> ColumnElement[Any]:
    """``acknowledged_at``: the first acknowledgement counts."""
    return func.coalesce(CaseRow.acknowledged_at, now)


def _cut(text: str | None) -> str | None:
    text = (text or "").strip()
    return text[:REASON_CHARS] or None
