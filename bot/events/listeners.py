"""Bolt listeners: ack at once, decide what a message is, hand work to the coordinator.

Every message-like event goes through ``route``:

* ``mention`` — a human mentions socbot (``app_mention``, or the ``message`` twin
  carrying ``<@bot>``) or writes to it in a DM: reply in the message's thread, or
  start one on it;
* ``followup`` — a human writes in a thread socbot is part of;
* ``stop`` — ``stop`` (or ``cancel``) in such a thread or to socbot: allowed to the
  run's requester and admins (``bot.events._stop_policy``), refused to others ephemerally;
* ``alert`` — an integration posts a top-level message in an alert channel: it goes
  through the channel's alert triage (``bot.intake.triage``) when there is one;
* ``ignore`` — everything else (edits, deletions, joins, chatter, other bots).

Acting claims the message's ``(channel, ts)`` first, so the twin deliveries of a
mention (and any retry) start one investigation only. Listeners never wait for an
investigation: they queue a row (``store.queue.work``) that a worker runs in the background.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.events._stop_policy import StopPolicy
from bot.events.middleware import Deduper
from bot.events.pane import Pane
from bot.intake.alert_channels import AlertIntake, alert_from_message, posted_by
from bot.work.contracts import AlertDispatch
from bot.work.worker import Coordinator, Reporter, ThreadRef
from config.settings import SlackSettings
from store.queue.work import Job, priority
from store.schema import WorkKind
from store.slack import SlackStore

log = logging.getLogger(__name__)

Route = Literal["mention", "followup", "stop", "alert", "ignore"]
Ack = Callable[..., Awaitable[Any]]

HUMAN_SUBTYPES = {None, "thread_broadcast", "file_share"}
STOP_WORDS = {"stop", "cancel", "abort"}
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
# Event types the manifest subscribes to (and a few Slack sends unasked) that need no work.
NOOP_EVENTS = (
    "member_joined_channel",
    "member_left_channel",
    "channel_left",
    "group_left",
    "app_uninstalled",
    "tokens_revoked",
    "reaction_added",
    "reaction_removed",
)
USAGE = "Ask me about an alert or an indicator, e.g. `is 185.220.101[.]42 known bad?`"


def mention_text(text: str, bot_user_id: str | None) -> str:
    """The message without socbot's mention (other mentions stay, as data)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", "", text)
    return " ".join(text.split())


def route(
    event: dict[str, Any],
    *,
    bot_user_id: str | None,
    known_thread: bool,
    alert_channel: bool,
) -> Route:
    """What socbot does with a message-like event (pure; see the module docstring)."""
    subtype = event.get("subtype")
    from_integration = subtype == "bot_message" or bool(event.get("bot_id"))
    ts = str(event.get("ts") or "")
    thread_ts = event.get("thread_ts")
    top_level = not thread_ts or thread_ts == ts
    if from_integration or (subtype is None and not str(event.get("text") or "").strip()):
        if alert_channel and top_level and alert_from_message(event) is not None:
            return "alert"
        return "ignore"
    if subtype not in HUMAN_SUBTYPES or not event.get("user") or not ts:
        return "ignore"
    text = str(event.get("text") or "")
    mentioned = (
        event.get("type") == "app_mention"
        or event.get("channel_type") == "im"  # in a DM every message is addressed to socbot
        or (bot_user_id is not None and bot_user_id in _MENTION.findall(text))
    )
    words = mention_text(text, bot_user_id).lower().strip(" .!")
    in_our_thread = not top_level and known_thread
    if words in STOP_WORDS and (in_our_thread or mentioned):
        return "stop"
    if mentioned:
        return "mention"
    return "followup" if in_our_thread else "ignore"


