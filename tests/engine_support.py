"""The engine as the agent tests build it: a scripted model, a tool registry, SQLite."""

from __future__ import annotations

from typing import Any

from agent.engine import Engine
from agent.history import History
from agent.model.gateway import LLMGateway
from config.settings import Limits, ReviewSettings, Settings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from tests.fakes.model import ScriptedModel
from tools.base import ToolRegistry


def scripted_engine(
    db: Database,
    model: ScriptedModel,
    registry: ToolRegistry,
    settings: Settings | None = None,
    **extra: Any,
) -> Engine:
    """An engine on ``model`` and ``registry``, storing in ``db``; without ``settings``,
    the default limits and no review. ``extra``: the engine's other arguments."""
    if settings is None:
        settings = Settings(limits=Limits(), review=ReviewSettings(enabled=False))
    return Engine(
        gateway=LLMGateway(model, settings.gemini, settings.models),
        registry=registry,
        history=History(db, settings.limits),
        investigations=InvestigationStore(db),
        settings=settings,
        **extra,
    )
