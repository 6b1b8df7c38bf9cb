"""Approval of risky calls in Slack, through the real bolt app and the real database.

Clicks start from ``block_actions_feedback.json`` (a recorded ``block_actions``
delivery) with the approval buttons' ids. The request is made by ``SlackApprover`` as
a run's tool would make it; the run's side (engine, trace) is covered in
``tests/agent/test_engine_approval.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bot.decisions.approvals import CLOSED, NOT_ALLOWED, OWN_REQUEST, SlackApprovals
from bot.slack.client import build_client
from config.approval_settings import ApprovalSettings
from config.settings import Settings
from core.approvals import ApprovalRequest, Decision
from store.approvals import ApprovalStore
from store.db.engine import Database
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import SOC, RecordingInvestigate, SlackHarness, load, make_settings

THREAD = "1700000100.000100"
LEAD = "ULEAD0001"
ANALYST = "UANALYST1"
REQUEST = ApprovalRequest(
    tool="jira__create_issue",
    args={"summary": "Tor login for <!channel> alice", "project": "SEC"},
    why="it is in the approval list of MCP server 'jira'",
    investigation_id="inv-1",
    conversation_id=f"slack:{SOC}:{THREAD}",
    requested_by=ANALYST,
)


@pytest.fixture
def settings(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    return make_settings(tmp_path, fake.base_url, admin_users=[LEAD, ANALYST])


def approvals(settings: Settings, db: Database, **kw: Any) -> SlackApprovals:
    client = build_client(settings.slack, backoff_s=0.01)
    policy = ApprovalSettings(**kw)
    return SlackApprovals(
        client, ApprovalStore(db), policy, settings.slack.admin_users, poll_s=0.05
    )


def click(action_id: str, approval_id: int, ts: str, user: str) -> dict[str, Any]:
    payload = load("block_actions_feedback.json")
    payload["user"]["id"] = user
    payload["message"] = {"type": "message", "ts": ts, "thread_ts": THREAD, "text": "approval"}
    payload["actions"][0].update(action_id=action_id, value=str(approval_id), block_id="approval")
    return payload


async def asked(fake: FakeSlackAPI, count: int = 1) -> tuple[int, str]:
    """The approval message's (request id, ts), once ``count`` have been posted."""
    await fake.wait_for(lambda: len(fake.calls_to("chat.postMessage")) >= count)
    call = fake.calls_to("chat.postMessage")[count - 1]
    buttons = call.args["blocks"][-1]["elements"]
    return int(buttons[0]["value"]), fake.messages[-1].ts


async def recorded(db: Database, approval_id: int) -> None:
    """Until the posted message is recorded with its request."""
    store = ApprovalStore(db)
    for _ in range(200):
        approval = await store.get(approval_id)
        if approval is not None and approval.message_ts:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the approval message was never recorded")


async def test_approved_by_an_approver(
    fake: FakeSlackAPI, settings: Settings, db: Database
) -> None:
    slack = approvals(settings, db)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, approvals=slack) as h:
        waiting = asyncio.create_task(slack.for_thread(SOC, THREAD).decide(REQUEST, 60))
        approval_id, ts = await asked(fake)
        posted = fake.calls_to("chat.postMessage")[0].args
        assert posted["thread_ts"] == THREAD and posted["channel"] == SOC
        shown = json.dumps(posted["blocks"])
        assert "jira__create_issue" in shown and "approval list of MCP server" in shown
        assert "<!channel>" not in shown  # the model's arguments are inert
        await h.action(click("approval_approve", approval_id, ts, LEAD))
        decision = await asyncio.wait_for(waiting, 10)
    assert decision.approved and decision.by == LEAD
    assert decision.note.startswith(f"approved by {LEAD} at ")
    update = fake.calls_to("chat.update")[-1].args
    assert update["ts"] == ts and "Approved" in json.dumps(update["blocks"])
    assert "actions" not in json.dumps(update["blocks"])  # the buttons are gone


