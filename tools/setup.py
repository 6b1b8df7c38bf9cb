"""The tool registry built from configuration: log queries, threat intel, past alerts.

A tool is registered only when it is enabled and configured; the others are recorded
with the reason (``registry.disabled``), which ``socbot tools list`` shows.
"""

from __future__ import annotations

import httpx

from config.settings import Settings
from store.db import Database
from tools import intel, logs, past_alerts
from tools.base import ToolRegistry


def build_registry(settings: Settings, db: Database, http: httpx.AsyncClient) -> ToolRegistry:
    """Every available tool, sharing one database and one HTTP client."""
    registry = ToolRegistry(result_chars=settings.limits.tool_result_chars)
    logs.register(registry, settings)
    intel.register(registry, settings, db, http)
    past_alerts.register(registry, db)
    return registry
