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
from typing import Any, Protocol

import aiohttp
from pydantic import ValidationError
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.concluder import Conclusion
from agent.events import (
    Answered,
    Concluded,
    Event,
    Failed,
    ModeChosen,
    PlanCreated,
    PlanUpdated,
    Reflected,
    Started,
    StepFinished,
    StepStarted,
    ToolCalled,
)
from agent.planner import Plan, StepStatus
from agent.review import Review
from bot.escape import escape, mrkdwn
from bot.pacer import Pacer
from bot.render import (
    SAFE_POST_FLAGS,
    Message,
    answer_messages,
    cancelled_message,
    conclusion_messages,
    error_message,
    plan_message,
)
from bot.stats import RunStats

log = logging.getLogger(__name__)

SLACK_ERRORS = (SlackApiError, aiohttp.ClientError, TimeoutError)
MAX_FAILURES = 3
POST_ATTEMPTS = 4  # outcome messages, beyond the client's own retries
POST_BACKOFF_S = 1.0
FLUSH_TIMEOUT_S = 15.0
ASSISTANT_REFRESH_S = 90.0  # Slack removes a thread status after two minutes


class OutcomeView(Protocol):
    """The parts of ``agent.engine.Outcome`` the sink shows."""

    @property
    def investigation_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def conclusion(self) -> Conclusion | None: ...
    @property
    def plan(self) -> Plan | None: ...
    @property
    def limits_hit(self) -> list[str]: ...
    @property
    def error(self) -> str | None: ...
    @property
    def review(self) -> Review | None: ...
    @property
    def usage(self) -> dict[str, Any]: ...
    @property
    def record(self) -> dict[str, Any]: ...


