"""One investigation in a Slack thread: engine → live status message → outcome messages.

Run by the worker (``bot.coordinator``), it keeps what it posts with the work row
(``current_run``): the status message's ts, so that a replica taking the work over
edits that message instead of posting a second one, and the outcome's, so that a
conclusion is posted once. Outcome messages Slack refuses are posted again
(``SlackProgress``), and the run fails (``SlackRefused``) only when they never land.
When the model was unavailable it posts no outcome and raises ``Unavailable``: the
row goes back to the queue. For alerts the conclusion
(verdict, summary, investigation id) is written back to the alert row first.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from slack_sdk.web.async_client import AsyncWebClient

from agent.alerts import Alert
from agent.engine import Outcome, Request
from agent.events import Sink
from bot.pacer import Pacer
from bot.progress import SlackProgress
from bot.runlog import logged_run
from bot.worker_types import RunContext, SlackRefused, ThreadRef, Unavailable, current_run
from store.alerts import AlertStore

MODEL_UNAVAILABLE = "Gemini is unavailable right now."
SLACK_REFUSED = "Slack did not accept my messages."


class EngineLike(Protocol):
    """``agent.engine.Engine`` as the Slack side uses it."""

    async def run(self, request: Request, sink: Sink) -> Outcome: ...


class EngineInvestigator:
    """``Investigate`` for ``bot.listeners``: see the module docstring."""

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
        context = current_run.get()
        posted = context.work.posted if context is not None else {}
        if posted.get("outcome_ts"):
            return  # a replica that died had posted the outcome already
        indicators = [i.value for i in alert.indicators] if alert else []
        progress = SlackProgress(
            self.client,
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            pacer=self.pacer,
            indicators=indicators,
            update_interval=self.update_interval,
            status_ts=posted.get("status_ts"),
            on_status_posted=_remember(context, "status_ts"),
        )
        request = Request(conversation_id=thread.conversation_id, text=text, alert=alert, user=user)
        try:
            outcome = await logged_run(self.engine, request, progress)
        except asyncio.CancelledError:
            await progress.cancelled()  # strike the plan through; the reporter says so
            raise
        if context is not None:
            context.finishing()  # the result is in: a stop no longer changes it
        if outcome.unavailable and context is not None:
            progress.phase = "⏳ Gemini is unavailable; waiting to try again."
            await progress.close()
            raise Unavailable(MODEL_UNAVAILABLE)
        if alert is not None:
            await self._record(alert, outcome)
        sent = await progress.finish(outcome)
        if context is not None:
            await context.record("outcome_ts", sent)
        if progress.unposted:  # retried already: the run is told failed (if Slack lets us)
            raise SlackRefused(SLACK_REFUSED)

    async def _record(self, alert: Alert, outcome: Outcome) -> None:
        await self.alerts.set_investigation(alert.id, outcome.investigation_id)
        if outcome.conclusion is not None:
            await self.alerts.set_verdict(
                alert.id,
                verdict=outcome.conclusion.verdict,
                summary=outcome.conclusion.summary,
                investigation_id=outcome.investigation_id,
            )


def _remember(context: RunContext | None, key: str) -> _Record | None:
    if context is None:
        return None

    async def record(value: str) -> None:
        await context.record(key, value)

    return record


class _Record(Protocol):
    async def __call__(self, value: str) -> None: ...
