"""The Gemini model a policy rule asked for (``policy_hits.model``, store/schema.py).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("policy_hits") as batch:
        batch.add_column(sa.Column("model", sa.String(length=80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("policy_hits") as batch:
        batch.drop_column("model")
