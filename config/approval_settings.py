"""Settings of human approval for risky tool calls (``[approvals]``)."""

from __future__ import annotations

from pydantic import Field

from config.agent_settings import Section


class ApprovalSettings(Section):
    """Who may approve a call that asks first, and how long a step waits for them.

    A call asks first when its tool is in its MCP server's ``approval`` list, or when a
    BigQuery query's dry run is over ``logs.max_bytes_per_query``.
    """

    approvers: list[str] = Field(
        default_factory=list,
        description="Slack user ids who may approve; empty = slack.admin_users",
    )
    timeout_s: float = Field(
        900.0,
        gt=0,
        description="a request not decided by then is denied (the step's deadline comes first)",
    )
    separate_duty: bool = Field(
        True, description="the person who asked for the investigation cannot approve its calls"
    )
