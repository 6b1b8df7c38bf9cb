"""Work as rows: the durable queue replicas claim from (store/queue/work.py).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "work",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("thread", sa.String(length=200), nullable=False),
        sa.Column("channel", sa.String(length=32), nullable=False),
        sa.Column("thread_ts", sa.String(length=32), nullable=False),
        sa.Column("requester", sa.String(length=64), nullable=True),
        sa.Column("alert_id", sa.String(length=64), nullable=True),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("not_before", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stop_requested", sa.Boolean(), nullable=False),
        sa.Column("posted", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("work", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_work_alert_id"), ["alert_id"], unique=False)
        batch_op.create_index("ix_work_state_priority", ["state", "priority", "id"], unique=False)
        batch_op.create_index("ix_work_thread", ["thread", "state"], unique=False)
        batch_op.create_index(
            "uq_work_running_thread",
            ["thread"],
            unique=True,
            sqlite_where=sa.text("state = 'running'"),
            postgresql_where=sa.text("state = 'running'"),
        )


def downgrade() -> None:
    with op.batch_alter_table("work", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_work_running_thread",
            sqlite_where=sa.text("state = 'running'"),
            postgresql_where=sa.text("state = 'running'"),
        )
        batch_op.drop_index("ix_work_thread")
        batch_op.drop_index("ix_work_state_priority")
        batch_op.drop_index(batch_op.f("ix_work_alert_id"))

    op.drop_table("work")
