"""App Home's indexes (``store.cases.home``): a channel's cases newest first with what its
week's agreement and cost read (``ix_cases_home_week``, covering: no table reads), and a
channel's unresolved cases newest first with their owner and severity
(``ix_cases_home_open``, only over the cases not resolved). Indexes only: nothing here
reads or depends on the revision before it.

Revision ID: 0020
Revises: 0018 (re-chained onto 0019 at merge)
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | None = None
depends_on: str | None = None

UNRESOLVED = "status != 'resolved'"  # store.schema.cases.UNRESOLVED as of this revision
WEEK = [  # store.schema.cases.HOME_WEEK_COLUMNS as of this revision
    "channel",
    "created_at",
    "id",
    "socbot_verdict",
    "status",
    "disposition",
    "auto_resolved",
    "audit",
    "audit_disposition",
    "tokens",
    "seconds",
    "cost_usd",
]
OPEN = ["channel", "created_at", "id", "owner", "severity", "status"]  # HOME_OPEN_COLUMNS


def upgrade() -> None:
    with op.batch_alter_table("cases") as batch:
        batch.create_index("ix_cases_home_week", WEEK, unique=False)
        batch.create_index(
            "ix_cases_home_open",
            OPEN,
            unique=False,
            sqlite_where=sa.text(UNRESOLVED),
            postgresql_where=sa.text(UNRESOLVED),
        )


def downgrade() -> None:
    with op.batch_alter_table("cases") as batch:
        batch.drop_index("ix_cases_home_open")
        batch.drop_index("ix_cases_home_week")
