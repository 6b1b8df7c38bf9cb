"""What a person's App Home shows (``bot.events.home``), read only for channels the caller
has already checked the person may see; no channels finds nothing (fail closed).

Their open cases, unowned open cases of high or critical severity, this week's verdicts,
the work queue of those channels (waiting, running, held by a budget) and this week's
agreement with the analysts and cost (``core.quality.tally`` over
``store.cases.quality.outcomes``). Each is one bounded query; ``channels_with_cases`` is
the one that finds the channels worth asking Slack about.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from core.quality import tally
from store.cases import quality
from store.db.engine import Database
from store.queue.types import ACTIVE, DEFERRED_KIND
from store.schema import CaseRow, CaseStatus, WorkKind, WorkRow, WorkState, utcnow

ROWS = 25  # a section's rows at most
CHANNELS = 50  # channels with cases looked at at most
WEEK = timedelta(days=7)
URGENT = ("high", "critical")
OPEN = (CaseStatus.OPEN, CaseStatus.ACKNOWLEDGED)
RUNS = (WorkKind.ALERT, WorkKind.MENTION, WorkKind.FOLLOWUP)


@dataclass(frozen=True)
class Queue:
    """Investigations in the channels: queued, running, held by a budget rule."""

    waiting: int = 0
    running: int = 0
    held: int = 0


@dataclass(frozen=True)
class Week:
    """This week's cases in the channels: how many, decided by a person, agreed, cost."""

    cases: int = 0
    decided: int = 0
    agreed: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class HomeData:
    """Everything one Home shows."""

    mine: list[CaseRow] = field(default_factory=list)
    unowned: list[CaseRow] = field(default_factory=list)
    verdicts: list[CaseRow] = field(default_factory=list)
    queue: Queue = Queue()
    week: Week = Week()


def _since(db: Database, now: datetime | None = None) -> datetime:
    since = (now or utcnow()) - WEEK
    return since.replace(tzinfo=None) if db.is_sqlite else since  # SQLite: naive UTC


async def channels_with_cases(db: Database, *, limit: int = CHANNELS) -> list[str]:
    """The channels of open cases and of this week's, the most recently active first."""
    newest = func.max(CaseRow.created_at)
    statement = (
        select(CaseRow.channel, newest)
        .where(
            CaseRow.channel.is_not(None),
            or_(CaseRow.status != CaseStatus.RESOLVED, CaseRow.created_at >= _since(db)),
        )
        .group_by(CaseRow.channel)
        .order_by(newest.desc())
        .limit(limit)
    )
    async with db.reading() as session:
        return [str(channel) for channel, _ in await session.execute(statement) if channel]


async def home_data(db: Database, user: str, channels: Collection[str]) -> HomeData:
    """``user``'s Home over ``channels`` (the ones they may see)."""
    wanted = sorted({c for c in channels if c})
    if not user or not wanted:
        return HomeData()
    here = CaseRow.channel.in_(wanted)
    still_open = CaseRow.status.in_(OPEN)  # an index range (``ix_cases_owner``), not ``!=``
    newest = (CaseRow.created_at.desc(), CaseRow.id.desc())
    since = _since(db)
    async with db.reading() as session:
        mine = await session.scalars(
            select(CaseRow)
            .where(here, still_open, CaseRow.owner == user)
            .order_by(*newest)
            .limit(ROWS)
        )
        unowned = await session.scalars(
            select(CaseRow)
            .where(here, still_open, CaseRow.owner.is_(None), CaseRow.severity.in_(URGENT))
            .order_by(*newest)
            .limit(ROWS)
        )
        verdicts = await session.scalars(
            select(CaseRow)
            .where(here, CaseRow.socbot_verdict.is_not(None), CaseRow.created_at >= since)
            .order_by(*newest)
            .limit(ROWS)
        )
        rows = list(mine), list(unowned), list(verdicts)
        queue = await _queue(session, wanted)
    found = await quality.outcomes(db, since, keys=(), channels=wanted)
    total = tally(found)
    week = Week(
        cases=total.cases,
        decided=total.decided,
        agreed=total.agreed,
        cost_usd=round(sum(o.cost_usd for o in found), 6),
    )
    return HomeData(*rows, queue=queue, week=week)


async def _queue(session: AsyncSession, channels: list[str]) -> Queue:
    held = WorkRow.kind == DEFERRED_KIND
    statement = (
        select(WorkRow.state, held, func.count())
        .where(
            WorkRow.channel.in_(channels),
            WorkRow.state.in_(ACTIVE),
            or_(WorkRow.kind.in_(RUNS), held),
        )
        .group_by(WorkRow.state, held)
    )
    counts = {"waiting": 0, "running": 0, "held": 0}
    for state, is_held, n in await session.execute(statement):
        key = "held" if is_held else "running" if state == WorkState.RUNNING else "waiting"
        counts[key] += int(n)
    return Queue(**counts)
