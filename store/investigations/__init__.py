"""Investigations: runs and their trace, conversations, browsing, listing, usage."""

__all__ = ["browse", "conversations", "listing", "runs", "usage"]
