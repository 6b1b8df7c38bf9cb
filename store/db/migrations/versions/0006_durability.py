"""Nothing waits or vanishes after a crash: replicas' beats, who launches an admitted
alert, and which run replaced an interrupted investigation (store/queue/replicas.py,
store/triage/storms.py, store/investigations/runs.py); feedback counts once: each investigation's
effect on a bullet's counters (store/playbook/bullets.py).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def _columns(table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    # each piece only when missing: a database made by ``create_all`` is adopted (like 0001)
    if "replicas" not in sa.inspect(op.get_bind()).get_table_names():
        op.create_table(
            "replicas",
            sa.Column("name", sa.String(length=64), nullable=False),
            sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("name"),
        )
    if "bullet_tags" not in sa.inspect(op.get_bind()).get_table_names():
        op.create_table(
            "bullet_tags",
            sa.Column("investigation_id", sa.String(length=64), nullable=False),
            sa.Column("bullet_id", sa.String(length=32), nullable=False),
            sa.Column("tag", sa.String(length=16), nullable=False),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("investigation_id", "bullet_id"),
        )
    if "launch_by" not in _columns("alerts"):
        with op.batch_alter_table("alerts", schema=None) as batch_op:
            batch_op.add_column(sa.Column("launch_by", sa.String(length=64), nullable=True))
    if "replaced_by" not in _columns("investigations"):
        with op.batch_alter_table("investigations", schema=None) as batch_op:
            batch_op.add_column(sa.Column("replaced_by", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        batch_op.drop_column("replaced_by")
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_column("launch_by")
    op.drop_table("bullet_tags")
    op.drop_table("replicas")
