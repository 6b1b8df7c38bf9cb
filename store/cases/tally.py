"""The period report's figures read from the daily tally (``store.schema.case_tally``):
two queries over at most a few thousand rows a month, whatever the number of cases.

A period is whole UTC days (``days``: the tally knows the day a case opened, not the
hour). Agreement, intervals, the confusion matrix, the breakdowns, the audit per rule,
the playbook's figures, cost and the counts by status and disposition are exact: they are
sums of counts. The time to acknowledge and to resolve comes from a histogram of fixed
buckets (16 a doubling): a percentile is the nearest rank's bucket, given as its
geometric middle — within ``PRECISION`` (2.2 %) of the exact nearest rank, 0.5 s below
one second.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Date, DateTime, Integer, cast, func, select

from core.quality import Outcome, nearest_rank
from store.cases.quality import EPOCH_JULIAN, MISSING, week_of
from store.db.engine import Database
from store.schema import CaseStatus, CaseTally
from store.schema.case_tally import DIMENSION_COLUMNS, SPANS, middle

DAILY = ("all", "playbook")  # read per week: their outcomes carry it
_STATE = (
    CaseTally.verdict,
    CaseTally.status,
    CaseTally.disposition,
    CaseTally.auto_resolved,
    CaseTally.audit,
    CaseTally.audit_disposition,
)
_SUMS = (
    func.sum(CaseTally.cases),
    func.sum(CaseTally.tokens),
    func.sum(CaseTally.seconds),
    func.sum(CaseTally.cost_usd),
)


@dataclass
class Tallied:
    """A period's tally: ``facets`` maps ``all``, ``playbook`` and each dimension to its
    outcomes (an outcome carries only its facet's attribute, and the week in ``all`` and
    ``playbook``); ``counts`` the cases by ``(status, disposition)``; ``spans`` a
    histogram (bucket → cases) of each span."""

    facets: dict[str, list[Outcome]] = field(default_factory=dict)
    counts: dict[tuple[str, str | None], int] = field(default_factory=dict)
    spans: dict[str, dict[int, int]] = field(default_factory=dict)


def days(since: datetime, until: datetime) -> tuple[datetime, datetime]:
    """``[since, until)`` widened to whole UTC days: midnight of ``since``'s day, and of the
    day after ``until``'s unless ``until`` is a midnight (a naive time is UTC)."""

    def utc(at: datetime) -> datetime:
        return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)

    first, last = utc(since), utc(until)
    end = datetime.combine(last.date(), time(), UTC)
    if end != last:
        end += timedelta(days=1)
    return datetime.combine(first.date(), time(), UTC), end


async def read(db: Database, first: date, last: date) -> Tallied:
    """The tally of the cases opened on the days ``[first, last)``."""
    period = (CaseTally.day >= first, CaseTally.day < last, CaseTally.cases != 0)
    week = _week(db.is_sqlite)
    daily = (
        select(week, CaseTally.facet, CaseTally.value, *_STATE, *_SUMS)
        .where(*period, CaseTally.facet.in_(DAILY))
        .group_by(week, CaseTally.facet, CaseTally.value, *_STATE)
    )
    grouped = (
        select(CaseTally.facet, CaseTally.value, *_STATE, *_SUMS)
        .where(*period, CaseTally.facet.not_in(DAILY))
        .group_by(CaseTally.facet, CaseTally.value, *_STATE)
    )
    async with db.reading() as session:
        per_day = (await session.execute(daily)).all()
        per_value = (await session.execute(grouped)).all()
    found = Tallied(facets={facet: [] for facet in (*DAILY, *DIMENSION_COLUMNS)})
    found.spans = {span: {} for span in SPANS}
    counts: dict[tuple[str, str | None], int] = defaultdict(int)
    for monday, facet, value, *rest in per_day:
        state, sums = rest[:6], rest[6:]
        if facet == "all":
            counts[(state[1], state[2] or None)] += int(sums[0])
            extra: dict[str, Any] = {}
        else:
            extra = {"bullets": value[:1] == "1", "holdout": value[1:2] == "1"}
        found.facets[facet].append(_outcome(state, sums, week=week_of(monday), **extra))
    for facet, value, *rest in per_value:
        state, sums = rest[:6], rest[6:]
        if facet in SPANS:
            found.spans[facet][int(value)] = int(sums[0])
        elif facet in DIMENSION_COLUMNS:
            text = value or MISSING.get(facet, "unknown")
            found.facets[facet].append(_outcome(state, sums, **{facet: text}))
    found.counts = dict(counts)
    return found


def _week(sqlite: bool) -> Any:
    """A tally day's ISO week, as ``store.cases.quality.week_of`` reads it: its Monday on
    PostgreSQL, the weeks since ``EPOCH_MONDAY`` on SQLite."""
    if sqlite:
        return cast((func.julianday(CaseTally.day) - EPOCH_JULIAN) / 7, Integer)
    return cast(func.date_trunc("week", cast(CaseTally.day, DateTime)), Date)


def _outcome(state: Sequence[Any], sums: Sequence[Any], **found: Any) -> Outcome:
    """One tally group as ``Outcome``: the same truth as ``store.cases.quality`` gives."""
    verdict, status, disposition, auto, audit, audit_disposition = state
    auto, audited = bool(auto), bool(audit)
    if auto:
        truth = (audit_disposition or None) if audited else None
    else:
        truth = (disposition or None) if status == CaseStatus.RESOLVED else None
    n, tokens, seconds, cost = sums
    return Outcome(
        verdict=verdict or None,
        disposition=None if auto else truth,
        auto_resolved=auto,
        audited=audited,
        audit_disposition=truth if auto else None,
        tokens=int(tokens or 0),
        seconds=float(seconds or 0.0),
        cost_usd=float(cost or 0.0),
        count=int(n),
        **found,
    )


def percentiles(
    histogram: dict[int, int], ps: tuple[float, ...] = (0.5, 0.9)
) -> dict[float, float | None]:
    """Each of ``ps`` (nearest rank) as its bucket's middle, rounded to 0.1 s."""
    total = sum(histogram.values())
    found: dict[float, float | None] = {}
    for p in ps:
        if not total:
            found[p] = None
            continue
        rank, seen = nearest_rank(p, total), 0
        for number in sorted(histogram):
            seen += histogram[number]
            if seen > rank:
                found[p] = round(middle(number), 1)
                break
    return found
