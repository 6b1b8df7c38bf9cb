"""Settings of cases: who may resolve, reminders of unowned cases, auto-resolution audits,
the weekly digest (``[cases]``)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from config.agent_settings import Section


class CaseSettings(Section):
    """Cases (``docs/cases.md``): one per investigated alert, owned, resolved with a
    disposition in Slack, the terminal or a script."""

    enabled: bool = Field(True, description="open a case for every alert socbot concludes")
    resolve_requires_owner: bool = Field(
        False,
        description="only the owner or an approver (cases.approvers) may resolve or reopen",
    )
    approvers: list[str] = Field(
        default_factory=list,
        description="Slack user ids who may resolve any case; empty = slack.admin_users",
    )
    unowned_after: dict[str, float] = Field(
        default_factory=lambda: {"critical": 900.0, "high": 3600.0},
        description="seconds an open case of this severity may stay unowned before one "
        "reminder in its thread; a severity not listed is never reminded",
    )
    oncall_group: str = Field(
        "", description="Slack user group id (S…) mentioned in reminders; empty = none"
    )
    remind_every_s: float = Field(
        60.0,
        gt=0,
        description="how often a replica looks for cases to remind (and for a weekly digest due)",
    )
    digest_channel: str = Field(
        "",
        description="channel id (C…) of the weekly digest: last week's period report, "
        "posted once per ISO week across replicas; empty = none",
    )
    audit_share: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="share of auto-resolved cases drawn, per rule, for a blind human review",
    )

    def reminder_delays(self) -> dict[str, timedelta]:
        """``unowned_after`` as delays (negative values dropped)."""
        return {
            severity.lower(): timedelta(seconds=seconds)
            for severity, seconds in self.unowned_after.items()
            if seconds >= 0
        }
