"""Pseudonym maps of conversations, sealed (``privacy_maps``, store/schema/investigations.py).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "privacy_maps",
        sa.Column("conversation_id", sa.String(length=200), nullable=False),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("conversation_id"),
    )
    with op.batch_alter_table("privacy_maps", schema=None) as batch_op:
        batch_op.create_index("ix_privacy_maps_updated_at", ["updated_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("privacy_maps", schema=None) as batch_op:
        batch_op.drop_index("ix_privacy_maps_updated_at")
    op.drop_table("privacy_maps")
