"""What ``socbot serve`` logs: one line per investigation start and end, what is on at start."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from bot.startup import startup_lines
from store.db.engine import Database
from tests.bot.scenarios.test_slack_flows import MENTION_TS, running_bot
from tests.fakes.model import ScriptedModel, json_response, text_response
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import ALERTS, SOC, WEBHOOK_CHANNEL, load, make_settings
from tools.setup import build_registry


async def test_one_line_per_investigation_start_and_end_without_the_message(
    fake: FakeSlackAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(
        {
            "classifier": [json_response({"needs_plan": False, "reason": "lookup"})],
            "direct": [text_response("185.220.101.42 is a Tor exit node.")],
        }
    )
    caplog.set_level(logging.INFO)
    async with running_bot(fake, make_settings(tmp_path, fake.base_url), model) as h:
        await h.event(load("app_mention.json"))
        await h.settle()
    runs = [r.getMessage() for r in caplog.records if r.name == "socbot.runs"]
    assert len(runs) == 2, runs
    start, end = runs
    investigation_id = start.split()[1]
    thread = f"slack:{SOC}:{MENTION_TS}"
    assert start == f"investigation {investigation_id} started: thread={thread} kind=question"
    assert end.startswith(f"investigation {investigation_id} ended: thread={thread} mode=direct")
    assert "status=answered verdict=- duration=" in end
    assert "model_calls=2 tokens=" in end and " cost=$" in end
    mention = load("app_mention.json")["event"]["text"]
    assert all(mention not in r.getMessage() for r in caplog.records), "no message bodies"
    assert all("Tor exit node" not in r.getMessage() for r in caplog.records)


async def test_start_lines_say_what_is_on_and_why_not(tmp_path: Path) -> None:
    on = make_settings(tmp_path, "http://127.0.0.1:1")
    off = make_settings(tmp_path, "http://127.0.0.1:1", webhook_token=None, alert_channels=[])
    db = Database(on.database_url)
    try:
        async with httpx.AsyncClient() as http:
            registry = build_registry(on, db, http)
    finally:
        await db.close()
    lines = startup_lines(on, http_mode=True, where="http://0.0.0.0:3000", registry=registry)
    assert lines[1].startswith("mode: HTTP (Events API at http://0.0.0.0:3000/slack/events")
    assert lines[2] == f"webhook POST /alerts: on, cards in {WEBHOOK_CHANNEL}"
    assert lines[3] == f"alert channels: {ALERTS}"
    assert lines[4].startswith(f"tools: {len(registry.names())} on (")
    lines = startup_lines(off, http_mode=False, where="http://127.0.0.1:3000", registry=registry)
    assert lines[1].startswith("mode: Socket Mode (no public URL")
    assert lines[2] == "webhook POST /alerts: off (set SOCBOT_WEBHOOK_TOKEN to enable it)"
    assert lines[3].startswith("alert channels: none")
    assert all("xoxb" not in line and "test" not in line.split("(")[0] for line in lines)
