"""The cases as the quality figures read them (``core.quality``, ``core.playbook_effect``).

``outcomes`` groups the cases created in a period in SQL — by socbot's verdict, the
human decision, source, format, model, rule, severity, week, bullets and holdout — with
the count and the summed tokens, seconds and cost of each group, so 100,000 cases come
back as a few hundred rows. Tokens and cost are the case's latest run's (``usage``), the
seconds its wall clock, the holdout its record's (``record.playbook.holdout``). The
disagreements, the counts by status and disposition and the percentiles of time to
acknowledge and to resolve are their own queries (``disagreements``, ``counts``,
``percentiles``); nothing here loads a row per case.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from sqlalchemy import Boolean, ColumnElement, Date, and_, case, cast, func, literal, or_, select
from sqlalchemy.sql.elements import ColumnElement as Column

from core.quality import NEGATIVE, POSITIVE, Outcome, iso_week, nearest_rank
from store.db.engine import Database
from store.schema import CaseRow, CaseStatus, Investigation

Span = Literal["acknowledge", "resolve"]


def _day(value: Any, sqlite: bool) -> Column[Any]:
    """The Monday of ``value``'s ISO week, as a date (UTC)."""
    if sqlite:
        return func.date(value, "weekday 0", "-6 days")
    return cast(func.date_trunc("week", func.timezone("UTC", value)), Date)


def _seconds(start: Any, end: Any, sqlite: bool) -> Column[Any]:
    if sqlite:
        return (func.julianday(end) - func.julianday(start)) * 86400.0
    return func.extract("epoch", end - start)


def _klass(label: Any) -> Column[Any]:
    return case(
        (label.in_(sorted(POSITIVE)), literal("p")),
        (label.in_(sorted(NEGATIVE)), literal("n")),
        else_=None,
    )


def _truth() -> Column[Any]:
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


async def outcomes(db: Database, since: datetime, until: datetime | None = None) -> list[Outcome]:
    """The cases created in ``[since, until)``, one ``Outcome`` per group of alike cases."""
    sqlite = db.is_sqlite
    holdout = func.coalesce(
        cast(Investigation.record[("playbook", "holdout")].as_boolean(), Boolean), False
    )
    keys = (
        CaseRow.socbot_verdict,
        _truth().label("truth"),
        CaseRow.source,
        CaseRow.format,
        CaseRow.model,
        CaseRow.policy_rule,
        CaseRow.severity,
        _day(CaseRow.created_at, sqlite).label("week"),
        CaseRow.auto_resolved,
        CaseRow.audit,
        CaseRow.used_bullets,
        holdout.label("holdout"),
    )
    sums = (
        func.count().label("n"),
        func.sum(func.coalesce(Investigation.usage["total_tokens"].as_integer(), 0)),
        func.sum(
            func.coalesce(_seconds(Investigation.created_at, Investigation.finished_at, sqlite), 0)
        ),
        func.sum(func.coalesce(Investigation.usage["cost_usd"].as_float(), 0.0)),
    )
    query = (
        select(*keys, *sums)
        .select_from(CaseRow)
        .outerjoin(Investigation, Investigation.id == CaseRow.investigation_id)
        .where(_period(since, until))
        .group_by(*keys)
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    return [_outcome(row) for row in rows]


def _outcome(row: Any) -> Outcome:
    verdict, truth, source, fmt, model, rule, severity, week, auto, audited, bullets, held = row[
        :12
    ]
    n, tokens, seconds, cost = row[12:]
    monday = week if isinstance(week, date) else date.fromisoformat(str(week))
    return Outcome(
        verdict=verdict,
        disposition=None if auto else truth,
        source=source or "unknown",
        format=fmt or "unknown",
        model=model or "unknown",
        rule=rule or "none",
        severity=severity or "unknown",
        week=iso_week(monday),
        auto_resolved=bool(auto),
        audited=bool(audited),
        audit_disposition=truth if auto else None,
        bullets=bool(bullets),
        holdout=bool(held),
        tokens=int(tokens or 0),
        seconds=float(seconds or 0.0),
        cost_usd=float(cost or 0.0),
        count=int(n),
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
    truth, said = _truth(), _klass(CaseRow.socbot_verdict)
    differs = and_(_klass(truth).is_not(None), or_(said.is_(None), said != _klass(truth)))
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


async def counts(
    db: Database, since: datetime, until: datetime | None = None
) -> dict[tuple[str, str | None], int]:
    """Cases of the period by ``(status, disposition)``."""
    query = (
        select(CaseRow.status, CaseRow.disposition, func.count())
        .where(_period(since, until))
        .group_by(CaseRow.status, CaseRow.disposition)
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    return {(str(status), disposition): int(n) for status, disposition, n in rows}


async def percentiles(
    db: Database,
    since: datetime,
    until: datetime | None = None,
    ps: tuple[float, ...] = (0.5, 0.9),
) -> dict[Span, dict[float, float | None]]:
    """Seconds from opening to the first owner (``acknowledge``) and to the resolution by a
    person (``resolve``; auto-resolved cases are not counted), at each of ``ps`` (nearest
    rank), over the cases of the period that got there. One scan reads both spans (two
    floats a case); they are sorted here."""
    sqlite = db.is_sqlite
    by_person = and_(CaseRow.status == CaseStatus.RESOLVED, CaseRow.auto_resolved.is_(False))
    query = select(
        _seconds(CaseRow.created_at, CaseRow.acknowledged_at, sqlite),
        case((by_person, _seconds(CaseRow.created_at, CaseRow.resolved_at, sqlite))),
    ).where(
        _period(since, until),
        or_(CaseRow.acknowledged_at.is_not(None), CaseRow.resolved_at.is_not(None)),
    )
    spans: dict[Span, list[float]] = {"acknowledge": [], "resolve": []}
    async with db.session() as session:
        for ack, done in (await session.execute(query)).all():
            if ack is not None:
                spans["acknowledge"].append(float(ack))
            if done is not None:
                spans["resolve"].append(float(done))
    found: dict[Span, dict[float, float | None]] = {}
    for span, values in spans.items():
        values.sort()
        found[span] = {
            p: round(values[nearest_rank(p, len(values))], 1) if values else None for p in ps
        }
    return found
