"""``socbot mcp``: socbot's tools for an analyst's own agent or IDE (``cli.mcp_server``).

Over stdio by default (the client starts ``socbot mcp``; stdout carries only the
protocol, logs go to stderr). With ``--http`` it serves streamable HTTP at
``http://HOST:PORT/mcp``, only to requests that carry ``Authorization: Bearer`` and the
token in ``SOCBOT_MCP_TOKEN`` (it refuses to start without one).
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Annotated, Any

import typer

from cli.common import cli_logging, command_app, fail, load_settings_or_exit, one_line
from config.settings import ConfigError, Settings

app = command_app(no_args_is_help=False)

TOKEN_ENV = "SOCBOT_MCP_TOKEN"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

HttpOpt = Annotated[bool, typer.Option("--http", help=f"Serve streamable HTTP ({TOKEN_ENV}).")]
HostOpt = Annotated[str, typer.Option("--host", help="Interface for --http.")]
PortOpt = Annotated[int, typer.Option("--port", help="Port for --http.")]


@app.command()
def mcp(http: HttpOpt = False, host: HostOpt = "127.0.0.1", port: PortOpt = 8765) -> None:
    """Serve socbot's tools over MCP (stdio, or streamable HTTP behind a token)."""
    settings = load_settings_or_exit(announce=False)
    secret = settings.mcp.serve_token
    token = secret.get_secret_value() if secret is not None else ""
    if http and len(token) < 16:
        raise fail(f"--http needs {TOKEN_ENV} set to a token of at least 16 characters")
    try:
        with cli_logging():
            asyncio.run(serve(settings, http=http, host=host, port=port, token=token))
    except ConfigError as exc:
        raise fail(one_line(exc)) from None


async def serve(settings: Settings, *, http: bool, host: str, port: int, token: str) -> None:
    from cli.mcp_server import build_server
    from cli.runtime import open_runtime

    async with open_runtime(settings) as rt:
        server = build_server(rt)
        if not http:
            await server.run_stdio_async()
            return
        import uvicorn

        gated = TokenGate(server.streamable_http_app(host=host), token)
        await uvicorn.Server(
            uvicorn.Config(gated, host=host, port=port, log_level="warning")
        ).serve()


class TokenGate:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, inner: Asgi, token: str) -> None:
        self.inner = inner
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await self.inner(scope, receive, send)
