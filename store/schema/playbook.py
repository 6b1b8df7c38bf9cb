"""The team playbook: bullets and their tags, learning runs, analysts' votes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base, utcnow
from store.schema.states import LearningStatus


class Bullet(Base):
    """One entry of the team playbook (``store.playbook.bullets``); only ``active`` ones reach
    prompts.

    A proposal is a row with status ``proposed``: ``op`` says what approving it does
    (``add`` itself, ``update``/``merge`` it in place of ``targets``, ``retire`` the
    ``targets``). ``provenance`` keeps where it came from: investigations, evidence,
    who proposed, approved or rejected it.
    """

    __tablename__ = "playbook_bullets"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    content: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))  # fact | pattern | anti_pattern | skill
    scope: Mapped[str] = mapped_column(String(120), default="global")  # global|source:x|channel:C
    triggers: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    helpful: Mapped[int] = mapped_column(Integer, default=0)
    harmful: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), default="proposed")
    op: Mapped[str] = mapped_column(String(16), default="add")  # add|update|merge|retire
    targets: Mapped[list[str]] = mapped_column(JSON, default=list)
    provenance: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    times_loaded: Mapped[int] = mapped_column(Integer, default=0)
    times_used: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_playbook_status", "status"),)


class BulletTag(Base):
    """What one investigation's learning did to a bullet's counters (``helpful`` /
    ``harmful`` / ``neutral``): a later run for the same investigation replaces this
    effect instead of adding to it (``store.playbook.bullets.PlaybookStore.count_tags``)."""

    __tablename__ = "bullet_tags"
    investigation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    bullet_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tag: Mapped[str] = mapped_column(String(16))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LearningRun(Base):
    """One Reflector + Curator pass over an investigation with ground truth."""

    __tablename__ = "learning_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    investigation_id: Mapped[str] = mapped_column(String(64), index=True)
    # running | done | skipped | failed | interrupted (shutdown, crash: the work row runs again)
    status: Mapped[str] = mapped_column(String(16), default=LearningStatus.RUNNING)
    work_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)  # its row
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Feedback(Base):
    """One analyst's vote on one investigation's verdict (a second vote replaces it)."""

    __tablename__ = "feedback"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    investigation_id: Mapped[str] = mapped_column(String(64), index=True)
    user: Mapped[str] = mapped_column(String(64))
    value: Mapped[str] = mapped_column(String(32))  # "correct" | "incorrect"
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the verdict the analyst says is right (on "incorrect"), and where the vote came from
    verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    source: Mapped[str] = mapped_column(  # button|modal|thread; server default: migration 0002
        String(16), default="button", server_default="button"
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, server_default=func.current_timestamp()
    )

    __table_args__ = (UniqueConstraint("investigation_id", "user", name="uq_feedback_vote"),)
