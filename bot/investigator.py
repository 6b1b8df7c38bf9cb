"""One investigation in a Slack thread: engine → live progress → outcome messages.

The live progress is streamed into the thread where Slack allows it
(``bot.slack.streaming``, decided by ``bot.slack.stream_gate``), else the status message
(``bot.slack.progress``); ``_progress`` keeps one stream per run.

Run by the worker (``bot.work.worker``), it keeps what it posts with the work row
(``current_run``, ``bot.slack.post_once``): the status message, so that a replica taking
the work over edits that message instead of posting a second one, and the
outcome, written down before it is posted, so that a conclusion is posted once —
also when the replica died between posting it and recording it. Once the outcome
is recorded, a later attempt only delivers what is missing (the engine does not
run again). Outcome messages Slack refuses are posted again; when they still do
not land the row goes back to the queue (``Unavailable``), and fails, told, after
its last attempt. When the model was unavailable it posts no outcome and raises
``Unavailable`` too. For alerts the conclusion (verdict, summary, investigation
id) is written back to the alert row first. The run's tools see only the past alerts of
its channel, or in a DM of the asker's channels (``bot.events.scope``).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from slack_sdk.web.async_client import AsyncWebClient

from agent.engine import Outcome, Request
from agent.run import Mode
from alerts.parse import Alert
from bot.blocks.case import case_actions
from bot.blocks.case_audit import auto_resolved_state
from bot.blocks.kit import Block, Message
from bot.blocks.status import StatusView
from bot.decisions.approvals import SlackApprovals
from bot.events.scope import Scoping
from bot.notify.notifier import Notifier, investigation_data
from bot.observe.runlog import logged_run
from bot.slack.pacer import Pacer
from bot.slack.post_once import RunPosts, ThreadSearch, new_token
from bot.slack.posting import POST_ATTEMPTS, POST_BACKOFF_S, outcome_messages
from bot.slack.progress import SlackProgress
from bot.slack.stream_gate import StreamGate, StreamingMode
from bot.slack.streaming import SlackStream, stop_earlier
from bot.work.contracts import SlackRefused, ThreadRef, Unavailable, current_run
from bot.work.run_link import INTERRUPTED, RunLink, earlier_run
from core.events import Sink
from core.scope import NOTHING
from store.cases.auto import AutoResolution
from store.cases.opening import open_for_run
from store.cases.transitions import Decided
from store.investigations.runs import InvestigationStore
from store.slack import SlackStore
from store.triage.alerts import AlertStore
from store.triage.policy import Asked, PolicyStore

MODEL_UNAVAILABLE = "Gemini is unavailable right now."
MODES: dict[str, Mode] = {"direct": "direct", "planned": "planned"}
SLACK_REFUSED = "Slack did not accept my messages."
STREAM_INTERRUPTED = "↻ socbot restarted during run `{old}`; a new run continues below."


class EngineLike(Protocol):
    """``agent.engine.Engine`` as the Slack side uses it."""

    async def run(self, request: Request, sink: Sink) -> Outcome: ...


class EngineInvestigator:
    """``Investigate`` for ``bot.events.listeners``: see the module docstring."""

    def __init__(
        self,
        engine: EngineLike,
        client: AsyncWebClient,
        alerts: AlertStore,
        *,
        pacer: Pacer | None = None,
        update_interval: float = 1.0,
        post_attempts: int = POST_ATTEMPTS,
        post_backoff_s: float = POST_BACKOFF_S,
        policy: PolicyStore | None = None,
        pages_url: str | None = None,
        approvals: SlackApprovals | None = None,
        notifier: Notifier | None = None,
        cases: bool = False,
        model: str | None = None,
        streaming: StreamingMode = "auto",
        scoping: Scoping | None = None,
        auto_resolve: AutoResolution | None = None,
    ) -> None:
        self.engine = engine
        self.scoping = scoping  # the past alerts a run may see (None: none, fail closed)
        self.auto_resolve = auto_resolve  # a rule's ``auto_resolve`` closes the case
        self.cases = cases  # conclusions open cases and carry their buttons (``[cases]``)
        self.model = model  # the model a run uses unless its policy rule names another
        self.pages_url = pages_url  # ``web.base_url``: messages link to the pages
        self.approvals = approvals
        self.notifier = notifier
        self.client = client
        self.alerts = alerts
        self.pacer = pacer or Pacer()
        self.update_interval = update_interval
        self.post_attempts = post_attempts
        self.post_backoff_s = post_backoff_s
        self.search = ThreadSearch(client)
        self.gate = StreamGate(self.search, SlackStore(alerts.db), streaming)  # ``slack.streaming``
        self.investigations = InvestigationStore(alerts.db)
        self.policy = policy  # the engine mode an alert's policy rule asks for

    async def __call__(
        self, thread: ThreadRef, text: str, alert: Alert | None, *, user: str | None = None
    ) -> None:
        context = current_run.get()
        posts = RunPosts(
            self.client,
            self.pacer,
            self.search,
            thread,
            work_id=context.work.id if context is not None else None,
            posted=context.work.posted if context is not None else {},
            record=context.record if context is not None else None,
        )
        if posts.has_outcome:  # the result was in before a restart: deliver what is missing
            await self._deliver(posts, None, f"work {posts.work_id}")
            return
        if posts.posted.get("outcome_ts"):
            return  # (a row of an older socbot) the outcome was posted already
        indicators = [i.value for i in alert.indicators] if alert else []
        progress = await self._progress(posts, thread, indicators, user)
        earlier = earlier_run(posts.posted)
        if earlier is not None:  # taken over: the status message says what became of it
            progress.view.note = INTERRUPTED.format(old=earlier[:12])
        link = RunLink(
            progress,
            self.investigations,
            earlier=earlier,
            record=context.record if context is not None else None,
        )
        asked = await self.policy.asked_for(alert.id) if alert and self.policy else Asked()
        approver = (
            self.approvals.for_thread(thread.channel, thread.thread_ts) if self.approvals else None
        )
        request = Request(
            conversation_id=thread.conversation_id,
            text=text,
            alert=alert,
            user=user,
            mode=MODES.get(asked.mode or ""),
            model=asked.model,
            approver=approver,
            scope=await self.scoping.of(thread.channel, user) if self.scoping else NOTHING,
        )
        try:
            outcome = await logged_run(self.engine, request, link)
        except asyncio.CancelledError:
            if context is None or context.stopping():
                await progress.cancelled()  # strike the plan through; the reporter says so
            raise  # else handed on: the next replica edits the same status message
        if context is not None:
            context.finishing()  # the result is in: a stop no longer changes it
        if outcome.unavailable and context is not None:
            progress.phase = "⏳ Gemini is unavailable; waiting to try again."
            await progress.close()
            raise Unavailable(MODEL_UNAVAILABLE)
        closed = await self._record(alert, outcome, asked.model) if alert is not None else None
        event = investigation_data(outcome, alert, thread.channel, thread.thread_ts)
        if self.notifier is not None and event is not None:
            await self.notifier.publish(*event)  # queued with the outcome: sent once each
        await progress.settle(outcome)
        messages = outcome_messages(
            outcome,
            progress.view.indicators,
            self.pages_url,
            alert=alert is not None,
            case=self._case_blocks(outcome.investigation_id, closed),
            element=thread.channel.startswith("D"),  # the pane and DMs: Slack's own 👍 / 👎
        )
        await self._deliver(posts, messages, outcome.investigation_id)

    async def _progress(
        self, posts: RunPosts, thread: ThreadRef, indicators: list[str], user: str | None
    ) -> SlackProgress | SlackStream:
        """The run's live progress: streamed where Slack allows it, else the checklist.

        One stream per run: its intent (``stream_post``) is recorded before it starts and
        its ts once it did; a run whose earlier attempt used the checklist keeps it, and
        one whose earlier stream was never recorded (a crash mid-start) uses the checklist
        rather than open a second stream it cannot find. An earlier attempt's stream is
        stopped with a note (``stop_earlier``) and this attempt streams anew.
        """

        async def checklist() -> SlackProgress:
            status_ts, status_metadata = await posts.status()
            return SlackProgress(
                self.client,
                channel=thread.channel,
                thread_ts=thread.thread_ts,
                pacer=self.pacer,
                indicators=indicators,
                update_interval=self.update_interval,
                status_ts=status_ts,
                on_status_posted=posts.status_posted,
                status_metadata=status_metadata,
                pages_url=self.pages_url,
            )

        posted = posts.posted
        earlier = posted.get("stream_ts")
        unfound = isinstance(posted.get("stream_post"), str) and not isinstance(earlier, str)
        if "status_post" in posted or unfound or not await self.gate.allows(thread.channel):
            return await checklist()
        recipient = await self.gate.recipient(user)
        if recipient is None:
            return await checklist()
        if isinstance(earlier, str):
            note = STREAM_INTERRUPTED.format(old=str(earlier_run(posted) or "")[:12])
            await stop_earlier(
                self.client, self.pacer, channel=thread.channel, ts=earlier, note=note
            )
            await posts.record("stream_ts", None)
        await posts.record("stream_post", new_token())
        return SlackStream(
            self.client,
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            pacer=self.pacer,
            view=StatusView(tuple(indicators), self.pages_url),
            gate=self.gate,
            recipient=recipient,
            fallback=checklist,
            on_started=lambda ts: posts.record("stream_ts", ts),
            update_interval=self.update_interval,
        )

    async def _deliver(self, posts: RunPosts, messages: list[Message] | None, what: str) -> None:
        unposted = await posts.outcome(
            messages, what=what, attempts=self.post_attempts, backoff_s=self.post_backoff_s
        )
        if unposted and posts.tracked:  # back to the queue: the next attempt posts the rest
            raise Unavailable(SLACK_REFUSED)
        if unposted:
            raise SlackRefused(SLACK_REFUSED)

    def _case_blocks(self, investigation_id: str, closed: Decided | None) -> list[Block]:
        """What a conclusion ends with: its case's buttons, or — socbot closed the case
        itself — the case's state and only the actions it still takes."""
        if not self.cases:
            return []
        if closed is None:
            return [case_actions(investigation_id)]
        rule = str(closed.event.detail.get("rule") or "")
        return auto_resolved_state(closed.case.id, rule=rule, audit=closed.case.audit)

    async def _record(self, alert: Alert, outcome: Outcome, model: str | None) -> Decided | None:
        """The alert's conclusion written back and its case opened; the auto-resolution, if
        a rule's ``auto_resolve`` closed the case."""
        await self.alerts.set_investigation(alert.id, outcome.investigation_id)
        if outcome.conclusion is not None:
            await self.alerts.set_verdict(
                alert.id,
                verdict=outcome.conclusion.verdict,
                summary=outcome.conclusion.summary,
                investigation_id=outcome.investigation_id,
            )
            if self.cases:  # before the conclusion is posted: its buttons find the case
                case = await open_for_run(
                    self.alerts.db,
                    outcome.investigation_id,
                    model=model or self.model,
                    fmt=alert.format,
                )
                if case is not None and self.auto_resolve is not None:
                    return await self.auto_resolve(case)  # told after the conclusion
        return None
