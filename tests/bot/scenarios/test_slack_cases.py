"""Cases through the real bolt app and the Slack fake: take, assign, resolve, reopen,
refusals, a double click, two replicas at once, reminders once, and a replica that dies
between a decision and its thread message or in the middle of posting it.

Clicks start from the recorded ``block_actions`` delivery
(``tests/fixtures/slack/block_actions_feedback.json``); ``view_submission`` payloads follow
Slack's documented shape — invented values. The case is opened as the investigator opens
it (``store.cases.opening.open_for_run`` on a stored, concluded run in the thread)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from bot.blocks.case import NO_CHANGE, TOO_LATE
from bot.decisions.case_rules import BAD_ASSIGNEE, NOT_HERE, NOT_MEMBER, OWNER_ONLY
from bot.slack.post_once import EVENT_TYPE
from config.cases_settings import CaseSettings
from config.settings import Settings
from store.cases import records, transitions
from store.db.engine import Database
from store.schema import CaseAction, CaseRow, CaseStatus, Feedback, utcnow
from tests.bot.scenarios.test_slack_feedback import submission
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness, load, make_settings
from tests.store.cases.case_support import a_case

SOC, THREAD = "CSOC00001", "1700000100.000100"  # the recorded click's channel and thread
ANALYST, LEAD, OUTSIDER = "UANALYST1", "ULEAD0001", "UOUTSIDE1"
RUN = "run-1"


def click(
    action_id: str, value: str | None = RUN, user: str = ANALYST, **extra: Any
) -> dict[str, Any]:
    payload = load("block_actions_feedback.json")
    payload["user"]["id"] = user
    action = payload["actions"][0]
    action.update(action_id=action_id, block_id=f"case:{RUN}", **extra)
    if value is None:
        action.pop("value", None)
    else:
        action["value"] = value
    if "thread" in extra:
        payload["message"]["thread_ts"] = extra["thread"]
    return payload


def assign(user: str, assignee: str) -> dict[str, Any]:
    payload = click("case_assign", None, user)
    action = payload["actions"][0]
    for key in ("text", "style"):
        action.pop(key, None)
    action.update(type="users_select", selected_user=assignee)
    return payload


def resolution(
    disposition: str, missed: str | None = None, reason: str = "checked"
) -> dict[str, Any]:
    return {
        "disposition": {
            "disposition": {
                "type": "static_select",
                "selected_option": {
                    "text": {"type": "plain_text", "text": "x"},
                    "value": disposition,
                },
            }
        },
        "escalated": {"escalated": {"type": "checkboxes", "selected_options": []}},
        "reason": {"reason": {"type": "plain_text_input", "value": reason}},
        "missed": {"missed": {"type": "plain_text_input", "value": missed}},
    }


def settings_for(tmp_path: Path, fake: FakeSlackAPI, **cases: Any) -> Settings:
    base = make_settings(tmp_path, fake.base_url, admin_users=[LEAD])
    return base.model_copy(update={"cases": CaseSettings(**cases)})


@pytest.fixture
def settings(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    fake.add_members(SOC, [ANALYST, LEAD, "UBOT0001"])
    return settings_for(tmp_path, fake)


@pytest.fixture
async def harness(fake: FakeSlackAPI, settings: Settings) -> AsyncIterator[SlackHarness]:
    async with SlackHarness(fake, settings, RecordingInvestigate(fake)) as h:
        await a_case(h.db, RUN, channel=SOC, thread_ts=THREAD, verdict="true_positive")
        yield h


def thread_posts(fake: FakeSlackAPI) -> list[str]:
    """socbot's case messages in the thread, in order."""
    return [
        m.text
        for m in fake.messages
        if m.thread_ts == THREAD and m.extra.get("metadata", {}).get("event_type") == EVENT_TYPE
    ]


def told(fake: FakeSlackAPI, user: str) -> list[str]:
    return [
        str(c.args["text"]) for c in fake.calls_to("chat.postEphemeral") if c.args["user"] == user
    ]


async def the_case(db: Database) -> CaseRow:
    case = await records.of_run(db, RUN)
    assert case is not None
    return case


async def posted(h: SlackHarness, count: int) -> None:
    await h.settle()
    await h.fake.wait_for(lambda: len(thread_posts(h.fake)) >= count)
    await h.settle()


