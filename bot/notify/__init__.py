"""Events sent onward as signed webhooks: what is sent (the notifier) and the delivery of
each queued row."""

__all__ = ["delivery", "notifier"]  # its public modules; ``_``-named ones are the wing's own
