"""A small MCP server written with the official SDK, for the MCP tool tests.

Run as ``python mcp_asset_server.py`` (stdio) or ``python mcp_asset_server.py http PORT``
(streamable HTTP on 127.0.0.1). Its asset records are invented test data. Tools:
``lookup_asset`` (a record), ``echo`` (what it was sent, to see what left the
machine), ``big_report`` (a result far over the byte limit), ``hang`` (blocks the
whole server), ``crash`` (the process exits mid-call), ``pid`` (which process
answered), ``fail`` (an error result), ``org_tree`` (a recursive schema Gemini's
declarations cannot express).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

ASSETS = {  # invented
    "web-01": {"owner": "alice@example.com", "team": "payments", "criticality": "high"},
    "build-7": {"owner": "bob@example.com", "team": "platform", "criticality": "low"},
}

server = MCPServer("asset-db")


class OrgUnit(BaseModel):
    name: str
    children: list[OrgUnit] = []


@server.tool()
def lookup_asset(host: str) -> dict[str, Any]:
    """The owner, team and criticality of a host in the asset inventory."""
    record = ASSETS.get(host)
    return {"host": host, "found": record is not None, **(record or {})}


@server.tool()
def echo(text: str, tags: list[str] | None = None) -> dict[str, Any]:
    """Returns what it was sent."""
    return {"text": text, "tags": tags or []}


@server.tool()
def big_report(lines: int = 5000) -> str:
    """A long report."""
    return "\n".join(f"line {i}: " + "x" * 60 for i in range(lines))


@server.tool()
def hang(seconds: float = 3600) -> str:
    """Blocks the server (a hung backend)."""
    time.sleep(seconds)
    return "woke"


@server.tool()
def crash() -> str:
    """Exits the server process in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def fail(why: str) -> str:
    """Always fails."""
    raise ToolError(f"backend said no: {why}")


@server.tool()
def org_tree(root: OrgUnit) -> str:
    """Counts the units of an organisation tree."""
    return root.name


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
