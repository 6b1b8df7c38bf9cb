"""Events sent onward: conclusions, failures, feedback and playbook proposals as webhooks.

``Notifier.publish`` builds one delivery per matching ``[[notify.webhooks]]`` entry
(its events and its source / verdict / severity filters) and queues it as a ``notify``
row of the durable work queue: the JSON body (``docs/schemas/socbot-webhook-v1.json``)
is fixed at that moment, with its idempotency key (``id``), so every attempt sends the
same bytes. ``bot.notify.delivery`` sends them, signed. Publishing never raises into
the caller: a delivery that cannot be queued is logged.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from agent.engine import Outcome
from alerts.parse import Alert
from config.notify_settings import EventName, NotifySettings, WebhookSettings
from store.queue.work import Job, WorkQueue
from store.schema import InvestigationStatus, WorkKind

log = logging.getLogger(__name__)

SCHEMA = "socbot.webhook.v1"
NOTIFY_KIND = WorkKind.NOTIFY  # the work rows of deliveries (store.notify_status reads them)
NOTIFY_CHANNEL = "notify"
NOTIFY_PRIORITY = 15  # after alerts, before people's questions: a delivery is quick


@dataclass(frozen=True)
class Facts:
    """What the filters look at (None: the event has none, and a filter on it fails)."""

    source: str | None = None
    verdict: str | None = None
    severity: str | None = None


def matches(hook: WebhookSettings, event: EventName, facts: Facts) -> bool:
    """Whether ``hook`` wants this event (every filter it sets must hold)."""
    return (
        event in hook.events
        and _allowed(hook.sources, facts.source)
        and _allowed(hook.verdicts, facts.verdict)
        and _allowed(hook.severities, facts.severity)
    )


def _allowed(wanted: list[str], value: str | None) -> bool:
    return not wanted or (value is not None and value.lower() in {w.lower() for w in wanted})


def body(hook: str, event: EventName, data: dict[str, Any], key: str) -> str:
    """The JSON body of one delivery (compact; the bytes that are signed)."""
    envelope = {
        "schema": SCHEMA,
        "id": key,
        "event": event,
        "occurred_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "webhook": hook,
        "data": data,
    }
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), default=str)


class Notifier:
    """Queues deliveries of events to the configured webhooks."""

    def __init__(self, settings: NotifySettings, queue: WorkQueue) -> None:
        self.settings = settings
        self.queue = queue
        self.nudge: Callable[[], None] | None = None  # wakes the worker (``bot.work.worker``)

    async def publish(self, event: EventName, data: dict[str, Any], facts: Facts) -> list[str]:
        """Queue ``event`` for every webhook that wants it; the idempotency keys."""
        keys: list[str] = []
        for hook in self.settings.webhooks:
            if not matches(hook, event, facts):
                continue
            key = uuid.uuid4().hex
            payload = {
                "webhook": hook.name,
                "event": event,
                "body": body(hook.name, event, data, key),
            }
            job = Job(
                kind=NOTIFY_KIND,
                channel=NOTIFY_CHANNEL,
                thread_ts=key,  # a thread of its own: deliveries do not wait for each other
                text=json.dumps(payload),
                priority=NOTIFY_PRIORITY,
            )
            try:
                await self.queue.submit(job)
            except SQLAlchemyError:  # fail open: the event's own work is done either way
                log.exception("could not queue the %s delivery to %s", event, hook.name)
                continue
            keys.append(key)
        if keys and self.nudge is not None:
            self.nudge()
        return keys


def investigation_data(
    outcome: Outcome, alert: Alert | None, channel: str | None, thread_ts: str | None
) -> tuple[EventName, dict[str, Any], Facts] | None:
    """The ``concluded`` or ``failed`` event of a finished run (None for the others)."""
    conclusion = outcome.conclusion
    if conclusion is None and outcome.status != InvestigationStatus.FAILED:
        return None
    data: dict[str, Any] = {
        "investigation_id": outcome.investigation_id,
        "conversation_id": outcome.record.get("conversation_id"),
        "status": outcome.status,
        "alert": None
        if alert is None
        else {
            "id": alert.id,
            "source": alert.source,
            "title": alert.title,
            "severity": alert.severity,
        },
        "slack": {"channel": channel, "thread_ts": thread_ts} if channel else None,
        "error": outcome.error,
    }
    if conclusion is not None:
        data["conclusion"] = conclusion.model_dump(mode="json")
    severity = conclusion.severity if conclusion is not None else None
    facts = Facts(
        source=alert.source if alert else None,
        verdict=conclusion.verdict if conclusion is not None else None,
        severity=severity or (alert.severity if alert else None),
    )
    return ("concluded" if conclusion is not None else "failed"), data, facts
