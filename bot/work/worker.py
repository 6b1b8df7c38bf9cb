"""The worker: runs the work rows (``store.queue.work``) this replica claims, one per thread.

Listeners and the webhook ``submit`` a ``Job`` (a row) and return. Each replica's worker
claims rows (nudged by a local submit or a run's end; every ``poll_s`` for the others') and
runs each by its kind's ``Runner`` (``bot.work._claimed``, ``bot.work.contracts``):

* one run per thread across replicas; ``submit`` is ``False`` while a person's request
  is queued or running in the thread ("still working"); per-requester and per-channel
  limits hold (``store.queue.work``);
* a run waiting for a slot is announced in its thread (``Reporter.queued``) unless shown
  elsewhere (``announce=False``: the alert storm message);
* leases renewed while rows run; a dead replica's rows are taken over, their threads told
  once (``RESTARTED``), failing with one sentence after ``max_attempts``;
* ``stop(thread)`` cancels the thread's work here or, through the row, on its replica;
  once a run has its result (``RunContext.finishing``) a stop changes nothing: one
  outcome per run; Gemini unavailable: back to the queue with backoff (told once);
* ``shutdown(grace_s)``: no claims, ``grace_s`` to finish, the rest handed back quietly.
``watchers`` are told the channel of each row queued, started or ended here (App Home).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping

from bot.work._claimed import RowRuns, Running
from bot.work.contracts import (
    GAVE_UP,
    REFUSED,
    RESTARTED,
    Reporter,
    RunContext,
    Runner,
    SlackRefused,
    ThreadRef,
    Unavailable,
    Watchers,
    current_run,
)
from store.queue.replicas import Replicas
from store.queue.types import BACKGROUND_KINDS
from store.queue.work import CHAT_KINDS, Job, Work, WorkQueue

__all__ = [
    "GAVE_UP",
    "REFUSED",
    "RESTARTED",
    "Coordinator",
    "Reporter",
    "RunContext",
    "Runner",
    "SlackRefused",
    "ThreadRef",
    "Unavailable",
    "current_run",
]

log = logging.getLogger(__name__)


class Coordinator:
    """This replica's worker over the shared queue (see the module docstring)."""

    def __init__(
        self,
        limit: int,
        reporter: Reporter,
        queue: WorkQueue,
        *,
        replica: str,
        poll_s: float = 1.0,
        retry_backoff_s: float = 20.0,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}")
        self.limit = limit
        self.reporter = reporter
        self.queue = queue
        self.replica = replica
        self.poll_s = poll_s
        self.retry_backoff_s = retry_backoff_s
        self._replicas = Replicas(queue.db)
        self.runners: dict[str, Runner] = {}
        self.reporters: dict[str, Reporter] = {}
        self._running: dict[int, Running] = {}
        self._rows = RowRuns(
            queue,
            reporter,
            self.runners,
            reporters=self.reporters,
            replica=replica,
            retry_backoff_s=retry_backoff_s,
            closing=lambda: self._closing,
            ended=self._ended,
        )
        self._notices: dict[ThreadRef, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._claiming = asyncio.Lock()
        self._loop: asyncio.Task[None] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._leases_done = asyncio.Event()  # set at shutdown, once runs have ended
        self._queued = 0
        self._closing = False
        self.watchers = Watchers()

    def register(self, kinds: Mapping[str, Runner], *, reporter: Reporter | None = None) -> None:
        """Say which ``Runner`` runs each kind of work (and, if not ours, who tells of it)."""
        self.runners.update(kinds)
        if reporter is not None:
            self.reporters.update(dict.fromkeys(kinds, reporter))

    @property
    def running(self) -> int:
        """Runs on this replica."""
        return len(self._running)

    @property
    def queued(self) -> int:
        """Rows waiting in the whole queue, as of the last claim."""
        return self._queued

    @property
    def closing(self) -> bool:
        """True once ``shutdown()`` has begun (no new work is taken)."""
        return self._closing

    def busy(self, thread: ThreadRef) -> bool:
        """True while the thread has a run on this replica."""
        return any(r.thread == thread for r in self._running.values())

    def task_for(self, thread: ThreadRef) -> asyncio.Task[None] | None:
        """The thread's run on this replica, if any."""
        return next((r.task for r in self._running.values() if r.thread == thread), None)

    def start(self) -> None:
        """Start the worker loop (also done by the first ``submit``)."""
        if self._loop is None and not self._closing:
            self._loop = asyncio.create_task(self._work_loop(), name=f"worker {self.replica}")
            self._renewer = asyncio.create_task(self._renew_loop(), name=f"leases {self.replica}")

    async def submit(self, thread: ThreadRef, job: Job, *, announce: bool = True) -> bool:
        """Queue ``job``; False if shutting down or a person's request is already in the thread.

        A request refused by a queue limit is told in the thread (True: handled)."""
        if self._closing:
            return False
        if job.kind in CHAT_KINDS and (
            self.busy(thread) or await self.queue.active(thread.conversation_id)
        ):
            return False
        submitted = await self.queue.submit(job)
        if submitted.id is None:
            if submitted.refused != "taken":  # taken: another replica launched the alert
                await self.reporter.say(thread, REFUSED[submitted.refused or "user"])
            return True
        self.watchers(thread.channel)
        self.start()
        await self._claim()
        if announce and submitted.id not in self._running:
            position = await self.queue.position(submitted.id)
            if position is not None:
                self._spawn_notice(thread, position)
        return True

    def _spawn_notice(self, thread: ThreadRef, position: int) -> None:
        """Post the queue notice beside the wait; dropped if the run starts first."""
        task = asyncio.create_task(self.reporter.queued(thread, position), name="queued notice")
        self._notices[thread] = task
        task.add_done_callback(lambda _t: self._notices.pop(thread, None))

    def nudge(self) -> None:
        """Look for work now (a run ended, a row was queued)."""
        self._wake.set()

    async def _work_loop(self) -> None:
        while not self._closing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            self._wake.clear()
            try:
                await self._claim()
            except Exception:  # fail open: the database may be back on the next turn
                log.exception("worker %s could not claim work", self.replica)
                await asyncio.sleep(self.poll_s)

    async def _renew_loop(self) -> None:
        """Beat (``store.queue.replicas``) and renew leases on a timer of their own: claims
        waiting for the shared claim lock never let a live replica's leases lapse."""
        period = self.queue.lease.total_seconds() / 3
        while not self._leases_done.is_set():
            try:
                await self._replicas.beat(self.replica)
                if self._running:
                    await self._renew()
            except Exception:  # fail open: the next turn may reach the database
                log.exception("worker %s could not renew its leases", self.replica)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._leases_done.wait(), period)

    async def _claim(self) -> None:
        async with self._claiming:
            if self._closing:
                return
            busy = sum(r.work.kind not in BACKGROUND_KINDS for r in self._running.values())
            claimed = await self.queue.claim(self.replica, self.limit - busy)
            for work in claimed.given_up:
                await self._rows.give_up(work)
            for work in claimed.started:
                self._start(work)
            self._queued = claimed.queued

    async def _renew(self) -> None:
        ids = list(self._running)  # a run claimed or settled meanwhile is not "taken over"
        ours, stop = await self.queue.renew(self.replica, ids)
        for work_id in ids:
            running = self._running.get(work_id)
            if running is None or running.settling:
                continue
            if work_id not in ours and running.task is not None:
                log.warning("work %s was taken over by another replica; stopping here", work_id)
                running.task.cancel()
            elif work_id in stop and not running.stopping and not running.final:
                running.stopping = True
                if running.task is not None:
                    running.task.cancel()

    def _start(self, work: Work) -> None:
        thread = ThreadRef(work.channel, work.thread_ts)
        notice = self._notices.pop(thread, None)
        if notice is not None:
            notice.cancel()  # still waiting for a posting turn: not worth saying now
        running = Running(thread, work)
        self._running[work.id] = running
        self.watchers(work.channel)
        running.task = asyncio.create_task(self._rows.run(running), name=f"work {work.id}")
        running.task.add_done_callback(lambda _t: self._ended(work))

    def _ended(self, work: Work) -> None:
        if self._running.pop(work.id, None) is not None:
            self.watchers(work.channel)
        self.nudge()

    async def stop(self, thread: ThreadRef) -> bool:
        """Stop the thread's work (queued or running, on any replica); False if none."""
        cancelled, asked = await self.queue.stop(thread.conversation_id)
        for work in cancelled:
            await self._rows.dropped(work)
        if cancelled and not asked:
            await self.reporter.cancelled(thread)
        waits = []
        for work in asked:
            running = self._running.get(work.id)
            if running is None or running.final or running.task is None:
                continue  # another replica stops it on its next renewal, or it has finished
            running.stopping = True
            running.task.cancel()
            waits.append(running.task)
        if waits:
            await asyncio.wait(waits)
        return bool(cancelled or asked)

    async def wait_idle(self, timeout_s: float = 30.0) -> None:
        """Wait until no run is running here and nothing claimable is queued (tests)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            tasks = [r.task for r in self._running.values() if r.task is not None]
            if tasks:
                await asyncio.wait(tasks, timeout=max(deadline - time.monotonic(), 0.01))
                continue
            await self._claim()
            if not self._running:
                return

    async def shutdown(self, grace_s: float = 0.0) -> None:
        """Stop claiming, let runs finish for ``grace_s``, then hand the rest back."""
        self._closing = True
        if self._loop is not None:  # let a claim in progress end (no cancel mid-transaction)
            self._wake.set()
            done, _ = await asyncio.wait([self._loop], timeout=5)
            if not done:
                self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
        notices = list(self._notices.values())
        for notice in notices:
            notice.cancel()
        tasks = [r.task for r in self._running.values() if r.task is not None]
        if tasks and grace_s > 0:
            await asyncio.wait(tasks, timeout=grace_s)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, *notices, return_exceptions=True)
        self._leases_done.set()  # renewed through the grace period; now handed on
        if self._renewer is not None:
            await asyncio.gather(self._renewer, return_exceptions=True)
        released = await self.queue.release(self.replica)
        if released:
            log.info("handed %d running work rows back to the queue", released)
