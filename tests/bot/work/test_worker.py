"""The worker (``bot.work.worker``) over the real queue: stop, shutdown, takeover after
a replica dies, retry when Gemini is unavailable, priority over one user's flood."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.work.contracts import Record, gave_up
from bot.work.worker import RESTARTED, Coordinator, ThreadRef, Unavailable
from store.db.engine import Database
from store.queue.work import Job, QueueLimits, Work, WorkQueue, priority
from tests.fakes.signals import WAIT_S, Changes
from tests.queue_clock import LEASE_S, AheadQueue


class NoticeRecorder:
    """A ``Reporter`` recording what it was asked to say."""

    def __init__(self) -> None:
        self.said: list[tuple[str, ThreadRef]] = []
        self.texts: list[str] = []
        self._said = asyncio.Event()

    async def say(self, thread: ThreadRef, text: str) -> None:
        self.said.append(("say", thread))
        self.texts.append(text)
        self._said.set()

    async def said_once(self) -> None:
        await asyncio.wait_for(self._said.wait(), WAIT_S)

    async def busy(self, thread: ThreadRef) -> None:
        self.said.append(("busy", thread))

    async def seen(self, channel: str, ts: str) -> None:
        pass

    async def queued(self, thread: ThreadRef, position: int) -> None:
        self.said.append(("queued", thread))

    async def failed(self, thread: ThreadRef, error: BaseException) -> None:
        self.said.append(("failed", thread))
        self.texts.append(str(error))

    async def cancelled(self, thread: ThreadRef) -> None:
        self.said.append(("cancelled", thread))

    async def gave_up(self, thread: ThreadRef, work: Work, record: Record) -> None:
        self.said.append(("gave_up", thread))
        self.texts.append(gave_up(work.attempts))


class GatedRunner:
    """Runs work by waiting for the gate; ``changes`` is notified as a run starts and ends."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.ran: list[ThreadRef] = []
        self.finished: list[ThreadRef] = []
        self.fail_first: set[ThreadRef] = set()
        self.changes = Changes()

    async def run(self, thread: ThreadRef, work: Work) -> None:
        self.ran.append(thread)
        self.changes.notify()
        if thread in self.fail_first:
            self.fail_first.discard(thread)
            raise Unavailable("Gemini is unavailable right now.")
        await self.gate.wait()
        self.finished.append(thread)
        self.changes.notify()

    async def ran_once(self, thread: ThreadRef) -> None:
        """Return once this runner has started exactly one run, ``thread``'s."""
        await self.changes.until(lambda: bool(self.ran))
        assert self.ran == [thread]

    async def dropped(self, work: Work) -> None:
        pass


def threads(n: int) -> list[ThreadRef]:
    return [ThreadRef("C1", f"{n}.000{i}") for i in range(n)]


def mention(thread: ThreadRef, user: str = "U1") -> Job:
    return Job("mention", thread.channel, thread.thread_ts, "hi", requester=user)


@pytest.fixture
async def queue(db: Database) -> AsyncIterator[WorkQueue]:
    yield WorkQueue(db, QueueLimits(running=1, running_per_user=5))


def worker(
    queue: WorkQueue, runner: GatedRunner, reporter: NoticeRecorder, name: str = "r1"
) -> Coordinator:
    coordinator = Coordinator(
        queue.limits.running, reporter, queue, replica=name, poll_s=0.05, retry_backoff_s=0.1
    )
    coordinator.register({"mention": runner, "alert": runner})
    return coordinator


async def test_shutdown_hands_running_and_queued_work_on_quietly(queue: WorkQueue) -> None:
    reporter, runner = NoticeRecorder(), GatedRunner()
    coordinator = worker(queue, runner, reporter)
    a, b, c = threads(3)
    for thread in (a, b, c):
        assert await coordinator.submit(
            thread, mention(thread, f"U{thread.thread_ts}"), announce=False
        )
    assert coordinator.queued == 2  # each submit claimed: a started, b and c wait
    await runner.ran_once(a)
    # grace 0: the held run (held forever) is not waited for; 10 s is only a loose bound
    await asyncio.wait_for(coordinator.shutdown(grace_s=0), 10)
    assert reporter.said == []  # no "internal error", no "cancelled" per thread
    assert await queue.counts() == {"queued": 3, "running": 0}  # the next replica runs them
    assert not await coordinator.submit(a, mention(a))  # closing: nothing new


async def test_shutdown_lets_running_work_finish_within_the_grace(queue: WorkQueue) -> None:
    reporter, runner = NoticeRecorder(), GatedRunner()
    coordinator = worker(queue, runner, reporter)
    (a,) = threads(1)
    await coordinator.submit(a, mention(a))
    await runner.ran_once(a)
    shutting_down = asyncio.create_task(coordinator.shutdown(grace_s=WAIT_S))
    await asyncio.sleep(0)  # the shutdown begins: nothing new is claimed from here
    assert coordinator.closing
    runner.gate.set()  # the run ends during the grace
    await shutting_down
    assert runner.finished == [a]
    assert await queue.counts() == {"queued": 0, "running": 0}


async def test_stop_racing_a_release_cancels_cleanly_and_the_next_run_starts(
    queue: WorkQueue,
) -> None:
    reporter, runner = NoticeRecorder(), GatedRunner()
    coordinator = worker(queue, runner, reporter)
    a, b, c = threads(3)
    for thread in (a, b, c):
        await coordinator.submit(thread, mention(thread, f"U{thread.thread_ts}"), announce=False)
    assert coordinator.queued == 2  # each submit claimed: a started, b and c wait
    runner.gate.set()  # a finishes and releases around b's stop
    assert await coordinator.stop(b)
    await coordinator.wait_idle()
    assert runner.ran == [a, c]
    assert reporter.said == [("cancelled", b)]  # a requested stop is told, nothing failed
    await coordinator.shutdown()


