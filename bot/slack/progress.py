"""The Slack progress sink: one status message per investigation, updated in place.

``SlackProgress`` implements the engine's ``Sink``. ``emit`` only records the new
state and wakes a background worker, so the engine never waits on Slack. The
worker posts the status message on the first event (``chat.postMessage`` in the
thread, through the channel's ``Pacer``) and from then on edits it with
``chat.update``, at most once per ``update_interval`` seconds: events arriving in
between are coalesced and the latest state wins. A 429 pushes the next update back
by ``Retry-After``. While the engine works, ``assistant.threads.setStatus`` shows
"socbot is investigating…" under the thread (refreshed, as Slack drops it after two
minutes; Slack accepts it with ``chat:write`` since March 2026, older setups need
``assistant:write``). If Slack refuses it once, it is not called again (fail open).

``finish(outcome)`` flushes the status message one last time (so the checklist
ends correct) and posts the conclusion / answer / error in the thread. Nothing
here raises into the engine: Slack failures are logged and dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.status import OutcomeView, StatusView
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer
from bot.slack.posting import (
    POST_ATTEMPTS,
    POST_BACKOFF_S,
    outcome_messages,
    post_in_thread,
    post_until_accepted,
    retry_after,
)
from core.events import Event

log = logging.getLogger(__name__)

MAX_FAILURES = 3
FLUSH_TIMEOUT_S = 15.0
ASSISTANT_REFRESH_S = 90.0  # Slack removes a thread status after two minutes


class SlackProgress:
    """Engine ``Sink`` showing one investigation's live progress in a Slack thread."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        pacer: Pacer,
        indicators: Sequence[str] = (),
        update_interval: float = 1.0,
        assistant_status: bool = True,
        status_ts: str | None = None,
        on_status_posted: Callable[[str], Awaitable[None]] | None = None,
        status_metadata: dict[str, Any] | None = None,
        post_attempts: int = POST_ATTEMPTS,
        post_backoff_s: float = POST_BACKOFF_S,
        pages_url: str | None = None,
    ) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.pacer = pacer
        self.view = StatusView(tuple(indicators), pages_url)
        self.update_interval = update_interval
        self.status_ts = status_ts  # the status message, once posted (or from a takeover)
        self.on_status_posted = on_status_posted  # to remember it with the work row
        self.status_metadata = status_metadata  # posted with it (``bot.slack.post_once``)
        self.post_attempts = post_attempts
        self.post_backoff_s = post_backoff_s
        self.unposted = 0  # outcome messages Slack never accepted
        self._assistant = assistant_status
        self._assistant_text = ""  # what setStatus shows now
        self._assistant_at = 0.0  # when it was last sent (Slack drops it after 2 min)
        self._dirty = False
        self._closing = False
        self._failures = 0
        self._next_update = 0.0
        self._worker: asyncio.Task[None] | None = None

    # the Sink ----------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        """Record the event's effect on the status message; Slack I/O happens later."""
        try:
            if self.view.apply(event):
                self._kick()
        except Exception:  # fail open: progress must never break the investigation
            log.exception("slack progress could not apply %s", event.type)

    # the worker ----------------------------------------------------------------

    def refresh(self) -> None:
        """Show the current state (a stream handed over to this checklist mid-run)."""
        self._kick()

    def _kick(self) -> None:
        self._dirty = True
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run(), name="slack-progress")

    @property
    def phase(self) -> str:
        """The status line's first part (the runner may say why the run waits)."""
        return self.view.phase

    @phase.setter
    def phase(self, text: str) -> None:
        self.view.phase = text

    async def _run(self) -> None:
        """Flush until nothing is pending, then end; the next event starts a new worker."""
        while self._dirty:
            try:
                await self._flush()
                await self._set_assistant_status()  # after posting: a new post clears it
            except Exception:  # fail open: a broken flush must not stop later ones
                log.exception("slack progress worker failed")
                self._dirty = False

    async def _flush(self) -> None:
        if not self._dirty:
            return
        delay = self._next_update - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)  # coalesce: events meanwhile only change the state
        if self.status_ts is None:
            self._dirty = False
            await self._post_status()
            return
        async with self.pacer.update_slot():  # the workspace-wide budget for edits
            self._dirty = False
            message = self.view.render()  # rendered after any wait: the latest state wins
            try:
                await self.client.chat_update(
                    channel=self.channel,
                    ts=self.status_ts,
                    text=message["text"],
                    blocks=message["blocks"],
                )
                self._failures = 0
                self._next_update = time.monotonic() + self.update_interval
            except SLACK_ERRORS as error:
                self._failed_update(error)

    async def _post_status(self) -> None:
        try:
            self.status_ts = await post_in_thread(
                self.client,
                self.pacer,
                channel=self.channel,
                thread_ts=self.thread_ts,
                message=self.view.render(),
                metadata=self.status_metadata,
            )
            self._next_update = time.monotonic() + self.update_interval
        except SLACK_ERRORS as error:
            self._failed_update(error)
            return
        if self.on_status_posted is not None:
            await self.on_status_posted(self.status_ts)

    def _failed_update(self, error: BaseException) -> None:
        self._failures += 1
        wait = retry_after(error)
        log.warning("slack progress update failed (%s/%s): %s", self._failures, MAX_FAILURES, error)
        self._next_update = time.monotonic() + max(self.update_interval, wait)
        self._dirty = self._failures < MAX_FAILURES  # try again later, but not forever

    async def _set_assistant_status(self) -> None:
        wanted = "" if self._closing else "is investigating…"
        stale = time.monotonic() - self._assistant_at > ASSISTANT_REFRESH_S
        if not self._assistant or (wanted == self._assistant_text and not (wanted and stale)):
            return
        try:
            await self.client.assistant_threads_setStatus(
                channel_id=self.channel, thread_ts=self.thread_ts, status=wanted
            )
            self._assistant_text = wanted
            self._assistant_at = time.monotonic()
        except SLACK_ERRORS as error:  # not an assistant thread / app: stop trying
            log.info("assistant.threads.setStatus unavailable: %s", error)
            self._assistant = False

    # the end -----------------------------------------------------------------

    async def close(self) -> None:
        """Final flush of the status message; waits for the worker (bounded)."""
        self._closing = True
        if self._worker is None:
            return
        self._kick()
        try:
            await asyncio.wait_for(asyncio.shield(self._worker), FLUSH_TIMEOUT_S)
        except TimeoutError:
            log.warning("slack progress final flush timed out")
            self._worker.cancel()

    async def cancelled(self) -> None:
        """The run was stopped: strike out unfinished steps and flush (no notice posted)."""
        self.view.cancelled()
        await self.close()

    async def settle(self, outcome: OutcomeView) -> None:
        """The status message's final state for ``outcome`` (the outcome is not posted)."""
        self.view.finished(outcome)
        if self.status_ts is not None or self._worker is not None:
            self._dirty = True
        await self.close()

    async def finish(self, outcome: OutcomeView) -> list[str]:
        """Final status update, then the outcome's messages in the thread; their ts."""
        await self.settle(outcome)
        posted: list[str] = []
        for message in outcome_messages(outcome, self.view.indicators, self.view.pages_url):
            ts = await post_until_accepted(
                self.client,
                self.pacer,
                channel=self.channel,
                thread_ts=self.thread_ts,
                message=message,
                what=outcome.investigation_id,
                attempts=self.post_attempts,
                backoff_s=self.post_backoff_s,
            )
            if ts is None:
                self.unposted += 1
            else:
                posted.append(ts)
        return posted
