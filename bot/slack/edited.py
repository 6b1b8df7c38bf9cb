"""A Slack message edited in place (``chat.update``) to what the database says now.

Used for alert group cards and the storm status message (``bot.intake._storm_board``). The
content is rendered from the database when the edit is made, so edits coalesce (the
latest state wins, at most one edit per interval) and several replicas editing one
message agree: after each edit the message is rendered once more and edited again if
the data changed meanwhile — so the last edit to land shows the last state, whichever
replica made it. Edits are background work on the workspace's edit budget
(``Pacer.update_slot(background=True)``): the live status of running investigations
always goes first.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.blocks.kit import Message
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer

log = logging.getLogger(__name__)

Render = Callable[[], Awaitable[Message]]


class EditedMessage:
    """Message ``ts`` in ``channel``, kept showing ``render()`` (see the module docstring)."""

    def __init__(
        self,
        client: AsyncWebClient,
        pacer: Pacer,
        channel: str,
        interval: float,
        tasks: set[asyncio.Task[None]],
        render: Render,
        ts: str | None = None,
    ) -> None:
        self.client = client
        self.pacer = pacer
        self.channel = channel
        self.interval = interval
        self.render = render
        self.ts = ts
        self._tasks = tasks  # the owner's, to cancel at shutdown
        self._shown: Message | None = None  # what the message shows, as far as we know
        self._dirty = False
        self._worker: asyncio.Task[None] | None = None
        self._next = 0.0
        self._rendering = False
        self.closed = False

    def show(self) -> None:
        """The data may have changed: edit the message soon if it shows something else.

        Before the message is posted this only remembers to look.
        """
        self._dirty = True
        if self.closed:
            return
        if self.ts is not None and (self._worker is None or self._worker.done()):
            self._worker = asyncio.create_task(self._run(), name="edit in place")
            self._tasks.add(self._worker)
            self._worker.add_done_callback(self._tasks.discard)

    def posted(self, ts: str, shown: Message) -> None:
        """The message exists now, showing ``shown``; catch up with changes since."""
        self.ts, self._shown = ts, shown
        self.show()

    def stop(self) -> None:
        """Shutdown: edit no more (a render in progress ends first: it is a transaction)."""
        self.closed = True
        if self._worker is not None and not self._rendering:
            self._worker.cancel()

    async def _run(self) -> None:
        while self._dirty and not self.closed:
            self._dirty = False
            delay = self._next - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if await self._render() in (None, self._shown):
                continue
            async with self.pacer.update_slot(background=True):
                message = await self._render()  # the freshest, after waiting for a turn
                if message is None or message == self._shown or self.ts is None or self.closed:
                    continue
                try:
                    await self.client.chat_update(
                        channel=self.channel,
                        ts=self.ts,
                        text=message["text"],
                        blocks=message["blocks"],
                    )
                except SLACK_ERRORS as error:
                    log.warning("could not edit %s in %s: %s", self.ts, self.channel, error)
                    return
                finally:
                    self._next = time.monotonic() + self.interval
            self._shown = message
            self._dirty = True  # look once more: another replica may have changed it

    async def _render(self) -> Message | None:
        self._rendering = True
        try:
            return await self.render()
        except SQLAlchemyError as error:  # fail open: the next change shows it again
            log.warning("could not render %s in %s: %s", self.ts, self.channel, error)
            return None
        finally:
            self._rendering = False
