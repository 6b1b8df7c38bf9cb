"""Alembic migrations create exactly the models' schema, on SQLite and PostgreSQL.

A model change without a migration fails here: write one with
``socbot db revision -m "what changed"``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from typer.testing import CliRunner

from cli.main import app
from store.db import migrate
from store.db.engine import Database
from store.schema import Base
from store.slack import SlackStore
from tests.pg_server import PostgresServer

# the tables of socbot before migrations (revision 0001)
BEFORE_MIGRATIONS = (
    "alerts",
    "conversations",
    "feedback",
    "intel_cache",
    "investigations",
    "seen_events",
    "trace_events",
    "messages",
)


def test_one_line_of_revisions() -> None:
    heads = ScriptDirectory.from_config(migrate.alembic_config()).get_heads()
    assert heads == [migrate.head()], f"several heads {heads!r}: rebase your migration"


async def test_sqlite_migrations_equal_the_models(db: Database) -> None:
    assert await migrate.differences(db.engine) == []
    assert await migrate.current(db.engine) == migrate.head()


async def test_postgres_migrations_equal_the_models(pg_db: Database) -> None:
    assert await migrate.differences(pg_db.engine) == []
    assert await migrate.current(pg_db.engine) == migrate.head()
    store = SlackStore(pg_db)  # the dialect-specific upsert works on the migrated schema
    assert await store.claim("Ev1") is True
    assert await store.claim("Ev1") is False


async def test_upgrade_again_changes_nothing(db: Database) -> None:
    await db.create()
    await db.create()
    assert await migrate.differences(db.engine) == []


async def test_a_database_from_before_migrations_is_adopted(tmp_path: Path) -> None:
    old = Database(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}")
    before = [Base.metadata.tables[name] for name in BEFORE_MIGRATIONS]
    async with old.engine.begin() as conn:  # how socbot created its schema before
        await conn.run_sync(lambda sync: Base.metadata.create_all(sync, tables=before))
    store = SlackStore(old)
    await store.remember_thread("C1", "1.0")
    await old.create()
    assert await migrate.current(old.engine) == migrate.head()
    assert await migrate.differences(old.engine) == []
    assert await store.is_known_thread("C1", "1.0")  # data kept
    await old.close()


async def test_replicas_starting_together_migrate_once(postgres: PostgresServer) -> None:
    url = postgres.create_database("together")
    replicas = [Database(url) for _ in range(3)]
    await asyncio.gather(*(r.create() for r in replicas))
    async with replicas[0].engine.connect() as conn:
        tables = await conn.run_sync(lambda sync: inspect(sync).get_table_names())
    assert set(Base.metadata.tables) <= set(tables)
    assert await migrate.differences(replicas[0].engine) == []
    for replica in replicas:
        await replica.close()


@pytest.fixture
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)  # no config/socbot.toml here


@pytest.mark.usefixtures("no_config")
def test_db_upgrade_command_on_both_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres: PostgresServer
) -> None:
    runner = CliRunner()
    for url in (
        f"sqlite+aiosqlite:///{tmp_path / 'var' / 'cli.db'}",
        postgres.create_database("cli_upgrade"),
    ):
        monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
        result = runner.invoke(app, ["db", "upgrade"])
        assert result.exit_code == 0, result.output
        assert f"is at revision {migrate.head()}" in result.output
        assert "password" not in result.output


@pytest.mark.usefixtures("no_config")
def test_db_upgrade_with_a_bad_url_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOCBOT_DATABASE_URL", "nosuchdb://x")
    result = CliRunner().invoke(app, ["db", "upgrade"])
    assert result.exit_code == 2
    assert result.output.startswith("error: invalid setting database_url")
    assert len(result.output.strip().splitlines()) == 1
