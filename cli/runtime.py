"""The composition root: builds every long-lived object once and closes them all.

::

    async with open_runtime(settings) as rt:
        outcome = await rt.engine.run(Request(conversation_id, text), sink)

Order matters for errors: the Gemini credentials are checked before anything
touches the disk, so a missing key fails fast with one actionable sentence.
Tests pass ``backend=`` (a scripted model) and, if they want, their own ``http``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy.exc import ArgumentError, DBAPIError

from agent.engine import Engine
from agent.gateway import LLMGateway
from agent.gemini import GeminiBackend
from agent.history import History
from agent.llm import ModelBackend
from config.database_url import driver_hint
from config.settings import ConfigError, Settings
from store.conversations import ConversationStore
from store.db import Database
from store.investigations import InvestigationStore
from store.playbook import PlaybookStore
from tools.base import ToolRegistry
from tools.setup import build_registry

log = logging.getLogger(__name__)

USER_AGENT = "socbot/0.1"


@dataclass(frozen=True)
class Runtime:
    """Everything a command needs, wired together."""

    settings: Settings
    db: Database
    http: httpx.AsyncClient
    registry: ToolRegistry
    gateway: LLMGateway
    history: History
    conversations: ConversationStore
    investigations: InvestigationStore
    engine: Engine


@asynccontextmanager
async def open_runtime(
    settings: Settings,
    *,
    backend: ModelBackend | None = None,
    http: httpx.AsyncClient | None = None,
) -> AsyncIterator[Runtime]:
    """Open the database (migrating the schema), the HTTP client, tools, model and engine.

    Raises ``ConfigError`` when Gemini credentials are missing (unless ``backend``
    is given). Everything opened here is closed on exit, also on error or cancel.
    """
    async with AsyncExitStack() as stack:
        if http is None:
            http = httpx.AsyncClient(
                timeout=httpx.Timeout(30.0, connect=10.0), headers={"User-Agent": USER_AGENT}
            )
            stack.push_async_callback(http.aclose)
        if backend is None:
            gemini = GeminiBackend.from_settings(settings.gemini, httpx_async_client=http)
            stack.push_async_callback(gemini.aclose)
            backend = gemini

        db = open_database(settings.database_url)
        stack.push_async_callback(db.close)
        await migrate_schema(db)

        registry = build_registry(settings, db, http)
        gateway = LLMGateway(backend, settings.gemini)
        history = History(db, settings.limits)
        investigations = InvestigationStore(db)
        engine = Engine(
            settings=settings,
            gateway=gateway,
            registry=registry,
            history=history,
            investigations=investigations,
            playbook=PlaybookStore(db),
        )
        log.info("runtime ready: %d tools, database %s", len(registry.names()), _db_name(db))
        yield Runtime(
            settings=settings,
            db=db,
            http=http,
            registry=registry,
            gateway=gateway,
            history=history,
            conversations=ConversationStore(db),
            investigations=investigations,
            engine=engine,
        )


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
            f"cannot create the folder for the database ({exc.strerror}): check SOCBOT_DATABASE_URL"
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
            f"cannot open the database {_db_name(db)} ({reason}): check SOCBOT_DATABASE_URL"
        ) from exc


def _db_name(db: Database) -> str:
    """The database URL without credentials, for logs."""
    return db.engine.url.render_as_string(hide_password=True)
