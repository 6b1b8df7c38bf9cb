"""Learning runs as work rows: ``learning_runs.work_id``, one waiting learning row per
investigation (``uq_work_queued_learn``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

QUEUED_LEARN = "state = 'queued' AND kind = 'learn'"


def upgrade() -> None:
    with op.batch_alter_table("learning_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("work_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_learning_runs_work_id"), ["work_id"], unique=False)
    # runs a process left behind before learning was work: they will never finish
    op.execute(
        "UPDATE learning_runs SET status = 'interrupted', error = 'socbot stopped during the run' "
        "WHERE status = 'running'"
    )
    with op.batch_alter_table("work", schema=None) as batch_op:
        batch_op.create_index(
            "uq_work_queued_learn",
            ["thread"],
            unique=True,
            sqlite_where=sa.text(QUEUED_LEARN),
            postgresql_where=sa.text(QUEUED_LEARN),
        )


def downgrade() -> None:
    with op.batch_alter_table("work", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_work_queued_learn",
            sqlite_where=sa.text(QUEUED_LEARN),
            postgresql_where=sa.text(QUEUED_LEARN),
        )
    with op.batch_alter_table("learning_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_learning_runs_work_id"))
        batch_op.drop_column("work_id")
