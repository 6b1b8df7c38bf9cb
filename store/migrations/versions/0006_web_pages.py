"""The investigation pages' list (store/browse.py): newest first by keyset, alerts by run.

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

INDEXES = {
    "investigations": {
        "ix_investigations_created": ["created_at", "id"],
        "ix_investigations_verdict": ["verdict", "created_at", "id"],
    },
    "alerts": {"ix_alerts_investigation": ["investigation_id"]},
}


def _indexes(table: str) -> set[str]:
    return {str(i["name"]) for i in sa.inspect(op.get_bind()).get_indexes(table)}


def upgrade() -> None:
    for table, indexes in INDEXES.items():
        present = _indexes(table)  # adopted: made by ``create_all`` (like 0001)
        with op.batch_alter_table(table, schema=None) as batch_op:
            for name, columns in indexes.items():
                if name not in present:
                    batch_op.create_index(name, columns, unique=False)


def downgrade() -> None:
    for table, indexes in INDEXES.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for name in indexes:
                batch_op.drop_index(name)