async def test_denied(fake: FakeSlackAPI, settings: Settings, db: Database) -> None:
    slack = approvals(settings, db)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, approvals=slack) as h:
        waiting = asyncio.create_task(slack.for_thread(SOC, THREAD).decide(REQUEST, 60))
        approval_id, ts = await asked(fake)
        await h.action(click("approval_deny", approval_id, ts, LEAD))
        decision = await asyncio.wait_for(waiting, 10)
        await h.action(click("approval_approve", approval_id, ts, LEAD))  # too late
        await h.settle()
    assert not decision.approved and decision.note.startswith(f"denied by {LEAD}")
    assert fake.calls_to("chat.postEphemeral")[-1].args["text"] == CLOSED
    stored = await ApprovalStore(db).get(approval_id)
    assert stored is not None and (stored.status, stored.decided_by) == ("denied", LEAD)


async def test_only_an_approver_other_than_the_requester_decides(
    fake: FakeSlackAPI, settings: Settings, db: Database
) -> None:
    slack = approvals(settings, db, approvers=[LEAD, ANALYST], separate_duty=True)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, approvals=slack) as h:
        waiting = asyncio.create_task(slack.for_thread(SOC, THREAD).decide(REQUEST, 60))
        approval_id, ts = await asked(fake)
        await h.action(click("approval_approve", approval_id, ts, "UOUTSIDER"))
        await h.action(click("approval_approve", approval_id, ts, ANALYST))  # their own run
        await h.settle()
        said = [c.args["text"] for c in fake.calls_to("chat.postEphemeral")]
        assert said == [NOT_ALLOWED, OWN_REQUEST]
        assert not waiting.done()
        await h.action(click("approval_approve", approval_id, ts, LEAD))
        decision = await asyncio.wait_for(waiting, 10)
    assert decision.approved and decision.by == LEAD


async def test_nobody_decides_in_time(fake: FakeSlackAPI, settings: Settings, db: Database) -> None:
    slack = approvals(settings, db)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, approvals=slack):
        decision = await slack.for_thread(SOC, THREAD).decide(REQUEST, 0.5)
    assert not decision.approved and decision.note == "no decision within 0.5 s"
    assert "Expired" in json.dumps(fake.calls_to("chat.update")[-1].args["blocks"])


async def test_a_request_outlives_a_restart(
    fake: FakeSlackAPI, settings: Settings, db: Database
) -> None:
    """The process waiting for a decision ends; the approver clicks before the run starts
    again; the run, started again, finds the decision — and no second message."""
    first = approvals(settings, db)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, approvals=first):
        waiting = asyncio.create_task(first.for_thread(SOC, THREAD).decide(REQUEST, 60))
        approval_id, ts = await asked(fake)
        await recorded(db, approval_id)
        waiting.cancel()  # the replica stops: its run is handed on
        with pytest.raises(asyncio.CancelledError):
            await waiting
    second = approvals(settings, db)  # a new process, the same database
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, approvals=second) as h:
        await h.action(click("approval_approve", approval_id, ts, LEAD))
        await h.settle()
        again: Decision = await second.for_thread(SOC, THREAD).decide(REQUEST, 60)
    assert again.approved and again.by == LEAD
    assert len(fake.calls_to("chat.postMessage")) == 1


async def test_a_run_started_again_waits_on_the_same_request(
    fake: FakeSlackAPI, settings: Settings, db: Database
) -> None:
    first = approvals(settings, db)
    waiting = asyncio.create_task(first.for_thread(SOC, THREAD).decide(REQUEST, 60))
    approval_id, ts = await asked(fake)
    await recorded(db, approval_id)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    second = approvals(settings, db)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, approvals=second) as h:
        resumed = asyncio.create_task(second.for_thread(SOC, THREAD).decide(REQUEST, 60))
        await asyncio.sleep(0.2)
        assert not resumed.done()
        await h.action(click("approval_deny", approval_id, ts, LEAD))
        decision = await asyncio.wait_for(resumed, 10)
    assert not decision.approved and decision.by == LEAD
    assert len(fake.calls_to("chat.postMessage")) == 1
