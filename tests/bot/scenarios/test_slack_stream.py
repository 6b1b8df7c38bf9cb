"""Investigations streamed into their thread (``bot.slack.streaming``), through the real
engine, runtime and bolt app; Gemini scripted, Slack the fake (``tests/fakes/slack_stream.py``
speaks ``chat.startStream`` / ``appendStream`` / ``stopStream`` and refuses as Slack does).

An alert from arrival to verdict as a stream; the checklist where Slack refuses streaming,
and that refusal remembered (for the workspace, or for one channel) by the next run and the
next process; a restart in the middle of a stream: the old stream closed with a note, the
new attempt streaming on, one conclusion.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from google.genai.types import GenerateContentResponse
from sqlalchemy import select

from bot.investigator import EngineInvestigator
from store.schema import WorkRow
from tests.bot.scenarios.test_slack_flows import (
    ALERTS,
    CONCLUSION,
    MENTION_TS,
    PLAN,
    alert_model,
    running_bot,
    thread_posts,
)
from tests.fakes.model import ModelRequest, ScriptedModel, json_response
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlackAPI
from tests.fakes.slack_stream import Stream
from tests.slack_support import (
    SOC,
    WEBHOOK_CHANNEL,
    WEBHOOK_TOKEN,
    SlackHarness,
    load,
    make_settings,
)

ALERT = (ALERTS / "leveret-scc.json").read_text()


async def post_alert(h: SlackHarness) -> str:
    response = await h.client.post(
        "/alerts?source=scc", data=ALERT, headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"}
    )
    assert response.status == 202
    return str((await response.json())["alert_id"])


def card_ts(fake: FakeSlackAPI, nth: int = 0) -> str:
    cards = [m for m in fake.messages if m.channel == WEBHOOK_CHANNEL and m.thread_ts is None]
    return cards[nth].ts


def conclusions(fake: FakeSlackAPI, thread: str) -> list[Any]:
    posts = thread_posts(fake, WEBHOOK_CHANNEL, thread)
    return [c for c in posts if "feedback_correct" in str(c.args.get("blocks"))]


async def test_an_alert_streams_its_plan_and_ends_with_the_verdict(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.streams.allow()
    model = ScriptedModel(alert_model())
    async with running_bot(fake, make_settings(tmp_path, fake.base_url), model) as h:
        await post_alert(h)
        await h.settle()
        thread = card_ts(fake)
        [stream] = fake.streams.in_thread(WEBHOOK_CHANNEL, thread)
        async with h.db.session() as session:
            [posted] = list(
                await session.scalars(select(WorkRow.posted).where(WorkRow.kind == "alert"))
            )
    # the plan as Slack's plan display: the objective its title, each step a task, done
    assert stream.display == "plan" and stream.recipient == (TEAM_ID, BOT_USER_ID)
    assert stream.title == PLAN["objective"]
    assert [(t["title"], t["status"]) for t in stream.tasks.values()] == [
        (step["description"], "complete") for step in PLAN["steps"]
    ]
    # reflections as they happened, then the verdict; the stream is closed
    assert "pool known" in stream.text and "lateral SSH" in stream.text
    assert "**True positive** · critical severity" in stream.text
    assert stream.stopped and stream.calls >= 3
    # no checklist message, no edits; the conclusion with its buttons posted once, after
    assert not fake.calls_to("chat.update")
    [conclusion] = conclusions(fake, thread)
    assert thread_posts(fake, WEBHOOK_CHANNEL, thread) == [conclusion]
    stop = fake.calls_to("chat.stopStream")[-1]
    assert stop.at < conclusion.at
    assert CONCLUSION["summary"] in stream.text  # the verdict line carries the summary
    assert posted["stream_ts"] == stream.ts  # one stream per run, recorded with the row
    assert model.remaining() == {}


@pytest.mark.parametrize(
    ("error", "channel_only"),
    [
        ("feature_not_enabled", False),
        ("not_allowed", False),
        ("unknown_method", False),
        ("method_not_supported_for_channel_type", True),
    ],
)
async def test_a_refused_stream_falls_back_to_the_checklist_and_is_remembered(
    fake: FakeSlackAPI, tmp_path: Path, error: str, channel_only: bool
) -> None:
    fake.streams.allow()
    if channel_only:
        fake.streams.refuse_channel(WEBHOOK_CHANNEL, error)
    else:
        fake.streams.refuse(error)
    settings = make_settings(tmp_path, fake.base_url)
    script = alert_model()
    script["concluder"] = script["concluder"] * 2
    script["critic"] = script["critic"] * 2
    for stage in ("planner", "step s1", "step s2"):
        script[stage] = script[stage] * 2
    script["reflector"] = script["reflector"] * 2
    async with running_bot(fake, settings, ScriptedModel(script)) as h:
        await post_alert(h)
        await h.settle()
        first = card_ts(fake)
        assert len(fake.calls_to("chat.startStream")) == 1  # asked once, refused
        status = thread_posts(fake, WEBHOOK_CHANNEL, first)[0]
        assert "Decide whether" in str(fake.calls_to("chat.update")[-1].args["blocks"])
        assert status.args["thread_ts"] == first and len(conclusions(fake, first)) == 1
        # the next alert (a different one: not grouped) does not ask again
        other = ALERT.replace("Cryptocurrency Mining", "Cryptocurrency Mining (other)")
        response = await h.client.post(
            "/alerts?source=scc", data=other, headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"}
        )
        assert response.status == 202
        await h.settle()
        assert len(conclusions(fake, card_ts(fake, 1))) == 1
    assert len(fake.calls_to("chat.startStream")) == 1
    assert fake.streams.streams == {}
    # a new process over the same database remembers it too
    async with running_bot(fake, settings, ScriptedModel({})) as h:
        investigate = h.investigate
        assert isinstance(investigate, EngineInvestigator)
        assert not await investigate.gate.allows(WEBHOOK_CHANNEL)
        assert await investigate.gate.allows("COTHER001") is channel_only


async def test_a_restart_mid_stream_closes_the_old_stream_and_the_run_streams_on(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.streams.allow()
    settings = make_settings(tmp_path, fake.base_url)
    never = asyncio.Event()

    async def step_until_killed(_request: ModelRequest) -> GenerateContentResponse:
        await never.wait()  # the replica goes down while step s1 runs
        raise AssertionError("the run went on after its replica stopped")

    first_script = alert_model()
    first_script["step s1"] = [step_until_killed]
    first = ScriptedModel(first_script)
    async with running_bot(fake, settings, first) as h:
        await post_alert(h)
        await first.changes.until(lambda: bool(first.requests_for("step s1")))
        thread = card_ts(fake)
        await fake.wait_for(lambda: _task_running(fake.streams.in_thread(WEBHOOK_CHANNEL, thread)))
    [old] = fake.streams.in_thread(WEBHOOK_CHANNEL, thread)
    assert not old.stopped  # the replica died: nothing closed it

    second = ScriptedModel(alert_model())
    async with running_bot(fake, settings, second) as h:
        await fake.wait_for(lambda: len(conclusions(fake, thread)) == 1)
        await h.settle()
    old_stream, new = fake.streams.in_thread(WEBHOOK_CHANNEL, thread)
    assert old_stream is old and old.stopped and "socbot restarted during run" in old.text
    assert new.stopped and "**True positive**" in new.text
    assert all(t["status"] == "complete" for t in new.tasks.values())
    assert len(conclusions(fake, thread)) == 1  # no duplicate verdict
    assert not [
        c for c in thread_posts(fake, WEBHOOK_CHANNEL, thread) if c not in conclusions(fake, thread)
    ]


def _task_running(streams: list[Stream]) -> bool:
    return any(t["status"] == "in_progress" for s in streams for t in s.tasks.values())


async def test_a_stream_ended_under_the_run_hands_on_to_the_checklist(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.streams.allow()
    fake.fail_next("chat.appendStream", error="message_not_in_streaming_state")  # Slack ended it
    async with running_bot(
        fake, make_settings(tmp_path, fake.base_url), ScriptedModel(alert_model())
    ) as h:
        await post_alert(h)
        await h.settle()
        thread = card_ts(fake)
    [stream] = fake.streams.in_thread(WEBHOOK_CHANNEL, thread)
    assert stream.calls == 1  # started; its first append was refused: Slack had ended it
    status, conclusion = thread_posts(fake, WEBHOOK_CHANNEL, thread)
    assert conclusions(fake, thread) == [conclusion]
    final = str(fake.calls_to("chat.update")[-1].args["blocks"])
    assert PLAN["objective"] in final and final.count("✅") >= 2  # the checklist carried on
    assert status.at < conclusion.at and not fake.calls_to("chat.stopStream")
    assert len(fake.calls_to("chat.startStream")) == 1  # no second stream for the run


async def test_a_rate_limited_append_waits_as_slack_asks(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.streams.allow()
    fake.fail_next("chat.appendStream", status=429, retry_after=1)
    async with running_bot(
        fake, make_settings(tmp_path, fake.base_url), ScriptedModel(alert_model())
    ) as h:
        await post_alert(h)
        await h.settle()
        thread = card_ts(fake)
    [stream] = fake.streams.in_thread(WEBHOOK_CHANNEL, thread)
    limited, after = fake.calls_to("chat.appendStream")[:2]
    assert limited.status == 429 and after.at - limited.at >= 1.0
    assert stream.stopped and "**True positive**" in stream.text
    assert len(conclusions(fake, thread)) == 1


async def test_stop_closes_the_stream_saying_so(fake: FakeSlackAPI, tmp_path: Path) -> None:
    fake.streams.allow()
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
        await fake.wait_for(lambda: bool(fake.streams.in_thread(SOC, MENTION_TS)))
        stop = load("message_thread_reply.json")
        stop["event"]["text"] = "stop"
        await h.event(stop)
        await h.settle()
    [stream] = fake.streams.in_thread(SOC, MENTION_TS)
    assert stream.recipient == (TEAM_ID, "UANALYST1")  # for the person who asked
    assert stream.stopped and "Cancelled" in stream.text
    texts = [c.args["text"] for c in thread_posts(fake, SOC, MENTION_TS)]
    assert any("cancelled" in t.lower() for t in texts)
