"""Block Kit built from data, pure: the kit of shared pieces, escaping of untrusted text,
the investigation's messages, its status message, alert cards and run figures."""

__all__ = ["cards", "escape", "investigation", "kit", "stats", "status"]
