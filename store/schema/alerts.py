"""Alerts and their triage: the alert rows, a channel's storm and its groups."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base, utcnow


class AlertRow(Base):
    __tablename__ = "alerts"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(Text)
    severity: Mapped[str | None] = mapped_column(String(16), nullable=True)
    raw: Mapped[dict[str, Any]] = mapped_column(JSON)
    indicators: Mapped[list[Any]] = mapped_column(JSON, default=list)
    indicator_text: Mapped[str] = mapped_column(
        Text, default=""
    )  # " ip:1.2.3.4 domain:x " for search
    event_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    investigation_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    slack_channel: Mapped[str | None] = mapped_column(String(32), nullable=True)
    slack_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # an ``AlertStatus`` (webhook triage, bot/intake/triage.py, and the alert policy);
    # NULL for alerts that never went through it
    status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    group_id: Mapped[str | None] = mapped_column(String(64), nullable=True)  # leader's id
    # the alert storm it arrived in (``alert_storms``), and when ``status`` last changed
    storm_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    launch_by: Mapped[str | None] = mapped_column(String(64), nullable=True)  # its card poster

    __table_args__ = (
        Index("ix_alerts_created", "created_at"),
        Index("ix_alerts_investigation", "investigation_id"),
        Index("ix_alerts_status", "status"),
        Index("ix_alerts_group", "group_id"),
        Index("ix_alerts_storm", "storm_id", "status"),
    )


class AlertStorm(Base):
    """One channel's alert storm: from an alert arriving while the channel's triage was
    idle until none of its alerts waits or runs (``store.triage.storms``). ``board_ts`` is its
    storm message, which every replica edits; one open storm per channel."""

    __tablename__ = "alert_storms"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel: Mapped[str] = mapped_column(String(32))
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    board_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)
    board_claimed_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )  # a replica is posting the storm message

    __table_args__ = (
        Index(
            "uq_alert_storms_open",
            "channel",
            unique=True,
            sqlite_where=text("ended_at IS NULL"),
            postgresql_where=text("ended_at IS NULL"),
        ),
    )


class AlertGroup(Base):
    """Alerts treated as one (``store.triage.storms``): the leader is investigated, members join
    it while ``started_at`` is within the grouping window. ``key`` hashes the group key;
    ``card_ts`` is the card (webhook) or the note in ``thread_ts``'s thread (forwarded)."""

    __tablename__ = "alert_groups"
    leader_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    channel: Mapped[str] = mapped_column(String(32))
    key: Mapped[str] = mapped_column(String(64))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    members: Mapped[int] = mapped_column(Integer, default=0)
    thread_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)
    card_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)
    card_claimed_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )  # a replica is posting the group note

    __table_args__ = (Index("ix_alert_groups_key", "channel", "key", "started_at"),)
