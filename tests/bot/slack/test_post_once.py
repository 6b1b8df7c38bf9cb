"""Posts of a work row land once: a replica killed between posting a message and
recording it, a takeover, sustained Slack 429s. Real engine (scripted model), real
worker and queue on SQLite, the Web API faked at the network edge."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.investigator import SLACK_REFUSED, EngineInvestigator
from bot.runners import ChatRunner
from bot.slack.client import build_client
from bot.slack.pacer import Pacer
from bot.slack.post_once import EVENT_TYPE, ThreadSearch, post_metadata
from bot.slack.reporter import SlackReporter
from bot.work.worker import RESTARTED, Coordinator, ThreadRef
from cli.runtime import Runtime, open_runtime
from store.queue.work import Job, QueueLimits, WorkQueue
from store.schema import WorkRow
from store.triage.alerts import AlertStore
from tests.fakes.model import ScriptedModel, json_response, text_response
from tests.fakes.signals import WAIT_S, writes
from tests.fakes.slack_api import BOT_ID, FakeSlackAPI
from tests.queue_clock import LEASE_S, AheadQueue
from tests.slack_support import make_settings

ANSWER = "185.220.101.42 is a Tor exit node; treat it as hostile."
SEEN = "is a Tor exit node"  # the answer as posted (its address defanged)
SOC = "CSOC00001"


@dataclass
class Replica:
    coordinator: Coordinator
    investigate: EngineInvestigator


def replica(rt: Runtime, fake: FakeSlackAPI, queue: WorkQueue, name: str) -> Replica:
    """One replica's worker, with its own Web API client (as its own process would)."""
    client = build_client(rt.settings.slack, backoff_s=0.01)
    pacer = Pacer(rate_per_s=500, updates_per_min=60_000)
    investigate = EngineInvestigator(
        rt.engine,
        client,
        AlertStore(rt.db),
        pacer=pacer,
        update_interval=0.02,
        post_attempts=2,
        post_backoff_s=0.01,
    )
    coordinator = Coordinator(
        queue.limits.running,
        SlackReporter(client, pacer),
        queue,
        replica=name,
        poll_s=0.05,
        retry_backoff_s=0.05,
    )
    chat = ChatRunner(investigate)
    coordinator.register({"mention": chat, "followup": chat})
    return Replica(coordinator, investigate)


async def dies(worker: Coordinator) -> None:
    """The replica stops dead between two transactions of its worker loops.

    (A killed process's open transaction ends with its connection; cancelling the
    loop mid-transaction in-process would instead hold SQLite's write lock.)
    """
    worker._closing = True  # the claim loop ends after its turn
    worker._leases_done.set()  # and so does the lease renewal
    worker.nudge()
    assert worker._loop is not None and worker._renewer is not None
    await asyncio.gather(worker._loop, worker._renewer)


def chat_script(**extra: Any) -> dict[str, Any]:
    return {
        "classifier": lambda _r: json_response({"needs_plan": False, "reason": "a lookup"}),
        "direct": lambda _r: text_response(ANSWER),
        **extra,
    }


@pytest.fixture
async def runtime(fake: FakeSlackAPI, tmp_path: Path) -> AsyncIterator[Any]:
    """Opens the real runtime (SQLite in ``tmp_path``) with the model a test scripts."""
    async with AsyncExitStack() as stack:

        async def open_with(model: ScriptedModel) -> Runtime:
            settings = make_settings(tmp_path, fake.base_url)
            return await stack.enter_async_context(open_runtime(settings, backend=model))

        yield open_with


def mention(fake: FakeSlackAPI, n: int) -> tuple[ThreadRef, Job]:
    """An analyst's question (its message in Slack) and the work it queues."""
    thread = ThreadRef(SOC, f"1700000100.{n:06d}")
    question = "<@UBOT0001> is 185.220.101.42 bad?"
    fake.add_message(SOC, thread.thread_ts, question, user=f"U{n}")
    return thread, Job("mention", SOC, thread.thread_ts, question, requester=f"U{n}")


def in_thread(fake: FakeSlackAPI, thread: ThreadRef) -> list[Any]:
    return [m for m in fake.messages if m.channel == SOC and m.thread_ts == thread.thread_ts]


def answers(fake: FakeSlackAPI, thread: ThreadRef) -> list[Any]:
    return [m for m in in_thread(fake, thread) if SEEN in m.text]


async def row(queue: WorkQueue, work_id: int = 1) -> WorkRow:
    found = await queue.get(work_id)
    assert found is not None
    return found


async def state(queue: WorkQueue, work_id: int = 1) -> str:
    return (await row(queue, work_id)).state