class Listeners:
    """The app's listeners; ``register`` wires them into a bolt ``AsyncApp``."""

    def __init__(
        self,
        *,
        settings: SlackSettings,
        store: SlackStore,
        deduper: Deduper,
        coordinator: Coordinator,
        intake: AlertIntake,
        reporter: Reporter,
        triages: Mapping[str, AlertDispatch] | None = None,
        pane: Pane | None = None,
    ) -> None:
        self.settings = settings
        self.pane = pane  # the assistant pane: a DM question first passes ``Pane.prepare``
        self.triages: Mapping[str, AlertDispatch] = triages if triages is not None else {}
        self.store = store
        self.deduper = deduper
        self.coordinator = coordinator
        self.intake = intake
        self.reporter = reporter
        self.stop_policy = StopPolicy(settings)
        # who started each thread's current run; a thread absent here runs an alert

    def register(self, app: AsyncApp) -> None:
        app.event("app_mention")(self.on_message)
        app.event("message")(self.on_message)
        if self.pane is not None:
            self.pane.register(app)
        for name in NOOP_EVENTS:
            app.event(name)(ack_only)
        app.event(re.compile(r".*"))(ack_only)  # anything else subscribed: ack, never 404
        app.action(re.compile(r".*"))(ack_only)

    async def on_message(
        self,
        ack: Ack,
        body: dict[str, Any],
        event: dict[str, Any],
        context: dict[str, Any],
        client: AsyncWebClient,
    ) -> None:
        """``app_mention`` and ``message`` events (every subtype)."""
        await ack()
        channel = str(event.get("channel") or "")
        ts = str(event.get("ts") or "")
        if not channel or not ts:
            return
        event_id = body.get("event_id")
        if isinstance(event_id, str) and not await self.deduper.claim_event(event_id):
            log.info("event %s was delivered before a restart; dropped", event_id)
            return
        root = str(event.get("thread_ts") or ts)
        try:
            await self._handle(event, channel, ts, root, context, client)
        except Exception as error:  # fail open: tell the thread, never fail silently
            log.exception("could not handle message %s in %s", ts, channel)
            await self.reporter.failed(ThreadRef(channel, root), error)

    async def _handle(
        self,
        event: dict[str, Any],
        channel: str,
        ts: str,
        root: str,
        context: dict[str, Any],
        client: AsyncWebClient,
    ) -> None:
        bot_user_id = context.get("bot_user_id")
        known = root != ts and await self.store.is_known_thread(channel, root)
        action = route(
            event,
            bot_user_id=bot_user_id,
            known_thread=known,
            alert_channel=channel in self.settings.alert_channels,
        )
        if action == "ignore":
            return
        if not await self.deduper.claim_message(channel, ts):
            log.info("message %s in %s already handled", ts, channel)
            return
        if action == "alert":
            await self._alert(channel, event)
            return
        thread = ThreadRef(channel, root)
        user = str(event.get("user") or "")
        if action == "stop":
            await self._stop(thread, user, client)
            return
        text = mention_text(str(event.get("text") or ""), bot_user_id)
        if not text:
            await self.reporter.say(thread, USAGE)
            return
        await self.store.remember_thread(channel, root)
        await self.reporter.seen(channel, ts)
        if self.pane is not None and channel.startswith("D") and user:
            await self.pane.prepare(thread, user, text, context, client)
        await self.start(thread, Job(action, channel, root, text, requester=user or None))

    async def _alert(self, channel: str, event: dict[str, Any]) -> None:
        parsed = alert_from_message(event)
        if parsed is None:
            return
        ts = str(event["ts"])
        data, hint = parsed
        triage = self.triages.get(channel)
        alert = await self.intake.accept(
            data,
            hint,
            slack_channel=channel,
            slack_ts=ts,
            not_indicators=posted_by(event),
            triaged=triage is not None,
        )
        await self.store.remember_thread(channel, ts)
        if triage is not None:  # grouped, queued or deferred; investigated in its thread
            await triage.dispatch(alert, message_ts=ts)
            return
        job = Job(
            WorkKind.ALERT,
            channel,
            ts,
            alert_id=alert.id,
            priority=priority(WorkKind.ALERT, alert.severity),
        )
        await self.start(ThreadRef(channel, ts), job)

    async def start(self, thread: ThreadRef, job: Job) -> None:
        """Queue the work (a row: ``store.queue.work``); a busy thread is told so."""
        if not await self.coordinator.submit(thread, job):
            await self.reporter.busy(thread)

    async def _stop(self, thread: ThreadRef, user: str, client: AsyncWebClient) -> None:
        active = await self.coordinator.queue.active(thread.conversation_id)  # any replica's
        if not active:
            await self.reporter.say(thread, "Nothing is running in this thread.")
            return
        refusal = self.stop_policy.refusal(user, active[0].requester, thread.channel)
        if refusal is not None:
            log.info("stop in %s by %s refused", thread.conversation_id, user)
            try:
                await client.chat_postEphemeral(
                    channel=thread.channel, user=user, thread_ts=thread.thread_ts, text=refusal
                )
            except SlackApiError as error:
                log.warning("could not tell %s the stop was refused: %s", user, error)
            return
        log.info("stop in %s by %s", thread.conversation_id, user)
        if not await self.coordinator.stop(thread):
            await self.reporter.say(thread, "Nothing is running in this thread.")


async def ack_only(ack: Ack) -> None:
    """A listener that only acknowledges (events and actions socbot does not act on)."""
    await ack()
