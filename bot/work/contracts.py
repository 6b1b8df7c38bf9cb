"""What the worker (``bot.work.worker``) shares with the code it runs.

``ThreadRef`` (where a conversation lives), the ``Reporter`` and ``Runner``
protocols, the exceptions a run raises to say how it ended (``Unavailable``: run
again later; ``SlackRefused``: the outcome never landed; ``RowLost``: another
replica runs the row now), and ``current_run``: the
running row, for the code that posts its messages and records them with the row.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from alerts.parse import Alert
from store.investigations.conversations import conversation_id
from store.queue.work import Work

RESTARTED = "socbot restarted; investigating again."
GAVE_UP = "✖ socbot gave up on this run after {attempts}: it restarted during each of them."
Record = Callable[[str, Any], Awaitable[object]]  # remember ``posted[key]`` with the row
REFUSED = {
    "user": "You already have several requests waiting; ask again when one is answered.",
    "channel": "This channel already has many requests waiting; ask again in a moment.",
}


def gave_up(attempts: int) -> str:
    """What a thread is told of a run given up after ``attempts`` starts (``GAVE_UP``)."""
    return GAVE_UP.format(attempts=f"{attempts} attempt{'s' if attempts != 1 else ''}")


class Unavailable(Exception):
    """A dependency (Gemini, Slack) is unavailable: run the work again later."""


class SlackRefused(Exception):
    """Slack refused an outcome message after every retry: the run failed."""


class RowLost(Exception):
    """The row is no longer this replica's (its lease lapsed and it was taken over,
    or it was handed back): the run stops without posting, the new owner answers."""


@dataclass(frozen=True)
class ThreadRef:
    """Where a conversation lives in Slack."""

    channel: str
    thread_ts: str

    @property
    def conversation_id(self) -> str:
        return conversation_id(self.channel, self.thread_ts)


class Reporter(Protocol):
    """Tells a thread what happened to its work (implementations must not raise)."""

    async def say(self, thread: ThreadRef, text: str) -> None: ...

    async def busy(self, thread: ThreadRef) -> None: ...

    async def seen(self, channel: str, ts: str) -> None: ...

    async def queued(self, thread: ThreadRef, position: int) -> None: ...

    async def failed(self, thread: ThreadRef, error: BaseException) -> None: ...

    async def cancelled(self, thread: ThreadRef) -> None: ...

    async def gave_up(self, thread: ThreadRef, work: Work, record: Record) -> None:
        """``work`` was given up after its last attempt: say so once (``record``: the
        row's ``posted``, where the intent is written before it is said)."""
        ...


class Investigate(Protocol):
    """Runs one investigation in a thread (``EngineInvestigator`` in production)."""

    async def __call__(
        self, thread: ThreadRef, text: str, alert: Alert | None, *, user: str | None = None
    ) -> None: ...


class AlertDispatch(Protocol):
    """An alert channel's triage (``bot.intake.triage.AlertTriage`` in production)."""

    async def dispatch(self, alert: Alert, *, message_ts: str | None = None) -> None: ...


class Runner(Protocol):
    """Runs one kind of work (``bot.runners``)."""

    async def run(self, thread: ThreadRef, work: Work) -> None: ...

    async def dropped(self, work: Work) -> None:
        """The row ended without running here (stopped while queued, given up)."""
        ...


@dataclass
class RunContext:
    """The running row, for the code that posts its messages (``current_run``)."""

    work: Work
    record: Callable[[str, Any], Awaitable[object]]  # remember what was posted with the row
    finishing: Callable[[], None]  # the result is in: a stop no longer changes the outcome
    stopping: Callable[[], bool] = lambda: True  # a person asked to stop it (not a hand-over)


current_run: ContextVar[RunContext | None] = ContextVar("current_run", default=None)


class Watchers(list[Callable[[str], None]]):
    """Whom a queue move is told: each is called with the channel whose queue moved."""

    def __call__(self, channel: str) -> None:
        for watcher in self:
            watcher(channel)