async def test_killed_after_posting_the_answer_a_takeover_posts_nothing_again(
    fake: FakeSlackAPI, runtime: Any
) -> None:
    model = ScriptedModel(chat_script())
    rt = await runtime(model)
    queue = AheadQueue(rt.db, QueueLimits(running=2), lease_s=LEASE_S)
    a, b = replica(rt, fake, queue, "a"), replica(rt, fake, queue, "b")
    # Slack takes the answer, but replica a never hears back: it is killed there
    fake.hold("chat.postMessage", when=lambda c: SEEN in str(c.args.get("text")) and not fake.held)
    thread, job = mention(fake, 1)
    await a.coordinator.submit(thread, job)
    await fake.wait_for(lambda: bool(fake.held))
    await dies(a.coordinator)  # no more lease renewals; its run hangs forever
    queue.move(LEASE_S + 1)  # a's lease is over
    b.coordinator.start()
    await writes(queue.db).until(_is(queue, "done"))
    (answer,) = answers(fake, thread)
    assert (await row(queue)).posted["outcome_ts"] == [answer.ts]  # adopted, not reposted
    assert len(model.requests_for("direct")) == 1  # and not investigated again
    assert RESTARTED not in [m.text for m in in_thread(fake, thread)]  # nothing to redo
    await b.coordinator.shutdown()
    await a.coordinator.shutdown()


