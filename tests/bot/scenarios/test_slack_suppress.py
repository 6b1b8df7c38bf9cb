"""Suppress from Slack, through the real bolt app (Web API = ``FakeSlackAPI``, real
SQLite, the engine on a scripted model): "Suppress similar…" under an alert's
conclusion opens a dialog pre-filled from the alert; the suppression it asks for waits
for an approver in the review channel; approved, it suppresses the next similar alert
POSTed to /alerts; lifted, it no longer does — every step on record (who, when, why).

Interactivity payloads start from the recorded ``block_actions_feedback.json``;
``view_submission`` payloads follow Slack's documented shape (invented values).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.engine import Outcome
from alerts.policy.decide import RuleSet
from bot.decisions._suppression_dialog import title_pattern
from bot.decisions.suppression import NOT_ALLOWED
from bot.decisions.votes import REFUSED
from bot.intake.policy.gate import suppression_rules
from bot.slack.posting import outcome_messages
from config.policy_settings import PolicySettings
from config.settings import LearningSettings, Settings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore
from store.schema import AlertRow
from store.triage.alerts import AlertStore
from store.triage.suppressions import SuppressionStore
from tests.bot.scenarios.test_slack_feedback import review_click, submission, vote
from tests.fakes.slack_api import FakeSlackAPI
from tests.playbook_support import Lab, load_alert
from tests.slack_support import (
    SOC,
    WEBHOOK_TOKEN,
    RecordingInvestigate,
    SlackHarness,
    make_settings,
)

THREAD = "1700000100.000100"
REVIEW = "CREVIEW01"
LEAD = "ULEAD0001"
ANALYST = "UANALYST1"
AUTH = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}
FIXTURES = Path(__file__).parents[2] / "fixtures" / "alerts"
HOSTILE = "<!channel> known hardening gap, see <https://evil.example/x|SEC-12>"


@pytest.fixture
def settings(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    base = make_settings(tmp_path, fake.base_url)
    learning = LearningSettings(review_channel=REVIEW, approvers=[LEAD], settle_s=0)
    policy = PolicySettings(dir=str(tmp_path / "policy"), reload_s=60)
    return base.model_copy(update={"learning": learning, "policy": policy})


async def concluded(db: Database, settings: Settings) -> tuple[str, Outcome]:
    """A wazuh alert stored with its card at THREAD, and socbot's conclusion there."""
    lab = Lab(db, settings, PlaybookStore(db), InvestigationStore(db))
    alert = load_alert("wazuh-rootcheck.json")
    await AlertStore(db).save(alert, slack_channel=SOC, slack_ts=THREAD)
    outcome, _ = await lab.investigate(alert, conversation_id=f"slack:{SOC}:{THREAD}")
    assert outcome.status == "concluded"
    return alert.id, outcome


async def concluded_alert(db: Database, settings: Settings) -> tuple[str, str]:
    alert_id, outcome = await concluded(db, settings)
    return alert_id, outcome.investigation_id