async def post_in_thread(
    client: AsyncWebClient, pacer: Pacer, *, channel: str, thread_ts: str, message: Message
) -> str:
    """Post a rendered message in a thread, paced, unfurling off, never ``link_names``.

    Returns the new message's ts; raises ``SlackApiError`` when Slack refuses.
    """
    async with pacer.slot(channel):
        response = await client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=message["text"],
            blocks=message.get("blocks"),
            unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
            unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
        )
    return str(response["ts"])


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
        post_attempts: int = POST_ATTEMPTS,
        post_backoff_s: float = POST_BACKOFF_S,
    ) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.pacer = pacer
        self.indicators = tuple(indicators)
        self.update_interval = update_interval
        self.status_ts = status_ts  # the status message, once posted (or from a takeover)
        self.on_status_posted = on_status_posted  # to remember it with the work row
        self.post_attempts = post_attempts
        self.post_backoff_s = post_backoff_s
        self.unposted = 0  # outcome messages Slack never accepted
        self.investigation_id = ""
        self.plan: Plan | None = None
        self.phase = "🤔 Thinking…"
        self.activity = ""
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
            if self._apply(event):
                self._kick()
        except Exception:  # fail open: progress must never break the investigation
            log.exception("slack progress could not apply %s", event.type)

    def _apply(self, event: Event) -> bool:
        """Update the state from ``event``; True when the status message changes."""
        self.investigation_id = self.investigation_id or event.investigation_id
        if isinstance(event, Started):
            self.phase = "🔎 Looking at the alert…" if event.kind == "alert" else "🤔 Thinking…"
        elif isinstance(event, ModeChosen):
            direct = event.mode == "direct"
            self.phase = "💬 Working on an answer…" if direct else "📝 Planning the investigation…"
        elif isinstance(event, PlanCreated | PlanUpdated):
            self._load_plan(event.plan)
            self.phase = "🔄 Investigating…"
            if isinstance(event, PlanUpdated) and event.changes:
                self.activity = "📝 Plan updated: " + mrkdwn("; ".join(event.changes)[:300])
        elif isinstance(event, StepStarted):
            self._set_status(event.step_id, "running")
            self.phase = f"🔄 Running step {escape(event.step_id)}…"
        elif isinstance(event, StepFinished):
            self._set_status(event.step_id, event.status)
        elif isinstance(event, ToolCalled):
            self.activity = self._tool_line(event)
        elif isinstance(event, Reflected):
            self.phase = "🤔 Reviewing the results…"
        elif isinstance(event, Concluded | Answered):
            self.phase = "✅ Done — see below."
        elif isinstance(event, Failed):
            self.phase = "❌ Stopped: " + mrkdwn(event.reason[:300], self.indicators)
        else:
            return False  # LLMCalled and the like do not change what the analyst sees
        return True

    def _load_plan(self, raw: dict[str, Any]) -> None:
        try:
            self.plan = Plan.model_validate(raw)
        except ValidationError:
            log.warning("slack progress got a plan it cannot read; keeping the last one")

    def _set_status(self, step_id: str, status: StepStatus) -> None:
        for step in self.plan.steps if self.plan else []:
            if step.id == step_id:
                step.status = status

    @staticmethod
    def _tool_line(event: ToolCalled) -> str:
        where = f" in step {escape(event.step_id)}" if event.step_id else ""
        seconds = f"{event.duration_ms / 1000:.1f} s"
        if event.ok:
            return f"🔧 Last tool: `{escape(event.tool)}`{where} ({seconds})"
        return f"⚠️ Tool `{escape(event.tool)}` failed{where} ({seconds})"

    # the worker ----------------------------------------------------------------

    def _kick(self) -> None:
        self._dirty = True
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run(), name="slack-progress")

    def render(self) -> Message:
        """The status message for the current state."""
        status = self.phase + (f" · {self.activity}" if self.activity else "")
        return plan_message(
            self.plan,
            status_line=status,
            investigation_id=self.investigation_id or "pending",
            indicators=self.indicators,
        )

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
            message = self.render()  # rendered after any wait: the latest state wins
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
                message=self.render(),
            )
            self._next_update = time.monotonic() + self.update_interval
        except SLACK_ERRORS as error:
            self._failed_update(error)
            return
        if self.on_status_posted is not None:
            await self.on_status_posted(self.status_ts)

    def _failed_update(self, error: BaseException) -> None:
        self._failures += 1
        retry_after = _retry_after(error)
        log.warning("slack progress update failed (%s/%s): %s", self._failures, MAX_FAILURES, error)
        self._next_update = time.monotonic() + max(self.update_interval, retry_after)
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
        self._mark_unfinished("cancelled")
        self.phase = "🛑 Cancelled."
        await self.close()

    def _mark_unfinished(self, status: StepStatus) -> None:
        for step in self.plan.steps if self.plan else []:
            if step.status in ("pending", "running"):
                step.status = status

    async def finish(self, outcome: OutcomeView) -> list[str]:
        """Final status update, then the outcome's messages in the thread; their ts."""
        self.investigation_id = self.investigation_id or outcome.investigation_id
        if outcome.plan is not None:
            self.plan = outcome.plan.model_copy(deep=True)
        if outcome.status == "cancelled":
            self._mark_unfinished("cancelled")
            self.phase = "🛑 Cancelled."
        elif outcome.status == "failed":
            self.phase = "❌ Stopped: " + mrkdwn((outcome.error or "failed")[:300], self.indicators)
        else:
            self.phase = "✅ Done — see below."
        if self.status_ts is not None or self._worker is not None:
            self._dirty = True
        await self.close()
        posted: list[str] = []
        for message in self._outcome_messages(outcome):
            ts = await self._post_outcome(message, outcome.investigation_id)
            if ts is None:
                self.unposted += 1
            else:
                posted.append(ts)
        return posted

    async def _post_outcome(self, message: Message, investigation_id: str) -> str | None:
        """Post one outcome message, again after each refusal (``Retry-After``, backoff)."""
        for attempt in range(1, self.post_attempts + 1):
            try:
                return await post_in_thread(
                    self.client,
                    self.pacer,
                    channel=self.channel,
                    thread_ts=self.thread_ts,
                    message=message,
                )
            except SLACK_ERRORS as error:
                log.warning(
                    "could not post the outcome of %s (%d/%d): %s",
                    investigation_id,
                    attempt,
                    self.post_attempts,
                    error,
                )
                if attempt < self.post_attempts:
                    await asyncio.sleep(max(_retry_after(error), self.post_backoff_s * 2**attempt))
        return None

    def _outcome_messages(self, outcome: OutcomeView) -> list[Message]:
        messages: list[Message] = []
        stats = RunStats.from_outcome(outcome.usage, outcome.record)
        if outcome.conclusion is not None:
            messages += conclusion_messages(
                outcome.conclusion,
                investigation_id=outcome.investigation_id,
                limits_hit=list(outcome.limits_hit),
                indicators=self.indicators,
                review=outcome.review,
                stats=stats,
            )
        elif outcome.answer:
            messages += answer_messages(
                outcome.answer,
                investigation_id=outcome.investigation_id,
                indicators=self.indicators,
                review=outcome.review,
                stats=stats,
            )
        if outcome.status == "failed":
            messages.append(error_message(outcome.error or "The investigation failed."))
        elif outcome.status == "cancelled":
            messages.append(cancelled_message())
        return messages


def _retry_after(error: BaseException) -> float:
    if isinstance(error, SlackApiError) and error.response.status_code == 429:
        try:
            return float(error.response.headers.get("Retry-After", 1))
        except (TypeError, ValueError):
            return 1.0
    return 0.0
