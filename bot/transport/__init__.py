"""How requests reach socbot: the aiohttp server (``POST /slack/events``, ``POST /alerts``,
``GET /healthz``, ``/metrics``), the acknowledging front process and its own ``POST /alerts``
(``alert_door``, its writer ``alert_writer``), and the checks of a Slack request body
before bolt sees it.

May import the wings below it (intake, observe, …). A new route goes in ``server``."""

__all__ = ["ack_front", "alert_door", "alert_writer", "server"]
