"""The shapes of work rows (``store.queue.work``): what is queued, what a worker sees, limits.

``priority`` orders the queue: alerts by severity, then people's questions, then
background work (``learn``: learning from feedback), which runs in a pool of its own
(``QueueLimits.running_background``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store.investigations.conversations import conversation_id
from store.schema import WorkKind, WorkRow, WorkState

CHAT_KINDS = (WorkKind.MENTION, WorkKind.FOLLOWUP)
LEARN_KIND = WorkKind.LEARN
PRUNE_KIND = WorkKind.PRUNE  # data lifetime (``store.retention``)
DEFERRED_KIND = WorkKind.POLICY_DEFERRED  # an alert a budget held (``store.queue.deferred``)
WAITING_KINDS = (PRUNE_KIND, DEFERRED_KIND)  # not "queued" in the counts: they wait by design
BACKGROUND_KINDS = (LEARN_KIND, PRUNE_KIND)  # not an investigation's slot (``running_background``)
ACTIVE = (WorkState.QUEUED, WorkState.RUNNING)
SEVERITY_PRIORITY = {"critical": 50, "high": 40, "medium": 30, "low": 25, "info": 22}
ALERT_PRIORITY = 20  # an alert of unknown severity still goes before chat
CHAT_PRIORITY = 10
BACKGROUND_PRIORITY = 0


def priority(kind: str, severity: str | None = None) -> int:
    """Alerts by severity, then people's questions, then background work (higher first)."""
    if kind in CHAT_KINDS:
        return CHAT_PRIORITY
    if kind in BACKGROUND_KINDS:
        return BACKGROUND_PRIORITY
    return SEVERITY_PRIORITY.get((severity or "").lower(), ALERT_PRIORITY)


@dataclass(frozen=True)
class QueueLimits:
    """Limits that hold across every replica (``work`` settings)."""

    running: int = 3
    running_per_user: int = 2
    running_per_channel: int = 3
    queued_per_user: int = 5
    queued_per_channel: int = 20
    running_background: int = 1  # learning runs, beside the investigations' ``running``


@dataclass(frozen=True)
class Job:
    """Work to queue: what, where (the Slack thread), for whom, how urgent."""

    kind: str  # "alert" | "mention" | "followup"
    channel: str
    thread_ts: str
    text: str = ""  # the request (mentions, follow-ups)
    requester: str | None = None  # Slack user id of a person's request
    alert_id: str | None = None
    priority: int = CHAT_PRIORITY
    # the replica launching the alert (``alerts.launch_by``): queued only while it still
    # is, not after another replica took the launch over (``store.triage._stale``)
    launched_by: str | None = None

    @property
    def thread(self) -> str:
        return conversation_id(self.channel, self.thread_ts)


@dataclass(frozen=True)
class Work:
    """A row as a worker sees it."""

    id: int
    kind: str
    channel: str
    thread_ts: str
    thread: str
    requester: str | None
    alert_id: str | None
    request: dict[str, Any]
    attempts: int
    posted: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    state: str = WorkState.QUEUED  # as read: "failed" for a row given up after its last attempt

    @property
    def text(self) -> str:
        return str(self.request.get("text", ""))

    @classmethod
    def of(cls, row: WorkRow) -> Work:
        return cls(
            id=row.id,
            kind=row.kind,
            channel=row.channel,
            thread_ts=row.thread_ts,
            thread=row.thread,
            requester=row.requester,
            alert_id=row.alert_id,
            request=dict(row.request or {}),
            attempts=row.attempts,
            posted=dict(row.posted or {}),
            error=row.error,
            state=row.state,
        )


@dataclass(frozen=True)
class Submitted:
    """``id`` of the new row, or ``refused`` saying which limit was reached."""

    id: int | None
    refused: str | None = None  # "user" | "channel" | "taken" (the launch, by another)


@dataclass
class Claimed:
    started: list[Work] = field(default_factory=list)
    given_up: list[Work] = field(default_factory=list)  # expired max_attempts times: failed
    queued: int = 0  # rows still waiting in the whole queue
