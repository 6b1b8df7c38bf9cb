"""The durable work queue: work rows and their claims (with takeover of expired leases),
replicas' heartbeats, held alerts, learning runs queued as work.

May import investigations, db, schema."""

__all__ = ["deferred", "learning", "replicas", "types", "work"]
