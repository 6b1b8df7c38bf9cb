"""Build the Slack Web API client and the bolt ``AsyncApp``.

The client talks to ``slack.api_url`` (``SOCBOT_SLACK_API_URL``; enterprise
proxies, tests) or Slack itself, and retries — boundedly — what Slack asks to be
retried: 429 after ``Retry-After`` (unless Slack asks for longer than
``max_retry_after_s``), 5xx and dropped connections with exponential backoff.

The bolt app acks before listeners run (``process_before_response=False``),
verifies signatures in HTTP mode, ignores socbot's own events (built in), then
applies socbot's middleware: dedupe, then authorization.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import random
import re
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.interval_calculator import RetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from agent.alerts import Alert
from agent.catalogue import load_catalogue
from bot.alerts_in import AlertIntake
from bot.coordinator import Coordinator
from bot.feedback import FeedbackActions, Learn
from bot.listeners import Investigate, Listeners, ack_only
from bot.middleware import Deduper, Gatekeeper
from bot.pacer import Pacer
from bot.reporter import SlackReporter
from bot.review import SlackReview
from bot.runners import runners
from bot.server import build_web_app
from bot.storm import AlertTriage
from bot.webhook import AlertWebhook
from config.settings import Settings, SlackSettings
from store.alerts import AlertStore
from store.db import Database
from store.feedback import FeedbackStore
from store.slack import SlackStore
from store.work import QueueLimits, WorkQueue
from tools.retry_after import retry_after as parse_retry_after

log = logging.getLogger(__name__)


class Registers(Protocol):
    """Something that registers its listeners on the bolt app."""

    def register(self, app: AsyncApp) -> None: ...


DEFAULT_API_URL = "https://slack.com/api/"
MAX_RETRIES = 3
MAX_RETRY_AFTER_S = 30.0
BACKOFF_S = 0.5


class Backoff(RetryIntervalCalculator):
    """``base * 2**attempt`` with up to 25 % jitter (never more than the base allows)."""

    def __init__(self, base_s: float) -> None:
        self.base_s = base_s

    def calculate_sleep_duration(self, current_attempt: int) -> float:
        interval = float(self.base_s * 2 ** int(current_attempt))
        return interval * (1 + random.random() / 4)


class RateLimitRetry(AsyncRateLimitErrorRetryHandler):
    """429: wait ``Retry-After`` seconds, if that is at most ``max_wait_s``."""

    def __init__(self, max_retry_count: int, max_wait_s: float) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_s = max_wait_s

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        wait = retry_after(response)
        if wait > self.max_wait_s:
            log.warning("Slack asks to wait %.0fs; not retrying", wait)
            return False
        return True

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        wait = retry_after(response) if response is not None else 1.0
        log.info("Slack rate limit: retrying in %.1fs", wait)
        state.next_attempt_requested = True
        await asyncio.sleep(wait + random.random() * 0.05)
        state.increment_current_attempt()


class ServerErrorRetry(AsyncRetryHandler):
    """5xx from Slack (or a proxy in front of it): exponential backoff."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return response is not None and 500 <= response.status_code <= 599


def retry_after(response: HttpResponse) -> float:
    """The ``Retry-After`` header in seconds (1 when absent or unreadable)."""
    for name, values in response.headers.items():
        if name.lower() == "retry-after" and values:
            wait = parse_retry_after(values[0])
            return 1.0 if wait is None else wait
    return 1.0


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


def build_client(
    slack: SlackSettings,
    *,
    max_retries: int = MAX_RETRIES,
    max_retry_after_s: float = MAX_RETRY_AFTER_S,
    backoff_s: float = BACKOFF_S,
) -> AsyncWebClient:
    """The Web API client for ``slack.bot_token`` at ``slack.api_url`` (or Slack's)."""
    token = slack.bot_token.get_secret_value() if slack.bot_token else None
    base_url = slack.api_url or DEFAULT_API_URL
    if not base_url.endswith("/"):
        base_url += "/"
    backoff = Backoff(backoff_s)
    handlers: list[AsyncRetryHandler] = [
        AsyncConnectionErrorRetryHandler(max_retry_count=max_retries, interval_calculator=backoff),
        RateLimitRetry(max_retries, max_retry_after_s),
        ServerErrorRetry(max_retry_count=max_retries, interval_calculator=backoff),
    ]
    return AsyncWebClient(token=token, base_url=base_url, timeout=30, retry_handlers=handlers)


