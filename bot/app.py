"""Wire socbot together: the bolt ``AsyncApp`` with its middleware and listeners,
the work queue and its worker, the webhook and the alert channels' triages.

The bolt app acks before listeners run (``process_before_response=False``), verifies
signatures in HTTP mode, ignores socbot's own events (built in), then applies socbot's
middleware: dedupe, then authorization. Client: ``bot.slack.client``; lifecycle: ``bot.lifecycle``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent.playbook.learning.service import Learner
from alerts.catalogue import load_catalogue
from alerts.parse import Alert
from bot.decisions.approvals import SlackApprovals
from bot.decisions.case_audit import CaseAudits
from bot.decisions.case_digest import CaseDigests
from bot.decisions.case_posts import CasePosts
from bot.decisions.cases import CaseActions
from bot.decisions.playbook_review import SlackReview
from bot.decisions.votes import FeedbackActions
from bot.events.home import AppHome
from bot.events.listeners import Listeners, ack_only
from bot.events.middleware import Deduper, Gatekeeper
from bot.events.pane import Pane
from bot.intake.alert_channels import AlertIntake
from bot.intake.alerts_endpoint import AlertWebhook
from bot.intake.policy.dispatch import PolicedTriage
from bot.intake.policy.held import DeferredRunner
from bot.intake.policy.setup import policy_parts
from bot.intake.triage import AlertTriage
from bot.lifecycle import SocBot
from bot.notify.delivery import Webhooks
from bot.runners import runners
from bot.slack.members import ChannelMembers
from bot.slack.pacer import Pacer
from bot.slack.reporter import SlackReporter
from bot.web.guard import pages_for
from bot.work.contracts import Investigate
from bot.work.learning import LearningWork
from bot.work.pruning import PruneWork
from bot.work.setup import default_replica_id, replica_limit, work_queue
from bot.work.worker import Coordinator
from config.settings import Settings, SlackSettings
from store.db.engine import Database
from store.playbook.feedback import FeedbackStore
from store.queue.learning import LearnQueue
from store.retention import Pruner
from store.slack import SlackStore
from store.triage.alerts import AlertStore

# What bolt reads from the environment for arguments it was not given. socbot gives it
# everything from its own settings (a client carrying the bot token), so bolt must not
# see them: SLACK_BOT_TOKEN beside the client logs "`token` will be unused" on every
# start, and SLACK_CLIENT_ID with SLACK_CLIENT_SECRET would turn on an OAuth flow.
BOLT_ENV = ("SLACK_BOT_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_VERIFICATION_TOKEN")


class Registers(Protocol):
    """Something that registers its listeners on the bolt app."""

    def register(self, app: AsyncApp) -> None: ...


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
    with _hidden_from_bolt():
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


@contextmanager
def _hidden_from_bolt() -> Iterator[None]:
    """``BOLT_ENV`` out of the environment while the bolt app is built (it reads them only
    then), restored after."""
    saved = {name: os.environ.pop(name) for name in BOLT_ENV if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def create_socbot(
    settings: Settings,
    db: Database,
    investigate: Investigate,
    *,
    client: AsyncWebClient,
    http_mode: bool,
    pacer: Pacer,
    learner: Learner | None = None,
    review: SlackReview | None = None,
    approvals: SlackApprovals | None = None,
    webhooks: Webhooks | None = None,
    members: ChannelMembers | None = None,
) -> SocBot:
    """Wire store, middleware, coordinator, listeners, bolt app, webhook and triages.

    Every alert channel gets an ``AlertTriage`` for the alerts forwarded into it (the
    webhook channel's triage, when it is also an alert channel).

    ``pacer`` is shared with the investigator so that every message posted in a
    channel (cards, notices, progress, conclusions) counts against one pace.
    ``learner`` runs the learning rows that votes and corrections queue
    (``bot.work.learning``; ``SocBot.learn`` queues one); ``review`` handles the
    playbook review channel's buttons; ``approvals`` the Approve / Deny buttons of
    risky tool calls (``bot.decisions.approvals``); ``webhooks`` sends events onward;
    ``members`` is the channel membership cache, shared with the investigator's scoping.
    """
    slack = settings.slack
    store = SlackStore(db)
    alerts = AlertStore(db)
    intake = AlertIntake(alerts, load_catalogue(settings.alerts.formats_dir))
    reporter = SlackReporter(client, pacer)
    coordinator = Coordinator(
        replica_limit(settings),
        reporter,
        work_queue(settings, db),
        replica=settings.work.replica_id or default_replica_id(),
        poll_s=settings.work.poll_s,
        retry_backoff_s=settings.work.retry_backoff_s,
    )
    learning = (
        LearningWork(
            learner,
            LearnQueue(db, settle_s=settings.learning.settle_s),
            coordinator,
            enabled=settings.learning.enabled,
        )
        if learner is not None
        else None
    )
    learn = learning.request if learning is not None else None
    pruning = PruneWork(Pruner(db, settings.retention), coordinator)
    gate, suppress = policy_parts(settings, db, alerts)
    notifier = Webhooks.notifier_of(webhooks)
    members = members or ChannelMembers(client)  # who is in a channel: cases, pane, scoping
    app_home = AppHome(db, settings, members, client, gate=gate, queue=coordinator)  # Home
    case_posts = CasePosts(
        db, client, pacer, settings.cases, coordinator, notifier, app_home.changed
    )
    cases = CaseActions(
        db,
        settings.cases,
        members,
        admins=slack.admin_users,
        feedback=FeedbackStore(db),
        learn=learn,
        nudge=coordinator.nudge,
        capture=bool(settings.evals.team_pack),
        home=app_home.clicked,
    )
    deduper = Deduper(store)
    forwarded: dict[str, AlertTriage] = {}
    policed: dict[str, PolicedTriage] = {}  # the alert channels' triages, policy first
    listeners = Listeners(
        settings=slack,
        store=store,
        deduper=deduper,
        coordinator=coordinator,
        intake=intake,
        reporter=reporter,
        triages=policed,
        pane=Pane(db, slack, members, deduper, gate.route_channels),
    )
    bolt = build_bolt_app(
        slack,
        client,
        http_mode=http_mode,
        deduper=deduper,
        gatekeeper=Gatekeeper(slack, client),
        listeners=listeners,
        handlers=[
            FeedbackActions(FeedbackStore(db), learn, notifier),
            suppress,
            cases,
            app_home,
            CaseAudits(cases, capture=bool(settings.evals.team_pack)),
            *[handler for handler in (review, approvals) if handler is not None],
        ],
    )
    holder: list[SocBot] = []

    async def dispatch(alert: Alert) -> None:
        if holder[0].policed is None:
            await holder[0].dispatch_alert(alert)
        else:
            await holder[0].policed.dispatch(alert)

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
        learn=learn,
        pruning=pruning,
        reminders=case_posts,
        digest=CaseDigests(
            db, client, pacer, settings.cases, coordinator, pages_url=settings.web.base_url
        ),
        home=app_home,
        gate=gate,
        pages=pages_for(settings, db, client),
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

    def routed(channel: str) -> AlertTriage:
        """The triage of a channel a ``route`` rule names (made when first needed)."""
        if channel not in by_channel:
            bot.routed[channel] = by_channel[channel] = triage(channel, own_rows_only=True)
        return by_channel[channel]

    for channel in gate.route_channels():  # their rows run on every replica from the start
        routed(channel)
    for channel, home in forwarded.items():
        policed[channel] = PolicedTriage(channel, home, gate, routed, reporter)
    if bot.triage is not None and slack.webhook_channel:
        bot.policed = PolicedTriage(slack.webhook_channel, bot.triage, gate, routed, reporter)
    coordinator.register(runners(alerts, investigate, by_channel))
    held = dict(policed)  # where a budget-held alert goes when its window frees
    if bot.policed is not None and slack.webhook_channel:
        held[slack.webhook_channel] = bot.policed
    DeferredRunner.register(coordinator, alerts, gate, held)
    Webhooks.attach(webhooks, coordinator)
    holder.append(bot)
    return bot
