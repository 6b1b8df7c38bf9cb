"""The investigation pages' list (``store.investigations.browse``): severity and source as
columns (filled from the stored record), and indexes for newest-first keyset pages and their
filters.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

INDEXES = {
    "investigations": {
        "ix_investigations_created": ["created_at", "id"],
        "ix_investigations_verdict": ["verdict", "created_at", "id"],
        "ix_investigations_severity": ["severity", "created_at", "id"],
        "ix_investigations_source": ["source", "created_at", "id"],
    },
    "alerts": {"ix_alerts_investigation": ["investigation_id"]},
}
COLUMNS = {"severity": 16, "source": 32}


def _inspect() -> sa.Inspector:
    return sa.inspect(op.get_bind())


def upgrade() -> None:
    present = {c["name"] for c in _inspect().get_columns("investigations")}
    if "severity" not in present:  # else adopted: made by ``create_all`` (like 0001)
        with op.batch_alter_table("investigations", schema=None) as batch_op:
            for name, size in COLUMNS.items():
                batch_op.add_column(sa.Column(name, sa.String(length=size), nullable=True))
        table = sa.table(
            "investigations",
            sa.column("record", sa.JSON),
            sa.column("severity", sa.String),
            sa.column("source", sa.String),
        )
        severity = table.c.record[("conclusion", "severity")].as_string()
        source = table.c.record[("alert", "source")].as_string()
        op.execute(
            table.update().values(
                severity=sa.func.substr(severity, 1, 16), source=sa.func.substr(source, 1, 32)
            )
        )
    for name, indexes in INDEXES.items():
        made = {str(i["name"]) for i in _inspect().get_indexes(name)}
        with op.batch_alter_table(name, schema=None) as batch_op:
            for index, columns in indexes.items():
                if index not in made:
                    batch_op.create_index(index, columns, unique=False)


def downgrade() -> None:
    for name, indexes in INDEXES.items():
        with op.batch_alter_table(name, schema=None) as batch_op:
            for index in indexes:
                batch_op.drop_index(index)
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        for column in COLUMNS:
            batch_op.drop_column(column)
