"""Slack acks that never queue behind investigations: the public port, served alone.

In HTTP mode socbot's one event loop also runs the investigations (prompt rendering,
JSON parsing, grounding, Block Kit, the database): under load an event's 200 waited
behind that work, past the 3 s after which Slack retries. ``AckFront`` serves the public
port from a thread with an event loop of its own and nothing else on it (``socbot serve``
runs it in a process of its own, ``cli.serve.ack_process``, so not even the interpreter lock is
shared with the investigations):

* ``POST /slack/events`` carrying an event (``event_callback``): the body is checked as
  before (``bot.transport._slack_body``: signature, type, shape; refused with the same status), the
  200 is sent at once, and the request is handed to the app on the main loop (a private
  loopback port) in the background — bolt checks it again, dedupes it and runs its
  listeners exactly as before (it acked before any listener work already);
* ``POST /alerts``, when the front is given the database (``alerts``): checked, stored and
  answered 202 by the front itself, then handed to the app (``bot.transport.alert_door``);
  the app's own routes (``/internal/``) are never reached from outside (404);
* everything else (interactivity, whose answer can carry a dialog's errors; ``/alerts``
  without the database; ``/healthz``; the pages and Sign in with Slack)
  is passed to the app and its answer passed back untouched: the status, every header
  (each ``Set-Cookie`` of several, ``Location``), the body as sent (never decompressed);
  redirects are the browser's to follow, never the front's, and the front keeps no
  cookies of its own (one person's session never rides on another's request). An answer
  without a length (server-sent events) is streamed as it comes.

An event is acked before the main loop has it, as bolt did before its listeners ran: a
process killed in between loses it (Slack does not retry an acked event), which was so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterable

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from bot.intake.alert_handover import INTERNAL_PREFIX
from bot.transport._slack_body import BadSlackRequest, check_slack_request
from bot.transport.alert_door import AlertDoor, AlertDoorSetup
from bot.transport.server import bound_port, server_timing

log = logging.getLogger(__name__)

# per connection, never passed on (``Host`` is: the app sees the address the client asked for)
HOP_HEADERS = {"content-length", "transfer-encoding", "connection", "keep-alive"}
FORWARD_TIMEOUT_S = 120.0
START_TIMEOUT_S = 30.0


def is_event(text: str) -> bool:
    """True for an Events API delivery (acked at once), False for anything else."""
    try:
        body = json.loads(text)
    except ValueError:
        return False  # form-encoded: interactivity, answered by the app
    return isinstance(body, dict) and body.get("type") == "event_callback"


class AckFront:
    """The public port, served from a thread of its own (see the module docstring)."""

    def __init__(
        self,
        *,
        signing_secret: str,
        backend: str,
        body_limit: int,
        alerts: AlertDoorSetup | None = None,
    ) -> None:
        self.signing_secret = signing_secret
        self.backend = backend.rstrip("/")  # the app on the main loop, on loopback
        self.body_limit = body_limit
        self.alerts = alerts  # None: ``/alerts`` is passed to the app
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._forwards: set[asyncio.Task[None]] = set()
        self._session: aiohttp.ClientSession | None = None

    def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` from the front's thread; the port bound (``OSError``
        when it cannot be)."""
        bound: list[int] = []
        failed: list[BaseException] = []
        ready = threading.Event()

        def run() -> None:
            asyncio.run(self._serve(host, port, bound, failed, ready))

        self._thread = threading.Thread(target=run, name="ack front", daemon=True)
        self._thread.start()
        if not ready.wait(START_TIMEOUT_S):
            raise OSError(f"the ack front did not start listening on {host}:{port}")
        if failed:
            raise failed[0]
        return bound[0]

    def stop(self) -> None:
        """Stop listening; events acked but not yet handed over are handed over first."""
        if self._loop is not None and self._stopped is not None:
            with contextlib.suppress(RuntimeError):  # it never started, or has ended
                self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(FORWARD_TIMEOUT_S)

    async def _serve(
        self,
        host: str,
        port: int,
        bound: list[int],
        failed: list[BaseException],
        ready: threading.Event,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        # a stream (server-sent events) may outlive any total: each read is bounded instead
        timeout = aiohttp.ClientTimeout(total=None, sock_read=FORWARD_TIMEOUT_S)
        async with aiohttp.ClientSession(
            timeout=timeout, cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False
        ) as session:
            self._session = session
            door = AlertDoor(self.alerts, self.backend, session) if self.alerts else None
            if door is not None:
                await door.warm_up()
            runner = web.AppRunner(self._routes(door), access_log=None)
            await runner.setup()
            try:
                site = web.TCPSite(runner, host, port)
                await site.start()
                bound.append(bound_port(runner))
            except BaseException as error:  # e.g. the port is taken: said by ``start``
                failed.append(error)
                ready.set()
                await runner.cleanup()
                if door is not None:
                    await door.close()
                return
            ready.set()
            log.info("acks served on http://%s:%d (app on %s)", host, bound[0], self.backend)
            await self._stopped.wait()
            await runner.cleanup()
            if self._forwards:
                await asyncio.wait(list(self._forwards), timeout=FORWARD_TIMEOUT_S)
            if door is not None:
                await door.close()  # accepted alerts handed over first

    def _routes(self, door: AlertDoor | None) -> web.Application:
        app = web.Application(client_max_size=self.body_limit)
        app.router.add_post("/slack/events", self._slack_events)
        if door is not None:
            app.router.add_post("/alerts", door.handle)
        app.router.add_route("*", INTERNAL_PREFIX + "{tail:.*}", _not_found)
        app.router.add_route("*", "/{tail:.*}", self._pass)
        return app

    async def _slack_events(self, request: web.Request) -> web.StreamResponse:
        began = time.monotonic()
        raw = await request.read()
        try:
            text = check_slack_request(raw, request.headers, self.signing_secret)
        except BadSlackRequest as error:
            log.info("Slack request refused (%s): %s", error.status, error)
            return web.json_response({"error": str(error)}, status=error.status)
        if not is_event(text):
            return await self._forward(request, raw)
        headers = list(request.headers.items())
        task = asyncio.create_task(self._hand_over(request.path_qs, headers, raw))
        self._forwards.add(task)
        task.add_done_callback(self._forwards.discard)
        timing = server_timing({"total": time.monotonic() - began})  # as the 202s say theirs
        return web.Response(status=200, headers={"Server-Timing": timing})

    async def _pass(self, request: web.Request) -> web.StreamResponse:
        return await self._forward(request, await request.read())

    async def _forward(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        assert self._session is not None  # set before the site listens
        try:
            async with self._session.request(
                request.method,
                self.backend + request.path_qs,
                data=raw,
                headers=_headers(request.headers.items()),
                allow_redirects=False,
            ) as answer:
                headers = _headers(answer.headers.items())
                if answer.content_length is None and request.method != "HEAD":
                    return await _stream(request, answer, headers)
                body = await answer.read()
                return web.Response(status=answer.status, body=body, headers=headers)
        except (aiohttp.ClientError, TimeoutError) as error:
            log.warning("could not pass %s to the app: %s", request.path, type(error).__name__)
            return web.json_response({"error": "socbot is not ready"}, status=503)

    async def _hand_over(self, path: str, headers: Iterable[tuple[str, str]], raw: bytes) -> None:
        assert self._session is not None
        try:
            async with self._session.post(
                self.backend + path, data=raw, headers=_headers(headers)
            ) as answer:
                await answer.read()
                if answer.status >= 400:
                    log.warning("the app refused an acked event (%s)", answer.status)
        except (aiohttp.ClientError, TimeoutError) as error:
            log.error("an acked event did not reach the app: %s", type(error).__name__)


async def _not_found(_request: web.Request) -> web.Response:
    return web.json_response({"error": "not found"}, status=404)


async def _stream(
    request: web.Request, answer: aiohttp.ClientResponse, headers: CIMultiDict[str]
) -> web.StreamResponse:
    """An answer without a length, passed on piece by piece as the app writes it."""
    response = web.StreamResponse(status=answer.status, headers=headers)
    await response.prepare(request)
    try:
        async for piece in answer.content.iter_any():
            await response.write(piece)
        await response.write_eof()
    except (ConnectionResetError, aiohttp.ClientError, TimeoutError):
        pass  # either side went away: the stream ends, as it would have directly
    return response


def _headers(headers: Iterable[tuple[str, str]]) -> CIMultiDict[str]:
    """Every header but the hop-by-hop ones, repeated ones (``Set-Cookie``) each kept."""
    return CIMultiDict((k, v) for k, v in headers if k.lower() not in HOP_HEADERS)
