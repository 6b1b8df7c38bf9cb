"""Who may see what: an investigation is visible to the members of the channel it ran in.

A person's channels come from Slack (``users.conversations`` with the bot token: the
public channels they are in and the private ones the bot shares with them), cached
for ``membership_cache_s``. Admins (``slack.admin_users``) see everything, terminal
runs included; nobody else sees a terminal run. A Slack error fails closed: no
channels, not cached, so the next request asks again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.web.auth.session import Viewer
from store.investigations.browse import Visibility, channel_of

log = logging.getLogger(__name__)


class Access:
    """Channel membership checks for the pages."""

    def __init__(
        self,
        client: AsyncWebClient | None,
        admins: Collection[str],
        *,
        cache_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.admins = frozenset(admins)
        self.cache_s = cache_s
        self.clock = clock
        self._cache: dict[str, tuple[float, frozenset[str]]] = {}

    def is_admin(self, viewer: Viewer) -> bool:
        return viewer.local or viewer.user in self.admins

    async def visibility(self, viewer: Viewer) -> Visibility:
        if self.is_admin(viewer):
            return Visibility(channels=None, terminal=True)
        return Visibility(channels=await self.channels(viewer.user), terminal=False)

    async def may_see(self, viewer: Viewer, conversation_id: str | None) -> bool:
        """The conversation's channel is one of the viewer's (admins: always)."""
        if self.is_admin(viewer):
            return True
        channel = channel_of(conversation_id or "")
        return channel is not None and channel in await self.channels(viewer.user)

    async def may_see_channel(self, viewer: Viewer, channel: str | None) -> bool:
        if self.is_admin(viewer):
            return True
        return channel is not None and channel in await self.channels(viewer.user)

    async def channels(self, user: str) -> frozenset[str]:
        """The channels ``user`` is a member of, as the bot sees them (cached)."""
        cached = self._cache.get(user)
        now = self.clock()
        if cached is not None and now - cached[0] < self.cache_s:
            return cached[1]
        if self.client is None:
            return frozenset()
        found: set[str] = set()
        cursor: str | None = None
        try:
            while True:
                response = await self.client.users_conversations(
                    user=user,
                    types="public_channel,private_channel",
                    exclude_archived=True,
                    limit=999,
                    cursor=cursor,
                )
                found.update(str(c["id"]) for c in response.get("channels") or [])
                cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
                if not cursor:
                    break
        except SlackApiError as error:
            log.warning("users.conversations failed: %s", error.response.get("error"))
            return frozenset()
        channels = frozenset(found)
        self._cache[user] = (now, channels)
        return channels
