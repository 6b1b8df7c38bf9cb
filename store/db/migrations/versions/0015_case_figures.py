"""The run's figures on the case (``cases.tokens``, ``cost_usd``, ``seconds``,
``holdout``: ``store.schema.cases.run_figures``), so the quality report reads one table
without a join or JSON; filled from the runs of the cases already stored. The index
``ix_cases_quality`` covers every column the report reads, so its scans never read the
table.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from store.schema import run_figures

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None

BATCH = 1000
QUALITY_COLUMNS = [  # store.schema.cases.QUALITY_COLUMNS as of this revision
    "created_at",
    "socbot_verdict",
    "status",
    "disposition",
    "auto_resolved",
    "audit",
    "audit_disposition",
    "policy_rule",
    "used_bullets",
    "holdout",
    "source",
    "format",
    "model",
    "severity",
    "tokens",
    "seconds",
    "cost_usd",
    "acknowledged_at",
    "resolved_at",
]
TYPES = {"tokens": sa.Integer, "cost_usd": sa.Float, "seconds": sa.Float, "holdout": sa.Boolean}
CASES = sa.table(
    "cases",
    sa.column("id", sa.Integer),
    sa.column("investigation_id", sa.String),
    *(sa.column(name, kind) for name, kind in TYPES.items()),
)


def _column(name: str) -> sa.Column[object]:
    zero = sa.false() if name == "holdout" else sa.text("0")
    return sa.Column(name, TYPES[name](), nullable=False, server_default=zero)


RUNS = sa.table(
    "investigations",
    sa.column("id", sa.String),
    sa.column("usage", sa.JSON),
    sa.column("record", sa.JSON),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("finished_at", sa.DateTime(timezone=True)),
)


def _fill() -> None:
    """Each stored case's figures, from its run, a batch at a time."""
    bind = op.get_bind()
    after = 0
    while True:
        rows = bind.execute(
            sa.select(
                CASES.c.id, RUNS.c.usage, RUNS.c.record, RUNS.c.created_at, RUNS.c.finished_at
            )
            .select_from(CASES.join(RUNS, RUNS.c.id == CASES.c.investigation_id))
            .where(CASES.c.id > after)
            .order_by(CASES.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        bind.execute(
            CASES.update().where(CASES.c.id == sa.bindparam("key")),
            [
                {"key": r.id, **run_figures(r.usage, r.record, r.created_at, r.finished_at)}
                for r in rows
            ],
        )
        after = rows[-1].id


def upgrade() -> None:
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("cases")}
    with op.batch_alter_table("cases") as batch:
        for name in TYPES:
            if name not in present:  # a schema made from the models has them
                batch.add_column(_column(name))
    _fill()
    with op.batch_alter_table("cases") as batch:
        batch.create_index("ix_cases_quality", QUALITY_COLUMNS, unique=False)


def downgrade() -> None:
    with op.batch_alter_table("cases") as batch:
        batch.drop_index("ix_cases_quality")
        for name in reversed(TYPES):
            batch.drop_column(name)
