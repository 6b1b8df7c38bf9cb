"""``Reporter`` for Slack: short notices in a thread, paced per channel."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.errors import AgentError
from bot.blocks.investigation import (
    cancelled_message,
    error_message,
    queued_message,
    still_working_message,
)
from bot.blocks.kit import SAFE_POST_FLAGS, notice_message
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer
from bot.slack.post_once import RunPosts, ThreadSearch
from bot.work.contracts import Record, RowLost, SlackRefused, ThreadRef, Unavailable, gave_up
from store.queue.work import Work

log = logging.getLogger(__name__)

GAVE_UP_KEY = "gave_up"  # ``work.posted``: the given-up notice's intent (its post token)


class SlackReporter:
    """``Reporter`` posting short notices, paced per channel; a failed post is logged only."""

    def __init__(self, client: AsyncWebClient, pacer: Pacer) -> None:
        self.client = client
        self.pacer = pacer
        self.search = ThreadSearch(client)

    async def say(self, thread: ThreadRef, text: str) -> None:
        await self.post(thread, {"text": text})

    async def busy(self, thread: ThreadRef) -> None:
        await self.post(thread, still_working_message())

    async def seen(self, channel: str, ts: str) -> None:
        """React 👀 on a message socbot has taken on (an instant sign of life)."""
        try:
            await self.client.reactions_add(channel=channel, timestamp=ts, name="eyes")
        except SLACK_ERRORS as error:
            log.info("could not react to %s in %s: %s", ts, channel, error)

    async def queued(self, thread: ThreadRef, position: int) -> None:
        await self._post(thread.channel, thread.thread_ts, queued_message(position), True)

    async def failed(self, thread: ThreadRef, error: BaseException) -> None:
        await self.post(thread, error_message(user_safe_reason(error)))

    async def cancelled(self, thread: ThreadRef) -> None:
        await self.post(thread, cancelled_message())

    async def gave_up(self, thread: ThreadRef, work: Work, record: Record) -> None:
        """The run's status message says it was given up (once: ``bot.slack.post_once``)."""
        posts = RunPosts(
            self.client,
            self.pacer,
            self.search,
            thread,
            work_id=work.id,
            posted=work.posted,
            record=record,
        )
        message = notice_message(gave_up(work.attempts))
        try:
            await posts.replace_status(GAVE_UP_KEY, message, what=f"work {work.id}")
        except RowLost:
            log.info("work %s: told it was given up already (or the row is gone)", work.id)

    async def post(self, thread: ThreadRef, message: dict[str, Any]) -> str | None:
        """Post ``message`` (render output) in the thread; its ts, or None if Slack refused."""
        return await self._post(thread.channel, thread.thread_ts, message)

    async def post_top(
        self, channel: str, message: dict[str, Any], *, background: bool = True
    ) -> str | None:
        """Post ``message`` at the top level of ``channel`` (alert cards); its ts or None.

        Cards wait behind the messages of running investigations (``background``).
        """
        return await self._post(channel, None, message, background)

    async def _post(
        self,
        channel: str,
        thread_ts: str | None,
        message: dict[str, Any],
        background: bool = False,
    ) -> str | None:
        try:
            async with self.pacer.slot(channel, background=background):
                response = await self.client.chat_postMessage(
                    channel=channel,
                    thread_ts=thread_ts,
                    text=message.get("text"),
                    blocks=message.get("blocks"),
                    unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
                    unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
                )
        except SLACK_ERRORS as error:
            log.warning("could not post in %s: %s", channel, error)
            return None
        ts = response.get("ts")
        return str(ts) if ts else None


def user_safe_reason(error: BaseException) -> str:
    """One sentence for the thread: engine errors say what happened, others do not leak."""
    if isinstance(error, AgentError | Unavailable) and str(error).strip():
        return str(error).strip().splitlines()[0]
    if isinstance(error, SlackApiError | SlackRefused):
        return "Slack refused one of my messages, so the investigation stopped."
    return "I hit an internal error and stopped; the details are in socbot's log."
