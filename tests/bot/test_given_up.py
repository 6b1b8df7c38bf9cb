"""A work row given up after its last attempt (its replicas kept dying) is settled and
its thread is told once: the status message says the run was given up instead of
"working…" for ever, the investigation it started is ``interrupted``, linked to no run.

Real engine (scripted model), real worker, queue, ``SlackReporter`` and Web API client on
SQLite and PostgreSQL; the Web API faked at the network edge (``tests/fakes/slack_api``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from bot.reporter import GAVE_UP_KEY
from bot.worker_types import gave_up
from cli.runtime import Runtime, open_runtime
from store.investigations import InvestigationStore
from store.work import QueueLimits, Work, WorkQueue
from tests.bot.test_post_once import chat_script, dies, in_thread, mention, replica, row, state
from tests.fakes.model import ScriptedModel
from tests.fakes.signals import writes
from tests.fakes.slack_api import FakeSlackAPI
from tests.pg_server import PostgresServer
from tests.queue_clock import LEASE_S, AheadQueue
from tests.slack_support import make_settings

TOLD = gave_up(1)  # every row below gets one attempt (``max_attempts=1``)


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
        "post": posted[GAVE_UP_KEY],  # recorded before it was posted (``bot.post_once``)
    }
    assert told(fake, "chat.update") == [] and "status_ts" not in posted
    await b.coordinator.wait_idle()
    assert len(told(fake, "chat.postMessage")) == 1
    await b.coordinator.shutdown()
