"""What a person's App Home shows (``bot.events.home``), read only for channels the caller
has already checked the person may see; no channels finds nothing (fail closed).

Their open cases, unowned open cases of high or critical severity, this week's verdicts,
the work queue of those channels (waiting, running, held by a budget) and this week's
agreement with the analysts and cost (``core.quality.Tally``'s counts, in SQL). Each read
is bounded by what is shown and walks an index (``store.schema.cases``:
``ix_cases_home_open`` for a channel's unresolved cases, ``ix_cases_home_week`` for its
newest cases and, covering, its week's figures, ``ix_cases_queue_owner`` for the person's
own): the unowned cases and the verdicts are the newest ``ROWS`` of each channel, merged.
``owned_channels`` says where the person's own cases are, for the channels the caller
checks beside the alert channels.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache

from sqlalchemy import (
    ColumnElement,
    Select,
    bindparam,
    case,
    func,
    literal_column,
    or_,
    select,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession

from store.cases import quality
from store.db.engine import Database
from store.queue.types import ACTIVE, DEFERRED_KIND
from store.schema import CaseRow, WorkKind, WorkRow, WorkState, utcnow

ROWS = 25  # a section's rows at most
CHANNELS = 50  # channels read at most
WEEK = timedelta(days=7)
URGENT = ("high", "critical")
UNRESOLVED = CaseRow.status != literal_column("'resolved'")  # as the partial indexes say
NEWEST = (CaseRow.created_at.desc(), CaseRow.id.desc())
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


def _channels(channels: Collection[str]) -> list[str]:
    return sorted({c for c in channels if c})[:CHANNELS]


async def owned_channels(db: Database, user: str) -> list[str]:
    """The channels of ``user``'s newest ``ROWS`` unresolved cases (whether they may see
    them is the caller's to check)."""
    if not user:
        return []
    statement = (
        select(CaseRow.channel)
        .where(CaseRow.owner == user, UNRESOLVED, CaseRow.channel.is_not(None))
        .order_by(*NEWEST)
        .limit(ROWS)
    )
    async with db.reading() as session:
        return list(dict.fromkeys(str(c) for c in await session.scalars(statement) if c))


async def home_data(db: Database, user: str, channels: Collection[str]) -> HomeData:
    """``user``'s Home over ``channels`` (the ones they may see; the first ``CHANNELS``)."""
    wanted = _channels(channels)
    if not user or not wanted:
        return HomeData()
    since = _since(db)
    async with db.reading() as session:
        mine = await session.scalars(
            select(CaseRow)
            .where(CaseRow.channel.in_(wanted), UNRESOLVED, CaseRow.owner == user)
            .order_by(*NEWEST)
            .limit(ROWS)
        )
        bound = {"since": since, **{f"c{n}": channel for n, channel in enumerate(wanted)}}
        unowned = await session.scalars(_newest("unowned", len(wanted)), bound)
        verdicts = await session.scalars(_newest("verdicts", len(wanted)), bound)
        rows = list(mine), list(unowned), list(verdicts)
        queue = await _queue(session, wanted)
        week = await _week(session, wanted, since)
    return HomeData(*rows, queue=queue, week=week)


SECTIONS: dict[str, tuple[ColumnElement[bool], ...]] = {
    "unowned": (UNRESOLVED, CaseRow.owner.is_(None), CaseRow.severity.in_(URGENT)),
    "verdicts": (CaseRow.created_at >= bindparam("since"), CaseRow.socbot_verdict.is_not(None)),
}


@lru_cache(maxsize=2 * CHANNELS)
def _newest(section: str, channels: int) -> Select[CaseRow]:
    """The newest ``ROWS`` cases of ``SECTIONS[section]`` in ``channels`` channels (bound as
    ``c0``, ``c1``, …): the newest ``ROWS`` of each channel (one index range each, newest
    first, stopping at ``ROWS``), merged. Built once per section and number of channels."""
    each = [
        select(CaseRow.id, CaseRow.created_at)
        .where(CaseRow.channel == bindparam(f"c{n}"), *SECTIONS[section])
        .order_by(*NEWEST)
        .limit(ROWS)
        .subquery()
        for n in range(channels)
    ]
    merged = union_all(*(select(s.c.id, s.c.created_at) for s in each)).subquery()
    ids = select(merged.c.id).order_by(merged.c.created_at.desc(), merged.c.id.desc()).limit(ROWS)
    return select(CaseRow).where(CaseRow.id.in_(ids)).order_by(*NEWEST)


async def _week(session: AsyncSession, channels: list[str], since: datetime) -> Week:
    """The week's figures of ``channels`` in one pass of ``ix_cases_home_week`` (covering):
    ``core.quality.Tally``'s cases, decided and agreed, in SQL as ``store.cases.quality``
    says them (``truth_of``, ``klass_of``), and the summed cost."""
    truth, said = quality.klass_of(quality.truth_of()), quality.klass_of(CaseRow.socbot_verdict)
    statement = select(
        func.count(),
        func.count(truth),
        func.count(case((said == truth, 1))),
        func.coalesce(func.sum(CaseRow.cost_usd), 0.0),
    ).where(CaseRow.channel.in_(channels), CaseRow.created_at >= since)
    cases, decided, agreed, cost = (await session.execute(statement)).one()
    return Week(int(cases), int(decided), int(agreed), round(float(cost), 6))


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
