"""The tool registry built from configuration: log queries, threat intel, past alerts,
and the tools of the configured MCP servers (``mcp_hub``, started asynchronously).

A tool is registered only when it is enabled and configured; the others are recorded
with the reason (``registry.disabled``), which ``socbot tools list`` shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from config.settings import Settings
from tools import intel, logs, past_alerts
from tools.base import ToolRegistry

if TYPE_CHECKING:
    import httpx

    from store.db.engine import Database
    from tools.mcp.hub import McpHub


def build_registry(settings: Settings, db: Database, http: httpx.AsyncClient) -> ToolRegistry:
    """Every available tool, sharing one database and one HTTP client."""
    return _registry(settings, db, http)


def listed_registry(settings: Settings) -> ToolRegistry:
    """The same tools and reasons, for ``socbot tools list``, built without a database,
    HTTP client or DuckDB worker (nor importing them): its tools cannot run."""
    return _registry(settings, None, None)


def _registry(
    settings: Settings, db: Database | None, http: httpx.AsyncClient | None
) -> ToolRegistry:
    registry = ToolRegistry(result_chars=settings.limits.tool_result_chars)
    logs.register(registry, settings, start=db is not None)
    intel.register(registry, settings, db, http)
    past_alerts.register(registry, db)
    return registry


def mcp_hub(settings: Settings) -> McpHub | None:
    """The MCP servers of the settings, not yet started (``await hub.register(registry)``);
    None when there are none (the SDK is then not imported)."""
    if not settings.mcp.servers:
        return None
    from tools.mcp.hub import McpHub

    return McpHub(
        settings.mcp,
        tuple(settings.intel.internal_domain_suffixes),
        approval_timeout_s=settings.approvals.timeout_s,
    )
