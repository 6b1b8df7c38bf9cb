"""Cases and their history (store/schema/cases.py, store/cases/).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None

CASE_INDEXES = {
    "ix_cases_status": ["status", "severity", "created_at"],
    "ix_cases_owner": ["owner", "status"],
    "ix_cases_created": ["created_at", "id"],
    "ix_cases_resolved": ["resolved_at", "id"],
    "ix_cases_thread": ["channel", "thread_ts"],
}


def _when(name: str) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=True)


def upgrade() -> None:
    op.create_table(
        "cases",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("investigation_id", sa.String(length=64), nullable=False),
        sa.Column("alert_id", sa.String(length=64), nullable=True),
        sa.Column("channel", sa.String(length=32), nullable=True),
        sa.Column("thread_ts", sa.String(length=32), nullable=True),
        sa.Column("message_ts", sa.String(length=32), nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("disposition", sa.String(length=32), nullable=True),
        sa.Column("escalated", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("missed", sa.Text(), nullable=True),
        sa.Column("resolved_by", sa.String(length=64), nullable=True),
        sa.Column("socbot_verdict", sa.String(length=32), nullable=True),
        sa.Column("socbot_severity", sa.String(length=16), nullable=True),
        sa.Column("socbot_confidence", sa.String(length=16), nullable=True),
        sa.Column("source", sa.String(length=32), nullable=True),
        sa.Column("format", sa.String(length=64), nullable=True),
        sa.Column("model", sa.String(length=100), nullable=True),
        sa.Column("policy_rule", sa.String(length=80), nullable=True),
        sa.Column("severity", sa.String(length=16), nullable=True),
        sa.Column("used_bullets", sa.Boolean(), nullable=False),
        sa.Column("auto_resolved", sa.Boolean(), nullable=False),
        sa.Column("audit", sa.Boolean(), nullable=False),
        sa.Column("audit_disposition", sa.String(length=32), nullable=True),
        sa.Column("audit_by", sa.String(length=64), nullable=True),
        _when("audit_at"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _when("acknowledged_at"),
        _when("resolved_at"),
        _when("reminded_at"),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("investigation_id", name="uq_cases_investigation"),
        sa.UniqueConstraint("alert_id", name="uq_cases_alert"),
    )
    with op.batch_alter_table("cases", schema=None) as batch_op:
        for name, columns in CASE_INDEXES.items():
            batch_op.create_index(name, columns, unique=False)
    op.create_table(
        "case_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("via", sa.String(length=8), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("disposition", sa.String(length=32), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("case_id", "revision", name="uq_case_events_revision"),
    )
    with op.batch_alter_table("case_events", schema=None) as batch_op:
        batch_op.create_index("ix_case_events_created", ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("case_events", schema=None) as batch_op:
        batch_op.drop_index("ix_case_events_created")
    op.drop_table("case_events")
    with op.batch_alter_table("cases", schema=None) as batch_op:
        for name in CASE_INDEXES:
            batch_op.drop_index(name)
    op.drop_table("cases")
