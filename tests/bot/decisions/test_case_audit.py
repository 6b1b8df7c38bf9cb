"""The blind review's handlers alone (``CaseAudits``: the real ``AsyncWebClient`` against the
Slack fake, real SQLite): who may open and send the dialog, what it shows, what is recorded
— each refusal exact."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from sqlalchemy import select

from bot.decisions._audit_dialog import AUDIT_VIEW_ID, CHOOSE, read_answer
from bot.decisions.case_audit import NOT_DRAWN, REVIEWED, CaseAudits
from bot.decisions.case_rules import NOT_HERE, NOT_MEMBER, OWNER_ONLY
from bot.decisions.cases import CaseActions
from bot.slack.members import ChannelMembers
from config.cases_settings import CaseSettings
from store.cases import records, transitions
from store.db.engine import Database
from store.playbook.feedback import FeedbackStore
from store.schema import CaseDisposition, CaseRow, WorkKind, WorkRow
from tests.bot.decisions.click_support import Acks, click, told, web_client
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import FakeSlackAPI
from tests.store.cases.auto_support import a_rule, concluded_case, resolver

ANA, LEAD, OUT = "UANA00001", "ULEAD0001", "UOUT00001"
CHANNEL = "CALERTS1"


def audits(db: Database, fake: FakeSlackAPI, **settings: Any) -> tuple[CaseAudits, list[int]]:
    nudged: list[int] = []
    actions = CaseActions(
        db,
        CaseSettings(**settings),
        ChannelMembers(web_client(fake)),
        admins=[LEAD],
        feedback=FeedbackStore(db),
        nudge=lambda: nudged.append(1),
    )
    return CaseAudits(actions), nudged


async def auto_case(db: Database, share: float = 1.0, n: int = 1) -> CaseRow:
    case = await concluded_case(db, n, a_rule(auto_resolve={"audit_share": share}))
    done = await resolver(db)(case)
    assert done is not None
    return done.case


def review(case: CaseRow, user: str = ANA, **where: Any) -> dict[str, Any]:
    spot = {"channel": case.channel, "thread_ts": case.thread_ts, **where}
    return click("case_audit", str(case.id), user=user, **spot)


def sent(case: CaseRow, answer: Any, user: str = ANA, **meta: Any) -> dict[str, Any]:
    metadata = {"case_id": case.id, "channel": case.channel, "thread_ts": case.thread_ts, **meta}
    values = {"disposition": {"disposition": {"selected_option": {"value": answer}}}}
    return {
        "user": {"id": user},
        "view": {"private_metadata": json.dumps(metadata), "state": {"values": values}},
    }


async def press(handler: CaseAudits, fake: FakeSlackAPI, body: dict[str, Any]) -> Acks:
    acks = Acks()
    await handler.on_review_button(acks, body, body["actions"][0], web_client(fake))
    return acks


async def submit(handler: CaseAudits, fake: FakeSlackAPI, body: dict[str, Any]) -> Acks:
    acks = Acks()
    await handler.on_review(acks, body, body["view"], web_client(fake))
    return acks


async def test_a_member_opens_the_blind_dialog(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(CHANNEL, [ANA])
    case = await auto_case(db)
    handler, _ = audits(db, fake)
    acks = await press(handler, fake, review(case))
    assert acks.calls == [{}] and told(fake) == []
    [opened] = fake.calls_to("views.open")
    assert opened.args["trigger_id"] == "1234567890.1234567890.abcdef"
    view = opened.args["view"]
    assert view["callback_id"] == AUDIT_VIEW_ID
    assert json.loads(view["private_metadata"]) == {
        "case_id": case.id,
        "channel": CHANNEL,
        "thread_ts": case.thread_ts,
    }
    about = view["blocks"][0]["elements"][0]["text"]
    assert about == f"Case #{case.id} · guardduty · Odd login"
    options = view["blocks"][2]["element"]["options"]
    assert [o["value"] for o in options] == [
        "true_positive",
        "false_positive",
        "benign",
        "duplicate",
    ]
    assert "initial_option" not in view["blocks"][2]["element"]


@pytest.mark.parametrize(
    ("user", "where", "refused"),
    [
        (OUT, {}, NOT_MEMBER),
        (ANA, {"channel": "COTHER001"}, NOT_HERE),
        (ANA, {"thread_ts": "1700000999.000100"}, NOT_HERE),
        ("", {}, NOT_HERE),
    ],
)
async def test_refused_clicks(
    db: Database, fake: FakeSlackAPI, user: str, where: dict[str, Any], refused: str
) -> None:
    fake.add_members(CHANNEL, [ANA])
    fake.add_members("COTHER001", [ANA])
    case = await auto_case(db)
    handler, _ = audits(db, fake)
    body = review(case, user, **where)
    await press(handler, fake, body)
    assert fake.calls_to("views.open") == []
    spot = (body["channel"]["id"], user, refused, body["message"]["thread_ts"])
    assert told(fake) == [spot]


async def test_unknown_or_undrawn_cases_take_no_review(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(CHANNEL, [ANA])
    undrawn = await auto_case(db, share=0.0)
    human = await concluded_case(db, 2, None)
    handler, _ = audits(db, fake)
    await press(handler, fake, review(undrawn))
    await press(handler, fake, review(human))
    body = review(undrawn)
    body["actions"][0]["value"] = "12x"
    await press(handler, fake, body)
    assert fake.calls_to("views.open") == []
    assert [t[2] for t in told(fake)] == [NOT_DRAWN, NOT_DRAWN, NOT_HERE]


async def test_an_answer_is_recorded_once(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(CHANNEL, [ANA, LEAD])
    case = await auto_case(db)
    handler, nudged = audits(db, fake)
    acks = await submit(handler, fake, sent(case, "true_positive"))
    assert acks.calls == [{}] and nudged == [1]
    now = await records.get(db, case.id)
    assert now is not None
    assert (now.audit_disposition, now.audit_by, now.revision) == ("true_positive", ANA, 3)
    await submit(handler, fake, sent(case, "benign", LEAD))
    again = await records.get(db, case.id)
    assert again is not None and (again.audit_disposition, again.audit_by) == ("true_positive", ANA)
    assert nudged == [1] and told(fake) == [(CHANNEL, LEAD, REVIEWED, case.thread_ts)]
    [event] = [e for e in await records.history(db, case.id) if e.action == "audited"]
    assert (event.actor, event.via, event.detail) == (
        ANA,
        "slack",
        {"audit_disposition": "true_positive"},
    )
    await press(handler, fake, review(case))  # nothing left to review
    assert told(fake)[-1] == (CHANNEL, ANA, REVIEWED, case.thread_ts)
    assert fake.calls_to("views.open") == []


async def test_a_reopen_in_between_does_not_lose_the_answer(
    db: Database, fake: FakeSlackAPI
) -> None:
    fake.add_members(CHANNEL, [ANA])
    case = await auto_case(db)
    handler, nudged = audits(db, fake)
    body = sent(case, "benign")
    real = records.get
    calls = 0

    async def stale_first(db_: Database, case_id: int) -> CaseRow | None:
        nonlocal calls
        calls += 1
        found = await real(db_, case_id)
        if calls == 1:  # the case as the dialog saw it; a reopen lands right after
            assert await transitions.reopen(db, case_id, LEAD, seen=2, via="cli")
        return found

    records_get = "bot.decisions.case_audit.records.get"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records_get, stale_first)
        await submit(handler, fake, body)
    now = await records.get(db, case.id)
    assert now is not None and (now.audit_disposition, now.revision) == ("benign", 4)
    assert nudged == [1] and told(fake) == []


@pytest.mark.parametrize("answer", [None, "inconclusive", "TRUE_POSITIVE", ["benign"], {"v": 1}])
async def test_an_answer_not_listed_is_asked_again(
    db: Database, fake: FakeSlackAPI, answer: Any
) -> None:
    fake.add_members(CHANNEL, [ANA])
    case = await auto_case(db)
    handler, nudged = audits(db, fake)
    acks = await submit(handler, fake, sent(case, answer))
    assert acks.calls == [{"response_action": "errors", "errors": {"disposition": CHOOSE}}]
    assert (await records.get(db, case.id)).audit_disposition is None  # type: ignore[union-attr]
    assert nudged == []


async def test_broken_metadata_records_nothing(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(CHANNEL, [ANA])
    case = await auto_case(db)
    handler, _ = audits(db, fake)
    body = sent(case, "benign")
    body["view"]["private_metadata"] = "{not json"
    acks = await submit(handler, fake, body)
    assert acks.calls == [{}] and told(fake) == []
    body = sent(case, "benign", case_id=case.id + 99)
    await submit(handler, fake, body)
    assert [t[2] for t in told(fake)] == [NOT_HERE]
    assert (await records.get(db, case.id)).audit_disposition is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("user", "meta", "refused"),
    [
        (OUT, {}, NOT_MEMBER),
        (ANA, {"channel": "COTHER001"}, NOT_HERE),
        (ANA, {"thread_ts": "1700000999.000100"}, NOT_HERE),
    ],
)
async def test_refused_submissions(
    db: Database, fake: FakeSlackAPI, user: str, meta: dict[str, Any], refused: str
) -> None:
    fake.add_members(CHANNEL, [ANA])
    fake.add_members("COTHER001", [ANA])
    case = await auto_case(db)
    handler, nudged = audits(db, fake)
    body = sent(case, "benign", user, **meta)
    await submit(handler, fake, body)
    assert (await records.get(db, case.id)).audit_disposition is None  # type: ignore[union-attr]
    where = json.loads(body["view"]["private_metadata"])
    assert nudged == [] and told(fake) == [(where["channel"], user, refused, where["thread_ts"])]


async def test_restricted_only_an_approver_reviews(db: Database, fake: FakeSlackAPI) -> None:
    fake.add_members(CHANNEL, [ANA, LEAD])
    case = await auto_case(db)
    handler, _ = audits(db, fake, resolve_requires_owner=True)
    await press(handler, fake, review(case, ANA))
    await submit(handler, fake, sent(case, "benign", ANA))
    await press(handler, fake, review(case, LEAD))
    assert [t[1:3] for t in told(fake)] == [(ANA, OWNER_ONLY), (ANA, OWNER_ONLY)]
    assert len(fake.calls_to("views.open")) == 1
    await submit(handler, fake, sent(case, "benign", LEAD))
    assert (await records.get(db, case.id)).audit_by == LEAD  # type: ignore[union-attr]


def test_read_answer() -> None:
    values = {"disposition": {"disposition": {"selected_option": {"value": "benign"}}}}
    assert read_answer(values) == CaseDisposition.BENIGN
    assert read_answer({}) is None
    assert read_answer({"disposition": None}) is None


def logged(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER]


LOGGER = "bot.decisions.case_audit"


async def test_what_the_operator_reads_in_the_log(
    db: Database, fake: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.add_members(CHANNEL, [ANA])
    case = await auto_case(db)
    handler, _ = audits(db, fake)
    body = review(case)
    del body["trigger_id"]  # Slack refuses views.open without one: said, nothing raised
    with caplog.at_level(logging.INFO, logger=LOGGER):
        await press(handler, fake, review(case, OUT))
        await press(handler, fake, body)
        await submit(handler, fake, sent(case, "benign", OUT))
        await submit(handler, fake, sent(case, "benign"))
    [refused_open] = fake.calls_to("views.open")
    assert refused_open.args["trigger_id"] == ""
    assert logged(caplog) == [
        ("WARNING", f"case review by {OUT} in {CHANNEL} refused: {NOT_MEMBER}"),
        ("WARNING", "could not open the review dialog: The request to the Slack API failed. "
         f"(url: {fake.base_url}views.open, status: 200)\nThe server responded with: "
         "{'ok': False, 'error': 'invalid_trigger_id'}"),
        ("WARNING", f"case review by {OUT} refused: {NOT_MEMBER}"),
        ("INFO", f"case {case.id}: blind review by {ANA}"),
    ]  # fmt: skip


@pytest.mark.parametrize("capture", [False, True])
async def test_a_review_against_socbot_is_captured_when_asked(
    db: Database, fake: FakeSlackAPI, capture: bool
) -> None:
    fake.add_members(CHANNEL, [ANA])
    case = await auto_case(db)
    nudged: list[int] = []
    actions = CaseActions(
        db,
        CaseSettings(),
        ChannelMembers(web_client(fake)),
        admins=[LEAD],
        feedback=FeedbackStore(db),
        nudge=lambda: nudged.append(1),
    )
    handler = CaseAudits(actions, capture=True) if capture else CaseAudits(actions)
    await submit(handler, fake, sent(case, "true_positive"))
    async with db.reading() as session:
        kind = WorkRow.kind == WorkKind.CASE_CAPTURE
        rows = [dict(r.request) for r in await session.scalars(select(WorkRow).where(kind))]
    assert [(r["case_id"], r["disposition"]) for r in rows] == (
        [(case.id, "true_positive")] * capture
    )
    assert nudged == [1]
