"""Who may approve, reject or open the edit dialog of a playbook proposal
(``bot.decisions.playbook_review.SlackReview``), on the handlers alone: the real ``AsyncWebClient``
against the Slack fake, the real ``PlaybookStore`` on SQLite, no bolt app. Each rule
with its exact outcome — what was stored, who was told what, which message was
updated — for the approver in the review channel (obeyed) and for everyone else
(refused, nothing stored), so that the mutation group ``slack_auth``
(``scripts/mutation.py``) runs in seconds per mutant. The same paths through the whole
app are ``test_playbook_authority.py``'s; the dialog's submission is
``test_review_edit_rules.py``'s. Clicks start from the recorded ``block_actions``
delivery."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bot.decisions._playbook_dialog import edit_view
from bot.decisions.playbook_review import NOT_ALLOWED, SlackReview, decided_blocks
from config.settings import LearningSettings
from store.db.engine import Database
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from tests.bot.decisions.click_support import (
    ANALYST,
    LEAD,
    MAY_DECIDE,
    REVIEW,
    REVIEW_TS,
    SOC,
    TRIGGER,
    Acks,
    click,
    told,
    web_client,
)
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import BOT_USER_ID, FakeSlackAPI
from tests.playbook_support import bullet

TS = REVIEW_TS  # the review message
TEXT = "Scans from 203.0.113.0/24 are fine"
EDITED = "Scans from 203.0.113.0/24 (Qualys, weekdays 02:00 UTC) are expected."


def reviewer(
    fake: FakeSlackAPI, db: Database, approvers: list[str], channel: str | None = REVIEW
) -> tuple[PlaybookStore, SlackReview]:
    learning = LearningSettings(review_channel=channel, approvers=approvers)
    store = PlaybookStore(db)
    fake.add_message(REVIEW, TS, "Playbook proposal", user=BOT_USER_ID)  # the one to update
    return store, SlackReview(web_client(fake), store, learning)


async def proposal(store: PlaybookStore, text: str = TEXT, **fields: Any) -> PlaybookBullet:
    return await store.add(bullet(text, status="proposed", **fields))


async def unchanged(store: PlaybookStore, bullet_id: str) -> None:
    after = await store.get(bullet_id)
    assert after is not None
    assert (after.status, after.content, after.scope) == ("proposed", TEXT, "global")
    assert set(after.provenance) <= {"proposed_by"}  # nobody approved, rejected or edited


@pytest.mark.parametrize(("user", "channel", "approvers", "review", "answer"), MAY_DECIDE)
async def test_who_may_decide(
    fake: FakeSlackAPI,
    db: Database,
    user: str,
    channel: str,
    approvers: list[str],
    review: str | None,
    answer: bool,
) -> None:
    _, slack = reviewer(fake, db, approvers, review)
    assert slack.allowed(user, channel) is answer


@pytest.mark.parametrize(
    ("action_id", "status", "by", "word"),
    [
        ("playbook_approve", "active", "approved_by", "approved"),
        ("playbook_reject", "rejected", "rejected_by", "rejected"),
    ],
)
async def test_the_approver_decides_in_the_review_channel(
    fake: FakeSlackAPI,
    db: Database,
    caplog: pytest.LogCaptureFixture,
    action_id: str,
    status: str,
    by: str,
    word: str,
) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    first = await proposal(store)
    acks = Acks()
    with caplog.at_level(logging.INFO, logger="bot.decisions.playbook_review"):
        body = click(action_id, first.id, user=LEAD, channel=REVIEW, ts=TS)
        await slack.on_decision(acks, body, body["actions"][0], web_client(fake))
    after = await store.get(first.id)
    assert after is not None and after.status == status and after.provenance[by] == LEAD
    assert acks.calls == [{}]
    assert told(fake) == []
    [updated] = fake.calls_to("chat.update")
    assert (updated.args["channel"], updated.args["ts"], updated.args["text"]) == (
        REVIEW,
        TS,
        f"Playbook proposal {first.id}: {word}",
    )
    assert updated.args["blocks"] == decided_blocks(after, LEAD, word)
    assert caplog.messages == [f"proposal {first.id} {word} by {LEAD}"]


REFUSED = [  # (the clicking user, where, the approvers)
    (ANALYST, REVIEW, [LEAD]),
    (LEAD, SOC, [LEAD]),
    (LEAD, REVIEW, []),
]


@pytest.mark.parametrize("action_id", ["playbook_approve", "playbook_reject", "playbook_edit"])
@pytest.mark.parametrize(("user", "channel", "approvers"), REFUSED)
async def test_anyone_else_or_elsewhere_is_refused_and_nothing_changes(
    fake: FakeSlackAPI, db: Database, action_id: str, user: str, channel: str, approvers: list[str]
) -> None:
    store, slack = reviewer(fake, db, approvers)
    first = await proposal(store)
    acks = Acks()
    body = click(action_id, first.id, user=user, channel=channel, ts=TS)
    handler = slack.on_edit if action_id == "playbook_edit" else slack.on_decision
    await handler(acks, body, body["actions"][0], web_client(fake))
    await unchanged(store, first.id)
    assert acks.calls == [{}]
    assert told(fake) == [(channel, user, NOT_ALLOWED, None)]
    assert fake.methods() == ["chat.postEphemeral"]  # no update, no dialog


async def test_a_click_without_a_user_or_a_channel_is_refused(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """An approver list or review channel read from an empty ``${VAR}`` is ``""``: a
    click that names nobody, or no channel, still matches nobody."""
    store, slack = reviewer(fake, db, [""], "")
    first = await proposal(store)
    nobody = click("playbook_approve", first.id, user=None, channel=REVIEW, ts=TS)
    nowhere = click("playbook_approve", first.id, user=LEAD, channel=None, ts=TS)
    with caplog.at_level(logging.WARNING, logger="bot.decisions.votes"):
        for body in (nobody, nowhere):
            await slack.on_decision(Acks(), body, body["actions"][0], web_client(fake))
    await unchanged(store, first.id)
    assert told(fake) == [(REVIEW, "", NOT_ALLOWED, None)]  # nowhere: nobody to tell
    assert fake.methods() == ["chat.postEphemeral"]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("pb-00000000", "no bullet 'pb-00000000'"),
        (None, "no bullet ''"),
        ("active", "bullet '{id}' is active, not proposed"),
    ],
)
async def test_a_decision_on_no_proposal_is_told_why(
    fake: FakeSlackAPI, db: Database, value: str | None, said: str
) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    done = await store.add(bullet(TEXT))
    if value == "active":
        value = done.id
    body = click("playbook_approve", value, user=LEAD, channel=REVIEW, ts=TS)
    await slack.on_decision(Acks(), body, body["actions"][0], web_client(fake))
    assert told(fake) == [(REVIEW, LEAD, said.format(id=done.id), None)]
    assert fake.calls_to("chat.update") == []
    after = await store.get(done.id)
    assert after is not None and after.status == "active" and "approved_by" not in after.provenance


async def test_a_message_that_cannot_be_updated_leaves_the_decision_made(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    first = await proposal(store)
    body = click("playbook_approve", first.id, user=LEAD, channel=REVIEW, message=None)
    with caplog.at_level(logging.WARNING, logger="bot.decisions.playbook_review"):
        await slack.on_decision(Acks(), body, body["actions"][0], web_client(fake))
    after = await store.get(first.id)
    assert after is not None and after.status == "active"
    [updated] = fake.calls_to("chat.update")
    assert updated.args["ts"] == ""  # the click had no message: nothing to update
    [warned] = caplog.messages
    assert warned.startswith("could not update the review message : ")
    assert "message_not_found" in warned


async def test_the_edit_dialog_opens_for_the_approver_on_a_proposal(
    fake: FakeSlackAPI, db: Database
) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    first = await proposal(store)
    acks = Acks()
    body = click("playbook_edit", first.id, user=LEAD, channel=REVIEW, ts=TS)
    await slack.on_edit(acks, body, body["actions"][0], web_client(fake))
    [opened] = fake.calls_to("views.open")
    assert opened.args["trigger_id"] == TRIGGER
    assert opened.args["view"] == edit_view(first, REVIEW, TS)
    assert acks.calls == [{}] and told(fake) == []
    await unchanged(store, first.id)  # opening the dialog decides nothing


NO_PROPOSAL = "No such proposal waiting for a decision."


@pytest.mark.parametrize(
    ("user", "value", "said"),
    [
        (LEAD, "pb-00000000", NO_PROPOSAL),
        (LEAD, None, NO_PROPOSAL),
        (LEAD, "active", NO_PROPOSAL),  # decided already: nothing left to edit
        (ANALYST, "pb-00000000", NOT_ALLOWED),  # first who: no word on which ids exist
        (ANALYST, "active", NOT_ALLOWED),
    ],
)
async def test_the_edit_dialog_opens_on_nothing_else(
    fake: FakeSlackAPI, db: Database, user: str, value: str | None, said: str
) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    done = await store.add(bullet(TEXT))
    body = click("playbook_edit", done.id if value == "active" else value, user=user)
    body["channel"] = {"id": REVIEW}
    await slack.on_edit(Acks(), body, body["actions"][0], web_client(fake))
    assert told(fake) == [(REVIEW, user, said, None)]
    assert fake.calls_to("views.open") == []


async def test_a_dialog_slack_will_not_open_is_logged(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    first = await proposal(store)
    body = click("playbook_edit", first.id, user=LEAD, channel=REVIEW, ts=TS, trigger_id=None)
    with caplog.at_level(logging.WARNING, logger="bot.decisions.playbook_review"):
        await slack.on_edit(Acks(), body, body["actions"][0], web_client(fake))
    [opened] = fake.calls_to("views.open")
    assert opened.args["trigger_id"] == ""
    [warned] = caplog.messages
    assert warned.startswith("could not open the edit dialog: ")
    assert "invalid_trigger_id" in warned
    await unchanged(store, first.id)
