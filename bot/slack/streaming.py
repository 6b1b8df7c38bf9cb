"""The Slack stream sink: one investigation streamed into its thread as Slack's plan display.

``SlackStream`` implements the engine's ``Sink`` like ``bot.slack.progress.SlackProgress``
and has the same ending calls (``close``, ``cancelled``, ``settle``), so the investigator
uses either. ``emit`` folds the event into the run's ``StatusView`` and the ``TaskBoard``
(``bot.blocks.stream``) and wakes a worker; the engine never waits on Slack. The worker
opens the stream on the first event through ``slack_sdk``'s ``chat_stream`` helper
(``AsyncChatStream``: ``chat.startStream``, then ``chat.appendStream``), the plan as tasks
(``task_display_mode="plan"``), and sends what changed at most once per
``update_interval``, through the channel's ``Pacer`` (the start is a new message: its
channel turn; appends share the workspace's edit budget); a 429 pushes the next call back
by ``Retry-After``. The stream's ts is recorded with the work row (``on_started``) before
anything else is sent: one stream per run (``bot.investigator``).

When Slack refuses the start, ``StreamGate`` remembers it (workspace or channel) and the
run switches to the checklist (``fallback()`` builds a ``SlackProgress`` on the same
view, which posts the status message at once); the same when a running stream is ended
under the run (``CLOSED``: Slack's five-minute lifetime, a person's stop) or keeps
failing. The end stops the stream with what happened: the verdict line (the conclusion
message with its buttons is posted once after it, ``bot.slack.post_once``), "cancelled",
or why the run waits. ``stop_earlier`` closes the stream of an earlier attempt (a
restart, a takeover) with a note. Nothing here raises into the engine.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.status import OutcomeView, StatusView
from bot.blocks.stream import TaskBoard, verdict_line
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer
from bot.slack.posting import retry_after
from bot.slack.progress import SlackProgress
from bot.slack.stream_gate import CLOSED, StreamGate, error_code
from bot.work.contracts import RowLost
from core.events import Event

log = logging.getLogger(__name__)

MAX_FAILURES = 3
FLUSH_TIMEOUT_S = 15.0
HANDED_ON = "↪ This run continues on another socbot replica."


class SlackStream:
    """Engine ``Sink`` streaming one investigation into its Slack thread."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        pacer: Pacer,
        view: StatusView,
        gate: StreamGate,
        recipient: tuple[str, str],
        fallback: Callable[[], Awaitable[SlackProgress]],
        on_started: Callable[[str], Awaitable[None]],
        update_interval: float = 1.0,
    ) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.pacer = pacer
        self.view = view
        self.gate = gate
        self.recipient = recipient  # (team, user): Slack wants both in channels
        self.board = TaskBoard(view.indicators)
        self.update_interval = update_interval
        self.ts: str | None = None  # the stream's message, once started
        self.checklist: SlackProgress | None = None  # set once the run fell back
        self._make_fallback = fallback
        self._on_started = on_started
        self._stream: AsyncChatStream | None = None
        self._stopped = False
        self._dirty = False
        self._failures = 0
        self._next_update = 0.0
        self._last_words: str | None = None
        self._worker: asyncio.Task[None] | None = None

    # the Sink ----------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        """Record the event; Slack I/O happens later (in the checklist once fallen back)."""
        if self.checklist is not None:
            await self.checklist.emit(event)
            return
        try:
            changed = self.view.apply(event)
            if self.board.observe(event, self.view.plan) or changed:
                self._kick()
        except Exception:  # fail open: progress must never break the investigation
            log.exception("slack stream could not apply %s", event.type)

    @property
    def phase(self) -> str:
        return self.view.phase

    @phase.setter
    def phase(self, text: str) -> None:
        self.view.phase = text

    # the worker --------------------------------------------------------------

    def _kick(self) -> None:
        self._dirty = True
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run(), name="slack-stream")

    async def _run(self) -> None:
        while self._dirty and not self._stopped and self.checklist is None:
            try:
                await self._flush()
            except Exception:  # fail open: a broken flush must not stop later ones
                log.exception("slack stream worker failed")
                self._dirty = False

    async def _flush(self) -> None:
        delay = self._next_update - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)  # coalesce: events meanwhile only change the state
        self._dirty = False
        if self._stream is None:
            if self.view.note:
                self.board.say(self.view.note)
            self.board.say(self.view.phase)
            self._stream = await self.client.chat_stream(
                channel=self.channel,
                thread_ts=self.thread_ts,
                recipient_team_id=self.recipient[0],
                recipient_user_id=self.recipient[1],
                task_display_mode="plan",
            )
        batch = self.board.take(self.view.plan)
        if not batch:
            return
        starting = self.ts is None
        try:
            if starting:
                async with self.pacer.slot(self.channel):  # a new message in the channel
                    await self._stream.append(chunks=batch.chunks)
            else:
                async with self.pacer.update_slot():
                    await self._stream.append(chunks=batch.chunks)
        except SLACK_ERRORS as error:
            await self._failed(error, starting)
            return
        self.board.sent(batch)
        self._failures = 0
        self._next_update = time.monotonic() + self.update_interval
        if starting and self._stream.ts:
            self.ts = self._stream.ts
            await self._started(self.ts)

    async def _started(self, ts: str) -> None:
        try:
            await self._on_started(ts)
        except RowLost:  # another replica has the run now: close ours, say nothing more
            log.info("stream %s: the run was handed on; closing it", ts)
            self._last_words = HANDED_ON
            await self._stop()

    async def _failed(self, error: BaseException, starting: bool) -> None:
        code = error_code(error)
        log.warning("slack stream call failed (%s): %s", code or type(error).__name__, error)
        if starting and await self.gate.refused(self.channel, error):
            await self._fall_back()
            return
        if code in CLOSED:  # the stream ended under the run: the checklist goes on
            self._stopped = True
            await self._fall_back()
            return
        self._failures += 1
        self._next_update = time.monotonic() + max(self.update_interval, retry_after(error))
        if self._failures >= MAX_FAILURES:
            await self._fall_back()
        else:
            self._dirty = True  # the batch is sent again, with what came meanwhile

    async def _fall_back(self) -> None:
        if self.checklist is None:
            self.checklist = await self._make_fallback()
            self.checklist.view = self.view  # the same state, shown as the checklist
            self.checklist.refresh()

    # the end -----------------------------------------------------------------

    async def close(self) -> None:
        """Wait for the worker (bounded), then stop the stream with the last state."""
        if self._worker is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._worker), FLUSH_TIMEOUT_S)
            except TimeoutError:
                log.warning("slack stream flush timed out")
                self._worker.cancel()
        if self.checklist is not None:
            await self.checklist.close()
        elif self.ts is not None:
            await self._stop()

    async def cancelled(self) -> None:
        """The run was stopped: unfinished tasks marked, the stream ends saying so."""
        self.view.cancelled()
        if self.checklist is not None:
            await self.checklist.cancelled()
            return
        await self.close()

    async def settle(self, outcome: OutcomeView) -> None:
        """The stream's final state for ``outcome`` (its messages are posted after it)."""
        self.view.finished(outcome)
        if outcome.conclusion is not None:
            self._last_words = verdict_line(outcome.conclusion, self.view.indicators)
        if self.checklist is not None:
            await self.checklist.settle(outcome)
            return
        await self.close()

    async def _stop(self) -> None:
        if self._stopped or self._stream is None or self.ts is None:
            return
        self.board.say(self._last_words or self.view.phase)
        batch = self.board.take(self.view.plan, final=True)
        for _ in range(MAX_FAILURES):
            try:
                async with self.pacer.update_slot():
                    await self._stream.stop(chunks=batch.chunks)
            except SLACK_ERRORS as error:
                if error_code(error) in CLOSED:
                    break  # Slack ended it already
                log.warning("could not stop stream %s: %s", self.ts, error)
                await asyncio.sleep(retry_after(error))
                continue
            self.board.sent(batch)
            break
        self._stopped = True


async def stop_earlier(
    client: AsyncWebClient, pacer: Pacer, *, channel: str, ts: str, note: str
) -> None:
    """Close the stream an earlier attempt of the run left open, saying why (fails open)."""
    chunks: list[dict[str, Any]] = [{"type": "markdown_text", "text": note}]
    try:
        async with pacer.update_slot():
            await client.chat_stopStream(channel=channel, ts=ts, chunks=chunks)
    except SLACK_ERRORS as error:
        log.info("the earlier stream %s was closed already (or is gone): %s", ts, error)
