"""The list's search finds what a run concluded: ``investigations.digest`` (the alert's
title and entities, the conclusion's summary and key findings, the answer:
``store.schema.search.digest_of``), filled for the runs already stored and indexed with
the request and objective.

Tool results need no change: the trace's ``payload`` is JSON (text on SQLite, ``json``
on PostgreSQL, neither with a size limit), so it holds each result whole up to
``core.events.STORED_RESULT_CHARS``.

SQLite: ``investigations_fts`` is made again over (input, objective, digest), its
triggers with it, and rebuilt. PostgreSQL: ``ix_investigations_words`` is made again on
``RUN_WORDS``, which now holds ``digest`` (an index serves only the expression it was
built on).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from store.schema.search import FTS_COLUMNS, RUN_WORDS, RUN_WORDS_0011, digest_of, fts_triggers

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None

TOKENIZE = "unicode61 remove_diacritics 0"
BATCH = 1000
RUNS = sa.table(
    "investigations",
    sa.column("id", sa.String),
    sa.column("record", sa.JSON),
    sa.column("digest", sa.Text),
)


def _fill() -> None:
    """Each stored run's digest, from its record, a batch at a time."""
    bind = op.get_bind()
    after = ""
    while True:
        rows = bind.execute(
            sa.select(RUNS.c.id, RUNS.c.record)
            .where(RUNS.c.id > after, RUNS.c.record.is_not(None))
            .order_by(RUNS.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        found: list[dict[str, Any]] = [
            {"key": row.id, "text": digest_of(row.record)}
            for row in rows
            if isinstance(row.record, dict)
        ]
        if found:
            bind.execute(
                RUNS.update().where(RUNS.c.id == sa.bindparam("key")),
                [{"key": f["key"], "digest": f["text"] or None} for f in found],
            )
        after = rows[-1].id


def _fts(columns: tuple[str, ...]) -> None:
    for trigger in ("insert", "delete", "update"):
        op.execute(f"DROP TRIGGER IF EXISTS investigations_fts_{trigger}")
    op.execute("DROP TABLE IF EXISTS investigations_fts")
    op.execute(
        f"CREATE VIRTUAL TABLE investigations_fts USING fts5({', '.join(columns)},"
        f" content='investigations', content_rowid='rowid', tokenize=\"{TOKENIZE}\")"
    )
    for statement in fts_triggers("investigations", columns):
        op.execute(statement)
    op.execute("INSERT INTO investigations_fts(investigations_fts) VALUES ('rebuild')")


def _words(expression: str) -> None:
    op.execute("DROP INDEX IF EXISTS ix_investigations_words")
    op.execute(f"CREATE INDEX ix_investigations_words ON investigations USING gin (({expression}))")
    op.execute("ANALYZE investigations")


def upgrade() -> None:
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("investigations")}
    if "digest" not in present:  # a schema made from the models before migrations has it
        op.add_column("investigations", sa.Column("digest", sa.Text(), nullable=True))
    _fill()
    if op.get_bind().dialect.name == "postgresql":
        _words(RUN_WORDS)
    else:
        _fts(FTS_COLUMNS["investigations"])


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _words(RUN_WORDS_0011)
        op.drop_column("investigations", "digest")
        return
    for trigger in ("insert", "delete", "update"):
        op.execute(f"DROP TRIGGER IF EXISTS investigations_fts_{trigger}")
    with op.batch_alter_table("investigations") as batch:  # copies the table
        batch.drop_column("digest")
    _fts(("input", "objective"))
