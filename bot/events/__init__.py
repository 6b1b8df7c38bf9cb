"""What a Slack event means: the bolt listeners, deduplication and the gatekeeper
(middleware), and who may stop a run."""

__all__ = ["listeners", "middleware"]
