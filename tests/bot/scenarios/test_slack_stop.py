"""Who may ``stop`` an investigation: its requester or an admin, not anyone in the thread.

Signed events into the real bolt app (``SlackHarness``); the investigation is held
open by ``RecordingInvestigate``; the Web API is ``FakeSlackAPI``, so a refusal is
an ephemeral ``chat.postEphemeral`` seen only by the one who typed ``stop``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.events._stop_policy import ALERT_REFUSAL, REFUSAL, StopPolicy
from bot.work.worker import ThreadRef
from config.settings import SlackSettings
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import (
    ALERTS,
    SOC,
    WEBHOOK_CHANNEL,
    RecordingInvestigate,
    SlackHarness,
    load,
    make_settings,
    run_ended,
)

MENTION_TS = "1700000100.000100"
ALERT_TS = "1700000300.000300"
REQUESTER, OTHER, ADMIN = "UANALYST1", "UINTRUDER9", "UADMIN001"


@pytest.mark.parametrize(
    ("admins", "user", "requester", "channel", "refusal"),
    [
        ([], REQUESTER, REQUESTER, SOC, None),
        ([], OTHER, REQUESTER, SOC, REFUSAL),
        ([], None, REQUESTER, SOC, REFUSAL),
        ([ADMIN], ADMIN, REQUESTER, SOC, None),
        ([ADMIN], OTHER, REQUESTER, SOC, REFUSAL),
        ([], OTHER, None, ALERTS, None),  # alert, no admins: the alert channel's people
        ([], OTHER, None, WEBHOOK_CHANNEL, None),
        ([], OTHER, None, SOC, ALERT_REFUSAL),  # an alert run outside an alert channel
        ([ADMIN], OTHER, None, ALERTS, ALERT_REFUSAL),  # admins configured: only they
        ([ADMIN], ADMIN, None, ALERTS, None),
        ([ADMIN], REQUESTER, REQUESTER, ALERTS, None),  # a follow-up in an alert thread
    ],
)
def test_stop_policy(
    admins: list[str], user: str | None, requester: str | None, channel: str, refusal: str | None
) -> None:
    settings = SlackSettings(
        admin_users=admins, alert_channels=[ALERTS], webhook_channel=WEBHOOK_CHANNEL
    )
    assert StopPolicy(settings).refusal(user, requester, channel) == refusal


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as api:
        api.set_handler("chat.postEphemeral", lambda call: {"ok": True, "message_ts": "1.2"})
        yield api


def stop_event(user: str, *, channel: str = SOC, thread_ts: str = MENTION_TS) -> dict[str, Any]:
    stop = load("message_thread_reply.json")
    stop["event"] |= {"text": "stop", "user": user, "channel": channel, "thread_ts": thread_ts}
    stop["event_id"] = f"EvSTOP{user}{channel}"
    stop["event"]["ts"] = "1700000999.000999"
    return stop


async def run_held_open(h: SlackHarness, investigate: RecordingInvestigate, alert: bool) -> None:
    investigate.gate = asyncio.Event()
    await h.event(load("bot_message_attachments.json" if alert else "app_mention.json"))
    await investigate.wait_started()


@pytest.mark.parametrize(
    ("admins", "alert", "stopper", "stopped"),
    [
        ([], False, REQUESTER, True),
        ([], False, OTHER, False),
        ([ADMIN], False, ADMIN, True),
        ([ADMIN], False, OTHER, False),
        ([], True, OTHER, True),
        ([ADMIN], True, OTHER, False),
        ([ADMIN], True, ADMIN, True),
    ],
    ids=[
        "requester",
        "someone-else-in-the-thread",
        "admin",
        "non-admin",
        "alert-no-admins",
        "alert-non-admin",
        "alert-admin",
    ],
)
async def test_stop_in_slack(
    fake: FakeSlackAPI,
    tmp_path: Path,
    admins: list[str],
    alert: bool,
    stopper: str,
    stopped: bool,
) -> None:
    investigate = RecordingInvestigate()
    thread = ThreadRef(ALERTS, ALERT_TS) if alert else ThreadRef(SOC, MENTION_TS)
    settings = make_settings(tmp_path, fake.base_url, admin_users=admins)
    async with SlackHarness(fake, settings, investigate) as h:
        await run_held_open(h, investigate, alert)
        await h.event(stop_event(stopper, channel=thread.channel, thread_ts=thread.thread_ts))
        if stopped:
            await run_ended(h, thread)
            assert investigate.cancelled == [thread]
        else:
            await fake.wait_for(lambda: len(fake.calls_to("chat.postEphemeral")) == 1)
            refusal = fake.calls_to("chat.postEphemeral")[0].args
            assert (refusal["user"], refusal["channel"]) == (stopper, thread.channel)
            assert refusal["thread_ts"] == thread.thread_ts
            assert refusal["text"] in (REFUSAL, ALERT_REFUSAL)
            assert investigate.cancelled == [] and h.app.coordinator.busy(thread)
            posted = [c.args.get("text", "") for c in fake.calls_to("chat.postMessage")]
            assert not any("cancel" in text.lower() for text in posted)
        assert investigate.gate is not None
        investigate.gate.set()


async def test_a_finished_run_forgets_its_requester(fake: FakeSlackAPI, tmp_path: Path) -> None:
    investigate = RecordingInvestigate()
    async with SlackHarness(fake, make_settings(tmp_path, fake.base_url), investigate) as h:
        await run_held_open(h, investigate, alert=False)
        thread = ThreadRef(SOC, MENTION_TS)
        queue = h.app.coordinator.queue
        # the requester is kept with the work row, for every replica
        assert [w.requester for w in await queue.active(thread.conversation_id)] == [REQUESTER]
        assert investigate.gate is not None
        investigate.gate.set()
        await run_ended(h, thread)
        assert await queue.active(thread.conversation_id) == []
        await h.event(stop_event(OTHER))
        await fake.wait_for(lambda: len(fake.calls_to("chat.postMessage")) >= 1)
        assert "Nothing is running" in fake.calls_to("chat.postMessage")[-1].args["text"]