def build_bolt_app(
    slack: SlackSettings,
    client: AsyncWebClient,
    *,
    http_mode: bool,
    deduper: Deduper,
    gatekeeper: Gatekeeper,
    listeners: Listeners,
    handlers: Sequence[Registers] = (),
) -> AsyncApp:
    """The bolt app with socbot's middleware and listeners registered.

    ``handlers`` (feedback, playbook review) register before the listeners, whose
    catch-all action acknowledger would otherwise take their actions.
    """
    secret = slack.signing_secret.get_secret_value() if slack.signing_secret else None
    if http_mode and not secret:
        raise ValueError("HTTP mode needs slack.signing_secret (SLACK_SIGNING_SECRET)")
    app = AsyncApp(
        name="socbot",
        client=client,
        signing_secret=secret or "socket-mode-does-not-sign",
        request_verification_enabled=http_mode,
        process_before_response=False,
        ignoring_self_events_enabled=True,
    )
    app.use(deduper.middleware)
    app.use(gatekeeper.middleware)
    for handler in handlers:
        handler.register(app)
    listeners.register(app)
    app.view(re.compile(r".*"))(ack_only)
    app.shortcut(re.compile(r".*"))(ack_only)
    return app


@dataclass
class SocBot:
    """Everything the Slack side runs on, wired together (``create_socbot``)."""

    slack: SlackSettings
    client: AsyncWebClient
    store: SlackStore
    alerts: AlertStore
    coordinator: Coordinator
    reporter: SlackReporter
    listeners: Listeners
    bolt: AsyncApp
    webhook: AlertWebhook
    http_mode: bool
    triage: AlertTriage | None = None
    forwarded: dict[str, AlertTriage] = field(default_factory=dict)  # by alert channel
    grace_s: float = 0.0  # at shutdown, running work may finish this long
    heap_frozen: bool = field(default=False, init=False, repr=False)

    def web_app(self) -> web.Application:
        """The aiohttp app: ``/slack/events`` in HTTP mode, ``/alerts`` and ``/healthz``.

        On start-up, alerts deferred (or interrupted) by an earlier run are resumed,
        and the heap built so far is frozen (``freeze_heap``).
        """
        bolt = self.bolt if self.http_mode else None
        secret = self.slack.signing_secret
        app = build_web_app(
            bolt=bolt,
            webhook=self.webhook,
            health=self.health,
            signing_secret=secret.get_secret_value() if secret else None,
        )
        app.on_startup.append(self._resume)
        app.on_startup.append(self._start_worker)
        app.on_startup.append(self._freeze_heap)
        app.on_cleanup.append(self._unfreeze_heap)
        return app

    def triages(self) -> list[AlertTriage]:
        """Every channel's triage: the webhook channel's, then the alert channels'."""
        out = [self.triage] if self.triage is not None else []
        return out + [t for t in self.forwarded.values() if t is not self.triage]

    async def _resume(self, _app: web.Application) -> None:
        triages = self.triages()
        if triages:
            await self.alerts.requeue_interrupted()  # once, before any triage admits
        for triage in triages:
            await triage.resume(requeue=False)

    async def _start_worker(self, _app: web.Application) -> None:
        self.coordinator.start()  # rows queued before this start, or by other replicas

    async def _freeze_heap(self, _app: web.Application) -> None:
        self.heap_frozen = freeze_heap()

    async def _unfreeze_heap(self, _app: web.Application) -> None:
        if self.heap_frozen:
            gc.unfreeze()
            self.heap_frozen = False

    async def health(self) -> dict[str, Any]:
        """``/healthz``: work running / waiting in the whole queue (the database) and on
        this replica, the webhook alerts' and stormy channels' states."""
        work = await self.coordinator.queue.counts()
        out: dict[str, Any] = {
            "mode": "http" if self.http_mode else "socket",
            "running": work["running"],
            "queued": work["queued"],
            "running_here": self.coordinator.running,
        }
        if self.triage is not None:
            out["alerts"] = self.triage.counts()
            out["alerts_since_start"] = dict(self.triage.totals)
        forwarded = {
            c: t.counts() for c, t in self.forwarded.items() if t is not self.triage and t.counts()
        }
        if forwarded:  # alert channels in a storm
            out["alert_channels"] = forwarded
        return out

    async def dispatch_alert(self, alert: Alert) -> None:
        """Webhook alerts: group, investigate or defer them (``bot.storm``)."""
        if self.triage is not None:
            await self.triage.dispatch(alert)

    async def close(self) -> None:
        """Finish handing over accepted alerts, then stop investigations quietly.

        Alerts still waiting are stored as deferred and resumed on the next start.
        """
        await self.webhook.drain()
        triages = self.triages()
        for triage in triages:
            triage.stop()
        await self.coordinator.shutdown(self.grace_s)
        for triage in triages:
            await triage.close()


