"""How ``socbot serve`` is watched: Prometheus metrics, OpenTelemetry spans, the run log."""

__all__ = [
    "metrics",
    "runlog",
    "tracing",
]  # its public modules; ``_``-named ones are the wing's own
