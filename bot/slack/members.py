"""Who is in a channel (``conversations.members``), for the decisions only its members may
make. Read page by page, cached for a minute; a Slack error fails closed (nobody, not
cached, so the next click asks again)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.errors import SLACK_ERRORS

log = logging.getLogger(__name__)

CACHE_S = 60.0
MAX_PAGES = 20  # 1,000 members a page


class ChannelMembers:
    """``is_member(channel, user)`` as Slack says, cached per channel."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        cache_s: float = CACHE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.cache_s = cache_s
        self.clock = clock
        self._cache: dict[str, tuple[float, frozenset[str]]] = {}

    async def is_member(self, channel: str, user: str) -> bool:
        if not channel or not user:
            return False
        return user in await self.of(channel)

    async def of(self, channel: str) -> frozenset[str]:
        """The channel's members (empty when Slack cannot say)."""
        cached = self._cache.get(channel)
        now = self.clock()
        if cached is not None and now - cached[0] < self.cache_s:
            return cached[1]
        found: set[str] = set()
        cursor: str | None = None
        try:
            for _ in range(MAX_PAGES):
                response = await self.client.conversations_members(
                    channel=channel, limit=1000, cursor=cursor
                )
                found.update(str(u) for u in response.get("members") or [])
                cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
                if cursor is None:
                    break
        except SLACK_ERRORS as error:
            log.warning("could not list the members of %s: %s", channel, error)
            return frozenset()
        members = frozenset(found)
        self._cache[channel] = (now, members)
        return members
