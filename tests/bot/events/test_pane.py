"""The assistant pane's choices (``bot.events.pane``), driven directly: a real database, a
real Web API client against the Slack fake, Slack's channel members as the only authority.

Which alert a question is about (``case #N``, the thread or newest alert of the channel
beside the pane), brought into the pane's conversation only for a member; what the prompts
offer a member and a stranger. Alerts, cases and runs are invented rows.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import update

from alerts.parse import Alert, Indicator
from bot.events.middleware import Deduper
from bot.events.pane import BROUGHT, NOT_YOURS, WORKING, Pane
from bot.slack.members import ChannelMembers
from bot.work.contracts import ThreadRef
from store.db.engine import Database
from store.investigations.conversations import ConversationStore, conversation_id
from store.schema import AlertRow, CaseRow, Investigation, utcnow
from store.slack import SlackStore
from store.triage.alerts import AlertStore
from tests.fakes.slack_api import BOT_USER_ID, Call, FakeSlackAPI
from tests.slack_support import ALERTS, WEBHOOK_CHANNEL, make_settings

ME, STRANGER = "UANALYST1", "USTRANGE1"
PANE = ThreadRef("DPANE0001", "1700000300.000300")
OLD_TS, NEW_TS = "1700000100.000100", "1700000200.000200"


async def _ack(**_: Any) -> None:
    return None


class World:
    """A pane over a database with alerts in the webhook channel (``ME`` is its member)."""

    def __init__(self, db: Database, fake: FakeSlackAPI, tmp_path: Path) -> None:
        self.db, self.fake = db, fake
        self.client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        settings = make_settings(tmp_path, fake.base_url)
        members = ChannelMembers(self.client)
        self.pane = Pane(db, settings.slack, members, Deduper(SlackStore(db)))
        self.context = AsyncBoltContext({"client": self.client, "bot_user_id": BOT_USER_ID})
        fake.add_members(WEBHOOK_CHANNEL, [ME])
        fake.add_members(ALERTS, [ME, STRANGER])
        self.events = 0

    async def alert(
        self,
        ts: str,
        indicators: list[Indicator],
        *,
        channel: str = WEBHOOK_CHANNEL,
        age_days: int = 0,
    ) -> str:
        """An alert in ``channel``'s thread ``ts``, concluded, its thread's history stored."""
        run = f"inv-{channel}-{ts}"
        alert = Alert(
            id=f"a-{channel}-{ts}", source="scc", title=f"alert {ts}", indicators=indicators, raw={}
        )
        await AlertStore(self.db).save(
            alert, investigation_id=run, slack_channel=channel, slack_ts=ts
        )
        async with self.db.session() as session:
            session.add(
                Investigation(
                    id=run,
                    conversation_id=conversation_id(channel, ts),
                    kind="alert",
                    status="concluded",
                    input="i",
                    objective=f"objective of {ts}",
                    verdict="true_positive",
                )
            )
            if age_days:
                old = utcnow() - timedelta(days=age_days)
                await session.execute(
                    update(AlertRow).where(AlertRow.id == alert.id).values(created_at=old)
                )
        await ConversationStore(self.db).append_many(
            conversation_id(channel, ts),
            [("user", f"investigate {ts}"), ("model", f"concluded {ts}")],
            run,
        )
        return run

    async def case(
        self, run: str, channel: str | None, thread_ts: str | None, title: str = "Miner"
    ) -> int:
        async with self.db.session() as session:
            row = CaseRow(investigation_id=run, channel=channel, thread_ts=thread_ts, title=title)
            session.add(row)
            await session.flush()
            return int(row.id)

    async def open(self, user: str, context: dict[str, str] | None) -> None:
        """``assistant_thread_started`` beside ``context``."""
        self.events += 1
        pane = {"user_id": user, "channel_id": PANE.channel, "thread_ts": PANE.thread_ts}
        if context is not None:
            pane["context"] = context
        body = {"event_id": f"EvOPEN{self.events}", "event": {"assistant_thread": pane}}
        await self.pane.on_started(_ack, body, body["event"], self.client)

    async def ask(self, user: str, text: str) -> list[str]:
        """``prepare`` for a question; what the pane's conversation then holds."""
        await self.pane.prepare(PANE, user, text, self.context, self.client)
        return [m.content for m in await ConversationStore(self.db).messages(PANE.conversation_id)]

    def told(self, user: str) -> list[str]:
        return [
            c.args["text"]
            for c in self.fake.calls_to("chat.postEphemeral")
            if c.args["user"] == user
        ]

    def last(self, method: str) -> Call:
        return self.fake.calls_to(method)[-1]


