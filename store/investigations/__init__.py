"""Investigations: runs and their trace, conversations, browsing, listing, usage."""

__all__ = [
    "browse",
    "conversations",
    "listing",
    "runs",
    "usage",
]  # its public modules; ``_``-named ones are the wing's own
