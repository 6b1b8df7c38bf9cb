"""Who may use socbot where (``Gatekeeper``) and who may stop a run (``StopPolicy``), on
their own against the fake Slack Web API: every branch of the rules with the exact
answer, user groups resolved, cached and failing closed, and what a refused person is
told. Bodies are Slack's samples (tests/fixtures/slack) with ids changed."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.events._stop_policy import ALERT_REFUSAL, REFUSAL, StopPolicy
from bot.events.middleware import NOT_ALLOWED, Gatekeeper
from config.service_settings import SlackSettings
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import load

ALERTS, WEBHOOK, ALLOWED = "C0ALERTS1", "C0HOOK001", "C0ALLOW01"


def slack(**fields: Any) -> SlackSettings:
    return SlackSettings(alert_channels=[ALERTS], webhook_channel=WEBHOOK, **fields)


@pytest.mark.parametrize(
    ("user", "requester", "channel", "admins", "answer"),
    [
        ("U0ADMIN1", "U0ALICE1", "C0OTHER1", ["U0ADMIN1"], None),  # admins: any run
        ("U0ADMIN1", None, "C0OTHER1", ["U0ADMIN1"], None),
        ("U0ALICE1", "U0ALICE1", "C0OTHER1", ["U0ADMIN1"], None),  # the requester
        ("U0ALICE1", "U0ALICE1", "C0OTHER1", [], None),
        ("U0BOB001", "U0ALICE1", ALERTS, [], REFUSAL),  # someone else
        (None, "U0ALICE1", ALERTS, [], REFUSAL),
        ("U0BOB001", None, ALERTS, ["U0ADMIN1"], ALERT_REFUSAL),  # an alert: admins only
        ("U0BOB001", None, ALERTS, [], None),  # no admins: the alert channel's people
        ("U0BOB001", None, WEBHOOK, [], None),
        ("U0BOB001", None, "C0OTHER1", [], ALERT_REFUSAL),
        (None, None, "C0OTHER1", [], ALERT_REFUSAL),
    ],
)
def test_who_may_stop(
    user: str | None, requester: str | None, channel: str, admins: list[str], answer: str | None
) -> None:
    policy = StopPolicy(slack(admin_users=admins))
    assert policy.refusal(user, requester, channel) == answer


@pytest.fixture
async def api() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


def gate(api: FakeSlackAPI, **fields: Any) -> Gatekeeper:
    return Gatekeeper(slack(**fields), AsyncWebClient(token="xoxb-test", base_url=api.base_url))


@pytest.mark.parametrize(
    ("allowed", "channel", "ext_shared", "answer"),
    [
        ([], "C0ANY0001", False, True),  # no list: any channel
        ([], "C0ANY0001", True, False),  # ...but not a shared one
        ([], None, False, True),
        ([ALLOWED], ALLOWED, False, True),
        ([ALLOWED], "C0ANY0001", False, False),
        ([ALLOWED], None, False, False),
        ([ALLOWED], ALERTS, False, True),
        ([ALLOWED], WEBHOOK, False, True),
        ([ALLOWED], ALLOWED, True, True),
        ([], ALERTS, True, True),
        ([], WEBHOOK, True, True),
        ([ALLOWED], "D0DM00001", False, True),  # a DM: only the user check applies
        ([ALLOWED], "D0DM00001", True, False),
    ],
)
async def test_channels(
    api: FakeSlackAPI, allowed: list[str], channel: str | None, ext_shared: bool, answer: bool
) -> None:
    keeper = gate(api, allowed_channels=allowed)
    assert keeper.channel_allowed(channel, ext_shared=ext_shared) is answer


async def test_users_and_user_groups(api: FakeSlackAPI, caplog: pytest.LogCaptureFixture) -> None:
    assert await gate(api).user_allowed(None)  # no list: anyone
    api.add_usergroup("S0SOC0001", ["U0GROUP01"])
    keeper = gate(api, allowed_users=["U0ALICE1", "S0SOC0001", "S0GONE001"])
    assert await keeper.user_allowed("U0ALICE1")
    assert await keeper.user_allowed("U0GROUP01")
    assert not await keeper.user_allowed("U0BOB001")
    assert not await keeper.user_allowed(None)
    assert not await keeper.user_allowed("S0SOC0001")  # a group id is not a member
    calls = [c.args["usergroup"] for c in api.calls_to("usergroups.users.list")]
    assert calls == ["S0SOC0001", "S0GONE001"]  # each group asked once, then cached
    api.add_usergroup("S0SOC0001", ["U0GROUP01", "U0NEW0001"])  # cached for five minutes
    assert not await keeper.user_allowed("U0NEW0001")
    assert len(api.calls_to("usergroups.users.list")) == 2
    failing = gate(api, allowed_users=["S0SOC0001"])
    api.fail_next("usergroups.users.list", error="missing_scope")
    with caplog.at_level(logging.WARNING, logger="bot.events.middleware"):
        assert not await failing.user_allowed("U0GROUP01")  # fail closed
    warned = caplog.records[-1].getMessage()
    assert warned.startswith("could not list user group S0SOC0001: ")
    assert "missing_scope" in warned


def mention(**event: Any) -> dict[str, Any]:
    body = load("app_mention.json")
    return {**body, "event": {**body["event"], **event}}


def clicked(**fields: Any) -> dict[str, Any]:
    return {**load("block_actions_feedback.json"), **fields}


async def test_refusals(api: FakeSlackAPI) -> None:
    keeper = gate(api, allowed_channels=[ALLOWED], allowed_users=["U0ALICE1"])
    team = mention()["team_id"]
    ok = mention(channel=ALLOWED, user="U0ALICE1", team=team)
    assert await keeper.refusal(ok) is None
    assert await keeper.refusal(mention(channel=ALLOWED, user="U0ALICE1", user_team="T0EVIL01"))
    assert await keeper.refusal({**ok, "event": {**ok["event"], "team": "T0EVIL01"}}) == (
        "external user"
    )
    assert await keeper.refusal(mention(channel="C0ANY0001", user="U0ALICE1")) == (
        "channel not allowed"
    )
    assert await keeper.refusal(mention(channel={"id": "C0ANY0001"}, user="U0ALICE1")) == (
        "channel not allowed"
    )
    assert await keeper.refusal(mention(channel=ALLOWED, user="U0BOB001")) == "user not allowed"
    assert await keeper.refusal(mention(channel=ALLOWED, user={"id": "U0BOB001"})) == (
        "user not allowed"
    )
    assert await keeper.refusal(mention(channel=ALLOWED, user={"id": "U0ALICE1"})) is None
    bot = mention(channel=ALLOWED, user="U0BOT0001", bot_id="B0BOT0001")
    assert await keeper.refusal(bot) is None  # a bot's message: no user list for bots
    as_bot = mention(channel=ALLOWED, user="U0BOT0001", subtype="bot_message")
    assert await keeper.refusal(as_bot) is None
    assert await keeper.refusal(mention(channel=ALLOWED, user="U0BOB001", bot_id="")) == (
        "user not allowed"
    )
    shared = {**mention(channel="C0ANY0001", user="U0ALICE1"), "is_ext_shared_channel": True}
    assert await gate(api).refusal(shared) == "channel not allowed"


async def test_refusals_of_clicks(api: FakeSlackAPI) -> None:
    keeper = gate(api, allowed_channels=[ALLOWED], allowed_users=["U0ALICE1"])
    base = clicked()
    app_team = base["team"]["id"]
    alice = {"id": "U0ALICE1", "team_id": app_team}
    assert await keeper.refusal({**base, "user": alice, "channel": {"id": ALLOWED}}) is None
    in_container = {**base, "user": alice, "channel": None, "container": {"channel_id": "C0X"}}
    assert await keeper.refusal(in_container) == "channel not allowed"
    outsider = {**base, "user": {"id": "U0ALICE1", "team_id": "T0EVIL01"}}
    assert await keeper.refusal({**outsider, "channel": {"id": ALLOWED}}) == "external user"
    by_team_id = {**outsider, "team": None, "team_id": app_team, "channel": {"id": ALLOWED}}
    assert await keeper.refusal(by_team_id) == "external user"
    bob = {**base, "user": {"id": "U0BOB001", "team_id": app_team}, "channel": {"id": ALLOWED}}
    assert await keeper.refusal(bob) == "user not allowed"


async def test_a_refused_mention_is_told_privately_and_an_outsider_is_not(
    api: FakeSlackAPI,
) -> None:
    keeper = gate(api, allowed_users=["U0ALICE1"])
    client = AsyncWebClient(token="xoxb-test", base_url=api.base_url)
    served: list[str] = []

    async def next_() -> None:
        served.append("served")

    response = await keeper.middleware(mention(user="U0BOB001"), client, next_)
    assert response is not None and (response.status, response.body) == (200, "")
    [told] = api.calls_to("chat.postEphemeral")
    channel = mention()["event"]["channel"]
    assert (told.args["channel"], told.args["user"], told.args["text"]) == (
        channel,
        "U0BOB001",
        NOT_ALLOWED,
    )
    outsider = mention(user="U0BOB001", user_team="T0EVIL01")
    assert await keeper.middleware(outsider, client, next_) is not None
    assert len(api.calls_to("chat.postEphemeral")) == 1
    assert await keeper.middleware(mention(user="U0ALICE1"), client, next_) is None
    assert served == ["served"]


async def test_who_and_where_when_fields_are_missing(api: FakeSlackAPI) -> None:
    keeper = gate(api, allowed_users=["U0ALICE1"])
    assert keeper.channel_allowed("C0ANY0001")  # not shared unless said so
    assert keeper.channel_allowed("D0DM00001")
    no_team = {k: v for k, v in mention(user="U0ALICE1").items() if k != "team_id"}
    assert await keeper.refusal(no_team) is None  # no team to compare with
    event = {k: v for k, v in mention(team="T0EVIL01").items() if k != "user"}
    event["event"] = {k: v for k, v in event["event"].items() if k != "user"}
    assert await gate(api).refusal(event) is None  # no user: the event's team is no one's
    assert await keeper.refusal(event) == "user not allowed"  # a user list: fail closed
    click = {**clicked(), "user": {"id": "U0ALICE1"}, "channel": {"id": "C0ANY0001"}}
    assert await keeper.refusal(click) is None  # a click is never in a shared channel


async def test_a_refused_click_is_told_and_logged(
    api: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    keeper = gate(api, allowed_users=["U0ALICE1"])
    client = AsyncWebClient(token="xoxb-test", base_url=api.base_url)

    async def never() -> None:
        raise AssertionError("a refused request reached the listeners")

    click = {**clicked(), "user": {"id": "U0BOB001"}, "channel": {"id": "C0SOC0001"}}
    with caplog.at_level(logging.INFO, logger="bot.events.middleware"):
        await keeper.middleware(click, client, never)
        api.fail_next("chat.postEphemeral", error="channel_not_found")
        await keeper.middleware(click, client, never)
    told = api.calls_to("chat.postEphemeral")
    assert [(c.args["channel"], c.args["user"]) for c in told] == [("C0SOC0001", "U0BOB001")] * 2
    messages = [r.getMessage() for r in caplog.records]
    refused = "refused request from U0BOB001 in C0SOC0001: user not allowed"
    assert messages[:2] == [refused, refused]
    assert messages[2].startswith("could not tell U0BOB001 about the refusal: ")
    assert "channel_not_found" in messages[2]
    assert len(messages) == 3
    other = {**click, "type": "view_submission"}  # not a direct ask: nobody is told
    await keeper.middleware(other, client, never)
    assert len(api.calls_to("chat.postEphemeral")) == 2


async def test_a_request_naming_no_user_is_refused_when_users_are_listed(
    api: FakeSlackAPI,
) -> None:
    keeper = gate(api, allowed_channels=[ALLOWED], allowed_users=["U0ALICE1"])
    anyone = gate(api, allowed_channels=[ALLOWED])
    team = clicked()["team"]["id"]
    for user in ("", None, 7):
        asked = mention(channel=ALLOWED, user=user)
        assert await keeper.refusal(asked) == "user not allowed"
        assert await anyone.refusal(asked) is None
        click = {**clicked(), "user": {"id": user, "team_id": team}, "channel": {"id": ALLOWED}}
        assert await keeper.refusal(click) == "user not allowed"
        assert await anyone.refusal(click) is None
    alert = mention(channel=ALLOWED, user="", subtype="bot_message")
    assert await keeper.refusal(alert) is None  # an integration's message names no user
    empty_team = {**clicked(), "user": {"id": "U0ALICE1", "team_id": ""}}
    assert await keeper.refusal({**empty_team, "channel": {"id": ALLOWED}}) == "external user"


async def test_a_request_naming_no_channel_is_checked_by_user_only(api: FakeSlackAPI) -> None:
    keeper = gate(api, allowed_channels=[ALLOWED], allowed_users=["U0ALICE1"])
    assert await keeper.refusal(mention(channel="", user="U0ALICE1")) == "channel not allowed"
    for channel in (None, 7, ["C0ANY0001"]):  # not a channel id: a dialog's submission
        assert await keeper.refusal(mention(channel=channel, user="U0ALICE1")) is None
        assert await keeper.refusal(mention(channel=channel, user="U0BOB001")) == (
            "user not allowed"
        )


async def test_the_assistant_panes_events_name_its_person_and_its_dm(api: FakeSlackAPI) -> None:
    def opened(user: Any, channel: Any = "D0PANE001", team: str = "T0TEST01") -> dict[str, Any]:
        pane = {"user_id": user, "channel_id": channel, "thread_ts": "1700000300.000300"}
        pane["context"] = {"channel_id": "C0SECRET1", "team_id": "T0EVIL01"}
        event = {"type": "assistant_thread_started", "assistant_thread": pane}
        return {"type": "event_callback", "team_id": team, "event": event}

    keeper = gate(api, allowed_users=["U0ALICE1"], allowed_channels=[ALLOWED])
    assert await keeper.refusal(opened("U0ALICE1")) is None  # their DM, a listed user
    assert await keeper.refusal(opened("U0BOB001")) == "user not allowed"
    assert await keeper.refusal(opened(None)) == "user not allowed"
    assert await keeper.refusal(opened(["U0ALICE1"])) == "user not allowed"
    assert await keeper.refusal(opened("U0ALICE1", "C0OTHER1")) == "channel not allowed"
    assert await keeper.refusal(opened("U0ALICE1", None)) is None  # no channel: users decide
    assert await gate(api).refusal(opened("U0BOB001")) is None  # no lists: anyone
