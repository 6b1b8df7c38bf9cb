"""An MCP server's tool in the registry: ``<server>__<tool>``, declared from its schema.

The call passes the egress gate when the server is ``external``, asks a person first
when the tool is in the server's ``approval`` list, is bounded by the server's
``timeout_s`` and the step's deadline, and its result becomes data: text (parsed when
it is JSON), structured content, or a note for content the model cannot read. A result
the server marks as an error reaches the model as ``{"error": ...}``. The registry
fences and caps what the model sees, like any tool's.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

import mcp_types

from config.mcp_settings import McpServerSettings
from core.approvals import ApprovalRequest
from core.scope import NOTHING, Scope
from tools.approval import ask_first
from tools.base import BaseTool, Budget, ToolError
from tools.mcp.egress import ensure_sendable

if TYPE_CHECKING:
    from core.approvals import Approver
    from tools.mcp.connection import McpConnection

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")  # what Gemini takes as a function name
MAX_DESCRIPTION = 600
_SPACE = re.compile(r"\s+")


def tool_name(server: str, tool: str) -> str:
    return f"{server}__{tool}"


class McpTool(BaseTool):
    """One allowlisted tool of one MCP server."""

    def __init__(
        self,
        spec: McpServerSettings,
        tool: mcp_types.Tool,
        schema: dict[str, Any],
        connection: McpConnection | None,
        internal_suffixes: tuple[str, ...],
        approval_timeout_s: float = 900.0,
    ) -> None:
        self.spec = spec
        self.remote_name = tool.name
        self.name = tool_name(spec.name, tool.name)
        self.description = describe(spec, tool.description or tool.title or tool.name)
        self.schema = schema
        self.schema_json = json.dumps(schema)
        self.connection = connection
        self.internal_suffixes = internal_suffixes
        self.approval_timeout_s = approval_timeout_s
        self.asks_first = tool.name in spec.approval
        if self.asks_first:
            self.description += " A person must approve each call: it may wait or be denied."

    def signature_text(self) -> str:
        required = set(self.schema.get("required", []))
        args = ", ".join(
            f"{n}{'' if n in required else '?'}: {_type_text(p)}"
            for n, p in self.schema.get("properties", {}).items()
        )
        return f"{self.name}({args}): {self.description}"

    async def call(
        self,
        args: dict[str, Any],
        investigation_id: str,
        budget: Budget,
        deadline: float | None = None,
        approver: Approver | None = None,
        scope: Scope = NOTHING,  # socbot's past alerts: an MCP server never sees them
    ) -> Any:
        if self.connection is None:
            raise ToolError(f"{self.name!r} is listed only; it cannot run here")
        if self.spec.trust == "external":
            ensure_sendable(self.spec.name, args, self.internal_suffixes)
        if self.asks_first:
            why = f"it is in the approval list of MCP server {self.spec.name!r}"
            request = ApprovalRequest(tool=self.name, args=args, why=why)
            await ask_first(approver, request, _left(self.approval_timeout_s, deadline))
        timeout = self.spec.timeout_s
        if deadline is not None:
            timeout = max(min(timeout, deadline - time.monotonic()), 0.001)
        result = await self.connection.call(self.remote_name, args, timeout)
        return as_data(result)


def _left(limit: float, deadline: float | None) -> float:
    return limit if deadline is None else min(limit, deadline - time.monotonic())


def describe(spec: McpServerSettings, text: str) -> str:
    """The server's description of a tool, on one line and clipped, naming its source."""
    text = _SPACE.sub(" ", text).strip()
    if len(text) > MAX_DESCRIPTION:
        text = text[:MAX_DESCRIPTION] + "…"
    return f"{text} (MCP server {spec.name}, {spec.trust})"


def as_data(result: mcp_types.CallToolResult) -> dict[str, Any]:
    """A ``CallToolResult`` as the data the model reads; an error result raises."""
    texts: list[str] = []
    other: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        else:
            other.append(block.type)
    if result.is_error:
        raise ToolError("the MCP tool failed: " + (" ".join(texts) or "no reason given"))
    data: dict[str, Any] = {}
    structured = result.structured_content
    if isinstance(structured, dict) and list(structured) == ["result"]:
        data["result"] = structured["result"]  # the SDK's wrapping of a plain value
    elif structured is not None:
        data["result"] = structured
    elif len(texts) == 1:
        data["result"] = _parsed(texts[0])
    elif texts:
        data["result"] = [_parsed(t) for t in texts]
    if other:
        data["omitted"] = f"{len(other)} non-text content blocks ({', '.join(sorted(set(other)))})"
    return data


def _parsed(text: str) -> Any:
    if text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _type_text(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if kind is None and "anyOf" in prop:
        return "|".join(_type_text(p) for p in prop["anyOf"])
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"list[{_type_text(prop['items'])}]"
    return str(kind) if kind else "any"
