"""One MCP server, kept connected: started once, restarted with backoff when it dies.

A supervisor task owns the SDK's ``Client`` (its task groups must be entered and left
by one task) and waits until the connection breaks: the server's stdout ended (a
stdio child that exited), a call found the connection closed or a call was cut off
(a server that hangs is restarted rather than trusted with the next call). It then
starts the server again after ``restart_backoff_s``, doubling up to
``restart_backoff_max_s``. Calls are made from the caller's task; a call while the
server is down waits for it within the call's own time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from config.mcp_settings import McpServerSettings, McpSettings, expand_env
from tools.base import ToolError

log = logging.getLogger(__name__)

MAX_LIST_PAGES = 20
CLIENT_INFO = mcp_types.Implementation(name="socbot", version="0.1")


class ServerUnavailable(ToolError):
    """The server is down or restarting; the model may try again later."""


class McpConnection:
    """A supervised connection to one configured MCP server."""

    def __init__(self, spec: McpServerSettings, settings: McpSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.restarts = 0
        self.last_error: str | None = None
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._broken = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> list[mcp_types.Tool]:
        """Start the supervisor; the server's tools once it is up (``ServerUnavailable``
        if it is not within ``connect_timeout_s``: then nothing keeps running)."""
        self._task = asyncio.create_task(self._supervise(), name=f"mcp {self.spec.name}")
        try:
            client = await self._connected(self.settings.connect_timeout_s)
            return await _all_tools(client)
        except (ServerUnavailable, MCPError, OSError, TimeoutError) as exc:
            self.last_error = self.last_error or _describe(exc)
            await self.aclose()
            raise ServerUnavailable(f"did not start: {self.last_error}") from None

    async def call(
        self, tool: str, args: dict[str, Any], within_s: float
    ) -> mcp_types.CallToolResult:
        """``tools/call``, answered within ``within_s`` seconds or cut off."""
        loop = asyncio.get_running_loop()
        ends = loop.time() + within_s
        client = await self._connected(within_s)
        done = False
        try:
            result = await client.call_tool(
                tool, args, read_timeout_seconds=max(ends - loop.time(), 0.001)
            )
            done = True
            return result
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise self._lost("closed the connection") from None
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise self._lost(f"did not answer within {within_s:.0f}s") from None
            done = True
            raise ToolError(f"{self.spec.name!r} refused the call: {exc.message}") from None
        except (httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise self._lost(f"failed ({type(exc).__name__})") from None
        finally:
            if not done:  # cut off, lost or cancelled: do not trust this session again
                self._broken.set()

    async def aclose(self) -> None:
        self._closing = True
        self._broken.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _lost(self, what: str) -> ServerUnavailable:
        self.last_error = what
        return ServerUnavailable(
            f"MCP server {self.spec.name!r} {what}; it is being restarted, the call may be "
            "retried later"
        )

    async def _connected(self, within_s: float) -> Client:
        try:
            async with asyncio.timeout(within_s):
                while self._client is None or self._broken.is_set():
                    if self._closing:
                        raise ServerUnavailable(f"MCP server {self.spec.name!r} is stopped")
                    self._ready.clear()
                    await self._ready.wait()
        except TimeoutError:
            reason = f" (last error: {self.last_error})" if self.last_error else ""
            raise ServerUnavailable(
                f"MCP server {self.spec.name!r} is not available{reason}"
            ) from None
        return self._client

    async def _supervise(self) -> None:
        delay = self.settings.restart_backoff_s
        started = False
        while not self._closing:
            self._broken.clear()
            try:
                async with Client(self._transport(), client_info=CLIENT_INFO, cache=None) as client:
                    self._client = client
                    started = True
                    self._ready.set()
                    delay = self.settings.restart_backoff_s
                    await self._broken.wait()
            except Exception as exc:  # fail open: a server's failure is reported, then retried
                self.last_error = _describe(exc)
                log.warning("MCP server %r failed: %s", self.spec.name, self.last_error)
            finally:
                self._client = None
                if not started:  # a server that never came up is not retried
                    self._closing = True
                self._ready.set()  # waiters look again (and wait for the next start)
            if self._closing:
                return
            self.restarts += 1
            log.info("restarting MCP server %r in %.1fs", self.spec.name, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.settings.restart_backoff_max_s)

    def _transport(self) -> Any:
        spec = self.spec
        if spec.command is not None:
            params = StdioServerParameters(
                command=spec.command,
                args=list(spec.args),
                env={k: expand_env(v) for k, v in spec.env.items()},
            )
            return _watched(stdio_client(params), self._broken.set)
        assert spec.url is not None
        headers = {k: expand_env(v) for k, v in spec.headers.items()}
        return _watched(_http(spec.url, headers), self._broken.set)


@asynccontextmanager
async def _http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


@asynccontextmanager
async def _watched(inner: Any, on_end: Callable[[], None]) -> AsyncIterator[Any]:
    """The transport's streams, calling ``on_end`` when the server's side ends (EOF)."""
    async with inner as (read, write):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def pump() -> None:
            async with send:
                async for message in read:
                    await send.send(message)
            on_end()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            try:
                yield receive, write
            finally:
                tg.cancel_scope.cancel()


async def _all_tools(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}"[:300]
