"""Learning runs (``learning_runs``) and the playbook metrics of seed 002.

Every Reflector + Curator attempt is a row, tied to its work row (``work_id``; runs
are work of kind ``learn``): ``running`` when it starts, then ``done`` (``skipped``)
with its result (reflection, operations, proposals), ``failed`` with the error, or
``interrupted`` when the work row runs again. Nothing is lost on failure: the
feedback it started from stays in ``feedback``. A run left ``running`` by a replica
that died is settled by the next attempt of its row (``resume``), when the row gives
up (``give_up``), or by the next attempt of any row (``sweep``). ``metrics`` computes
what ``socbot playbook stats`` prints.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, func, select, update

from store.db.engine import Database
from store.queue.types import LEARN_KIND
from store.schema import (
    Bullet,
    Feedback,
    Investigation,
    LearningRun,
    LearningStatus,
    WorkRow,
    WorkState,
    utcnow,
)

RESTARTED = "socbot restarted during this learning run; it ran again"


class LearningStore:
    """Queries on ``learning_runs``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def start(self, investigation_id: str, *, work_id: int | None = None) -> int:
        """Record that a learning run started; returns its id."""
        async with self.db.session() as session:
            row = LearningRun(
                investigation_id=investigation_id, status=LearningStatus.RUNNING, work_id=work_id
            )
            session.add(row)
            await session.flush()
            return row.id

    async def finish(
        self,
        run_id: int,
        *,
        status: LearningStatus,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        tokens: int = 0,
    ) -> None:
        """Store how the run ended (once: a run settled already, e.g. given up, stays so)."""
        async with self.db.session() as session:
            await session.execute(
                update(LearningRun)
                .where(LearningRun.id == run_id, LearningRun.status == LearningStatus.RUNNING)
                .values(
                    status=status, result=result, error=error, tokens=tokens, finished_at=utcnow()
                )
            )

    async def checkpoint(self, run_id: int, result: dict[str, Any]) -> None:
        """Store what a running run has done so far (a later attempt goes on from it)."""
        async with self.db.session() as session:
            await session.execute(
                update(LearningRun).where(LearningRun.id == run_id).values(result=dict(result))
            )

    async def resume(self, work_id: int) -> dict[str, Any] | None:
        """A new attempt of ``work_id``: earlier attempts still ``running`` (their replica
        died) become ``interrupted``; returns the latest reflection they recorded."""
        await self.sweep()
        await self._settle(work_id, LearningStatus.INTERRUPTED, RESTARTED)
        query = (
            select(LearningRun.result)
            .where(LearningRun.work_id == work_id, LearningRun.status == LearningStatus.INTERRUPTED)
            .order_by(LearningRun.id.desc())
        )
        async with self.db.session() as session:
            for result in await session.scalars(query):
                if result and isinstance(result.get("reflection"), dict):
                    return dict(result["reflection"])
        return None

    async def give_up(self, work_id: int, error: str) -> int:
        """The work row failed without running here: its unfinished runs are ``failed``."""
        return await self._settle(work_id, LearningStatus.FAILED, error) + await self.sweep()

    async def sweep(self) -> int:
        """Runs left ``running`` by replicas that died while their row is no longer running
        (queued again: ``interrupted``; failed or cancelled: ``failed``)."""
        settled = 0
        for states, status in (
            ((WorkState.QUEUED,), LearningStatus.INTERRUPTED),
            ((WorkState.FAILED, WorkState.CANCELLED), LearningStatus.FAILED),
        ):
            rows = select(WorkRow.id).where(WorkRow.kind == LEARN_KIND, WorkRow.state.in_(states))
            async with self.db.session() as session:
                result = await session.execute(
                    update(LearningRun)
                    .where(
                        LearningRun.status == LearningStatus.RUNNING, LearningRun.work_id.in_(rows)
                    )
                    .values(status=status, error=RESTARTED, finished_at=utcnow())
                )
                settled += result.rowcount if isinstance(result, CursorResult) else 0
        return settled

    async def _settle(self, work_id: int, status: LearningStatus, error: str) -> int:
        async with self.db.session() as session:
            result = await session.execute(
                update(LearningRun)
                .where(LearningRun.work_id == work_id, LearningRun.status == LearningStatus.RUNNING)
                .values(status=status, error=error, finished_at=utcnow())
            )
            return result.rowcount if isinstance(result, CursorResult) else 0

    async def runs(self, investigation_id: str | None = None) -> list[dict[str, Any]]:
        """Learning runs, oldest first (of one investigation when given)."""
        query = select(LearningRun).order_by(LearningRun.id)
        if investigation_id is not None:
            query = query.where(LearningRun.investigation_id == investigation_id)
        async with self.db.session() as session:
            return [
                {
                    "id": r.id,
                    "investigation_id": r.investigation_id,
                    "status": r.status,
                    "error": r.error,
                    "result": r.result,
                    "tokens": r.tokens,
                    "work_id": r.work_id,
                }
                for r in await session.scalars(query)
            ]


