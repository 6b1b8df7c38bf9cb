"""The states that rows move through, named once: every column that holds one is ``String``.

``StrEnum`` members are their strings (``AlertStatus.QUEUED == "queued"``, and the same in
f-strings, ``json.dumps``, SQL parameters and metrics labels), so the stored values are the
plain words the migrations wrote. A new state goes here, never as a literal where it is used.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal


class AlertStatus(StrEnum):
    """``alerts.status``: where an alert is in triage (``store.triage.states``), or why the
    alert policy held it (``bot.intake.policy``). NULL for alerts that never went through."""

    RECEIVED = "received"  # stored, not placed yet: any replica's sweep places it
    QUEUED = "queued"
    INVESTIGATING = "investigating"
    CONCLUDED = "concluded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    GROUPED = "grouped"  # under the alert investigated for it (``group_id``)
    DEFERRED = "deferred"  # investigated when there is room
    IGNORED = "ignored"  # the policy's ``ignore``
    SUPPRESSED = "suppressed"  # the policy's ``suppress``, or an analyst's suppression
    OVER_BUDGET = "over_budget"  # a budget held it: a ``policy_deferred`` work row waits


class WorkState(StrEnum):
    """``work.state``: queued → running → done | failed | cancelled (``store.queue.work``)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class WorkKind(StrEnum):
    """``work.kind``: what a work row is, and which runner takes it."""

    ALERT = "alert"
    MENTION = "mention"
    FOLLOWUP = "followup"
    LEARN = "learn"  # learning from feedback (background)
    PRUNE = "prune"  # data lifetime (``store.retention``; background)
    POLICY_DEFERRED = "policy_deferred"  # an alert a budget held (``store.queue.deferred``)
    NOTIFY = "notify"  # a webhook delivery (``bot.notify``)
    CASE_POST = "case_post"  # a case decision or reminder told in its thread (``bot.decisions``)
    CASE_CAPTURE = "case_capture"  # a disagreement into the team's pack (``evals.team_capture``)
    CASE_DIGEST = "case_digest"  # the weekly digest (``bot.decisions.case_digest``)


class InvestigationStatus(StrEnum):
    """``investigations.status``: ``running`` until the engine's outcome (the last four) is
    stored, or ``interrupted`` when a crash cut the run short."""

    RUNNING = "running"
    INTERRUPTED = "interrupted"
    ANSWERED = "answered"
    CONCLUDED = "concluded"
    FAILED = "failed"
    CANCELLED = "cancelled"


# how an engine run ends (``agent.run.Outcome.status``)
RunEnd = Literal[
    InvestigationStatus.ANSWERED,
    InvestigationStatus.CONCLUDED,
    InvestigationStatus.FAILED,
    InvestigationStatus.CANCELLED,
]


class LearningStatus(StrEnum):
    """``learning_runs.status`` (``store.playbook.learning``)."""

    RUNNING = "running"
    DONE = "done"
    SKIPPED = "skipped"  # no analyst feedback to learn from
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # the work row runs again


class SuppressionStatus(StrEnum):
    """``policy_suppressions.status``: proposed → approved | rejected; approved → lifted."""

    PROPOSED = "proposed"
    APPROVED = "approved"
    REJECTED = "rejected"
    LIFTED = "lifted"


class ApprovalStatus(StrEnum):
    """``approvals.status``: pending → approved | denied | expired (``store.approvals``)."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"


class CaseStatus(StrEnum):
    """``cases.status``: open → acknowledged (has an owner) → resolved; resolved → open
    again when someone reopens it (``store.cases``)."""

    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


class CaseDisposition(StrEnum):
    """``cases.disposition``: what the analyst (or an auto-resolving rule) decided the alert
    was. The first three are socbot's verdicts too; ``duplicate`` is the analyst's only."""

    TRUE_POSITIVE = "true_positive"
    FALSE_POSITIVE = "false_positive"
    BENIGN = "benign"
    DUPLICATE = "duplicate"


class CaseAction(StrEnum):
    """``case_events.action``: what one decision on a case did."""

    OPENED = "opened"
    TAKEN = "taken"  # owner = the actor
    ASSIGNED = "assigned"  # owner = someone the actor named
    RESOLVED = "resolved"
    REOPENED = "reopened"
    REMINDED = "reminded"  # an unowned-case reminder was queued
    AUTO_RESOLVED = "auto_resolved"  # a policy rule's ``auto_resolve``
    AUDITED = "audited"  # a blind review of an auto-resolved case
