"""Which past alerts a Slack run may see (``bot.events.scope``): its channel; in a DM the
alert channels the asker is a member of (Slack's ``conversations.members``, the fake's);
nothing for a DM nobody asked in, an id of no known shape, or when Slack cannot say."""

from __future__ import annotations

from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from bot.events.scope import Scoping, alert_homes
from bot.slack.members import ChannelMembers
from core.scope import NOTHING, Scope
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import ALERTS, SOC, WEBHOOK_CHANNEL, make_settings

ME, OTHER, STRANGER = "UANALYST1", "UOTHER001", "USTRANGE1"


def scoping(fake: FakeSlackAPI, tmp_path: Path, **slack: object) -> Scoping:
    settings = make_settings(tmp_path, fake.base_url, **slack)
    client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
    return Scoping(settings.slack, ChannelMembers(client))


async def test_a_run_in_a_channel_sees_that_channel(fake: FakeSlackAPI, tmp_path: Path) -> None:
    scope = scoping(fake, tmp_path)
    for channel in (ALERTS, WEBHOOK_CHANNEL, SOC, "GPRIVATE01"):
        for user in (None, ME, STRANGER):  # an alert's run has nobody; a mention its author
            assert await scope.of(channel, user) == Scope(frozenset({channel}))
    assert not fake.calls_to("conversations.members")  # a channel's run asks Slack nothing


async def test_a_dm_sees_the_askers_alert_channels(fake: FakeSlackAPI, tmp_path: Path) -> None:
    fake.add_members(ALERTS, [ME, OTHER])
    fake.add_members(WEBHOOK_CHANNEL, [OTHER])
    fake.add_members(SOC, [ME])  # not where alerts live: never in a DM's scope
    scope = scoping(fake, tmp_path)
    assert await scope.of("DPANE0001", ME) == Scope.of([ALERTS])
    assert await scope.of("DPANE0001", OTHER) == Scope.of([ALERTS, WEBHOOK_CHANNEL])
    assert await scope.of("DPANE0001", STRANGER) == NOTHING


async def test_nothing_without_an_asker_or_a_known_shape(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.add_members(ALERTS, [ME])
    fake.add_members(WEBHOOK_CHANNEL, [ME])
    scope = scoping(fake, tmp_path)
    for channel, user in (
        ("DPANE0001", None),
        ("DPANE0001", ""),
        ("", ME),
        ("D1", ME),
        ("dpane0001", ME),
        ("XPANE0001", ME),
        (f"DPANE0001 {ALERTS}", ME),
        (f"{ALERTS}\n", ME),
        ("D" + "A" * 21, ME),
    ):
        assert await scope.of(channel, user) == NOTHING, (channel, user)
    assert await scope.of("D" + "A" * 20, ME) == Scope.of([ALERTS, WEBHOOK_CHANNEL])


async def test_slack_unable_to_say_is_no_channel(fake: FakeSlackAPI, tmp_path: Path) -> None:
    fake.add_members(ALERTS, [ME])  # the webhook channel unseeded: channel_not_found
    assert await scoping(fake, tmp_path).of("DPANE0001", ME) == Scope.of([ALERTS])


def test_alert_homes_are_the_alert_and_webhook_channels(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, "http://127.0.0.1:9", alert_channels=[ALERTS, SOC, ALERTS])
    assert alert_homes(settings.slack) == [ALERTS, SOC, WEBHOOK_CHANNEL]
    settings = make_settings(tmp_path, "http://127.0.0.1:9", webhook_channel=None)
    assert alert_homes(settings.slack) == [ALERTS]
    settings = make_settings(tmp_path, "http://127.0.0.1:9", webhook_channel=ALERTS)
    assert alert_homes(settings.slack) == [ALERTS]


async def test_a_dm_sees_the_channels_rules_route_to(fake: FakeSlackAPI, tmp_path: Path) -> None:
    """Channels a policy ``route`` rule sends alerts to are alert homes too, read at each
    run (rule files reload); membership still decides."""
    fake.add_members(ALERTS, [ME])
    fake.add_members(WEBHOOK_CHANNEL, [])
    fake.add_members("CROUTED01", [ME])
    fake.add_members("CROUTED02", [OTHER])
    routes: list[str] = []
    scope = scoping(fake, tmp_path)
    scope.routed = lambda: routes
    assert await scope.of("DPANE0001", ME) == Scope.of([ALERTS])
    routes[:] = ["CROUTED01", "CROUTED02"]
    assert await scope.of("DPANE0001", ME) == Scope.of([ALERTS, "CROUTED01"])
    assert await scope.of("DPANE0001", OTHER) == Scope.of(["CROUTED02"])
    assert await scope.of("DPANE0001", STRANGER) == NOTHING


def test_alert_homes_add_the_routed_channels_once(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, "http://127.0.0.1:9", alert_channels=[ALERTS])
    homes = alert_homes(settings.slack, ["CROUTED01", ALERTS, "", "CROUTED01"])
    assert homes == [ALERTS, WEBHOOK_CHANNEL, "CROUTED01"]