async def test_a_replica_whose_lease_lapsed_posts_nothing_once_its_row_was_taken_over(
    fake: FakeSlackAPI, runtime: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.work._claimed")
    release = asyncio.Event()

    async def slow(_request: Any) -> Any:
        await release.wait()  # replica a's model call outlasts its lease
        return text_response(ANSWER)

    model = ScriptedModel({**chat_script(), "direct": [slow, text_response(ANSWER)]})
    rt = await runtime(model)
    queue = AheadQueue(rt.db, QueueLimits(running=2), lease_s=LEASE_S)
    a, b = replica(rt, fake, queue, "a"), replica(rt, fake, queue, "b")
    thread, job = mention(fake, 3)
    await a.coordinator.submit(thread, job)
    await model.changes.until(lambda: len(model.requests_for("direct")) == 1)
    stalled = a.coordinator.task_for(thread)
    assert stalled is not None
    # a stalls: it claims and renews nothing more (a claim of its own could take the row
    # back, unrenewed, and run it twice), while its run goes on
    await a.coordinator._claiming.acquire()
    a.coordinator._leases_done.set()
    assert a.coordinator._renewer is not None
    await a.coordinator._renewer
    queue.move(LEASE_S + 1)  # a's lease is over
    b.coordinator.start()
    await writes(queue.db).until(_is(queue, "done"))
    assert len(answers(fake, thread)) == 1  # b answered
    release.set()  # a wakes up with its answer: the row is not its own any more
    await asyncio.wait_for(stalled, WAIT_S)
    assert "taken over by another replica" in caplog.text
    assert len(answers(fake, thread)) == 1  # a posted nothing
    assert await state(queue) == "done"
    a.coordinator._claiming.release()
    await a.coordinator.shutdown()
    await b.coordinator.shutdown()


async def test_killed_after_posting_the_status_a_takeover_edits_that_message(
    fake: FakeSlackAPI, runtime: Any
) -> None:
    never = asyncio.Event()

    async def hang(_request: Any) -> Any:
        await never.wait()  # replica a's engine waits forever: the replica is gone

    model = ScriptedModel(
        {**chat_script(), "classifier": [hang, json_response({"needs_plan": False, "reason": "q"})]}
    )
    rt = await runtime(model)
    queue = AheadQueue(rt.db, QueueLimits(running=2), lease_s=LEASE_S)
    a, b = replica(rt, fake, queue, "a"), replica(rt, fake, queue, "b")
    fake.hold("chat.postMessage", when=lambda call: "metadata" in call.args and not fake.held)
    thread, job = mention(fake, 2)
    await a.coordinator.submit(thread, job)
    await fake.wait_for(lambda: bool(fake.held))  # the status message is in Slack
    status = fake.held[0].args["metadata"]["event_payload"]["post"]
    await dies(a.coordinator)
    queue.move(LEASE_S + 1)  # a's lease is over
    b.coordinator.start()
    await writes(queue.db).until(_is(queue, "done"))
    posted = (await row(queue)).posted
    assert posted["status_post"] == status
    statuses = [m for m in in_thread(fake, thread) if _token(m) == status]
    assert [m.ts for m in statuses] == [posted["status_ts"]]  # one status message, adopted
    edits = [c for c in fake.calls_to("chat.update") if c.args["ts"] == posted["status_ts"]]
    assert edits and "Done" in str(edits[-1].args.get("blocks"))  # and edited by b to the end
    assert len(answers(fake, thread)) == 1
    assert [m.text for m in in_thread(fake, thread)].count(RESTARTED) == 1  # told once
    await b.coordinator.shutdown()
    await a.coordinator.shutdown()


async def test_sustained_429s_delay_the_answers_never_drop_them(
    fake: FakeSlackAPI, runtime: Any
) -> None:
    model = ScriptedModel(chat_script())
    rt = await runtime(model)
    limits = QueueLimits(running=6, running_per_channel=6)
    queue = WorkQueue(rt.db, limits, max_attempts=10)  # Slack recovers long before
    worker = replica(rt, fake, queue, "r1").coordinator
    fake.fail_next("chat.postMessage", status=429, retry_after=0, times=100_000)
    threads = [mention(fake, n) for n in range(6)]
    for thread, job in threads:
        assert await worker.submit(thread, job, announce=False)

    async def all_waiting_for_slack() -> bool:
        rows = [await row(queue, n) for n in range(1, 7)]
        return all(r.posted.get("told_unavailable") and r.posted.get("outcome") for r in rows)

    await writes(queue.db).until(all_waiting_for_slack)
    fake.clear_failures("chat.postMessage")  # Slack recovers

    async def all_done() -> bool:
        return [await state(queue, n) for n in range(1, 7)] == ["done"] * 6

    await writes(queue.db).until(all_done)  # each at its next attempt (backoff)
    for thread, _job in threads:
        assert len(answers(fake, thread)) == 1  # each delivered, once
    assert len(model.requests_for("direct")) == 6  # delivered from the row, not re-run
    await worker.shutdown()


async def test_slack_refusing_to_the_last_attempt_fails_the_run_loudly(
    fake: FakeSlackAPI, runtime: Any
) -> None:
    rt = await runtime(ScriptedModel(chat_script()))
    queue = WorkQueue(rt.db, QueueLimits(running=2), max_attempts=2)
    worker = replica(rt, fake, queue, "r1").coordinator
    fake.fail_next("chat.postMessage", status=429, retry_after=0, times=100_000)
    thread, job = mention(fake, 7)
    await worker.submit(thread, job, announce=False)
    await writes(queue.db).until(_is(queue, "failed"))
    await worker.wait_idle()
    failed = await row(queue)
    assert (failed.attempts, failed.error) == (2, SLACK_REFUSED)
    told = [c for c in fake.calls_to("chat.postMessage") if SLACK_REFUSED in c.args["text"]]
    assert told  # the thread was told (Slack refused that too: it is in the log and the row)
    assert answers(fake, thread) == []
    await worker.shutdown()


async def test_only_socbots_own_post_with_the_token_is_adopted(fake: FakeSlackAPI) -> None:
    client = build_client(make_settings(Path("."), fake.base_url).slack, backoff_s=0.01)
    thread = ThreadRef(SOC, "1700000100.000900")
    fake.add_message(SOC, thread.thread_ts, "root")
    ours = post_metadata(5, "tok")
    impostors = [  # (ts, text, who) each with a metadata some check refuses
        ("901", "a human", {}, ours),
        ("902", "another app", {"bot_id": "BOTHER001"}, ours),
        ("903", "socbot, another row", {"bot_id": BOT_ID}, post_metadata(6, "tok")),
        ("904", "socbot, other type", {"bot_id": BOT_ID}, {**ours, "event_type": "other"}),
    ]
    for ts, text, who, metadata in impostors:
        fake.add_message(
            SOC, f"1700000100.000{ts}", text, thread_ts=thread.thread_ts, metadata=metadata, **who
        )
    search = ThreadSearch(client)
    assert await search.find(thread, 5, {"tok"}) == {}
    posted = await client.chat_postMessage(
        channel=SOC, thread_ts=thread.thread_ts, text="socbot", metadata=ours
    )
    assert await search.find(thread, 5, {"tok"}) == {"tok": posted["ts"]}
    replies = fake.calls_to("conversations.replies")
    assert all(c.args.get("include_all_metadata") in ("1", "true", True) for c in replies)
    assert ours["event_type"] == EVENT_TYPE


def _is(queue: WorkQueue, wanted: str) -> Any:
    async def check() -> bool:
        return await state(queue) == wanted

    return check


def _token(message: Any) -> str | None:
    metadata = message.extra.get("metadata") or {}
    payload = metadata.get("event_payload") or {}
    token = payload.get("post")
    return token if isinstance(token, str) else None
