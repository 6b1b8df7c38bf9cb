"""The cases' daily tally (store/schema/case_tally.py ``CaseTally``): what the period report
sums instead of scanning the cases, kept in step by triggers on ``cases`` and filled here
from the cases that exist (the triggers first: on PostgreSQL creating them locks out
writers until this commits, so no decision falls between the fill and the triggers).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from store.schema.case_tally import backfill, drop_triggers, triggers

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | None = None
depends_on: str | None = None

KEY = {
    "facet": 16,
    "value": 100,
    "verdict": 32,
    "status": 16,
    "disposition": 32,
}


def upgrade() -> None:
    pg = op.get_bind().dialect.name == "postgresql"
    op.create_table(
        "case_tally",
        sa.Column("day", sa.Date(), primary_key=True),
        *(sa.Column(name, sa.String(n), primary_key=True) for name, n in KEY.items()),
        sa.Column("auto_resolved", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("audit", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("audit_disposition", sa.String(32), primary_key=True),
        sa.Column("cases", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.BigInteger(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sqlite_with_rowid=False,
    )
    for statement in triggers(pg):
        op.execute(statement)
    op.execute(backfill(pg))


def downgrade() -> None:
    for statement in drop_triggers(op.get_bind().dialect.name == "postgresql"):
        op.execute(statement)
    op.drop_table("case_tally")
