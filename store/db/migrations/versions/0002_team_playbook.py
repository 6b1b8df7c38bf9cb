"""Team playbook: bullets, learning runs, one vote per analyst and investigation.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

Like 0001, it adopts what a database already has (a schema made by ``create_all``
from these models): only missing tables and columns are created.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def _missing(table: str) -> bool:
    return not sa.inspect(op.get_bind()).has_table(table)


def _columns(table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    if _missing("learning_runs"):
        op.create_table(
            "learning_runs",
            sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
            sa.Column("investigation_id", sa.String(length=64), nullable=False),
            sa.Column("status", sa.String(length=16), nullable=False),
            sa.Column("error", sa.Text(), nullable=True),
            sa.Column("result", sa.JSON(), nullable=True),
            sa.Column("tokens", sa.Integer(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index("ix_learning_runs_investigation_id", "learning_runs", ["investigation_id"])
    if _missing("playbook_bullets"):
        op.create_table(
            "playbook_bullets",
            sa.Column("id", sa.String(length=32), nullable=False),
            sa.Column("content", sa.Text(), nullable=False),
            sa.Column("kind", sa.String(length=16), nullable=False),
            sa.Column("scope", sa.String(length=120), nullable=False),
            sa.Column("triggers", sa.JSON(), nullable=False),
            sa.Column("helpful", sa.Integer(), nullable=False),
            sa.Column("harmful", sa.Integer(), nullable=False),
            sa.Column("status", sa.String(length=16), nullable=False),
            sa.Column("op", sa.String(length=16), nullable=False),
            sa.Column("targets", sa.JSON(), nullable=False),
            sa.Column("provenance", sa.JSON(), nullable=False),
            sa.Column("times_loaded", sa.Integer(), nullable=False),
            sa.Column("times_used", sa.Integer(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index("ix_playbook_status", "playbook_bullets", ["status"])
    if "verdict" in _columns("feedback"):
        return
    # One vote per analyst and investigation: keep each analyst's latest vote.
    op.execute(
        "DELETE FROM feedback WHERE id NOT IN "
        '(SELECT MAX(id) FROM feedback GROUP BY investigation_id, "user")'
    )
    with op.batch_alter_table("feedback", schema=None) as batch:
        batch.add_column(sa.Column("verdict", sa.String(length=32), nullable=True))
        batch.add_column(
            sa.Column("source", sa.String(length=16), nullable=False, server_default="button")
        )
        batch.add_column(
            sa.Column(
                "updated_at",
                sa.DateTime(timezone=True),
                nullable=False,
                server_default=sa.func.current_timestamp(),
            )
        )
        batch.create_unique_constraint("uq_feedback_vote", ["investigation_id", "user"])


def downgrade() -> None:
    with op.batch_alter_table("feedback", schema=None) as batch:
        batch.drop_constraint("uq_feedback_vote", type_="unique")
        batch.drop_column("updated_at")
        batch.drop_column("source")
        batch.drop_column("verdict")
    op.drop_index("ix_playbook_status", table_name="playbook_bullets")
    op.drop_table("playbook_bullets")
    op.drop_index("ix_learning_runs_investigation_id", table_name="learning_runs")
    op.drop_table("learning_runs")
