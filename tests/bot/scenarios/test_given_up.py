"""A work row given up after its last attempt (its replicas kept dying) is settled and
its thread is told once: the status message says the run was given up instead of
"working…" for ever, the investigation it started is ``interrupted``, linked to no run.

Real engine (scripted model), real worker, queue, ``SlackReporter`` and Web API client on
SQLite and PostgreSQL; for an alert, the real app (``/alerts``, triage, worker) twice on
one database, the alert ``failed`` (nobody cancelled it). The Web API is faked at the
network edge (``tests/fakes/slack_api``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.slack.reporter import GAVE_UP_KEY
from bot.work.contracts import gave_up
from cli.runtime import Runtime, open_runtime
from config.settings import Settings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.queue.work import QueueLimits, Work, WorkQueue
from store.schema import AlertRow, WorkRow
from tests.bot.slack.test_post_once import (
    chat_script,
    dies,
    in_thread,
    mention,
    replica,
    row,
    state,
)
from tests.fakes.model import ScriptedModel
from tests.fakes.signals import writes
from tests.fakes.slack_api import FakeSlackAPI
from tests.pg_server import PostgresServer
from tests.queue_clock import LEASE_S, AheadQueue
from tests.slack_support import WEBHOOK_TOKEN, RecordingInvestigate, SlackHarness, make_settings

TOLD = gave_up(1)  # every row below gets one attempt (``max_attempts=1``)
ALERTS = Path(__file__).parents[2] / "fixtures" / "alerts"  # genuine samples (NOTICE there)
AUTH = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sqlite", "postgresql"])
async def runtime(
    request: pytest.FixtureRequest, fake: FakeSlackAPI, tmp_path: Path, postgres: PostgresServer
) -> AsyncIterator[Any]:
    """Opens the real runtime on SQLite or PostgreSQL with the model a test scripts."""
    async with AsyncExitStack() as stack:

        async def open_with(model: ScriptedModel) -> Runtime:
            settings = make_settings(tmp_path, fake.base_url)
            if request.param == "postgresql":
                url = postgres.create_database(f"gaveup_{uuid.uuid4().hex[:10]}")
                settings = settings.model_copy(update={"database_url": url})
            return await stack.enter_async_context(open_runtime(settings, backend=model))

        yield open_with


def told(fake: FakeSlackAPI, method: str) -> list[Any]:
    return [c for c in fake.calls_to(method) if c.args.get("text") == TOLD]


async def failed(queue: WorkQueue) -> bool:
    return await state(queue) == "failed"


def one_attempt(tmp_path: Path, fake: FakeSlackAPI, url: str, replica: str) -> Settings:
    """A replica of the app on ``url``: one start per row, so a lapsed lease gives up."""
    settings = make_settings(tmp_path, fake.base_url)
    work = settings.work.model_copy(update={"replica_id": replica, "max_attempts": 1})
    return settings.model_copy(update={"database_url": url, "work": work})


async def work_rows(db: Database) -> list[WorkRow]:
    async with db.session() as session:
        return list((await session.scalars(select(WorkRow).order_by(WorkRow.id))).all())


async def lapse(db: Database, work_id: int) -> None:
    """The row's lease ran out (its replica stopped renewing it an hour ago)."""
    async with db.session() as session:
        row = await session.get(WorkRow, work_id)
        assert row is not None and row.lease_until is not None
        row.lease_until -= timedelta(hours=1)


async def alert_is(db: Database, alert_id: str, status: str) -> bool:
    async with db.session() as session:
        row = await session.get(AlertRow, alert_id)
        return row is not None and row.status == status


async def test_a_run_given_up_edits_its_status_message_once_and_settles_its_investigation(
    fake: FakeSlackAPI, runtime: Any
) -> None:
    never = asyncio.Event()

    async def hang(_request: Any) -> Any:
        await never.wait()  # replica a's engine waits forever: the replica is gone

    rt = await runtime(ScriptedModel({**chat_script(), "classifier": [hang]}))
    queue = AheadQueue(rt.db, QueueLimits(running=2), lease_s=LEASE_S, max_attempts=1)
    a, b = replica(rt, fake, queue, "a"), replica(rt, fake, queue, "b")
    # the status message lands in Slack, but a dies before it hears its ts back
    fake.hold("chat.postMessage", when=lambda call: "metadata" in call.args and not fake.held)
    thread, job = mention(fake, 1)
    await a.coordinator.submit(thread, job)
    await fake.wait_for(lambda: bool(fake.held))
    token = fake.held[0].args["metadata"]["event_payload"]["post"]

    async def run_started() -> bool:
        return "investigation_id" in (await row(queue)).posted

    await writes(queue.db).until(run_started)
    await dies(a.coordinator)
    queue.move(LEASE_S + 1)  # a's lease is over, and it was the row's last attempt
    b.coordinator.start()
    await writes(queue.db).until(lambda: failed(queue))
    await fake.wait_for(lambda: bool(told(fake, "chat.update")))

    given_up = await row(queue)
    [status] = [m for m in in_thread(fake, thread) if m.extra.get("metadata")]
    assert given_up.posted["status_post"] == token and given_up.posted["status_ts"] == status.ts
    [edit] = told(fake, "chat.update")  # the status message itself, found by its token
    assert (edit.args["channel"], edit.args["ts"]) == (thread.channel, status.ts)
    assert TOLD == "✖ socbot gave up on this run after 1 attempt: it restarted during each of them."
    assert status.text == TOLD  # what the analyst now reads in place of "working…"
    assert told(fake, "chat.postMessage") == []  # edited, not a second message
    assert isinstance(given_up.posted[GAVE_UP_KEY], str)  # the intent, recorded first
    investigation = await InvestigationStore(rt.db).get(given_up.posted["investigation_id"])
    assert investigation is not None
    assert (investigation.status, investigation.replaced_by, investigation.error) == (
        "interrupted",
        None,
        TOLD,
    )
    assert investigation.finished_at is not None

    # told once: giving the row up again (a stale copy, as a crash's repeat would hold)
    # records nothing and says nothing, and a third replica finds nothing to do
    stale = Work.of(given_up)
    stale.posted.pop(GAVE_UP_KEY)
    await b.coordinator._rows.give_up(stale)
    c = replica(rt, fake, queue, "c")
    await c.coordinator.wait_idle()
    assert len(told(fake, "chat.update")) == 1 and told(fake, "chat.postMessage") == []
    assert (await row(queue)).posted[GAVE_UP_KEY] == given_up.posted[GAVE_UP_KEY]
    for worker in (c, b, a):
        await worker.coordinator.shutdown()


