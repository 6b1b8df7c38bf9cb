"""socbot closing its own conclusion (a policy rule's ``auto_resolve``) and the blind review
of it, through the real app: a genuine alert POSTed to ``/alerts``, the real engine on a
scripted model, the real bolt app and the Slack fake. The auto-resolution is told in the
thread after the conclusion; *Review…* opens a dialog that does not show socbot's verdict;
a non-member is refused at the click and at the submission; a double submission is
recorded once. Click payloads start from the recorded ``block_actions`` delivery; the
dialog submissions follow Slack's documented shape (invented values)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.decisions._audit_dialog import AUDIT_VIEW_ID
from bot.decisions.case_audit import REVIEWED
from bot.decisions.case_rules import NOT_MEMBER
from bot.investigator import EngineInvestigator
from bot.slack.client import build_client
from bot.slack.pacer import Pacer
from cli.runtime import open_runtime
from config.policy_settings import PolicySettings
from store.cases import records
from store.cases.auto import AutoResolution
from store.schema import CaseAction, CaseRow, CaseStatus
from store.triage.alerts import AlertStore
from store.triage.policy import PolicyStore
from tests.bot.scenarios.test_slack_cases import resolution, told
from tests.bot.scenarios.test_slack_feedback import submission
from tests.bot.scenarios.test_slack_flows import ALERTS, CONCLUSION, alert_model, thread_posts
from tests.fakes.model import ScriptedModel, json_response
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import WEBHOOK_CHANNEL, WEBHOOK_TOKEN, SlackHarness, load, make_settings

ANALYST, OUTSIDER = "UANALYST1", "UOUTSIDE1"
RULE = """
[[rule]]
id = "scc-miners"
action = "investigate"
allow_critical = true
match = { source = "scc" }
[rule.auto_resolve]
audit_share = {share}
"""
NOT_REAL = {**CONCLUSION, "verdict": "false_positive", "severity": "low", "confidence": "high"}


@asynccontextmanager
async def concluded(
    fake: FakeSlackAPI, tmp_path: Path, share: float, confidence: str = "high"
) -> AsyncIterator[tuple[SlackHarness, str]]:
    """The SCC alert investigated under ``RULE``: the harness and the card's ts."""
    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "rule.toml").write_text(RULE.replace("{share}", str(share)))
    settings = make_settings(tmp_path, fake.base_url).model_copy(
        update={"policy": PolicySettings(dir=str(folder), reload_s=0)}
    )
    script = alert_model()
    script["concluder"] = [json_response({**NOT_REAL, "confidence": confidence})]
    fake.add_members(WEBHOOK_CHANNEL, [ANALYST, "UBOT0001"])
    async with open_runtime(settings, backend=ScriptedModel(script)) as rt:
        client = build_client(settings.slack, backoff_s=0.01)
        pacer = Pacer(rate_per_s=200)
        investigate = EngineInvestigator(
            rt.engine,
            client,
            AlertStore(rt.db),
            pacer=pacer,
            update_interval=0.02,
            policy=PolicyStore(rt.db),
            cases=True,
            auto_resolve=AutoResolution(rt.db, settings.cases.audit_share),
        )
        async with SlackHarness(
            fake, settings, investigate, db=rt.db, client=client, pacer=pacer
        ) as h:
            response = await h.client.post(
                "/alerts?source=scc",
                data=(ALERTS / "leveret-scc.json").read_text(),
                headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"},
            )
            assert response.status == 202
            await h.settle()
            card_ts = next(m.ts for m in fake.messages if m.channel == WEBHOOK_CHANNEL)
            yield h, card_ts


async def the_case(h: SlackHarness) -> CaseRow:
    [case] = await records.listed(h.db, records.Listing(limit=5))
    return case


async def told_in_thread(h: SlackHarness, card_ts: str, count: int) -> list[str]:
    await h.settle()
    await h.fake.wait_for(lambda: len(thread_posts(h.fake, WEBHOOK_CHANNEL, card_ts)) >= count)
    await h.settle()
    return [
        json.dumps(c.args, ensure_ascii=False)
        for c in thread_posts(h.fake, WEBHOOK_CHANNEL, card_ts)
    ]


def actions_of(posted: str) -> list[str]:
    """The action ids of a posted message's buttons and menus, in order."""
    blocks = json.loads(posted).get("blocks") or []
    return [e["action_id"] for b in blocks for e in b.get("elements") or [] if "action_id" in e]


def conclusion_click(
    action_id: str, value: str, card_ts: str, user: str = ANALYST
) -> dict[str, Any]:
    payload = review_click(int(value), card_ts, user)
    payload["actions"][0].update(action_id=action_id)
    return payload


def review_click(case_id: int, card_ts: str, user: str = ANALYST) -> dict[str, Any]:
    payload = load("block_actions_feedback.json")
    payload["user"]["id"] = user
    payload["channel"]["id"] = WEBHOOK_CHANNEL
    payload["container"].update(channel_id=WEBHOOK_CHANNEL, thread_ts=card_ts)
    payload["message"].update(thread_ts=card_ts, ts="1800000000.000001")
    payload["actions"][0].update(
        action_id="case_audit", block_id=f"case_auto:{case_id}", value=str(case_id)
    )
    return payload


