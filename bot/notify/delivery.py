"""Sending one queued delivery (a ``notify`` work row): signed, retried by the queue.

Signature (the scheme of Slack and Stripe): ``X-Socbot-Timestamp`` is the Unix time of
this attempt and ``X-Socbot-Signature`` is ``v1=`` + hex HMAC-SHA256, keyed with the
webhook's secret, of ``v1:{timestamp}:{body}``. ``Idempotency-Key`` (also the body's
``id``) is the same on every attempt. A 2xx answer delivers; a timeout, a network error,
408, 425, 429 or 5xx is ``Unavailable``: the row goes back to the queue with backoff
(``work.retry_backoff_s``, doubling, up to ``work.max_attempts``); any other answer
fails the row (the receiver refused it; trying again would not help). A replica that
dies mid-delivery loses its lease and another sends the row again, same key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass

import httpx

from bot.notify.notifier import NOTIFY_KIND, Notifier
from bot.work.contracts import ThreadRef, Unavailable
from bot.work.learning import Silent
from bot.work.setup import work_queue
from bot.work.worker import Coordinator
from config.mcp_settings import MissingSecret, expand_env
from config.notify_settings import NotifySettings, WebhookSettings
from config.settings import Settings
from store.db.engine import Database
from store.queue.work import Work

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 425, 429})
USER_AGENT = "socbot-webhooks/1"


class DeliveryRefused(Exception):
    """The receiver answered with a status that retrying will not change."""


def signature(secret: str, timestamp: str, body: str) -> str:
    """``v1=<hex HMAC-SHA256 of v1:{timestamp}:{body}>``."""
    message = f"v1:{timestamp}:{body}".encode()
    return "v1=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


class DeliveryRunner:
    """The ``Runner`` of ``notify`` rows (``bot.work.worker``)."""

    reporter = Silent("webhook delivery")  # nothing is said in Slack: it is logged

    def __init__(self, settings: NotifySettings, http: httpx.AsyncClient) -> None:
        self.hooks = {h.name: h for h in settings.webhooks}
        self.http = http

    async def run(self, thread: ThreadRef, work: Work) -> None:
        payload = json.loads(work.text)
        hook = self.hooks.get(str(payload.get("webhook")))
        if hook is None:
            raise DeliveryRefused(f"webhook {payload.get('webhook')!r} is no longer configured")
        await self.send(hook, str(payload["event"]), str(payload["body"]))

    async def send(self, hook: WebhookSettings, event: str, body: str) -> None:
        try:
            secret = expand_env(hook.secret)
        except MissingSecret as exc:
            raise DeliveryRefused(f"webhook {hook.name!r}: {exc}") from None
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Socbot-Event": event,
            "X-Socbot-Timestamp": timestamp,
            "X-Socbot-Signature": signature(secret, timestamp, body),
            "Idempotency-Key": str(json.loads(body)["id"]),
        }
        try:
            response = await self.http.post(
                hook.url, content=body.encode(), headers=headers, timeout=hook.timeout_s
            )
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"webhook {hook.name!r} unreachable ({type(exc).__name__})."
            ) from None
        status = response.status_code
        if 200 <= status < 300:
            log.info("webhook %s: %s delivered (%d)", hook.name, event, status)
            return
        if status >= 500 or status in RETRY_STATUSES:
            raise Unavailable(f"webhook {hook.name!r} answered {status}.")
        raise DeliveryRefused(f"webhook {hook.name!r} refused the delivery ({status})")

    async def dropped(self, work: Work) -> None:
        log.warning("webhook delivery %s given up: %s", work.id, work.error)


@dataclass(frozen=True)
class Webhooks:
    """What ``socbot serve`` sends onward with: the notifier (queues) and the runner (sends)."""

    notifier: Notifier
    runner: DeliveryRunner

    @classmethod
    def build(cls, settings: Settings, db: Database, http: httpx.AsyncClient) -> Webhooks:
        """Deliveries queued on the shared work queue, sent with ``http``."""
        return cls(
            Notifier(settings.notify, work_queue(settings, db)),
            DeliveryRunner(settings.notify, http),
        )

    @staticmethod
    def notifier_of(webhooks: Webhooks | None) -> Notifier | None:
        return webhooks.notifier if webhooks is not None else None

    @staticmethod
    def attach(webhooks: Webhooks | None, coordinator: Coordinator) -> None:
        """Run the deliveries on ``coordinator``, woken as soon as one is queued."""
        if webhooks is None:
            return
        coordinator.register({NOTIFY_KIND: webhooks.runner}, reporter=webhooks.runner.reporter)
        webhooks.notifier.nudge = coordinator.nudge