async def test_an_alert_conclusion_offers_suppress_similar_a_question_does_not(
    db: Database, settings: Settings
) -> None:
    _, outcome = await concluded(db, settings)

    def buttons(alert: bool) -> list[tuple[str, str]]:
        messages = outcome_messages(outcome, (), alert=alert)
        return [
            (e["action_id"], e["value"])
            for m in messages
            for b in m["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
        ]

    inv = outcome.investigation_id
    assert ("policy_suppress", inv) in buttons(True)
    assert [a for a, _ in buttons(False)] == ["feedback_correct", "feedback_incorrect"]


def dialog_values(view: dict[str, Any], *, days: str, reason: str) -> dict[str, Any]:
    """The dialog sent back as pre-filled (every entity kept), with days and reason."""
    blocks = {b["block_id"]: b["element"] for b in view["blocks"]}
    return {
        "source": {
            "source": {"type": "plain_text_input", "value": blocks["source"]["initial_value"]}
        },
        "title": {"title": {"type": "plain_text_input", "value": blocks["title"]["initial_value"]}},
        "entities": {
            "entities": {
                "type": "checkboxes",
                "selected_options": blocks["entities"]["initial_options"],
            }
        },
        "days": {"days": {"type": "number_input", "value": days}},
        "reason": {"reason": {"type": "plain_text_input", "value": reason}},
    }


async def post_alert(h: SlackHarness, name: str) -> str:
    data = json.loads((FIXTURES / name).read_text())
    response = await h.client.post("/alerts", json=data, headers=AUTH)
    assert response.status == 202
    await h.settle()
    return str((await response.json())["alert_id"])


async def status(db: Database, alert_id: str) -> str | None:
    async with db.session() as session:
        row = await session.get(AlertRow, alert_id)
        return row.status if row else None


async def test_suppress_similar_dialog_approval_suppresses_then_lift(
    fake: FakeSlackAPI, settings: Settings, db: Database
) -> None:
    alert_id, inv = await concluded_alert(db, settings)
    investigate = RecordingInvestigate()
    async with SlackHarness(fake, settings, investigate, db=db) as h:
        await h.action(vote(inv, "policy_suppress"))
        await h.settle()
        (opened,) = fake.calls_to("views.open")
        view = opened.args["view"]
        blocks = {b["block_id"]: b["element"] for b in view["blocks"]}
        assert blocks["source"]["initial_value"] == "wazuh"
        assert (
            blocks["title"]["initial_value"]
            == title_pattern(
                "SSH Hardening - 9: Wrong Maximum number of authentication attempts on manager"
            )
            == "SSH Hardening - *: Wrong Maximum number of authentication attempts on manager"
        )
        labels = [o["text"]["text"] for o in blocks["entities"]["initial_options"]]
        assert labels == ["host: manager (target)", "file: /etc/ssh/sshd_config"]
        assert (blocks["days"]["initial_value"], blocks["days"]["max_value"]) == ("7", "30")
        assert json.loads(view["private_metadata"])["alert_id"] == alert_id

        # too long, then no reason: the dialog says what to fix, nothing is stored
        status_code, body = await h.action(
            submission(
                view["callback_id"],
                view["private_metadata"],
                dialog_values(view, days="90", reason=""),
            )
        )
        assert status_code == 200
        errors = json.loads(body)["errors"]
        assert set(errors) == {"days", "reason"} and "30" in errors["days"]
        assert await SuppressionStore(db).all() == []

        await h.action(
            submission(
                view["callback_id"],
                view["private_metadata"],
                dialog_values(view, days="7", reason=HOSTILE),
            )
        )
        await h.settle()
        (asked,) = await SuppressionStore(db).all()
        assert (asked.status, asked.proposed_by, asked.reason, asked.alert_id) == (
            "proposed",
            ANALYST,
            HOSTILE,
            alert_id,
        )
        assert (
            timedelta(days=6, hours=23) < asked.expires_at - datetime.now(UTC) <= timedelta(days=7)
        )
        assert asked.rule["match"]["entity"] == [
            {"kind": "host", "value": "manager", "role": "target"},
            {"kind": "file", "value": "/etc/ssh/sshd_config"},
        ]
        (review,) = [
            c.args for c in fake.calls_to("chat.postMessage") if c.args["channel"] == REVIEW
        ]
        shown = json.dumps(review["blocks"])
        assert "<!channel>" not in shown and "evil.example/x" not in shown  # escaped, defanged
        told = [c.args["text"] for c in fake.calls_to("chat.postEphemeral")]
        assert told[-1].startswith(f"Suppression slack-{asked.id} asked for: an approver confirms")
        review_ts = str(asked.review_ts)
        assert [m.ts for m in fake.messages if m.channel == REVIEW] == [review_ts]

        # not an approver: refused, still proposed; an alert meanwhile is investigated
        await h.action(review_click("suppression_approve", str(asked.id), review_ts, user=ANALYST))
        await h.settle()
        assert fake.calls_to("chat.postEphemeral")[-1].args["text"] == NOT_ALLOWED
        before = await post_alert(h, "wazuh-rootcheck.json")
        assert await status(db, before) != "suppressed"

        await h.action(review_click("suppression_approve", str(asked.id), review_ts))
        await h.settle()
        approved = await SuppressionStore(db).get(asked.id)
        assert approved is not None and (approved.status, approved.decided_by) == ("approved", LEAD)
        update = fake.calls_to("chat.update")[-1].args
        assert update["ts"] == review_ts and "Approved" in json.dumps(update["blocks"])

        runs = len(investigate.calls)
        hidden = await post_alert(h, "wazuh-rootcheck.json")
        assert await status(db, hidden) == "suppressed" and len(investigate.calls) == runs
        health = await (await h.client.get("/healthz")).json()
        assert health["policy"]["alerts"]["suppressed"] == 1

        await h.action(review_click("suppression_lift", str(asked.id), review_ts))
        await h.settle()
        lifted = await SuppressionStore(db).get(asked.id)
        assert lifted is not None and (lifted.status, lifted.lifted_by) == ("lifted", LEAD)
        again = await post_alert(h, "wazuh-rootcheck.json")
        assert await status(db, again) != "suppressed"


async def test_suppress_button_on_anything_but_socbots_alert_conclusion_is_refused(
    fake: FakeSlackAPI, settings: Settings, db: Database
) -> None:
    _, inv = await concluded_alert(db, settings)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db) as h:
        await h.action(vote(inv, "policy_suppress", thread_ts="1700000999.000999"))
        await h.action(vote("inv-unknown", "policy_suppress"))
        await h.settle()
    assert fake.calls_to("views.open") == []
    assert [c.args["text"] for c in fake.calls_to("chat.postEphemeral")] == [REFUSED, REFUSED]


async def test_slack_suppressions_never_hide_a_critical_alert(db: Database) -> None:
    store = SuppressionStore(db)
    asked = await store.propose(
        {"match": {"source": "falco", "title": "Redirect STDOUT*"}},
        reason="red-team drill",
        expires_at=datetime.now(UTC) + timedelta(days=1),
        proposed_by=ANALYST,
    )
    assert await store.decide(asked.id, approve=True, by=LEAD)
    loaded = suppression_rules(await store.active())
    assert [r.id for r in loaded.rules] == [f"slack-{asked.id}"]
    falco = load_alert("warren-falco.json")
    assert falco.severity == "critical"
    assert RuleSet(loaded.rules).decide(falco, datetime.now(UTC)).rule is None
