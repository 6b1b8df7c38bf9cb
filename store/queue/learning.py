"""Learning runs as work rows (kind ``learn``), one waiting row per investigation.

A vote or a correction asks for learning from an investigation: ``LearnQueue.request``
queues a ``learn`` row, which a worker claims like any other row (lease, takeover,
``max_attempts``, backoff; ``store.queue.work``). Its thread key is ``learn:<investigation
id>``, not the Slack thread: a learning run never holds the analyst's thread, so the
next question there runs at once, and one investigation is learned from by one run at
a time.

A row already waiting for the same investigation is updated instead of adding a run
(``request["requests"]`` counts the asks; the first ask's ``not_before`` stands), so
that votes and corrections given together become one run that reads them all. The
partial unique index ``uq_work_queued_learn`` keeps it so across replicas.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Executable, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from store.db.engine import Database
from store.queue.types import LEARN_KIND, priority
from store.schema import WorkRow, WorkState, utcnow

QUEUED_LEARN = "state = 'queued' AND kind = 'learn'"
TRIES = 3  # a waiting row claimed between our insert and our update: insert again


def learn_thread(investigation_id: str) -> str:
    """The thread key of an investigation's learning rows."""
    return f"learn:{investigation_id}"


class LearnQueue:
    """Queues learning from an investigation (see the module docstring)."""

    def __init__(self, db: Database, *, settle_s: float = 0.0) -> None:
        self.db = db
        self.settle = timedelta(seconds=settle_s)

    async def request(self, investigation_id: str) -> int:
        """Queue learning from ``investigation_id``; the id of the (possibly updated) row."""
        thread = learn_thread(investigation_id)
        for _ in range(TRIES):
            async with self.db.session() as session:
                inserted = await session.scalar(self._insert(investigation_id, thread))
                if inserted is not None:
                    return int(inserted)
                waiting = select(WorkRow).where(
                    WorkRow.thread == thread,
                    WorkRow.kind == LEARN_KIND,
                    WorkRow.state == WorkState.QUEUED,
                )
                if not self.db.is_sqlite:
                    waiting = waiting.with_for_update()
                row = await session.scalar(waiting)
                if row is not None:
                    asks = int((row.request or {}).get("requests", 1)) + 1
                    row.request = {**(row.request or {}), "requests": asks}
                    return row.id
        raise RuntimeError(f"could not queue learning from {investigation_id!r}")

    def _insert(self, investigation_id: str, thread: str) -> Executable:
        now = utcnow()
        not_before = now + self.settle
        if self.db.is_sqlite:  # SQLite stores naive UTC
            not_before = not_before.replace(tzinfo=None)
        insert = sqlite_insert if self.db.is_sqlite else pg_insert
        return (
            insert(WorkRow)
            .values(
                kind=LEARN_KIND,
                state=WorkState.QUEUED,
                priority=priority(LEARN_KIND),
                thread=thread,
                channel="",
                thread_ts="",
                request={"investigation_id": investigation_id, "requests": 1},
                attempts=0,
                not_before=not_before,
                stop_requested=False,
                posted={},
                created_at=now,
            )
            .on_conflict_do_nothing(index_elements=[WorkRow.thread], index_where=text(QUEUED_LEARN))
            .returning(WorkRow.id)
        )
