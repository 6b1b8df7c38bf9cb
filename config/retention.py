"""How long socbot keeps what it stored (``[retention]``; ``store.retention`` prunes).

Alerts carry their raw payloads, investigations their traces with tool results (log
rows), feedback names analysts: all of it personal data that must not grow forever.
Each kind has its own lifetime in days; 0 keeps that kind for ever. Rows still in use
(an alert in triage, a running investigation, queued or running work) are never pruned.
"""

from __future__ import annotations

from pydantic import Field

from config.agent_settings import Section


class RetentionSettings(Section):
    """Days each kind of row is kept (0: for ever), and how pruning runs."""

    alerts_days: int = Field(
        180, ge=0, description="alerts with their raw payloads and indicators (by arrival)"
    )
    investigations_days: int = Field(
        180,
        ge=0,
        description="investigations with their trace and the thread history they wrote",
    )
    trace_days: int = Field(
        30, ge=0, description="trace events (tool results, log rows) of investigations kept longer"
    )
    feedback_days: int = Field(365, ge=0, description="analysts' votes and what they counted")
    alert_groups_days: int = Field(
        30, ge=0, description="alert groups and ended alert storms (triage bookkeeping)"
    )
    work_days: int = Field(14, ge=0, description="finished work rows and Slack delivery ids")
    learning_runs_days: int = Field(365, ge=0, description="records of learning runs")
    interval_s: float = Field(
        3600.0, gt=0, description="how often one replica prunes (a background work row)"
    )
    batch: int = Field(500, ge=1, le=10_000, description="rows deleted per transaction")
