"""Initial schema: the tables socbot had before migrations.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

A database created before migrations existed (``create_all``) is adopted: tables it
already has are left as they are.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def _missing(table: str) -> bool:
    return not sa.inspect(op.get_bind()).has_table(table)


def _index(table: str, name: str, columns: list[str]) -> None:
    op.create_index(name, table, columns, unique=False)


def upgrade() -> None:
    if _missing("alerts"):
        op.create_table(
            "alerts",
            sa.Column("id", sa.String(length=64), nullable=False),
            sa.Column("source", sa.String(length=32), nullable=False),
            sa.Column("title", sa.Text(), nullable=False),
            sa.Column("severity", sa.String(length=16), nullable=True),
            sa.Column("raw", sa.JSON(), nullable=False),
            sa.Column("indicators", sa.JSON(), nullable=False),
            sa.Column("indicator_text", sa.Text(), nullable=False),
            sa.Column("event_time", sa.DateTime(timezone=True), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("investigation_id", sa.String(length=64), nullable=True),
            sa.Column("verdict", sa.String(length=32), nullable=True),
            sa.Column("summary", sa.Text(), nullable=True),
            sa.Column("slack_channel", sa.String(length=32), nullable=True),
            sa.Column("slack_ts", sa.String(length=32), nullable=True),
            sa.Column("status", sa.String(length=16), nullable=True),
            sa.Column("group_id", sa.String(length=64), nullable=True),
            sa.PrimaryKeyConstraint("id"),
        )
        _index("alerts", "ix_alerts_created", ["created_at"])
        _index("alerts", "ix_alerts_group", ["group_id"])
        _index("alerts", "ix_alerts_status", ["status"])
    if _missing("conversations"):
        op.create_table(
            "conversations",
            sa.Column("id", sa.String(length=200), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
    if _missing("feedback"):
        op.create_table(
            "feedback",
            sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
            sa.Column("investigation_id", sa.String(length=64), nullable=False),
            sa.Column("user", sa.String(length=64), nullable=False),
            sa.Column("value", sa.String(length=32), nullable=False),
            sa.Column("comment", sa.Text(), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        _index("feedback", "ix_feedback_investigation_id", ["investigation_id"])
    if _missing("intel_cache"):
        op.create_table(
            "intel_cache",
            sa.Column("key", sa.String(length=300), nullable=False),
            sa.Column("value", sa.JSON(), nullable=False),
            sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("key"),
        )
    if _missing("investigations"):
        op.create_table(
            "investigations",
            sa.Column("id", sa.String(length=64), nullable=False),
            sa.Column("conversation_id", sa.String(length=200), nullable=False),
            sa.Column("kind", sa.String(length=16), nullable=False),
            sa.Column("mode", sa.String(length=16), nullable=True),
            sa.Column("status", sa.String(length=16), nullable=False),
            sa.Column("input", sa.Text(), nullable=False),
            sa.Column("objective", sa.Text(), nullable=True),
            sa.Column("verdict", sa.String(length=32), nullable=True),
            sa.Column("record", sa.JSON(), nullable=True),
            sa.Column("usage", sa.JSON(), nullable=True),
            sa.Column("error", sa.Text(), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
            sa.PrimaryKeyConstraint("id"),
        )
        _index("investigations", "ix_investigations_conversation_id", ["conversation_id"])
    if _missing("seen_events"):
        op.create_table(
            "seen_events",
            sa.Column("key", sa.String(length=200), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("key"),
        )
    if _missing("trace_events"):
        op.create_table(
            "trace_events",
            sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
            sa.Column("investigation_id", sa.String(length=64), nullable=False),
            sa.Column("type", sa.String(length=32), nullable=False),
            sa.Column("payload", sa.JSON(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        _index("trace_events", "ix_trace_events_investigation_id", ["investigation_id"])
    if _missing("messages"):
        op.create_table(
            "messages",
            sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
            sa.Column("conversation_id", sa.String(length=200), nullable=False),
            sa.Column("role", sa.String(length=16), nullable=False),
            sa.Column("content", sa.Text(), nullable=False),
            sa.Column("investigation_id", sa.String(length=64), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"]),
            sa.PrimaryKeyConstraint("id"),
        )
        _index("messages", "ix_messages_conversation_id", ["conversation_id"])


def downgrade() -> None:
    for table in (
        "messages",
        "trace_events",
        "seen_events",
        "investigations",
        "intel_cache",
        "feedback",
        "conversations",
        "alerts",
    ):
        op.drop_table(table)
