"""Alerts coming in: ``POST /alerts``, alert channels, triage and storms, the sweep;
the alert policy in ``intake/policy/``."""

__all__ = ["alert_channels", "alerts_endpoint", "policy", "triage"]
