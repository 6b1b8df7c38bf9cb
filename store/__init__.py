"""Persistence: conversations, investigations and their trace, alerts, caches, Slack events."""

from store.db import Database

__all__ = ["Database"]
