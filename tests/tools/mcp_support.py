"""Starting the test MCP server (``mcp_asset_server.py``) over stdio or HTTP, for the tests."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from bench.loopback import free_port
from config.mcp_settings import McpServerSettings, McpSettings
from tools.base import ToolRegistry
from tools.mcp.hub import McpHub

SERVER = Path(__file__).with_name("mcp_asset_server.py")
ALL_TOOLS = ["lookup_asset", "echo", "big_report", "hang", "crash", "pid", "fail"]
SUFFIXES = (".corp", ".internal")


def stdio_spec(**overrides: Any) -> McpServerSettings:
    fields: dict[str, Any] = {
        "name": "assets",
        "command": sys.executable,
        "args": [str(SERVER)],
        "tools": ALL_TOOLS,
        **overrides,
    }
    return McpServerSettings(**fields)


def mcp_settings(*specs: McpServerSettings) -> McpSettings:
    return McpSettings(servers=list(specs), restart_backoff_s=0.1, connect_timeout_s=60)


@contextlib.asynccontextmanager
async def started(
    *specs: McpServerSettings, result_chars: int = 2000
) -> AsyncIterator[tuple[ToolRegistry, McpHub]]:
    """A registry with the servers' tools, the servers stopped on the way out."""
    hub = McpHub(mcp_settings(*specs), SUFFIXES)
    registry = ToolRegistry(result_chars=result_chars)
    try:
        await hub.register(registry)
        yield registry, hub
    finally:
        await hub.aclose()


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """The test server on streamable HTTP at 127.0.0.1; its URL once it accepts."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ends = time.monotonic() + 60
        while time.monotonic() < ends:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, "the HTTP MCP server exited"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
