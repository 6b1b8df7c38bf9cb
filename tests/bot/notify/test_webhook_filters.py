"""Webhook filters fail closed: a hook that filters on source, verdict or severity gets
only events that carry a matching value. Feedback and playbook proposals carry none
(``Facts()``), so a hook filtered to critical alerts never hears of them."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from bot.notify.notifier import Facts, Notifier, matches
from config.notify_settings import EventName, NotifySettings, WebhookSettings
from store.db.engine import Database
from store.queue.work import WorkQueue
from store.schema import WorkRow

EVERY: list[EventName] = ["concluded", "failed", "feedback", "playbook_proposal"]
NONE = Facts()
CRITICAL_TP = Facts(source="GuardDuty", verdict="true_positive", severity="CRITICAL")


def hook(name: str, **filters: list[str]) -> WebhookSettings:
    return WebhookSettings(
        name=name, url="https://hooks.example/x", secret="s", events=EVERY, **filters
    )


CRITICAL = hook("critical", severities=["critical"])
GUARDDUTY = hook("guardduty", sources=["guardduty"])
TRUE_POSITIVES = hook("tp", verdicts=["true_positive"])
ANY = hook("any")

# (hook, facts, wanted?)
CASES = [
    (CRITICAL, NONE, False),
    (GUARDDUTY, NONE, False),
    (TRUE_POSITIVES, NONE, False),
    (ANY, NONE, True),
    (CRITICAL, CRITICAL_TP, True),  # case does not matter
    (GUARDDUTY, CRITICAL_TP, True),
    (TRUE_POSITIVES, CRITICAL_TP, True),
    (CRITICAL, Facts(source="guardduty", verdict="true_positive"), False),
    (GUARDDUTY, Facts(verdict="true_positive", severity="critical"), False),
    (TRUE_POSITIVES, Facts(source="guardduty", severity="critical"), False),
    (CRITICAL, Facts(severity="high"), False),
]


@pytest.mark.parametrize(("webhook", "facts", "wanted"), CASES)
@pytest.mark.parametrize("event", EVERY)
def test_a_filter_passes_only_a_matching_value(
    webhook: WebhookSettings, facts: Facts, wanted: bool, event: EventName
) -> None:
    assert matches(webhook, event, facts) is wanted


def test_an_event_the_hook_did_not_ask_for_is_never_sent() -> None:
    only_concluded = WebhookSettings(name="c", url="https://hooks.example/c", secret="s")
    assert matches(only_concluded, "concluded", NONE)
    assert not matches(only_concluded, "feedback", NONE)


@pytest.mark.parametrize("event", ["feedback", "playbook_proposal"])
async def test_feedback_and_proposals_skip_a_hook_filtered_to_critical(
    db: Database, event: EventName
) -> None:
    queue = WorkQueue(db)
    notifier = Notifier(NotifySettings(webhooks=[CRITICAL, GUARDDUTY, ANY]), queue)
    [key] = await notifier.publish(event, {"vote": "up"}, NONE)
    async with db.session() as session:
        [row] = (await session.execute(select(WorkRow))).scalars().all()
    payload = json.loads(row.request["text"])
    assert (row.thread_ts, payload["webhook"], payload["event"]) == (key, "any", event)
