"""The configured MCP servers: started together, their allowlisted tools registered.

``McpHub.register`` starts every server (concurrently, each within
``connect_timeout_s``), lists its tools and adds to the registry each tool that is
in the server's allowlist, has a name Gemini accepts and a schema that converts
(``tools.mcp.schema``). Every other tool is recorded as disabled with the reason,
for ``socbot tools list``; a schema that cannot be converted is also logged once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from config.mcp_settings import McpServerSettings, McpSettings, MissingSecret
from tools.base import ToolRegistry
from tools.mcp.connection import McpConnection, ServerUnavailable
from tools.mcp.schema import SchemaUnsupported, gemini_schema
from tools.mcp.tool import NAME, McpTool, tool_name

if TYPE_CHECKING:
    import mcp_types

log = logging.getLogger(__name__)


class McpHub:
    """The running MCP servers; ``aclose`` stops them all."""

    def __init__(
        self,
        settings: McpSettings,
        internal_suffixes: tuple[str, ...],
        approval_timeout_s: float = 900.0,
    ) -> None:
        self.settings = settings
        self.internal_suffixes = internal_suffixes
        self.approval_timeout_s = approval_timeout_s
        self.connections: dict[str, McpConnection] = {}

    async def register(self, registry: ToolRegistry) -> None:
        """Start the servers and add their allowlisted tools (sorted: a stable catalogue)."""
        await asyncio.gather(*(self._one(registry, spec) for spec in self.settings.servers))

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.connections.values()))
        self.connections.clear()

    async def _one(self, registry: ToolRegistry, spec: McpServerSettings) -> None:
        if not spec.tools:
            registry.disable(f"{spec.name}__*", "no tools allowlisted (mcp.servers.tools)")
            return
        connection = McpConnection(spec, self.settings)
        try:
            offered = await connection.start()
        except MissingSecret as exc:
            return _disable_all(registry, spec, f"server {spec.name!r} not started: {exc}")
        except ServerUnavailable as exc:
            return _disable_all(registry, spec, f"server {spec.name!r} {exc}")
        self.connections[spec.name] = connection
        by_name = {t.name: t for t in offered}
        for name in sorted(by_name):
            if name not in spec.tools:
                registry.disable(tool_name(spec.name, name), "not in the server's allowlist")
        for name in sorted(set(spec.tools)):
            reason = self._add(registry, spec, by_name.get(name), connection)
            if reason:
                registry.disable(tool_name(spec.name, name), reason)

    def _add(
        self,
        registry: ToolRegistry,
        spec: McpServerSettings,
        tool: mcp_types.Tool | None,
        connection: McpConnection,
    ) -> str | None:
        if tool is None:
            return f"allowlisted, but server {spec.name!r} does not offer it"
        name = tool_name(spec.name, tool.name)
        if not NAME.match(name):
            return "its name is not a valid Gemini function name (letters, digits, _ . : -; ≤ 64)"
        try:
            schema = gemini_schema(dict(tool.input_schema))
        except SchemaUnsupported as exc:
            log.warning("MCP tool %s left out: its input schema %s", name, exc)
            return f"its input schema cannot be declared to Gemini: {exc}"
        registry.add(
            McpTool(spec, tool, schema, connection, self.internal_suffixes, self.approval_timeout_s)
        )
        return None


def _disable_all(registry: ToolRegistry, spec: McpServerSettings, reason: str) -> None:
    for name in sorted(set(spec.tools)):
        registry.disable(tool_name(spec.name, name), reason)
