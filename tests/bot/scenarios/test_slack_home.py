"""App Home through the real bolt app and the Slack fake (which refuses a view Slack refuses):
two people in different channels each see only their own channel's cases, verdicts, queue
and figures; *Take it* on the Home (allowed to a member of the case's channel, refused to
anyone else, the thread told once); Homes published again when a case changes, debounced.

``app_home_opened`` and the Home's ``block_actions`` follow Slack's documented shapes
(docs.slack.dev/reference/events/app_home_opened, interactivity payloads: ``container``
of type ``view``, no ``channel`` nor ``message``) — invented ids; the click starts from the
recorded ``block_actions`` delivery. Cases are opened as the investigator opens them
(``tests.store.cases.case_support.a_case``); their titles are hostile."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from bot.blocks.case import NO_CHANGE
from bot.blocks.home import HOME_TAKE
from bot.decisions.case_rules import NOT_HERE, NOT_MEMBER
from bot.slack.post_once import EVENT_TYPE
from config.settings import Settings
from store.cases import records, transitions
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.schema import CaseDisposition, CaseRow, WorkKind, WorkRow, WorkState, utcnow
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_home import published
from tests.slack_support import (
    WEBHOOK_CHANNEL,
    RecordingInvestigate,
    SlackHarness,
    load,
    make_settings,
)
from tests.slack_support import (
    WEBHOOK_TOKEN as TOKEN,
)
from tests.store.cases.case_support import a_case

SOC, OPS = "CSOC00001", "COPS00001"
SOC_THREAD, OPS_THREAD = "1700000100.000100", "1700000200.000200"
ANALYST, LEAD, OPERATOR, NOBODY = "UANALYST1", "ULEAD0001", "UOPERATE1", "UNOBODY01"
SOC_TITLE = "<!channel> soc miner on 185.220.101.42 *now*"
OPS_TITLE = "ops: odd login <https://evil.example|docs>"
REFRESH_S = 3.0


def opened(user: str, tab: str = "home", n: int = 1) -> dict[str, Any]:
    """``app_home_opened`` as Slack documents it."""
    return {
        "token": "fake-verification-token",
        "team_id": "T0TEST01",
        "api_app_id": "A0SOCBOT01",
        "event": {
            "type": "app_home_opened",
            "user": user,
            "channel": "DHOME0001",
            "tab": tab,
            "event_ts": f"1700000500.{n:06d}",
        },
        "type": "event_callback",
        "event_id": f"EvHOME{user}{tab}{n}",
        "event_time": 1700000500,
    }


def take(user: str, value: str) -> dict[str, Any]:
    """*Take it* clicked on the Home: the recorded click, moved into a Home view."""
    payload = load("block_actions_feedback.json")
    payload["user"]["id"] = user
    for key in ("channel", "message", "response_url"):
        payload.pop(key)
    payload["container"] = {"type": "view", "view_id": "VHOME001"}
    payload["view"] = {"id": "VHOME001", "type": "home", "blocks": [], "state": {"values": {}}}
    payload["actions"][0].update(action_id=HOME_TAKE, block_id=f"home_unowned_{value}", value=value)
    return payload


@pytest.fixture
def settings(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    fake.add_members(SOC, [ANALYST, LEAD, "UBOT0001"])
    fake.add_members(OPS, [OPERATOR, "UBOT0001"])
    base = make_settings(
        tmp_path, fake.base_url, alert_channels=[SOC, OPS], home_refresh_s=REFRESH_S
    )
    return base.model_copy(
        update={"web": base.web.model_copy(update={"base_url": "https://socbot.example"})}
    )


async def _cases(db: Database) -> tuple[CaseRow, CaseRow]:
    soc = await a_case(db, "run-soc", channel=SOC, thread_ts=SOC_THREAD, alert_id="a-soc")
    ops = await a_case(
        db, "run-ops", channel=OPS, thread_ts=OPS_THREAD, alert_id="a-ops", verdict="benign"
    )
    async with db.session() as session:
        for case, title, cost in ((soc, SOC_TITLE, 0.25), (ops, OPS_TITLE, 4.0)):
            await session.execute(
                update(CaseRow).where(CaseRow.id == case.id).values(title=title, cost_usd=cost)
            )
        later = utcnow() + timedelta(hours=1)  # never claimed while the test runs
        for kind, channel in ((WorkKind.ALERT, SOC), (WorkKind.POLICY_DEFERRED, OPS)):
            session.add(
                WorkRow(
                    kind=kind,
                    state=WorkState.QUEUED,
                    priority=1,
                    thread=f"test:{channel}",
                    channel=channel,
                    thread_ts="1700000999.000999",
                    request={},
                    attempts=0,
                    stop_requested=False,
                    posted={},
                    not_before=later.replace(tzinfo=None),
                    created_at=utcnow(),
                )
            )
    return soc, ops


@pytest.fixture
async def harness(fake: FakeSlackAPI, settings: Settings) -> AsyncIterator[SlackHarness]:
    async with SlackHarness(fake, settings, RecordingInvestigate(fake)) as h:
        h.soc, h.ops = await _cases(h.db)  # type: ignore[attr-defined]
        yield h


def publishes(fake: FakeSlackAPI, user: str) -> list[dict[str, Any]]:
    return [c.args["view"] for c in fake.calls_to("views.publish") if c.args["user_id"] == user]


async def home_of(h: SlackHarness, user: str, count: int = 1) -> str:
    """``user``'s Home once ``count`` views were published to them (all accepted)."""
    await h.fake.wait_for(lambda: len(publishes(h.fake, user)) >= count)
    assert all(c.status == 200 for c in h.fake.calls_to("views.publish"))
    assert len(published(h.fake)) >= 1  # accepted: the fake's Block Kit check passed
    return str(publishes(h.fake, user)[count - 1])


