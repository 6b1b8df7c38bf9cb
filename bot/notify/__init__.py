"""Events sent onward as signed webhooks: what is sent (``notifier``) and the delivery of
each queued ``notify`` row (``delivery``).

May import slack, blocks, work, observe."""

__all__ = ["delivery", "notifier"]