async def test_a_busy_thread_takes_no_second_request(queue: WorkQueue) -> None:
    reporter, runner = NoticeRecorder(), GatedRunner()
    coordinator = worker(queue, runner, reporter)
    (a,) = threads(1)
    assert await coordinator.submit(a, mention(a))
    assert not await coordinator.submit(a, mention(a))
    runner.gate.set()
    await coordinator.wait_idle()
    await coordinator.shutdown()


async def test_a_critical_alert_runs_before_a_users_flood(db: Database) -> None:
    queue = WorkQueue(db, QueueLimits(running=1, queued_per_user=50, queued_per_channel=50))
    reporter, runner = NoticeRecorder(), GatedRunner()
    coordinator = worker(queue, runner, reporter)
    flood = [ThreadRef("C1", f"1.{i:03d}") for i in range(30)]
    for thread in flood:
        await coordinator.submit(thread, mention(thread), announce=False)
    alert = ThreadRef("CALERT", "9.0")
    critical = Job("alert", "CALERT", "9.0", alert_id="a1", priority=priority("alert", "critical"))
    await coordinator.submit(alert, critical, announce=False)
    runner.gate.set()
    await coordinator.wait_idle()
    assert runner.ran[:2] == [flood[0], alert]  # the first mention was already running
    await coordinator.shutdown()


async def test_a_dead_replicas_work_is_taken_over_and_told_once(any_db: Database) -> None:
    # a long lease, moved past when a is dead: b's own lease never lapses on a loaded machine
    queue = AheadQueue(any_db, QueueLimits(running=2), lease_s=LEASE_S)
    runner_a, runner_b = GatedRunner(), GatedRunner()
    told_a, told_b = NoticeRecorder(), NoticeRecorder()
    a, b = worker(queue, runner_a, told_a, "a"), worker(queue, runner_b, told_b, "b")
    (thread,) = threads(1)
    await a.submit(thread, mention(thread))
    await runner_a.ran_once(thread)
    # replica a "dies": its loops stop claiming and renewing the lease; its run hangs forever
    assert a._loop is not None and a._renewer is not None
    a._loop.cancel()
    a._renewer.cancel()
    await asyncio.gather(a._loop, a._renewer, return_exceptions=True)
    queue.move(LEASE_S + 1)  # ... until its lease is over
    b.start()
    await runner_b.ran_once(thread)
    assert told_b.texts == [RESTARTED]
    runner_b.gate.set()
    await b.wait_idle()
    stored = await queue.active(thread.conversation_id)
    assert stored == []  # done once, by b
    dead_run = a.task_for(thread)
    assert dead_run is not None
    runner_a.gate.set()  # the dead run wakes up: its outcome is refused by the database
    await asyncio.wait_for(dead_run, WAIT_S)
    row = await queue.get(1)
    assert row is not None and (row.state, row.owner) == ("done", "b")
    assert not await queue.finish(1, "a", "done")
    await b.shutdown()
    await a.shutdown()


class DiesWhileSaying(NoticeRecorder):
    """A reporter whose replica dies in the middle of a notice (the post never returns)."""

    async def say(self, thread: ThreadRef, text: str) -> None:
        await super().say(thread, text)
        await asyncio.Event().wait()


async def test_a_restart_notice_is_not_repeated_when_its_replica_dies_mid_notice(
    any_db: Database,
) -> None:
    queue = AheadQueue(any_db, QueueLimits(running=3), lease_s=LEASE_S)
    runners = [GatedRunner(), GatedRunner(), GatedRunner()]
    told = [NoticeRecorder(), DiesWhileSaying(), NoticeRecorder()]
    a, b, c = (worker(queue, r, t, n) for r, t, n in zip(runners, told, "abc", strict=True))
    (thread,) = threads(1)
    await a.submit(thread, mention(thread))
    await runners[0].ran_once(thread)

    async def dies(replica: Coordinator) -> None:
        assert replica._loop is not None and replica._renewer is not None
        replica._loop.cancel()
        replica._renewer.cancel()
        await asyncio.gather(replica._loop, replica._renewer, return_exceptions=True)
        queue.move(LEASE_S + 1)

    await dies(a)
    b.start()
    await told[1].said_once()
    await dies(b)  # ... while its restart notice is on its way
    c.start()
    await runners[2].ran_once(thread)
    assert told[1].texts == [RESTARTED] and told[2].texts == []  # said once, not again
    runners[2].gate.set()
    await c.wait_idle()
    for replica in (c, b, a):
        for run in [replica.task_for(thread)]:
            if run is not None:
                run.cancel()
        await replica.shutdown()


async def test_gemini_unavailable_requeues_with_backoff_and_tells_once(queue: WorkQueue) -> None:
    reporter, runner = NoticeRecorder(), GatedRunner()
    coordinator = worker(queue, runner, reporter)
    (a,) = threads(1)
    runner.fail_first.add(a)
    runner.gate.set()
    await coordinator.submit(a, mention(a))
    await runner.changes.until(lambda: bool(runner.finished))
    assert runner.finished == [a] and runner.ran == [a, a]
    assert reporter.texts == ["Gemini is unavailable right now. I will try again in about 0 s."]
    await coordinator.shutdown()
