"""Alert storms in the database: storms, groups, each alert's storm (store/triage/storms.py).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

OPEN = sa.text("ended_at IS NULL")


def _columns(table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    op.create_table(
        "alert_storms",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel", sa.String(length=32), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("board_ts", sa.String(length=32), nullable=True),
        sa.Column("board_claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_storms", schema=None) as batch_op:
        batch_op.create_index(
            "uq_alert_storms_open",
            ["channel"],
            unique=True,
            sqlite_where=OPEN,
            postgresql_where=OPEN,
        )
    op.create_table(
        "alert_groups",
        sa.Column("leader_id", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("members", sa.Integer(), nullable=False),
        sa.Column("thread_ts", sa.String(length=32), nullable=True),
        sa.Column("card_ts", sa.String(length=32), nullable=True),
        sa.Column("card_claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("leader_id"),
    )
    with op.batch_alter_table("alert_groups", schema=None) as batch_op:
        batch_op.create_index("ix_alert_groups_key", ["channel", "key", "started_at"], unique=False)
    if "storm_id" in _columns("alerts"):  # adopted: made by ``create_all`` (like 0001)
        return
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("storm_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("status_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_alerts_storm", ["storm_id", "status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_index("ix_alerts_storm")
        batch_op.drop_column("status_at")
        batch_op.drop_column("storm_id")
    with op.batch_alter_table("alert_groups", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_groups_key")
    op.drop_table("alert_groups")
    with op.batch_alter_table("alert_storms", schema=None) as batch_op:
        batch_op.drop_index("uq_alert_storms_open", sqlite_where=OPEN, postgresql_where=OPEN)
    op.drop_table("alert_storms")
