"""Whole Slack flows through the real engine, runtime and app; Gemini and Slack faked.

The alert flow's thread, as the analyst finally sees it, is a golden file
(``tests/fixtures/slack/golden_alert_flow.json``); after an intended change run
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/bot/scenarios/test_slack_flows.py`` and review the diff.

The model is ``ScriptedModel`` (routing on ``socbot stage: <stage>``), the Web API
is ``FakeSlackAPI``, events are signed and POSTed into socbot's own server. What
an analyst would see is asserted from the recorded Web API calls.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import WSMsgType, web
from google.genai.types import GenerateContentResponse
from sqlalchemy import select

from agent.errors import LLMUnavailable
from bench.loopback import free_port
from bot.investigator import EngineInvestigator
from bot.slack.client import build_client
from bot.slack.pacer import Pacer
from cli.runtime import open_runtime
from cli.serve.command import Identity, Mode, ServeError, serve_until
from config.settings import Settings
from store.schema import Investigation
from store.triage.alerts import AlertStore
from tests.fakes.model import (
    Delayed,
    ModelRequest,
    ScriptedModel,
    json_response,
    text_response,
)
from tests.fakes.signals import WAIT_S, Changes
from tests.fakes.slack_api import Call, FakeSlackAPI
from tests.slack_support import (
    SOC,
    WEBHOOK_CHANNEL,
    WEBHOOK_TOKEN,
    SlackHarness,
    load,
    make_settings,
    serving_http,
    signed_headers,
)

ALERTS = Path(__file__).parents[2] / "fixtures" / "alerts"
GOLDEN = Path(__file__).parents[2] / "fixtures" / "slack"
_IDS = re.compile(r"\b[0-9a-f]{32}\b")
_DURATION = re.compile(r"⏱ [0-9hmins ]+ ·")  # the footer's run time varies; calls, cost do not
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


CRITIQUE = {
    "score": 0.9,
    "criteria": {"answers_objective": 0.9, "grounded": 0.9, "consistent": 0.9, "actionable": 0.8},
    "issues": [],
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
        "critic": [json_response(CRITIQUE)],
    }


@asynccontextmanager
async def running_bot(
    fake: FakeSlackAPI, settings: Settings, model: ScriptedModel, *, pacer: Pacer | None = None
) -> AsyncIterator[SlackHarness]:
    """The real runtime (engine, DB, tools) and the real Slack app, model scripted."""
    async with open_runtime(settings, backend=model) as rt:
        client = build_client(settings.slack, backoff_s=0.01)
        pacer = pacer or Pacer(rate_per_s=200)
        investigate = EngineInvestigator(
            rt.engine, client, AlertStore(rt.db), pacer=pacer, update_interval=0.02
        )
        async with SlackHarness(
            fake, settings, investigate, db=rt.db, client=client, pacer=pacer
        ) as h:
            yield h


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
            "policy_suppress",  # an alert's conclusion: "Suppress similar…"
        ]
        investigation_id = actions[0]["elements"][0]["value"]
        assert "Isolate web-server-prod-01" in blocks_text(conclusion)
        assert "🔎 1 of 1 findings verified against tool results" in blocks_text(conclusion)

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
    assert_golden("golden_alert_flow.json", thread_as_seen(fake, WEBHOOK_CHANNEL, card_ts))


def thread_as_seen(fake: FakeSlackAPI, channel: str, root: str) -> list[dict[str, Any]]:
    """The thread as an analyst sees it at the end: every message in its final state."""
    seen = [
        {"ts": m.ts, "in_thread": m.thread_ts == root, "text": m.text, "blocks": m.extra["blocks"]}
        for m in fake.messages
        if m.channel == channel and (m.ts == root or m.thread_ts == root)
    ]
    text = _DURATION.sub("⏱ <duration> ·", _IDS.sub("<id>", json.dumps(seen, ensure_ascii=False)))
    normalized: list[dict[str, Any]] = json.loads(text)
    return normalized


def assert_golden(name: str, data: Any) -> None:
    """Compare with ``tests/fixtures/slack/<name>``; ``UPDATE_GOLDEN=1`` rewrites it."""
    path = GOLDEN / name
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"what was posted differs from {path}"


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
    never = asyncio.Event()

    async def planning_until_stopped(_request: ModelRequest) -> GenerateContentResponse:
        await never.wait()  # the planner is still thinking when `stop` arrives
        raise AssertionError("the stopped run went on")

    script["planner"] = [planning_until_stopped]
    model = ScriptedModel(script)
    async with running_bot(fake, make_settings(tmp_path, fake.base_url), model) as h:
        await h.event(load("app_mention.json"))
        await model.changes.until(lambda: bool(model.requests_for("planner")))
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


# --- socbot serve -------------------------------------------------------------------


class FakeSocketModeServer:
    """Slack's Socket Mode WebSocket: says hello, pushes envelopes, records the acks."""

    def __init__(self) -> None:
        self.acks: list[dict[str, Any]] = []
        self.connections = 0  # sockets opened (after each hello)
        self.changes = Changes()  # notified on each connection and each ack
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/link", self._serve)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.url = f"ws://{host}:{port}/link"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def _serve(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"type": "hello", "num_connections": 1, "debug_info": {}})
        self.connections += 1
        self.changes.notify()

        async def push() -> None:
            while True:
                await ws.send_json(await self.outbox.get())

        pusher = asyncio.create_task(push())
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    self.acks.append(json.loads(message.data))
                    self.changes.notify()
        finally:
            pusher.cancel()
        return ws


