"""The alert policy: decisions, budget counters, Slack suppressions (store/schema.py).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "policy_hits",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("alert_id", sa.String(length=64), nullable=False),
        sa.Column("rule_id", sa.String(length=80), nullable=False),
        sa.Column("origin", sa.String(length=300), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("policy_hits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_policy_hits_alert_id"), ["alert_id"], unique=False)
        batch_op.create_index("ix_policy_hits_outcome", ["outcome"], unique=False)
        batch_op.create_index("ix_policy_hits_rule", ["rule_id", "at"], unique=False)
    op.create_table(
        "policy_budgets",
        sa.Column("rule_id", sa.String(length=80), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("period_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("rule_id", "source", "period_start"),
    )
    op.create_table(
        "policy_suppressions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("rule", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("alert_id", sa.String(length=64), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("proposed_by", sa.String(length=64), nullable=False),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.String(length=64), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lifted_by", sa.String(length=64), nullable=True),
        sa.Column("lifted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("review_ts", sa.String(length=32), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("policy_suppressions", schema=None) as batch_op:
        batch_op.create_index("ix_policy_suppressions_status", ["status"], unique=False)


def downgrade() -> None:
    op.drop_table("policy_suppressions")
    op.drop_table("policy_budgets")
    with op.batch_alter_table("policy_hits", schema=None) as batch_op:
        batch_op.drop_index("ix_policy_hits_rule")
        batch_op.drop_index("ix_policy_hits_outcome")
        batch_op.drop_index(batch_op.f("ix_policy_hits_alert_id"))
    op.drop_table("policy_hits")