def create_socbot(
    settings: Settings,
    db: Database,
    investigate: Investigate,
    *,
    client: AsyncWebClient,
    http_mode: bool,
    pacer: Pacer,
    learn: Learn | None = None,
    review: SlackReview | None = None,
) -> SocBot:
    """Wire store, middleware, coordinator, listeners, bolt app, webhook and triages.

    Every alert channel gets an ``AlertTriage`` for the alerts forwarded into it (the
    webhook channel's triage, when it is also an alert channel).

    ``pacer`` is shared with the investigator so that every message posted in a
    channel (cards, notices, progress, conclusions) counts against one pace.
    ``learn`` starts learning from a vote (``agent.learning.service.Learner.submit``);
    ``review`` handles the playbook review channel's buttons.
    """
    slack = settings.slack
    store = SlackStore(db)
    alerts = AlertStore(db)
    intake = AlertIntake(alerts, load_catalogue(settings.alerts.formats_dir))
    reporter = SlackReporter(client, pacer)
    coordinator = Coordinator(
        slack.max_concurrent_investigations,
        reporter,
        work_queue(settings, db),
        replica=settings.work.replica_id or default_replica_id(),
        poll_s=settings.work.poll_s,
        retry_backoff_s=settings.work.retry_backoff_s,
    )
    deduper = Deduper(store)
    forwarded: dict[str, AlertTriage] = {}
    listeners = Listeners(
        settings=slack,
        store=store,
        deduper=deduper,
        coordinator=coordinator,
        intake=intake,
        reporter=reporter,
        triages=forwarded,
    )
    bolt = build_bolt_app(
        slack,
        client,
        http_mode=http_mode,
        deduper=deduper,
        gatekeeper=Gatekeeper(slack, client),
        listeners=listeners,
        handlers=[FeedbackActions(FeedbackStore(db), learn), *([review] if review else [])],
    )
    holder: list[SocBot] = []

    async def dispatch(alert: Alert) -> None:
        await holder[0].dispatch_alert(alert)

    async def accept(data: dict[str, Any], hint: str | None) -> Alert:
        return await intake.accept(data, hint)

    bot = SocBot(
        slack=slack,
        client=client,
        store=store,
        alerts=alerts,
        coordinator=coordinator,
        reporter=reporter,
        listeners=listeners,
        bolt=bolt,
        webhook=AlertWebhook(slack, accept, dispatch),
        http_mode=http_mode,
        forwarded=forwarded,
        grace_s=settings.work.shutdown_grace_s,
    )

    def triage(
        channel: str, *, own_rows_only: bool = False, exclude_channels: tuple[str, ...] = ()
    ) -> AlertTriage:
        return AlertTriage(
            slack,
            channel=channel,
            alerts=alerts,
            coordinator=coordinator,
            reporter=reporter,
            investigate=investigate,
            remember_thread=store.remember_thread,
            own_rows_only=own_rows_only,
            exclude_channels=exclude_channels,
        )

    others = tuple(c for c in slack.alert_channels if c != slack.webhook_channel)
    if slack.webhook_channel:
        bot.triage = triage(slack.webhook_channel, exclude_channels=others)
        if slack.webhook_channel in slack.alert_channels:
            forwarded[slack.webhook_channel] = bot.triage
    for channel in others:
        forwarded[channel] = triage(channel, own_rows_only=True)
    by_channel = dict(forwarded)
    if bot.triage is not None and slack.webhook_channel:
        by_channel[slack.webhook_channel] = bot.triage
    coordinator.register(runners(alerts, investigate, by_channel))
    holder.append(bot)
    return bot


def work_queue(settings: Settings, db: Database) -> WorkQueue:
    """The shared work queue with the limits of ``settings`` (``store.work``)."""
    work = settings.work
    limits = QueueLimits(
        running=settings.slack.max_concurrent_investigations,
        running_per_user=work.max_running_per_user,
        running_per_channel=work.max_running_per_channel,
        queued_per_user=work.max_queued_per_user,
        queued_per_channel=work.max_queued_per_channel,
    )
    return WorkQueue(db, limits, lease_s=work.lease_s, max_attempts=work.max_attempts)


def default_replica_id() -> str:
    """host:pid:random — unique even for a container restarted as pid 1 on one host."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
