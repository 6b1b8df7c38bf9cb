"""A tool call that asks a person first: run it only once approved.

``ask_first`` hands the request to the run's approver (``core.approvals``) and raises
``NotApproved`` — a ``ToolError``, so the model reads why — on a denial, a timeout or
when nobody can be asked. The wait is bounded by ``approvals.timeout_s`` and the
step's deadline; the rest of the plan goes on meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.base import ToolError

if TYPE_CHECKING:
    from core.approvals import ApprovalRequest, Approver, Decision


class NotApproved(ToolError):
    """The call was not approved; the message says by whom, or why no one decided."""


async def ask_first(
    approver: Approver | None, request: ApprovalRequest, within_s: float
) -> Decision:
    """The approving decision, or ``NotApproved``."""
    if approver is None:
        raise NotApproved(
            f"not run: {request.tool} needs a person's approval ({request.why}) and no one "
            "can be asked here"
        )
    if within_s <= 0:
        raise NotApproved(f"not run: no time is left to ask for approval of {request.tool}")
    decision = await approver.decide(request, within_s)
    if not decision.approved:
        raise NotApproved(
            f"not run: {request.tool} needs a person's approval ({request.why}) and was not "
            f"approved: {decision.note}. Do not ask again; go on without it."
        )
    return decision
