"""Investigations and their append-only trace.

The engine calls ``create`` when a run starts and ``finish`` when it ends; in
between, ``recorder(investigation_id)`` is a progress sink that writes every event
to ``trace_events`` as it happens, so the trace survives a crash or a kill. Writes
run in a background task in batches, so the engine never waits for the disk;
``finish`` flushes them first. A tool result inside an event is its JSON up to
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
        """Append ``(investigation_id, type, payload)`` trace events in one transaction."""
        async with self.db.session() as session:
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
        recorder = TraceRecorder(self, investigation_id)
        self._recorders[investigation_id] = recorder
        return recorder


class TraceRecorder:
    """Sink writing events to ``trace_events`` in order, without making the engine wait.

    ``emit`` queues the event; one writer task per run drains the queue, a batch per
    transaction, for as long as events keep coming. ``flush`` waits until everything
    queued is written. Events of another investigation id (there should be none) are
    recorded under their own id, so nothing is silently attributed to the wrong run.
    """

    def __init__(self, store: InvestigationStore, investigation_id: str) -> None:
        self.store = store
        self.investigation_id = investigation_id
        self._pending: list[tuple[str, str, dict[str, Any]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def emit(self, event: Event) -> None:
        """Queue ``event`` for the writer task (started when none is running)."""
        payload = event.model_dump(mode="json", exclude={"type", "investigation_id"})
        self._pending.append((event.investigation_id or self.investigation_id, event.type, payload))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain())

    async def flush(self) -> None:
        """Wait until every queued event is written (or its batch failed and was logged)."""
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await self.store.append_events(batch)
            except Exception:  # fail open: a lost trace batch must not end the run
                log.exception("could not write %d trace events", len(batch))


def _text(record: dict[str, Any], section: str, key: str) -> str | None:
    """``record[section][key]`` when it is text (a list filters on it), else ``None``."""
    part = record.get(section)
    value = part.get(key) if isinstance(part, dict) else None
    return value[:32] if isinstance(value, str) else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
