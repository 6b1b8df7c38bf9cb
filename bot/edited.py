"""A Slack message edited in place (``chat.update``): latest content wins, coalesced.

Used for alert group cards and the storm status message (``bot.storm``). Edits are
background work on the workspace's edit budget (``Pacer.update_slot(background=True)``):
the live status of running investigations always goes first.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks import Message
from bot.pacer import Pacer

log = logging.getLogger(__name__)

SLACK_ERRORS = (SlackApiError, aiohttp.ClientError, TimeoutError)


class EditedMessage:
    """A message edited in place: latest content wins, at most one edit per interval."""

    def __init__(
        self,
        client: AsyncWebClient,
        pacer: Pacer,
        channel: str,
        interval: float,
        tasks: set[asyncio.Task[None]],
    ) -> None:
        self.client = client
        self.pacer = pacer
        self.channel = channel
        self.interval = interval
        self._tasks = tasks  # the owner's, to cancel at shutdown
        self.ts: str | None = None
        self._render: Callable[[], Message] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._next = 0.0

    def show(self, render: Callable[[], Message]) -> None:
        """Edit the message to ``render()`` soon (rendered when the edit is sent).

        Before the message is posted this only remembers what to show.
        """
        self._render = render
        if self.ts is not None and (self._worker is None or self._worker.done()):
            self._worker = asyncio.create_task(self._run(), name="edit in place")
            self._tasks.add(self._worker)
            self._worker.add_done_callback(self._tasks.discard)

    def posted(self, ts: str) -> None:
        """The message exists now; apply what was shown meanwhile."""
        self.ts = ts
        if self._render is not None:
            self.show(self._render)

    async def _run(self) -> None:
        while self._render is not None:
            delay = self._next - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            async with self.pacer.update_slot(background=True):
                render, self._render = self._render, None
                if render is None or self.ts is None:
                    return
                message = render()
                try:
                    await self.client.chat_update(
                        channel=self.channel,
                        ts=self.ts,
                        text=message["text"],
                        blocks=message["blocks"],
                    )
                except SLACK_ERRORS as error:
                    log.warning("could not edit %s in %s: %s", self.ts, self.channel, error)
                self._next = time.monotonic() + self.interval
