"""The worker over the shared work queue (``store.queue``): claiming rows under a lease,
running each to one outcome, the contracts runners share (``ThreadRef``, ``Reporter``,
``Runner``, ``Investigate``), learning and pruning as work, and the timer that asks for
periodic work (``periodic``).

May import observe only. A new kind of background work: a runner here (or in its wing)
registered with the worker."""

__all__ = ["contracts", "learning", "periodic", "pruning", "run_link", "setup", "worker"]
