"""Tables. Each module in store/ owns the queries for its tables."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


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


class Investigation(Base):
    """One engine run. ``record`` is the final summary; the trace is in TraceEvent."""

    __tablename__ = "investigations"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(200), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # "alert" | "question"
    mode: Mapped[str | None] = mapped_column(String(16), nullable=True)  # "direct" | "planned"
    status: Mapped[str] = mapped_column(String(16), default="running")
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
    source: Mapped[str] = mapped_column(String(16), default="button")  # button|modal|thread
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (UniqueConstraint("investigation_id", "user", name="uq_feedback_vote"),)


class Bullet(Base):
    """One entry of the team playbook (store/playbook.py); only ``active`` ones reach prompts.

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


class LearningRun(Base):
    """One Reflector + Curator pass over an investigation with ground truth."""

    __tablename__ = "learning_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    investigation_id: Mapped[str] = mapped_column(String(64), index=True)
    # running | done | skipped | failed | interrupted (shutdown, crash: the work row runs again)
    status: Mapped[str] = mapped_column(String(16), default="running")
    work_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)  # its row
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


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
    # webhook triage (bot/storm.py): queued | investigating | concluded | failed |
    # cancelled | grouped | deferred; NULL for alerts that never went through it
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
    idle until none of its alerts waits or runs (``store.storms``). ``board_ts`` is its
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
    """Alerts treated as one (``store.storms``): the leader is investigated, members join
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


class IntelCache(Base):
    __tablename__ = "intel_cache"
    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    value: Mapped[dict[str, Any]] = mapped_column(JSON)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SeenEvent(Base):
    """Slack deliveries already handled (event ids, channel:ts pairs)."""

    __tablename__ = "seen_events"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class WorkRow(Base):
    """One unit of work (an alert to investigate, a mention, a follow-up): ``store.work``.

    ``state``: queued → running → done | failed | cancelled. ``thread`` is the
    conversation id; ``request`` holds what is needed to start it again; ``posted``
    what was posted for it (status message ts, conclusion, notices told).
    """

    __tablename__ = "work"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))  # "alert" | "mention" | "followup" | "learn"
    state: Mapped[str] = mapped_column(String(16), default="queued")
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
        # one learning row waiting per investigation: more votes update it (store/learn_queue.py)
        Index(
            "uq_work_queued_learn",
            "thread",
            unique=True,
            sqlite_where=text("state = 'queued' AND kind = 'learn'"),
            postgresql_where=text("state = 'queued' AND kind = 'learn'"),
        ),
    )
