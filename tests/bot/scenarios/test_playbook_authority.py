"""Who may decide on a playbook proposal in Slack: approvers, in the review channel, only.

Every way in — Approve, Reject, opening Edit, sending the edit dialog — is tried by
someone who may not decide, through the real bolt app; the proposal must stay as it
was and nothing may be opened or changed. Payloads as in ``test_slack_feedback.py``
(a recorded ``block_actions`` delivery; a ``view_submission`` in Slack's documented
shape, invented values).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.decisions.playbook_review import NOT_ALLOWED, SlackReview
from bot.slack.client import build_client
from config.settings import LearningSettings, Settings
from store.db.engine import Database
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from tests.bot.scenarios.test_slack_feedback import (
    ANALYST,
    LEAD,
    REVIEW,
    posted_ts,
    review_click,
    submission,
)
from tests.fakes.slack_api import FakeSlackAPI
from tests.playbook_support import bullet
from tests.slack_support import SOC, RecordingInvestigate, SlackHarness, make_settings

TEXT = "Scans from 203.0.113.0/24 are fine"
EDITED = "Scans from 203.0.113.0/24 (Qualys, weekdays 02:00 UTC) are expected."

# (case, the clicking user, the channel the click comes from, approvers configured, action)
REFUSED = [
    ("non-approver approves", ANALYST, REVIEW, [LEAD], "playbook_approve"),
    ("non-approver rejects", ANALYST, REVIEW, [LEAD], "playbook_reject"),
    ("approver in another channel approves", LEAD, SOC, [LEAD], "playbook_approve"),
    ("approver in another channel rejects", LEAD, SOC, [LEAD], "playbook_reject"),
    ("no approvers means nobody approves", LEAD, REVIEW, [], "playbook_approve"),
    ("no approvers means nobody rejects", LEAD, REVIEW, [], "playbook_reject"),
]
EDIT_REFUSED = [
    ("non-approver opens Edit", ANALYST, REVIEW, [LEAD]),
    ("approver opens Edit in another channel", LEAD, SOC, [LEAD]),
    ("no approvers means nobody edits", LEAD, REVIEW, []),
]


def review_settings(tmp_path: Path, fake: FakeSlackAPI, approvers: list[str]) -> Settings:
    learning = LearningSettings(review_channel=REVIEW, approvers=approvers, settle_s=0)
    return make_settings(tmp_path, fake.base_url).model_copy(update={"learning": learning})


def click(action_id: str, bullet_id: str, ts: str, user: str, channel: str) -> dict[str, object]:
    payload = review_click(action_id, bullet_id, ts, user)
    payload["channel"]["id"] = channel
    return payload


async def proposed(
    db: Database, settings: Settings
) -> tuple[PlaybookStore, SlackReview, PlaybookBullet]:
    store = PlaybookStore(db)
    first = await store.add(bullet(TEXT, status="proposed"))
    review = SlackReview(build_client(settings.slack, backoff_s=0.01), store, settings.learning)
    return store, review, first


async def unchanged(store: PlaybookStore, bullet_id: str) -> PlaybookBullet:
    after = await store.get(bullet_id)
    assert after is not None
    assert (after.status, after.content) == ("proposed", TEXT)
    return after


@pytest.mark.parametrize(("case", "user", "channel", "approvers", "action_id"), REFUSED)
async def test_decisions_by_anyone_else_or_elsewhere_are_refused(
    case: str,
    user: str,
    channel: str,
    approvers: list[str],
    action_id: str,
    tmp_path: Path,
    fake: FakeSlackAPI,
    db: Database,
) -> None:
    settings = review_settings(tmp_path, fake, approvers)
    store, review, proposal = await proposed(db, settings)
    bullet_id = proposal.id
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, review=review) as h:
        await review.post(proposal)
        status, _ = await h.action(click(action_id, bullet_id, posted_ts(fake), user, channel))
        await h.settle()
    assert status == 200
    await unchanged(store, bullet_id)
    assert fake.calls_to("chat.update") == []
    (told,) = fake.calls_to("chat.postEphemeral")
    assert (told.args["user"], told.args["channel"], told.args["text"]) == (
        user,
        channel,
        NOT_ALLOWED,
    )


@pytest.mark.parametrize(("case", "user", "channel", "approvers"), EDIT_REFUSED)
async def test_the_edit_dialog_opens_only_for_an_approver_here(
    case: str,
    user: str,
    channel: str,
    approvers: list[str],
    tmp_path: Path,
    fake: FakeSlackAPI,
    db: Database,
) -> None:
    settings = review_settings(tmp_path, fake, approvers)
    store, review, proposal = await proposed(db, settings)
    bullet_id = proposal.id
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, review=review) as h:
        await h.action(click("playbook_edit", bullet_id, "1700000500.000100", user, channel))
        await h.settle()
    assert fake.calls_to("views.open") == []
    assert [c.args["text"] for c in fake.calls_to("chat.postEphemeral")] == [NOT_ALLOWED]
    await unchanged(store, bullet_id)


@pytest.mark.parametrize(
    ("case", "user", "channel", "approvers"),
    [
        ("a non-approver sends the dialog", ANALYST, REVIEW, [LEAD]),
        ("the dialog names another channel", LEAD, SOC, [LEAD]),
        ("no approvers: nobody's dialog counts", LEAD, REVIEW, []),
    ],
)
async def test_the_edit_dialogs_submission_is_checked_again(
    case: str,
    user: str,
    channel: str,
    approvers: list[str],
    tmp_path: Path,
    fake: FakeSlackAPI,
    db: Database,
) -> None:
    """A view submission can be forged or replayed by anyone who has the app's views:
    the sender and the channel in its metadata are checked, not only the click before."""
    settings = review_settings(tmp_path, fake, approvers)
    store, review, proposal = await proposed(db, settings)
    bullet_id = proposal.id
    meta = json.dumps({"id": bullet_id, "channel": channel, "ts": "1700000500.000100"})
    values = {"content": {"content": {"type": "plain_text_input", "value": EDITED}}}
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, review=review) as h:
        status, _ = await h.action(submission("playbook_edit", meta, values, user))
        await h.settle()
    assert status == 200
    await unchanged(store, bullet_id)
    assert fake.calls_to("chat.update") == []


async def test_the_approver_in_the_review_channel_is_obeyed(
    tmp_path: Path, fake: FakeSlackAPI, db: Database
) -> None:
    """The same paths as above, by the one person allowed: each takes effect (so the
    refusals above are refusals of the person, not of a broken path)."""
    settings = review_settings(tmp_path, fake, [LEAD])
    store, review, proposal = await proposed(db, settings)
    bullet_id = proposal.id
    other = await store.add(bullet("Always close GuardDuty alerts", status="proposed"))
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, review=review) as h:
        await review.post(proposal)
        await review.post(other)
        first_ts, other_ts = (m.ts for m in fake.messages if m.channel == REVIEW)
        await h.action(click("playbook_edit", bullet_id, first_ts, LEAD, REVIEW))
        await h.settle()
        (opened,) = fake.calls_to("views.open")
        meta = opened.args["view"]["private_metadata"]
        values = {"content": {"content": {"type": "plain_text_input", "value": EDITED}}}
        await h.action(submission("playbook_edit", meta, values, LEAD))
        await h.action(click("playbook_reject", other.id, other_ts, LEAD, REVIEW))
        await h.settle()
    edited, rejected = await store.get(bullet_id), await store.get(other.id)
    assert edited is not None and (edited.status, edited.content) == ("active", EDITED)
    assert edited.provenance["approved_by"] == LEAD
    assert rejected is not None and rejected.status == "rejected"
    assert fake.calls_to("chat.postEphemeral") == []
    # the edit and the reject are handled concurrently: each message is updated once, in
    # no promised order
    updated = sorted((c.args["ts"], c.args["text"]) for c in fake.calls_to("chat.update"))
    assert updated == sorted(
        [
            (first_ts, f"Playbook proposal {bullet_id}: edited and approved"),
            (other_ts, f"Playbook proposal {other.id}: rejected"),
        ]
    )
