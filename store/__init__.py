"""Persistence: conversations, investigations and their trace, alerts, caches, Slack events."""

from store.db.engine import Database

__all__ = ["Database"]
