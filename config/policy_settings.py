"""Settings of the alert policy (``alerts.policy``): where its rule files are, and how
long a suppression made from Slack may last."""

from __future__ import annotations

from pydantic import Field

from config.agent_settings import Section


class PolicySettings(Section):
    """The alert policy decided between intake and investigation (docs/policy.md)."""

    enabled: bool = Field(True, description="evaluate the policy on every incoming alert")
    dir: str = Field(
        "config/policy",
        description="folder of rule files (*.toml), read in name order, reloaded on change",
    )
    max_suppress_days: int = Field(
        30, ge=1, le=365, description="the longest suppression a Slack dialog may ask for"
    )
    default_suppress_days: int = Field(
        7, ge=1, le=365, description="the expiry a Slack suppression dialog proposes"
    )
    reload_s: float = Field(
        5.0, ge=0, description="look for changed rule files at most this often (0: every alert)"
    )
