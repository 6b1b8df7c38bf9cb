"""Past alerts only from channels the asker may see, through the real bolt app, engine,
tools and database (Gemini and Slack faked; invented ids and alerts).

Two channels hold one past alert each, both about the same IP: the alert channel (the
analyst is a member) and the webhook channel (the analyst is not). Asked in a mention, a
DM or the assistant pane, the model calls ``search_past_alerts`` for the IP and
``get_past_alert`` for the other channel's alert and for an id that never existed: it
receives the analyst's channel's alert only, and the same "no past alert" for both ids.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from alerts.parse import Alert, parse_alert
from bot.events.scope import Scoping
from bot.investigator import EngineInvestigator
from bot.slack.client import build_client
from bot.slack.members import ChannelMembers
from bot.slack.pacer import Pacer
from cli.runtime import open_runtime
from config.settings import Settings
from store.db.engine import Database
from store.triage.alerts import AlertStore
from tests.bot.scenarios.test_slack_pane import PANE, PANE_TS, asked, started
from tests.fakes.model import (
    ModelRequest,
    ScriptedModel,
    call_response,
    json_response,
    text_response,
)
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import ALERTS, WEBHOOK_CHANNEL, SlackHarness, load, make_settings

ME, OTHER, STRANGER = "UANALYST1", "UOTHER001", "USTRANGE1"
IP = "185.220.101.42"
MINE = f"Tor login from {IP} to vpn-01"  # in the alert channel (the analyst's)
THEIRS = f"Tor login from {IP} to payroll-db"  # in the webhook channel (not the analyst's)
UNKNOWN = "0123456789abcdef0123456789abcdef"


def past() -> list[tuple[Alert, str, str]]:
    """One past alert in each channel (alert, channel, thread ts)."""
    return [
        (parse_alert({"title": MINE, "severity": "high"}), ALERTS, "1690000000.000100"),
        (parse_alert({"title": THEIRS, "severity": "high"}), WEBHOOK_CHANNEL, "1690000000.000200"),
    ]


async def seed(db: Database, alerts: list[tuple[Alert, str, str]]) -> None:
    """The past alerts, each concluded in its channel's thread."""
    store = AlertStore(db)
    for alert, channel, ts in alerts:
        await store.save(alert, slack_channel=channel, slack_ts=ts)
        await store.set_verdict(alert.id, verdict="true_positive", summary=f"{alert.title}: yes")


def model(theirs: str) -> ScriptedModel:
    calls = call_response(
        ("search_past_alerts", {"indicator": IP}),
        ("get_past_alert", {"alert_id": theirs}),
        ("get_past_alert", {"alert_id": UNKNOWN}),
    )
    return ScriptedModel(
        {
            "classifier": [json_response({"needs_plan": False, "reason": "a question"})],
            "direct": [calls, text_response("Seen before.")],
        }
    )


def results(request: ModelRequest) -> list[dict[str, Any]]:
    """The tool results the model received, in call order, as the tools answered them."""
    found = []
    for content in request.contents:
        for part in content.parts or []:
            response = part.function_response
            if response is not None and response.response is not None:
                fenced = str(next(iter(v for k, v in response.response.items() if k != "ref")))
                found.append(json.loads(fenced[fenced.index("{") : fenced.rindex("}") + 1]))
    return found


@asynccontextmanager
async def scoped_bot(
    fake: FakeSlackAPI, settings: Settings, m: ScriptedModel
) -> AsyncIterator[SlackHarness]:
    """The real runtime and Slack app; the investigator scopes runs as ``socbot serve`` does."""
    async with open_runtime(settings, backend=m) as rt:
        client = build_client(settings.slack, backoff_s=0.01)
        pacer = Pacer(rate_per_s=200)
        investigate = EngineInvestigator(
            rt.engine,
            client,
            AlertStore(rt.db),
            pacer=pacer,
            update_interval=0.02,
            scoping=Scoping(settings.slack, ChannelMembers(client)),
        )
        async with SlackHarness(
            fake, settings, investigate, db=rt.db, client=client, pacer=pacer
        ) as h:
            yield h


def mention(channel: str) -> dict[str, Any]:
    payload = load("app_mention.json")
    payload["event"].update(channel=channel, text=f"<@UBOT0001> have we seen {IP}?")
    return payload


def direct_message(user: str) -> dict[str, Any]:
    payload = asked(user, f"have we seen {IP}?", "1700000400.000400", "EvDM0001")
    payload["event"].update(channel="DDIRECT01", thread_ts=None)
    payload["event"].pop("thread_ts")
    return payload


async def asked_through(
    fake: FakeSlackAPI, tmp_path: Path, *events: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    fake.add_members(ALERTS, [ME, OTHER])
    fake.add_members(WEBHOOK_CHANNEL, [OTHER])
    alerts = past()
    ids = {alert.title: alert.id for alert, _, _ in alerts}
    m = model(ids[THEIRS])
    async with scoped_bot(fake, make_settings(tmp_path, fake.base_url), m) as h:
        await seed(h.db, alerts)
        for event in events:
            assert (await h.event(event))[0] == 200
        await h.settle()
    [last] = m.requests_for("direct")[-1:]
    return results(last), ids


def assert_only_mine(seen: list[dict[str, Any]], ids: dict[str, str]) -> None:
    search, theirs, unknown = seen
    assert [a["title"] for a in search["alerts"]] == [MINE] and search["count"] == 1
    assert THEIRS not in json.dumps(seen) and ids[THEIRS] in json.dumps(theirs)
    assert theirs == {"error": f"no past alert with id {ids[THEIRS]!r}"}  # as an unknown id:
    assert unknown == {"error": f"no past alert with id {UNKNOWN!r}"}


async def test_a_mention_sees_its_channels_past_alerts_only(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    seen, ids = await asked_through(fake, tmp_path, mention(ALERTS))
    assert_only_mine(seen, ids)


async def test_a_direct_message_sees_the_askers_channels_only(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    seen, ids = await asked_through(fake, tmp_path, direct_message(ME))
    assert_only_mine(seen, ids)


async def test_the_pane_beside_a_channel_not_theirs_sees_their_channels_only(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    question = asked(ME, f"have we seen {IP}?", "1700000400.000400", "EvPANEQ1")
    seen, ids = await asked_through(fake, tmp_path, started(ME, WEBHOOK_CHANNEL), question)
    assert_only_mine(seen, ids)
    assert question["event"]["channel"] == PANE and question["event"]["thread_ts"] == PANE_TS


async def test_a_person_in_no_alert_channel_sees_no_past_alert(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    seen, ids = await asked_through(fake, tmp_path, direct_message(STRANGER))
    search, theirs, unknown = seen
    assert search["count"] == 0 and search["alerts"] == []
    assert search["note"] == "no past alert matches these filters"  # as when nothing matches
    assert theirs == {"error": f"no past alert with id {ids[THEIRS]!r}"}
    assert unknown == {"error": f"no past alert with id {UNKNOWN!r}"}
