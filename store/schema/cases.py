"""Cases: who owns each investigated alert, what the analyst decided, and the history of
who did what (``store.cases``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base, utcnow
from store.schema.states import CaseStatus

UNRESOLVED = "status != 'resolved'"  # the partial indexes of the cases list (store.cases.browse)
QUALITY_COLUMNS = (  # what the quality report reads: its index covers them (no table reads)
    "created_at",
    "socbot_verdict",
    "status",
    "disposition",
    "auto_resolved",
    "audit",
    "audit_disposition",
    "policy_rule",
    "used_bullets",
    "holdout",
    "source",
    "format",
    "model",
    "severity",
    "tokens",
    "seconds",
    "cost_usd",
    "acknowledged_at",
    "resolved_at",
)
HOME_WEEK_COLUMNS = (  # a channel's newest cases and its week's agreement and cost (App Home)
    "channel",
    "created_at",
    "id",
    "socbot_verdict",
    "status",
    "disposition",
    "auto_resolved",
    "audit",
    "audit_disposition",
    "tokens",
    "seconds",
    "cost_usd",
)
HOME_OPEN_COLUMNS = ("channel", "created_at", "id", "owner", "severity", "status")  # unresolved


class CaseRow(Base):
    """One case per investigated alert (grouped alerts follow their leader's case) or per
    mention someone took. ``status``: open → acknowledged → resolved, reopenable.

    ``revision`` counts the decisions: every transition is one conditional UPDATE that
    also bumps it, so of two replicas deciding at once one wins and the event it writes
    (``case_events``, unique on ``(case_id, revision)``) is recorded once. The ``socbot_*``
    columns and ``source`` … ``policy_rule`` are copied when the case opens, so the
    agreement figures read one table; so are the run's figures (``tokens``, ``cost_usd``,
    ``seconds``, ``holdout``: ``run_figures``), again when the run finishes or a newer
    run of the alert takes the case. ``severity`` is socbot's severity, else the alert's.
    Audit: an auto-resolved case drawn for blind review (``audit``) gets a human's
    disposition in ``audit_disposition`` without seeing socbot's.
    """

    __tablename__ = "cases"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    investigation_id: Mapped[str] = mapped_column(String(64))
    alert_id: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the leader's
    channel: Mapped[str | None] = mapped_column(String(32), nullable=True)
    thread_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)
    message_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)  # the conclusion
    title: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), default=CaseStatus.OPEN)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    disposition: Mapped[str | None] = mapped_column(String(32), nullable=True)
    escalated: Mapped[bool] = mapped_column(Boolean, default=False)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    missed: Mapped[str | None] = mapped_column(Text, nullable=True)  # what socbot missed
    resolved_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    socbot_verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    socbot_severity: Mapped[str | None] = mapped_column(String(16), nullable=True)
    socbot_confidence: Mapped[str | None] = mapped_column(String(16), nullable=True)
    source: Mapped[str | None] = mapped_column(String(32), nullable=True)
    format: Mapped[str | None] = mapped_column(String(64), nullable=True)
    model: Mapped[str | None] = mapped_column(String(100), nullable=True)
    policy_rule: Mapped[str | None] = mapped_column(String(80), nullable=True)
    severity: Mapped[str | None] = mapped_column(String(16), nullable=True)
    used_bullets: Mapped[bool] = mapped_column(Boolean, default=False)
    auto_resolved: Mapped[bool] = mapped_column(Boolean, default=False)
    audit: Mapped[bool] = mapped_column(Boolean, default=False)  # drawn for blind review
    audit_disposition: Mapped[str | None] = mapped_column(String(32), nullable=True)
    audit_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    audit_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # server defaults: as migration 0015 added the columns (``store.db.fresh`` makes the same)
    tokens: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0, server_default=text("0"))
    seconds: Mapped[float] = mapped_column(Float, default=0.0, server_default=text("0"))
    holdout: Mapped[bool] = mapped_column(  # ran without the playbook
        Boolean, default=False, server_default=false()
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    acknowledged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    reminded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        UniqueConstraint("investigation_id", name="uq_cases_investigation"),
        UniqueConstraint("alert_id", name="uq_cases_alert"),
        Index("ix_cases_status", "status", "severity", "created_at"),
        Index("ix_cases_owner", "owner", "status"),
        Index("ix_cases_created", "created_at", "id"),
        Index("ix_cases_quality", *QUALITY_COLUMNS),
        Index("ix_cases_resolved", "resolved_at", "id"),
        Index("ix_cases_thread", "channel", "thread_ts"),
        Index("ix_cases_home_week", *HOME_WEEK_COLUMNS),
        *(
            Index(name, *columns, sqlite_where=text(UNRESOLVED), postgresql_where=text(UNRESOLVED))
            for name, columns in (
                ("ix_cases_queue", ("severity", "created_at", "id")),
                ("ix_cases_queue_owner", ("owner", "severity", "created_at", "id")),
                ("ix_cases_home_open", HOME_OPEN_COLUMNS),
            )
        ),
    )


def run_figures(
    usage: Any, record: Any, created: datetime | None, finished: datetime | None
) -> dict[str, Any]:
    """What a case copies from its run: tokens and cost (``usage``), the wall clock, and
    whether it ran as a playbook holdout (``record.playbook.holdout``). A value of the
    wrong type counts as nothing."""
    usage = usage if isinstance(usage, dict) else {}
    book = record.get("playbook") if isinstance(record, dict) else None
    seconds = 0.0
    if created is not None and finished is not None:
        seconds = max(0.0, (_naive(finished) - _naive(created)).total_seconds())
    return {
        "tokens": _number(usage.get("total_tokens"), int),
        "cost_usd": _number(usage.get("cost_usd"), float),
        "seconds": seconds,
        "holdout": isinstance(book, dict) and book.get("holdout") is True,
    }


def _number(value: Any, kind: type[Any]) -> Any:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return kind(value) if ok and value == value and value != float("inf") else kind(0)


def _naive(at: datetime) -> datetime:
    """UTC without a zone (SQLite hands back naive UTC, PostgreSQL aware)."""
    return at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo else at


class CaseEvent(Base):
    """One decision on a case: who (``actor``; ``socbot`` for its own), what (``action``,
    a ``CaseAction``), through what (``via``: slack | cli | web | auto), when. ``revision``
    is the case's revision this decision made; ``detail`` holds what it set."""

    __tablename__ = "case_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[int] = mapped_column(Integer)
    revision: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(64))
    via: Mapped[str] = mapped_column(String(8))
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)  # after the decision
    disposition: Mapped[str | None] = mapped_column(String(32), nullable=True)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        UniqueConstraint("case_id", "revision", name="uq_case_events_revision"),
        Index("ix_case_events_created", "created_at"),
    )


class CaseDigest(Base):
    """One weekly digest of the cases (``store.cases.digests``): its ISO week (``2026-W48``)
    is the key, so the first replica to insert it is the one that posts it, once, ever."""

    __tablename__ = "case_digests"
    week: Mapped[str] = mapped_column(String(10), primary_key=True)
    channel: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HomeOpener(Base):
    """Who opened their App Home tab, and when last (``store.cases.home_openers``): one row
    a person, so a change told on any replica refreshes the Homes opened on any other."""

    __tablename__ = "home_openers"
    user_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