def _since(db: Database, days: int) -> datetime:
    cutoff = utcnow() - timedelta(days=days)
    return cutoff.replace(tzinfo=None) if db.is_sqlite else cutoff


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _mean(values: list[int]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


async def metrics(db: Database, *, days: int = 90) -> dict[str, Any]:
    """Seed 002's metrics over the last ``days`` days.

    ``hit_rate``: bullets the model cited / bullets loaded. ``agreement``: share of
    analyst votes saying the verdict was right, for investigations with and without
    playbook bullets in their prompts. ``corrections_per_week``: 👎 votes and written
    corrections per ISO week. ``tokens``: mean tokens per planned investigation.
    """
    since = _since(db, days)
    async with db.session() as session:
        statuses = {
            str(status): int(count)
            for status, count in await session.execute(
                select(Bullet.status, func.count()).group_by(Bullet.status)
            )
        }
        runs = [
            (str(inv_id), record, usage)
            for inv_id, record, usage in await session.execute(
                select(Investigation.id, Investigation.record, Investigation.usage).where(
                    Investigation.created_at >= since, Investigation.mode == "planned"
                )
            )
        ]
        votes = [
            (str(inv_id), str(value), at)
            for inv_id, value, at in await session.execute(
                select(Feedback.investigation_id, Feedback.value, Feedback.created_at).where(
                    Feedback.created_at >= since
                )
            )
        ]
        learning = {
            str(status): int(count)
            for status, count in await session.execute(
                select(LearningRun.status, func.count())
                .where(LearningRun.created_at >= since)
                .group_by(LearningRun.status)
            )
        }
    with_bullets: set[str] = set()
    loaded = used = 0
    tokens: dict[str, list[int]] = {"with": [], "without": []}
    for inv_id, record, usage in runs:
        book = (record or {}).get("playbook") or {}
        n_loaded, n_used = len(book.get("loaded") or []), len(book.get("used") or [])
        loaded, used = loaded + n_loaded, used + n_used
        if n_loaded:
            with_bullets.add(inv_id)
        total = (usage or {}).get("total_tokens")
        if isinstance(total, int):
            tokens["with" if n_loaded else "without"].append(total)
    agree: dict[str, Counter[str]] = {"with": Counter(), "without": Counter()}
    weeks: Counter[str] = Counter()
    for inv_id, value, at in votes:
        agree["with" if inv_id in with_bullets else "without"][value] += 1
        if value == "incorrect":
            year, week, _ = at.isocalendar()
            weeks[f"{year}-W{week:02d}"] += 1
    return {
        "days": days,
        "bullets": dict(sorted(statuses.items())),
        "investigations": len(runs),
        "with_bullets": len(with_bullets),
        "bullets_loaded_per_investigation": _rate(loaded, len(runs)),
        "hit_rate": _rate(used, loaded),
        "agreement": {
            key: {"votes": sum(c.values()), "rate": _rate(c["correct"], sum(c.values()))}
            for key, c in agree.items()
        },
        "corrections_per_week": dict(sorted(weeks.items())),
        "tokens_per_investigation": {k: _mean(v) for k, v in tokens.items()},
        "learning_runs": dict(sorted(learning.items())),
    }
