"""The assistant pane: socbot's threads in Slack's AI app surface (a DM with the person).

* ``assistant_thread_started``: a greeting, then up to four suggested prompts from what is
  useful now and the person may see (``bot.blocks.pane``): the channel beside the pane
  when it has an alert, the newest open case in their channels, an IP address and a host
  from this week's alerts there.
* ``assistant_thread_context_changed``: the channel now beside the pane is kept, as bolt's
  ``DefaultAsyncAssistantThreadContextStore`` keeps it (metadata on socbot's greeting, so
  every replica reads the same), and the prompts follow it.
* a question in the pane (a ``message.im``, routed and queued as any mention by
  ``bot.events.listeners``, so history, dedupe, stop and the work queue are the same)
  first passes ``prepare``: the alert it is about — ``case #N`` when it names one, else the
  thread or newest alert of the channel beside the pane — has its thread's history brought
  into the pane's conversation once, so socbot answers follow-ups about that alert and
  investigation; the thread gets a title (the alert's objective) and a status.

Plain bolt listeners, not bolt's ``AsyncAssistant``: its user-message listener would take
pane questions past socbot's message path (the persistent claims that hold across
replicas and restarts, the stop words, the queue). Both events pass the app's middleware
(dedupe, gatekeeper) and claim their ``event_id`` for good before acting. What the pane
may show is one rule (``bot.events._pane_rules``): only alerts and cases of channels the
person is a member of.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.assistant.thread_context_store.default_async_store import (
    DefaultAsyncAssistantThreadContextStore,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.pane import PROMPTS_TITLE, Offer, greeting_message, prompts, thread_title
from bot.events._pane_rules import case_named, context_of, visible, visible_channels
from bot.events.middleware import Deduper
from bot.events.scope import alert_homes
from bot.slack.errors import SLACK_ERRORS
from bot.slack.members import ChannelMembers
from bot.work.contracts import ThreadRef
from config.settings import SlackSettings
from store.cases.records import get as get_case
from store.cases.records import newest_open_in
from store.db.engine import Database
from store.investigations.conversations import ConversationStore, conversation_id
from store.schema import utcnow
from store.triage.alerts import StoredAlert
from store.triage.recent import recent_in

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
CONTEXT_EVENT = "assistant_thread_context"  # bolt's metadata event type for the context
RECENT = timedelta(days=7)
NOT_YOURS = "I can only talk about alerts and cases of channels you are a member of."
WORKING = "is looking into it…"
BROUGHT = (
    "(socbot) This conversation was opened beside the alert thread below; the person asks about it."
)


class Pane:
    """The pane's listeners and ``prepare`` (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        settings: SlackSettings,
        members: ChannelMembers,
        deduper: Deduper,
        routed: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        self.db = db
        self.settings = settings
        self.routed = routed  # the channels policy rules route alerts to (``alert_homes``)
        self.members = members
        self.deduper = deduper
        self.conversations = ConversationStore(db)

    def register(self, app: AsyncApp) -> None:
        app.event("assistant_thread_started")(self.on_started)
        app.event("assistant_thread_context_changed")(self.on_context_changed)

    async def on_started(
        self, ack: Ack, body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        pane = await self._claimed(body, event)
        if pane is None:
            return
        user, thread, context = pane
        greeting = greeting_message()
        try:
            await client.chat_postMessage(
                channel=thread.channel,
                thread_ts=thread.thread_ts,
                text=greeting["text"],
                blocks=greeting["blocks"],
                metadata={"event_type": CONTEXT_EVENT, "event_payload": _kept(context)},
            )
        except SLACK_ERRORS as error:
            log.warning("could not greet in the pane %s: %s", thread.conversation_id, error)
        await self._offer(client, user, thread, context)

    async def on_context_changed(
        self,
        ack: Ack,
        body: dict[str, Any],
        event: dict[str, Any],
        context: Any,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        pane = await self._claimed(body, event)
        if pane is None:
            return
        user, thread, payload = pane
        store = DefaultAsyncAssistantThreadContextStore(context)
        try:
            await store.save(
                channel_id=thread.channel, thread_ts=thread.thread_ts, context=_kept(payload)
            )
        except (*SLACK_ERRORS, KeyError) as error:  # no greeting to keep it on (yet)
            log.warning("could not keep the pane's context %s: %s", thread.conversation_id, error)
        await self._offer(client, user, thread, payload)

    async def prepare(
        self, thread: ThreadRef, user: str, text: str, context: Any, client: AsyncWebClient
    ) -> None:
        """Before a question in a DM thread is queued: bring the alert it is about into the
        pane's conversation (once, when ``user`` may see it), title the thread, show a status."""
        alert, refused = await self._target(thread, user, text, context)
        if refused:
            await _call(
                client.chat_postEphemeral,
                channel=thread.channel,
                user=user,
                thread_ts=thread.thread_ts,
                text=NOT_YOURS,
            )
        objective = None
        if alert is not None:
            objective = str(alert.investigation.get("objective") or "") or alert.title
            await self._bring(thread, alert)
        await _call(
            client.assistant_threads_setTitle,
            channel_id=thread.channel,
            thread_ts=thread.thread_ts,
            title=thread_title(objective, text),
        )
        await _call(
            client.assistant_threads_setStatus,
            channel_id=thread.channel,
            thread_ts=thread.thread_ts,
            status=WORKING,
        )

    # what the pane is about --------------------------------------------------------

    async def _target(
        self, thread: ThreadRef, user: str, text: str, context: Any
    ) -> tuple[StoredAlert | None, bool]:
        """(the alert the question is about, whether one was named that ``user`` may not see)."""
        number = case_named(text)
        if number is not None:
            case = await get_case(self.db, number)
            if case is None or not case.channel or not case.thread_ts:
                return None, False
            if not visible(user, case.channel, await self.members.of(case.channel)):
                log.info("pane: case #%s is not %s's to see", number, user)
                return None, True
            found = await recent_in(self.db, [case.channel], thread_ts=case.thread_ts, limit=1)
            return (found[0] if found else None), False
        where = await self._context(thread, context)
        if where is None:
            return None, False
        channel, thread_ts = where
        if not visible(user, channel, await self.members.of(channel)):
            return None, False  # the channel beside the pane is not theirs: nothing of it
        found = await recent_in(self.db, [channel], thread_ts=thread_ts, limit=1)
        return (found[0] if found else None), False

    async def _context(self, thread: ThreadRef, context: Any) -> tuple[str, str | None] | None:
        try:
            kept = await DefaultAsyncAssistantThreadContextStore(context).find(
                channel_id=thread.channel, thread_ts=thread.thread_ts
            )
        except (*SLACK_ERRORS, KeyError, TypeError) as error:
            log.info("no pane context for %s: %s", thread.conversation_id, error)
            return None
        return context_of(dict(kept)) if kept is not None else None

    async def _bring(self, thread: ThreadRef, alert: StoredAlert) -> None:
        """The alert thread's history into the pane's conversation, once per investigation."""
        if not alert.investigation_id or not alert.slack_channel or not alert.slack_ts:
            return
        pane = thread.conversation_id
        if any(
            m.investigation_id == alert.investigation_id
            for m in await self.conversations.messages(pane)
        ):
            return
        source = await self.conversations.messages(
            conversation_id(alert.slack_channel, alert.slack_ts)
        )
        turns = [(m.role, m.content) for m in source if m.content]
        if turns:
            await self.conversations.append_many(
                pane, [("user", BROUGHT), *turns], alert.investigation_id
            )

    # the prompts ------------------------------------------------------------------

    async def _offer(
        self, client: AsyncWebClient, user: str, thread: ThreadRef, payload: Any
    ) -> None:
        where = context_of(payload)
        here = where[0] if where is not None else None
        candidates = [here, *alert_homes(self.settings, self.routed())]
        channels = await self._visible(user, candidates)
        alerts = await recent_in(self.db, channels, since=utcnow() - RECENT)
        case = await newest_open_in(self.db, channels)
        offer = Offer(
            case_id=case.id if case is not None else None,
            case_title=case.title if case is not None else "",
            here=any(a.slack_channel == here for a in alerts),  # alerts: of ``channels`` only
            ip=_first(alerts, ("ipv4", "ipv6"), private=False),
            host=_first(alerts, ("domain",), private=True) or _first(alerts, ("domain",)),
        )
        await _call(
            client.assistant_threads_setSuggestedPrompts,
            channel_id=thread.channel,
            thread_ts=thread.thread_ts,
            prompts=prompts(offer),
            title=PROMPTS_TITLE,
        )

    async def _visible(self, user: str, candidates: Iterable[str | None]) -> list[str]:
        wanted = [c for c in dict.fromkeys(candidates) if c]
        return visible_channels(user, wanted, {c: await self.members.of(c) for c in wanted})

    async def _claimed(
        self, body: dict[str, Any], event: dict[str, Any]
    ) -> tuple[str, ThreadRef, Any] | None:
        """(user, pane thread, Slack's context) of a first delivery; None for a repeat or a
        payload of the wrong shape."""
        pane = event.get("assistant_thread")
        if not isinstance(pane, dict):
            return None
        user, channel, ts = pane.get("user_id"), pane.get("channel_id"), pane.get("thread_ts")
        if not all(isinstance(v, str) and v for v in (user, channel, ts)):
            return None
        event_id = body.get("event_id")
        if isinstance(event_id, str) and not await self.deduper.claim_event(event_id):
            return None
        return str(user), ThreadRef(str(channel), str(ts)), pane.get("context")


def _kept(payload: Any) -> dict[str, str]:
    """The context as it is kept: Slack's string fields only."""
    if not isinstance(payload, dict):
        return {}
    keys = ("channel_id", "thread_ts", "team_id", "enterprise_id")
    return {k: v for k in keys if isinstance(v := payload.get(k), str)}


def _first(
    alerts: list[StoredAlert], kinds: tuple[str, ...], private: bool | None = None
) -> str | None:
    for alert in alerts:
        for indicator in alert.indicators:
            if indicator.kind in kinds and (private is None or indicator.private == private):
                return indicator.value
    return None


async def _call(method: Callable[..., Awaitable[Any]], **args: Any) -> None:
    """A pane call Slack may refuse (an older app, a thread that is not a pane): logged."""
    try:
        await method(**args)
    except SLACK_ERRORS as error:
        log.info("pane call refused: %s", error)
