"""Who may approve, reject or lift a suppression (``bot.decisions.suppression.SuppressActions``), on
the handler alone: the real ``AsyncWebClient`` against the Slack fake, the real
``SuppressionStore`` on SQLite, no bolt app. Each rule with its exact outcome — the
status stored, the policy told to re-read its rules, the review message updated, who
was told what — for an approver in the review channel (obeyed) and everyone else
(refused, nothing changed), so that the mutation group ``slack_auth``
(``scripts/mutation.py``) runs in seconds per mutant. The button and the dialog through
the whole app are ``test_slack_suppress.py``'s. Clicks start from the recorded
``block_actions`` delivery; the suppressed alert's fields are invented."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.decisions._suppression_dialog import review_blocks
from bot.decisions.suppression import NOT_ALLOWED, SuppressActions
from config.policy_settings import PolicySettings
from config.settings import LearningSettings
from store.db.engine import Database
from store.playbook.feedback import FeedbackStore
from store.triage.alerts import AlertStore
from store.triage.suppressions import Suppression, SuppressionStore
from tests.bot.decisions.click_support import (
    ANALYST,
    LEAD,
    MAY_DECIDE,
    REVIEW,
    REVIEW_TS,
    SOC,
    Acks,
    click,
    told,
    web_client,
)
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import BOT_USER_ID, FakeSlackAPI

TS = REVIEW_TS  # the review message
GONE = "That suppression is no longer waiting for this."


class Suppressor:
    """The handler, its store, and how often the policy was told to re-read its rules."""

    def __init__(self, fake: FakeSlackAPI, db: Database, approvers: list[str], review: Any):
        fake.add_message(REVIEW, TS, "Suppression proposal", user=BOT_USER_ID)
        self.fake, self.store, self.changes = fake, SuppressionStore(db), 0
        learning = LearningSettings(review_channel=review, approvers=approvers)
        self.actions = SuppressActions(
            feedback=FeedbackStore(db),
            alerts=AlertStore(db),
            suppressions=self.store,
            policy=PolicySettings(),
            learning=learning,
            changed=self.changed,
        )

    def changed(self) -> None:
        self.changes += 1

    async def ask(self) -> Suppression:
        return await self.store.propose(
            {"match": {"source": "guardduty", "title": "Recon:EC2/PortProbeUnprotectedPort"}},
            reason="our scanner",
            expires_at=datetime.now(UTC) + timedelta(days=7),
            proposed_by=ANALYST,
        )

    async def click(self, what: str, value: Any, user: str | None = LEAD, **where: Any) -> Acks:
        acks = Acks()
        body = click(f"suppression_{what}", value, **{"channel": REVIEW, "ts": TS, **where})
        body["user"] = None if user is None else {**body["user"], "id": user}
        await self.actions.on_decision(acks, body, body["actions"][0], web_client(self.fake))
        return acks

    async def status(self, suppression_id: int) -> tuple[str, str | None, str | None]:
        found = await self.store.get(suppression_id)
        assert found is not None
        return found.status, found.decided_by, found.lifted_by


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
    assert Suppressor(fake, db, approvers, review).actions.allowed(user, channel) is answer


async def test_the_approver_approves_then_lifts_or_rejects(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    s = Suppressor(fake, db, [LEAD], REVIEW)
    kept, refused = await s.ask(), await s.ask()
    with caplog.at_level(logging.INFO, logger="bot.decisions.suppression"):
        assert (await s.click("approve", kept.id)).calls == [{}]
        assert await s.status(kept.id) == ("approved", LEAD, None)
        await s.click("lift", kept.id)
        await s.click("reject", refused.id)
    assert (await s.status(kept.id), await s.status(refused.id)) == (
        ("lifted", LEAD, LEAD),
        ("rejected", LEAD, None),
    )
    assert s.changes == 3 and told(fake) == []
    done = [
        (kept, "approve", "approved"),
        (kept, "lift", "lifted"),
        (refused, "reject", "rejected"),
    ]
    assert caplog.messages == [f"suppression {x.rule_id}: {what} by {LEAD}" for x, what, _ in done]
    updates = fake.calls_to("chat.update")
    assert [(c.args["channel"], c.args["ts"], c.args["text"]) for c in updates] == [
        (REVIEW, TS, f"Suppression {x.rule_id}: {status}") for x, _, status in done
    ]
    lifted = await s.store.get(kept.id)
    assert lifted is not None and updates[1].args["blocks"] == review_blocks(lifted)


@pytest.mark.parametrize("what", ["approve", "reject", "lift"])
@pytest.mark.parametrize(
    ("user", "channel", "approvers"),
    [(ANALYST, REVIEW, [LEAD]), (LEAD, SOC, [LEAD]), (LEAD, REVIEW, [])],
)
async def test_anyone_else_or_elsewhere_is_refused_and_nothing_changes(
    fake: FakeSlackAPI, db: Database, what: str, user: str, channel: str, approvers: list[str]
) -> None:
    s = Suppressor(fake, db, approvers, REVIEW)
    asked = await s.ask()
    approved = await s.ask()
    await s.store.decide(approved.id, approve=True, by="UOTHERAPP")
    target = approved if what == "lift" else asked
    assert (await s.click(what, target.id, user, channel=channel)).calls == [{}]
    assert await s.status(asked.id) == ("proposed", None, None)
    assert await s.status(approved.id) == ("approved", "UOTHERAPP", None)
    assert told(fake) == [(channel, user, NOT_ALLOWED, None)]
    assert s.changes == 0 and fake.methods() == ["chat.postEphemeral"]


async def test_a_click_without_a_user_or_a_channel_is_refused(
    fake: FakeSlackAPI, db: Database
) -> None:
    s = Suppressor(fake, db, [""], "")
    asked = await s.ask()
    await s.click("approve", asked.id, None)
    await s.click("approve", asked.id, channel=None)
    assert await s.status(asked.id) == ("proposed", None, None)
    assert told(fake) == [(REVIEW, "", NOT_ALLOWED, None)]  # nowhere: nobody to tell
    assert s.changes == 0


@pytest.mark.parametrize(
    ("what", "value"),
    [
        ("lift", "first"),  # not approved: nothing to lift
        ("approve", "approved"),  # decided already
        ("reject", "approved"),
        ("approve", "unknown"),
        ("approve", "x1"),  # not a number: not suppression 1 either
        ("approve", None),
    ],
)
async def test_a_decision_on_nothing_waiting_for_it_is_told(
    fake: FakeSlackAPI, db: Database, what: str, value: str | None
) -> None:
    s = Suppressor(fake, db, [LEAD], REVIEW)
    first, approved = await s.ask(), await s.ask()
    await s.store.decide(approved.id, approve=True, by="UOTHERAPP")
    number = {"first": first.id, "approved": approved.id, "unknown": approved.id + 1}
    await s.click(what, number.get(str(value), value))
    assert await s.status(first.id) == ("proposed", None, None)
    assert await s.status(approved.id) == ("approved", "UOTHERAPP", None)
    assert told(fake) == [(REVIEW, LEAD, GONE, None)]
    assert s.changes == 0 and fake.calls_to("chat.update") == []


async def test_a_message_that_cannot_be_updated_leaves_the_decision_made(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    s = Suppressor(fake, db, [LEAD], REVIEW)
    asked = await s.ask()
    with caplog.at_level(logging.WARNING, logger="bot.decisions.suppression"):
        await s.click("approve", asked.id, message=None)
    assert await s.status(asked.id) == ("approved", LEAD, None) and s.changes == 1
    [updated] = fake.calls_to("chat.update")
    assert updated.args["ts"] == ""
    [warned] = caplog.messages
    assert warned.startswith("could not update the suppression message : ")
    assert "message_not_found" in warned
