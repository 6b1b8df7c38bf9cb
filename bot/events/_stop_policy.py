"""Who may ``stop`` a running investigation.

* its requester — the human whose mention, DM or thread reply started the run;
* ``slack.admin_users`` — any run;
* a run nobody asked for (an alert: forwarded into an alert channel or POSTed to
  ``/alerts``) — the admins; when no admins are configured, anyone socbot serves in
  that alert or webhook channel (the alert's team), never someone elsewhere.

Everyone else gets a short refusal only they see. ``Requesters`` remembers who
started each thread's current run (in memory, for this process).
"""

from __future__ import annotations

from config.settings import SlackSettings

REFUSAL = "Only the person who asked for this investigation or a socbot admin can stop it."
ALERT_REFUSAL = "Only a socbot admin can stop an alert investigation."


class StopPolicy:
    """The rule above, from settings."""

    def __init__(self, settings: SlackSettings) -> None:
        self.settings = settings
        self.admins = frozenset(settings.admin_users)

    def refusal(self, user: str | None, requester: str | None, channel: str) -> str | None:
        """None when ``user`` may stop the run ``requester`` started in ``channel``; else why
        not."""
        if user is not None and user in self.admins:
            return None
        if requester is not None:
            return None if user == requester else REFUSAL
        if not self.admins and self._alert_channel(channel):
            return None
        return ALERT_REFUSAL

    def _alert_channel(self, channel: str) -> bool:
        return channel in self.settings.alert_channels or channel == self.settings.webhook_channel
