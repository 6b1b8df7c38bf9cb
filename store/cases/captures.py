"""Disagreements into the team's pack: the ``case_capture`` row a resolution queues.

A case resolved with a disposition that disagrees with socbot's verdict (the rule of
``core.quality.agrees``: a ``duplicate`` says nothing, ``inconclusive`` never agrees) is
a regression case for the team. ``transitions.resolve(capture=True)`` queues its row in
the decision's own transaction, so the capture is as durable as the decision and queued
once across replicas (the decision itself is recorded once); whichever replica claims the
row writes the scenario (``evals.team_capture``), off the click's path.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from core.quality import Outcome, agrees
from store.queue.types import BACKGROUND_PRIORITY
from store.schema import CaseRow, WorkKind, WorkRow, WorkState, utcnow


def disagrees(verdict: str | None, disposition: str | None) -> bool:
    """socbot said ``verdict``, the analyst ``disposition``: do they disagree?"""
    return agrees(Outcome(verdict=verdict, disposition=disposition)) is False


def queue_capture(session: AsyncSession, case: CaseRow, revision: int) -> bool:
    """Queue the capture of the resolved ``case`` when it disagrees (True if queued)."""
    if not disagrees(case.socbot_verdict, case.disposition):
        return False
    session.add(
        WorkRow(
            kind=WorkKind.CASE_CAPTURE,
            state=WorkState.QUEUED,
            priority=BACKGROUND_PRIORITY,
            thread=f"capture:{case.id}",
            channel=case.channel or "",
            thread_ts=case.thread_ts or "",
            request={
                "case_id": case.id,
                "revision": revision,
                "investigation_id": case.investigation_id,
                "disposition": case.disposition,
                "verdict": case.socbot_verdict,
            },
            attempts=0,
            stop_requested=False,
            posted={},
            created_at=utcnow(),
        )
    )
    return True
