"""Alerts coming in: ``POST /alerts``, alert channels, triage and storms, the sweep;
the alert policy in ``intake/policy/``."""