def thread_posts(fake: FakeSlackAPI, thread: str) -> list[str]:
    return [
        m.text
        for m in fake.messages
        if m.thread_ts == thread and m.extra.get("metadata", {}).get("event_type") == EVENT_TYPE
    ]


async def test_each_person_sees_only_their_channels(harness: SlackHarness) -> None:
    h = harness
    agreed = Resolution(CaseDisposition.TRUE_POSITIVE)
    assert await transitions.resolve(h.db, h.soc.id, LEAD, agreed, seen=1, via="test")
    for user in (ANALYST, OPERATOR, NOBODY):
        assert (await h.event(opened(user)))[0] == 200
    mine, theirs, nobody = [await home_of(h, u) for u in (ANALYST, OPERATOR, NOBODY)]
    assert "soc miner" in mine and "ops: odd login" not in mine
    assert "ops: odd login" in theirs and "soc miner" not in theirs
    assert "<!channel>" not in mine and "185.220.101[.]42" in mine  # escaped, defanged
    assert "<https://evil" not in theirs
    assert "*1* waiting · *0* running · *0* held by policy" in mine
    assert "*0* waiting · *0* running · *1* held by policy" in theirs
    assert "1 cases · agreement *100 %* (1 of 1 decided) · cost $0.25" in mine
    assert "1 cases · agreement: nothing decided yet · cost $4.00" in theirs
    assert "web/investigations/run-soc" in mine and "run-ops" not in mine
    assert nobody.count("Nothing here.") == 3 and "*0* waiting" in nobody
    assert "soc miner" not in nobody and "ops: odd" not in nobody
    await h.event(opened(OPERATOR, tab="messages", n=2))
    await h.event(opened(OPERATOR, n=3))  # published a moment ago: not again
    await h.handed_over()
    assert len(publishes(h.fake, OPERATOR)) == 1


async def test_take_from_home(harness: SlackHarness) -> None:
    h, soc = harness, harness.soc  # type: ignore[attr-defined]
    await h.event(opened(OPERATOR))
    await home_of(h, OPERATOR)
    await h.action(take(OPERATOR, str(soc.id)))  # not a member of the case's channel
    told = await home_of(h, OPERATOR, 2)
    assert NOT_MEMBER in told and "soc miner" not in told
    for forged in ("999", "x1", ""):
        await h.action(take(ANALYST, forged))
    await h.fake.wait_for(lambda: len(publishes(h.fake, ANALYST)) >= 3)
    assert all(NOT_HERE in str(v) for v in publishes(h.fake, ANALYST))
    assert (await records.get(h.db, soc.id)).owner is None  # type: ignore[union-attr]

    await h.action(take(ANALYST, str(soc.id)))
    after = await home_of(h, ANALYST, 4)
    assert (await records.get(h.db, soc.id)).owner == ANALYST  # type: ignore[union-attr]
    assert f"home_mine_{soc.id}" in after and f"home_unowned_{soc.id}" not in after
    assert "⚠️" not in after
    await h.settle()
    await h.fake.wait_for(lambda: len(thread_posts(h.fake, SOC_THREAD)) == 1)
    await h.action(take(ANALYST, str(soc.id)))  # again: nothing to change
    again = await home_of(h, ANALYST, 5)
    assert NO_CHANGE.format(state=f"owned by <@{ANALYST}>") in again
    await h.settle()
    assert len(thread_posts(h.fake, SOC_THREAD)) == 1  # told once
    assert not h.fake.calls_to("chat.postEphemeral")  # Home clicks are answered on the Home
    assert thread_posts(h.fake, OPS_THREAD) == []


