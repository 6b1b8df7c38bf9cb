"""Alerts coming in: ``POST /alerts`` (``alerts_endpoint``; the alerts the acknowledging
front stored: ``alert_handover``), alert channels (``alert_channels``), triage and storms
(``triage``, its board and sweep), and the alert policy in front of triage
(``intake/policy/``).

May import decisions and the wings below it. A new way in for alerts goes here."""

__all__ = ["alert_channels", "alert_handover", "alerts_endpoint", "policy", "triage"]
