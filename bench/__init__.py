"""socbot benchmarks: engine cost and speed, Slack ack latency, alert storms (see README.md)."""
