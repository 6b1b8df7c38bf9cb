"""Serve an aiohttp app on a free loopback port (the benchmarks' fake remotes)."""

from __future__ import annotations

from aiohttp import web


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    """Start ``app`` on 127.0.0.1; returns its runner and base URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    return runner, f"http://{host}:{port}"
