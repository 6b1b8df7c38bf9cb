"""Investigations and their append-only trace.

The engine calls ``create`` when a run starts and ``finish`` when it ends; in
between, ``recorder(investigation_id)`` is a progress sink that writes every event
to ``trace_events`` as it happens, so the trace survives a crash or a kill. Tool
results inside events are already truncated previews.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from sqlalchemy import CursorResult, select, update

from agent.events import Event
from store.db import Database
from store.models import Investigation, TraceEvent, utcnow

log = logging.getLogger(__name__)


class InvestigationStore:
    """Queries on ``investigations`` and ``trace_events``."""

    def __init__(self, db: Database) -> None:
        self.db = db

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
                    status="running",
                    input=input_text,
                )
            )

    async def finish(
        self,
        investigation_id: str,
        *,
        status: str,
        mode: str | None,
        objective: str | None,
        verdict: str | None,
        record: dict[str, Any],
        usage: dict[str, Any],
        error: str | None,
    ) -> None:
        """Store the final summary of a run; a no-op (logged) for an unknown id."""
        async with self.db.session() as session:
            result = await session.execute(
                update(Investigation)
                .where(Investigation.id == investigation_id)
                .values(
                    status=status,
                    mode=mode,
                    objective=objective,
                    verdict=verdict,
                    record=record,
                    usage=usage,
                    error=error,
                    finished_at=utcnow(),
                )
            )
            if isinstance(result, CursorResult) and result.rowcount == 0:
                log.warning("finish() for unknown investigation %r", investigation_id)

    async def get(self, investigation_id: str) -> Investigation | None:
        """The investigation row (detached; attributes loaded) or ``None``."""
        async with self.db.session() as session:
            return await session.get(Investigation, investigation_id)

    async def append_event(
        self, investigation_id: str, type_: str, payload: dict[str, Any]
    ) -> None:
        """Append one trace event in its own transaction."""
        async with self.db.session() as session:
            session.add(TraceEvent(investigation_id=investigation_id, type=type_, payload=payload))

    async def trace(self, investigation_id: str) -> list[dict[str, Any]]:
        """Every trace event, in the order written: ``{seq, type, at, payload}``."""
        async with self.db.session() as session:
            rows = await session.scalars(
                select(TraceEvent)
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

    def recorder(self, investigation_id: str) -> TraceRecorder:
        """A progress sink that appends every event of this run to the trace."""
        return TraceRecorder(self, investigation_id)


class TraceRecorder:
    """Sink writing each event to ``trace_events`` immediately, one at a time, in order.

    Events of another investigation id (there should be none) are recorded under
    their own id, so nothing is silently attributed to the wrong run.
    """

    def __init__(self, store: InvestigationStore, investigation_id: str) -> None:
        self.store = store
        self.investigation_id = investigation_id
        self._lock = asyncio.Lock()

    async def emit(self, event: Event) -> None:
        payload = event.model_dump(mode="json", exclude={"type", "investigation_id"})
        async with self._lock:
            await self.store.append_event(
                event.investigation_id or self.investigation_id, event.type, payload
            )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
