"""Text search on an index (store/schema/search.py): SQLite FTS5 tables kept in step by
triggers, PostgreSQL GIN indexes on the words (``tsvector``) of the same columns.

SQLite: ``investigations_fts`` (input, objective) and ``alerts_fts`` (indicator_text)
hold no copy of the text (external content, keyed by the tables' rowid); triggers
write each insert, delete and change of those columns, and ``rebuild`` indexes the
rows already there. A later migration that rebuilds ``investigations`` or ``alerts``
on SQLite (``batch_alter_table`` copies the table, dropping its triggers) must call
``fts_triggers`` and ``rebuild`` again. PostgreSQL: the indexed expressions are
``store.schema.search``'s, the very strings its queries use (an index serves only the
expression it was built on).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

from store.schema.search import ALERT_WORDS, fts_triggers
from store.schema.search import RUN_WORDS_0011 as RUN_WORDS

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None

TOKENIZE = "unicode61 remove_diacritics 0"
FTS = {"investigations": ("input", "objective"), "alerts": ("indicator_text",)}
WORDS = {
    "ix_investigations_words": ("investigations", RUN_WORDS),
    "ix_alerts_words": ("alerts", ALERT_WORDS),
}


def rebuild(name: str) -> str:
    return f"INSERT INTO {name}_fts({name}_fts) VALUES ('rebuild')"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for index, (name, expression) in WORDS.items():
            op.execute(f"CREATE INDEX IF NOT EXISTS {index} ON {name} USING gin (({expression}))")
            op.execute(f"ANALYZE {name}")  # statistics on the words, for the planner
        return
    for name, columns in FTS.items():
        op.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {name}_fts USING fts5("
            f"{', '.join(columns)}, content='{name}', content_rowid='rowid',"
            f' tokenize="{TOKENIZE}")'
        )
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}_fts_{trigger}")
        for statement in fts_triggers(name, columns):
            op.execute(statement)
        op.execute(rebuild(name))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for index in WORDS:
            op.execute(f"DROP INDEX IF EXISTS {index}")
        return
    for name in FTS:
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}_fts_{trigger}")
        op.execute(f"DROP TABLE IF EXISTS {name}_fts")
