"""How ``socbot serve`` is watched: Prometheus metrics, OpenTelemetry spans, the run log."""
