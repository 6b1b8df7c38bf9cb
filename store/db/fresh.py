"""A brand-new SQLite database made at the newest schema instead of migrated to it.

``socbot eval run`` often starts on a database file that does not exist yet (a fresh
run folder, the benchmark); running every migration on it costs 1.5 to 4 s of a run.
``create_at_head(url)`` makes such a database in one transaction: the tables and indexes
from the models (``store.schema``), the search index (FTS5 tables and their triggers,
as the migrations leave them), the case tally's triggers (``store.schema.case_tally``)
and ``alembic_version`` at the newest revision, so every later start finds it current.
It does nothing (False) on PostgreSQL, on a database that
holds any table, or when the newest revision is not plainly one line of files
(``store.db.revisions``); ``Database.create`` then migrates as always. A test proves the
schema made here equals the migrated one, table by table, column by column, index by
index.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection

from store.db.engine import Database
from store.db.revisions import head_revision
from store.schema import (
    Base,
    ReplicaRow,  # noqa: F401  (its table is in Base.metadata)
)
from store.schema.case_tally import triggers as tally_triggers
from store.schema.search import FTS_COLUMNS, fts_triggers

TOKENIZE = "unicode61 remove_diacritics 0"  # as migrations 0011 and 0013 made the index
VERSION_TABLE = (
    "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL,"
    " CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
)  # what Alembic creates


def search_index() -> list[str]:
    """The SQLite statements that make the search index of an empty database."""
    statements: list[str] = []
    for name, columns in FTS_COLUMNS.items():
        statements.append(
            f"CREATE VIRTUAL TABLE {name}_fts USING fts5({', '.join(columns)},"
            f" content='{name}', content_rowid='rowid', tokenize=\"{TOKENIZE}\")"
        )
        statements.extend(fts_triggers(name, columns))
    return statements


async def create_at_head(url: str) -> bool:
    """Make the database at ``url`` at the newest schema if it is a brand-new SQLite one;
    whether it did (False: leave it to the migrations)."""
    head = head_revision()
    db = Database(url)
    try:
        if not db.is_sqlite or head is None:
            return False
        async with db.engine.begin() as conn:  # BEGIN IMMEDIATE: one process makes it
            return await conn.run_sync(_create, head)
    finally:
        await db.close()


def _create(conn: Connection, head: str) -> bool:
    if conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar():
        return False  # not brand new: the migrations decide
    Base.metadata.create_all(conn)
    for statement in (*search_index(), *tally_triggers(pg=False), VERSION_TABLE):
        conn.exec_driver_sql(statement)
    conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": head})
    return True
