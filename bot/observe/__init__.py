"""How ``socbot serve`` is watched: Prometheus metrics, OpenTelemetry spans, the run log."""

__all__ = ["metrics", "runlog", "tracing"]
