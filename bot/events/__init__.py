"""What a Slack event means: the bolt listeners (mention, follow-up, stop, alert), and the
middleware every request passes (deduplication, the gatekeeper); who may stop a run.

May import intake and the wings below it. A new kind of event: a route in ``listeners``."""

__all__ = ["listeners", "middleware", "pane"]
