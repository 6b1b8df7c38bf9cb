"""Who may approve a risky tool call (``bot.decisions.approvals.SlackApprovals.on_decision``), on
the handler alone: the real ``AsyncWebClient`` against the Slack fake, the real
``ApprovalStore`` on SQLite, no bolt app. Each rule with its exact outcome — the
decision stored, the message updated, the waiting run woken, who was told what — for
an approver (obeyed) and for everyone else (refused, the request still pending), so
that the mutation group ``slack_auth`` (``scripts/mutation.py``) runs in seconds per
mutant. The whole path (the run waiting, restarts) is ``test_slack_approvals.py``'s.
Clicks start from the recorded ``block_actions`` delivery; the request is invented."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from bot.decisions._approval_message import decided_blocks
from bot.decisions.approvals import CLOSED, NOT_ALLOWED, OWN_REQUEST, SlackApprovals
from config.approval_settings import ApprovalSettings
from core.approvals import ApprovalRequest
from store.approvals import Approval, ApprovalStore
from store.db.engine import Database
from tests.bot.decisions.click_support import Acks, click, told, web_client
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import BOT_USER_ID, FakeSlackAPI

SOC, THREAD = "CSOC00001", "1700000100.000100"
TS = "1700000400.000400"  # the request's message in the thread
LEAD, ANALYST, BOSS, OTHER = "ULEAD0001", "UANALYST1", "UBOSS0001", "UOTHER001"
NO_SUCH = "No such approval request here."
REQUEST = ApprovalRequest(
    tool="jira__create_issue",
    args={"summary": "Tor login for alice", "project": "SEC"},
    why="it is in the approval list of MCP server 'jira'",
    investigation_id="inv-1",
    conversation_id=f"slack:{SOC}:{THREAD}",
    requested_by=ANALYST,
)


async def asked(
    fake: FakeSlackAPI, db: Database, within_s: float = 60, request: ApprovalRequest = REQUEST
) -> Approval:
    """The request, posted in the thread (as ``SlackApprover`` records it)."""
    store = ApprovalStore(db)
    approval, _ = await store.open(request, within_s)
    fake.add_message(SOC, TS, "Approval needed", user=BOT_USER_ID, thread_ts=THREAD)
    await store.set_message(approval.id, SOC, TS)
    return approval


def approvals(db: Database, fake: FakeSlackAPI, admins: list[str], **policy: Any) -> SlackApprovals:
    settings = ApprovalSettings(**policy)
    return SlackApprovals(web_client(fake), ApprovalStore(db), settings, admins, poll_s=30)


async def decide(
    slack: SlackApprovals, fake: FakeSlackAPI, action_id: str, value: Any, **where: Any
) -> Acks:
    acks = Acks()
    body = click(action_id, None if value is None else str(value), **{"channel": SOC, **where})
    await slack.on_decision(acks, body, body["actions"][0], web_client(fake))
    return acks


async def pending(db: Database, approval_id: int) -> None:
    stored = await ApprovalStore(db).get(approval_id)
    assert stored is not None and (stored.status, stored.decided_by) == ("pending", None)


@pytest.mark.parametrize(
    ("action_id", "status"), [("approval_approve", "approved"), ("approval_deny", "denied")]
)
async def test_an_approver_decides_and_the_waiting_run_wakes(
    fake: FakeSlackAPI,
    db: Database,
    caplog: pytest.LogCaptureFixture,
    action_id: str,
    status: str,
) -> None:
    approval = await asked(fake, db)
    slack = approvals(db, fake, [], approvers=[LEAD])
    waiting = asyncio.create_task(slack.wait(approval.id, 60))  # polls only every 30 s
    other = asyncio.create_task(slack.wait(approval.id + 1, 60))
    await asyncio.sleep(0)
    with caplog.at_level(logging.INFO, logger="bot.decisions.approvals"):
        acks = await decide(slack, fake, action_id, approval.id, user=LEAD)
    for _ in range(20):  # a few turns of the loop, no clock: woken, not by its poll
        if waiting.done():
            break
        await asyncio.sleep(0)
    assert waiting.done() and not other.done()  # another request's run sleeps on
    other.cancel()
    stored = await ApprovalStore(db).get(approval.id)
    assert stored is not None and (stored.status, stored.decided_by) == (status, LEAD)
    assert acks.calls == [{}] and told(fake) == []
    [updated] = fake.calls_to("chat.update")
    assert (updated.args["channel"], updated.args["ts"], updated.args["text"]) == (
        SOC,
        TS,
        f"Approval for jira__create_issue: {status}",
    )
    assert updated.args["blocks"] == decided_blocks(stored)
    assert caplog.messages == [f"approval {approval.id} {status} by {LEAD}"]


@pytest.mark.parametrize(
    ("approvers", "admins", "user", "obeyed"),
    [
        ([LEAD], [], LEAD, True),
        ([], [LEAD], LEAD, True),  # no approvers: the admins
        ([LEAD], [BOSS], BOSS, False),  # approvers set: the admins are not asked
        ([LEAD], [BOSS], OTHER, False),
        ([], [], LEAD, False),  # neither: nobody
    ],
)
async def test_only_the_approvers_or_else_the_admins_decide(
    fake: FakeSlackAPI,
    db: Database,
    approvers: list[str],
    admins: list[str],
    user: str,
    obeyed: bool,
) -> None:
    approval = await asked(fake, db)
    slack = approvals(db, fake, admins, approvers=approvers)
    await decide(slack, fake, "approval_approve", approval.id, user=user)
    stored = await ApprovalStore(db).get(approval.id)
    assert stored is not None
    if obeyed:
        assert (stored.status, stored.decided_by) == ("approved", user) and told(fake) == []
    else:
        await pending(db, approval.id)
        assert told(fake) == [(SOC, user, NOT_ALLOWED, None)]
        assert fake.calls_to("chat.update") == []


async def test_a_click_that_names_nobody_is_refused(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """An approver list read from an empty ``${VAR}`` holds ``""``: it is nobody."""
    approval = await asked(fake, db)
    slack = approvals(db, fake, [""], approvers=[""])
    with caplog.at_level(logging.WARNING, logger="bot.decisions.votes"):
        await decide(slack, fake, "approval_approve", approval.id, user=None)
    await pending(db, approval.id)
    assert told(fake) == [(SOC, "", NOT_ALLOWED, None)]
    [warned] = caplog.messages  # Slack has no one to show it to
    assert warned.startswith("could not tell : ") and "channel_not_found" in warned


@pytest.mark.parametrize(
    ("separate", "requester", "user", "said"),
    [
        (True, ANALYST, ANALYST, OWN_REQUEST),  # an approver asking for the run
        (False, ANALYST, ANALYST, None),  # separate duty off: they may
        (True, None, ANALYST, None),  # an alert's run: nobody asked for it
        (True, ANALYST, LEAD, None),
    ],
)
async def test_nobody_approves_the_calls_of_their_own_run(
    fake: FakeSlackAPI,
    db: Database,
    separate: bool,
    requester: str | None,
    user: str,
    said: str | None,
) -> None:
    request = ApprovalRequest(**{**REQUEST.__dict__, "requested_by": requester})
    approval = await asked(fake, db, request=request)
    slack = approvals(db, fake, [], approvers=[LEAD, ANALYST], separate_duty=separate)
    await decide(slack, fake, "approval_approve", approval.id, user=user)
    stored = await ApprovalStore(db).get(approval.id)
    assert stored is not None
    if said is None:
        assert (stored.status, stored.decided_by) == ("approved", user) and told(fake) == []
    else:
        await pending(db, approval.id)
        assert told(fake) == [(SOC, user, said, None)]
        assert fake.calls_to("chat.update") == []


@pytest.mark.parametrize(
    ("value", "channel"),
    [
        ("unknown", SOC),  # a number no request has
        ("x1", SOC),  # not a number
        (None, SOC),
        ("", SOC),
        ("the request", "CSOC00002"),  # a real request, clicked in another channel
        ("the request", None),
    ],
)
async def test_a_click_on_no_request_here_is_refused_after_who_clicked(
    fake: FakeSlackAPI, db: Database, value: str | None, channel: str | None
) -> None:
    approval = await asked(fake, db)
    slack = approvals(db, fake, [], approvers=[LEAD])
    number = {"unknown": approval.id + 1, "the request": approval.id}.get(str(value), value)
    await decide(slack, fake, "approval_approve", number, user=OTHER, channel=channel)
    said = [(channel, OTHER, NOT_ALLOWED, None)] if channel else []
    assert told(fake) == said  # not an approver: nothing said about which ids exist
    await decide(slack, fake, "approval_approve", number, user=LEAD, channel=channel)
    await pending(db, approval.id)
    assert told(fake) == said + ([(channel, LEAD, NO_SUCH, None)] if channel else [])
    assert fake.calls_to("chat.update") == []


async def test_a_request_never_posted_has_no_place_to_be_decided(
    fake: FakeSlackAPI, db: Database
) -> None:
    approval, _ = await ApprovalStore(db).open(REQUEST, 60)  # posting it failed
    slack = approvals(db, fake, [], approvers=[LEAD])
    await decide(slack, fake, "approval_approve", approval.id, user=LEAD)
    await pending(db, approval.id)
    assert told(fake) == [(SOC, LEAD, NO_SUCH, None)]


async def test_a_closed_request_stays_as_it_was(fake: FakeSlackAPI, db: Database) -> None:
    """The first decision counts; a request past its time is no longer decided."""
    first = await asked(fake, db)
    late = await asked(fake, db, within_s=-1, request=ApprovalRequest("bq__query", {}, "big"))
    slack = approvals(db, fake, [], approvers=[LEAD, BOSS])
    await decide(slack, fake, "approval_deny", first.id, user=BOSS)
    await decide(slack, fake, "approval_approve", first.id, user=LEAD)
    await decide(slack, fake, "approval_approve", late.id, user=LEAD)
    denied = await ApprovalStore(db).get(first.id)
    assert denied is not None and (denied.status, denied.decided_by) == ("denied", BOSS)
    await pending(db, late.id)  # expiring it is the waiting run's part
    assert told(fake) == [(SOC, LEAD, CLOSED, None)] * 2
    assert len(fake.calls_to("chat.update")) == 1  # BOSS's decision only


async def test_a_run_looks_for_other_replicas_decisions_every_second(
    fake: FakeSlackAPI, db: Database
) -> None:
    """A decision made on another replica wakes nothing here: the waiting run reads the
    store again after ``poll_s``, one second unless told (``SlackApprovals.build``)."""
    approval = await asked(fake, db)
    slack = SlackApprovals(web_client(fake), ApprovalStore(db), ApprovalSettings(), [LEAD])
    assert slack.poll_s == 1.0
    loop = asyncio.get_running_loop()
    started = loop.time()
    await slack.wait(approval.id, 60)
    # the loop may wake a tick early; a loaded machine late, but nowhere near the 60 s
    assert 0.99 <= loop.time() - started < 30
