"""Settings of the webhooks that conclusions and other events are sent to (``[notify]``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from config.agent_settings import Section

EventName = Literal[
    "concluded", "failed", "feedback", "playbook_proposal", "case.assigned", "case.resolved"
]
_CONCLUDED: list[EventName] = ["concluded"]


class WebhookSettings(Section):
    """One receiver: where, the signing secret, which events, optional filters."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")
    url: str
    secret: str = Field(description="HMAC-SHA256 key; ${NAME} reads it from the environment")
    events: list[EventName] = Field(default_factory=lambda: _CONCLUDED.copy())
    sources: list[str] = Field(default_factory=list, description="alert sources; empty = any")
    verdicts: list[str] = Field(default_factory=list, description="empty = any")
    severities: list[str] = Field(default_factory=list, description="empty = any")
    timeout_s: float = Field(10.0, gt=0)

    @model_validator(mode="after")
    def _http(self) -> WebhookSettings:
        if not self.url.startswith(("https://", "http://")):
            raise ValueError(f"notify webhook {self.name!r}: url must be http(s)")
        return self


class NotifySettings(Section):
    webhooks: list[WebhookSettings] = Field(default_factory=list)
