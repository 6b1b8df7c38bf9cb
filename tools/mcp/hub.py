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
            registry.unlisted[f"{spec.name}__*"] = "no tools allowlisted (mcp.servers.tools)"
            return
        connection = McpConnection(spec, self.settings)
        try:
            offered = await connection.start()
        except MissingSecret as exc:
            return _disable_all(registry, spec, "its MCP server lacks a secret", str(exc))
        except ServerUnavailable as exc:
            return _disable_all(registry, spec, "its MCP server did not start", str(exc))
        self.connections[spec.name] = connection
        by_name = {t.name: t for t in offered}
        for name in sorted(by_name):  # the server's words: never shown to the model
            if name not in spec.tools:
                registry.unlisted[tool_name(spec.name, name)] = "not in the server's allowlist"
        for name in sorted(set(spec.tools)):
            off = self._add(registry, spec, by_name.get(name), connection)
            if off:
                registry.disable(tool_name(spec.name, name), off[0], detail=off[1])

    def _add(
        self,
        registry: ToolRegistry,
        spec: McpServerSettings,
        tool: mcp_types.Tool | None,
        connection: McpConnection,
    ) -> tuple[str, str | None] | None:
        """None when added, else (reason for everyone, detail for the operator)."""
        if tool is None:
            return "allowlisted, but its MCP server does not offer it", None
        name = tool_name(spec.name, tool.name)
        if not NAME.match(name):
            return "its name is not a valid Gemini function name (letters, digits, _ . : -)", None
        try:
            schema = gemini_schema(dict(tool.input_schema))
        except SchemaUnsupported as exc:
            log.warning("MCP tool %s left out: its input schema %s", name, exc)
            return "its input schema cannot be declared to Gemini", str(exc)
        registry.add(
            McpTool(spec, tool, schema, connection, self.internal_suffixes, self.approval_timeout_s)
        )
        return None


def _disable_all(registry: ToolRegistry, spec: McpServerSettings, reason: str, detail: str) -> None:
    for name in sorted(set(spec.tools)):
        registry.disable(tool_name(spec.name, name), reason, detail=detail)
