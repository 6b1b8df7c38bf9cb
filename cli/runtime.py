"""The composition root: builds every long-lived object once and closes them all.

::

    async with open_runtime(settings) as rt:
        outcome = await rt.engine.run(Request(conversation_id, text), sink)

Order matters for errors: the credentials of the main and light models' providers
(``models.main`` / ``models.light``: Gemini, OpenAI, Anthropic) are checked before anything
touches the disk, so a missing key fails fast with one actionable sentence.
Tests pass ``backend=`` (a scripted model) and, if they want, their own ``http``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import httpx

from agent.engine import Engine
from agent.history import History
from agent.model.gateway import LLMGateway
from agent.model.gemini import tls_context
from agent.model.llm import ModelBackend
from agent.model.providers import RoutingBackend, configured_models
from agent.pseudonyms import privacy_key, privacy_maps
from cli.database import db_name, migrate_schema, open_database
from config.settings import Settings
from store.db.engine import Database
from store.investigations.conversations import ConversationStore
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore
from tools.base import ToolRegistry
from tools.setup import build_registry, mcp_hub

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

    Raises ``ConfigError`` when a configured provider's credentials are missing (unless ``backend``
    is given). Everything opened here is closed on exit, also on error or cancel.
    """
    privacy_key(settings)  # pseudonymisation on without its key: a clear start-up error
    async with AsyncExitStack() as stack:
        if http is None:
            http = httpx.AsyncClient(
                verify=tls_context(),
                timeout=httpx.Timeout(30.0, connect=10.0),
                headers={"User-Agent": USER_AGENT},
            )
            stack.push_async_callback(http.aclose)
        if backend is None:
            routing = RoutingBackend(settings, http=http)
            stack.push_async_callback(routing.aclose)
            routing.prepare(configured_models(settings))
            backend = routing

        db = open_database(settings.database_url)
        stack.push_async_callback(db.close)
        await migrate_schema(db)

        registry = build_registry(settings, db, http)
        hub = mcp_hub(settings)
        if hub is not None:
            stack.push_async_callback(hub.aclose)
            await hub.register(registry)
        gateway = LLMGateway(
            backend, settings.gemini, settings.models, privacy=privacy_maps(settings)
        )
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
        log.info("runtime ready: %d tools, database %s", len(registry.names()), db_name(db))
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
