"""A ``case_post`` row run alone (``CasePosts.run``): the decision's message in the thread,
then its webhook event, whose body matches the published schema, queued once."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from sqlalchemy import select

from bot.decisions.case_posts import CasePosts
from bot.notify.notifier import Notifier
from bot.slack.pacer import Pacer
from bot.work.learning import Silent
from bot.work.worker import Coordinator, ThreadRef
from config.cases_settings import CaseSettings
from config.notify_settings import NotifySettings, WebhookSettings
from store.cases import transitions
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.queue.types import Work
from store.queue.work import WorkQueue
from store.schema import CaseDisposition, WorkKind, WorkRow
from tests.bot.decisions.click_support import web_client
from tests.fakes.slack_api import FakeSlackAPI
from tests.store.cases.case_support import CHANNEL, THREAD, a_case

SCHEMA = json.loads(
    (Path(__file__).parents[3] / "docs" / "schemas" / "socbot-webhook-v1.json").read_text()
)


async def rows(db: Database, kind: str) -> list[WorkRow]:
    async with db.session() as session:
        found = await session.scalars(select(WorkRow).where(WorkRow.kind == kind))
        return list(found)


async def test_each_decision_is_told_then_sent_onward(db: Database, fake: FakeSlackAPI) -> None:
    queue = WorkQueue(db)
    hook = WebhookSettings(
        name="jira",
        url="https://hooks.example.com/socbot",
        secret="s",
        events=["case.assigned", "case.resolved"],
    )
    notifier = Notifier(NotifySettings(webhooks=[hook]), queue)
    coordinator = Coordinator(1, Silent(), queue, replica="r1")
    posts = CasePosts(
        db, web_client(fake), Pacer(rate_per_s=100), CaseSettings(), coordinator, notifier
    )
    case = await a_case(db, "run-1", channel=CHANNEL, thread_ts=THREAD, verdict="true_positive")
    await transitions.take(db, case.id, "UANA00001", seen=1, via="slack")
    resolution = Resolution(CaseDisposition.FALSE_POSITIVE, False, "known scanner", "the VPN")
    await transitions.resolve(db, case.id, "UANA00001", resolution, seen=2, via="slack")
    for row in await rows(db, WorkKind.CASE_POST):
        await posts.run(ThreadRef(row.channel, row.thread_ts), Work.of(row))
    texts = [c.args["text"] for c in fake.calls_to("chat.postMessage")]
    assert texts[0] == "🙋 <@UANA00001> took this case."
    assert "resolved this case: *False positive*" in texts[1]
    sent = [json.loads(json.loads(r.request["text"])["body"]) for r in await rows(db, "notify")]
    for envelope in sent:
        jsonschema.validate(envelope, SCHEMA)
    assert [(e["event"], e["data"]["action"], e["data"]["revision"]) for e in sent] == [
        ("case.assigned", "taken", 2),
        ("case.resolved", "resolved", 3),
    ]
    assert sent[1]["data"]["missed"] == "the VPN"
    assert sent[1]["data"]["slack"] == {"channel": CHANNEL, "thread_ts": THREAD}
