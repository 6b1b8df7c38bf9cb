"""Who opened their App Home lately (``store.cases.home_openers``): one row a person, so a
change told on any replica refreshes the Homes opened on every replica.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "home_openers",
        sa.Column("user_id", sa.String(32), primary_key=True),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_home_openers_opened_at", "home_openers", ["opened_at"])


def downgrade() -> None:
    op.drop_index("ix_home_openers_opened_at", table_name="home_openers")
    op.drop_table("home_openers")
