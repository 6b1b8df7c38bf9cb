"""Investigations as background tasks: one per thread, a global limit, clean stop.

Listeners never await an investigation: they ``submit`` work and return, so the
Slack ack is never held up. The coordinator guarantees

* one run per thread — ``submit`` returns ``False`` while one is running or queued
  there (the caller says "still working");
* at most ``limit`` runs at once — later work waits in FIFO order and the thread is
  told its place (``Reporter.queued``), unless the caller shows the queue elsewhere
  (``announce=False``: the alert storm status message); a notice still waiting to be
  posted when the run starts is dropped;
* ``stop(thread)`` cancels the thread's run, running or queued, and the thread is
  told (``Reporter.cancelled``);
* every failure is told in the thread (``Reporter.failed``) — never silence;
* ``shutdown()`` cancels running and queued runs quietly: nothing is posted per
  queued thread (the process is going away, not the analyst's work failing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.alerts import Alert
from agent.engine import Outcome, Request
from agent.errors import AgentError
from agent.events import Sink
from bot.pacer import Pacer
from bot.progress import SlackProgress
from bot.render import (
    SAFE_POST_FLAGS,
    cancelled_message,
    error_message,
    queued_message,
    still_working_message,
)
from bot.runlog import logged_run
from store.alerts import AlertStore
from store.slack import conversation_id

log = logging.getLogger(__name__)

Work = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class ThreadRef:
    """Where a conversation lives in Slack."""

    channel: str
    thread_ts: str

    @property
    def conversation_id(self) -> str:
        return conversation_id(self.channel, self.thread_ts)


class Reporter(Protocol):
    """Tells a thread what happened to its work (implementations must not raise)."""

    async def say(self, thread: ThreadRef, text: str) -> None: ...

    async def busy(self, thread: ThreadRef) -> None: ...

    async def seen(self, channel: str, ts: str) -> None: ...

    async def queued(self, thread: ThreadRef, position: int) -> None: ...

    async def failed(self, thread: ThreadRef, error: BaseException) -> None: ...

    async def cancelled(self, thread: ThreadRef) -> None: ...


class Coordinator:
    """Runs at most ``limit`` investigations at once, one per thread."""

    def __init__(self, limit: int, reporter: Reporter) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}")
        self.limit = limit
        self.reporter = reporter
        self._tasks: dict[ThreadRef, asyncio.Task[None]] = {}
        self._waiting: deque[tuple[ThreadRef, asyncio.Future[None]]] = deque()
        self._active = 0
        self._stopping: set[ThreadRef] = set()
        self._notices: set[asyncio.Task[None]] = set()
        self._closing = False

    @property
    def running(self) -> int:
        return self._active

    @property
    def queued(self) -> int:
        return len(self._waiting)

    def task_for(self, thread: ThreadRef) -> asyncio.Task[None] | None:
        """The thread's run (running or waiting), if any."""
        return self._tasks.get(thread)

    def busy(self, thread: ThreadRef) -> bool:
        """True while the thread has a run in progress or waiting."""
        return thread in self._tasks

    @property
    def closing(self) -> bool:
        """True once ``shutdown()`` has begun (no new work is taken)."""
        return self._closing

    def submit(self, thread: ThreadRef, work: Work, *, announce: bool = True) -> bool:
        """Start ``work`` for ``thread`` in the background; False if the thread is busy.

        ``announce=False``: if the run has to wait, post no queue notice in its thread.
        """
        if self._closing or thread in self._tasks:
            return False
        task = asyncio.create_task(self._run(thread, work, announce), name=f"investigate {thread}")
        self._tasks[thread] = task
        task.add_done_callback(lambda _t: self._tasks.pop(thread, None))
        return True

    async def stop(self, thread: ThreadRef) -> bool:
        """Cancel the thread's run and wait until it is gone; False if nothing ran."""
        task = self._tasks.get(thread)
        if task is None:
            return False
        self._stopping.add(thread)
        task.cancel()
        await asyncio.wait([task])
        return True

    async def wait_idle(self) -> None:
        """Wait until every submitted run has ended (tests, shutdown)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks.values()))

    async def shutdown(self) -> None:
        """Refuse new work and cancel what runs (the process is going away)."""
        self._closing = True
        for task in [*self._notices, *self._tasks.values()]:
            task.cancel()
        await self.wait_idle()

    async def _run(self, thread: ThreadRef, work: Work, announce: bool) -> None:
        try:
            await self._acquire(thread, announce)
            try:
                await work()
            finally:
                self._release()
        except asyncio.CancelledError:
            if thread in self._stopping and not self._closing:
                await self.reporter.cancelled(thread)
                return  # a requested stop is a normal end
            raise
        except Exception as error:  # fail open: tell the thread, keep serving others
            log.exception("investigation in %s failed", thread.conversation_id)
            if not self._closing:
                await self.reporter.failed(thread, error)
        finally:
            self._stopping.discard(thread)

    async def _acquire(self, thread: ThreadRef, announce: bool) -> None:
        if self._active < self.limit and not self._waiting:
            self._active += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((thread, turn))
        notice = self._announce(thread, len(self._waiting)) if announce else None
        try:
            await turn  # _release hands its slot over: _active already counts us
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # the slot arrived as we were cancelled: pass it on
            else:
                # another run's _release may already have dropped our cancelled turn
                with contextlib.suppress(ValueError):
                    self._waiting.remove((thread, turn))
            raise
        finally:
            if notice is not None:
                notice.cancel()  # still waiting for a posting turn: not worth saying now

    def _announce(self, thread: ThreadRef, position: int) -> asyncio.Task[None]:
        """Post the queue notice beside the wait, so the wait never waits for the notice."""
        task = asyncio.create_task(self.reporter.queued(thread, position), name="queued notice")
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)
        return task

    def _release(self) -> None:
        while self._waiting:
            _, turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return  # the slot moves to the next in line
        self._active -= 1


class SlackReporter:
    """``Reporter`` posting short notices, paced per channel; a failed post is logged only."""

    def __init__(self, client: AsyncWebClient, pacer: Pacer) -> None:
        self.client = client
        self.pacer = pacer

    async def say(self, thread: ThreadRef, text: str) -> None:
        await self.post(thread, {"text": text})

    async def busy(self, thread: ThreadRef) -> None:
        await self.post(thread, still_working_message())

    async def seen(self, channel: str, ts: str) -> None:
        """React 👀 on a message socbot has taken on (an instant sign of life)."""
        try:
            await self.client.reactions_add(channel=channel, timestamp=ts, name="eyes")
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as error:
            log.info("could not react to %s in %s: %s", ts, channel, error)

    async def queued(self, thread: ThreadRef, position: int) -> None:
        await self._post(thread.channel, thread.thread_ts, queued_message(position), True)

    async def failed(self, thread: ThreadRef, error: BaseException) -> None:
        await self.post(thread, error_message(user_safe_reason(error)))

    async def cancelled(self, thread: ThreadRef) -> None:
        await self.post(thread, cancelled_message())

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
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as error:
            log.warning("could not post in %s: %s", channel, error)
            return None
        ts = response.get("ts")
        return str(ts) if ts else None


def user_safe_reason(error: BaseException) -> str:
    """One sentence for the thread: engine errors say what happened, others do not leak."""
    if isinstance(error, AgentError) and str(error).strip():
        return str(error).strip().splitlines()[0]
    if isinstance(error, SlackApiError):
        return "Slack refused one of my messages, so the investigation stopped."
    return "I hit an internal error and stopped; the details are in socbot's log."


class EngineLike(Protocol):
    """``agent.engine.Engine`` as the Slack side uses it."""

    async def run(self, request: Request, sink: Sink) -> Outcome: ...


class EngineInvestigator:
    """One investigation in a thread: engine → live status message → outcome messages.

    For alerts the conclusion (verdict, summary, investigation id) is written back to
    the alert row before the verdict is posted.
    """

    def __init__(
        self,
        engine: EngineLike,
        client: AsyncWebClient,
        alerts: AlertStore,
        *,
        pacer: Pacer | None = None,
        update_interval: float = 1.0,
    ) -> None:
        self.engine = engine
        self.client = client
        self.alerts = alerts
        self.pacer = pacer or Pacer()
        self.update_interval = update_interval

    async def __call__(
        self, thread: ThreadRef, text: str, alert: Alert | None, *, user: str | None = None
    ) -> None:
        indicators = [i.value for i in alert.indicators] if alert else []
        progress = SlackProgress(
            self.client,
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            pacer=self.pacer,
            indicators=indicators,
            update_interval=self.update_interval,
        )
        request = Request(conversation_id=thread.conversation_id, text=text, alert=alert, user=user)
        try:
            outcome = await logged_run(self.engine, request, progress)
        except asyncio.CancelledError:
            await progress.cancelled()  # strike the plan through; the reporter says so
            raise
        if alert is not None:
            await self._record(alert, outcome)
        await progress.finish(outcome)

    async def _record(self, alert: Alert, outcome: Outcome) -> None:
        await self.alerts.set_investigation(alert.id, outcome.investigation_id)
        if outcome.conclusion is not None:
            await self.alerts.set_verdict(
                alert.id,
                verdict=outcome.conclusion.verdict,
                summary=outcome.conclusion.summary,
                investigation_id=outcome.investigation_id,
            )
