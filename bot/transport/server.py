"""One aiohttp server: ``POST /slack/events`` (HTTP mode), ``POST /alerts``, ``GET /healthz``
and ``GET /metrics`` (Prometheus text format, ``bot.observe.metrics``).

In HTTP mode the body is checked before bolt parses it (``bot.transport._slack_body``: bad or
stale signature → 401, wrong content type → 415, malformed or mis-shaped body → 400,
nothing stored, nothing of the body logged); bolt verifies the signature again and
acks before any listener work runs (``process_before_response=False``). In Socket
Mode the same server runs without ``/slack/events``: events arrive over the socket.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.intake.alerts_endpoint import AlertWebhook
from bot.transport._slack_body import BadSlackRequest, check_slack_request

log = logging.getLogger(__name__)

Health = Callable[[], Awaitable[dict[str, Any]]]
Metrics = Callable[[], Awaitable[bytes]]
SLACK_BODY_LIMIT = 2 * 1024 * 1024


def build_web_app(
    *,
    bolt: AsyncApp | None,
    webhook: AlertWebhook,
    health: Health,
    signing_secret: str | None = None,
    metrics: Metrics | None = None,
) -> web.Application:
    """The aiohttp application; ``bolt=None`` leaves out ``/slack/events`` (Socket Mode)."""
    app = web.Application(client_max_size=body_limit(webhook.settings.max_alert_bytes))

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True, **(await health())})

    app.router.add_get("/healthz", healthz)
    if metrics is not None:
        scrape = metrics

        async def prometheus(_request: web.Request) -> web.Response:
            from bot.observe.metrics import CONTENT_TYPE_LATEST

            response = web.Response(body=await scrape())
            response.headers["Content-Type"] = CONTENT_TYPE_LATEST
            return response

        app.router.add_get("/metrics", prometheus)
    app.router.add_post("/alerts", webhook.handle)
    if bolt is not None:
        if not signing_secret:
            raise ValueError("/slack/events needs the signing secret")
        slack_app, secret = bolt, signing_secret

        async def slack_events(request: web.Request) -> web.Response:
            raw = await request.read()
            try:
                text = check_slack_request(raw, request.headers, secret)
                bolt_request = AsyncBoltRequest(
                    body=text,
                    query=request.query_string,
                    headers=dict(request.headers),
                )
            except BadSlackRequest as error:
                log.info("Slack request refused (%s): %s", error.status, error)
                return web.json_response({"error": str(error)}, status=error.status)
            except (TypeError, ValueError, KeyError, AttributeError, IndexError) as error:
                # what bolt could not read despite the checks: still the sender's fault
                log.info("Slack request refused (400): %s", type(error).__name__)
                return web.json_response({"error": "malformed Slack request"}, status=400)
            bolt_response = await slack_app.async_dispatch(bolt_request)
            return await to_aiohttp_response(bolt_response)

        app.router.add_post("/slack/events", slack_events)
    return app


def body_limit(max_alert_bytes: int) -> int:
    """The largest request body served (a Slack payload, or an alert and its envelope)."""
    return max(SLACK_BODY_LIMIT, max_alert_bytes + 1024)


def bound_port(runner: web.AppRunner) -> int:
    """The port a started runner listens on (``port=0``: the one the OS chose)."""
    return int(runner.addresses[0][1])


def freeze_heap() -> bool:
    """Keep every object alive now out of later garbage collections; False if done.

    After start-up the heap holds ~180,000 long-lived objects (modules, google-genai
    and pydantic schemas, compiled templates, SQL dialects). A full collection walks
    all of them and holds the GIL for ~0.1 s, stalling every ack in flight; frozen,
    it walks only what was allocated since. ``gc.unfreeze()`` on the way out, so that
    the objects are finalized at exit (DuckDB reports leaked objects otherwise).
    """
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True


async def start_site(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve ``app`` on ``host:port``; the caller cleans the runner up (done here when
    the site cannot start, so the app's cleanup hooks run, e.g. the heap is unfrozen)."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except BaseException:  # e.g. the port is taken: the app's cleanup still runs
        await runner.cleanup()
        raise
    log.info("listening on http://%s:%d", host, port)
    return runner


def server_timing(parts: dict[str, float]) -> str:
    """A ``Server-Timing`` header (W3C) from named durations in seconds: the front's own
    account of an answer's time, for whoever times it from outside (``bench.bench_front``).
    Said only on answers to a request already checked (token or signature)."""
    return ", ".join(f"{name};dur={seconds * 1000:.1f}" for name, seconds in parts.items())
