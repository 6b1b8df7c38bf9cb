"""Whole Slack flows through the real engine, runtime and app; Gemini and Slack faked.

The model is ``ScriptedModel`` (routing on ``socbot stage: <stage>``), the Web API
is ``FakeSlackAPI``, events are signed and POSTed into socbot's own server. What
an analyst would see is asserted from the recorded Web API calls.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from agent.errors import LLMUnavailable
from bot.app import build_client
from bot.coordinator import EngineInvestigator
from bot.pacer import Pacer
from cli.runtime import open_runtime
from config.settings import Settings
from store.alerts import AlertStore
from store.models import Investigation
from tests.fakes.model import Delayed, ScriptedModel, json_response, text_response
from tests.fakes.slack_api import Call, FakeSlackAPI
from tests.slack_support import (
    SOC,
    WEBHOOK_CHANNEL,
    WEBHOOK_TOKEN,
    SlackHarness,
    eventually,
    load,
    make_settings,
)

ALERTS = Path(__file__).parent / "fixtures" / "alerts"
MENTION_TS = "1700000100.000100"

PLAN = {
    "objective": "Decide whether the crypto-mining finding is a real compromise",
    "steps": [
        {
            "id": "ip",
            "description": "Assess the mining pool address",
            "tools": [],
            "expected": "reputation",
            "depends_on": [],
        },
        {
            "id": "impact",
            "description": "Assess what else the instance did",
            "tools": [],
            "expected": "impact",
            "depends_on": ["ip"],
        },
    ],
}
CONCLUSION = {
    "verdict": "true_positive",
    "severity": "critical",
    "confidence": "high",
    "summary": "web-server-prod-01 runs a miner talking to a known mining pool.",
    "key_findings": [{"finding": "Known mining pool contacted", "evidence": "step s1"}],
    "uncertainties": ["How the miner was installed"],
    "recommendations": ["Isolate web-server-prod-01", "Rotate its service account keys"],
}


def alert_model() -> dict[str, Any]:
    return {
        "planner": [json_response(PLAN)],
        "step s1": [text_response("The pool address is a known Monero pool.")],
        "step s2": [text_response("The instance also opened SSH to two hosts.")],
        "reflector": [
            json_response({"achieved": False, "insights": ["pool known"], "plan_updates": []}),
            json_response({"achieved": True, "insights": ["lateral SSH"], "plan_updates": []}),
        ],
        "concluder": [json_response(CONCLUSION)],
    }


@asynccontextmanager
async def running_bot(
    fake: FakeSlackAPI, settings: Settings, model: ScriptedModel
) -> AsyncIterator[SlackHarness]:
    """The real runtime (engine, DB, tools) and the real Slack app, model scripted."""
    async with open_runtime(settings, backend=model) as rt:
        client = build_client(settings.slack, backoff_s=0.01)
        investigate = EngineInvestigator(
            rt.engine, client, AlertStore(rt.db), pacer=Pacer(rate_per_s=200), update_interval=0.02
        )
        async with SlackHarness(fake, settings, investigate, db=rt.db, client=client) as h:
            yield h


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as api:
        yield api


def thread_posts(fake: FakeSlackAPI, channel: str, thread_ts: str) -> list[Call]:
    return [
        c
        for c in fake.calls_to("chat.postMessage")
        if c.args.get("channel") == channel and c.args.get("thread_ts") == thread_ts
    ]


def blocks_text(call: Call) -> str:
    return json.dumps(call.args.get("blocks") or [], ensure_ascii=False)


async def test_webhook_alert_to_conclusion_then_follow_up_from_history(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    script = alert_model()
    script["classifier"] = [json_response({"needs_plan": False, "reason": "a question"})]
    script["direct"] = [text_response("Isolate it first; the SSH sessions can wait an hour.")]
    model = ScriptedModel(script)
    settings = make_settings(tmp_path, fake.base_url)
    async with running_bot(fake, settings, model) as h:
        response = await h.client.post(
            "/alerts?source=scc",
            data=(ALERTS / "leveret-scc.json").read_text(),
            headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"},
        )
        assert response.status == 202
        alert_id = (await response.json())["alert_id"]
        await h.settle()

        # 1. the alert card, top level in the webhook channel
        card = fake.calls_to("chat.postMessage")[0]
        assert card.args["channel"] == WEBHOOK_CHANNEL and "thread_ts" not in card.args
        assert "Cryptocurrency Mining" in card.args["text"]
        card_ts = next(m.ts for m in fake.messages if m.channel == WEBHOOK_CHANNEL)

        # 2. the plan status message in the card's thread, then 3. updated in place
        posts = thread_posts(fake, WEBHOOK_CHANNEL, card_ts)
        status = posts[0]
        status_ts = next(m.ts for m in fake.messages if m.thread_ts == card_ts)
        updates = [c for c in fake.calls_to("chat.update") if c.args["ts"] == status_ts]
        assert updates, "the status message is edited, not re-posted"
        final_status = blocks_text(updates[-1])
        assert "Decide whether the crypto-mining finding is a real compromise" in final_status
        assert final_status.count("✅") >= 2  # both steps done
        assert "Assess the mining pool address" in final_status
        assert status.at < updates[0].at

        # 4. the conclusion as Block Kit, verdict first, feedback buttons
        conclusion = posts[1]
        blocks = conclusion.args["blocks"]
        assert blocks[0]["type"] == "header" and "True positive" in blocks[0]["text"]["text"]
        actions = [b for b in blocks if b["type"] == "actions"]
        assert [e["action_id"] for e in actions[0]["elements"]] == [
            "feedback_correct",
            "feedback_incorrect",
        ]
        investigation_id = actions[0]["elements"][0]["value"]
        assert "Isolate web-server-prod-01" in blocks_text(conclusion)

        # the verdict is written back to the alert
        stored = await AlertStore(h.db).get(alert_id)
        assert stored is not None
        assert (stored.verdict, stored.investigation_id) == ("true_positive", investigation_id)

        # 5. a follow-up in the thread, no mention: answered directly, with history
        reply = load("message_thread_reply.json")
        reply["event"].update(channel=WEBHOOK_CHANNEL, thread_ts=card_ts, text="what first?")
        assert (await h.event(reply))[0] == 200
        await h.settle()
        answer = thread_posts(fake, WEBHOOK_CHANNEL, card_ts)[-1]
        assert "Isolate it first" in answer.args["text"]
        seen = "\n".join(
            part.text or ""
            for content in model.requests_for("direct")[-1].contents
            for part in content.parts or []
        )
        assert "web-server-prod-01 runs a miner" in seen  # the earlier conclusion
        assert "what first?" in seen
    assert model.remaining() == {}


async def test_mention_answered_directly_in_a_new_thread(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    model = ScriptedModel(
        {
            "classifier": [json_response({"needs_plan": False, "reason": "lookup"})],
            "direct": [text_response("185.220.101.42 is a Tor exit node; treat it as hostile.")],
        }
    )
    async with running_bot(fake, make_settings(tmp_path, fake.base_url), model) as h:
        assert (await h.event(load("app_mention.json")))[0] == 200
        await h.settle()
    posts = thread_posts(fake, SOC, MENTION_TS)
    answer = posts[-1]
    assert "Tor exit node" in answer.args["text"]
    assert "185.220.101[.]42" in blocks_text(answer)  # defanged when posted
    assert "185.220.101.42" not in blocks_text(answer)


async def test_stop_cancels_a_running_engine_investigation(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    script = alert_model()
    script["classifier"] = [json_response({"needs_plan": True, "reason": "needs logs"})]
    script["planner"] = [Delayed(json_response(PLAN), 5.0)]
    model = ScriptedModel(script)
    async with running_bot(fake, make_settings(tmp_path, fake.base_url), model) as h:
        await h.event(load("app_mention.json"))
        await eventually(lambda: bool(model.requests_for("planner")))
        stop = load("message_thread_reply.json")
        stop["event"]["text"] = "stop"
        await h.event(stop)
        await h.settle()
        texts = [c.args["text"] for c in thread_posts(fake, SOC, MENTION_TS)]
        assert any("cancelled" in t.lower() for t in texts)
        async with h.db.session() as session:
            statuses = list(await session.scalars(select(Investigation.status)))
        assert statuses == ["cancelled"]


async def test_model_outage_is_told_in_one_sentence(fake: FakeSlackAPI, tmp_path: Path) -> None:
    outage = LLMUnavailable("Gemini could not be reached after 4 attempts.")
    model = ScriptedModel({"classifier": [outage], "direct": [outage]})
    async with running_bot(fake, make_settings(tmp_path, fake.base_url), model) as h:
        await h.event(load("app_mention.json"))
        await h.settle()
    last = thread_posts(fake, SOC, MENTION_TS)[-1].args["text"]
    assert "could not be reached" in last or "unavailable" in last.lower()
    assert "Traceback" not in last and "\n" not in last


async def test_concurrent_threads_share_the_global_limit(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    answer = Delayed(text_response("done"), 0.15)
    model = ScriptedModel(
        {
            "classifier": lambda _r: json_response({"needs_plan": False, "reason": "q"}),
            "direct": [answer, answer, answer],
        }
    )
    settings = make_settings(tmp_path, fake.base_url, max_concurrent_investigations=2)
    async with running_bot(fake, settings, model) as h:
        for n in range(3):
            mention = load("app_mention.json")
            mention["event_id"] = f"Ev0PAR{n}"
            mention["event"]["ts"] = mention["event"]["event_ts"] = f"1700000900.00000{n}"
            await h.event(mention)
        await h.settle()
    assert model.max_in_flight <= 2
    queued = [c for c in fake.calls_to("chat.postMessage") if "Queued" in c.args["text"]]
    assert len(queued) == 1
    answers = [c for c in fake.calls_to("chat.postMessage") if c.args["text"] == "done"]
    assert len(answers) == 3
