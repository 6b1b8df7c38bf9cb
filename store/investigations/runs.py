"""Investigations and their append-only trace.

The engine calls ``create`` when a run starts and ``finish`` when it ends; in
between, ``recorder(investigation_id)`` is a progress sink that writes every event
to ``trace_events`` as it happens, so the trace survives a crash or a kill. Writes
run in one background task in batches (every run's events since the last batch in one
transaction, after any session that is waiting), so the engine never waits for the
disk; ``finish`` flushes the run's first. A tool result inside an event is its JSON up to
``core.events.STORED_RESULT_CHARS`` (64 KiB; ``result_chars`` counts the whole).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from sqlalchemy import CursorResult, func, select, update

from core.events import Event
from store.db.engine import Database
from store.schema import (
    CaseRow,
    Investigation,
    InvestigationStatus,
    TraceEvent,
    run_figures,
    utcnow,
)
from store.schema.search import digest_of

log = logging.getLogger(__name__)


class InvestigationStore:
    """Queries on ``investigations`` and ``trace_events``."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._recorders: dict[str, TraceRecorder] = {}
        self._writer = TraceWriter(self)  # one writer task for every run's trace

    async def create(
        self, investigation_id: str, conversation_id: str, kind: str, input_text: str
    ) -> None:
        """Record that a run started (status ``running``)."""
        async with self.db.session() as session:
            session.add(
                Investigation(
                    id=investigation_id,
                    conversation_id=conversation_id,
                    kind=kind,
                    status=InvestigationStatus.RUNNING,
                    input=input_text,
                )
            )

    async def finish(
        self,
        investigation_id: str,
        *,
        status: InvestigationStatus,
        mode: str | None,
        objective: str | None,
        verdict: str | None,
        record: dict[str, Any],
        usage: dict[str, Any],
        error: str | None,
    ) -> None:
        """Store the final summary of a run; a no-op (logged) for an unknown id."""
        recorder = self._recorders.pop(investigation_id, None)
        if recorder is not None:
            await recorder.flush()
        finished = utcnow()
        async with self.db.session() as session:
            result = await session.execute(
                update(Investigation)
                .where(Investigation.id == investigation_id)
                .values(
                    status=status,
                    mode=mode,
                    objective=objective,
                    verdict=verdict,
                    severity=_text(record, "conclusion", "severity"),
                    source=_text(record, "alert", "source"),
                    record=record,
                    digest=digest_of(record) or None,
                    usage=usage,
                    error=error,
                    finished_at=finished,
                )
            )
            if isinstance(result, CursorResult) and result.rowcount == 0:
                log.warning("finish() for unknown investigation %r", investigation_id)
                return
            created = await session.scalar(
                select(Investigation.created_at).where(Investigation.id == investigation_id)
            )
            await session.execute(  # a case opened before the run finished keeps up
                update(CaseRow)
                .where(CaseRow.investigation_id == investigation_id)
                .values(**run_figures(usage, record, created, finished))
            )

    async def interrupt(
        self,
        investigation_id: str,
        *,
        replaced_by: str | None,
        error: str = "socbot stopped during this run",
    ) -> bool:
        """Settle a run that a crash cut short (status ``interrupted``), linked to the run
        that replaced it (None: given up, ``error`` says why); False when settled already."""
        async with self.db.session() as session:
            result = await session.execute(
                update(Investigation)
                .where(
                    Investigation.id == investigation_id,
                    Investigation.status == InvestigationStatus.RUNNING,
                )
                .values(
                    status=InvestigationStatus.INTERRUPTED,
                    replaced_by=replaced_by,
                    error=error,
                    finished_at=utcnow(),
                )
            )
            return isinstance(result, CursorResult) and result.rowcount == 1

    async def get(self, investigation_id: str) -> Investigation | None:
        """The investigation row (detached; attributes loaded) or ``None``."""
        async with self.db.session() as session:
            return await session.get(Investigation, investigation_id)

    async def append_events(self, events: list[tuple[str, str, dict[str, Any]]]) -> None:
        """Append ``(investigation_id, type, payload)`` trace events in one transaction
        (a background session: investigations' own writes go first)."""
        async with self.db.background() as session:
            session.add_all(
                TraceEvent(investigation_id=inv, type=type_, payload=payload)
                for inv, type_, payload in events
            )

    async def trace(self, investigation_id: str) -> list[dict[str, Any]]:
        """Every trace event, in the order written: ``{seq, type, at, payload}``."""
        async with self.db.session() as session:
            rows = await session.execute(  # columns, not ORM objects: a page reads hundreds
                select(TraceEvent.id, TraceEvent.type, TraceEvent.created_at, TraceEvent.payload)
                .where(TraceEvent.investigation_id == investigation_id)
                .order_by(TraceEvent.id)
            )
            return [
                {
                    "seq": row.id,
                    "type": row.type,
                    "at": _iso(row.created_at),
                    "payload": row.payload,
                }
                for row in rows
            ]

    async def revision(self, investigation_id: str) -> tuple[int, int]:
        """The trace's last event id and its number of events: which version of the
        trace a page drew (events are only appended, so a new one changes both)."""
        async with self.db.session() as session:
            last, count = (
                await session.execute(
                    select(func.max(TraceEvent.id), func.count(TraceEvent.id)).where(
                        TraceEvent.investigation_id == investigation_id
                    )
                )
            ).one()
            return int(last or 0), int(count or 0)

    def recorder(self, investigation_id: str) -> TraceRecorder:
        """A progress sink that appends every event of this run to the trace."""
        recorder = TraceRecorder(self._writer, investigation_id)
        self._recorders[investigation_id] = recorder
        return recorder


