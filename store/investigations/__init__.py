"""Investigations: runs and their append-only trace, conversations (a thread's history) and
their sealed pseudonym maps,
browsing and listing, usage and cost.

May import db and schema."""

__all__ = ["browse", "conversations", "listing", "privacy", "runs", "usage"]
