"""Disagreements into the team's pack: the ``case_capture`` row a resolution queues.

A case resolved with a disposition that disagrees with socbot's verdict (the rule of
``core.quality.agrees``: a ``duplicate`` says nothing, ``inconclusive`` never agrees) is
a regression case for the team; so is an auto-resolved case whose blind review
(``audit_disposition``) disagrees with the verdict socbot closed it on.
``transitions.resolve(capture=True)`` and ``auto.audit(capture=True)`` queue its row in
the decision's own transaction, so the capture is as durable as the decision and queued
once across replicas (the decision itself is recorded once); whichever replica claims the
row writes the scenario (``evals.team_capture``), off the click's path.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from core.quality import Outcome, agrees
from store.queue.types import BACKGROUND_PRIORITY
from store.schema import CaseAction, CaseRow, WorkKind, WorkRow, WorkState, utcnow


def disagrees(verdict: str | None, disposition: str | None) -> bool:
    """socbot said ``verdict``, the analyst ``disposition``: do they disagree?"""
    return agrees(Outcome(verdict=verdict, disposition=disposition)) is False


def queue_capture(
    session: AsyncSession, case: CaseRow, revision: int, action: CaseAction = CaseAction.RESOLVED
) -> bool:
    """Queue the capture of the resolved (or, ``action`` audited, blind-reviewed) ``case``
    when the person's answer disagrees with socbot (True if queued)."""
    audit = action == CaseAction.AUDITED
    truth = case.audit_disposition if audit else case.disposition
    if not disagrees(case.socbot_verdict, truth):
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
                "disposition": truth,
                "verdict": case.socbot_verdict,
                "audit": audit,
            },
            attempts=0,
            stop_requested=False,
            posted={},
            created_at=utcnow(),
        )
    )
    return True