class TraceRecorder:
    """Sink writing one run's events to ``trace_events`` in order, without making the
    engine wait: ``emit`` queues the event on the store's ``TraceWriter``, ``flush`` waits
    until everything this run queued is written. Events of another investigation id
    (there should be none) are recorded under their own id, so nothing is silently
    attributed to the wrong run."""

    def __init__(self, writer: TraceWriter, investigation_id: str) -> None:
        self.writer = writer
        self.investigation_id = investigation_id
        self._last = 0  # the writer's number of the last event this run queued

    async def emit(self, event: Event) -> None:
        """Queue ``event`` for the writer task."""
        payload = event.model_dump(mode="json", exclude={"type", "investigation_id"})
        row = (event.investigation_id or self.investigation_id, event.type, payload)
        self._last = self.writer.put(row)

    async def flush(self) -> None:
        """Wait until every event queued so far is written (or its batch failed, logged)."""
        await self.writer.written(self._last)


class TraceWriter:
    """The store's one writer task: the events every run queued since the last batch go
    in one background transaction (``Database.background``), for as long as events keep
    coming. A batch that fails is tried again run by run, so one run's bad event does not
    lose the others'; what still fails is logged (a lost trace batch never ends a run)."""

    def __init__(self, store: InvestigationStore) -> None:
        self.store = store
        self._pending: list[tuple[str, str, dict[str, Any]]] = []
        self._queued = 0  # events queued since the store was made (FIFO numbers)
        self._done = 0  # of those, written or given up
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()  # set after each batch (a new one per writer task)

    def put(self, row: tuple[str, str, dict[str, Any]]) -> int:
        """Queue ``row``; its number, for ``written``."""
        self._pending.append(row)
        self._queued += 1
        if self._task is None or self._task.done():
            self._wake = asyncio.Event()
            self._task = asyncio.create_task(self._drain())
        return self._queued

    async def written(self, number: int) -> None:
        """Wait until the events up to ``number`` are written (or given up)."""
        while self._done < number and self._task is not None and not self._task.done():
            await self._wake.wait()

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await self._write(batch)
            finally:
                self._done += len(batch)
                self._wake.set()
                self._wake = asyncio.Event()

    async def _write(self, batch: list[tuple[str, str, dict[str, Any]]]) -> None:
        try:
            await self.store.append_events(batch)
            return
        except Exception:
            if len({inv for inv, _, _ in batch}) == 1:
                log.exception("could not write %d trace events", len(batch))
                return
        runs: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
        for row in batch:
            runs.setdefault(row[0], []).append(row)
        for inv, rows in runs.items():
            try:
                await self.store.append_events(rows)
            except Exception:  # fail open
                log.exception("could not write %d trace events of %s", len(rows), inv)


def _text(record: dict[str, Any], section: str, key: str) -> str | None:
    """``record[section][key]`` when it is text (a list filters on it), else ``None``."""
    part = record.get(section)
    value = part.get(key) if isinstance(part, dict) else None
    return value[:32] if isinstance(value, str) else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