async def test_a_run_given_up_before_its_status_message_says_so_in_one_message(
    fake: FakeSlackAPI, runtime: Any
) -> None:
    rt = await runtime(ScriptedModel(chat_script()))
    queue = AheadQueue(rt.db, QueueLimits(running=2), lease_s=LEASE_S, max_attempts=1)
    thread, job = mention(fake, 2)
    await queue.submit(job)
    [claimed] = (await queue.claim("a", 1)).started  # a claims it and dies at once
    queue.move(LEASE_S + 1)
    b = replica(rt, fake, queue, "b")
    b.coordinator.start()
    await writes(queue.db).until(lambda: failed(queue))
    await fake.wait_for(lambda: bool(told(fake, "chat.postMessage")))

    [notice] = told(fake, "chat.postMessage")
    assert notice.args["thread_ts"] == thread.thread_ts
    posted = (await row(queue, claimed.id)).posted
    assert notice.args["metadata"]["event_payload"] == {
        "work_id": claimed.id,
        "post": posted[GAVE_UP_KEY],  # recorded before it was posted (``bot.slack.post_once``)
    }
    assert told(fake, "chat.update") == [] and "status_ts" not in posted
    await b.coordinator.wait_idle()
    assert len(told(fake, "chat.postMessage")) == 1
    await b.coordinator.shutdown()


async def test_an_alert_given_up_is_failed_and_its_thread_told_once_by_the_next_replica(
    fake: FakeSlackAPI, tmp_path: Path, postgres: PostgresServer, backend: str
) -> None:
    """Through the real app (``/alerts``, triage, worker) on one database: replica a takes
    the alert and dies mid-run at its last attempt; replica b, starting, gives it up."""
    url = (
        f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
        if backend == "sqlite"
        else postgres.create_database(f"gaveup_{uuid.uuid4().hex[:10]}")
    )
    first, second = Database(url), Database(url)
    await first.create()
    held = RecordingInvestigate()
    held.gate = asyncio.Event()  # a's run never ends: a dies during it
    async with SlackHarness(fake, one_attempt(tmp_path, fake, url, "a"), held, db=first) as a:
        response = await a.client.post(
            "/alerts", data=(ALERTS / "splunk-webhook.json").read_text(), headers=AUTH
        )
        assert response.status == 202
        alert_id = str((await response.json())["alert_id"])
        await held.wait_started()
        await dies(a.app.coordinator)
        [work] = [w for w in await work_rows(first) if w.alert_id == alert_id]
        await lapse(first, work.id)  # a's lease ran out: a is gone
        b_settings, b_ran = one_attempt(tmp_path, fake, url, "b"), RecordingInvestigate()
        async with SlackHarness(fake, b_settings, b_ran, db=second) as b:
            await writes(first, second).until(lambda: alert_is(first, alert_id, "failed"))
            await fake.wait_for(lambda: bool(told(fake, "chat.postMessage")))
            await b.settle()
            rows = await work_rows(first)
            assert await alert_is(first, alert_id, "failed")  # settled; not run again
        held.gate.set()
    await first.close()
    await second.close()

    [given_up] = [w for w in rows if w.alert_id == alert_id]  # no second run queued
    assert given_up.state == "failed" and isinstance(given_up.posted[GAVE_UP_KEY], str)
    assert b_ran.calls == []
    [notice] = told(fake, "chat.postMessage")  # the run posted no status message: one notice
    assert notice.args["thread_ts"] == work.thread_ts  # in the alert's own thread
    assert notice.args["metadata"]["event_payload"]["post"] == given_up.posted[GAVE_UP_KEY]
