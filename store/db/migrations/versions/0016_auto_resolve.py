"""What a policy rule's ``auto_resolve`` asked for, kept with the policy's record of the
alert (``policy_hits.auto_resolve``, store/schema/policy.py): the case reads it when the
investigation concludes (``store.cases.auto``).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("policy_hits") as batch:
        batch.add_column(sa.Column("auto_resolve", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("policy_hits") as batch:
        batch.drop_column("auto_resolve")
