"""Alerts and their triage: alert rows and their states, storms and the messages they
post, the alert policy's records, suppressions, and what a dead replica left behind.

May import queue, investigations, db, schema."""

__all__ = ["alerts", "policy", "recent", "states", "storm_posts", "storms", "suppressions"]
