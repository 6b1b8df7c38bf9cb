"""How ``socbot serve`` is watched: Prometheus metrics, OpenTelemetry spans, the run log.

Imports no other wing; every wing may import it."""

__all__ = ["metrics", "runlog", "tracing"]
