"""Conversations, their messages and pseudonym maps, investigations and their append-only
trace."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base, utcnow
from store.schema.states import InvestigationStatus


class Conversation(Base):
    """A thread of turns; the id is opaque (Slack: ``channel:thread_ts``)."""

    __tablename__ = "conversations"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Message(Base):
    """What the history keeps: user messages and final answers / conclusions."""

    __tablename__ = "messages"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id"), index=True)
    role: Mapped[str] = mapped_column(String(16))  # "user" | "model"
    content: Mapped[str] = mapped_column(Text)
    investigation_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PrivacyMap(Base):
    """A conversation's pseudonyms ([privacy]): sealed (AES-GCM, ``SOCBOT_PRIVACY_KEY``),
    never readable here; pruned with the conversation's investigations."""

    __tablename__ = "privacy_maps"
    conversation_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    sealed: Mapped[bytes] = mapped_column(LargeBinary)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, index=True
    )


class Investigation(Base):
    """One engine run. ``record`` is the final summary; the trace is in TraceEvent."""

    __tablename__ = "investigations"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(200), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # "alert" | "question"
    mode: Mapped[str | None] = mapped_column(String(16), nullable=True)  # "direct" | "planned"
    status: Mapped[str] = mapped_column(String(16), default=InvestigationStatus.RUNNING)
    input: Mapped[str] = mapped_column(Text)
    objective: Mapped[str | None] = mapped_column(Text, nullable=True)
    verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    severity: Mapped[str | None] = mapped_column(String(16), nullable=True)  # the conclusion's
    source: Mapped[str | None] = mapped_column(String(32), nullable=True)  # record.alert.source
    record: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    usage: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    replaced_by: Mapped[str | None] = mapped_column(String(64), nullable=True)  # interrupted
    # what the list's search reads beside the request and objective: the alert's title and
    # entities, the conclusion's summary and findings, the answer (store.schema.search)
    digest: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (
        Index("ix_investigations_created", "created_at", "id"),
        Index("ix_investigations_verdict", "verdict", "created_at", "id"),
        Index("ix_investigations_severity", "severity", "created_at", "id"),
        Index("ix_investigations_source", "source", "created_at", "id"),
    )


class TraceEvent(Base):
    """Append-only trace of an investigation, written as it happens (survives a crash)."""

    __tablename__ = "trace_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    investigation_id: Mapped[str] = mapped_column(String(64), index=True)
    type: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
