"""The run's approver, as the tools see it: fills in the run, records in the trace.

A tool asks with what it knows (the call, why, the estimate); ``RunApprover`` adds the
investigation, the conversation and who asked for the run (for separate duty), emits
``ApprovalAsked`` and ``ApprovalDecided`` (who and when) to the run's sinks — the
trace among them — and passes the request to the approver the caller gave the run
(Slack, the terminal).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from core.approvals import ApprovalRequest, Approver, Decision
from core.events import ApprovalAsked, ApprovalDecided, Sink
from core.scope import Scope


class Asking(Protocol):
    """What of a run's request its tools need (``agent.run.Request``): who asked, where,
    whom to ask before a risky call, and which past alerts the request may see."""

    @property
    def conversation_id(self) -> str: ...
    @property
    def user(self) -> str | None: ...
    @property
    def approver(self) -> Approver | None: ...
    @property
    def scope(self) -> Scope: ...


class RunApprover:
    """``Approver`` for one run's tools, around the caller's approver."""

    def __init__(
        self,
        inner: Approver,
        sink: Sink,
        *,
        investigation_id: str,
        conversation_id: str,
        requested_by: str | None,
    ) -> None:
        self.inner = inner
        self.sink = sink
        self.investigation_id = investigation_id
        self.conversation_id = conversation_id
        self.requested_by = requested_by

    async def decide(self, request: ApprovalRequest, within_s: float) -> Decision:
        full = replace(
            request,
            investigation_id=self.investigation_id,
            conversation_id=self.conversation_id,
            requested_by=self.requested_by,
        )
        await self.sink.emit(
            ApprovalAsked(
                investigation_id=self.investigation_id,
                tool=full.tool,
                args=full.args,
                why=full.why,
                estimate=full.estimate,
            )
        )
        decision = await self.inner.decide(full, within_s)
        await self.sink.emit(
            ApprovalDecided(
                investigation_id=self.investigation_id,
                tool=full.tool,
                approved=decision.approved,
                by=decision.by,
                at=decision.at.isoformat(),
                note=decision.note,
            )
        )
        return decision