@pytest.fixture
def world(db: Database, fake: FakeSlackAPI, tmp_path: Path) -> World:
    return World(db, fake, tmp_path)


IP = Indicator(kind="ipv4", value="185.220.101.42")


async def test_beside_its_channel_a_member_gets_the_newest_alert_once(world: World) -> None:
    await world.alert(OLD_TS, [IP])
    await world.alert(NEW_TS, [IP])
    await world.open(ME, {"channel_id": WEBHOOK_CHANNEL})
    held = await world.ask(ME, "what happened?")
    assert held == [BROUGHT, f"investigate {NEW_TS}", f"concluded {NEW_TS}"]
    assert world.last("assistant.threads.setTitle").args["title"] == f"objective of {NEW_TS}"
    assert world.last("assistant.threads.setStatus").args["status"] == WORKING
    assert await world.ask(ME, "and then?") == held  # brought once
    assert world.told(ME) == []


async def test_a_thread_in_the_context_names_its_own_alert(world: World) -> None:
    await world.alert(OLD_TS, [IP])
    await world.alert(NEW_TS, [IP])
    await world.open(ME, {"channel_id": WEBHOOK_CHANNEL, "thread_ts": OLD_TS})
    assert await world.ask(ME, "what happened?") == [
        BROUGHT,
        f"investigate {OLD_TS}",
        f"concluded {OLD_TS}",
    ]


@pytest.mark.parametrize(
    "context", [None, {"channel_id": "CQUIET001"}, {"channel_id": "not a channel"}]
)
async def test_no_alert_beside_the_pane_brings_nothing(world: World, context: Any) -> None:
    world.fake.add_members("CQUIET001", [ME])
    await world.alert(NEW_TS, [IP])
    await world.open(ME, context)
    assert await world.ask(ME, "is 185.220.101.42 known bad?") == []
    title = world.last("assistant.threads.setTitle").args["title"]
    assert title == "is 185.220.101[.]42 known bad?"  # shown defanged, as every indicator
    assert world.told(ME) == []


async def test_a_stranger_beside_the_channel_gets_nothing_of_it(world: World) -> None:
    await world.alert(NEW_TS, [IP])
    await world.open(STRANGER, {"channel_id": WEBHOOK_CHANNEL})
    assert await world.ask(STRANGER, "what happened?") == []
    assert world.told(STRANGER) == []  # the pane just is not about that channel
    assert world.last("assistant.threads.setTitle").args["title"] == "what happened?"


