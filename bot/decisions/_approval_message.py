"""The approval message: what will run, why, the estimate, Approve / Deny; then its outcome.

The call's arguments were written by the model from untrusted data: they are shown in
a code block, escaped and defanged, whose fence a triple backtick in them cannot close
(``bot.blocks.kit.code_block``), never as mrkdwn of their own.
"""

from __future__ import annotations

import json
from typing import Any

from bot.blocks.escape import mrkdwn
from bot.blocks.kit import button, code_block, section
from core.approvals import ApprovalRequest
from store.approvals import Approval

ARGS_CHARS = 1500
OUTCOME = {"approved": "✅ Approved", "denied": "⛔ Denied", "expired": "⌛ Expired"}


def request_blocks(
    approval_id: int, request: ApprovalRequest, *, approvers: str
) -> list[dict[str, Any]]:
    """The request, with buttons whose value is the stored request's id."""
    facts = [f"*Tool:* `{mrkdwn(request.tool)}`", f"*Why it asks:* {mrkdwn(request.why)}"]
    if request.estimate:
        facts.append(f"*Estimate:* {mrkdwn(request.estimate)}")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Approval needed"}},
        section("\n".join(facts)),
        section("*Arguments:*\n" + code_block(_args(request.args), ARGS_CHARS)),
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": f"Investigation `{mrkdwn(request.investigation_id)}` waits for "
                    f"this step; the rest of the plan goes on. Who may decide: {approvers}.",
                }
            ],
        },
        {
            "type": "actions",
            "block_id": "approval",
            "elements": [
                button("Approve", "approval_approve", str(approval_id), "primary"),
                button("Deny", "approval_deny", str(approval_id), "danger"),
            ],
        },
    ]
    return blocks


def decided_blocks(approval: Approval) -> list[dict[str, Any]]:
    """The message once decided or expired: who and when, no buttons."""
    line = f"{OUTCOME.get(approval.status, approval.status)}: `{mrkdwn(approval.tool)}`"
    if approval.decided_by:
        line += f" by <@{approval.decided_by}>"
    if approval.decided_at:
        line += f" at {approval.decided_at:%Y-%m-%d %H:%M} UTC"
    facts = [line, f"*Why it asked:* {mrkdwn(approval.why)}"]
    if approval.estimate:
        facts.append(f"*Estimate:* {mrkdwn(approval.estimate)}")
    return [section("\n".join(facts))]


def _args(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, indent=1, default=str)
