"""Learning as work: what a vote calls to queue a learning run, and the ``learn`` runner.

``LearningWork.request(investigation_id)`` — called by 👍/👎, the 👎 dialog and a
correction in the thread — queues a ``learn`` row (``store.queue.learning``: one waiting
row per investigation, more votes update it) and wakes this replica's worker. Any
replica's worker runs it (``run``) below alerts and people's questions, in the
learning pool (``learning.max_running`` across replicas, never an investigation's
slot) and never in the analyst's thread, so a follow-up there is not held up.

Learning is silent in Slack: its rows are reported to ``Silent``, which logs. A run
whose model was unavailable goes back to the queue with backoff like any row (the
last attempt fails instead); a row given up after crashes settles its runs.
"""

from __future__ import annotations

import logging

from agent.errors import LLMUnavailable
from agent.playbook.learning.service import Learner
from bot.work.contracts import Record, gave_up
from bot.work.worker import Coordinator, ThreadRef, Unavailable
from store.playbook.learning import LearningStore
from store.queue.learning import LearnQueue
from store.queue.types import LEARN_KIND
from store.queue.work import Work
from store.schema import LearningStatus

log = logging.getLogger(__name__)

GAVE_UP = "socbot restarted too often during this learning run"


class LearningFailed(Exception):
    """A learning attempt failed (recorded in ``learning_runs``): the row fails too."""


class LearningWork:
    """Queues learning runs and runs them (a ``Runner`` for the ``learn`` kind)."""

    def __init__(
        self,
        learner: Learner,
        queue: LearnQueue,
        coordinator: Coordinator,
        *,
        enabled: bool = True,
    ) -> None:
        self.learner = learner
        self.queue = queue
        self.coordinator = coordinator
        self.runs: LearningStore = learner.runs
        self.enabled = enabled
        coordinator.register({LEARN_KIND: self}, reporter=Silent())

    async def request(self, investigation_id: str) -> None:
        """Learn from ``investigation_id`` soon (no-op when learning is off)."""
        if not self.enabled or not investigation_id:
            return
        work_id = await self.queue.request(investigation_id)
        log.info("learning from %s queued (work %s)", investigation_id, work_id)
        self.coordinator.start()
        self.coordinator.nudge()

    async def run(self, thread: ThreadRef, work: Work) -> None:
        investigation_id = str(work.request.get("investigation_id") or "")
        last = work.attempts >= self.coordinator.queue.max_attempts
        try:
            status, _ = await self.learner.attempt(
                investigation_id, work_id=work.id, retry=not last
            )
        except LLMUnavailable as exc:
            raise Unavailable(str(exc)) from exc
        if status == LearningStatus.FAILED:
            raise LearningFailed(f"learning from {investigation_id!r} failed")

    async def dropped(self, work: Work) -> None:
        await self.runs.give_up(work.id, GAVE_UP)


class Silent:
    """The ``Reporter`` of background rows (learning, webhook deliveries): nothing is said
    in Slack, it is logged."""

    def __init__(self, what: str = "learning") -> None:
        self.what = what

    async def say(self, thread: ThreadRef, text: str) -> None:
        log.info("%s: %s", self.what, text)

    async def busy(self, thread: ThreadRef) -> None:
        pass

    async def seen(self, channel: str, ts: str) -> None:
        pass

    async def queued(self, thread: ThreadRef, position: int) -> None:
        pass

    async def failed(self, thread: ThreadRef, error: BaseException) -> None:
        log.info("%s failed: %s", self.what, error)

    async def cancelled(self, thread: ThreadRef) -> None:
        pass

    async def gave_up(self, thread: ThreadRef, work: Work, record: Record) -> None:
        log.info("%s: %s", self.what, gave_up(work.attempts))
