"""Who may take, assign, resolve and reopen a case (``bot.decisions.case_rules.refusal``),
every rule with its exact refusal; then the handlers alone (``CaseActions``: the real
``AsyncWebClient`` against the Slack fake, the real stores on SQLite, no bolt app), so
that the mutation group ``cases_auth`` (``scripts/mutation.py``) runs in seconds per
mutant. The whole app's paths are ``tests/bot/scenarios/test_slack_cases.py``'s."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bot.decisions.case_rules import (
    BAD_ASSIGNEE,
    NOT_HERE,
    NOT_MEMBER,
    OWNER_ONLY,
    Decision,
    Rules,
    Where,
    refusal,
)
from bot.decisions.cases import CaseActions
from bot.slack.members import ChannelMembers
from config.cases_settings import CaseSettings
from store.cases import records, transitions
from store.db.engine import Database
from store.playbook.feedback import FeedbackStore
from store.schema import CaseDisposition
from tests.bot.decisions.click_support import Acks, click, told, web_client
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import BOT_USER_ID, FakeSlackAPI
from tests.store.cases.case_support import a_case, concluded

SOC, THREAD = "CSOC00001", "1700000100.000100"
ANA, BOB, LEAD = "UANA00001", "UBOB00001", "ULEAD0001"
MEMBERS = frozenset({ANA, BOB, LEAD, "UBOT"})
OPEN = Where(SOC, THREAD, None)
OWNED = Where(SOC, THREAD, BOB)
FREE = Rules(resolve_requires_owner=False, approvers=frozenset({LEAD}), bot_user="UBOT")
OWNERS = Rules(resolve_requires_owner=True, approvers=frozenset({LEAD}), bot_user="UBOT")


def why(
    decision: Decision,
    user: str = ANA,
    *,
    channel: str = SOC,
    thread: str = THREAD,
    case: Where | None = OPEN,
    rules: Rules = FREE,
    assignee: str = "",
    members: frozenset[str] = MEMBERS,
) -> str | None:
    return refusal(
        decision,
        user,
        channel=channel,
        thread_ts=thread,
        case=case,
        members=members,
        rules=rules,
        assignee=assignee,
    )


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: why("take"), None),
        (lambda: why("take", ""), NOT_HERE),  # nobody named
        (lambda: why("take", case=None), NOT_HERE),  # no case
        (lambda: why("explode"), NOT_HERE),  # type: ignore[arg-type]  # not a decision
        (lambda: why("take", channel="COTHER001"), NOT_HERE),
        (lambda: why("take", thread="1700000999.000100"), NOT_HERE),
        (lambda: why("take", case=Where(None, THREAD, None), channel=""), NOT_HERE),
        (lambda: why("take", case=Where("", THREAD, None), channel=""), NOT_HERE),
        (lambda: why("take", "UOUT00001"), NOT_MEMBER),
        (lambda: why("take", members=frozenset()), NOT_MEMBER),  # Slack could not say
        (lambda: why("assign", assignee=BOB), None),
        (lambda: why("assign", assignee=""), BAD_ASSIGNEE),
        (lambda: why("assign", assignee="UOUT00001"), BAD_ASSIGNEE),
        (lambda: why("assign", assignee="UBOT"), BAD_ASSIGNEE),  # never to socbot
        (lambda: why("assign", "UOUT00001", assignee=BOB), NOT_MEMBER),
        (lambda: why("take", assignee="UOUT00001"), None),  # only an assignment names one
        (lambda: why("assign", assignee=BOB, rules=Rules(False, frozenset())), BAD_ASSIGNEE),
        (lambda: why("take", rules=Rules(False, frozenset())), None),  # socbot's id unknown
        (lambda: why("resolve"), None),
        (lambda: why("reopen"), None),
        (lambda: why("resolve", rules=OWNERS), OWNER_ONLY),  # unowned: approvers only
        (lambda: why("resolve", LEAD, rules=OWNERS), None),
        (lambda: why("resolve", BOB, case=OWNED, rules=OWNERS), None),
        (lambda: why("resolve", ANA, case=OWNED, rules=OWNERS), OWNER_ONLY),
        (lambda: why("reopen", ANA, case=OWNED, rules=OWNERS), OWNER_ONLY),
        (lambda: why("reopen", BOB, case=OWNED, rules=OWNERS), None),
        (lambda: why("take", ANA, case=OWNED, rules=OWNERS), None),  # taking is not resolving
        (lambda: why("assign", ANA, case=OWNED, rules=OWNERS, assignee=ANA), None),
        (lambda: why("resolve", "UOUT00001", case=OWNED, rules=OWNERS), NOT_MEMBER),
        (lambda: why("audit"), None),  # a blind review: authorised as resolving
        (lambda: why("audit", "UOUT00001"), NOT_MEMBER),
        (lambda: why("audit", thread="1700000999.000100"), NOT_HERE),
        (lambda: why("audit", rules=OWNERS, case=Where(SOC, THREAD, "socbot")), OWNER_ONLY),
        (lambda: why("audit", LEAD, rules=OWNERS, case=Where(SOC, THREAD, "socbot")), None),
    ],
)
def test_the_rules(call: Any, expected: str | None) -> None:
    assert call() == expected


# --- the handlers -------------------------------------------------------------------


def actions(db: Database, fake: FakeSlackAPI, **settings: Any) -> tuple[CaseActions, list[int]]:
    client = web_client(fake)
    nudged: list[int] = []
    handler = CaseActions(
        db,
        CaseSettings(**settings),
        ChannelMembers(client),
        admins=[LEAD],
        feedback=FeedbackStore(db),
        nudge=lambda: nudged.append(1),
    )
    return handler, nudged


async def test_a_member_takes_the_case_in_its_thread(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(SOC, [ANA, BOB])
    case = await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    handler, nudged = actions(db, fake)
    body = click("case_take", "inv-0001", user=ANA, channel=SOC, thread_ts=THREAD)
    await handler.on_take(Acks(), body, body["actions"][0], web_client(fake))
    stored = await records.get(db, case.id)
    assert stored is not None and (stored.owner, stored.revision) == (ANA, 2)
    assert nudged == [1] and told(fake) == []


@pytest.mark.parametrize(
    ("user", "channel", "thread", "value", "refused"),
    [
        ("UOUT00001", SOC, THREAD, "inv-0001", NOT_MEMBER),
        (ANA, "COTHER001", THREAD, "inv-0001", NOT_HERE),
        (ANA, SOC, "1700000999.000100", "inv-0001", NOT_HERE),
        (ANA, SOC, THREAD, "inv-other", NOT_HERE),
        (ANA, SOC, THREAD, "", NOT_HERE),
    ],
)
async def test_refused_takes(
    db: Database,
    fake: FakeSlackAPI,
    user: str,
    channel: str,
    thread: str,
    value: str,
    refused: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake.add_members(SOC, [ANA, BOB])
    fake.add_members("COTHER001", [ANA])
    case = await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    handler, nudged = actions(db, fake)
    body = click("case_take", value, user=user, channel=channel, thread_ts=thread)
    with caplog.at_level(logging.WARNING, logger="bot.decisions.cases"):
        await handler.on_take(Acks(), body, body["actions"][0], web_client(fake))
    stored = await records.get(db, case.id)
    assert stored is not None and (stored.owner, stored.revision) == (None, 1)
    assert nudged == [] and [t[1:3] for t in told(fake)] == [(user, refused)]
    said = [r.getMessage() for r in caplog.records if r.name == "bot.decisions.cases"]
    assert said == [f"case take by {user} in {channel} refused: {refused}"]


async def test_assign_checks_the_assignee(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(SOC, [ANA, BOB, BOT_USER_ID])
    case = await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    handler, _ = actions(db, fake)
    for assignee in (BOT_USER_ID, "UOUT00001", BOB):
        body = click("case_assign", None, user=ANA, channel=SOC, thread_ts=THREAD)
        body["actions"][0].update(block_id="case:inv-0001", selected_user=assignee)
        await handler.on_assign(Acks(), body, body["actions"][0], web_client(fake))
    stored = await records.get(db, case.id)
    assert stored is not None and stored.owner == BOB
    assert [t[2] for t in told(fake)] == [BAD_ASSIGNEE, BAD_ASSIGNEE]


async def test_resolving_when_restricted(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(SOC, [ANA, BOB, LEAD])
    await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    handler, _ = actions(db, fake, resolve_requires_owner=True)
    for user in (ANA, LEAD):
        body = click("case_resolve", "inv-0001", user=user, channel=SOC, thread_ts=THREAD)
        await handler.on_resolve_button(Acks(), body, body["actions"][0], web_client(fake))
    assert [t[1:3] for t in told(fake)] == [(ANA, OWNER_ONLY)]
    opened = fake.calls_to("views.open")
    assert len(opened) == 1 and opened[0].args["view"]["callback_id"] == "case_resolve_dialog"


async def test_a_slack_error_on_membership_refuses(db: Database, fake: FakeSlackAPI) -> None:
    await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)  # no members seeded: an error
    handler, _ = actions(db, fake)
    body = click("case_take", "inv-0001", user=ANA, channel=SOC, thread_ts=THREAD)
    await handler.on_take(Acks(), body, body["actions"][0], web_client(fake))
    assert [t[2] for t in told(fake)] == [NOT_MEMBER]


async def test_the_owner_resolves_when_restricted(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(SOC, [ANA, BOB])
    case = await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    await transitions.take(db, case.id, BOB, seen=1, via="cli")
    handler, _ = actions(db, fake, resolve_requires_owner=True)
    body = click("case_resolve", "inv-0001", user=BOB, channel=SOC, thread_ts=THREAD)
    await handler.on_resolve_button(Acks(), body, body["actions"][0], web_client(fake))
    assert told(fake) == [] and len(fake.calls_to("views.open")) == 1


@pytest.mark.parametrize("where", [{"value": "inv-other"}, {"channel": None}])
async def test_a_click_on_no_case_of_its_channel_asks_slack_nothing(
    db: Database, fake: FakeSlackAPI, where: dict[str, Any]
) -> None:
    fake.add_members(SOC, [ANA])
    await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    handler, _ = actions(db, fake)
    where = dict(where)  # the parameter itself is shared by every run of this test
    value = where.pop("value", "inv-0001")
    body = click("case_take", value, user=ANA, thread_ts=THREAD, **where)
    await handler.on_take(Acks(), body, body["actions"][0], web_client(fake))
    assert fake.calls_to("conversations.members") == []


async def test_a_mention_becomes_a_case_when_taken(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(SOC, [ANA])
    await concluded(db, "inv-0002", alert_id=None, channel=SOC, thread_ts=THREAD)
    assert await records.of_run(db, "inv-0002") is None
    handler, _ = actions(db, fake)
    body = click("case_take", "inv-0002", user=ANA, channel=SOC, thread_ts=THREAD)
    await handler.on_take(Acks(), body, body["actions"][0], web_client(fake))
    case = await records.of_run(db, "inv-0002")
    assert case is not None and (case.owner, case.alert_id, case.revision) == (ANA, None, 2)


async def test_socbot_not_knowing_its_id_assigns_nobody(
    db: Database, fake: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.add_members(SOC, [ANA, BOB])
    fake.fail_next("auth.test", error="invalid_auth")
    await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    handler, _ = actions(db, fake)
    body = click("case_assign", None, user=ANA, channel=SOC, thread_ts=THREAD)
    body["actions"][0].update(block_id="case:inv-0001", selected_user=BOB)
    with caplog.at_level(logging.WARNING, logger="bot.decisions.cases"):
        await handler.on_assign(Acks(), body, body["actions"][0], web_client(fake))
    assert [t[2] for t in told(fake)] == [BAD_ASSIGNEE]
    assert "auth.test failed: The request to the Slack API failed." in caplog.text
    await handler.on_assign(Acks(), body, body["actions"][0], web_client(fake))  # asked again
    stored = await records.of_run(db, "inv-0001")
    assert stored is not None and stored.owner == BOB
    assert len(fake.calls_to("auth.test")) == 2


@pytest.mark.parametrize(("value", "reopened"), [("{id}", True), ("x{id}", False), ("", False)])
async def test_reopen_finds_the_case_by_its_id(
    db: Database, fake: FakeSlackAPI, value: str, reopened: bool, caplog: pytest.LogCaptureFixture
) -> None:
    fake.add_members(SOC, [ANA])
    case = await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    done = await transitions.resolve(
        db, case.id, ANA, transitions.Resolution(CaseDisposition.BENIGN), seen=1, via="cli"
    )
    assert done is not None
    handler, nudged = actions(db, fake)
    body = click("case_reopen", value.format(id=case.id), user=ANA, channel=SOC, thread_ts=THREAD)
    acks = Acks()
    with caplog.at_level(logging.WARNING, logger="bot.decisions.cases"):
        await handler.on_reopen(acks, body, body["actions"][0], web_client(fake))
    stored = await records.get(db, case.id)
    assert stored is not None and acks.calls == [{}]
    assert (stored.status == "acknowledged", stored.revision) == (reopened, 3 if reopened else 2)
    assert nudged == ([1] if reopened else [])
    assert [t[1:3] for t in told(fake)] == ([] if reopened else [(ANA, NOT_HERE)])
    assert ("case reopen by" in caplog.text) is not reopened


async def test_every_click_is_acknowledged_once(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(SOC, [ANA, BOB])
    await a_case(db, "inv-0001", channel=SOC, thread_ts=THREAD)
    handler, _ = actions(db, fake)
    for name, handle in (
        ("case_take", handler.on_take),
        ("case_resolve", handler.on_resolve_button),
    ):
        acks = Acks()
        body = click(name, "inv-0001", user=BOB, channel=SOC, thread_ts=THREAD)
        await handle(acks, body, body["actions"][0], web_client(fake))
        assert acks.calls == [{}]
    acks = Acks()
    body = click("case_assign", None, user=ANA, channel=SOC, thread_ts=THREAD)
    body["actions"][0].update(block_id="case:inv-0001", selected_user=ANA)
    await handler.on_assign(acks, body, body["actions"][0], web_client(fake))
    stored = await records.of_run(db, "inv-0001")
    assert acks.calls == [{}] and stored is not None and stored.owner == ANA
