"""The worker over the shared work queue (``store.queue``): claiming rows, running each to
one outcome, the contracts the runners share, learning and pruning as work."""

__all__ = ["contracts", "learning", "pruning", "run_link", "setup", "worker"]
