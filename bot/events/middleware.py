"""Cross-cutting bolt middleware: deduplication and authorization.

Dedupe has two keys, both persisted in ``seen_events`` so that they hold across
restarts:

* ``event:<event_id>`` — Slack retries a delivery (``X-Slack-Retry-Num``) with the
  same ``event_id``; the global middleware drops every copy after the first. It
  checks only this process's memory (``Deduper.claim_recent``), so the ack never
  waits for the database; the message listener makes the persistent claim after
  acking (``Deduper.claim_event``), which catches a retry delivered after a restart.
* ``msg:<channel>:<ts>`` — a mention arrives twice, as ``app_mention`` and as
  ``message``, with different event ids. Listeners claim this key only once they
  know the message is one they act on (``Deduper.claim_message``), so an ignored
  twin never swallows the actionable one.

Authorization (``Gatekeeper``): allowed channels and users from settings (empty
list = any; entries starting with ``S`` are user groups; a DM with socbot needs only
the user check; with a user list, a request that names no user is refused unless it is
an integration's message), Slack Connect refused —
a user from another team always, an externally shared channel unless it is listed
in ``allowed_channels`` explicitly. Socbot's own messages are dropped by bolt's
built-in ``IgnoringSelfEvents`` (enabled in ``bot.app``).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from config.settings import SlackSettings
from store.slack import SlackStore

log = logging.getLogger(__name__)

Next = Callable[[], Awaitable[Any]]
PRUNE_EVERY_S = 3600.0
GROUP_CACHE_S = 300.0
RECENT_EVENTS = 10_000  # event ids remembered in memory (Slack retries within minutes)
NOT_ALLOWED = "Sorry, I'm not enabled for you in this channel. Ask your Slack admin."


class Deduper:
    """Persistent claims on deliveries (see the module docstring)."""

    def __init__(self, store: SlackStore, *, recent: int = RECENT_EVENTS) -> None:
        self.store = store
        self.recent = recent
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._last_prune = 0.0

    def claim_recent(self, event_id: str) -> bool:
        """True for the first delivery of ``event_id`` in this process (no I/O)."""
        if event_id in self._recent:
            return False
        self._recent[event_id] = None
        if len(self._recent) > self.recent:
            self._recent.popitem(last=False)
        return True

    async def claim_event(self, event_id: str) -> bool:
        """True for the first delivery of ``event_id`` ever (until pruned): persistent."""
        await self._maybe_prune()
        return await self.store.claim(f"event:{event_id}")

    async def claim_message(self, channel: str, ts: str) -> bool:
        """True for the first listener acting on this message, whatever event carried it."""
        return await self.store.claim(f"msg:{channel}:{ts}")

    async def middleware(self, body: dict[str, Any], next: Next) -> BoltResponse | None:
        """Bolt global middleware: drop repeated deliveries of one ``event_id``.

        Memory only: it runs before the ack, which must not wait for the database.
        """
        event_id = body.get("event_id")
        if body.get("type") == "event_callback" and isinstance(event_id, str):
            if not self.claim_recent(event_id):
                log.info("duplicate delivery of event %s dropped", event_id)
                return BoltResponse(status=200, body="")
        await next()
        return None

    async def _maybe_prune(self) -> None:
        now = time.monotonic()
        if now - self._last_prune >= PRUNE_EVERY_S or self._last_prune == 0.0:
            self._last_prune = now
            await self.store.prune()


class Gatekeeper:
    """Who may use socbot where; one decision per incoming request."""

    def __init__(self, settings: SlackSettings, client: AsyncWebClient) -> None:
        self.settings = settings
        self.client = client
        self.users = {u for u in settings.allowed_users if not u.startswith("S")}
        self.groups = [u for u in settings.allowed_users if u.startswith("S")]
        self._group_members: dict[str, tuple[float, frozenset[str]]] = {}

    def channel_allowed(self, channel: str | None, *, ext_shared: bool = False) -> bool:
        """Allowed channels (empty = any), plus alert and webhook channels and DMs."""
        if channel is not None and channel.startswith("D") and not ext_shared:
            return True  # a DM with socbot: only the user check applies
        listed = channel is not None and (
            channel in self.settings.allowed_channels
            or channel in self.settings.alert_channels
            or channel == self.settings.webhook_channel
        )
        if ext_shared:
            return listed
        return listed or not self.settings.allowed_channels

    async def user_allowed(self, user: str | None) -> bool:
        """Allowed users / user groups (empty = any human)."""
        if not self.settings.allowed_users:
            return True
        if user is None:
            return False
        if user in self.users:
            return True
        for group in self.groups:
            if user in await self._members(group):
                return True
        return False

    async def refusal(self, body: dict[str, Any]) -> str | None:
        """Why this request must not be served, or None when it may."""
        app_team = _app_team(body)
        channel, user, user_team, ext_shared = _who_where(body)
        if user_team is not None and app_team is not None and user_team != app_team:
            return "external user"
        if channel is not None and not self.channel_allowed(channel, ext_shared=ext_shared):
            return "channel not allowed"
        if not _is_bot_event(body) and not await self.user_allowed(user):
            return "user not allowed"  # with a user list, a request naming no user is refused
        return None

    async def middleware(
        self, body: dict[str, Any], client: AsyncWebClient, next: Next
    ) -> BoltResponse | None:
        """Bolt global middleware: refuse, telling a human who asked directly why."""
        reason = await self.refusal(body)
        if reason is None:
            await next()
            return None
        channel, user, _, _ = _who_where(body)
        log.info("refused request from %s in %s: %s", user, channel, reason)
        asked = body.get("event", {}).get("type") == "app_mention" or body.get("type") in (
            "block_actions",
        )
        if asked and reason != "external user" and channel and user:
            try:
                await client.chat_postEphemeral(channel=channel, user=user, text=NOT_ALLOWED)
            except SlackApiError as error:
                log.warning("could not tell %s about the refusal: %s", user, error)
        return BoltResponse(status=200, body="")

    async def _members(self, group: str) -> frozenset[str]:
        cached = self._group_members.get(group)
        if cached and time.monotonic() - cached[0] < GROUP_CACHE_S:
            return cached[1]
        try:
            response = await self.client.usergroups_users_list(usergroup=group)
            members = frozenset(str(u) for u in response.get("users") or [])
        except SlackApiError as error:  # fail closed: nobody from this group
            log.warning("could not list user group %s: %s", group, error)
            members = frozenset()
        self._group_members[group] = (time.monotonic(), members)
        return members


def _app_team(body: dict[str, Any]) -> str | None:
    team = body.get("team_id") or body.get("team", {}).get("id")
    return str(team) if team else None


def _is_bot_event(body: dict[str, Any]) -> bool:
    event = body.get("event") or {}
    return bool(event.get("bot_id")) or event.get("subtype") == "bot_message"


def _who_where(body: dict[str, Any]) -> tuple[str | None, str | None, str | None, bool]:
    """(channel, user, user's team, channel is externally shared) of an event or action."""
    event = body.get("event")
    if isinstance(event, dict) and isinstance(event.get("assistant_thread"), dict):
        pane = event["assistant_thread"]  # the pane's events: its DM and its person
        return _s(pane.get("channel_id")), _s(pane.get("user_id")), None, False
    if isinstance(event, dict):
        channel = event.get("channel")
        if isinstance(channel, dict):  # channel_created and friends
            channel = channel.get("id")
        user = event.get("user")
        if isinstance(user, dict):  # user_change and friends
            user = user.get("id")
        user_team = event.get("user_team") or (event.get("team") if user else None)
        ext = bool(body.get("is_ext_shared_channel"))
        return _s(channel), _s(user), _s(user_team), ext
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
        "channel_id"
    )
    user_info = body.get("user") or {}
    return _s(channel), _s(user_info.get("id")), _s(user_info.get("team_id")), False


def _s(value: object) -> str | None:
    return value if isinstance(value, str) else None  # "" is a value: it matches no list