async def test_a_confident_false_positive_is_closed_and_told_after_the_conclusion(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    async with concluded(fake, tmp_path, share=0.0) as (h, card_ts):
        texts = await told_in_thread(h, card_ts, 3)  # status, conclusion, auto-resolution
        case = await the_case(h)
        assert (case.status, case.disposition, case.auto_resolved, case.audit) == (
            CaseStatus.RESOLVED,
            "false_positive",
            True,
            False,
        )
        assert (case.owner, case.resolved_by, case.policy_rule) == (
            "socbot",
            "socbot",
            "scc-miners",
        )
        conclusion = next(i for i, t in enumerate(texts) if "Auto-resolved by socbot" in t)
        closed = next(i for i, t in enumerate(texts) if "resolved this case automatically" in t)
        assert conclusion < closed
        assert "scc-miners" in texts[closed] and "False positive" in texts[closed]
        assert "case_reopen" in texts[closed] and "case_audit" not in texts[closed]
        # the conclusion: the case's state and Reopen only, no Take/Assign/Resolve
        assert "(rule `scc-miners`)" in texts[conclusion]
        assert actions_of(texts[conclusion]) == [
            "feedback_correct",
            "feedback_incorrect",
            "policy_suppress",
            "case_reopen",
        ]
        history = await records.history(h.db, case.id)
        assert [e.action for e in history] == [CaseAction.OPENED, CaseAction.AUTO_RESOLVED]

        # Reopen under the conclusion: a member's click succeeds, an outsider's is refused
        await h.action(conclusion_click("case_reopen", str(case.id), card_ts, OUTSIDER))
        await h.action(conclusion_click("case_reopen", str(case.id), card_ts))
        await h.settle()
        assert told(fake, OUTSIDER) == [NOT_MEMBER] and told(fake, ANALYST) == []
        now = await records.get(h.db, case.id)
        assert now is not None and (now.status, now.disposition) == (CaseStatus.ACKNOWLEDGED, None)
        # the conclusion had no Take/Assign/Resolve: the reopening brings them
        reopened = (await told_in_thread(h, card_ts, 4))[3]
        assert "reopened this case" in reopened
        assert actions_of(reopened) == ["case_take", "case_assign", "case_resolve"]


async def test_below_the_threshold_the_case_stays_open(fake: FakeSlackAPI, tmp_path: Path) -> None:
    async with concluded(fake, tmp_path, share=1.0, confidence="medium") as (h, card_ts):
        texts = await told_in_thread(h, card_ts, 2)
        case = await the_case(h)
        assert (case.status, case.auto_resolved, case.owner) == (CaseStatus.OPEN, False, None)
        assert not any("automatically" in t or "Auto-resolved" in t for t in texts)
        conclusion = next(t for t in texts if "case_take" in t)
        assert actions_of(conclusion)[-3:] == ["case_take", "case_assign", "case_resolve"]


async def test_a_drawn_case_gets_a_blind_review_recorded_once(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    async with concluded(fake, tmp_path, share=1.0) as (h, card_ts):
        texts = await told_in_thread(h, card_ts, 3)
        case = await the_case(h)
        assert case.audit is True
        drawn = next(t for t in texts if "resolved this case automatically" in t)
        assert "case_audit" in drawn and "False positive" not in drawn  # blind
        conclusion = next(t for t in texts if "Auto-resolved by socbot" in t)
        assert actions_of(conclusion)[-2:] == ["case_audit", "case_reopen"]
        assert "case_take" not in conclusion and "case_resolve" not in conclusion

        # a non-member: refused at the click, and at the submission
        await h.action(review_click(case.id, card_ts, OUTSIDER))
        await h.settle()
        assert told(fake, OUTSIDER) == [NOT_MEMBER]
        assert fake.calls_to("views.open") == []

        await h.action(review_click(case.id, card_ts))
        await h.settle()
        view = fake.calls_to("views.open")[-1].args["view"]
        assert view["callback_id"] == AUDIT_VIEW_ID
        shown = json.dumps([b for b in view["blocks"] if b["type"] != "input"])
        for word in ("false_positive", "False positive", "benign", "high", "miner talking"):
            assert word not in shown  # no verdict, confidence or summary
        assert "initial_option" not in json.dumps(view)
        meta = view["private_metadata"]
        answer = resolution("true_positive")
        status, _ = await h.action(submission(AUDIT_VIEW_ID, meta, answer, OUTSIDER))
        assert status == 200
        await h.settle()
        assert (await records.get(h.db, case.id)).audit_disposition is None  # type: ignore[union-attr]
        assert told(fake, OUTSIDER) == [NOT_MEMBER, NOT_MEMBER]

        first, second = await asyncio.gather(
            h.action(submission(AUDIT_VIEW_ID, meta, answer, ANALYST)),
            h.action(submission(AUDIT_VIEW_ID, meta, resolution("benign"), ANALYST)),
        )
        assert first[0] == second[0] == 200
        texts = await told_in_thread(h, card_ts, 4)
        now = await records.get(h.db, case.id)
        assert now is not None and now.audit_by == ANALYST
        assert now.audit_disposition in ("true_positive", "benign") and now.audit_at is not None
        assert told(fake, ANALYST) == [REVIEWED]
        history = await records.history(h.db, case.id)
        assert [e.action for e in history].count(CaseAction.AUDITED) == 1
        reviewed = [t for t in texts if "gave the blind review" in t]
        assert len(reviewed) == 1
        assert now.status == CaseStatus.RESOLVED  # the review does not touch the case itself
        await h.action(review_click(case.id, card_ts))  # a later click: nothing to review
        await h.settle()
        assert told(fake, ANALYST) == [REVIEWED, REVIEWED]