async def test_take_assign_resolve_reopen(harness: SlackHarness, fake: FakeSlackAPI) -> None:
    h = harness
    assert (await h.action(click("case_take")))[0] == 200
    await posted(h, 1)
    assert (await the_case(h.db)).owner == ANALYST
    await h.action(assign(ANALYST, LEAD))
    await posted(h, 2)
    assert (await the_case(h.db)).owner == LEAD
    await h.action(click("case_resolve", user=LEAD))
    await h.settle()
    view = fake.calls_to("views.open")[-1].args["view"]
    assert view["callback_id"] == "case_resolve_dialog"
    meta = view["private_metadata"]
    status, body = await h.action(
        submission("case_resolve_dialog", meta, resolution("benign"), LEAD)
    )
    assert status == 200 and "missed" in body  # differs from socbot: say what it missed
    assert (await the_case(h.db)).status == CaseStatus.ACKNOWLEDGED
    values = resolution("benign", missed="the scanner's address")
    assert (await h.action(submission("case_resolve_dialog", meta, values, LEAD)))[0] == 200
    await posted(h, 3)
    case = await the_case(h.db)
    assert (case.status, case.disposition, case.missed) == (
        CaseStatus.RESOLVED,
        "benign",
        "the scanner's address",
    )
    async with h.db.session() as session:  # the disposition is the analyst's vote too
        vote = await session.scalar(select(Feedback).where(Feedback.user == LEAD))
    assert vote is not None and (vote.value, vote.verdict) == ("incorrect", "benign")
    await h.action(click("case_reopen", str(case.id), LEAD))
    await posted(h, 4)
    assert (await the_case(h.db)).status == CaseStatus.ACKNOWLEDGED
    texts = thread_posts(fake)
    assert "took this case" in texts[0] and "assigned this case" in texts[1]
    assert "resolved this case: *Benign*" in texts[2] and "reopened" in texts[3]
    history = await records.history(h.db, case.id)
    assert [e.action for e in history] == [
        CaseAction.OPENED,
        CaseAction.TAKEN,
        CaseAction.ASSIGNED,
        CaseAction.RESOLVED,
        CaseAction.REOPENED,
    ]


async def test_refused_clicks_change_nothing(harness: SlackHarness, fake: FakeSlackAPI) -> None:
    h = harness
    await h.action(click("case_take", user=OUTSIDER))  # not in the channel
    await h.action(click("case_take", thread="1700000999.000100"))  # another thread
    await h.action(click("case_take", "run-unknown"))
    await h.action(assign(ANALYST, OUTSIDER))  # to someone outside the channel
    await h.action(assign(ANALYST, "UBOT0001"))  # to socbot
    await h.settle()
    case = await the_case(h.db)
    assert (case.owner, case.revision) == (None, 1)
    assert told(fake, OUTSIDER) == [NOT_MEMBER]
    assert told(fake, ANALYST) == [NOT_HERE, NOT_HERE, BAD_ASSIGNEE, BAD_ASSIGNEE]
    assert thread_posts(fake) == []


async def test_a_double_click_is_one_decision(harness: SlackHarness, fake: FakeSlackAPI) -> None:
    h = harness
    await asyncio.gather(h.action(click("case_take")), h.action(click("case_take")))
    await posted(h, 1)
    assert len(await records.history(h.db, (await the_case(h.db)).id)) == 2
    assert len(thread_posts(fake)) == 1
    assert told(fake, ANALYST) == [NO_CHANGE.format(state=f"owned by <@{ANALYST}>")]


async def test_only_the_owner_or_an_approver_resolves_when_restricted(
    tmp_path: Path, fake: FakeSlackAPI
) -> None:
    fake.add_members(SOC, [ANALYST, LEAD, "UOTHER001"])
    settings = settings_for(tmp_path, fake, resolve_requires_owner=True)
    async with SlackHarness(fake, settings, RecordingInvestigate(fake)) as h:
        await a_case(h.db, RUN, channel=SOC, thread_ts=THREAD)
        await h.action(click("case_take"))
        await h.action(click("case_resolve", user="UOTHER001"))
        await h.settle()
        assert told(fake, "UOTHER001") == [OWNER_ONLY]
        await h.action(click("case_resolve"))  # the owner
        await h.action(click("case_resolve", user=LEAD))  # an approver (slack.admin_users)
        await h.settle()
        assert len(fake.calls_to("views.open")) == 2


