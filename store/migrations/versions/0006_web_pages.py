"""The investigation pages' list (store/browse.py): newest first by keyset, alerts by run.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        batch_op.create_index("ix_investigations_created", ["created_at", "id"], unique=False)
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.create_index("ix_alerts_investigation", ["investigation_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_index("ix_alerts_investigation")
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        batch_op.drop_index("ix_investigations_created")
