"""Schema migrations (Alembic, ``store/db/migrations``) on SQLite and PostgreSQL.

``upgrade(db)`` brings a database to the newest revision; every start runs it (it
does nothing when the schema is current), and ``socbot db upgrade`` runs it alone,
e.g. as a deploy step before the replicas start. On PostgreSQL an advisory lock
makes replicas that start together migrate one after the other. A database made
before migrations existed is adopted: the first revision creates only what is
missing.

A change to ``store/schema.py`` needs a revision: ``socbot db revision -m "what"``
writes one by comparing the models with a database at the newest revision (review
it before committing); a test fails while models and migrations disagree.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from store.schema import (
    Base,
    ReplicaRow,  # noqa: F401  (its table is in Base.metadata)
)
from store.schema.search import is_search_object

MIGRATIONS = Path(__file__).parent / "migrations"
_PG_LOCK = 0x50C_B07  # advisory lock id held while migrating
# Alembic's command API keeps module-global state (its ``context`` proxy): in one
# process (tests, terminal runs beside each other) upgrades take turns.
_upgrading: WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = WeakKeyDictionary()


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic ``Config`` for socbot's migrations (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision id."""
    revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert revision is not None
    return revision


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Migrate the database to ``revision`` (default: the newest)."""
    turn = _upgrading.setdefault(asyncio.get_running_loop(), asyncio.Lock())
    async with turn, engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_LOCK})
        await conn.run_sync(lambda sync: command.upgrade(alembic_config(sync), revision))


async def current(engine: AsyncEngine) -> str | None:
    """The database's revision (None: no migration has run)."""
    async with engine.connect() as conn:
        return await conn.run_sync(
            lambda sync: MigrationContext.configure(sync).get_current_revision()
        )


def include(name: str | None, _type: str, _parents: object) -> bool:
    """Whether Alembic compares this object with the models (not the search index's)."""
    return not is_search_object(name)


def include_object(_obj: object, name: str | None, kind: str, *_rest: object) -> bool:
    return include(name, kind, None)


async def differences(engine: AsyncEngine) -> list[Any]:
    """What the models have that the database lacks, or the other way round (empty: equal)."""

    def compare(sync: Connection) -> list[Any]:
        opts = {"compare_type": True, "include_name": include, "include_object": include_object}
        context = MigrationContext.configure(sync, opts=opts)
        return list(compare_metadata(context, Base.metadata))

    async with engine.connect() as conn:
        return await conn.run_sync(compare)


async def revision(engine: AsyncEngine, message: str) -> list[str]:
    """Write the next revision (``0002_...``) from the models' difference with the database.

    The database is upgraded to the newest revision first; pass an empty one. Nothing
    is written (``[]``) when the models and the migrations agree.
    """
    await upgrade(engine)
    if not await differences(engine):
        return []
    number = len(list(ScriptDirectory.from_config(alembic_config()).walk_revisions())) + 1
    paths: list[str] = []

    def write(sync: Connection) -> None:
        config = alembic_config(sync)
        config.set_main_option("file_template", "%%(rev)s_%%(slug)s")
        script = command.revision(
            config, message=message, autogenerate=True, rev_id=f"{number:04d}"
        )
        scripts = script if isinstance(script, list) else [script]
        paths.extend(s.path for s in scripts if s is not None)

    async with engine.begin() as conn:
        await conn.run_sync(write)
    return paths
