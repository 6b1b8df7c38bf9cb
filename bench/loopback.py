"""Serve an aiohttp app on a free loopback port (the benchmarks' fake remotes), or find
a free port for a server of its own (benchmarks and tests)."""

from __future__ import annotations

import socket

from aiohttp import web


def free_port() -> int:
    """A loopback port nothing listens on (now: take it soon)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    """Start ``app`` on 127.0.0.1; returns its runner and base URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    return runner, f"http://{host}:{port}"
