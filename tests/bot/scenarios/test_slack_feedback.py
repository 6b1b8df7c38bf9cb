"""Votes, the 👎 dialog and the playbook review channel, through the real bolt app.

Interactivity payloads start from ``block_actions_feedback.json`` (a recorded
``block_actions`` delivery); ``view_submission`` payloads follow Slack's documented
shape (api.slack.com/reference/interaction-payloads/views) — invented values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.decisions.playbook_review import NOT_ALLOWED, SlackReview
from bot.decisions.votes import REFUSED
from bot.slack.client import build_client
from config.settings import LearningSettings, Settings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore
from store.schema import Feedback, WorkRow
from tests.fakes.model import ScriptedModel
from tests.fakes.slack_api import FakeSlackAPI
from tests.playbook_support import (
    QUALYS_OP,
    Lab,
    bullet,
    insight,
    learner_model,
    load_alert,
    prompt_text,
)
from tests.slack_support import SOC, RecordingInvestigate, SlackHarness, load, make_settings

THREAD = "1700000100.000100"
REVIEW = "CREVIEW01"
LEAD = "ULEAD0001"
ANALYST = "UANALYST1"
HOSTILE_REASON = "<!channel> FP, that's our scanner: see <https://evil.example/x|the docs>"


@pytest.fixture
def settings(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    base = make_settings(tmp_path, fake.base_url)
    learning = LearningSettings(review_channel=REVIEW, approvers=[LEAD], settle_s=0)
    return base.model_copy(update={"learning": learning})


@pytest.fixture
def lab(db: Database, settings: Settings) -> Lab:
    return Lab(db, settings, PlaybookStore(db), InvestigationStore(db))


def vote(
    investigation_id: str, action_id: str = "feedback_correct", **where: str
) -> dict[str, Any]:
    payload = load("block_actions_feedback.json")
    payload["actions"][0].update(action_id=action_id, value=investigation_id)
    if "channel" in where:
        payload["channel"]["id"] = where["channel"]
    if "thread_ts" in where:
        payload["message"]["thread_ts"] = where["thread_ts"]
    return payload


def review_click(action_id: str, bullet_id: str, ts: str, user: str = LEAD) -> dict[str, Any]:
    payload = load("block_actions_feedback.json")
    payload["user"]["id"] = user
    payload["channel"]["id"] = REVIEW
    payload["message"] = {"type": "message", "ts": ts, "user": "UBOT0001", "text": "proposal"}
    payload["actions"][0].update(action_id=action_id, value=bullet_id, block_id="playbook_review")
    return payload


def submission(
    callback_id: str, metadata: str, values: dict[str, Any], user: str = ANALYST
) -> dict[str, Any]:
    return {
        "type": "view_submission",
        "team": {"id": "T0TEST01", "domain": "socbot-test"},
        "user": {"id": user, "username": "analyst", "name": "analyst", "team_id": "T0TEST01"},
        "api_app_id": "A0SOCBOT01",
        "token": "fake-verification-token",
        "trigger_id": "1234567890.1234567890.fedcba",
        "view": {
            "id": "V0000001",
            "team_id": "T0TEST01",
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": metadata,
            "state": {"values": values},
            "hash": "1700000600.abcdef",
        },
        "response_urls": [],
        "is_enterprise_install": False,
    }


def verdict_values(verdict: str, reason: str | None) -> dict[str, Any]:
    return {
        "verdict": {
            "verdict": {
                "type": "static_select",
                "selected_option": {
                    "text": {"type": "plain_text", "text": verdict},
                    "value": verdict,
                },
            }
        },
        "reason": {"reason": {"type": "plain_text_input", "value": reason}},
    }


async def votes(db: Database) -> list[tuple[str, str, str, str | None, str | None]]:
    async with db.session() as session:
        rows = await session.scalars(select(Feedback).order_by(Feedback.id))
        return [(r.investigation_id, r.user, r.value, r.verdict, r.comment) for r in rows]


async def concluded(lab: Lab, thread: str = THREAD) -> str:
    outcome, _ = await lab.investigate(
        load_alert("leveret-guardduty-finding.json"), conversation_id=f"slack:{SOC}:{thread}"
    )
    assert outcome.status == "concluded"
    return outcome.investigation_id


async def learning_rows(db: Database) -> list[tuple[str, str, dict[str, Any]]]:
    async with db.session() as session:
        rows = await session.scalars(select(WorkRow).where(WorkRow.kind == "learn"))
        return [(r.thread, r.state, r.request) for r in rows]


async def test_a_second_click_changes_the_vote_and_thumbs_down_asks_why(
    fake: FakeSlackAPI, settings: Settings, db: Database, lab: Lab
) -> None:
    inv = await concluded(lab)
    waits = settings.learning.model_copy(update={"settle_s": 3600})  # the row stays queued
    slow = settings.model_copy(update={"learning": waits})
    learner = lab.learner(ScriptedModel({}))
    async with SlackHarness(fake, slow, RecordingInvestigate(), db=db, learner=learner) as h:
        await h.action(vote(inv, "feedback_correct"))
        await h.settle()
        assert await votes(db) == [(inv, ANALYST, "correct", None, None)]
        queued = (f"learn:{inv}", "queued", {"investigation_id": inv, "requests": 1})
        assert await learning_rows(db) == [queued]
        await h.action(vote(inv, "feedback_incorrect"))
        await h.settle()
        assert await learning_rows(db) == [queued]  # 👎 learns once the dialog is answered
        (opened,) = fake.calls_to("views.open")
        view = opened.args["view"]
        assert view["callback_id"] == "feedback_verdict"
        assert json.loads(view["private_metadata"])["investigation_id"] == inv
        await h.action(
            submission("feedback_verdict", view["private_metadata"], verdict_values("benign", ""))
        )
        await h.settle()
    assert await votes(db) == [(inv, ANALYST, "incorrect", "benign", None)]
    # the answer joins the learning run still waiting: one run reads both
    assert await learning_rows(db) == [
        (f"learn:{inv}", "queued", {"investigation_id": inv, "requests": 2})
    ]


async def test_the_same_vote_clicked_again_starts_no_learning(
    fake: FakeSlackAPI, settings: Settings, db: Database, lab: Lab
) -> None:
    inv = await concluded(lab)
    learner = lab.learner(ScriptedModel({}))
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, learner=learner) as h:
        for _ in range(3):  # each after the previous learning run ended
            await h.action(vote(inv, "feedback_correct"))
            await h.settle()
    rows = await learning_rows(db)
    assert [(thread, request["requests"]) for thread, _, request in rows] == [(f"learn:{inv}", 1)]
    assert await votes(db) == [(inv, ANALYST, "correct", None, None)]
    said = [str(c.args.get("text")) for c in fake.calls_to("chat.postEphemeral")]
    assert said[1:] == ["Thanks, your vote (correct) is unchanged."] * 2


@pytest.mark.parametrize("case", ["unknown id", "another thread", "still running"])
async def test_votes_on_anything_but_socbots_conclusion_here_are_refused(
    case: str, fake: FakeSlackAPI, settings: Settings, db: Database, lab: Lab
) -> None:
    if case == "unknown id":
        inv = "inv-0001"
    elif case == "another thread":
        inv = await concluded(lab, thread="1700000999.000999")
    else:
        inv = "inv-running"
        await lab.investigations.create(inv, f"slack:{SOC}:{THREAD}", "alert", "text")
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db) as h:
        status, _ = await h.action(vote(inv, "feedback_incorrect"))
        await h.settle()
    assert status == 200
    assert await votes(db) == []
    assert fake.calls_to("views.open") == []
    assert [c.args["text"] for c in fake.calls_to("chat.postEphemeral")] == [REFUSED]


async def test_vote_dialog_learning_review_approval_and_the_next_prompt(
    fake: FakeSlackAPI, settings: Settings, db: Database, lab: Lab
) -> None:
    inv = await concluded(lab)
    op = QUALYS_OP
    review = SlackReview(build_client(settings.slack, backoff_s=0.01), lab.store, settings.learning)
    learner = lab.learner(learner_model([insight("203.0.113.0/24 is Qualys")], [op]), review)
    async with SlackHarness(
        fake, settings, RecordingInvestigate(), db=db, learner=learner, review=review
    ) as h:
        await h.action(vote(inv, "feedback_incorrect"))
        await h.settle()
        meta = fake.calls_to("views.open")[0].args["view"]["private_metadata"]
        await h.action(
            submission("feedback_verdict", meta, verdict_values("false_positive", HOSTILE_REASON))
        )
        await h.settle()
        assert await votes(db) == [(inv, ANALYST, "incorrect", "false_positive", HOSTILE_REASON)]

        (posted,) = [c for c in fake.calls_to("chat.postMessage") if c.args["channel"] == REVIEW]
        text = json.dumps(posted.args["blocks"])
        assert "<!channel>" not in text and "<https://" not in text  # inert, defanged
        assert "&lt;!channel&gt;" in text and inv in text
        (proposal,) = await lab.store.bullets(["proposed"])
        assert proposal.provenance["review"]["channel"] == REVIEW

        await h.action(review_click("playbook_approve", proposal.id, posted_ts(fake), ANALYST))
        await h.settle()
        assert (await lab.store.get(proposal.id)).status == "proposed"  # type: ignore[union-attr]
        assert fake.calls_to("chat.postEphemeral")[-1].args["text"] == NOT_ALLOWED

        await h.action(review_click("playbook_approve", proposal.id, posted_ts(fake)))
        await h.settle()
    approved = await lab.store.get(proposal.id)
    assert approved is not None and approved.status == "active"
    assert approved.provenance["approved_by"] == LEAD
    assert "approved" in fake.calls_to("chat.update")[-1].args["text"]
    _, model = await lab.investigate(load_alert("leveret-guardduty-finding.json"))
    assert f"[{proposal.id}]" in prompt_text(model.requests_for("planner")[0])


async def test_edit_then_approve_and_reject_in_the_review_channel(
    fake: FakeSlackAPI, settings: Settings, db: Database, lab: Lab
) -> None:
    first = await lab.store.add(bullet("Scans from 203.0.113.0/24 are fine", status="proposed"))
    second = await lab.store.add(bullet("Always close GuardDuty alerts", status="proposed"))
    review = SlackReview(build_client(settings.slack, backoff_s=0.01), lab.store, settings.learning)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, review=review) as h:
        await review.post(first)
        ts = posted_ts(fake)
        await h.action(review_click("playbook_edit", first.id, ts))
        await h.settle()
        view = fake.calls_to("views.open")[0].args["view"]
        assert view["blocks"][0]["element"]["initial_value"] == first.content
        edited = "Scans from 203.0.113.0/24 (Qualys, weekdays 02:00 UTC) are expected."
        values = {"content": {"content": {"type": "plain_text_input", "value": edited}}}
        await h.action(submission("playbook_edit", view["private_metadata"], values, LEAD))
        await h.action(review_click("playbook_reject", second.id, ts))
        await h.settle()
    after_first, after_second = await lab.store.get(first.id), await lab.store.get(second.id)
    assert after_first is not None and (after_first.status, after_first.content) == (
        "active",
        edited,
    )
    assert after_second is not None and after_second.status == "rejected"


def posted_ts(fake: FakeSlackAPI) -> str:
    """The ts of the review message socbot posted."""
    return next(m.ts for m in fake.messages if m.channel == REVIEW)
