"""The alert policy: each decision (``policy_hits``), budget counters, suppressions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base, utcnow
from store.schema.states import SuppressionStatus


class PolicyHit(Base):
    """One alert a policy rule decided: what it did (``outcome``), when, to which source."""

    __tablename__ = "policy_hits"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    alert_id: Mapped[str] = mapped_column(String(64), index=True)
    rule_id: Mapped[str] = mapped_column(String(80))
    origin: Mapped[str] = mapped_column(String(300))  # the rule's file, or "slack"
    source: Mapped[str] = mapped_column(String(32))
    # ignored | suppressed | routed | investigated | deferred (by a budget)
    outcome: Mapped[str] = mapped_column(String(16))
    mode: Mapped[str | None] = mapped_column(String(16), nullable=True)  # engine mode asked for
    model: Mapped[str | None] = mapped_column(String(80), nullable=True)  # Gemini model asked for
    # the rule's auto_resolve as asked (alerts.policy.auto_resolve.record); None: off
    auto_resolve: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        Index("ix_policy_hits_rule", "rule_id", "at"),
        Index("ix_policy_hits_outcome", "outcome"),
    )


class PolicyBudget(Base):
    """Investigations a budget rule let through for one source in one hour or day."""

    __tablename__ = "policy_budgets"
    rule_id: Mapped[str] = mapped_column(String(80), primary_key=True)
    source: Mapped[str] = mapped_column(String(32), primary_key=True)
    period_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    used: Mapped[int] = mapped_column(Integer, default=0)


class PolicySuppression(Base):
    """A suppression asked for in Slack: ``proposed`` → ``approved`` | ``rejected``;
    an approved one may be ``lifted``. ``rule`` is the rule as data (``alerts.policy``)."""

    __tablename__ = "policy_suppressions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    status: Mapped[str] = mapped_column(String(16), default=SuppressionStatus.PROPOSED)
    rule: Mapped[dict[str, Any]] = mapped_column(JSON)
    reason: Mapped[str] = mapped_column(Text)
    alert_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    proposed_by: Mapped[str] = mapped_column(String(64))
    proposed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    decided_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    lifted_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lifted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    review_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)

    __table_args__ = (Index("ix_policy_suppressions_status", "status"),)
