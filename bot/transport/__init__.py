"""How requests reach socbot: the aiohttp server (``POST /slack/events``, ``POST /alerts``,
``GET /healthz``), the acknowledging front process, and the checks of a Slack request body."""

__all__ = ["ack_front", "server"]