async def test_serve_socket_mode_end_to_end(fake: FakeSlackAPI, tmp_path: Path) -> None:
    socket_server = FakeSocketModeServer()
    await socket_server.start()
    fake.set_handler("apps.connections.open", lambda call: {"ok": True, "url": socket_server.url})
    model = ScriptedModel(
        {
            "classifier": [json_response({"needs_plan": False, "reason": "lookup"})],
            "direct": [text_response("Yes: a Tor exit node.")],
        }
    )
    settings = make_settings(tmp_path, fake.base_url)
    port = free_port()
    stop = asyncio.Event()
    seen: list[Identity] = []
    serving = asyncio.create_task(
        serve_until(
            settings,
            Mode.socket,
            host="127.0.0.1",
            port=port,
            stop=stop,
            runtime=lambda s: open_runtime(s, backend=model),
            ready=seen.append,
        )
    )
    try:
        await fake.wait_for(lambda: bool(fake.calls_to("apps.connections.open")))
        assert fake.calls_to("apps.connections.open")[0].token == "xapp-test"
        envelope = {
            "envelope_id": "env-0001",
            "payload": load("app_mention.json"),
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
        }
        await socket_server.outbox.put(envelope)
        await socket_server.changes.until(lambda: {"envelope_id": "env-0001"} in socket_server.acks)
        await fake.wait_for(lambda: len(thread_posts(fake, SOC, MENTION_TS)) >= 2)
        assert "Tor exit node" in thread_posts(fake, SOC, MENTION_TS)[-1].args["text"]
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as health:
                assert (await health.json())["mode"] == "socket"
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data="{}") as events:
                assert events.status == 404  # events come over the socket
    finally:
        stop.set()
        await asyncio.wait_for(serving, WAIT_S)  # an upper bound for a stop that would hang
        await socket_server.stop()
    assert seen[0].user_id == "UBOT0001"


async def test_serve_http_mode_health_and_signed_events(fake: FakeSlackAPI, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, fake.base_url)
    async with serving_http(settings, ScriptedModel({})) as port:
        async with aiohttp.ClientSession() as http:
            body = json.dumps(load("member_joined_channel.json"))
            headers = {"Content-Type": "application/json", **signed_headers(body)}
            url = f"http://127.0.0.1:{port}/slack/events"
            async with http.post(url, data=body, headers=headers) as ok:
                assert ok.status == 200
            async with http.post(
                url, data=body, headers={"Content-Type": "application/json"}
            ) as no:
                assert no.status == 401


async def test_serve_http_mode_on_a_taken_port_fails_in_one_sentence(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path, fake.base_url)
    seen: list[Identity] = []
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ServeError, match=rf"cannot listen on 127.0.0.1:{port}.*--port"):
            await serve_until(
                settings,
                Mode.http,
                host="127.0.0.1",
                port=port,
                stop=asyncio.Event(),
                runtime=lambda s: open_runtime(s, backend=ScriptedModel({})),
                ready=seen.append,
            )
    assert seen == [], "not announced as up"
    assert gc.get_freeze_count() == 0  # the app's cleanup ran: its start-up heap unfrozen


async def test_serve_stops_when_slack_rejects_the_bot_token(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.set_handler("auth.test", lambda call: {"ok": False, "error": "invalid_auth"})
    settings = make_settings(tmp_path, fake.base_url)
    with pytest.raises(ServeError, match=r"SLACK_BOT_TOKEN \(invalid_auth\)"):
        await serve_until(
            settings,
            Mode.http,
            host="127.0.0.1",
            port=free_port(),
            stop=asyncio.Event(),
            runtime=lambda s: open_runtime(s, backend=ScriptedModel({})),
        )
    assert not (tmp_path / "socbot.db").exists(), "nothing opened before the token is checked"
