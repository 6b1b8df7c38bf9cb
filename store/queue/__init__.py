"""The durable work queue: work rows and their claims, replicas, held alerts, learning runs
queued as work."""

__all__ = ["deferred", "learning", "replicas", "types", "work"]
