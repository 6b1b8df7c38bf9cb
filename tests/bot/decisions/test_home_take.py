"""*Take it* on App Home (``bot.decisions.cases``) through the handler alone (the real
``AsyncWebClient`` against the Slack fake, the real stores on SQLite, no bolt app): the case
is the button's id, the click counts as made in the case's own thread, so the one rule of
``case_rules`` decides — a member of the case's channel — and the clicker hears of it on
their Home, never ephemerally. The whole app's path: ``tests/bot/scenarios/test_slack_home.py``.
The mutation group ``home_auth`` (``scripts/mutation.py``) runs these."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from bot.blocks.case import NO_CHANGE
from bot.blocks.home import HOME_TAKE
from bot.decisions.case_rules import NOT_HERE, NOT_MEMBER
from bot.decisions.cases import CaseActions
from bot.slack.members import ChannelMembers
from config.cases_settings import CaseSettings
from store.cases import records, transitions
from store.db.engine import Database
from store.playbook.feedback import FeedbackStore
from store.schema import CaseRow
from tests.bot.decisions.click_support import Acks, click, web_client
from tests.fakes.slack_api import FakeSlackAPI
from tests.store.cases.case_support import a_case

SOC, OPS, THREAD = "CSOC00001", "COPS00001", "1700000100.000100"
ANA, BOB, OUT = "UANA00001", "UBOB00001", "UOUT00001"


class Homes:
    """The ``home`` callback: (user, note) of every Home published again."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, user: str, note: str) -> None:
        self.calls.append((user, note))


def home_click(user: str, value: str | None, action_id: str = HOME_TAKE) -> dict[str, Any]:
    """A click on a Home view: no channel, no message, a ``view`` container."""
    body = click(action_id, value, user=user, channel=None, message=None)
    body.pop("channel")
    body.pop("message")
    body["container"] = {"type": "view", "view_id": "VHOME001"}
    body["view"] = {"id": "VHOME001", "type": "home", "blocks": []}
    return body


@pytest.fixture
async def case(db: Database, fake: FakeSlackAPI) -> CaseRow:
    fake.add_members(SOC, [ANA, BOB])
    fake.add_members(OPS, [OUT])
    return await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)


def handler(db: Database, fake: FakeSlackAPI, homes: Homes | None) -> tuple[CaseActions, list[int]]:
    nudged: list[int] = []
    actions = CaseActions(
        db,
        CaseSettings(),
        ChannelMembers(web_client(fake)),
        admins=[],
        feedback=FeedbackStore(db),
        nudge=lambda: nudged.append(1),
        home=homes,
    )
    return actions, nudged


async def press(actions: CaseActions, fake: FakeSlackAPI, body: dict[str, Any]) -> Acks:
    acks = Acks()
    await actions.on_take(acks, body, body["actions"][0], web_client(fake))
    return acks


async def owner(db: Database, case: CaseRow) -> str | None:
    stored = await records.get(db, case.id)
    assert stored is not None
    return stored.owner


async def test_a_member_takes_it_from_home(db: Database, fake: FakeSlackAPI, case: CaseRow) -> None:
    homes = Homes()
    actions, nudged = handler(db, fake, homes)
    acks = await press(actions, fake, home_click(ANA, str(case.id)))
    assert acks.calls == [{}]
    assert await owner(db, case) == ANA and nudged == [1]
    assert homes.calls == [(ANA, "")]  # the Home again, no note
    assert fake.calls_to("chat.postEphemeral") == []
    members = fake.calls_to("conversations.members")
    assert [c.args["channel"] for c in members] == [SOC]  # the case's channel was asked


async def test_someone_else_in_the_channel_takes_it_over(
    db: Database, fake: FakeSlackAPI, case: CaseRow
) -> None:
    homes = Homes()
    actions, _ = handler(db, fake, homes)
    assert await transitions.take(db, case.id, BOB, seen=1, via="test") is not None
    await press(actions, fake, home_click(ANA, str(case.id)))
    assert await owner(db, case) == ANA and homes.calls == [(ANA, "")]


async def test_not_a_member_is_refused_on_their_home(
    db: Database, fake: FakeSlackAPI, case: CaseRow
) -> None:
    homes = Homes()
    actions, nudged = handler(db, fake, homes)
    await press(actions, fake, home_click(OUT, str(case.id)))
    assert await owner(db, case) is None and nudged == []
    assert homes.calls == [(OUT, NOT_MEMBER)]
    assert fake.calls_to("chat.postEphemeral") == []


FORGED = ["999", "x1", "", None, "-1", "1.0", " 1", "²", "1" * 30, "\u0661"]


@pytest.mark.parametrize("value", FORGED)
async def test_a_forged_case_id_is_refused(
    db: Database, fake: FakeSlackAPI, case: CaseRow, value: str | None
) -> None:
    homes = Homes()
    actions, nudged = handler(db, fake, homes)
    await press(actions, fake, home_click(ANA, value))
    assert await owner(db, case) is None and nudged == []
    assert homes.calls == [(ANA, NOT_HERE)]


async def test_a_case_without_a_thread_is_not_taken_from_home(
    db: Database, fake: FakeSlackAPI
) -> None:
    fake.add_members(SOC, [ANA])
    case = await a_case(db, "inv-0002", channel=SOC, thread_ts=THREAD, alert_id="a-2")
    async with db.session() as session:
        await session.execute(update(CaseRow).where(CaseRow.id == case.id).values(thread_ts=None))
    homes = Homes()
    actions, _ = handler(db, fake, homes)
    await press(actions, fake, home_click(ANA, str(case.id)))
    assert await owner(db, case) is None and homes.calls == [(ANA, NOT_HERE)]


async def test_taking_your_own_case_again_changes_nothing(
    db: Database, fake: FakeSlackAPI, case: CaseRow
) -> None:
    homes = Homes()
    actions, nudged = handler(db, fake, homes)
    await press(actions, fake, home_click(ANA, str(case.id)))
    await press(actions, fake, home_click(ANA, str(case.id)))
    assert nudged == [1]
    assert homes.calls == [(ANA, ""), (ANA, NO_CHANGE.format(state=f"owned by <@{ANA}>"))]


async def test_the_case_id_counts_only_from_the_home_button(
    db: Database, fake: FakeSlackAPI, case: CaseRow
) -> None:
    """``case_take`` names a run and needs its thread: a case id there takes nothing."""
    homes = Homes()
    actions, _ = handler(db, fake, homes)
    await press(actions, fake, home_click(ANA, str(case.id), action_id="case_take"))
    assert await owner(db, case) is None and homes.calls == []


async def test_a_thread_click_is_still_told_in_the_thread(
    db: Database, fake: FakeSlackAPI, case: CaseRow
) -> None:
    homes = Homes()
    actions, _ = handler(db, fake, homes)
    body = click("case_take", "inv-0001", user=OUT, channel=SOC, thread_ts=THREAD)
    await press(actions, fake, body)
    assert homes.calls == []
    told = [(c.args["user"], c.args["text"]) for c in fake.calls_to("chat.postEphemeral")]
    assert told == [(OUT, NOT_MEMBER)]


async def test_without_a_home_nothing_is_published(
    db: Database, fake: FakeSlackAPI, case: CaseRow
) -> None:
    actions, nudged = handler(db, fake, None)
    await press(actions, fake, home_click(OUT, str(case.id)))
    await press(actions, fake, home_click(ANA, str(case.id)))
    assert await owner(db, case) == ANA and nudged == [1]
    assert fake.calls_to("chat.postEphemeral") == []