async def test_homes_refresh_after_a_change_debounced(harness: SlackHarness) -> None:
    """Two changes in a row: each member who opened their Home gets it once more, not
    before ``home_refresh_s`` after the last, showing both; a non-member gets nothing."""
    h, soc = harness, harness.soc  # type: ignore[attr-defined]
    for user in (ANALYST, LEAD, OPERATOR):
        await h.event(opened(user))
    for user in (ANALYST, LEAD, OPERATOR):
        await home_of(h, user)
    first = h.fake.calls_to("views.publish")[0].at
    assert await transitions.take(h.db, soc.id, LEAD, seen=1, via="test") is not None
    resolved = Resolution(CaseDisposition.BENIGN)
    assert await transitions.resolve(h.db, soc.id, LEAD, resolved, seen=2, via="test")
    h.app.coordinator.nudge()
    await h.fake.wait_for(lambda: len(thread_posts(h.fake, SOC_THREAD)) == 2)
    shown = await home_of(h, ANALYST, 2)
    await home_of(h, LEAD, 2)
    again = [c for c in h.fake.calls_to("views.publish") if c.args["user_id"] == ANALYST][-1]
    assert again.at - first >= REFRESH_S / 2  # held back by the debounce
    assert f"home_unowned_{soc.id}" not in shown and f"home_verdicts_{soc.id}" in shown
    await h.settle()
    assert h.app.home is not None and h.app.home.refresh.due() == {}  # coalesced: no third
    assert len(publishes(h.fake, ANALYST)) == 2 and len(publishes(h.fake, LEAD)) == 2
    assert len(publishes(h.fake, OPERATOR)) == 1  # not a member of the case's channel


class OpeningCases(RecordingInvestigate):
    """Each run opens its alert's case as the investigator does (before its row ends)."""

    db: Database

    async def __call__(
        self, thread: Any, text: str, alert: Any, *, user: str | None = None
    ) -> None:
        await super().__call__(thread, text, alert, user=user)
        n = len(self.calls)
        case = await a_case(
            self.db,
            f"run-storm-{n}",
            alert_id=f"a-storm-{n}",
            channel=thread.channel,
            thread_ts=thread.thread_ts,
        )
        async with self.db.session() as session:
            await session.execute(
                update(CaseRow).where(CaseRow.id == case.id).values(title=f"storm case {n}")
            )


async def test_a_storm_of_alerts_refreshes_each_home_once_per_interval(
    fake: FakeSlackAPI, settings: Settings
) -> None:
    """50 alerts into the webhook channel: every row queued, started and ended there moves
    the queue (and each run opens a case with its verdict); a member who opened their Home
    gets it again at most once per ``home_refresh_s``, the last showing the new cases and
    an empty queue; a non-member's Home is never published again."""
    fake.add_members(WEBHOOK_CHANNEL, [ANALYST, "UBOT0001"])
    investigate = OpeningCases(fake)
    async with SlackHarness(fake, settings, investigate) as h:
        investigate.db = h.db
        for user in (ANALYST, OPERATOR):
            await h.event(opened(user))
            await home_of(h, user)
        began = h.fake.calls_to("views.publish")[0].at
        bodies = [{"title": f"Odd login {n}", "source_ip": f"9.9.{n}.1"} for n in range(50)]
        for body in bodies:
            response = await h.client.post(
                "/alerts", data=json.dumps(body), headers={"Authorization": f"Bearer {TOKEN}"}
            )
            assert response.status == 202
        await h.app.webhook.drain()
        await h.fake.wait_for(lambda: len(investigate.ended) >= 1)
        await h.settle()
        await h.fake.wait_for(lambda: h.app.home is not None and h.app.home.refresh.due() == {})
        ended = h.fake.calls_to("views.publish")[-1].at
        mine = [c.at for c in h.fake.calls_to("views.publish") if c.args["user_id"] == ANALYST]
        assert 2 <= len(mine) <= 2 + (ended - began) / REFRESH_S
        gaps = [b - a for a, b in itertools.pairwise(mine)]
        assert min(gaps) >= REFRESH_S / 2, gaps  # started ≥ REFRESH_S apart; reads vary
        assert len(publishes(h.fake, OPERATOR)) == 1  # not in the webhook channel
        last = str(publishes(h.fake, ANALYST)[-1])
        assert "storm case" in last and "*0* waiting · *0* running" in last
