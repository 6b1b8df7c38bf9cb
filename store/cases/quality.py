"""The cases as the quality figures read them, one row per case group (``core.quality``).

``outcomes`` groups the cases created in a period in SQL — by socbot's verdict, the
human decision and ``keys`` (by default every dimension, the bullets and the holdout) —
with the count and the summed tokens, seconds and cost of each group; ``channels`` limits
it to some channels' cases (what a person's App Home shows, ``store.cases.home``). It
reads the cases table alone (the run's figures are copied onto the case,
``store.schema.cases.run_figures``). The period report does not scan the cases: it sums
the daily tally (``store.cases.tally``); ``disagreements`` lists the period's misses.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import ColumnElement, Date, Integer, and_, case, cast, func, literal, or_, select
from sqlalchemy.sql.elements import ColumnElement as Column

from core.quality import NEGATIVE, POSITIVE, Outcome, iso_week
from store.db.engine import Database
from store.schema import CaseRow, CaseStatus

EPOCH_MONDAY = date(1970, 1, 5)
EPOCH_JULIAN = 2440591.5  # julianday('1970-01-05')


def _day(value: Any, sqlite: bool) -> Column[Any]:
    """The ISO week of ``value`` (UTC): its Monday on PostgreSQL; on SQLite, whose date
    functions cost more than the rest of the scan, the weeks since ``EPOCH_MONDAY`` of the
    first ten characters (SQLite stores ``YYYY-MM-DD HH:MM:SS`` in UTC)."""
    if sqlite:
        return cast((func.julianday(func.substr(value, 1, 10)) - EPOCH_JULIAN) / 7, Integer)
    return cast(func.date_trunc("week", func.timezone("UTC", value)), Date)


def klass_of(label: Any) -> Column[Any]:
    """``core.quality.klass`` in SQL: "p" (positive), "n" (negative) or NULL."""
    return case(
        (label.in_(sorted(POSITIVE)), literal("p")),
        (label.in_(sorted(NEGATIVE)), literal("n")),
        else_=None,
    )


def truth_of() -> Column[Any]:
    """The human decision: the auditor's for an auto-resolved case, else the analyst's
    once resolved (None while open)."""
    return case(
        (
            CaseRow.auto_resolved.is_(True),
            case((CaseRow.audit.is_(True), CaseRow.audit_disposition)),
        ),
        (CaseRow.status == CaseStatus.RESOLVED, CaseRow.disposition),
        else_=None,
    )


def _period(since: datetime, until: datetime | None) -> ColumnElement[bool]:
    when = CaseRow.created_at >= since
    return and_(when, CaseRow.created_at < until) if until is not None else when


FIGURES = ("source", "format", "model", "rule", "severity", "week", "bullets", "holdout")


def _keys(sqlite: bool) -> dict[str, Any]:
    """What an ``Outcome`` may be grouped by, beyond the verdict and the human's truth."""
    return {
        "source": CaseRow.source,
        "format": CaseRow.format,
        "model": CaseRow.model,
        "rule": CaseRow.policy_rule,
        "severity": CaseRow.severity,
        "week": _day(CaseRow.created_at, sqlite),
        "bullets": CaseRow.used_bullets,
        "holdout": CaseRow.holdout,
    }


async def outcomes(
    db: Database,
    since: datetime,
    until: datetime | None = None,
    *,
    keys: tuple[str, ...] = FIGURES,
    channels: Collection[str] | None = None,
) -> list[Outcome]:
    """The cases created in ``[since, until)``, one ``Outcome`` per group of cases alike in
    socbot's verdict, the human's truth, auto-resolution and audit, and ``keys`` (other
    attributes are left at ``Outcome``'s defaults), with the summed tokens, seconds and
    cost the case copied from its run (``channels``: only the cases of those channels). One
    scan of the covering index ``ix_cases_quality``: on SQLite (which groups by sorting) one
    wide key costs less than a scan per dimension."""
    columns = _keys(db.is_sqlite)
    grouped = (
        CaseRow.socbot_verdict,
        truth_of().label("truth"),
        CaseRow.auto_resolved,
        CaseRow.audit,
        *(columns[k].label(k) for k in keys),
    )
    query = (
        select(
            *grouped,
            func.count(),
            func.sum(CaseRow.tokens),
            func.sum(CaseRow.seconds),
            func.sum(CaseRow.cost_usd),
        )
        .where(_period(since, until))
        .where(*([] if channels is None else [CaseRow.channel.in_(list(channels))]))
        .group_by(*grouped)
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    return [_outcome(row, keys) for row in rows]


@lru_cache(maxsize=1024)
def week_of(monday: date | int) -> str:
    if isinstance(monday, date):
        return iso_week(monday)
    return iso_week(EPOCH_MONDAY + timedelta(weeks=int(monday)))


MISSING = {"source": "unknown", "format": "unknown", "model": "unknown", "rule": "none"}


def _outcome(row: Any, keys: tuple[str, ...]) -> Outcome:
    verdict, truth, auto, audited = row[:4]
    n, tokens, seconds, cost = row[-4:]
    found: dict[str, Any] = {}
    for key, value in zip(keys, row[4:-4], strict=True):
        if key == "week":
            found[key] = week_of(value)
        elif key in ("bullets", "holdout"):
            found[key] = bool(value)
        else:
            found[key] = value or MISSING.get(key, "unknown")
    return Outcome(
        verdict=verdict,
        disposition=None if auto else truth,
        auto_resolved=bool(auto),
        audited=bool(audited),
        audit_disposition=truth if auto else None,
        tokens=int(tokens or 0),
        seconds=float(seconds or 0.0),
        cost_usd=float(cost or 0.0),
        count=int(n),
        **found,
    )


@dataclass(frozen=True)
class Disagreement:
    """A case the human decided otherwise than socbot, with what links to it."""

    case_id: int
    investigation_id: str
    title: str
    verdict: str | None
    decision: str
    source: str | None
    auto_resolved: bool
    resolved_at: datetime | None
    channel: str | None
    thread_ts: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "investigation_id": self.investigation_id,
            "title": self.title,
            "socbot_verdict": self.verdict,
            "decision": self.decision,
            "source": self.source,
            "auto_resolved": self.auto_resolved,
            "resolved_at": self.resolved_at.isoformat() if self.resolved_at else None,
        }


async def disagreements(
    db: Database, since: datetime, until: datetime | None = None, *, limit: int = 50
) -> list[Disagreement]:
    """The latest ``limit`` disagreements of the period (``core.quality.agrees`` False)."""
    truth, said = truth_of(), klass_of(CaseRow.socbot_verdict)
    differs = and_(klass_of(truth).is_not(None), or_(said.is_(None), said != klass_of(truth)))
    query = (
        select(
            CaseRow.id,
            CaseRow.investigation_id,
            CaseRow.title,
            CaseRow.socbot_verdict,
            truth,
            CaseRow.source,
            CaseRow.auto_resolved,
            func.coalesce(CaseRow.audit_at, CaseRow.resolved_at),
            CaseRow.channel,
            CaseRow.thread_ts,
        )
        .where(_period(since, until), differs)
        .order_by(CaseRow.created_at.desc(), CaseRow.id.desc())
        .limit(limit)
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    return [Disagreement(*row) for row in rows]