async def test_two_replicas_deciding_at_once(
    any_db: Database, tmp_path: Path, fake: FakeSlackAPI
) -> None:
    fake.add_members(SOC, [ANALYST, LEAD])
    settings = settings_for(tmp_path, fake)
    await a_case(any_db, RUN, channel=SOC, thread_ts=THREAD)
    one = SlackHarness(fake, settings, RecordingInvestigate(fake), db=any_db)
    two = SlackHarness(fake, settings, RecordingInvestigate(fake), db=any_db)
    async with one, two:
        await asyncio.gather(
            one.action(click("case_take")), two.action(click("case_take", user=LEAD))
        )
        for h in (one, two, one):
            await h.settle()
        await fake.wait_for(lambda: len(thread_posts(fake)) >= 1)
        for h in (one, two):
            await h.settle()
        case = await the_case(any_db)
        other = LEAD if case.owner == ANALYST else ANALYST
        assert case.owner in (ANALYST, LEAD)
        if case.revision == 2:  # both read revision 1: one take wins, the other is told
            assert told(fake, other) == [TOO_LATE.format(state=f"owned by <@{case.owner}>")]
            assert len(thread_posts(fake)) == 1
        else:  # a loaded machine ran the clicks one after the other: a take from the owner
            assert case.revision == 3 and told(fake, other) == []
            await fake.wait_for(lambda: len(thread_posts(fake)) == 2)
            history = await records.history(any_db, case.id)
            assert [(e.action, e.actor) for e in history][1:] == [
                (CaseAction.TAKEN, other),
                (CaseAction.TAKEN, case.owner),
            ]


async def test_a_reminder_is_posted_once_across_replicas(
    any_db: Database, tmp_path: Path, fake: FakeSlackAPI
) -> None:
    fake.add_members(SOC, [ANALYST])
    settings = settings_for(tmp_path, fake, oncall_group="S0ONCALL1", remind_every_s=3600)
    await a_case(any_db, RUN, channel=SOC, thread_ts=THREAD, severity="high")
    async with any_db.session() as session:
        await session.execute(update(CaseRow).values(created_at=utcnow() - timedelta(hours=2)))
    one = SlackHarness(fake, settings, RecordingInvestigate(fake), db=any_db)
    two = SlackHarness(fake, settings, RecordingInvestigate(fake), db=any_db)
    async with one, two:
        assert one.app.reminders is not None and two.app.reminders is not None
        # both replicas' schedules look at start-up; both look again at once here
        again = await asyncio.gather(one.app.reminders.remind_due(), two.app.reminders.remind_due())
        assert sum(again) <= 1  # (whatever the start-up looks did not mark)
        await posted(one, 1)
        await two.settle()
        history = await records.history(any_db, (await the_case(any_db)).id)
        assert [e.action for e in history] == [CaseAction.OPENED, CaseAction.REMINDED]
        texts = thread_posts(fake)
        assert len(texts) == 1 and "<!subteam^S0ONCALL1>" in texts[0] and "2 h" in texts[0]


async def test_a_decision_whose_replica_died_before_posting_is_told_once(
    tmp_path: Path, fake: FakeSlackAPI, settings: Settings
) -> None:
    db = Database(settings.database_url)
    await db.create()
    try:
        case = await a_case(db, RUN, channel=SOC, thread_ts=THREAD)
        # the replica that decided died right after its commit: only the rows remain
        assert await transitions.take(db, case.id, ANALYST, seen=1, via="slack") is not None
        async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
            await posted(h, 1)
        async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
            await h.settle()
        assert len(thread_posts(fake)) == 1
    finally:
        await db.close()


async def test_a_replica_dying_mid_post_is_not_posted_twice(
    tmp_path: Path, fake: FakeSlackAPI, settings: Settings
) -> None:
    db = Database(settings.database_url)
    await db.create()
    try:
        case = await a_case(db, RUN, channel=SOC, thread_ts=THREAD)
        fake.hold(
            "chat.postMessage",
            when=lambda c: (c.args.get("metadata") or {}).get("event_type") == EVENT_TYPE,
        )
        async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
            await transitions.take(db, case.id, ANALYST, seen=1, via="slack")
            h.app.coordinator.nudge()
            await fake.wait_for(lambda: len(fake.held) == 1)  # posted; the answer never came
            await h.app.coordinator.shutdown(0)  # the replica is gone mid-post
        fake.release_held()
        async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
            await h.settle()
        assert len(thread_posts(fake)) == 1
    finally:
        await db.close()
