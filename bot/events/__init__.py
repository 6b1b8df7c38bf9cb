"""What a Slack event means: the bolt listeners (mention, follow-up, stop, alert), and the
middleware every request passes (deduplication, the gatekeeper); who may stop a run; the
assistant pane (``pane``: greeting, prompts, context; what it may show: ``_pane_rules``);
which past alerts a request's tools may see (``scope``); App Home (``home``: each
person's Home tab, refreshed when their cases change).

May import intake and the wings below it. A new kind of event: a route in ``listeners``."""

__all__ = ["home", "listeners", "middleware", "pane", "scope"]
