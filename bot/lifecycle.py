"""The running bot: its aiohttp app, start-up and shutdown, and ``/healthz``.

``SocBot`` holds what ``bot.app.create_socbot`` wired together. On start-up it
resumes alerts an earlier run deferred or left interrupted, starts this replica's
worker and freezes the heap; on shutdown it hands accepted alerts over, lets
running work finish within the grace period and releases the rest.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from alerts.parse import Alert
from bot.decisions.case_digest import CaseDigests
from bot.decisions.case_posts import CasePosts
from bot.decisions.votes import Learn
from bot.events.home import AppHome
from bot.events.listeners import Listeners
from bot.intake.alert_handover import HANDOVER_PATH, AlertHandOver
from bot.intake.alerts_endpoint import AlertWebhook
from bot.intake.policy.dispatch import PolicedTriage
from bot.intake.policy.gate import PolicyGate
from bot.intake.triage import AlertTriage
from bot.slack.reporter import SlackReporter
from bot.transport.server import build_web_app, freeze_heap
from bot.web.guard import install as install_pages
from bot.web.pages.site import Web
from bot.work.pruning import PruneWork
from bot.work.worker import Coordinator
from config.settings import SlackSettings
from store.slack import SlackStore
from store.triage.alerts import AlertStore


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
    learn: Learn | None = None  # queue learning from an investigation (``bot.work.learning``)
    pruning: PruneWork | None = None  # data lifetime (``bot.work.pruning``)
    reminders: CasePosts | None = None  # cases' thread messages and reminders
    digest: CaseDigests | None = None  # the weekly digest (``bot.decisions.case_digest``)
    home: AppHome | None = None  # App Home (its refreshes stop with the bot)
    gate: PolicyGate | None = None  # the alert policy (``bot.intake.policy.gate``)
    policed: PolicedTriage | None = None  # the webhook channel's triage, policy first
    routed: dict[str, AlertTriage] = field(default_factory=dict)  # channels rules route to
    pages: Web | None = None  # the investigation pages (``bot.web``), when sign-in is set up
    heap_frozen: bool = field(default=False, init=False, repr=False)

    def web_app(self, handover_token: str | None = None) -> web.Application:
        """The aiohttp app: ``/slack/events`` in HTTP mode, ``/alerts`` and ``/healthz``;
        with ``handover_token``, the alerts the acknowledging front stored and answered
        (``bot.intake.alert_handover``).

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
            metrics=self.metrics,
        )
        if handover_token is not None:
            handover = AlertHandOver(handover_token, self.alerts, self.webhook)
            app.router.add_post(HANDOVER_PATH, handover.handle)
        if self.pages is not None:
            install_pages(app, self.pages)
        app.on_startup.append(self._resume)
        app.on_startup.append(self._start_worker)
        app.on_startup.append(self._freeze_heap)
        app.on_cleanup.append(self._unfreeze_heap)
        return app

    def triages(self) -> list[AlertTriage]:
        """Every channel's triage: the webhook channel's, then the alert channels'."""
        out = [self.triage] if self.triage is not None else []
        out += [t for t in self.forwarded.values() if t is not self.triage]
        return out + [t for t in self.routed.values() if t not in out]

    async def _resume(self, _app: web.Application) -> None:
        for triage in self.triages():
            await triage.resume()

    async def _start_worker(self, _app: web.Application) -> None:
        self.coordinator.start()  # rows queued before this start, or by other replicas
        if self.pruning is not None:
            self.pruning.start()
        if self.reminders is not None:
            self.reminders.start()
        if self.digest is not None:
            self.digest.start()

    async def _freeze_heap(self, _app: web.Application) -> None:
        self.heap_frozen = freeze_heap()

    async def _unfreeze_heap(self, _app: web.Application) -> None:
        if self.heap_frozen:
            gc.unfreeze()
            self.heap_frozen = False

    async def metrics(self) -> bytes:
        """``/metrics``: this process's counters and the whole queue's gauges."""
        from bot.observe.metrics import exposition

        policy = self.gate.store if self.gate is not None else None
        return await exposition(self.coordinator.queue, policy)

    async def health(self) -> dict[str, Any]:
        """``/healthz``: work running / waiting in the whole queue (the database) and on
        this replica; the webhook channel's storm and all its alerts by status, and the
        stormy alert channels' storms (all from the database)."""
        work = await self.coordinator.queue.counts()
        out: dict[str, Any] = {
            "mode": "http" if self.http_mode else "socket",
            "running": work["running"],
            "queued": work["queued"],
            "running_here": self.coordinator.running,
        }
        if self.triage is not None:  # the database's: the same on every replica
            out["alerts"] = await self.triage.counts()
            out["alerts_total"] = await self.triage.totals()
        forwarded = {
            c: counts
            for c, t in self.forwarded.items()
            if t is not self.triage and (counts := await t.counts())
        }
        if forwarded:  # alert channels in a storm
            out["alert_channels"] = forwarded
        if self.gate is not None:
            out["policy"] = await self.gate.health()
        return out

    async def dispatch_alert(self, alert: Alert) -> None:
        """Webhook alerts: group, investigate or defer them (``bot.intake.triage``)."""
        if self.triage is not None:
            await self.triage.dispatch(alert)

    async def close(self) -> None:
        """Finish handing over accepted alerts, then stop investigations quietly.

        Alerts still waiting are stored as deferred and resumed on the next start.
        """
        await self.webhook.drain()
        if self.pruning is not None:
            await self.pruning.close()
        if self.reminders is not None:
            await self.reminders.close()
        if self.digest is not None:
            await self.digest.close()
        if self.home is not None:
            await self.home.close()
        triages = self.triages()
        for triage in triages:
            triage.stop()
        await self.coordinator.shutdown(self.grace_s)
        for triage in triages:
            await triage.close()
