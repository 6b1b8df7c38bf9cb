"""Calls that asked a person first (``approvals``): one row per request."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base, utcnow
from store.schema.states import ApprovalStatus


class ApprovalRow(Base):
    """``status``: pending → approved | denied | expired. ``key`` names the call in its
    conversation (``core.approvals.ApprovalRequest.key``): a run that starts again after
    a restart finds its request, and the decision made meanwhile, by it."""

    __tablename__ = "approvals"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(64))
    investigation_id: Mapped[str] = mapped_column(String(64))
    conversation_id: Mapped[str] = mapped_column(String(200))
    tool: Mapped[str] = mapped_column(String(100))
    args: Mapped[dict[str, Any]] = mapped_column(JSON)
    why: Mapped[str] = mapped_column(Text)
    estimate: Mapped[str | None] = mapped_column(String(200), nullable=True)
    requested_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=ApprovalStatus.PENDING)
    channel: Mapped[str | None] = mapped_column(String(32), nullable=True)
    message_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_approvals_key", "key", "created_at"),)
