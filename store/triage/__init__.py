"""Alerts and their triage: alert rows and states, storms and their posts, the alert
policy's records, suppressions, what a dead replica left behind."""

__all__ = ["alerts", "policy", "states", "storm_posts", "storms", "suppressions"]
