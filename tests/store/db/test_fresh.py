"""``store.db.fresh``: a brand-new SQLite database made at head has exactly the schema the
migrations give, table by table, column by column, index by index (the search index and
its triggers too); a database that holds anything is left to the migrations."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import Connection

from store.db.engine import Database
from store.db.fresh import create_at_head
from store.db.revisions import at_head
from store.schema import AlertRow


def _sql(value: str | None) -> str:
    """SQL text compared without its layout or quoting."""
    return re.sub(r"\s+", " ", re.sub(r"[\"'`\[\]]", "", value or "")).strip().lower()


def schema(conn: Connection) -> dict[str, Any]:
    """Every table's columns and foreign keys, every index (its table, uniqueness, columns
    and condition), every trigger and virtual table, as SQLite reports them."""
    out: dict[str, Any] = {}
    objects = conn.exec_driver_sql("SELECT type, name, tbl_name, sql FROM sqlite_master").all()
    for kind, name, table, sql in objects:
        if kind == "table":
            columns = {
                row[1]: (row[2].upper(), row[3], _sql(row[4]), row[5], row[6])
                for row in conn.exec_driver_sql(f'PRAGMA table_xinfo("{name}")')
            }
            keys = sorted(
                tuple(row[2:]) for row in conn.exec_driver_sql(f'PRAGMA foreign_key_list("{name}")')
            )
            checks = sorted(_sql(c) for c in re.findall(r"CHECK\s*\((.*?)\)(?:,|\s*\)$)", sql))
            virtual = _sql(sql) if sql.upper().startswith("CREATE VIRTUAL") else None
            out[f"table {name}"] = {
                "columns": columns,
                "keys": keys,
                "checks": checks,
                "virtual": virtual,
            }
            for index in conn.exec_driver_sql(f'PRAGMA index_list("{name}")').all():
                cols = [row[2] for row in conn.exec_driver_sql(f'PRAGMA index_info("{index[1]}")')]
                key = index[1] if not index[1].startswith("sqlite_autoindex") else f"auto {cols}"
                found = [s for k, n, _, s in objects if k == "index" and n == index[1]]
                where = _sql(found[0]).partition(" where ")[2] if found and found[0] else ""
                out[f"index {name}.{key}"] = (bool(index[2]), index[3], cols, where)
        elif kind == "trigger":
            out[f"trigger {name}"] = (table, _sql(sql))
    return out


async def _schema(db: Database) -> dict[str, Any]:
    async with db.engine.connect() as conn:
        return await conn.run_sync(schema)


async def test_a_new_database_made_at_head_equals_the_migrated_one(tmp_path: Path) -> None:
    migrated = Database(f"sqlite+aiosqlite:///{tmp_path / 'migrated.db'}")
    made_url = f"sqlite+aiosqlite:///{tmp_path / 'made.db'}"
    assert await create_at_head(made_url)
    made = Database(made_url)
    try:
        await migrated.create()  # every migration from an empty file
        assert await at_head(made.engine)  # later starts find it current: nothing runs
        want, got = await _schema(migrated), await _schema(made)
    finally:
        await migrated.close()
        await made.close()
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        assert got[name] == value, name
    assert "table investigations_fts" in want and "trigger alerts_fts_insert" in want


async def test_a_database_with_anything_in_it_is_left_to_the_migrations(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    db = Database(url)
    try:
        async with db.engine.begin() as conn:
            await conn.execute(text("CREATE TABLE notes (id INTEGER PRIMARY KEY)"))
        assert not await create_at_head(url)
        assert not await at_head(db.engine)  # untouched: no alembic_version
        await db.create()  # the migrations adopt it, and keep what was there
        assert await at_head(db.engine)
        async with db.session() as session:
            await session.execute(text("INSERT INTO notes (id) VALUES (1)"))
            assert await session.scalar(select(func.count()).select_from(AlertRow)) == 0
    finally:
        await db.close()
    assert not await create_at_head(url)  # made once is never made again


async def test_postgresql_is_always_migrated() -> None:
    assert not await create_at_head("postgresql+asyncpg://socbot@127.0.0.1:1/none")
