"""One claimed work row, run to one outcome (``bot.work.worker`` starts it).

The run tells a taken-over thread once that socbot restarted, runs the row's
``Runner`` with the row in ``current_run`` (what it posts is kept with the row),
and settles the row once:

* done, or cancelled when a person asked to stop it before its result was in;
* taken over or shutting down (cancelled without a stop, or ``RowLost`` at a
  post): not settled, the row is handed on and the new owner answers;
* notices said through ``Reporter.say`` for the row (restarted, unavailable) are
  recorded with it before they are said: a crash in between never repeats one;
* ``Unavailable`` (Gemini or Slack): back to the queue with backoff, told once; at
  the last attempt failed and told;
* any other failure: failed and told (``Reporter.failed``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.observe import metrics
from bot.work.contracts import (
    RESTARTED,
    Reporter,
    RowLost,
    RunContext,
    Runner,
    ThreadRef,
    Unavailable,
    current_run,
    gave_up,
)
from bot.work.run_link import earlier_run
from store.investigations.runs import InvestigationStore
from store.queue.work import Work, WorkQueue
from store.schema import WorkState

log = logging.getLogger(__name__)


@dataclass
class Running:
    """A row running on this replica."""

    thread: ThreadRef
    work: Work
    task: asyncio.Task[None] | None = None
    stopping: bool = False  # a person asked to stop it
    final: bool = False  # the result is in (``finishing``)
    settling: bool = False  # its row is being settled (``finish``)


class RowRuns:
    """Runs claimed rows for ``replica`` (see the module docstring)."""

    def __init__(
        self,
        queue: WorkQueue,
        reporter: Reporter,
        runners: Mapping[str, Runner],
        *,
        reporters: Mapping[str, Reporter],
        replica: str,
        retry_backoff_s: float,
        closing: Callable[[], bool],
        ended: Callable[[Work], None],
    ) -> None:
        self.queue = queue
        self.reporter = reporter
        self.runners = runners  # the coordinator's registry (filled after start-up)
        self.reporters = reporters  # kinds told elsewhere than ``reporter`` (learning: logs)
        self.replica = replica
        self.retry_backoff_s = retry_backoff_s
        self.closing = closing
        self.ended = ended  # frees the thread on this replica

    async def run(self, running: Running) -> None:
        work, thread = running.work, running.thread
        context = RunContext(
            work,
            lambda key, value: self.queue.record_post(
                work.id, key, value, owner=self.replica, attempt=work.attempts
            ),
            lambda: setattr(running, "final", True),
            lambda: running.stopping,
        )
        current_run.set(context)
        state, error = WorkState.FAILED, None
        tell: Exception | None = None
        try:
            await self._told_restarted(thread, work)
            runner = self.runners.get(work.kind)
            if runner is None:
                raise RuntimeError(f"no runner for work of kind {work.kind!r}")
            await runner.run(thread, work)
            state = WorkState.DONE
        except asyncio.CancelledError:
            if not running.stopping or self.closing():
                raise  # taken over, or shutting down: the row is handed on, not settled
            state = WorkState.CANCELLED
        except RowLost:
            metrics.TAKEOVERS.inc()
            log.info(
                "work %s in %s: taken over by another replica", work.id, thread.conversation_id
            )
            return  # the new owner posts the outcome; this replica settles nothing
        except Unavailable as unavailable:
            if await self._retry_later(running, str(unavailable)):
                return
            error, tell = str(unavailable), unavailable
        except Exception as failure:  # fail open: tell the thread, keep serving others
            log.exception("work %s in %s failed", work.id, thread.conversation_id)
            error, tell = type(failure).__name__, failure
        running.settling = True
        await self.queue.finish(work.id, self.replica, state, error)
        self.ended(work)  # the thread is free before it is told
        if state == WorkState.CANCELLED:
            await self._reporter(work).cancelled(thread)
        elif tell is not None:
            await self._reporter(work).failed(thread, tell)

    def _reporter(self, work: Work) -> Reporter:
        return self.reporters.get(work.kind, self.reporter)

    async def _told_restarted(self, thread: ThreadRef, work: Work) -> None:
        if work.posted.get("outcome"):
            return  # the result was in: only its delivery is left, nothing to investigate
        if work.posted.get("restarted") and not work.posted.get("told_restarted"):
            # the intent first: a crash between the two loses the notice, never repeats it
            if await self.queue.record_post(work.id, "told_restarted", True, owner=self.replica):
                await self._reporter(work).say(thread, RESTARTED)

    async def _retry_later(self, running: Running, reason: str) -> bool:
        work = running.work
        delay = self.retry_backoff_s * 2 ** max(work.attempts - 1, 0)
        running.settling = True  # handed back below: a lease renewal must not cancel the notice
        if not await self.queue.retry_later(work.id, self.replica, delay, reason):
            return False
        if not work.posted.get("told_unavailable"):
            await self.queue.record_post(work.id, "told_unavailable", True)  # intent first
            await self._reporter(work).say(
                running.thread, f"{reason} I will try again in about {delay:.0f} s."
            )
        return True

    async def dropped(self, work: Work) -> None:
        """The row ended without running here (stopped while queued, given up)."""
        runner = self.runners.get(work.kind)
        if runner is not None:
            await runner.dropped(work)

    async def give_up(self, work: Work) -> None:
        """Expired ``max_attempts`` times: the row failed (its last investigation settled
        as interrupted, linked to no run: ``bot.work.run_link``); its status message says so,
        once (``Reporter.gave_up``)."""
        earlier = earlier_run(work.posted)
        if earlier is not None:
            await InvestigationStore(self.queue.db).interrupt(
                earlier, replaced_by=None, error=gave_up(work.attempts)
            )
        await self.dropped(work)
        await self._reporter(work).gave_up(
            ThreadRef(work.channel, work.thread_ts),
            work,
            lambda key, value: self.queue.record_post(work.id, key, value, once=True),
        )
