"""How ``socbot serve`` logs: ``[log]`` in the settings (``SOCBOT_LOG__FORMAT``,
``SOCBOT_LOG__LEVEL``). The terminal commands keep their one-line warnings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from config.agent_settings import Section


class LoggingSettings(Section):
    """The log lines of ``socbot serve`` on stderr."""

    format: Literal["text", "json"] = Field(
        "text", description="text lines, or one JSON object per line for log collectors"
    )
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="the lowest level logged"
    )