async def test_a_case_by_number_for_its_members_only(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    run = await world.alert(OLD_TS, [IP])
    await world.alert(NEW_TS, [IP])
    number = await world.case(run, WEBHOOK_CHANNEL, OLD_TS)
    await world.open(STRANGER, None)
    caplog.set_level(logging.INFO, logger="bot.events.pane")
    assert await world.ask(STRANGER, f"case #{number}?") == []
    assert world.told(STRANGER) == [NOT_YOURS]
    assert f"pane: case #{number} is not {STRANGER}'s to see" in caplog.messages
    assert world.last("assistant.threads.setTitle").args["title"] == f"case #{number}?"
    brought = await world.ask(ME, f"where is case #{number}?")
    assert brought == [BROUGHT, f"investigate {OLD_TS}", f"concluded {OLD_TS}"]
    assert world.told(ME) == []


@pytest.mark.parametrize(
    ("channel", "thread_ts"), [(None, OLD_TS), (WEBHOOK_CHANNEL, None), ("", OLD_TS)]
)
async def test_a_case_without_its_thread_brings_nothing(
    world: World, channel: str | None, thread_ts: str | None
) -> None:
    run = await world.alert(OLD_TS, [IP])
    number = await world.case(run, channel, thread_ts)
    await world.open(ME, None)
    assert await world.ask(ME, f"case #{number}") == []
    assert await world.ask(ME, "case #999") == []  # no such case
    assert world.told(ME) == []


async def test_a_case_whose_thread_has_no_alert_brings_nothing(world: World) -> None:
    run = await world.alert(OLD_TS, [IP])
    number = await world.case(run, WEBHOOK_CHANNEL, "1700000999.000999")
    await world.open(ME, None)
    assert await world.ask(ME, f"case #{number}") == []
    assert world.told(ME) == []


async def test_prompts_offer_what_a_member_may_see(world: World) -> None:
    run = await world.alert(
        NEW_TS,
        [
            Indicator(kind="ipv4", value="10.0.0.5", private=True),
            IP,
            Indicator(kind="domain", value="evil.example"),
            Indicator(kind="domain", value="web-prod-01.corp", private=True),
        ],
    )
    number = await world.case(run, WEBHOOK_CHANNEL, NEW_TS, title="Miner on web-prod-01")
    await world.open(ME, {"channel_id": WEBHOOK_CHANNEL})
    call = world.last("assistant.threads.setSuggestedPrompts")
    assert (call.args["channel_id"], call.args["thread_ts"]) == (PANE.channel, PANE.thread_ts)
    assert call.args["title"] == "Try asking"
    assert [(p["title"], p["message"]) for p in call.args["prompts"]] == [
        ("This channel's newest alert", "What did you conclude about this alert, and why?"),
        (
            f"Case #{number}: Miner on web-prod-01",
            f"Where does case #{number} stand, and what is left to do?",
        ),
        ("Is 185.220.101[.]42 known bad?", "Is 185.220.101.42 known bad?"),
        (
            "What did we conclude about web-prod-01.corp this week?",
            "What did we conclude about web-prod-01.corp this week?",
        ),
    ]
    assert world.last("chat.postMessage").args["metadata"]["event_payload"] == {
        "channel_id": WEBHOOK_CHANNEL
    }


async def test_prompts_from_the_alert_channels_too_and_only_this_weeks(world: World) -> None:
    stale = [IP, Indicator(kind="domain", value="db-prod-02.corp", private=True)]
    await world.alert(OLD_TS, stale, channel=ALERTS, age_days=8)  # last week's: not offered
    fresh = [
        Indicator(kind="domain", value="evil.example"),
        Indicator(kind="ipv6", value="2a00:1450::1"),
    ]
    await world.alert(NEW_TS, fresh, channel=ALERTS)
    await world.open(ME, {"channel_id": "CQUIET001"})  # beside a channel with no alert
    messages = [
        p["message"] for p in world.last("assistant.threads.setSuggestedPrompts").args["prompts"]
    ]
    assert messages == [
        "Is 2a00:1450::1 known bad?",
        "What did we conclude about evil.example this week?",
    ]


async def test_a_stranger_is_offered_nothing_of_channels_they_are_not_in(world: World) -> None:
    run = await world.alert(NEW_TS, [IP])
    await world.case(run, WEBHOOK_CHANNEL, NEW_TS)
    await world.open(STRANGER, {"channel_id": WEBHOOK_CHANNEL})
    prompts = world.last("assistant.threads.setSuggestedPrompts").args["prompts"]
    assert prompts == [{"title": "What can you do?", "message": "What can you help me with?"}]
