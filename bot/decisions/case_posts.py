"""Telling a case's thread: the ``case_post`` rows' runner, and the reminders' schedule.

A decision (``store.cases.transitions``) queues its ``case_post`` row in the same
transaction; whichever replica claims it posts the message of that revision once
(``bot.slack.post_once``: the intent recorded with the row before the post, a takeover
finds the post by its token in the thread), then queues the webhook event
(``case.assigned``, ``case.resolved``) — its intent recorded first, so a crash may lose
that event but never sends it twice — and says the case changed (``changed``: App Homes).
The message is built from the decision's event, not from the case as it is now: a later
decision does not rewrite an earlier one.

Every replica looks every ``cases.remind_every_s`` for open, unowned cases past their
severity's ``cases.unowned_after``; ``remind`` marks each once across replicas (a
conditional UPDATE) and queues its row, which posts the reminder (mentioning
``cases.oncall_group``) with the case's buttons.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.case import decision_message, reminder_message
from bot.blocks.case_audit import audited_message, auto_resolved_message
from bot.blocks.kit import Message
from bot.notify.notifier import Facts, Notifier
from bot.slack.pacer import Pacer
from bot.slack.post_once import RunPosts, ThreadSearch
from bot.work.contracts import ThreadRef, Unavailable, current_run
from bot.work.learning import Silent
from bot.work.periodic import every
from bot.work.worker import Coordinator
from config.cases_settings import CaseSettings
from config.notify_settings import EventName
from store.cases import records, transitions
from store.db.engine import Database
from store.queue.work import Work
from store.schema import CaseAction, CaseEvent, CaseRow, WorkKind

log = logging.getLogger(__name__)

EVENTS: dict[str, EventName] = {
    CaseAction.TAKEN: "case.assigned",
    CaseAction.ASSIGNED: "case.assigned",
    CaseAction.RESOLVED: "case.resolved",
    CaseAction.AUTO_RESOLVED: "case.resolved",
}
ATTEMPTS, BACKOFF_S = 3, 1.0


class CasePosts:
    """The ``Runner`` of ``case_post`` rows, and the reminders' schedule."""

    reporter = Silent("case message")

    def __init__(
        self,
        db: Database,
        client: AsyncWebClient,
        pacer: Pacer,
        settings: CaseSettings,
        coordinator: Coordinator,
        notifier: Notifier | None = None,
        changed: Callable[[CaseRow], Awaitable[None]] | None = None,
    ) -> None:
        self.db = db
        self.client = client
        self.pacer = pacer
        self.settings = settings
        self.coordinator = coordinator
        self.notifier = notifier
        self.changed = changed  # the case changed (App Home: ``bot.events.home``)
        self.search = ThreadSearch(client)
        self._stopped = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        coordinator.register({WorkKind.CASE_POST: self}, reporter=self.reporter)

    # the rows ----------------------------------------------------------------

    async def run(self, thread: ThreadRef, work: Work) -> None:
        case_id, revision = int(work.request["case_id"]), int(work.request["revision"])
        case = await records.get(self.db, case_id)
        event = await records.event(self.db, case_id, revision)
        if case is None or event is None:
            log.warning("case %s revision %s is gone: nothing to say", case_id, revision)
            return
        context = current_run.get()
        posts = RunPosts(
            self.client,
            self.pacer,
            self.search,
            thread,
            work_id=work.id,
            posted=work.posted,
            record=context.record if context is not None else None,
        )
        message = None if posts.has_outcome else [self.message(case, event)]
        unposted = await posts.outcome(
            message, what=f"case {case_id}", attempts=ATTEMPTS, backoff_s=BACKOFF_S
        )
        if unposted:
            raise Unavailable("Slack did not take the case message; trying again later.")
        name = EVENTS.get(event.action)
        if self.notifier is not None and name is not None and not posts.posted.get("notified"):
            await posts.record("notified", True)  # the intent first: never sent twice
            await self.notifier.publish(name, event_data(case, event), _facts(case))
        if self.changed is not None:
            await self.changed(case)

    def message(self, case: CaseRow, event: CaseEvent) -> Message:
        if event.action == CaseAction.REMINDED:
            return reminder_message(
                case.investigation_id,
                severity=case.severity,
                waited=_at(event.created_at) - _at(case.created_at),
                oncall=self.settings.oncall_group,
            )
        detail = event.detail or {}
        if event.action == CaseAction.AUTO_RESOLVED:
            return auto_resolved_message(
                case.id,
                rule=str(detail.get("rule") or ""),
                disposition=event.disposition,
                audit=detail.get("audit") is True,
            )
        if event.action == CaseAction.AUDITED:
            return audited_message(
                case.id,
                actor=event.actor,
                answer=str(detail.get("audit_disposition") or ""),
                socbot_verdict=case.socbot_verdict,
            )
        return decision_message(
            event.action,
            case_id=case.id,
            actor=event.actor,
            owner=event.owner,
            disposition=event.disposition,
            socbot_verdict=case.socbot_verdict,
            escalated=bool(detail.get("escalated")),
            reason=detail.get("reason"),
            missed=detail.get("missed"),
            actions_for=case.investigation_id if case.auto_resolved else None,
        )

    async def dropped(self, work: Work) -> None:
        log.warning("case message %s given up: %s", work.id, work.error)

    # reminders ---------------------------------------------------------------

    def start(self) -> None:
        if self._loop is None and self.settings.enabled:
            self._loop = asyncio.create_task(self._schedule(), name="case reminders")

    async def close(self) -> None:
        self._stopped.set()
        if self._loop is not None:
            await asyncio.gather(self._loop, return_exceptions=True)

    async def remind_due(self) -> int:
        """Mark every case due for a reminder (once across replicas); how many this did."""
        due = await transitions.due_reminders(self.db, self.settings.reminder_delays())
        marked = 0
        for case_id, revision in due:
            if await transitions.remind(self.db, case_id, seen=revision) is not None:
                marked += 1
        if marked:
            self.coordinator.nudge()
        return marked

    async def _schedule(self) -> None:
        period = self.settings.remind_every_s
        await every(period, self._stopped, self.remind_due, "look for cases to remind")


def event_data(case: CaseRow, event: CaseEvent) -> dict[str, Any]:
    """The ``data`` of a ``case.*`` webhook event (``docs/schemas/socbot-webhook-v1.json``)."""
    detail = event.detail or {}
    return {
        "case_id": case.id,
        "revision": event.revision,
        "action": event.action,
        "actor": event.actor,
        "owner": event.owner,
        "disposition": event.disposition,
        "escalated": bool(detail.get("escalated")),
        "reason": detail.get("reason"),
        "missed": detail.get("missed"),
        "investigation_id": case.investigation_id,
        "alert_id": case.alert_id,
        "socbot_verdict": case.socbot_verdict,
        "severity": case.severity,
        "source": case.source,
        "slack": {"channel": case.channel, "thread_ts": case.thread_ts} if case.channel else None,
    }


def _facts(case: CaseRow) -> Facts:
    return Facts(source=case.source, verdict=case.socbot_verdict, severity=case.severity)


def _at(value: datetime) -> datetime:
    """A stored time as aware UTC (SQLite gives naive ones back)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value
