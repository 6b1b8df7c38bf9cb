"""Investigations: runs and their trace, conversations, browsing, listing, usage."""
