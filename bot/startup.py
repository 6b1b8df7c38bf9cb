"""What ``socbot serve`` says when it starts: mode, webhook, alert channels, tools.

Lines for the log, so an operator sees at once what is on and why the rest is
off (no secret is ever included, only whether it is set).
"""

from __future__ import annotations

from bot.intake.alerts_endpoint import disabled_reason
from config.settings import Settings, config_notice
from tools.base import ToolRegistry


def startup_lines(
    settings: Settings, *, http_mode: bool, where: str, registry: ToolRegistry
) -> list[str]:
    """One line each: settings files, mode, webhook, alert channels, tools."""
    slack = settings.slack
    if http_mode:
        mode = f"mode: HTTP (Events API at {where}/slack/events; /alerts and /healthz there too)"
    else:
        mode = f"mode: Socket Mode (no public URL; /alerts and /healthz on {where})"
    reason = disabled_reason(slack)
    webhook = (
        f"webhook POST /alerts: on, cards in {slack.webhook_channel}"
        if reason is None
        else f"webhook POST /alerts: off ({reason.removeprefix('the alert webhook is disabled: ')})"
    )
    channels = (
        "alert channels: " + ", ".join(slack.alert_channels)
        if slack.alert_channels
        else "alert channels: none (set slack.alert_channels to investigate alerts posted there)"
    )
    names = registry.names()
    off = sorted(n for n in registry.disabled if n not in registry.tools)
    tools = f"tools: {len(names)} on ({', '.join(names) or 'none'})"
    if off:
        tools += f"; {len(off)} off (`socbot tools list` says why)"
    return [config_notice(settings.database_url), mode, webhook, channels, tools]
