"""Asking a person before a risky tool call: the request, the decision, the approver.

A tool that must ask first (an MCP tool in its server's ``approval`` list, a BigQuery
query over the per-query byte cap) builds an ``ApprovalRequest`` and awaits an
``Approver``. Slack (an Approve / Deny message in the thread) and the terminal (a y/N
prompt) implement ``Approver`` above the engine; the engine only passes one along
with the request, as it does its ``Sink``. An approver never raises for a refusal: a
denial, a timeout or nobody to ask is a ``Decision`` with ``approved=False``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class ApprovalRequest:
    """What will run, why it asks, and what it is estimated to cost."""

    tool: str
    args: dict[str, Any]
    why: str  # "in the approval list of MCP server 'jira'", "over the per-query cap"
    estimate: str | None = None  # "≈ 42.1 GB scanned, ≈ $0.24 on demand"
    # Filled in by the engine, which knows the run (the tool knows only the call):
    investigation_id: str = ""
    conversation_id: str = ""
    requested_by: str | None = None  # who asked for the investigation (separate duty)

    @property
    def key(self) -> str:
        """The same call in the same conversation: a decision made before a restart holds."""
        canonical = json.dumps([self.conversation_id, self.tool, self.args], sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Decision:
    """The answer: approved or not, by whom, when, in a sentence the model can read."""

    approved: bool
    note: str  # "approved by U123", "denied by U123", "no decision within 900 s"
    by: str | None = None
    at: datetime = field(default_factory=lambda: datetime.now(UTC))


class Approver(Protocol):
    """Asks a person about ``request`` and waits at most ``within_s`` seconds."""

    async def decide(self, request: ApprovalRequest, within_s: float) -> Decision: ...


class NobodyToAsk:
    """The approver where no person can be asked (scripts, ``-q``): always denies."""

    def __init__(self, why: str = "no one can be asked to approve it here") -> None:
        self.why = why

    async def decide(self, request: ApprovalRequest, within_s: float) -> Decision:
        return Decision(approved=False, note=self.why)
