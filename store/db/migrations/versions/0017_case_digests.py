"""The weekly digests of the cases (store/schema/cases.py ``CaseDigest``, store/cases/
digests.py): one row per ISO week, whose insert makes one replica the one that posts it.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "case_digests",
        sa.Column("week", sa.String(10), primary_key=True),
        sa.Column("channel", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("case_digests")
