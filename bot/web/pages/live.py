"""Live updates of a running investigation as server-sent events (``text/event-stream``).

``/web/api/investigations/{id}/events`` sends ``{"status", "events"}`` (the run's
status and how many trace events it has) at once and again whenever that changed;
the page fetches its body again on each. A change is looked for when this process
committed a write (``Database.watch_writes``), and at least every ``FALLBACK_S`` for
runs another process writes (a replica, ``socbot investigate``). A stream ends when
the run does, after ``STREAM_S`` (the browser reconnects by itself, so no connection
outlives a shutdown for long) or at once when the server shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable

from aiohttp import web

from store.schema import InvestigationStatus

FALLBACK_S = 2.0  # runs written by another process are looked at this often
SETTLE_S = 0.25  # a burst of writes is answered once
STREAM_S = 60.0  # then the browser opens a new stream (``retry`` below)
RETRY_MS = 1000

Status = Callable[[], Awaitable[tuple[str, int] | None]]


class Live:
    """The open streams of this process, woken by its writes and its shutdown."""

    def __init__(self) -> None:
        self.waiting: set[asyncio.Event] = set()
        self.closing = False

    def wake(self) -> None:
        """Something was written (or the server stops): every stream looks again."""
        for event in self.waiting:
            event.set()

    async def shutdown(self, _app: web.Application) -> None:
        self.closing = True
        self.wake()

    async def stream(
        self, request: web.Request, status: Status, headers: dict[str, str]
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={**headers, "Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        await response.prepare(request)
        wake = asyncio.Event()
        self.waiting.add(wake)
        loop = asyncio.get_running_loop()
        until = loop.time() + STREAM_S
        last: tuple[str, int] | None = None
        try:
            await response.write(f"retry: {RETRY_MS}\n\n".encode())
            while not self.closing and loop.time() < until:
                now = await status() or ("gone", 0)
                if now != last:
                    last = now
                    data = json.dumps({"status": now[0], "events": now[1]})
                    await response.write(f"data: {data}\n\n".encode())
                if now[0] != InvestigationStatus.RUNNING:
                    break
                wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), FALLBACK_S)
                await asyncio.sleep(SETTLE_S)
        except (ConnectionResetError, asyncio.CancelledError):
            pass  # the page went away (or the server is going)
        finally:
            self.waiting.discard(wake)
        return response
