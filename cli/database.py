"""Opening the database for a command: one ``ConfigError`` sentence instead of a driver's
traceback, whatever the URL (a missing driver, an unreachable server, a folder in the way).

Light to import (SQLAlchemy and the store, no model SDK): ``show``, ``trace``, ``usage``,
``playbook`` and ``db`` use it directly, ``cli.runtime`` for the commands that investigate.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy.exc import ArgumentError, DBAPIError

from config.database_url import driver_hint
from config.settings import ConfigError
from store.db.engine import Database


def open_database(url: str) -> Database:
    """The database, or a ``ConfigError`` saying how to fix ``database_url``."""
    try:
        database = Database(url)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"the database driver {exc.name!r} is not installed: {driver_hint(exc.name)}"
        ) from exc
    except ArgumentError as exc:
        raise ConfigError(
            f"database_url (SOCBOT_DATABASE_URL) is not a usable SQLAlchemy URL: {exc}"
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"cannot create the database or its folder ({exc.strerror}): check SOCBOT_DATABASE_URL"
        ) from exc
    path = database.engine.url.database
    if database.is_sqlite and path and Path(path).is_dir():
        raise ConfigError(f"the SQLite database {path!r} is a folder: check SOCBOT_DATABASE_URL")
    return database


async def migrate_schema(db: Database) -> None:
    """Migrate to the newest schema, or a ``ConfigError`` naming the database."""
    try:
        await db.create()
    except (DBAPIError, OSError) as exc:
        # aiosqlite's worker thread finishes a failed connect after the error is raised;
        # give it a moment so that it does not find the event loop already closed.
        await asyncio.sleep(0.05)
        reason = exc.orig if isinstance(exc, DBAPIError) else exc.strerror
        raise ConfigError(
            f"cannot open the database {db_name(db)} ({reason}): check SOCBOT_DATABASE_URL"
        ) from exc


@asynccontextmanager
async def migrated_database(url: str) -> AsyncIterator[Database]:
    """The database at the newest schema (as every command finds it), closed on exit.

    Errors while using it (a server that goes away) are ``ConfigError`` sentences too.
    """
    db = open_database(url)
    try:
        await migrate_schema(db)
        try:
            yield db
        except DBAPIError as exc:
            raise ConfigError(
                f"cannot read the database {db_name(db)} ({exc.orig}): check SOCBOT_DATABASE_URL"
            ) from exc
    finally:
        await db.close()


def sqlite_file_missing(url: str) -> str | None:
    """The path of a SQLite database file that does not exist yet (else ``None``): commands
    that only read say so instead of creating an empty database where none was meant."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    path = parsed.database
    if parsed.get_backend_name() != "sqlite" or not path or path == ":memory:":
        return None
    return None if Path(path).exists() else path


def db_name(db: Database) -> str:
    """The database URL without credentials, for logs."""
    return db.engine.url.render_as_string(hide_password=True)
