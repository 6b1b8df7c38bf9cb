"""Events sent onward as signed webhooks: what is sent (the notifier) and the delivery of
each queued row."""

__all__ = ["delivery", "notifier"]
