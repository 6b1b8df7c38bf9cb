"""The cases list's indexes: the unresolved cases by severity and age (``ix_cases_queue``)
and by owner, severity and age (``ix_cases_queue_owner``: mine, unowned), each only over
the cases not resolved (``store.cases.browse``).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | None = None
depends_on: str | None = None

UNRESOLVED = "status != 'resolved'"  # store.schema.cases.UNRESOLVED as of this revision
INDEXES = {
    "ix_cases_queue": ["severity", "created_at", "id"],
    "ix_cases_queue_owner": ["owner", "severity", "created_at", "id"],
}


def upgrade() -> None:
    with op.batch_alter_table("cases") as batch:
        for name, columns in INDEXES.items():
            batch.create_index(
                name,
                columns,
                unique=False,
                sqlite_where=sa.text(UNRESOLVED),
                postgresql_where=sa.text(UNRESOLVED),
            )


def downgrade() -> None:
    with op.batch_alter_table("cases") as batch:
        for name in reversed(INDEXES):
            batch.drop_index(name)
