"""The work queue: work rows, the replicas that claim them, Slack deliveries already seen."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base, utcnow
from store.schema.states import WorkState


class WorkRow(Base):
    """One unit of work (an alert to investigate, a mention, a follow-up): ``store.queue.work``.

    ``state``: queued → running → done | failed | cancelled. ``thread`` is the
    conversation id; ``request`` holds what is needed to start it again; ``posted``
    what was posted for it (status message ts, conclusion, notices told).
    """

    __tablename__ = "work"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))  # "alert" | "mention" | "followup" | "learn"
    state: Mapped[str] = mapped_column(String(16), default=WorkState.QUEUED)
    priority: Mapped[int] = mapped_column(Integer, default=0)  # higher first
    thread: Mapped[str] = mapped_column(String(200))
    channel: Mapped[str] = mapped_column(String(32))
    thread_ts: Mapped[str] = mapped_column(String(32))
    requester: Mapped[str | None] = mapped_column(String(64), nullable=True)
    alert_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    stop_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    posted: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (
        Index("ix_work_state_priority", "state", "priority", "id"),
        Index("ix_work_thread", "thread", "state"),
        # the database itself refuses a second running row in one thread
        Index(
            "uq_work_running_thread",
            "thread",
            unique=True,
            sqlite_where=text("state = 'running'"),
            postgresql_where=text("state = 'running'"),
        ),
        # one learning row waiting per investigation: more votes update it (store/queue/learning.py)
        Index(
            "uq_work_queued_learn",
            "thread",
            unique=True,
            sqlite_where=text("state = 'queued' AND kind = 'learn'"),
            postgresql_where=text("state = 'queued' AND kind = 'learn'"),
        ),
    )


class ReplicaRow(Base):
    """A replica's last sign of life (``store.queue.replicas``)."""

    __tablename__ = "replicas"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SeenEvent(Base):
    """Slack deliveries already handled (event ids, channel:ts pairs)."""

    __tablename__ = "seen_events"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
